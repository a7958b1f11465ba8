"""An eighth pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL8_FAMILIES` even -> `varied-dev8` (the
development half, to tune on in a later session), odd -> `varied-fresh8` (held out: nobody tunes on it, it is run
once at the end). The draw's seed is SEED = 9063. The families are to be written without running the flywheel, the
router, the alignment or `kvgraft bench flywheel` on either half and without reading the alignment's, transfer's,
structure's, router's or parameterizer's rules.

Written on 2026-12-05 by a helper session, without running the flywheel, the router, the alignment or `kvgraft bench
flywheel` on either half and without reading the alignment's, transfer's, structure's, router's or parameterizer's
rules (nor their tests, tests/fixtures/review*_cases.py, docs/FLYWHEEL.md, docs/BENCHMARKS.md or anything under
workers/); only this module's own soundness check, ruff and the pool tests were run.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the families of bench/flywheel_data.py, bench/flywheel_gsm_data.py,
bench/flywheel_varied_data.py, bench/flywheel_fresh_data.py or bench/flywheel_pool2_data.py .. flywheel_pool7_data.py,
whose machinery they reuse by import (Family, the draw with the written-number redraw, one-slot `edit_*` rows, near
misses of every kind, `problems()`; read bench/flywheel_varied_data.py's and bench/flywheel_fresh_data.py's docstrings
for the rows). Situations no earlier pool has: a photo booth hired by the hour for a wedding with print strips on top,
an ironing service run from a spare room, a riverside campsite's pitch, per-person and electricity prices, a nail
salon's manicures and longer pedicures, a piano tuner who tunes a relative's piano for free and pays for petrol, a
cobbler's resoling and cheaper new heels, a dairy farm's cows milked twice a day and paid for every ten liters, a
three-tier wedding cake cut into slices for the guests, a generator's diesel during a power cut, exam papers marked
after a colleague takes a quarter, a cat sitter's two visits a day and the cat food paid back, tea picked a quarter
slower in the afternoon heat, a vineyard's rows of grapes made into cases of wine, ski passes a third cheaper for
children with equipment hire, conveyor belt sushi plates split evenly, an escape room with a group discount, a
farrier's horseshoes every few weeks, babysitting paid double after midnight, calligraphy envelopes for a wedding with
a family discount, cracked phone screens fixed at a market stall, an ice cream van's single and double cones, a
band's merchandise stand with a share of the takings, a hot air balloon's weekend flights and a supermarket's bottle
and can return machine; questions that open with a clause ("If each of the {c} guests eats one slice, how many ...",
"How much profit, in {cw}, ...", "Over {d} weeks, what ..."), statements joined with "and", "but", "so", "while" or
relative clauses ("whose {a} {os} each need", "which {he1} fixes for just the price of the screen"), opening phrases
and participles ("Charging {cs}{c} a shoe, ...", "Paid {cs}{a} for every kilogram of leaves, ...", "During a power
cut, ..."), numbers as words where people write them so ("twice a day", "half", "a third less", "a quarter less",
"three times as many", "four shoes", "every ten liters", "only once"); new names (one word, two words, hyphenated), kin
and role nouns ("great-nephew", "younger brother", "foster daughter", "second cousin", "football coach", "line
manager"), objects of one to eight words, and new currencies (Ar ariary, G gourdes, D dalasis, лв leva, UM ouguiyas, VT
vatu) by sign and by word.

    python -m bench.flywheel_pool8_data   # rewrites bench/data/flywheel-varied-{dev8,fresh8}-{library,eval}.jsonl
"""

from __future__ import annotations

from bench.flywheel_fresh_data import Pools
from bench.flywheel_gsm_data import _div
from bench.flywheel_pool import Pool
from bench.flywheel_pool7_data import POOL7_CURRENCIES, POOL7_KIN, POOL7_NAMES
from bench.flywheel_varied_data import NO_ANSWER, Family, R

DEV_NAME, HELD_OUT_NAME = "varied-dev8", "varied-fresh8"
SEED = 9063


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME

POOL8_NAMES = POOL7_NAMES + tuple((n, "f") for n in (
    "Nokuthula", "Ji-woo", "Thanh Huong", "Aigul", "Magdalena", "Isabel Cristina", "Sigrid", "Marama", "Chinwe",
    "Yasmin", "Pooja", "Anne-Marie")) + tuple((n, "m") for n in (
        "Kaito", "Ayodele", "Thabo", "Nurlan", "Gustavo", "Jean-Claude", "Min-jun", "Hoang Nam", "Rangi", "Mustafa",
        "Ilkka", "José Antonio"))
POOL8_KIN = POOL7_KIN + ("great-nephew", "younger brother", "foster daughter", "second cousin", "football coach",
                         "art teacher", "teammate", "line manager", "nanny", "pastor", "apprentice", "older cousin")
POOL8_CURRENCIES = POOL7_CURRENCIES + (("Ar", "ariary"), ("G", "gourdes"), ("D", "dalasis"), ("лв", "leva"),
                                       ("UM", "ouguiyas"), ("VT", "vatu"))
POOLS = Pools(POOL8_NAMES, POOL8_KIN, POOL8_CURRENCIES)

PHOTO_BOOTHS = (("photo booth", "photo booths"), ("selfie mirror", "selfie mirrors"),
                ("retro photo booth", "retro photo booths"),
                ("booth with a green screen", "booths with a green screen"),
                ("vintage camper van photo booth", "vintage camper van photo booths"),
                ("mirror booth with a bag of props", "mirror booths with a bag of props"))
IRONING = (("shirt", "shirts"), ("blouse", "blouses"), ("pair of trousers", "pairs of trousers"),
           ("bed sheet", "bed sheets"), ("white school shirt", "white school shirts"),
           ("long linen tablecloth", "long linen tablecloths"))
PIANOS = (("piano", "pianos"), ("upright piano", "upright pianos"), ("grand piano", "grand pianos"),
          ("baby grand piano", "baby grand pianos"),
          ("tall old German upright piano", "tall old German upright pianos"))
FOOTWEAR = (("boots", "boots"), ("shoes", "shoes"), ("work boots", "work boots"), ("riding boots", "riding boots"),
            ("leather dress shoes", "leather dress shoes"),
            ("brown leather hiking boots", "brown leather hiking boots"))
