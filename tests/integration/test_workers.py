"""The flywheel distributed: real RabbitMQ (a private vhost), PostgreSQL, an S3 server over HTTP, and separate
`kvgraft worker solve` / `kvgraft worker graft` processes. A solve worker killed with SIGKILL mid-task loses no
problem and leaves no duplicate block or row. A worker told to stop (SIGTERM) with a task running exits 0 within
KVGRAFT_SHUTDOWN_GRACE_S + 5 s and hands the task back to the broker."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from services.cli import app
from store.db import BlockRow, GenerationRow, ProblemRow, QueryRequestRow, make_engine
from tests.fixtures.processes import KvgraftProcess, worker
from workers.flywheel.solve import SolveParams
from workers.problems import parse_problems_jsonl
from workers.queue.dispatch import dispatch_solves, submit_batch
from workers.runtime import Runtime, open_runtime

pytestmark = pytest.mark.integration
runner = CliRunner()


PROBLEMS = "\n".join(json.dumps(p) for p in [
    {"id": "a", "question": "A box holds 12 eggs. How many eggs are in 5 boxes?", "answer": 60,
     "solution": "print(12 * 5)"},
    {"id": "b", "question": "Sam reads 15 pages a day for 7 days. How many pages?", "answer": 105,
     "solution": "print(15 * 7)"},
    {"id": "c", "question": "What is 7 plus 8?", "answer": 15, "solution": "print(7 + 9)"},
    {"id": "d", "question": "What is 3 times 4?", "answer": 12},
])


def test_a_batch_end_to_end_through_solve_and_graft_workers(workers: list[KvgraftProcess], tmp_path: Path,
                                                            flywheel_env: dict[str, str]) -> None:
    workers.append(worker("solve", tmp_path))
    workers.append(worker("graft", tmp_path))
    f = tmp_path / "problems.jsonl"
    f.write_text(PROBLEMS)
    result = runner.invoke(app, ["run", str(f), "--samples", "2", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert {p["id"]: p["status"] for p in report["problems"]} == {
        "a": "deposited", "b": "deposited", "c": "rejected", "d": "unsolved"}
    assert "kvgraft.solve_problem" in workers[0].log()  # solved by the worker, not in-process
    result = runner.invoke(app, ["ask", "A box holds 12 eggs. How many eggs are in 5 boxes?", "--json"])
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["route"] == "recurrence" and answer["block_id"] == report["problems"][0]["block_id"]
    assert "kvgraft.answer_query" in workers[1].log()
    # what the asker chose travels with the question to the graft worker
    result = runner.invoke(app, ["ask", "What is 9 times 9?", "--samples", "3", "--json"])
    assert result.exit_code == 0, result.stderr
    with make_engine(flywheel_env["KVGRAFT_DATABASE_URL"]).connect() as conn:
        options = conn.scalar(sa.select(QueryRequestRow.options).order_by(QueryRequestRow.created_at.desc()).limit(1))
    assert options == {"samples": 3}
    workers[1].wait_for('"samples": 3', 30)
    assert [w.terminate() for w in workers] == [0, 0]  # SIGTERM: a clean exit


def test_a_solve_worker_killed_mid_task_loses_nothing(workers: list[KvgraftProcess], tmp_path: Path,
                                                       flywheel_env: dict[str, str]) -> None:
    rt = open_runtime()
    try:
        lines = [{"id": f"p{i}", "question": f"What is {i} times {i + 3}?", "answer": i * (i + 3)}
                 for i in range(1, 5)]
        lines.append({"id": "ref", "question": "A box holds 12 eggs. How many eggs are in 5 boxes?", "answer": 60,
                      "solution": "print(12 * 5)"})
        specs = parse_problems_jsonl("\n".join(json.dumps(x) for x in lines))
        batch_id, ids = submit_batch(rt, specs, team="t", params=SolveParams(samples=12, max_tokens=64))
        workers.append(worker("solve", tmp_path))
        dispatch_solves(rt, ids)
        engine = make_engine(flywheel_env["KVGRAFT_DATABASE_URL"])
        deadline = time.monotonic() + 120
        with engine.connect() as conn:  # wait until the first task is mid-way through its samples
            while conn.scalar(sa.select(sa.func.count()).select_from(GenerationRow)) < 3:
                assert time.monotonic() < deadline, workers[0].log()[-3000:]
                time.sleep(0.05)
                conn.rollback()
        workers[0].kill()
        with engine.connect() as conn:
            pending = conn.scalar(sa.select(sa.func.count()).select_from(ProblemRow)
                                  .where(ProblemRow.status == "pending"))
        assert pending > 0  # the kill landed mid-batch
        workers.append(worker("solve", tmp_path))  # the in-flight task is redelivered to the new worker
        deadline = time.monotonic() + 300
        while True:
            with rt.session() as s:
                statuses = [p.status for p in s.scalars(sa.select(ProblemRow).where(ProblemRow.batch_id == batch_id))]
            if all(st != "pending" for st in statuses):
                break
            assert time.monotonic() < deadline, workers[-1].log()[-3000:]
            time.sleep(0.5)
        with rt.session() as s:
            assert len(statuses) == len(lines)
            gens = s.execute(sa.select(GenerationRow.problem_id, GenerationRow.sample_index)).all()
            assert len(gens) == len(set(gens))  # no duplicate samples
            blocks = s.scalars(sa.select(BlockRow)).all()
            assert len(blocks) == len({b.id for b in blocks})
            for b in blocks:  # every row has its object, and it verifies
                rt.blocks.get(b.fingerprint, b.id, use_cache=False)
            solved = s.scalars(sa.select(ProblemRow).where(ProblemRow.status == "solved")).all()
            assert [p.external_id for p in solved] == ["ref"] and solved[0].block_id is not None
        report = _verify_cli()
        assert report["ok"] is True and report["counts"].get("orphan", 0) == 0
    finally:
        rt.close()


GRACE_S = 3.0


@pytest.mark.timeout(240)
def test_a_worker_told_to_stop_hands_its_running_task_back(workers: list[KvgraftProcess], tmp_path: Path,
                                                          flywheel_env: dict[str, str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The task is held as long as the test wants: the test locks its problem's row, which the task's first
    transaction waits on. SIGTERM then: the worker waits the grace, abandons the task without an outcome and exits
    0 (before the fix it waited for the task, here forever); another worker gets the message again and solves it."""
    monkeypatch.setenv("KVGRAFT_SHUTDOWN_GRACE_S", str(GRACE_S))
    rt = open_runtime()
    engine = make_engine(flywheel_env["KVGRAFT_DATABASE_URL"])
    try:
        specs = parse_problems_jsonl(json.dumps({"id": "held", "question": "A box holds 12 eggs. How many eggs are "
                                                 "in 5 boxes?", "answer": 60, "solution": "print(12 * 5)"}))
        batch_id, ids = submit_batch(rt, specs, team="t", params=SolveParams(samples=2, max_tokens=32))
        workers.append(worker("solve", tmp_path))
        with engine.connect() as holder:
            holder.execute(sa.select(ProblemRow.id).where(ProblemRow.id == ids[0]).with_for_update())
            dispatch_solves(rt, ids)
            workers[0].wait_for("task.solve.start", 60)
            time.sleep(1.0)  # the task now waits on the row
            started = time.monotonic()
            code = workers[0].terminate(timeout=GRACE_S + 5)
            took = time.monotonic() - started
            holder.rollback()  # the row is free again
        assert code == 0, workers[0].log()[-3000:]
        assert took <= GRACE_S + 5
        assert "task.handed_back" in workers[0].log()
        with rt.session() as s:
            assert s.get(ProblemRow, ids[0]).status == "pending"  # abandoned without an outcome
        workers.append(worker("solve", tmp_path))  # the broker hands the message to the next worker
        deadline = time.monotonic() + 120
        while (status := _status(rt, ids[0])) == "pending":
            assert time.monotonic() < deadline, workers[-1].log()[-3000:]
            time.sleep(0.5)
        assert status == "solved", workers[-1].log()[-3000:]
        assert workers[-1].terminate(timeout=GRACE_S + 5) == 0
    finally:
        engine.dispose()
        rt.close()


def _status(rt: Runtime, problem_id: str) -> str:
    with rt.session() as s:
        return s.get(ProblemRow, problem_id).status


def _verify_cli() -> dict:
    result = runner.invoke(app, ["blocks", "verify", "--all", "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)
