"""A cgroup of its own for each sandbox run, where a memory and a pids controller are usable.

RLIMIT_AS bounds each process's address space, so a run of N processes could still hold N times the limit, plus
page cache, tmpfs pages and kernel memory (inodes, sockets, pipes) that no address space counts. A run's own cgroup
bounds all of it together: memory (v2 memory.max, or v1 memory.limit_in_bytes; swap bounded to zero extra where
the knob exists) and tasks (pids.max). The child of Popen enters the cgroup before it executes bwrap, so every
process of the run is inside from its first instruction; afterwards every task left is killed and the cgroup
removed.

cgroup v2 needs a delegated subtree: the cgroup this process is in, with memory and pids enabled in its
subtree_control (or enable-able), or, for a process that lives in a leaf (systemd DelegateSubgroup=), its parent.
cgroup v1 needs the memory and pids hierarchies mounted and writable. Neither is required: without one the run is
bounded per process only and `mechanisms.cgroup` is None.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

PREFIX = "kvgraft-sbx-"
STALE_AFTER_S = 3600.0  # longer than any run (wall_s <= 600): an older empty run cgroup was left by a crash
_lock = threading.Lock()
_parents: dict[str, tuple[str, tuple[Path, ...]] | None] = {}  # cached per process: version and parent dirs


@dataclass(frozen=True)
class RunCgroup:
    version: str  # "v1" | "v2"
    dirs: tuple[Path, ...]  # v2: one; v1: the memory and the pids cgroup

    @property
    def procs_files(self) -> tuple[str, ...]:
        return tuple(str(d / "cgroup.procs") for d in self.dirs)


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fstype, super options) of every cgroup filesystem."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4].replace("\\040", " "), tail[0], set(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """controller (or "" for v2) -> this process's cgroup path."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                paths[c] = path
    return paths


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def _v2_parents() -> tuple[Path, ...] | None:
    own = _own_paths().get("")
    for mount, fstype, _ in _mounts():
        if fstype != "cgroup2" or own is None:
            continue
        here = Path(mount) / own.lstrip("/")
        for candidate in (here, here.parent):
            if not candidate.is_relative_to(Path(mount)) or not _writable_dir(candidate):
                continue
            with contextlib.suppress(OSError):
                available = set((candidate / "cgroup.controllers").read_text().split())
                enabled = set((candidate / "cgroup.subtree_control").read_text().split())
                if not {"memory", "pids"} <= available:
                    continue
                if not {"memory", "pids"} <= enabled and candidate == here:
                    # fails with EBUSY when this cgroup holds processes and is not the root: then try the parent
                    (candidate / "cgroup.subtree_control").write_text("+memory +pids")
                    enabled = set((candidate / "cgroup.subtree_control").read_text().split())
                if {"memory", "pids"} <= enabled:
                    return (candidate,)
    return None


def _v1_parents() -> tuple[Path, ...] | None:
    own = _own_paths()
    found: dict[str, Path] = {}
    for mount, fstype, options in _mounts():
        for controller in ("memory", "pids"):
            if fstype == "cgroup" and controller in options and controller in own:
                parent = Path(mount) / own[controller].lstrip("/")
                if _writable_dir(parent):
                    found[controller] = parent
    return (found["memory"], found["pids"]) if len(found) == 2 else None


def _sweep(parents: tuple[Path, ...]) -> None:
    """Remove run cgroups a crashed process left behind (empty, older than any run)."""
    for parent in parents:
        with contextlib.suppress(OSError):
            for entry in parent.iterdir():
                if entry.name.startswith(PREFIX) and time.time() - entry.stat().st_mtime > STALE_AFTER_S:
                    with contextlib.suppress(OSError):
                        entry.rmdir()


def _resolve() -> tuple[str, tuple[Path, ...]] | None:
    with _lock:
        if "parents" not in _parents:
            v2 = _v2_parents()
            found = ("v2", v2) if v2 else (("v1", v1) if (v1 := _v1_parents()) else None)
            if found:
                _sweep(found[1])
            _parents["parents"] = found
            log.info("sandbox.cgroup.resolved", version=found[0] if found else None,
                     parents=[str(p) for p in found[1]] if found else [])
        return _parents["parents"]


def create_run_cgroup(name: str, *, memory_bytes: int, processes: int) -> RunCgroup | None:
    """A fresh cgroup for one run with its limits written, or None where no controller is usable."""
    resolved = _resolve()
    if resolved is None:
        return None
    version, parents = resolved
    made: list[Path] = []
    try:
        for parent in parents:
            d = parent / f"{PREFIX}{name}"
            d.mkdir(mode=0o755)
            made.append(d)
        if version == "v2":
            d = made[0]
            (d / "memory.max").write_text(str(memory_bytes))
            for knob, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (d / knob).exists():
                    (d / knob).write_text(value)
            (d / "pids.max").write_text(str(processes))
        else:
            memory, pids = made
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # memory + swap: no escape into swap
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
            (pids / "pids.max").write_text(str(processes))
    except OSError as exc:
        log.warning("sandbox.cgroup.unusable", version=version, error=str(exc))
        remove_run_cgroup(RunCgroup(version, tuple(made)))
        return None
    return RunCgroup(version, tuple(made))


def enter(procs_files: tuple[str, ...]) -> None:
    """Move the calling process into the run's cgroup (called in the child between fork and exec)."""
    pid = str(os.getpid()).encode()
    for path in procs_files:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, pid)
        finally:
            os.close(fd)


def _tasks(cg: RunCgroup) -> set[int]:
    pids: set[int] = set()
    for path in cg.procs_files:
        with contextlib.suppress(OSError, ValueError):
            pids |= {int(p) for p in Path(path).read_text().split()}
    return pids


def remove_run_cgroup(cg: RunCgroup, *, timeout_s: float = 5.0) -> bool:
    """Kill every task left in the run's cgroup and remove it; True when it is gone."""
    if cg.version == "v2" and cg.dirs and (cg.dirs[0] / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            (cg.dirs[0] / "cgroup.kill").write_text("1")
    deadline = time.monotonic() + timeout_s
    while True:
        for pid in _tasks(cg):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        remaining = []
        for d in cg.dirs:
            try:
                d.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                remaining.append(d)
        if not remaining:
            return True
        if time.monotonic() > deadline:
            log.warning("sandbox.cgroup.left", dirs=[str(d) for d in remaining])
            return False
        time.sleep(0.02)
