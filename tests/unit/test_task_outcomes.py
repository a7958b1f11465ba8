"""One way a task ends (workers/queue/outcome.py), tried where it used to go wrong: a bug that raises a built-in
ValueError or LookupError is an `internal_error` logged with its traceback, never `bad_input`; only the project's
own input error is `bad_input`; a transient error is retried until the last attempt and then recorded; and every
delivery a body starts is ended, with the outcome or alone (tiny model, SQLite, local disk)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import workers.flywheel.recurrence as recurrence
from store.db import QueryRequestRow
from store.errors import ObjectStoreUnavailableError
from workers.errors import WorkInputError
from workers.queue.dispatch import answer_request, submit_question, work_in_process
from workers.runtime import Runtime, open_runtime

pytestmark = pytest.mark.unit


@pytest.fixture
def rt(data_dir: Path) -> Any:
    runtime = open_runtime()
    yield runtime
    runtime.close()


def _raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException, calls: list[int] | None = None) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        if calls is not None:
            calls.append(1)
        raise exc

    monkeypatch.setattr(recurrence, "find_recurrence", broken)


def _row(rt: Runtime, request_id: str) -> tuple[str, str | None, int, int]:
    with rt.session() as s:
        row = s.get(QueryRequestRow, request_id)
        return row.status, row.error, row.deliveries, row.deliveries_ended


@pytest.mark.parametrize("bug", [ValueError("an index computed wrongly"), LookupError("a dict key misspelt"),
                                 TypeError("a None passed on")])
def test_a_bug_is_an_internal_error_with_its_traceback(rt: Runtime, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], bug: Exception) -> None:
    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    _raising(monkeypatch, bug)
    assert answer_request(rt, request) == "failed"
    status, error, started, ended = _row(rt, request)
    assert status == "failed" and error.startswith(f"internal_error: {type(bug).__name__}")
    assert (started, ended) == (1, 1)
    logged = capsys.readouterr()
    assert "dispatch.internal_error" in logged.err + logged.out and "Traceback" in logged.err + logged.out


def test_only_the_projects_input_error_is_bad_input(rt: Runtime, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    _raising(monkeypatch, WorkInputError("the question names no quantity"))
    assert answer_request(rt, request) == "failed"
    status, error, started, ended = _row(rt, request)
    assert status == "failed" and error.startswith("bad_input: WorkInputError")
    assert (started, ended) == (1, 1)
    logged = capsys.readouterr()
    assert "Traceback" not in logged.err + logged.out  # the submitter's to fix: a warning, not a bug report


def test_a_transient_error_is_raised_until_the_last_attempt_then_recorded(rt: Runtime,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    _raising(monkeypatch, ObjectStoreUnavailableError("S3 is down"))
    with pytest.raises(ObjectStoreUnavailableError):
        answer_request(rt, request, final=False)  # Celery retries it
    assert _row(rt, request) == ("pending", None, 1, 1)  # the delivery ended alone: it does not look lost
    assert answer_request(rt, request, final=True) == "failed"
    status, error, started, ended = _row(rt, request)
    assert status == "failed" and error.startswith("store_error: ObjectStoreUnavailableError")
    assert (started, ended) == (2, 2)


def test_the_embedded_runner_retries_through_the_same_mechanism(rt: Runtime,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    calls: list[int] = []
    _raising(monkeypatch, ObjectStoreUnavailableError("S3 is down"), calls)
    work_in_process(rt, "answer", [request], attempts=3, backoff_s=0)
    status, error, started, ended = _row(rt, request)
    assert len(calls) == 3 and status == "failed" and error.startswith("store_error")
    assert (started, ended) == (3, 3)


def test_a_delivery_whose_start_never_committed_is_never_ended(rt: Runtime) -> None:
    from store.repository import Delivery
    from workers.queue.outcome import fail_unfinished

    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    never_started = Delivery(QueryRequestRow, request)  # its check transaction raised before committing
    assert fail_unfinished(rt, QueryRequestRow, request, "internal_error", "x", delivery=never_started)
    status, _, started, ended = _row(rt, request)
    assert status == "failed" and (started, ended) == (0, 0)  # the lost-delivery count stays 0, not -1


def test_a_transient_error_stops_kvgraft_run_in_process_and_leaves_the_problem_to_resume(
        rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.queue.dispatch as dispatch
    from store.db import ProblemRow
    from workers.problems import ProblemSpec

    _, ids = dispatch.submit_batch(rt, [ProblemSpec(id="p", question="What is 4 plus 4?", answer=8,
                                                    solution="print(8)")], team="t")

    def down(*args: Any, **kwargs: Any) -> str:
        raise ObjectStoreUnavailableError("S3 is down")

    monkeypatch.setattr(dispatch, "solve_problem", down)
    with pytest.raises(ObjectStoreUnavailableError):
        dispatch.dispatch_solves(rt, ids)  # the run stops with the error; running it again resumes
    with rt.session() as s:
        row = s.get(ProblemRow, ids[0])
        assert (row.status, row.deliveries, row.deliveries_ended) == ("pending", 1, 1)


def test_a_database_outage_on_the_last_attempt_is_unavailable_not_a_bug(rt: Runtime, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from sqlalchemy.exc import OperationalError

    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    _raising(monkeypatch, OperationalError("SELECT 1", {}, ConnectionRefusedError("the database went away")))
    with pytest.raises(OperationalError):
        answer_request(rt, request, final=False)
    assert answer_request(rt, request, final=True) == "failed"
    status, error, started, ended = _row(rt, request)
    assert status == "failed" and error.startswith("unavailable: OperationalError") and (started, ended) == (2, 2)
    logged = capsys.readouterr()
    assert "dispatch.internal_error" not in logged.err + logged.out and "Traceback" not in logged.err + logged.out


def test_the_embedded_runner_leaves_the_last_attempt_to_run_task(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner passes `final` on its last attempt, so run_task records the outcome and ends the delivery in the
    same transaction; the runner's own fallback (for a body that did not record it) is not what records it."""
    import workers.queue.dispatch as dispatch

    def not_here(*args: Any, **kwargs: Any) -> bool:
        raise AssertionError("the runner recorded the outcome itself: run_task was never told it was the last")

    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    _raising(monkeypatch, ObjectStoreUnavailableError("S3 is down"))
    monkeypatch.setattr(dispatch, "record_failure", not_here)
    work_in_process(rt, "answer", [request], attempts=2, backoff_s=0)
    status, error, started, ended = _row(rt, request)
    assert status == "failed" and error.startswith("store_error") and (started, ended) == (2, 2)


