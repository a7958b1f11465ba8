"""A fifth pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL5_FAMILIES` even -> `varied-dev5` (the
development half, to tune on), odd -> `varied-fresh5` (held out: nobody tunes on it, it is run once at the end).
The draw's seed is SEED = 7391. Written on 2026-12-05 without running the flywheel, the router, the alignment or
`kvgraft bench flywheel` on either half and without reading the alignment's, transfer's, structure's, router's or
parameterizer's rules.

    python -m bench.flywheel_pool5_data   # rewrites bench/data/flywheel-varied-{dev5,fresh5}-{library,eval}.jsonl
"""

from __future__ import annotations

DEV_NAME, HELD_OUT_NAME = "varied-dev5", "varied-fresh5"
SEED = 7391


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME
