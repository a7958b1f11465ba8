"""scripts/device-check.sh's records on a CPU: a stage that dies keeps the line that says why (the H200 runs lost
`ggml-cuda.cu:109: CUDA error`'s own message in the middle of a long stderr), the batch probe runs one process per
configuration and the report names the one that died without losing the others, and the probe's configuration
words map to the (flash attention, unified KV) pairs it runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.batch_probe import BatchProbeRequest, probe_configs
from bench.device_report import build_report, error_lines, stage_status

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

# what a llama.cpp CUDA abort leaves: a long log, the error in the middle, then the backtrace
CRASH = "\n".join(
    [f"llama_context: layer {i} assigned to device CUDA0" for i in range(120)]
    + ["CUDA error: an illegal memory access was encountered",
       "  current device: 0, in function ggml_backend_cuda_synchronize at ggml-cuda.cu:2628",
       "  cudaStreamSynchronize(cuda_ctx->stream())",
       "/tmp/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:109: CUDA error"]
    + [f"#{i} 0x7f00 in libggml-base.so" for i in range(60)])


def test_the_error_line_of_a_crash_is_kept_wherever_it_is() -> None:
    status = stage_status(134, 12, 45, CRASH)
    assert any("illegal memory access" in line for line in status["error_lines"])
    assert any("ggml-cuda.cu:109" in line for line in status["error_lines"])
    assert "illegal memory access" not in status["stderr_tail"]  # what the head and tail alone would have lost


def test_error_lines_are_bounded_first_and_last_kept() -> None:
    text = "\n".join(f"error: number {i}" for i in range(100))
    lines = error_lines(text, keep=10)
    assert lines[0] == "error: number 0" and lines[-1] == "error: number 99" and "[...]" in lines
    assert len(lines) == 11


def _probe_record(flash_attn: bool, kv: str, equal: int) -> dict[str, object]:
    result = {"prompts": "short", "lengths": [9], "threads": 2, "flash_attn": flash_attn, "kv": kv,
              "all": {"positions_equal": equal, "positions": 8, "states_equal": 1, "states": 1}}
    return {"benchmark": "batch-probe", "model": "m", "steps": 8, "chunk": 64, "results": [result]}


def test_a_probe_configuration_that_crashed_is_named_and_the_others_kept(tmp_path: Path) -> None:
    (tmp_path / "batch-probe-fa-off-streams.json").write_text(json.dumps(_probe_record(False, "streams", 8)))
    (tmp_path / "batch-probe-fa-off-unified.json").write_text(json.dumps(_probe_record(False, "unified", 8)))
    (tmp_path / "batch-probe-fa-on-streams.json").write_text(json.dumps(_probe_record(True, "streams", 8)))
    (tmp_path / "batch-probe-fa-on-unified.json").write_text("")  # the process aborted before printing
    stages = {"batch-probe-fa-on-unified": stage_status(134, 3, 45, CRASH)}
    (tmp_path / "stages.json").write_text(json.dumps(stages))
    report = build_report(tmp_path)
    off, on = report["flash_attn_off"]["batch_invariance"], report["flash_attn_on"]["batch_invariance"]
    assert off["all_rows_invariant_in_full_batches"] is True and not off["failed"]
    assert on["all_rows_invariant_in_full_batches"] is None  # unknown: a configuration died, not "invariant"
    failed = on["failed"]["batch-probe-fa-on-unified"]
    assert failed["rc"] == 134 and any("illegal memory access" in line for line in failed["error_lines"])
    assert len(on["rows"]) == 1 and len(report["batch_probe"]["results"]) == 3


def test_record_runs_without_llama_cpp(tmp_path: Path) -> None:
    """The record step runs before the CUDA build exists (the wheels stage) and after a crash: it must not import
    the engine."""
    err = tmp_path / "x.err"
    err.write_text(CRASH)
    code = ("import sys, runpy; sys.modules['llama_cpp'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_module('bench.device_report', run_name='__main__')")
    subprocess.run([sys.executable, "-c", code, "bench.device_report", "record", "--stages",
                    str(tmp_path / "stages.json"), "--err", str(err), "x", "134", "3", "45"],
                   check=True, cwd=ROOT, timeout=60)
    status = json.loads((tmp_path / "stages.json").read_text())["x"]
    assert status["rc"] == 134 and status["timed_out"] is False and status["error_lines"]


def test_probe_configuration_words() -> None:
    assert probe_configs() == BatchProbeRequest().configs == ((False, False), (True, False), (False, True),
                                                              (True, True))
    assert probe_configs("on", "unified") == ((True, True),)
    assert probe_configs("off", "streams") == ((False, False),)
    with pytest.raises(ValueError, match="--flash-attn takes"):
        probe_configs("yes", "both")
    with pytest.raises(ValueError, match="--kv takes"):
        probe_configs("on", "paged")


def test_a_skipped_or_missing_configuration_makes_invariance_unknown(tmp_path: Path) -> None:
    """The review's case: a configuration skipped (the budget spent, DEVICE_CHECK_ONLY) writes no file; the report
    must not call the setting invariant on the configurations that ran."""
    (tmp_path / "batch-probe-fa-on-streams.json").write_text(json.dumps(_probe_record(True, "streams", 8)))
    stages = {"batch-probe-fa-on-unified": stage_status(0, 0, 0, "", "budget spent")}
    (tmp_path / "stages.json").write_text(json.dumps(stages))
    on = build_report(tmp_path)["flash_attn_on"]["batch_invariance"]
    assert on["all_rows_invariant_in_full_batches"] is None
    assert on["failed"]["batch-probe-fa-on-unified"]["skipped"] == "budget spent"


def test_lines_that_only_mention_errors_are_not_error_lines() -> None:
    assert error_lines("no errors found\nerror_count=0\nmirror: ok") == []
    assert error_lines("ValueError: bad\nerror: x\nRuntimeError") == ["ValueError: bad", "error: x", "RuntimeError"]
