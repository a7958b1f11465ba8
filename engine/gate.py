"""The byte-exactness gate: the paper's test, run on this machine under the pinned configuration.

Fresh computation twice (the self-comparison floor), capture of [0, N), a round trip through a file, a restore
into a fresh context over a separately loaded model object, the query at [N, N+Q), and the comparison with fresh.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import structlog

from engine.graft import GraftEngine, KVSnapshot, with_payload
from engine.logits import compare
from engine.texts import sample_tokens

log = structlog.get_logger(__name__)

Roundtrip = Callable[[KVSnapshot], KVSnapshot]


@dataclass(frozen=True)
class GateRequest:
    n_tokens: int = 256
    n_query: int = 8
    separate_model: bool = True  # restore over a second, separately loaded model object


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
    failures: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return self.byte_exact and self.fresh_floor_equal

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

    fresh_a = timed("fresh_ms", lambda: engine.fresh(prefix, query))
    fresh_b = timed("fresh_again_ms", lambda: engine.fresh(prefix, query))
    snapshot = timed("capture_ms", lambda: engine.capture(prefix, n_query=q))
    stored = timed("persist_ms", lambda: roundtrip(snapshot))
    restorer = timed("load_second_model_ms", engine.sibling) if request.separate_model else engine
    try:
        grafted = timed("restore_query_ms", lambda: restorer.graft(stored, query))
    finally:
        if restorer is not engine:
            restorer.close()

    floor = compare(fresh_a, fresh_b)
    div = compare(fresh_a, grafted)
    failures = []
    if not floor.byte_equal:
        failures.append("fresh_floor: two fresh computations differ, so this configuration is not deterministic")
    if not div.byte_equal:
        failures.append(
            f"graft: {div.positions_equal}/{div.positions} query positions byte-equal "
            f"(KL mean {div.kl_mean:.3g}, max {div.kl_max:.3g})"
        )
    fp = engine.fingerprint
    profile = engine.profile(q)
    result = GateResult(
        model=engine.name, n_tokens=n, n_query=q,
        byte_exact=div.byte_equal, fresh_floor_equal=floor.byte_equal,
        graft_sha256=grafted.sha256(), fresh_sha256=fresh_a.sha256(),
        kl_mean=div.kl_mean, kl_max=div.kl_max, argmax_agree=div.argmax_agree_text,
        max_abs_diff=div.max_abs_diff, positions_equal=f"{div.positions_equal}/{div.positions}",
        state_bytes=len(snapshot.payload), fingerprint=fp.id, fingerprint_parts=fp.parts(),
        profile=profile.as_dict(), profile_id=profile.id, timings_ms=timings, failures=tuple(failures),
    )
    log.info("gate.finished", model=engine.name, n_tokens=n, n_query=q, byte_exact=result.byte_exact,
             floor=result.fresh_floor_equal, fingerprint=fp.id)
    return result
