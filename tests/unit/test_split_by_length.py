"""Decode steps split by KV length (BatchCore.split_cells, KVGRAFT_SERVING_SPLIT_CELLS). llama.cpp gives every stream
of a ubatch a KV view as long as the ubatch's longest, so short sequences decoded beside a long one attend over its
length; a step is split into calls of similar lengths where the cells that saves exceed the cost of a call. The
partition: only where it saves more than a call costs, never a ubatch of one row without a pad where pad rows are
needed. The bytes: each sequence of a split step equals itself alone (an alone-vs-alone control), and the `batch`
check allows the split only where its split trial (steps that did split) is equal to alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engine.batching import BatchCore, SequenceJob, SequenceResult
from engine.graft import EngineConfig, GraftEngine
from engine.sampling import SamplingParams
from engine.texts import sample_tokens

pytestmark = [pytest.mark.unit, pytest.mark.timeout(180)]
CONFIG = EngineConfig(n_ctx=1024, prefill_chunk=64, flash_attn=False, threads=2)


@pytest.fixture()
def engine(kvgraft_cache: Path) -> Iterator[GraftEngine]:
    with GraftEngine.load("tiny-q4_1", CONFIG, cache_dir=kvgraft_cache) as e:
        yield e


def _key(r: SequenceResult) -> tuple[Any, ...]:
    return r.generated.tokens, r.generated.digests, r.first_logits_sha256


def _core_with(engine: GraftEngine, ctx: Any, positions: dict[int, int], **kw: Any) -> BatchCore:
    """A core whose slots hold decoding sequences at these positions (only what the partition reads)."""
    core = BatchCore(engine, ctx, **kw)
    core.active = {slot: SimpleNamespace(slot=slot, pos=pos, cuts=[]) for slot, pos in positions.items()}  # type: ignore[misc]
    return core


def _slots(groups: list[list[Any]]) -> list[list[int]]:
    return [[s.slot for s in g] for g in groups]


def test_a_step_is_split_only_where_the_cells_saved_exceed_what_a_call_costs(engine: GraftEngine) -> None:
    with engine.open_batch_context(8) as ctx:
        # one 2,000-cell sequence beside seven of 200: 7 x (2,048 - 256) cells saved against one more call
        long_and_short = {0: 2000, **{s: 200 for s in range(1, 8)}}
        core = _core_with(engine, ctx, long_and_short, split_cells=3072)
        assert _slots(core._by_length(list(core.active.values()))) == [[1, 2, 3, 4, 5, 6, 7], [0]]  # short first
        core = _core_with(engine, ctx, long_and_short, split_cells=20000)  # a call dearer than the saving
        assert _slots(core._by_length(list(core.active.values()))) == [list(range(8))]
        core = _core_with(engine, ctx, long_and_short, split_cells=0)  # not asked
        assert _slots(core._by_length(list(core.active.values()))) == [list(range(8))]
        core = _core_with(engine, ctx, {0: 600, 1: 100}, split_cells=3072)  # saves 512 cells: one call
        assert _slots(core._by_length(list(core.active.values()))) == [[0, 1]]
        core = _core_with(engine, ctx, {0: 300, 1: 400, 2: 500}, split_cells=1)  # one view (512): one call
        assert _slots(core._by_length(list(core.active.values()))) == [[0, 1, 2]]
        # three lengths; the long ones at the ends (slots 0 and 7 not consecutive: two ubatches whichever way)
        core = _core_with(engine, ctx, {0: 1500, 7: 1500, **{s: 100 for s in range(1, 7)}}, split_cells=1000)
        assert _slots(core._by_length(list(core.active.values()))) == [[1, 2, 3, 4, 5, 6], [0, 7]]


def test_with_pad_rows_no_split_leaves_a_lone_row_without_a_free_neighbour(engine: GraftEngine) -> None:
    with engine.open_batch_context(8) as ctx:
        full = {s: 2000 if s == 3 else 200 for s in range(8)}  # every slot busy: slot 3 alone has no pad
        core = _core_with(engine, ctx, full, split_cells=1, pad_to=2)
        for group in _slots(core._by_length(list(core.active.values()))):
            for run in core._runs(group):
                assert len(run) >= 2, group
        assert any(3 in g and len(g) >= 2 for g in _slots(core._by_length(list(core.active.values()))))
        spare = {s: 2000 if s == 3 else 200 for s in range(8) if s != 4}  # slot 4 free: 3 alone gets its pad
        core = _core_with(engine, ctx, spare, split_cells=1, pad_to=2)
        assert [3] in _slots(core._by_length(list(core.active.values())))


def _jobs(engine: GraftEngine) -> list[SequenceJob]:
    """A prompt of 600 tokens (a 768-cell view) that decodes long, and short prompts joining while it decodes."""
    lengths, outs = (600, 20, 35, 260), (30, 12, 10, 8)
    return [SequenceJob(tokens=tuple(sample_tokens(engine, n, start=3 * i)), digests=True,
                        params=SamplingParams(max_tokens=m, temperature=0.0 if i % 2 else 0.8, seed=i))
            for i, (n, m) in enumerate(zip(lengths, outs, strict=True))]


def test_every_sequence_of_a_step_split_by_length_equals_itself_alone(engine: GraftEngine) -> None:
    jobs = _jobs(engine)

    def alone(job: SequenceJob) -> tuple[Any, ...]:
        with engine.open_context() as ctx:
            return _key(BatchCore(engine, ctx).run_all([(0, job)])[0])

    reference = [alone(j) for j in jobs]
    assert reference == [alone(j) for j in jobs]  # the control
    with engine.open_batch_context(4) as ctx:
        core = BatchCore(engine, ctx, split_cells=1)
        results = core.run_all([(0, jobs[0]), *((12 + i, j) for i, j in enumerate(jobs[1:]))])
    assert core.split_steps > 0 and core.decode_calls > max(len(r.call_rows) for r in results)
    assert [_key(r) for r in results] == reference
    assert min(r.batched_with for r in results[1:]) >= 2  # the short ones decoded together


def test_the_check_tries_split_steps_and_the_policy_records_what_it_allowed(data_dir: Path,
                                                                             kvgraft_cache: Path) -> None:
    from store.db import AttestationRow
    from workers.runtime import open_runtime
    from workers.serving.batch_check import batch_check, batching_policy, probe_jobs, split_jobs
    from workers.settings import load_settings

    with GraftEngine.load("tiny-q4_1", CONFIG, cache_dir=kvgraft_cache) as e:
        check = batch_check(e, 4, 0, 3072)
        assert check.exact and check.split_steps > 0 and check.split_exact, check.summary()
        assert check.allowed_split_cells == 3072 and "decode steps split by KV length" in check.summary()
        # run twice: the finest partitions (split_cells 1) and serving's own coarser ones (3072)
        assert check.split_sequences == 2 * len(split_jobs(e, probe_jobs(e, 4))) == check.split_equal
        with open_runtime(load_settings()) as rt:
            policy = batching_policy(rt, e, 4, 0, 3072)
            assert policy.split_cells == 3072 and policy.split_reason is None
            assert policy.as_dict()["split_cells"] == 3072
            assert batching_policy(rt, e, 4, 0, 3072) == policy  # the recorded verdict, reused
            with rt.session() as s:
                row = s.get(AttestationRow, policy.attestation_id)
                assert row is not None
                assert (row.profile["split_cells_asked"], row.profile["split_cells"]) == (3072, 3072)
            assert batching_policy(rt, e, 4, 0, 0).split_cells == 0  # not asked: another profile, not split


def test_a_split_trial_that_differs_from_alone_refuses_the_split(monkeypatch: pytest.MonkeyPatch,
                                                                 kvgraft_cache: Path) -> None:
    """As if a kernel computed a row differently in a shorter view: where the trial's core splits a step, every
    row of it is fed another token; the check must see the difference and refuse the split."""
    from workers.serving import batch_check as bc

    real = BatchCore._decode

    def uneven(self: BatchCore, decoding: list[Any], done: list[SequenceResult]) -> None:
        if self.split_cells and len(self._by_length(decoding)) > 1:
            for seq in decoding:  # a different token fed: its later positions differ from alone
                seq.next_token = (seq.next_token + 1) % self.engine.model.n_vocab
        real(self, decoding, done)

    monkeypatch.setattr(BatchCore, "_decode", uneven)
    with GraftEngine.load("tiny-q4_1", CONFIG, cache_dir=kvgraft_cache) as e:
        check = bc.batch_check(e, 4, 0, 3072)
    assert check.exact  # batching without the split is unaffected
    assert check.split_steps > 0 and not check.split_exact and check.allowed_split_cells == 0
    assert "NOT exact, one decode call per step" in check.summary()


def test_with_a_split_a_joining_prompt_takes_the_free_slot_beside_sequences_of_its_length(engine: GraftEngine) -> None:
    with engine.open_batch_context(8) as ctx:
        positions = {0: 100, 1: 120, 4: 1500, 7: 90}  # free: 2, 3 (beside a short and a long), 5, 6
        long_job = SequenceJob(tokens=(1,) * 1400, params=SamplingParams(max_tokens=1))
        short_job = SequenceJob(tokens=(1,) * 80, params=SamplingParams(max_tokens=1))
        core = _core_with(engine, ctx, positions, split_cells=3072)
        assert core._slot_for(long_job) == (3, False)  # beside the 1,500-cell one
        assert core._slot_for(short_job) == (2, False)  # beside the short ones
        core = _core_with(engine, ctx, positions)  # no split: the lowest free slot, as before
        assert core._slot_for(long_job) == (2, False)


def test_a_joining_prompt_is_placed_by_the_view_its_first_decode_row_makes(engine: GraftEngine) -> None:
    """A 256-token prompt's first decode row is at position 256: it views 257 cells, a 512-cell view, so it sits
    beside the 300-cell sequence, not the 100-cell one; and a neighbour still prefilling a long prompt counts by
    the view it will decode at, not the cells it holds so far."""
    with engine.open_batch_context(8) as ctx:
        job = SequenceJob(tokens=(1,) * 256, params=SamplingParams(max_tokens=1))
        core = _core_with(engine, ctx, {0: 100, 3: 300}, split_cells=3072)
        assert core._slot_for(job) == (2, False)
        short_job = SequenceJob(tokens=(1,) * 80, params=SamplingParams(max_tokens=1))
        core = _core_with(engine, ctx, {0: 100, 3: 0}, split_cells=3072)  # slot 3 prefilling 1,400 tokens
        core.active[3] = SimpleNamespace(slot=3, pos=0, cuts=[(0, 64, False, False)],  # type: ignore[assignment]
                                         job=SimpleNamespace(tokens=(1,) * 1400))
        assert core._slot_for(short_job) == (1, False)  # beside the short one, not beside the long prompt
        assert core._slot_for(SequenceJob(tokens=(1,) * 1300, params=SamplingParams(max_tokens=1))) == (2, False)


def test_with_pad_rows_a_row_that_waits_does_not_keep_the_others_from_splitting(engine: GraftEngine) -> None:
    """Slot 1 decodes between two prompts still prefilling, no free slot beside it: it waits this step whatever
    the partition (as without a split). The other decoders are still split by length; before, every partition
    held slot 1 alone without a pad, none was a candidate, and the step ran as one call."""
    with engine.open_batch_context(8) as ctx:
        positions = {1: 100, 3: 2000, 4: 2000, 5: 200, 6: 200, 7: 200}
        core = _core_with(engine, ctx, {**positions, 0: 0, 2: 0}, split_cells=1, pad_to=2)
        for k in (0, 2):
            core.active[k].cuts = [(0, 64, False, False)]
        decoding = [core.active[s] for s in positions]
        assert _slots(core._by_length(decoding)) == [[5, 6, 7], [3, 4]]
        assert 1 not in {s.slot for s in core._padded(decoding)[0]}  # it waits unsplit too
