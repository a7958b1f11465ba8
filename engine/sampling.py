"""Token-by-token generation after a prefill or a graft: greedy or temperature sampling with a seeded generator,
stopping at an end-of-generation token, a stop string, or a token budget."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.graft import GraftEngine, KVSnapshot
from engine.native import LlamaContext


@dataclass(frozen=True)
class SamplingParams:
    max_tokens: int = 160
    temperature: float = 0.0  # 0: greedy
    top_k: int = 40
    seed: int = 0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generated:
    tokens: tuple[int, ...]
    text: str
    stopped_by: str  # eog | stop | max_tokens | context


def pick_token(logits: np.ndarray, params: SamplingParams, rng: np.random.Generator) -> int:
    if params.temperature <= 0:
        return int(np.argmax(logits))
    k = min(params.top_k, logits.shape[0]) if params.top_k > 0 else logits.shape[0]
    top = np.argpartition(logits, -k)[-k:]
    scaled = logits[top].astype(np.float64) / params.temperature
    probs = np.exp(scaled - scaled.max())
    probs /= probs.sum()
    return int(top[rng.choice(k, p=probs)])


def generate(engine: GraftEngine, ctx: LlamaContext, *, pos: int, logits: np.ndarray, params: SamplingParams,
             seq_id: int = 0) -> Generated:
    """Generate after a context whose last logits row is `logits` and whose next free position is `pos`."""
    rng = np.random.default_rng(params.seed)
    out: list[int] = []
    text = ""
    stopped_by = "max_tokens"
    for _ in range(params.max_tokens):
        token = pick_token(logits, params, rng)
        if engine.model.is_end_of_generation(token):
            stopped_by = "eog"
            break
        out.append(token)
        text = engine.model.detokenize(out)
        hit = _first_stop(text, params.stop)
        if hit is not None:
            text = text[:hit]
            stopped_by = "stop"
            break
        if pos >= ctx.n_ctx:
            stopped_by = "context"
            break
        ctx.decode([token], pos0=pos, seq_id=seq_id, outputs=[0])
        logits = ctx.logits_row(0)
        pos += 1
    return Generated(tuple(out), text, stopped_by)


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    found = [text.find(s) for s in stops if s and s in text]
    return min(found) if found else None


def generate_after_graft(engine: GraftEngine, snapshot: KVSnapshot, tokens: Sequence[int], params: SamplingParams,
                         *, query_call: bool = False, payload_verified: bool = False,
                         timings: dict[str, float] | None = None) -> Generated:
    """Graft `snapshot` into a context at its own positions, feed `tokens` right after it, and generate.

    `query_call=True` feeds them in one decode call keeping every row's logits: the call class the graft check
    attests (recurrence and document questions, a few tokens). Otherwise they are prefilled on the grid keeping the
    last row only (prompts of any length). `payload_verified` as in `GraftEngine.restore`. With `timings`, the
    milliseconds of the context, the restore, the feed and the decode are written into it."""
    t0 = time.perf_counter()
    with engine.pooled_context() as ctx:  # a cleared, reused context: no KV allocation per answer
        t1 = time.perf_counter()
        engine.restore(ctx, snapshot, payload_verified=payload_verified)
        t2 = time.perf_counter()
        pos0 = snapshot.pos_end
        logits = (engine.query(ctx, tokens, pos0=pos0).rows[-1] if query_call
                  else engine.prefill_for_generation(ctx, tokens, pos0=pos0))
        t3 = time.perf_counter()
        out = generate(engine, ctx, pos=pos0 + len(tokens), logits=logits, params=params)
        t4 = time.perf_counter()
    if timings is not None:
        timings.update(context=round((t1 - t0) * 1000, 3), restore=round((t2 - t1) * 1000, 3),
                       feed=round((t3 - t2) * 1000, 3), decode=round((t4 - t3) * 1000, 3))
    return out
