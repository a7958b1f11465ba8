"""The eighth pool (bench/flywheel_pool8_data.py, halves `varied-dev8` and `varied-fresh8`): what it adds to the
earlier pools, its families are none of the earlier pools' (pool 7 and the GSM-style sets included), and its soundness
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
from bench import flywheel_pool8_data as pool8
from bench import flywheel_varied_data as varied
from tests.fixtures.families import (
    assert_a_new_pool,
    assert_the_pool_adds,
    assert_the_soundness_check_catches_a_wrong_program,
    earlier_statements,
)

pytestmark = pytest.mark.unit


def test_the_pool_adds_currencies_names_and_kin_no_earlier_pool_has() -> None:
    assert_the_pool_adds(pool8.POOLS, pool7.POOLS, {"ariary", "gourdes", "dalasis", "leva", "ouguiyas", "vatu"},
                         {"great-nephew", "younger brother", "foster daughter", "second cousin", "line manager"})


def _earlier_statements() -> list[tuple[str, str]]:
    """(name, statements) of every family of every earlier pool: the first set, the GSM-style set, varied, fresh,
    pools 2, 3, 4, 5, 6 and 7 (their reordered statements too)."""
    return earlier_statements((*varied.FAMILIES, *fresh.FRESH_FAMILIES, *pool2.POOL2_FAMILIES, *pool3.POOL3_FAMILIES,
                              *pool4.POOL4_FAMILIES, *pool5.POOL5_FAMILIES, *pool6.POOL6_FAMILIES,
                              *pool7.POOL7_FAMILIES))


def test_pool_families_are_not_the_earlier_pools() -> None:
    earlier = _earlier_statements()
    assert len(earlier) > (len(pool7.POOL7_FAMILIES) + len(pool6.POOL6_FAMILIES) + len(pool5.POOL5_FAMILIES)
                           + len(pool4.POOL4_FAMILIES) + len(pool3.POOL3_FAMILIES) + len(pool2.POOL2_FAMILIES))
    assert {f.name for f in pool7.POOL7_FAMILIES} <= {name for name, _ in earlier}
    assert_a_new_pool(pool8.POOL8_FAMILIES, earlier)


def test_the_soundness_check_catches_a_wrong_program() -> None:
    assert_the_soundness_check_catches_a_wrong_program(pool8.POOL)
