"""Continuous batching (engine/batching.py) on the tiny model: every sequence decoded beside others is byte-identical
to itself served alone (SHA-256 of every position's logits, with an alone-vs-alone control), states captured in a
multi-sequence context are the one-sequence form blocks store, a cancelled sequence stops at the next step, and
admission is fair across owners."""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from engine.batching import BatchCore, BatchScheduler, SequenceJob
from engine.errors import StateRestoreError
from engine.graft import EngineConfig, GraftEngine
from engine.native import DecodeRow
from engine.sampling import SamplingParams
from engine.seqstate import into_streams, one_stream
from engine.texts import sample_tokens

pytestmark = pytest.mark.unit


@pytest.fixture()
def engine(kvgraft_cache: Path) -> Iterator[GraftEngine]:
    with GraftEngine.load("tiny", EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        yield e


def _jobs(engine: GraftEngine, n: int, **extra: object) -> list[SequenceJob]:
    jobs = []
    for i in range(n):
        tokens = tuple(sample_tokens(engine, 5 + 23 * i, start=i))
        params = SamplingParams(max_tokens=4 + (i * 5) % 11, temperature=0.0 if i % 2 else 0.9, seed=i)
        jobs.append(SequenceJob(tokens=tokens, params=params, owner=f"team-{i % 2}", digests=True, **extra))
    return jobs


def _alone(engine: GraftEngine, job: SequenceJob, pad_to: int = 2) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The job served alone: in a one-sequence context (pad 1, as batching-off serving does), or alone in a batching
    context with pad rows (pad 2, as a lone request is served there)."""
    with (engine.open_context() if pad_to == 1 else engine.open_batch_context(4)) as ctx:
        r = BatchCore(engine, ctx, pad_to=pad_to).run_all([(0, job)])[0]
    return r.generated.tokens, r.generated.digests


def test_each_sequence_of_a_batch_equals_itself_served_alone(engine: GraftEngine) -> None:
    """With pad rows (the tiny model's F32 weights take llamafile's tinyBLAS from two rows up, ggml's own dot
    products for one), every sequence decoded beside others equals itself alone, whatever joins or leaves."""
    jobs = _jobs(engine, 8)
    alone = [_alone(engine, j) for j in jobs]
    assert alone == [_alone(engine, j) for j in jobs]  # the control: alone is reproducible
    with engine.open_batch_context(8) as ctx:
        core = BatchCore(engine, ctx, pad_to=2)
        staggered = core.run_all([(3 * i, j) for i, j in enumerate(jobs)])  # joins while others decode/prefill
        at_once = BatchCore(engine, ctx, pad_to=2, prefill_per_step=100).run_all(
            [(0, j) for j in reversed(jobs)])[::-1]  # all decoding together, in the slots the first run left
    for run in (staggered, at_once):
        assert [(r.generated.tokens, r.generated.digests) for r in run] == alone
    assert max(r.batched_with for r in staggered) >= 3 and max(r.batched_with for r in at_once) == 8
    assert sum(n > 1 for r in staggered for n in r.call_rows) > 10  # most steps were shared
    assert all(len(r.generated.digests) == len(r.generated.tokens) + (r.generated.stopped_by != "max_tokens")
               for r in staggered)


def test_a_state_captured_beside_others_is_the_one_sequence_form(engine: GraftEngine) -> None:
    """The bytes a multi-sequence context gives for a sequence equal a one-sequence context's (what a block
    stores and the fingerprint names), and such a state restored into any slot continues byte-identically."""
    tokens = sample_tokens(engine, 70)
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens)
        alone = ctx.state_bytes()
        ctx.decode([7], pos0=70, outputs=[0])
        next_row = ctx.logits_row(0).tobytes()
    with engine.open_context() as ctx:  # the control
        engine.prefill(ctx, tokens)
        assert ctx.state_bytes() == alone
    with engine.open_batch_context(4) as ctx:
        engine.prefill(ctx, sample_tokens(engine, 30, start=5), seq_id=0)
        engine.prefill(ctx, tokens, seq_id=2)
        assert ctx.state_bytes(2) == alone
        ctx.set_state(alone, seq_id=3)
        ctx.decode_rows([DecodeRow(7, 70, 3)])  # one row, as alone
        assert ctx.logits_row(0).tobytes() == next_row
        ctx.truncate(70, seq_id=3)
        ctx.decode_rows([DecodeRow(7, 70, 2), DecodeRow(7, 70, 3)])  # the prefilled and the restored, together
        assert ctx.logits_row(0).tobytes() == ctx.logits_row(1).tobytes()


def test_a_state_the_transcoder_does_not_account_for_is_refused(engine: GraftEngine) -> None:
    with engine.open_context() as ctx:
        engine.prefill(ctx, sample_tokens(engine, 20))
        state = ctx.state_bytes()
    assert one_stream(into_streams(state, 4, 1)) == state
    with pytest.raises(StateRestoreError):
        into_streams(state[:-5], 4, 1)  # truncated
    with pytest.raises(StateRestoreError, match="magic"):
        into_streams(b"\0" + state[1:], 4, 1)
    shared = bytearray(state)
    struct.pack_into("<I", shared, 16 + 4, 2)  # the first cell claims two sequences
    with pytest.raises(StateRestoreError, match="sequence ids"):
        into_streams(bytes(shared), 4, 1)
    with engine.open_batch_context(4) as ctx, pytest.raises(StateRestoreError):
        ctx.set_state(state[:-5], seq_id=1)


def test_a_cancelled_sequence_stops_at_the_next_step_and_frees_its_slot(engine: GraftEngine) -> None:
    cancel = threading.Event()
    seen: list[str] = []

    def on_text(text: str, _lps: object) -> None:
        seen.append(text)
        if len(seen) == 3:
            cancel.set()  # as the API does when the client goes away, from another thread

    long_job = SequenceJob(tokens=tuple(sample_tokens(engine, 40)), params=SamplingParams(max_tokens=400, seed=3,
                           temperature=0.9), on_text=on_text, cancel=cancel)
    other = _jobs(engine, 1)[0]
    with engine.open_batch_context(4) as ctx:
        core = BatchCore(engine, ctx, pad_to=2)
        results = core.run_all([(0, long_job), (0, other)])
        assert core.free == 4
    cancelled = results[0]
    assert cancelled.generated.stopped_by == "cancelled" and cancelled.steps_after_cancel <= 1
    assert len(cancelled.generated.tokens) < 20
    assert (results[1].generated.tokens, results[1].generated.digests) == _alone(engine, other)


def test_one_owners_long_sequences_do_not_hold_another_owners_short_one(engine: GraftEngine) -> None:
    """Owner A fills the scheduler with long generations; owner B's short request, submitted after them, is
    admitted at the next step (A may hold all slots but one) and finishes while A's are still running."""
    scheduler = BatchScheduler("kvgraft-test-compute")
    try:
        ctx = scheduler.call(engine.open_batch_context, 3)
        scheduler.attach(BatchCore(engine, ctx), owner_max_seqs=2)
        long_params = SamplingParams(max_tokens=300, temperature=0.9, seed=1)
        a = [scheduler.submit(SequenceJob(tuple(sample_tokens(engine, 30, start=i)), long_params, owner="a"))
             for i in range(4)]
        deadline = time.monotonic() + 30
        while scheduler.load()["active"] < 2:  # A's requests are running before B arrives
            assert time.monotonic() < deadline
            time.sleep(0.001)
        b = scheduler.submit(SequenceJob(tuple(sample_tokens(engine, 12, start=9)), SamplingParams(max_tokens=1),
                                         owner="b"))
        assert len(b.result(timeout=60).generated.tokens) <= 1
        assert sum(f.done() for f in a) == 0
        assert all(len(f.result(timeout=120).generated.tokens) > 0 for f in a)
    finally:
        scheduler.close()
        ctx.close()