CAKES = (("chocolate", "chocolate"), ("lemon", "lemon"), ("carrot", "carrot"), ("red velvet", "red velvet"),
         ("vanilla and raspberry", "vanilla and raspberry"), ("dark chocolate and orange", "dark chocolate and orange"))
PREMISES = (("shop", "shops"), ("bakery", "bakeries"), ("corner shop", "corner shops"), ("guest house", "guest houses"),
            ("small family restaurant", "small family restaurants"), ("dental surgery", "dental surgeries"))
SUBJECTS = (("maths", "maths"), ("history", "history"), ("chemistry", "chemistry"),
            ("English literature", "English literature"), ("end-of-year geography", "end-of-year geography"),
            ("modern foreign languages", "modern foreign languages"))
CAT_SUPPLIES = (("catnip toy", "catnip toys"), ("tin of cat food", "tins of cat food"),
                ("bag of cat litter", "bags of cat litter"), ("scratching post", "scratching posts"),
                ("box of cat treats", "boxes of cat treats"), ("big sack of dry cat food", "big sacks of dry cat food"))
WINES = (("wine", "wines"), ("red wine", "red wines"), ("sparkling wine", "sparkling wines"),
         ("dry white wine", "dry white wines"), ("sweet dessert wine", "sweet dessert wines"),
         ("light fruity red wine", "light fruity red wines"))
SKI_HIRE = (("snowboard", "snowboards"), ("sledge", "sledges"), ("pair of skis", "pairs of skis"),
            ("ski helmet", "ski helmets"), ("pair of ski boots", "pairs of ski boots"),
            ("set of skis and poles", "sets of skis and poles"))
HORSES = (("horse", "horses"), ("pony", "ponies"), ("cob", "cobs"), ("riding pony", "riding ponies"),
          ("Shetland pony", "Shetland ponies"), ("big grey show jumper", "big grey show jumpers"))
PHONES = (("phone", "phones"), ("tablet", "tablets"), ("smartphone", "smartphones"),
          ("folding phone", "folding phones"), ("second-hand iPhone", "second-hand iPhones"),
          ("cheap Android phone", "cheap Android phones"))
FLAVORS = (("vanilla", "vanilla"), ("pistachio", "pistachio"), ("strawberry", "strawberry"),
           ("salted caramel", "salted caramel"), ("mint choc chip", "mint choc chip"),
           ("chocolate fudge brownie", "chocolate fudge brownie"))
MERCH = (("T-shirt", "T-shirts"), ("hoodie", "hoodies"), ("tote bag", "tote bags"), ("baseball cap", "baseball caps"),
         ("signed vinyl record", "signed vinyl records"), ("tour shirt with the dates on the back",
                                                          "tour shirts with the dates on the back"))
EMPTIES = (("can", "cans"), ("bottle", "bottles"), ("drink can", "drink cans"),
           ("glass beer bottle", "glass beer bottles"), ("plastic water bottle", "plastic water bottles"),
           ("small fizzy drink bottle", "small fizzy drink bottles"))