def test_kvgraft_ask_in_process_retries_a_transient_error(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.queue.dispatch import ask_here

    real, calls = recurrence.find_recurrence, []

    def down_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise ObjectStoreUnavailableError("S3 is down for a moment")
        return real(*args, **kwargs)

    monkeypatch.setattr(recurrence, "find_recurrence", down_once)
    request, answer = ask_here(rt, "What is 3 plus 4?", team_id=None, backoff_s=0)
    assert answer is not None and len(calls) >= 2
    assert _row(rt, request) == ("done", None, 2, 2)


def test_the_outcome_and_the_end_of_its_delivery_commit_together(rt: Runtime) -> None:
    """Read after every commit, the row never shows its delivery ended without its outcome (or the reverse): the
    count describes the state beside it."""
    import sqlalchemy as sa
    from sqlalchemy.orm import Session

    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    seen: list[tuple[str, int, int]] = []

    def after_commit(session: Session) -> None:
        with rt.sessions.kw["bind"].connect() as conn:
            row = conn.execute(sa.select(QueryRequestRow.status, QueryRequestRow.deliveries,
                                         QueryRequestRow.deliveries_ended)
                               .where(QueryRequestRow.id == request)).one()
        if not seen or seen[-1] != tuple(row):
            seen.append(tuple(row))

    sa.event.listen(Session, "after_commit", after_commit)
    try:
        assert answer_request(rt, request) == "done"
    finally:
        sa.event.remove(Session, "after_commit", after_commit)
    assert seen == [("pending", 1, 0), ("done", 1, 1)]


def test_a_broker_that_cannot_be_reached_is_transient_and_an_attest_task_is_tried_again(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """kombu's errors become BrokerUnavailableError (retried like any transient error, never a bug), whether the
    queue's state or the send itself fails; scheduling an attestation is best effort: with the broker down it
    raises nothing into the question that asked, remembers nothing as scheduled, and tries no other for a pause."""
    from types import SimpleNamespace

    import workers.flywheel.attested as attested
    from store.repository import record_worker
    from workers.errors import TRANSIENT, BrokerUnavailableError, failure_reason
    from workers.queue.celery_app import send
    from workers.settings import load_settings

    down = "amqp://guest:guest@127.0.0.1:9//"  # nothing listens on port 9
    with pytest.raises(BrokerUnavailableError) as raised:
        send(down, "kvgraft.solve_problem", "some-problem")
    assert isinstance(raised.value, TRANSIENT) and failure_reason(raised.value) == "unavailable"
    fingerprint = "f" * 64
    monkeypatch.setattr(attested, "get_block", lambda s, block_id: SimpleNamespace(fingerprint=fingerprint))
    with open_runtime(load_settings(broker_url=down)) as rt:
        with rt.session() as s:
            record_worker(s, name="graft-1", kind="graft", model="tiny", fingerprint=fingerprint,
                          queues=[f"graft.{fingerprint}", f"attest.{fingerprint}"])
        attested.schedule_attestation(rt, "a" * 64, 3, team_id=None)  # the queue's state cannot be read
        assert rt.memo.get(attested.ATTEST_SCHEDULED, ("a" * 64, 3, None)) is None
    targets: list[str] = []
    monkeypatch.setattr(attested, "attest_target", lambda rt, fp: targets.append(fp) or f"attest.{fp}")
    with open_runtime(load_settings(broker_url=down)) as rt:
        attested.schedule_attestation(rt, "b" * 64, 3, team_id=None)  # a live worker, and the send fails
        assert targets == [fingerprint] and rt.memo.get(attested.ATTEST_SCHEDULED, ("b" * 64, 3, None)) is None
        attested.schedule_attestation(rt, "c" * 64, 3, team_id=None)  # within the pause: not even tried
        assert targets == [fingerprint]
    logged = capsys.readouterr()
    assert (logged.err + logged.out).count("answer.attest_not_sent") == 2


def test_a_reference_solution_too_long_for_a_block_is_bad_input(data_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A verified solution whose block would not fit the serving window is the submitter's to shorten: `bad_input`,
    not a bug."""
    import workers.queue.dispatch as dispatch
    from store.db import ProblemRow
    from workers.problems import ProblemSpec

    monkeypatch.setenv("KVGRAFT_WINDOW_TOKENS", "512")
    long_solution = "".join(f"step_{i} = {i}\n" for i in range(400)) + "print(4 + 4)"
    with open_runtime() as rt:
        _, ids = dispatch.submit_batch(rt, [ProblemSpec(id="long", question="What is 4 plus 4?", answer=8,
                                                        solution=long_solution)], team="t")
        assert dispatch.solve_stored_problem(rt, ids[0]) == "failed"
        with rt.session() as s:
            row = s.get(ProblemRow, ids[0])
            assert row.outcome["reason"] == "bad_input" and "serving window" in row.outcome["detail"]
            assert (row.deliveries, row.deliveries_ended) == (1, 1)


def test_a_database_blip_after_a_deliverys_start_does_not_count_as_a_lost_worker(
        rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The database goes away right after a delivery started: the body's next query and the end of its delivery
    both fail; three times in a row, with the worker alive throughout. Counting started minus ended deliveries, the
    fourth delivery found three "lost" and ended the question `worker_lost`; by evidence (each was this live
    process's, its end recorded once the database was back, before the next delivery) the fourth answers it."""
    import sqlalchemy as sa
    from sqlalchemy.exc import OperationalError

    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    engine = rt.sessions.kw["bind"]
    down = threading.Event()

    def refuse(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if down.is_set():
            raise OperationalError(statement, parameters, ConnectionRefusedError("the database went away"))

    real = recurrence.find_recurrence

    def blip(*args: Any, **kwargs: Any) -> Any:
        down.set()  # after the delivery's start committed
        return real(*args, **kwargs)

    sa.event.listen(engine, "before_cursor_execute", refuse)
    try:
        monkeypatch.setattr(recurrence, "find_recurrence", blip)
        for attempt in range(1, 4):
            with pytest.raises(OperationalError):
                answer_request(rt, request, final=False)
            assert down.is_set()
            down.clear()  # the database is back before the retry
            assert _row(rt, request)[:3] == ("pending", None, attempt)
        monkeypatch.setattr(recurrence, "find_recurrence", real)
        assert answer_request(rt, request, final=False) == "done"
    finally:
        sa.event.remove(engine, "before_cursor_execute", refuse)
    assert _row(rt, request) == ("done", None, 4, 4)  # every delivery ended, the blipped ones late


def _a_fourth_beside_three_running(rt: Runtime, monkeypatch: pytest.MonkeyPatch, request: str,
                                   running_for_s: float = 0.0) -> str:
    """Three deliveries of `request` run at once in threads (held inside their body); after `running_for_s` a fourth
    runs here; then the three give up (a transient error: they end alone). Returns the fourth's status."""
    rt.engine(None)  # loaded once, before the deliveries race for it
    real, inside, release = recurrence.find_recurrence, threading.Semaphore(0), threading.Event()
    calls: list[int] = []
    lock = threading.Lock()

    def held(*args: Any, **kwargs: Any) -> Any:
        with lock:
            calls.append(1)
            n = len(calls)
        if n <= 3:  # one of the three running deliveries: held here, then its worker gives up on it
            inside.release()
            release.wait(60)
            raise ObjectStoreUnavailableError("this duplicate stops here")
        return real(*args, **kwargs)

    monkeypatch.setattr(recurrence, "find_recurrence", held)
    ends: list[str] = []

    def duplicate() -> None:
        try:
            ends.append(answer_request(rt, request, final=False))
        except ObjectStoreUnavailableError:
            ends.append("retry")

    threads = [threading.Thread(target=duplicate) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(3):
            assert inside.acquire(timeout=60)
        assert _row(rt, request) == ("pending", None, 3, 0)
        time.sleep(running_for_s)
        status = answer_request(rt, request, final=False)
    finally:
        release.set()
        for t in threads:
            t.join(60)
    assert ends == ["retry"] * 3
    return status


def test_three_deliveries_of_one_question_running_at_once_are_not_lost_workers(
        rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three deliveries of one question run at once (duplicates of its message on three live workers), and a fourth
    arrives while they run. Counted as started minus ended, the three running ones looked lost and the fourth ended
    the question `worker_lost`; by evidence (their heartbeats are fresh) they are alive, so the fourth answers it
    (`done`), and the three, when they stop, leave that outcome as it is."""
    request = submit_question(rt, "What is 3 plus 4?", team_id=None)
    assert _a_fourth_beside_three_running(rt, monkeypatch, request) == "done"
    assert _row(rt, request) == ("done", None, 4, 4)


def test_a_delivery_is_lost_when_its_worker_stops_heartbeating_not_while_it_runs(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With heartbeats every 0.2 s and a delivery lost after 1 s of silence: three deliveries whose workers are gone
    (started, never marked alive again) are lost, and the next delivery ends the question `worker_lost`; three that
    run for 1.5 s in a live process are kept alive by its heartbeat, and a fourth answers their question."""
    from store.repository import Delivery

    monkeypatch.setenv("KVGRAFT_DELIVERY_HEARTBEAT_S", "0.2")
    monkeypatch.setenv("KVGRAFT_DELIVERY_LOST_AFTER_S", "1")
    with open_runtime() as rt:
        abandoned = submit_question(rt, "What is 3 plus 4?", team_id=None)
        for n in range(3):  # as three worker processes that died holding it would have left them
            with rt.session() as s:
                Delivery(QueryRequestRow, abandoned, worker=f"gone-host:{n}").start(s)
        time.sleep(1.5)
        assert answer_request(rt, abandoned) == "failed"
        status, error, started, ended = _row(rt, abandoned)
        assert status == "failed" and error.startswith("worker_lost") and (started, ended) == (3, 0)
        running = submit_question(rt, "What is 5 plus 4?", team_id=None)
        assert _a_fourth_beside_three_running(rt, monkeypatch, running, running_for_s=1.5) == "done"
        assert _row(rt, running) == ("done", None, 4, 4)


def test_a_task_past_its_deadline_is_abandoned_recorded_and_its_worker_freed(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the process's main thread, where the solo pool runs a task: a body that would hold its worker for a minute
    (a blocking wait, as a hung sandbox or engine call) is interrupted at KVGRAFT_TASK_DEADLINE_S (1 s here), the
    question ends `failed` (`deadline_exceeded`) with its delivery ended, and the next task runs."""
    monkeypatch.setenv("KVGRAFT_TASK_DEADLINE_S", "1")
    with open_runtime() as rt:
        stuck = submit_question(rt, "What is 3 plus 4?", team_id=None)
        real = recurrence.find_recurrence

        def hangs(*args: Any, **kwargs: Any) -> Any:
            time.sleep(60)
            return real(*args, **kwargs)

        monkeypatch.setattr(recurrence, "find_recurrence", hangs)
        t0 = time.monotonic()
        assert answer_request(rt, stuck) == "failed"
        assert time.monotonic() - t0 < 30
        status, error, started, ended = _row(rt, stuck)
        assert status == "failed" and error.startswith("deadline_exceeded") and (started, ended) == (1, 1)
        monkeypatch.setattr(recurrence, "find_recurrence", real)
        following = submit_question(rt, "What is 5 plus 4?", team_id=None)
        assert answer_request(rt, following) == "done"
