"""When the prompt cache may be used, and where a stored prefix may end, decided by measurement on this machine,
not assumed.

When a serving process starts (in the background, never inside a request: workers/serving/service.py), unless a
verdict for the same fingerprint, profile and check version is recorded on this host, the composition check
computes a probe prompt of a few chunks twice fresh (the control: fresh computation must be reproducible here)
and then composed at several split points: the tokens before the split prefilled and captured, the block written
and read back, restored into another context, the rest prefilled on the absolute grid (the calls a fresh prefill
makes after that point). The cache is used only if the split at a chunk boundary is SHA-256-equal to fresh.

A cut inside a chunk changes how the rows around it are batched (partial calls where fresh makes a full one).
Whether that changes any byte depends on the kernels (KV bytes depend on the partition, docs/ENGINE.md; a
repacked matmul takes rows in groups of 4, flash attention tiles 64 query rows), so it is measured too, in the
shapes serving makes (see `_granule_trials`): the boundary granule is the first of GRANULES whose trials are all
exact; a prefix may end at a multiple of it (a chat message's end, rounded down), else only at chunk boundaries.
This is evidence from those shapes on this machine, not a proof for every position: every response reports its
first logits digest, and `kvgraft bench prompt-cache` compares each cached and capturing answer of a workload with
a fresh one. Joined chains are checked too (`_chained`): the probe's prefix stored as chunks the way the prompt
cache stores it (each chunk cut from a capture, the first from a capture of another prompt that shares only its
tokens, written as a prefix block and read back), the chunks joined, restored, the rest prefilled: the cache is used
only if that too is SHA-256-equal to fresh. The verdict is recorded as a `composition` probe attestation (its reason
names the chain trials), which later processes on this host reuse; until a process has a verdict, its prompts are
served without the cache. A sliding-window model is never served from the cache past its window (masked cells are not
restored exactly with swa_full off)."""

from __future__ import annotations

import hashlib
import socket
import time
from dataclasses import dataclass, replace

import numpy as np
import structlog

from engine import seqchunks
from engine.errors import DecodeError, EngineError
from engine.graft import GraftEngine, KVSnapshot
from engine.logits import Divergence, LogitsRows, compare
from store.repository import latest_attestation, record_attestation
from workers.gate_records import divergence_fields, status_of
from workers.runtime import MemoSlot, Runtime
from workers.seam import block_file_roundtrip
from workers.serving.prompt_cache import chunk_snapshot

log = structlog.get_logger(__name__)

PROBE_TEXT = ("The harbour master logs each ship that enters: its name, its cargo, the hour and the berth. "
              "Ledgers from older years are kept in the tower room, bound in blue cloth. ")
GRANULES = (1, 4)  # tried in order; the first whose splits are all exact is used
PROBE_TAIL = 7  # tokens after the last full chunk of the probe (a partial last call, as most prompts have)


@dataclass(frozen=True)
class SplitResult:
    cuts: tuple[int, ...]  # where the probe was captured, stored, read back and restored, in order
    granule: int  # the granule this trial tests (the chunk itself for the aligned split)
    exact: bool
    composed_sha256: str


@dataclass(frozen=True)
class ChainResult:
    ends: tuple[int, ...]  # the chunks' ends: [0, ends[0]), [ends[0], ends[1]), ... joined and restored
    exact: bool
    composed_sha256: str


@dataclass(frozen=True)
class TrimResult:
    cut: int
    exact: bool
    composed_sha256: str


