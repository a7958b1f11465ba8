"""A sixth pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL6_FAMILIES` even -> `varied-dev6` (the
development half, to tune on), odd -> `varied-fresh6` (held out: nobody tunes on it, it is run once at the end).
The draw's seed is SEED = 5167. The families are to be written without running the flywheel, the router, the
alignment or `kvgraft bench flywheel` on either half and without reading the alignment's, transfer's, structure's,
router's or parameterizer's rules.

Written on 2026-12-05 by a helper session, without running the flywheel, the router, the alignment or `kvgraft bench
flywheel` on either half and without reading the alignment's, transfer's, structure's, router's or parameterizer's
rules (nor their tests, docs/FLYWHEEL.md or the flywheel sections of docs/BENCHMARKS.md); only this module's own
soundness check and the pool tests were run.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the families of bench/flywheel_data.py, bench/flywheel_gsm_data.py,
bench/flywheel_varied_data.py, bench/flywheel_fresh_data.py or bench/flywheel_pool2_data.py .. flywheel_pool5_data.py,
whose machinery they reuse by import (Family, the draw with the written-number redraw, one-slot `edit_*` rows, near
misses of every kind, `problems()`; read bench/flywheel_varied_data.py's and bench/flywheel_fresh_data.py's docstrings
for the rows). Situations no earlier pool has: a tailor's hems, a recycling drive paid by the kilogram, a rooftop
garden's planters filled with bagged soil, a chess club's round-robin tournament on a few boards, booklets on an office
printer that jams, a road race's water stations, raffle books and their prizes, window cleaning on an office block, a
railcard that takes a third off, overweight baggage, a camera's memory card in gigabytes and megabytes, a flight across
time zones on the twenty-four-hour clock, a roast's oven timing, a tree nursery's winter losses by percentage, a
hotel's occupancy, a board game cafe's bill split, a kayak up and down a river with a current, a phone charging by
percent, a plumber's call-out fee and half hours, a firewood stack burned by weekday and weekend, sheep shearing with a
quarter to the helper, a museum's ticket desk with a percentage of children, a swimming club's lane sessions and a
bird survey of comparisons ("twice", "three times as many", "fewer than"); questions that open with a clause ("On the
twenty-four-hour clock, ...", "If every member swims ..."), statements joined with "and", "but", "then", "while" or
relative clauses, numbers as words where people write them so ("a third", "a quarter", "a thousand", "twice", "half
hour"); new names (one word, two words, hyphenated), kin and role nouns ("twin brother", "head chef", "fiancée",
"driving instructor", "half-sister"), objects of one to five words, and new currencies (₡ colones, Q quetzales, S/
soles, Bs bolivianos, L lempiras, ден denars).

    python -m bench.flywheel_pool6_data   # rewrites bench/data/flywheel-varied-{dev6,fresh6}-{library,eval}.jsonl
"""

from __future__ import annotations

from bench.flywheel_fresh_data import Pools
from bench.flywheel_gsm_data import _div
from bench.flywheel_pool import Pool
from bench.flywheel_pool5_data import POOL5_CURRENCIES, POOL5_KIN, POOL5_NAMES
from bench.flywheel_varied_data import NO_ANSWER, Family, R

DEV_NAME, HELD_OUT_NAME = "varied-dev6", "varied-fresh6"
SEED = 5167


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME


POOL6_NAMES = POOL5_NAMES + tuple((n, "f") for n in (
    "Nalani", "Yetunde", "Ha-eun", "Khadija", "Svetlana", "Anna-Lena", "Bich Ngoc", "Itzel", "Sakura", "Folake",
    "Maëlle", "Dilnoza")) + tuple((n, "m") for n in (
        "Tawhiri", "Kojo", "Seung-woo", "Ikechukwu", "Arvid", "Rashid", "Jean-Marc", "Van Long", "Cuauhtémoc",
        "Makoa", "Bekzod", "Dario"))
POOL6_KIN = POOL5_KIN + ("twin brother", "head chef", "stepbrother", "great-grandfather", "goddaughter", "fiancée",
                         "younger sister", "driving instructor", "housemate", "headteacher", "half-sister",
                         "grandniece")
POOL6_CURRENCIES = POOL5_CURRENCIES + (("₡", "colones"), ("Q", "quetzales"), ("S/", "soles"), ("Bs", "bolivianos"),
                                       ("L", "lempiras"), ("ден", "denars"))
POOLS = Pools(POOL6_NAMES, POOL6_KIN, POOL6_CURRENCIES)

HEMMED = (("skirt", "skirts"), ("pair of jeans", "pairs of jeans"), ("dress", "dresses"),
          ("pair of trousers", "pairs of trousers"), ("school uniform skirt", "school uniform skirts"),
          ("pair of linen suit trousers", "pairs of linen suit trousers"))
RECYCLABLES = (("can", "cans"), ("aluminum can", "aluminum cans"), ("newspaper", "newspapers"),
               ("plastic bottle", "plastic bottles"), ("old glass jar", "old glass jars"),
               ("flattened cardboard box", "flattened cardboard boxes"))
PLANTERS = (("planter", "planters"), ("wooden planter box", "wooden planter boxes"), ("half barrel", "half barrels"),
            ("raised bed", "raised beds"), ("terracotta trough", "terracotta troughs"),
            ("big blue plastic tub", "big blue plastic tubs"))
PRINTED = (("booklet", "booklets"), ("program", "programs"), ("newsletter", "newsletters"),
           ("song sheet", "song sheets"), ("recipe booklet", "recipe booklets"),
           ("photocopied practice exam", "photocopied practice exams"))
HANDOUTS = (("paper cup", "paper cups"), ("cup", "cups"), ("bottle of water", "bottles of water"),
            ("sports drink", "sports drinks"), ("sponge", "sponges"),
            ("small carton of juice", "small cartons of juice"))
RAFFLE_GOALS = (("library book", "library books"), ("microscope", "microscopes"), ("football", "footballs"),
                ("tablet", "tablets"), ("set of drums", "sets of drums"),
                ("picnic bench for the playground", "picnic benches for the playground"))
