"""When the prompt cache may be used, and where a stored prefix may end, decided by measurement on this machine,
not assumed.

Before the first served prompt of a fingerprint and profile, the composition check computes a probe prompt of a
few chunks twice fresh (the control: fresh computation must be reproducible here) and then composed at several
split points: the tokens before the split prefilled and captured, the block written and read back, restored into
another context, the rest prefilled on the absolute grid (the calls a fresh prefill makes after that point). The
cache is used only if the split at a chunk boundary is SHA-256-equal to fresh.

A split inside a chunk changes how the rows around it are batched (a partial call where fresh makes a full
one). Whether that changes any byte depends on the kernels (LLAMACPP-FACTS: the repacked matmul takes rows in
groups of 4), so it is measured too: the boundary granule is the smallest of GRANULES whose splits (just after a
chunk boundary, just before one, and inside the last partial chunk) are all exact; a prefix may end at any
multiple of it (a chat message's end, rounded down), else only at chunk boundaries. The verdict is recorded as a
probe attestation. A sliding-window model is never served from the cache past its window (masked cells are not
restored exactly with swa_full off)."""

from __future__ import annotations

import hashlib
import socket
import time
from dataclasses import dataclass

import numpy as np
import structlog

from engine.graft import GraftEngine
from engine.logits import Divergence, LogitsRows, compare, merge
from store.repository import record_attestation
from workers.runtime import Runtime
from workers.seam import block_file_roundtrip
from workers.upkeep.gate_records import divergence_fields, status_of

log = structlog.get_logger(__name__)

PROBE_TEXT = ("The harbour master logs each ship that enters: its name, its cargo, the hour and the berth. "
              "Ledgers from older years are kept in the tower room, bound in blue cloth. ")
GRANULES = (1, 4)  # tried in order; the first whose splits are all exact is used
PROBE_TAIL = 7  # tokens after the last full chunk of the probe (a partial last call, as most prompts have)


@dataclass(frozen=True)
class SplitResult:
    split: int
    granule: int  # the granule this split tests (the chunk itself for the aligned split)
    exact: bool
    composed_sha256: str


@dataclass(frozen=True)
class CompositionCheck:
    reproducible: bool  # fresh vs fresh (the control)
    fresh_sha256: str
    chunk: int
    probe_tokens: int
    splits: tuple[SplitResult, ...]  # the aligned split first
    divergence: Divergence  # fresh vs composed, pooled over the splits
    ms: float

    @property
    def exact(self) -> bool:
        """The aligned composition (a prefix ending at a chunk boundary) is byte-equal to fresh here."""
        return self.reproducible and all(s.exact for s in self.splits if s.granule == self.chunk)

    @property
    def granule(self) -> int:
        """A stored prefix may end at any multiple of this (the chunk when no finer split was exact)."""
        if not self.exact:
            return self.chunk
        for g in GRANULES:
            tried = [s for s in self.splits if s.granule == g]
            if tried and all(s.exact for s in tried):
                return g
        return self.chunk

    def summary(self) -> str:
        parts = [f"{'exact' if s.exact else 'differs'} at {s.split} (granule {s.granule})" for s in self.splits]
        return (f"composition check over {self.probe_tokens} tokens, chunk {self.chunk}: " + "; ".join(parts)
                + f"; fresh {'reproducible' if self.reproducible else 'NOT reproducible'}; boundary granule "
                + str(self.granule))


def _fresh(engine: GraftEngine, tokens: list[int]) -> np.ndarray:
    with engine.pooled_context() as ctx:
        return engine.prefill_for_generation(ctx, tokens).copy()


def _composed(engine: GraftEngine, tokens: list[int], split: int) -> np.ndarray:
    with engine.pooled_context() as ctx:
        engine.prefill(ctx, tokens[:split])
        snapshot = engine.snapshot(ctx, tokens[:split], n_query=engine.config.prefill_chunk)
    stored = block_file_roundtrip(snapshot, kind="prefix")  # the bytes a prefix block carries, read back
    with engine.pooled_context() as ctx:
        engine.restore(ctx, stored, payload_verified=True)
        return engine.prefill_for_generation(ctx, tokens[split:], pos0=split, origin=0).copy()


