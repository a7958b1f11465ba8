"""The fourth pool (bench/flywheel_pool4_data.py, halves `varied-dev4` and `varied-fresh4`): what it adds to the
earlier pools, its families are none of the earlier pools' (pool 3 and the GSM-style sets included), and its soundness
check catching a wrong program. Its files, split and soundness: tests/unit/test_flywheel_pools.py."""

from __future__ import annotations

import dataclasses

import pytest

from bench import flywheel_data as first
from bench import flywheel_fresh_data as fresh
from bench import flywheel_gsm_data as gsm
from bench import flywheel_pool2_data as pool2
from bench import flywheel_pool3_data as pool3
from bench import flywheel_pool4_data as pool4
from bench import flywheel_varied_data as varied
from tests.fixtures.families import ngrams, statements

pytestmark = pytest.mark.unit


def test_the_pool_adds_currencies_names_and_kin_no_earlier_pool_has() -> None:
    new_currencies = {w for _, w in pool4.POOL4_CURRENCIES} - {w for _, w in pool3.POOL3_CURRENCIES}
    assert {"francs", "shekels", "cedis"} <= new_currencies
    signs = [c for c, _ in pool4.POOL4_CURRENCIES]
    assert len(signs) == len(set(signs))  # a currency edit changes the sign too
    new_names = {n for n, _ in pool4.POOL4_NAMES} - {n for n, _ in pool3.POOL3_NAMES}
    assert any(" " in n for n in new_names) and any("-" in n for n in new_names)
    names = [n for n, _ in pool4.POOL4_NAMES]
    assert len(names) == len(set(names))
    new_kin = set(pool4.POOL4_KIN) - set(pool3.POOL3_KIN)
    assert {"grandpa", "sister-in-law", "swim coach", "bandmate", "next-door neighbor"} <= new_kin
    assert len(pool4.POOL4_KIN) == len(set(pool4.POOL4_KIN))


def _earlierstatements() -> list[tuple[str, str]]:
    """(name, statements) of every family of every earlier pool: the first set, the GSM-style set, varied, fresh,
    pool 2 and pool 3."""
    pooled = (*varied.FAMILIES, *fresh.FRESH_FAMILIES, *pool2.POOL2_FAMILIES, *pool3.POOL3_FAMILIES)
    return ([(f.name, statements(f)) for f in pooled] + [(f.name, " ".join(f.statements)) for f in gsm.FAMILIES]
            + [(f.name, f.question) for f in first.FAMILIES])


def test_pool_families_are_not_the_earlier_pools() -> None:
    earlier = _earlierstatements()
    assert len(earlier) > len(pool3.POOL3_FAMILIES) + len(pool2.POOL2_FAMILIES)
    assert not {f.name for f in pool4.POOL4_FAMILIES} & {name for name, _ in earlier}
    old = set().union(*(ngrams(text) for _, text in earlier))
    for family in pool4.POOL4_FAMILIES:  # no six words in a row of an earlier family's statements
        assert not ngrams(statements(family)) & old, family.name
        if family.alt is not None:  # nor of the reordered statements
            assert not ngrams(family.alt[: len(family.alt) - len(family.question)]) & old, family.name


def test_the_soundness_check_catches_a_wrong_program() -> None:
    family = pool4.POOL4_FAMILIES[0]
    broken = dataclasses.replace(family, program=family.program.replace("+ frozen", "- frozen"))
    assert any("program != answer" in p for p in dataclasses.replace(pool4.POOL, families=(broken,)).problems(draws=5))
