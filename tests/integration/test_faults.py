"""Faults injected into the running system, each ending with the consistency check: every accepted problem (and
question) has exactly one outcome, every block row has its object with a matching hash, no duplicate blocks or
samples. Services are real: PostgreSQL, RabbitMQ, moto S3 behind a fault-injecting proxy, worker processes."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from store.db import AnswerRow, BlockRow, GenerationRow, ProblemRow, QueryRequestRow, make_engine
from tests.fixtures.processes import KvgraftProcess, worker
from workers.flywheel.solve import SolveParams
from workers.problems import parse_problems_jsonl
from workers.queue.dispatch import dispatch_solves, submit_batch, submit_question
from workers.runtime import open_runtime

pytestmark = pytest.mark.integration


def _batch(n_sampled: int, n_reference: int, prefix: str) -> str:
    lines = [{"id": f"{prefix}s{i}", "question": f"What is {i} times {i + 2}?", "answer": i * (i + 2)}
             for i in range(n_sampled)]
    lines += [{"id": f"{prefix}r{i}", "question": f"A crate holds {i + 3} pears. How many pears are in 4 crates?",
               "answer": 4 * (i + 3), "solution": f"print(4 * {i + 3})"} for i in range(n_reference)]
    return "\n".join(json.dumps(x) for x in lines)


def _wait_until(predicate: Any, timeout: float, what: str, logs: list[KvgraftProcess]) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            tails = "\n".join(w.log()[-2500:] for w in logs)
            raise AssertionError(f"timed out waiting for {what}\n{tails}")
        time.sleep(0.3)


def _statuses(rt: Any, batch_id: str) -> list[str]:
    with rt.session() as s:
        return [p.status for p in s.scalars(sa.select(ProblemRow).where(ProblemRow.batch_id == batch_id))]


def assert_consistent(rt: Any, batch_ids: list[str], expected_problems: int) -> None:
    with rt.session() as s:
        problems = s.scalars(sa.select(ProblemRow).where(ProblemRow.batch_id.in_(batch_ids))).all()
        assert len(problems) == expected_problems
        assert all(p.status in ("solved", "failed", "rejected") for p in problems), [p.status for p in problems]
        assert all((p.status == "solved") == (p.block_id is not None) for p in problems)
        gens = s.execute(sa.select(GenerationRow.problem_id, GenerationRow.sample_index)).all()
        assert len(gens) == len(set(gens))
        rows = s.scalars(sa.select(BlockRow)).all()
        assert len(rows) == len({r.id for r in rows})
        for row in rows:
            block = rt.blocks.get(row.fingerprint, row.id, use_cache=False)  # object present, hash verified
            assert block.identity.payload_sha256 == row.payload_sha256
        objects = list(rt.blocks.list())
        assert len(objects) == len({(o.fingerprint, o.block_id) for o in objects})
        requests = s.scalars(sa.select(QueryRequestRow)).all()
        for req in requests:
            assert req.status in ("done", "failed") and (req.status != "done" or req.query_id is not None)
        answered = [q.id for q in s.scalars(sa.select(AnswerRow))]
        assert len(answered) == len(set(answered))
        assert sorted(r.query_id for r in requests if r.query_id) == sorted(
            {r.query_id for r in requests if r.query_id})


def test_a_graft_worker_killed_mid_task_answers_every_question_once(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path) -> None:
    rt = open_runtime()
    try:
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(_batch(0, 2, "g")), team="t")
        dispatch_solves(rt, ids)
        workers.append(worker("solve", tmp_path))
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 120, "the batch", workers)
        questions = [f"What is {i} plus {i + 7} minus 3?" for i in range(6)]  # new: direct and transfer sampling
        requests = [submit_question(rt, q, team_id=None) for q in questions]
        from workers.queue.celery_app import send
        from workers.queue.fleet import graft_queue

        queue = graft_queue(rt.engine().fingerprint.id)  # the queue the graft worker will consume
        for r in requests:
            send(flywheel_env["KVGRAFT_BROKER_URL"], "kvgraft.answer_query", r, queue=queue)
        graft = worker("graft", tmp_path)
        workers.append(graft)
        graft.wait_for("kvgraft.answer_query", 60)
        time.sleep(0.5)
        graft.kill()
        workers.append(worker("graft", tmp_path))

        def all_answered() -> bool:
            with rt.session() as s:
                return all(s.get(QueryRequestRow, r).status != "pending" for r in requests)

        _wait_until(all_answered, 240, "every question", workers)
        assert_consistent(rt, [batch_id], 2)
    finally:
        rt.close()


def test_rabbitmq_stopped_and_started_during_a_batch(flywheel_env: dict[str, str], workers: list[KvgraftProcess],
                                                     tmp_path: Path) -> None:
    rt = open_runtime()
    try:
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(_batch(6, 2, "r")), team="t",
                                     params=SolveParams(samples=10, max_tokens=64))
        dispatch_solves(rt, ids)
        workers.append(worker("solve", tmp_path))
        _wait_until(lambda: sum(st != "pending" for st in _statuses(rt, batch_id)) >= 1, 120, "a first outcome",
                    workers)
        subprocess.run(["rabbitmqctl", "stop_app"], check=True, capture_output=True, timeout=120)
        try:
            time.sleep(3)
        finally:
            subprocess.run(["rabbitmqctl", "start_app"], check=True, capture_output=True, timeout=120)
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 300, "the batch", workers)
        assert_consistent(rt, [batch_id], 8)
    finally:
        rt.close()


def test_s3_unreachable_during_deposits_then_back(flywheel_env: dict[str, str], workers: list[KvgraftProcess],
                                                  tmp_path: Path, s3_proxy: Any, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    monkeypatch.setenv("KVGRAFT_S3_ENDPOINT_URL", s3_proxy.url)  # workers reach S3 only through the proxy
    rt = open_runtime()
    try:
        s3_proxy.down()
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(_batch(0, 3, "s")), team="t")
        dispatch_solves(rt, ids)
        solve = worker("solve", tmp_path)
        workers.append(solve)
        _wait_until(lambda: "Retry in" in solve.log() or "retry" in solve.log().lower(), 120, "a retry", workers)
        assert all(st == "pending" for st in _statuses(rt, batch_id))  # nothing half-done is visible
        s3_proxy.up()
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 300, "the batch", workers)
        assert_consistent(rt, [batch_id], 3)
        assert _statuses(rt, batch_id) == ["solved"] * 3
    finally:
        rt.close()


def test_database_connections_dropped_during_a_batch(flywheel_env: dict[str, str], workers: list[KvgraftProcess],
                                                     tmp_path: Path) -> None:
    rt = open_runtime()
    admin = make_engine(flywheel_env["KVGRAFT_DATABASE_URL"])
    try:
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(_batch(4, 2, "d")), team="t",
                                     params=SolveParams(samples=10, max_tokens=64))
        dispatch_solves(rt, ids)
        workers.append(worker("solve", tmp_path))
        stop = threading.Event()

        def terminate_backends() -> None:
            while not stop.is_set():
                with admin.connect() as conn:
                    conn.execute(sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                         "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
                    conn.commit()
                stop.wait(1.5)

        killer = threading.Thread(target=terminate_backends, daemon=True)
        killer.start()
        time.sleep(6)
        stop.set()
        killer.join()
        rt.sessions.kw["bind"].dispose()  # this process's pooled connections were terminated too
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 300, "the batch", workers)
        assert_consistent(rt, [batch_id], 6)
    finally:
        admin.dispose()
        rt.close()


def test_a_corrupted_and_tiny_read_cache_under_a_running_graft_worker(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVGRAFT_READ_CACHE_BYTES", "1")  # every fetch evicts the rest
    rt = open_runtime()
    try:
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(_batch(0, 3, "c")), team="t")
        dispatch_solves(rt, ids)
        workers.append(worker("solve", tmp_path))
        workers.append(worker("graft", tmp_path))
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 120, "the batch", workers)
        from workers.queue.dispatch import send_question

        def ask(q: str) -> str:
            req = submit_question(rt, q, team_id=None)
            send_question(rt, req)
            _wait_until(lambda: _request(rt, req).status != "pending", 60, "an answer", workers)
            return req

        questions = ["A crate holds 3 pears. How many pears are in 4 crates?",
                     "A crate holds 4 pears. How many pears are in 4 crates?"]
        for q in questions:
            ask(q)
        cache = Path(flywheel_env["KVGRAFT_DATA_DIR"]) / "read-cache"
        for f in cache.glob("*"):
            if f.is_file():
                data = bytearray(f.read_bytes())
                data[-1] ^= 0xFF
                f.write_bytes(bytes(data))
        for q in questions:
            req = ask(q)
            with rt.session() as s:
                row = s.get(AnswerRow, _request(rt, req).query_id)
                assert row.route == "recurrence" and row.block_id is not None
        assert_consistent(rt, [batch_id], 3)
    finally:
        rt.close()


def _request(rt: Any, request_id: str) -> QueryRequestRow:
    with rt.session() as s:
        return s.get(QueryRequestRow, request_id)


def test_a_batch_submitted_while_the_broker_is_unreachable_is_kept_and_requeued(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from services.api import create_app
    from services.cli import app as cli
    from store.repository import create_api_token, get_or_create_team
    from workers.settings import Settings

    rt = open_runtime()
    try:
        with rt.session() as s:
            _, token = create_api_token(s, team=get_or_create_team(s, name="t"), role="submitter")
        unreachable = Settings(broker_url="amqp://guest:guest@127.0.0.1:9//")  # nothing listens on port 9
        with TestClient(create_app(unreachable)) as client:
            r = client.post("/v1/batches", content=_batch(0, 2, "b"),
                            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"})
        assert r.status_code == 201 and r.json()["dispatch"] == "deferred"
        batch_id = r.json()["batch_id"]
        workers.append(worker("solve", tmp_path))
        time.sleep(2)
        assert _statuses(rt, batch_id) == ["pending", "pending"]  # accepted and kept, not lost
        result = CliRunner().invoke(cli, ["requeue", "--older-than", "0s", "--json"])
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["problems"] == 2
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 120, "the batch", workers)
        assert_consistent(rt, [batch_id], 2)
    finally:
        rt.close()


def test_work_deferred_while_the_broker_was_unreachable_is_requeued_by_beat(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same outage, and no person: `kvgraft beat` schedules the periodic pass, a worker runs it, the lost
    problems are sent again and solved."""
    from fastapi.testclient import TestClient

    from services.api import create_app
    from store.repository import create_api_token, get_or_create_team
    from workers.settings import Settings

    monkeypatch.setenv("KVGRAFT_REQUEUE_INTERVAL_S", "1")
    monkeypatch.setenv("KVGRAFT_REQUEUE_AFTER_S", "1")
    rt = open_runtime()
    try:
        with rt.session() as s:
            _, token = create_api_token(s, team=get_or_create_team(s, name="t"), role="submitter")
        unreachable = Settings(broker_url="amqp://guest:guest@127.0.0.1:9//")
        with TestClient(create_app(unreachable)) as client:
            r = client.post("/v1/batches", content=_batch(0, 2, "beat"),
                            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"})
        assert r.status_code == 201 and r.json()["dispatch"] == "deferred"
        batch_id = r.json()["batch_id"]
        workers.append(worker("solve", tmp_path))
        workers.append(KvgraftProcess(["beat", "--schedule", str(tmp_path / "beat-schedule")], tmp_path,
                                      ready="beat: Starting"))
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 120, "the batch", workers)
        assert_consistent(rt, [batch_id], 2)
        assert "dispatch.requeued" in workers[0].log()
    finally:
        rt.close()


