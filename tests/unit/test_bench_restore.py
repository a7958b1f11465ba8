"""`kvgraft bench restore` on the tiny model: every contract key of each entry, every path's next-token logits
SHA-equal to fresh computation (kvgraft cold, warm and pooled; llama.cpp's own state file), and a breakdown."""

from __future__ import annotations

import pytest

from bench.restore import RestoreBenchRequest, run_restore_bench

pytestmark = pytest.mark.unit

KEYS = ("tokens", "prefill_ms", "restore_ms", "peer_restore_ms", "state_bytes", "speedup_vs_prefill",
        "speedup_vs_peer", "restore_only_ms", "restore_warm_only_ms", "raw_seq_file_ms", "state_no_scores_ms",
        "limit_ms", "limit_cold_ms", "hash_ms", "speedup_warm_vs_prefill", "breakdown_ms")


def test_restore_bench_reports_every_path_and_each_is_exact(data_dir: object) -> None:
    record = run_restore_bench(RestoreBenchRequest(model="tiny", tokens=(120,), runs=1, measure_memory=False))
    (row,) = record["results"]
    assert set(KEYS) <= set(row)
    assert row["next_token_logits_equal"] and row["warm_and_pooled_logits_equal"] and row["raw_seq_file_logits_equal"]
    assert set(row["breakdown_ms"]) == {"context_create", "read_cold", "hash", "header_and_signature", "set_state",
                                        "first_decode"}
    assert all(v >= 0 for v in row["breakdown_ms"].values())
    assert row["state_bytes"] > 0 and row["block_file_bytes"] > row["state_bytes"]