def test_background_calls_run_only_while_nothing_is_served(engine: GraftEngine) -> None:
    """A check's calls (`call_idle`) never run while a sequence is active or waiting: a request arriving while a
    check computes waits for at most the one call in progress, and the check resumes once it has finished."""
    scheduler = BatchScheduler("kvgraft-test-compute")
    seen: list[tuple[int, int]] = []
    stop = threading.Event()

    def background() -> None:
        while not stop.is_set():
            scheduler.call_idle(lambda: seen.append((scheduler.load()["active"], scheduler.load()["waiting"])))

    try:
        ctx = scheduler.call(engine.open_batch_context, 2)
        scheduler.attach(BatchCore(engine, ctx), owner_max_seqs=2)
        checker = threading.Thread(target=background, daemon=True)
        checker.start()
        while len(seen) < 10:  # the check runs while nothing is served
            time.sleep(0.001)
        before = len(seen)
        served = [scheduler.submit(SequenceJob(tuple(sample_tokens(engine, 30, start=i)),
                                               SamplingParams(max_tokens=40, temperature=0.9, seed=i), owner=str(i)))
                  for i in range(3)]
        assert all(len(f.result(timeout=60).generated.tokens) == 40 for f in served)
        during = len(seen)
        deadline = time.monotonic() + 30
        while len(seen) < during + 10:  # and resumes after
            assert time.monotonic() < deadline
            time.sleep(0.001)
        stop.set()
        checker.join(10)
        assert before >= 10 and all(active == 0 and waiting == 0 for active, waiting in seen), seen
    finally:
        stop.set()
        scheduler.close()
        ctx.close()
    with pytest.raises(RuntimeError, match="closed"):
        scheduler.call_idle(lambda: None)


