"""Token-by-token generation after a prefill or a graft: greedy or temperature sampling with a seeded generator,
stopping at an end-of-generation token, a stop string, or a token budget; alone (`generate`) or as steps a batch
scheduler interleaves (`Generation`)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.graft import GraftEngine, KVSnapshot
from engine.native import LlamaContext, LlamaModel


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
    stopped_by: str  # eog | stop | max_tokens | context | cancelled
    logprobs: tuple[TokenLogprob, ...] = ()  # one per token of `tokens`, when asked for
    digests: tuple[str, ...] = ()  # SHA-256 of each logits row sampled from, when asked for
    rows: tuple[np.ndarray, ...] = ()  # the logits rows themselves, when asked for (checks)


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


class Generation:
    """One generation as a sequence of steps, so that a caller can decode it alone or beside others: `step(logits)`
    takes the logits row of the position just computed and returns the token to decode next, or None once the
    generation has ended (an end-of-generation token, a stop string, the token budget). `on_text` receives each
    piece of text as soon as it is final (a stop string is never sent, not even in part: text that could still
    begin one is held back until it cannot), with the log-probabilities of the tokens generated since its last
    call. With `logprobs` (the number of most likely alternatives, 0 for none), each generated token's
    log-probability is reported; with `digests`, the SHA-256 of every logits row stepped over (with `keep_rows`,
    the rows)."""

    def __init__(self, model: LlamaModel, params: SamplingParams, *, on_text: OnText | None = None,
                 logprobs: int | None = None, digests: bool = False, keep_rows: bool = False) -> None:
        check_params(params)
        self.model, self.params, self.on_text, self.logprobs = model, params, on_text, logprobs
        self.rng = np.random.default_rng(params.seed)
        self.out: list[int] = []
        self.lps: list[TokenLogprob] = []
        self.digests: list[str] | None = [] if digests else None
        self.rows: list[np.ndarray] | None = [] if keep_rows else None
        self.text = ""
        self.stopped_by: str | None = None
        self._sent = self._reported = 0

    @property
    def done(self) -> bool:
        return self.stopped_by is not None

    def step(self, logits: np.ndarray) -> int | None:
        if self.done:
            return None
        params = self.params
        if len(self.out) >= params.max_tokens:
            self.stopped_by = "max_tokens"
            return None
        if self.digests is not None:
            self.digests.append(hashlib.sha256(np.ascontiguousarray(logits, dtype=np.float32).tobytes()).hexdigest())
        if self.rows is not None:
            self.rows.append(np.array(logits, dtype=np.float32))
        token = pick_token(logits, params, self.rng)
        if self.model.is_end_of_generation(token):
            self.stopped_by = "eog"
            return None
        self.out.append(token)
        if self.logprobs is not None:
            self.lps.append(token_logprob(logits, token, self.logprobs))
        self.text = self.model.detokenize(self.out)
        hit = _first_stop(self.text, params.stop)
        if hit is not None:
            self.text = self.text[:hit]
            self.stopped_by = "stop"
            return None
        if self.on_text is not None:
            safe = len(self.text) - _held_back(self.text, params.stop)
            if safe > self._sent and not self.text[self._sent:safe].endswith("\ufffd"):  # not inside a character
                self.on_text(self.text[self._sent:safe], tuple(self.lps[self._reported:]))
                self._sent, self._reported = safe, len(self.lps)
        if len(self.out) >= params.max_tokens:
            self.stopped_by = "max_tokens"
            return None
        return token

    def end(self, reason: str) -> None:
        """End it from outside (`context`: no room for another position; `cancelled`: the client went away)."""
        if not self.done:
            self.stopped_by = reason

    def result(self) -> Generated:
        """The generation so far (sending what text `on_text` has not had yet)."""
        if self.on_text is not None and (len(self.text) > self._sent or len(self.lps) > self._reported):
            self.on_text(self.text[self._sent:], tuple(self.lps[self._reported:]))
            self._sent, self._reported = len(self.text), len(self.lps)
        return Generated(tuple(self.out), self.text, self.stopped_by or "max_tokens", tuple(self.lps),
                         tuple(self.digests or ()), tuple(self.rows or ()))


def generate(engine: GraftEngine, ctx: LlamaContext, *, pos: int, logits: np.ndarray, params: SamplingParams,
             seq_id: int = 0, on_text: OnText | None = None, logprobs: int | None = None) -> Generated:
    """Generate alone after a context whose last logits row is `logits` and whose next free position is `pos`, one
    decode call per token (see `Generation`)."""
    gen = Generation(engine.model, params, on_text=on_text, logprobs=logprobs)
    token = gen.step(logits)
    while token is not None:
        if pos >= ctx.n_seq_ctx:
            gen.end("context")
            break
        ctx.decode([token], pos0=pos, seq_id=seq_id, outputs=[0])
        pos += 1
        token = gen.step(ctx.logits_row(0))
    return gen.result()


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
