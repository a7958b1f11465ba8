"""A fifth pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL5_FAMILIES` even -> `varied-dev5` (the
development half, to tune on), odd -> `varied-fresh5` (held out: nobody tunes on it, it is run once at the end).
The draw's seed is SEED = 7391. Written on 2026-12-05 without running the flywheel, the router, the alignment or
`kvgraft bench flywheel` on either half and without reading the alignment's, transfer's, structure's, router's or
parameterizer's rules.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the families of bench/flywheel_data.py, bench/flywheel_gsm_data.py,
bench/flywheel_varied_data.py, bench/flywheel_fresh_data.py, bench/flywheel_pool2_data.py,
bench/flywheel_pool3_data.py or bench/flywheel_pool4_data.py, whose machinery they reuse by import (Family, the draw
with the written-number redraw, one-slot `edit_*` rows, near misses of every kind, `problems()`; read
bench/flywheel_varied_data.py's and bench/flywheel_fresh_data.py's docstrings for the rows). Other in style than
pools 3 and 4: a farm's spring litters and its milk, repainting and building (a garden wall laid together, a deck of
boards by the centimeter, paint mixed in a ratio), a bike ride up a hill and back, a race run at a pace in minutes
per kilometer, a village bus timetable in hours and minutes, a quiz scored by percentage, fractions of a
collection, ages now and later, a cabin's water tank drawn down, factory shifts and overtime at time and a half,
tickets with one free in every group, a pet's first weeks, a family phone plan split by line, a class's camping
trip, a bakery's wedding order with a deposit and its oven batches, a sponsored fun run; questions that open with a
clause ("Working together, how many ...", "After paying the deposit, ...", "In {b} years, what ...", "After how
many days ..."), statements joined with "and", "but", "then", "while" or relative clauses ("who comes to help"),
numbers as words where people write them so ("twice", "three times as", "a quarter", "a third", "two fifths", "a
fifth", "time and a half"); names from many cultures (one word, two words, hyphenated), kin and role nouns the
earlier pools lack ("husband", "stepsister", "daughter-in-law", "best friend", "camp counselor"), objects of one to
five words, currencies by sign and by word with new ones (₮ tugriks, ֏ drams, ₼ manats, Kč korunas, Ft forints, ₲
guaranies). Situations an earlier pool already has (a furniture commission, a pay raise, a phone plan billed by the
gigabyte, hay for a herd, sales tax on a purchase, fencing a rectangle) were dropped while writing, when the no-overlap
test or a read of the earlier families showed them.

    python -m bench.flywheel_pool5_data   # rewrites bench/data/flywheel-varied-{dev5,fresh5}-{library,eval}.jsonl
"""

from __future__ import annotations

from bench.flywheel_fresh_data import Pools
from bench.flywheel_gsm_data import _div
from bench.flywheel_pool import Pool
from bench.flywheel_pool4_data import POOL4_CURRENCIES, POOL4_KIN, POOL4_NAMES
from bench.flywheel_varied_data import NO_ANSWER, Family, R

DEV_NAME, HELD_OUT_NAME = "varied-dev5", "varied-fresh5"
SEED = 7391


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME


POOL5_NAMES = POOL4_NAMES + tuple((n, "f") for n in (
    "Adaeze", "Hinemoa", "Pilar", "Nilufar", "Lerato", "Wanjiru", "Mi-rae", "Kristiina", "Ayşe", "Grace Ann",
    "Lan Anh", "Esi")) + tuple((n, "m") for n in (
        "Tevita", "Kaveh", "Jun-seo", "Bakhyt", "Chukwudi", "Iñaki", "Vusi", "Matías", "Abdullahi", "Minh Quan",
        "Pierre-Louis", "Sanjay"))
POOL5_KIN = POOL4_KIN + ("husband", "wife", "stepsister", "granddaughter", "great-grandmother", "daughter-in-law",
                         "best friend", "piano teacher", "camp counselor", "foster father", "son-in-law",
                         "older brother")
POOL5_CURRENCIES = POOL4_CURRENCIES + (("₮", "tugriks"), ("֏", "drams"), ("₼", "manats"), ("Kč", "korunas"),
                                       ("Ft", "forints"), ("₲", "guaranies"))
POOLS = Pools(POOL5_NAMES, POOL5_KIN, POOL5_CURRENCIES)

BREEDERS = (("rabbit", "rabbits"), ("sow", "sows"), ("guinea pig", "guinea pigs"), ("Angora rabbit", "Angora rabbits"),
            ("big pink farm sow", "big pink farm sows"), ("rabbit in the back shed", "rabbits in the back shed"))
REFINISHING = (("bedroom door", "bedroom doors"), ("window frame", "window frames"), ("garden bench",
                                                                                     "garden benches"),
               ("kitchen cupboard", "kitchen cupboards"), ("shutter", "shutters"),
               ("old wooden rocking chair", "old wooden rocking chairs"),
               ("wooden chair from the attic", "wooden chairs from the attic"))
HILLTOPS = (("lighthouse", "lighthouses"), ("old mill", "old mills"), ("mountain pass", "mountain passes"),
            ("lookout tower", "lookout towers"), ("monastery on the hill", "monasteries on the hill"),
            ("ski lodge", "ski lodges"))
DESTINATIONS = (("market town", "market towns"), ("city", "cities"), ("university campus", "university campuses"),
                ("old fishing port", "old fishing ports"), ("ski resort up the valley", "ski resorts up the valley"),
                ("coast", "coasts"))
QUIZZES = (("quiz night", "quiz nights"), ("pub quiz", "pub quizzes"), ("trivia evening", "trivia evenings"),
           ("school quiz for charity", "school quizzes for charity"), ("music quiz", "music quizzes"),
           ("quiz at the community center", "quizzes at the community center"))
