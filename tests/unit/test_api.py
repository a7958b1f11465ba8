"""The HTTP API in-process (embedded mode: SQLite, local blocks, the tiny model, work on a background thread):
roles, team isolation, bad input, lists, provenance, metrics, and schema-driven fuzzing."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from services.api import create_app
from store.db import AnswerRow, BlockRow, ProblemRow
from store.repository import create_api_token, get_or_create_team, revoke_token, set_team_trusted
from tests.fixtures.ready import wait_ready
from workers.runtime import open_runtime
from workers.settings import Settings

pytestmark = pytest.mark.unit

BATCH = "\n".join(json.dumps(p) for p in [
    {"id": "a", "question": "A box holds 12 eggs. How many eggs are in 5 boxes?", "answer": 60,
     "solution": "print(12 * 5)"},
    {"id": "b", "question": "What is 7 plus 8?", "answer": 15, "solution": "print(7 + 9)"},
])


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("api-data")
    settings = Settings(data_dir=data, model="tiny", database_url=None, store_url=None, broker_url=None,
                        query_timeout_s=60, max_body_bytes=256 << 10)
    rt = open_runtime(settings)
    tokens = {}
    with rt.session() as s:
        for name, team, role in [("a", "team-a", "submitter"), ("b", "team-b", "submitter"),
                                 ("auditor", "audit", "auditor"), ("operator", "ops", "operator"),
                                 ("revoked", "team-a", "submitter")]:
            row, token = create_api_token(s, team=get_or_create_team(s, name=team), role=role)
            tokens[name] = token
            if name == "revoked":
                revoke_token(s, token_id=row.id)
    rt.close()
    app = create_app(settings)
    with TestClient(app) as client:
        yield {"client": client, "tokens": tokens, "settings": settings, "app": app}


def _h(api: dict[str, Any], who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api['tokens'][who]}"}


def _wait_batch(api: dict[str, Any], batch_id: str, who: str = "a") -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        r = api["client"].get(f"/v1/batches/{batch_id}", headers=_h(api, who))
        assert r.status_code == 200, r.text
        if r.json()["status"] == "done":
            return r.json()
        assert time.monotonic() < deadline, r.json()
        time.sleep(0.1)


@pytest.fixture(scope="module")
def batch_a(api: dict[str, Any]) -> dict[str, Any]:
    r = api["client"].post("/v1/batches", content=BATCH, headers=_h(api, "a") | {"Content-Type":
                                                                                  "application/x-ndjson"})
    assert r.status_code == 201, r.text
    return _wait_batch(api, r.json()["batch_id"])


def test_health_needs_no_token_and_metrics_are_for_operators(api: dict[str, Any]) -> None:
    """Health and readiness are public and say nothing about the deployment; its state (the store, the broker,
    how blocks are protected) and the metrics are every team's business together (store bytes, evictions,
    answers), so neither an anonymous caller nor a submitter reads them: an operator or auditor token does."""
    wait_ready(api["client"])
    health = api["client"].get("/healthz").json()
    assert health == {"status": "ready", "checking": []}
    assert api["client"].get("/readyz").json() == health
    assert api["client"].get("/v1/status").status_code == 401
    assert api["client"].get("/v1/status", headers=_h(api, "a")).status_code == 403
    status = api["client"].get("/v1/status", headers=_h(api, "operator")).json()
    assert status["status"] == "ready" and status["store"].startswith("file://") and status["broker"] is False
    assert status["blocks_signed"] is False and status["block_signing"].startswith("off")
    assert api["client"].get("/metrics").status_code == 401
    refused = api["client"].get("/metrics", headers=_h(api, "a"))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert api["client"].get("/metrics", headers=_h(api, "auditor")).status_code == 200
    text = api["client"].get("/metrics", headers=_h(api, "operator")).text
    for name in ("kvgraft_api_requests_total", "kvgraft_queue_depth", "kvgraft_answers_total",
                 "kvgraft_graft_latency_seconds", "kvgraft_gate_results", "kvgraft_sandbox_verdicts"):
        assert name in text
    metric_lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert all(ln.startswith("kvgraft_") for ln in metric_lines)


def test_a_team_submits_and_reads_its_results(api: dict[str, Any], batch_a: dict[str, Any]) -> None:
    assert batch_a["counts"] == {"total": 2, "done": 1, "failed": 1, "pending": 0}
    statuses = {p["id"]: p["status"] for p in batch_a["problems"]}
    assert statuses == {"a": "solved", "b": "rejected"}


def test_other_teams_get_404_and_roles_are_enforced(api: dict[str, Any], batch_a: dict[str, Any]) -> None:
    c = api["client"]
    assert c.get(f"/v1/batches/{batch_a['batch_id']}", headers=_h(api, "b")).status_code == 404
    r = c.post("/v1/batches", json=[{"id": "x", "question": "q", "answer": 1}], headers=_h(api, "auditor"))
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert c.post("/v1/queries", json={"question": "q"}, headers=_h(api, "operator")).status_code == 403
    assert c.get("/v1/blocks").status_code == 401
    assert c.get("/v1/blocks", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert c.get("/v1/blocks", headers=_h(api, "revoked")).status_code == 401
    assert c.get("/v1/attestations", headers=_h(api, "a")).status_code == 403
    assert c.get("/v1/provenance/" + "0" * 64, headers=_h(api, "operator")).status_code == 403


def test_malformed_batches_are_rejected_and_nothing_is_stored(api: dict[str, Any]) -> None:
    c = api["client"]
    before = _problem_count(api)
    bad = '{"id": "ok", "question": "fine", "answer": 1}\n{"id": "x"\n{"id": "y", "question": "q"}\n'
    r = c.post("/v1/batches", content=bad, headers=_h(api, "a") | {"Content-Type": "application/x-ndjson"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_batch"
    assert [ln["line"] for ln in r.json()["error"]["lines"]] == [2, 3]
    r = c.post("/v1/batches", content=b"\xff\xfe\x00binary", headers=_h(api, "a") | {"Content-Type": "text/plain"})
    assert r.status_code == 400
    r = c.post("/v1/batches", content="{not json", headers=_h(api, "a") | {"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_json"
    r = c.post("/v1/batches", content="x", headers=_h(api, "a") | {"Content-Type": "image/png"})
    assert r.status_code == 415
    huge = json.dumps([{"id": "h", "question": "q " * 200_000, "answer": 1}])
    r = c.post("/v1/batches", content=huge, headers=_h(api, "a") | {"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"
    r = c.post("/v1/batches", json={"problems": [{"id": "s", "question": "q", "answer": 1}], "shared": "yes"},
               headers=_h(api, "a"))
    assert r.status_code == 400
    assert _problem_count(api) == before


def _problem_count(api: dict[str, Any]) -> int:
    rt = open_runtime(api["settings"])
    try:
        with rt.session() as s:
            return int(s.scalar(sa.select(sa.func.count()).select_from(ProblemRow)) or 0)
    finally:
        rt.close()


def test_queries_recur_for_the_team_and_are_private_unless_shared(api: dict[str, Any], batch_a: dict[str, Any]
                                                                   ) -> None:
    c = api["client"]
    q = {"question": "A box holds 12 eggs. How many eggs are in 5 boxes?"}
    r = c.post("/v1/queries", json=q, headers=_h(api, "a"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert {"answer", "route", "block_id", "decode_tokens", "verified", "attested"} <= set(body)
    assert body["route"] == "recurrence" and body["block_id"] == batch_a["problems"][0]["block_id"]
    other = c.post("/v1/queries", json=q, headers=_h(api, "b")).json()
    assert other["route"] != "recurrence" and other["block_id"] != body["block_id"]
    assert c.get(f"/v1/queries/{body['request_id']}", headers=_h(api, "b")).status_code == 404
    assert c.get(f"/v1/queries/{body['request_id']}", headers=_h(api, "a")).json()["route"] == "recurrence"
    shared = c.post("/v1/batches", json={"problems": [{"id": "s", "question": "What is 9 times 9?", "answer": 81,
                                                       "solution": "print(81)"}], "shared": True},
                    headers=_h(api, "a"))
    _wait_batch(api, shared.json()["batch_id"])
    untrusted = c.post("/v1/queries", json={"question": "What is 9 times 9?"}, headers=_h(api, "b")).json()
    assert untrusted["route"] != "recurrence"  # team-a's shared block rests on team-a's key: not trusted yet
    rt = open_runtime(api["settings"])
    try:
        with rt.session() as s:
            set_team_trusted(s, name="team-a", trusted=True)  # what `kvgraft teams trust team-a` does
        got = c.post("/v1/queries", json={"question": "What is 9 times 9?"}, headers=_h(api, "b")).json()
        assert got["route"] == "recurrence" and got["verified_by"] == "team-a"
        assert c.get("/v1/teams/me/graft-from", headers=_h(api, "b")).json() == {
            "team": "team-b", "chosen": False, "teams": ["team-a"]}
        chosen = c.put("/v1/teams/me/graft-from", json={"teams": []}, headers=_h(api, "b"))
        assert chosen.status_code == 200 and chosen.json()["chosen"] is True and chosen.json()["teams"] == []
        again = c.post("/v1/queries", json={"question": "What is 9 times 9?"}, headers=_h(api, "b")).json()
        assert again["route"] != "recurrence"  # team-b chose to graft no other team's blocks
        unknown = c.put("/v1/teams/me/graft-from", json={"teams": ["no-such-team"]}, headers=_h(api, "b"))
        assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "unknown_team"
        assert c.put("/v1/teams/me/graft-from", json={"teams": None}, headers=_h(api, "b")).json()["chosen"] is False
    finally:
        with rt.session() as s:
            set_team_trusted(s, name="team-a", trusted=False)
        rt.close()


def test_cache_metrics_count_every_answer_with_its_denominator(api: dict[str, Any], batch_a: dict[str, Any]
                                                               ) -> None:
    c = api["client"]
    q = {"question": "A box holds 12 eggs. How many eggs are in 5 boxes?"}
    assert c.post("/v1/queries", json=q, headers=_h(api, "a")).json()["route"] == "recurrence"
    assert c.post("/v1/queries", json={"question": "Unrelated: what colour is the sky?"},
                  headers=_h(api, "a")).status_code == 200
    values = {}
    for line in c.get("/metrics", headers=_h(api, "operator")).text.splitlines():
        if line.startswith(("kvgraft_cache_", "kvgraft_store_bytes", "kvgraft_evict")):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    rt = open_runtime(api["settings"])
    try:
        with rt.session() as s:
            total = s.scalar(sa.select(sa.func.count()).select_from(AnswerRow))
            hits = s.scalar(sa.select(sa.func.count()).select_from(AnswerRow).where(AnswerRow.block_id.is_not(None)))
            block = s.get(BlockRow, batch_a["problems"][0]["block_id"])
            assert block is not None and block.grafts >= 1 and block.last_used_at is not None  # use accounting
    finally:
        rt.close()
    assert values['kvgraft_cache_answers{outcome="hit"}'] == hits >= 1
    assert values['kvgraft_cache_answers{outcome="hit"}'] + values['kvgraft_cache_answers{outcome="miss"}'] == total
    assert values["kvgraft_cache_restored_tokens"] >= block.n_tokens and values["kvgraft_store_bytes"] > 0


def test_block_lists_are_paged_and_team_scoped(api: dict[str, Any], batch_a: dict[str, Any]) -> None:
    c = api["client"]
    mine = c.get("/v1/blocks", headers=_h(api, "a")).json()
    theirs = c.get("/v1/blocks", headers=_h(api, "b")).json()
    everyone = c.get("/v1/blocks", headers=_h(api, "operator")).json()
    block_a = batch_a["problems"][0]["block_id"]
    assert block_a in {i["id"] for i in mine["items"]} and block_a not in {i["id"] for i in theirs["items"]}
    assert everyone["total"] >= mine["total"] >= 2
    assert {"id", "kind", "fingerprint", "team", "n_tokens"} <= set(mine["items"][0])
    page = c.get("/v1/blocks", params={"limit": 1, "offset": 1}, headers=_h(api, "operator")).json()
    assert len(page["items"]) == 1 and page["total"] == everyone["total"]
    assert c.get("/v1/blocks", params={"limit": 1001}, headers=_h(api, "a")).status_code == 422
    assert c.get(f"/v1/blocks/{block_a}", headers=_h(api, "b")).status_code == 404
    assert c.get(f"/v1/blocks/{block_a}", headers=_h(api, "a")).json()["attestations"][0]["status"] == "attested"


def test_auditors_read_provenance_of_every_team(api: dict[str, Any], batch_a: dict[str, Any]) -> None:
    c = api["client"]
    block_a = batch_a["problems"][0]["block_id"]
    prov = c.get(f"/v1/provenance/{block_a}", headers=_h(api, "auditor")).json()
    assert prov["problems"][0]["team"] == "team-a"
    assert prov["problems"][0]["generations"][0]["verdict"] == "reference"
    digest = prov["problems"][0]["question_digest"]
    found = c.get("/v1/provenance", params={"problem_digest": digest}, headers=_h(api, "auditor")).json()
    assert [i["block"]["id"] for i in found["items"]] == [block_a]
    by_team = c.get("/v1/provenance", params={"team": "team-b"}, headers=_h(api, "auditor")).json()
    assert by_team["total"] == 0
    later = c.get("/v1/provenance", params={"since": "2999-01-01T00:00:00Z"}, headers=_h(api, "auditor")).json()
    assert later["total"] == 0
    atts = c.get("/v1/attestations", headers=_h(api, "operator")).json()
    assert atts["total"] >= 2 and atts["summary"][0]["count"] >= 1


def test_concurrent_submissions_are_all_accounted_for(api: dict[str, Any]) -> None:
    c = api["client"]
    ids: list[str] = []
    errors: list[str] = []

    def submit(i: int) -> None:
        body = [{"id": f"c{i}", "question": f"What is {i} plus 1?", "answer": i + 1, "solution": f"print({i} + 1)"}]
        r = c.post("/v1/batches", json=body, headers=_h(api, "b"))
        (ids.append(r.json()["batch_id"]) if r.status_code == 201 else errors.append(r.text))

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(set(ids)) == 8
    for batch_id in ids:
        assert _wait_batch(api, batch_id, "b")["counts"]["done"] == 1


def test_errors_are_json_with_a_stable_code(api: dict[str, Any]) -> None:
    c = api["client"]
    r = c.get("/v1/batches/does-not-exist", headers=_h(api, "a"))
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = c.post("/v1/queries", json={"question": ""}, headers=_h(api, "a"))
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
    assert c.get("/no/such/path").json()["error"]["code"] == "not_found"


def test_an_operator_deposit_is_listed_for_teams_without_a_5xx(api: dict[str, Any]) -> None:
    from workers.flywheel.deposit import deposit_text

    rt = open_runtime(api["settings"])
    try:
        doc = deposit_text(rt, rt.engine(), text="The deployment's own manual: the depot opens at 06:10.",
                           kind="document", source={"file": "manual.txt"})  # no team: the deployment's library
    finally:
        rt.close()
    c = api["client"]
    listed = c.get("/v1/blocks", headers=_h(api, "b"))
    assert listed.status_code == 200, listed.text
    item = next(i for i in listed.json()["items"] if i["id"] == doc.block_id)
    assert item["team"] is None and item["shared"] is False
    shown = c.get(f"/v1/blocks/{doc.block_id}", headers=_h(api, "a"))
    assert shown.status_code == 200 and shown.json()["source"] is None  # the deployment's source is not a team's