@dataclass(frozen=True)
class CompositionCheck:
    reproducible: bool  # fresh vs fresh (the control)
    fresh_sha256: str
    chunk: int
    probe_tokens: int
    splits: tuple[SplitResult, ...]  # the aligned split first
    divergence: Divergence  # fresh vs the aligned composition
    ms: float
    trims: tuple[TrimResult, ...] = ()  # a resident context truncated to the prefix instead of a restore
    chains: tuple[ChainResult, ...] = ()  # a prefix restored from chunks joined (the prompt cache's chunked form)

    @property
    def trim_exact(self) -> bool:
        """A context that still holds a longer prompt sharing the prefix may be truncated to it and continued."""
        return self.exact and bool(self.trims) and all(t.exact for t in self.trims)

    @property
    def exact(self) -> bool:
        """The aligned composition (a prefix ending at a chunk boundary), whole and joined from chunks, is
        byte-equal to fresh here."""
        return (self.reproducible and all(s.exact for s in self.splits if s.granule == self.chunk)
                and bool(self.chains) and all(c.exact for c in self.chains))

    @property
    def granule(self) -> int:
        """A stored prefix may end at any multiple of this (the chunk when no finer trial was all exact)."""
        if not self.exact:
            return self.chunk
        for g in GRANULES:
            tried = [s for s in self.splits if s.granule == g]
            if tried and all(s.exact for s in tried):
                return g
        return self.chunk

    def summary(self) -> str:
        parts = [f"{'exact' if s.exact else 'differs'} at {'+'.join(map(str, s.cuts))} (granule {s.granule})"
                 for s in self.splits]
        parts += [f"joined chain of chunks ending {'+'.join(map(str, c.ends))}: {'exact' if c.exact else 'differs'}"
                  for c in self.chains]
        parts += [f"truncated at {t.cut}: {'exact' if t.exact else 'differs'}" for t in self.trims]
        return (f"composition check over {self.probe_tokens} tokens, chunk {self.chunk}: " + "; ".join(parts)
                + f"; fresh {'reproducible' if self.reproducible else 'NOT reproducible'}; boundary granule "
                + str(self.granule) + f"; resident context {'used' if self.trim_exact else 'not used'}")


def _fresh(engine: GraftEngine, tokens: list[int]) -> np.ndarray:
    with engine.pooled_context() as ctx:
        return engine.prefill_for_generation(ctx, tokens).copy()


def _composed(engine: GraftEngine, tokens: list[int], cuts: tuple[int, ...]) -> np.ndarray:
    """The probe computed as the prompt cache computes a prompt: up to each cut on the absolute grid (after the
    state restored at the cut before), captured there, written as a prefix block file and read back, restored
    into another context; then the rest, with the logits of the last token."""
    restored = None
    pos = 0
    for cut in cuts:
        with engine.pooled_context() as ctx:
            if restored is not None:
                engine.restore(ctx, restored, payload_verified=True)
            engine.prefill(ctx, tokens[pos:cut], pos0=pos, origin=0)
            snapshot = engine.snapshot(ctx, tokens[:cut], n_query=engine.config.prefill_chunk)
        restored = block_file_roundtrip(snapshot, kind="prefix")  # the bytes a prefix block carries, read back
        pos = cut
    with engine.pooled_context() as ctx:
        if restored is not None:
            engine.restore(ctx, restored, payload_verified=True)
        return engine.prefill_for_generation(ctx, tokens[pos:], pos0=pos, origin=0).copy()


def _captured(engine: GraftEngine, tokens: list[int]) -> KVSnapshot:
    with engine.pooled_context() as ctx:
        engine.prefill(ctx, tokens, pos0=0, origin=0)
        return engine.snapshot(ctx, tokens, n_query=engine.config.prefill_chunk)


def _chained(engine: GraftEngine, tokens: list[int], ends: tuple[int, ...]) -> np.ndarray:
    """The probe computed as the prompt cache computes a prompt whose prefix it stored as chunks: each chunk
    [a, b) cut (prompt_cache.chunk_snapshot, as a deposit cuts) from a capture that runs past b, the first from a
    capture of another prompt sharing only its tokens, every chunk written as a prefix block file and read back;
    the chunks joined (engine/seqchunks.join, as a lookup joins them), restored into another context; then the
    rest on the absolute grid, with the logits of the last token."""
    last = ends[-1]
    other = tokens[:ends[0]] + list(reversed(tokens[ends[0]:last + 1]))  # shares tokens[:ends[0]] only
    own = _captured(engine, tokens[:last + 1])
    chunks = []
    for i, (a, b) in enumerate(zip((0, *ends), ends, strict=False)):
        chunk = chunk_snapshot(_captured(engine, other) if i == 0 else own, a, b)
        chunks.append(block_file_roundtrip(chunk, kind="prefix"))
    payload = seqchunks.join([c.payload for c in chunks])
    joined = replace(chunks[0], tokens=tuple(t for c in chunks for t in c.tokens), pos_start=0, payload=payload,
                     payload_sha256=hashlib.sha256(payload).hexdigest())
    with engine.pooled_context() as ctx:
        engine.restore(ctx, joined, payload_verified=True)
        return engine.prefill_for_generation(ctx, tokens[last:], pos0=last, origin=0).copy()


