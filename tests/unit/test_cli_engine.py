"""The engine commands through the real `kvgraft` CLI (in-process with Typer's runner; one real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli import app

pytestmark = pytest.mark.unit
runner = CliRunner()


def _json(args: list[str], code: int = 0) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def test_gate_json_has_the_contract_keys_and_exit_0() -> None:
    record = _json(["gate", "--model", "tiny", "--tokens", "120", "--query", "8", "--json"])
    assert {"byte_exact", "fresh_floor_equal", "graft_sha256", "fresh_sha256", "kl_mean", "kl_max",
            "argmax_agree", "max_abs_diff", "fingerprint", "profile", "timings_ms"} <= set(record)
    assert record["byte_exact"] is True and record["argmax_agree"] == "8/8"
    assert record["graft_sha256"] == record["fresh_sha256"]


def test_fingerprint_json() -> None:
    record = _json(["fingerprint", "--model", "tiny", "--json"])
    assert len(record["fingerprint"]) == 32
    assert {"gguf_sha256", "llama_cpp_python", "system_info", "flash_attn", "type_k", "backend"} <= set(
        record["parts"])
    assert {"n_batch", "n_ubatch", "prefill_chunk", "threads", "query_class", "swa_full"} <= set(record["profile"])
    assert _json(["fingerprint", "--model", "tiny", "--json"]) == record  # stable


def test_regimes_json_and_plot(tmp_path: Path) -> None:
    plot = tmp_path / "r.png"
    record = _json(["regimes", "--model", "tiny", "--prompts", "3", "--json", "--plot", str(plot)])
    assert set(record) == {"model", "fingerprint", "profile", "regimes"}
    assert record["regimes"]["own_position"]["samples"] >= 20
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_model_exits_2_with_a_message() -> None:
    result = runner.invoke(app, ["gate", "--model", "/nonexistent/model.gguf", "--json"])
    assert result.exit_code == 2
    assert "no model" in result.stderr and result.stdout == ""


def test_a_file_that_is_not_a_gguf_is_refused_cleanly(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"GGUF" + b"\x00" * 64)
    result = runner.invoke(app, ["fingerprint", "--model", str(bogus)])
    assert result.exit_code == 2 and "could not load" in result.stderr


def test_bench_restore_json_shape_on_tiny() -> None:
    record = _json(["bench", "restore", "--model", "tiny", "--tokens", "64,256", "--runs", "1", "--json"])
    rows = record["results"]
    assert [r["tokens"] for r in rows] == [64, 256]
    for r in rows:
        assert {"tokens", "prefill_ms", "restore_ms", "peer_restore_ms", "state_bytes", "speedup_vs_prefill",
                "speedup_vs_peer", "restore_peak_rss_growth_bytes"} <= set(r)
        assert r["next_token_logits_equal"] is True
        assert r["state_bytes"] > 0


def test_console_script_runs_in_a_real_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "services.cli", "gate", "--model", "tiny", "--tokens", "64",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["byte_exact"] is True


def test_gate_default_spans_two_prefill_chunks_and_checks_continuation_and_recapture() -> None:
    record = _json(["gate", "--model", "tiny", "--json"])
    assert record["n_tokens"] > 512  # the prefill chunk
    assert record["continuation_equal"] is True and "16 greedy tokens equal" in record["continuation_detail"]
    assert record["recapture_equal"] is True and "bytes equal" in record["recapture_detail"]


@pytest.mark.parametrize("broken", ["continuation", "recapture"])
def test_gate_exits_1_when_the_continuation_or_the_recapture_differs(
        broken: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import engine.gate as gate

    real = gate.check_graft

    def differing(*args: object, **kwargs: object) -> object:
        check = real(*args, **kwargs)  # type: ignore[arg-type]
        return dataclasses.replace(check, **{f"{broken}_equal": False, f"{broken}_detail": "injected difference"})

    monkeypatch.setattr(gate, "check_graft", differing)
    result = runner.invoke(app, ["gate", "--model", "tiny", "--tokens", "120", "--json", "--no-record"])
    assert result.exit_code == 1
    record = json.loads(result.stdout)
    assert record[f"{broken}_equal"] is False and record["byte_exact"] is True and record["passed"] is False
    assert any(f.startswith(broken) for f in record["failures"])


def test_the_graft_check_compares_every_continuation_step(tiny_engine: object) -> None:
    import dataclasses

    from engine.check import check_graft, reference_run
    from engine.texts import sample_tokens

    tokens = sample_tokens(tiny_engine, 48)  # type: ignore[arg-type]
    prefix, probe = tokens[:40], tokens[40:]
    reference = reference_run(tiny_engine, prefix, probe)  # type: ignore[arg-type]
    snapshot = tiny_engine.capture(prefix, n_query=8)  # type: ignore[attr-defined]
    assert check_graft(tiny_engine, snapshot, reference).passed  # type: ignore[arg-type]
    for step in (0, 7, 15):
        digests = list(reference.continuation_sha256)
        digests[step] = "0" * 64
        mutated = dataclasses.replace(reference, continuation_sha256=tuple(digests))
        check = check_graft(tiny_engine, snapshot, mutated)  # type: ignore[arg-type]
        assert check.byte_exact and not check.continuation_equal and f"step {step} of 16" in check.continuation_detail


def test_a_bug_surfaces_with_its_traceback_under_debug_and_as_one_line_otherwise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def buggy(*args: object, **kwargs: object) -> None:
        raise RuntimeError("an internal invariant broke")

    monkeypatch.setattr("services.cli_store.parse_age", buggy)
    plain = runner.invoke(app, ["blocks", "gc", "--older-than", "1h"])
    assert plain.exit_code == 2 and "error: an internal invariant broke" in plain.stderr
    debug = runner.invoke(app, ["--log-level", "debug", "blocks", "gc", "--older-than", "1h"])
    assert debug.exit_code == 1 and isinstance(debug.exception, RuntimeError)
