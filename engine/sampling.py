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


MIN_TEMPERATURE = 1e-6  # a positive temperature below this overflows logits / temperature: refused, not sampled


class SamplingError(ValueError):
    """Sampling parameters that cannot be sampled with (a negative seed, a temperature that overflows)."""


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token's log-probability under the model (log-softmax of its logits row, in float64, before
    temperature or top-p), and the `top` most likely tokens of that row with theirs (highest first, ties by id)."""

    token: int
    logprob: float
    top: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class Generated:
    tokens: tuple[int, ...]
    text: str
    stopped_by: str  # eog | stop | max_tokens | context
    logprobs: tuple[TokenLogprob, ...] = ()  # one per token of `tokens`, when asked for


def check_params(params: SamplingParams) -> None:
    """Refuse what cannot be sampled with, before any computation."""
    if params.seed < 0:
        raise SamplingError(f"seed must be a non-negative integer, not {params.seed}")
    if not (params.temperature == 0 or params.temperature >= MIN_TEMPERATURE):  # NaN fails both
        raise SamplingError(f"temperature must be 0 (greedy) or at least {MIN_TEMPERATURE}, not {params.temperature}")
    if not 0 < params.top_p <= 1:
        raise SamplingError(f"top_p must be in (0, 1], not {params.top_p}")


def token_logprob(logits: np.ndarray, token: int, top: int) -> TokenLogprob:
    """`token`'s log-probability in the row `logits`, and the `top` most likely tokens with theirs."""
    row = logits.astype(np.float64)
    peak = row.max()
    lse = peak + np.log(np.exp(row - peak).sum())
    best: tuple[tuple[int, float], ...] = ()
    if top > 0:
        k = min(top, row.shape[0])
        idx = np.argpartition(-row, k - 1)[:k]
        best = tuple((int(i), float(row[i] - lse)) for i in sorted(idx, key=lambda i: (-row[i], int(i))))
    return TokenLogprob(int(token), float(row[token] - lse), best)


def pick_token(logits: np.ndarray, params: SamplingParams, rng: np.random.Generator) -> int:
    if params.temperature <= 0:
        return int(np.argmax(logits))
    k = min(params.top_k, logits.shape[0]) if params.top_k > 0 else logits.shape[0]
    top = np.argpartition(logits, -k)[-k:]
    scaled = logits[top].astype(np.float64) / params.temperature
    probs = np.exp(scaled - scaled.max())
    probs /= probs.sum()
    if not np.isfinite(probs).all():
        raise SamplingError(f"temperature {params.temperature} gives no probability distribution over these logits")
    if params.top_p < 1.0:  # the smallest set of the most likely tokens whose probability reaches top_p
        order = np.argsort(-probs, kind="stable")
        keep = order[:int(np.searchsorted(np.cumsum(probs[order]), params.top_p) + 1)]
        top, probs = top[keep], probs[keep] / probs[keep].sum()
        return int(top[rng.choice(len(keep), p=probs)])
    return int(top[rng.choice(k, p=probs)])


OnText = Callable[[str, tuple[TokenLogprob, ...]], None]


def generate(engine: GraftEngine, ctx: LlamaContext, *, pos: int, logits: np.ndarray, params: SamplingParams,
             seq_id: int = 0, on_text: OnText | None = None, logprobs: int | None = None) -> Generated:
    """Generate after a context whose last logits row is `logits` and whose next free position is `pos`.
    `on_text` receives each piece of text as soon as it is final (a stop string is never sent, not even in part:
    text that could still begin one is held back until it cannot), with the log-probabilities of the tokens
    generated since its last call. With `logprobs` (the number of most likely alternatives, 0 for none), each
    generated token's log-probability is reported."""
    check_params(params)
    rng = np.random.default_rng(params.seed)
    out: list[int] = []
    lps: list[TokenLogprob] = []
    reported = 0
    text = ""
    sent = 0
    stopped_by = "max_tokens"
    for _ in range(params.max_tokens):
        token = pick_token(logits, params, rng)
        if engine.model.is_end_of_generation(token):
            stopped_by = "eog"
            break
        out.append(token)
        if logprobs is not None:
            lps.append(token_logprob(logits, token, logprobs))
        text = engine.model.detokenize(out)
        hit = _first_stop(text, params.stop)
        if hit is not None:
            text = text[:hit]
            stopped_by = "stop"
            break
        if on_text is not None:
            safe = len(text) - _held_back(text, params.stop)
            if safe > sent and not text[sent:safe].endswith("\ufffd"):  # not inside a multi-byte character
                on_text(text[sent:safe], tuple(lps[reported:]))
                sent, reported = safe, len(lps)
        if pos >= ctx.n_ctx:
            stopped_by = "context"
            break
        ctx.decode([token], pos0=pos, seq_id=seq_id, outputs=[0])
        logits = ctx.logits_row(0)
        pos += 1
    if on_text is not None and (len(text) > sent or len(lps) > reported):
        on_text(text[sent:], tuple(lps[reported:]))
    return Generated(tuple(out), text, stopped_by, tuple(lps))


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
