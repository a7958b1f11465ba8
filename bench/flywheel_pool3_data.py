"""A third pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL3_FAMILIES` even -> `varied-dev3` (the
development half, to tune on), odd -> `varied-fresh3` (held out: nobody tunes on it, it is run once at the end).
Written on 2026-12-05 without running the flywheel, the router, the alignment or `kvgraft bench flywheel` on either
half and without reading the alignment's, transfer's, structure's or router's rules.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the families of bench/flywheel_data.py, bench/flywheel_gsm_data.py,
bench/flywheel_varied_data.py, bench/flywheel_fresh_data.py or bench/flywheel_pool2_data.py, whose machinery they
reuse (Family, the draw with the written-number redraw, one-slot `edit_*` rows, near misses of every kind,
`problems()`; read bench/flywheel_varied_data.py's and bench/flywheel_fresh_data.py's docstrings for the rows).
Varied the way people vary such problems: objects whose word count changes when renamed ("fern" / "pot of mint" /
"hanging basket of ivy", "car" / "pickup truck"), names from many cultures (one word, two words, hyphenated),
kin and role nouns the earlier pools lack ("half-brother", "scout leader", "twin sister"), currencies by sign and by
word (hryvnias, lari, kip, ringgit, shillings added), rates, percentages, fractions in words, time (minutes, hours,
days, weeks), comparisons ("times as many", "fewer than"), multi-step quantities, statements split or joined with
"and"/"while"/", then", time and place phrases moved to the front or the end (`alt`), paraphrased questions ("How
much money ..." as well as "How many {cw} ...").

    python -m bench.flywheel_pool3_data   # rewrites bench/data/flywheel-varied-{dev3,fresh3}-{library,eval}.jsonl
"""

from __future__ import annotations

from bench.flywheel_fresh_data import Pools
from bench.flywheel_gsm_data import _div
from bench.flywheel_pool import Pool
from bench.flywheel_pool2_data import POOL2_CURRENCIES, POOL2_KIN, POOL2_NAMES
from bench.flywheel_varied_data import NO_ANSWER, Family, R

DEV_NAME, HELD_OUT_NAME = "varied-dev3", "varied-fresh3"
SEED = 5120


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME


POOL3_NAMES = POOL2_NAMES + tuple((n, "f") for n in (
    "Eun-ji", "Aigerim", "Ifeoma", "Lucía", "Mai Linh", "Noor", "Ama", "Kalinda", "Anne-Sophie", "Tahmina",
    "Dagny", "Maria José")) + tuple((n, "m") for n in (
        "Fiifi", "Mateus", "Björn", "Hamza", "Jean-Pierre", "Tomasz", "Sione", "Yerlan", "Duc Anh", "Ngata",
        "Rustam", "Ty"))
POOL3_KIN = POOL2_KIN + ("half-brother", "stepdaughter", "godfather", "babysitter", "landlord", "coworker",
                         "music teacher", "father-in-law", "twin sister", "scout leader")
POOL3_CURRENCIES = POOL2_CURRENCIES + (("₴", "hryvnias"), ("₾", "lari"), ("₭", "kip"), ("RM", "ringgit"),
                                       ("KSh", "shillings"))
POOLS = Pools(POOL3_NAMES, POOL3_KIN, POOL3_CURRENCIES)

CARS = (("car", "cars"), ("pickup truck", "pickup trucks"), ("minivan", "minivans"),
        ("delivery van", "delivery vans"), ("motorbike", "motorbikes"), ("rusty old station wagon",
                                                                        "rusty old station wagons"))
HOUSEPLANTS = (("fern", "ferns"), ("spider plant", "spider plants"), ("pot of mint", "pots of mint"),
               ("snake plant", "snake plants"), ("orchid", "orchids"), ("hanging basket of ivy",
                                                                      "hanging baskets of ivy"))
PASTRIES = (("samosa", "samosas"), ("cheese scone", "cheese scones"), ("slice of banana bread",
                                                                       "slices of banana bread"),
            ("empanada", "empanadas"), ("almond croissant", "almond croissants"), ("custard tart", "custard tarts"),
            ("piece of baklava", "pieces of baklava"))
WORKPLACES = (("office", "offices"), ("dental clinic", "dental clinics"), ("print shop", "print shops"),
              ("recording studio", "recording studios"), ("post office", "post offices"), ("warehouse", "warehouses"),
              ("city art museum", "city art museums"))
PLAYTHINGS = (("marble", "marbles"), ("toy truck", "toy trucks"), ("bouncy ball", "bouncy balls"),
              ("set of dominoes", "sets of dominoes"), ("action figure", "action figures"),
              ("spinning top", "spinning tops"), ("seashell", "seashells"))
STAPLES = (("bag of rice", "bags of rice"), ("sack of flour", "sacks of flour"), ("sack of lentils",
                                                                                   "sacks of lentils"),
           ("bag of brown sugar", "bags of brown sugar"), ("onion sack", "onion sacks"),
           ("crate of potatoes", "crates of potatoes"))
SHOWS = (("concert", "concerts"), ("school play", "school plays"), ("puppet show", "puppet shows"),
         ("talent show", "talent shows"), ("spring dance recital", "spring dance recitals"), ("musical", "musicals"))
TREATS3 = (("video game", "video games"), ("pair of headphones", "pairs of headphones"), ("paperback", "paperbacks"),
           ("set of paints", "sets of paints"), ("skateboard deck", "skateboard decks"), ("puzzle", "puzzles"))
INSTRUMENTS3 = (("violin", "violins"), ("piano", "pianos"), ("bass guitar", "bass guitars"), ("tabla", "tablas"),
                ("steel drum", "steel drums"), ("trumpet", "trumpets"), ("french horn", "french horns"))
