"""The shipped GSM-style flywheel sets are what bench/flywheel_gsm_data.py writes, and keep its promises."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

import pytest

from bench import flywheel_gsm_data as gsm

pytestmark = pytest.mark.unit


def _names_in(question: str) -> set[str]:
    return {name for name, _ in gsm.NAMES if re.search(rf"\b{name}\b", question)}


@pytest.mark.parametrize("name", sorted(gsm.SETS))
def test_shipped_files_are_what_the_generator_writes(name: str) -> None:
    library, evaluation = gsm.build(name)
    library_path, eval_path = gsm.paths(name)
    assert library_path.read_text() == gsm.render(library)
    assert eval_path.read_text() == gsm.render(evaluation)
    assert len(library) == len(gsm.FAMILIES) == 12
    reorderable = sum(f.order is not None for f in gsm.FAMILIES)
    assert Counter(row["role"] for row in evaluation) == {
        "recurrence": 12, "renamed": 36, "transfer": 12, "reordered": reorderable,
        "near_miss_entity": 12, "near_miss_unit": 12, "near_miss_step": 12}


def test_the_two_sets_draw_other_instances() -> None:
    dev, check = (gsm.build(name)[0] for name in ("dev", "check"))
    assert all(a["question"] != b["question"] for a, b in zip(dev, check, strict=True))


@pytest.mark.parametrize("name", sorted(gsm.SETS))
def test_every_solution_prints_its_answer(name: str) -> None:
    for row in gsm.build(name)[0]:
        assert not any(n in row["solution"] for n in _names_in(row["question"])), row["id"]
        done = subprocess.run([sys.executable, "-c", row["solution"]], capture_output=True, text=True, timeout=30,
                              check=True)
        assert done.stdout.strip() == str(row["answer"]), row["id"]


@pytest.mark.parametrize("name", sorted(gsm.SETS))
def test_variants_ask_other_questions_of_other_instances(name: str) -> None:
    library, evaluation = gsm.build(name)
    base = {row["family"]: row for row in library}
    for row in evaluation:
        b = base[row["family"]]
        assert isinstance(row["answer"], int) and row["answer"] > 0, row["id"]
        if row["role"] == "recurrence":
            assert (row["question"], row["answer"]) == (b["question"], b["answer"])
            continue
        assert row["answer"] != b["answer"], row["id"]  # near misses, renamed, transfer and reordered alike
        if row["role"].startswith("near_miss_"):
            # the base's statements, only the question sentence changed
            assert row["question"].rsplit(". ", 1)[0] == b["question"].rsplit(". ", 1)[0], row["id"]
        if row["role"] in ("renamed", "reordered"):
            assert not _names_in(row["question"]) & _names_in(b["question"]), row["id"]
            assert len(_names_in(row["question"])) == len(_names_in(b["question"])), row["id"]
        if row["role"] == "transfer":
            assert _names_in(row["question"]) == _names_in(b["question"]), row["id"]
