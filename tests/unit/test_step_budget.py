"""Prefill that does not stall decoding: with a step budget (BatchCore.step_tokens, KVGRAFT_SERVING_STEP_TOKENS) a
joining prompt's grid chunk that starts while others decode is fed in sub-calls of at most that many tokens, one
per step. Where the partition computes the same bytes (Q4_1 weights, flash attention off) each sequence stays
SHA-256-equal to itself alone with whole chunks (an alone-vs-alone control), its captures at grid boundaries
included; a decoder never waits for more than one sub-call per step; and where the `batch` check measures the
sub-calls inexact (flash attention on, a 128-token grid: ggml's tiled flash attention from 64 query rows against
its one-row path below) the budget is refused and whole chunks are fed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.batching import BatchCore, SequenceJob, SequenceResult
from engine.graft import EngineConfig, GraftEngine
from engine.sampling import SamplingParams
from engine.texts import sample_tokens

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]
BUDGET = 4


@pytest.fixture()
def engine(kvgraft_cache: Path) -> Iterator[GraftEngine]:
    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        yield e


def _jobs(engine: GraftEngine) -> list[SequenceJob]:
    """A short prompt that decodes long, then prompts of several grid chunks (captures at chunk boundaries) that
    join while it decodes."""
    lengths, outs = (6, 45, 30, 23), (40, 5, 6, 4)
    return [SequenceJob(tokens=tuple(sample_tokens(engine, n, start=i)), digests=True,
                        params=SamplingParams(max_tokens=m, temperature=0.0 if i % 2 else 0.8, seed=i),
                        captures=(16, 32) if n > 32 else (16,) if n > 16 else ())
            for i, (n, m) in enumerate(zip(lengths, outs, strict=True))]


def _key(r: SequenceResult) -> tuple[Any, ...]:
    return (r.generated.tokens, r.generated.digests, r.first_logits_sha256,
            tuple((p, s.payload) for p, s in r.captured))


def _alone(engine: GraftEngine, job: SequenceJob) -> tuple[Any, ...]:
    with engine.open_context() as ctx:
        return _key(BatchCore(engine, ctx).run_all([(0, job)])[0])


def _recorded(core: BatchCore) -> list[tuple[str, int]]:
    """Every llama_decode call of the core's context in order: ("prefill", tokens) or ("decode", rows)."""
    calls: list[tuple[str, int]] = []
    ctx = core.ctx
    decode, decode_rows = ctx.decode, ctx.decode_rows

    def spy_decode(tokens: Any, **kw: Any) -> None:
        calls.append(("prefill", len(tokens)))
        decode(tokens, **kw)

    def spy_rows(rows: Any) -> None:
        calls.append(("decode", len(rows)))
        decode_rows(rows)

    ctx.decode, ctx.decode_rows = spy_decode, spy_rows  # type: ignore[method-assign]
    return calls


def test_a_prompt_fed_in_budgeted_sub_calls_beside_decoders_equals_itself_alone(engine: GraftEngine) -> None:
    jobs = _jobs(engine)
    alone = [_alone(engine, j) for j in jobs]
    assert alone == [_alone(engine, j) for j in jobs]  # the control
    with engine.open_batch_context(4) as ctx:
        core = BatchCore(engine, ctx, step_tokens=BUDGET)
        results = core.run_all([(i, j) for i, j in enumerate(jobs)])
    assert core.split_chunks >= 4  # the grid chunks were fed in sub-calls
    assert [_key(r) for r in results] == alone
    assert [len(r.captured) for r in results] == [0, 2, 1, 1]
    assert max(r.batched_with for r in results) >= 2


