"""Fixtures shared by the integration tests: the whole stack's environment (PostgreSQL database, S3 bucket,
RabbitMQ vhost, tiny model) and the kvgraft processes a test starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.migrate import upgrade
from tests.fixtures.processes import KvgraftProcess


@pytest.fixture()
def flywheel_env(pg_url: str, s3_store_url: str, s3_server: str, broker_url: str, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch, kvgraft_cache: Path) -> dict[str, str]:
    upgrade(pg_url)
    _purge(broker_url)
    env = {"KVGRAFT_DATABASE_URL": pg_url, "KVGRAFT_STORE_URL": s3_store_url, "KVGRAFT_S3_ENDPOINT_URL": s3_server,
           "KVGRAFT_BROKER_URL": broker_url, "KVGRAFT_MODEL": "tiny", "KVGRAFT_DATA_DIR": str(tmp_path / "data"),
           "KVGRAFT_CACHE_DIR": str(kvgraft_cache), "KVGRAFT_LOG_LEVEL": "INFO"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("KVGRAFT_BLOCK_KEY", raising=False)
    return env


def _purge(broker_url: str) -> None:
    from workers.queue.celery_app import make_app

    celery = make_app(broker_url)
    with celery.connection_for_write() as conn:
        for queue in celery.conf.task_queues:  # declared exactly as the workers declare them
            queue.bind(conn.default_channel).declare()
            queue.bind(conn.default_channel).purge()


@pytest.fixture()
def workers(flywheel_env: dict[str, str], tmp_path: Path) -> Iterator[list[KvgraftProcess]]:
    started: list[KvgraftProcess] = []
    yield started
    for w in started:
        w.stop()


