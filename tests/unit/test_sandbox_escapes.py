"""Sandbox escapes beyond the basic suite: symlink and /proc tricks, signals to the parent, exhausting file
descriptors, and output floods aimed at the parent's reader. Each is contained and the host is unaffected."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from workers.verify.sandbox import SandboxLimits, run_program

pytestmark = pytest.mark.unit
FAST = SandboxLimits(wall_s=4.0, cpu_s=3)


def test_symlinks_cannot_reach_host_files(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    prog = f"""
import os
os.symlink({str(secret)!r}, "/tmp/link")
for p in ["/tmp/link", "/proc/1/root{secret}", "/proc/self/root{secret}"]:
    try:
        print("READ", p, open(p).read())
    except OSError as e:
        print("blocked", p, type(e).__name__)
"""
    r = run_program(prog, limits=FAST)
    assert r.ok, r.stderr
    assert "host secret" not in r.stdout and "READ" not in r.stdout


def test_proc_shows_only_the_sandbox(tmp_path: Path) -> None:
    prog = """
import os
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print("pids", len(pids))
try:
    print("environ", open("/proc/1/environ", "rb").read()[:200])
except OSError as e:
    print("environ blocked", type(e).__name__)
try:
    open("/proc/sys/kernel/hostname", "w").write("pwned")
    print("WROTE sysctl")
except OSError as e:
    print("sysctl blocked", type(e).__name__)
"""
    r = run_program(prog, limits=FAST)
    assert r.ok, r.stderr
    assert int(r.stdout.split("pids", 1)[1].split()[0]) <= 3  # the sandbox's own init and python, nothing else
    assert "WROTE" not in r.stdout and b"KVGRAFT" not in r.stdout.encode()
    assert os.uname().nodename != "pwned"


def test_signals_cannot_reach_the_parent() -> None:
    parent = os.getpid()
    prog = f"""
import os, signal
for pid in ({parent}, {os.getppid()}, 1):
    try:
        os.kill(pid, signal.SIGKILL if pid != 1 else signal.SIGTERM)
        print("sent", pid)
    except OSError as e:
        print("refused", pid, type(e).__name__)
"""
    r = run_program(prog, limits=FAST)
    assert os.getpid() == parent  # we are alive
    assert f"sent {parent}" not in r.stdout


def test_exhausting_file_descriptors_is_contained() -> None:
    prog = """
fds = []
try:
    while True:
        fds.append(open("/dev/null"))
except OSError as e:
    print("stopped at", len(fds), type(e).__name__)
"""
    r = run_program(prog, limits=SandboxLimits(wall_s=4.0, open_files=32))
    assert r.ok and int(r.stdout.split("stopped at")[1].split()[0]) < 32
    assert run_program("print('fine')", limits=FAST).stdout.strip() == "fine"  # the host can still run programs


def test_an_output_flood_on_both_streams_does_not_hang_the_reader() -> None:
    prog = """
import os, sys, threading
def flood(fd):
    block = b"y" * 65536
    while True:
        os.write(fd, block)
threading.Thread(target=flood, args=(2,), daemon=True).start()
flood(1)
"""
    t0 = time.monotonic()
    r = run_program(prog, limits=SandboxLimits(wall_s=5.0, output_bytes=200_000))
    assert time.monotonic() - t0 < 8
    assert r.reason == "output_limit" and r.killed
    assert len(r.stdout) <= 200_000 and len(r.stderr) <= 200_000


def test_a_program_that_closes_its_streams_and_sleeps_is_killed_at_the_wall() -> None:
    prog = "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(60)\n"
    t0 = time.monotonic()
    r = run_program(prog, limits=SandboxLimits(wall_s=1.5))
    assert r.timed_out and r.killed and time.monotonic() - t0 < 6


def test_writing_a_huge_file_in_tmp_is_bounded() -> None:
    prog = """
try:
    with open("/tmp/big", "wb") as f:
        while True:
            f.write(b"z" * (1 << 20))
except OSError as e:
    print("stopped", type(e).__name__)
"""
    r = run_program(prog, limits=SandboxLimits(wall_s=5.0, file_bytes=4 << 20, tmp_bytes=8 << 20))
    assert "stopped" in r.stdout or r.reason.startswith("signal")  # EFBIG/ENOSPC, or SIGXFSZ