def test_a_decoder_waits_for_at_most_one_sub_call_of_the_budget_per_step(engine: GraftEngine) -> None:
    jobs = _jobs(engine)
    with engine.open_batch_context(4) as ctx:
        core = BatchCore(engine, ctx, step_tokens=BUDGET)
        calls = _recorded(core)
        core.run_all([(i, j) for i, j in enumerate(jobs)])
    decodes = [i for i, (kind, _) in enumerate(calls) if kind == "decode"]
    between = [calls[a + 1:b] for a, b in zip(decodes, decodes[1:], strict=False)]
    assert any(between)  # prompts were prefilled between decode steps
    # a sub-call is the budget's size, or up to 2 * budget - 1 where it takes a chunk's remainder (a chunk
    # shorter than 2 * budget is one call): never fewer rows than the budget, beside a decoder
    assert all(len(gap) <= 1 and all(n < 2 * BUDGET for _, n in gap) for gap in between)
    assert any(n == BUDGET for gap in between for _, n in gap)
    # nobody decoding (before the first decode step): whole grid chunks, as without a budget
    assert calls[0] == ("prefill", 6)


def test_without_decoders_whole_grid_chunks_are_fed(engine: GraftEngine) -> None:
    job = _jobs(engine)[1]
    with engine.open_batch_context(4) as ctx:
        core = BatchCore(engine, ctx, step_tokens=BUDGET)
        calls = _recorded(core)
        result = core.run_all([(0, job)])[0]
    assert [n for kind, n in calls if kind == "prefill"] == [16, 16, 13]
    assert core.split_chunks == 0
    assert _key(result) == _alone(engine, job)


def test_the_check_allows_the_budget_where_sub_calls_are_exact_and_refuses_it_where_not(
        kvgraft_cache: Path) -> None:
    from workers.serving.batch_check import batch_check

    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        check = batch_check(e, 4, BUDGET)
    assert check.exact and check.budget_exact and check.allowed_step_tokens == BUDGET
    assert check.budget_split_chunks > 0 and check.budget_states > 0
    assert check.budget_equal == check.budget_sequences and check.budget_states_equal == check.budget_states

    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=512, prefill_chunk=128, flash_attn=True, threads=2),
                          cache_dir=kvgraft_cache) as e:
        check = batch_check(e, 4, 16)
    assert check.exact  # batching itself stays on
    assert check.budget_split_chunks > 0 and not check.budget_exact and check.allowed_step_tokens == 0
    assert check.budget_equal < check.budget_sequences
    assert "NOT exact, whole grid chunks are fed" in check.summary()


def test_the_policy_records_the_budget_it_allowed_and_why_it_refused_one(data_dir: Path, kvgraft_cache: Path) -> None:
    """The `batch` attestation's profile names the budget asked and the one allowed; a refused one is 0 with the
    check's reason, and a verdict recorded on the host is reused with its budget."""
    from store.db import AttestationRow
    from workers.runtime import open_runtime
    from workers.serving.batch_check import batching_policy
    from workers.settings import load_settings

    settings = load_settings()
    cases = ((EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=False, threads=2), BUDGET, BUDGET),
             (EngineConfig(n_ctx=512, prefill_chunk=128, flash_attn=True, threads=2), 16, 0))
    with open_runtime(settings) as rt:
        for config, asked, allowed in cases:
            with GraftEngine.load("tiny-q4_1", config, cache_dir=kvgraft_cache) as e:
                policy = batching_policy(rt, e, 4, asked)
                again = batching_policy(rt, e, 4, asked)  # the recorded verdict, reused
            assert policy.max_seqs == 4 and policy.step_tokens == allowed and again == policy
            assert (policy.step_reason is None) == bool(allowed)
            assert policy.as_dict()["prefill_step_tokens"] == allowed
            with rt.session() as s:
                row = s.get(AttestationRow, policy.attestation_id)
                assert row is not None
                assert (row.profile["step_tokens_asked"], row.profile["step_tokens"]) == (asked, allowed)
        assert policy.step_reason is not None and policy.step_reason.startswith("step_budget_not_exact: ")


