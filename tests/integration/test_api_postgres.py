"""The HTTP API over PostgreSQL (the production catalogue), in-process: the same schema-driven fuzzing as the SQLite
run (tests/unit/test_api_fuzz.py, one shared body) and the same hostile inputs (tests/unit/test_api_hostile.py).

PostgreSQL is where NUL bytes used to fail: its text type cannot hold U+0000, so a `%00` in a query parameter or a
path id, or a NUL in a batch's problem id, reached psycopg and ended in a 500. SQLite stores NUL, so only this run
shows that the refusal happens before the database."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from psycopg import sql

from services.api import attach_runtime, create_app, detach_runtime
from store.migrate import upgrade
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.postgres import PG_ADMIN_CONNINFO
from tests.unit.test_api_fuzz import check_no_5xx
from tests.unit.test_api_hostile import HOSTILE, ROLES, Hostile, check_every_parameter, check_hostile, stored_rows
from workers.runtime import open_runtime
from workers.settings import Settings

pytestmark = pytest.mark.integration

_DATA = Path(tempfile.mkdtemp(prefix="kvgraft-pg-fuzz-"))
_BASE = {"data_dir": _DATA, "model": "tiny", "store_url": None, "broker_url": None, "query_timeout_s": 5,
         "max_body_bytes": 64 << 10}
app = create_app(Settings(**_BASE, database_url=None))  # its runtime (on PostgreSQL) is attached below
schema = schemathesis.openapi.from_asgi("/openapi.json", app)
TOKENS: dict[str, str] = {}


def _admin(statement: sql.Composable) -> None:
    with psycopg.connect(PG_ADMIN_CONNINFO, autocommit=True) as conn:
        conn.execute(statement)


@pytest.fixture(scope="module", autouse=True)
def _postgres_runtime(pg_server_url: str) -> Iterator[None]:
    """One fresh PostgreSQL database for this module (migrated to head), attached to the app, with a token per
    role; dropped afterwards."""
    name = f"kvgraft_api_{uuid.uuid4().hex[:16]}"
    _admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = pg_server_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        upgrade(url)
        rt = open_runtime(Settings(**_BASE, database_url=url))
        with rt.session() as s:
            for key, (team, role) in ROLES.items():
                _, TOKENS[key] = create_api_token(s, team=get_or_create_team(s, name=team), role=role)
        attach_runtime(app, rt)
        try:
            yield
        finally:
            detach_runtime(app)
    finally:
        _admin(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def client(_postgres_runtime: None) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.parametrize("who", ["submitter", "auditor", None])
def test_no_generated_request_gets_a_5xx_on_postgres(case: schemathesis.Case, who: str | None) -> None:
    check_no_5xx(case, TOKENS, who)


@pytest.mark.parametrize("case", HOSTILE, ids=[c.name for c in HOSTILE])
def test_hostile_input_is_refused_on_postgres(client: TestClient, case: Hostile) -> None:
    check_hostile(client, TOKENS, case, lambda: stored_rows(app.state.runtime))


def test_every_string_and_datetime_parameter_is_validated_on_postgres(client: TestClient) -> None:
    check_every_parameter(client, TOKENS, app)


def test_ordinary_requests_still_work_on_postgres(client: TestClient) -> None:
    auth: dict[str, Any] = {"Authorization": f"Bearer {TOKENS['submitter']}"}
    r = client.post("/v1/batches", json=[{"id": "pg", "question": "What is 2 plus 3?", "answer": 5,
                                          "solution": "print(2 + 3)"}], headers=auth)
    assert r.status_code == 201, r.text
    assert client.get(f"/v1/batches/{r.json()['batch_id']}", headers=auth).status_code == 200
    r = client.get("/v1/provenance", params={"since": "2024-01-01T00:00:00+14:00"},
                   headers={"Authorization": f"Bearer {TOKENS['auditor']}"})
    assert r.status_code == 200, r.text
