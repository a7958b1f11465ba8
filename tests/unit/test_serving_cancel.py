"""A non-streamed completion whose client disconnects stops at the next step and frees its sequence and its
admission, as a stream does (a real uvicorn server on a socket the test closes)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from bench.local_servers import free_port
from engine.batching import SequenceJob, SequenceResult
from services.api import create_app
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.ready import wait_ready
from workers.runtime import open_runtime
from workers.settings import Settings

pytestmark = [pytest.mark.unit, pytest.mark.timeout(300)]


@pytest.fixture()
def server(data_dir: Path) -> Iterator[dict[str, Any]]:
    settings = Settings()
    with open_runtime(settings) as rt, rt.session() as s:
        token = create_api_token(s, team=get_or_create_team(s, name="t"), role="submitter")[1]
    app = create_app(settings)
    port = free_port()
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            deadline = time.monotonic() + 30
            while not uv.started:
                assert thread.is_alive() and time.monotonic() < deadline
                time.sleep(0.02)
            wait_ready(client)
            yield {"port": port, "token": token, "app": app}
    finally:
        uv.should_exit = True
        thread.join(30)


def test_a_non_streamed_completion_whose_client_leaves_computes_at_most_one_more_step(
        server: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    serving = server["app"].state.serving
    submitted: list[Future[SequenceResult]] = []
    submit = serving.scheduler.submit

    def recorded(job: SequenceJob) -> Future[SequenceResult]:
        submitted.append(submit(job))
        return submitted[-1]

    monkeypatch.setattr(serving.scheduler, "submit", recorded)
    body = json.dumps({"model": "tiny", "prompt": "Tell me a long story about the harbour. ", "max_tokens": 2048,
                       "temperature": 0, "kvgraft": {"cache": False}}).encode()
    with socket.create_connection(("127.0.0.1", server["port"]), timeout=10) as sock:
        sock.sendall(f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server['token']}"
                     f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        deadline = time.monotonic() + 60
        while not submitted or serving.scheduler.load()["active"] == 0:  # computing
            assert time.monotonic() < deadline and not (submitted and submitted[0].done())
            time.sleep(0.001)
    # the client has gone
    result = submitted[0].result(timeout=60)
    assert result.generated.stopped_by == "cancelled", (result.generated.stopped_by, len(result.generated.tokens))
    assert result.steps_after_cancel <= 1 and len(result.generated.tokens) < 2048
    deadline = time.monotonic() + 10
    while serving.scheduler.load() != {"waiting": 0, "active": 0} or sum(serving._admitted.values()):
        assert time.monotonic() < deadline, (serving.scheduler.load(), serving._admitted)  # freed
        time.sleep(0.01)
