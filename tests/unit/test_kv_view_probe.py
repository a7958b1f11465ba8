"""The mixed-length decode probe (bench/kv_view_probe.py) on the tiny model: a short sequence's row has the same
bytes whether its call's KV view is padded to a long neighbour's length or to its own, and the record says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.kv_view_probe import run_probe

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]


def test_a_short_row_does_not_depend_on_a_long_neighbours_view(kvgraft_cache: Path) -> None:
    record = run_probe("tiny", short=64, long=512, rows=4, reps=2, threads=2, flash_attn=False)
    assert record["short_rows_compared"] == 3
    assert record["short_rows_equal_mixed_vs_split"] == 3
    # the tiny model's weights are F32: the long row alone takes ggml's one-row matmul, another kernel
    assert record["long_row_equal_mixed_vs_alone"] is False
    assert set(record["median_ms"]) == {"all_short_one_call", "one_long_one_call", "one_long_two_calls",
                                        "all_long_one_call", "one_short_alone", "one_long_alone"}
    with pytest.raises(ValueError, match="rows must be"):
        run_probe("tiny", short=64, long=32, rows=4, reps=1, threads=2, flash_attn=False)
