"""A serving pod's checks run before traffic, never inside a request: at start, in the background, /healthz
answers at once (`starting`, what is being checked, then `ready`), /readyz is 503 until the verdicts are known, a
request that arrives meanwhile is served at once (one at a time, without the prompt cache) and says why, and a
restarted pod on the same host reuses the recorded verdicts (batch and composition) instead of checking again."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from services.api import create_app
from store.db import AttestationRow
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.ready import wait_ready
from workers.runtime import open_runtime
from workers.serving import batch_check, exactness
from workers.settings import Settings

pytestmark = [pytest.mark.unit, pytest.mark.timeout(300)]


@pytest.fixture()
def settings(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("KVGRAFT_PROMPT_CHUNK_TOKENS", "16")
    return Settings()


def _token(settings: Settings) -> dict[str, str]:
    with open_runtime(settings) as rt, rt.session() as s:
        token = create_api_token(s, team=get_or_create_team(s, name="t"), role="submitter")[1]
    return {"Authorization": f"Bearer {token}"}


def _attestations(settings: Settings) -> list[AttestationRow]:
    with open_runtime(settings) as rt, rt.session() as s:
        return list(s.scalars(select(AttestationRow)))


def _chat(client: TestClient, h: dict[str, str]) -> dict[str, Any]:
    r = client.post("/v1/chat/completions", headers=h, json={
        "model": "tiny", "max_tokens": 4, "temperature": 0,
        "messages": [{"role": "system", "content": "The pump room holds three pumps. " * 8},
                     {"role": "user", "content": "How many pumps?"}]})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


@pytest.fixture()
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The batch check held (after it has computed) until the test releases it: the pod stays `starting`."""
    release = threading.Event()
    real = batch_check.batch_check

    def slow(*args: Any) -> Any:
        check = real(*args)
        assert release.wait(120)
        return check

    monkeypatch.setattr(batch_check, "batch_check", slow)
    yield release
    release.set()


def test_a_pod_answers_health_and_requests_at_once_while_it_checks_then_turns_ready(
        settings: Settings, held: threading.Event) -> None:
    h = _token(settings)
    with TestClient(create_app(settings)) as client:
        t0 = time.perf_counter()
        health = client.get("/healthz")
        assert health.status_code == 200 and time.perf_counter() - t0 < 5
        assert health.json()["status"] == "starting" and "batch" in health.json()["checking"]
        assert client.get("/readyz").status_code == 503
        early = _chat(client, h)["kvgraft"]  # served while the batch check is still held
        assert early["cache"] == "off" and early["reason"].startswith("checking:"), early
        assert early["restored_tokens"] == 0 and early["deposits_scheduled"] == 0
        assert early["batching"]["batching"] == "off" and early["batching"]["reason"].startswith("checking:")
        assert client.get("/healthz").json()["status"] == "starting"
        held.set()
        wait_ready(client)  # by itself: nobody asks it to
        assert client.get("/healthz").json() == {"status": "ready", "checking": []}
        ready = _chat(client, h)["kvgraft"]
        assert ready["batching"]["batching"] == "on" and ready["cache"] in ("miss", "hit"), ready
        assert "composition_attestation_id" not in ready  # a deployment-wide id is no team's business
        assert [row.kind for row in _attestations(settings)].count("composition") == 1  # the auditor's record


def test_a_restarted_pod_reuses_the_verdicts_recorded_on_its_host(settings: Settings,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    h = _token(settings)
    with TestClient(create_app(settings)) as client:
        wait_ready(client)
        first = _chat(client, h)["kvgraft"]
    ran: list[str] = []
    monkeypatch.setattr(batch_check, "batch_check", lambda *a: ran.append("batch"))
    monkeypatch.setattr(exactness, "composition_check", lambda *a: ran.append("composition"))
    with TestClient(create_app(settings)) as client:
        wait_ready(client)
        again = _chat(client, h)["kvgraft"]
    assert ran == []
    assert again["batching"] == first["batching"] and again["batching"]["batching"] == "on"
    assert [row.kind for row in _attestations(settings)].count("composition") == 1  # none recorded again
    assert again["cache"] == "hit" and again["boundary_granule"] == first["boundary_granule"], again


def test_a_check_that_cannot_run_leaves_the_pod_ready_serving_safely_and_saying_why(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> Any:
        raise RuntimeError("no database for the verdict")

    monkeypatch.setattr(batch_check, "batching_policy", broken)
    monkeypatch.setattr("workers.serving.service.batching_policy", broken)
    h = _token(settings)
    with TestClient(create_app(settings)) as client:
        wait_ready(client)
        k = _chat(client, h)["kvgraft"]
    assert k["batching"]["batching"] == "off" and "no database" in k["batching"]["reason"]
    assert k["cache"] == "off" and k["reason"].startswith("composition_check_failed"), k
