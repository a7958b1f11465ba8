"""A fourth pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL4_FAMILIES` even -> `varied-dev4` (the
development half, to tune on), odd -> `varied-fresh4` (held out: nobody tunes on it, it is run once at the end).
Written on 2026-12-05 without running the flywheel, the router, the alignment or `kvgraft bench flywheel` on either
half and without reading the alignment's, transfer's, structure's, router's or parameterizer's rules.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the families of bench/flywheel_data.py, bench/flywheel_gsm_data.py,
bench/flywheel_varied_data.py, bench/flywheel_fresh_data.py, bench/flywheel_pool2_data.py or
bench/flywheel_pool3_data.py, whose machinery they reuse by import (Family, the draw with the written-number redraw,
one-slot `edit_*` rows, near misses of every kind, `problems()`; read bench/flywheel_varied_data.py's and
bench/flywheel_fresh_data.py's docstrings for the rows). Other in style than pool 3: situations from school and
classroom, sports scores, recipes scaled, travel and fuel, gardening by area, the library and a bookshop, savings over
months, subscriptions, shop stock, baking in batches, comparisons of weights, tips and shared bills, pack and unit
prices; questions that open with a clause ("By the end of the challenge, how many ...", "If nothing else changes,
..."), statements joined with "while", "but" and "so", numbers as words where people write them so ("twice",
"half", "a third", "one point", "four weeks"), the passive voice ("are dug by", "are hired", "are carried");
names from many cultures (one word, two words, hyphenated), kin and role nouns the earlier pools lack ("grandpa",
"sister-in-law", "swim coach", "bandmate", "next-door neighbor"), objects of one to four words, currencies by sign
and by word with new ones (CHF francs, ₪ shekels, ₵ cedis, ₸ tenge, Rp rupiah, ৳ taka).

    python -m bench.flywheel_pool4_data   # rewrites bench/data/flywheel-varied-{dev4,fresh4}-{library,eval}.jsonl
"""

from __future__ import annotations

from bench.flywheel_fresh_data import Pools
from bench.flywheel_gsm_data import _div
from bench.flywheel_pool import Pool
from bench.flywheel_pool3_data import POOL3_CURRENCIES, POOL3_KIN, POOL3_NAMES
from bench.flywheel_varied_data import NO_ANSWER, Family, R

DEV_NAME, HELD_OUT_NAME = "varied-dev4", "varied-fresh4"
SEED = 6405


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME


POOL4_NAMES = POOL3_NAMES + tuple((n, "f") for n in (
    "Chioma", "Aisling", "Mele", "Nandini", "Valentina", "Ebru", "Rosa María", "Sun-hee", "Akosua", "Freya",
    "Tsering", "Anh Thu", "Zofia")) + tuple((n, "m") for n in (
        "Kwabena", "Rafael", "Arash", "Ji-ho", "Sebastián", "Koa", "Anders", "Olumide", "Luis Miguel", "Farrukh",
        "Nikhil", "Paora", "Mohammed Ali"))
POOL4_KIN = POOL3_KIN + ("grandpa", "grandma", "stepson", "sister-in-law", "brother-in-law", "swim coach", "bandmate",
                         "next-door neighbor", "great-uncle", "lab partner", "team captain", "foster mother")
# kroner is left out: its sign "kr" is already kronor's, and a currency edit must change the sign
POOL4_CURRENCIES = POOL3_CURRENCIES + (("CHF", "francs"), ("₪", "shekels"), ("₵", "cedis"), ("₸", "tenge"),
                                       ("Rp", "rupiah"), ("৳", "taka"))
POOLS = Pools(POOL4_NAMES, POOL4_KIN, POOL4_CURRENCIES)

SOUP = (("red lentil", "red lentils"), ("mushroom", "mushrooms"), ("diced sweet potato", "diced sweet potatoes"),
        ("chickpea", "chickpeas"), ("leek", "leeks"), ("shelled green pea", "shelled green peas"),
        ("chopped fresh spinach leaf", "chopped fresh spinach leaves"))
ROAD_CARS = (("hatchback", "hatchbacks"), ("camper van", "camper vans"), ("old family sedan", "old family sedans"),
             ("jeep", "jeeps"), ("small rental car", "small rental cars"), ("van", "vans"))
READING = (("picture book", "picture books"), ("chapter book", "chapter books"), ("comic", "comics"),
           ("short mystery novel", "short mystery novels"), ("book of fairy tales", "books of fairy tales"),
           ("biography", "biographies"))
BED_PLANTS = (("lettuce seedling", "lettuce seedlings"), ("onion set", "onion sets"), ("garlic clove",
                                                                                     "garlic cloves"),
              ("tulip bulb", "tulip bulbs"), ("clump of chives", "clumps of chives"), ("marigold", "marigolds"),
              ("tiny pepper seedling", "tiny pepper seedlings"))
SUBSCRIPTIONS = (("newspaper", "newspapers"), ("music app", "music apps"), ("language course", "language courses"),
                 ("cooking magazine", "cooking magazines"), ("podcast", "podcasts"),
                 ("fitness video channel", "fitness video channels"))
SALE_BAKES = (("flapjack", "flapjacks"), ("ginger biscuit", "ginger biscuits"), ("lemon bar", "lemon bars"),
              ("madeleine", "madeleines"), ("oatmeal raisin cookie", "oatmeal raisin cookies"),
              ("mini carrot cake muffin", "mini carrot cake muffins"), ("churro", "churros"))
SHOP_BOOKS = (("travel guide", "travel guides"), ("crossword book", "crossword books"), ("diary", "diaries"),
              ("atlas of the world", "atlases of the world"), ("poetry collection", "poetry collections"),
              ("field guide to birds", "field guides to birds"), ("novel", "novels"))
SHARED_PLATES = (("dessert", "desserts"), ("bottle of sparkling water", "bottles of sparkling water"),
                 ("plate of fries", "plates of fries"), ("cheese board", "cheese boards"),
                 ("large pot of tea", "large pots of tea"), ("salad", "salads"))
