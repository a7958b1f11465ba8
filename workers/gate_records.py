"""Recording the gate's verdicts as attestations: for a probe (`kvgraft gate`) or for a stored block."""

from __future__ import annotations

import socket
from typing import Any

from engine.check import GraftCheck
from engine.gate import GateResult
from engine.logits import Divergence
from store.repository import record_attestation
from workers.runtime import Runtime


def status_of(byte_exact: bool, floor_equal: bool) -> str:
    """attested: the graft is byte-exact and the configuration deterministic; functional: it restores and runs
    but is not proven byte-exact here."""
    return "attested" if byte_exact and floor_equal else "functional"


def divergence_fields(div: Divergence) -> dict[str, Any]:
    return {"byte_exact": div.byte_equal, "kl_mean": div.kl_mean, "kl_max": div.kl_max,
            "argmax_agree": div.argmax_agree_text, "max_abs_diff": div.max_abs_diff}


def check_fields(check: GraftCheck, floor_equal: bool) -> dict[str, Any]:
    """The attestation columns of one graft check (engine/check.py) and its fresh floor."""
    failures = check.failures() + ([] if floor_equal else ["fresh floor: two fresh computations differ"])
    return {**divergence_fields(check.divergence), "status": status_of(check.passed, floor_equal),
            "floor_equal": floor_equal, "continuation_equal": check.continuation_equal,
            "recapture_equal": check.recapture_equal, "reason": "; ".join(failures) or None}


def record_gate_result(rt: Runtime, result: GateResult) -> int:
    """Store a `kvgraft gate` run as a probe attestation (no block); returns its id."""
    with rt.session() as session:
        row = record_attestation(
            session, block_id=None, probe_digest=result.fresh_sha256, fingerprint=result.fingerprint,
            profile=result.profile, profile_id=result.profile_id, host=socket.gethostname(),
            status=status_of(result.passed, result.fresh_floor_equal), floor_equal=result.fresh_floor_equal,
            continuation_equal=result.continuation_equal, recapture_equal=result.recapture_equal,
            byte_exact=result.byte_exact, kl_mean=result.kl_mean, kl_max=result.kl_max,
            argmax_agree=result.argmax_agree, max_abs_diff=result.max_abs_diff,
            reason="; ".join(result.failures) or None, timings=result.timings_ms)
        return row.id