def test_the_periodic_pass_sends_only_work_nothing_will_deliver(flywheel_env: dict[str, str]) -> None:
    """A message still waiting in its queue will be delivered: the pass leaves that queue alone. Work pending on an
    empty queue with no delivery running is sent; work whose delivery is running is not."""
    from workers.queue.celery_app import make_app, send
    from workers.queue.dispatch import requeue_stale

    rt = open_runtime()
    try:
        _, (running, lost) = submit_batch(rt, parse_problems_jsonl(_batch(0, 2, "lost")), team="t")
        with rt.session() as s:
            s.get(ProblemRow, running).deliveries = 1  # a worker holds it right now
        send(rt.settings.broker_url, "kvgraft.solve_problem", running)  # one message waiting
        first = requeue_stale(rt, older_than_s=0, lost_only=True)
        assert first["skipped_queues"] == ["solve"] and first["problems"] == 0
        celery = make_app(rt.settings.broker_url)
        with celery.connection_for_write() as conn:
            conn.default_channel.queue_purge("solve")
        second = requeue_stale(rt, older_than_s=0, lost_only=True)
        assert second == {"problems": 1, "questions": 0, "skipped_queues": []}
        with celery.connection_for_write() as conn:
            message = conn.default_channel.basic_get("solve", no_ack=True)
        body = message.body if message is not None else b""
        assert lost in (body.decode() if isinstance(body, bytes) else body)
    finally:
        rt.close()