def _trimmed(engine: GraftEngine, tokens: list[int], cut: int) -> np.ndarray:
    """The probe as a resident context computes it: the context still holds another prompt that shares the first
    `cut` tokens (and runs past the probe's end), truncated to `cut`, then the rest on the absolute grid. The
    truncated cells keep their stale bytes, masked out."""
    other = tokens[:cut] + list(reversed(tokens[cut:])) + tokens[:engine.config.prefill_chunk]
    with engine.pooled_context() as ctx:
        engine.prefill(ctx, other)
        ctx.truncate(cut)
        return engine.prefill_for_generation(ctx, tokens[cut:], pos0=cut, origin=0).copy()


def _trim_trial(engine: GraftEngine, tokens: list[int], cut: int, fresh: np.ndarray) -> TrimResult:
    try:
        trimmed = _trimmed(engine, tokens, cut)
    except DecodeError as exc:  # a memory that cannot drop a tail (a recurrent model's): not usable
        log.info("serve.truncation_refused", cut=cut, error=str(exc))
        return TrimResult(cut, False, "")
    return TrimResult(cut, trimmed.tobytes() == fresh.tobytes(), _sha(trimmed))


def _granule_trials(c: int, g: int) -> list[tuple[int, ...]]:
    """Cuts at multiples of g that are not multiples of 2g (so a coarser granule would not cover them), in the
    shapes serving makes: inside the first chunk (a short system prompt), just after a chunk boundary, just
    before one, inside the probe's partial last chunk, two cuts in one chunk (a restore and a capture between
    the same boundaries), and a cut in every chunk (several partial calls in one prompt)."""
    if 2 * g > c or g >= PROBE_TAIL:
        return []
    trials: list[tuple[int, ...]] = [(g,), (c + g,), (2 * c - g,), (2 * c + g,), (g, c + g, 2 * c + g)]
    if 3 * g < c:
        trials.append((c + g, c + 3 * g))
    return trials


def composition_check(engine: GraftEngine) -> CompositionCheck:
    c = engine.config.prefill_chunk
    tokens: list[int] = []
    while len(tokens) < 2 * c + PROBE_TAIL:
        tokens += engine.tokenize(PROBE_TEXT, add_special=not tokens)
    tokens = tokens[:2 * c + PROBE_TAIL]
    t0 = time.perf_counter()
    fresh, control = _fresh(engine, tokens), _fresh(engine, tokens)
    splits: list[SplitResult] = []

    def trial(cuts: tuple[int, ...], granule: int) -> np.ndarray:
        composed = _composed(engine, tokens, cuts)
        splits.append(SplitResult(cuts, granule, composed.tobytes() == fresh.tobytes(), _sha(composed)))
        return composed

    aligned = trial((2 * c,), c)
    if splits[0].exact:
        for g in GRANULES:
            for cuts in _granule_trials(c, g):  # every trial of a granule runs and is recorded
                trial(cuts, g)
            if all(s.exact for s in splits if s.granule == g):
                break
    if splits[0].exact:  # the aligned prefix stored as two chunks, joined at the chunk boundary
        ends = (c, 2 * c)
        chained = _chained(engine, tokens, ends)
        chains = (ChainResult(ends, chained.tobytes() == fresh.tobytes(), _sha(chained)),)
    else:
        chains = ()
    pos = len(tokens) - 1
    divergence = compare(LogitsRows(pos, fresh[None, :]), LogitsRows(pos, aligned[None, :]))
    result = CompositionCheck(fresh.tobytes() == control.tobytes(), _sha(fresh), c, len(tokens), tuple(splits),
                              divergence, 0.0, chains=chains)
    trims: list[TrimResult] = []
    if result.exact:  # a resident context truncated at chunk boundaries and where a message's end may be
        g = result.granule
        trims = [_trim_trial(engine, tokens, cut, fresh) for cut in sorted({g, c + g, 2 * c, 2 * c + g})
                 if cut < len(tokens)]
    result = replace(result, trims=tuple(trims), ms=round((time.perf_counter() - t0) * 1000, 1))
    log.info("serve.composition_checked", exact=result.exact, reproducible=result.reproducible,
             granule=result.granule, chains_exact=all(x.exact for x in chains) if chains else None,
             fingerprint=engine.fingerprint.id, chunk=c, ms=result.ms)
    return result


