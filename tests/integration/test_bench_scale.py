"""`kvgraft bench scale` on the real PostgreSQL server at small sizes: it reports the contract's keys, the index
reads fewer rows than the catalogue holds while the linear scan reads every visible one, and the private database
is dropped afterwards."""

from __future__ import annotations

import psycopg
import pytest

from bench.scale import ScaleBenchRequest, run_scale_bench

pytestmark = pytest.mark.integration


def test_bench_scale_reports_index_beside_linear_scan_and_cleans_up(pg_server_url: str) -> None:
    record = run_scale_bench(ScaleBenchRequest(sizes=(400, 4000), queries=20, linear_max=4000, linear_queries=4,
                                               explain_queries=6, server_url=pg_server_url, fleet_workers=(1, 2),
                                               fleet_answers=8, fleet_deposits=3))
    assert [r["blocks"] for r in record["route"]] == [400, 4000]
    assert [r["blocks"] for r in record["linear_scan"]] == [400, 4000]
    for row in record["route"]:
        assert row["p50_ms"] > 0 and row["p99_ms"] >= row["p50_ms"]
        assert row["routed"]["of"] == 20 and row["truncated"]["of"] == 20
    big = record["route"][-1]
    assert big["rows_examined"] < 4000, big  # the index reads the problems sharing rare words, not all of them
    assert record["linear_scan"][-1]["rows_examined"] > big["rows_examined"]
    # the fleet half: every run finished its work, and an answer and a deposit were counted
    assert [r["workers"] for r in record["graft_throughput"]] == [1, 2]
    assert all(r["answers_per_s"] > 0 for r in record["graft_throughput"])
    assert all(r["deposits_per_s"] > 0 for r in record["deposit_throughput"])
    assert record["per_deposit"]["s3_requests"] >= 1 and record["per_deposit"]["db_statements"] > 5
    assert record["per_answer"]["db_statements"] > 0
    assert record["per_answer_verified_cache"]["s3_requests"] < record["per_answer"]["s3_requests"]
    with psycopg.connect(pg_server_url.replace("+psycopg", "")) as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'kvgraft_scale_%'").fetchone()
    assert left is not None and left[0] == 0
