"""One way a task ends (workers/queue/outcome.py), tried where it used to go wrong: a bug that raises a built-in
ValueError or LookupError is an `internal_error` logged with its traceback, never `bad_input`; only the project's
own input error is `bad_input`; a transient error is retried until the last attempt and then recorded; and every
delivery a body starts is ended, with the outcome or alone (tiny model, SQLite, local disk)."""

from __future__ import annotations

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