KEEPSAKES = (("stamp", "stamps"), ("seashell", "seashells"), ("vinyl record", "vinyl records"),
             ("foreign coin", "foreign coins"), ("postcard from abroad", "postcards from abroad"),
             ("tiny glass animal figure", "tiny glass animal figures"))
TANKS = (("water tank", "water tanks"), ("rain barrel", "rain barrels"), ("cistern", "cisterns"),
         ("stone trough", "stone troughs"), ("big plastic water tank", "big plastic water tanks"),
         ("tank on the roof", "tanks on the roof"))
PACKED_GOODS = (("jar of jam", "jars of jam"), ("box of tea", "boxes of tea"), ("candle", "candles"),
                ("toy robot", "toy robots"), ("carton of orange juice", "cartons of orange juice"),
                ("bag of frozen green beans", "bags of frozen green beans"))
SHOWS5 = (("concert", "concerts"), ("jazz festival", "jazz festivals"), ("comedy show", "comedy shows"),
          ("charity rock concert", "charity rock concerts"), ("ballet", "ballets"),
          ("final night of the circus", "final nights of the circus"))
PETS = (("cat", "cats"), ("rabbit", "rabbits"), ("guinea pig", "guinea pigs"), ("puppy", "puppies"),
        ("fluffy lop-eared rabbit", "fluffy lop-eared rabbits"), ("big old tabby cat", "big old tabby cats"))
WEDDING_BAKES = (("cupcake", "cupcakes"), ("macaron", "macarons"), ("cinnamon roll", "cinnamon rolls"),
                 ("glazed doughnut", "glazed doughnuts"), ("mini lemon tart", "mini lemon tarts"),
                 ("little pot of chocolate mousse", "little pots of chocolate mousse"))
WALLING = (("brick", "bricks"), ("stone", "stones"), ("concrete block", "concrete blocks"),
           ("reclaimed red brick", "reclaimed red bricks"), ("glass block", "glass blocks"),
           ("rough block of local granite", "rough blocks of local granite"))
CAMPS = (("campsite", "campsites"), ("youth hostel", "youth hostels"), ("mountain hut", "mountain huts"),
         ("farm stay by the lake", "farm stays by the lake"), ("lodge", "lodges"),
         ("beach campground", "beach campgrounds"))
MILKERS = (("cow", "cows"), ("goat", "goats"), ("dairy goat", "dairy goats"), ("Jersey cow", "Jersey cows"),
           ("water buffalo", "water buffaloes"), ("black and white Holstein cow", "black and white Holstein cows"))
SCREENINGS = (("film marathon", "film marathons"), ("movie night", "movie nights"),
              ("horror film festival", "horror film festivals"), ("documentary day", "documentary days"),
              ("festival of old cowboy films", "festivals of old cowboy films"), ("cartoon morning",
                                                                                  "cartoon mornings"))
SHIFT_WORK = (("sawmill", "sawmills"), ("bottling plant", "bottling plants"), ("call center", "call centers"),
              ("car factory", "car factories"), ("hospital laundry", "hospital laundries"),
              ("big parcel sorting center", "big parcel sorting centers"),
              ("factory that makes frozen pizza", "factories that make frozen pizza"))
DECKING = (("board", "boards"), ("plank", "planks"), ("cedar board", "cedar boards"), ("pine plank", "pine planks"),
           ("treated pine board", "treated pine boards"), ("length of hardwood decking", "lengths of hardwood decking"),
           ("plank of recycled plastic wood", "planks of recycled plastic wood"))
OVEN_BAKES = (("bread roll", "bread rolls"), ("bagel", "bagels"), ("pretzel", "pretzels"), ("fruit scone",
                                                                                   "fruit scones"),
              ("loaf of banana bread", "loaves of banana bread"),
              ("round loaf of rye bread", "round loaves of rye bread"))
ROOMS = (("bedroom", "bedrooms"), ("kitchen", "kitchens"), ("garden shed", "garden sheds"), ("playroom", "playrooms"),
         ("old wooden rowing boat", "old wooden rowing boats"), ("little room under the stairs",
                                                                 "little rooms under the stairs"))

