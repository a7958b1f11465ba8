"""The third pool (bench/flywheel_pool3_data.py) and its two halves `varied-dev3` and `varied-fresh3`: the files are
what the generator writes, byte for byte; the split is the fixed rule (even index dev, odd held out); the pool is
sound (every reference program prints its row's answer, near-miss kinds and one-slot edits per family); its families
are none of the earlier pools'."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_pool
from bench import flywheel_pool2_data as pool2
from bench import flywheel_pool3_data as pool3
from bench import flywheel_varied_data as varied
from bench.flywheel import check_transfer_answers
from bench.sets import ROLES, load_sets

pytestmark = pytest.mark.unit
HALVES = (pool3.DEV_NAME, pool3.HELD_OUT_NAME)


@pytest.mark.parametrize("name", HALVES)
def test_shipped_files_are_what_the_generator_writes(name: str) -> None:
    library, evaluation = pool3.build(name)
    library_path, eval_path = flywheel_pool.paths(name)
    assert library_path.read_bytes() == varied.render(library).encode("utf-8")
    assert eval_path.read_bytes() == varied.render(evaluation).encode("utf-8")


def test_the_split_is_the_fixed_rule_and_covers_the_pool() -> None:
    assert [pool3.half_of(i) for i in range(4)] == [pool3.DEV_NAME, pool3.HELD_OUT_NAME] * 2
    dev, held = (pool3.half_families(n) for n in HALVES)
    assert dev == pool3.POOL3_FAMILIES[0::2] and held == pool3.POOL3_FAMILIES[1::2]
    assert len(dev) == len(held) == 12
    assert not {f.name for f in dev} & {f.name for f in held}


@pytest.mark.parametrize("name", HALVES)
def test_each_half_is_selectable_by_name_and_its_rows_are_valid(name: str) -> None:
    library, items, library_path, _ = load_sets(name, None, None)
    assert library_path == flywheel_pool.paths(name)[0]
    check_transfer_answers(library, items)
    assert {i["role"] for i in items} <= set(ROLES)
    assert {r["family"] for r in library} == {f.name for f in pool3.half_families(name)}


@pytest.mark.timeout(120)
def test_the_pool_is_sound() -> None:
    assert pool3.pool_problems() == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", HALVES)
def test_every_solution_prints_its_answer_in_a_fresh_interpreter(name: str) -> None:
    library, evaluation = pool3.build(name)
    base = {row["family"]: row for row in library}
    for row in library:
        done = subprocess.run([sys.executable, "-c", row["solution"]], capture_output=True, text=True, timeout=30,
                              check=True)
        assert done.stdout.strip() == str(row["answer"]), row["id"]
    for row in evaluation:
        if row["role"] != "recurrence":
            assert row["answer"] != base[row["family"]]["answer"] or row["role"].startswith("near_miss"), row["id"]


@pytest.mark.parametrize("name", HALVES)
def test_each_family_has_its_near_misses_and_one_slot_edits_and_each_half_every_slot_kind(name: str) -> None:
    _, evaluation = pool3.build(name)
    for family in pool3.half_families(name):
        rows = [r for r in evaluation if r["family"] == family.name]
        misses = {r["variant"] for r in rows if r["role"].startswith("near_miss")}
        edits = {r["variant"] for r in rows if r["role"] == "renamed" and "variant" in r}
        assert misses == {"entity", "unit", "step", *fresh.slot_kinds(family)}, family.name
        assert edits == {f"edit_{k}" for k in fresh.slot_kinds(family)}, family.name
        assert {r["role"] for r in rows} >= {"recurrence", "renamed", "transfer", "reordered"}, family.name
    assert {k for f in pool3.half_families(name) for k in fresh.slot_kinds(f)} == set(fresh.SLOT_KINDS)


def test_the_pools_add_currencies_names_and_kin_no_earlier_pool_has() -> None:
    new_currencies = {w for _, w in pool3.POOL3_CURRENCIES} - {w for _, w in pool2.POOL2_CURRENCIES}
    assert {"hryvnias", "lari", "kip", "ringgit", "shillings"} <= new_currencies
    new_names = {n for n, _ in pool3.POOL3_NAMES} - {n for n, _ in pool2.POOL2_NAMES}
    assert any(" " in n for n in new_names) and any("-" in n for n in new_names)
    assert set(pool3.POOL3_KIN) - set(pool2.POOL2_KIN)


def _ngrams(text: str, n: int = 6) -> set[tuple[str, ...]]:
    words = re.sub(r"\{\w+\}", "#", text.lower()).split()
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _statements(family: varied.Family) -> str:
    return family.text[: len(family.text) - len(family.question)]


def test_pool_families_are_not_the_earlier_pools() -> None:
    earlier = (*varied.FAMILIES, *fresh.FRESH_FAMILIES, *pool2.POOL2_FAMILIES)
    assert not {f.name for f in pool3.POOL3_FAMILIES} & {f.name for f in earlier}
    old = set().union(*(_ngrams(_statements(f)) for f in earlier))
    for family in pool3.POOL3_FAMILIES:  # no six words in a row of an earlier family's statements
        assert not _ngrams(_statements(family)) & old, family.name


def test_the_soundness_check_catches_a_wrong_program() -> None:
    family = pool3.POOL3_FAMILIES[0]
    broken = dataclasses.replace(family, program=family.program.replace("- fewer", "+ fewer"))
    assert any("program != answer" in p for p in dataclasses.replace(pool3.POOL, families=(broken,)).problems(draws=5))
