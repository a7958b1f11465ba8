"""How a task ends: the one mechanism that gives a problem or a question exactly one outcome, used by the Celery tasks,
the embedded runner and the API's work thread alike.

`run_task` counts and records the delivery (started in the transaction that checks the row, ended in the one that
records its outcome), keeps it marked alive while it runs and interrupts it at its deadline (workers/queue/liveness.py),
runs the body, and turns what the body raises into the outcome:

- a transient error (TRANSIENT: the object store, the database, the broker or the sandbox is unavailable) is raised
  again for the caller to retry, unless this is the last attempt: then it is recorded like any other failure;
- any other error ends the row `failed` with the reason its type gives (workers/errors.py): `bad_input`,
  `store_error`, `engine_error` and `unavailable` are logged as warnings, `internal_error` (a bug) with its
  traceback;
- a body past its deadline (TaskDeadlineExceeded) is abandoned and ends the row `failed` (`deadline_exceeded`).

The callers differ only in how they retry: Celery sends the message again with backoff (`final` on its last retry),
the embedded runner sleeps and calls again (`final` on its last attempt). An error that escapes the body's own
handling (the outcome's transaction itself failing on the last retry; under a prefork pool, Celery's hard time
limit) is recorded by `record_failure` from the Celery task's failure hook. A worker that dies mid-task leaves its
delivery open and stops marking it alive: the broker redelivers the message (marked redelivered), and a row three of
whose deliveries lost their worker, by that evidence (never by subtracting ended from started deliveries), ends
`worker_lost`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import structlog
from sqlalchemy.orm import Session

from store.db import ProblemRow, QueryRequestRow, utcnow
from store.repository import (
    FINAL_PROBLEM_STATUSES,
    Delivery,
    count_lost_deliveries,
    mark_redelivered_lost,
    refresh_batch_status,
)
from workers.errors import TRANSIENT, TaskDeadlineExceeded, failure_reason
from workers.queue.liveness import deadline, watch_of, worker_id
from workers.runtime import Runtime

log = structlog.get_logger(__name__)

WorkRow = type[ProblemRow] | type[QueryRequestRow]
TaskBody = Callable[[Runtime, str, Delivery], str]

MAX_LOST_DELIVERIES = 3
WORKER_LOST = "worker_lost"


def worker_lost_reason(lost: int) -> str:
    return (f"{lost} deliveries of this task each lost their worker (the process died: a native crash such as "
            f"SIGILL or SIGSEGV, an out-of-memory kill, or SIGKILL)")


@dataclass(frozen=True)
class Message:
    """The broker message a delivery came in: its id (a Celery task id, kept across retries) and whether the broker
    marked it redelivered (its previous consumer is gone). None for work run in-process."""

    id: str | None = None
    redelivered: bool = False


IN_PROCESS = Message()  # work run in this process, not delivered by a broker


def lost_deliveries(rt: Runtime, session: Session, row: ProblemRow | QueryRequestRow, delivery: Delivery) -> int:
    """Deliveries of this row that lost their worker, by evidence (called in the transaction that checks the row,
    before `delivery` starts): a redelivered message first marks the deliveries that came in it lost, then those
    marked lost or whose worker stopped marking them alive are counted. Deliveries still running elsewhere, or whose
    end a live worker has not managed to record yet, are not lost."""
    model = type(row)
    if delivery.redelivered and delivery.message_id:
        mark_redelivered_lost(session, model=model, row_id=row.id, message_id=delivery.message_id)
    silent_since = utcnow() - timedelta(seconds=rt.settings.delivery_lost_after_s)
    return count_lost_deliveries(session, model=model, row_id=row.id, silent_since=silent_since)


def set_failed(row: ProblemRow | QueryRequestRow, reason: str, detail: str = "", **extra: Any) -> None:
    """Write a `failed` outcome on a locked row that has none (a problem's `outcome`, a question's `error`)."""
    if isinstance(row, ProblemRow):
        row.status, row.outcome = "failed", {"reason": reason, "detail": detail[:2000], **extra}
    else:
        row.status, row.finished_at = "failed", utcnow()
        row.error = f"{reason}: {detail}"[:4000] if detail else reason


def fail_unfinished(rt: Runtime, model: WorkRow, row_id: str, reason: str, detail: str = "", *,
                    delivery: Delivery | None = None) -> bool:
    """End a problem or question `failed` with `reason`, unless it already has an outcome (ending `delivery` in the
    same transaction); True if this did."""
    with rt.session() as s:
        if delivery is not None:
            delivery.end(s)
        row = s.get(model, row_id, with_for_update=True)
        if row is None:
            return False
        if (row.status in FINAL_PROBLEM_STATUSES) if isinstance(row, ProblemRow) else (row.status != "pending"):
            log.warning("dispatch.failure_after_outcome", table=model.__tablename__, id=row_id, status=row.status,
                        reason=reason, detail=detail[:500])  # e.g. a duplicate delivery's error: kept, not recorded
            return False
        set_failed(row, reason, detail)
        if isinstance(row, ProblemRow):
            s.flush()
            refresh_batch_status(s, batch_id=row.batch_id)
    log.warning("dispatch.failed", table=model.__tablename__, id=row_id, reason=reason, detail=detail[:500])
    return True


def record_failure(rt: Runtime, model: WorkRow, row_id: str, exc: BaseException, *,
                   delivery: Delivery | None = None) -> bool:
    """The row's outcome for an error: `failed` with the reason its type gives; a bug (`internal_error`) is logged
    with its traceback. True if this recorded the outcome (False: it already had one)."""
    reason = failure_reason(exc)
    if reason == "internal_error":
        log.error("dispatch.internal_error", table=model.__tablename__, id=row_id, exc_info=exc)
    return fail_unfinished(rt, model, row_id, reason, f"{type(exc).__name__}: {exc}", delivery=delivery)


def run_task(rt: Runtime, model: WorkRow, row_id: str, body: TaskBody, *, final: bool,
             message: Message = IN_PROCESS) -> str:
    """Run one delivery of a task body and return the row's status; the body starts `delivery` when it decides to
    work (after its checks) and may end it with the outcome it records. Raises only a transient error when `final`
    is False (the caller retries)."""
    watch = watch_of(rt)
    try:
        watch.settle()  # this process's earlier deliveries whose end the database refused are ended first
    except Exception as exc:  # noqa: BLE001 - still refused: the watch tries again; the body meets the outage itself
        log.warning("dispatch.earlier_delivery_end_not_recorded", error=f"{type(exc).__name__}: {exc}")
    delivery = Delivery(model, row_id, worker=worker_id(), message_id=message.id, redelivered=message.redelivered,
                        deadline_s=rt.settings.task_deadline_s)
    watch.hold(delivery)
    try:
        with deadline(rt.settings.task_deadline_s, f"{model.__tablename__}/{row_id}"):
            return body(rt, row_id, delivery)
    except TaskDeadlineExceeded as exc:  # abandoned: the outcome recorded, the worker free for its next task
        record_failure(rt, model, row_id, exc, delivery=delivery)
        return "failed"
    except TRANSIENT as exc:
        if not final:
            log.warning("dispatch.transient", table=model.__tablename__, id=row_id,
                        error=f"{type(exc).__name__}: {exc}")
            raise
        record_failure(rt, model, row_id, exc, delivery=delivery)
        return "failed"
    except Exception as exc:  # a terminal outcome: a missing or corrupt block, bad input, a bug
        record_failure(rt, model, row_id, exc, delivery=delivery)
        return "failed"
    finally:
        if delivery.open:  # no outcome ended it (a transient error, nothing recorded): it ends alone
            try:
                with rt.session() as s:
                    delivery.end(s)
            except Exception as exc:  # noqa: BLE001 - the database may be what failed: the watch ends it later
                log.error("dispatch.delivery_end_not_recorded", id=row_id, error=f"{type(exc).__name__}: {exc}")
        watch.over(delivery)