def _deliveries(rt: Any, problem_id: str) -> tuple[int, int, str]:
    with rt.session() as s:
        p = s.get(ProblemRow, problem_id)
        return p.deliveries, p.deliveries_ended, p.status


def test_a_solve_worker_killed_three_times_on_one_problem_ends_it_worker_lost(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path) -> None:
    """The worker dies (SIGKILL, as an OOM kill or a native crash would end it) while it holds the same problem, three
    times; RabbitMQ redelivers each time. The fourth delivery finds three lost ones and ends the problem `failed`
    with reason `worker_lost`, so the batch finishes and says why; the other problem is solved normally."""
    slow = {"id": "holds-the-worker", "question": "A tray holds 5 cups. How many cups are on 3 trays?", "answer": 15,
            "solution": "import time\ntime.sleep(8)\nprint(5 * 3)"}
    quick = {"id": "quick", "question": "A rack holds 4 hats. How many hats are on 6 racks?", "answer": 24,
             "solution": "print(4 * 6)"}
    rt = open_runtime()
    try:
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(json.dumps(slow) + "\n" + json.dumps(quick)),
                                     team="t")
        slow_id = ids[0]
        dispatch_solves(rt, [slow_id])
        for kill in range(1, 4):
            w = worker("solve", tmp_path)
            workers.append(w)
            _wait_until(lambda k=kill: _deliveries(rt, slow_id)[0] == k, 60, f"delivery {kill}", workers)
            time.sleep(0.5)  # inside the 8 s reference program
            w.kill()
            assert _deliveries(rt, slow_id) == (kill, 0, "pending")
        dispatch_solves(rt, [ids[1]])
        workers.append(worker("solve", tmp_path))
        _wait_until(lambda: all(st != "pending" for st in _statuses(rt, batch_id)), 90, "the batch", workers)
        with rt.session() as s:
            problem = s.get(ProblemRow, slow_id)
            assert problem.status == "failed" and problem.block_id is None
            assert problem.outcome["reason"] == "worker_lost" and problem.outcome["deliveries"] == 3
            assert s.get(ProblemRow, ids[1]).status == "solved"
            from store.db import BatchRow

            assert s.get(BatchRow, batch_id).status == "done"
        assert _deliveries(rt, slow_id)[:2] == (3, 0)
        assert_consistent(rt, [batch_id], 2)
    finally:
        rt.close()


