"""The second pool (bench/flywheel_pool2_data.py, halves `varied-dev2` and `varied-fresh2`): what it adds to the
earlier pools, its families are not the varied or the fresh set's, and its soundness check catching a wrong program.
Its files, split and soundness: tests/unit/test_flywheel_pools.py."""

from __future__ import annotations

import dataclasses

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_pool2_data as pool2
from bench import flywheel_varied_data as varied
from tests.fixtures.families import ngrams, statements

pytestmark = pytest.mark.unit


def test_the_pools_add_currencies_names_and_kin_no_earlier_set_has() -> None:
    new_currencies = {w for _, w in pool2.POOL2_CURRENCIES} - {w for _, w in fresh.FRESH_CURRENCIES}
    assert {"dong", "baht", "rand", "złoty", "kronor"} <= new_currencies
    assert any(" " in n for n, _ in pool2.POOL2_NAMES) and any("-" in n for n, _ in pool2.POOL2_NAMES)
    assert set(pool2.POOL2_KIN) - set(fresh.FRESH_KIN)


def test_pool_families_are_not_the_varied_or_fresh_sets() -> None:
    earlier = (*varied.FAMILIES, *fresh.FRESH_FAMILIES)
    assert not {f.name for f in pool2.POOL2_FAMILIES} & {f.name for f in earlier}
    old = set().union(*(ngrams(statements(f)) for f in earlier))
    for family in pool2.POOL2_FAMILIES:  # no six words in a row of an earlier family's statements
        assert not ngrams(statements(family)) & old, family.name


def test_the_soundness_check_catches_a_wrong_program() -> None:
    family = pool2.POOL2_FAMILIES[0]
    broken = dataclasses.replace(family, program=family.program.replace("- fuel", "+ fuel"))
    assert any("program != answer" in p for p in dataclasses.replace(pool2.POOL, families=(broken,)).problems(draws=5))
