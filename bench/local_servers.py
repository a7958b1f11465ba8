"""Stand-in servers on loopback for `kvgraft bench` and the test fixtures: a moto S3 server (real HTTP), free ports,
stopping a process group. Not part of a deployment (docker-compose.yml runs MinIO); moto is a dev dependency."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

STARTUP_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def moto_command(port: int) -> list[str]:
    exe = Path(sys.executable).with_name("moto_server")
    prog = [str(exe)] if exe.exists() else [sys.executable, "-m", "moto.server"]
    return [*prog, "-H", "127.0.0.1", "-p", str(port)]


def _answers_http(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer means the server is up
    except OSError:
        return False


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


@contextlib.contextmanager
def moto_server(log_dir: Path | None = None) -> Iterator[str]:
    """Start `moto_server` on a free loopback port; yield its endpoint URL; stop its process group on exit."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    directory = log_dir or Path(tempfile.mkdtemp(prefix="kvgraft-moto-"))
    log_path = directory / f"moto-{port}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(moto_command(port), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _answers_http(url):
            if proc.poll() is not None:
                raise RuntimeError(f"moto_server exited with {proc.returncode}: "
                                   f"{log_path.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"moto_server did not answer at {url} within {STARTUP_TIMEOUT_S} s")
            time.sleep(0.1)
        yield url
    finally:
        stop_process_group(proc)
