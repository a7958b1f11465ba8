"""Session fixtures: a private cache dir (the tiny GGUF is generated into it) and the tiny engine. The real model
runs in supervised child processes (tests/model), never in the pytest process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.graft import EngineConfig, GraftEngine
from workers.environment import environment

# Server fixtures (PostgreSQL database per run, moto S3 server) live in their own modules.
pytest_plugins = ["tests.fixtures.postgres", "tests.fixtures.s3", "tests.fixtures.rabbitmq", "tests.fixtures.proxy"]


@pytest.fixture(scope="session", autouse=True)
def kvgraft_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test (and every subprocess it starts) uses a fresh cache dir and a fresh data dir."""
    cache = tmp_path_factory.mktemp("kvgraft-cache")
    with environment({"KVGRAFT_CACHE_DIR": str(cache),
                      "KVGRAFT_DATA_DIR": str(tmp_path_factory.mktemp("kvgraft-data"))}):
        yield cache


@pytest.fixture(scope="session")
def tiny_engine(kvgraft_cache: Path) -> Iterator[GraftEngine]:
    engine = GraftEngine.load("tiny", EngineConfig(threads=2), cache_dir=kvgraft_cache)
    yield engine
    engine.close()


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """CLI tests configure structlog (level filter, stderr); give every test the library defaults back."""
    import structlog

    yield
    structlog.reset_defaults()


@pytest.fixture()
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The embedded default in a fresh data dir: SQLite and local blocks there, the tiny model, no servers."""
    d = tmp_path / "data"
    monkeypatch.setenv("KVGRAFT_DATA_DIR", str(d))
    monkeypatch.setenv("KVGRAFT_MODEL", "tiny")
    for var in ("KVGRAFT_DATABASE_URL", "KVGRAFT_STORE_URL", "KVGRAFT_BLOCK_KEY", "KVGRAFT_BROKER_URL",
                "KVGRAFT_S3_ENDPOINT_URL", "KVGRAFT_WINDOW_TOKENS"):
        monkeypatch.delenv(var, raising=False)
    return d