def _chain_note(check: CompositionCheck) -> str:
    if not check.chains:
        return ", joined chunks not tried"
    bad = [c for c in check.chains if not c.exact]
    return f", joined from chunks {bad[0].composed_sha256[:12]}" if bad else ""


def _sha(row: np.ndarray) -> str:
    return hashlib.sha256(row.tobytes()).hexdigest()


# in the attestation's profile: a verdict of another version is not reused (v2: joined chains are checked too)
CHECK_VERSION = "composition-check-v2"


@dataclass(frozen=True)
class CompositionVerdict:
    """What the composition check decided for one fingerprint and profile on this host: measured now, or read
    back from the `composition` attestation an earlier process on this host recorded (so a restart does not
    check again)."""

    exact: bool  # a prefix ending at a chunk boundary may be restored
    granule: int  # where a stored prefix may end: multiples of this
    resident: bool  # a context still holding the prefix may be truncated to it (CompositionCheck.trim_exact)
    refusal: str | None  # why the cache is off here (None: it may be used)
    attestation_id: int | None

    @classmethod
    def of(cls, check: CompositionCheck, attestation_id: int | None) -> CompositionVerdict:
        refusal = None if check.exact else (
            "composition_not_exact: on this machine a restored prefix followed by the rest of the prompt is not "
            f"byte-equal to a fresh prefill (fresh {check.fresh_sha256[:12]}, composed "
            f"{check.splits[0].composed_sha256[:12] if check.splits else '-'}{_chain_note(check)}"
            f"{'' if check.reproducible else ', and fresh is not reproducible'})")
        return cls(check.exact, check.granule, check.trim_exact, refusal, attestation_id)


def record_check(rt: Runtime, engine: GraftEngine, check: CompositionCheck) -> int:
    """The check as a probe attestation of the serving profile on this host (what an auditor reads, and what a
    later process on this host reuses: the granule and the resident verdict ride in its profile)."""
    profile = engine.profile(check.chunk)
    with rt.session() as s:
        row = record_attestation(
            s, kind="composition", block_id=None, probe_digest=check.fresh_sha256, fingerprint=engine.fingerprint.id,
            profile={**profile.as_dict(), "check": CHECK_VERSION, "granule": check.granule,
                     "resident": check.trim_exact},
            profile_id=profile.id, host=socket.gethostname(),
            status=status_of(check.exact, check.reproducible), floor_equal=check.reproducible,
            continuation_equal=None, recapture_equal=None, **divergence_fields(check.divergence),
            reason=check.summary(), timings={"composition_check_ms": check.ms})
        return row.id


@dataclass(frozen=True)
class CachePolicy:
    refusal: str | None  # why the cache must not serve this prompt here (None: it may)
    granule: int  # where a stored prefix may end: multiples of this (the chunk: only chunk boundaries)
    attestation_id: int | None
    resident: bool = False  # a context still holding the prefix may be truncated to it instead of a restore


COMPOSITION: MemoSlot[tuple[str, str], CompositionVerdict] = MemoSlot("composition")  # by fingerprint and profile


