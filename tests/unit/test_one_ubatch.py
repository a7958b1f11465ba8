"""Every decode step one ubatch: llama.cpp (a KV stream per sequence) makes one ubatch of each run of consecutive
sequence ids in a call, so a finished sequence between two decoding ones would split each later step into ubatches
that share no weight reads. BatchCore pads the free gaps (a row without logits, removed after the call); each
sequence's logits stay SHA-equal to it served alone in a one-sequence context (with an alone-vs-alone control)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.batching import BatchCore, SequenceJob
from engine.graft import EngineConfig, GraftEngine
from engine.sampling import SamplingParams
from engine.texts import sample_tokens

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]


@pytest.fixture()
def engine(kvgraft_cache: Path) -> Iterator[GraftEngine]:
    """Q4_1 weights, flash attention off: exact without pad rows (docs/ENGINE.md), so pads only close gaps."""
    with GraftEngine.load("tiny-q4_1", EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        yield e


def _jobs(engine: GraftEngine) -> list[SequenceJob]:
    """Slots 1 and 3 finish first: slots 0, 2 and 4 then decode with gaps between them."""
    lengths, outs = (20, 9, 33, 14, 27), (14, 2, 14, 3, 14)
    return [SequenceJob(tokens=tuple(sample_tokens(engine, n, start=i)),
                        params=SamplingParams(max_tokens=m, temperature=0.0 if i % 2 else 0.8, seed=i), digests=True)
            for i, (n, m) in enumerate(zip(lengths, outs, strict=True))]


def _alone(engine: GraftEngine, job: SequenceJob) -> tuple[tuple[int, ...], tuple[str, ...]]:
    with engine.open_context() as ctx:
        r = BatchCore(engine, ctx).run_all([(0, job)])[0]
    return r.generated.tokens, r.generated.digests


def test_gaps_are_padded_into_one_ubatch_and_every_sequence_stays_exact(engine: GraftEngine) -> None:
    jobs = _jobs(engine)
    alone = [_alone(engine, j) for j in jobs]
    assert alone == [_alone(engine, j) for j in jobs]  # the control
    runs = {}
    for fill_gaps in (False, True):
        with engine.open_batch_context(5) as ctx:
            core = BatchCore(engine, ctx, fill_gaps=fill_gaps, prefill_per_step=10**6)
            results = core.run_all([(0, j) for j in jobs])
        assert [(r.generated.tokens, r.generated.digests) for r in results] == alone
        assert [r.slot for r in results] == [0, 1, 2, 3, 4]
        runs[fill_gaps] = (core.decode_calls, core.decode_ubatches)
    calls, ubatches = runs[False]
    assert ubatches > calls  # the gaps are there: without pads llama.cpp splits those steps
    calls, ubatches = runs[True]
    assert ubatches == calls  # every decode call one ubatch
