"""What the child of Popen does between fork and exec of bwrap, in order: enter the run's cgroup (while it may still
write there), volunteer as the OOM killer's first victim, drop to the run's own host uid, set the rlimits, and give
itself a private /tmp-to-be: a tmpfs bounded in bytes *and inodes* (bwrap's own --tmpfs takes only a size, so a
program could fill kernel memory with millions of empty files).

The tmpfs is mounted in a user and mount namespace of the child's own (tmpfs may be mounted by the owner of a user
namespace, so this needs no host privilege), on a directory that stays empty on the host; bwrap binds it to /tmp.
When the run ends the namespace and its tmpfs vanish with it. Each step that fails writes one line to an error pipe
so the parent can say which one.
"""

from __future__ import annotations

import ctypes
import os
import resource
from dataclasses import dataclass

from workers.verify.sandbox_cgroup import enter

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
PR_SET_DUMPABLE = 4
OOM_SCORE_ADJ = 1000  # the highest: under memory pressure the sandboxed program dies before the worker

_libc = ctypes.CDLL(None, use_errno=True)
_unshare = _libc.unshare
_unshare.argtypes = [ctypes.c_int]
_mount = _libc.mount
_mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_prctl = _libc.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


class ChildSetupError(OSError):
    """One step of the child's set-up failed; its first argument names the step."""


@dataclass(frozen=True)
class ChildPlan:
    uid: int | None  # the run's host uid (only when this process is root); None keeps the caller's uid
    rlimits: tuple[tuple[int, int], ...]  # (resource, limit), soft = hard
    cpu_s: int
    cgroup_procs: tuple[str, ...]
    tmp_mountpoint: str | None  # None: no private tmpfs (bwrap's size-only --tmpfs instead)
    tmp_bytes: int
    tmp_inodes: int
    error_fd: int


def _write(path: str, data: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data.encode())
    finally:
        os.close(fd)


def _check(rc: int, step: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise ChildSetupError(step, os.strerror(err))


def _private_tmp(plan: ChildPlan) -> None:
    uid, gid = os.getuid(), os.getgid()
    # dropping root made this process non-dumpable, and a non-dumpable process may not write its own uid_map
    _check(_prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "private tmpfs: prctl")
    _check(_unshare(CLONE_NEWUSER | CLONE_NEWNS), "private tmpfs: unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(_mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private tmpfs: make / private")
    options = f"size={plan.tmp_bytes},nr_inodes={plan.tmp_inodes},mode=0700".encode()
    assert plan.tmp_mountpoint is not None
    _check(_mount(b"tmpfs", plan.tmp_mountpoint.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options),
           "private tmpfs: mount")


def prepare_child(plan: ChildPlan) -> None:
    """Runs in the child before exec; raises (after writing the failing step to error_fd) on any failure."""
    step = "start"
    try:
        step = "cgroup"
        if plan.cgroup_procs:
            enter(plan.cgroup_procs)
        step = "oom_score_adj"
        _write("/proc/self/oom_score_adj", str(OOM_SCORE_ADJ))
        step = "uid"
        if plan.uid is not None:
            os.setgroups([])
            os.setgid(plan.uid)
            os.setuid(plan.uid)
        step = "rlimits"
        resource.setrlimit(resource.RLIMIT_CPU, (plan.cpu_s, plan.cpu_s + 1))
        for which, limit in plan.rlimits:
            resource.setrlimit(which, (limit, limit))
        step = "private tmpfs"
        if plan.tmp_mountpoint is not None:
            _private_tmp(plan)
    except BaseException as exc:
        detail = f"{exc.args[0]}: {exc.args[1]}" if isinstance(exc, ChildSetupError) else f"{step}: {exc}"
        try:
            os.write(plan.error_fd, detail.encode("utf-8", "replace")[:500])
        finally:
            raise
