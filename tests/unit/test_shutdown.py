"""SIGTERM on a real `kvgraft serve` process: it stops admitting, stops its running checks, lets in-flight work
finish or cancels it within KVGRAFT_SHUTDOWN_GRACE_S, and exits 0 within the grace period plus 5 s."""

from __future__ import annotations

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


def _stops_within_grace(proc: subprocess.Popen[bytes], log: Path) -> None:
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(GRACE_S + 5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {GRACE_S + 5} s after SIGTERM:\n{log.read_text()[-3000:]}")
    assert rc == 0, (rc, log.read_text()[-3000:])
    assert time.monotonic() - t0 <= GRACE_S + 5


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
