"""A seventh pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL7_FAMILIES` even -> `varied-dev7` (the
development half, to tune on), odd -> `varied-fresh7` (held out: nobody tunes on it, it is run once at the end).
The draw's seed is SEED = 9895. The families are to be written without running the flywheel, the router, the
alignment or `kvgraft bench flywheel` on either half and without reading the alignment's, transfer's, structure's,
router's or parameterizer's rules.

Written on 2026-12-05 by a helper session, without running the flywheel, the router, the alignment or `kvgraft bench
flywheel` on either half and without reading the alignment's, transfer's, structure's, router's or parameterizer's
rules (nor their tests, tests/fixtures/review8_cases.py, docs/FLYWHEEL.md or the flywheel sections of
docs/BENCHMARKS.md); only this module's own soundness check, ruff and the pool tests were run.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the families of bench/flywheel_data.py, bench/flywheel_gsm_data.py,
bench/flywheel_varied_data.py, bench/flywheel_fresh_data.py or bench/flywheel_pool2_data.py .. flywheel_pool6_data.py,
whose machinery they reuse by import (Family, the draw with the written-number redraw, one-slot `edit_*` rows, near
misses of every kind, `problems()`; read bench/flywheel_varied_data.py's and bench/flywheel_fresh_data.py's docstrings
for the rows). Situations no earlier pool has: a bakery's sourdough starter fed twice a day from sacks of flour, a
dental clinic's check-up slots around a lunch hour, a carpet fitter's bedroom and hallway by the square meter, a food
truck's lunch and evening shifts, a gym's joining fee with a percentage off the monthly price for joining together, a
bike hire by the hour with a member's free first hour, a fishing trip's daily catch limit, a greenhouse's seed trays
and the percentage that come up, a pottery kiln's two firings, a parcel courier's pick-up fee and price per kilogram
with a tenth off, a knife sharpening stall at a farmers' market, a choir's sheet music with a quarter paid from its
funds, a barber's rented chair, driving lessons bought in blocks, a service elevator's trips, a translator paid per
hundred words, an ice rink's entry at half price for children and its skate hire, a hospital's vending machines
restocked by the box, a village's streets plowed after a snowfall, jam from an allotment's fruit, a toll road with an
electronic tag, a mail route's letters and parcels, a mobile dog groomer's small and large dogs and a jigsaw puzzle
done together; questions that open with a clause ("Working together, how many ...", "Over {d} weeks, what ...",
"Once the chair is paid for, ..."), statements joined with "and", "but", "so", "while" or relative clauses ("at whose
allotment", "who rents {him1} a chair there"), an opening participle ("Paid {a} {cw} for every hundred words, ..."),
numbers as words where people write them so ("twice", "half", "a third", "a quarter", "a tenth", "an hour", "every
hundred words"); new names (one word, two words, hyphenated), kin and role nouns ("godson", "older sister",
"fiancé", "pen pal", "choir director", "karate instructor"), objects of one to five words, and new currencies (K
kwacha, Br birr, ﷼ riyals, JD dinars, MT meticais, ៛ riels) by sign and by word.

    python -m bench.flywheel_pool7_data   # rewrites bench/data/flywheel-varied-{dev7,fresh7}-{library,eval}.jsonl
"""

from __future__ import annotations

from bench.flywheel_fresh_data import Pools
from bench.flywheel_gsm_data import _div
from bench.flywheel_pool import Pool
from bench.flywheel_pool6_data import POOL6_CURRENCIES, POOL6_KIN, POOL6_NAMES
from bench.flywheel_varied_data import NO_ANSWER, Family, R

DEV_NAME, HELD_OUT_NAME = "varied-dev7", "varied-fresh7"
SEED = 9895


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME

POOL7_NAMES = POOL6_NAMES + tuple((n, "f") for n in (
    "Wairimu", "Adwoa", "Seo-yeon", "Tuyet Mai", "Zehra", "Marie-Ange", "Yaretzi", "Amaya", "Farida", "Liv",
    "Mahina", "Nasiba")) + tuple((n, "m") for n in (
        "Kagiso", "Dong-hyun", "Quang Minh", "Alemayehu", "Timur", "Pierre-Yves", "Hemi", "Eero", "Babajide",
        "Anselmo", "Kenji", "Otabek"))
POOL7_KIN = POOL6_KIN + ("godson", "older sister", "little brother", "fiancé", "great-granddaughter", "foster son",
                         "dance teacher", "choir director", "shift supervisor", "pen pal", "mentor",
                         "karate instructor")
POOL7_CURRENCIES = POOL6_CURRENCIES + (("K", "kwacha"), ("Br", "birr"), ("﷼", "riyals"), ("JD", "dinars"),
                                       ("MT", "meticais"), ("៛", "riels"))
POOLS = Pools(POOL7_NAMES, POOL7_KIN, POOL7_CURRENCIES)

FLOURS = (("flour", "flour"), ("rye flour", "rye flour"), ("spelt flour", "spelt flour"),
          ("whole wheat flour", "whole wheat flour"), ("strong white bread flour", "strong white bread flour"),
          ("stone-ground organic spelt flour", "stone-ground organic spelt flour"))
CARPETS = (("carpet", "carpets"), ("wool carpet", "wool carpets"), ("berber carpet", "berber carpets"),
           ("grey twist pile carpet", "grey twist pile carpets"), ("cheap nylon carpet", "cheap nylon carpets"),
           ("thick cream wool carpet", "thick cream wool carpets"))
TRUCK_FOOD = (("taco", "tacos"), ("burrito", "burritos"), ("crepe", "crepes"), ("bowl of ramen", "bowls of ramen"),
              ("lamb kebab wrap", "lamb kebab wraps"),
              ("portion of fish and chips", "portions of fish and chips"))
GYMS = (("gym", "gyms"), ("climbing gym", "climbing gyms"), ("boxing gym", "boxing gyms"),
        ("leisure center", "leisure centers"), ("gym by the station", "gyms by the station"),
        ("big new bouldering gym downtown", "big new bouldering gyms downtown"))
HIRE_BIKES = (("bike", "bikes"), ("e-bike", "e-bikes"), ("mountain bike", "mountain bikes"),
              ("road bike", "road bikes"), ("heavy old Dutch bike", "heavy old Dutch bikes"),
              ("bike with a child seat", "bikes with a child seat"))
