"""The GSM-style flywheel development sets: twelve word-problem families written for this project in the style of
GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic, which are reserved for held-out
evaluation), generated with seeded numbers, people and objects.

They exercise the program route, which answers a new instance of a deposited problem by re-binding the numbers of
the new question into the deposited (verified) program: it must answer instances whose people and objects are
renamed consistently, and must not answer near-miss questions that ask for something else.

Each family has a base template (numbers `{a}`..`{d}`, people `{name}`/`{name2}` with pronouns `{he}`, `{his}`,
`{him}`, `{He}`, `{His}` (and `{he2}`.. for `{name2}`) that follow the drawn person's gender, objects
`{obj}`/`{objs}`/`{obj2}`/`{objs2}`), its reference program (numbers only: no names or objects in it), an optional
statement order for the reordered template (the same sentences, the question last), and three near-miss questions
that replace the base's question sentence (one to three words changed): `entity` asks about another person or
object of the problem, `unit` for the same quantity in another unit or count, `step` for an intermediate quantity or
another step. Per set:

- library: the base instance of every family, with its program (`solution`);
- eval, role `recurrence`: the base question again; `renamed` (3 per family): new numbers, people and objects;
  `transfer` (variant `constants`): the base's people and objects, new numbers; `reordered`: the reordered template
  with new numbers, people and objects (families where a reorder reads naturally); `near_miss_entity`,
  `near_miss_unit`, `near_miss_step`: the base instance with only its question changed. Every renamed, transfer and
  reordered answer differs from its base's, and so does every near-miss answer (asserted).

Two sets from the same templates: `dev` (seed 11) and `check` (seed 12).

    python -m bench.flywheel_gsm_data   # rewrites bench/data/flywheel-gsm-{dev,check}-{library,eval}.jsonl
"""

from __future__ import annotations

import difflib
import json
import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).parent / "data"
SETS = {"dev": 11, "check": 12}
RENAMED_PER_FAMILY = 3
NEAR_MISS_KINDS = ("entity", "unit", "step")

NAMES = tuple((n, "f") for n in "Mia Sara Emma Ava Zoe Lily Nora Chloe Hana Priya Elena Leah".split()) + tuple(
    (n, "m") for n in "Tom Liam Noah Ethan Lucas Omar Ravi Diego Felix Jamal Mateo Kenji".split())
PRONOUNS = {"m": ("he", "his", "him"), "f": ("she", "her", "her")}

Answer = Callable[..., int]


class _Redraw(Exception):
    """The drawn numbers do not give whole, positive answers: draw again."""


def _div(x: int, y: int) -> int:
    if y <= 0 or x % y:
        raise _Redraw
    return x // y


