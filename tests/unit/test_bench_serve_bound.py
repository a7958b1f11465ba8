"""`kvgraft bench serve-bound`: the prefix a request could restore is its longest common prefix with an earlier
request of its own team, cut to the grid; the bound is its prefill work plus the output caps at a row's cost,
and the record's arithmetic holds on a real (tiny) model's measurement."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.serve_bound import ServeBoundRequest, _shared_prefix, restorable_starts, run_serve_bound

pytestmark = [pytest.mark.unit, pytest.mark.timeout(300)]


def test_a_shared_prefix_ends_on_the_grid() -> None:
    assert _shared_prefix([1, 2, 3, 4, 5], [1, 2, 3, 9], 2) == 2
    assert _shared_prefix([1, 2, 3, 4], [1, 2, 3, 4], 2) == 4
    assert _shared_prefix([1, 2], [7, 2], 1) == 0 and _shared_prefix([], [1], 4) == 0


def test_a_prompt_restores_only_from_an_earlier_prompt_of_its_own_team() -> None:
    head = list(range(10))
    prompts = [head + [50, 51], head + [60], head + [70, 71], [1, 2, 3], head + [80]]
    teams = ["a", "b", "a", "b", "b"]
    # the first of each team restores nothing; the third shares 10 tokens (8 on the grid) with the first; the
    # fourth shares nothing with the second; the fifth shares with the second, not with the others' (team a)
    assert restorable_starts(prompts, teams, 4) == [0, 0, 8, 0, 8]
    assert restorable_starts(prompts, ["a", "b", "c", "d", "e"], 4) == [0, 0, 0, 0, 0]


def test_the_bound_is_the_prefill_work_plus_the_output_caps_at_a_rows_cost(data_dir: Path) -> None:
    record = run_serve_bound(ServeBoundRequest(models=("tiny",), concurrency=2, requests=4, workload="decode",
                                               threads=2))
    m = record["models"]["tiny"]
    assert (record["requests"], record["decode_rows"]) == (4, 2)
    assert m["prefill_tokens_computed"] == m["prompt_tokens"] - m["prompt_tokens_restorable"] > 0
    assert m["prefill_s"] > 0 and m["output_tokens_max"] > 0
    rows = m["decode_ms_per_row"]
    assert set(rows) == {"1", "2"} and min(rows.values()) > 0
    assert m["bound_s"] == pytest.approx(m["prefill_s"] + m["output_tokens_max"] * rows["2"] / 1000, rel=0.01)
    assert m["max_tokens_per_s"] == pytest.approx(m["output_tokens_max"] / m["bound_s"], rel=0.01)
    # decoding for free is the loosest bound of the three
    assert m["max_tokens_per_s_decode_free"] >= max(m["max_tokens_per_s"], m["max_tokens_per_s_one_row"])
    with pytest.raises(ValueError, match="--workload"):
        run_serve_bound(ServeBoundRequest(models=("tiny",), workload="chat"))
