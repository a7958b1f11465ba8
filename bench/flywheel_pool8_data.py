"""An eighth pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL8_FAMILIES` even -> `varied-dev8` (the
development half, to tune on in a later session), odd -> `varied-fresh8` (held out: nobody tunes on it, it is run
once at the end). The draw's seed is SEED = 9063. The families are to be written without running the flywheel, the
router, the alignment or `kvgraft bench flywheel` on either half and without reading the alignment's, transfer's,
structure's, router's or parameterizer's rules.
"""

from __future__ import annotations

DEV_NAME, HELD_OUT_NAME = "varied-dev8", "varied-fresh8"
SEED = 9063


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME
