"""The byte-exactness gate: the paper's test, run on this machine under the pinned configuration.

Fresh computation twice (the self-comparison floor), capture of [0, N), a round trip through a file, then the one
graft check (engine/check.py) over a separately loaded model object: the restored state re-captured and compared
with the payload, the Q-token query at [N, N+Q), and at least 16 greedy tokens decoded one at a time after it, each
compared with the fresh computation's. The default N spans more than one prefill chunk.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import structlog

from engine.check import DEFAULT_CONTINUATION, check_graft, floor_holds, reference_run
from engine.graft import GraftEngine, KVSnapshot, with_payload
from engine.texts import sample_tokens

log = structlog.get_logger(__name__)

Roundtrip = Callable[[KVSnapshot], KVSnapshot]


DEFAULT_GATE_TOKENS = 640  # more than one 512-token prefill chunk


@dataclass(frozen=True)
class GateRequest:
    n_tokens: int = DEFAULT_GATE_TOKENS
    n_query: int = 8
    separate_model: bool = True  # restore over a second, separately loaded model object
    continuation: int = DEFAULT_CONTINUATION  # greedy tokens decoded one at a time after the query


@dataclass(frozen=True)
class GateResult:
    model: str
    n_tokens: int
    n_query: int
    byte_exact: bool
    fresh_floor_equal: bool
    graft_sha256: str
    fresh_sha256: str
    kl_mean: float
    kl_max: float
    argmax_agree: str
    max_abs_diff: float
    positions_equal: str
    state_bytes: int
    fingerprint: str
    fingerprint_parts: dict[str, Any]
    profile: dict[str, Any]
    profile_id: str
    timings_ms: dict[str, float]
    continuation_equal: bool = True
    continuation_detail: str = ""
    recapture_equal: bool = True
    recapture_detail: str = ""
    failures: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return self.byte_exact and self.fresh_floor_equal and self.continuation_equal and self.recapture_equal

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["failures"] = list(self.failures)
        d["passed"] = self.passed
        return d


def file_roundtrip(snapshot: KVSnapshot) -> KVSnapshot:
    """Write the payload to a temporary file and read it back (the engine-only persistence path)."""
    with tempfile.TemporaryDirectory(prefix="kvgraft-gate-") as tmp:
        path = Path(tmp) / "state.bin"
        path.write_bytes(snapshot.payload)
        return with_payload(snapshot, path.read_bytes())


def run_gate(engine: GraftEngine, request: GateRequest = GateRequest(), *,
             roundtrip: Roundtrip = file_roundtrip) -> GateResult:
    n, q = request.n_tokens, request.n_query
    if n + q > engine.config.n_ctx:
        raise ValueError(f"{n} + {q} tokens do not fit the context of {engine.config.n_ctx}")
    tokens = sample_tokens(engine, n + q)
    prefix, query = tokens[:n], tokens[n:]
    timings: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        out = fn()
        timings[name] = round((time.perf_counter() - t0) * 1000, 2)
        return out

    fresh_a = timed("fresh_ms", lambda: reference_run(engine, prefix, query, continuation=request.continuation))
    fresh_b = timed("fresh_again_ms", lambda: reference_run(engine, prefix, query,
                                                             continuation=request.continuation))
    snapshot = timed("capture_ms", lambda: engine.capture(prefix, n_query=q))
    stored = timed("persist_ms", lambda: roundtrip(snapshot))
    restorer = timed("load_second_model_ms", engine.sibling) if request.separate_model else engine
    try:
        check = timed("restore_query_ms", lambda: check_graft(restorer, stored, fresh_a))
    finally:
        if restorer is not engine:
            restorer.close()

    floor_equal = floor_holds(fresh_a, fresh_b)
    div = check.divergence
    failures = []
    if not floor_equal:
        failures.append("fresh_floor: two fresh computations differ, so this configuration is not deterministic")
    failures += check.failures()
    fp = engine.fingerprint
    profile = engine.profile(q)
    result = GateResult(
        model=engine.name, n_tokens=n, n_query=q,
        byte_exact=div.byte_equal, fresh_floor_equal=floor_equal,
        graft_sha256=check.graft_sha256, fresh_sha256=fresh_a.sha256(),
        kl_mean=div.kl_mean, kl_max=div.kl_max, argmax_agree=div.argmax_agree_text,
        max_abs_diff=div.max_abs_diff, positions_equal=f"{div.positions_equal}/{div.positions}",
        state_bytes=len(snapshot.payload), fingerprint=fp.id, fingerprint_parts=fp.parts(),
        profile=profile.as_dict(), profile_id=profile.id, timings_ms=timings,
        continuation_equal=check.continuation_equal, continuation_detail=check.continuation_detail,
        recapture_equal=check.recapture_equal, recapture_detail=check.recapture_detail, failures=tuple(failures),
    )
    log.info("gate.finished", model=engine.name, n_tokens=n, n_query=q, byte_exact=result.byte_exact,
             floor=result.fresh_floor_equal, continuation=result.continuation_equal,
             recapture=result.recapture_equal, fingerprint=fp.id)
    return result
