"""The shipped flywheel benchmark set: problem families written for this project (no evaluation data set), each
with a base problem (and its reference program), same-structure variants with new constants, and a near-miss
question that shares the base's wording but asks something else.

    python -m bench.flywheel_data > bench/data/flywheel.jsonl
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Family:
    name: str
    question: str
    program: str
    answer: Callable[..., int]
    near_miss: str
    near_miss_answer: Callable[..., int]
    constants: tuple[dict[str, int], ...]  # the first is the base, the rest are variants


FAMILIES = (
    Family("cartons", "A farmer collects {a} eggs and packs them in cartons of {b}. How many cartons does he fill?",
           "eggs = {a}\nper_carton = {b}\nprint(eggs // per_carton)", lambda a, b: a // b,
           "A farmer collects {a} eggs and packs them in cartons of {b}. How many eggs does he collect in two days "
           "if he collects the same number each day?", lambda a, b: 2 * a,
           ({"a": 48, "b": 6}, {"a": 96, "b": 12}, {"a": 84, "b": 7})),
    Family("savings", "Tom saves {a} dollars each week. How many weeks does he need to save {b} dollars?",
           "weekly = {a}\ntarget = {b}\nprint(target // weekly)", lambda a, b: b // a,
           "Tom saves {a} dollars each week. How much has he saved after {b} weeks?", lambda a, b: a * b,
           ({"a": 25, "b": 300}, {"a": 15, "b": 180}, {"a": 40, "b": 360})),
    Family("shelves", "There are {a} shelves with {b} books on each shelf. {c} books are taken away. How many books "
           "are left?", "books = {a} * {b}\nprint(books - {c})", lambda a, b, c: a * b - c,
           "There are {a} shelves with {b} books on each shelf. {c} books are taken away. How many shelves are "
           "there?", lambda a, b, c: a,
           ({"a": 4, "b": 23, "c": 17}, {"a": 5, "b": 31, "c": 12}, {"a": 7, "b": 18, "c": 25})),
    Family("bus", "A bus carries {a} people. At the first stop {b} get off and {c} get on. How many people are on "
           "the bus now?", "people = {a}\npeople = people - {b} + {c}\nprint(people)",
           lambda a, b, c: a - b + c,
           "A bus carries {a} people. At the first stop {b} get off and {c} get on. How many people got off or on "
           "at the first stop?", lambda a, b, c: b + c,
           ({"a": 36, "b": 11, "c": 7}, {"a": 52, "b": 19, "c": 4}, {"a": 28, "b": 9, "c": 13})),
    Family("change", "Pens cost {a} dollars each. Lena buys {b} pens and pays with a {c} dollar bill. How much "
           "change does she get?", "cost = {a} * {b}\nprint({c} - cost)", lambda a, b, c: c - a * b,
           "Pens cost {a} dollars each. Lena buys {b} pens and pays with a {c} dollar bill. How many pens does she "
           "buy in two such visits?", lambda a, b, c: 2 * b,
           ({"a": 2, "b": 9, "c": 50}, {"a": 3, "b": 7, "c": 40}, {"a": 4, "b": 11, "c": 100})),
    Family("stickers", "Anna had {a} stickers. She gave a third of them to her brother. How many stickers does she "
           "have left?", "stickers = {a}\nprint(stickers - stickers // 3)", lambda a: a - a // 3,
           "Anna had {a} stickers. She gave a third of them to her brother. How many stickers did her brother get?",
           lambda a: a // 3,
           ({"a": 90}, {"a": 120}, {"a": 45})),
)


def problems() -> Iterator[dict[str, Any]]:
    for fam in FAMILIES:
        for i, consts in enumerate(fam.constants):
            role = "base" if i == 0 else "variant"
            item: dict[str, Any] = {"id": f"{fam.name}-{role}-{i}", "family": fam.name, "role": role,
                                    "question": fam.question.format(**consts), "answer": fam.answer(**consts)}
            if role == "base":
                item["solution"] = fam.program.format(**consts)
            yield item
        base = fam.constants[0]
        yield {"id": f"{fam.name}-near-miss", "family": fam.name, "role": "near_miss",
               "question": fam.near_miss.format(**base), "answer": fam.near_miss_answer(**base)}


if __name__ == "__main__":
    for p in problems():
        sys.stdout.write(json.dumps(p) + "\n")
