"""The real default model (SmolLM2-135M-Instruct, Q4_1), run the way the product runs it: in a supervised child
process (workers.supervise), so that a native crash of this build (SIGILL from AMX kernels under a VM, a segfault)
fails the test that hit it with a readable reason instead of killing pytest with no summary. Serial and small."""

from __future__ import annotations

from typing import Any

import pytest

from workers.selfcheck import run_selfcheck
from workers.supervise import NativeCrashError, run_in_child

pytestmark = pytest.mark.model


def in_child(fn: Any, *args: Any) -> Any:
    try:
        return run_in_child(fn, *args, timeout_s=240)
    except NativeCrashError as crash:
        pytest.fail(f"the default model crashed natively: llama.cpp {crash.reason} during {crash.last_event} "
                    f"(run `kvgraft selfcheck`; trace: {crash.trace_path})", pytrace=False)


def _gate(emit: Any, n_tokens: int) -> dict[str, Any]:
    from engine.gate import GateRequest, run_gate
    from engine.graft import EngineConfig, GraftEngine
    from workers.seam import block_file_roundtrip

    emit({"step": "load"})
    with GraftEngine.load("smollm2-135m", EngineConfig(threads=2)) as engine:
        emit({"step": "gate", "n_tokens": n_tokens})
        return run_gate(engine, GateRequest(n_tokens=n_tokens, n_query=8), roundtrip=block_file_roundtrip).as_dict()


def _relocation(emit: Any) -> dict[str, Any]:
    from engine.graft import EngineConfig, GraftEngine
    from engine.logits import compare
    from engine.texts import sample_tokens

    emit({"step": "load"})
    with GraftEngine.load("smollm2-135m", EngineConfig(threads=2)) as engine:
        emit({"step": "relocation"})
        tokens = sample_tokens(engine, 48 + 4)
        prefix, query = tokens[:48], tokens[48:]
        snapshot = engine.capture(prefix, n_query=4)
        own = compare(engine.fresh(prefix, query), engine.graft(snapshot, query))
        moved = compare(engine.fresh(prefix, query, pos0=64), engine.graft(snapshot, query, shift=64))
        return {"own_equal": own.byte_equal, "moved_equal": moved.byte_equal, "moved_kl_max": moved.kl_max}


def test_the_setup_self_check_passes_on_the_default_model() -> None:
    report = run_selfcheck()
    assert report.ok, report.line()
    assert report.model == "smollm2-135m" and report.details["decoded_tokens"] > 0


def test_gate_is_byte_exact_on_the_default_model() -> None:
    result = in_child(_gate, 48)
    assert result["fresh_floor_equal"], result["failures"]
    assert result["byte_exact"], result["failures"]
    assert result["graft_sha256"] == result["fresh_sha256"]
    assert result["fingerprint_parts"]["architecture"] == "llama"
    # SmolLM2: 30 layers x 3 KV heads x (64 + 64) x f16 = 23,040 B/token, plus a little cell metadata
    assert 23040 * 48 <= result["state_bytes"] < 23100 * 48


def test_relocation_is_not_exact_on_the_default_model() -> None:
    result = in_child(_relocation)
    assert result["own_equal"]
    assert not result["moved_equal"] and result["moved_kl_max"] < 0.05
