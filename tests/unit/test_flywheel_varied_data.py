"""The shipped varied flywheel sets are what bench/flywheel_varied_data.py writes: at least 40 families, split by a
fixed rule into halves that share no family, every reference program printing its answer."""

from __future__ import annotations

import pytest

from bench import flywheel_varied_data as varied
from tests.fixtures.families import assert_solutions_print_their_answers

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", varied.SPLITS)
def test_shipped_files_are_what_the_generator_writes(name: str) -> None:
    library, evaluation = varied.build(name)
    library_path, eval_path = varied.paths(name)
    assert library_path.read_text(encoding="utf-8") == varied.render(library)
    assert eval_path.read_text(encoding="utf-8") == varied.render(evaluation)


def test_at_least_forty_families_split_by_the_fixed_rule() -> None:
    assert len(varied.FAMILIES) >= 40
    dev, check = ({row["family"] for row in varied.build(name)[0]} for name in varied.SPLITS)
    assert not dev & check and len(dev | check) == len(varied.FAMILIES)
    assert dev == {f.name for i, f in enumerate(varied.FAMILIES) if i % 2 == 0}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", varied.SPLITS)
def test_every_solution_prints_its_answer_and_variants_differ(name: str) -> None:
    library, evaluation = varied.build(name)
    assert_solutions_print_their_answers(library, evaluation)
