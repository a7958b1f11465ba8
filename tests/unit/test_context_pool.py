"""Reused contexts: a graft into a pooled context (cleared after another graft) is SHA-256-equal to a graft into a
fresh one and to fresh computation, with the fresh-vs-fresh control; the pool is bounded; a context whose use
raised is closed, never handed out again."""

from __future__ import annotations

import pytest

from engine.check import check_graft, reference_run
from engine.errors import DecodeError
from engine.graft import POOL_SIZE, EngineConfig, GraftEngine
from engine.texts import sample_tokens

pytestmark = pytest.mark.unit


def test_a_pooled_context_after_another_graft_is_exact(tiny_engine: GraftEngine) -> None:
    engine = GraftEngine(tiny_engine.model, EngineConfig(n_ctx=tiny_engine.config.n_ctx))  # a pool of its own
    tokens = sample_tokens(engine, 220, start=2)
    prefix, query = tokens[:180], tokens[180:188]
    other = sample_tokens(engine, 300, start=7)
    fresh_a, fresh_b = engine.fresh(prefix, query), engine.fresh(prefix, query)
    assert fresh_a.sha256() == fresh_b.sha256()  # the floor
    dirty = engine.capture(other[:250], n_query=8)
    with engine.pooled_context() as ctx:  # leave a longer, different state behind in the pooled context
        engine.restore(ctx, dirty)
        engine.query(ctx, other[250:258], pos0=250)
        first = ctx
    snapshot = engine.capture(prefix, n_query=len(query))
    with engine.pooled_context() as ctx:
        assert ctx is first  # reused, not created
        assert ctx.seq_pos_max() == -1  # emptied
        engine.restore(ctx, snapshot)
        rows = engine.query(ctx, query, pos0=len(prefix))
    assert rows.row_sha256() == fresh_a.row_sha256()
    # the whole graft check (recapture, query, greedy continuation) over a pooled context
    check = check_graft(engine, snapshot, reference_run(engine, prefix, query))
    assert check.byte_exact and check.recapture_equal and check.continuation_equal, check


def test_the_pool_is_bounded_and_a_failed_use_is_not_kept(tiny_engine: GraftEngine) -> None:
    engine = GraftEngine(tiny_engine.model, EngineConfig(n_ctx=tiny_engine.config.n_ctx))
    held = [engine.pooled_context() for _ in range(POOL_SIZE + 2)]
    contexts = [h.__enter__() for h in held]
    assert len({id(c) for c in contexts}) == POOL_SIZE + 2  # nested uses get distinct contexts
    for h in reversed(held):
        h.__exit__(None, None, None)
    assert len(engine._pool) == POOL_SIZE
    closed = [c for c in contexts if c._handle is None]
    assert len(closed) == 2  # the ones beyond the bound were freed
    with pytest.raises(DecodeError), engine.pooled_context() as ctx:
        broken = ctx
        ctx.decode([1] * (ctx.n_batch + 1), pos0=0)  # refused before llama.cpp sees it
    assert broken._handle is None and broken not in engine._pool
    kept = list(engine._pool)
    engine.close_pool()
    assert all(c._handle is None for c in kept) and engine._pool == []
