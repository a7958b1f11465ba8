"""The sandbox's self-test: run a probe program and check, from the outside, that it was contained. A worker runs
it before it takes work (`kvgraft worker ...`), an operator with `kvgraft sandbox check`; a sandbox that cannot
start, or starts but does not contain the probe, raises SandboxUnavailableError with one line saying which."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import structlog

from workers.verify import sandbox
from workers.verify.sandbox_types import SandboxLimits, SandboxMechanisms, SandboxUnavailableError

log = structlog.get_logger(__name__)

PROBE = r"""
import ctypes, json, os, socket
checks = {"uid": os.getuid(), "gid": os.getgid()}
wrote = []
for path in ("/usr/kvgraft-probe", "/kvgraft-probe", "/dev/kvgraft-probe", "/proc/kvgraft-probe"):
    try:
        open(path, "w").close()
        wrote.append(path)
    except OSError:
        pass
checks["wrote_outside_tmp"] = wrote
try:
    with open("/tmp/kvgraft-probe", "w") as f:
        f.write("ok")
    checks["tmp_writable"] = True
except OSError:
    checks["tmp_writable"] = False
checks["root_entries"] = sorted(os.listdir("/"))
checks["interfaces"] = sorted(name for _, name in socket.if_nameindex())
try:
    socket.create_connection(("192.0.2.1", 80), timeout=1).close()  # TEST-NET-1: unroutable anywhere
    checks["network"] = True
except OSError:
    checks["network"] = False
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
checks["seccomp_mode"] = int(status.get("Seccomp", "0").strip() or 0)
checks["no_new_privs"] = status.get("NoNewPrivs", "0").strip() == "1"
checks["cap_eff"] = status.get("CapEff", "").strip()
libc = ctypes.CDLL(None, use_errno=True)
checks["shmget_refused"] = libc.shmget(0, 1 << 20, 0o600) == -1
checks["unshare_user_refused"] = libc.unshare(0x10000000) == -1
checks["dumpable_settable"] = libc.prctl(4, 0, 0, 0, 0) == 0  # the verifier harness needs it
print(json.dumps(checks))
"""
ROOT_ALLOWED = {"bin", "dev", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr"}


@dataclass(frozen=True)
class SelfTestReport:
    contained: bool
    mechanisms: SandboxMechanisms
    checks: dict[str, Any]
    wall_ms: float

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        record = asdict(self)
        record["mechanisms"]["namespaces"] = list(self.mechanisms.namespaces)
        return record


def _failures(checks: dict[str, Any], mechanisms: SandboxMechanisms) -> list[str]:
    extra_paths = sorted(set(checks.get("root_entries", [])) - ROOT_ALLOWED)
    expected: list[tuple[bool, str]] = [
        (checks.get("uid") == 65534 and checks.get("gid") == 65534, f"the probe ran as uid {checks.get('uid')}, "
                                                                     "not 65534"),
        (not checks.get("wrote_outside_tmp"), f"the probe wrote outside /tmp: {checks.get('wrote_outside_tmp')}"),
        (checks.get("tmp_writable") is True, "the probe could not write its /tmp"),
        (not extra_paths, f"the probe saw host paths: {extra_paths}"),
        (checks.get("interfaces") == ["lo"] and checks.get("network") is False, "the probe had a network"),
        (checks.get("seccomp_mode") == 2 and mechanisms.seccomp, "the seccomp filter was not active"),
        (checks.get("no_new_privs") is True, "no_new_privs was not set"),
        (checks.get("cap_eff") == "0000000000000000", f"the probe had capabilities {checks.get('cap_eff')}"),
        (checks.get("shmget_refused") is True, "SysV shared memory was not refused"),
        (checks.get("unshare_user_refused") is True and mechanisms.userns_disabled,
         "the probe could create a user namespace"),
        (checks.get("dumpable_settable") is True, "prctl(PR_SET_DUMPABLE) failed: the verifier harness cannot run"),
    ]
    return [why for ok, why in expected if not ok]


def self_test() -> SelfTestReport:
    """Run the probe; return the report when it was contained, else raise SandboxUnavailableError (one line)."""
    result = sandbox.run_program(PROBE, limits=SandboxLimits(wall_s=20.0, cpu_s=10))
    if not result.ok or result.mechanisms is None:
        detail = (result.stderr.strip().splitlines() or [result.reason])[-1]
        raise SandboxUnavailableError(f"the sandbox probe did not run cleanly ({result.reason}): {detail}"[:300])
    try:
        checks = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SandboxUnavailableError(f"the sandbox probe printed no report: {result.stdout[:200]!r}") from None
    failures = _failures(checks, result.mechanisms)
    if failures:
        log.info("sandbox.self_test.failed", failures=failures)
        raise SandboxUnavailableError(f"the sandbox does not contain programs: {failures[0]}"
                                      + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""))
    report = SelfTestReport(True, result.mechanisms, checks, result.wall_ms)
    log.info("sandbox.self_test.passed", cgroup=result.mechanisms.cgroup, tmp_inodes=result.mechanisms.tmp_inodes)
    return report
