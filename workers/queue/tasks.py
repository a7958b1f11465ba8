"""The Celery tasks. Each takes ids only, is idempotent, and keeps one Runtime (and so its loaded model) per worker
process. A solve or answer task ends through workers/queue/outcome.run_task like every other runner: transient S3,
database and sandbox errors are retried with exponential backoff, and the last retry records them as the outcome."""

from __future__ import annotations

from typing import Any

import structlog
from celery import Task
from celery.exceptions import WorkerShutdown

from store.db import ProblemRow, QueryRequestRow
from workers.errors import TRANSIENT, ShutdownAbandoned
from workers.queue.celery_app import app, worker_settings
from workers.queue.dispatch import answer_request, requeue_stale, solve_stored_problem
from workers.queue.outcome import Message, record_failure
from workers.runtime import Runtime, open_runtime
from workers.upkeep.attestation import attest_stored_block

log = structlog.get_logger(__name__)

_runtime: Runtime | None = None


def runtime() -> Runtime:
    """This worker process's runtime, opened on first use and kept (the model stays loaded between tasks)."""
    global _runtime
    if _runtime is None:
        _runtime = open_runtime(worker_settings())
    return _runtime


class KvgraftTask(Task):
    autoretry_for = TRANSIENT
    retry_backoff = 2
    retry_backoff_max = 60
    retry_jitter = True
    max_retries = 8
    acks_late = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A body abandoned at shutdown (workers/queue/shutdown.py) stops the worker without acknowledging its
        message: the broker hands it to another worker."""
        try:
            return super().__call__(*args, **kwargs)
        except ShutdownAbandoned as exc:
            log.warning("task.handed_back", task=self.name, id=args[0] if args else None, reason=str(exc))
            raise WorkerShutdown(0) from exc

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        """An error the body did not turn into an outcome escaped (the outcome itself not recorded on the last
        retry; Celery's hard time limit under a prefork pool, which `kvgraft worker`'s solo pool does not enforce):
        its problem or question ends `failed` with the error as reason, so that no accepted work stays pending. A
        transient error on the last retry is recorded by the body (run_task), not here."""
        model = {"kvgraft.solve_problem": ProblemRow, "kvgraft.answer_query": QueryRequestRow}.get(self.name)
        if model is None or not args:
            return
        try:  # a runtime of its own: Celery may call this in the worker's main process (a hard time limit)
            with open_runtime(worker_settings()) as rt:
                record_failure(rt, model, str(args[0]), exc)
        except Exception as inner:  # noqa: BLE001 - the database may be what failed; the row stays visible
            log.error("task.fail_not_recorded", task=self.name, id=args[0], error=str(inner))


def _message(task: Task) -> Message:
    """The broker message this delivery came in: its task id (kept across retries) and the redelivered mark."""
    info = task.request.delivery_info or {}
    return Message(task.request.id, bool(info.get("redelivered")))


def _last_try(task: Task) -> bool:
    """This is the task's last retry: a transient error is then its outcome, not another retry."""
    return task.max_retries is not None and task.request.retries >= task.max_retries


@app.task(name="kvgraft.solve_problem", base=KvgraftTask, bind=True)
def solve_problem_task(self: Task, problem_id: str) -> str:
    log.info("task.solve.start", problem_id=problem_id, delivery=self.request.retries)
    return solve_stored_problem(runtime(), problem_id, final=_last_try(self), message=_message(self))


@app.task(name="kvgraft.answer_query", base=KvgraftTask, bind=True)
def answer_query_task(self: Task, request_id: str) -> str:
    log.info("task.answer.start", request_id=request_id)
    return answer_request(runtime(), request_id, final=_last_try(self), message=_message(self))


@app.task(name="kvgraft.attest_block", base=KvgraftTask, bind=True)
def attest_block_task(self: Task, block_id: str, n_query: str | None = None,
                      team_id: str | None = None) -> dict[str, Any]:
    """Check one stored block here; `n_query`: the query size whose class to check (default: its probe's);
    `team_id`: the team whose question asked for it (the measurement counts for that team)."""
    log.info("task.attest.start", block_id=block_id, n_query=n_query, team_id=team_id)
    return attest_stored_block(runtime(), block_id, n_query=int(n_query) if n_query else None,
                               team_id=int(team_id) if team_id else None)


@app.task(name="kvgraft.requeue_lost", base=KvgraftTask, bind=True)
def requeue_lost_task(self: Task) -> dict[str, Any]:
    """The periodic pass `kvgraft beat` schedules: send again the pending work nothing will deliver (model-free)."""
    rt = runtime()
    return requeue_stale(rt, older_than_s=rt.settings.requeue_after_s, lost_only=True)