X = NO_ANSWER
POOL5_FAMILIES: tuple[Family, ...] = (
    # 0 dev
    Family("spring_litters", "{n1} keeps {a} {os} on {his1} {k1}'s farm. In the spring each of them has {b} young. "
           "{n1} sells a third of the young at the market, getting {cs}{c} for each, and keeps the rest. How many "
           "animals does {n1} have after the market?",
           "adults = {a}\nyoung_each = {b}\nyoung = adults * young_each\nprint(adults + young - young // 3)",
           lambda a, b, c: a + a * b - _div(a * b, 3), {"a": R(3, 15), "b": R(2, 8), "c": R(10, 40, 5)},
           (("entity", "How many {cw} does {n1} get at the market?", lambda a, b, c: _div(a * b, 3) * c),
            ("unit", "How many kilograms do {n1}'s animals weigh after the market?", lambda a, b, c: X),
            ("step", "How many young are born in the spring?", lambda a, b, c: a * b),
            ("person", "How many animals does {n2} have after the market?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} keep?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} get at the market?", lambda a, b, c: X),
            ("object", "How many {xos} does {n1} have after the market?", lambda a, b, c: X)),
           BREEDERS, alt="In the spring each of the {a} {os} that {n1} keeps on {his1} {k1}'s farm has {b} young. A "
           "third of the young are sold at the market, {cs}{c} apiece, and {n1} keeps the rest. How many animals "
           "does {n1} have after the market?", alt_kind="reorder",
           paraphrase="After the market, how many animals are left in {n1}'s care?"),
    # 1 fresh
    Family("refinishing_days", "{n1} and {his1} {k1} are repainting {a} {os}. Each one takes {b} hours to sand and "
           "{c} hours to paint, and between them they put in {d} hours of work a day. How many days does the job "
           "take?",
           "items = {a}\nsanding = {b}\npainting = {c}\nhours_a_day = {d}\n"
           "print(items * (sanding + painting) // hours_a_day)",
           lambda a, b, c, d: _div(a * (b + c), d), {"a": R(4, 20), "b": R(2, 5), "c": R(2, 6), "d": R(6, 16)},
           (("entity", "How many hours do they spend sanding?", lambda a, b, c, d: a * b),
            ("unit", "How many weeks does the job take?", lambda a, b, c, d: X),
            ("step", "How many hours of work does the job need?", lambda a, b, c, d: a * (b + c)),
            ("person", "How many days does {n2}'s job take?", lambda a, b, c, d: X),
            ("kin", "How many hours a day does {n1}'s {xk} work?", lambda a, b, c, d: X),
            ("object", "How many days does it take to repaint the {xos}?", lambda a, b, c, d: X)),
           REFINISHING, alt="Between them, {n1} and {his1} {k1} put in {d} hours of work a day repainting {a} {os}, "
           "each of which takes {b} hours to sand and {c} hours to paint. How many days does the job take?",
           alt_kind="reorder", paraphrase="For how many days do they work on the {os}?"),
    # 2 dev
    Family("hill_ride", "{n1} and {his1} {k1} ride their bikes up the road to the {o}. Going up at {a} kilometers an "
           "hour takes them {b} minutes, and on the way back they coast downhill at {c} kilometers an hour. How many "
           "minutes does the whole ride take them?",
           "up_speed = {a}\nup_minutes = {b}\ndown_speed = {c}\n"
           "print(up_minutes + up_speed * up_minutes // down_speed)",
           lambda a, b, c: b + _div(a * b, c), {"a": R(6, 15), "b": R(20, 90, 5), "c": R(20, 45, 5)},
           (("entity", "How many kilometers is the road up to the {o}?", lambda a, b, c: _div(a * b, 60)),
            ("unit", "How many seconds does the whole ride take them?", lambda a, b, c: (b + _div(a * b, c)) * 60),
            ("step", "How many minutes does the ride down take them?", lambda a, b, c: _div(a * b, c)),
            ("person", "How many minutes does the whole ride take {n2}?", lambda a, b, c: X),
            ("kin", "How many minutes does {n1}'s {xk} take to ride up?", lambda a, b, c: X),
            ("object", "How many minutes does the ride to the {xo} take them?", lambda a, b, c: X)),
           HILLTOPS, alt="Riding their bikes up the road to the {o} at {a} kilometers an hour takes {n1} and {his1} "
           "{k1} {b} minutes. On the way back they coast downhill at {c} kilometers an hour. How many minutes does "
           "the whole ride take them?", alt_kind="reorder",
           paraphrase="Up and back down again, how long is their ride, in minutes?"),
    # 3 fresh
    Family("village_bus_times", "Buses from {n1}'s village to the {o} leave every {a} minutes. The first one leaves "
           "at {b} o'clock in the morning and the last one at {c} o'clock in the evening. {n1} takes one of them to "
           "visit {his1} {k1}. How many buses leave for the {o} each day?",
           "every = {a}\nfirst = {b}\nlast = {c}\nprint((last + 12 - first) * 60 // every + 1)",
           lambda a, b, c: _div((c + 12 - b) * 60, a) + 1, {"a": R(10, 30, 5), "b": R(5, 8), "c": R(6, 11)},
           (("entity", "How many hours pass between the first bus and the last?", lambda a, b, c: c + 12 - b),
            ("unit", "How many buses leave for the {o} each week?",
             lambda a, b, c: (_div((c + 12 - b) * 60, a) + 1) * 7),
            ("step", "How many minutes pass between the first bus and the last?", lambda a, b, c: (c + 12 - b) * 60),
            ("person", "How many buses leave {n2}'s village for the {o} each day?", lambda a, b, c: X),
            ("kin", "How many times a week does {n1} visit {his1} {xk}?", lambda a, b, c: X),
            ("object", "How many buses leave for the {xo} each day?", lambda a, b, c: X)),
           DESTINATIONS, alt="When {n1} visits {his1} {k1}, {he1} rides a bus from {his1} village to the {o}. The "
           "first bus leaves at {b} o'clock in the morning, the last one at {c} o'clock in the evening, and they "
           "leave every {a} minutes. How many buses leave for the {o} each day?", alt_kind="reorder",
           paraphrase="What is the number of buses to the {o} in one day?"),
    # 4 dev
    Family("quiz_night_score", "{n1} and {his1} {k1} go to a {o} where there are {a} rounds of {b} questions. Their "
           "team answers {c}% of the questions correctly, and each correct answer is worth {d} points. How many "
           "points does the team score?",
           "rounds = {a}\nper_round = {b}\ncorrect_pct = {c}\npoints = {d}\n"
           "print(rounds * per_round * correct_pct // 100 * points)",
           lambda a, b, c, d: _div(a * b * c, 100) * d,
           {"a": R(4, 8), "b": R(8, 20), "c": R(40, 90, 10), "d": R(2, 5)},
           (("entity", "How many questions does the team answer wrongly?",
             lambda a, b, c, d: a * b - _div(a * b * c, 100)),
            ("unit", "How many points a round does the team score on average?",
             lambda a, b, c, d: _div(_div(a * b * c, 100) * d, a)),
            ("step", "How many questions does the team answer correctly?", lambda a, b, c, d: _div(a * b * c, 100)),
            ("person", "How many points does {n2}'s team score?", lambda a, b, c, d: X),
            ("kin", "How many questions does {n1}'s {xk} answer?", lambda a, b, c, d: X),
            ("object", "How many points does the team score at the {xo}?", lambda a, b, c, d: X)),
           QUIZZES, alt="Each correct answer is worth {d} points at the {o} that {n1} and {his1} {k1} go to, where "
           "there are {a} rounds of {b} questions. Their team answers {c}% of the questions correctly. How many "
           "points does the team score?", alt_kind="reorder", paraphrase="What is the team's final score, in points?"),
    # 5 fresh
    Family("collection_origins", "There are {a} {os} in {n1}'s collection. Two fifths of them came from {his1} "
           "{k1}, a quarter of the others were bought at flea markets, and the rest were presents from friends. How "
           "many of the {os} were presents from friends?",
           "total = {a}\nothers = total - total * 2 // 5\nprint(others - others // 4)",
           lambda a: (a - _div(2 * a, 5)) - _div(a - _div(2 * a, 5), 4), {"a": R(40, 400, 20)},
           (("entity", "How many of the {os} came from {n1}'s {k1}?", lambda a: _div(2 * a, 5)),
            ("unit", "How many kilograms of {os} were presents from friends?", lambda a: X),
            ("step", "How many of the {os} did not come from {n1}'s {k1}?", lambda a: a - _div(2 * a, 5)),
            ("person", "How many {os} does {n2} have?", lambda a: X),
            ("kin", "How many of the {os} came from {n1}'s {xk}?", lambda a: X),
            ("object", "How many of the {xos} were presents from friends?", lambda a: X)),
           KEEPSAKES, alt="Two fifths of the {a} {os} in {n1}'s collection came from {his1} {k1}. Of the others, a "
           "quarter were bought at flea markets and the rest were presents from friends. How many of the {os} were "
           "presents from friends?", alt_kind="reorder",
           paraphrase="How many {os} in the collection were given by friends?"),
    # 6 dev
    Family("birthday_ages", "{n1} turns {a} today, and {his1} {k1} is baking the birthday cake. The {k1} is three "
           "times as old as {n1}. In {b} years, what will their ages add up to?",
           "age = {a}\nyears = {b}\nkin_age = 3 * age\nprint(age + years + kin_age + years)",
           lambda a, b: 4 * a + 2 * b, {"a": R(6, 25), "b": R(2, 15)},
           (("entity", "How old is {n1}'s {k1} today?", lambda a, b: 3 * a),
            ("unit", "In {b} years, what will their ages add up to in months?", lambda a, b: (4 * a + 2 * b) * 12),
            ("step", "How old will {n1}'s {k1} be in {b} years?", lambda a, b: 3 * a + b),
            ("person", "How old does {n2} turn today?", lambda a, b: X),
            ("kin", "How old is {n1}'s {xk} today?", lambda a, b: X)),
           alt="{n1}'s {k1}, who is three times as old as {n1}, is baking a cake because {n1} turns {a} today. In "
           "{b} years, what will their ages add up to?", alt_kind="reorder",
           paraphrase="What will the sum of their ages be {b} years from now?"),
    # 7 fresh
    Family("cabin_water_days", "The {o} at {n1}'s cabin holds {a} liters and is full when {n1} and {his1} {k1} "
           "arrive for the holidays. Each of them uses {b} liters a day, and the vegetable patch gets {c} liters a "
           "day. After how many days is the {o} down to a fifth of what it holds?",
           "capacity = {a}\neach = {b}\npatch = {c}\nprint((capacity - capacity // 5) // (2 * each + patch))",
           lambda a, b, c: _div(a - _div(a, 5), 2 * b + c),
           {"a": R(500, 3000, 100), "b": R(10, 40), "c": R(5, 30)},
           (("entity", "How many liters a day do {n1} and {his1} {k1} use between them?", lambda a, b, c: 2 * b),
            ("unit", "After how many weeks is the {o} down to a fifth of what it holds?", lambda a, b, c: X),
            ("step", "How many liters are taken from the {o} each day?", lambda a, b, c: 2 * b + c),
            ("person", "After how many days is the {o} at {n2}'s cabin down to a fifth?", lambda a, b, c: X),
            ("kin", "How many liters a day does {n1}'s {xk} use?", lambda a, b, c: X),
            ("object", "After how many days is the {xo} down to a fifth of what it holds?", lambda a, b, c: X)),
           TANKS, alt="{n1} and {his1} {k1} arrive at the cabin for the holidays to find its {o} full, holding {a} "
           "liters. The vegetable patch gets {c} liters a day, and each of them uses {b} liters a day. After how "
           "many days is the {o} down to a fifth of what it holds?", alt_kind="reorder",
           paraphrase="How many days pass before only a fifth of the water in the {o} is left?"),
    # 8 dev
    Family("factory_shift_output", "The factory where {n1} is a shift manager packs {os}. It runs {a} shifts a day "
           "with {b} workers on each, and every worker packs {c} {os} an hour during a shift of {d} hours. How many "
           "{os} does the factory pack in a day?",
           "shifts = {a}\nworkers = {b}\nper_hour = {c}\nhours = {d}\nprint(shifts * workers * per_hour * hours)",
           lambda a, b, c, d: a * b * c * d, {"a": R(2, 3), "b": R(10, 40), "c": R(20, 60, 5), "d": R(6, 12)},
           (("entity", "How many workers does the factory have each day?", lambda a, b, c, d: a * b),
            ("unit", "How many {os} does the factory pack in a week?", lambda a, b, c, d: a * b * c * d * 7),
            ("step", "How many {os} does one shift pack?", lambda a, b, c, d: b * c * d),
            ("person", "How many {os} does the factory where {n2} works pack in a day?", lambda a, b, c, d: X),
            ("object", "How many {xos} does the factory pack in a day?", lambda a, b, c, d: X)),
           PACKED_GOODS, alt="Every worker at the factory packs {c} {os} an hour during a shift of {d} hours. {n1} is "
           "a shift manager there, and it runs {a} shifts a day with {b} workers on each. How many {os} does the "
           "factory pack in a day?", alt_kind="reorder", paraphrase="What is the factory's daily output of {os}?"),
    # 9 fresh
    Family("free_ticket_deal", "Tickets for the {o} cost {cs}{a} each, and for every {b} tickets a group buys, it "
           "gets one more free. {n1} is getting tickets for {c} people from {his1} {k1}'s running club. How many {cw} "
           "does {n1} pay?",
           "price = {a}\npaid_per_free = {b}\npeople = {c}\n"
           "print(people // (paid_per_free + 1) * paid_per_free * price)",
           lambda a, b, c: _div(c, b + 1) * b * a, {"a": R(8, 40), "b": R(3, 9), "c": R(20, 60)},
           (("entity", "How many of the tickets are free?", lambda a, b, c: _div(c, b + 1)),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c: _div(c, b + 1) * b * a * 100),
            ("step", "How many tickets does {n1} pay for?", lambda a, b, c: _div(c, b + 1) * b),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c: X),
            ("kin", "How many people are in the running club of {n1}'s {xk}?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c: X),
            ("object", "How many {cw} does {n1} pay for tickets to the {xo}?", lambda a, b, c: X)),
           SHOWS5, alt="{n1} is getting tickets to the {o} for {c} people from {his1} {k1}'s running club. They cost "
           "{cs}{a} each, and a group gets one more free for every {b} tickets it buys. How many {cw} does {n1} pay?",
           alt_kind="reorder", paraphrase="What does the group's order of tickets cost {n1}, in {cw}?"),
    # 10 dev
    Family("adopted_pet_costs", "{n1} and {his1} {k1} adopt a {o} from the animal shelter for a fee of {cs}{a}. Its "
           "food costs {cs}{b} a week, and every {c} weeks it needs a checkup at the vet that costs {cs}{d}. How many "
           "{cw} does the {o} cost them in its first {e} weeks, the fee included?",
           "fee = {a}\nfood = {b}\nevery = {c}\ncheckup = {d}\nweeks = {e}\n"
           "print(fee + food * weeks + weeks // every * checkup)",
           lambda a, b, c, d, e: a + b * e + _div(e, c) * d,
           {"a": R(30, 150, 10), "b": R(5, 20), "c": R(4, 8), "d": R(25, 60, 5), "e": R(12, 40, 4)},
           (("entity", "How many {cw} does the {o}'s food cost in its first {e} weeks?", lambda a, b, c, d, e: b * e),
            ("unit", "How many cents does the {o} cost them in its first {e} weeks, the fee included?",
             lambda a, b, c, d, e: (a + b * e + _div(e, c) * d) * 100),
            ("step", "How many checkups does the {o} have in its first {e} weeks?", lambda a, b, c, d, e: _div(e, c)),
            ("person", "How many {cw} does {n2}'s {o} cost in its first {e} weeks?", lambda a, b, c, d, e: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for the {o}?", lambda a, b, c, d, e: X),
            ("currency", "How many {xw} does the {o} cost them in its first {e} weeks, the fee included?",
             lambda a, b, c, d, e: X),
            ("object", "How many {cw} does the {xo} cost them in its first {e} weeks?", lambda a, b, c, d, e: X)),
           PETS, alt="Every {c} weeks the {o} that {n1} and {his1} {k1} adopt from the animal shelter needs a checkup "
           "at the vet that costs {cs}{d}, and its food costs {cs}{b} a week. The shelter's fee is {cs}{a}. How many "
           "{cw} does the {o} cost them in its first {e} weeks, the fee included?", alt_kind="reorder",
           paraphrase="Fee included, what do they spend on the {o} over its first {e} weeks, in {cw}?"),
    # 11 fresh
    Family("family_phone_plan", "On a family plan from {n1}'s phone company, the first line costs {cs}{a} a month "
           "and each extra line costs {cs}{b}. {n1} shares one with {his1} {k1} and {c} other relatives, one line "
           "each, and they split the monthly bill equally. How many {cw} does {n1} pay each month?",
           "first_line = {a}\nextra_line = {b}\nothers = {c}\nprint((first_line + extra_line * (others + 1)) // "
           "(others + 2))",
           lambda a, b, c: _div(a + b * (c + 1), c + 2), {"a": R(30, 80, 5), "b": R(10, 30, 5), "c": R(2, 6)},
           (("entity", "How many {cw} do the extra lines cost each month?", lambda a, b, c: b * (c + 1)),
            ("unit", "How many {cw} does {n1} pay each year?", lambda a, b, c: _div(a + b * (c + 1), c + 2) * 12),
            ("step", "How many {cw} is the monthly bill?", lambda a, b, c: a + b * (c + 1)),
            ("person", "How many {cw} does {n2} pay each month?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay each month?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay each month?", lambda a, b, c: X)),
           alt="{n1}, {his1} {k1} and {c} other relatives have one line each on a family plan and split the monthly "
           "bill equally. With {n1}'s phone company the first line costs {cs}{a} a month and each extra line {cs}{b}. "
           "How many {cw} does {n1} pay each month?", alt_kind="reorder",
           paraphrase="What is {n1}'s share of the monthly phone bill, in {cw}?"),
    # 12 dev
    Family("wedding_order_deposit", "{n1} orders {a} dozen {os} from the corner bakery for {his1} {k1}'s wedding. "
           "They cost {cs}{b} a dozen, and the bakery asks for a fifth of the price as a deposit when the order is "
           "placed. After paying the deposit, how many {cw} does {n1} still owe?",
           "dozens = {a}\nper_dozen = {b}\ntotal = dozens * per_dozen\nprint(total - total // 5)",
           lambda a, b: a * b - _div(a * b, 5), {"a": R(4, 20), "b": R(8, 30)},
           (("entity", "How many {os} does {n1} order?", lambda a, b: 12 * a),
            ("unit", "After paying the deposit, how many cents does {n1} still owe?",
             lambda a, b: (a * b - _div(a * b, 5)) * 100),
            ("step", "How many {cw} is the deposit?", lambda a, b: _div(a * b, 5)),
            ("person", "After paying the deposit, how many {cw} does {n2} still owe?", lambda a, b: X),
            ("kin", "How many {os} does {n1} order for {his1} {xk}'s wedding?", lambda a, b: X),
            ("currency", "After paying the deposit, how many {xw} does {n1} still owe?", lambda a, b: X),
            ("object", "How many {cw} does {n1} still owe for the {xos}?", lambda a, b: X)),
           WEDDING_BAKES, alt="The corner bakery asks for a fifth of the price as a deposit when an order is placed, "
           "and its {os} cost {cs}{b} a dozen. {n1} orders {a} dozen of them for {his1} {k1}'s wedding. After paying "
           "the deposit, how many {cw} does {n1} still owe?", alt_kind="reorder",
           paraphrase="How much is left for {n1} to pay once the deposit is paid, in {cw}?"),
    # 13 fresh
    Family("twice_as_old_later", "{n1}'s {k1} was born {a} years before {n1}. In {b} years, the {k1} will be "
           "exactly twice as old as {n1}. How old is {n1} now?",
           "gap = {a}\nyears = {b}\nprint(gap - years)",
           lambda a, b: a - b, {"a": R(12, 40), "b": R(2, 20)},
           (("entity", "How old is {n1}'s {k1} now?", lambda a, b: 2 * a - b),
            ("unit", "How many months old is {n1} now?", lambda a, b: (a - b) * 12),
            ("step", "How old will {n1} be in {b} years?", lambda a, b: a),
            ("person", "How old is {n2} now?", lambda a, b: X),
            ("kin", "How old is {n1}'s {xk} now?", lambda a, b: X)),
           alt="In {b} years, {n1}'s {k1} will be exactly twice as old as {n1}, though the {k1} was born only {a} "
           "years before {n1}. How old is {n1} now?", alt_kind="reorder", paraphrase="What is {n1}'s age today?"),
    # 14 dev
    Family("garden_wall_together", "{n1}'s garden wall needs {a} {os}. {n1} lays {b} of them an hour, and {his1} "
           "{k1}, who comes to help, lays {c} an hour. Working together, how many hours do they take to build the "
           "wall?",
           "needed = {a}\nmine = {b}\nhelper = {c}\nprint(needed // (mine + helper))",
           lambda a, b, c: _div(a, b + c), {"a": R(200, 1200, 50), "b": R(20, 60, 5), "c": R(15, 50, 5)},
           (("entity", "How many {os} does {n1} lay in all?", lambda a, b, c: b * _div(a, b + c)),
            ("unit", "Working together, how many minutes do they take to build the wall?",
             lambda a, b, c: _div(a, b + c) * 60),
            ("step", "How many {os} do they lay together in an hour?", lambda a, b, c: b + c),
            ("person", "How many hours does {n2} take to build the wall?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} lay in an hour?", lambda a, b, c: X),
            ("object", "How many {xos} does the wall need?", lambda a, b, c: X)),
           WALLING, alt="{n1} lays {b} {os} an hour, and {his1} {k1}, who comes to help, lays {c} an hour. The "
           "garden wall they are building needs {a} of them. Working together, how many hours do they take to build "
           "the wall?", alt_kind="reorder", paraphrase="How long does the wall take them, in hours?"),
    # 15 fresh
    Family("class_camp_share", "{n1}'s class of {a} students is spending {b} nights at a {o}, which charges {cs}{c} "
           "per student for each night. {His1} {k1} comes along as a helper and stays for free. The school pays "
           "{cs}{d} toward the cost and the students share the rest equally. How many {cw} does each student pay?",
           "students = {a}\nnights = {b}\nper_night = {c}\nschool = {d}\n"
           "print((students * nights * per_night - school) // students)",
           lambda a, b, c, d: _div(a * b * c - d, a),
           {"a": R(20, 40), "b": R(2, 5), "c": R(8, 25), "d": R(100, 600, 50)},
           (("entity", "How many {cw} does one night at the {o} cost the whole class?", lambda a, b, c, d: a * c),
            ("unit", "How many cents does each student pay?", lambda a, b, c, d: _div(a * b * c - d, a) * 100),
            ("step", "How many {cw} do the students pay in all?", lambda a, b, c, d: a * b * c - d),
            ("person", "How many {cw} does each student in {n2}'s class pay?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does each student pay?", lambda a, b, c, d: X),
            ("object", "How many {cw} does each student pay for the {xo}?", lambda a, b, c, d: X)),
           CAMPS, alt="A {o} charges {cs}{c} per student for each night, and {n1}'s class of {a} students is "
           "spending {b} nights there. The school pays {cs}{d} toward the cost and the students share the rest "
           "equally, while {n1}'s {k1} comes along as a helper and stays for free. How many {cw} does each student "
           "pay?", alt_kind="reorder", paraphrase="What is each student's share, in {cw}?"),
    # 16 dev
    Family("week_of_milk", "{n1} milks {a} {os} twice a day on {his1} {k1}'s farm, and each milking gives {b} liters "
           "from every animal. The milk sells for {cs}{c} a liter. How many {cw} does the milk from one week bring "
           "in?",
           "animals = {a}\nliters = {b}\nprice = {c}\nprint(animals * 2 * liters * 7 * price)",
           lambda a, b, c: 14 * a * b * c, {"a": R(3, 12), "b": R(2, 9), "c": R(2, 5)},
           (("entity", "How many liters of milk does one of the {os} give in a day?", lambda a, b, c: 2 * b),
            ("unit", "How many cents does the milk from one week bring in?", lambda a, b, c: 14 * a * b * c * 100),
            ("step", "How many liters of milk does {n1} get in one week?", lambda a, b, c: 14 * a * b),
            ("person", "How many {cw} does {n2}'s milk bring in?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} milk?", lambda a, b, c: X),
            ("currency", "How many {xw} does the milk from one week bring in?", lambda a, b, c: X),
            ("object", "How many {cw} does the milk from the {xos} bring in?", lambda a, b, c: X)),
           MILKERS, alt="The milk sells for {cs}{c} a liter. Twice a day {n1} milks the {a} {os} on {his1} {k1}'s "
           "farm, getting {b} liters from every animal at each milking. How many {cw} does the milk from one week "
           "bring in?", alt_kind="reorder", paraphrase="What is one week's milk worth, in {cw}?"),
    # 17 fresh
    Family("town_hall_screening", "{n1} and {his1} {k1} put on a {o} at the town hall. They show {a} films back to "
           "back, each {b} minutes long, with a break of {c} minutes between one film and the next. How many hours "
           "does the {o} last?",
           "films = {a}\nlength = {b}\nbreak_minutes = {c}\n"
           "print((films * length + (films - 1) * break_minutes) // 60)",
           lambda a, b, c: _div(a * b + (a - 1) * c, 60), {"a": R(3, 8), "b": R(80, 130, 5), "c": R(10, 25, 5)},
           (("entity", "How many minutes of film do they show?", lambda a, b, c: a * b),
            ("unit", "How many minutes does the {o} last?", lambda a, b, c: a * b + (a - 1) * c),
            ("step", "How many minutes of breaks are there?", lambda a, b, c: (a - 1) * c),
            ("person", "How many hours does {n2}'s {o} last?", lambda a, b, c: X),
            ("kin", "How many films does {n1}'s {xk} show?", lambda a, b, c: X),
            ("object", "How many hours does the {xo} last?", lambda a, b, c: X)),
           SCREENINGS, alt="With a break of {c} minutes between one film and the next, {n1} and {his1} {k1} show {a} "
           "films back to back at the town hall, each {b} minutes long, for the {o} they put on. How many hours "
           "does the {o} last?", alt_kind="reorder", paraphrase="What is the length of the {o}, in hours?"),
    # 18 dev
    Family("overtime_week", "{n1} works at the {o} for {cs}{a} an hour. For every hour over {b} in a week {he1} is "
           "paid time and a half, and this week {he1} works {c} hours to cover for {his1} {k1}. How many {cw} does "
           "{n1} earn this week?",
           "hourly = {a}\nnormal_hours = {b}\nworked = {c}\n"
           "print(hourly * normal_hours + (worked - normal_hours) * hourly * 3 // 2)",
           lambda a, b, c: a * b + _div((c - b) * a * 3, 2),
           {"a": R(12, 30, 2), "b": R(30, 40), "c": R(42, 56)},
           (("entity", "How many {cw} does {n1} earn for each hour over {b}?", lambda a, b, c: _div(3 * a, 2)),
            ("unit", "How many cents does {n1} earn this week?",
             lambda a, b, c: (a * b + _div((c - b) * a * 3, 2)) * 100),
            ("step", "How many hours over {b} does {n1} work this week?", lambda a, b, c: c - b),
            ("person", "How many {cw} does {n2} earn this week?", lambda a, b, c: X),
            ("kin", "How many hours does {n1}'s {xk} work this week?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} earn this week?", lambda a, b, c: X),
            ("object", "How many {cw} does {n1} earn at the {xo} this week?", lambda a, b, c: X)),
           SHIFT_WORK, alt="This week {n1} works {c} hours at the {o} to cover for {his1} {k1}. {He1} is paid {cs}{a} "
           "an hour, and time and a half for every hour over {b} in a week. How many {cw} does {n1} earn this week?",
           alt_kind="reorder", paraphrase="What is {n1}'s pay for this week, overtime included, in {cw}?"),
    # 19 fresh
    Family("deck_boards", "{n1} is building a deck behind {his1} {k1}'s house. The deck is {a} meters long, and it is "
           "covered with {os} laid side by side, each {b} centimeters wide. Each of them costs {cs}{c}. How many {cw} "
           "do the {os} cost?",
           "length = {a}\nwidth_cm = {b}\nprice = {c}\nprint(length * 100 // width_cm * price)",
           lambda a, b, c: _div(100 * a, b) * c, {"a": R(3, 9), "b": R(10, 25, 5), "c": R(8, 30)},
           (("entity", "How many centimeters long is the deck?", lambda a, b, c: 100 * a),
            ("unit", "How many cents do the {os} cost?", lambda a, b, c: _div(100 * a, b) * c * 100),
            ("step", "How many {os} does the deck need?", lambda a, b, c: _div(100 * a, b)),
            ("person", "How many {cw} do the {os} for {n2}'s deck cost?", lambda a, b, c: X),
            ("kin", "How long is the deck behind the house of {n1}'s {xk}?", lambda a, b, c: X),
            ("currency", "How many {xw} do the {os} cost?", lambda a, b, c: X),
            ("object", "How many {cw} do the {xos} cost?", lambda a, b, c: X)),
           DECKING, alt="The deck {n1} is building behind {his1} {k1}'s house is covered with {os} laid side by side, "
           "each {b} centimeters wide and costing {cs}{c}. It is {a} meters long. How many {cw} do the {os} cost?",
           alt_kind="reorder", paraphrase="What does {n1} spend on {os} for the deck, in {cw}?"),
    # 20 dev
    Family("oven_batches", "{n1} helps {his1} {k1} at the family bakery, which gets an order for {a} {os} for a "
           "school fair. The oven bakes {b} of them at a time, and each batch takes {c} minutes. How many hours of "
           "baking does the order take?",
           "ordered = {a}\nper_batch = {b}\nminutes = {c}\nprint(ordered // per_batch * minutes // 60)",
           lambda a, b, c: _div(_div(a, b) * c, 60), {"a": R(60, 480, 12), "b": R(12, 48, 6), "c": R(15, 50, 5)},
           (("entity", "How many {os} are baked in the first two batches?", lambda a, b, c: 2 * b),
            ("unit", "How many minutes of baking does the order take?", lambda a, b, c: _div(a, b) * c),
            ("step", "How many batches does the order need?", lambda a, b, c: _div(a, b)),
            ("person", "How many hours of baking does {n2}'s order take?", lambda a, b, c: X),
            ("kin", "How many {os} does the oven of {n1}'s {xk} bake at a time?", lambda a, b, c: X),
            ("object", "How many hours of baking do the {xos} take?", lambda a, b, c: X)),
           OVEN_BAKES, alt="The oven at the family bakery bakes {b} {os} at a time, and each batch takes {c} minutes. "
           "{n1} helps {his1} {k1} there when it gets an order for {a} of them for a school fair. How many hours of "
           "baking does the order take?", alt_kind="reorder",
           paraphrase="How long is the oven busy with the order, in hours?"),
    # 21 fresh
    Family("race_pace_wait", "{n1} and {his1} {k1} enter a {a}-kilometer race. {n1} runs a kilometer every {b} "
           "minutes, while the {k1} takes {c} minutes for each kilometer and starts at the same time. How many "
           "minutes does {n1} wait at the finish line?",
           "distance = {a}\nmy_pace = {b}\nkin_pace = {c}\nprint(distance * kin_pace - distance * my_pace)",
           lambda a, b, c: a * (c - b), {"a": R(5, 21), "b": R(4, 6), "c": R(7, 10)},
           (("entity", "How many minutes does the race take {n1}'s {k1}?", lambda a, b, c: a * c),
            ("unit", "How many seconds does {n1} wait at the finish line?", lambda a, b, c: a * (c - b) * 60),
            ("step", "How many minutes does the race take {n1}?", lambda a, b, c: a * b),
            ("person", "How many minutes does {n2} wait at the finish line?", lambda a, b, c: X),
            ("kin", "How many minutes does {n1}'s {xk} take for each kilometer?", lambda a, b, c: X)),
           alt="{n1}'s {k1} takes {c} minutes for each kilometer of a {a}-kilometer race, while {n1}, who starts at "
           "the same time, runs a kilometer every {b} minutes. How many minutes does {n1} wait at the finish line?",
           alt_kind="reorder", paraphrase="How long is {n1} at the finish before {his1} {k1} arrives, in minutes?"),
    # 22 dev
    Family("green_paint_ratio", "{n1} is painting {his1} {k1}'s {o} green. {He1} mixes the green from blue and "
           "yellow paint in the ratio {a} to {b}, and the job needs {c} liters of green. How many liters of blue "
           "paint does {n1} need?",
           "blue_parts = {a}\nyellow_parts = {b}\nliters = {c}\n"
           "print(liters * blue_parts // (blue_parts + yellow_parts))",
           lambda a, b, c: _div(c * a, a + b), {"a": R(1, 5), "b": R(2, 7), "c": R(8, 40)},
           (("entity", "How many liters of yellow paint does {n1} need?", lambda a, b, c: _div(c * b, a + b)),
            ("unit", "How many milliliters of blue paint does {n1} need?", lambda a, b, c: _div(c * a, a + b) * 1000),
            ("step", "How many liters is one part of the mix?", lambda a, b, c: _div(c, a + b)),
            ("person", "How many liters of blue paint does {n2} need?", lambda a, b, c: X),
            ("kin", "How many liters of green does the {o} of {n1}'s {xk} need?", lambda a, b, c: X),
            ("object", "How many liters of blue paint does {n1} need for the {xo}?", lambda a, b, c: X)),
           ROOMS, alt="The job needs {c} liters of green paint, which {n1} mixes from blue and yellow paint in the "
           "ratio {a} to {b}. {He1} is painting {his1} {k1}'s {o} with it. How many liters of blue paint does {n1} "
           "need?", alt_kind="reorder", paraphrase="What amount of blue paint goes into the mix, in liters?"),
    # 23 fresh
    Family("fun_run_sponsors", "{n1} runs laps of the school field for a charity fun run. {His1} {k1} pledges {cs}{a} "
           "for every lap, and {b} families on {his1} street each give a flat {cs}{c}. {n1} runs {d} laps. How many "
           "{cw} does {n1} raise?",
           "per_lap = {a}\nfamilies = {b}\nflat = {c}\nlaps = {d}\nprint(per_lap * laps + families * flat)",
           lambda a, b, c, d: a * d + b * c, {"a": R(2, 9), "b": R(3, 12), "c": R(5, 20, 5), "d": R(10, 30)},
           (("entity", "How many {cw} do the families on {his1} street give?", lambda a, b, c, d: b * c),
            ("unit", "How many cents does {n1} raise?", lambda a, b, c, d: (a * d + b * c) * 100),
            ("step", "How many {cw} does {n1}'s {k1} give?", lambda a, b, c, d: a * d),
            ("person", "How many {cw} does {n2} raise?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pledge for every lap?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} raise?", lambda a, b, c, d: X)),
           alt="For every lap of the school field that {n1} runs in a charity fun run, {his1} {k1} pledges {cs}{a}. "
           "On top of that, {b} families on {his1} street each give a flat {cs}{c}. {n1} runs {d} laps. How many "
           "{cw} does {n1} raise?", alt_kind="reorder",
           paraphrase="What is the total {n1} raises for the charity, in {cw}?"),
)


POOL = Pool(POOL5_FAMILIES, POOLS, SEED, half_of, (DEV_NAME, HELD_OUT_NAME))
pool_instances, half_families, build, pool_problems = POOL.instances, POOL.half_families, POOL.build, POOL.problems


def main() -> None:
    POOL.write()


if __name__ == "__main__":
    main()
