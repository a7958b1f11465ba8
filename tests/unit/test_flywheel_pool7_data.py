"""The seventh pool (bench/flywheel_pool7_data.py, halves `varied-dev7` and `varied-fresh7`): what it adds to the
earlier pools, its families are none of the earlier pools' (pool 6 and the GSM-style sets included), and its soundness
check catching a wrong program. Its files, split and soundness: tests/unit/test_flywheel_pools.py."""

from __future__ import annotations

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_pool2_data as pool2
from bench import flywheel_pool3_data as pool3
from bench import flywheel_pool4_data as pool4
from bench import flywheel_pool5_data as pool5
from bench import flywheel_pool6_data as pool6
from bench import flywheel_pool7_data as pool7
from bench import flywheel_varied_data as varied
from tests.fixtures.families import (
    assert_a_new_pool,
    assert_the_soundness_check_catches_a_wrong_program,
    earlier_statements,
)

pytestmark = pytest.mark.unit


def test_the_pool_adds_currencies_names_and_kin_no_earlier_pool_has() -> None:
    new_currencies = {w for _, w in pool7.POOL7_CURRENCIES} - {w for _, w in pool6.POOL6_CURRENCIES}
    assert {"kwacha", "birr", "riyals", "dinars", "meticais", "riels"} <= new_currencies
    signs = [c for c, _ in pool7.POOL7_CURRENCIES]
    assert len(signs) == len(set(signs))  # a currency edit changes the sign too
    words = [w for _, w in pool7.POOL7_CURRENCIES]
    assert len(words) == len(set(words))
    new_names = {n for n, _ in pool7.POOL7_NAMES} - {n for n, _ in pool6.POOL6_NAMES}
    assert len(new_names) >= 20
    assert any(" " in n for n in new_names) and any("-" in n for n in new_names)
    assert {g for n, g in pool7.POOL7_NAMES if n in new_names} == {"f", "m"}
    names = [n for n, _ in pool7.POOL7_NAMES]
    assert len(names) == len(set(names))
    new_kin = set(pool7.POOL7_KIN) - set(pool6.POOL6_KIN)
    assert len(new_kin) >= 10
    assert {"godson", "older sister", "fiancé", "pen pal", "karate instructor"} <= new_kin
    assert len(pool7.POOL7_KIN) == len(set(pool7.POOL7_KIN))


def _earlier_statements() -> list[tuple[str, str]]:
    """(name, statements) of every family of every earlier pool: the first set, the GSM-style set, varied, fresh,
    pools 2, 3, 4, 5 and 6 (their reordered statements too)."""
    return earlier_statements((*varied.FAMILIES, *fresh.FRESH_FAMILIES, *pool2.POOL2_FAMILIES, *pool3.POOL3_FAMILIES,
                              *pool4.POOL4_FAMILIES, *pool5.POOL5_FAMILIES, *pool6.POOL6_FAMILIES))


def test_pool_families_are_not_the_earlier_pools() -> None:
    earlier = _earlier_statements()
    assert len(earlier) > (len(pool6.POOL6_FAMILIES) + len(pool5.POOL5_FAMILIES) + len(pool4.POOL4_FAMILIES)
                           + len(pool3.POOL3_FAMILIES) + len(pool2.POOL2_FAMILIES))
    assert {f.name for f in pool6.POOL6_FAMILIES} <= {name for name, _ in earlier}
    assert_a_new_pool(pool7.POOL7_FAMILIES, earlier)


def test_the_soundness_check_catches_a_wrong_program() -> None:
    assert_the_soundness_check_catches_a_wrong_program(pool7.POOL)
