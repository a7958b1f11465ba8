"""Host uids for sandbox runs: each run gets a uid of its own, so RLIMIT_NPROC (which counts every process of a uid)
bounds that run alone.

A uid derived from the pid collides between worker replicas in different containers, whose pids are numbered
alike (the worker is pid 1 or 7 in each). So each process draws its own random starting point and stride from
os.urandom, and walks a large range from there: one process never repeats a uid within SPAN runs, and two
processes (two containers, two forked Celery children: the seed is redrawn after fork) share a uid only by chance,
about one in 2.7 x 10^8 per pair of runs that overlap in time. The range lies above every conventional one
(system and login uids, systemd's dynamic users, the 100000+ subordinate ranges of /etc/subuid, systemd-nspawn's
container range) and inside this process's uid_map; a uid another process of this machine is using is skipped.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path

# Above systemd-nspawn's container range (0x00080000-0x6FFFFFFF) and below its foreign range (0x7FFE0000-) and
# 2^31 - 1 (overflow ids and signedness bugs): 268 million uids.
UID_MIN = 0x70000000
UID_MAX = 0x7FFDFFFF  # inclusive
FALLBACK_MIN = 10_000  # where the uid_map holds only a small range (a user-namespace-remapped container)


@dataclass(frozen=True)
class UidRange:
    first: int
    span: int


def mapped_range(uid_map: str | None = None) -> UidRange:
    """The widest stretch of [UID_MIN, UID_MAX] that this process's user namespace maps, else the widest mapped
    stretch above FALLBACK_MIN (a remapped container maps only 65536 ids)."""
    if uid_map is None:
        try:
            uid_map = Path("/proc/self/uid_map").read_text()
        except OSError:
            uid_map = f"0 0 {1 << 32}"
    best: UidRange | None = None
    fallback: UidRange | None = None
    for line in uid_map.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        inside, count = int(parts[0]), int(parts[2])
        lo, hi = max(inside, UID_MIN), min(inside + count - 1, UID_MAX)
        if hi >= lo and (best is None or hi - lo + 1 > best.span):
            best = UidRange(lo, hi - lo + 1)
        lo, hi = max(inside, FALLBACK_MIN), min(inside + count - 1, UID_MAX, 65533)
        if hi >= lo and (fallback is None or hi - lo + 1 > fallback.span):
            fallback = UidRange(lo, hi - lo + 1)
    chosen = best or fallback
    if chosen is None:
        raise ValueError("this user namespace maps no uid usable for sandbox runs")
    return chosen


def _processes_of(uid: int) -> int:
    """How many processes this uid already runs (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += 1
    return count


class UidAllocator:
    """Random start and stride per process, then a walk: distinct within a process, random across processes."""

    def __init__(self, uid_range: UidRange | None = None) -> None:
        self._range = uid_range
        self._lock = threading.Lock()
        self._reseed()

    def _reseed(self) -> None:
        seed = int.from_bytes(os.urandom(16), "little")
        self._start = seed & ((1 << 64) - 1)
        self._stride = 0
        self._step = 0
        self._raw_stride = seed >> 64

    def _ensure(self) -> UidRange:
        if self._range is None:
            self._range = mapped_range()
        if not self._stride:
            stride = 1 + self._raw_stride % max(self._range.span - 1, 1)
            while math.gcd(stride, self._range.span) != 1:  # coprime: the walk visits every uid once per SPAN
                stride += 1
            self._stride = stride
        return self._range

    def next_uid(self, *, skip_busy: bool = True) -> int:
        with self._lock:
            r = self._ensure()
            for _ in range(16):
                uid = r.first + (self._start + self._step * self._stride) % r.span
                self._step += 1
                if not skip_busy or _processes_of(uid) == 0:
                    return uid
            return uid  # every candidate busy: extraordinarily unlikely; the cgroup (if any) still bounds the run

    def after_fork(self) -> None:
        self._lock = threading.Lock()
        self._reseed()


_allocator = UidAllocator()
os.register_at_fork(after_in_child=_allocator.after_fork)  # a forked worker child must not replay its parent's uids


def next_uid() -> int:
    return _allocator.next_uid()
