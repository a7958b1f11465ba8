"""Token-by-token generation after a prefill or a graft: greedy or temperature sampling with a seeded generator,
stopping at an end-of-generation token, a stop string, or a token budget."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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
    top_p: float = 1.0  # nucleus sampling over the top-k (1.0: off)


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
    if params.top_p < 1.0:  # the smallest set of the most likely tokens whose probability reaches top_p
        order = np.argsort(-probs, kind="stable")
        keep = order[:int(np.searchsorted(np.cumsum(probs[order]), params.top_p) + 1)]
        top, probs = top[keep], probs[keep] / probs[keep].sum()
        return int(top[rng.choice(len(keep), p=probs)])
    return int(top[rng.choice(k, p=probs)])


def generate(engine: GraftEngine, ctx: LlamaContext, *, pos: int, logits: np.ndarray, params: SamplingParams,
             seq_id: int = 0, on_text: Callable[[str], None] | None = None) -> Generated:
    """Generate after a context whose last logits row is `logits` and whose next free position is `pos`.
    `on_text` receives each piece of text as soon as it is final (a stop string is never sent, not even in part:
    text that could still begin one is held back until it cannot)."""
    rng = np.random.default_rng(params.seed)
    out: list[int] = []
    text = ""
    sent = 0
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
        if on_text is not None:
            safe = len(text) - _held_back(text, params.stop)
            if safe > sent and not text[sent:safe].endswith("\ufffd"):  # not inside a multi-byte character
                on_text(text[sent:safe])
                sent = safe
        if pos >= ctx.n_ctx:
            stopped_by = "context"
            break
        ctx.decode([token], pos0=pos, seq_id=seq_id, outputs=[0])
        logits = ctx.logits_row(0)
        pos += 1
    if on_text is not None and len(text) > sent:
        on_text(text[sent:])
    return Generated(tuple(out), text, stopped_by)


def _held_back(text: str, stops: Sequence[str]) -> int:
    """How many trailing characters of `text` could be the start of a stop string."""
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:n]):
                longest = n
                break
    return longest


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