@pytest.mark.parametrize(("weights", "asked"), [("tiny", 8), ("tiny", 4), ("tiny-q4_1", 8)])
def test_every_prompt_length_fed_beside_a_decoder_equals_itself_alone_where_the_check_allows_the_budget(
        weights: str, asked: int, kvgraft_cache: Path) -> None:
    """The review's case: a chunk of budget*k + 1 tokens was cut into a last sub-call of one row, which ggml
    computes with its own dot products for F32 weights (two rows and more: tinyBLAS), a size the check's trial
    never fed: allowed, and 9-, 25- and 41-token prompts then differed from alone. Now the remainder joins the
    sub-call before it and the trial feeds every size a split can make; whatever the check allows, every prompt
    length beside a decoder equals itself alone."""
    from workers.serving.batch_check import batch_check

    with GraftEngine.load(weights, EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        check = batch_check(e, 4, asked)
        assert check.exact and not check.budget_sizes_missing, check.summary()
        budget = check.allowed_step_tokens
        decoder = SequenceJob(tokens=tuple(sample_tokens(e, 6, start=100)),
                              params=SamplingParams(max_tokens=60, temperature=0.0, seed=1))
        for n in range(asked + 1, 42):
            job = SequenceJob(tokens=tuple(sample_tokens(e, n, start=7)), digests=True,
                              params=SamplingParams(max_tokens=2, temperature=0.0, seed=2))
            with e.open_batch_context(4) as ctx:
                alone = BatchCore(e, ctx, pad_to=check.pad_to).run_all([(0, job)])[0]
            with e.open_batch_context(4) as ctx:
                core = BatchCore(e, ctx, pad_to=check.pad_to, step_tokens=budget)
                beside = core.run_all([(0, decoder), (2, job)])[1]
            assert _key(beside) == _key(alone), f"{n}-token prompt, budget {budget}"
            assert not budget or n < 2 * budget or core.split_chunks > 0


def test_the_budget_levels_grow_with_the_rows_decoding_up_to_the_maximum() -> None:
    from engine.batching import budget_levels

    assert budget_levels(8) == budget_levels(8, 8) == budget_levels(8, 12) == [8]
    assert budget_levels(8, 32) == [8, 16, 24, 32]
    assert budget_levels(0, 32) == []


def test_a_prompt_joining_beside_more_decoders_is_fed_in_longer_sub_calls_each_equal_to_alone(
        kvgraft_cache: Path) -> None:
    """Budget 4 per decoding row up to 12 on a 32-token grid: beside one decoder sub-calls of 4, beside three
    of 12 (the remainder joining the last: 12 + 20 per 32-token chunk); every completion equal to itself alone."""
    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=512, prefill_chunk=32, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        decoders = [SequenceJob(tokens=tuple(sample_tokens(e, 5 + i, start=50 + i)), digests=True,
                                params=SamplingParams(max_tokens=60, temperature=0.0, seed=i)) for i in range(3)]
        joining = SequenceJob(tokens=tuple(sample_tokens(e, 96, start=9)), digests=True,
                              params=SamplingParams(max_tokens=3, temperature=0.0, seed=9))
        alone = [_alone(e, j) for j in (*decoders, joining)]
        for n_decoders, widest in ((1, 4), (3, 20)):
            with e.open_batch_context(4) as ctx:
                core = BatchCore(e, ctx, step_tokens=BUDGET, step_tokens_max=3 * BUDGET)
                calls = _recorded(core)
                jobs = [(0, d) for d in decoders[:n_decoders]] + [(3, joining)]
                results = core.run_all(jobs)
            assert [_key(r) for r in results] == alone[:n_decoders] + alone[3:]
            pieces = [n for kind, n in calls[2 * n_decoders:] if kind == "prefill"]
            assert max(pieces) == widest and min(pieces) >= BUDGET, pieces


def test_the_check_tries_every_level_of_a_growing_budget_and_the_policy_records_it(data_dir: Path,
                                                                                  kvgraft_cache: Path) -> None:
    from store.db import AttestationRow
    from workers.runtime import open_runtime
    from workers.serving.batch_check import batch_check, batching_policy
    from workers.settings import load_settings

    # budget 8 up to 32 on a 64-token grid (the serving default's shape): the trial of a later level once met no
    # decoder when its last prompts joined, so sizes of it went untried and the check refused the budget
    config = EngineConfig(n_ctx=512, prefill_chunk=64, flash_attn=False, threads=2)
    with GraftEngine.load("tiny-q4_1", config, cache_dir=kvgraft_cache) as e:
        check = batch_check(e, 4, 8, step_tokens_max=32)
        assert check.budget_exact and check.allowed_step_tokens_max == 32, check.summary()
        assert "per decoding row up to 32" in check.summary() and not check.budget_sizes_missing
        with open_runtime(load_settings()) as rt:
            # levels past half the grid dropped (40 and up), and past max_seqs - 1 = 3 decoders (32)
            policy = batching_policy(rt, e, 4, 8, step_tokens_max=100)
            assert (policy.step_tokens, policy.step_tokens_max) == (8, 24)
            assert policy.as_dict()["prefill_step_tokens_max"] == 24
            with rt.session() as s:
                row = s.get(AttestationRow, policy.attestation_id)
                assert row is not None and row.profile["step_tokens_max"] == 24
        # two slots: the prompts join one at a time, and the first decoder outlasts them all (it ended after
        # twice their count in steps, and the last prompts joined with nobody decoding: sizes untried, refused)
        check = batch_check(e, 2, 8, step_tokens_max=32)
        assert check.budget_exact and not check.budget_sizes_missing, check.summary()
        with open_runtime(load_settings()) as rt:  # one decoder at most beside a prompt: the first level only
            policy = batching_policy(rt, e, 2, 8, step_tokens_max=32)
            assert (policy.step_tokens, policy.step_tokens_max) == (8, 0)
    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=512, prefill_chunk=128, flash_attn=True, threads=2),
                          cache_dir=kvgraft_cache) as e:
        check = batch_check(e, 4, 16, step_tokens_max=64)  # the one-row flash attention path below 64 rows
    assert not check.budget_exact and check.allowed_step_tokens_max == 0


