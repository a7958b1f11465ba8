"""The budget from measured costs (KVGRAFT_SERVING_STEP_RATIO): the serving engine measures at its start what a
decode row and prefill sub-calls cost here and uses the largest of KVGRAFT_SERVING_STEP_TOKENS and its halvings
whose step beside a decoder stays within the ratio of the decoder's step alone; the `batch` check then decides the
budget chosen, and the attestation records the costs it was chosen from."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from engine.graft import EngineConfig, GraftEngine
from engine.stepcost import StepCosts, measure_step_costs
from workers.serving.batch_check import measured_sizes

pytestmark = [pytest.mark.unit, pytest.mark.timeout(240)]


def _costs(decode_ms: float, **sub: float) -> StepCosts:
    return StepCosts(128, 1024, decode_ms, {int(k[1:]): v for k, v in sub.items()}, 1.0)


def test_the_budget_is_the_largest_size_whose_step_stays_within_the_ratio() -> None:
    costs = _costs(10.0, s4=20.0, s8=35.0, s16=70.0)  # steps of 3.0x, 4.5x and 8.0x the decode step alone
    assert [costs.step_ratio(s) for s in (4, 8, 16)] == [3.0, 4.5, 8.0]
    assert costs.budget(3.0) == 4  # at the ratio: kept
    assert costs.budget(4.5) == 8 and costs.budget(7.9) == 8 and costs.budget(8.0) == 16
    # none fits: the smallest measured (a decoder still waits for far less than a whole chunk)
    assert costs.budget(2.0) == 4
    assert costs.as_dict()["sub_call_ms"] == {"4": 20.0, "8": 35.0, "16": 70.0}


def test_the_sizes_chosen_from_are_the_budget_and_its_halvings_down_to_four() -> None:
    assert measured_sizes(8) == [4, 8]
    assert measured_sizes(32) == [4, 8, 16, 32]
    assert measured_sizes(12) == [6, 12]  # 3 is below four
    assert measured_sizes(4) == [4] and measured_sizes(3) == [3] and measured_sizes(0) == []


def test_costs_are_measured_at_their_depths_and_grow_with_the_sub_call(kvgraft_cache: Path) -> None:
    config = EngineConfig(n_ctx=2048, prefill_chunk=64, flash_attn=False, threads=2)
    with GraftEngine.load("tiny-q4_1", config, cache_dir=kvgraft_cache) as e:
        costs = measure_step_costs(e, [4, 32])
    assert (costs.decode_depth, costs.sub_call_depth) == (128, 1024)
    assert costs.decode_ms > 0 and set(costs.sub_call_ms) == {4, 32}
    assert costs.sub_call_ms[32] > costs.sub_call_ms[4]  # eight times the rows: never cheaper
    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=256, prefill_chunk=16, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        shallow = measure_step_costs(e, [8])
        with pytest.raises(ValueError, match="positive"):
            measure_step_costs(e, [0])
    assert shallow.sub_call_depth == 256 - 8 - 1 and shallow.decode_depth == 128  # the context's room


def test_the_policy_uses_the_budget_the_measured_costs_choose_and_records_them(
        data_dir: Path, kvgraft_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ratio no step reaches picks the budget asked, a ratio every step exceeds its smallest halving; each is the
    budget the `batch` check decided, in the attestation with the costs and the setting it came from; a restart
    on the host reuses the choice with the verdict (no second measurement, which timing noise could move to
    another budget and so to another check)."""
    from store.db import AttestationRow
    from workers.runtime import open_runtime
    from workers.serving import batch_check
    from workers.serving.batch_check import batching_policy
    from workers.settings import load_settings

    config = EngineConfig(n_ctx=512, prefill_chunk=64, flash_attn=False, threads=2)
    with open_runtime(load_settings()) as rt, GraftEngine.load("tiny-q4_1", config, cache_dir=kvgraft_cache) as e:
        loose = batching_policy(rt, e, 4, 8, step_tokens_max=32, step_ratio=100.0)
        tight = batching_policy(rt, e, 4, 8, step_tokens_max=32, step_ratio=1.0001)
        fixed = batching_policy(rt, e, 4, 8, step_tokens_max=32)

        def no_second_measurement(*_a: object) -> None:
            raise AssertionError("measured again")
        monkeypatch.setattr(batch_check, "measure_step_costs", no_second_measurement)
        monkeypatch.setattr(batch_check, "batch_check", no_second_measurement)
        again = batching_policy(rt, e, 4, 8, step_tokens_max=32, step_ratio=1.0001)
        with rt.session() as s:
            rows = [s.get(AttestationRow, p.attestation_id) for p in (loose, tight)]
    assert again == tight and again.step_costs == tight.step_costs
    assert (loose.step_tokens, tight.step_tokens, fixed.step_tokens) == (8, 4, 8)
    # the levels follow the budget chosen (4 per decoding row: 4, 8, 12 for 3 decoders), not the setting's 8
    assert (loose.step_tokens_max, tight.step_tokens_max, fixed.step_tokens_max) == (24, 12, 24)
    assert loose.step_costs is not None and set(loose.step_costs.sub_call_ms) == {4, 8}
    assert fixed.step_costs is None and fixed.as_dict()["prefill_step_ratio"] == 0.0
    assert tight.as_dict()["prefill_step_ratio"] == 1.0001
    for row, chosen in zip(rows, (8, 4), strict=True):
        assert row is not None and row.status == "attested"
        assert (row.profile["step_tokens_setting"], row.profile["step_tokens_asked"],
                row.profile["step_tokens"], row.profile["step_tokens_max_asked"]) == (8, chosen, chosen, 3 * chosen)
        assert set(row.profile["step_costs"]["sub_call_ms"]) == {"4", "8"}


