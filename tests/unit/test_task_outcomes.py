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