BUILDINGS = (("office block", "office blocks"), ("hotel", "hotels"), ("hospital", "hospitals"),
             ("glass tower by the river", "glass towers by the river"), ("apartment building", "apartment buildings"),
             ("shopping center", "shopping centers"))
OCCASIONS = (("graduation", "graduations"), ("wedding", "weddings"), ("birthday party", "birthday parties"),
             ("school sports day", "school sports days"), ("retirement party", "retirement parties"),
             ("garden party by the lake", "garden parties by the lake"))
ROASTS = (("turkey", "turkeys"), ("chicken", "chickens"), ("leg of lamb", "legs of lamb"), ("goose", "geese"),
          ("beef joint", "beef joints"), ("large stuffed turkey", "large stuffed turkeys"))
NURSERY = (("sapling", "saplings"), ("oak sapling", "oak saplings"), ("hedge plant", "hedge plants"),
           ("young birch tree", "young birch trees"), ("lemon tree", "lemon trees"),
           ("little potted lemon tree", "little potted lemon trees"))
LODGINGS = (("guesthouse", "guesthouses"), ("seaside hotel", "seaside hotels"), ("motel", "motels"),
            ("inn", "inns"), ("mountain inn", "mountain inns"),
            ("little family hotel by the harbor", "little family hotels by the harbor"))
CAFE_SNACKS = (("pretzel", "pretzels"), ("milkshake", "milkshakes"), ("plate of nachos", "plates of nachos"),
               ("toasted sandwich", "toasted sandwiches"), ("bowl of salted popcorn", "bowls of salted popcorn"),
               ("slice of carrot cake", "slices of carrot cake"))
PADDLED = (("kayak", "kayaks"), ("canoe", "canoes"), ("sea kayak", "sea kayaks"), ("wooden canoe", "wooden canoes"),
           ("two-seater kayak", "two-seater kayaks"), ("bright red plastic kayak", "bright red plastic kayaks"))
DEVICES = (("phone", "phones"), ("tablet", "tablets"), ("laptop", "laptops"),
           ("electric toothbrush", "electric toothbrushes"), ("wireless headset", "wireless headsets"),
           ("handheld games console", "handheld games consoles"))
FIXTURES = (("boiler", "boilers"), ("leaking tap", "leaking taps"), ("blocked sink", "blocked sinks"),
            ("shower", "showers"), ("dripping kitchen tap", "dripping kitchen taps"),
            ("noisy old hot water boiler", "noisy old hot water boilers"))
FIREWOOD = (("log", "logs"), ("birch log", "birch logs"), ("split oak log", "split oak logs"),
            ("briquette", "briquettes"), ("peat brick", "peat bricks"),
            ("block of beech wood", "blocks of beech wood"))
FLEECED = (("sheep", "sheep"), ("alpaca", "alpacas"), ("merino sheep", "merino sheep"), ("llama", "llamas"),
           ("angora goat", "angora goats"), ("big woolly ram", "big woolly rams"))
EXHIBITS = (("museum", "museums"), ("aquarium", "aquariums"), ("art gallery", "art galleries"),
            ("science center", "science centers"), ("railway museum", "railway museums"),
            ("museum of old toys", "museums of old toys"))
PARK_BIRDS = (("sparrow", "sparrows"), ("blackbird", "blackbirds"), ("blue tit", "blue tits"),
              ("wood pigeon", "wood pigeons"), ("magpie", "magpies"), ("long-tailed tit", "long-tailed tits"),
              ("little brown house sparrow", "little brown house sparrows"))