LAKE_FISH = (("trout", "trout"), ("perch", "perch"), ("pike", "pike"), ("rainbow trout", "rainbow trout"),
             ("smallmouth bass", "smallmouth bass"), ("big brown lake trout", "big brown lake trout"))
SEEDLINGS = (("lettuce", "lettuces"), ("cabbage", "cabbages"), ("cherry tomato", "cherry tomatoes"),
             ("sweet pepper", "sweet peppers"), ("tall yellow sunflower", "tall yellow sunflowers"),
             ("dwarf purple climbing bean", "dwarf purple climbing beans"))
POTTERY = (("bowl", "bowls"), ("mug", "mugs"), ("plate", "plates"), ("small vase", "small vases"),
           ("tea bowl", "tea bowls"), ("hand-built clay plant pot", "hand-built clay plant pots"))
PARCEL_GOODS = (("book", "books"), ("toy", "toys"), ("jar of spices", "jars of spices"),
                ("old school textbook", "old school textbooks"), ("winter coat", "winter coats"),
                ("hand-knitted wool baby blanket", "hand-knitted wool baby blankets"))
SHEARS = (("scissors", "scissors"), ("garden shears", "garden shears"), ("shears", "shears"),
          ("hairdressing scissors", "hairdressing scissors"),
          ("long-handled hedge shears", "long-handled hedge shears"),
          ("heavy old tailor's scissors", "heavy old tailor's scissors"))
CHOIR_PIECES = (("hymn", "hymns"), ("carol", "carols"), ("madrigal", "madrigals"), ("folk song", "folk songs"),
                ("short Latin motet", "short Latin motets"), ("song from a musical", "songs from a musical"))
BARBER_JOBS = (("haircut", "haircuts"), ("beard trim", "beard trims"), ("skin fade", "skin fades"),
               ("buzz cut", "buzz cuts"), ("hot towel shave", "hot towel shaves"),
               ("short back and sides", "short back and sides"))
OFFICE_LOADS = (("box", "boxes"), ("chair", "chairs"), ("filing cabinet", "filing cabinets"),
                ("box of files", "boxes of files"), ("flat-pack desk", "flat-pack desks"),
                ("heavy box of printer paper", "heavy boxes of printer paper"))
DOCUMENTS = (("contract", "contracts"), ("lease", "leases"), ("patent", "patents"), ("user manual", "user manuals"),
             ("medical report", "medical reports"), ("long insurance claim form", "long insurance claim forms"),
             ("set of company rules", "sets of company rules"))
VENDING = (("snack", "snacks"), ("chocolate bar", "chocolate bars"), ("granola bar", "granola bars"),
           ("bag of crisps", "bags of crisps"), ("can of soda", "cans of soda"),
           ("small bottle of orange juice", "small bottles of orange juice"))
JAM_FRUIT = (("strawberry", "strawberries"), ("plum", "plums"), ("blackcurrant", "blackcurrants"),
             ("wild blackberry", "wild blackberries"), ("red gooseberry", "red gooseberries"),
             ("small sweet yellow plum", "small sweet yellow plums"))
CARS = (("car", "cars"), ("van", "vans"), ("minibus", "minibuses"), ("camper van", "camper vans"),
        ("pickup truck", "pickup trucks"), ("old family station wagon", "old family station wagons"))
MAIL = (("letter", "letters"), ("catalog", "catalogs"), ("flyer", "flyers"), ("postcard", "postcards"),
        ("pizza menu", "pizza menus"), ("free local newspaper", "free local newspapers"),
        ("glossy supermarket discount booklet", "glossy supermarket discount booklets"))
SMALL_DOGS = (("terrier", "terriers"), ("poodle", "poodles"), ("dachshund", "dachshunds"),
              ("Yorkshire terrier", "Yorkshire terriers"), ("toy poodle", "toy poodles"),
              ("fluffy little white Maltese", "fluffy little white Maltese"))
JIGSAWS = (("lighthouse", "lighthouses"), ("castle", "castles"), ("steam train", "steam trains"),
           ("bowl of fruit", "bowls of fruit"), ("map of the world", "maps of the world"),
           ("field of red poppies", "fields of red poppies"))

