"""The pools written with bench/flywheel_pool.Pool (pools 2, 3, 4, 5, 6, 7 and 8) and their halves: the files are what
the generator writes, byte for byte; the split is the fixed rule (even index dev, odd held out); every half loads by
name; the pool is sound (every reference program prints its row's answer, near-miss kinds and one-slot edits per
family). What each pool adds, and that it repeats no earlier pool, is in its own test module."""

from __future__ import annotations

from types import ModuleType

import pytest

from bench import flywheel_fresh_data as fresh
from bench import flywheel_pool
from bench import flywheel_pool2_data as pool2
from bench import flywheel_pool3_data as pool3
from bench import flywheel_pool4_data as pool4
from bench import flywheel_pool5_data as pool5
from bench import flywheel_pool6_data as pool6
from bench import flywheel_pool7_data as pool7
from bench import flywheel_pool8_data as pool8
from bench import flywheel_varied_data as varied
from bench.flywheel import check_transfer_answers
from bench.sets import ROLES, load_sets
from tests.fixtures.families import assert_solutions_print_their_answers

pytestmark = pytest.mark.unit
# module, families per half, the roles every family has rows of (pool 2 has families with no reordered row)
ROLES_ALL = frozenset({"recurrence", "renamed", "transfer"})
POOLS = {"pool2": (pool2, 20, ROLES_ALL), "pool3": (pool3, 12, ROLES_ALL | {"reordered"}),
         "pool4": (pool4, 12, ROLES_ALL | {"reordered"}), "pool5": (pool5, 12, ROLES_ALL | {"reordered"}),
         "pool6": (pool6, 12, ROLES_ALL | {"reordered"}), "pool7": (pool7, 12, ROLES_ALL | {"reordered"}),
         "pool8": (pool8, 12, ROLES_ALL | {"reordered"})}
HALVES = [(pool, name) for pool, (module, _, _) in POOLS.items() for name in (module.DEV_NAME, module.HELD_OUT_NAME)]


def _module(pool: str) -> ModuleType:
    return POOLS[pool][0]


@pytest.mark.parametrize(("pool", "name"), HALVES)
def test_shipped_files_are_what_the_generator_writes(pool: str, name: str) -> None:
    library, evaluation = _module(pool).build(name)
    library_path, eval_path = flywheel_pool.paths(name)
    assert library_path.read_bytes() == varied.render(library).encode("utf-8")
    assert eval_path.read_bytes() == varied.render(evaluation).encode("utf-8")


@pytest.mark.parametrize("pool", POOLS)
def test_the_split_is_the_fixed_rule_and_covers_the_pool(pool: str) -> None:
    module, half, _ = POOLS[pool]
    assert [module.half_of(i) for i in range(4)] == [module.DEV_NAME, module.HELD_OUT_NAME] * 2
    dev, held = module.half_families(module.DEV_NAME), module.half_families(module.HELD_OUT_NAME)
    assert dev == module.POOL.families[0::2] and held == module.POOL.families[1::2]
    assert len(dev) == len(held) == half
    assert not {f.name for f in dev} & {f.name for f in held}


@pytest.mark.parametrize(("pool", "name"), HALVES)
def test_each_half_is_selectable_by_name_and_its_rows_are_valid(pool: str, name: str) -> None:
    library, items, library_path, _ = load_sets(name, None, None)
    assert library_path == flywheel_pool.paths(name)[0]
    check_transfer_answers(library, items)
    assert {i["role"] for i in items} <= set(ROLES)
    assert {r["family"] for r in library} == {f.name for f in _module(pool).half_families(name)}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("pool", POOLS)
def test_the_pool_is_sound(pool: str) -> None:
    assert _module(pool).pool_problems() == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("pool", "name"), HALVES)
def test_every_solution_prints_its_answer_in_a_fresh_interpreter(pool: str, name: str) -> None:
    library, evaluation = _module(pool).build(name)
    assert_solutions_print_their_answers(library, evaluation)


@pytest.mark.parametrize(("pool", "name"), HALVES)
def test_each_family_has_its_near_misses_and_one_slot_edits_and_each_half_every_slot_kind(pool: str,
                                                                                           name: str) -> None:
    module, _, roles = POOLS[pool]
    _, evaluation = module.build(name)
    for family in module.half_families(name):
        rows = [r for r in evaluation if r["family"] == family.name]
        misses = {r["variant"] for r in rows if r["role"].startswith("near_miss")}
        edits = {r["variant"] for r in rows if r["role"] == "renamed" and "variant" in r}
        assert misses == {"entity", "unit", "step", *fresh.slot_kinds(family)}, family.name
        assert edits == {f"edit_{k}" for k in fresh.slot_kinds(family)}, family.name
        assert {r["role"] for r in rows} >= roles, family.name
    assert {k for f in module.half_families(name) for k in fresh.slot_kinds(f)} == set(fresh.SLOT_KINDS)
