"""The paper's positional-regime table, measured on the open stack.

Every regime compares a candidate computation with its reference over several prompts x query positions:
  own_position             graft at its captured positions [0, N)          vs fresh
  relocation[o]            graft shifted by o with llama_memory_seq_add    vs fresh at [o, o+N)
  positional_control[o]    fresh at [0, N) (no graft)                      vs fresh at [o, o+N)
  sequential_composition   restore A, then prefill B                       vs fresh A then B (same calls)
  sequential_vs_monolithic restore A, then prefill B                       vs one monolithic prefill of A+B
  independent_stitching    A and B captured independently, concatenated    vs monolithic A+B
Block lengths vary across prompts so that the batching effects (see docs/ENGINE.md) are sampled, not avoided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from engine.graft import GraftEngine
from engine.logits import Divergence, LogitsRows, compare, merge
from engine.texts import sample_tokens

log = structlog.get_logger(__name__)

DEFAULT_OFFSETS = (8, 128, 512, 2048)


@dataclass(frozen=True)
class RegimesRequest:
    prompts: int = 4
    n_query: int = 8
    block_tokens: int = 150  # |A| of the first prompt; each later prompt adds 13 tokens
    second_tokens: int = 100  # |B| of the first prompt; each later prompt adds 7 tokens
    offsets: tuple[int, ...] = DEFAULT_OFFSETS


def entry(div: Divergence) -> dict[str, Any]:
    return {
        "byte_equal": div.byte_equal,
        "kl_mean": div.kl_mean,
        "kl_max": div.kl_max,
        "argmax_flips": div.argmax_flips,
        "samples": div.positions,
        "positions_equal": div.positions_equal,
        "max_abs_diff": div.max_abs_diff,
    }


def _stitched(engine: GraftEngine, a: Sequence[int], b: Sequence[int], query: Sequence[int]) -> LogitsRows:
    """A captured at [0,|A|) and B captured alone (no A in its context) at [|A|, |A|+|B|), restored into two
    sequences of one unified cache, B's cells copied onto A's sequence, then the query."""
    snap_a = engine.capture(a)
    snap_b = engine.capture(b, pos0=len(a))
    with engine.open_context(n_seq_max=2, kv_unified=True) as ctx:
        engine.restore(ctx, snap_a, seq_id=0)
        engine.restore(ctx, snap_b, seq_id=1)
        ctx.seq_copy(1, 0)
        ctx.seq_remove(1)
        return engine.query(ctx, query, pos0=len(a) + len(b))


def _sequential(engine: GraftEngine, a: Sequence[int], b: Sequence[int], query: Sequence[int]) -> LogitsRows:
    snap_a = engine.capture(a)
    with engine.open_context() as ctx:
        engine.restore(ctx, snap_a)
        engine.prefill(ctx, b, pos0=len(a))
        return engine.query(ctx, query, pos0=len(a) + len(b))


def _fresh_two_calls(engine: GraftEngine, a: Sequence[int], b: Sequence[int],
                     query: Sequence[int]) -> LogitsRows:
    with engine.open_context() as ctx:
        engine.prefill(ctx, a)
        engine.prefill(ctx, b, pos0=len(a))
        return engine.query(ctx, query, pos0=len(a) + len(b))


def run_regimes(engine: GraftEngine, request: RegimesRequest = RegimesRequest(),
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    q = request.n_query
    results: dict[str, list[Divergence]] = {}
    usable_offsets: list[int] = []

    def add(name: str, div: Divergence) -> None:
        results.setdefault(name, []).append(div)

    for i in range(request.prompts):
        na = request.block_tokens + 13 * i
        nb = request.second_tokens + 7 * i
        tokens = sample_tokens(engine, na + nb + q, start=3 * i)
        a, b, tail = tokens[:na], tokens[na:na + nb], tokens[na + nb:]
        query_a = tokens[na:na + q]
        if progress:
            progress(f"prompt {i + 1}/{request.prompts}: |A|={na} |B|={nb} q={q}")

        snap = engine.capture(a, n_query=q)
        fresh0 = engine.fresh(a, query_a)
        add("own_position", compare(fresh0, engine.graft(snap, query_a)))
        usable_offsets = [o for o in request.offsets
                          if o + na + nb + q <= min(engine.config.n_ctx, engine.model.n_ctx_train)]
        for off in usable_offsets:
            fresh_off = engine.fresh(a, query_a, pos0=off)
            add(f"relocation/{off}", compare(fresh_off, engine.graft(snap, query_a, shift=off)))
            add(f"positional_control/{off}", compare(fresh_off, fresh0, same_positions=False))

        sequential = _sequential(engine, a, b, tail)
        add("sequential_composition", compare(_fresh_two_calls(engine, a, b, tail), sequential))
        monolithic = engine.fresh(a + b, tail)
        add("sequential_vs_monolithic", compare(monolithic, sequential))
        add("independent_stitching", compare(monolithic, _stitched(engine, a, b, tail)))

    def pooled(name: str) -> dict[str, Any]:
        return entry(merge(results[name]))

    regimes: dict[str, Any] = {
        "own_position": pooled("own_position"),
        "relocation": {str(o): pooled(f"relocation/{o}") for o in usable_offsets},
        "positional_control": {str(o): pooled(f"positional_control/{o}") for o in usable_offsets},
        "sequential_composition": pooled("sequential_composition"),
        "sequential_vs_monolithic": pooled("sequential_vs_monolithic"),
        "independent_stitching": pooled("independent_stitching"),
    }
    fp = engine.fingerprint
    log.info("regimes.finished", model=engine.name, prompts=request.prompts, fingerprint=fp.id)
    return {"model": engine.name, "fingerprint": fp.id, "profile": engine.profile(q).as_dict(), "regimes": regimes}


def flat_entries(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) pairs in table order, relocation and control expanded by offset."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name, value in report["regimes"].items():
        if "byte_equal" in value:
            out.append((name, value))
        else:
            out.extend((f"{name} +{off}", e) for off, e in value.items())
    return out