X = NO_ANSWER
POOL7_FAMILIES: tuple[Family, ...] = (
    # 0 dev
    Family("sourdough_starter", "{n1} keeps the sourdough starter at {his1} {k1}'s bakery alive by feeding it twice a "
           "day, and every feeding takes {a} grams of {os}. The {os} comes in sacks of {b} kilograms that cost {cs}{c} "
           "each. How many {cw} does the starter's {os} cost over {d} weeks?",
           "grams = {a}\nsack_kg = {b}\nprice = {c}\nweeks = {d}\n"
           "print(grams * 2 * 7 * weeks // (sack_kg * 1000) * price)",
           lambda a, b, c, d: _div(14 * a * d, 1000 * b) * c,
           {"a": R(100, 500, 100), "b": R(2, 5), "c": R(6, 30), "d": R(2, 10)},
           (("entity", "How many grams of {os} does the starter get in a day?", lambda a, b, c, d: 2 * a),
            ("unit", "How many cents does the starter's {os} cost over {d} weeks?",
             lambda a, b, c, d: _div(14 * a * d, 1000 * b) * c * 100),
            ("step", "How many sacks of {os} does the starter use over {d} weeks?",
             lambda a, b, c, d: _div(14 * a * d, 1000 * b)),
            ("person", "How many {cw} does the starter at {n2}'s bakery cost over {d} weeks?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} spend on {os} over {d} weeks?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the starter's {os} cost over {d} weeks?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the starter's {xos} cost over {d} weeks?", lambda a, b, c, d: X)),
           FLOURS, alt="Every feeding of the sourdough starter that {n1} keeps alive at {his1} {k1}'s bakery takes {a} "
           "grams of {os}, and it is fed twice a day. The sacks the {os} comes in hold {b} kilograms and cost {cs}{c} "
           "each. How many {cw} does the starter's {os} cost over {d} weeks?", alt_kind="reorder",
           paraphrase="Over {d} weeks, what does the {os} for the starter cost, in {cw}?"),
    # 1 fresh
    Family("dentist_slots", "{n1} answers the phone at a dental clinic for {his1} {k1}, the dentist. The clinic is "
           "open {a} hours a day on {b} days a week, but an hour of each day is kept free for lunch, and every "
           "check-up slot lasts {c} minutes. How many check-ups can the clinic book in a week?",
           "hours = {a}\ndays = {b}\nslot = {c}\nprint((hours - 1) * 60 // slot * days)",
           lambda a, b, c: _div((a - 1) * 60, c) * b, {"a": R(6, 10), "b": R(3, 6), "c": R(15, 45, 5)},
           (("entity", "How many hours a week is the clinic open?", lambda a, b, c: a * b),
            ("unit", "How many minutes of check-ups can the clinic book in a week?", lambda a, b, c: (a - 1) * 60 * b),
            ("step", "How many check-ups can the clinic book in a day?", lambda a, b, c: _div((a - 1) * 60, c)),
            ("person", "How many check-ups can {n2}'s clinic book in a week?", lambda a, b, c: X),
            ("kin", "How many check-ups does {n1}'s {xk} do in a week?", lambda a, b, c: X)),
           alt="Every check-up slot at the dental clinic lasts {c} minutes, and an hour of each day is kept free for "
           "lunch. {n1} answers the phone there for {his1} {k1}, the dentist, and the clinic is open on {b} days a "
           "week for {a} hours a day. How many check-ups can the clinic book in a week?", alt_kind="reorder",
           paraphrase="In a week, how many check-ups fit into the clinic's opening hours?"),
    # 2 dev
    Family("carpet_fitting", "{n1} fits carpets for a living. In {his1} {k1}'s new house {he1} lays {o} in a hallway "
           "of {c} square meters and in a bedroom that measures {a} meters by {b}. The {o} costs {cs}{d} a square "
           "meter. How many {cw} does the {o} cost?",
           "length = {a}\nwidth = {b}\nhallway = {c}\nprice = {d}\nprint((length * width + hallway) * price)",
           lambda a, b, c, d: (a * b + c) * d, {"a": R(3, 7), "b": R(2, 5), "c": R(4, 12), "d": R(15, 60, 5)},
           (("entity", "How many square meters is the bedroom?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does the {o} cost?", lambda a, b, c, d: (a * b + c) * d * 100),
            ("step", "How many square meters of {o} does {n1} lay?", lambda a, b, c, d: a * b + c),
            ("person", "How many {cw} does the {o} in {n2}'s house cost?", lambda a, b, c, d: X),
            ("kin", "How many square meters of {o} go into the house of {n1}'s {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the {o} cost?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the {xo} cost?", lambda a, b, c, d: X)),
           CARPETS, alt="The {o} that {n1}, who fits carpets for a living, lays in {his1} {k1}'s new house costs "
           "{cs}{d} a square meter. It goes into a bedroom that measures {a} by {b} meters and a "
           "hallway of {c} square meters. How many {cw} does the {o} cost?", alt_kind="reorder",
           paraphrase="What is the price of the {o} for the bedroom and the hallway, in {cw}?"),
    # 3 fresh
    Family("food_truck_shifts", "{n1} runs a food truck with {his1} {k1}. On a lunch shift they sell {a} {os}, and on "
           "an evening shift they sell twice as many, each one for {cs}{b}. This week they work {c} lunch shifts and "
           "{d} evening shifts. How many {cw} do they take in this week?",
           "lunch = {a}\nprice = {b}\nlunch_shifts = {c}\nevening_shifts = {d}\n"
           "print((lunch * lunch_shifts + 2 * lunch * evening_shifts) * price)",
           lambda a, b, c, d: a * b * (c + 2 * d), {"a": R(20, 80, 5), "b": R(3, 12), "c": R(2, 6), "d": R(2, 5)},
           (("entity", "How many {os} do they sell on an evening shift?", lambda a, b, c, d: 2 * a),
            ("unit", "How many cents do they take in this week?", lambda a, b, c, d: a * b * (c + 2 * d) * 100),
            ("step", "How many {os} do they sell this week?", lambda a, b, c, d: a * (c + 2 * d)),
            ("person", "How many {cw} does {n2}'s food truck take in this week?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} sell this week?", lambda a, b, c, d: X),
            ("currency", "How many {xw} do they take in this week?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the {xos} bring in this week?", lambda a, b, c, d: X)),
           TRUCK_FOOD, alt="This week {n1} and {his1} {k1} work {c} lunch shifts and {d} evening shifts on their food "
           "truck. They sell {a} {os} at {cs}{b} apiece on a lunch shift, and twice as many on an evening shift. How "
           "many {cw} do they take in this week?", alt_kind="reorder",
           paraphrase="What are the food truck's takings for the week, in {cw}?"),
    # 4 dev
    Family("gym_joining_fee", "A {o} charges a joining fee of {cs}{a} and then {cs}{b} a month. {n1} signs up with "
           "{his1} {k1}, and because they join together each of them gets {c}% off the monthly price, though not off "
           "the joining fee. How many {cw} do the two of them pay for the first {d} months?",
           "joining = {a}\nmonthly = {b}\noff = {c}\nmonths = {d}\n"
           "print(2 * (joining + months * (monthly - monthly * off // 100)))",
           lambda a, b, c, d: 2 * (a + d * (b - _div(b * c, 100))),
           {"a": R(20, 100, 10), "b": R(20, 80, 5), "c": R(10, 30, 5), "d": R(3, 12)},
           (("entity", "How many {cw} does each of them pay a month after the discount?",
             lambda a, b, c, d: b - _div(b * c, 100)),
            ("unit", "How many cents do the two of them pay for the first {d} months?",
             lambda a, b, c, d: 2 * (a + d * (b - _div(b * c, 100))) * 100),
            ("step", "How many {cw} does {n1} alone pay for the first {d} months?",
             lambda a, b, c, d: a + d * (b - _div(b * c, 100))),
            ("person", "How many {cw} does {n2} pay for the first {d} months?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for the first {d} months?", lambda a, b, c, d: X),
            ("currency", "How many {xw} do the two of them pay for the first {d} months?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the two of them pay the {xo} for the first {d} months?",
             lambda a, b, c, d: X)),
           GYMS, alt="{n1} and {his1} {k1} join a {o} together, so each of them gets {c}% off its monthly price of "
           "{cs}{b}, but not off its joining fee of {cs}{a}. How many {cw} do the two of them pay for the first {d} "
           "months?", alt_kind="reorder",
           paraphrase="Together, what do they spend on the {o} in the first {d} months, in {cw}?"),
    # 5 fresh
    Family("bike_hire_hours", "{n1} and {his1} {k1} hire two {os} for a ride along the coast. The shop charges {cs}{a} "
           "an hour for each, but {n1} is a member, so the first hour on {his1} {o} is free. They ride for {b} hours "
           "and also hire a lock for {cs}{c}. How many {cw} do they pay the shop?",
           "hourly = {a}\nhours = {b}\nlock = {c}\nprint(hourly * (hours - 1) + hourly * hours + lock)",
           lambda a, b, c: a * (2 * b - 1) + c, {"a": R(4, 15), "b": R(2, 6), "c": R(3, 10)},
           (("entity", "How many {cw} does the {k1}'s {o} cost?", lambda a, b, c: a * b),
            ("unit", "How many cents do they pay the shop?", lambda a, b, c: (a * (2 * b - 1) + c) * 100),
            ("step", "How many {cw} does {n1}'s {o} cost?", lambda a, b, c: a * (b - 1)),
            ("person", "How many {cw} does {n2} pay the shop?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay the shop?", lambda a, b, c: X),
            ("currency", "How many {xw} do they pay the shop?", lambda a, b, c: X),
            ("object", "How many {cw} do they pay for the {xos}?", lambda a, b, c: X)),
           HIRE_BIKES, alt="For a ride along the coast, {n1} and {his1} {k1} hire a lock for {cs}{c} and two {os}, "
           "which cost {cs}{a} an hour each. They ride for {b} hours, and because {n1} is a member, {he1} pays "
           "nothing for the first hour on {his1} {o}. How many {cw} do they pay the shop?", alt_kind="reorder",
           paraphrase="What is the shop's bill for the ride, in {cw}?"),
    # 6 dev
    Family("fishing_catch_limit", "{n1} goes fishing on the lake with {his1} {k1} and {a} friends, and each person may "
           "keep {b} {os} a day. On the first day the group keeps the full limit. On the second day they keep {c} "
           "fewer than the limit in all. How many {os} do they keep over the two days?",
           "friends = {a}\nlimit = {b}\nfewer = {c}\nday = (friends + 2) * limit\nprint(day + day - fewer)",
           lambda a, b, c: 2 * b * (a + 2) - c, {"a": R(2, 6), "b": R(3, 8), "c": R(3, 12)},
           (("entity", "How many {os} do they keep on the second day?", lambda a, b, c: b * (a + 2) - c),
            ("unit", "How many kilograms of {os} do they keep over the two days?", lambda a, b, c: X),
            ("step", "How many {os} may the group keep in a day?", lambda a, b, c: b * (a + 2)),
            ("person", "How many {os} does {n2} keep over the two days?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} keep?", lambda a, b, c: X),
            ("object", "How many {xos} do they keep over the two days?", lambda a, b, c: X)),
           LAKE_FISH, alt="Each person fishing on the lake may keep {b} {os} a day. {n1} has come with {his1} {k1} "
           "and {a} friends, and the group keeps the full limit on the first day but {c} fewer than the limit in all "
           "on the second. How many {os} do they keep over the two days?", alt_kind="reorder",
           paraphrase="How many {os} does the group take home over the two days?"),
    # 7 fresh
    Family("greenhouse_seed_trays", "{n1} sows {o} seeds in the greenhouse at {his1} {k1}'s garden center. {He1} "
           "fills {a} trays of {b} cells with one seed in each cell, and {c}% of the seeds come up. The seedlings are "
           "sold in packs of {d}. How many packs does {n1} make?",
           "trays = {a}\ncells = {b}\ncome_up = {c}\npack = {d}\nprint(trays * cells * come_up // 100 // pack)",
           lambda a, b, c, d: _div(_div(a * b * c, 100), d),
           {"a": R(4, 20), "b": R(24, 72, 12), "c": R(60, 95, 5), "d": R(4, 10, 2)},
           (("entity", "How many seeds does {n1} sow?", lambda a, b, c, d: a * b),
            ("unit", "How many dozen seedlings come up?", lambda a, b, c, d: _div(_div(a * b * c, 100), 12)),
            ("step", "How many seedlings come up?", lambda a, b, c, d: _div(a * b * c, 100)),
            ("person", "How many packs does {n2} make?", lambda a, b, c, d: X),
            ("kin", "How many trays does {n1}'s {xk} fill?", lambda a, b, c, d: X),
            ("object", "How many packs of {xo} seedlings does {n1} make?", lambda a, b, c, d: X)),
           SEEDLINGS, alt="Only {c}% of the {o} seeds that {n1} sows in the greenhouse at {his1} {k1}'s garden center "
           "come up. {He1} fills {a} trays of {b} cells, one seed to a cell, and sells the seedlings in packs of {d}. "
           "How many packs does {n1} make?", alt_kind="reorder",
           paraphrase="How many packs of seedlings does {n1} end up with?"),
    # 8 dev
    Family("pottery_kiln", "{n1} teaches a pottery class with {his1} {k1}, and the students have made {a} {os} that "
           "each need two firings, one before the glaze and one after. The kiln holds {b} pieces at a time, and a "
           "firing takes {c} hours. How many hours of firing do the {os} need?",
           "pieces = {a}\nper_load = {b}\nhours = {c}\nprint(pieces // per_load * 2 * hours)",
           lambda a, b, c: _div(a, b) * 2 * c, {"a": R(24, 120, 6), "b": R(6, 24, 2), "c": R(8, 14)},
           (("entity", "How many hours of firing do the {os} need before the glaze?", lambda a, b, c: _div(a, b) * c),
            ("unit", "How many minutes of firing do the {os} need?", lambda a, b, c: _div(a, b) * 2 * c * 60),
            ("step", "How many times is the kiln fired?", lambda a, b, c: _div(a, b) * 2),
            ("person", "How many hours of firing do {n2}'s {os} need?", lambda a, b, c: X),
            ("kin", "How many {os} has {n1}'s {xk} made?", lambda a, b, c: X),
            ("object", "How many hours of firing do the {xos} need?", lambda a, b, c: X)),
           POTTERY, alt="The kiln in the pottery class that {n1} teaches with {his1} {k1} holds {b} pieces at a time, "
           "and a firing takes {c} hours. The students have made {a} {os}, and each piece is fired twice, "
           "once before the glaze and once after. How many hours of firing do the {os} need?", alt_kind="reorder",
           paraphrase="For how many hours must the kiln run to fire all the {os}?"),
    # 9 fresh
    Family("courier_parcels", "A courier charges {cs}{a} to pick up each parcel plus {cs}{b} for every kilogram. {n1} "
           "is sending {his1} {k1} {c} parcels of {os}, each one {d} kilograms, and because there is more than "
           "one, the courier takes a tenth off the whole bill. How many {cw} does {n1} pay?",
           "pickup = {a}\nper_kg = {b}\nparcels = {c}\nweight = {d}\nbill = parcels * (pickup + per_kg * weight)\n"
           "print(bill - bill // 10)",
           lambda a, b, c, d: c * (a + b * d) - _div(c * (a + b * d), 10),
           {"a": R(5, 20), "b": R(2, 9), "c": R(2, 6), "d": R(3, 15)},
           (("entity", "How many kilograms do the parcels weigh in all?", lambda a, b, c, d: c * d),
            ("unit", "How many cents does {n1} pay?",
             lambda a, b, c, d: (c * (a + b * d) - _div(c * (a + b * d), 10)) * 100),
            ("step", "How many {cw} is the bill before the tenth comes off?", lambda a, b, c, d: c * (a + b * d)),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: X),
            ("kin", "How many parcels does {n1}'s {xk} send?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} pay to send the {xos}?", lambda a, b, c, d: X)),
           PARCEL_GOODS, alt="{n1} is sending {c} parcels of {os} to {his1} {k1}, each of them weighing {d} kilograms. "
           "The courier takes a tenth off the whole bill when there is more than one parcel, and otherwise charges "
           "{cs}{a} to pick up each one plus {cs}{b} for every kilogram. How many {cw} does {n1} pay?",
           alt_kind="reorder", paraphrase="What does sending the parcels cost {n1}, in {cw}?"),
    # 10 dev
    Family("knife_sharpening_stall", "Every Saturday {n1} sharpens knives at the farmers' market, at a stall next to "
           "the one where {his1} {k1} sells bread. {He1} charges {cs}{a} for a kitchen knife and {cs}{b} for a pair of "
           "{os}. Last Saturday {he1} sharpened {c} knives and {d} pairs of {os}, and the stall cost {cs}{e} to rent. "
           "How many {cw} did {n1} make after the rent?",
           "knife = {a}\npair = {b}\nknives = {c}\npairs = {d}\nrent = {e}\n"
           "print(knife * knives + pair * pairs - rent)",
           lambda a, b, c, d, e: a * c + b * d - e,
           {"a": R(3, 8), "b": R(4, 12), "c": R(10, 40), "d": R(3, 15), "e": R(10, 40, 5)},
           (("entity", "How many {cw} did the pairs of {os} bring in?", lambda a, b, c, d, e: b * d),
            ("unit", "How many cents did {n1} make after the rent?", lambda a, b, c, d, e: (a * c + b * d - e) * 100),
            ("step", "How many {cw} did {n1} take in before the rent?", lambda a, b, c, d, e: a * c + b * d),
            ("person", "How many {cw} did {n2} make after the rent?", lambda a, b, c, d, e: X),
            ("kin", "How many loaves did {n1}'s {xk} sell?", lambda a, b, c, d, e: X),
            ("currency", "How many {xw} did {n1} make after the rent?", lambda a, b, c, d, e: X),
            ("object", "How many {cw} did the pairs of {xos} bring in?", lambda a, b, c, d, e: X)),
           SHEARS, alt="The stall at the farmers' market where {n1} sharpens knives every Saturday, beside the bread "
           "stall of {his1} {k1}, costs {cs}{e} to rent. Last Saturday {he1} sharpened {c} knives at {cs}{a} each and "
           "{d} pairs of {os} at {cs}{b} a pair. How many {cw} did {n1} make after the rent?", alt_kind="reorder",
           paraphrase="After paying for the stall, what was {n1}'s profit last Saturday, in {cw}?"),
    # 11 fresh
    Family("choir_sheet_music", "{n1} and {his1} {k1} sing in a choir of {a} members. For the spring concert every "
           "member needs a copy of each of the {b} {os} on the program, and a copy costs {cs}{c}. The choir's funds "
           "pay for a quarter of the cost. How many {cw} do the members pay between them?",
           "members = {a}\npieces = {b}\nprice = {c}\ncost = members * pieces * price\nprint(cost - cost // 4)",
           lambda a, b, c: a * b * c - _div(a * b * c, 4), {"a": R(16, 48, 4), "b": R(3, 9), "c": R(2, 6)},
           (("entity", "How many copies does the choir need?", lambda a, b, c: a * b),
            ("unit", "How many cents do the members pay between them?",
             lambda a, b, c: (a * b * c - _div(a * b * c, 4)) * 100),
            ("step", "How many {cw} do the copies cost in all?", lambda a, b, c: a * b * c),
            ("person", "How many {cw} does {n2}'s choir pay?", lambda a, b, c: X),
            ("kin", "How many copies does {n1}'s {xk} need?", lambda a, b, c: X),
            ("currency", "How many {xw} do the members pay between them?", lambda a, b, c: X),
            ("object", "How many copies of the {xos} does the choir need?", lambda a, b, c: X)),
           CHOIR_PIECES, alt="A copy of each of the {b} {os} on the spring concert's program costs {cs}{c}, and every "
           "one of the {a} members of the choir where {n1} and {his1} {k1} sing needs one. A quarter of the cost is "
           "paid from the choir's funds. How many {cw} do the members pay between them?", alt_kind="reorder",
           paraphrase="What is the members' share of the cost of the copies, in {cw}?"),
    # 12 dev
    Family("barber_chair_rent", "{n1} rents a chair in {his1} {k1}'s barber shop for {cs}{a} a week. {He1} does {b} "
           "{os} a day at {cs}{c} each and works {d} days a week. How many {cw} does {n1} keep each week after the "
           "chair rent?",
           "rent = {a}\nper_day = {b}\nprice = {c}\ndays = {d}\nprint(per_day * price * days - rent)",
           lambda a, b, c, d: b * c * d - a,
           {"a": R(80, 300, 20), "b": R(6, 15), "c": R(10, 30, 2), "d": R(4, 6)},
           (("entity", "How many {os} does {n1} do in a week?", lambda a, b, c, d: b * d),
            ("unit", "How many cents does {n1} keep each week after the chair rent?",
             lambda a, b, c, d: (b * c * d - a) * 100),
            ("step", "How many {cw} does {n1} take in each week before the chair rent?", lambda a, b, c, d: b * c * d),
            ("person", "How many {cw} does {n2} keep each week after the chair rent?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} charge for the chair?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} keep each week after the chair rent?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} charge for {xos}?", lambda a, b, c, d: X)),
           BARBER_JOBS, alt="{n1} works {d} days a week in the barber shop of {his1} {k1}, who rents {him1} a chair "
           "there for {cs}{a} a week, and does {b} {os} a day at {cs}{c} each. How many {cw} does {n1} keep each week "
           "after the chair rent?", alt_kind="reorder",
           paraphrase="Once the chair is paid for, what does {n1} earn in a week, in {cw}?"),
    # 13 fresh
    Family("driving_lesson_blocks", "{n1}'s {k1} is paying for {his1} driving lessons. The driving school charges "
           "{cs}{a} for a single lesson or {cs}{c} for a block of {b}, and {n1} takes {d} blocks. How many {cw} does "
           "buying blocks save compared with paying for the lessons one at a time?",
           "single = {a}\nper_block = {b}\nblock_price = {c}\nblocks = {d}\n"
           "print(blocks * (single * per_block - block_price))",
           lambda a, b, c, d: d * (a * b - c),
           {"a": R(25, 60, 5), "b": R(5, 10), "c": R(100, 500, 10), "d": R(2, 4)},
           (("entity", "How many lessons does {n1} take?", lambda a, b, c, d: b * d),
            ("unit", "How many cents does buying blocks save compared with paying for the lessons one at a time?",
             lambda a, b, c, d: d * (a * b - c) * 100),
            ("step", "How many {cw} does one block save?", lambda a, b, c, d: a * b - c),
            ("person", "How many {cw} does {n2} save by buying blocks?", lambda a, b, c, d: X),
            ("kin", "How many lessons does {n1}'s {xk} take?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does buying blocks save compared with paying for the lessons one at a time?",
             lambda a, b, c, d: X)),
           alt="{n1} takes {d} blocks of {b} driving lessons, which {his1} {k1} is paying for. A block costs {cs}{c}, "
           "while a single lesson at the driving school costs {cs}{a}. How many {cw} does buying blocks save compared "
           "with paying for the lessons one at a time?", alt_kind="reorder",
           paraphrase="What do the blocks save over single lessons, in {cw}?"),
    # 14 dev
    Family("service_elevator_trips", "{n1} is helping {his1} {k1} move {a} {os} up to an office on the top floor in "
           "the service elevator. It fits {b} of them per trip, each trip up and back down takes {c} minutes, and "
           "before every trip they wait {d} minutes for it. How many minutes does moving the {os} take?",
           "items = {a}\nper_trip = {b}\ntrip = {c}\nwait = {d}\nprint(items // per_trip * (trip + wait))",
           lambda a, b, c, d: _div(a, b) * (c + d), {"a": R(12, 60, 4), "b": R(2, 6), "c": R(3, 9), "d": R(2, 8)},
           (("entity", "How many minutes do they spend waiting for the elevator?", lambda a, b, c, d: _div(a, b) * d),
            ("unit", "How many seconds does moving the {os} take?", lambda a, b, c, d: _div(a, b) * (c + d) * 60),
            ("step", "How many trips does the elevator make?", lambda a, b, c, d: _div(a, b)),
            ("person", "How many minutes does moving {n2}'s {os} take?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} move?", lambda a, b, c, d: X),
            ("object", "How many minutes does moving the {xos} take?", lambda a, b, c, d: X)),
           OFFICE_LOADS, alt="The service elevator has room for {b} {os} on each trip, and {n1} and {his1} {k1} "
           "wait {d} minutes for it before every trip, which takes {c} minutes up and back down. They are moving {a} "
           "of the {os} to an office on the top floor. How many minutes does moving the {os} take?", alt_kind="reorder",
           paraphrase="How long do they spend getting all the {os} upstairs, in minutes?"),
    # 15 fresh
    Family("translation_words", "{n1} translates documents and is paid {a} {cw} for every hundred words. This week "
           "{he1} translates a {o} of {b} words for {his1} {k1}'s law firm, along with {c} letters of {d} words each. "
           "How many {cw} does {n1} earn this week?",
           "rate = {a}\nlong_doc = {b}\nletters = {c}\nletter_words = {d}\n"
           "print((long_doc + letters * letter_words) // 100 * rate)",
           lambda a, b, c, d: _div(b + c * d, 100) * a,
           {"a": R(6, 20), "b": R(1000, 5000, 100), "c": R(3, 12), "d": R(200, 800, 100)},
           (("entity", "How many words are the letters altogether?", lambda a, b, c, d: c * d),
            ("unit", "How many cents does {n1} earn this week?", lambda a, b, c, d: _div(b + c * d, 100) * a * 100),
            ("step", "How many words does {n1} translate this week?", lambda a, b, c, d: b + c * d),
            ("person", "How many {cw} does {n2} earn this week?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for the translations?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} earn this week?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} earn for the {xo}?", lambda a, b, c, d: X)),
           DOCUMENTS, alt="Paid {a} {cw} for every hundred words, {n1} translates {c} letters of {d} words each this "
           "week, and also a {o} of {b} words, all for {his1} {k1}'s law firm. How many {cw} does {n1} earn this "
           "week?", alt_kind="reorder", paraphrase="What does {n1} make from this week's translating, in {cw}?"),
    # 16 dev
    Family("ice_rink_outing", "An ice rink charges adults {cs}{a} to get in, and children half that. Skates cost "
           "{cs}{b} a pair to hire. {n1} and {his1} {k1} take {c} children from the youth club skating, and only the "
           "children hire skates. How many {cw} does the outing cost?",
           "adult = {a}\nskates = {b}\nchildren = {c}\nprint(2 * adult + children * (adult // 2 + skates))",
           lambda a, b, c: 2 * a + c * (_div(a, 2) + b), {"a": R(4, 14, 2), "b": R(3, 7), "c": R(5, 16)},
           (("entity", "How many {cw} do the two adults pay to get in?", lambda a, b, c: 2 * a),
            ("unit", "How many cents does the outing cost?", lambda a, b, c: (2 * a + c * (_div(a, 2) + b)) * 100),
            ("step", "How many {cw} do entry and skates cost for each child?", lambda a, b, c: _div(a, 2) + b),
            ("person", "How many {cw} does {n2}'s outing cost?", lambda a, b, c: X),
            ("kin", "How many children does {n1}'s {xk} take skating?", lambda a, b, c: X),
            ("currency", "How many {xw} does the outing cost?", lambda a, b, c: X)),
           alt="{n1} and {his1} {k1} take {c} children from the youth club skating, and only the children hire "
           "skates, at {cs}{b} a pair. Adults pay {cs}{a} to get into the ice rink, while children pay half that. How "
           "many {cw} does the outing cost?", alt_kind="reorder",
           paraphrase="What is the total cost of the skating trip, in {cw}?"),
    # 17 fresh
    Family("vending_restock", "{n1} fills the vending machines in the hospital where {his1} {k1} works. Each of the "
           "{c} machines holds {a} rows of {b} {os}, and by Monday a third of them have been sold. The {os} come in "
           "boxes of {d}. How many boxes does {n1} open to fill the machines again?",
           "rows = {a}\nper_row = {b}\nmachines = {c}\nper_box = {d}\n"
           "print(rows * per_row * machines // 3 // per_box)",
           lambda a, b, c, d: _div(_div(a * b * c, 3), d),
           {"a": R(4, 8), "b": R(6, 12), "c": R(3, 9), "d": R(16, 40, 8)},
           (("entity", "How many {os} do the machines hold when they are full?", lambda a, b, c, d: a * b * c),
            ("unit", "How many dozen {os} does {n1} put in?", lambda a, b, c, d: _div(_div(a * b * c, 3), 12)),
            ("step", "How many {os} have been sold by Monday?", lambda a, b, c, d: _div(a * b * c, 3)),
            ("person", "How many boxes does {n2} open?", lambda a, b, c, d: X),
            ("kin", "How many machines does {n1}'s {xk} fill?", lambda a, b, c, d: X),
            ("object", "How many boxes of {xos} does {n1} open?", lambda a, b, c, d: X)),
           VENDING, alt="By Monday a third of the {os} in the hospital's {c} vending machines, each of which holds {a} "
           "rows of {b}, have been sold. {n1}, whose {k1} works at the hospital, fills them up from boxes of {d}. How "
           "many boxes does {n1} open to fill the machines again?", alt_kind="reorder",
           paraphrase="How many boxes of {os} does it take to fill the machines again?"),
    # 18 dev
    Family("village_snowplow", "After a heavy snowfall, {n1} and {his1} {k1} plow the {a} kilometers of streets in "
           "their village, going along every street twice, once for each side. The plow moves at {b} kilometers "
           "an hour while clearing, and the village pays them {c} {cw} for each hour of plowing. How many {cw} do they "
           "earn?",
           "streets = {a}\nspeed = {b}\nrate = {c}\nprint(streets * 2 // speed * rate)",
           lambda a, b, c: _div(2 * a, b) * c, {"a": R(10, 60, 2), "b": R(4, 12), "c": R(20, 60, 5)},
           (("entity", "How many kilometers does the plow drive?", lambda a, b, c: 2 * a),
            ("unit", "How many cents do they earn?", lambda a, b, c: _div(2 * a, b) * c * 100),
            ("step", "How many hours does the plowing take?", lambda a, b, c: _div(2 * a, b)),
            ("person", "How many {cw} does {n2} earn?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} earn?", lambda a, b, c: X),
            ("currency", "How many {xw} do they earn?", lambda a, b, c: X)),
           alt="The village pays {n1} and {his1} {k1} {c} {cw} for each hour of plowing after a heavy snowfall, and "
           "their plow clears {b} kilometers an hour. Its streets add up to {a} kilometers, and they go along each "
           "one twice, once for each side. How many {cw} do they earn?", alt_kind="reorder",
           paraphrase="What does the village pay them for the plowing, in {cw}?"),
    # 19 fresh
    Family("allotment_jam", "{n1} harvests {a} kilograms of {os} at {his1} {k1}'s allotment, and each kilogram "
           "makes {b} jars of jam. {He1} keeps {d} jars for {him1}self, gives half of the rest to the {k1} and sells "
           "what is left at {cs}{c} a jar. How many {cw} does {n1} make from the jam?",
           "kilos = {a}\njars_per_kg = {b}\nprice = {c}\nkept = {d}\nrest = kilos * jars_per_kg - kept\n"
           "print((rest - rest // 2) * price)",
           lambda a, b, c, d: _div(a * b - d, 2) * c, {"a": R(4, 20), "b": R(2, 5), "c": R(3, 9), "d": R(2, 8)},
           (("entity", "How many jars does {n1} give {his1} {k1}?", lambda a, b, c, d: _div(a * b - d, 2)),
            ("unit", "How many cents does {n1} make from the jam?", lambda a, b, c, d: _div(a * b - d, 2) * c * 100),
            ("step", "How many jars of jam does {n1} make?", lambda a, b, c, d: a * b),
            ("person", "How many {cw} does {n2} make from the jam?", lambda a, b, c, d: X),
            ("kin", "How many jars does {n1} give {his1} {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} make from the jam?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} make from the {xos}?", lambda a, b, c, d: X)),
           JAM_FRUIT, alt="{n1} sells jam at {cs}{c} a jar, but only once {he1} has kept {d} jars for {him1}self and "
           "given half of the rest to {his1} {k1}, at whose allotment {he1} harvests {a} kilograms of {os}. Each "
           "kilogram makes {b} jars. How many {cw} does {n1} make from the jam?", alt_kind="reorder",
           paraphrase="What does the jam bring {n1}, in {cw}?"),
    # 20 dev
    Family("toll_road_tag", "{n1} drives {his1} {o} to visit {his1} {k1}, and the toll road there has {a} toll booths, "
           "with the same booths on the way back. Each booth charges {cs}{b}, but the electronic tag on {n1}'s "
           "windshield takes {c}% off every toll. How many {cw} does {n1} pay in tolls for the round trip?",
           "booths = {a}\ntoll = {b}\noff = {c}\nprint(2 * booths * (toll - toll * off // 100))",
           lambda a, b, c: 2 * a * (b - _div(b * c, 100)), {"a": R(3, 8), "b": R(4, 20, 2), "c": R(10, 50, 5)},
           (("entity", "How many toll booths does {n1} pass on the round trip?", lambda a, b, c: 2 * a),
            ("unit", "How many cents does {n1} pay in tolls for the round trip?",
             lambda a, b, c: 2 * a * (b - _div(b * c, 100)) * 100),
            ("step", "How many {cw} does each toll cost with the tag?", lambda a, b, c: b - _div(b * c, 100)),
            ("person", "How many {cw} does {n2} pay in tolls for the round trip?", lambda a, b, c: X),
            ("kin", "How many toll booths are on the road to {n1}'s {xk}?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay in tolls for the round trip?", lambda a, b, c: X),
            ("object", "How many {cw} does the round trip in the {xo} cost in tolls?", lambda a, b, c: X)),
           CARS, alt="An electronic tag on {n1}'s windshield takes {c}% off every toll of {cs}{b} on the road to "
           "{his1} {k1}'s home, which has {a} toll booths each way. {He1} drives there and back in {his1} {o}. How "
           "many {cw} does {n1} pay in tolls for the round trip?", alt_kind="reorder",
           paraphrase="What do the tolls there and back cost {n1}, in {cw}?"),
    # 21 fresh
    Family("mail_route_monday", "{n1} is covering {his1} {k1}'s mail route for a week. The route has {a} streets with "
           "{b} houses on each, and on Monday every house gets {c} {os}, while a third of the houses get a parcel as "
           "well. How many items does {n1} deliver on Monday?",
           "streets = {a}\nhouses = {b}\nper_house = {c}\nall_houses = streets * houses\n"
           "print(all_houses * per_house + all_houses // 3)",
           lambda a, b, c: a * b * c + _div(a * b, 3), {"a": R(4, 12), "b": R(12, 40), "c": R(2, 5)},
           (("entity", "How many parcels does {n1} deliver on Monday?", lambda a, b, c: _div(a * b, 3)),
            ("unit", "How many dozen items does {n1} deliver on Monday?",
             lambda a, b, c: _div(a * b * c + _div(a * b, 3), 12)),
            ("step", "How many houses are on the route?", lambda a, b, c: a * b),
            ("person", "How many items does {n2} deliver on Monday?", lambda a, b, c: X),
            ("kin", "How many houses are on the route of {n1}'s {xk}?", lambda a, b, c: X),
            ("object", "How many {xos} does {n1} deliver on Monday?", lambda a, b, c: X)),
           MAIL, alt="On Monday a third of the houses on the mail route that {n1} is covering for {his1} {k1} get a "
           "parcel, and every one of them gets {c} {os}. The route has {b} houses on each of its {a} streets. How "
           "many items does {n1} deliver on Monday?", alt_kind="reorder",
           paraphrase="Counting the parcels, how many things does {n1} deliver on Monday?"),
    # 22 dev
    Family("mobile_dog_grooming", "{n1} runs a mobile dog grooming van. Washing and clipping one of the {os} takes "
           "{him1} {a} minutes, while a large dog takes twice as long. On Tuesday {he1} grooms {b} {os} and {c} large "
           "dogs at {his1} {k1}'s kennels. How many hours does {n1} spend grooming on Tuesday?",
           "small = {a}\nsmall_dogs = {b}\nlarge_dogs = {c}\n"
           "print((small * small_dogs + 2 * small * large_dogs) // 60)",
           lambda a, b, c: _div(a * (b + 2 * c), 60), {"a": R(20, 60, 5), "b": R(2, 8), "c": R(2, 6)},
           (("entity", "How many minutes does {n1} spend on the large dogs?", lambda a, b, c: 2 * a * c),
            ("unit", "How many minutes does {n1} spend grooming on Tuesday?", lambda a, b, c: a * (b + 2 * c)),
            ("step", "How many dogs does {n1} groom on Tuesday?", lambda a, b, c: b + c),
            ("person", "How many hours does {n2} spend grooming on Tuesday?", lambda a, b, c: X),
            ("kin", "How many dogs does {n1}'s {xk} groom?", lambda a, b, c: X),
            ("object", "How many {xos} does {n1} groom on Tuesday?", lambda a, b, c: X)),
           SMALL_DOGS, alt="On Tuesday {n1} takes {his1} mobile grooming van to {his1} {k1}'s kennels and grooms {b} "
           "{os} and {c} large dogs there. A large dog takes twice as long as one of the {os}, which {he1} washes and "
           "clips in {a} minutes. How many hours does {n1} spend grooming on Tuesday?", alt_kind="reorder",
           paraphrase="How long is {n1} grooming on Tuesday, in hours?"),
    # 23 fresh
    Family("jigsaw_together", "{n1} and {his1} {k1} are doing a jigsaw puzzle of a {o} with {a} pieces. {n1} fits {b} "
           "pieces an hour, and the {k1}, who is slower, fits {c} fewer than {n1} does. Working together, how many "
           "hours do they take to finish it?",
           "pieces = {a}\nfast = {b}\nslower_by = {c}\nprint(pieces // (fast + fast - slower_by))",
           lambda a, b, c: _div(a, 2 * b - c), {"a": R(300, 1500, 100), "b": R(30, 90, 5), "c": R(5, 25, 5)},
           (("entity", "How many pieces an hour does {n1}'s {k1} fit?", lambda a, b, c: b - c),
            ("unit", "Working together, how many minutes do they take to finish it?",
             lambda a, b, c: _div(a, 2 * b - c) * 60),
            ("step", "How many pieces an hour do they fit together?", lambda a, b, c: 2 * b - c),
            ("person", "How many hours does {n2} take to finish the puzzle?", lambda a, b, c: X),
            ("kin", "How many pieces an hour does {n1}'s {xk} fit?", lambda a, b, c: X),
            ("object", "How many hours do they take to finish the jigsaw of a {xo}?", lambda a, b, c: X)),
           JIGSAWS, alt="Working on a jigsaw puzzle of a {o} with {a} pieces, {n1} fits {b} pieces an hour, while "
           "{his1} {k1}, who is slower, fits {c} fewer than that. Working together, how many hours do they take to "
           "finish it?", alt_kind="reorder", paraphrase="How long does the puzzle take the two of them, in hours?"),
)


POOL = Pool(POOL7_FAMILIES, POOLS, SEED, half_of, (DEV_NAME, HELD_OUT_NAME))
pool_instances, half_families, build, pool_problems = POOL.instances, POOL.half_families, POOL.build, POOL.problems


def main() -> None:
    POOL.write()


if __name__ == "__main__":
    main()