@pytest.mark.parametrize("ratio", ["0.5", "1", "-2", "101"])
def test_a_ratio_a_step_cannot_meet_is_refused(ratio: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.settings import load_settings

    monkeypatch.setenv("KVGRAFT_SERVING_STEP_RATIO", ratio)
    with pytest.raises(ValidationError, match="KVGRAFT_SERVING_STEP_RATIO"):
        load_settings()
    monkeypatch.setenv("KVGRAFT_SERVING_STEP_RATIO", "0")
    assert load_settings().serving_step_ratio == 0


def test_a_measurement_that_cannot_run_keeps_the_budget_as_set_for_the_check_to_decide(
        data_dir: Path, kvgraft_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A measurement that fails (here llama.cpp refusing the call) or has one candidate is no reason to serve one
    at a time: the budget as set goes to the check, which decides it as it would without a ratio."""
    from engine.errors import DecodeError
    from workers.runtime import open_runtime
    from workers.serving import batch_check
    from workers.serving.batch_check import batching_policy, measured_budget
    from workers.settings import load_settings

    def refused(*_a: object) -> None:
        raise DecodeError("a decode of 100 tokens exceeds n_batch 64")
    config = EngineConfig(n_ctx=512, prefill_chunk=64, flash_attn=False, threads=2)
    with open_runtime(load_settings()) as rt, GraftEngine.load("tiny-q4_1", config, cache_dir=kvgraft_cache) as e:
        assert measured_budget(e, 7, 4.0) == (7, None)  # one candidate: nothing to measure
        assert measured_budget(e, 8, 4.0)[1] is not None
        monkeypatch.setattr(batch_check, "measure_step_costs", refused)
        assert measured_budget(e, 8, 4.0) == (8, None)
        policy = batching_policy(rt, e, 4, 8, step_ratio=4.0)
    assert policy.max_seqs == 4 and policy.step_tokens == 8 and policy.step_costs is None
    assert StepCosts(128, 1024, 0.0, {4: 1.0}, 1.0).budget(4.0) == 4  # a clock's 0 ms divides nothing by zero