def test_a_chunk_split_at_one_level_keeps_its_partition_when_a_decoder_leaves(kvgraft_cache: Path) -> None:
    """Budget 4 per decoding row up to 8 on a 32-token grid: the joining prompt's chunk starts beside two decoders
    (sub-calls of 8); one leaves after a step, and the chunk's remaining 8-token sub-calls are fed as planned, not
    cut again into 4-token ones (the level is fixed when the chunk starts: a chunk is computed whole or in one
    partition the check tried, docs/ENGINE.md); every completion equal to itself alone."""
    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=512, prefill_chunk=32, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        decoders = [SequenceJob(tokens=tuple(sample_tokens(e, 5 + i, start=50 + i)), digests=True,
                                params=SamplingParams(max_tokens=m, temperature=0.0, seed=i))
                    for i, m in enumerate((40, 3))]
        joining = SequenceJob(tokens=tuple(sample_tokens(e, 64, start=9)), digests=True,
                              params=SamplingParams(max_tokens=3, temperature=0.0, seed=9))
        alone = [_alone(e, j) for j in (*decoders, joining)]
        with e.open_batch_context(4) as ctx:
            core = BatchCore(e, ctx, step_tokens=BUDGET, step_tokens_max=2 * BUDGET)
            calls = _recorded(core)
            results = core.run_all([(0, decoders[0]), (1, decoders[1]), (2, joining)])
    assert [_key(r) for r in results] == alone
    pieces = [n for kind, n in calls if kind == "prefill"][2:]  # the joining prompt's
    assert sum(pieces) == 64
    first, total = [], 0
    for n in pieces:  # its first chunk (32 tokens): split beside two decoders, at 8 to its end
        first.append(n)
        total += n
        if total >= 32:
            break
    assert total == 32 and first == [8, 8, 8, 8], pieces
    assert min(pieces[len(first):]) >= BUDGET  # the second chunk starts beside one decoder: its own level
