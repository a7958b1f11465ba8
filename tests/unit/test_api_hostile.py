"""The HTTP API under hostile input and load (embedded mode: SQLite, the tiny model, work on the background thread):
inputs that used to end in a 500, bodies over the limit that arrive chunked, and floods of slow questions.

The hostile-input cases and their checks are shared with the PostgreSQL run (tests/integration/test_api_postgres.py),
where NUL bytes used to fail inside the database driver."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

import services.work
from bench.local_servers import free_port
from services.api import create_app
from store.db import BatchRow, ProblemRow, QueryRequestRow
from store.repository import create_api_token, get_or_create_team
from workers.runtime import Runtime, open_runtime
from workers.settings import Settings

pytestmark = pytest.mark.unit

ROLES = {"submitter": ("hostile-a", "submitter"), "submitter_b": ("hostile-b", "submitter"),
         "auditor": ("hostile-audit", "auditor"), "operator": ("hostile-ops", "operator")}
DEEP = "[" * 30_000 + "]" * 30_000
HUGE_INT = "9" * 5_000
JSON, JSONL = "application/json", "application/x-ndjson"


# -- hostile inputs: the cases, and the checks both databases run ------------------------------------------------

@dataclass(frozen=True)
class Hostile:
    """One request that used to answer 500, and the refusal it must get now (nothing stored)."""

    name: str
    method: str
    path: str
    who: str
    status: int
    code: str
    content: str | None = None
    ctype: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    line: int | None = None  # for a JSONL batch: the line the refusal names


def _problem(**fields: Any) -> dict[str, Any]:
    return {"id": "p", "question": "What is 2 plus 2?", "answer": 4} | fields


HOSTILE = [
    Hostile("json batch nested 30,000 deep", "POST", "/v1/batches", "submitter", 400, "malformed_json", DEEP, JSON),
    Hostile("json batch object nested 30,000 deep", "POST", "/v1/batches", "submitter", 400, "malformed_json",
            '{"problems": ' + DEEP + "}", JSON),
    Hostile("jsonl line nested 30,000 deep", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            json.dumps(_problem(id="ok")) + '\n{"id": "d", "question": "q", "answer": ' + DEEP + "}\n", JSONL,
            line=2),
    Hostile("query body nested 30,000 deep", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            '{"question": "q", "answer": ' + DEEP + "}", JSON),
    Hostile("jsonl line with a 5,000-digit integer", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            '{"id": "i", "question": "What is 1 plus 1?", "answer": ' + HUGE_INT + "}\n", JSONL, line=1),
    Hostile("json batch with a 5,000-digit integer", "POST", "/v1/batches", "submitter", 400, "malformed_json",
            '[{"id": "i", "question": "What is 1 plus 1?", "answer": ' + HUGE_INT + "}]", JSON),
    Hostile("query with a 5,000-digit answer", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            '{"question": "What is 1 plus 1?", "answer": ' + HUGE_INT + "}", JSON),
    Hostile("naive since", "GET", "/v1/provenance", "auditor", 422, "invalid_request",
            params={"since": "2024-01-01T00:00:00"}),
    Hostile("since overflowing on conversion to UTC", "GET", "/v1/provenance", "auditor", 422, "invalid_request",
            params={"since": "0001-01-01T00:00:00+14:00"}),
    Hostile("until overflowing on conversion to UTC", "GET", "/v1/provenance", "auditor", 422, "invalid_request",
            params={"until": "9999-12-31T23:59:59-14:00"}),
    Hostile("NUL in a query parameter", "GET", "/v1/blocks", "submitter", 422, "invalid_request",
            params={"kind": "a\x00b"}),
    Hostile("NUL in a provenance filter", "GET", "/v1/provenance", "auditor", 422, "invalid_request",
            params={"team": "a\x00"}),
    Hostile("NUL in a batch id", "GET", "/v1/batches/a%00b", "submitter", 422, "invalid_request"),
    Hostile("NUL in a query id", "GET", "/v1/queries/a%00b", "submitter", 422, "invalid_request"),
    Hostile("NUL in a block id", "GET", "/v1/blocks/a%00b", "submitter", 422, "invalid_request"),
    Hostile("NUL in a provenance block id", "GET", "/v1/provenance/a%00b", "auditor", 422, "invalid_request"),
    Hostile("NUL in a problem id (JSON)", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            json.dumps([_problem(id="a\x00b")]), JSON, line=1),
    Hostile("NUL in a question (JSON)", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            json.dumps({"problems": [_problem(id="ok"), _problem(question="What is\x00 2 plus 2?")]}), JSON,
            line=2),
    Hostile("NUL in a string answer (JSON)", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            json.dumps([_problem(answer="fo\x00ur")]), JSON, line=1),
    Hostile("NUL in a verifier (JSON)", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            json.dumps([_problem(answer=None, verifier={"python": "def verify(a):\x00 return True"})]), JSON,
            line=1),
    Hostile("NUL in a problem id (JSONL)", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            json.dumps(_problem(id="a\x00b")) + "\n", JSONL, line=1),
    Hostile("NUL in a question (JSONL)", "POST", "/v1/batches", "submitter", 400, "malformed_batch",
            json.dumps(_problem(id="ok")) + "\n" + json.dumps(_problem(question="q\x00")) + "\n", JSONL, line=2),
    Hostile("NUL in a question to answer", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            json.dumps({"question": "What is\x00 2 plus 2?"}), JSON),
    Hostile("lone surrogate in a question", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            '{"question": "What is \\ud800 2 plus 2?"}', JSON),
    Hostile("answer NaN", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            '{"question": "What is 2 plus 2?", "answer": NaN}', JSON),
    Hostile("answer Infinity", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            '{"question": "What is 2 plus 2?", "answer": Infinity}', JSON),
    Hostile("answer -Infinity", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            '{"question": "What is 2 plus 2?", "answer": -Infinity}', JSON),
    Hostile("answer 1e400 (overflows to infinity)", "POST", "/v1/queries", "submitter", 422, "invalid_request",
            '{"question": "What is 2 plus 2?", "answer": 1e400}', JSON),
]


def _auth(tokens: dict[str, str], who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens[who]}"}


def stored_rows(rt: Runtime) -> int:
    """Problems, batches and questions stored so far (a refused request adds none)."""
    with rt.session() as s:
        return sum(int(s.scalar(sa.select(sa.func.count()).select_from(t)) or 0) for t in (ProblemRow, BatchRow,
                                                                                          QueryRequestRow))


def check_hostile(client: TestClient, tokens: dict[str, str], case: Hostile, rows: Callable[[], int]) -> None:
    """The case gets its 400/422 with the API's JSON error shape and stable code, and stores nothing."""
    before = rows()
    headers = _auth(tokens, case.who) | ({"Content-Type": case.ctype} if case.ctype else {})
    r = client.request(case.method, case.path, params=case.params, content=case.content, headers=headers)
    assert r.status_code == case.status, (case.name, r.status_code, r.text[:500])
    error = r.json()["error"]
    assert error["code"] == case.code and isinstance(error["message"], str), (case.name, error)
    if case.line is not None:
        assert [ln["line"] for ln in error["lines"]] == [case.line], (case.name, error)
    assert rows() == before, case.name