MARKET_PACKS = (("lime", "limes"), ("avocado", "avocados"), ("bunch of coriander", "bunches of coriander"),
                ("passion fruit", "passion fruits"), ("jar of chili paste", "jars of chili paste"),
                ("fresh bread roll", "fresh bread rolls"), ("bag of mixed nuts", "bags of mixed nuts"))
WISHES = (("telescope", "telescopes"), ("drum kit", "drum kits"), ("used electric guitar", "used electric guitars"),
          ("pair of roller skates", "pairs of roller skates"), ("camera", "cameras"), ("tablet", "tablets"))
LOANS = (("audiobook", "audiobooks"), ("DVD", "DVDs"), ("large-print novel", "large-print novels"),
         ("book about dinosaurs", "books about dinosaurs"), ("board book", "board books"),
         ("language course on CD", "language courses on CD"))
PRIZE_VEG = (("pumpkin", "pumpkins"), ("watermelon", "watermelons"), ("giant marrow", "giant marrows"),
             ("cabbage", "cabbages"), ("prize-winning squash", "prize-winning squashes"),
             ("big orange pumpkin", "big orange pumpkins"))
TRIP_PLACES = (("zoo", "zoos"), ("science museum", "science museums"), ("aquarium", "aquariums"),
               ("botanical garden", "botanical gardens"), ("chocolate factory", "chocolate factories"),
               ("natural history museum", "natural history museums"))
FERRY_CARGO = (("bicycle", "bicycles"), ("car", "cars"), ("motorbike", "motorbikes"), ("camper van", "camper vans"),
               ("small trailer", "small trailers"), ("kayak", "kayaks"), ("cargo bike with a trailer",
                                                                       "cargo bikes with a trailer"))
BREADS = (("pita", "pitas"), ("soft pretzel", "soft pretzels"), ("challah", "challahs"),
          ("loaf of sourdough", "loaves of sourdough"), ("naan", "naans"), ("seeded rye loaf", "seeded rye loaves"),
          ("small milk bread bun", "small milk bread buns"))
PAVING = (("paving slab", "paving slabs"), ("tile", "tiles"), ("stone tile", "stone tiles"),
          ("square of grey slate", "squares of grey slate"), ("brick paver", "brick pavers"),
          ("big concrete paver", "big concrete pavers"))
SHELF_GOODS = (("can of tomatoes", "cans of tomatoes"), ("jar of pickles", "jars of pickles"), ("candle", "candles"),
               ("bottle of olive oil", "bottles of olive oil"), ("tube of toothpaste", "tubes of toothpaste"),
               ("packet of rice noodles", "packets of rice noodles"), ("soap", "soaps"))
TAXI_STOPS = (("airport", "airports"), ("train station", "train stations"), ("stadium", "stadiums"),
              ("old harbor", "old harbors"), ("night market", "night markets"), ("concert hall", "concert halls"),
              ("hospital on the hill", "hospitals on the hill"))
CHOIR_WEAR = (("robe", "robes"), ("bow tie", "bow ties"), ("sash", "sashes"), ("black music folder",
                                                                              "black music folders"),
              ("pair of white gloves", "pairs of white gloves"), ("choir robe", "choir robes"))

