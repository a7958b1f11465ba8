"""One served completion over the prompt cache: restore the longest stored prefix of the prompt the team owns,
prefill the rest on the serving grid (capturing the prefix states this request is the first to compute, at the
boundaries worth keeping), generate, and hand the new prefixes to the background depositor.

Exactness: the serving engine prefills every prompt in `prefill_chunk`-token calls counted from position 0 (the
absolute grid), also after a restored prefix, so a prefix that ends at a chunk boundary followed by the rest is
the same sequence of decode calls as one fresh prefill. A prefix may also end inside a chunk, at a multiple of
the boundary granule, where a chat message ends; the rows around it are then batched differently, and such
prefixes are stored and used only where the composition check (exactness.py) found those shapes of cut exact on
this machine. The response reports the SHA-256 of the first generated position's logits.

A completion is planned on the request's thread (`plan`: the cache policy, the lookup and read of the stored
prefix), computed as a sequence of the serving engine's batch scheduler (engine/batching.py, on its one compute
thread, beside other completions where the `batch` check allows), and reported by `finish`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from engine.batching import SequenceJob, SequenceResult
from engine.errors import StateRestoreError
from engine.graft import GraftEngine
from engine.sampling import OnText, SamplingParams, TokenLogprob, check_params
from store.errors import ObjectStoreUnavailableError
from workers.errors import WorkInputError
from workers.runtime import Runtime
from workers.serving.exactness import CachePolicy
from workers.serving.prompt_cache import (
    Lookup,
    PendingPrefix,
    PrefixDepositor,
    chain_hashes,
    chunk_snapshot,
    deposit_spans,
    lookup,
)

log = structlog.get_logger(__name__)


class ContextLengthError(WorkInputError):
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
    # [{"block_id", "tokens", "chunks", "attested", "from"}]: attested by this host's composition check; from
    # "block" (restored) or "context" (the resident context truncated to it)
    restored: tuple[dict[str, Any], ...]
    restored_tokens: int
    prefilled_tokens: int
    deposits: int  # prefix blocks this request computed and handed to the depositor
    granule: int  # stored prefixes may end at multiples of this (the chunk: chunk boundaries only)
    # the composition check's probe attestation on this host: for the operator's log (`serve.completed`) and the
    # auditor (GET /v1/attestations?kind=composition), never in a team's response: its id counts every team's
    # attestations
    attestation_id: int | None

    def as_dict(self) -> dict[str, Any]:
        """What the team that asked sees (no deployment-wide id or count)."""
        return {"cache": self.status, "reason": self.reason, "restored": list(self.restored),
                "restored_tokens": self.restored_tokens, "prefilled_tokens": self.prefilled_tokens,
                "deposits_scheduled": self.deposits, "boundary_granule": self.granule}


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
    # BatchPolicy.as_dict(): the deployment's batching, never what else shared the calls (other teams' requests)
    batching: dict[str, Any] = field(default_factory=dict)
    logits_sha256: tuple[str, ...] = ()  # every generated position's logits digest, when asked for
    stopped_by: str = "max_tokens"  # eog | stop | max_tokens | context | cancelled


def _ends(keep: tuple[int, ...], n_prompt: int, granule: int) -> list[int]:
    """Where the prompt's positions worth keeping may end a prefix: each rounded down to the granule, leaving at
    least one prompt token to prefill."""
    return sorted({(min(pos, n_prompt - 1) // granule) * granule for pos in keep} - {0})


def _kept(hashes: dict[int, str], aligned_max: int | None, ends: list[int]) -> list[int]:
    """Boundaries to store: the prompt's longest chunk boundary, and each end worth keeping."""
    wanted = {aligned_max} if aligned_max is not None else set()
    return sorted(wanted | {e for e in ends if e in hashes})


@dataclass(frozen=True)
class CompletionPlan:
    """What the prompt cache decided for one request before any computation: the prefix to restore, the
    boundaries to capture, and how it will be reported."""

    request: CompletionRequest
    policy: CachePolicy
    hashes: dict[int, str]
    found: Lookup
    capture_at: tuple[int, ...]  # where the state is captured (once: the longest kept boundary)
    chunk: int
    lookup_ms: float
    deposit_spans: tuple[tuple[int, int], ...] = ()  # the chunks [start, end) this request stores, cut from its capture
    store_chunk: int = 0  # stored chunks' size (0: whole prefixes)

    def job(self, on_text: OnText | None, cancel: threading.Event | None, digests: bool) -> SequenceJob:
        cached = self.found.cached
        return SequenceJob(tokens=self.request.prompt_tokens, params=self.request.params,
                           owner=str(self.request.team_id), restore=cached.snapshot if cached else None,
                           resident_ok=self.policy.resident, captures=self.capture_at,
                           capture_query=self.chunk, on_text=on_text, logprobs=self.request.logprobs,
                           digests=digests, cancel=cancel)


