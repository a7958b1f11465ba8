"""One served completion over the prompt cache: restore the longest stored prefix of the prompt the team owns,
prefill the rest on the serving grid (capturing the prefix states this request is the first to compute, at the
boundaries worth keeping), generate, and hand the new prefixes to the background depositor.

Exactness: the serving engine prefills every prompt in `prefill_chunk`-token calls counted from position 0 (the
absolute grid), also after a restored prefix, so a prefix that ends at a chunk boundary followed by the rest is
the same sequence of decode calls as one fresh prefill. A prefix may also end inside a chunk, at a multiple of
the boundary granule, where a chat message ends; the rows around it are then batched differently, and such
prefixes are stored and used only where the composition check (exactness.py) found those shapes of cut exact on
this machine. The response reports the SHA-256 of the first generated position's logits."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import structlog

from engine.errors import DecodeError
from engine.graft import GraftEngine
from engine.native import LlamaContext
from engine.sampling import OnText, SamplingParams, TokenLogprob, check_params, generate
from store.errors import ObjectStoreUnavailableError
from workers.runtime import Runtime
from workers.serving.exactness import CachePolicy, cache_policy
from workers.serving.prompt_cache import (
    Lookup,
    PendingPrefix,
    PrefixDepositor,
    chain_hashes,
    chunk_tokens,
    lookup,
)

log = structlog.get_logger(__name__)


class ContextLengthError(ValueError):
    """The prompt and the requested completion do not fit the serving window."""


@dataclass(frozen=True)
class CompletionRequest:
    prompt_tokens: tuple[int, ...]
    params: SamplingParams
    team_id: int
    cache: bool = True
    keep_boundaries: tuple[int, ...] = ()  # prompt positions worth a prefix block besides the longest (message ends)
    logprobs: int | None = None  # report each generated token's log-probability and this many alternatives


@dataclass(frozen=True)
class CacheReport:
    status: str  # hit | miss | off
    reason: str | None  # why the cache was off (sliding window, composition not exact, asked off)
    # [{"block_id", "tokens", "attested", "attestation_id", "from"}]: attested by this host's composition check
    # (the id); from "block" (restored) or "context" (the resident context truncated to it)
    restored: tuple[dict[str, Any], ...]
    restored_tokens: int
    prefilled_tokens: int
    deposits: int  # prefix blocks this request computed and handed to the depositor
    granule: int  # stored prefixes may end at multiples of this (the chunk: chunk boundaries only)
    attestation_id: int | None  # the composition check's probe attestation on this host

    def as_dict(self) -> dict[str, Any]:
        return {"cache": self.status, "reason": self.reason, "restored": list(self.restored),
                "restored_tokens": self.restored_tokens, "prefilled_tokens": self.prefilled_tokens,
                "deposits_scheduled": self.deposits, "boundary_granule": self.granule,
                "composition_attestation_id": self.attestation_id}


@dataclass(frozen=True)
class Completion:
    text: str
    tokens: tuple[int, ...]
    finish_reason: str  # stop | length
    prompt_tokens: int
    cache: CacheReport
    first_logits_sha256: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    logprobs: tuple[TokenLogprob, ...] = ()


def _ends(keep: tuple[int, ...], n_prompt: int, granule: int) -> list[int]:
    """Where the prompt's positions worth keeping may end a prefix: each rounded down to the granule, leaving at
    least one prompt token to prefill."""
    return sorted({(min(pos, n_prompt - 1) // granule) * granule for pos in keep} - {0})


def _kept(hashes: dict[int, str], aligned_max: int | None, ends: list[int]) -> list[int]:
    """Boundaries to store: the prompt's longest chunk boundary, and each end worth keeping."""
    wanted = {aligned_max} if aligned_max is not None else set()
    return sorted(wanted | {e for e in ends if e in hashes})


class Resident:
    """The serving engine's one context kept between requests, the prompt whose KV it holds and the team that
    sent it. A request of the same team whose stored prefix (found for the team, as any restore) is already there
    truncates the context to it instead of restoring the block, where the composition check found that exact and
    the model has no sliding window. Used from the engine's thread only."""

    def __init__(self) -> None:
        self.ctx: LlamaContext | None = None
        self.tokens: tuple[int, ...] = ()
        self.team_id: int | None = None

    @contextmanager
    def context(self, engine: GraftEngine) -> Iterator[LlamaContext]:
        """The context, opened on first use; if the request fails, it is closed and forgotten."""
        if self.ctx is None:
            self.ctx = engine.open_context()
        try:
            yield self.ctx
        except BaseException:
            self.close()
            raise

    def holds(self, ctx: LlamaContext, tokens: Sequence[int], team_id: int) -> None:
        """After a request: the context keeps the prompt's cells (the generated ones dropped); a memory that cannot
        drop them (a recurrent model's) is not kept."""
        try:
            ctx.truncate(len(tokens))
        except DecodeError:
            self.close()
            return
        self.tokens, self.team_id = tuple(tokens), team_id

    def close(self) -> None:
        if self.ctx is not None:
            self.ctx.close()
        self.ctx, self.tokens, self.team_id = None, (), None


