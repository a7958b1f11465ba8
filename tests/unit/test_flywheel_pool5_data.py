"""The fifth pool (bench/flywheel_pool5_data.py, halves `varied-dev5` and `varied-fresh5`): what it adds to the
earlier pools, its families are none of the earlier pools' (pool 4 and the GSM-style sets included), and its soundness
check catching a wrong program. Its files, split and soundness: tests/unit/test_flywheel_pools.py."""

from __future__ import annotations

import dataclasses

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_pool2_data as pool2
from bench import flywheel_pool3_data as pool3
from bench import flywheel_pool4_data as pool4
from bench import flywheel_pool5_data as pool5
from bench import flywheel_varied_data as varied
from tests.fixtures.families import alt_statements, earlier_statements, ngrams, statements

pytestmark = pytest.mark.unit


def test_the_pool_adds_currencies_names_and_kin_no_earlier_pool_has() -> None:
    new_currencies = {w for _, w in pool5.POOL5_CURRENCIES} - {w for _, w in pool4.POOL4_CURRENCIES}
    assert {"tugriks", "drams", "manats", "korunas", "forints", "guaranies"} <= new_currencies
    signs = [c for c, _ in pool5.POOL5_CURRENCIES]
    assert len(signs) == len(set(signs))  # a currency edit changes the sign too
    new_names = {n for n, _ in pool5.POOL5_NAMES} - {n for n, _ in pool4.POOL4_NAMES}
    assert len(new_names) >= 20
    assert any(" " in n for n in new_names) and any("-" in n for n in new_names)
    names = [n for n, _ in pool5.POOL5_NAMES]
    assert len(names) == len(set(names))
    new_kin = set(pool5.POOL5_KIN) - set(pool4.POOL4_KIN)
    assert len(new_kin) >= 10
    assert {"husband", "stepsister", "daughter-in-law", "best friend", "camp counselor"} <= new_kin
    assert len(pool5.POOL5_KIN) == len(set(pool5.POOL5_KIN))


def _earlier_statements() -> list[tuple[str, str]]:
    """(name, statements) of every family of every earlier pool: the first set, the GSM-style set, varied, fresh,
    pools 2, 3 and 4 (their reordered statements too)."""
    return earlier_statements((*varied.FAMILIES, *fresh.FRESH_FAMILIES, *pool2.POOL2_FAMILIES, *pool3.POOL3_FAMILIES,
                              *pool4.POOL4_FAMILIES))


def test_pool_families_are_not_the_earlier_pools() -> None:
    earlier = _earlier_statements()
    assert len(earlier) > len(pool4.POOL4_FAMILIES) + len(pool3.POOL3_FAMILIES) + len(pool2.POOL2_FAMILIES)
    assert not {f.name for f in pool5.POOL5_FAMILIES} & {name for name, _ in earlier}
    old = set().union(*(ngrams(text) for _, text in earlier))
    for family in pool5.POOL5_FAMILIES:  # no six words in a row of an earlier family's statements
        assert family.alt is not None and family.alt_kind == "reorder", family.name
        assert not ngrams(statements(family)) & old, family.name
        assert not ngrams(alt_statements(family)) & old, family.name


def test_the_soundness_check_catches_a_wrong_program() -> None:
    family = pool5.POOL5_FAMILIES[0]
    broken = dataclasses.replace(family, program=family.program.replace("- young // 3", "+ young // 3"))
    assert broken.program != family.program
    assert any("program != answer" in p for p in dataclasses.replace(pool5.POOL, families=(broken,)).problems(draws=5))
