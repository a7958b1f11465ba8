"""A second pool of varied flywheel families for issue 38, split in two halves BEFORE anything else was done with it:
the split rule was fixed first (family index in `POOL2_FAMILIES` even -> `varied-dev2`, odd -> `varied-fresh2`) and
written into this docstring before any family was written. `varied-dev2` is the new development half (new vocabulary
and sentence shapes to tune on); `varied-fresh2` is held out: nobody tunes on it, it is run once at the end. Written
on 2026-12-04 without running the flywheel, the router or `kvgraft bench flywheel` on either half and without
reading the alignment's rules.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the 44 families of bench/flywheel_varied_data.py or the 19 of
bench/flywheel_fresh_data.py, whose machinery they reuse (Family, the draw with the written-number redraw, one-slot
`edit_*` rows, near misses of every kind, `problems()`; read that module's docstring for the rows). Varied on
purpose: currencies by symbol and word including ones no earlier pool has (₫ dong, ฿ baht, R rand, zł złoty,
kr kronor), names from many cultures including short, hyphenated and multi-part ones, kin and role nouns the earlier
pools lack, multi-word objects (with "of", with adjectives, compound nouns), rates, percentages, fractions, time,
comparisons, multi-step quantities, split/joined sentences and reordered clauses (`alt`), paraphrased questions.

    python -m bench.flywheel_pool2_data   # rewrites bench/data/flywheel-varied-{dev2,fresh2}-{library,eval}.jsonl
"""

from __future__ import annotations

from bench.flywheel_fresh_data import (
    FRESH_CURRENCIES,
    FRESH_KIN,
    FRESH_NAMES,
    Pools,
)
from bench.flywheel_gsm_data import _div
from bench.flywheel_pool import Pool
from bench.flywheel_varied_data import NO_ANSWER, Family, R

DEV_NAME, HELD_OUT_NAME = "varied-dev2", "varied-fresh2"
SEED = 3804


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME


POOL2_NAMES = FRESH_NAMES + tuple((n, "f") for n in (
    "Thu-Trang", "Ewa", "Mwajuma", "Anh", "Li", "Marie-Claire", "Nomvula", "Malak", "Pania", "Ana Sofia",
    "Siri", "Precious")) + tuple((n, "m") for n in (
        "Somchai", "Jo", "Kai", "Abdul Rahman", "Jean-Baptiste", "Themba", "Nikolai", "Ravi", "Tuan", "Ole",
        "Lwazi", "Juan Carlos"))
POOL2_KIN = FRESH_KIN + ("stepmother", "mother-in-law", "great-aunt", "tutor", "manager", "flatmate",
                         "business partner", "grandson", "daughter", "son")
POOL2_CURRENCIES = FRESH_CURRENCIES + (("₫", "dong"), ("฿", "baht"), ("R", "rand"), ("zł", "złoty"),
                                       ("kr", "kronor"))
POOLS = Pools(POOL2_NAMES, POOL2_KIN, POOL2_CURRENCIES)

SEEDLINGS = (("tomato seedling", "tomato seedlings"), ("pot of basil", "pots of basil"), ("fern", "ferns"),
             ("tray of lettuce", "trays of lettuce"), ("rose bush", "rose bushes"), ("cactus", "cacti"),
             ("pepper plant", "pepper plants"))
BAKES = (("loaf of rye bread", "loaves of rye bread"), ("baguette", "baguettes"), ("cinnamon roll", "cinnamon rolls"),
         ("meat pie", "meat pies"), ("tray of brownies", "trays of brownies"), ("muffin", "muffins"),
         ("box of doughnuts", "boxes of doughnuts"))
CRAFT = (("ball of yarn", "balls of yarn"), ("scarf", "scarves"), ("knitted hat", "knitted hats"),
         ("pair of mittens", "pairs of mittens"), ("blanket", "blankets"), ("wool sweater", "wool sweaters"))
DRINKS = (("bottle of water", "bottles of water"), ("juice box", "juice boxes"), ("lemonade", "lemonades"),
          ("can of soda", "cans of soda"), ("iced tea", "iced teas"), ("coconut", "coconuts"))
STATIONERY = (("notebook", "notebooks"), ("pack of sticky notes", "packs of sticky notes"), ("stapler", "staplers"),
              ("ink cartridge", "ink cartridges"), ("ream of paper", "reams of paper"), ("binder", "binders"))
FISH = (("goldfish", "goldfish"), ("neon tetra", "neon tetras"), ("guppy", "guppies"), ("angelfish", "angelfish"),
        ("clown loach", "clown loaches"), ("zebra danio", "zebra danios"))
TOYS = (("toy car", "toy cars"), ("marble", "marbles"), ("set of building blocks", "sets of building blocks"),
        ("stuffed bear", "stuffed bears"), ("kite", "kites"), ("wooden train set", "wooden train sets"))
TICKETS = (("bus ticket", "bus tickets"), ("ferry pass", "ferry passes"), ("museum ticket", "museum tickets"),
           ("zoo pass", "zoo passes"), ("ticket", "tickets"), ("day pass for the pool", "day passes for the pool"))
BOOKS = (("comic book", "comic books"), ("novel", "novels"), ("cookbook", "cookbooks"),
         ("book of poems", "books of poems"), ("atlas", "atlases"), ("graphic novel", "graphic novels"))
CROPS = (("crate of mangoes", "crates of mangoes"), ("basket of eggs", "baskets of eggs"), ("melon", "melons"),
         ("sack of onions", "sacks of onions"), ("bunch of bananas", "bunches of bananas"), ("pumpkin", "pumpkins"),
         ("box of strawberries", "boxes of strawberries"))
TOOLS = (("hammer", "hammers"), ("cordless drill", "cordless drills"), ("set of wrenches", "sets of wrenches"),
         ("ladder", "ladders"), ("tape measure", "tape measures"), ("box of nails", "boxes of nails"))
CLOTHES = (("shirt", "shirts"), ("pair of jeans", "pairs of jeans"), ("rain jacket", "rain jackets"),
           ("dress", "dresses"), ("pair of sandals", "pairs of sandals"), ("wool coat", "wool coats"))
SNACKS = (("bag of chips", "bags of chips"), ("granola bar", "granola bars"), ("apple", "apples"),
          ("packet of peanuts", "packets of peanuts"), ("banana", "bananas"), ("rice cracker", "rice crackers"))
WISHES = (("tablet", "tablets"), ("electric guitar", "electric guitars"), ("camera", "cameras"),
          ("pair of roller skates", "pairs of roller skates"), ("drone", "drones"), ("mountain bike", "mountain bikes"))
RENTALS = (("kayak", "kayaks"), ("rowing boat", "rowing boats"), ("paddle board", "paddle boards"),
           ("canoe", "canoes"), ("pedal boat", "pedal boats"), ("bike", "bikes"))