def test_the_solo_pool_abandons_a_task_past_its_deadline_and_takes_the_next(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`kvgraft worker` runs the solo pool, where Celery enforces no time limit: a task that would hold the worker
    (a reference program that sleeps 9 s, inside the sandbox's 10 s) is interrupted at KVGRAFT_TASK_DEADLINE_S (4 s
    here), its problem ends `failed` (`deadline_exceeded`) with its delivery ended, and the same worker solves the
    next problem."""
    monkeypatch.setenv("KVGRAFT_TASK_DEADLINE_S", "4")
    first = {"id": "first", "question": "A rack holds 4 hats. How many hats are on 6 racks?", "answer": 24,
             "solution": "print(4 * 6)"}
    slow = {"id": "holds-the-worker", "question": "A tray holds 5 cups. How many cups are on 3 trays?", "answer": 15,
            "solution": "import time\ntime.sleep(9)\nprint(5 * 3)"}
    after = {"id": "after", "question": "A box holds 7 pens. How many pens are in 2 boxes?", "answer": 14,
             "solution": "print(7 * 2)"}
    rt = open_runtime()
    try:
        batch_id, ids = submit_batch(rt, parse_problems_jsonl("\n".join(json.dumps(p) for p in (first, slow, after))),
                                     team="t")
        w = worker("solve", tmp_path)
        workers.append(w)
        dispatch_solves(rt, ids[:1])  # the model loaded and warm before the timed task
        _wait_until(lambda: _deliveries(rt, ids[0])[2] != "pending", 120, "the first problem", workers)
        dispatch_solves(rt, ids[1:])
        _wait_until(lambda: all(_deliveries(rt, i)[2] != "pending" for i in ids[1:]), 120, "the rest", workers)
        with rt.session() as s:
            held = s.get(ProblemRow, ids[1])
            assert held.status == "failed" and held.outcome["reason"] == "deadline_exceeded", held.outcome
            assert "deadline" in held.outcome["detail"]
            assert s.get(ProblemRow, ids[2]).status == "solved"
        assert _deliveries(rt, ids[1])[:2] == (1, 1)
        assert w.proc.poll() is None  # the same worker, still running
        assert_consistent(rt, [batch_id], 3)
    finally:
        rt.close()