X = NO_ANSWER
POOL6_FAMILIES: tuple[Family, ...] = (
    # 0 dev
    Family("tailor_hems", "{n1} does alterations in a corner of {his1} {k1}'s dry cleaning shop. Taking up the hem "
           "of a {o} takes {him1} {a} minutes, and {he1} charges {cs}{b} for each one. On Saturday {he1} hems {os} "
           "for {c} hours straight. How many {cw} does {n1} earn on Saturday?",
           "minutes_each = {a}\nprice = {b}\nhours = {c}\nprint(hours * 60 // minutes_each * price)",
           lambda a, b, c: _div(c * 60, a) * b, {"a": R(10, 30, 5), "b": R(6, 20), "c": R(3, 8)},
           (("entity", "How many {os} does {n1} hem on Saturday?", lambda a, b, c: _div(c * 60, a)),
            ("unit", "How many cents does {n1} earn on Saturday?", lambda a, b, c: _div(c * 60, a) * b * 100),
            ("step", "How many minutes does {n1} spend hemming on Saturday?", lambda a, b, c: c * 60),
            ("person", "How many {cw} does {n2} earn on Saturday?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} earn on Saturday?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} earn on Saturday?", lambda a, b, c: X),
            ("object", "How many {cw} does {n1} earn hemming {xos} on Saturday?", lambda a, b, c: X)),
           HEMMED, alt="On Saturday {n1} hems {os} for {c} hours straight in a corner of {his1} {k1}'s dry cleaning "
           "shop, where {he1} does alterations. {He1} charges {cs}{b} for each one, and taking up the hem of a {o} "
           "takes {him1} {a} minutes. How many {cw} does {n1} earn on Saturday?", alt_kind="reorder",
           paraphrase="What does {n1} make from Saturday's hemming, in {cw}?"),
    # 1 fresh
    Family("recycling_drive_kilos", "{n1} and {his1} {k1} collect {os} for the school's recycling drive. {n1} brings "
           "in {b} kilograms, and the {k1} brings in {c} kilograms fewer than twice that. The recycling center pays "
           "{cs}{a} for every kilogram. How many {cw} do they earn for the drive?",
           "per_kg = {a}\nmine = {b}\nfewer = {c}\nkin = 2 * mine - fewer\nprint(per_kg * (mine + kin))",
           lambda a, b, c: a * (3 * b - c), {"a": R(2, 6), "b": R(10, 40), "c": R(3, 15)},
           (("entity", "How many kilograms does {n1}'s {k1} bring in?", lambda a, b, c: 2 * b - c),
            ("unit", "How many cents do they earn for the drive?", lambda a, b, c: a * (3 * b - c) * 100),
            ("step", "How many kilograms do they bring in together?", lambda a, b, c: 3 * b - c),
            ("person", "How many kilograms does {n2} bring in?", lambda a, b, c: X),
            ("kin", "How many kilograms does {n1}'s {xk} bring in?", lambda a, b, c: X),
            ("currency", "How many {xw} do they earn for the drive?", lambda a, b, c: X),
            ("object", "How many {cw} do they earn for the {xos}?", lambda a, b, c: X)),
           RECYCLABLES, alt="The recycling center pays {cs}{a} for every kilogram of {os} brought in for the "
           "school's recycling drive. {n1} collects {b} kilograms of them, while {his1} {k1}, who helps, collects {c} "
           "kilograms fewer than twice what {n1} does. How many {cw} do they earn for the drive?", alt_kind="reorder",
           paraphrase="What is the drive worth to the two of them, in {cw}?"),
    # 2 dev
    Family("rooftop_planters", "{n1} is making a rooftop garden on {his1} {k1}'s building with {a} {os}, each of "
           "which holds {b} liters of soil. The soil comes in bags of {c} liters that cost {cs}{d} each. How many "
           "{cw} does the soil cost?",
           "planters = {a}\nsoil_each = {b}\nbag = {c}\nprice = {d}\nprint(planters * soil_each // bag * price)",
           lambda a, b, c, d: _div(a * b, c) * d,
           {"a": R(4, 16), "b": R(20, 80, 10), "c": R(20, 50, 10), "d": R(4, 12)},
           (("entity", "How many liters of soil do the {os} hold in all?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does the soil cost?", lambda a, b, c, d: _div(a * b, c) * d * 100),
            ("step", "How many bags of soil does {n1} need?", lambda a, b, c, d: _div(a * b, c)),
            ("person", "How many {cw} does the soil for {n2}'s garden cost?", lambda a, b, c, d: X),
            ("kin", "How many {os} are on the building of {n1}'s {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the soil cost?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the soil for the {xos} cost?", lambda a, b, c, d: X)),
           PLANTERS, alt="The soil {n1} needs for the rooftop garden on {his1} {k1}'s building comes in bags of {c} "
           "liters that cost {cs}{d} each. {He1} is filling {a} {os}, and each of them holds {b} liters. How many "
           "{cw} does the soil cost?", alt_kind="reorder", paraphrase="What does {n1} spend on soil, in {cw}?"),
    # 3 fresh
    Family("chess_club_rounds", "{n1} and {his1} {k1} organize a tournament at their chess club, where each of the "
           "{a} players plays every other player once. The club has {b} boards, and every game takes {c} minutes. "
           "How many hours does the tournament take?",
           "players = {a}\nboards = {b}\nminutes = {c}\ngames = players * (players - 1) // 2\n"
           "print(games // boards * minutes // 60)",
           lambda a, b, c: _div(_div(a * (a - 1), 2 * b) * c, 60),
           {"a": R(6, 12), "b": R(3, 6), "c": R(20, 60, 10)},
           (("entity", "How many games does each player play?", lambda a, b, c: a - 1),
            ("unit", "How many minutes does the tournament take?", lambda a, b, c: _div(a * (a - 1), 2 * b) * c),
            ("step", "How many games are played in the tournament?", lambda a, b, c: _div(a * (a - 1), 2)),
            ("person", "How many hours does {n2}'s tournament take?", lambda a, b, c: X),
            ("kin", "How many games does {n1}'s {xk} play?", lambda a, b, c: X)),
           alt="Every game at the tournament that {n1} and {his1} {k1} organize at their chess club takes {c} "
           "minutes, and the club has {b} boards. Each of the {a} players plays every other player once. How many "
           "hours does the tournament take?", alt_kind="reorder",
           paraphrase="How long does the tournament last, in hours?"),
    # 4 dev
    Family("booklet_printing", "{n1} is printing {b} {os} for {his1} {k1}'s school concert on the office printer. "
           "Each of them has {a} pages, and the printer prints {c} pages a minute, but paper jams stop it for {d} "
           "minutes in all. How many minutes does the printing take?",
           "pages = {a}\ncopies = {b}\nper_minute = {c}\njams = {d}\nprint(pages * copies // per_minute + jams)",
           lambda a, b, c, d: _div(a * b, c) + d,
           {"a": R(4, 24, 4), "b": R(30, 150, 10), "c": R(10, 40, 5), "d": R(3, 15)},
           (("entity", "How many pages does {n1} print?", lambda a, b, c, d: a * b),
            ("unit", "How many seconds does the printing take?", lambda a, b, c, d: (_div(a * b, c) + d) * 60),
            ("step", "How many minutes does the printer spend printing?", lambda a, b, c, d: _div(a * b, c)),
            ("person", "How many minutes does {n2}'s printing take?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} print?", lambda a, b, c, d: X),
            ("object", "How many minutes does printing the {xos} take?", lambda a, b, c, d: X)),
           PRINTED, alt="Paper jams stop the office printer for {d} minutes in all while {n1} prints {b} {os} of {a} "
           "pages each for {his1} {k1}'s school concert. The printer prints {c} pages a minute. How many minutes "
           "does the printing take?", alt_kind="reorder",
           paraphrase="How long is {n1} at the printer, in minutes?"),
    # 5 fresh
    Family("race_water_stations", "{n1} and {his1} {k1} volunteer at the city road race, whose route is {a} "
           "kilometers long with a water station every {b} kilometers after the start. Each station puts out one of "
           "the {os} per runner for the {d} runners taking part, plus {c} spares. How many {os} are set out along "
           "the route?",
           "route = {a}\nevery = {b}\nspares = {c}\nrunners = {d}\nprint(route // every * (runners + spares))",
           lambda a, b, c, d: _div(a, b) * (d + c),
           {"a": R(12, 42, 6), "b": R(2, 6), "c": R(20, 80, 10), "d": R(150, 900, 50)},
           (("entity", "How many {os} does each station set out?", lambda a, b, c, d: d + c),
            ("unit", "How many dozen {os} are set out along the route?", lambda a, b, c, d: _div(_div(a, b) * (d + c),
                                                                                                  12)),
            ("step", "How many water stations are there along the route?", lambda a, b, c, d: _div(a, b)),
            ("person", "How many {os} does {n2} set out?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} set out?", lambda a, b, c, d: X),
            ("object", "How many {xos} are set out along the route?", lambda a, b, c, d: X)),
           HANDOUTS, alt="Each water station of the city road race, where {n1} and {his1} {k1} volunteer, sets out one "
           "of the {os} for every runner plus {c} spares. The route is {a} kilometers long with a station every {b} "
           "kilometers after the start, and {d} runners take part. How many {os} are set out along the route?",
           alt_kind="reorder", paraphrase="Along the whole route, how many {os} are put out?"),
    # 6 dev
    Family("raffle_books", "{n1}'s class holds a raffle to pay for new {os}. The tickets cost {cs}{b} each and come in "
           "books of {a}, and each of the {c} students in the class sells {d} books. The prizes, which {his1} {k1} "
           "buys for the class, cost {cs}{e}. How many {cw} does the raffle raise once the prizes are paid for?",
           "per_book = {a}\nprice = {b}\nstudents = {c}\nbooks_each = {d}\nprizes = {e}\n"
           "print(students * books_each * per_book * price - prizes)",
           lambda a, b, c, d, e: a * b * c * d - e,
           {"a": R(5, 10), "b": R(2, 5), "c": R(20, 32), "d": R(2, 6), "e": R(40, 200, 20)},
           (("entity", "How many tickets does the class sell?", lambda a, b, c, d, e: a * c * d),
            ("unit", "How many cents does the raffle raise once the prizes are paid for?",
             lambda a, b, c, d, e: (a * b * c * d - e) * 100),
            ("step", "How many {cw} do the tickets bring in?", lambda a, b, c, d, e: a * b * c * d),
            ("person", "How many {cw} does {n2}'s raffle raise?", lambda a, b, c, d, e: X),
            ("kin", "How many {cw} does {n1}'s {xk} spend on the prizes?", lambda a, b, c, d, e: X),
            ("currency", "How many {xw} does the raffle raise once the prizes are paid for?",
             lambda a, b, c, d, e: X),
            ("object", "How many {xos} does the raffle pay for?", lambda a, b, c, d, e: X)),
           RAFFLE_GOALS, alt="To pay for new {os}, {n1}'s class holds a raffle, and each of its {c} students sells "
           "{d} books of tickets. A book holds {a} tickets at {cs}{b} each, while the prizes, which {his1} {k1} buys "
           "for the class, cost {cs}{e}. How many {cw} does the raffle raise once the prizes are paid for?",
           alt_kind="reorder", paraphrase="After paying for the prizes, what is left from the raffle, in {cw}?"),
    # 7 fresh
    Family("window_cleaning_days", "{n1} and {his1} {k1} are cleaning the windows of the {o}, which has {a} floors "
           "with {b} windows on each. Together they clean {c} windows an hour and work {d} hours a day. How many days "
           "does the job take?",
           "floors = {a}\nper_floor = {b}\nper_hour = {c}\nhours = {d}\n"
           "print(floors * per_floor // (per_hour * hours))",
           lambda a, b, c, d: _div(a * b, c * d), {"a": R(4, 12), "b": R(10, 30), "c": R(8, 20), "d": R(5, 9)},
           (("entity", "How many windows does the {o} have?", lambda a, b, c, d: a * b),
            ("unit", "How many hours does the job take?", lambda a, b, c, d: _div(a * b, c)),
            ("step", "How many windows do they clean in a day?", lambda a, b, c, d: c * d),
            ("person", "How many days does {n2}'s job take?", lambda a, b, c, d: X),
            ("kin", "How many windows an hour does {n1}'s {xk} clean?", lambda a, b, c, d: X),
            ("object", "How many days does the job at the {xo} take?", lambda a, b, c, d: X)),
           BUILDINGS, alt="Working {d} hours a day, {n1} and {his1} {k1} clean {c} windows an hour together. The {o} "
           "whose windows they are cleaning has {a} floors with {b} windows on each. How many days does the job "
           "take?", alt_kind="reorder", paraphrase="For how many days are they up on the windows?"),
    # 8 dev
    Family("railcard_payoff", "{n1} takes the train to visit {his1} {k1}, and a return ticket costs {cs}{a}. A "
           "railcard that costs {cs}{b} takes a third off every ticket. How many return trips must {n1} make before "
           "the railcard has paid for itself?",
           "ticket = {a}\ncard = {b}\nsaving = ticket // 3\nprint(card // saving)",
           lambda a, b: _div(b, _div(a, 3)), {"a": R(15, 60, 3), "b": R(30, 120, 5)},
           (("entity", "How many {cw} does a return ticket cost with the railcard?", lambda a, b: a - _div(a, 3)),
            ("unit", "How many weeks must {n1} travel before the railcard has paid for itself?", lambda a, b: X),
            ("step", "How many {cw} does the railcard save on each return ticket?", lambda a, b: _div(a, 3)),
            ("person", "How many return trips must {n2} make before the railcard has paid for itself?",
             lambda a, b: X),
            ("kin", "How many return trips does {n1}'s {xk} make?", lambda a, b: X),
            ("currency", "How many {xw} does a return ticket cost?", lambda a, b: X)),
           alt="A railcard that costs {cs}{b} takes a third off every train ticket, and {n1}, who visits {his1} {k1} "
           "by train, pays {cs}{a} for a return ticket at the full fare. How many return trips must {n1} make before "
           "the railcard has paid for itself?", alt_kind="reorder",
           paraphrase="After how many return trips does the railcard pay for itself?"),
    # 9 fresh
    Family("overweight_baggage", "{n1} flies home from a visit to {his1} {k1} with two suitcases that weigh {a} "
           "kilograms and {b} kilograms. The airline lets each passenger check in {c} kilograms for free and charges "
           "{cs}{d} for every kilogram over that. How many {cw} does {n1} pay for the extra weight?",
           "first = {a}\nsecond = {b}\nfree = {c}\nper_kg = {d}\nprint((first + second - free) * per_kg)",
           lambda a, b, c, d: (a + b - c) * d,
           {"a": R(12, 30), "b": R(8, 25), "c": R(20, 30, 5), "d": R(5, 25, 5)},
           (("entity", "How many kilograms heavier is the first suitcase than the second?",
             lambda a, b, c, d: a - b),
            ("unit", "How many cents does {n1} pay for the extra weight?", lambda a, b, c, d: (a + b - c) * d * 100),
            ("step", "How many kilograms over the free allowance is {n1}?", lambda a, b, c, d: a + b - c),
            ("person", "How many {cw} does {n2} pay for the extra weight?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for the extra weight?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay for the extra weight?", lambda a, b, c, d: X)),
           alt="The airline that flies {n1} home after a visit to {his1} {k1} charges {cs}{d} for every kilogram over "
           "the {c} kilograms each passenger may check in for free. {n1}'s two suitcases weigh {a} kilograms and {b} "
           "kilograms. How many {cw} does {n1} pay for the extra weight?", alt_kind="reorder",
           paraphrase="What is {n1}'s fee for the overweight bags, in {cw}?"),
    # 10 dev
    Family("photo_memory_card", "{n1} is taking photos at {his1} {k1}'s {o} with a camera whose memory card holds {a} "
           "gigabytes. Each photo takes up {b} megabytes, and there are a thousand megabytes in a gigabyte. So far "
           "{n1} has taken {c} photos. How many more photos fit on the card?",
           "card_gb = {a}\nphoto_mb = {b}\ntaken = {c}\nprint(card_gb * 1000 // photo_mb - taken)",
           lambda a, b, c: _div(1000 * a, b) - c, {"a": R(8, 64, 8), "b": R(4, 10), "c": R(100, 900, 50)},
           (("entity", "How many photos fit on the card when it is empty?", lambda a, b, c: _div(1000 * a, b)),
            ("unit", "How many more megabytes fit on the card?", lambda a, b, c: 1000 * a - b * c),
            ("step", "How many megabytes of the card are already used?", lambda a, b, c: b * c),
            ("person", "How many more photos fit on {n2}'s card?", lambda a, b, c: X),
            ("kin", "How many photos does {n1}'s {xk} take?", lambda a, b, c: X),
            ("object", "How many photos does {n1} take at the {xo}?", lambda a, b, c: X)),
           OCCASIONS, alt="There are a thousand megabytes in a gigabyte, and the memory card in {n1}'s camera holds "
           "{a} gigabytes. At {his1} {k1}'s {o}, {n1} has taken {c} photos so far, each of which takes up {b} "
           "megabytes. How many more photos fit on the card?", alt_kind="reorder",
           paraphrase="How many photos can {n1} still take before the card is full?"),
    # 11 fresh
    Family("flight_time_zones", "{n1}'s flight to visit {his1} {k1} takes off at {a} o'clock on a Monday "
           "morning. It is in the air for {b} hours, and the city where it lands is {c} hours ahead of the city it "
           "leaves from. On the twenty-four-hour clock, at what hour does the flight land, local time?",
           "departs = {a}\nflight = {b}\nahead = {c}\nprint(departs + flight + ahead)",
           lambda a, b, c: a + b + c, {"a": R(6, 10), "b": R(2, 7), "c": R(2, 5)},
           (("entity", "By the clock of the city it leaves from, at what hour does the flight land?",
             lambda a, b, c: a + b),
            ("unit", "How many minutes after midnight, local time, does the flight land?",
             lambda a, b, c: (a + b + c) * 60),
            ("step", "On the twenty-four-hour clock, what hour is it where the flight lands when it takes off?",
             lambda a, b, c: a + c),
            ("person", "At what hour does {n2}'s flight land?", lambda a, b, c: X),
            ("kin", "At what hour does the flight of {n1}'s {xk} land?", lambda a, b, c: X)),
           alt="The city where {n1}'s flight lands is {c} hours ahead of the city it leaves from, and the flight, "
           "which takes {him1} to visit {his1} {k1}, is in the air for {b} hours. It takes off at {a} o'clock on a "
           "Monday morning. On the twenty-four-hour clock, at what hour does the flight land, local time?",
           alt_kind="reorder",
           paraphrase="What hour is it where the flight lands when it touches down, on the twenty-four-hour clock?"),
    # 12 dev
    Family("roast_timing", "{n1} is roasting a {o} for {his1} {k1}'s birthday dinner. It weighs {a} kilograms and "
           "needs {b} minutes in the oven for every kilogram, then {c} minutes of rest before it is carved, and the "
           "oven takes {d} minutes to heat up. How many minutes before dinner must {n1} turn the oven on?",
           "weight = {a}\nper_kg = {b}\nrest = {c}\nheat = {d}\nprint(heat + weight * per_kg + rest)",
           lambda a, b, c, d: d + a * b + c,
           {"a": R(2, 7), "b": R(20, 45, 5), "c": R(10, 30, 5), "d": R(10, 25, 5)},
           (("entity", "How many minutes before dinner must the {o} go into the oven?",
             lambda a, b, c, d: a * b + c),
            ("unit", "How many hours before dinner must {n1} turn the oven on?",
             lambda a, b, c, d: _div(d + a * b + c, 60)),
            ("step", "How many minutes does the {o} spend in the oven?", lambda a, b, c, d: a * b),
            ("person", "How many minutes before dinner must {n2} turn the oven on?", lambda a, b, c, d: X),
            ("kin", "How many minutes before dinner must {n1}'s {xk} turn the oven on?", lambda a, b, c, d: X),
            ("object", "How many minutes does the {xo} spend in the oven?", lambda a, b, c, d: X)),
           ROASTS, alt="The oven takes {d} minutes to heat up, and the {o} that {n1} is roasting for {his1} {k1}'s "
           "birthday dinner needs {b} minutes in it for every kilogram. It weighs {a} kilograms and rests for {c} "
           "minutes before it is carved. How many minutes before dinner must {n1} turn the oven on?",
           alt_kind="reorder",
           paraphrase="How long before dinner does the oven have to be switched on, in minutes?"),
    # 13 fresh
    Family("sapling_survival", "{n1} and {his1} {k1} plant {a} {os} in their nursery in autumn. Over the winter {b}% "
           "of them die, and in spring they sell the rest at {cs}{c} each. How many {cw} do the {os} bring in?",
           "planted = {a}\ndied_pct = {b}\nprice = {c}\nprint((planted - planted * died_pct // 100) * price)",
           lambda a, b, c: (a - _div(a * b, 100)) * c, {"a": R(40, 400, 20), "b": R(10, 40, 5), "c": R(3, 15)},
           (("entity", "How many of the {os} die over the winter?", lambda a, b, c: _div(a * b, 100)),
            ("unit", "How many cents do the {os} bring in?", lambda a, b, c: (a - _div(a * b, 100)) * c * 100),
            ("step", "How many of the {os} survive the winter?", lambda a, b, c: a - _div(a * b, 100)),
            ("person", "How many {cw} do {n2}'s {os} bring in?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} plant?", lambda a, b, c: X),
            ("currency", "How many {xw} do the {os} bring in?", lambda a, b, c: X),
            ("object", "How many {cw} do the {xos} bring in?", lambda a, b, c: X)),
           NURSERY, alt="In spring {n1} and {his1} {k1} sell the {os} that have come through the winter at {cs}{c} "
           "each. They planted {a} of them in their nursery the autumn before, and {b}% died in the cold. How many "
           "{cw} do the {os} bring in?", alt_kind="reorder",
           paraphrase="What do they earn from the {os} in spring, in {cw}?"),
    # 14 dev
    Family("hotel_occupancy", "The {o} that {n1} runs for {his1} {k1} has {a} rooms. Last night {b}% of them were "
           "taken at {cs}{c} a room, and cleaning each taken room costs {cs}{d}. How many {cw} did the {o} make from "
           "last night's rooms after cleaning?",
           "rooms = {a}\ntaken_pct = {b}\nrate = {c}\ncleaning = {d}\n"
           "print(rooms * taken_pct // 100 * (rate - cleaning))",
           lambda a, b, c, d: _div(a * b, 100) * (c - d),
           {"a": R(20, 120, 10), "b": R(40, 90, 10), "c": R(60, 200, 10), "d": R(10, 30, 5)},
           (("entity", "How many rooms were empty last night?", lambda a, b, c, d: a - _div(a * b, 100)),
            ("unit", "How many cents did the {o} make from last night's rooms after cleaning?",
             lambda a, b, c, d: _div(a * b, 100) * (c - d) * 100),
            ("step", "How many rooms were taken last night?", lambda a, b, c, d: _div(a * b, 100)),
            ("person", "How many {cw} did the {o} that {n2} runs make last night?", lambda a, b, c, d: X),
            ("kin", "How many rooms does the {o} of {n1}'s {xk} have?", lambda a, b, c, d: X),
            ("currency", "How many {xw} did the {o} make from last night's rooms after cleaning?",
             lambda a, b, c, d: X),
            ("object", "How many rooms were taken at the {xo} last night?", lambda a, b, c, d: X)),
           LODGINGS, alt="Last night {b}% of the {a} rooms at the {o} that {n1} runs for {his1} {k1} were taken. "
           "Each taken room paid {cs}{c} and costs {cs}{d} to clean. How many {cw} did the {o} make from last "
           "night's rooms after cleaning?", alt_kind="reorder",
           paraphrase="Once the cleaning is paid, what did last night's rooms earn, in {cw}?"),
    # 15 fresh
    Family("board_game_cafe", "{n1} takes {his1} {k1} and {a} friends to a board game cafe for {b} hours. The cafe "
           "charges {cs}{c} per person for each hour, and the group spends {cs}{d} on {os}. They split the bill "
           "equally. How many {cw} does each person pay?",
           "friends = {a}\nhours = {b}\nrate = {c}\nsnacks = {d}\npeople = friends + 2\n"
           "print((people * hours * rate + snacks) // people)",
           lambda a, b, c, d: b * c + _div(d, a + 2),
           {"a": R(2, 6), "b": R(2, 5), "c": R(3, 8), "d": R(12, 60, 4)},
           (("entity", "How many {cw} do the {os} cost each person?", lambda a, b, c, d: _div(d, a + 2)),
            ("unit", "How many cents does each person pay?", lambda a, b, c, d: (b * c + _div(d, a + 2)) * 100),
            ("step", "How many {cw} is the whole bill?", lambda a, b, c, d: (a + 2) * b * c + d),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: X),
            ("kin", "How many hours does {n1}'s {xk} play?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does each person pay?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the group spend on {xos}?", lambda a, b, c, d: X)),
           CAFE_SNACKS, alt="A board game cafe charges {cs}{c} per person for each hour. {n1}, {his1} {k1} and {a} "
           "friends play there for {b} hours, spend {cs}{d} on {os} and then split the bill equally. How many {cw} "
           "does each person pay?", alt_kind="reorder", paraphrase="What is each person's share of the bill, in {cw}?"),
    # 16 dev
    Family("kayak_current", "{n1} paddles a {o} up the river to {his1} {k1}'s cabin, {a} kilometers away, and back "
           "again. In still water {he1} paddles at {b} kilometers an hour, and the river flows at {c} kilometers an "
           "hour. How many hours does the round trip take?",
           "distance = {a}\nstill = {b}\ncurrent = {c}\n"
           "print(distance // (still - current) + distance // (still + current))",
           lambda a, b, c: _div(a, b - c) + _div(a, b + c), {"a": R(6, 24, 2), "b": R(6, 12), "c": R(1, 3)},
           (("entity", "How many kilometers does {n1} paddle in all?", lambda a, b, c: 2 * a),
            ("unit", "How many minutes does the round trip take?", lambda a, b, c: (_div(a, b - c) + _div(a, b + c))
             * 60),
            ("step", "How many hours does the trip up the river take?", lambda a, b, c: _div(a, b - c)),
            ("person", "How many hours does {n2}'s round trip take?", lambda a, b, c: X),
            ("kin", "How many kilometers away is the cabin of {n1}'s {xk}?", lambda a, b, c: X),
            ("object", "How many hours does the round trip in the {xo} take?", lambda a, b, c: X)),
           PADDLED, alt="The river flows at {c} kilometers an hour, while {n1}'s speed in still water is {b} "
           "kilometers an hour. {He1} paddles {his1} {o} up the river to {his1} {k1}'s cabin, {a} kilometers away, "
           "and back again. How many hours does the round trip take?", alt_kind="reorder",
           paraphrase="Up the river and back, how long does {n1} paddle, in hours?"),
    # 17 fresh
    Family("phone_charging", "{n1}'s {o} is down to {a}% when {he1} plugs it in at {his1} {k1}'s house. The charger "
           "adds {b}% every {c} minutes. How many minutes does the {o} take to charge fully?",
           "start = {a}\nstep_pct = {b}\nminutes = {c}\nprint((100 - start) // step_pct * minutes)",
           lambda a, b, c: _div(100 - a, b) * c, {"a": R(5, 45, 5), "b": R(5, 20, 5), "c": R(3, 12)},
           (("entity", "How many percent does the {o} still need when {n1} plugs it in?", lambda a, b, c: 100 - a),
            ("unit", "How many seconds does the {o} take to charge fully?", lambda a, b, c: _div(100 - a, b) * c * 60),
            ("step", "How many times does the charger add {b}% before the {o} is full?",
             lambda a, b, c: _div(100 - a, b)),
            ("person", "How many minutes does {n2}'s {o} take to charge fully?", lambda a, b, c: X),
            ("kin", "How many minutes does the {o} of {n1}'s {xk} take to charge?", lambda a, b, c: X),
            ("object", "How many minutes does {n1}'s {xo} take to charge fully?", lambda a, b, c: X)),
           DEVICES, alt="Every {c} minutes the charger at {n1}'s {k1}'s house adds {b}% to the {o} that {n1} plugs in "
           "there, which is down to {a}%. How many minutes does the {o} take to charge fully?", alt_kind="reorder",
           paraphrase="How long until the {o} is at full charge, in minutes?"),
    # 18 dev
    Family("plumber_callout", "A plumber charges {cs}{a} to come out and {cs}{b} for every half hour of work, with "
           "parts on top. {n1} calls one to fix the {o} in {his1} {k1}'s flat, and the job takes {c} hours and "
           "{cs}{d} of parts. How many {cw} is the bill?",
           "call_out = {a}\nper_half_hour = {b}\nhours = {c}\nparts = {d}\n"
           "print(call_out + hours * 2 * per_half_hour + parts)",
           lambda a, b, c, d: a + 2 * b * c + d,
           {"a": R(30, 90, 10), "b": R(15, 40, 5), "c": R(2, 6), "d": R(12, 60, 4)},
           (("entity", "How many {cw} do the call-out and the parts cost together?", lambda a, b, c, d: a + d),
            ("unit", "How many cents is the bill?", lambda a, b, c, d: (a + 2 * b * c + d) * 100),
            ("step", "How many {cw} does the plumber charge for the hours of work?", lambda a, b, c, d: 2 * b * c),
            ("person", "How many {cw} is {n2}'s bill?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay the plumber?", lambda a, b, c, d: X),
            ("currency", "How many {xw} is the bill?", lambda a, b, c, d: X),
            ("object", "How many {cw} is the bill for fixing the {xo}?", lambda a, b, c, d: X)),
           FIXTURES, alt="{n1} calls a plumber to fix the {o} in {his1} {k1}'s flat. The job takes {c} hours and "
           "{cs}{d} of parts, and the plumber charges {cs}{a} to come out plus {cs}{b} for every half hour of work. "
           "How many {cw} is the bill?", alt_kind="reorder",
           paraphrase="What does the plumber ask for in all, in {cw}?"),
    # 19 fresh
    Family("firewood_stack", "Before winter {n1} and {his1} {k1} stack {a} {os} in the shed. On weekdays their stove "
           "burns {b} of them an evening, while on each day of the weekend it burns {c}. How many weeks do the {os} "
           "last?",
           "stacked = {a}\nweekday = {b}\nweekend_day = {c}\nprint(stacked // (5 * weekday + 2 * weekend_day))",
           lambda a, b, c: _div(a, 5 * b + 2 * c), {"a": R(200, 900, 10), "b": R(3, 8), "c": R(6, 14)},
           (("entity", "How many {os} does the stove burn on a weekend?", lambda a, b, c: 2 * c),
            ("unit", "How many days do the {os} last?", lambda a, b, c: _div(a, 5 * b + 2 * c) * 7),
            ("step", "How many {os} does the stove burn in a week?", lambda a, b, c: 5 * b + 2 * c),
            ("person", "How many weeks do {n2}'s {os} last?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} stack?", lambda a, b, c: X),
            ("object", "How many weeks do the {xos} last?", lambda a, b, c: X)),
           FIREWOOD, alt="The stove that {n1} and {his1} {k1} light burns {b} {os} an evening on weekdays and {c} a "
           "day on Saturdays and Sundays. Before winter they stack {a} of them in the shed. How many weeks do the {os} "
           "last?", alt_kind="reorder", paraphrase="For how many weeks will the stack keep the stove going?"),
    # 20 dev
    Family("sheep_shearing", "{n1} shears {os} for farmers in the summer, and {his1} {k1} rolls the fleeces for "
           "{him1}. {He1} shears {a} an hour for {b} hours a day, is paid {cs}{c} an animal, and gives the {k1} a "
           "quarter of what {he1} earns. How many {cw} does {n1} keep from {d} days of shearing?",
           "per_hour = {a}\nhours = {b}\nper_animal = {c}\ndays = {d}\n"
           "earned = per_hour * hours * per_animal * days\nprint(earned - earned // 4)",
           lambda a, b, c, d: a * b * c * d - _div(a * b * c * d, 4),
           {"a": R(6, 20), "b": R(5, 9), "c": R(2, 6), "d": R(3, 10)},
           (("entity", "How many {cw} does {n1}'s {k1} get from {d} days of shearing?",
             lambda a, b, c, d: _div(a * b * c * d, 4)),
            ("unit", "How many cents does {n1} keep from {d} days of shearing?",
             lambda a, b, c, d: (a * b * c * d - _div(a * b * c * d, 4)) * 100),
            ("step", "How many {os} does {n1} shear in {d} days?", lambda a, b, c, d: a * b * d),
            ("person", "How many {cw} does {n2} keep from {d} days of shearing?", lambda a, b, c, d: X),
            ("kin", "How many fleeces does {n1}'s {xk} roll?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} keep from {d} days of shearing?", lambda a, b, c, d: X),
            ("object", "How many {xos} does {n1} shear in a day?", lambda a, b, c, d: X)),
           FLEECED, alt="A quarter of what {n1} earns shearing {os} for farmers in the summer goes to {his1} {k1}, who "
           "rolls the fleeces for {him1}. {He1} earns {cs}{c} for each animal and shears {a} an hour for {b} hours a "
           "day. How many {cw} does {n1} keep from {d} days of shearing?", alt_kind="reorder",
           paraphrase="After the {k1}'s share, what does {n1} have left from {d} days of shearing, in {cw}?"),
    # 21 fresh
    Family("museum_ticket_desk", "{n1} works at the ticket desk of the {o} with {his1} {k1}. On a rainy Saturday the "
           "{o} is open for {a} hours and lets in {b} visitors an hour, {c}% of them children, who pay {cs}{d}, while "
           "adults pay {cs}{e}. How many {cw} does the ticket desk take in on Saturday?",
           "hours = {a}\nper_hour = {b}\nchild_pct = {c}\nchild_price = {d}\nadult_price = {e}\n"
           "visitors = hours * per_hour\nchildren = visitors * child_pct // 100\n"
           "print(children * child_price + (visitors - children) * adult_price)",
           lambda a, b, c, d, e: _div(a * b * c, 100) * d + (a * b - _div(a * b * c, 100)) * e,
           {"a": R(6, 10), "b": R(20, 60, 5), "c": R(20, 60, 10), "d": R(2, 6), "e": R(8, 16)},
           (("entity", "How many adults visit the {o} on Saturday?",
             lambda a, b, c, d, e: a * b - _div(a * b * c, 100)),
            ("unit", "How many cents does the ticket desk take in on Saturday?",
             lambda a, b, c, d, e: (_div(a * b * c, 100) * d + (a * b - _div(a * b * c, 100)) * e) * 100),
            ("step", "How many visitors does the {o} let in on Saturday?", lambda a, b, c, d, e: a * b),
            ("person", "How many {cw} does {n2}'s ticket desk take in?", lambda a, b, c, d, e: X),
            ("kin", "How many tickets does {n1}'s {xk} sell?", lambda a, b, c, d, e: X),
            ("currency", "How many {xw} does the ticket desk take in on Saturday?", lambda a, b, c, d, e: X),
            ("object", "How many {cw} does the {xo} take in on Saturday?", lambda a, b, c, d, e: X)),
           EXHIBITS, alt="On a rainy Saturday the {o} where {n1} and {his1} {k1} work at the ticket desk lets in {b} "
           "visitors an hour for {a} hours. Adults pay {cs}{e}, and children, who are {c}% of the visitors, pay "
           "{cs}{d}. How many {cw} does the ticket desk take in on Saturday?", alt_kind="reorder",
           paraphrase="What are Saturday's ticket takings, in {cw}?"),
    # 22 dev
    Family("pool_lane_sessions", "{n1}'s {k1} coaches a swimming club with {a} members, and {n1} helps book the "
           "pool. It has {b} lanes with room for {c} swimmers in each, and a session lasts {d} minutes. If every "
           "member swims in exactly one session, how many hours is the pool booked for?",
           "members = {a}\nlanes = {b}\nper_lane = {c}\nminutes = {d}\n"
           "print(members // (lanes * per_lane) * minutes // 60)",
           lambda a, b, c, d: _div(_div(a, b * c) * d, 60),
           {"a": R(40, 240, 8), "b": R(3, 8), "c": R(4, 8), "d": R(30, 90, 15)},
           (("entity", "How many swimmers fit in the pool at once?", lambda a, b, c, d: b * c),
            ("unit", "If every member swims in exactly one session, how many minutes is the pool booked for?",
             lambda a, b, c, d: _div(a, b * c) * d),
            ("step", "How many sessions does the club need?", lambda a, b, c, d: _div(a, b * c)),
            ("person", "How many hours is the pool booked for {n2}'s club?", lambda a, b, c, d: X),
            ("kin", "How many swimmers does {n1}'s {xk} coach?", lambda a, b, c, d: X)),
           alt="A session at the pool lasts {d} minutes, and its {b} lanes have room for {c} swimmers each. {n1} "
           "helps {his1} {k1}, who coaches a swimming club with {a} members, book it. If every member swims in "
           "exactly one session, how many hours is the pool booked for?", alt_kind="reorder",
           paraphrase="If each member gets one session, for how many hours must the pool be booked?"),
    # 23 fresh
    Family("bird_survey", "{n1} and {his1} {k1} count birds in the park for the spring survey. {n1} counts {a} {os} "
           "in the morning, and in the afternoon {he1} counts {b} fewer than twice that many. The {k1} counts three "
           "times as many as {n1}'s morning count. How many {os} do they count in all?",
           "morning = {a}\nfewer = {b}\nafternoon = 2 * morning - fewer\nkin = 3 * morning\n"
           "print(morning + afternoon + kin)",
           lambda a, b: 6 * a - b, {"a": R(8, 40), "b": R(2, 12)},
           (("entity", "How many {os} does {n1}'s {k1} count?", lambda a, b: 3 * a),
            ("unit", "How many dozen {os} do they count in all?", lambda a, b: _div(6 * a - b, 12)),
            ("step", "How many {os} does {n1} count in the afternoon?", lambda a, b: 2 * a - b),
            ("person", "How many {os} does {n2} count?", lambda a, b: X),
            ("kin", "How many {os} does {n1}'s {xk} count?", lambda a, b: X),
            ("object", "How many {xos} do they count in all?", lambda a, b: X)),
           PARK_BIRDS, alt="For the spring bird survey in the park, {n1}'s {k1} counts three times as many {os} as "
           "{n1} counts in the morning. {n1} counts {a} in the morning, then {b} fewer than twice that many in the "
           "afternoon. How many {os} do they count in all?", alt_kind="reorder",
           paraphrase="What is their total count of {os}?"),
)


POOL = Pool(POOL6_FAMILIES, POOLS, SEED, half_of, (DEV_NAME, HELD_OUT_NAME))
pool_instances, half_families, build, pool_problems = POOL.instances, POOL.half_families, POOL.build, POOL.problems


def main() -> None:
    POOL.write()


if __name__ == "__main__":
    main()