HONEY = (("jar of honey", "jars of honey"), ("pot of honey", "pots of honey"), ("honeycomb", "honeycombs"),
         ("bottle of wildflower honey", "bottles of wildflower honey"), ("tub of creamed honey",
                                                                          "tubs of creamed honey"),
         ("honey stick", "honey sticks"))
CONTAINERS = (("paddling pool", "paddling pools"), ("fish pond", "fish ponds"), ("water tank", "water tanks"),
              ("hot tub", "hot tubs"), ("rain barrel", "rain barrels"), ("trough", "troughs"),
              ("big garden pond", "big garden ponds"))
HARVEST = (("strawberry", "strawberries"), ("ear of corn", "ears of corn"), ("head of lettuce", "heads of lettuce"),
           ("pumpkin", "pumpkins"), ("bunch of grapes", "bunches of grapes"), ("zucchini", "zucchinis"))
TRANSPORT = (("train", "trains"), ("night bus", "night buses"), ("ferry", "ferries"),
             ("high-speed train", "high-speed trains"), ("long-distance bus", "long-distance buses"),
             ("slow regional train", "slow regional trains"))
PARTY = (("balloon", "balloons"), ("party whistle", "party whistles"), ("bouncy ball", "bouncy balls"),
         ("chocolate coin", "chocolate coins"), ("glow stick", "glow sticks"), ("tiny rubber duck",
                                                                              "tiny rubber ducks"))
HOUSEHOLD = (("plate", "plates"), ("kitchen pot", "kitchen pots"), ("shoe", "shoes"),
             ("vinyl record", "vinyl records"), ("tool", "tools"), ("picture frame", "picture frames"))
FURNITURE3 = (("sofa", "sofas"), ("dining table", "dining tables"), ("bed frame", "bed frames"),
              ("armchair", "armchairs"), ("chest of drawers", "chests of drawers"), ("wardrobe", "wardrobes"),
              ("rocking chair", "rocking chairs"))
GEAR = (("phone case", "phone cases"), ("pair of sneakers", "pairs of sneakers"), ("watch", "watches"),
        ("backpack", "backpacks"), ("set of speakers", "sets of speakers"), ("bike helmet", "bike helmets"))
TAKEAWAY = (("pizza", "pizzas"), ("bowl of noodles", "bowls of noodles"), ("burrito", "burritos"),
            ("curry", "curries"), ("sushi platter", "sushi platters"), ("meal kit", "meal kits"))
FIXTURES = (("kitchen tap", "kitchen taps"), ("shower head", "shower heads"),
            ("washing machine hose", "washing machine hoses"), ("radiator", "radiators"),
            ("water heater", "water heaters"), ("tap over the bathroom sink", "taps over the bathroom sink"))
CINEMA_SNACKS = (("bag of popcorn", "bags of popcorn"), ("slushie", "slushies"), ("hot dog", "hot dogs"),
                 ("box of candy", "boxes of candy"), ("small tub of ice cream", "small tubs of ice cream"),
                 ("pretzel", "pretzels"))
LIVESTOCK = (("sheep", "sheep"), ("donkey", "donkeys"), ("cow", "cows"), ("alpaca", "alpacas"), ("pony", "ponies"),
             ("dairy cow", "dairy cows"), ("miniature horse", "miniature horses"))