def _granule_splits(c: int, g: int) -> list[int]:
    """Multiples of g that are not multiples of 2g (so a coarser granule would not cover them): just after the
    first chunk boundary, just before the second, and inside the probe's partial last chunk."""
    return [c + g, 2 * c - g, 2 * c + g] if 2 * g <= c and g < PROBE_TAIL else []


def composition_check(engine: GraftEngine) -> CompositionCheck:
    c = engine.config.prefill_chunk
    tokens: list[int] = []
    while len(tokens) < 2 * c + PROBE_TAIL:
        tokens += engine.tokenize(PROBE_TEXT, add_special=not tokens)
    tokens = tokens[:2 * c + PROBE_TAIL]
    t0 = time.perf_counter()
    fresh, control = _fresh(engine, tokens), _fresh(engine, tokens)
    splits: list[SplitResult] = []
    divergences = []

    def trial(split: int, granule: int) -> bool:
        composed = _composed(engine, tokens, split)
        splits.append(SplitResult(split, granule, composed.tobytes() == fresh.tobytes(), _sha(composed)))
        pos = len(tokens) - 1
        divergences.append(compare(LogitsRows(pos, fresh[None, :]), LogitsRows(pos, composed[None, :])))
        return splits[-1].exact

    if trial(2 * c, c):
        for g in GRANULES:
            tried = _granule_splits(c, g)
            if tried and all([trial(s, g) for s in tried]):  # every split run and recorded, not just the first
                break
    result = CompositionCheck(fresh.tobytes() == control.tobytes(), _sha(fresh), c, len(tokens), tuple(splits),
                              merge(divergences), round((time.perf_counter() - t0) * 1000, 1))
    log.info("serve.composition_checked", exact=result.exact, reproducible=result.reproducible,
             granule=result.granule, fingerprint=engine.fingerprint.id, chunk=c, ms=result.ms)
    return result


def _sha(row: np.ndarray) -> str:
    return hashlib.sha256(row.tobytes()).hexdigest()


def record_check(rt: Runtime, engine: GraftEngine, check: CompositionCheck) -> int:
    """The check as a probe attestation of the serving profile on this host (what an auditor reads)."""
    profile = engine.profile(check.chunk)
    with rt.session() as s:
        row = record_attestation(
            s, block_id=None, probe_digest=check.fresh_sha256, fingerprint=engine.fingerprint.id,
            profile=profile.as_dict(), profile_id=profile.id, host=socket.gethostname(),
            status=status_of(check.exact, check.reproducible), floor_equal=check.reproducible,
            continuation_equal=None, recapture_equal=None, **divergence_fields(check.divergence),
            reason=check.summary(), timings={"composition_check_ms": check.ms})
        return row.id


@dataclass(frozen=True)
class CachePolicy:
    refusal: str | None  # why the cache must not serve this prompt here (None: it may)
    granule: int  # where a stored prefix may end: multiples of this (the chunk: only chunk boundaries)
    attestation_id: int | None


def cache_policy(rt: Runtime, engine: GraftEngine, n_prompt: int) -> CachePolicy:
    """Whether the prompt cache may serve this prompt here, and at which boundaries prefixes may end."""
    c = engine.config.prefill_chunk
    swa = engine.model.n_swa
    if swa and n_prompt > swa:
        return CachePolicy(f"sliding_window: the model attends over a window of {swa} tokens and the prompt is "
                           f"{n_prompt}; a prefix restored past the window is not exact with swa_full off", c, None)
    key = f"composition|{engine.fingerprint.id}|{engine.profile(c).id}"
    entry = rt.memo.get(key)
    if not isinstance(entry, tuple):
        check = composition_check(engine)
        entry = (check, record_check(rt, engine, check))
        rt.memo[key] = entry
    check, attestation_id = entry
    if not check.exact:
        return CachePolicy("composition_not_exact: on this machine a restored prefix followed by the rest of the "
                           f"prompt is not byte-equal to a fresh prefill (fresh {check.fresh_sha256[:12]}, "
                           f"composed {check.splits[0].composed_sha256[:12]}"
                           f"{'' if check.reproducible else ', and fresh is not reproducible'}; attestation "
                           f"{attestation_id})", c, attestation_id)
    return CachePolicy(None, check.granule, attestation_id)
