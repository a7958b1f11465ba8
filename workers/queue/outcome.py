"""How a task ends: the one mechanism that gives a problem or a question exactly one outcome, used by the Celery tasks,
the embedded runner and the API's work thread alike.

`run_task` counts the delivery (started in the transaction that checks the row, ended in the one that records its
outcome), runs the body, and turns what the body raises into the outcome:

- a transient error (TRANSIENT: the object store, the database, the broker or the sandbox is unavailable) is raised
  again for the caller to retry, unless this is the last attempt: then it is recorded like any other failure;
- any other error ends the row `failed` with the reason its type gives (workers/errors.py): `bad_input`,
  `store_error`, `engine_error` and `unavailable` are logged as warnings, `internal_error` (a bug) with its
  traceback.

The callers differ only in how they retry: Celery sends the message again with backoff (`final` on its last retry),
the embedded runner sleeps and calls again (`final` on its last attempt). An error that escapes the body's own
handling (the outcome's transaction itself failing on the last retry; under a prefork pool, Celery's hard time
limit) is recorded by `record_failure` from the Celery task's failure hook. A worker that dies mid-task leaves its
delivery open: the broker redelivers the message, and a row whose last deliveries all lost their worker ends
`worker_lost`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from store.db import ProblemRow, QueryRequestRow, utcnow
from store.repository import FINAL_PROBLEM_STATUSES, Delivery, refresh_batch_status
from workers.errors import TRANSIENT, failure_reason
from workers.runtime import Runtime

log = structlog.get_logger(__name__)

WorkRow = type[ProblemRow] | type[QueryRequestRow]
TaskBody = Callable[[Runtime, str, Delivery], str]

MAX_LOST_DELIVERIES = 3
WORKER_LOST = "worker_lost"


def worker_lost_reason(lost: int) -> str:
    return (f"{lost} deliveries of this task each lost their worker (the process died: a native crash such as "
            f"SIGILL or SIGSEGV, an out-of-memory kill, or SIGKILL)")


def lost_deliveries(row: ProblemRow | QueryRequestRow) -> int:
    """Deliveries of this row that started and never ended: each lost its worker."""
    return int(row.deliveries or 0) - int(row.deliveries_ended or 0)


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


def run_task(rt: Runtime, model: WorkRow, row_id: str, body: TaskBody, *, final: bool) -> str:
    """Run one delivery of a task body and return the row's status; the body starts `delivery` when it decides to
    work (after its checks) and may end it with the outcome it records. Raises only a transient error when `final`
    is False (the caller retries)."""
    delivery = Delivery(model, row_id)
    try:
        return body(rt, row_id, delivery)
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
            except Exception as exc:  # noqa: BLE001 - the database may be what failed; it then counts as lost
                log.error("dispatch.delivery_end_not_recorded", id=row_id, error=f"{type(exc).__name__}: {exc}")
