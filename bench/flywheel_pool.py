"""A pool of flywheel families split into a development half and a held-out half by a rule fixed before any family
was written (bench/flywheel_pool2_data.py, flywheel_pool3_data.py, flywheel_pool4_data.py, flywheel_pool5_data.py,
flywheel_pool6_data.py, flywheel_pool7_data.py, flywheel_pool8_data.py): drawing every row in one pass, building a
half's library and eval rows, checking the pool and writing both halves' files."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.flywheel_fresh_data import Instance, Pools, family_instances, problems
from bench.flywheel_varied_data import Family, render

DATA_DIR = Path(__file__).parent / "data"


def paths(name: str) -> tuple[Path, Path]:
    """A shipped set's library and eval files."""
    return DATA_DIR / f"flywheel-{name}-library.jsonl", DATA_DIR / f"flywheel-{name}-eval.jsonl"


@dataclass(frozen=True)
class Pool:
    families: tuple[Family, ...]
    pools: Pools
    seed: int
    half_of: Callable[[int], str]  # the split by family index, fixed before any family was written
    names: tuple[str, str]  # (development half, held-out half)

    def instances(self) -> list[tuple[int, Instance]]:
        """Every row of the pool with its family's index, drawn in one pass (so a half's rows do not depend on the
        other half's being written)."""
        r = random.Random(self.seed)
        return [(i, inst) for i, family in enumerate(self.families) for inst in family_instances(family, r, self.pools)]

    def half_families(self, name: str) -> tuple[Family, ...]:
        return tuple(f for i, f in enumerate(self.families) if self.half_of(i) == name)

    def build(self, name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A half's library rows and eval rows."""
        every = [inst for i, inst in self.instances() if self.half_of(i) == name]
        return [i.row for i in every if i.kind == "library"], [i.row for i in every if i.kind == "eval"]

    def problems(self, draws: int = 40) -> list[str]:
        """What is wrong with the pool (bench.flywheel_fresh_data.problems); empty when it is sound."""
        return problems([inst for _, inst in self.instances()], draws, self.families)

    def write(self) -> None:
        """Check the pool, then write both halves' files (refusing to write an unsound pool)."""
        broken = self.problems()
        if broken:
            raise SystemExit("\n".join(broken))
        for name in self.names:
            library, evaluation = self.build(name)
            library_path, eval_path = paths(name)
            library_path.write_text(render(library), encoding="utf-8")
            eval_path.write_text(render(evaluation), encoding="utf-8")
            print(f"{name}: {len(self.half_families(name))} families, {len(library)} library problems, "
                  f"{len(evaluation)} eval questions", file=sys.stderr)
