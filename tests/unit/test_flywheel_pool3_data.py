"""The third pool (bench/flywheel_pool3_data.py, halves `varied-dev3` and `varied-fresh3`): what it adds to the
earlier pools, its families are none of the earlier pools', and its soundness check catching a wrong program. Its
files, split and soundness: tests/unit/test_flywheel_pools.py."""

from __future__ import annotations

import dataclasses

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_pool2_data as pool2
from bench import flywheel_pool3_data as pool3
from bench import flywheel_varied_data as varied
from tests.fixtures.families import ngrams, statements

pytestmark = pytest.mark.unit


def test_the_pools_add_currencies_names_and_kin_no_earlier_pool_has() -> None:
    new_currencies = {w for _, w in pool3.POOL3_CURRENCIES} - {w for _, w in pool2.POOL2_CURRENCIES}
    assert {"hryvnias", "lari", "kip", "ringgit", "shillings"} <= new_currencies
    new_names = {n for n, _ in pool3.POOL3_NAMES} - {n for n, _ in pool2.POOL2_NAMES}
    assert any(" " in n for n in new_names) and any("-" in n for n in new_names)
    assert set(pool3.POOL3_KIN) - set(pool2.POOL2_KIN)


def test_pool_families_are_not_the_earlier_pools() -> None:
    earlier = (*varied.FAMILIES, *fresh.FRESH_FAMILIES, *pool2.POOL2_FAMILIES)
    assert not {f.name for f in pool3.POOL3_FAMILIES} & {f.name for f in earlier}
    old = set().union(*(ngrams(statements(f)) for f in earlier))
    for family in pool3.POOL3_FAMILIES:  # no six words in a row of an earlier family's statements
        assert not ngrams(statements(family)) & old, family.name


def test_the_soundness_check_catches_a_wrong_program() -> None:
    family = pool3.POOL3_FAMILIES[0]
    broken = dataclasses.replace(family, program=family.program.replace("- fewer", "+ fewer"))
    assert any("program != answer" in p for p in dataclasses.replace(pool3.POOL, families=(broken,)).problems(draws=5))
