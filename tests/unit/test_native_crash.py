"""A native crash ends in a reason, never a hang or a dead caller: the supervised child (workers.supervise), the
setup self-check reporting a decode that dies, and `kvgraft run` killed mid-problem and then continued.

The crashes here are real signals raised natively inside the child (libc `raise`, or SIGKILL from outside, as the
kernel's OOM killer would send), after real llama.cpp work on the tiny model."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from workers.selfcheck import run_selfcheck, selfcheck_child
from workers.supervise import ChildError, NativeCrashError, describe_signal, run_in_child

pytestmark = pytest.mark.unit


def _native_raise(signum: int) -> None:
    getattr(ctypes.CDLL(None), "raise")(signum)  # libc raise(): the signal arrives from native code


def _decode_then_die(emit: Any, signum: int) -> None:
    from engine.graft import EngineConfig, GraftEngine
    from workers.settings import load_settings

    engine = GraftEngine.load("tiny", EngineConfig(threads=1), cache_dir=load_settings().cache_dir)
    emit({"step": "decode", "model": engine.name})
    ctx = engine.open_context()
    engine.prefill_for_generation(ctx, engine.tokenize("the quick brown fox"))
    _native_raise(signum)


def _raise_value_error(emit: Any) -> None:
    emit({"step": "parse"})
    raise ValueError("line 3: 'answer' must be a number or a string")


def _selfcheck_whose_decode_dies(emit: Any, model: str | None, n_tokens: int) -> dict[str, Any]:
    """The real self-check, over a build whose decode dies natively (as an AMX build under a VM does)."""
    from engine.graft import GraftEngine

    real = GraftEngine.prefill_for_generation

    def dying(self: GraftEngine, *args: Any, **kwargs: Any) -> Any:
        real(self, *args, **kwargs)
        _native_raise(signal.SIGILL)

    GraftEngine.prefill_for_generation = dying  # type: ignore[method-assign]
    return selfcheck_child(emit, model, n_tokens)


@pytest.mark.parametrize("signum", [signal.SIGILL, signal.SIGSEGV])
def test_a_native_crash_in_the_child_is_reported_with_its_signal_and_last_step(signum: int) -> None:
    events: list[dict[str, Any]] = []
    with pytest.raises(NativeCrashError) as caught:
        run_in_child(_decode_then_die, signum, on_event=events.append, timeout_s=120)
    crash = caught.value
    assert crash.signum == signum
    assert crash.last_event == {"step": "decode", "model": "tiny"} == events[-1]
    assert signal.Signals(signum).name in crash.reason
    assert crash.trace_path is not None and "Fatal Python error" in Path(crash.trace_path).read_text()
    Path(crash.trace_path).unlink()


def test_a_python_error_in_the_child_comes_back_as_an_error_not_a_crash() -> None:
    with pytest.raises(ChildError) as caught:
        run_in_child(_raise_value_error, timeout_s=60)
    assert caught.value.kind == "ValueError" and "line 3" in str(caught.value)


def test_signal_descriptions_name_the_cause() -> None:
    assert describe_signal(signal.SIGILL).startswith("SIGILL (illegal instruction")
    assert "out of memory" in describe_signal(signal.SIGKILL)
    assert describe_signal(200) == "signal 200"


def test_the_self_check_passes_on_the_tiny_model() -> None:
    report = run_selfcheck("tiny", n_tokens=40)
    assert report.ok, report.line()
    assert report.steps == ("library", "load", "decode", "gate")
    assert report.gate is not None and report.gate["byte_exact"] and report.gate["fresh_floor_equal"]
    assert "AVX" in report.system_info or "NEON" in report.system_info or "CPU" in report.system_info


def test_the_self_check_reports_a_model_whose_decode_dies_instead_of_crashing() -> None:
    report = run_selfcheck("tiny", n_tokens=40, child=_selfcheck_whose_decode_dies)
    assert not report.ok
    assert report.steps == ("library", "load", "decode")
    assert report.signal is not None and report.signal.startswith("SIGILL")
    line = report.line()
    assert "\n" not in line
    assert "while decoding" in line and "SIGILL" in line
    assert report.system_info and report.system_info in line  # the library's instruction-set flags
    assert report.remedy and "remedy:" in line
    if report.trace_path:
        Path(report.trace_path).unlink()


def test_the_selfcheck_command_exits_non_zero_with_one_line_on_a_bad_model(data_dir: Path) -> None:
    bad = data_dir.parent / "not-a-model.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(64))
    proc = subprocess.run([sys.executable, "-m", "services.cli", "selfcheck", "--model", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("{")]
    assert len(lines) == 1 and lines[0].startswith("self-check failed:"), proc.stderr


# -- kvgraft run: killed mid-problem, then continued ------------------------------------------------------------

def _problems(path: Path) -> Path:
    lines = [{"id": "quick-1", "question": "A box holds 3 pens. How many pens are in 4 boxes?", "answer": 12,
              "solution": "print(3 * 4)"},
             {"id": "slow-2", "question": "A crate holds 6 pears. How many pears are in 5 crates?", "answer": 30,
              "solution": "import time\ntime.sleep(4)\nprint(6 * 5)"},
             {"id": "quick-3", "question": "A bag holds 7 plums. How many plums are in 2 bags?", "answer": 14,
              "solution": "print(7 * 2)"}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def _spawned_children(pid: int) -> list[int]:
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(k) for k in kids if "spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes().decode(errors="replace")]


def _generations_of(db: Path, external_id: str) -> int:
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(
                "SELECT count(*) FROM generations g JOIN problems p ON p.id = g.problem_id "
                "WHERE p.external_id = :x"), {"x": external_id}).scalar_one())
    finally:
        engine.dispose()


def _problem_status(db: Path, external_id: str) -> str | None:
    if not db.exists():
        return None
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT status FROM problems WHERE external_id = :x"),
                                {"x": external_id}).scalar()
    except sa.exc.OperationalError:
        return None  # the schema is not there yet
    finally:
        engine.dispose()


def test_run_killed_mid_problem_names_it_and_the_same_command_continues(data_dir: Path, tmp_path: Path) -> None:
    problems = _problems(tmp_path / "problems.jsonl")
    db = data_dir / "kvgraft.db"
    cmd = [sys.executable, "-m", "services.cli", "run", str(problems), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while _problem_status(db, "quick-1") != "solved":  # then slow-2 is being solved (a 4 s reference program)
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "quick-1 was never solved"
            time.sleep(0.05)
        time.sleep(0.5)
        children = _spawned_children(proc.pid)
        assert len(children) == 1, children
        os.kill(children[0], signal.SIGKILL)  # what the kernel's OOM killer does
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, (stdout, stderr)
    assert stdout == ""
    message = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(message) == 1, stderr
    assert "SIGKILL" in message[0] and "'slow-2' (2/3)" in message[0] and "run the same command again" in message[0]
    assert _problem_status(db, "quick-1") == "solved" and _problem_status(db, "slow-2") == "pending"

    again = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["resumed"] is True
    assert [r["id"] for r in report["problems"]] == ["quick-1", "slow-2", "quick-3"]
    assert [r["status"] for r in report["problems"]] == ["deposited"] * 3
    assert [r["recurrence_route"] for r in report["problems"]] == ["recurrence"] * 3  # tiny: routes, not answers
    assert _generations_of(db, "quick-1") == 1  # solved once, not again