def _parameters(openapi: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any], set[str]]]:
    """(method, path, parameter, its JSON-schema string formats) for every path and query parameter."""
    for path, item in openapi["paths"].items():
        for method, operation in item.items():
            for param in operation.get("parameters", []):
                schema = param.get("schema", {})
                variants = schema.get("anyOf", [schema])
                formats = {v.get("format", "") for v in variants if v.get("type") == "string"}
                if formats:
                    yield method.upper(), path, param, formats


def _request_with(method: str, path: str, param: dict[str, Any], value: str) -> tuple[str, dict[str, str]]:
    if param["in"] == "path":
        return path.replace("{" + param["name"] + "}", urllib.parse.quote(value, safe="")), {}
    return path.replace("{", "").replace("}", ""), {param["name"]: value}


def check_every_parameter(client: TestClient, tokens: dict[str, str], app: FastAPI) -> None:
    """Every string path or query parameter of every route (read from the OpenAPI document, so routes added later
    are covered) refuses NUL, and every date-time query parameter refuses a naive or UTC-overflowing value: 422
    `invalid_request` for each role (the check runs before authentication, so every token gets the same)."""
    failures = []
    checked = 0
    for method, path, param, formats in _parameters(app.openapi()):
        values = ["a\x00b"] if param["in"] == "path" or "date-time" not in formats else []
        if "date-time" in formats:
            values += ["2024-01-01T00:00:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]
        for value in values:
            url, params = _request_with(method, path, param, value)
            for who in ("submitter", "auditor", "operator"):
                r = client.request(method, url, params=params, headers=_auth(tokens, who))
                checked += 1
                if r.status_code != 422 or r.json().get("error", {}).get("code") != "invalid_request":
                    failures.append((method, url, params, who, r.status_code, r.text[:200]))
    assert checked >= 30 and failures == [], failures


# -- the embedded API these tests run against ----------------------------------------------------------------------

def _settings(data: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {"data_dir": data, "model": "tiny", "database_url": None, "store_url": None,
                            "broker_url": None, "query_timeout_s": 5, "max_body_bytes": 256 << 10}
    return Settings(**(base | overrides))


def _tokens(settings: Settings) -> dict[str, str]:
    tokens = {}
    with open_runtime(settings) as rt, rt.session() as s:
        for key, (team, role) in ROLES.items():
            _, tokens[key] = create_api_token(s, team=get_or_create_team(s, name=team), role=role)
    return tokens


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    settings = _settings(tmp_path_factory.mktemp("hostile-data"))
    tokens = _tokens(settings)
    app = create_app(settings)
    with TestClient(app) as client:
        yield {"client": client, "tokens": tokens, "settings": settings, "app": app}


@pytest.mark.parametrize("case", HOSTILE, ids=[c.name for c in HOSTILE])
def test_hostile_input_is_refused_with_a_stable_code(api: dict[str, Any], case: Hostile) -> None:
    check_hostile(api["client"], api["tokens"], case, lambda: stored_rows(api["app"].state.runtime))


def test_every_string_and_datetime_parameter_is_validated(api: dict[str, Any]) -> None:
    check_every_parameter(api["client"], api["tokens"], api["app"])


def test_well_formed_input_near_the_limits_is_still_accepted(api: dict[str, Any],
                                                             held_worker: threading.Event) -> None:
    c, tokens = api["client"], api["tokens"]  # (the worker is held: these batches need storing, not solving)
    nested = {"python": "def verify(answer):\n    return answer == 4\n"}
    body = [_problem(id="deep-ok", verifier=nested, answer=None), _problem(id="big-ok", answer=int("9" * 4_000))]
    r = c.post("/v1/batches", json=body, headers=_auth(tokens, "submitter"))
    assert r.status_code == 201, r.text
    r = c.get("/v1/provenance", params={"since": "2024-01-01T00:00:00+14:00", "until": "2999-01-01T00:00:00Z"},
              headers=_auth(tokens, "auditor"))
    assert r.status_code == 200, r.text
    r = c.post("/v1/batches", content='{"id": "esc", "question": "Is \\\\u0000 text? [[{", "answer": 1}\n',
               headers=_auth(tokens, "submitter") | {"Content-Type": JSONL})
    assert r.status_code == 201, r.text  # an escaped backslash, brackets and NaN-like text inside strings are fine


# -- the body limit, counted while the body streams in -----------------------------------------------------------

def _oversize_json() -> Iterator[bytes]:
    yield b'{"question": "'
    for _ in range(128):  # 2 MiB, against a 256 KiB limit
        yield b"x" * (16 << 10)
    yield b'"}'


def test_a_chunked_oversize_body_gets_413_from_the_test_client(api: dict[str, Any]) -> None:
    c, tokens = api["client"], api["tokens"]
    before = stored_rows(api["app"].state.runtime)
    for path in ("/v1/queries", "/v1/batches"):
        r = c.post(path, content=_oversize_json(), headers=_auth(tokens, "submitter") | {"Content-Type": JSON})
        assert "content-length" not in r.request.headers and r.request.headers["transfer-encoding"] == "chunked"
        assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large", (path, r.text[:300])
    assert stored_rows(api["app"].state.runtime) == before


def test_the_body_limit_stops_reading_at_the_limit(api: dict[str, Any]) -> None:
    """At the ASGI level: the app pulls body messages only until the limit, never the rest of the stream."""
    app, tokens, limit = api["app"], api["tokens"], api["settings"].max_body_bytes
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": b"x" * (16 << 10), "more_body": pulled < 128}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    for path in ("/v1/batches", "/v1/queries"):
        pulled, sent = 0, []
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
                 "headers": [(b"host", b"test"), (b"content-type", b"application/json"),
                             (b"transfer-encoding", b"chunked"),
                             (b"authorization", f"Bearer {tokens['submitter']}".encode())],
                 "client": ("127.0.0.1", 1), "server": ("test", 80), "state": {}}
        asyncio.run(app(scope, receive, send))
        assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 413, (path, sent[:2])
        assert json.loads(sent[1]["body"])["error"]["code"] == "payload_too_large"
        assert pulled == limit // (16 << 10) + 1, (path, pulled)  # 17 of the 128 chunks, not one more


@dataclass
class LiveServer:
    url: str
    port: int
    app: FastAPI


@pytest.fixture()
def live_server(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Start the API under uvicorn on 127.0.0.1 (a thread of this process, so tests can see app.state)."""
    started: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(settings: Settings) -> LiveServer:
        app = create_app(settings)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
        thread.start()
        started.append((server, thread))
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return LiveServer(f"http://127.0.0.1:{port}", port, app)

    yield start
    for server, thread in started:
        server.should_exit = True
        thread.join(30)


def _send_chunked_until_answered(port: int, path: str, token: str, total: int) -> tuple[int, bytes]:
    """POST `total` bytes as 16 KiB chunks (no Content-Length), stopping as soon as a response arrives; returns the
    bytes sent by then and the response head."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                     f"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        sent, chunk = 0, b"x" * (16 << 10)
        while sent < total and not select.select([sock], [], [], 0.01)[0]:
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except OSError:
                break  # the server closed the connection: its answer is waiting to be read
            sent += len(chunk)
        if sent >= total:
            sock.sendall(b"0\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            data = sock.recv(65536)
            if not data:
                break
            head += data
    return sent, head


def test_a_chunked_oversize_body_gets_413_over_a_real_server_before_it_is_all_sent(
        live_server: Callable[..., LiveServer], tmp_path: Path) -> None:
    settings = _settings(tmp_path / "data")
    tokens = _tokens(settings)
    server = live_server(settings)
    for path in ("/v1/batches", "/v1/queries"):
        sent, head = _send_chunked_until_answered(server.port, path, tokens["submitter"], total=2 << 20)
        assert head.startswith(b"HTTP/1.1 413"), (path, head[:300])
        assert b"content-type: application/json" in head.lower(), head
        assert sent < 1 << 20, (path, sent)  # answered at the 256 KiB limit, not after reading all 2 MiB
    assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200


# -- floods of slow questions; per-team in-flight limits; the bounded embedded queue ------------------------------

@pytest.fixture()
def held_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The embedded work thread blocks in every task until the event is set (then the task does nothing), so that
    questions and batches stay in flight for as long as a test needs."""
    release = threading.Event()

    def held(*_: Any) -> None:
        release.wait(60)

    monkeypatch.setattr(services.work, "work_in_process", held)  # the embedded runner of questions and batches
    monkeypatch.setattr(services.work, "dispatch_solves", held)
    yield release
    release.set()


@contextmanager
def releasing(event: threading.Event) -> Iterator[None]:
    """Set the event on the way out (before the app closes, whose shutdown waits for the held tasks)."""
    try:
        yield
    finally:
        event.set()


def test_sixty_slow_questions_leave_health_and_authenticated_reads_prompt(
        live_server: Callable[..., LiveServer], held_worker: threading.Event, tmp_path: Path) -> None:
    settings = _settings(tmp_path / "data", query_timeout_s=6, team_max_pending_queries=100, work_queue_max=200)
    tokens = _tokens(settings)
    server = live_server(settings)
    n = 64

    async def flood() -> tuple[list[httpx.Response], list[float], list[httpx.Response]]:
        limits = httpx.Limits(max_connections=n + 8, max_keepalive_connections=n + 8)
        async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as client:
            slow = [asyncio.create_task(client.post("/v1/queries", json={"question": f"What is {i} plus 1?"},
                                                    headers=_auth(tokens, "submitter"))) for i in range(n)]
            work = server.app.state.work
            deadline = time.monotonic() + 20
            while work.pending < n:  # all n admitted and waiting
                assert time.monotonic() < deadline, "the questions were not all admitted"
                await asyncio.sleep(0.02)
            prompt, timings = [], []
            for _ in range(5):
                for path, who in (("/healthz", None), ("/v1/blocks", "submitter_b"), ("/v1/batches/none", "submitter")):
                    t0 = time.perf_counter()
                    r = await client.get(path, headers=_auth(tokens, who) if who else {})
                    timings.append(time.perf_counter() - t0)
                    prompt.append(r)
            assert not any(t.done() for t in slow), "the slow questions ended before the reads were timed"
            return await asyncio.gather(*slow), timings, prompt

    answers, timings, prompt = asyncio.run(flood())
    assert [r.status_code for r in prompt] == [200, 200, 404] * 5, [r.text[:200] for r in prompt]
    assert max(timings) < 1.0, timings  # with the old sync handler these waited for a free thread (about 6 s)
    assert {r.status_code for r in answers} == {202}, {r.status_code for r in answers}
    assert all(r.json()["status"] == "pending" for r in answers)


def test_a_team_over_its_in_flight_limit_gets_429_with_retry_after_and_others_do_not(
        held_worker: threading.Event, tmp_path: Path) -> None:
    settings = _settings(tmp_path / "data", query_timeout_s=0.3, team_max_pending_queries=3,
                         team_max_pending_batches=2, busy_retry_after_s=7)
    tokens = _tokens(settings)
    a, b = _auth(tokens, "submitter"), _auth(tokens, "submitter_b")
    with TestClient(create_app(settings)) as c, releasing(held_worker):
        for i in range(3):
            r = c.post("/v1/queries", json={"question": f"What is {i} plus 2?"}, headers=a)
            assert r.status_code == 202 and r.json()["status"] == "pending", r.text
        rt = c.app.state.runtime  # type: ignore[attr-defined]
        before = stored_rows(rt)
        r = c.post("/v1/queries", json={"question": "What is 9 plus 2?"}, headers=a)
        assert r.status_code == 429 and r.headers["retry-after"] == "7", r.text
        assert r.json()["error"]["code"] == "too_many_in_flight" and r.json()["error"]["kind"] == "queries"
        assert stored_rows(rt) == before  # refused before anything was stored
        assert c.post("/v1/queries", json={"question": "What is 9 plus 2?"}, headers=b).status_code == 202

        for i in range(2):
            assert c.post("/v1/batches", json=[_problem(id=f"b{i}")], headers=a).status_code == 201
        r = c.post("/v1/batches", json=[_problem(id="b2")], headers=a)
        assert r.status_code == 429 and r.headers["retry-after"] == "7", r.text
        assert r.json()["error"]["kind"] == "batches"
        assert c.post("/v1/batches", json=[_problem(id="b0")], headers=b).status_code == 201
        assert c.get("/healthz").status_code == 200

        held_worker.set()  # the held work ends (without an outcome): the team's slots are free again
        deadline = time.monotonic() + 20
        while c.app.state.work.pending:  # type: ignore[attr-defined]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert c.post("/v1/batches", json=[_problem(id="b3")], headers=a).status_code == 201


def test_a_full_embedded_queue_answers_503_with_retry_after_and_stores_nothing(
        held_worker: threading.Event, tmp_path: Path) -> None:
    settings = _settings(tmp_path / "data", query_timeout_s=0.2, work_queue_max=2, busy_retry_after_s=3)
    tokens = _tokens(settings)
    with TestClient(create_app(settings)) as c, releasing(held_worker):
        assert c.post("/v1/queries", json={"question": "What is 1 plus 2?"},
                      headers=_auth(tokens, "submitter")).status_code == 202
        assert c.post("/v1/batches", json=[_problem()], headers=_auth(tokens, "submitter")).status_code == 201
        rt = c.app.state.runtime  # type: ignore[attr-defined]
        before = stored_rows(rt)
        for who in ("submitter", "submitter_b"):
            r = c.post("/v1/queries", json={"question": "What is 5 plus 2?"}, headers=_auth(tokens, who))
            assert r.status_code == 503 and r.headers["retry-after"] == "3", r.text
            assert r.json()["error"]["code"] == "queue_full"
            assert not any(ch.isdigit() for ch in r.json()["error"]["message"].split(";")[0])  # no one's count
            r = c.post("/v1/batches", json=[_problem()], headers=_auth(tokens, who))
            assert r.status_code == 503 and r.json()["error"]["code"] == "queue_full", r.text
        assert stored_rows(rt) == before
        assert c.get("/metrics", headers=_auth(tokens, "operator")).status_code == 200
        assert c.get("/healthz").status_code == 200


def test_with_a_broker_the_team_limit_counts_stored_pending_work(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """With a broker, in flight is what the database holds pending for the team (no worker here: the sends are
    recorded, nothing answers), so the limit holds across API processes and restarts."""
    import workers.queue.celery_app
    import workers.queue.dispatch
    import workers.queue.fleet

    sends: list[tuple[str, tuple[str, ...]]] = []
    monkeypatch.setattr(workers.queue.celery_app, "send",
                        lambda url, task, *args, queue=None: sends.append((task, args)))
    live = workers.queue.fleet.LiveFingerprint("f" * 32, ("tiny",), "graft." + "f" * 32, 0, 1)
    monkeypatch.setattr(workers.queue.dispatch, "choose_graft_queue", lambda rt, **kw: live)  # a live graft worker
    settings = _settings(tmp_path / "data", broker_url="amqp://guest:guest@127.0.0.1:1//", query_timeout_s=0.2,
                         team_max_pending_queries=2, team_max_pending_batches=1)
    tokens = _tokens(settings)
    a, b = _auth(tokens, "submitter"), _auth(tokens, "submitter_b")
    with TestClient(create_app(settings)) as c:
        for i in range(2):
            assert c.post("/v1/queries", json={"question": f"What is {i} plus 3?"}, headers=a).status_code == 202
        r = c.post("/v1/queries", json={"question": "What is 7 plus 3?"}, headers=a)
        assert r.status_code == 429 and r.headers["retry-after"] == "5", r.text
        assert c.post("/v1/queries", json={"question": "What is 7 plus 3?"}, headers=b).status_code == 202
        assert c.post("/v1/batches", json=[_problem()], headers=a).status_code == 201
        r = c.post("/v1/batches", json=[_problem(id="q")], headers=a)
        assert r.status_code == 429 and r.json()["error"]["kind"] == "batches", r.text
        assert c.post("/v1/batches", json=[_problem()], headers=b).status_code == 201
    assert [task for task, _ in sends].count("kvgraft.answer_query") == 3


@pytest.mark.parametrize("failure", [ConnectionRefusedError("the broker went away"), KeyError("a bug in dispatch")])
def test_work_stored_but_not_sent_keeps_its_ids_whatever_stopped_the_send(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        failure: Exception) -> None:
    """With a broker, a batch and a question are stored before they are sent: whatever stops the send (the broker
    down, or a bug), the client gets 201/202 with its ids and `dispatch: deferred`, the rows stay pending for beat
    or requeue, and a bug's traceback is logged (never a 500 that loses the ids of stored work)."""

    def broken(*args: Any, **kwargs: Any) -> None:
        raise failure

    monkeypatch.setattr(services.work, "dispatch_solves", broken)
    monkeypatch.setattr(services.work, "send_question", broken)
    settings = _settings(tmp_path / "data", broker_url="amqp://guest:guest@127.0.0.1:1//", query_timeout_s=0.2)
    tokens = _tokens(settings)
    with TestClient(create_app(settings)) as c:
        r = c.post("/v1/batches", json=[_problem()], headers=_auth(tokens, "submitter"))
        assert r.status_code == 201 and r.json()["dispatch"] == "deferred", r.text
        q = c.post("/v1/queries", json={"question": "What is 2 plus 5?"}, headers=_auth(tokens, "submitter"))
        assert q.status_code == 202 and q.json()["dispatch"] == "deferred", q.text
    with open_runtime(settings) as rt, rt.session() as s:
        assert [p.status for p in s.scalars(sa.select(ProblemRow))] == ["pending"]
        assert s.get(QueryRequestRow, q.json()["request_id"]).status == "pending"
    logged = capsys.readouterr()
    bug = isinstance(failure, KeyError)
    assert ("api.dispatch_failed" in logged.err + logged.out) == bug
    assert ("Traceback" in logged.err + logged.out) == bug
