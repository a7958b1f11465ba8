"""The sandbox's types at its seams: limits in, a result out, the mechanisms that were active, and the one error that
means "there is no sandbox here" (never a verdict on a program)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


class SandboxUnavailableError(RuntimeError):
    """The sandbox cannot start or cannot contain a program on this machine (bubblewrap or the interpreter missing,
    user namespaces refused, seccomp unavailable, a probe not contained). Never a verdict on a program."""


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float = 10.0
    cpu_s: int = 10
    memory_bytes: int = 512 << 20  # the whole run (cgroup) where a cgroup is usable; every process (RLIMIT_AS)
    file_bytes: int = 16 << 20
    tmp_bytes: int = 32 << 20
    tmp_inodes: int = 4096  # files, directories and links in /tmp, so empty files cannot fill kernel memory
    open_files: int = 64
    processes: int = 32  # processes and threads
    output_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        if not 0 < self.wall_s <= 600:
            raise ValueError("wall_s must be in (0, 600]")
        if self.output_bytes <= 0 or self.memory_bytes < (64 << 20):
            raise ValueError("output_bytes must be positive and memory_bytes at least 64 MiB")
        if self.tmp_inodes < 16 or self.processes < 1:
            raise ValueError("tmp_inodes must be at least 16 and processes at least 1")


@dataclass(frozen=True)
class SandboxMechanisms:
    """What contained one run. `seccomp` and `userns_disabled` are always true for a run that happened (the sandbox
    refuses to run without them); `cgroup` is "v1", "v2" or None (then memory is bounded per process only, by
    RLIMIT_AS); `tmp_inodes` is the inode bound of /tmp, None where only its size is bounded."""

    namespaces: tuple[str, ...]
    seccomp: bool
    userns_disabled: bool
    cgroup: str | None
    tmp_inodes: int | None
    uid: int  # the host uid the run had (65534 inside); its own, so RLIMIT_NPROC counts this run alone
    oom_score_adj: int


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
    mechanisms: SandboxMechanisms | None = None  # None only for a refused program (nothing ran)

    @property
    def ok(self) -> bool:
        return self.reason == "ok"

    def as_dict(self) -> dict[str, Any]:
        record = asdict(self)
        if self.mechanisms is not None:
            record["mechanisms"]["namespaces"] = list(self.mechanisms.namespaces)
        return record
