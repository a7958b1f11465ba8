"""`kvgraft bench api` end to end on the tiny model (moto S3, a private RabbitMQ vhost, a graft worker, the API
server): every path reports, the in-process answer is broken into its steps, and the cold-store passes run with
no cache at all (the blocks are read from S3 and verified on every answer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.api import ApiBenchRequest, run_api_bench

pytestmark = pytest.mark.integration


def test_bench_api_reports_every_path_and_the_steps_of_an_answer(data_dir: Path) -> None:
    record = run_api_bench(ApiBenchRequest(queries=5, model="tiny"))
    for path in ("in_process", "distributed", "in_process_cold_store", "distributed_cold_store"):
        assert record[path]["p50_ms"] > 0 and record[path]["rps"] > 0, path
    steps = record["in_process_steps_ms"]
    assert {"lookup", "block_read", "context", "restore", "feed", "decode", "attestation_lookup",
            "record"} <= set(steps)
    # warm: the verified block comes from memory; cold: every answer reads and verifies it from S3
    assert record["in_process_cold_store_steps_ms"]["block_read"] > steps["block_read"]
    assert record["in_process_p50_over_restore_and_decode"] is not None