def plan(rt: Runtime, engine: GraftEngine, request: CompletionRequest,
         policy_of: Callable[[int], CachePolicy], store_chunk: int = 0) -> CompletionPlan:
    """Check the request and look up the longest stored prefix the team owns (on the request's thread: database
    and object-store reads do not hold the compute thread). `policy_of(n)` is the cache policy for a prompt of n
    tokens (it may run the composition check, on the compute thread); `store_chunk` the stored chunks' size."""
    tokens = list(request.prompt_tokens)
    n = len(tokens)
    if n == 0:
        raise ValueError("the prompt is empty")
    check_params(request.params)  # before anything is computed (or a resident slot touched)
    if n + request.params.max_tokens > engine.config.n_ctx:
        raise ContextLengthError(f"the prompt is {n} tokens and max_tokens {request.params.max_tokens}: together "
                                 f"more than the serving window of {engine.config.n_ctx} tokens")
    t0 = time.perf_counter()
    c = engine.config.prefill_chunk
    policy = policy_of(n) if request.cache else CachePolicy("asked off", c, None)
    ends = _ends(request.keep_boundaries, n, policy.granule)
    hashes = chain_hashes(engine, tokens, ends, store_chunk) if policy.refusal is None else {}
    try:
        found = lookup(rt, engine, hashes, request.team_id, tokens=tokens, store_chunk=store_chunk)
    except ObjectStoreUnavailableError as exc:  # served uncached: nothing restored, nothing captured
        log.warning("serve.store_unavailable", error=str(exc))
        policy = CachePolicy(f"store_unavailable: {exc}", c, policy.attestation_id)
        hashes, found = {}, Lookup(None)
    aligned = [b for b in hashes if b % c == 0]
    kept = _kept(hashes, max(aligned) if aligned else None, ends)
    cached = found.cached
    point = 0 if cached is None else cached.n_tokens if cached.n_tokens % c == 0 else cached.last_start
    spans = tuple((a, e) for a, e in deposit_spans(kept, point, store_chunk, c)
                  if e in hashes and (a, e) not in found.owned_spans)  # what the team holds is not stored again
    capture_at = (max(kept),) if spans else ()
    return CompletionPlan(request, policy, hashes, found, capture_at, c, (time.perf_counter() - t0) * 1000, spans,
                          store_chunk)


def _chunks(planned: CompletionPlan, result: SequenceResult) -> list[PendingPrefix]:
    """The chunks to store, each cut from the one state captured (a state that cannot be cut stores nothing)."""
    if not result.captured or not planned.deposit_spans:
        return []
    _, state = result.captured[0]
    try:
        return [PendingPrefix(planned.hashes[e], chunk_snapshot(state, a, e),
                              replace=planned.hashes[e] in planned.found.unreadable)
                for a, e in planned.deposit_spans if e <= state.pos_end]
    except StateRestoreError as exc:
        log.warning("prompt_cache.not_chunked", error=str(exc))
        return []


class CompletionCancelled(Exception):
    """The completion was stopped before it ended (its client went away, or the process is stopping)."""


def finish(engine: GraftEngine, planned: CompletionPlan, result: SequenceResult, depositor: PrefixDepositor | None,
           batching: dict[str, Any]) -> Completion:
    """Hand the captured prefixes to the depositor and report the completion (CompletionCancelled for one that
    was stopped: never reported as finished)."""
    request, policy = planned.request, planned.policy
    cached = planned.found.cached if result.restored_tokens else None  # a refused restore: prefilled instead
    n = len(request.prompt_tokens)
    pending = _chunks(planned, result)
    if depositor is not None:
        if cached is not None:
            for block_id in cached.block_ids:
                depositor.used(block_id, request.team_id)
        if pending:
            depositor.submit(engine, pending, request.team_id)
    start = result.restored_tokens
    reason = policy.refusal
    if planned.found.cached is not None and cached is None:
        reason = "restore_refused: the stored prefix could not be set into this context; prefilled instead"
    restored = ({"block_id": cached.block_ids[-1], "tokens": cached.n_tokens, "chunks": list(cached.block_ids),
                 "attested": True,
                 "from": "context" if result.reused else "block"},) if cached else ()
    status = "off" if policy.refusal else ("hit" if cached else "miss")
    report = CacheReport(status, reason, restored, start, n - start, len(pending) if depositor is not None else 0,
                         policy.granule, policy.attestation_id)
    out = result.generated
    log.info("serve.completed", prompt_tokens=n, restored_tokens=start, completion_tokens=len(out.tokens),
             cache=report.status, reason=reason, deposits=report.deposits, stopped_by=out.stopped_by,
             batched_with=result.batched_with, steps_after_cancel=result.steps_after_cancel,
             composition_attestation_id=policy.attestation_id)
    if out.stopped_by == "cancelled":
        raise CompletionCancelled(f"the completion was stopped after {len(out.tokens)} tokens")
    timings = {"lookup": round(planned.lookup_ms, 2), **result.timings_ms}
    return Completion(out.text, out.tokens, "length" if out.stopped_by in ("max_tokens", "context") else "stop", n,
                      report, result.first_logits_sha256, timings, out.logprobs, batching, out.digests,
                      out.stopped_by)