X = NO_ANSWER
POOL8_FAMILIES: tuple[Family, ...] = (
    # 0 dev
    Family("photo_booth_hire", "For {his1} {k1}'s wedding, {n1} books a {o} that costs {cs}{b} an hour and keeps it "
           "for {a} hours. The guests print {c} photo strips, and each strip costs {cs}{d} extra. How many {cw} does "
           "the {o} cost {n1} altogether?",
           "hours = {a}\nhourly = {b}\nstrips = {c}\nprice = {d}\nprint(hours * hourly + strips * price)",
           lambda a, b, c, d: a * b + c * d, {"a": R(2, 6), "b": R(40, 120, 10), "c": R(20, 90, 5), "d": R(2, 7)},
           (("entity", "How many {cw} do the photo strips cost?", lambda a, b, c, d: c * d),
            ("unit", "How many cents does the {o} cost {n1} altogether?", lambda a, b, c, d: (a * b + c * d) * 100),
            ("step", "How many {cw} does the hire alone cost?", lambda a, b, c, d: a * b),
            ("person", "How many {cw} does the {o} cost {n2} altogether?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for the {o}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the {o} cost {n1} altogether?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the {xo} cost {n1} altogether?", lambda a, b, c, d: X)),
           PHOTO_BOOTHS, alt="At {cs}{b} an hour, the {o} that {n1} hires for {his1} {k1}'s wedding runs for {a} "
           "hours, and the guests print {c} photo strips at {cs}{d} extra each. How many {cw} does the {o} cost {n1} "
           "altogether?", alt_kind="reorder", paraphrase="Altogether, what does {n1} pay for the {o}, in {cw}?"),
    # 1 fresh
    Family("ironing_service", "{n1} runs an ironing service from {his1} {k1}'s spare room and charges {cs}{a} for "
           "each {o}. On Monday {he1} irons {b} {os}, and on each of the next {c} days {he1} irons {d} fewer than on "
           "Monday. How many {cw} does {n1} earn over those days?",
           "price = {a}\nmonday = {b}\ndays = {c}\nfewer = {d}\nprint(price * (monday + days * (monday - fewer)))",
           lambda a, b, c, d: a * (b + c * (b - d)), {"a": R(2, 6), "b": R(15, 40), "c": R(2, 5), "d": R(3, 10)},
           (("entity", "How many {os} does {n1} iron on each of the next {c} days?", lambda a, b, c, d: b - d),
            ("unit", "How many cents does {n1} earn over those days?", lambda a, b, c, d: a * (b + c * (b - d)) * 100),
            ("step", "How many {os} does {n1} iron over those days?", lambda a, b, c, d: b + c * (b - d)),
            ("person", "How many {cw} does {n2} earn over those days?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} iron over those days?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} earn over those days?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} earn from the {xos} over those days?", lambda a, b, c, d: X)),
           IRONING, alt="Charging {cs}{a} for each {o}, {n1} runs an ironing service from {his1} {k1}'s spare room. "
           "{He1} irons {b} {os} on Monday, and {d} fewer than that on each of the next {c} days. How many {cw} does "
           "{n1} earn over those days?", alt_kind="reorder",
           paraphrase="What does the ironing bring {n1} over those days, in {cw}?"),
    # 2 dev
    Family("campsite_pitch", "A campsite by the river charges {cs}{a} a night for a pitch and {cs}{b} a night for "
           "each person on it, and electricity costs half the pitch price on top. {n1} stays {c} nights there with "
           "{his1} {k1} and their {d} children, and they take electricity every night. How many {cw} does {n1} pay "
           "the campsite?",
           "pitch = {a}\nper_person = {b}\nnights = {c}\nchildren = {d}\n"
           "print(nights * (pitch + per_person * (children + 2) + pitch // 2))",
           lambda a, b, c, d: c * (a + b * (d + 2) + _div(a, 2)),
           {"a": R(8, 30, 2), "b": R(3, 9), "c": R(2, 7), "d": R(2, 5)},
           (("entity", "How many {cw} a night do the people on the pitch cost?", lambda a, b, c, d: b * (d + 2)),
            ("unit", "How many cents does {n1} pay the campsite?",
             lambda a, b, c, d: c * (a + b * (d + 2) + _div(a, 2)) * 100),
            ("step", "How many {cw} does one night cost them?", lambda a, b, c, d: a + b * (d + 2) + _div(a, 2)),
            ("person", "How many {cw} does {n2} pay the campsite?", lambda a, b, c, d: X),
            ("kin", "How many nights does {n1}'s {xk} stay at the campsite?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay the campsite?", lambda a, b, c, d: X)),
           alt="{n1}, {his1} {k1} and their {d} children stay {c} nights at a campsite by the river and take "
           "electricity every night, which costs half the pitch price on top. A pitch is {cs}{a} a night, and each "
           "person on it is {cs}{b} a night more. How many {cw} does {n1} pay the campsite?", alt_kind="reorder",
           paraphrase="What is {n1}'s bill at the campsite, in {cw}?"),
    # 3 fresh
    Family("nail_salon_day", "At the nail salon where {n1} works with {his1} {k1}, a manicure takes {a} minutes and a "
           "pedicure takes {b} minutes longer. On Saturday {n1} does {c} manicures and {d} pedicures. How many hours "
           "does {n1} spend on nails on Saturday?",
           "manicure = {a}\nlonger = {b}\nmanicures = {c}\npedicures = {d}\n"
           "print((manicure * manicures + (manicure + longer) * pedicures) // 60)",
           lambda a, b, c, d: _div(a * c + (a + b) * d, 60),
           {"a": R(20, 45, 5), "b": R(10, 30, 5), "c": R(3, 9), "d": R(2, 6)},
           (("entity", "How many minutes does a pedicure take?", lambda a, b, c, d: a + b),
            ("unit", "How many minutes does {n1} spend on nails on Saturday?", lambda a, b, c, d: a * c + (a + b) * d),
            ("step", "How many customers does {n1} see on Saturday?", lambda a, b, c, d: c + d),
            ("person", "How many hours does {n2} spend on nails on Saturday?", lambda a, b, c, d: X),
            ("kin", "How many pedicures does {n1}'s {xk} do on Saturday?", lambda a, b, c, d: X)),
           alt="On Saturday {n1} does {d} pedicures and {c} manicures at the nail salon where {he1} works with "
           "{his1} {k1}. A manicure takes {a} minutes, and a pedicure takes {b} minutes longer than that. How many "
           "hours does {n1} spend on nails on Saturday?", alt_kind="reorder",
           paraphrase="How long is {n1} busy with nails on Saturday, in hours?"),
    # 4 dev
    Family("piano_tuner_week", "{n1}, a piano tuner, charges {cs}{a} for each piano {he1} tunes. This week {he1} "
           "tunes {b} {os} in schools and {c} in people's homes, one of them at {his1} {k1}'s, where {he1} does it for "
           "free. Petrol for the week costs {him1} {cs}{d}. How many {cw} does {n1} have left after paying for "
           "petrol?",
           "fee = {a}\nschools = {b}\nhomes = {c}\npetrol = {d}\nprint(fee * (schools + homes - 1) - petrol)",
           lambda a, b, c, d: a * (b + c - 1) - d,
           {"a": R(50, 120, 10), "b": R(3, 9), "c": R(2, 6), "d": R(20, 65, 5)},
           (("entity", "How many {cw} does {n1} earn from the {os} in schools?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does {n1} have left after paying for petrol?",
             lambda a, b, c, d: (a * (b + c - 1) - d) * 100),
            ("step", "How many {cw} does {n1} earn before paying for petrol?", lambda a, b, c, d: a * (b + c - 1)),
            ("person", "How many {cw} does {n2} have left after paying for petrol?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for the tuning?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} have left after paying for petrol?", lambda a, b, c, d: X),
            ("object", "How many {xos} does {n1} tune this week?", lambda a, b, c, d: X)),
           PIANOS, alt="Petrol costs {n1} {cs}{d} this week, while {he1} tunes {b} {os} in schools and {c} in "
           "people's homes at {cs}{a} a piano. One of the homes is {his1} {k1}'s, and there {he1} tunes for free. How "
           "many {cw} does {n1} have left after paying for petrol?", alt_kind="reorder",
           paraphrase="Once the petrol is paid for, what does {n1} keep, in {cw}?"),
    # 5 fresh
    Family("cobbler_repairs", "A cobbler charges {cs}{a} to resole a pair of {os}, and replacing the heels costs "
           "{cs}{b} less than that. {n1} brings in {c} pairs to be resoled and {d} pairs that need new heels, some of "
           "them {his1} {k1}'s. How many {cw} does {n1} pay the cobbler?",
           "resole = {a}\nless = {b}\nresoled = {c}\nheeled = {d}\nprint(resoled * resole + heeled * (resole - less))",
           lambda a, b, c, d: c * a + d * (a - b), {"a": R(20, 60, 5), "b": R(6, 15), "c": R(2, 5), "d": R(2, 6)},
           (("entity", "How many {cw} does it cost to put new heels on one pair?", lambda a, b, c, d: a - b),
            ("unit", "How many cents does {n1} pay the cobbler?", lambda a, b, c, d: (c * a + d * (a - b)) * 100),
            ("step", "How many pairs does {n1} bring in?", lambda a, b, c, d: c + d),
            ("person", "How many {cw} does {n2} pay the cobbler?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay the cobbler?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay the cobbler?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} pay for the {xos}?", lambda a, b, c, d: X)),
           FOOTWEAR, alt="{n1} brings the cobbler {d} pairs of {os} that need new heels and {c} pairs to be resoled, "
           "some of them {his1} {k1}'s. Resoling a pair costs {cs}{a}, while new heels cost {cs}{b} less. How many "
           "{cw} does {n1} pay the cobbler?", alt_kind="reorder",
           paraphrase="What is the cobbler's bill for {n1}, in {cw}?"),
    # 6 dev
    Family("dairy_milk_yield", "{n1} milks the {a} cows on {his1} {k1}'s farm twice a day, and each cow gives {b} "
           "liters at every milking. The dairy pays {c} {cw} for every ten liters. How many {cw} does the milk bring "
           "in each week?",
           "cows = {a}\nliters = {b}\nrate = {c}\nprint(cows * liters * 2 * 7 // 10 * rate)",
           lambda a, b, c: _div(14 * a * b, 10) * c, {"a": R(12, 40), "b": R(6, 15), "c": R(3, 9)},
           (("entity", "How many liters does one cow give in a day?", lambda a, b, c: 2 * b),
            ("unit", "How many cents does the milk bring in each week?",
             lambda a, b, c: _div(14 * a * b, 10) * c * 100),
            ("step", "How many liters of milk do the cows give each week?", lambda a, b, c: 14 * a * b),
            ("person", "How many {cw} does the milk from {n2}'s farm bring in each week?", lambda a, b, c: X),
            ("kin", "How many cows does {n1}'s {xk} milk?", lambda a, b, c: X),
            ("currency", "How many {xw} does the milk bring in each week?", lambda a, b, c: X)),
           alt="Every cow on the farm of {n1}'s {k1} gives {b} liters at each milking, and {n1} milks all {a} of them "
           "twice a day. For every ten liters the dairy pays {c} {cw}. How many {cw} does the milk bring in each "
           "week?", alt_kind="reorder", paraphrase="What does the dairy pay for a week's milk, in {cw}?"),
    # 7 fresh
    Family("wedding_cake_tiers", "{n1} bakes a {o} wedding cake with three tiers for {his1} {k1}. The bottom tier "
           "cuts into {a} slices, the middle one into {b} fewer than that, and the top one into half as many as the "
           "middle. If each of the {c} guests eats one slice, how many slices are left over?",
           "bottom = {a}\nfewer = {b}\nguests = {c}\nmiddle = bottom - fewer\n"
           "print(bottom + middle + middle // 2 - guests)",
           lambda a, b, c: a + (a - b) + _div(a - b, 2) - c, {"a": R(40, 80, 2), "b": R(8, 20, 2), "c": R(30, 95, 5)},
           (("entity", "How many slices does the top tier cut into?", lambda a, b, c: _div(a - b, 2)),
            ("unit", "If each of the {c} guests eats one slice, how many dozen slices are left over?",
             lambda a, b, c: _div(a + (a - b) + _div(a - b, 2) - c, 12)),
            ("step", "How many slices does the whole cake cut into?", lambda a, b, c: a + (a - b) + _div(a - b, 2)),
            ("person", "If each of the {c} guests eats one slice, how many slices of {n2}'s cake are left over?",
             lambda a, b, c: X),
            ("kin", "How many guests come to the wedding of {n1}'s {xk}?", lambda a, b, c: X),
            ("object", "If each of the {c} guests eats one slice, how many slices of the {xo} cake are left over?",
             lambda a, b, c: X)),
           CAKES, alt="The {o} wedding cake that {n1} bakes for {his1} {k1} has three tiers: the bottom tier cuts into "
           "{a} slices, the middle one into {b} fewer, and the top one into half as many as the middle. If each of "
           "the {c} guests eats one slice, how many slices are left over?", alt_kind="reorder",
           paraphrase="How many slices remain once every guest has had one?"),
    # 8 dev
    Family("generator_diesel", "During a power cut, {n1} runs a generator at {his1} {k1}'s {o} for {a} hours a day. "
           "The generator burns {b} liters of diesel an hour, and diesel costs {cs}{c} a liter. The power cut lasts "
           "{d} days. How many {cw} does the diesel cost?",
           "hours = {a}\nper_hour = {b}\nprice = {c}\ndays = {d}\nprint(hours * per_hour * days * price)",
           lambda a, b, c, d: a * b * c * d, {"a": R(4, 12), "b": R(2, 6), "c": R(2, 5), "d": R(2, 6)},
           (("entity", "How many liters of diesel does the generator burn in a day?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does the diesel cost?", lambda a, b, c, d: a * b * c * d * 100),
            ("step", "How many liters of diesel does the generator burn during the power cut?",
             lambda a, b, c, d: a * b * d),
            ("person", "How many {cw} does the diesel at {n2}'s {o} cost?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} spend on diesel?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the diesel cost?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the diesel for the {xo} cost?", lambda a, b, c, d: X)),
           PREMISES, alt="Diesel costs {cs}{c} a liter, and the generator that {n1} runs at {his1} {k1}'s {o} during "
           "a {d}-day power cut burns {b} liters an hour. It runs for {a} hours each day. How many {cw} does the "
           "diesel cost?", alt_kind="reorder", paraphrase="What does the fuel for the power cut come to, in {cw}?"),
    # 9 fresh
    Family("exam_marking", "{n1} has {a} {o} exam papers to mark, and {his1} {k1}, who teaches the same class, takes "
           "a quarter of them. {n1} marks the rest at {b} papers an hour and then spends {c} hours entering the "
           "marks. How many hours does {n1} spend on the papers?",
           "papers = {a}\nper_hour = {b}\nentering = {c}\nprint((papers - papers // 4) // per_hour + entering)",
           lambda a, b, c: _div(a - _div(a, 4), b) + c, {"a": R(80, 240, 4), "b": R(6, 15), "c": R(2, 5)},
           (("entity", "How many papers does {n1}'s {k1} mark?", lambda a, b, c: _div(a, 4)),
            ("unit", "How many minutes does {n1} spend on the papers?",
             lambda a, b, c: (_div(a - _div(a, 4), b) + c) * 60),
            ("step", "How many papers does {n1} mark?", lambda a, b, c: a - _div(a, 4)),
            ("person", "How many hours does {n2} spend on the papers?", lambda a, b, c: X),
            ("kin", "How many papers does {n1}'s {xk} take?", lambda a, b, c: X),
            ("object", "How many hours does {n1} spend on the {xo} papers?", lambda a, b, c: X)),
           SUBJECTS, alt="Marking at {b} papers an hour, {n1} gets through all of the {a} {o} exam papers except the "
           "quarter that {his1} {k1}, who teaches the same class, takes. Then {he1} spends {c} hours entering the "
           "marks. How many hours does {n1} spend on the papers?", alt_kind="reorder",
           paraphrase="How long does {n1} spend on the papers altogether, in hours?"),
    # 10 dev
    Family("cat_sitting_visits", "While {his1} {k1} is away for {a} days, {n1} feeds the {k1}'s cats and visits them "
           "twice a day, earning {cs}{b} a visit. {He1} also buys {c} {os}, which cost {cs}{d} apiece, and the {k1} "
           "pays {him1} back for them. How many {cw} does the {k1} give {n1} in all?",
           "days = {a}\nvisit = {b}\nbought = {c}\nprice = {d}\nprint(days * 2 * visit + bought * price)",
           lambda a, b, c, d: 2 * a * b + c * d, {"a": R(3, 14), "b": R(4, 12), "c": R(2, 6), "d": R(3, 9)},
           (("entity", "How many {cw} do the {os} cost?", lambda a, b, c, d: c * d),
            ("unit", "How many cents does the {k1} give {n1} in all?", lambda a, b, c, d: (2 * a * b + c * d) * 100),
            ("step", "How many {cw} does {n1} earn from the visits?", lambda a, b, c, d: 2 * a * b),
            ("person", "How many {cw} does the {k1} give {n2} in all?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} give {him1} in all?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the {k1} give {n1} in all?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the {xos} cost?", lambda a, b, c, d: X)),
           CAT_SUPPLIES, alt="{n1} earns {cs}{b} a visit feeding {his1} {k1}'s cats, which {he1} visits twice a day "
           "while the {k1} is away for {a} days. The {k1} also pays {him1} back for the {c} {os} {he1} buys at "
           "{cs}{d} each. How many {cw} does the {k1} give {n1} in all?", alt_kind="reorder",
           paraphrase="Altogether, what does {n1} get from the {k1}, in {cw}?"),
    # 11 fresh
    Family("tea_picking_wages", "{n1} picks tea on {his1} {k1}'s estate and is paid {cs}{a} for every kilogram of "
           "leaves. Each morning {he1} picks {b} kilograms, but in the afternoon, when it is hotter, {he1} picks a "
           "quarter less. How many {cw} does {n1} earn in {c} days?",
           "rate = {a}\nmorning = {b}\ndays = {c}\nprint((morning + morning - morning // 4) * rate * days)",
           lambda a, b, c: (2 * b - _div(b, 4)) * a * c, {"a": R(3, 9), "b": R(8, 24, 4), "c": R(3, 6)},
           (("entity", "How many kilograms does {n1} pick in the afternoon?", lambda a, b, c: b - _div(b, 4)),
            ("unit", "How many cents does {n1} earn in {c} days?", lambda a, b, c: (2 * b - _div(b, 4)) * a * c * 100),
            ("step", "How many kilograms does {n1} pick in a day?", lambda a, b, c: 2 * b - _div(b, 4)),
            ("person", "How many {cw} does {n2} earn in {c} days?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay out in {c} days?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} earn in {c} days?", lambda a, b, c: X)),
           alt="Paid {cs}{a} for every kilogram of leaves, {n1} picks tea on {his1} {k1}'s estate: {b} kilograms "
           "each morning, and a quarter less in the afternoon, when it is hotter. How many {cw} does {n1} earn in {c} "
           "days?", alt_kind="reorder", paraphrase="Over {c} days, what does {n1} earn from the picking, in {cw}?"),
    # 12 dev
    Family("vineyard_cases", "At {his1} {k1}'s vineyard, {n1} helps to harvest {a} rows of vines, and each row gives "
           "{b} kilograms of grapes. It takes {c} kilograms of grapes to make a case of {o}, which sells for {cs}{d}. "
           "How many {cw} are the harvest's cases worth?",
           "rows = {a}\nper_row = {b}\nper_case = {c}\nprice = {d}\nprint(rows * per_row // per_case * price)",
           lambda a, b, c, d: _div(a * b, c) * d,
           {"a": R(6, 20), "b": R(30, 90, 10), "c": R(10, 20, 5), "d": R(60, 150, 10)},
           (("entity", "How many kilograms of grapes does the harvest give?", lambda a, b, c, d: a * b),
            ("unit", "How many cents are the harvest's cases worth?", lambda a, b, c, d: _div(a * b, c) * d * 100),
            ("step", "How many cases of {o} does the harvest make?", lambda a, b, c, d: _div(a * b, c)),
            ("person", "How many {cw} are the cases from {n2}'s harvest worth?", lambda a, b, c, d: X),
            ("kin", "How many rows does {n1}'s {xk} harvest?", lambda a, b, c, d: X),
            ("currency", "How many {xw} are the harvest's cases worth?", lambda a, b, c, d: X),
            ("object", "How many {cw} are the harvest's cases of {xo} worth?", lambda a, b, c, d: X)),
           WINES, alt="It takes {c} kilograms of grapes to make a case of {o}, and a case sells for {cs}{d}. {n1} "
           "helps to harvest {a} rows of vines at {his1} {k1}'s vineyard, with {b} kilograms of grapes from each row. "
           "How many {cw} are the harvest's cases worth?", alt_kind="reorder",
           paraphrase="What is the wine from the harvest worth, in {cw}?"),
    # 13 fresh
    Family("ski_passes_and_hire", "A ski resort sells a day pass for {cs}{a}, and children pay a third less. {n1} "
           "skis for {b} days with {his1} {k1} and the {k1}'s {c} children, and they hire {os} for the children at "
           "{cs}{d} a day each. How many {cw} do passes and hire cost them?",
           "adult = {a}\ndays = {b}\nchildren = {c}\nhire = {d}\nchild = adult - adult // 3\n"
           "print(days * (2 * adult + children * (child + hire)))",
           lambda a, b, c, d: b * (2 * a + c * (a - _div(a, 3) + d)),
           {"a": R(30, 72, 3), "b": R(2, 6), "c": R(2, 5), "d": R(8, 20)},
           (("entity", "How many {cw} is a child's day pass?", lambda a, b, c, d: a - _div(a, 3)),
            ("unit", "How many cents do passes and hire cost them?",
             lambda a, b, c, d: b * (2 * a + c * (a - _div(a, 3) + d)) * 100),
            ("step", "How many {cw} do passes and hire cost them for one day?",
             lambda a, b, c, d: 2 * a + c * (a - _div(a, 3) + d)),
            ("person", "How many {cw} do passes and hire cost {n2}?", lambda a, b, c, d: X),
            ("kin", "How many children does {n1}'s {xk} have?", lambda a, b, c, d: X),
            ("currency", "How many {xw} do passes and hire cost them?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the hire of the {xos} cost?", lambda a, b, c, d: X)),
           SKI_HIRE, alt="{n1} skis for {b} days with {his1} {k1} and the {k1}'s {c} children. Day passes at the "
           "resort cost {cs}{a} for adults and a third less for children, and the children hire {os} at {cs}{d} a day "
           "each. How many {cw} do passes and hire cost them?", alt_kind="reorder",
           paraphrase="What do the ski passes and the hire come to, in {cw}?"),
    # 14 dev
    Family("sushi_plates_split", "At a conveyor belt sushi restaurant, a green plate costs {cs}{a} and a red plate "
           "costs {cs}{b} more than a green one. {n1} eats from {c} green plates while {his1} {k1} eats from {d} red "
           "plates, and they split the bill evenly. How many {cw} does each of them pay?",
           "green = {a}\nmore = {b}\ngreen_plates = {c}\nred_plates = {d}\n"
           "print((green * green_plates + (green + more) * red_plates) // 2)",
           lambda a, b, c, d: _div(a * c + (a + b) * d, 2), {"a": R(2, 6), "b": R(1, 4), "c": R(5, 12), "d": R(3, 9)},
           (("entity", "How many {cw} does a red plate cost?", lambda a, b, c, d: a + b),
            ("unit", "How many cents does each of them pay?", lambda a, b, c, d: _div(a * c + (a + b) * d, 2) * 100),
            ("step", "How many {cw} is the whole bill?", lambda a, b, c, d: a * c + (a + b) * d),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: X),
            ("kin", "How many red plates does {n1}'s {xk} eat from?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does each of them pay?", lambda a, b, c, d: X)),
           alt="{n1} and {his1} {k1} split the bill evenly at a conveyor belt sushi restaurant, where {n1} eats from "
           "{c} green plates at {cs}{a} each and the {k1} eats from {d} red ones, which cost {cs}{b} more than a "
           "green plate. How many {cw} does each of them pay?", alt_kind="reorder",
           paraphrase="What is each person's share of the bill, in {cw}?"),
    # 15 fresh
    Family("escape_room_group", "{n1} books an escape room for {his1} {k1}'s birthday, for a group of {b} people. The "
           "room costs {cs}{a} a person, but groups of more than four get {c}% off, and {n1} and the {k1} split the "
           "bill between them. How many {cw} does {n1} pay?",
           "price = {a}\npeople = {b}\noff = {c}\nprint(people * (price - price * off // 100) // 2)",
           lambda a, b, c: _div(b * (a - _div(a * c, 100)), 2),
           {"a": R(20, 60, 10), "b": R(6, 11), "c": R(10, 30, 10)},
           (("entity", "How many {cw} does a place cost after the discount?", lambda a, b, c: a - _div(a * c, 100)),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c: _div(b * (a - _div(a * c, 100)), 2) * 100),
            ("step", "How many {cw} is the bill?", lambda a, b, c: b * (a - _div(a * c, 100))),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c: X)),
           alt="For {his1} {k1}'s birthday, {n1} books an escape room that costs {cs}{a} a person, with {c}% off for "
           "groups of more than four. The group is {b} people, and {n1} and the {k1} split the bill between them. How "
           "many {cw} does {n1} pay?", alt_kind="reorder",
           paraphrase="What is {n1}'s half of the escape room bill, in {cw}?"),
    # 16 dev
    Family("farrier_horseshoes", "{n1} works as a farrier, and {his1} {k1}'s riding school has {a} {os} that need new "
           "shoes every {b} weeks, four shoes each time. {n1} charges {cs}{c} a shoe. How many {cw} does the riding "
           "school pay {n1} over {d} weeks?",
           "animals = {a}\nevery = {b}\nper_shoe = {c}\nweeks = {d}\nprint(animals * (weeks // every) * 4 * per_shoe)",
           lambda a, b, c, d: a * _div(d, b) * 4 * c,
           {"a": R(6, 20), "b": R(5, 8), "c": R(15, 40, 5), "d": R(20, 48, 4)},
           (("entity", "How many {cw} does shoeing one of the {os} cost each time?", lambda a, b, c, d: 4 * c),
            ("unit", "How many cents does the riding school pay {n1} over {d} weeks?",
             lambda a, b, c, d: a * _div(d, b) * 4 * c * 100),
            ("step", "How many shoes does {n1} fit over {d} weeks?", lambda a, b, c, d: a * _div(d, b) * 4),
            ("person", "How many {cw} does the riding school pay {n2} over {d} weeks?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} keep?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the riding school pay {n1} over {d} weeks?", lambda a, b, c, d: X),
            ("object", "How many {cw} does the riding school pay for its {xos} over {d} weeks?",
             lambda a, b, c, d: X)),
           HORSES, alt="Charging {cs}{c} a shoe, {n1} works as a farrier for {his1} {k1}'s riding school, whose {a} "
           "{os} each need four new shoes every {b} weeks. How many {cw} does the riding school pay {n1} over {d} "
           "weeks?", alt_kind="reorder",
           paraphrase="Over {d} weeks, what does the riding school spend on shoeing, in {cw}?"),
    # 17 fresh
    Family("babysitting_after_midnight", "{n1} babysits {his1} {k1}'s twins on Friday night and is paid {cs}{b} an "
           "hour, but every hour after midnight is paid at twice that. {He1} stays {a} hours, and {c} of them are "
           "after midnight. How many {cw} does {n1} earn?",
           "rate = {b}\nhours = {a}\nlate = {c}\nprint((hours - late) * rate + late * 2 * rate)",
           lambda a, b, c: (a - c) * b + 2 * b * c, {"a": R(4, 8), "b": R(8, 20), "c": R(2, 3)},
           (("entity", "How many {cw} does {n1} earn after midnight?", lambda a, b, c: 2 * b * c),
            ("unit", "How many cents does {n1} earn?", lambda a, b, c: ((a - c) * b + 2 * b * c) * 100),
            ("step", "How many {cw} does {n1} earn before midnight?", lambda a, b, c: (a - c) * b),
            ("person", "How many {cw} does {n2} earn?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay {him1}?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} earn?", lambda a, b, c: X)),
           alt="Every hour after midnight is paid at twice the usual {cs}{b} an hour when {n1} babysits {his1} {k1}'s "
           "twins. On Friday night {he1} stays {a} hours, {c} of them after midnight. How many {cw} does {n1} earn?",
           alt_kind="reorder", paraphrase="What does Friday's babysitting pay {n1}, in {cw}?"),
    # 18 dev
    Family("calligraphy_envelopes", "{n1} writes out wedding invitation envelopes in calligraphy, {a} envelopes an "
           "hour, and charges {cs}{b} for each one. {His1} {k1} is getting married and needs {c} envelopes, so {n1} "
           "takes {d}% off. How many {cw} does the {k1} pay?",
           "per_hour = {a}\nprice = {b}\nenvelopes = {c}\noff = {d}\nbill = envelopes * price\n"
           "print(bill - bill * off // 100)",
           lambda a, b, c, d: c * b - _div(c * b * d, 100),
           {"a": R(8, 20), "b": R(2, 6), "c": R(60, 200, 10), "d": R(10, 30, 10)},
           (("entity", "How many hours does {n1} spend on the envelopes?", lambda a, b, c, d: _div(c, a)),
            ("unit", "How many cents does the {k1} pay?", lambda a, b, c, d: (c * b - _div(c * b * d, 100)) * 100),
            ("step", "How many {cw} would the envelopes cost without the discount?", lambda a, b, c, d: c * b),
            ("person", "How many {cw} does {n2}'s {k1} pay?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does the {k1} pay?", lambda a, b, c, d: X)),
           alt="{n1}'s {k1} is getting married and needs {c} wedding invitation envelopes written in calligraphy, so "
           "{n1}, who writes {a} of them an hour and usually charges {cs}{b} an envelope, takes {d}% off. How many "
           "{cw} does the {k1} pay?", alt_kind="reorder",
           paraphrase="After the discount, what does the {k1} owe {n1}, in {cw}?"),
    # 19 fresh
    Family("cracked_screen_stall", "{n1} fixes cracked screens at a market stall. A new screen for a {o} costs {him1} "
           "{cs}{a}, and {he1} charges {cs}{b} to fit one. This week {he1} fixes {c} {os}, and one of them is {his1} "
           "{k1}'s, which {he1} fixes for just the price of the screen. How much profit, in {cw}, does {n1} make "
           "this week?",
           "screen = {a}\ncharge = {b}\nrepairs = {c}\nprint((charge - screen) * (repairs - 1))",
           lambda a, b, c: (b - a) * (c - 1), {"a": R(20, 60, 5), "b": R(70, 150, 10), "c": R(5, 20)},
           (("entity", "How much profit, in {cw}, does {n1} make on each paid repair?", lambda a, b, c: b - a),
            ("unit", "How much profit, in cents, does {n1} make this week?", lambda a, b, c: (b - a) * (c - 1) * 100),
            ("step", "How many {cw} does {n1} take in this week?", lambda a, b, c: b * (c - 1) + a),
            ("person", "How much profit, in {cw}, does {n2} make this week?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for the screen?", lambda a, b, c: X),
            ("currency", "How much profit, in {xw}, does {n1} make this week?", lambda a, b, c: X),
            ("object", "How much profit, in {cw}, does {n1} make on the {xos} this week?", lambda a, b, c: X)),
           PHONES, alt="This week {n1} fixes {c} {os} with cracked screens at {his1} market stall, charging {cs}{b} to "
           "fit each new screen, which costs {him1} {cs}{a} for a {o}. One of the {os} is {his1} {k1}'s, so for that "
           "one {he1} charges only the price of the screen. How much profit, in {cw}, does {n1} make this week?",
           alt_kind="reorder", paraphrase="What does {n1} clear this week after paying for the screens, in {cw}?"),
    # 20 dev
    Family("ice_cream_van_cones", "A tub of {o} ice cream holds {a} scoops. {n1}, who sells ice cream from {his1} "
           "{k1}'s van, charges {cs}{b} for a single cone and {cs}{c} for a double. On Sunday {he1} empties {d} tubs, "
           "and half of the scoops go into double cones. How many {cw} does {n1} take on Sunday?",
           "scoops = {a}\nsingle = {b}\ndouble = {c}\ntubs = {d}\nall_scoops = scoops * tubs\n"
           "print(all_scoops // 2 * single + all_scoops // 4 * double)",
           lambda a, b, c, d: _div(a * d, 2) * b + _div(a * d, 4) * c,
           {"a": R(40, 80, 4), "b": R(2, 4), "c": R(5, 8), "d": R(3, 9)},
           (("entity", "How many double cones does {n1} sell on Sunday?", lambda a, b, c, d: _div(a * d, 4)),
            ("unit", "How many cents does {n1} take on Sunday?",
             lambda a, b, c, d: (_div(a * d, 2) * b + _div(a * d, 4) * c) * 100),
            ("step", "How many scoops does {n1} serve on Sunday?", lambda a, b, c, d: a * d),
            ("person", "How many {cw} does {n2} take on Sunday?", lambda a, b, c, d: X),
            ("kin", "How many tubs does {n1}'s {xk} empty on Sunday?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} take on Sunday?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the {xo} cones bring in on Sunday?", lambda a, b, c, d: X)),
           FLAVORS, alt="On Sunday {n1}, who sells ice cream from {his1} {k1}'s van, empties {d} tubs of {o} ice "
           "cream, each holding {a} scoops. Half of the scoops go into double cones at {cs}{c} and the rest into "
           "single cones at {cs}{b}. How many {cw} does {n1} take on Sunday?", alt_kind="reorder",
           paraphrase="What are {n1}'s takings on Sunday, in {cw}?"),
    # 21 fresh
    Family("band_merch_stand", "{n1} runs the merchandise stand at {his1} {k1}'s band's concert, selling {os} at "
           "{cs}{a} each and posters at {cs}{b}. {He1} sells {c} {os} and three times as many posters, and the band "
           "gives {him1} {d}% of the takings for {his1} help. How many {cw} does {n1} get?",
           "item = {a}\nposter = {b}\nitems = {c}\nshare = {d}\n"
           "print((items * item + 3 * items * poster) * share // 100)",
           lambda a, b, c, d: _div((c * a + 3 * c * b) * d, 100),
           {"a": R(15, 30, 5), "b": R(4, 10), "c": R(10, 40, 5), "d": R(10, 20, 5)},
           (("entity", "How many posters does {n1} sell?", lambda a, b, c, d: 3 * c),
            ("unit", "How many cents does {n1} get?", lambda a, b, c, d: (c * a + 3 * c * b) * d),
            ("step", "How many {cw} does the stand take in?", lambda a, b, c, d: c * a + 3 * c * b),
            ("person", "How many {cw} does {n2} get?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} get?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} get?", lambda a, b, c, d: X),
            ("object", "How many {xos} does {n1} sell?", lambda a, b, c, d: X)),
           MERCH, alt="The band that {n1}'s {k1} plays in gives {n1} {d}% of the takings for {his1} help at the "
           "merchandise stand. At the concert the {os} go for {cs}{a} apiece and the posters for {cs}{b}, and {he1} "
           "sells {c} {os} and three times as many posters. How many {cw} does {n1} get?", alt_kind="reorder",
           paraphrase="What is {n1}'s share of the takings, in {cw}?"),
    # 22 dev
    Family("balloon_weekend_flights", "{n1}'s {k1} flies a hot air balloon whose basket takes {a} passengers, and "
           "each of them pays {cs}{b} a flight. On Saturday the balloon goes up {c} times, full each time, but on "
           "Sunday the wind lets it go up only once, with {d} passengers. How many {cw} do the flights bring in over "
           "the weekend?",
           "seats = {a}\nfare = {b}\nsaturday = {c}\nsunday = {d}\nprint(fare * (seats * saturday + sunday))",
           lambda a, b, c, d: b * (a * c + d), {"a": R(8, 16), "b": R(150, 300, 25), "c": R(3, 5), "d": R(2, 7)},
           (("entity", "How many {cw} does Sunday's flight bring in?", lambda a, b, c, d: b * d),
            ("unit", "How many cents do the flights bring in over the weekend?",
             lambda a, b, c, d: b * (a * c + d) * 100),
            ("step", "How many passengers fly over the weekend?", lambda a, b, c, d: a * c + d),
            ("person", "How many {cw} do the flights of {n2}'s {k1} bring in over the weekend?", lambda a, b, c, d: X),
            ("kin", "How many {cw} do the flights of {n1}'s {xk} bring in over the weekend?", lambda a, b, c, d: X),
            ("currency", "How many {xw} do the flights bring in over the weekend?", lambda a, b, c, d: X)),
           alt="Each passenger pays {cs}{b} a flight in the hot air balloon flown by {n1}'s {k1}, and its basket "
           "takes {a} passengers. The balloon goes up {c} times on Saturday, full every time, while on Sunday the "
           "wind lets it go up only once, with {d} passengers. How many {cw} do the flights bring in over the "
           "weekend?", alt_kind="reorder", paraphrase="What do the weekend's balloon flights earn, in {cw}?"),
    # 23 fresh
    Family("bottle_return_machine", "After {his1} {k1}'s street party, {n1} collects the empty {os} in {c} bags that "
           "hold {d} each. The recycling machine at the supermarket pays {cs}{b} for every {a} {os} put into it. How "
           "many {cw} does {n1} get from the machine?",
           "per_lot = {a}\npays = {b}\nbags = {c}\nper_bag = {d}\nprint(bags * per_bag // per_lot * pays)",
           lambda a, b, c, d: _div(c * d, a) * b, {"a": R(4, 10), "b": R(1, 3), "c": R(3, 9), "d": R(20, 60, 4)},
           (("entity", "How many {cw} does one bag of {os} bring in?", lambda a, b, c, d: _div(d, a) * b),
            ("unit", "How many cents does {n1} get from the machine?", lambda a, b, c, d: _div(c * d, a) * b * 100),
            ("step", "How many empty {os} does {n1} collect?", lambda a, b, c, d: c * d),
            ("person", "How many {cw} does {n2} get from the machine?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} collect?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} get from the machine?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} get for the {xos}?", lambda a, b, c, d: X)),
           EMPTIES, alt="The recycling machine at the supermarket pays {cs}{b} for every {a} {os} put into it. {n1} "
           "collects the empty {os} after {his1} {k1}'s street party and fills {c} bags that hold {d} each. How many "
           "{cw} does {n1} get from the machine?", alt_kind="reorder",
           paraphrase="What does the machine pay {n1} for the empty {os}, in {cw}?"),
)


POOL = Pool(POOL8_FAMILIES, POOLS, SEED, half_of, (DEV_NAME, HELD_OUT_NAME))
pool_instances, half_families, build, pool_problems = POOL.instances, POOL.half_families, POOL.build, POOL.problems


def main() -> None:
    POOL.write()


if __name__ == "__main__":
    main()
