"""The held-out set `varied-fresh` is what bench/flywheel_fresh_data.py writes, byte for byte; it is sound (every
reference program prints its row's answer, no braces left, distinct numbers, the near-miss kinds and one-slot edits
each family needs) and the soundness check catches a family that breaks it; its families are not the varied set's."""

from __future__ import annotations

import dataclasses
import re

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_varied_data as varied
from bench.flywheel import check_transfer_answers
from bench.sets import ROLES, load_sets
from tests.fixtures.families import assert_solutions_print_their_answers

pytestmark = pytest.mark.unit


def test_shipped_files_are_what_the_generator_writes() -> None:
    library, evaluation = fresh.build()
    library_path, eval_path = fresh.paths()
    assert library_path.read_bytes() == fresh.render(library).encode("utf-8")
    assert eval_path.read_bytes() == fresh.render(evaluation).encode("utf-8")


def test_the_set_is_selectable_by_name_and_its_rows_are_valid() -> None:
    library, items, library_path, _ = load_sets(fresh.NAME, None, None)
    assert library_path == fresh.paths()[0]
    check_transfer_answers(library, items)
    assert {i["role"] for i in items} <= set(ROLES)
    assert len(library) == len(fresh.FRESH_FAMILIES) >= 16


@pytest.mark.timeout(120)
def test_the_set_is_sound() -> None:
    assert fresh.problems() == []


@pytest.mark.timeout(120)
def test_every_solution_prints_its_answer_in_a_fresh_interpreter() -> None:
    library, evaluation = fresh.build()
    assert_solutions_print_their_answers(library, evaluation)


def test_each_family_has_its_near_misses_and_one_slot_edits() -> None:
    _, evaluation = fresh.build()
    for family in fresh.FRESH_FAMILIES:
        rows = [r for r in evaluation if r["family"] == family.name]
        misses = {r["variant"] for r in rows if r["role"].startswith("near_miss")}
        edits = {r["variant"] for r in rows if r["role"] == "renamed" and "variant" in r}
        assert misses == {"entity", "unit", "step", *fresh.slot_kinds(family)}, family.name
        assert edits == {f"edit_{k}" for k in fresh.slot_kinds(family)}, family.name
    kinds = {k for f in fresh.FRESH_FAMILIES for k in fresh.slot_kinds(f)}
    assert kinds == set(fresh.SLOT_KINDS)


def _ngrams(text: str, n: int = 6) -> set[tuple[str, ...]]:
    words = re.sub(r"\{\w+\}", "#", text.lower()).split()
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _statements(family: varied.Family) -> str:
    return family.text[: len(family.text) - len(family.question)]


def test_fresh_families_are_not_the_varied_sets() -> None:
    assert not {f.name for f in fresh.FRESH_FAMILIES} & {f.name for f in varied.FAMILIES}
    old = set().union(*(_ngrams(_statements(f)) for f in varied.FAMILIES))
    for family in fresh.FRESH_FAMILIES:  # no six words in a row of a varied family's statements (questions such as
        assert not _ngrams(_statements(family)) & old, family.name  # "How many {cw} does {n1} pay?" recur in any set)


def _broken(monkeypatch: pytest.MonkeyPatch, **change: object) -> list[str]:
    family = dataclasses.replace(fresh.FRESH_FAMILIES[0], **change)
    monkeypatch.setattr(fresh, "FRESH_FAMILIES", (family,))
    return fresh.problems(draws=5)


def test_the_soundness_check_catches_a_wrong_program(monkeypatch: pytest.MonkeyPatch) -> None:
    program = fresh.FRESH_FAMILIES[0].program.replace("+ brought", "- brought")
    assert any("program != answer" in p for p in _broken(monkeypatch, program=program))


def test_the_soundness_check_catches_a_missing_near_miss_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    misses = tuple(m for m in fresh.FRESH_FAMILIES[0].misses if m[0] != "kin")
    assert any("near-miss kinds" in p for p in _broken(monkeypatch, misses=misses))


def test_the_soundness_check_catches_a_number_the_template_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    family = fresh.FRESH_FAMILIES[0]
    text = family.text.replace("a day.", "a day for 7 days.")
    monkeypatch.setattr(fresh, "FRESH_FAMILIES", (dataclasses.replace(family, text=text),))
    assert fresh.literal_numbers(text) == {7}
    assert all(7 not in i.numbers.values() for i in fresh.instances())  # drawn again, never the written 7


def test_edit_problems_names_an_edit_that_is_not_one() -> None:
    before = {"n1": "Mei", "he1": "she", "k1": "aunt", "cs": "$", "cw": "dollars", "xw": "euros", "o": "kite",
              "os": "kites"}
    assert fresh.edit_problems("person", before, before | {"n1": "Ana"}) == ["the new name has the old one's length"]
    assert fresh.edit_problems("person", before, before | {"n1": "Ngozi", "k1": "uncle"}) == ["k1 changed"]
    assert fresh.edit_problems("object", before, before | {"o": "red kite", "os": "red kites"}) == []
    assert fresh.edit_problems("object", before, before | {"o": "yo-yo", "os": "yo-yos"}) == [
        "the new object has the old one's number of words"]
    assert fresh.edit_problems("currency", before, before | {"cs": "₩", "cw": "won"}) == []
