"""The varied flywheel development sets (`varied-dev`, `varied-check`): 44 word-problem families written for this
project in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic, which are
reserved for held-out evaluation), varied on purpose where bench/flywheel_gsm_data.py is not: money in several
currencies (symbols and words), rates, percentages, fractions, time, comparisons, multi-step intermediate
quantities, clause reorderings and sentences split or joined, paraphrased questions, objects of one or more words,
people's names from several cultures (some that no name list knows), kinship and role nouns.

Each family is a template (numbers `{a}`..`{d}`; people `{n1}`, `{n2}` with pronouns `{he1}`, `{his1}`, `{him1}`,
`{He1}`, `{His1}` (and `..2`) that follow the drawn person's gender; a kinship or role noun `{k1}`; a currency
`{cs}` (symbol), `{cw}` (word, plural); objects `{o}`/`{os}`, `{o2}`/`{os2}`, one or more words), its reference
program (numbers only), optional `alt` (the same statements with other sentence boundaries or clause order, the
question last), an optional `paraphrase` of the question sentence (same answer), and near-miss question sentences
that must be refused: `entity` (another person or object asked about), `unit` (another unit), `step` (another
step), and one per slot kind the family has: `person`, `kin`, `currency`, `object`.

Rows per family: library (the base instance with its program); eval `recurrence` (the base again), `renamed` x3 (new
numbers, people, kin, currency and objects), `transfer` (new numbers only), `reordered` (the `alt` template,
renamed, variant `split` or `reorder`), `transfer` variant `paraphrase` (renamed, the question paraphrased: the
alignment is expected to refuse these; counted apart), and the near misses on a renamed instance (role
`near_miss_entity` for entity/person/kin/object, `near_miss_unit` for unit/currency, `near_miss_step`; `variant`
names the kind). A near miss that asks in another currency than the text has no answer (`"refuse"`, which no
number matches: any answer counts as wrong).

The split is fixed before any tuning: families in written order, even positions -> `varied-dev`, odd ->
`varied-check` (seed 38 for both).

    python -m bench.flywheel_varied_data   # rewrites bench/data/flywheel-varied-{dev,check}-{library,eval}.jsonl
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.flywheel_gsm_data import _div, _Redraw

DATA_DIR = Path(__file__).parent / "data"
SEED = 38
SPLITS = ("dev", "check")
RENAMED_PER_FAMILY = 3
NO_ANSWER = "refuse"  # a near miss whose question has no answer (it mixes currencies)

# several cultures; some names no name list knows (their gender comes from the pronouns the template uses)
NAMES = tuple((n, "f") for n in "Aiko Fatima Ingrid Anjali Yuki Leilani Zainab Mei Esperanza Nadia Sofia Laila "
              "Olga Amara Siobhan Nkechi Thandiwe Xiulan Aroha Priya Chiamaka Gulnara".split()) + tuple(
    (n, "m") for n in "Kwame Dmitri Santiago Mehmet Tariq Hiroshi Lars Arjun Emeka Kofi Rajesh Pedro Jin Ahmed "
    "Oluwaseun Tendai Bongani Tamati Chidi Matteo Sipho Wojciech".split())
PRONOUNS = {"m": ("he", "his", "him"), "f": ("she", "her", "her")}
KIN = ("brother", "sister", "uncle", "aunt", "cousin", "grandmother", "grandfather", "neighbor", "teacher", "coach",
       "niece", "nephew")
CURRENCIES = (("$", "dollars"), ("€", "euros"), ("£", "pounds"), ("¥", "yen"), ("₹", "rupees"), ("₱", "pesos"))

Fn = Callable[..., Any]


@dataclass(frozen=True)
class Family:
    name: str
    text: str  # statements, then the question sentence
    program: str
    answer: Fn
    ranges: dict[str, tuple[int, int, int]]  # number -> (low, high, step)
    misses: tuple[tuple[str, str, Fn], ...]  # (kind, question sentence, answer)
    objects: tuple[tuple[str, str], ...] = ()
    alt: str | None = None  # the same statements, other sentence boundaries or clause order; question last
    alt_kind: str = "split"
    paraphrase: str | None = None  # the question sentence in other words (same answer)

    @property
    def question(self) -> str:
        return _sentences(self.text)[-1]

    def with_question(self, question: str) -> str:
        return self.text[: len(self.text) - len(self.question)] + question


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.?])\s+(?=[A-Z{])", text)


def R(low: int, high: int, step: int = 1) -> tuple[int, int, int]:  # noqa: N802
    return (low, high, step)


FOOD = (("apple", "apples"), ("banana", "bananas"), ("mango", "mangoes"), ("peach", "peaches"), ("plum", "plums"),
        ("pear", "pears"), ("orange", "oranges"), ("kiwi", "kiwis"))
TOYS = (("toy car", "toy cars"), ("marble", "marbles"), ("trading card", "trading cards"), ("yo-yo", "yo-yos"),
        ("puzzle", "puzzles"), ("board game", "board games"), ("stuffed bear", "stuffed bears"), ("kite", "kites"),
        ("toy truck", "toy trucks"), ("sticker", "stickers"))
SUPPLIES = (("pencil", "pencils"), ("notebook", "notebooks"), ("eraser", "erasers"), ("glue stick", "glue sticks"),
            ("marker", "markers"), ("ruler", "rulers"), ("paint brush", "paint brushes"), ("crayon", "crayons"))
BAKED = (("cookie", "cookies"), ("muffin", "muffins"), ("cupcake", "cupcakes"), ("brownie", "brownies"),
         ("banana bread loaf", "banana bread loaves"), ("cinnamon roll", "cinnamon rolls"), ("scone", "scones"),
         ("apple pie", "apple pies"))
FLOWERS = (("rose", "roses"), ("tulip", "tulips"), ("daisy", "daisies"), ("sunflower", "sunflowers"),
           ("lily", "lilies"), ("orchid", "orchids"), ("marigold", "marigolds"))
CLOTHES = (("shirt", "shirts"), ("scarf", "scarves"), ("hat", "hats"), ("pair of socks", "pairs of socks"),
           ("sweater", "sweaters"), ("rain jacket", "rain jackets"), ("belt", "belts"))
TREATS = (("lollipop", "lollipops"), ("chocolate bar", "chocolate bars"), ("gumdrop", "gumdrops"),
          ("candy cane", "candy canes"), ("jelly bean", "jelly beans"), ("toffee", "toffees"))
BOOKS = (("comic book", "comic books"), ("novel", "novels"), ("magazine", "magazines"), ("picture book",
         "picture books"), ("cookbook", "cookbooks"), ("storybook", "storybooks"))
VEG = (("carrot", "carrots"), ("tomato", "tomatoes"), ("potato", "potatoes"), ("onion", "onions"),
       ("bell pepper", "bell peppers"), ("cucumber", "cucumbers"), ("zucchini", "zucchinis"))

FAMILIES: tuple[Family, ...] = (
    Family("allowance", "{n1} earns {cs}{a} a week walking {his1} {k1}'s dog. {He1} saves the money for {b} weeks "
           "and then spends {cs}{c} on {os}. How many {cw} does {n1} have left?",
           "weekly = {a}\nweeks = {b}\nspent = {c}\nprint(weekly * weeks - spent)", lambda a, b, c: a * b - c,
           {"a": R(5, 30), "b": R(3, 12), "c": R(10, 60)},
           (("unit", "How many cents does {n1} have left?", lambda a, b, c: (a * b - c) * 100),
            ("step", "How many {cw} does {n1} save?", lambda a, b, c: a * b),
            ("currency", "How many {xw} does {n1} have left?", lambda a, b, c: NO_ANSWER)),
           TOYS, alt="{n1} earns {cs}{a} a week walking {his1} {k1}'s dog, and {he1} saves the money for {b} weeks. "
           "Then {he1} spends {cs}{c} on {os}. How many {cw} does {n1} have left?",
           paraphrase="How much money does {n1} have left?"),
    Family("fruit_stand", "{n1} buys {a} {os} and {b} {os2} at the market. Each of the {os} costs {cs}{c}, and each of "
           "the {os2} costs {cs}{d}. How many {cw} does {n1} spend?",
           "first = {a}\nsecond = {b}\nprice_1 = {c}\nprice_2 = {d}\nprint(first * price_1 + second * price_2)",
           lambda a, b, c, d: a * c + b * d, {"a": R(2, 12), "b": R(2, 12), "c": R(2, 9), "d": R(2, 9)},
           (("entity", "How many {cw} does {n1} spend on {os2}?", lambda a, b, c, d: b * d),
            ("step", "How many pieces of fruit does {n1} buy?", lambda a, b, c, d: a + b),
            ("unit", "How many cents does {n1} spend?", lambda a, b, c, d: (a * c + b * d) * 100),
            ("currency", "How many {xw} does {n1} spend?", lambda a, b, c, d: NO_ANSWER)),
           FOOD, alt="{n1} buys {a} {os} and {b} {os2} at the market. Each of the {os} costs {cs}{c}. Each of the "
           "{os2} costs {cs}{d}. How many {cw} does {n1} spend?"),
    Family("discount", "A {o} costs {cs}{a} at the store. {n1} buys it during a sale with {b}% off. How many {cw} does "
           "{n1} pay?", "price = {a}\noff = {b}\nprint(price - price * off // 100)",
           lambda a, b: a - _div(a * b, 100), {"a": R(20, 200, 10), "b": R(10, 50, 5)},
           (("step", "How many {cw} does {n1} save?", lambda a, b: _div(a * b, 100)),
            ("unit", "How many cents does {n1} pay?", lambda a, b: (a - _div(a * b, 100)) * 100),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b: NO_ANSWER)),
           CLOTHES, paraphrase="What is the price {n1} pays?"),
    Family("reading", "{n1} read {a} pages of a {o} on Monday. On Tuesday {he1} read twice as many pages as on "
           "Monday. The {o} has {b} pages. How many pages does {n1} still have to read?",
           "monday = {a}\ntotal = {b}\nprint(total - monday - 2 * monday)", lambda a, b: b - 3 * a,
           {"a": R(10, 40), "b": R(150, 300)},
           (("step", "How many pages did {n1} read on Tuesday?", lambda a, b: 2 * a),
            ("entity", "How many pages did {n1} read in all?", lambda a, b: 3 * a)),
           BOOKS, paraphrase="How many pages of the {o} are left for {n1} to read?"),
    Family("garden_rows", "{n1} plants {a} rows of {os} in {his1} garden. Each row has {b} {os}. {His1} {k1} plants "
           "{c} more {os} by the fence. How many {os} are in the garden now?",
           "rows = {a}\nper_row = {b}\nextra = {c}\nprint(rows * per_row + extra)", lambda a, b, c: a * b + c,
           {"a": R(3, 12), "b": R(4, 15), "c": R(2, 20)},
           (("step", "How many {os} did {n1} plant?", lambda a, b, c: a * b),
            ("kin", "How many {os} did {his1} {xk} plant?", lambda a, b, c: c),
            ("unit", "How many dozens of {os} are in the garden now?", lambda a, b, c: _div(a * b + c, 12))),
           VEG, alt="{n1} plants {a} rows of {os} in {his1} garden, and each row has {b} {os}. {His1} {k1} plants "
           "{c} more {os} by the fence. How many {os} are in the garden now?"),
    Family("bus_trip", "A bus travels at {a} kilometers per hour. {n1} rides the bus for {b} hours to visit {his1} "
           "{k1}. How many kilometers does {n1} travel?", "speed = {a}\nhours = {b}\nprint(speed * hours)",
           lambda a, b: a * b, {"a": R(30, 90, 5), "b": R(2, 9)},
           (("unit", "How many meters does {n1} travel?", lambda a, b: a * b * 1000),
            ("step", "How many kilometers does {n1} travel there and back?", lambda a, b: 2 * a * b)),
           paraphrase="How far does {n1} travel in kilometers?"),
    Family("savings_goal", "{n1} wants to buy {a} {os} that cost {cs}{b} each. {He1} has saved {cs}{c} so far. How "
           "many more {cw} does {n1} need?", "count = {a}\nprice = {b}\nsaved = {c}\nprint(count * price - saved)",
           lambda a, b, c: a * b - c, {"a": R(2, 8), "b": R(10, 40), "c": R(5, 30)},
           (("step", "How many {cw} do the {os} cost?", lambda a, b, c: a * b),
            ("currency", "How many more {xw} does {n1} need?", lambda a, b, c: NO_ANSWER),
            ("unit", "How many more cents does {n1} need?", lambda a, b, c: (a * b - c) * 100)),
           TOYS, alt="{n1} has saved {cs}{c} so far. {He1} wants to buy {a} {os} that cost {cs}{b} each. How many more "
           "{cw} does {n1} need?", alt_kind="reorder"),
    Family("marbles_share", "{n1} has {a} {os}. {n2} has {b} more {os} than {n1}. How many {os} do {n1} and {n2} have "
           "together?", "first = {a}\nmore = {b}\nprint(first + first + more)", lambda a, b: 2 * a + b,
           {"a": R(10, 60), "b": R(3, 25)},
           (("person", "How many {os} does {n2} have?", lambda a, b: a + b),
            ("step", "How many more {os} does {n2} have than {n1}?", lambda a, b: b),
            ("unit", "How many dozens of {os} do {n1} and {n2} have together?", lambda a, b: _div(2 * a + b, 12))),
           TOYS, paraphrase="What is the total number of {os} that {n1} and {n2} have?"),
    Family("pizza_fraction", "{n1} ordered {a} pizzas for a party. Each pizza was cut into {b} slices. The guests ate "
           "3/4 of the slices. How many slices were left?", "pizzas = {a}\nslices = {b}\n"
           "total = pizzas * slices\nprint(total - total * 3 // 4)", lambda a, b: a * b - _div(3 * a * b, 4),
           {"a": R(2, 12), "b": R(4, 12, 4)},
           (("step", "How many slices did the guests eat?", lambda a, b: _div(3 * a * b, 4)),
            ("entity", "How many pizzas were left?", lambda a, b: _div(a, 4) if a % 4 == 0 else NO_ANSWER)),
           paraphrase="How many of the slices did nobody eat?"),
    Family("work_hours", "{n1} works {a} hours a day at the {o}, {b} days a week. {He1} is paid {cs}{c} per hour. How "
           "many {cw} does {n1} earn in a week?", "hours = {a}\ndays = {b}\nrate = {c}\nprint(hours * days * rate)",
           lambda a, b, c: a * b * c, {"a": R(3, 9), "b": R(2, 6), "c": R(8, 25)},
           (("step", "How many hours does {n1} work in a week?", lambda a, b, c: a * b),
            ("unit", "How many {cw} does {n1} earn in a day?", lambda a, b, c: a * c),
            ("currency", "How many {xw} does {n1} earn in a week?", lambda a, b, c: NO_ANSWER)),
           (("bakery", "bakeries"), ("bookstore", "bookstores"), ("flower shop", "flower shops"), ("cafe", "cafes"),
            ("pet store", "pet stores"), ("grocery store", "grocery stores")),
           alt="{n1} works {a} hours a day at the {o}, {b} days a week, and {he1} is paid {cs}{c} per hour. How many "
           "{cw} does {n1} earn in a week?"),
    Family("cookies_boxes", "{n1} baked {a} {os} for the school fair. {He1} put them into boxes of {b}. {He1} sold "
           "each box for {cs}{c}. How many {cw} did {n1} make?", "baked = {a}\nper_box = {b}\nprice = {c}\n"
           "print(baked // per_box * price)", lambda a, b, c: _div(a, b) * c,
           {"a": R(24, 120, 6), "b": R(3, 12, 3), "c": R(2, 9)},
           (("step", "How many boxes did {n1} sell?", lambda a, b, c: _div(a, b)),
            ("currency", "How many {xw} did {n1} make?", lambda a, b, c: NO_ANSWER)),
           BAKED, alt="{n1} baked {a} {os} for the school fair and put them into boxes of {b}. {He1} sold each box "
           "for {cs}{c}. How many {cw} did {n1} make?"),
    Family("ages", "{n1} is {a} years old. {His1} {k1} is {b} years older than {him1}. How old will {his1} {k1} be in "
           "{c} years?", "age = {a}\nolder = {b}\nlater = {c}\nprint(age + older + later)", lambda a, b, c: a + b + c,
           {"a": R(6, 30), "b": R(2, 30), "c": R(2, 15)},
           (("person", "How old will {n1} be in {c} years?", lambda a, b, c: a + c),
            ("step", "How old is {his1} {k1} now?", lambda a, b, c: a + b),
            ("kin", "How old will {his1} {xk} be in {c} years?", lambda a, b, c: NO_ANSWER))),
    Family("tank_fill", "A water tank holds {a} liters. It is 1/2 full. {n1} pours in {b} liters. How many more liters "
           "are needed to fill the tank?", "capacity = {a}\npoured = {b}\nprint(capacity - capacity // 2 - poured)",
           lambda a, b: a - _div(a, 2) - b, {"a": R(100, 400, 20), "b": R(5, 40)},
           (("step", "How many liters are in the tank now?", lambda a, b: _div(a, 2) + b),
            ("unit", "How many more milliliters are needed to fill the tank?",
             lambda a, b: (a - _div(a, 2) - b) * 1000))),
    Family("class_trip", "There are {a} students in {n1}'s class. Each student pays {cs}{b} for the museum trip, and "
           "the teacher adds {cs}{c} from the class fund. How many {cw} are collected for the trip?",
           "students = {a}\nfee = {b}\nfund = {c}\nprint(students * fee + fund)", lambda a, b, c: a * b + c,
           {"a": R(15, 35), "b": R(3, 15), "c": R(10, 60)},
           (("step", "How many {cw} do the students pay?", lambda a, b, c: a * b),
            ("currency", "How many {xw} are collected for the trip?", lambda a, b, c: NO_ANSWER)),
           alt="There are {a} students in {n1}'s class. Each student pays {cs}{b} for the museum trip. The teacher "
           "adds {cs}{c} from the class fund. How many {cw} are collected for the trip?",
           paraphrase="How much money is collected for the trip?"),
    Family("two_shops", "{n1} bought {a} {os} for {cs}{b} each. {n2} bought {c} {os} for {cs}{d} each. How many more "
           "{cw} did {n1} spend than {n2}?", "n_1 = {a}\np_1 = {b}\nn_2 = {c}\np_2 = {d}\nprint(n_1 * p_1 - n_2 * p_2)",
           lambda a, b, c, d: a * b - c * d, {"a": R(5, 15), "b": R(4, 12), "c": R(2, 6), "d": R(2, 8)},
           (("person", "How many {cw} did {n2} spend?", lambda a, b, c, d: c * d),
            ("step", "How many {os} did they buy?", lambda a, b, c, d: a + c),
            ("currency", "How many more {xw} did {n1} spend than {n2}?", lambda a, b, c, d: NO_ANSWER)),
           SUPPLIES, alt="{n2} bought {c} {os} for {cs}{d} each. {n1} bought {a} {os} for {cs}{b} each. How many more "
           "{cw} did {n1} spend than {n2}?", alt_kind="reorder"),
    Family("commute", "{n1} walks to school in {a} minutes and takes {b} minutes to walk back home. {He1} goes to "
           "school {c} days a week. How many minutes does {n1} spend walking each week?",
           "there = {a}\nback = {b}\ndays = {c}\nprint((there + back) * days)", lambda a, b, c: (a + b) * c,
           {"a": R(8, 30), "b": R(8, 30), "c": R(3, 6)},
           (("unit", "How many hours does {n1} spend walking each week?", lambda a, b, c: _div((a + b) * c, 60)),
            ("step", "How many minutes does {n1} spend walking each day?", lambda a, b, c: a + b)),
           alt="{n1} walks to school in {a} minutes. {He1} takes {b} minutes to walk back home. {He1} goes to school "
           "{c} days a week. How many minutes does {n1} spend walking each week?"),
    Family("percent_class", "There are {a} children at {n1}'s party. {b}% of them are girls. How many boys are at the "
           "party?", "children = {a}\npercent = {b}\nprint(children - children * percent // 100)",
           lambda a, b: a - _div(a * b, 100), {"a": R(20, 60, 10), "b": R(10, 90, 10)},
           (("entity", "How many girls are at the party?", lambda a, b: _div(a * b, 100)),)),
    Family("lemonade", "{n1} sells cups of lemonade for {cs}{a} each. On Saturday {he1} sells {b} cups, and on Sunday "
           "{he1} sells {c} cups. {He1} spent {cs}{d} on lemons and sugar. What is {n1}'s profit in {cw}?",
           "price = {a}\nsat = {b}\nsun = {c}\ncost = {d}\nprint(price * (sat + sun) - cost)",
           lambda a, b, c, d: a * (b + c) - d, {"a": R(2, 5), "b": R(10, 40), "c": R(10, 40), "d": R(5, 30)},
           (("step", "How many cups does {n1} sell?", lambda a, b, c, d: b + c),
            ("currency", "What is {n1}'s profit in {xw}?", lambda a, b, c, d: NO_ANSWER)),
           alt="{n1} sells cups of lemonade for {cs}{a} each. On Saturday {he1} sells {b} cups. On Sunday {he1} "
           "sells {c} cups. {He1} spent {cs}{d} on lemons and sugar. What is {n1}'s profit in {cw}?"),
    Family("stickers_give", "{n1} had {a} {os}. {He1} gave {b} {os} to {his1} {k1} and {c} {os} to {n2}. How many {os} "
           "does {n1} have now?", "had = {a}\ngave_1 = {b}\ngave_2 = {c}\nprint(had - gave_1 - gave_2)",
           lambda a, b, c: a - b - c, {"a": R(40, 120), "b": R(3, 20), "c": R(3, 20)},
           (("step", "How many {os} did {n1} give away?", lambda a, b, c: b + c),
            ("person", "How many {os} does {n2} have now?", lambda a, b, c: NO_ANSWER),
            ("object", "How many {xos} does {n1} have now?", lambda a, b, c: NO_ANSWER)),
           TOYS),
    Family("recipe_scale", "A recipe for {a} {os} needs {b} cups of flour. {n1} wants to make {c} {os}. How many cups "
           "of flour does {n1} need?", "batch = {a}\nflour = {b}\nwanted = {c}\nprint(wanted // batch * flour)",
           lambda a, b, c: _div(c, a) * b, {"a": R(6, 24, 6), "b": R(2, 5), "c": R(24, 96, 12)},
           (("step", "How many batches does {n1} make?", lambda a, b, c: _div(c, a)),
            ("unit", "How many tablespoons of flour does {n1} need?", lambda a, b, c: _div(c, a) * b * 16)),
           BAKED, paraphrase="How much flour, in cups, does {n1} need?"),
    Family("phone_plan", "{n1}'s phone plan costs {cs}{a} a month plus {cs}{b} for each gigabyte of data. Last month "
           "{he1} used {c} gigabytes. How many {cw} was {n1}'s bill last month?",
           "base = {a}\nper_gb = {b}\nused = {c}\nprint(base + per_gb * used)", lambda a, b, c: a + b * c,
           {"a": R(10, 40), "b": R(2, 10), "c": R(2, 15)},
           (("step", "How many {cw} did {n1} pay for data last month?", lambda a, b, c: b * c),
            ("currency", "How many {xw} was {n1}'s bill last month?", lambda a, b, c: NO_ANSWER))),
    Family("running_week", "{n1} runs {a} kilometers on weekdays and {b} kilometers on each day of the weekend. How "
           "many kilometers does {n1} run in a week?", "weekday = {a}\nweekend = {b}\nprint(5 * weekday + 2 * weekend)",
           lambda a, b: 5 * a + 2 * b, {"a": R(2, 10), "b": R(3, 20)},
           (("unit", "How many meters does {n1} run in a week?", lambda a, b: (5 * a + 2 * b) * 1000),
            ("step", "How many kilometers does {n1} run on the weekend?", lambda a, b: 2 * b))),
    Family("aquarium", "{n1} has {a} {os} in {his1} aquarium. {n2} gives {him1} {b} more {os}. Then {c} of the {os} "
           "are moved to a second tank. How many {os} are left in the aquarium?",
           "fish = {a}\ngiven = {b}\nmoved = {c}\nprint(fish + given - moved)", lambda a, b, c: a + b - c,
           {"a": R(5, 30), "b": R(3, 15), "c": R(2, 12)},
           (("step", "How many {os} did {n1} have before the move?", lambda a, b, c: a + b),
            ("entity", "How many {os} are in the second tank?", lambda a, b, c: c)),
           (("goldfish", "goldfish"), ("guppy", "guppies"), ("angelfish", "angelfish"), ("neon tetra", "neon tetras"),
            ("snail", "snails"), ("shrimp", "shrimps"))),
    Family("tiles", "A room is {a} meters long and {b} meters wide. {n1} covers the floor with tiles that cost {cs}{c} "
           "per square meter. How many {cw} does {n1} spend on tiles?", "length = {a}\nwidth = {b}\nprice = {c}\n"
           "print(length * width * price)", lambda a, b, c: a * b * c, {"a": R(3, 12), "b": R(3, 10), "c": R(5, 30)},
           (("step", "How many square meters is the floor?", lambda a, b, c: a * b),
            ("currency", "How many {xw} does {n1} spend on tiles?", lambda a, b, c: NO_ANSWER))),
    Family("library_books", "The school library had {a} {os}. It lent out {b} {os} on Monday and got {c} {os} back on "
           "Friday. {n1}, the librarian, bought {d} new {os}. How many {os} does the library have now?",
           "had = {a}\nlent = {b}\nback = {c}\nbought = {d}\nprint(had - lent + back + bought)",
           lambda a, b, c, d: a - b + c + d, {"a": R(200, 500), "b": R(20, 80), "c": R(5, 19), "d": R(5, 40)},
           (("step", "How many {os} are still lent out?", lambda a, b, c, d: b - c),),
           BOOKS),
    Family("carpool", "{n1} drives {his1} {k1} to work {a} kilometers each way, {b} days a week. {His1} car uses 1 "
           "liter of fuel for every {c} kilometers. How many liters of fuel does {n1} use in a week?",
           "each_way = {a}\ndays = {b}\nper_liter = {c}\nprint(2 * each_way * days // per_liter)",
           lambda a, b, c: _div(2 * a * b, c), {"a": R(5, 30), "b": R(2, 6), "c": R(5, 15)},
           (("step", "How many kilometers does {n1} drive in a week?", lambda a, b, c: 2 * a * b),
            ("kin", "How many liters of fuel does {his1} {xk} use in a week?", lambda a, b, c: NO_ANSWER))),
    Family("candy_jar", "A jar holds {a} {os}. {n1} eats {b} of them, and {n2} eats twice as many as {n1}. How many "
           "{os} are left in the jar?", "jar = {a}\nfirst = {b}\nprint(jar - first - 2 * first)",
           lambda a, b: a - 3 * b, {"a": R(40, 120), "b": R(3, 12)},
           (("person", "How many {os} does {n2} eat?", lambda a, b: 2 * b),
            ("step", "How many {os} do they eat?", lambda a, b: 3 * b)),
           TREATS, alt="A jar holds {a} {os}. {n1} eats {b} of them. {n2} eats twice as many as {n1}. How many {os} "
           "are left in the jar?", paraphrase="How many {os} remain in the jar?"),
    Family("movie_night", "Tickets to the cinema cost {cs}{a} for adults and {cs}{b} for children. {n1} buys tickets "
           "for {c} adults and {d} children. How many {cw} does {n1} pay?",
           "adult = {a}\nchild = {b}\nadults = {c}\nchildren = {d}\nprint(adult * adults + child * children)",
           lambda a, b, c, d: a * c + b * d, {"a": R(8, 20), "b": R(3, 7), "c": R(2, 5), "d": R(2, 6)},
           (("entity", "How many {cw} does {n1} pay for the children?", lambda a, b, c, d: b * d),
            ("step", "How many tickets does {n1} buy?", lambda a, b, c, d: c + d),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: NO_ANSWER))),
    Family("painting", "{n1} can paint {a} {os} in an hour, and {n2} can paint {b} {os} in an hour. They work together "
           "for {c} hours. How many {os} do they paint?", "rate_1 = {a}\nrate_2 = {b}\nhours = {c}\n"
           "print((rate_1 + rate_2) * hours)", lambda a, b, c: (a + b) * c, {"a": R(2, 9), "b": R(2, 9), "c": R(2, 8)},
           (("person", "How many {os} does {n2} paint?", lambda a, b, c: b * c),
            ("unit", "How many {os} do they paint in a minute?", lambda a, b, c: NO_ANSWER)),
           (("fence post", "fence posts"), ("chair", "chairs"), ("birdhouse", "birdhouses"), ("door", "doors"),
            ("flower pot", "flower pots"), ("bench", "benches")),
           alt="{n1} can paint {a} {os} in an hour. {n2} can paint {b} {os} in an hour. They work together for {c} "
           "hours. How many {os} do they paint?"),
    Family("bouquets", "A florist has {a} {os} and {b} {os2}. {n1} makes bouquets of {c} flowers each. How many "
           "bouquets can {n1} make?", "first = {a}\nsecond = {b}\nper = {c}\nprint((first + second) // per)",
           lambda a, b, c: _div(a + b, c), {"a": R(20, 60), "b": R(20, 60), "c": R(4, 12)},
           (("step", "How many flowers does the florist have?", lambda a, b, c: a + b),
            ("object", "How many {os2} does the florist have?", lambda a, b, c: b)),
           FLOWERS),
    Family("weekly_reading", "{n1} reads for {a} minutes every evening. {His1} {k1} reads for {b} minutes less than "
           "{n1} every evening. How many minutes does {his1} {k1} read in {c} days?",
           "first = {a}\nless = {b}\ndays = {c}\nprint((first - less) * days)", lambda a, b, c: (a - b) * c,
           {"a": R(20, 60), "b": R(5, 15), "c": R(3, 14)},
           (("person", "How many minutes does {n1} read in {c} days?", lambda a, b, c: a * c),
            ("kin", "How many minutes does {his1} {xk} read in {c} days?", lambda a, b, c: NO_ANSWER),
            ("unit", "How many hours does {his1} {k1} read in {c} days?", lambda a, b, c: _div((a - b) * c, 60)))),
    Family("garden_fence", "{n1}'s garden is a rectangle {a} meters long and {b} meters wide. Fencing costs {cs}{c} "
           "per meter. How many {cw} does the fencing around the garden cost?",
           "length = {a}\nwidth = {b}\nprice = {c}\nprint(2 * (length + width) * price)",
           lambda a, b, c: 2 * (a + b) * c, {"a": R(4, 20), "b": R(3, 15), "c": R(3, 12)},
           (("step", "How many meters of fencing does {n1} need?", lambda a, b, c: 2 * (a + b)),
            ("currency", "How many {xw} does the fencing around the garden cost?", lambda a, b, c: NO_ANSWER))),
    Family("tips", "{n1} works at a {o} and earns {cs}{a} an hour plus {cs}{b} in tips each shift. {He1} worked {c} "
           "shifts of {d} hours this week. How many {cw} did {n1} earn this week?",
           "wage = {a}\ntips = {b}\nshifts = {c}\nhours = {d}\nprint(shifts * (wage * hours + tips))",
           lambda a, b, c, d: c * (a * d + b), {"a": R(8, 18), "b": R(10, 40), "c": R(2, 5), "d": R(3, 8)},
           (("step", "How many {cw} did {n1} earn in tips this week?", lambda a, b, c, d: b * c),
            ("unit", "How many hours did {n1} work this week?", lambda a, b, c, d: c * d),
            ("currency", "How many {xw} did {n1} earn this week?", lambda a, b, c, d: NO_ANSWER)),
           (("restaurant", "restaurants"), ("coffee shop", "coffee shops"), ("diner", "diners"),
            ("noodle bar", "noodle bars"), ("pizza place", "pizza places"))),
    Family("egg_cartons", "{n1}'s {k1} keeps {a} hens. Each hen lays {b} eggs a week. {n1} packs the eggs into cartons "
           "of {c}. How many cartons does {n1} fill each week?", "hens = {a}\nper_hen = {b}\ncarton = {c}\n"
           "print(hens * per_hen // carton)", lambda a, b, c: _div(a * b, c),
           {"a": R(4, 30), "b": R(3, 7), "c": R(6, 12, 6)},
           (("step", "How many eggs do the hens lay each week?", lambda a, b, c: a * b),
            ("unit", "How many cartons does {n1} fill each day?", lambda a, b, c: NO_ANSWER)),
           alt="{n1}'s {k1} keeps {a} hens, and each hen lays {b} eggs a week. {n1} packs the eggs into cartons of "
           "{c}. How many cartons does {n1} fill each week?"),
    Family("shoe_sale", "A pair of shoes costs {cs}{a}. A {o} costs {cs}{b} less than the shoes. {n1} buys the shoes "
           "and {c} {os}. How many {cw} does {n1} spend?", "shoes = {a}\nless = {b}\ncount = {c}\n"
           "print(shoes + count * (shoes - less))", lambda a, b, c: a + c * (a - b),
           {"a": R(30, 90), "b": R(5, 25), "c": R(2, 4)},
           (("step", "How many {cw} does one {o} cost?", lambda a, b, c: a - b),
            ("currency", "How many {xw} does {n1} spend?", lambda a, b, c: NO_ANSWER)),
           CLOTHES),
    Family("harvest_fraction", "{n1} picked {a} {os} from {his1} {k1}'s farm. {He1} gave 1/3 of them to {n2} and sold "
           "{b} of the rest. How many {os} does {n1} have left?", "picked = {a}\nsold = {b}\n"
           "print(picked - picked // 3 - sold)", lambda a, b: a - _div(a, 3) - b,
           {"a": R(30, 90, 3), "b": R(2, 15)},
           (("person", "How many {os} did {n2} get?", lambda a, b: _div(a, 3)),
            ("step", "How many {os} did {n1} have before selling?", lambda a, b: a - _div(a, 3))),
           FOOD),
    Family("piggy_coins", "{n1} has {a} coins of 2 {cw} and {b} coins of 5 {cw} in {his1} piggy bank. {His1} {k1} adds "
           "{c} {cw}. How many {cw} are in the piggy bank?", "twos = {a}\nfives = {b}\nadded = {c}\n"
           "print(2 * twos + 5 * fives + added)", lambda a, b, c: 2 * a + 5 * b + c,
           {"a": R(3, 20), "b": R(3, 20), "c": R(6, 40)},
           (("step", "How many coins does {n1} have?", lambda a, b, c: a + b),
            ("currency", "How many {xw} are in the piggy bank?", lambda a, b, c: NO_ANSWER))),
    Family("water_bottles", "{n1} drinks {a} bottles of water a day. Each bottle holds {b} milliliters. How many "
           "milliliters of water does {n1} drink in {c} days?", "bottles = {a}\nml = {b}\ndays = {c}\n"
           "print(bottles * ml * days)", lambda a, b, c: a * b * c, {"a": R(2, 6), "b": R(250, 750, 250),
                                                                     "c": R(2, 14)},
           (("unit", "How many liters of water does {n1} drink in {c} days?", lambda a, b, c: _div(a * b * c, 1000)),
            ("step", "How many bottles does {n1} drink in {c} days?", lambda a, b, c: a * c))),
    Family("concert_seats", "A concert hall has {a} rows with {b} seats in each row. {c} seats are broken, and {d} "
           "tickets were sold. How many seats are still free?", "rows = {a}\nper_row = {b}\nbroken = {c}\n"
           "sold = {d}\nprint(rows * per_row - broken - sold)", lambda a, b, c, d: a * b - c - d,
           {"a": R(10, 30), "b": R(10, 25), "c": R(2, 15), "d": R(50, 150)},
           (("step", "How many seats does the hall have?", lambda a, b, c, d: a * b),),
           alt="A concert hall has {a} rows with {b} seats in each row. {c} seats are broken. {d} tickets were sold. "
           "How many seats are still free?"),
    Family("gift_split", "{n1} and {his1} {k1} buy a {o} for {n2}. The {o} costs {cs}{a}, and they pay {cs}{b} for "
           "wrapping. They split the cost equally. How many {cw} does {n1} pay?",
           "gift = {a}\nwrap = {b}\nprint((gift + wrap) // 2)", lambda a, b: _div(a + b, 2),
           {"a": R(20, 80), "b": R(2, 10)},
           (("step", "How many {cw} do they pay in all?", lambda a, b: a + b),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b: NO_ANSWER)),
           (("board game", "board games"), ("watch", "watches"), ("photo album", "photo albums"), ("lamp", "lamps"),
            ("teddy bear", "teddy bears"), ("headphone set", "headphone sets"))),
    Family("plant_growth", "A {o} is {a} centimeters tall. It grows {b} centimeters every week. How tall will the {o} "
           "be after {c} weeks, in centimeters?",
           "height = {a}\ngrowth = {b}\nweeks = {c}\nprint(height + growth * weeks)",
           lambda a, b, c: a + b * c, {"a": R(5, 40), "b": R(2, 6), "c": R(3, 12)},
           (("step", "How many centimeters will the {o} grow in {c} weeks?", lambda a, b, c: b * c),
            ("unit", "How tall will the {o} be after {c} days, in centimeters?", lambda a, b, c: NO_ANSWER)),
           (("sunflower", "sunflowers"), ("bean plant", "bean plants"), ("tomato plant", "tomato plants"),
            ("bamboo shoot", "bamboo shoots"), ("young tree", "young trees"))),
    Family("team_snacks", "{n1} brings {a} packs of {os} to soccer practice. Each pack has {b} {os}. There are {c} "
           "players, and each player gets the same number. How many {os} does each player get?",
           "packs = {a}\nper_pack = {b}\nplayers = {c}\nprint(packs * per_pack // players)",
           lambda a, b, c: _div(a * b, c), {"a": R(3, 10), "b": R(6, 12), "c": R(6, 15)},
           (("step", "How many {os} does {n1} bring?", lambda a, b, c: a * b),),
           (("granola bar", "granola bars"), ("orange slice", "orange slices"), ("cracker", "crackers"),
            ("juice box", "juice boxes"), ("rice cake", "rice cakes"))),
    Family("exchange_rent", "{n1} rents a bike for {cs}{a} per hour. {He1} rides for {b} hours, and {his1} {k1} rents "
           "one too for {c} hours. How many {cw} do they pay together?", "rate = {a}\nmine = {b}\ntheirs = {c}\n"
           "print(rate * (mine + theirs))", lambda a, b, c: a * (b + c), {"a": R(3, 12), "b": R(2, 6), "c": R(2, 6)},
           (("kin", "How many {cw} does {his1} {k1} pay?", lambda a, b, c: a * c),
            ("currency", "How many {xw} do they pay together?", lambda a, b, c: NO_ANSWER),
            ("unit", "How many {cw} do they pay per minute?", lambda a, b, c: NO_ANSWER))),
    Family("market_weight", "{n1} buys {a} kilograms of {os} at {cs}{b} per kilogram and {c} kilograms of {os2} at "
           "{cs}{d} per kilogram. How many {cw} does {n1} pay?", "w_1 = {a}\np_1 = {b}\nw_2 = {c}\np_2 = {d}\n"
           "print(w_1 * p_1 + w_2 * p_2)", lambda a, b, c, d: a * b + c * d,
           {"a": R(2, 9), "b": R(2, 8), "c": R(2, 9), "d": R(2, 8)},
           (("object", "How many {cw} does {n1} pay for the {os2}?", lambda a, b, c, d: c * d),
            ("unit", "How many grams of fruit does {n1} buy?", lambda a, b, c, d: (a + c) * 1000),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: NO_ANSWER)),
           FOOD, alt="{n1} buys {c} kilograms of {os2} at {cs}{d} per kilogram and {a} kilograms of {os} at {cs}{b} "
           "per kilogram. How many {cw} does {n1} pay?", alt_kind="reorder"),
)


def _draw(family: Family, r: random.Random) -> dict[str, int]:
    for _ in range(20000):
        numbers = {k: r.randrange(lo, hi + 1, step) for k, (lo, hi, step) in family.ranges.items()}
        if len(set(numbers.values())) < len(numbers):
            continue
        try:
            base = family.answer(**numbers)
            misses = [fn(**numbers) for _, _, fn in family.misses]
        except _Redraw:
            continue
        if base <= 0 or any(m != NO_ANSWER and (m <= 0 or m == base) for m in misses):
            continue
        return numbers
    raise RuntimeError(f"{family.name}: no valid numbers")  # pragma: no cover


def _words(family: Family, r: random.Random, exclude: frozenset[str] = frozenset(), *,
           names: tuple[tuple[str, str], ...] = NAMES, kin: tuple[str, ...] = KIN,
           currencies: tuple[tuple[str, str], ...] = CURRENCIES) -> dict[str, str]:
    """People, kin noun, currency and objects drawn from the pools (another set may pass larger pools)."""
    (n1, g1), (n2, g2) = r.sample([p for p in names if p[0] not in exclude], 2)
    k1, xk = r.sample([k for k in kin if k not in exclude], 2)
    (cs, cw), (_, xw) = r.sample([c for c in currencies if c[1] not in exclude], 2)
    objects = [o for o in family.objects if o[0] not in exclude] or list(family.objects)
    picked = r.sample(objects, 3) if len(objects) >= 3 else [("thing", "things")] * 3
    words = {"n1": n1, "n2": n2, "k1": k1, "xk": xk, "cs": cs, "cw": cw, "xw": xw,
             "o": picked[0][0], "os": picked[0][1], "o2": picked[1][0], "os2": picked[1][1],
             "xo": picked[2][0], "xos": picked[2][1]}
    for suffix, gender in (("1", g1), ("2", g2)):
        for key, word in zip(("he", "his", "him"), PRONOUNS[gender], strict=True):
            words[key + suffix], words[key.capitalize() + suffix] = word, word.capitalize()
    return words


def _fill(template: str, numbers: dict[str, int], words: dict[str, str]) -> str:
    return template.format(**numbers, **words)


def _role(kind: str) -> str:
    return {"unit": "near_miss_unit", "currency": "near_miss_unit", "step": "near_miss_step"}.get(kind,
                                                                                               "near_miss_entity")


def family_rows(family: Family, r: random.Random) -> Iterator[tuple[str, dict[str, Any]]]:
    fam = family.name
    base, words = _draw(family, r), _words(family, r)
    base_answer = family.answer(**base)
    used = {k: v for k, v in base.items() if "{" + k + "}" in family.program}
    yield "library", {"id": f"{fam}-base", "family": fam, "question": _fill(family.text, base, words),
                      "answer": base_answer, "solution": family.program.format(**used)}
    yield "eval", {"id": f"{fam}-recurrence", "family": fam, "role": "recurrence",
                   "question": _fill(family.text, base, words), "answer": base_answer}
    exclude = frozenset(words[k] for k in ("n1", "n2", "k1", "cw", "o", "o2"))

    def other() -> dict[str, int]:
        for _ in range(1000):
            numbers = _draw(family, r)
            if family.answer(**numbers) != base_answer and not set(base.values()) <= set(numbers.values()):
                return numbers
        raise RuntimeError(fam)  # pragma: no cover

    variants: list[tuple[str, str, str | None, str]] = [
        (f"{fam}-renamed-{i}", "renamed", None, family.text) for i in range(1, RENAMED_PER_FAMILY + 1)]
    variants.append((f"{fam}-transfer-1", "transfer", "constants", family.text))
    if family.alt is not None:
        variants.append((f"{fam}-{family.alt_kind}", "reordered", family.alt_kind, family.alt))
    if family.paraphrase is not None:
        variants.append((f"{fam}-paraphrase", "transfer", "paraphrase", family.with_question(family.paraphrase)))
    for row_id, role, variant, template in variants:
        numbers = other()
        new_words = words if variant == "constants" else _words(family, r, exclude)
        yield "eval", {"id": row_id, "family": fam, "role": role, **({"variant": variant} if variant else {}),
                       "question": _fill(template, numbers, new_words), "answer": family.answer(**numbers)}
    numbers, new_words = other(), _words(family, r, exclude)
    for kind, question, fn in family.misses:
        answer = fn(**numbers)
        assert answer != family.answer(**numbers), (fam, kind)
        yield "eval", {"id": f"{fam}-near-miss-{kind}", "family": fam, "role": _role(kind), "variant": kind,
                       "question": _fill(family.with_question(question), numbers, new_words), "answer": answer}


def split_of(index: int) -> str:
    """The fixed split rule: families in written order, even positions dev, odd check."""
    return SPLITS[index % 2]


def build(name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    r = random.Random(SEED)
    library: list[dict[str, Any]] = []
    evaluation: list[dict[str, Any]] = []
    for index, family in enumerate(FAMILIES):
        rows = list(family_rows(family, r))  # drawn for every family, so each half is the same in either build
        if split_of(index) != name:
            continue
        for kind, row in rows:
            (library if kind == "library" else evaluation).append(row)
    return library, evaluation


def render(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def paths(name: str) -> tuple[Path, Path]:
    return DATA_DIR / f"flywheel-varied-{name}-library.jsonl", DATA_DIR / f"flywheel-varied-{name}-eval.jsonl"


def main() -> None:
    for name in SPLITS:
        library, evaluation = build(name)
        library_path, eval_path = paths(name)
        library_path.write_text(render(library), encoding="utf-8")
        eval_path.write_text(render(evaluation), encoding="utf-8")
        print(f"varied-{name}: {len(library)} library problems, {len(evaluation)} eval questions", file=sys.stderr)


if __name__ == "__main__":
    main()
