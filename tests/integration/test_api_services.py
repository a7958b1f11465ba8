"""The HTTP API end to end: a real uvicorn server (`kvgraft serve`) over PostgreSQL, RabbitMQ, an S3 server and
real solve and graft worker processes, driven over HTTP and through `kvgraft submit`."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from bench.local_servers import free_port
from services.cli import app
from store.db import ProblemRow
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.processes import KvgraftProcess, api_server, worker
from workers.runtime import open_runtime

pytestmark = pytest.mark.integration
runner = CliRunner()

BATCH = "\n".join(json.dumps(p) for p in [
    {"id": "a", "question": "A box holds 12 eggs. How many eggs are in 5 boxes?", "answer": 60,
     "solution": "print(12 * 5)"},
    {"id": "b", "question": "What is 7 plus 8?", "answer": 15, "solution": "print(7 + 9)"},
    {"id": "c", "question": "What is 3 times 4?", "answer": 12},
])


@pytest.fixture()
def stack(flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path) -> dict[str, Any]:
    rt = open_runtime()
    tokens = {}
    with rt.session() as s:
        for name, team, role in [("a", "team-a", "submitter"), ("b", "team-b", "submitter"),
                                 ("auditor", "audit", "auditor")]:
            _, tokens[name] = create_api_token(s, team=get_or_create_team(s, name=team), role=role)
    rt.close()
    port = free_port()
    workers.extend([worker("solve", tmp_path), worker("graft", tmp_path), api_server(port, tmp_path)])
    return {"url": f"http://127.0.0.1:{port}", "tokens": tokens}


def _client(stack: dict[str, Any], who: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {stack['tokens'][who]}"} if who else {}
    return httpx.Client(base_url=stack["url"], headers=headers, timeout=120)


def _problems() -> int:
    rt = open_runtime()
    try:
        with rt.session() as s:
            return int(s.scalar(sa.select(sa.func.count()).select_from(ProblemRow)) or 0)
    finally:
        rt.close()


def test_teams_auditors_and_bad_input_over_http(stack: dict[str, Any], tmp_path: Path) -> None:
    f = tmp_path / "batch.jsonl"
    f.write_text(BATCH)
    result = runner.invoke(app, ["submit", str(f), "--api", stack["url"], "--token", stack["tokens"]["a"],
                                 "--wait", "--json"])
    assert result.exit_code == 0, result.stderr
    batch = json.loads(result.stdout)
    assert batch["status"] == "done" and batch["counts"] == {"total": 3, "done": 1, "failed": 2, "pending": 0}
    with _client(stack, "a") as a, _client(stack, "b") as b, _client(stack, "auditor") as auditor, \
            _client(stack, None) as anonymous:
        assert b.get(f"/v1/batches/{batch['batch_id']}").status_code == 404
        block_id = next(p["block_id"] for p in batch["problems"] if p["id"] == "a")
        answer = a.post("/v1/queries", json={"question": "A box holds 12 eggs. How many eggs are in 5 boxes?"})
        assert answer.status_code == 200 and answer.json()["route"] == "recurrence"
        assert answer.json()["block_id"] == block_id and answer.json()["attested"] is True
        prov = auditor.get(f"/v1/provenance/{block_id}")
        assert prov.status_code == 200 and prov.json()["problems"][0]["team"] == "team-a"
        assert auditor.post("/v1/batches", json=[{"id": "x", "question": "q", "answer": 1}]).status_code == 403
        assert anonymous.get("/v1/blocks").status_code == 401
        assert httpx.get(f"{stack['url']}/v1/blocks", headers={"Authorization": "Bearer wrong"}).status_code == 401
        before = _problems()
        bad = a.post("/v1/batches", content='{"id": "ok", "question": "q", "answer": 1}\n{broken\n',
                     headers={"Content-Type": "application/x-ndjson"})
        assert bad.status_code == 400 and bad.json()["error"]["lines"][0]["line"] == 2
        assert _problems() == before
        assert anonymous.get("/metrics").status_code == 401 and a.get("/metrics").status_code == 403
        metrics = auditor.get("/metrics").text
        assert 'kvgraft_queue_depth{queue="solve"}' in metrics and "kvgraft_answers_total" in metrics


def test_concurrent_submissions_are_all_accounted_for(stack: dict[str, Any]) -> None:
    ids: list[str] = []
    failures: list[str] = []

    def submit(i: int) -> None:
        body = [{"id": f"p{i}", "question": f"What is {i} plus 2?", "answer": i + 2, "solution": f"print({i} + 2)"}]
        with _client(stack, "b") as b:
            r = b.post("/v1/batches", json=body)
            (ids.append(r.json()["batch_id"]) if r.status_code == 201 else failures.append(r.text))

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and len(set(ids)) == 10
    deadline = time.monotonic() + 180
    with _client(stack, "b") as b:
        for batch_id in ids:
            while (state := b.get(f"/v1/batches/{batch_id}").json())["status"] != "done":
                assert time.monotonic() < deadline, state
                time.sleep(0.3)
            assert state["counts"]["done"] == 1
