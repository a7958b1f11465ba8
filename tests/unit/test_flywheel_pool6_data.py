"""The sixth pool (bench/flywheel_pool6_data.py, halves `varied-dev6` and `varied-fresh6`): what it adds to the
earlier pools, its families are none of the earlier pools' (pool 5 and the GSM-style sets included), and its soundness
check catching a wrong program. Its files, split and soundness: tests/unit/test_flywheel_pools.py."""

from __future__ import annotations

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_pool2_data as pool2
from bench import flywheel_pool3_data as pool3
from bench import flywheel_pool4_data as pool4
from bench import flywheel_pool5_data as pool5
from bench import flywheel_pool6_data as pool6
from bench import flywheel_varied_data as varied
from tests.fixtures.families import (
    assert_a_new_pool,
    assert_the_pool_adds,
    assert_the_soundness_check_catches_a_wrong_program,
    earlier_statements,
)

pytestmark = pytest.mark.unit


def test_the_pool_adds_currencies_names_and_kin_no_earlier_pool_has() -> None:
    assert_the_pool_adds(pool6.POOLS, pool5.POOLS, {"colones", "quetzales", "soles", "bolivianos"},
                         {"twin brother", "head chef", "stepbrother", "fiancée", "half-sister"})


def _earlier_statements() -> list[tuple[str, str]]:
    """(name, statements) of every family of every earlier pool: the first set, the GSM-style set, varied, fresh,
    pools 2, 3, 4 and 5 (their reordered statements too)."""
    return earlier_statements((*varied.FAMILIES, *fresh.FRESH_FAMILIES, *pool2.POOL2_FAMILIES, *pool3.POOL3_FAMILIES,
                              *pool4.POOL4_FAMILIES, *pool5.POOL5_FAMILIES))


def test_pool_families_are_not_the_earlier_pools() -> None:
    earlier = _earlier_statements()
    assert len(earlier) > (len(pool5.POOL5_FAMILIES) + len(pool4.POOL4_FAMILIES) + len(pool3.POOL3_FAMILIES)
                           + len(pool2.POOL2_FAMILIES))
    assert {f.name for f in pool5.POOL5_FAMILIES} <= {name for name, _ in earlier}
    assert_a_new_pool(pool6.POOL6_FAMILIES, earlier)


def test_the_soundness_check_catches_a_wrong_program() -> None:
    assert_the_soundness_check_catches_a_wrong_program(pool6.POOL)