def test_the_batch_check_finds_decode_calls_as_they_come_inexact_here_and_pad_rows_exact(
        kvgraft_cache: Path) -> None:
    """The tiny model's F32 weights: one row through ggml's dot products, two or more through tinyBLAS, so decoding
    a lone sequence and the same sequence beside others differ; with flash attention on, a lone row past 512 padded
    cells also takes the split-KV path. The check must see the first trial fail and pick pad rows, under which
    every compared position, most of them decoded beside others, is equal."""
    from workers.serving.batch_check import batch_check

    for flash_attn in (False, True):
        with GraftEngine.load("tiny", EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=flash_attn, threads=2),
                              cache_dir=kvgraft_cache) as e:
            check = batch_check(e, 4)
        assert check.exact and check.pad_to == 2 and check.reproducible and check.batched_with == 4
        assert check.positions == check.positions_equal and check.positions_batched > check.positions // 2
        assert check.tried and check.tried[0].startswith("without pad rows:")
        equal, total = (int(x) for x in check.tried[0].split(": ")[1].split(" ")[0].split("/"))
        assert equal < total
        assert check.divergence is not None and check.divergence.byte_equal


def test_a_sequence_cancelled_in_its_prefill_leaves_no_resident_prompt_it_does_not_hold(engine: GraftEngine) -> None:
    """A request cancelled before its prompt was computed must not leave its slot looking like it holds that
    prompt: the same team's next request, whose stored prefix is part of it, restores the block (and equals
    alone) instead of truncating a slot that holds nothing."""
    tokens = tuple(sample_tokens(engine, 90))
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens[:32])
        prefix = engine.snapshot(ctx, tokens[:32], n_query=16)
    cancel = threading.Event()
    cancel.set()
    params = SamplingParams(max_tokens=6, seed=2)
    with engine.open_batch_context(4) as ctx:
        core = BatchCore(engine, ctx, pad_to=2)
        first = core.run_all([(0, SequenceJob(tokens, params, owner="a", cancel=cancel))])[0]
        assert first.generated.stopped_by == "cancelled"
        assert all(h is None or len(h[1]) <= 16 for h in core.held)
        again = core.run_all([(0, SequenceJob(tokens, params, owner="a", restore=prefix, resident_ok=True,
                                              digests=True))])[0]
    assert not again.reused and again.restored_tokens == 32
    assert (again.generated.tokens, again.generated.digests) == _alone(
        engine, SequenceJob(tokens, params, owner="a", digests=True))


def test_a_restore_the_context_refuses_is_prefilled_instead(engine: GraftEngine,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = tuple(sample_tokens(engine, 60))
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens[:32])
        prefix = engine.snapshot(ctx, tokens[:32], n_query=16)

    def refuse(*_a: object, **_k: object) -> None:
        raise StateRestoreError("refused on purpose")

    job = SequenceJob(tokens, SamplingParams(max_tokens=5), owner="a", restore=prefix, digests=True)
    with engine.open_batch_context(4) as ctx:
        monkeypatch.setattr(engine, "restore", refuse)
        result = BatchCore(engine, ctx, pad_to=2).run_all([(0, job)])[0]
        monkeypatch.undo()
    assert result.restored_tokens == 0
    assert (result.generated.tokens, result.generated.digests) == _alone(engine, replace(job, restore=None))


@pytest.mark.timeout(120)
def test_a_restore_that_is_not_this_prompts_prefix_is_prefilled_instead(engine: GraftEngine) -> None:
    """The engine restores only the prompt's own prefix: a state whose token ids are another prompt's, or whose
    positions do not start at 0, is refused before it is set (prefilled instead), so the request still equals
    itself computed alone and fresh, whatever a caller hands it."""
    tokens = tuple(sample_tokens(engine, 60))
    other = tuple(sample_tokens(engine, 60, start=7))
    assert other[:32] != tokens[:32]
    with engine.open_context() as ctx:
        engine.prefill(ctx, other[:32])
        foreign = engine.snapshot(ctx, other[:32], n_query=16)
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens[:32])
        own = engine.snapshot(ctx, tokens[:32], n_query=16)
    shifted = replace(own, pos_start=4)  # this prompt's tokens, claimed at other positions
    params = SamplingParams(max_tokens=6, seed=3)
    alone = _alone(engine, SequenceJob(tokens, params, owner="a", digests=True))
    assert alone == _alone(engine, SequenceJob(tokens, params, owner="a", digests=True))  # the control
    for restore in (shifted, foreign):
        job = SequenceJob(tokens, params, owner="a", restore=restore, digests=True)
        with engine.open_batch_context(4) as ctx:
            result = BatchCore(engine, ctx, pad_to=2).run_all([(0, job)])[0]
        assert result.restored_tokens == 0
        assert (result.generated.tokens, result.generated.digests) == alone
    job = SequenceJob(tokens, params, owner="a", restore=own, digests=True)  # this prompt's own prefix: restored
    with engine.open_batch_context(4) as ctx:
        result = BatchCore(engine, ctx, pad_to=2).run_all([(0, job)])[0]
    assert result.restored_tokens == 32
    assert (result.generated.tokens, result.generated.digests) == alone