X = NO_ANSWER
POOL4_FAMILIES: tuple[Family, ...] = (
    # 0 dev
    Family("soup_for_guests", "A soup recipe that serves {a} people calls for {b} grams of {os}. {n1} is cooking it "
           "for {c} guests at {his1} {k1}'s birthday and also wants {d} extra portions to freeze, so {he1} scales the "
           "recipe up. How many grams of {os} does {n1} need?",
           "serves = {a}\ngrams = {b}\nguests = {c}\nfrozen = {d}\nprint(grams * (guests + frozen) // serves)",
           lambda a, b, c, d: _div(b, a) * (c + d),
           {"a": R(2, 6), "b": R(100, 400, 50), "c": R(8, 24), "d": R(2, 7)},
           (("entity", "How many grams of {os} does one portion get?", lambda a, b, c, d: _div(b, a)),
            ("unit", "How many milligrams of {os} does {n1} need?", lambda a, b, c, d: _div(b, a) * (c + d) * 1000),
            ("step", "How many portions does {n1} make?", lambda a, b, c, d: c + d),
            ("person", "How many grams of {os} does {n2} need?", lambda a, b, c, d: X),
            ("kin", "How many guests come to the birthday of {n1}'s {xk}?", lambda a, b, c, d: X),
            ("object", "How many grams of {xos} does {n1} need?", lambda a, b, c, d: X)),
           SOUP, alt="{n1} is cooking soup for {c} guests at {his1} {k1}'s birthday and wants {d} extra portions to "
           "freeze. {His1} recipe serves {a} people and calls for {b} grams of {os}, so {he1} scales it up. How many "
           "grams of {os} does {n1} need?", alt_kind="reorder",
           paraphrase="Once the recipe is scaled, what weight of {os} goes into the pot, in grams?"),
    # 1 fresh
    Family("fuel_round_trip", "{n1} drives {his1} {o} to see {his1} {k1}, who lives {a} kilometers away, and drives "
           "back the same day. The {o} goes {b} kilometers on one liter of fuel, and fuel costs {cs}{c} a "
           "liter. How many {cw} does the fuel for the round trip cost?",
           "distance = {a}\nkm_per_liter = {b}\nprice = {c}\nprint(2 * distance // km_per_liter * price)",
           lambda a, b, c: _div(2 * a, b) * c, {"a": R(60, 300, 10), "b": R(8, 20), "c": R(2, 9)},
           (("entity", "How many kilometers is the round trip?", lambda a, b, c: 2 * a),
            ("unit", "How many cents does the fuel for the round trip cost?", lambda a, b, c: _div(2 * a, b) * c * 100),
            ("step", "How many liters of fuel does the round trip use?", lambda a, b, c: _div(2 * a, b)),
            ("person", "How many {cw} does the fuel for {n2}'s round trip cost?", lambda a, b, c: X),
            ("kin", "How far away does {n1}'s {xk} live?", lambda a, b, c: X),
            ("currency", "How many {xw} does the fuel for the round trip cost?", lambda a, b, c: X),
            ("object", "How many {cw} does the fuel for the {xo} cost?", lambda a, b, c: X)),
           ROAD_CARS, alt="Fuel costs {cs}{c} a liter, and {n1}'s {o} goes {b} kilometers on one liter. {n1} "
           "drives it to see {his1} {k1}, who lives {a} kilometers away, and drives back the same day. How many {cw} "
           "does the fuel for the round trip cost?", alt_kind="reorder",
           paraphrase="What does {n1} spend on fuel for the trip there and back, in {cw}?"),
    # 2 dev
    Family("reading_challenge", "{n1}'s {k1} teaches a class of {a} students. During a reading challenge each student "
           "reads {b} {os} a week, but {c} of the students are away on a school trip for the whole challenge. The "
           "challenge lasts {d} weeks. By the end of the challenge, how many {os} has the class read?",
           "students = {a}\nper_week = {b}\naway = {c}\nweeks = {d}\nprint((students - away) * per_week * weeks)",
           lambda a, b, c, d: (a - c) * b * d, {"a": R(20, 34), "b": R(2, 5), "c": R(2, 6), "d": R(3, 8)},
           (("entity", "By the end of the challenge, how many {os} has each student who stayed read?",
             lambda a, b, c, d: b * d),
            ("unit", "By the end of the challenge, how many dozen {os} has the class read?",
             lambda a, b, c, d: _div((a - c) * b * d, 12)),
            ("step", "How many students take part in the challenge?", lambda a, b, c, d: a - c),
            ("person", "By the end of the challenge, how many {os} has {n2}'s class read?", lambda a, b, c, d: X),
            ("kin", "How many students does {n1}'s {xk} teach?", lambda a, b, c, d: X),
            ("object", "By the end of the challenge, how many {xos} has the class read?", lambda a, b, c, d: X)),
           READING, alt="{n1}'s {k1} teaches a class of {a} students, and {c} of them are away on a school trip for a "
           "whole reading challenge that lasts {d} weeks. Each of the other students reads {b} {os} a week. By the "
           "end of the challenge, how many {os} has the class read?", alt_kind="reorder",
           paraphrase="How many {os} does the class get through during the challenge?"),
    # 3 fresh
    Family("basketball_points", "{n1} plays basketball for {his1} school team, and {his1} {k1} keeps score. In "
           "Saturday's game {n1} makes {a} two-point shots, {b} three-pointers and {c} free throws worth one point "
           "each. How many points does {n1} score?",
           "two_pointers = {a}\nthree_pointers = {b}\nfree_throws = {c}\n"
           "print(2 * two_pointers + 3 * three_pointers + free_throws)",
           lambda a, b, c: 2 * a + 3 * b + c, {"a": R(3, 12), "b": R(2, 6), "c": R(2, 8)},
           (("entity", "How many points does {n1} score from three-pointers?", lambda a, b, c: 3 * b),
            ("unit", "How many shots does {n1} make?", lambda a, b, c: a + b + c),
            ("step", "How many points does {n1} score from two-point shots and three-pointers?",
             lambda a, b, c: 2 * a + 3 * b),
            ("person", "How many points does {n2} score?", lambda a, b, c: X),
            ("kin", "How many points does {n1}'s {xk} score?", lambda a, b, c: X)),
           alt="{n1}'s {k1} keeps score while {n1} plays basketball for {his1} school team. In Saturday's game {n1} "
           "makes {c} free throws worth one point each, {a} two-point shots and {b} three-pointers. How many points "
           "does {n1} score?", alt_kind="reorder", paraphrase="What is {n1}'s point total for the game?"),
    # 4 dev
    Family("garden_beds", "Behind the community hall, {a} garden beds are dug by {n1} and {his1} {k1}. Each bed "
           "measures {b} meters by {c} meters, and they plant {d} {os} on every square meter. How many {os} do they "
           "plant?",
           "beds = {a}\nlength = {b}\nwidth = {c}\nper_square_meter = {d}\n"
           "print(beds * length * width * per_square_meter)",
           lambda a, b, c, d: a * b * c * d, {"a": R(2, 6), "b": R(3, 9), "c": R(2, 4), "d": R(4, 12)},
           (("entity", "How many meters of edging go around one bed?", lambda a, b, c, d: 2 * (b + c)),
            ("unit", "How many square meters of beds do they dig?", lambda a, b, c, d: a * b * c),
            ("step", "How many {os} go in one bed?", lambda a, b, c, d: b * c * d),
            ("person", "How many {os} does {n2} plant?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} plant?", lambda a, b, c, d: X),
            ("object", "How many {xos} do they plant?", lambda a, b, c, d: X)),
           BED_PLANTS, alt="{n1} and {his1} {k1} dig {a} garden beds behind the community hall, each one {b} meters "
           "by {c} meters. On every square meter they plant {d} {os}. How many {os} do they plant?",
           paraphrase="What is the number of {os} that go into the beds?"),
    # 5 fresh
    Family("two_subscriptions", "{n1} pays {cs}{a} a month for a {o} subscription. {He1} also pays for a streaming "
           "service that {he1} shares with {his1} {k1}, which costs {cs}{b} a month, but {his1} {k1} pays half of "
           "that. How many {cw} does {n1} pay in {c} months?",
           "own = {a}\nstreaming = {b}\nmonths = {c}\nprint((own + streaming // 2) * months)",
           lambda a, b, c: (a + _div(b, 2)) * c, {"a": R(4, 15), "b": R(8, 30, 2), "c": R(3, 11)},
           (("entity", "How many {cw} does {n1}'s {k1} pay in {c} months?", lambda a, b, c: _div(b, 2) * c),
            ("unit", "How many {cw} does {n1} pay in {c} years?", lambda a, b, c: (a + _div(b, 2)) * c * 12),
            ("step", "How many {cw} does {n1} pay each month?", lambda a, b, c: a + _div(b, 2)),
            ("person", "How many {cw} does {n2} pay in {c} months?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay in {c} months?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay in {c} months?", lambda a, b, c: X),
            ("object", "How many {cw} does {n1} pay for the {xo} subscription in {c} months?", lambda a, b, c: X)),
           SUBSCRIPTIONS, alt="A streaming service costs {cs}{b} a month, and {n1} shares it with {his1} {k1}, who "
           "pays half. {n1} also pays {cs}{a} a month for a {o} subscription. How many {cw} does {n1} pay in {c} "
           "months?", alt_kind="reorder", paraphrase="Over {c} months, how much does {n1} spend on the two, in {cw}?"),
    # 6 dev
    Family("bake_sale_eggs", "{n1} and {his1} {k1} are baking {os} for the school bake sale. Each batch takes {a} eggs "
           "and makes {b} {os}, and they have {c} dozen eggs, so they bake until the eggs run out. They sell every "
           "one of them for {cs}{d}. How many {cw} do they raise?",
           "eggs_per_batch = {a}\nper_batch = {b}\ndozens = {c}\nprice = {d}\n"
           "print(dozens * 12 // eggs_per_batch * per_batch * price)",
           lambda a, b, c, d: _div(12 * c, a) * b * d, {"a": R(2, 4), "b": R(10, 24, 2), "c": R(2, 5), "d": R(2, 5)},
           (("entity", "How many eggs do they have?", lambda a, b, c, d: 12 * c),
            ("unit", "How many cents do they raise?", lambda a, b, c, d: _div(12 * c, a) * b * d * 100),
            ("step", "How many batches do they bake?", lambda a, b, c, d: _div(12 * c, a)),
            ("person", "How many {cw} does {n2} raise?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} bake?", lambda a, b, c, d: X),
            ("currency", "How many {xw} do they raise?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the {xos} raise?", lambda a, b, c, d: X)),
           SALE_BAKES, alt="{n1} and {his1} {k1} have {c} dozen eggs for baking {os} for the school bake sale. Each "
           "batch of {b} {os} takes {a} eggs, and they bake until the eggs run out. They sell every one of them for "
           "{cs}{d}. How many {cw} do they raise?", alt_kind="reorder",
           paraphrase="How much money, in {cw}, does the bake sale bring them?"),
    # 7 fresh
    Family("bookshop_stock", "{n1} runs a small bookshop with {his1} {k1}. The shop starts the month with {a} {os} in "
           "stock, and a delivery of {c} more comes in the second week, but {b} are sold every week for four weeks. "
           "At the end of the month, how many {os} are left in stock?",
           "stock = {a}\nweekly_sales = {b}\ndelivered = {c}\nprint(stock + delivered - weekly_sales * 4)",
           lambda a, b, c: a + c - 4 * b, {"a": R(40, 90), "b": R(6, 15), "c": R(10, 30)},
           (("entity", "How many {os} does the shop sell in the month?", lambda a, b, c: 4 * b),
            ("unit", "At the end of the month, how many boxes of {os} are left in stock?", lambda a, b, c: X),
            ("step", "How many {os} does the shop have for sale in the month?", lambda a, b, c: a + c),
            ("person", "At the end of the month, how many {os} are left in {n2}'s bookshop?", lambda a, b, c: X),
            ("kin", "How many {os} does {n1}'s {xk} sell?", lambda a, b, c: X),
            ("object", "At the end of the month, how many {xos} are left in stock?", lambda a, b, c: X)),
           SHOP_BOOKS, alt="Every week for four weeks {b} {os} are sold at the small bookshop {n1} runs with {his1} "
           "{k1}. It starts the month with {a} of them in stock, and a delivery of {c} more comes in the second "
           "week. At the end of the month, how many {os} are left in stock?", alt_kind="reorder",
           paraphrase="How many {os} does the shop still have when the month ends?"),
    # 8 dev
    Family("dinner_tip", "{n1} takes {his1} {k1} out for dinner. Their two meals cost {cs}{a} and {cs}{b}, and they "
           "share a {o} that costs {cs}{c}. When the bill comes, {n1} adds a tip of {d}% on top. How many {cw} does "
           "{n1} pay in all?",
           "meal_one = {a}\nmeal_two = {b}\nshared = {c}\ntip_pct = {d}\nbill = meal_one + meal_two + shared\n"
           "print(bill + bill * tip_pct // 100)",
           lambda a, b, c, d: (a + b + c) + _div((a + b + c) * d, 100),
           {"a": R(12, 40), "b": R(12, 40), "c": R(4, 12), "d": R(10, 20, 5)},
           (("entity", "How many {cw} do the two meals cost?", lambda a, b, c, d: a + b),
            ("unit", "How many cents does {n1} pay in all?",
             lambda a, b, c, d: ((a + b + c) + _div((a + b + c) * d, 100)) * 100),
            ("step", "How many {cw} is the tip?", lambda a, b, c, d: _div((a + b + c) * d, 100)),
            ("person", "How many {cw} does {n2} pay in all?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does the meal of {n1}'s {xk} cost?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay in all?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the {xo} cost?", lambda a, b, c, d: X)),
           SHARED_PLATES, alt="{n1} takes {his1} {k1} out for dinner, where their two meals cost {cs}{a} and {cs}{b}. "
           "They also share a {o} for {cs}{c}. {n1} adds a tip of {d}% when the bill comes. How many {cw} does {n1} "
           "pay in all?", paraphrase="What does the dinner cost {n1}, tip included, in {cw}?"),
    # 9 fresh
    Family("pack_savings", "At the market, {os} cost {cs}{c} each, or {cs}{b} for a pack of {a}. {n1} buys {d} packs "
           "for {his1} {k1}'s cafe instead of buying them one at a time. How many {cw} does {n1} save?",
           "per_pack = {a}\npack_price = {b}\nsingle_price = {c}\npacks = {d}\n"
           "print(packs * (per_pack * single_price - pack_price))",
           lambda a, b, c, d: d * (a * c - b), {"a": R(4, 12), "b": R(10, 40), "c": R(2, 6), "d": R(2, 8)},
           (("entity", "How many {cw} would the {os} cost one at a time?", lambda a, b, c, d: d * a * c),
            ("unit", "How many cents does {n1} save?", lambda a, b, c, d: d * (a * c - b) * 100),
            ("step", "How many {cw} does one pack save?", lambda a, b, c, d: a * c - b),
            ("person", "How many {cw} does {n2} save?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} save?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} save?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} save on {xos}?", lambda a, b, c, d: X)),
           MARKET_PACKS, alt="{n1} buys {d} packs of {os} for {his1} {k1}'s cafe instead of buying them one at a "
           "time. A pack of {a} costs {cs}{b} at the market, while a single one costs {cs}{c}. How many {cw} does "
           "{n1} save?", alt_kind="reorder", paraphrase="By buying packs, how much money does {n1} save, in {cw}?"),
    # 10 dev
    Family("saving_for_a_wish", "{n1} wants a {o} that costs {cs}{a}. {He1} already has {cs}{b}. Every month {he1} "
           "saves {cs}{c} from {his1} paper round, and {his1} {k1} adds {cs}{d}. If nothing else changes, how many "
           "months will it take {n1} to have enough?",
           "price = {a}\nsaved = {b}\nmonthly = {c}\nfrom_kin = {d}\nprint((price - saved) // (monthly + from_kin))",
           lambda a, b, c, d: _div(a - b, c + d),
           {"a": R(200, 600, 20), "b": R(20, 100, 10), "c": R(15, 40, 5), "d": R(10, 30, 5)},
           (("entity", "How many {cw} does {n1}'s {k1} add over the whole time?",
             lambda a, b, c, d: _div(a - b, c + d) * d),
            ("unit", "If nothing else changes, how many weeks will it take {n1} to have enough?",
             lambda a, b, c, d: X),
            ("step", "How many {cw} does {n1} still need?", lambda a, b, c, d: a - b),
            ("person", "If nothing else changes, how many months will it take {n2} to have enough?",
             lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} add each month?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} still need?", lambda a, b, c, d: X),
            ("object", "If nothing else changes, how many months will it take {n1} to afford a {xo}?",
             lambda a, b, c, d: X)),
           WISHES, alt="{n1} wants a {o} that costs {cs}{a} and already has {cs}{b}. Every month {he1} saves {cs}{c} "
           "from {his1} paper round while {his1} {k1} adds {cs}{d}. If nothing else changes, how many months will "
           "it take {n1} to have enough?", paraphrase="For how many months must {n1} keep saving to afford the {o}?"),
    # 11 fresh
    Family("library_late_fees", "{n1} borrows {a} {os} from the town library for {his1} {k1}. They are due back "
           "after {b} days, but {n1} keeps them for {c} days. The library charges {d} {cw} a day for each late item. "
           "How many {cw} does {n1} pay in late fees?",
           "items = {a}\nloan_days = {b}\nkept_days = {c}\ndaily_fee = {d}\n"
           "print(items * (kept_days - loan_days) * daily_fee)",
           lambda a, b, c, d: a * (c - b) * d, {"a": R(2, 7), "b": R(7, 21, 7), "c": R(9, 30), "d": R(2, 5)},
           (("entity", "How many {cw} does {n1} pay in late fees for one of the {os}?",
             lambda a, b, c, d: (c - b) * d),
            ("unit", "How many cents does {n1} pay in late fees?", lambda a, b, c, d: a * (c - b) * d * 100),
            ("step", "How many days late are the {os}?", lambda a, b, c, d: c - b),
            ("person", "How many {cw} does {n2} pay in late fees?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1} borrow for {his1} {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay in late fees?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} pay in late fees for the {xos}?", lambda a, b, c, d: X)),
           LOANS, alt="The town library charges {d} {cw} a day for each late item. {n1} borrows {a} {os} there for "
           "{his1} {k1} and keeps them for {c} days, but they are due back after {b} days. How many {cw} does {n1} "
           "pay in late fees?", alt_kind="reorder", paraphrase="What do the late fees come to, in {cw}?"),
    # 12 dev
    Family("swim_lesson_drives", "Twice a week, {n1} drives {his1} {k1} to swimming lessons and waits at the pool. "
           "Each lesson lasts {a} minutes, while the drive takes {b} minutes each way. How many hours does {n1} spend "
           "on this in {c} weeks?",
           "lesson = {a}\ndrive = {b}\nweeks = {c}\nprint(2 * (lesson + 2 * drive) * weeks // 60)",
           lambda a, b, c: _div(2 * (a + 2 * b) * c, 60), {"a": R(30, 60, 5), "b": R(10, 30, 5), "c": R(3, 12)},
           (("entity", "How many minutes does {n1}'s {k1} spend in the pool in {c} weeks?",
             lambda a, b, c: 2 * a * c),
            ("unit", "How many minutes does {n1} spend on this in {c} weeks?", lambda a, b, c: 2 * (a + 2 * b) * c),
            ("step", "How many minutes does one lesson day take {n1}?", lambda a, b, c: a + 2 * b),
            ("person", "How many hours does {n2} spend on this in {c} weeks?", lambda a, b, c: X),
            ("kin", "How many hours does {n1}'s {xk} spend in the pool in {c} weeks?", lambda a, b, c: X)),
           alt="{n1} drives {his1} {k1} to swimming lessons twice a week and waits at the pool. The drive takes {b} "
           "minutes each way, and each lesson lasts {a} minutes. How many hours does {n1} spend on this in {c} "
           "weeks?", alt_kind="reorder", paraphrase="In {c} weeks, how much of {n1}'s time does this take, in hours?"),
    # 13 fresh
    Family("harvest_fair_weights", "At the harvest fair, the {o} grown by {n1} weighs {a} kilograms. The one grown by "
           "{his1} {k1} weighs twice as much, but {n2}'s {o} weighs {b} kilograms less than the {k1}'s. How many "
           "kilograms do the three {os} weigh together?",
           "mine = {a}\nless = {b}\nkin = 2 * mine\nprint(mine + kin + kin - less)",
           lambda a, b: 5 * a - b, {"a": R(8, 40), "b": R(2, 12)},
           (("entity", "How many kilograms does the {o} of {n1}'s {k1} weigh?", lambda a, b: 2 * a),
            ("unit", "How many grams do the three {os} weigh together?", lambda a, b: (5 * a - b) * 1000),
            ("step", "How many kilograms do the {os} of {n1} and {his1} {k1} weigh together?", lambda a, b: 3 * a),
            ("person", "How many kilograms does {n2}'s {o} weigh?", lambda a, b: 2 * a - b),
            ("kin", "How many kilograms does the {o} of {n1}'s {xk} weigh?", lambda a, b: X),
            ("object", "How many kilograms do the three {xos} weigh together?", lambda a, b: X)),
           PRIZE_VEG, alt="{n1}'s {k1} grows a {o} for the harvest fair that weighs twice as much as {n1}'s, which "
           "weighs {a} kilograms. {n2}'s {o} weighs {b} kilograms less than the {k1}'s. How many kilograms do the "
           "three {os} weigh together?", alt_kind="reorder",
           paraphrase="What is the combined weight of the three {os}, in kilograms?"),
    # 14 dev
    Family("school_trip_costs", "{n1}'s {k1} is organizing a school trip to the {o} for {a} students and {b} "
           "teachers. Buses that hold {c} people each are hired for {cs}{d} apiece, and tickets cost {cs}{e} per "
           "student, while teachers get in free. How many {cw} does the trip cost the school?",
           "students = {a}\nteachers = {b}\nseats = {c}\nbus_price = {d}\nticket = {e}\n"
           "print((students + teachers) // seats * bus_price + students * ticket)",
           lambda a, b, c, d, e: _div(a + b, c) * d + a * e,
           {"a": R(40, 120), "b": R(4, 10), "c": R(20, 50, 10), "d": R(150, 400, 50), "e": R(5, 15)},
           (("entity", "How many {cw} do the students' tickets cost?", lambda a, b, c, d, e: a * e),
            ("unit", "How many cents does the trip cost the school?",
             lambda a, b, c, d, e: (_div(a + b, c) * d + a * e) * 100),
            ("step", "How many buses are hired?", lambda a, b, c, d, e: _div(a + b, c)),
            ("person", "How many {cw} does the trip {n2} organizes cost the school?", lambda a, b, c, d, e: X),
            ("kin", "How many {cw} does the trip organized by {n1}'s {xk} cost?", lambda a, b, c, d, e: X),
            ("currency", "How many {xw} does the trip cost the school?", lambda a, b, c, d, e: X),
            ("object", "How many {cw} does the trip to the {xo} cost the school?", lambda a, b, c, d, e: X)),
           TRIP_PLACES, alt="Tickets to the {o} cost {cs}{e} per student, while teachers get in free. {n1}'s {k1} is "
           "organizing a school trip there for {a} students and {b} teachers, and buses that hold {c} people each "
           "are hired for {cs}{d} apiece. How many {cw} does the trip cost the school?", alt_kind="reorder",
           paraphrase="What is the total cost of the trip to the school, in {cw}?"),
    # 15 fresh
    Family("ferry_crossing", "{n1} and {his1} {k1} take the ferry to the island with {b} children. An adult ticket "
           "costs {cs}{a}, a child's ticket costs half as much, and bringing a {o} on board costs {cs}{c} more. How "
           "many {cw} does the crossing cost them?",
           "adult = {a}\nchildren = {b}\nextra = {c}\nprint(2 * adult + children * adult // 2 + extra)",
           lambda a, b, c: 2 * a + b * _div(a, 2) + c, {"a": R(8, 30, 2), "b": R(2, 5), "c": R(5, 20)},
           (("entity", "How many {cw} do the children's tickets cost?", lambda a, b, c: b * _div(a, 2)),
            ("unit", "How many cents does the crossing cost them?", lambda a, b, c: (2 * a + b * _div(a, 2) + c) * 100),
            ("step", "How many {cw} do the two adult tickets cost?", lambda a, b, c: 2 * a),
            ("person", "How many {cw} does the crossing cost {n2}?", lambda a, b, c: X),
            ("kin", "How many {cw} does the ticket of {n1}'s {xk} cost?", lambda a, b, c: X),
            ("currency", "How many {xw} does the crossing cost them?", lambda a, b, c: X),
            ("object", "How many {cw} more does bringing a {xo} on board cost?", lambda a, b, c: X)),
           FERRY_CARGO, alt="An adult ferry ticket to the island costs {cs}{a}, and a child's ticket costs half as "
           "much. {n1} and {his1} {k1} take the ferry with {b} children, and they bring a {o} on board for {cs}{c} "
           "more. How many {cw} does the crossing cost them?", alt_kind="reorder",
           paraphrase="What do they pay in all for the crossing, in {cw}?"),
    # 16 dev
    Family("league_points", "{n1}'s {k1} coaches a youth football team that plays {a} games this season. The team "
           "loses {b} games and draws {c}, but it wins all the others. A win earns three points and a draw earns "
           "one. How many points does the team finish the season with?",
           "games = {a}\nlosses = {b}\ndraws = {c}\nwins = games - losses - draws\nprint(3 * wins + draws)",
           lambda a, b, c: 3 * (a - b - c) + c, {"a": R(14, 30), "b": R(2, 8), "c": R(2, 7)},
           (("entity", "How many games does the team not lose?", lambda a, b, c: a - b),
            ("unit", "How many goals does the team score this season?", lambda a, b, c: X),
            ("step", "How many games does the team win?", lambda a, b, c: a - b - c),
            ("person", "How many points does the team {n2} coaches finish the season with?", lambda a, b, c: X),
            ("kin", "How many points does the team of {n1}'s {xk} finish the season with?", lambda a, b, c: X)),
           alt="A win earns three points and a draw earns one in the youth football league. {n1}'s {k1} coaches a "
           "team there that plays {a} games this season, loses {b} and draws {c}, winning all the others. How many "
           "points does the team finish the season with?", alt_kind="reorder",
           paraphrase="What is the team's points total at the end of the season?"),
    # 17 fresh
    Family("bakery_flour", "{n1}'s {k1} runs a small bakery. Each of the {os} there takes {a} grams of flour, and a "
           "sack of flour holds {b} kilograms. On Friday {n1} helps bake {c} sacks of flour into {os}, and every one "
           "of them is sold for {d} {cw}. How many {cw} does the bakery make from them?",
           "grams_each = {a}\nsack_kg = {b}\nsacks = {c}\nprice = {d}\n"
           "print(sacks * sack_kg * 1000 // grams_each * price)",
           lambda a, b, c, d: _div(c * b * 1000, a) * d,
           {"a": R(50, 250, 25), "b": R(10, 25, 5), "c": R(2, 4), "d": R(2, 6)},
           (("entity", "How many kilograms of flour go into the {os}?", lambda a, b, c, d: b * c),
            ("unit", "How many cents does the bakery make from them?",
             lambda a, b, c, d: _div(c * b * 1000, a) * d * 100),
            ("step", "How many {os} are baked on Friday?", lambda a, b, c, d: _div(c * b * 1000, a)),
            ("person", "How many {cw} does {n2}'s bakery make from them?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does the bakery of {n1}'s {xk} make?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the bakery make from them?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the bakery make from {xos}?", lambda a, b, c, d: X)),
           BREADS, alt="A sack of flour holds {b} kilograms, and each of the {os} at the small bakery {n1}'s {k1} "
           "runs takes {a} grams of it. On Friday {n1} helps bake {c} sacks of flour into {os}, and every one of them "
           "is sold for {d} {cw}. How many {cw} does the bakery make from them?", alt_kind="reorder",
           paraphrase="How much money, in {cw}, do the Friday {os} bring in?"),
    # 18 dev
    Family("tip_jar_split", "{n1} waits tables at {his1} {k1}'s restaurant. The tip jar collects {cs}{a} on Friday "
           "and {cs}{b} on Saturday, but nobody keeps their own tips: the total is split equally among the {c} "
           "people on staff. How many {cw} does {n1} get?",
           "friday = {a}\nsaturday = {b}\nstaff = {c}\nprint((friday + saturday) // staff)",
           lambda a, b, c: _div(a + b, c), {"a": R(60, 200, 10), "b": R(120, 300, 10), "c": R(3, 9)},
           (("entity", "How many more {cw} does the tip jar collect on Saturday than on Friday?",
             lambda a, b, c: b - a),
            ("unit", "How many cents does {n1} get?", lambda a, b, c: _div(a + b, c) * 100),
            ("step", "How many {cw} does the tip jar collect over the two days?", lambda a, b, c: a + b),
            ("person", "How many {cw} does {n2} get?", lambda a, b, c: X),
            ("kin", "How many {cw} does the tip jar at the restaurant of {n1}'s {xk} collect?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} get?", lambda a, b, c: X)),
           alt="The tips at {n1}'s {k1}'s restaurant are split equally among the {c} people on staff, and {n1} waits "
           "tables there. The tip jar collects {cs}{a} on Friday and {cs}{b} on Saturday. How many {cw} does {n1} "
           "get?", alt_kind="reorder", paraphrase="What is {n1}'s share of the tips, in {cw}?"),
    # 19 fresh
    Family("patio_tiles", "{n1} and {his1} {k1} are laying a patio that measures {a} meters by {b} meters. Each of "
           "the {os} they use covers half a square meter and costs {cs}{c}, and they buy {d} extra in case some crack. "
           "How many {cw} do the {os} cost?",
           "length = {a}\nwidth = {b}\nprice = {c}\nspare = {d}\nprint((length * width * 2 + spare) * price)",
           lambda a, b, c, d: (2 * a * b + d) * c, {"a": R(3, 8), "b": R(2, 6), "c": R(2, 9), "d": R(3, 10)},
           (("entity", "How many square meters is the patio?", lambda a, b, c, d: a * b),
            ("unit", "How many cents do the {os} cost?", lambda a, b, c, d: (2 * a * b + d) * c * 100),
            ("step", "How many {os} do they buy?", lambda a, b, c, d: 2 * a * b + d),
            ("person", "How many {cw} does {n2} spend on {os}?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} spend on {os}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} do the {os} cost?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the {xos} cost?", lambda a, b, c, d: X)),
           PAVING, alt="Each of the {os} for the patio costs {cs}{c} and covers half a square meter. {n1} and {his1} "
           "{k1} are laying it over {a} meters by {b} meters, and they buy {d} extra in case some crack. How "
           "many {cw} do the {os} cost?", alt_kind="reorder", paraphrase="How much do they spend on {os}, in {cw}?"),
    # 20 dev
    Family("bowling_night", "At bowling night, {n1} scores {a} points in the first game and {b} points more than that "
           "in the second. {His1} {k1} scores {c} points in each of the two games. How many more points does {n1} "
           "score over the two games than {his1} {k1}?",
           "first_game = {a}\nmore = {b}\nkin_each = {c}\nprint(first_game + first_game + more - 2 * kin_each)",
           lambda a, b, c: 2 * a + b - 2 * c, {"a": R(90, 160), "b": R(5, 30), "c": R(80, 150)},
           (("entity", "How many points does {n1}'s {k1} score over the two games?", lambda a, b, c: 2 * c),
            ("unit", "On average, how many more points a game does {n1} score than {his1} {k1}?",
             lambda a, b, c: _div(2 * a + b - 2 * c, 2)),
            ("step", "How many points does {n1} score in the second game?", lambda a, b, c: a + b),
            ("person", "How many more points does {n2} score over the two games than {n1}'s {k1}?",
             lambda a, b, c: X),
            ("kin", "How many points does {n1}'s {xk} score in each game?", lambda a, b, c: X)),
           alt="{n1}'s {k1} scores {c} points in each of two games at bowling night. {n1} scores {a} points in the "
           "first game and {b} points more than that in the second. How many more points does {n1} score over the "
           "two games than {his1} {k1}?", alt_kind="reorder",
           paraphrase="Over the two games, by how many points does {n1} beat {his1} {k1}?"),
    # 21 fresh
    Family("storeroom_stock", "The corner shop where {n1} works with {his1} {k1} receives {a} boxes of {os}, with {b} "
           "in each box. {n1} puts {c} of them on each of {d} shelves, and the rest are carried to the storeroom. "
           "How many {os} end up in the storeroom?",
           "boxes = {a}\nper_box = {b}\nper_shelf = {c}\nshelves = {d}\nprint(boxes * per_box - per_shelf * shelves)",
           lambda a, b, c, d: a * b - c * d, {"a": R(4, 12), "b": R(12, 24), "c": R(6, 15), "d": R(3, 6)},
           (("entity", "How many {os} go on the shelves?", lambda a, b, c, d: c * d),
            ("unit", "How many boxes of {os} end up in the storeroom?", lambda a, b, c, d: _div(a * b - c * d, b)),
            ("step", "How many {os} does the shop receive?", lambda a, b, c, d: a * b),
            ("person", "How many {os} end up in the storeroom of {n2}'s shop?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} put on the shelves?", lambda a, b, c, d: X),
            ("object", "How many {xos} end up in the storeroom?", lambda a, b, c, d: X)),
           SHELF_GOODS, alt="{n1} works at a corner shop with {his1} {k1}, and the shop receives {a} boxes of {os} "
           "with {b} in each box. The rest are carried to the storeroom after {n1} puts {c} of them on each of {d} "
           "shelves. How many {os} end up in the storeroom?", alt_kind="reorder",
           paraphrase="What number of {os} goes to the storeroom?"),
    # 22 dev
    Family("shared_taxi", "A taxi charges {cs}{a} as soon as you get in, plus {cs}{b} for every kilometer. {n1} takes "
           "one to the {o} with {his1} {k1}, a ride of {c} kilometers, and they split the fare in half. How many {cw} "
           "does {n1} pay?",
           "start_fee = {a}\nper_km = {b}\nkilometers = {c}\nprint((start_fee + per_km * kilometers) // 2)",
           lambda a, b, c: _div(a + b * c, 2), {"a": R(3, 9), "b": R(2, 5), "c": R(4, 25)},
           (("entity", "How many {cw} of the fare is for the kilometers?", lambda a, b, c: b * c),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c: _div(a + b * c, 2) * 100),
            ("step", "How many {cw} is the whole fare?", lambda a, b, c: a + b * c),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c: X),
            ("object", "How many {cw} does {n1} pay for the ride to the {xo}?", lambda a, b, c: X)),
           TAXI_STOPS, alt="{n1} takes a taxi {c} kilometers to the {o} with {his1} {k1}, and they split the fare in "
           "half. The taxi charges {cs}{a} as soon as you get in, plus {cs}{b} for every kilometer. How many {cw} "
           "does {n1} pay?", alt_kind="reorder", paraphrase="What is {n1}'s half of the fare, in {cw}?"),
    # 23 fresh
    Family("choir_robes", "{n1}'s {k1} runs the school choir, which has {a} singers. Every singer needs a {o} that "
           "costs {cs}{b}. The school pays a third of the cost, so the families pay the rest. How many {cw} do the "
           "families pay in all?",
           "singers = {a}\nprice = {b}\ncost = singers * price\nprint(cost - cost // 3)",
           lambda a, b: a * b - _div(a * b, 3), {"a": R(18, 45), "b": R(6, 24)},
           (("entity", "How many {cw} does the school pay?", lambda a, b: _div(a * b, 3)),
            ("unit", "How many cents do the families pay in all?", lambda a, b: (a * b - _div(a * b, 3)) * 100),
            ("step", "How many {cw} do the {os} cost in all?", lambda a, b: a * b),
            ("person", "How many {cw} do the families in {n2}'s choir pay in all?", lambda a, b: X),
            ("kin", "How many singers are in the choir {n1}'s {xk} runs?", lambda a, b: X),
            ("currency", "How many {xw} do the families pay in all?", lambda a, b: X),
            ("object", "How many {cw} do the families pay for the {xos} in all?", lambda a, b: X)),
           CHOIR_WEAR, alt="Every singer in the school choir that {n1}'s {k1} runs needs a {o} that costs {cs}{b}, "
           "and the choir has {a} singers. The school pays a third of the cost, so the families pay the rest. How "
           "many {cw} do the families pay in all?", alt_kind="reorder",
           paraphrase="Altogether, what is the families' share of the cost, in {cw}?"),
)


POOL = Pool(POOL4_FAMILIES, POOLS, SEED, half_of, (DEV_NAME, HELD_OUT_NAME))
pool_instances, half_families, build, pool_problems = POOL.instances, POOL.half_families, POOL.build, POOL.problems


def main() -> None:
    POOL.write()


if __name__ == "__main__":
    main()
