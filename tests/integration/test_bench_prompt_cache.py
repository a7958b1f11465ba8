"""`kvgraft bench prompt-cache` with the tiny model: every arm is timed (two `kvgraft serve` pods over one moto S3
store, llama_cpp.server twice), the cached arms restore the shared prefix up to the system message's end, the
workload's cached answers are compared with a fresh computation of each, and nothing is left running."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.prompt_cache import QUESTIONS, SUBJECTS, PromptCacheBenchRequest, _document, run_prompt_cache_bench
from workers.runtime import open_runtime
from workers.serving.service import Serving
from workers.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def _prompt_shape(seed_question: str, question: str) -> tuple[int, int]:
    """Where the bench's first system message ends in the served prompt (the serving engine's own chat format),
    and how many tokens the seed request's prompt shares with the timed one's."""
    rt = open_runtime(Settings())
    serving = Serving(rt)
    try:
        engine = serving.engine()
        doc = _document(SUBJECTS[0], 200, lambda t: len(engine.tokenize(t)))
        seed = serving.chat([("system", doc), ("user", seed_question)])
        timed = serving.chat([("system", doc), ("user", question)])
        common = next(i for i, (x, y) in enumerate(zip(seed.tokens, timed.tokens, strict=False)) if x != y)
        return timed.message_ends[0], common
    finally:
        serving.close()
        rt.close()


def test_bench_prompt_cache_reports_every_arm_and_checks_the_workload(monkeypatch: pytest.MonkeyPatch,
                                                                      data_dir: Path) -> None:
    monkeypatch.setenv("KVGRAFT_PROMPT_CHUNK_TOKENS", "32")
    record = run_prompt_cache_bench(PromptCacheBenchRequest(model="tiny", prefix_tokens=200, samples=1, prefixes=2,
                                                            requests=6, max_tokens=4, turns=3, turn_tokens=40,
                                                            system_tokens=150, chunk_tokens=64,
                                                            kv_types=("f16",)))  # the tiny model's heads: no q8_0
    arms = {"cold", "same_pod", "other_pod", "llama_cpp_server_cold", "llama_cpp_server_warm",
            "llama_cpp_server_after_restart"}
    assert set(record["ttft_ms"]) == arms and all(record["ttft_ms"][a] > 0 for a in arms)
    assert set(record["ratios"]) == {"cold_over_same_pod", "cold_over_other_pod", "llama_warm_over_same_pod",
                                     "llama_restart_over_other_pod"}
    where = record["where_ms"]
    assert where["cold"]["restored_tokens"] == 0
    granule = where["same_pod"]["boundary_granule"]
    system_end, common = _prompt_shape(QUESTIONS[0], QUESTIONS[1])
    # restored at least up to the system message's end (to the granule), at most what the seed prompt shares
    assert (system_end // granule) * granule <= where["same_pod"]["restored_tokens"] <= common, where
    assert (system_end // granule) * granule <= where["other_pod"]["restored_tokens"], where
    w = record["workload"]
    assert w["requests"] == 6 and w["hits"]["count"] >= 4  # the first request of each prefix on pod B misses
    assert w["byte_mismatches"]["count"] == 0 and w["byte_mismatches"]["of"] == 6  # every answer, hit or miss
    assert w["byte_mismatches_of_hits"]["of"] == w["hits"]["count"]
    assert w["prefilled_tokens_mean"] < w["prompt_tokens_mean"]
    turns = record["multi_turn"]
    for arm in ("chunks", "whole"):  # every cached turn equal to the same prompt computed fresh
        assert turns[arm]["byte_mismatches"] == {**turns[arm]["byte_mismatches"], "count": 0, "of": 3}
        assert turns[arm]["hits"]["count"] == 2 and turns[arm]["stored_bytes"] > 0
    # chunks store each cell about once; whole prefixes store every turn's prefix again
    assert turns["chunks"]["stored_bytes"] < turns["whole"]["stored_bytes"]
    assert turns["chunks"]["stored_over_final_state"] <= 1.3
