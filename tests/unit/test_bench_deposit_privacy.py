"""`kvgraft bench deposit-privacy` on the tiny model: the three arms, paired, their order alternated, where the time
goes, and the same statements in every arm (the calls are equal; what differs is measured, not assumed)."""

from __future__ import annotations

import pytest

from bench.deposit_privacy import ARMS, DepositPrivacyRequest, run_deposit_privacy_bench

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]


def test_deposit_privacy_bench_reports_three_paired_arms(data_dir: object) -> None:
    record = run_deposit_privacy_bench(DepositPrivacyRequest(model="tiny", tokens=32, pairs=2))
    assert set(record["arms"]) == set(ARMS) and record["pairs"] == 2
    assert record["orders"][0] != record["orders"][1] and all(sorted(o) == sorted(ARMS) for o in record["orders"])
    for arm in ARMS:
        a = record["arms"][arm]
        assert len(record["raw_ms"][arm]) == 2 and all(t > 0 for t in record["raw_ms"][arm])
        assert a["write_ms"]["median"] > 0 and a["sql_ms"]["median"] > 0
        assert a["total_ms"]["median"] >= max(a["write_ms"]["median"], a["sql_ms"]["median"])
        assert len(a["wal_bytes"]) == 1 and a["wal_bytes"][0] > 0
        assert a["wal_pages"] and all("block_owners" in pages for pages in a["wal_pages"])  # B's owner row
    # the same statements whether B's content is new, live under A, or evicted from A
    assert record["arms"]["evicted"]["statements"] == record["arms"]["wrong"]["statements"] == \
        record["arms"]["live"]["statements"]
    for key in ("evicted_over_wrong", "live_over_wrong"):
        r = record["paired_ratios"][key]
        assert r["pairs"] == 2 and r["min"] <= r["median"] <= r["max"] and 0 <= r["slower_in"] <= 2