def _key(engine: GraftEngine) -> tuple[str, str]:
    return engine.fingerprint.id, engine.profile(engine.config.prefill_chunk).id


def recorded_verdict(rt: Runtime, engine: GraftEngine) -> CompositionVerdict | None:
    """The verdict this process already has, else the one recorded on this host for the same fingerprint, profile
    and check version (kept in the memo), else None."""
    key = _key(engine)
    known = rt.memo.get(COMPOSITION, key)
    if known is not None:
        return known
    with rt.session() as s:
        row = latest_attestation(s, block_id=None, fingerprint=key[0], profile_id=key[1], kind="composition",
                                 host=socket.gethostname())
        if row is None or (row.profile or {}).get("check") != CHECK_VERSION:
            return None
        c = engine.config.prefill_chunk
        exact = row.status == "attested"
        refusal = None if exact else (
            "composition_not_exact: on this machine a restored prefix followed by the rest of the prompt is not "
            f"byte-equal to a fresh prefill ({row.reason})")
        verdict = CompositionVerdict(exact, int(row.profile.get("granule", c)) if exact else c,
                                     exact and bool(row.profile.get("resident", False)), refusal, row.id)
    log.info("serve.composition_reused", attestation_id=verdict.attestation_id, exact=verdict.exact)
    return rt.memo.put(COMPOSITION, key, verdict)


def composition_verdict(rt: Runtime, engine: GraftEngine) -> CompositionVerdict:
    """The verdict for this engine's fingerprint and profile: known (this process, or recorded on this host), else
    measured now and recorded. Its decodes run wherever the process's compute runner puts them (the serving
    engine's checks: only while nothing is served)."""
    known = recorded_verdict(rt, engine)
    if known is not None:
        return known
    c = engine.config.prefill_chunk
    try:
        check = composition_check(engine)
    except EngineError as exc:  # a model whose state cannot be captured, restored or cut this way
        log.warning("serve.composition_failed", error=str(exc))
        return rt.memo.put(COMPOSITION, _key(engine), CompositionVerdict(
            False, c, False, f"composition_check_failed: {type(exc).__name__}: {exc}", None))
    attestation_id = None
    try:
        attestation_id = record_check(rt, engine, check)
    except Exception as exc:  # noqa: BLE001 - the verdict stands; only its audit row is missing
        log.warning("serve.composition_unrecorded", error=str(exc))
    return rt.memo.put(COMPOSITION, _key(engine), CompositionVerdict.of(check, attestation_id))


def unverified(rt: Runtime, engine: GraftEngine, reason: str) -> CompositionVerdict:
    """The verdict where the check could not run (the cache stays off, saying why), unless one is known."""
    return rt.memo.get(COMPOSITION, _key(engine)) or rt.memo.put(COMPOSITION, _key(engine), CompositionVerdict(
        False, engine.config.prefill_chunk, False, f"composition_check_failed: {reason}", None))


CHECKING = ("checking: the composition check has not finished on this host; served without the prompt cache "
            "(nothing restored, nothing stored) until it has")


def cache_policy(rt: Runtime, engine: GraftEngine, n_prompt: int) -> CachePolicy:
    """Whether the prompt cache may serve this prompt here, and at which boundaries prefixes may end: from the
    verdict this process holds (never computed inside a request: before it, the cache is off and says why)."""
    c = engine.config.prefill_chunk
    swa = engine.model.n_swa
    if swa and n_prompt > swa:
        return CachePolicy(f"sliding_window: the model attends over a window of {swa} tokens and the prompt is "
                           f"{n_prompt}; a prefix restored past the window is not exact with swa_full off", c, None)
    verdict = rt.memo.get(COMPOSITION, _key(engine))
    if verdict is None:
        return CachePolicy(CHECKING, c, None)
    if verdict.refusal is not None:
        return CachePolicy(verdict.refusal, c, verdict.attestation_id)
    sliding = bool(swa) and not engine.config.swa_full  # cells before the window may have been overwritten
    return CachePolicy(None, verdict.granule, verdict.attestation_id, verdict.resident and not sliding)
