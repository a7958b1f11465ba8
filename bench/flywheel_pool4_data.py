"""A fourth pool of varied flywheel families, split in two halves BEFORE any family was written: the split rule was
fixed first and committed alone in this docstring: family index in `POOL4_FAMILIES` even -> `varied-dev4` (the
development half, to tune on), odd -> `varied-fresh4` (held out: nobody tunes on it, it is run once at the end).
Written on 2026-12-05 without running the flywheel, the router, the alignment or `kvgraft bench flywheel` on either
half and without reading the alignment's, transfer's, structure's, router's or parameterizer's rules.

    python -m bench.flywheel_pool4_data   # rewrites bench/data/flywheel-varied-{dev4,fresh4}-{library,eval}.jsonl
"""
