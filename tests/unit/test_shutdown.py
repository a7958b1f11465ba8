"""SIGTERM on a real `kvgraft serve` process: it stops admitting, stops its running checks, lets in-flight work
finish or cancels it within KVGRAFT_SHUTDOWN_GRACE_S, and exits 0 within the grace period plus 5 s; the same for
`kvgraft run` stopped mid-batch, whose batch the same command then continues."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bench.local_servers import free_port

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]

GRACE_S = 2


def _serve(tmp_path: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = free_port()
    log = tmp_path / "serve.log"
    env = {**os.environ, "KVGRAFT_SHUTDOWN_GRACE_S": str(GRACE_S), "KVGRAFT_LOG_LEVEL": "INFO"}
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(port)], env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        try:
            httpx.get(f"{url}/healthz", timeout=1)
            return proc, url, log
        except httpx.HTTPError:
            time.sleep(0.02)


def _stops_within_grace(proc: subprocess.Popen[bytes], log: Path, grace_s: float = GRACE_S) -> None:
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(grace_s + 5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {grace_s + 5} s after SIGTERM:\n{log.read_text()[-3000:]}")
    assert rc == 0, (rc, log.read_text()[-3000:])
    assert time.monotonic() - t0 <= grace_s + 5


def test_sigterm_during_the_checks_ends_serve_with_0_within_the_grace(data_dir: Path, tmp_path: Path) -> None:
    proc, url, log = _serve(tmp_path)
    assert httpx.get(f"{url}/readyz").status_code == 503  # its checks are running
    _stops_within_grace(proc, log)


def test_sigterm_on_a_ready_serve_exits_0_within_the_grace(data_dir: Path, tmp_path: Path) -> None:
    proc, url, log = _serve(tmp_path)
    while httpx.get(f"{url}/readyz").status_code != 200:
        time.sleep(0.05)
    _stops_within_grace(proc, log)
    assert "serve.ready" in log.read_text()


RUN_GRACE_S = 1
# The middle problem's reference solution takes 6 s in the sandbox each time it runs (longer than the grace), so the
# test knows a problem is running when it sends SIGTERM: the first problem is solved, the middle one has started.
RUN_PROBLEMS = "\n".join(json.dumps(p) for p in [
    {"id": "first", "question": "A box holds 12 eggs. How many eggs are in 5 boxes?", "answer": 60,
     "solution": "print(12 * 5)"},
    {"id": "slow", "question": "Sam reads 15 pages a day for 7 days. How many pages?", "answer": 105,
     "solution": "import time\ntime.sleep(6)\nprint(15 * 7)"},
    {"id": "last", "question": "A crate holds 4 pears. How many pears are in 3 crates?", "answer": 12,
     "solution": "print(4 * 3)"},
])


def _statuses(data_dir: Path) -> dict[str, str]:
    import sqlalchemy as sa

    from store.db import ProblemRow, make_engine

    path = data_dir / "kvgraft.db"
    if not path.exists():
        return {}
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            return dict(conn.execute(sa.select(ProblemRow.external_id, ProblemRow.status)).all())  # type: ignore[arg-type]
    except sa.exc.OperationalError:  # the schema is not there yet
        return {}
    finally:
        engine.dispose()


@pytest.mark.timeout(240)
def test_sigterm_on_kvgraft_run_mid_batch_exits_0_and_the_same_command_continues(data_dir: Path,
                                                                                  tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(RUN_PROBLEMS)
    command = [sys.executable, "-m", "services.cli", "run", str(problems), "--samples", "1", "--json"]
    env = {**os.environ, "KVGRAFT_SHUTDOWN_GRACE_S": str(RUN_GRACE_S), "KVGRAFT_LOG_LEVEL": "INFO"}
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while _statuses(data_dir).get("first") != "solved":
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.1)
    time.sleep(1.0)  # `slow` is running its 6 s solution now
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGTERM)  # as a terminal or a service manager stops it: the whole process group
    try:
        rc = proc.wait(RUN_GRACE_S + 5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail(f"still running {RUN_GRACE_S + 5} s after SIGTERM:\n{log.read_text()[-3000:]}")
    took = time.monotonic() - t0
    assert rc == 0, (rc, log.read_text()[-3000:])
    assert took <= RUN_GRACE_S + 5
    assert "run the same command again" in log.read_text()
    assert _statuses(data_dir) == {"first": "solved", "slow": "pending", "last": "pending"}  # nothing new started
    again = subprocess.run(command, env=env, capture_output=True, timeout=180)
    assert again.returncode == 0, again.stderr.decode()[-3000:]
    report = json.loads(again.stdout)
    assert report["resumed"] is True
    assert {p["id"]: p["status"] for p in report["problems"]} == {"first": "deposited", "slow": "deposited",
                                                                   "last": "deposited"}


@pytest.mark.timeout(240)
def test_sigterm_on_kvgraft_requeue_working_in_process_exits_0_and_leaves_the_problem_pending(
        data_dir: Path, tmp_path: Path) -> None:
    """Without a broker `kvgraft requeue` works on pending problems itself; SIGTERM on the process alone (not its
    group: the sandboxed program is stopped with the run it belongs to)."""
    from workers.problems import parse_problems_jsonl
    from workers.queue.dispatch import submit_batch
    from workers.runtime import open_runtime

    with open_runtime() as rt:
        submit_batch(rt, parse_problems_jsonl(RUN_PROBLEMS.splitlines()[1]), team="t")
    time.sleep(1.1)
    command = [sys.executable, "-m", "services.cli", "requeue", "--older-than", "1s", "--json"]
    env = {**os.environ, "KVGRAFT_SHUTDOWN_GRACE_S": str(RUN_GRACE_S), "KVGRAFT_LOG_LEVEL": "INFO"}
    log = tmp_path / "requeue.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while '"solve.start"' not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.1)
    time.sleep(1.0)  # its 6 s solution is running
    _stops_within_grace(proc, log, grace_s=RUN_GRACE_S)
    assert "run it again" in log.read_text()
    assert _statuses(data_dir) == {"slow": "pending"}
    again = subprocess.run(command, env=env, capture_output=True, timeout=180)
    assert again.returncode == 0, again.stderr.decode()[-3000:]
    assert _statuses(data_dir) == {"slow": "solved"}
