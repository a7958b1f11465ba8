"""A mixed fleet behind one API: two graft workers whose fingerprints differ (the tiny model and a tiny model of
another seed), real RabbitMQ, PostgreSQL and S3. Each consumes only its fingerprint's queues; a question whose
recurrence block is of fingerprint A is answered by A's worker and never reaches B's (which would have to refuse
the block); a question for B's model is answered by B; with no live worker the API says so (503 no_live_worker)
and the request ends failed instead of waiting in a queue nothing consumes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engine.tiny import write_tiny_gguf
from store.db import QueryRequestRow, WorkerRow
from tests.fixtures.processes import KvgraftProcess
from workers.problems import parse_problems_jsonl
from workers.queue.dispatch import dispatch_solves, submit_batch, submit_question
from workers.queue.fleet import NoLiveWorkerError, attest_target, choose_graft_queue, graft_queue
from workers.runtime import open_runtime

pytestmark = pytest.mark.integration

QUESTION = "A crate holds 7 pears. How many pears are in 3 crates?"


def _wait(predicate: Any, timeout: float, what: str, procs: list[KvgraftProcess]) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n" + "\n".join(p.log()[-2000:] for p in procs))
        time.sleep(0.3)


def test_graft_work_reaches_only_workers_of_its_fingerprint(flywheel_env: dict[str, str], tmp_path: Path,
                                                            workers: list[KvgraftProcess]) -> None:
    from fastapi.testclient import TestClient

    from services.api import create_app
    from store.repository import create_api_token, get_or_create_team
    from workers.settings import Settings

    other_model = write_tiny_gguf(tmp_path / "tiny-other.gguf", seed=2)
    rt = open_runtime()
    try:
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(
            f'{{"id": "p", "question": "{QUESTION}", "answer": 21, "solution": "print(7 * 3)"}}'), team="t")
        dispatch_solves(rt, ids)
        workers.append(KvgraftProcess(["worker", "solve"], tmp_path, ready="ready"))
        _wait(lambda: _status(rt, ids[0]) == "solved", 120, "the solution", workers)
        a = KvgraftProcess(["worker", "graft", "--hostname", "graft-a@test"], tmp_path, ready="ready")
        b = KvgraftProcess(["worker", "graft", "--hostname", "graft-b@test"], tmp_path, ready="ready",
                           env={"KVGRAFT_MODEL": str(other_model)})
        workers.extend([a, b])
        with rt.session() as s:
            fingerprints = {r.name: r.fingerprint for r in s.query(WorkerRow)}
            _, token = create_api_token(s, team=get_or_create_team(s, name="t"), role="submitter")
        fp_a, fp_b = fingerprints["graft-a@test"], fingerprints["graft-b@test"]
        assert fp_a != fp_b and fp_a == rt.engine().fingerprint.id
        headers = {"Authorization": f"Bearer {token}"}
        with TestClient(create_app(Settings())) as client:
            answered = []
            for _ in range(3):
                r = client.post("/v1/queries", json={"question": QUESTION}, headers=headers)
                assert r.status_code == 200, r.text
                assert r.json()["route"] == "recurrence"
                answered.append(r.json()["request_id"])
            assert all(rid in a.log() for rid in answered) and not any(rid in b.log() for rid in answered)
            # the asker names B's model: B answers it (without A's block, and without refusing anything)
            request_id = submit_question(rt, QUESTION, team_id=None, options={"model": str(other_model)})
            from workers.queue.dispatch import send_question

            assert send_question(rt, request_id) == graft_queue(fp_b)
            _wait(lambda: _request_status(rt, request_id) == "done", 60, "B's answer", workers)
            assert request_id in b.log()
            for log in (a.log(), b.log()):
                assert "FingerprintMismatch" not in log and "refused" not in log.lower()
            fleet = _workers_json()
            assert {w["name"]: (w["fingerprint"], w["live"]) for w in fleet if w["kind"] == "graft"} == {
                "graft-a@test": (fp_a, True), "graft-b@test": (fp_b, True)}
            # A is gone: its blocks' attestations have no live worker, and questions go to B
            a.stop()
            _wait(lambda: _no_consumer(rt, fp_a), 30, "the broker to see A gone", workers)
            with pytest.raises(NoLiveWorkerError, match=fp_a):
                attest_target(rt, fp_a)
            assert choose_graft_queue(rt, question=QUESTION, team_id=None, model=None).fingerprint == fp_b
            # nobody left: reported at once, and the request is not left pending
            b.stop()
            _wait(lambda: _no_consumer(rt, fp_b), 30, "the broker to see B gone", workers)
            r = client.post("/v1/queries", json={"question": QUESTION}, headers=headers)
            assert r.status_code == 503 and r.json()["error"]["code"] == "no_live_worker", r.text
            assert _request_status(rt, r.json()["error"]["request_id"]) == "failed"
            assert not any(w["live"] for w in _workers_json() if w["kind"] == "graft")
        assert batch_id
    finally:
        rt.close()


def _status(rt: Any, problem_id: str) -> str:
    from store.db import ProblemRow

    with rt.session() as s:
        return s.get(ProblemRow, problem_id).status


def _request_status(rt: Any, request_id: str) -> str:
    with rt.session() as s:
        return s.get(QueryRequestRow, request_id).status


def _no_consumer(rt: Any, fingerprint: str) -> bool:
    from workers.queue.fleet import queue_states

    return queue_states(rt.settings.broker_url, [graft_queue(fingerprint)])[graft_queue(fingerprint)].consumers == 0


def _workers_json() -> list[dict[str, Any]]:
    import json

    from typer.testing import CliRunner

    from services.cli import app

    result = CliRunner().invoke(app, ["workers", "--json"])
    assert result.exit_code == 0, result.stderr
    return list(json.loads(result.stdout)["items"])