def complete(rt: Runtime, engine: GraftEngine, request: CompletionRequest, depositor: PrefixDepositor | None,
             on_text: OnText | None = None, resident: Resident | None = None) -> Completion:
    tokens = list(request.prompt_tokens)
    n = len(tokens)
    if n == 0:
        raise ValueError("the prompt is empty")
    check_params(request.params)  # before anything is computed (or the resident context touched)
    if n + request.params.max_tokens > engine.config.n_ctx:
        raise ContextLengthError(f"the prompt is {n} tokens and max_tokens {request.params.max_tokens}: together "
                                 f"more than the serving window of {engine.config.n_ctx} tokens")
    t0 = time.perf_counter()
    c = chunk_tokens(engine)
    policy = cache_policy(rt, engine, n) if request.cache else CachePolicy("asked off", c, None)
    ends = _ends(request.keep_boundaries, n, policy.granule)
    hashes = chain_hashes(engine, tokens, ends) if policy.refusal is None else {}
    try:
        found = lookup(rt, engine, hashes, request.team_id)
    except ObjectStoreUnavailableError as exc:  # served uncached: nothing restored, nothing captured
        log.warning("serve.store_unavailable", error=str(exc))
        policy = CachePolicy(f"store_unavailable: {exc}", c, policy.attestation_id)
        hashes, found = {}, Lookup(None, frozenset())
    aligned = [b for b in hashes if b % c == 0]
    cached = found.cached
    start = cached.n_tokens if cached is not None else 0
    capture_at = [b for b in _kept(hashes, max(aligned) if aligned else None, ends)
                  if b > start and hashes[b] not in found.owned]
    t1 = time.perf_counter()
    pending: list[PendingPrefix] = []
    reused = False
    with (engine.pooled_context() if resident is None else resident.context(engine)) as ctx:
        if resident is not None:  # the context holds the previous request's prompt
            reused = (cached is not None and policy.resident and resident.team_id == request.team_id
                      and resident.tokens[:cached.n_tokens] == tuple(tokens[:cached.n_tokens]))
            if reused:
                ctx.truncate(start)  # the prefix the team owns is already here: keep it, drop the rest
            else:
                ctx.clear()  # anything else starts from an empty context, as a pooled one would
        if cached is not None and not reused:
            engine.restore(ctx, cached.snapshot, payload_verified=True)
        t2 = time.perf_counter()
        pos = start
        for b in capture_at:  # prefill up to each boundary worth keeping, and capture the state there
            engine.prefill(ctx, tokens[pos:b], pos0=pos, origin=0)
            pending.append(PendingPrefix(hashes[b], engine.snapshot(ctx, tokens[:b], n_query=c),
                                         replace=hashes[b] in found.unreadable))
            pos = b
        logits = engine.prefill_for_generation(ctx, tokens[pos:], pos0=pos, origin=0)
        t3 = time.perf_counter()
        first_sha = hashlib.sha256(logits.tobytes()).hexdigest()
        out = generate(engine, ctx, pos=n, logits=logits, params=request.params, on_text=on_text,
                       logprobs=request.logprobs)
        t4 = time.perf_counter()
        if resident is not None:
            resident.holds(ctx, tokens, request.team_id)
    if depositor is not None:
        if cached is not None:
            depositor.used(cached.block_id, request.team_id)
        if pending:
            depositor.submit(engine, pending, request.team_id)
    reason = policy.refusal
    restored = ({"block_id": cached.block_id, "tokens": cached.n_tokens, "attested": True,
                 "attestation_id": policy.attestation_id, "from": "context" if reused else "block"},) if cached else ()
    report = CacheReport("off" if reason else ("hit" if cached else "miss"), reason, restored, start, n - start,
                         len(pending) if depositor is not None else 0, policy.granule, policy.attestation_id)
    log.info("serve.completed", prompt_tokens=n, restored_tokens=start, completion_tokens=len(out.tokens),
             cache=report.status, reason=reason, deposits=report.deposits)
    return Completion(out.text, out.tokens, "length" if out.stopped_by in ("max_tokens", "context") else "stop", n,
                      report, first_sha, {"lookup": round((t1 - t0) * 1000, 2), "restore": round((t2 - t1) * 1000, 2),
                                          "prefill": round((t3 - t2) * 1000, 2),
                                          "decode": round((t4 - t3) * 1000, 2)}, out.logprobs)
