"""A benchmark stopped with SIGTERM (what `kill`, systemd and CI send) stops the servers it started: the moto S3
server and the `kvgraft serve` pods of `kvgraft bench prompt-cache` are gone with it, none left computing."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:  # field 4: the parent's pid
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_stops_the_servers_a_bench_started(data_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "KVGRAFT_PROMPT_CHUNK_TOKENS": "32"}
    log = (tmp_path / "bench.log").open("wb")
    started: set[int] = set()
    bench = subprocess.Popen([sys.executable, "-m", "services.cli", "bench", "prompt-cache", "--model", "tiny",
                              "--prefix-tokens", "3000", "--samples", "3", "--requests", "20", "--json"],
                             env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while len(_children(bench.pid)) < 2:  # moto and the first pod
            assert bench.poll() is None, (tmp_path / "bench.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the bench did not start its servers"
            time.sleep(0.2)
        started = _children(bench.pid)
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=60) != 0
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in started if _alive(p)], "servers outlived the bench"
    finally:
        if bench.poll() is None:
            bench.kill()
        for pid in started:  # a failed run leaves nothing behind either
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
        log.close()