@dataclass(frozen=True)
class Family:
    name: str
    text: str  # the base template: statement sentences, then the question sentence
    program: str
    answer: Answer
    entity: tuple[str, Answer]  # (question sentence, answer) of each near miss
    unit: tuple[str, Answer]
    step: tuple[str, Answer]
    draw: Callable[[random.Random], dict[str, int]]
    objects: tuple[tuple[str, str], ...]  # (singular, plural)
    order: tuple[int, ...] | None = None  # the statement order of the reordered template

    @property
    def statements(self) -> list[str]:
        return _sentences(self.text)[:-1]

    @property
    def reordered(self) -> str | None:
        if self.order is None:
            return None
        return " ".join([self.statements[i] for i in self.order] + _sentences(self.text)[-1:])

    def near_miss(self, kind: str) -> tuple[str, Answer]:
        question, answer = getattr(self, kind)
        return " ".join([*self.statements, question]), answer


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.?])\s+(?=[A-Z{])", text)


def _shells(r: random.Random) -> dict[str, int]:
    a = r.randint(3, 9)
    return {"a": a, "b": r.randint(2, 9), "c": r.randint(4, 15), "d": r.randint(1, a - 1)}


def _bakery(r: random.Random) -> dict[str, int]:
    c = r.randint(4, 12)
    return {"a": c * r.randint(2, 6), "b": c * r.randint(2, 6), "c": c, "d": r.randint(3, 15)}


def _market(r: random.Random) -> dict[str, int]:  # redrawn until the total is whole dollars
    return {"a": 5 * r.randint(3, 19), "b": r.randint(2, 20), "c": r.randint(2, 20)}


def _ride(r: random.Random) -> dict[str, int]:
    c = r.randint(4, 15)
    return {"a": c * r.randint(2, 6), "b": c * r.randint(2, 6), "c": c}


def _savings(r: random.Random) -> dict[str, int]:
    a, d = r.randint(5, 40), r.randint(3, 15)
    return {"a": a, "b": d * r.randint(2, 10), "c": a + d * r.randint(1, 8), "d": d}


def _fundraiser(r: random.Random) -> dict[str, int]:
    return {"a": r.randint(10, 40), "b": r.randint(2, 9), "c": r.randint(2, 12)}


def _farm(r: random.Random) -> dict[str, int]:
    return {"a": r.randint(2, 12), "b": r.randint(2, 12), "c": r.randint(2, 15), "d": r.randint(2, 15)}


def _laps(r: random.Random) -> dict[str, int]:  # redrawn until the distance is whole kilometers
    return {"a": r.randint(2, 12), "b": r.randint(2, 12), "c": r.choice((200, 250, 400, 500)), "d": r.randint(2, 9)}


def _pages(r: random.Random) -> dict[str, int]:
    return {"a": r.randint(5, 30), "b": r.randint(2, 4), "c": r.randint(3, 9)}


def _orchard(r: random.Random) -> dict[str, int]:
    return {"a": r.randint(8, 30), "b": r.randint(3, 25), "c": r.randint(2, 7)}


def _practice(r: random.Random) -> dict[str, int]:  # redrawn until the time is whole hours
    return {"a": 5 * r.randint(6, 18), "b": 5 * r.randint(2, 5), "c": r.randint(2, 12)}


def _ribbon(r: random.Random) -> dict[str, int]:
    a, c = r.randint(2, 6), r.randint(5, 20)
    return {"a": a, "b": r.randint(2, 6), "c": c, "d": r.randint(3, a * c - 1)}


FAMILIES = (
    Family("shells", "{name} collected {a} buckets of {objs} at the beach, and {name2} collected {b} buckets. Each "
           "bucket held {c} {objs}. {name} gave {d} of {his} buckets to {his} teacher. How many {objs} did they keep?",
           "buckets_1 = {a}\nbuckets_2 = {b}\nper_bucket = {c}\ngiven = {d}\n"
           "print((buckets_1 + buckets_2 - given) * per_bucket)", lambda a, b, c, d: (a + b - d) * c,
           ("How many {objs} did {name2} keep?", lambda a, b, c, d: b * c),
           ("How many buckets did they keep?", lambda a, b, c, d: a + b - d),
           ("How many {objs} did they collect?", lambda a, b, c, d: (a + b) * c),
           _shells,
           (("shell", "shells"), ("pebble", "pebbles"), ("crab", "crabs"), ("clam", "clams"), ("stone", "stones"),
            ("snail", "snails"), ("mussel", "mussels"), ("oyster", "oysters")), order=(1, 0, 2)),
    Family("bakery", "{name} baked {a} {objs} and {b} {objs2} for the bake sale. {He} packed them in boxes of {c}, "
           "keeping each kind in separate boxes. {He} sold every box for {d} dollars. How many dollars did {he} earn?",
           "first_kind = {a}\nsecond_kind = {b}\nper_box = {c}\nprice = {d}\n"
           "boxes = first_kind // per_box + second_kind // per_box\nprint(boxes * price)",
           lambda a, b, c, d: (_div(a, c) + _div(b, c)) * d,
           ("How many dollars did {he} earn from {objs2}?", lambda a, b, c, d: _div(b, c) * d),
           ("How many cents did {he} earn?", lambda a, b, c, d: (_div(a, c) + _div(b, c)) * d * 100),
           ("How many boxes did {he} sell?", lambda a, b, c, d: _div(a, c) + _div(b, c)),
           _bakery,
           (("cookie", "cookies"), ("muffin", "muffins"), ("cupcake", "cupcakes"), ("brownie", "brownies"),
            ("scone", "scones"), ("bagel", "bagels"), ("tart", "tarts"), ("donut", "donuts"))),
    Family("market", "At the market, {objs} cost {a} cents each. {name} bought {b} {objs}, and {name2} bought {c} "
           "{objs}. How many cents did they spend?",
           "price = {a}\nbought_1 = {b}\nbought_2 = {c}\nprint(price * (bought_1 + bought_2))",
           lambda a, b, c: a * (b + c),
           ("How many cents did {name2} spend?", lambda a, b, c: a * c),
           ("How many dollars did they spend?", lambda a, b, c: _div(a * (b + c), 100)),
           ("How many {objs} did they buy?", lambda a, b, c: b + c),
           _market,
           (("apple", "apples"), ("pear", "pears"), ("lemon", "lemons"), ("plum", "plums"), ("orange", "oranges"),
            ("banana", "bananas"), ("lime", "limes"), ("peach", "peaches")), order=(1, 0)),
    Family("ride", "{name} rode {his} {obj} {a} miles, and {name2} rode {his2} {obj} {b} miles. {name} and {name2} "
           "each rode at {c} miles per hour. How many hours did they ride in total?",
           "miles_1 = {a}\nmiles_2 = {b}\nspeed = {c}\nprint((miles_1 + miles_2) // speed)",
           lambda a, b, c: _div(a + b, c),
           ("How many hours did {name2} ride in total?", lambda a, b, c: _div(b, c)),
           ("How many minutes did they ride in total?", lambda a, b, c: _div(a + b, c) * 60),
           ("How many miles did they ride in total?", lambda a, b, c: a + b),
           _ride,
           (("bike", "bikes"), ("horse", "horses"), ("scooter", "scooters"), ("pony", "ponies"), ("camel", "camels"),
            ("mule", "mules"), ("moped", "mopeds"), ("tricycle", "tricycles")), order=(1, 0)),
    Family("savings", "{name} has {a} dollars in {his} piggy bank. {He} wants to buy a {obj} that costs {b} dollars "
           "and a {obj2} that costs {c} dollars. {He} saves {d} dollars every week. How many weeks does {he} need to "
           "save to buy them?",
           "saved = {a}\nfirst_price = {b}\nsecond_price = {c}\nweekly = {d}\n"
           "print((first_price + second_price - saved) // weekly)", lambda a, b, c, d: _div(b + c - a, d),
           ("How many weeks does {he} need to save to buy the {obj2}?", lambda a, b, c, d: _div(c - a, d)),
           ("How many days does {he} need to save to buy them?", lambda a, b, c, d: _div(b + c - a, d) * 7),
           ("How many dollars does {he} need to save to buy them?", lambda a, b, c, d: b + c - a),
           _savings,
           (("bike", "bikes"), ("guitar", "guitars"), ("camera", "cameras"), ("jacket", "jackets"),
            ("helmet", "helmets"), ("tablet", "tablets"), ("telescope", "telescopes"), ("skateboard", "skateboards")),
           order=(0, 2, 1)),
    Family("fundraiser", "{name} sold {a} {objs} for the school fundraiser, and {name2} sold {b} fewer {objs} than "
           "{name}. Each {obj} cost {c} dollars. How many dollars did they raise?",
           "sold_1 = {a}\nfewer = {b}\nprice = {c}\nsold_2 = sold_1 - fewer\nprint((sold_1 + sold_2) * price)",
           lambda a, b, c: (2 * a - b) * c,
           ("How many dollars did {name2} raise?", lambda a, b, c: (a - b) * c),
           ("How many cents did they raise?", lambda a, b, c: (2 * a - b) * c * 100),
           ("How many {objs} did they sell?", lambda a, b, c: 2 * a - b),
           _fundraiser,
           (("candle", "candles"), ("calendar", "calendars"), ("mug", "mugs"), ("poster", "posters"),
            ("keychain", "keychains"), ("notebook", "notebooks"), ("bookmark", "bookmarks"),
            ("raffle ticket", "raffle tickets")), order=(1, 0)),
    Family("farm", "{name} has {a} {objs} and {b} {objs2} on {his} farm. Each {obj} eats {c} pounds of feed a day, "
           "and each {obj2} eats {d} pounds of feed a day. How many pounds of feed do the animals eat each day?",
           "animals_1 = {a}\nanimals_2 = {b}\nfeed_1 = {c}\nfeed_2 = {d}\n"
           "print(animals_1 * feed_1 + animals_2 * feed_2)", lambda a, b, c, d: a * c + b * d,
           ("How many pounds of feed do the {objs2} eat each day?", lambda a, b, c, d: b * d),
           ("How many ounces of feed do the animals eat each day?", lambda a, b, c, d: (a * c + b * d) * 16),
           ("How many pounds of feed do the animals eat each week?", lambda a, b, c, d: (a * c + b * d) * 7),
           _farm,
           (("goat", "goats"), ("pig", "pigs"), ("cow", "cows"), ("horse", "horses"), ("donkey", "donkeys"),
            ("llama", "llamas"), ("alpaca", "alpacas"), ("yak", "yaks")), order=(1, 0)),
    Family("laps", "{name} runs {a} laps around the {obj} every day, and {name2} runs {b} laps every day. Each lap is "
           "{c} meters long. How many meters do they run in {d} days?",
           "laps_1 = {a}\nlaps_2 = {b}\nlap_length = {c}\ndays = {d}\nprint((laps_1 + laps_2) * lap_length * days)",
           lambda a, b, c, d: (a + b) * c * d,
           ("How many meters does {name2} run in {d} days?", lambda a, b, c, d: b * c * d),
           ("How many kilometers do they run in {d} days?", lambda a, b, c, d: _div((a + b) * c * d, 1000)),
           ("How many laps do they run in {d} days?", lambda a, b, c, d: (a + b) * d),
           _laps,
           (("park", "parks"), ("lake", "lakes"), ("track", "tracks"), ("field", "fields"), ("pond", "ponds"),
            ("playground", "playgrounds"), ("stadium", "stadiums"), ("garden", "gardens")), order=(1, 0)),
    Family("pages", "{name} reads {a} pages of {his} {obj} every day. {name2} reads {b} times as many pages as {name} "
           "every day. How many pages do they read in {c} days?",
           "pages_1 = {a}\ntimes = {b}\ndays = {c}\npages_2 = pages_1 * times\nprint((pages_1 + pages_2) * days)",
           lambda a, b, c: (a + a * b) * c,
           ("How many pages does {name2} read in {c} days?", lambda a, b, c: a * b * c),
           ("How many pages do they read in {c} weeks?", lambda a, b, c: (a + a * b) * c * 7),
           ("How many more pages does {name2} read in {c} days?", lambda a, b, c: (a * b - a) * c),
           _pages,
           (("book", "books"), ("novel", "novels"), ("comic", "comics"), ("magazine", "magazines"),
            ("storybook", "storybooks"), ("textbook", "textbooks"), ("cookbook", "cookbooks"),
            ("diary", "diaries")), order=(1, 0)),
    Family("orchard", "{name} picks {a} kilograms of {objs} and {b} kilograms of {objs2} at the orchard. {He} uses {c} "
           "kilograms of the {objs} to make jam. How many kilograms of fruit does {he} keep?",
           "first_fruit = {a}\nsecond_fruit = {b}\nused = {c}\nprint(first_fruit + second_fruit - used)",
           lambda a, b, c: a + b - c,
           ("How many kilograms of {objs} does {he} keep?", lambda a, b, c: a - c),
           ("How many grams of fruit does {he} keep?", lambda a, b, c: (a + b - c) * 1000),
           ("How many kilograms of fruit does {he} pick?", lambda a, b, c: a + b),
           _orchard,
           (("apple", "apples"), ("pear", "pears"), ("plum", "plums"), ("cherry", "cherries"), ("grape", "grapes"),
            ("apricot", "apricots"), ("peach", "peaches"), ("fig", "figs"))),
    Family("practice", "{name} practices the {obj} for {a} minutes every day. {name2} practices the {obj2} for {b} "
           "minutes every day. How many minutes do they practice in {c} days?",
           "minutes_1 = {a}\nminutes_2 = {b}\ndays = {c}\nprint((minutes_1 + minutes_2) * days)",
           lambda a, b, c: (a + b) * c,
           ("How many minutes does {name2} practice in {c} days?", lambda a, b, c: b * c),
           ("How many hours do they practice in {c} days?", lambda a, b, c: _div((a + b) * c, 60)),
           ("How many more minutes does {name} practice in {c} days?", lambda a, b, c: (a - b) * c),
           _practice,
           (("piano", "pianos"), ("guitar", "guitars"), ("violin", "violins"), ("flute", "flutes"),
            ("cello", "cellos"), ("trumpet", "trumpets"), ("harp", "harps"), ("clarinet", "clarinets")),
           order=(1, 0)),
    Family("ribbon", "{name} buys {a} rolls of red {obj} and {b} rolls of blue {obj}, with {c} meters on each roll. "
           "{He} uses {d} meters of the red {obj} for a craft project. How many meters of {obj} does {he} have left?",
           "red_rolls = {a}\nblue_rolls = {b}\nper_roll = {c}\nused = {d}\n"
           "print((red_rolls + blue_rolls) * per_roll - used)", lambda a, b, c, d: (a + b) * c - d,
           ("How many meters of red {obj} does {he} have left?", lambda a, b, c, d: a * c - d),
           ("How many centimeters of {obj} does {he} have left?", lambda a, b, c, d: ((a + b) * c - d) * 100),
           ("How many meters of {obj} does {he} buy?", lambda a, b, c, d: (a + b) * c),
           _ribbon,
           (("ribbon", "ribbons"), ("rope", "ropes"), ("string", "strings"), ("lace", "laces"), ("twine", "twines"),
            ("wire", "wires"), ("cord", "cords"), ("yarn", "yarns"))),
)


def _used(template: str, constants: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in constants.items() if "{" + k + "}" in template}


def _words(family: Family, r: random.Random, exclude: frozenset[str] = frozenset()) -> dict[str, str]:
    """Two distinct people (with their pronouns) and two distinct objects, none of them in `exclude`."""
    (name, g), (name2, g2) = r.sample([p for p in NAMES if p[0] not in exclude], 2)
    (obj, objs), (obj2, objs2) = r.sample([o for o in family.objects if o[0] not in exclude], 2)
    words = {"name": name, "name2": name2, "obj": obj, "objs": objs, "obj2": obj2, "objs2": objs2}
    for suffix, gender in (("", g), ("2", g2)):
        for key, word in zip(("he", "his", "him"), PRONOUNS[gender], strict=True):
            words[key + suffix], words[key.capitalize() + suffix] = word, word.capitalize()
    return words


def _answers(family: Family, numbers: dict[str, int]) -> dict[str, int]:
    """The base answer and the near-miss answers (`_Redraw` unless all are whole, positive and unlike the base's)."""
    answers = {"base": family.answer(**numbers)} | {k: family.near_miss(k)[1](**numbers) for k in NEAR_MISS_KINDS}
    if min(answers.values()) <= 0 or list(answers.values()).count(answers["base"]) > 1:
        raise _Redraw
    return answers


def _draw(family: Family, r: random.Random) -> dict[str, int]:
    """Numbers, all distinct, for which every question of the family has a whole, positive answer."""
    for _ in range(10000):
        numbers = family.draw(r)
        if len(set(numbers.values())) < len(numbers):
            continue
        try:
            _answers(family, numbers)
        except _Redraw:
            continue
        return numbers
    raise RuntimeError(f"{family.name}: no valid numbers")  # pragma: no cover


def _draw_other(family: Family, r: random.Random, base: dict[str, int]) -> dict[str, int]:
    """Numbers whose answer differs from the base's and that do not repeat all of the base's numbers."""
    want = family.answer(**base)
    for _ in range(1000):
        numbers = _draw(family, r)
        if family.answer(**numbers) != want and not set(base.values()) <= set(numbers.values()):
            return numbers
    raise RuntimeError(f"{family.name}: no variant with another answer")  # pragma: no cover


def _check(family: Family) -> None:
    """The templates say what the module docstring promises."""
    numbers = set(re.findall(r"\{([a-d])\}", family.text))
    assert numbers == set(re.findall(r"\{([a-d])\}", family.program)), family.name  # every number is used
    assert "{name" not in family.program and "{obj" not in family.program, family.name
    question = _sentences(family.text)[-1].split()
    for kind in NEAR_MISS_KINDS:  # the base's question with one to three words changed
        ops = difflib.SequenceMatcher(None, question, getattr(family, kind)[0].split()).get_opcodes()
        edits = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
        assert 1 <= edits <= 3, (family.name, kind, edits)
    if family.order is not None:
        assert sorted(family.order) == list(range(len(family.statements))) != list(family.order), family.name


def family_rows(family: Family, r: random.Random) -> Iterator[tuple[str, dict[str, Any]]]:
    _check(family)
    fam = family.name
    base, words = _draw(family, r), _words(family, r)
    base_q, answers = family.text.format(**base, **words), _answers(family, base)
    yield "library", {"id": f"{fam}-base", "family": fam, "question": base_q, "answer": answers["base"],
                      "solution": family.program.format(**_used(family.program, base))}
    yield "eval", {"id": f"{fam}-recurrence", "family": fam, "role": "recurrence", "question": base_q,
                   "answer": answers["base"]}
    exclude = frozenset(words[k] for k in ("name", "name2", "obj", "obj2"))
    variants: list[tuple[str, str, str | None, str, dict[str, str]]] = [
        (f"{fam}-renamed-{i}", "renamed", None, family.text, _words(family, r, exclude))
        for i in range(1, RENAMED_PER_FAMILY + 1)]
    variants.append((f"{fam}-transfer-1", "transfer", "constants", family.text, words))
    if family.reordered is not None:
        variants.append((f"{fam}-reordered", "reordered", None, family.reordered, _words(family, r, exclude)))
    for row_id, role, variant, template, new_words in variants:
        numbers = _draw_other(family, r, base)
        answer = family.answer(**numbers)
        assert answer != answers["base"], (row_id, numbers)
        yield "eval", {"id": row_id, "family": fam, "role": role, **({"variant": variant} if variant else {}),
                       "question": template.format(**numbers, **new_words), "answer": answer}
    for kind in NEAR_MISS_KINDS:
        assert answers[kind] != answers["base"], (fam, kind)
        yield "eval", {"id": f"{fam}-near-miss-{kind}", "family": fam, "role": f"near_miss_{kind}",
                       "question": family.near_miss(kind)[0].format(**base, **words), "answer": answers[kind]}


def build(name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    r = random.Random(SETS[name])
    library: list[dict[str, Any]] = []
    evaluation: list[dict[str, Any]] = []
    for family in FAMILIES:
        for kind, row in family_rows(family, r):
            (library if kind == "library" else evaluation).append(row)
    return library, evaluation


def render(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def paths(name: str) -> tuple[Path, Path]:
    return DATA_DIR / f"flywheel-gsm-{name}-library.jsonl", DATA_DIR / f"flywheel-gsm-{name}-eval.jsonl"


def main() -> None:
    for name in SETS:
        library, evaluation = build(name)
        library_path, eval_path = paths(name)
        library_path.write_text(render(library))
        eval_path.write_text(render(evaluation))
        print(f"{name}: {len(library)} library problems, {len(evaluation)} eval questions", file=sys.stderr)


if __name__ == "__main__":
    main()