X = NO_ANSWER
POOL2_FAMILIES: tuple[Family, ...] = (
    # 0 dev
    Family("tuk_tuk_fares", "{n1} drives a tuk-tuk for {his1} {k1}. On Monday {he1} gives {a} rides at {cs}{b} a ride "
           "and on Tuesday {c} rides at the same fare. {He1} pays {cs}{d} for fuel for both days. How many {cw} does "
           "{n1} have after paying for fuel?",
           "monday = {a}\nfare = {b}\ntuesday = {c}\nfuel = {d}\nprint((monday + tuesday) * fare - fuel)",
           lambda a, b, c, d: (a + c) * b - d, {"a": R(8, 25), "b": R(20, 90, 5), "c": R(6, 22), "d": R(40, 200, 10)},
           (("entity", "How many {cw} did {n1} take in on Monday?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does {n1} have after paying for fuel?", lambda a, b, c, d:
             ((a + c) * b - d) * 100),
            ("step", "How many rides did {n1} give on the two days?", lambda a, b, c, d: a + c),
            ("person", "How many {cw} does {n2} have after paying for fuel?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} have after paying for fuel?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} have after paying for fuel?", lambda a, b, c, d: X)),
           alt="{n1} drives a tuk-tuk for {his1} {k1}. {He1} gives {a} rides on Monday at {cs}{b} a ride. On Tuesday "
           "{he1} gives {c} rides at the same fare. Fuel for both days costs {him1} {cs}{d}. How many {cw} does {n1} "
           "have after paying for fuel?", paraphrase="After the fuel is paid, what is left for {n1}, in {cw}?"),
    # 1 fresh
    Family("seedling_rows", "{n1} sets out {os} in {a} rows, {b} to a row. A storm ruins {c} of them, and {his1} "
           "{k1} gives {him1} {d} more to plant. How many {os} does {n1} have now?",
           "rows = {a}\nper_row = {b}\nruined = {c}\ngiven = {d}\nprint(rows * per_row - ruined + given)",
           lambda a, b, c, d: a * b - c + d, {"a": R(3, 9), "b": R(5, 14), "c": R(2, 12), "d": R(3, 15)},
           (("entity", "How many {os} did {n1} plant at first?", lambda a, b, c, d: a * b),
            ("unit", "How many rows of {os} does {n1} have now?", lambda a, b, c, d: X),
            ("step", "How many {os} are left after the storm?", lambda a, b, c, d: a * b - c),
            ("person", "How many {os} does {n2} have now?", lambda a, b, c, d: X),
            ("kin", "How many {os} does {n1}'s {xk} give {him1}?", lambda a, b, c, d: X),
            ("object", "How many {xos} does {n1} have now?", lambda a, b, c, d: X)),
           SEEDLINGS, alt="A storm ruins {c} of the {os} that {n1} planted in {a} rows of {b}. Then {his1} {k1} gives "
           "{him1} {d} more to plant. How many {os} does {n1} have now?", alt_kind="reorder",
           paraphrase="What is the number of {os} {n1} has at this point?"),
    # 2 dev
    Family("bakery_discount", "A bakery sells a {o} for {cs}{a}. On Fridays everything is {b}% off. {n1} buys {c} of "
           "them on a Friday. How many {cw} does {n1} pay?",
           "price = {a}\noff_pct = {b}\ncount = {c}\nprint((price - price * off_pct // 100) * count)",
           lambda a, b, c: (a - _div(a * b, 100)) * c, {"a": R(20, 200, 10), "b": R(10, 50, 10), "c": R(2, 9)},
           (("entity", "How many {cw} would {n1} pay for them on another day?", lambda a, b, c: a * c),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c: (a - _div(a * b, 100)) * c * 100),
            ("step", "How many {cw} does one {o} cost on a Friday?", lambda a, b, c: a - _div(a * b, 100)),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c: X),
            ("object", "How many {cw} does {n1} pay for the {xos}?", lambda a, b, c: X)),
           BAKES, alt="On Fridays everything at a bakery is {b}% off, and a {o} there costs {cs}{a}. {n1} buys {c} of "
           "them on a Friday. How many {cw} does {n1} pay?", alt_kind="reorder",
           paraphrase="What is the total {n1} pays, in {cw}?"),
    # 3 fresh
    Family("knitting_hours", "{n1} knits a {o} in {a} hours. {His1} {k1} knits one in {b} hours. This month {n1} knits "
           "{c} of them and {his1} {k1} knits {d}. How many hours do they spend knitting in all?",
           "mine = {a}\ntheirs = {b}\nmy_count = {c}\ntheir_count = {d}\nprint(mine * my_count + theirs * their_count)",
           lambda a, b, c, d: a * c + b * d, {"a": R(2, 9), "b": R(3, 12), "c": R(2, 8), "d": R(2, 8)},
           (("entity", "How many hours does {n1} spend knitting?", lambda a, b, c, d: a * c),
            ("unit", "How many minutes do they spend knitting in all?", lambda a, b, c, d: (a * c + b * d) * 60),
            ("step", "How many of them do they knit in all?", lambda a, b, c, d: c + d),
            ("person", "How many hours does {n2} spend knitting?", lambda a, b, c, d: X),
            ("kin", "How many hours does {n1}'s {xk} spend knitting?", lambda a, b, c, d: X),
            ("object", "How many hours do they spend knitting {xos}?", lambda a, b, c, d: X)),
           CRAFT, alt="{n1} knits a {o} in {a} hours, and {his1} {k1} knits one in {b} hours. This month {n1} knits "
           "{c} of them. {His1} {k1} knits {d}. How many hours do they spend knitting in all?",
           paraphrase="Altogether, how long do the two of them knit, in hours?"),
    # 4 dev
    Family("water_stall", "At a football match {n1} sells {os} from a stall. {He1} buys {a} of them for {cs}{b} in "
           "all and sells every one for {cs}{c}. How many {cw} of profit does {n1} make?",
           "count = {a}\ncost = {b}\nprice = {c}\nprint(count * price - cost)",
           lambda a, b, c: a * c - b, {"a": R(20, 80, 5), "b": R(30, 150, 10), "c": R(3, 9)},
           (("entity", "How many {cw} does {n1} take in from selling?", lambda a, b, c: a * c),
            ("unit", "How many cents of profit does {n1} make?", lambda a, b, c: (a * c - b) * 100),
            ("step", "How many {cw} did each of the {os} cost {n1}?", lambda a, b, c: _div(b, a)),
            ("person", "How many {cw} of profit does {n2} make?", lambda a, b, c: X),
            ("currency", "How many {xw} of profit does {n1} make?", lambda a, b, c: X),
            ("object", "How many {cw} of profit does {n1} make on {xos}?", lambda a, b, c: X)),
           DRINKS, alt="{n1} buys {a} {os} for {cs}{b} in all. At a football match {he1} sells every one of them from "
           "a stall for {cs}{c}. How many {cw} of profit does {n1} make?", alt_kind="reorder",
           paraphrase="What profit, in {cw}, does {n1} earn?"),
    # 5 fresh
    Family("office_order", "The office {k1} orders supplies for {n1}'s team: {a} {os} costing {cs}{b} apiece, plus {c} "
           "calculators costing {cs}{d} apiece. The team has a budget of {cs}{e}. How many {cw} of the budget are "
           "left?",
           "items = {a}\nitem_price = {b}\ncalcs = {c}\ncalc_price = {d}\nbudget = {e}\n"
           "print(budget - items * item_price - calcs * calc_price)",
           lambda a, b, c, d, e: e - a * b - c * d,
           {"a": R(5, 20), "b": R(2, 9), "c": R(2, 6), "d": R(11, 30), "e": R(300, 600, 50)},
           (("entity", "How many {cw} do the calculators cost?", lambda a, b, c, d, e: c * d),
            ("unit", "How many cents of the budget are left?", lambda a, b, c, d, e: (e - a * b - c * d) * 100),
            ("step", "How many {cw} does the order cost?", lambda a, b, c, d, e: a * b + c * d),
            ("person", "How many {cw} of {n2}'s budget are left?", lambda a, b, c, d, e: X),
            ("kin", "How many {os} does the office {xk} order?", lambda a, b, c, d, e: X),
            ("currency", "How many {xw} of the budget are left?", lambda a, b, c, d, e: X),
            ("object", "How many {cw} do the {xos} cost?", lambda a, b, c, d, e: X)),
           STATIONERY, paraphrase="How much of the budget remains, in {cw}?"),
    # 6 dev
    Family("aquarium_fish", "{n1}'s aquarium has {a} {os}. Each week the {os} have {b} babies, and {n1} gives {c} "
           "fish away to {his1} {k1} at the end of each week. How many {os} are in the aquarium after {d} weeks?",
           "start = {a}\nborn = {b}\ngiven = {c}\nweeks = {d}\nprint(start + (born - given) * weeks)",
           lambda a, b, c, d: a + (b - c) * d, {"a": R(6, 20), "b": R(5, 12), "c": R(1, 4), "d": R(2, 6)},
           (("entity", "How many fish does {n1} give away in {d} weeks?", lambda a, b, c, d: c * d),
            ("unit", "How many {os} are in the aquarium after {d} days?", lambda a, b, c, d: X),
            ("step", "How many more {os} are there each week?", lambda a, b, c, d: b - c),
            ("person", "How many {os} are in {n2}'s aquarium after {d} weeks?", lambda a, b, c, d: X),
            ("kin", "How many fish does {n1}'s {xk} give away?", lambda a, b, c, d: X),
            ("object", "How many {xos} are in the aquarium after {d} weeks?", lambda a, b, c, d: X)),
           FISH, alt="{n1}'s aquarium has {a} {os}. Each week the {os} have {b} babies. At the end of each week "
           "{n1} gives {c} fish away to {his1} {k1}. How many {os} are in the aquarium after {d} weeks?",
           paraphrase="After {d} weeks, what is the count of {os} in the aquarium?"),
    # 7 fresh
    Family("toy_drive", "{n1} and {his1} {k1} collect toys for a shelter. {n1} collects {a} {os} and {his1} {k1} "
           "collects twice as many. They pack the {os} into boxes of {b}. How many boxes do they fill?",
           "mine = {a}\nbox = {b}\nprint((mine + 2 * mine) // box)",
           lambda a, b: _div(3 * a, b), {"a": R(6, 40), "b": R(3, 12)},
           (("entity", "How many {os} does {n1}'s {k1} collect?", lambda a, b: 2 * a),
            ("unit", "How many dozen {os} do they collect?", lambda a, b: _div(3 * a, 12)),
            ("step", "How many {os} do they collect in all?", lambda a, b: 3 * a),
            ("person", "How many boxes does {n2} fill?", lambda a, b: X),
            ("kin", "How many {os} does {n1}'s {xk} collect?", lambda a, b: X),
            ("object", "How many boxes of {xos} do they fill?", lambda a, b: X)),
           TOYS, alt="{n1} and {his1} {k1} collect toys for a shelter, {n1} collecting {a} {os} and {his1} {k1} "
           "collecting twice as many. They pack the {os} into boxes of {b}. How many boxes do they fill?",
           alt_kind="split", paraphrase="How many boxes are filled?"),
    # 8 dev
    Family("ferry_trip", "A {o} costs {cs}{a} for an adult and {cs}{b} for a child. {n1} travels with {his1} {k1} "
           "and {c} children. How many {cw} do the tickets cost in all?",
           "adult = {a}\nchild = {b}\nchildren = {c}\nprint(2 * adult + children * child)",
           lambda a, b, c: 2 * a + c * b, {"a": R(15, 60), "b": R(5, 14), "c": R(2, 5)},
           (("entity", "How many {cw} do the children's tickets cost?", lambda a, b, c: c * b),
            ("unit", "How many cents do the tickets cost in all?", lambda a, b, c: (2 * a + c * b) * 100),
            ("step", "How many {cw} do the adults' tickets cost?", lambda a, b, c: 2 * a),
            ("person", "How many {cw} do {n2}'s tickets cost in all?", lambda a, b, c: X),
            ("kin", "How many {cw} does the ticket for {n1}'s {xk} cost?", lambda a, b, c: X),
            ("currency", "How many {xw} do the tickets cost in all?", lambda a, b, c: X),
            ("object", "How many {cw} do the {xos} cost in all?", lambda a, b, c: X)),
           TICKETS, alt="{n1} travels with {his1} {k1} and {c} children. A {o} costs {cs}{a} for an adult and "
           "{cs}{b} for a child. How many {cw} do the tickets cost in all?", alt_kind="reorder",
           paraphrase="What do they pay for the tickets altogether, in {cw}?"),
    # 9 fresh
    Family("reading_pages", "{n1} reads a {o} of {a} pages. {He1} reads {b} pages every weekday and {c} pages a "
           "day at the weekend. How many weeks does it take {n1} to finish?",
           "pages = {a}\nweekday = {b}\nweekend = {c}\nprint(pages // (5 * weekday + 2 * weekend))",
           lambda a, b, c: _div(a, 5 * b + 2 * c), {"a": R(120, 900, 10), "b": R(5, 30, 5), "c": R(20, 60, 10)},
           (("entity", "How many pages does {n1} read on a weekend?", lambda a, b, c: 2 * c),
            ("unit", "How many days does it take {n1} to finish?", lambda a, b, c: _div(a, 5 * b + 2 * c) * 7),
            ("step", "How many pages does {n1} read in a week?", lambda a, b, c: 5 * b + 2 * c),
            ("person", "How many weeks does it take {n2} to finish?", lambda a, b, c: X),
            ("object", "How many weeks does it take {n1} to finish the {xo}?", lambda a, b, c: X)),
           BOOKS, alt="{n1} reads a {o} of {a} pages, {b} pages every weekday and {c} pages a day at the "
           "weekend. How many weeks does it take {n1} to finish?",
           paraphrase="In how many weeks will {n1} be done with it?"),
    # 10 dev
    Family("market_crates", "Every morning {n1} loads {a} {os} onto {his1} truck. {He1} sells them at the market for "
           "{cs}{b} each, except {c} that go to {his1} {k1} for free. How many {cw} does {n1} make in {d} mornings?",
           "loaded = {a}\nprice = {b}\nfree = {c}\nmornings = {d}\nprint((loaded - free) * price * mornings)",
           lambda a, b, c, d: (a - c) * b * d, {"a": R(10, 30), "b": R(4, 20), "c": R(1, 5), "d": R(2, 7)},
           (("entity", "How many {os} go to {n1}'s {k1} in {d} mornings?", lambda a, b, c, d: c * d),
            ("unit", "How many {cw} does {n1} make in {d} weeks?", lambda a, b, c, d: X),
            ("step", "How many {cw} does {n1} make in one morning?", lambda a, b, c, d: (a - c) * b),
            ("person", "How many {cw} does {n2} make in {d} mornings?", lambda a, b, c, d: X),
            ("kin", "How many {os} go to {n1}'s {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} make in {d} mornings?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} make from {xos} in {d} mornings?", lambda a, b, c, d: X)),
           CROPS, alt="Every morning {n1} loads {a} {os} onto {his1} truck. {c} of them go to {his1} {k1} for free, "
           "and {he1} sells the rest at the market for {cs}{b} each. How many {cw} does {n1} make in {d} mornings?",
           alt_kind="reorder", paraphrase="What does {n1} earn over {d} mornings, in {cw}?"),
    # 11 fresh
    Family("tool_rental", "A hardware shop rents a {o} for {cs}{a} a day plus a deposit of {cs}{b} that is paid back. "
           "{n1} rents one for {c} days and {his1} {k1} rents one for {d} days. How many {cw} do they pay in rent?",
           "per_day = {a}\ndeposit = {b}\nmy_days = {c}\ntheir_days = {d}\nprint(per_day * (my_days + their_days))",
           lambda a, b, c, d: a * (c + d), {"a": R(5, 30), "b": R(40, 100, 10), "c": R(2, 7), "d": R(2, 7)},
           (("entity", "How many {cw} does {n1} pay in rent?", lambda a, b, c, d: a * c),
            ("unit", "How many cents do they pay in rent?", lambda a, b, c, d: a * (c + d) * 100),
            ("step", "How many days do they rent for in all?", lambda a, b, c, d: c + d),
            ("person", "How many {cw} does {n2} pay in rent?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay in rent?", lambda a, b, c, d: X),
            ("currency", "How many {xw} do they pay in rent?", lambda a, b, c, d: X),
            ("object", "How many {cw} do they pay in rent for the {xo}?", lambda a, b, c, d: X)),
           TOOLS, paraphrase="What is the rent they pay altogether, in {cw}?"),
    # 12 dev
    Family("clothes_sale", "{n1} picks out {a} {os} priced at {cs}{b} apiece and one {o2} priced at {cs}{c}. The "
           "shop takes {d}% off the whole bill. How many {cw} does {n1} pay?",
           "count = {a}\nprice = {b}\nother = {c}\noff = {d}\nbill = count * price + other\n"
           "print(bill - bill * off // 100)",
           lambda a, b, c, d: a * b + c - _div((a * b + c) * d, 100),
           {"a": R(2, 6), "b": R(10, 60, 5), "c": R(20, 90, 10), "d": R(10, 40, 10)},
           (("entity", "How many {cw} do the {os} cost before the discount?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c, d: (a * b + c - _div((a * b + c) * d, 100))
             * 100),
            ("step", "How many {cw} is the bill before the discount?", lambda a, b, c, d: a * b + c),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: X),
            ("object", "How many {cw} do the {xos} cost before the discount?", lambda a, b, c, d: X)),
           CLOTHES, alt="The shop takes {d}% off the whole bill. {n1} picks out {a} {os} priced at {cs}{b} apiece "
           "and one {o2} priced at {cs}{c}. How many {cw} does {n1} pay?", alt_kind="reorder",
           paraphrase="After the discount, what does {n1} pay, in {cw}?"),
    # 13 fresh
    Family("hike_snacks", "{n1} packs snacks for a hike with {a} friends. Everyone, {n1} too, gets {b} {os}. The {os} "
           "come in packs of {c}. How many packs does {n1} need?",
           "friends = {a}\neach = {b}\npack = {c}\nprint((friends + 1) * each // pack)",
           lambda a, b, c: _div((a + 1) * b, c), {"a": R(2, 11), "b": R(2, 6), "c": R(2, 8)},
           (("entity", "How many {os} do {n1}'s friends get in all?", lambda a, b, c: a * b),
            ("unit", "How many dozen {os} does {n1} need?", lambda a, b, c: _div((a + 1) * b, 12)),
            ("step", "How many {os} does {n1} need?", lambda a, b, c: (a + 1) * b),
            ("person", "How many packs does {n2} need?", lambda a, b, c: X),
            ("object", "How many packs of {xos} does {n1} need?", lambda a, b, c: X)),
           SNACKS, alt="{n1} packs snacks for a hike with {a} friends, and everyone, {n1} too, gets {b} {os}. "
           "The {os} come in packs of {c}. How many packs does {n1} need?",
           paraphrase="How many packs must {n1} buy?"),
    # 14 dev
    Family("lake_rental", "At the lake a {o} rents for {cs}{a} for the first hour and {cs}{b} for each hour after "
           "that. {n1} and {his1} {k1} keep one for {c} hours. How many {cw} do they pay?",
           "first = {a}\nlater = {b}\nhours = {c}\nprint(first + later * (hours - 1))",
           lambda a, b, c: a + b * (c - 1), {"a": R(10, 40), "b": R(4, 15), "c": R(2, 6)},
           (("entity", "How many {cw} do they pay for the hours after the first?", lambda a, b, c: b * (c - 1)),
            ("unit", "How many {cw} do they pay per minute?", lambda a, b, c: X),
            ("step", "How many hours do they pay the later rate for?", lambda a, b, c: c - 1),
            ("person", "How many {cw} do {n2} and {his1} {k1} pay?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b, c: X),
            ("currency", "How many {xw} do they pay?", lambda a, b, c: X),
            ("object", "How many {cw} do they pay for the {xo}?", lambda a, b, c: X)),
           RENTALS, alt="{n1} and {his1} {k1} keep a {o} for {c} hours at the lake. It rents for {cs}{a} for the "
           "first hour and {cs}{b} for each hour after that. How many {cw} do they pay?", alt_kind="reorder",
           paraphrase="What is the rental charge, in {cw}?"),
    # 15 fresh
    Family("savings_jar", "{n1} saves {cs}{a} every week for a {o}. {His1} {k1} adds {cs}{b} every two weeks. The {o} "
           "costs {cs}{c}. How many weeks does it take to save enough?",
           "weekly = {a}\nextra = {b}\nprice = {c}\nprint(price // (weekly + extra // 2))",
           lambda a, b, c: _div(c, a + _div(b, 2)), {"a": R(5, 40, 5), "b": R(10, 40, 10), "c": R(100, 800, 20)},
           (("entity", "How many {cw} does {n1} save in two weeks?", lambda a, b, c: 2 * a),
            ("unit", "How many days does it take to save enough?", lambda a, b, c: _div(c, a + _div(b, 2)) * 7),
            ("step", "How many {cw} are saved each week in all?", lambda a, b, c: a + _div(b, 2)),
            ("person", "How many weeks does it take {n2} to save enough?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} add?", lambda a, b, c: X),
            ("currency", "How many weeks does it take to save enough {xw}?", lambda a, b, c: X),
            ("object", "How many weeks does it take to save enough for a {xo}?", lambda a, b, c: X)),
           WISHES,
           alt="The {o} that {n1} wants costs {cs}{c}. {n1} saves {cs}{a} every week, and {his1} {k1} adds {cs}{b} "
           "every two weeks. How many weeks does it take to save enough?", alt_kind="reorder",
           paraphrase="After how many weeks can the {o} be bought?"),
    # 16 dev
    Family("taxi_split", "{n1} and {a} colleagues share a taxi to the airport. The meter shows {cs}{b}, and they add "
           "a tip of {cs}{c}. They split the cost equally. How many {cw} does each person pay?",
           "colleagues = {a}\nfare = {b}\ntip = {c}\nprint((fare + tip) // (colleagues + 1))",
           lambda a, b, c: _div(b + c, a + 1), {"a": R(2, 5), "b": R(30, 150, 5), "c": R(5, 20, 5)},
           (("entity", "How many {cw} do {n1}'s colleagues pay in all?", lambda a, b, c: a * _div(b + c, a + 1)),
            ("unit", "How many cents does each person pay?", lambda a, b, c: _div(b + c, a + 1) * 100),
            ("step", "How many {cw} is the fare with the tip?", lambda a, b, c: b + c),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c: X),
            ("currency", "How many {xw} does each person pay?", lambda a, b, c: X)),
           alt="They split the cost equally: {n1} and {a} colleagues share a taxi to the airport, the meter shows "
           "{cs}{b}, and they add a tip of {cs}{c}. How many {cw} does each person pay?", alt_kind="reorder",
           paraphrase="What is each person's share, in {cw}?"),
    # 17 fresh
    Family("quilt_squares", "{n1} is sewing a quilt with {a} rows of {b} squares. {He1} has sewn {c} squares, and "
           "{his1} {k1} sews {d} more. How many squares are still to sew?",
           "rows = {a}\ncols = {b}\nsewn = {c}\nhelped = {d}\nprint(rows * cols - sewn - helped)",
           lambda a, b, c, d: a * b - c - d, {"a": R(6, 12), "b": R(6, 12), "c": R(10, 30), "d": R(5, 15)},
           (("entity", "How many squares does the quilt have?", lambda a, b, c, d: a * b),
            ("unit", "How many rows of squares are still to sew?", lambda a, b, c, d: X),
            ("step", "How many squares are sewn so far?", lambda a, b, c, d: c + d),
            ("person", "How many squares are still to sew on {n2}'s quilt?", lambda a, b, c, d: X),
            ("kin", "How many squares does {n1}'s {xk} sew?", lambda a, b, c, d: X)),
           alt="{n1} is sewing a quilt with {a} rows of {b} squares, and {he1} has sewn {c} squares. {His1} {k1} "
           "sews {d} more. How many squares are still to sew?",
           paraphrase="How many squares remain to be sewn?"),
    # 18 dev
    Family("school_bus", "A school has {a} classes of {b} pupils. On a trip {c} pupils stay home, and each {o} holds "
           "{d} pupils. How many {os} does the school need for the trip?",
           "classes = {a}\nper_class = {b}\nhome = {c}\nseats = {d}\nprint((classes * per_class - home) // seats)",
           lambda a, b, c, d: _div(a * b - c, d), {"a": R(3, 8), "b": R(20, 32), "c": R(2, 12), "d": R(10, 50)},
           (("entity", "How many pupils does the school have?", lambda a, b, c, d: a * b),
            ("unit", "How many dozen {os} does the school need for the trip?", lambda a, b, c, d: X),
            ("step", "How many pupils go on the trip?", lambda a, b, c, d: a * b - c),
            ("object", "How many {xos} does the school need for the trip?", lambda a, b, c, d: X)),
           (("bus", "buses"), ("minibus", "minibuses"), ("school bus", "school buses"), ("coach", "coaches"),
            ("double-decker bus", "double-decker buses"), ("van", "vans")),
           alt="On a trip {c} pupils stay home from a school of {a} classes of {b} pupils. Each {o} holds {d} "
           "pupils. How many {os} does the school need for the trip?", alt_kind="reorder",
           paraphrase="For the trip, how many {os} are needed?"),
    # 19 fresh
    Family("bead_necklaces", "{n1} makes necklaces for {his1} {k1}'s shop. Each necklace takes {a} {os}. {He1} has "
           "{b} {os} and buys {c} more. How many necklaces can {n1} make?",
           "per_necklace = {a}\nhave = {b}\nbought = {c}\nprint((have + bought) // per_necklace)",
           lambda a, b, c: _div(b + c, a), {"a": R(12, 40), "b": R(50, 300, 10), "c": R(20, 200, 10)},
           (("entity", "How many {os} do two necklaces take?", lambda a, b, c: 2 * a),
            ("unit", "How many dozen necklaces can {n1} make?", lambda a, b, c: X),
            ("step", "How many {os} does {n1} have after buying more?", lambda a, b, c: b + c),
            ("person", "How many necklaces can {n2} make?", lambda a, b, c: X),
            ("kin", "How many necklaces does {n1}'s {xk} make?", lambda a, b, c: X),
            ("object", "How many necklaces of {xos} can {n1} make?", lambda a, b, c: X)),
           (("glass bead", "glass beads"), ("pearl", "pearls"), ("wooden bead", "wooden beads"), ("charm", "charms"),
            ("small crystal bead", "small crystal beads"), ("shell", "shells")),
           alt="Each necklace that {n1} makes for {his1} {k1}'s shop takes {a} {os}. {He1} has {b} {os} and buys {c} "
           "more. How many necklaces can {n1} make?", alt_kind="reorder",
           paraphrase="What is the largest number of necklaces {n1} can make?"),
    # 20 dev
    Family("parking_meter", "Parking in the town center costs {cs}{a} for every {b} minutes. {n1} parks there while "
           "{he1} shops for {c} hours. How many {cw} does {n1} pay for parking?",
           "price = {a}\nblock = {b}\nhours = {c}\nprint(hours * 60 // block * price)",
           lambda a, b, c: _div(c * 60, b) * a, {"a": R(1, 9), "b": R(10, 30, 5), "c": R(2, 6)},
           (("entity", "How many {cw} does parking cost for one hour?", lambda a, b, c: _div(60, b) * a),
            ("unit", "How many cents does {n1} pay for parking?", lambda a, b, c: _div(c * 60, b) * a * 100),
            ("step", "How many minutes does {n1} park?", lambda a, b, c: c * 60),
            ("person", "How many {cw} does {n2} pay for parking?", lambda a, b, c: X),
            ("currency", "How many {xw} does {n1} pay for parking?", lambda a, b, c: X)),
           alt="{n1} shops in the town center for {c} hours. Parking there costs {cs}{a} for every {b} minutes. "
           "How many {cw} does {n1} pay for parking?", alt_kind="reorder",
           paraphrase="What is {n1}'s parking charge, in {cw}?"),
    # 21 fresh
    Family("book_club", "{n1} buys {a} {os} for a book club at {cs}{b} each. {His1} {k1} pays for a third of them. "
           "How many {cw} does {n1} pay?",
           "count = {a}\nprice = {b}\nprint((count - count // 3) * price)",
           lambda a, b: (a - _div(a, 3)) * b, {"a": R(6, 30, 3), "b": R(5, 25)},
           (("entity", "How many {cw} does {n1}'s {k1} pay?", lambda a, b: _div(a, 3) * b),
            ("unit", "How many cents does {n1} pay?", lambda a, b: (a - _div(a, 3)) * b * 100),
            ("step", "How many {os} does {n1} pay for?", lambda a, b: a - _div(a, 3)),
            ("person", "How many {cw} does {n2} pay?", lambda a, b: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b: X),
            ("object", "How many {cw} does {n1} pay for the {xos}?", lambda a, b: X)),
           BOOKS, paraphrase="What is {n1}'s share of the cost, in {cw}?"),
    # 22 dev
    Family("marathon_pace", "{n1} runs {a} laps of a {b}-meter track every morning. {His1} {k1} runs {c} laps fewer. "
           "How many meters do they run together in {d} mornings?",
           "laps = {a}\ntrack = {b}\nfewer = {c}\nmornings = {d}\nprint((laps + laps - fewer) * track * mornings)",
           lambda a, b, c, d: (2 * a - c) * b * d, {"a": R(6, 15), "b": R(200, 500, 100), "c": R(1, 5), "d": R(2, 5)},
           (("entity", "How many meters does {n1} run in {d} mornings?", lambda a, b, c, d: a * b * d),
            ("unit", "How many kilometers do they run together in {d} mornings?",
             lambda a, b, c, d: _div((2 * a - c) * b * d, 1000)),
            ("step", "How many laps does {n1}'s {k1} run every morning?", lambda a, b, c, d: a - c),
            ("person", "How many meters does {n2} run in {d} mornings?", lambda a, b, c, d: X),
            ("kin", "How many meters does {n1}'s {xk} run?", lambda a, b, c, d: X)),
           alt="Every morning {n1} runs {a} laps of a {b}-meter track, and {his1} {k1} runs {c} laps fewer. How "
           "many meters do they run together in {d} mornings?",
           paraphrase="Over {d} mornings, what distance do the two run, in meters?"),
    # 23 fresh
    Family("fabric_cut", "{n1} buys a roll of {a} meters of fabric. {He1} cuts {b} {os}, each needing {c} meters, "
           "and gives {d} meters to {his1} {k1}. How many meters of fabric are left?",
           "roll = {a}\ncount = {b}\neach = {c}\ngiven = {d}\nprint(roll - count * each - given)",
           lambda a, b, c, d: a - b * c - d, {"a": R(30, 80), "b": R(3, 8), "c": R(2, 5), "d": R(1, 6)},
           (("entity", "How many meters of fabric do the {os} use?", lambda a, b, c, d: b * c),
            ("unit", "How many centimeters of fabric are left?", lambda a, b, c, d: (a - b * c - d) * 100),
            ("step", "How many meters of fabric are used or given away?", lambda a, b, c, d: b * c + d),
            ("person", "How many meters of fabric does {n2} have left?", lambda a, b, c, d: X),
            ("kin", "How many meters of fabric does {n1}'s {xk} get?", lambda a, b, c, d: X),
            ("object", "How many meters of fabric do the {xos} use?", lambda a, b, c, d: X)),
           (("curtain", "curtains"), ("apron", "aprons"), ("pillow cover", "pillow covers"),
            ("table runner", "table runners"), ("pair of pajamas", "pairs of pajamas"), ("tote bag", "tote bags")),
           alt="{n1} buys a roll of {a} meters of fabric and gives {d} meters to {his1} {k1}. Then {he1} cuts {b} "
           "{os}, each needing {c} meters. How many meters of fabric are left?", alt_kind="reorder",
           paraphrase="What length of fabric remains, in meters?"),
    # 24 dev
    Family("electric_bill", "{n1}'s family uses {a} kilowatt-hours of electricity a day. Each kilowatt-hour costs "
           "{cs}{b}. How many {cw} is the bill for a {c}-day month?",
           "per_day = {a}\nprice = {b}\ndays = {c}\nprint(per_day * price * days)",
           lambda a, b, c: a * b * c, {"a": R(5, 25), "b": R(2, 9), "c": R(28, 31)},
           (("entity", "How many {cw} does the electricity cost each day?", lambda a, b, c: a * b),
            ("unit", "How many cents is the bill for a {c}-day month?", lambda a, b, c: a * b * c * 100),
            ("step", "How many kilowatt-hours does the family use in a {c}-day month?", lambda a, b, c: a * c),
            ("person", "How many {cw} is {n2}'s bill for a {c}-day month?", lambda a, b, c: X),
            ("currency", "How many {xw} is the bill for a {c}-day month?", lambda a, b, c: X)),
           alt="Each kilowatt-hour of electricity costs {cs}{b}, and {n1}'s family uses {a} of them a day. How many "
           "{cw} is the bill for a {c}-day month?", alt_kind="reorder",
           paraphrase="What does the family pay for a {c}-day month, in {cw}?"),
    # 25 fresh
    Family("fuel_trip", "{n1}'s {o} uses {a} liters of fuel for every 100 kilometers. Fuel costs {cs}{b} a liter. "
           "{n1} drives {c} kilometers in all on a trip to {his1} {k1}. How many {cw} does the fuel cost?",
           "per_100 = {a}\nprice = {b}\ndistance = {c}\nprint(per_100 * distance // 100 * price)",
           lambda a, b, c: _div(a * c, 100) * b, {"a": R(4, 12), "b": R(2, 9), "c": R(200, 900, 100)},
           (("entity", "How many {cw} does fuel for 100 kilometers cost?", lambda a, b, c: a * b),
            ("unit", "How many {cw} does the fuel cost per kilometer?", lambda a, b, c: X),
            ("step", "How many liters of fuel does the {o} use on the trip?", lambda a, b, c: _div(a * c, 100)),
            ("person", "How many {cw} does {n2}'s fuel cost?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay for fuel?", lambda a, b, c: X),
            ("currency", "How many {xw} does the fuel cost?", lambda a, b, c: X),
            ("object", "How many {cw} does the fuel for the {xo} cost?", lambda a, b, c: X)),
           (("car", "cars"), ("old van", "old vans"), ("hatchback", "hatchbacks"), ("pickup truck", "pickup trucks"),
            ("motorbike", "motorbikes"), ("camper van", "camper vans")),
           alt="{n1} drives {c} kilometers in all on a trip to {his1} {k1}. {His1} {o} uses {a} liters of fuel for "
           "every 100 kilometers, and fuel costs {cs}{b} a liter. How many {cw} does the fuel cost?",
           alt_kind="reorder", paraphrase="What is the cost of fuel for the trip, in {cw}?"),
    # 26 dev
    Family("tutoring_income", "{n1} tutors {a} students. Each student has {b} lessons a month, and a lesson costs "
           "{cs}{c}. {n1} gives {d}% of what {he1} earns to {his1} {k1}. How many {cw} does {n1} keep each month?",
           "students = {a}\nlessons = {b}\nprice = {c}\npct = {d}\nearned = students * lessons * price\n"
           "print(earned - earned * pct // 100)",
           lambda a, b, c, d: a * b * c - _div(a * b * c * d, 100),
           {"a": R(2, 8), "b": R(2, 8), "c": R(10, 50, 5), "d": R(10, 30, 10)},
           (("entity", "How many {cw} does {n1}'s {k1} get each month?", lambda a, b, c, d: _div(a * b * c * d, 100)),
            ("unit", "How many {cw} does {n1} keep each year?", lambda a, b, c, d: (a * b * c - _div(a * b * c * d,
                                                                                                      100)) * 12),
            ("step", "How many {cw} does {n1} earn each month?", lambda a, b, c, d: a * b * c),
            ("person", "How many {cw} does {n2} keep each month?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} get each month?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} keep each month?", lambda a, b, c, d: X)),
           alt="{n1} tutors {a} students, each of them having {b} lessons a month at {cs}{c} a lesson. {He1} gives "
           "{d}% of what {he1} earns to {his1} {k1}. How many {cw} does {n1} keep each month?",
           paraphrase="What monthly amount stays with {n1}, in {cw}?"),
    # 27 fresh
    Family("stadium_stand", "A stadium stand has {a} sections with {b} seats in each. {c} seats are closed for "
           "repairs, and a quarter of the rest go to season-ticket holders. {n1} buys {d} of the others. How many "
           "seats are still for sale?",
           "sections = {a}\nper_section = {b}\nclosed = {c}\nbought = {d}\n"
           "open_seats = sections * per_section - closed\n"
           "print(open_seats - open_seats // 4 - bought)",
           lambda a, b, c, d: a * b - c - _div(a * b - c, 4) - d,
           {"a": R(4, 12), "b": R(40, 120, 10), "c": R(4, 40, 4), "d": R(2, 9)},
           (("entity", "How many seats go to season-ticket holders?", lambda a, b, c, d: _div(a * b - c, 4)),
            ("unit", "How many sections of seats are still for sale?", lambda a, b, c, d: X),
            ("step", "How many seats are not closed for repairs?", lambda a, b, c, d: a * b - c),
            ("person", "How many seats does {n2} buy?", lambda a, b, c, d: X)),
           alt="{c} seats of a stadium stand are closed for repairs. The stand has {a} sections with {b} seats in "
           "each, and a quarter of the seats that are open go to season-ticket holders. {n1} buys {d} of the "
           "others. How many seats are still for sale?", alt_kind="reorder"),
    # 28 dev
    Family("yoga_teacher", "{n1} teaches {a} yoga classes a week at {cs}{b} a class. {He1} pays {his1} {k1} {cs}{c} "
           "a week to rent the studio. How many {cw} does {n1} earn in {d} weeks after the rent?",
           "classes = {a}\nper_class = {b}\nrent = {c}\nweeks = {d}\nprint((classes * per_class - rent) * weeks)",
           lambda a, b, c, d: (a * b - c) * d, {"a": R(3, 12), "b": R(15, 60, 5), "c": R(20, 100, 10), "d": R(2, 8)},
           (("entity", "How many {cw} does {n1} pay in rent in {d} weeks?", lambda a, b, c, d: c * d),
            ("unit", "How many {cw} does {n1} earn in {d} months after the rent?", lambda a, b, c, d: X),
            ("step", "How many {cw} does {n1} earn in one week after the rent?", lambda a, b, c, d: a * b - c),
            ("person", "How many {cw} does {n2} earn in {d} weeks after the rent?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1} pay {his1} {xk}?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} earn in {d} weeks after the rent?", lambda a, b, c, d: X)),
           alt="{n1} pays {his1} {k1} {cs}{c} a week to rent a studio. There {he1} teaches {a} yoga classes a week at "
           "{cs}{b} a class. How many {cw} does {n1} earn in {d} weeks after the rent?", alt_kind="reorder",
           paraphrase="Over {d} weeks, what does {n1} clear once the rent is paid, in {cw}?"),
    # 29 fresh
    Family("print_shop", "A print shop charges {cs}{a} for each color page and {cs}{b} for each black-and-white "
           "page. {n1} prints {c} color pages and {d} black-and-white pages for {his1} {k1}'s band. How many {cw} "
           "does {n1} pay?",
           "color = {a}\nplain = {b}\ncolor_pages = {c}\nplain_pages = {d}\n"
           "print(color * color_pages + plain * plain_pages)",
           lambda a, b, c, d: a * c + b * d, {"a": R(3, 9), "b": R(1, 2), "c": R(10, 60), "d": R(20, 120)},
           (("entity", "How many {cw} do the color pages cost?", lambda a, b, c, d: a * c),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c, d: (a * c + b * d) * 100),
            ("step", "How many pages does {n1} print?", lambda a, b, c, d: c + d),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: X)),
           alt="{n1} prints {c} color pages and {d} black-and-white pages for {his1} {k1}'s band. The print shop "
           "charges {cs}{a} for each color page and {cs}{b} for each black-and-white page. How many {cw} does {n1} "
           "pay?", alt_kind="reorder", paraphrase="What is {n1}'s bill at the print shop, in {cw}?"),
    # 30 dev
    Family("road_lead", "{n1} cycles at {a} kilometers an hour. {His1} {k1} drives the same road at {b} kilometers "
           "an hour. They leave together. How many kilometers ahead is the {k1} after {c} hours?",
           "bike = {a}\ncar = {b}\nhours = {c}\nprint((car - bike) * hours)",
           lambda a, b, c: (b - a) * c, {"a": R(10, 25), "b": R(40, 90, 5), "c": R(2, 5)},
           (("entity", "How many kilometers does {n1} cycle in {c} hours?", lambda a, b, c: a * c),
            ("unit", "How many meters ahead is the {k1} after {c} hours?", lambda a, b, c: (b - a) * c * 1000),
            ("step", "How many kilometers an hour faster does the {k1} go?", lambda a, b, c: b - a),
            ("person", "How many kilometers does {n2} cycle in {c} hours?", lambda a, b, c: X),
            ("kin", "How many kilometers ahead is {n1}'s {xk} after {c} hours?", lambda a, b, c: X)),
           alt="{n1} and {his1} {k1} leave together on the same road, {n1} cycling at {a} kilometers an hour and the "
           "{k1} driving at {b} kilometers an hour. How many kilometers ahead is the {k1} after {c} hours?",
           alt_kind="split", paraphrase="After {c} hours, by how many kilometers does the {k1} lead?"),
    # 31 fresh
    Family("stamp_album", "{n1} has {a} stamps. {His1} {k1} has {b} more than three times as many. They put all their "
           "stamps in an album with {c} stamps on a page. How many pages do they fill?",
           "mine = {a}\nmore = {b}\npage = {c}\nprint((mine + 3 * mine + more) // page)",
           lambda a, b, c: _div(4 * a + b, c), {"a": R(10, 60), "b": R(2, 20), "c": R(4, 12)},
           (("entity", "How many stamps does {n1}'s {k1} have?", lambda a, b, c: 3 * a + b),
            ("unit", "How many stamps are on the last page?", lambda a, b, c: X),
            ("step", "How many stamps do they have in all?", lambda a, b, c: 4 * a + b),
            ("person", "How many pages does {n2} fill?", lambda a, b, c: X),
            ("kin", "How many stamps does {n1}'s {xk} have?", lambda a, b, c: X)),
           alt="{n1} has {a} stamps, and {his1} {k1} has {b} more than three times as many. They put all their "
           "stamps in an album. There are {c} stamps on a page. How many pages do they fill?",
           paraphrase="How many album pages are filled?"),
    # 32 dev
    Family("hostel_stay", "{n1} and {his1} {k1} stay {a} nights at a hostel. A bed costs {cs}{b} a night for each of "
           "them, and breakfast is {cs}{c} a day for each. How many {cw} do they pay in all?",
           "nights = {a}\nbed = {b}\nbreakfast = {c}\nprint(2 * nights * (bed + breakfast))",
           lambda a, b, c: 2 * a * (b + c), {"a": R(2, 9), "b": R(10, 40), "c": R(3, 9)},
           (("entity", "How many {cw} does {n1}'s {k1} pay for the bed?", lambda a, b, c: a * b),
            ("unit", "How many cents do they pay in all?", lambda a, b, c: 2 * a * (b + c) * 100),
            ("step", "How many {cw} does one night with breakfast cost for one of them?", lambda a, b, c: b + c),
            ("person", "How many {cw} do {n2} and {his1} {k1} pay in all?", lambda a, b, c: X),
            ("kin", "How many {cw} does {n1}'s {xk} pay?", lambda a, b, c: X),
            ("currency", "How many {xw} do they pay in all?", lambda a, b, c: X)),
           alt="A bed at a hostel costs {cs}{b} a night for one person, and breakfast is {cs}{c} a day. {n1} and "
           "{his1} {k1} stay there {a} nights. How many {cw} do they pay in all?", alt_kind="reorder",
           paraphrase="What is the total for the two of them, in {cw}?"),
    # 33 fresh
    Family("battery_days", "A {o} runs for {a} hours on a full battery. {n1} uses it for {b} minutes every day. How "
           "many days does a full battery last?",
           "hours = {a}\nper_day = {b}\nprint(hours * 60 // per_day)",
           lambda a, b: _div(a * 60, b), {"a": R(4, 30), "b": R(10, 90, 5)},
           (("entity", "How many minutes does {n1} use it in a week?", lambda a, b: 7 * b),
            ("unit", "How many weeks does a full battery last?", lambda a, b: X),
            ("step", "How many minutes does the {o} run on a full battery?", lambda a, b: a * 60),
            ("person", "How many days does a full battery last for {n2}?", lambda a, b: X),
            ("object", "How many days does a full battery of the {xo} last?", lambda a, b: X)),
           (("flashlight", "flashlights"), ("wireless speaker", "wireless speakers"),
            ("pair of headphones", "pairs of headphones"), ("e-reader", "e-readers"),
            ("electric toothbrush", "electric toothbrushes"), ("game controller", "game controllers")),
           alt="{n1} uses a {o} for {b} minutes every day, and it runs for {a} hours on a full battery. How many "
           "days does a full battery last?", alt_kind="reorder",
           paraphrase="For how many days will one full charge be enough?"),
    # 34 dev
    Family("wedding_tables", "{n1} is catering {his1} {k1}'s wedding for {a} guests. Each table seats {b} guests and "
           "gets {c} {os}. How many {os} does {n1} need?",
           "guests = {a}\nseats = {b}\nper_table = {c}\nprint(guests // seats * per_table)",
           lambda a, b, c: _div(a, b) * c, {"a": R(40, 200, 4), "b": R(4, 12), "c": R(2, 6)},
           (("entity", "How many guests sit at two tables?", lambda a, b, c: 2 * b),
            ("unit", "How many dozen {os} does {n1} need?", lambda a, b, c: X),
            ("step", "How many tables are there?", lambda a, b, c: _div(a, b)),
            ("person", "How many {os} does {n2} need?", lambda a, b, c: X),
            ("kin", "How many guests come to {n1}'s {xk}'s wedding?", lambda a, b, c: X),
            ("object", "How many {xos} does {n1} need?", lambda a, b, c: X)),
           (("vase of flowers", "vases of flowers"), ("candle", "candles"), ("bread basket", "bread baskets"),
            ("bottle of sparkling water", "bottles of sparkling water"), ("napkin ring", "napkin rings"),
            ("centerpiece", "centerpieces")),
           alt="{n1} is catering {his1} {k1}'s wedding for {a} guests, and each table seats {b} guests. Each table "
           "gets {c} {os}. How many {os} does {n1} need?", paraphrase="What number of {os} must {n1} have ready?"),
    # 35 fresh
    Family("shop_markup", "A shop buys {os} for {cs}{a} each and sells them for {b}% more. {n1} buys {c} of them and "
           "pays {cs}{d} for delivery. How many {cw} does {n1} pay?",
           "cost = {a}\nmarkup = {b}\ncount = {c}\ndelivery = {d}\n"
           "print((cost + cost * markup // 100) * count + delivery)",
           lambda a, b, c, d: (a + _div(a * b, 100)) * c + d,
           {"a": R(10, 80, 10), "b": R(10, 50, 10), "c": R(2, 6), "d": R(5, 15)},
           (("entity", "How many {cw} does the shop pay for {c} of the {os}?", lambda a, b, c, d: a * c),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c, d: ((a + _div(a * b, 100)) * c + d) * 100),
            ("step", "How many {cw} does the shop sell one of the {os} for?", lambda a, b, c, d: a + _div(a * b, 100)),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: X),
            ("object", "How many {cw} does {n1} pay for the {xos}?", lambda a, b, c, d: X)),
           TOOLS, paraphrase="What does {n1} pay in all, in {cw}?"),
    # 36 dev
    Family("swim_lengths", "{n1} swims a length of the pool in {a} seconds while {his1} {k1} times {him1}. {He1} swims "
           "{b} lengths and rests {c} seconds after each length but the last. How many seconds does {n1} take?",
           "length = {a}\nlengths = {b}\nrest = {c}\nprint(length * lengths + rest * (lengths - 1))",
           lambda a, b, c: a * b + c * (b - 1), {"a": R(25, 60), "b": R(4, 12), "c": R(10, 20)},
           (("entity", "How many seconds does {n1} spend swimming?", lambda a, b, c: a * b),
            ("unit", "How many minutes does {n1} take?", lambda a, b, c: _div(a * b + c * (b - 1), 60)),
            ("step", "How many seconds does {n1} rest?", lambda a, b, c: c * (b - 1)),
            ("person", "How many seconds does {n2} take?", lambda a, b, c: X),
            ("kin", "How many seconds does {n1}'s {xk} take?", lambda a, b, c: X)),
           alt="{n1} swims {b} lengths of the pool while {his1} {k1} times {him1}. Each length takes {a} seconds, and "
           "{he1} rests {c} seconds after each length but the last. How many seconds does {n1} take?",
           alt_kind="reorder", paraphrase="How long does the swim take {n1} with the rests, in seconds?"),
    # 37 fresh
    Family("weekly_pass", "A single {o} costs {cs}{a} and a weekly pass costs {cs}{b}. {n1} makes {c} trips a week. "
           "How many {cw} does {n1} save in {d} weeks by buying the weekly pass?",
           "single = {a}\npass_price = {b}\ntrips = {c}\nweeks = {d}\nprint((single * trips - pass_price) * weeks)",
           lambda a, b, c, d: (a * c - b) * d, {"a": R(2, 9), "b": R(15, 40), "c": R(8, 14), "d": R(2, 6)},
           (("entity", "How many {cw} do a week's trips cost with single tickets?", lambda a, b, c, d: a * c),
            ("unit", "How many {cw} does {n1} save in {d} days by buying the weekly pass?", lambda a, b, c, d: X),
            ("step", "How many {cw} does {n1} save each week?", lambda a, b, c, d: a * c - b),
            ("person", "How many {cw} does {n2} save in {d} weeks?", lambda a, b, c, d: X),
            ("currency", "How many {xw} does {n1} save in {d} weeks by buying the weekly pass?",
             lambda a, b, c, d: X),
            ("object", "How many {cw} does a single {xo} cost?", lambda a, b, c, d: X)),
           (("bus ride", "bus rides"), ("tram ticket", "tram tickets"), ("metro ride", "metro rides"),
            ("ferry crossing", "ferry crossings"), ("ride on the cable car", "rides on the cable car"),
            ("ticket", "tickets")),
           alt="{n1} makes {c} trips a week. A single {o} costs {cs}{a}, and a weekly pass costs {cs}{b}. How many "
           "{cw} does {n1} save in {d} weeks by buying the weekly pass?", alt_kind="reorder",
           paraphrase="Over {d} weeks, what does the weekly pass save {n1}, in {cw}?"),
    # 38 dev
    Family("bookshop_weekend", "{n1}'s {k1} runs a bookshop. On Saturday the shop sells {a} {os}, and on Sunday it "
           "sells three fifths as many. Each one costs {cs}{b}. How many {cw} does the shop take in over the weekend?",
           "saturday = {a}\nprice = {b}\nprint((saturday + saturday * 3 // 5) * price)",
           lambda a, b: (a + _div(3 * a, 5)) * b, {"a": R(10, 60, 5), "b": R(4, 25)},
           (("entity", "How many {os} does the shop sell on Sunday?", lambda a, b: _div(3 * a, 5)),
            ("unit", "How many cents does the shop take in over the weekend?",
             lambda a, b: (a + _div(3 * a, 5)) * b * 100),
            ("step", "How many {os} does the shop sell over the weekend?", lambda a, b: a + _div(3 * a, 5)),
            ("person", "How many {cw} does {n2}'s shop take in over the weekend?", lambda a, b: X),
            ("kin", "How many {os} does {n1}'s {xk} sell?", lambda a, b: X),
            ("currency", "How many {xw} does the shop take in over the weekend?", lambda a, b: X),
            ("object", "How many {cw} does the shop take in from {xos}?", lambda a, b: X)),
           BOOKS, alt="{n1}'s {k1} runs a bookshop that sells {a} {os} on Saturday and three fifths as many on "
           "Sunday. Each one costs {cs}{b}. How many {cw} does the shop take in over the weekend?",
           paraphrase="What are the shop's weekend takings, in {cw}?"),
    # 39 fresh
    Family("street_trees", "Volunteers plant {a} trees on each of {b} streets. {n1}'s group plants {c} more in the "
           "park. A fifth of all the trees are {os}. How many {os} are planted?",
           "per_street = {a}\nstreets = {b}\npark = {c}\nprint((per_street * streets + park) // 5)",
           lambda a, b, c: _div(a * b + c, 5), {"a": R(6, 20), "b": R(3, 9), "c": R(5, 40)},
           (("entity", "How many trees are planted on the streets?", lambda a, b, c: a * b),
            ("unit", "How many rows of {os} are planted?", lambda a, b, c: X),
            ("step", "How many trees are planted in all?", lambda a, b, c: a * b + c),
            ("person", "How many trees does {n2}'s group plant in the park?", lambda a, b, c: X),
            ("object", "How many {xos} are planted?", lambda a, b, c: X)),
           (("oak", "oaks"), ("cherry tree", "cherry trees"), ("silver birch", "silver birches"),
            ("young lime tree", "young lime trees"), ("maple", "maples"), ("pine", "pines")),
           alt="Volunteers plant {a} trees on each of {b} streets, and {n1}'s group plants {c} more in the park. "
           "A fifth of all the trees are {os}. How many {os} are planted?",
           paraphrase="What number of {os} go into the ground?"),
)


POOL = Pool(POOL2_FAMILIES, POOLS, SEED, half_of, (DEV_NAME, HELD_OUT_NAME))
pool_instances, half_families, build, pool_problems = POOL.instances, POOL.half_families, POOL.build, POOL.problems


def main() -> None:
    POOL.write()


if __name__ == "__main__":
    main()