X = NO_ANSWER
POOL3_FAMILIES: tuple[Family, ...] = (
    # 0 dev
    Family("charity_car_wash", "{n1} and {his1} {k1} run a car wash for a charity. They charge {cs}{a} to wash a {o}. "
           "On Saturday they wash {b} of them, and on Sunday they wash {c} fewer than on Saturday. How many {cw} do "
           "they raise over the weekend?",
           "price = {a}\nsaturday = {b}\nfewer = {c}\nprint(price * (saturday + saturday - fewer))",
           lambda a, b, c: a * (2 * b - c), {"a": R(5, 15), "b": R(12, 30), "c": R(2, 9)},
           (("entity", "How many {cw} do they raise on Sunday?", lambda a, b, c: a * (b - c)),
            ("unit", "How many cents do they raise over the weekend?", lambda a, b, c: a * (2 * b - c) * 100),
            ("step", "How many of them do they wash over the weekend?", lambda a, b, c: 2 * b - c),
            ("person", "How many {cw} does {n2} raise over the weekend?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} raise over the weekend?", lambda a, b, c: X),
            ("currency", "How many {xw} do they raise over the weekend?", lambda a, b, c: X),
            ("object", "How many {cw} do they raise washing {xos}?", lambda a, b, c: X)),
           CARS, alt="{n1} and {his1} {k1} run a car wash for a charity, and they charge {cs}{a} to wash a {o}. They "
           "wash {b} of them on Saturday. On Sunday they wash {c} fewer than on Saturday. How many {cw} do they raise "
           "over the weekend?", paraphrase="How much money, in {cw}, do they raise on the two days?"),
    # 1 fresh
    Family("plant_watering", "{n1} waters {his1} {b} {os} every morning, and each one takes {a} minutes. {His1} {k1} "
           "also spends {c} minutes watering the vegetable beds each morning. How many minutes do they spend "
           "watering in {d} days?",
           "per_plant = {a}\nplants = {b}\nbeds = {c}\ndays = {d}\nprint((per_plant * plants + beds) * days)",
           lambda a, b, c, d: (a * b + c) * d, {"a": R(2, 6), "b": R(4, 12), "c": R(10, 30, 5), "d": R(3, 14)},
           (("entity", "How many minutes does {n1} spend watering in {d} days?", lambda a, b, c, d: a * b * d),
            ("unit", "How many minutes do they spend watering in {d} weeks?", lambda a, b, c, d: (a * b + c) * d * 7),
            ("step", "How many minutes do they spend watering each morning?", lambda a, b, c, d: a * b + c),
            ("person", "How many minutes does {n2} spend watering in {d} days?", lambda a, b, c, d: X),
            ("kin", "How many minutes does {n1}'s {xk} spend watering in {d} days?", lambda a, b, c, d: X),
            ("object", "How many minutes does {n1} spend watering {xos} in {d} days?", lambda a, b, c, d: X)),
           HOUSEPLANTS, alt="Each morning {n1}'s {k1} spends {c} minutes watering the vegetable beds. {n1} has {b} "
           "{os} and waters them every morning, {a} minutes for each one. How many minutes do they spend watering in "
           "{d} days?", alt_kind="reorder", paraphrase="Over {d} days, how long do they spend watering, in minutes?"),
    # 2 dev
    Family("cafe_trays", "A baker at {n1}'s cafe makes {a} trays of {os} each morning, with {b} on a tray. By closing "
           "time {c} of them are left, and {n1} gives those to {his1} {k1}. Each one sold costs {cs}{d}. How many {cw} "
           "does the cafe take in from them?",
           "trays = {a}\nper_tray = {b}\nleft = {c}\nprice = {d}\nprint((trays * per_tray - left) * price)",
           lambda a, b, c, d: (a * b - c) * d, {"a": R(3, 8), "b": R(6, 12), "c": R(3, 15), "d": R(2, 9)},
           (("entity", "How many {cw} would the {os} left at closing time have brought in?",
             lambda a, b, c, d: c * d),
            ("unit", "How many cents does the cafe take in from them?", lambda a, b, c, d: (a * b - c) * d * 100),
            ("step", "How many {os} does the cafe sell?", lambda a, b, c, d: a * b - c),
            ("person", "How many {cw} does {n2}'s cafe take in from them?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1} give to {his1} {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the cafe take in from them?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the cafe take in from {xos}?", lambda a, b, c, d: X)),
           PASTRIES, alt="Each of the {os} at {n1}'s cafe sells for {cs}{d}. A baker there makes {a} trays of them "
           "each morning, with {b} on a tray. By closing time {c} are left, and {n1} gives those to {his1} {k1}. How "
           "many {cw} does the cafe take in from them?", alt_kind="reorder",
           paraphrase="How much money do the {os} that are sold bring the cafe, in {cw}?"),
    # 3 fresh
    Family("bike_commute", "{n1} cycles {a} kilometers from home to {his1} {o} each workday and rides back the same "
           "way. {He1} works {b} days a week. On Fridays {he1} takes a detour of {c} kilometers on the way home. How "
           "many kilometers does {n1} cycle in a week?",
           "one_way = {a}\ndays = {b}\ndetour = {c}\nprint(one_way * 2 * days + detour)",
           lambda a, b, c: 2 * a * b + c, {"a": R(3, 15), "b": R(4, 6), "c": R(2, 9)},
           (("entity", "How many kilometers does {n1} cycle on a workday without the detour?", lambda a, b, c: 2 * a),
            ("unit", "How many meters does {n1} cycle in a week?", lambda a, b, c: (2 * a * b + c) * 1000),
            ("step", "How many kilometers does {n1} cycle on the way to the {o} in a week?", lambda a, b, c: a * b),
            ("person", "How many kilometers does {n2} cycle in a week?", lambda a, b, c: X),
            ("object", "How many kilometers does {n1} cycle to the {xo} in a week?", lambda a, b, c: X)),
           WORKPLACES, alt="{n1} works {b} days a week. Each workday {he1} cycles {a} kilometers from home to {his1} "
           "{o} and rides back the same way, and on Fridays {he1} adds a detour of {c} kilometers on the way home. "
           "How many kilometers does {n1} cycle in a week?", alt_kind="reorder",
           paraphrase="What distance does {n1} cover by bike in a week, in kilometers?"),
    # 4 dev
    Family("toy_collections", "{n1} has {a} {os}. {His1} {k1} has {b} times as many, and {n2} has {c} fewer than "
           "{n1}'s {k1}. How many {os} do the three of them have?",
           "mine = {a}\ntimes = {b}\nfewer = {c}\nkin = mine * times\nprint(mine + kin + kin - fewer)",
           lambda a, b, c: a + 2 * a * b - c, {"a": R(4, 20), "b": R(3, 6), "c": R(1, 9)},
           (("entity", "How many {os} does {n1}'s {k1} have?", lambda a, b, c: a * b),
            ("unit", "How many dozen {os} do the three of them have?", lambda a, b, c: _div(a + 2 * a * b - c, 12)),
            ("step", "How many {os} do {n1} and {his1} {k1} have together?", lambda a, b, c: a + a * b),
            ("person", "How many {os} does {n2} have?", lambda a, b, c: a * b - c),
            ("kin", "How many {os} does {n1}'s {xk} have?", lambda a, b, c: X),
            ("object", "How many {xos} do the three of them have?", lambda a, b, c: X)),
           PLAYTHINGS, alt="{n1}'s {k1} has {b} times as many {os} as {n1}, who has {a}. {n2} has {c} fewer than "
           "{n1}'s {k1}. How many {os} do the three of them have?", alt_kind="reorder",
           paraphrase="Altogether, what is the number of {os} the three of them own?"),
    # 5 fresh
    Family("shared_data_plan", "{n1} shares {his1} phone plan with {his1} {k1}. The plan gives {a} gigabytes a month. "
           "{n1} uses {b}% of it, and {his1} {k1} uses {c} gigabytes. How many gigabytes are left at the end of the "
           "month?",
           "data = {a}\nmy_pct = {b}\ntheirs = {c}\nprint(data - data * my_pct // 100 - theirs)",
           lambda a, b, c: a - _div(a * b, 100) - c, {"a": R(20, 80, 10), "b": R(10, 50, 5), "c": R(2, 15)},
           (("entity", "How many gigabytes does {n1} use?", lambda a, b, c: _div(a * b, 100)),
            ("unit", "How many megabytes are left at the end of the month?",
             lambda a, b, c: (a - _div(a * b, 100) - c) * 1000),
            ("step", "How many gigabytes do they use in all?", lambda a, b, c: _div(a * b, 100) + c),
            ("person", "How many gigabytes does {n2} use?", lambda a, b, c: X),
            ("kin", "How many gigabytes does {n1}'s {xk} use?", lambda a, b, c: X)),
           alt="{n1} shares {his1} phone plan with {his1} {k1}, and the plan gives {a} gigabytes a month. {His1} {k1} "
           "uses {c} gigabytes of it while {n1} uses {b}%. How many gigabytes are left at the end of the month?",
           alt_kind="reorder", paraphrase="How much data is left over at the end of the month, in gigabytes?"),
    # 6 dev
    Family("stall_staples", "{n1} runs a food stall with {his1} {k1}. {He1} buys {a} {os} that weigh {b} kilograms "
           "each. They cook {c} kilograms of it every day. How many days does it last?",
           "count = {a}\nweight = {b}\ndaily = {c}\nprint(count * weight // daily)",
           lambda a, b, c: _div(a * b, c), {"a": R(3, 12), "b": R(5, 50, 5), "c": R(3, 20)},
           (("entity", "How many kilograms does {n1} buy?", lambda a, b, c: a * b),
            ("unit", "How many grams of it do they cook every day?", lambda a, b, c: c * 1000),
            ("step", "How many kilograms are left after one day?", lambda a, b, c: a * b - c),
            ("person", "How many days do the {os} last at {n2}'s stall?", lambda a, b, c: X),
            ("kin", "How many kilograms does {n1}'s {xk} cook every day?", lambda a, b, c: X),
            ("object", "How many days do the {xos} last?", lambda a, b, c: X)),
           STAPLES, alt="{n1} runs a food stall with {his1} {k1}, and {he1} buys {a} {os} that weigh {b} kilograms "
           "each. Every day they cook {c} kilograms of it. How many days does it last?",
           paraphrase="For how many days will it last them?"),
    # 7 fresh
    Family("show_tickets", "An adult ticket to the {o} costs {cs}{a} and a child's ticket costs {cs}{b}. {n1}'s {k1} "
           "sells {c} adult tickets and twice as many children's tickets. How many {cw} does {n1}'s {k1} take in?",
           "adult = {a}\nchild = {b}\nadults = {c}\nprint(adult * adults + child * adults * 2)",
           lambda a, b, c: a * c + 2 * b * c, {"a": R(8, 25), "b": R(3, 12), "c": R(5, 30)},
           (("entity", "How many {cw} do the children's tickets bring in?", lambda a, b, c: 2 * b * c),
            ("unit", "How many cents does {n1}'s {k1} take in?", lambda a, b, c: (a * c + 2 * b * c) * 100),
            ("step", "How many tickets does {n1}'s {k1} sell?", lambda a, b, c: 3 * c),
            ("person", "How many {cw} does {n2} take in?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} take in?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1}'s {k1} take in?", lambda a, b, c: X),
            ("object", "How many {cw} do the tickets to the {xo} bring in?", lambda a, b, c: X)),
           SHOWS, alt="{n1}'s {k1} sells {c} adult tickets to the {o} and twice as many children's tickets. Adult "
           "tickets cost {cs}{a} and children's tickets cost {cs}{b}. How many {cw} does {n1}'s {k1} take in?",
           alt_kind="reorder", paraphrase="How much money, in {cw}, do the tickets {n1}'s {k1} sells bring in?"),
    # 8 dev
    Family("dog_walks", "{n1} walks dogs after school. {He1} charges {cs}{a} for a short walk and {cs}{b} for a long "
           "walk. This week {he1} does {c} short walks and {d} long walks, then spends a third of what {he1} earned "
           "on {os}. How many {cw} does {n1} have left?",
           "short = {a}\nlong = {b}\nshorts = {c}\nlongs = {d}\nearned = short * shorts + long * longs\n"
           "print(earned - earned // 3)",
           lambda a, b, c, d: (a * c + b * d) - _div(a * c + b * d, 3),
           {"a": R(3, 8), "b": R(9, 20), "c": R(2, 10), "d": R(2, 8)},
           (("entity", "How many {cw} does {n1} spend on {os}?", lambda a, b, c, d: _div(a * c + b * d, 3)),
            ("unit", "How many cents does {n1} have left?",
             lambda a, b, c, d: ((a * c + b * d) - _div(a * c + b * d, 3)) * 100),
            ("step", "How many {cw} does {n1} earn this week?", lambda a, b, c, d: a * c + b * d),
            ("person", "How many {cw} does {n2} have left?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} have left?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} spend on {xos}?", lambda a, b, c, d: X)),
           TREATS3, alt="{n1} walks dogs after school, charging {cs}{a} for a short walk and {cs}{b} for a long walk. "
           "This week {he1} does {c} short walks. {He1} also does {d} long walks. Then {he1} spends a third of what "
           "{he1} earned on {os}. How many {cw} does {n1} have left?",
           paraphrase="How much money is left for {n1}, in {cw}?"),
    # 9 fresh
    Family("instrument_practice", "{n1} practices the {o} with {his1} {k1} for {a} minutes every weekday and {b} "
           "minutes on both Saturday and Sunday. How many hours does {n1} practice in {c} weeks?",
           "weekday = {a}\nweekend = {b}\nweeks = {c}\nprint((weekday * 5 + weekend * 2) * weeks // 60)",
           lambda a, b, c: _div((5 * a + 2 * b) * c, 60), {"a": R(20, 60, 5), "b": R(30, 90, 15), "c": R(2, 6)},
           (("entity", "How many minutes does {n1} practice on the weekend each week?", lambda a, b, c: 2 * b),
            ("unit", "How many minutes does {n1} practice in {c} weeks?", lambda a, b, c: (5 * a + 2 * b) * c),
            ("step", "How many minutes does {n1} practice each week?", lambda a, b, c: 5 * a + 2 * b),
            ("person", "How many hours does {n2} practice in {c} weeks?", lambda a, b, c: X),
            ("kin", "How many hours does {n1}'s {xk} practice in {c} weeks?", lambda a, b, c: X),
            ("object", "How many hours does {n1} practice the {xo} in {c} weeks?", lambda a, b, c: X)),
           INSTRUMENTS3, alt="For {a} minutes every weekday and {b} minutes on both Saturday and Sunday, {n1} "
           "practices the {o} with {his1} {k1}. How many hours does {n1} practice in {c} weeks?",
           alt_kind="reorder", paraphrase="In {c} weeks, how many hours of practice does {n1} put in?"),
    # 10 dev
    Family("beehive_honey", "{n1} keeps {a} beehives, and each hive gives {b} {os} a season. {He1} keeps {c} of them "
           "for {his1} {k1} and sells the rest at {cs}{d} each. How many {cw} does {n1} make?",
           "hives = {a}\nper_hive = {b}\nkept = {c}\nprice = {d}\nprint((hives * per_hive - kept) * price)",
           lambda a, b, c, d: (a * b - c) * d, {"a": R(3, 12), "b": R(8, 25), "c": R(2, 9), "d": R(4, 15)},
           (("entity", "How many {cw} would the {os} kept for {his1} {k1} sell for?", lambda a, b, c, d: c * d),
            ("unit", "How many cents does {n1} make?", lambda a, b, c, d: (a * b - c) * d * 100),
            ("step", "How many {os} does {n1} sell?", lambda a, b, c, d: a * b - c),
            ("person", "How many {cw} does {n2} make?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1} keep for {his1} {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} make?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} make from {xos}?", lambda a, b, c, d: X)),
           HONEY, alt="{n1} keeps {a} beehives. Each hive gives {b} {os} a season. {He1} keeps {c} of them for {his1} "
           "{k1}. {He1} sells the rest at {cs}{d} each. How many {cw} does {n1} make?",
           paraphrase="How much does {n1} earn from the sales, in {cw}?"),
    # 11 fresh
    Family("hose_fill", "{n1}'s {k1} fills a {o} with a hose that pours {a} liters a minute. The {o} holds {b} liters "
           "and already has {c} liters in it. How many minutes does it take to fill?",
           "rate = {a}\ncapacity = {b}\nalready = {c}\nprint((capacity - already) // rate)",
           lambda a, b, c: _div(b - c, a), {"a": R(4, 20), "b": R(200, 900, 50), "c": R(20, 150, 10)},
           (("entity", "How many liters are in the {o} when it is half full?", lambda a, b, c: _div(b, 2)),
            ("unit", "How many seconds does it take to fill?", lambda a, b, c: _div(b - c, a) * 60),
            ("step", "How many liters of water go into the {o}?", lambda a, b, c: b - c),
            ("person", "How many minutes does it take {n2} to fill the {o}?", lambda a, b, c: X),
            ("kin", "How many minutes does it take {n1}'s {xk} to fill the {o}?", lambda a, b, c: X),
            ("object", "How many minutes does it take to fill the {xo}?", lambda a, b, c: X)),
           CONTAINERS, alt="A {o} holds {b} liters and already has {c} liters in it. {n1}'s {k1} fills it with a "
           "hose that pours {a} liters a minute. How many minutes does it take to fill?", alt_kind="reorder",
           paraphrase="How long, in minutes, does the filling take?"),
    # 12 dev
    Family("farm_share", "At the community farm {n1} picks {a} {os}, and {his1} {k1} picks {b} more than {n1} does. "
           "They share all of them equally among {c} families. How many {os} does each family get?",
           "mine = {a}\nmore = {b}\nfamilies = {c}\nprint((mine + mine + more) // families)",
           lambda a, b, c: _div(2 * a + b, c), {"a": R(10, 40), "b": R(2, 15), "c": R(3, 8)},
           (("entity", "How many {os} does {n1}'s {k1} pick?", lambda a, b, c: a + b),
            ("unit", "How many crates of {os} does each family get?", lambda a, b, c: X),
            ("step", "How many {os} do they pick in all?", lambda a, b, c: 2 * a + b),
            ("person", "How many {os} does {n2} pick?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} pick?", lambda a, b, c: X),
            ("object", "How many {xos} does each family get?", lambda a, b, c: X)),
           HARVEST, alt="{n1} picks {a} {os} at the community farm. {His1} {k1} picks {b} more than {n1} does, and "
           "they share all of them equally among {c} families. How many {os} does each family get?",
           paraphrase="How many of the {os} end up with each family?"),
    # 13 fresh
    Family("visit_by_rail", "{n1} takes a {o} to visit {his1} {k1}. The trip is {a} kilometers long and the {o} goes "
           "{b} kilometers an hour, with a stop of {c} minutes on the way. How many minutes does the trip take?",
           "distance = {a}\nspeed = {b}\nstop = {c}\nprint(distance * 60 // speed + stop)",
           lambda a, b, c: _div(a * 60, b) + c, {"a": R(60, 400, 20), "b": R(40, 120, 10), "c": R(10, 45, 5)},
           (("entity", "How many minutes is the {o} moving?", lambda a, b, c: _div(a * 60, b)),
            ("unit", "How many seconds does the trip take?", lambda a, b, c: (_div(a * 60, b) + c) * 60),
            ("step", "How many hours is the {o} moving?", lambda a, b, c: _div(a, b)),
            ("person", "How many minutes does {n2}'s trip take?", lambda a, b, c: X),
            ("kin", "How many minutes does the trip of {n1}'s {xk} take?", lambda a, b, c: X),
            ("object", "How many minutes does the trip take by {xo}?", lambda a, b, c: X)),
           TRANSPORT, alt="{n1} takes a {o} to visit {his1} {k1}. The trip is {a} kilometers long. The {o} goes {b} "
           "kilometers an hour. It stops for {c} minutes on the way. How many minutes does the trip take?",
           paraphrase="How long is the trip, in minutes?"),
    # 14 dev
    Family("goody_bags", "{n1} is filling goody bags for {a} children at {his1} {k1}'s birthday party. Each bag gets "
           "{b} {os}, and {n1} buys the {os} in packs of {c}. A pack costs {cs}{d}. How many {cw} does {n1} spend?",
           "children = {a}\nper_bag = {b}\nper_pack = {c}\npack_price = {d}\n"
           "print(children * per_bag // per_pack * pack_price)",
           lambda a, b, c, d: _div(a * b, c) * d, {"a": R(6, 20), "b": R(2, 6), "c": R(4, 12), "d": R(2, 9)},
           (("entity", "How many {os} does {n1} need?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does {n1} spend?", lambda a, b, c, d: _div(a * b, c) * d * 100),
            ("step", "How many packs does {n1} buy?", lambda a, b, c, d: _div(a * b, c)),
            ("person", "How many {cw} does {n2} spend?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} spend?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} spend?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} spend on {xos}?", lambda a, b, c, d: X)),
           PARTY, alt="A pack of {os} costs {cs}{d} and holds {c} of them. {n1} is filling goody bags for {a} children "
           "at {his1} {k1}'s birthday party, with {b} {os} in each bag. How many {cw} does {n1} spend?",
           alt_kind="reorder", paraphrase="How much money does {n1} spend on the packs?"),
    # 15 fresh
    Family("moving_boxes", "{n1} is moving house, and {his1} {k1} lends {him1} a van. {He1} packs {a} boxes of books "
           "that weigh {c} kilograms each and {b} boxes of {os} that weigh {d} kilograms each. How many kilograms do "
           "the boxes weigh in all?",
           "book_boxes = {a}\nother_boxes = {b}\nbook_kg = {c}\nother_kg = {d}\n"
           "print(book_boxes * book_kg + other_boxes * other_kg)",
           lambda a, b, c, d: a * c + b * d, {"a": R(4, 15), "b": R(3, 12), "c": R(10, 25), "d": R(3, 9)},
           (("entity", "How many kilograms do the boxes of {os} weigh?", lambda a, b, c, d: b * d),
            ("unit", "How many grams do the boxes weigh in all?", lambda a, b, c, d: (a * c + b * d) * 1000),
            ("step", "How many boxes does {n1} pack?", lambda a, b, c, d: a + b),
            ("person", "How many kilograms do {n2}'s boxes weigh in all?", lambda a, b, c, d: X),
            ("kin", "How many kilograms do the boxes of {n1}'s {xk} weigh?", lambda a, b, c, d: X),
            ("object", "How many kilograms do the boxes of {xos} weigh?", lambda a, b, c, d: X)),
           HOUSEHOLD, alt="{n1} packs {b} boxes of {os} that weigh {d} kilograms each and {a} boxes of books that "
           "weigh {c} kilograms each. {He1} is moving house, and {his1} {k1} lends {him1} a van. How many kilograms "
           "do the boxes weigh in all?", alt_kind="reorder",
           paraphrase="What is the total weight of the boxes, in kilograms?"),
    # 16 dev
    Family("furniture_commission", "{n1} works at {his1} {k1}'s furniture store for {cs}{d} a week plus {b}% of what "
           "{he1} sells. This week {he1} sells {a} {os} at {cs}{c} each. How many {cw} does {n1} earn this week?",
           "sold = {a}\npct = {b}\nprice = {c}\nbase = {d}\nprint(base + sold * price * pct // 100)",
           lambda a, b, c, d: d + _div(a * c * b, 100),
           {"a": R(2, 8), "b": R(5, 20, 5), "c": R(100, 600, 50), "d": R(200, 500, 50)},
           (("entity", "How many {cw} are the {os} {n1} sells this week worth?", lambda a, b, c, d: a * c),
            ("unit", "How many cents does {n1} earn this week?", lambda a, b, c, d: (d + _div(a * c * b, 100)) * 100),
            ("step", "How many {cw} of commission does {n1} earn this week?", lambda a, b, c, d: _div(a * c * b, 100)),
            ("person", "How many {cw} does {n2} earn this week?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay {him1} this week?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} earn this week?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} earn selling {xos} this week?", lambda a, b, c, d: X)),
           FURNITURE3, alt="This week {n1} sells {a} {os} at {cs}{c} each at {his1} {k1}'s furniture store. {He1} is "
           "paid {cs}{d} a week plus {b}% of what {he1} sells. How many {cw} does {n1} earn this week?",
           alt_kind="reorder", paraphrase="What is {n1}'s pay for the week, in {cw}?"),
    # 17 fresh
    Family("garage_spaces", "{n1}'s {k1} runs a parking garage with {a} levels of {b} spaces each. In the morning {c} "
           "{os} park on every level, and at noon {d} more {os} arrive. How many spaces are still free?",
           "levels = {a}\nper_level = {b}\nmorning = {c}\nnoon = {d}\n"
           "print(levels * per_level - levels * morning - noon)",
           lambda a, b, c, d: a * b - a * c - d, {"a": R(3, 8), "b": R(20, 60, 5), "c": R(8, 30), "d": R(5, 40)},
           (("entity", "How many spaces does the garage have?", lambda a, b, c, d: a * b),
            ("unit", "How many levels are still free?", lambda a, b, c, d: X),
            ("step", "How many {os} are parked after noon?", lambda a, b, c, d: a * c + d),
            ("person", "How many spaces are still free in {n2}'s garage?", lambda a, b, c, d: X),
            ("kin", "How many spaces are still free in the garage of {n1}'s {xk}?", lambda a, b, c, d: X),
            ("object", "How many {xos} park in the morning?", lambda a, b, c, d: X)),
           CARS, alt="In the morning {c} {os} park on every level of the garage {n1}'s {k1} runs, which has {a} levels "
           "of {b} spaces each. At noon {d} more {os} arrive. How many spaces are still free?", alt_kind="reorder",
           paraphrase="What number of spaces is left empty?"),
    # 18 dev
    Family("summer_job_savings", "{n1} earns {a} {cw} at a summer job in {his1} {k1}'s shop. {He1} spends a quarter of "
           "it on a {o}, then {b} {cw} on a concert ticket, and saves the rest. How many {cw} does {n1} save?",
           "earned = {a}\nticket = {b}\nprint(earned - earned // 4 - ticket)",
           lambda a, b: a - _div(a, 4) - b, {"a": R(200, 800, 20), "b": R(20, 90, 5)},
           (("entity", "How many {cw} does the {o} cost?", lambda a, b: _div(a, 4)),
            ("unit", "How many cents does {n1} save?", lambda a, b: (a - _div(a, 4) - b) * 100),
            ("step", "How many {cw} does {n1} have after buying the {o}?", lambda a, b: a - _div(a, 4)),
            ("person", "How many {cw} does {n2} save?", lambda a, b: X),
            ("kin", "How many {cw} does {n1} earn in {his1} {xk}'s shop?", lambda a, b: X),
            ("currency", "How many {xw} does {n1} save?", lambda a, b: X),
            ("object", "How many {cw} does the {xo} cost?", lambda a, b: X)),
           GEAR, alt="{n1} earns {a} {cw} at a summer job in {his1} {k1}'s shop. A quarter of it goes on a {o}. Then "
           "{he1} spends {b} {cw} on a concert ticket and saves the rest. How many {cw} does {n1} save?",
           paraphrase="How much money does {n1} put away?"),
    # 19 fresh
    Family("takeaway_deliveries", "{n1} delivers {os} for {his1} {k1}'s restaurant. {He1} is paid {cs}{a} for each "
           "delivery and gets {cs}{b} in tips on average. On Saturday {he1} makes {c} deliveries, and on Sunday {he1} "
           "makes {d}. How many {cw} does {n1} make over the two days?",
           "pay = {a}\ntip = {b}\nsaturday = {c}\nsunday = {d}\nprint((pay + tip) * (saturday + sunday))",
           lambda a, b, c, d: (a + b) * (c + d), {"a": R(3, 9), "b": R(2, 8), "c": R(8, 25), "d": R(6, 20)},
           (("entity", "How many {cw} does {n1} get in tips over the two days?", lambda a, b, c, d: b * (c + d)),
            ("unit", "How many cents does {n1} make over the two days?", lambda a, b, c, d: (a + b) * (c + d) * 100),
            ("step", "How many {cw} does {n1} get for each delivery with the tip?", lambda a, b, c, d: a + b),
            ("person", "How many {cw} does {n2} make over the two days?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay {him1} over the two days?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} make over the two days?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} make delivering {xos}?", lambda a, b, c, d: X)),
           TAKEAWAY, alt="On Saturday {n1} makes {c} deliveries of {os} for {his1} {k1}'s restaurant, and on Sunday "
           "{he1} makes {d}. {He1} is paid {cs}{a} for each delivery and gets {cs}{b} in tips on average. How many "
           "{cw} does {n1} make over the two days?", alt_kind="reorder",
           paraphrase="What does {n1} earn on the two days, in {cw}?"),
    # 20 dev
    Family("track_laps", "At the school track, {n1} runs {a} laps and {his1} {k1} runs {c} fewer laps than {n1}. One "
           "lap is {b} meters. How many meters do they run together?",
           "laps = {a}\nlap_m = {b}\nfewer = {c}\nprint((laps + laps - fewer) * lap_m)",
           lambda a, b, c: (2 * a - c) * b, {"a": R(5, 16), "b": R(200, 500, 50), "c": R(2, 5)},
           (("entity", "How many meters does {n1}'s {k1} run?", lambda a, b, c: (a - c) * b),
            ("unit", "How many centimeters do they run together?", lambda a, b, c: (2 * a - c) * b * 100),
            ("step", "How many laps do they run together?", lambda a, b, c: 2 * a - c),
            ("person", "How many meters does {n2} run?", lambda a, b, c: X),
            ("kin", "How many meters does {n1}'s {xk} run?", lambda a, b, c: X)),
           alt="One lap of the school track is {b} meters. {n1} runs {a} laps there, while {his1} {k1} runs {c} "
           "fewer laps than {n1}. How many meters do they run together?", alt_kind="reorder",
           paraphrase="What distance do the two of them cover, in meters?"),
    # 21 fresh
    Family("leaky_fixture", "The {o} in {n1}'s flat leaks {a} milliliters of water every minute. {His1} {k1} fixes it "
           "{b} hours after it starts. How many milliliters of water leak?",
           "per_minute = {a}\nhours = {b}\nprint(per_minute * 60 * hours)",
           lambda a, b: a * 60 * b, {"a": R(5, 50, 5), "b": R(2, 12)},
           (("entity", "How many milliliters would leak over a whole day?", lambda a, b: a * 1440),
            ("unit", "How many milliliters would leak in {b} days?", lambda a, b: a * 1440 * b),
            ("step", "How many milliliters leak each hour?", lambda a, b: a * 60),
            ("person", "How many milliliters of water leak in {n2}'s flat?", lambda a, b: X),
            ("kin", "How long does {n1}'s {xk} take to fix it?", lambda a, b: X),
            ("object", "How many milliliters of water leak from the {xo}?", lambda a, b: X)),
           FIXTURES, alt="{n1}'s {k1} fixes the {o} in the flat {b} hours after it starts leaking. Until then it "
           "leaks {a} milliliters of water every minute. How many milliliters of water leak?", alt_kind="reorder",
           paraphrase="What amount of water, in milliliters, is lost?"),
    # 22 dev
    Family("cinema_outing", "{n1} takes {a} children from {his1} {k1}'s class to the cinema. Each child's ticket "
           "costs {cs}{b}, and each child also gets a {o} for {cs}{c}. {n1} pays with {d} {cw}. How many {cw} of "
           "change does {n1} get?",
           "children = {a}\nticket = {b}\nsnack = {c}\npaid = {d}\nprint(paid - children * (ticket + snack))",
           lambda a, b, c, d: d - a * (b + c), {"a": R(3, 9), "b": R(6, 15), "c": R(2, 5), "d": R(100, 300, 50)},
           (("entity", "How many {cw} do the {os} cost?", lambda a, b, c, d: a * c),
            ("unit", "How many cents of change does {n1} get?", lambda a, b, c, d: (d - a * (b + c)) * 100),
            ("step", "How many {cw} does {n1} spend?", lambda a, b, c, d: a * (b + c)),
            ("person", "How many {cw} of change does {n2} get?", lambda a, b, c, d: X),
            ("kin", "How many children from the class of {n1}'s {xk} go to the cinema?", lambda a, b, c, d: X),
            ("currency", "How many {xw} of change does {n1} get?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the {xos} cost?", lambda a, b, c, d: X)),
           CINEMA_SNACKS, alt="{n1} takes {a} children from {his1} {k1}'s class to the cinema, where each child's "
           "ticket costs {cs}{b}. Each child also gets a {o} for {cs}{c}, and {n1} pays with {d} {cw}. How many {cw} "
           "of change does {n1} get?", paraphrase="How much change, in {cw}, comes back to {n1}?"),
    # 23 fresh
    Family("hay_for_animals", "{n1}'s {k1} keeps {a} goats and {b} {os} on a small farm. Each goat eats {c} kilograms "
           "of hay a day, while each of the {os} eats {d} kilograms. Hay costs {e} {cw} a kilogram. How many {cw} does "
           "the hay for a week cost?",
           "goats = {a}\nothers = {b}\ngoat_kg = {c}\nother_kg = {d}\nprice = {e}\n"
           "print((goats * goat_kg + others * other_kg) * 7 * price)",
           lambda a, b, c, d, e: (a * c + b * d) * 7 * e,
           {"a": R(3, 12), "b": R(2, 8), "c": R(2, 4), "d": R(5, 12), "e": R(2, 9)},
           (("entity", "How many {cw} does the goats' hay for a week cost?", lambda a, b, c, d, e: a * c * 7 * e),
            ("unit", "How many cents does the hay for a week cost?", lambda a, b, c, d, e: (a * c + b * d) * 700 * e),
            ("step", "How many kilograms of hay do the animals eat in a week?",
             lambda a, b, c, d, e: (a * c + b * d) * 7),
            ("person", "How many {cw} does the hay for {n2}'s animals cost for a week?", lambda a, b, c, d, e: X),
            ("kin", "How many goats does {n1}'s {xk} keep?", lambda a, b, c, d, e: X),
            ("currency", "How many {xw} does the hay for a week cost?", lambda a, b, c, d, e: X),
            ("object", "How many {cw} does the hay for the {xos} cost for a week?", lambda a, b, c, d, e: X)),
           LIVESTOCK, alt="{n1}'s {k1} keeps {a} goats and {b} {os} on a small farm. Each goat eats {c} kilograms of "
           "hay a day. Each of the {os} eats {d} kilograms a day, and hay costs {e} {cw} a kilogram. How many {cw} "
           "does the hay for a week cost?", paraphrase="What does a week of hay cost, in {cw}?"),
)


POOL = Pool(POOL3_FAMILIES, POOLS, SEED, half_of, (DEV_NAME, HELD_OUT_NAME))
pool_instances, half_families, build, pool_problems = POOL.instances, POOL.half_families, POOL.build, POOL.problems


def main() -> None:
    POOL.write()


if __name__ == "__main__":
    main()
