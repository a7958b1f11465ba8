"""A third pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL3_FAMILIES` even -> `varied-dev3` (the
development half, to tune on), odd -> `varied-fresh3` (held out: nobody tunes on it, it is run once at the end).
Written on 2026-12-05 without running the flywheel, the router, the alignment or `kvgraft bench flywheel` on either
half and without reading the alignment's, transfer's, structure's or router's rules.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic), new
situations and wording, not edits of the families of bench/flywheel_data.py, bench/flywheel_gsm_data.py,
bench/flywheel_varied_data.py, bench/flywheel_fresh_data.py or bench/flywheel_pool2_data.py, whose machinery they
reuse (Family, the draw with the written-number redraw, one-slot `edit_*` rows, near misses of every kind,
`problems()`; read bench/flywheel_varied_data.py's and bench/flywheel_fresh_data.py's docstrings for the rows).

    python -m bench.flywheel_pool3_data   # rewrites bench/data/flywheel-varied-{dev3,fresh3}-{library,eval}.jsonl
"""

from __future__ import annotations

DEV_NAME, HELD_OUT_NAME = "varied-dev3", "varied-fresh3"


def half_of(index: int) -> str:
    """The split, fixed before any family was written: even index -> development, odd -> held out."""
    return DEV_NAME if index % 2 == 0 else HELD_OUT_NAME
