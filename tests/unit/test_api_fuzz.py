"""Schema-driven fuzzing of the HTTP API (schemathesis over its own OpenAPI document): no generated request, with
a valid submitter token, an auditor token or none, gets a 5xx; errors are JSON with a stable code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from services.api import attach_runtime, create_app, detach_runtime
from store.repository import create_api_token, get_or_create_team
from workers.runtime import open_runtime
from workers.settings import Settings

pytestmark = pytest.mark.unit

_DATA = Path(__import__("tempfile").mkdtemp(prefix="kvgraft-fuzz-"))
_SETTINGS = Settings(data_dir=_DATA, model="tiny", database_url=None, store_url=None, broker_url=None,
                     query_timeout_s=5, max_body_bytes=64 << 10)
app = create_app(_SETTINGS)
# JSONL batches are generated as strings (their schema) and sent as text, so the JSONL parser is fuzzed too.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")
schema = schemathesis.openapi.from_asgi("/openapi.json", app)
TOKENS: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def _runtime() -> Iterator[None]:
    rt = open_runtime(_SETTINGS)
    with rt.session() as s:
        for role in ("submitter", "auditor"):
            _, TOKENS[role] = create_api_token(s, team=get_or_create_team(s, name=f"fuzz-{role}"), role=role)
    attach_runtime(app, rt)
    yield
    detach_runtime(app)


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.parametrize("who", ["submitter", "auditor", None])
def test_no_generated_request_gets_a_5xx(case: schemathesis.Case, who: str | None) -> None:
    check_no_5xx(case, TOKENS, who)


def check_no_5xx(case: schemathesis.Case, tokens: dict[str, str], who: str | None) -> None:
    """The fuzz body, shared with the PostgreSQL run (tests/integration/test_api_postgres.py): the generated
    request, with `who`'s token or none, gets no 5xx, and every error is JSON with a stable code."""
    headers = {"Authorization": f"Bearer {tokens[who]}"} if who else {}
    response = case.call(headers=headers)
    if case.path == "/readyz" and response.status_code == 503:  # not ready yet: the one 503 that is an answer
        assert response.json()["status"] in ("starting", "database_unreachable"), response.text
        return
    assert response.status_code < 500, (case.method, case.path, response.status_code, response.text[:500])
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body.get("error", {}).get("code"), str), body
