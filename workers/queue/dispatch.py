"""From stored ids to work: submitting batches and questions, running each task body, and sending tasks to the
Celery queues (or running them in-process when no broker is configured: the embedded default)."""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import structlog

from store.db import AnswerRow, BatchRow, ProblemRow, QueryRequestRow, utcnow
from store.repository import (
    FINAL_PROBLEM_STATUSES,
    Delivery,
    batch_problems,
    create_batch,
    finished_problem_ids,
    get_or_create_team,
    get_question,
    pending_ids,
    refresh_batch_status,
)
from workers.errors import TRANSIENT
from workers.flywheel.answer import Answer, AnswerParams
from workers.flywheel.answering import answer_request_for
from workers.flywheel.prompts import normalize_question
from workers.flywheel.routes import AFTER_RECURRENCE, run_policy
from workers.flywheel.solve import SolveParams, solve_problem
from workers.problems import ProblemSpec
from workers.queue.fleet import NoLiveWorkerError, choose_graft_queue, queue_states
from workers.queue.outcome import (
    IN_PROCESS,
    MAX_LOST_DELIVERIES,
    WORKER_LOST,
    Message,
    WorkRow,
    fail_unfinished,
    lost_deliveries,
    record_failure,
    run_task,
    set_failed,
    worker_lost_reason,
)
from workers.queue.recurring import answer_recurring, record_answer, requested_model
from workers.runtime import Runtime

log = structlog.get_logger(__name__)


def submit_batch(rt: Runtime, problems: list[ProblemSpec], *, team: str | int, shared: bool = False,
                 params: SolveParams = SolveParams(), model: str | None = None,
                 source_digest: str | None = None) -> tuple[str, list[str]]:
    """Store a validated batch (all problems or none); returns the batch id and its problem ids in order."""
    rows = [{"external_id": p.id, "question": p.question,
             "question_digest": hashlib.sha256(normalize_question(p.question).encode()).hexdigest(),
             "answer": p.answer, "solution": p.solution, "verifier": p.verifier} for p in problems]
    with rt.session() as s:
        team_id = team if isinstance(team, int) else get_or_create_team(s, name=team).id
        batch = create_batch(s, team_id=team_id, shared=shared, problems=rows)
        batch.params = {"samples": params.samples, "temperature": params.temperature,
                        "max_tokens": params.max_tokens, "model": model}
        batch.source_digest = source_digest
        ids = [p.id for p in batch_problems(s, batch_id=batch.id)]
        return batch.id, ids


def solve_stored_problem(rt: Runtime, problem_id: str, *, final: bool = True, message: Message = IN_PROCESS) -> str:
    """The solve task's delivery (run_task: one outcome, `final` on the last attempt; `message`: the broker's)."""
    return run_task(rt, ProblemRow, problem_id, _solve_body, final=final, message=message)


def _solve_body(rt: Runtime, problem_id: str, delivery: Delivery) -> str:
    """The batch's parameters, then solve_problem. A problem 3 of whose deliveries lost their worker (by evidence:
    outcome.lost_deliveries) ends `failed` with reason `worker_lost` instead of being tried again."""
    with rt.session() as s:
        problem = s.get(ProblemRow, problem_id, with_for_update=True)
        if problem is None:
            log.warning("solve.unknown_problem", problem_id=problem_id)
            return "unknown"
        if problem.status in FINAL_PROBLEM_STATUSES:
            return problem.status
        lost = lost_deliveries(rt, s, problem, delivery)
        if lost >= MAX_LOST_DELIVERIES:
            set_failed(problem, WORKER_LOST, worker_lost_reason(lost), deliveries=lost)
            s.flush()
            refresh_batch_status(s, batch_id=problem.batch_id)
            log.error("solve.worker_lost", problem_id=problem_id, external_id=problem.external_id, deliveries=lost)
            return "failed"
        delivery.start(s)
        batch = s.get(BatchRow, problem.batch_id)
        params = dict((batch.params if batch is not None else None) or {})
    solve = SolveParams(samples=int(params.get("samples", 4)), temperature=float(params.get("temperature", 0.7)),
                        max_tokens=int(params.get("max_tokens", 160)))
    log.info("solve.start", problem_id=problem_id)
    return solve_problem(rt, problem_id, model=params.get("model"), params=solve, delivery=delivery)


def dispatch_solves(rt: Runtime, problem_ids: list[str], *,
                    progress: Callable[[str, str], None] | None = None,
                    on_start: Callable[[str], None] | None = None) -> None:
    """Send each problem to the `solve` queue, or solve it here when no broker is configured (problems that already
    have an outcome are skipped, so a resumed batch solves only what is left)."""
    if rt.settings.broker_url:
        from workers.queue.celery_app import send

        for pid in problem_ids:
            send(rt.settings.broker_url, "kvgraft.solve_problem", pid)
        return
    with rt.session() as s:
        finished = finished_problem_ids(s, problem_ids=problem_ids)
    for pid in problem_ids:
        if pid in finished:
            continue
        if on_start:
            on_start(pid)
        status = solve_stored_problem(rt, pid, final=False)  # a transient error stops the run: run it again
        if progress:
            progress(pid, status)


def submit_question(rt: Runtime, question: str, *, team_id: int | None, expected: dict[str, Any] | None = None,
                    options: dict[str, Any] | None = None) -> str:
    """Store a question for the graft queue; `options` ({"samples": K, "model": name}) travel with it to the
    worker that answers it."""
    with rt.session() as s:
        request = QueryRequestRow(team_id=team_id, question=question, expected=expected, options=options or None,
                                  status="pending")
        s.add(request)
        s.flush()
        return request.id


NO_LIVE_WORKER = "no_live_worker"


def send_question(rt: Runtime, request_id: str, *, only_if_idle: bool = False) -> str | None:
    """Send a stored question to the graft queue of a fingerprint with a live worker (the one holding its
    recurrence block, else the default model's, else the least loaded; the asker's model if it named one); returns
    the queue. With no live worker that can answer it, the request ends `failed` (no_live_worker) and
    NoLiveWorkerError is raised: it is reported, not queued where nothing will take it.

    `only_if_idle` (the periodic pass): send it only if its queue holds no waiting message (one waiting will be
    delivered), and with no live worker leave it pending for a later pass; None when not sent."""
    from workers.queue.celery_app import send

    with rt.session() as s:
        request = stored_question(s, request_id)
        question, team_id, options = request.question, request.team_id, dict(request.options or {})
    model = requested_model(options)
    try:
        target = choose_graft_queue(rt, question=question, team_id=team_id, model=model)
    except NoLiveWorkerError as exc:
        if only_if_idle:
            return None
        fail_unfinished(rt, QueryRequestRow, request_id, NO_LIVE_WORKER, str(exc))
        log.warning("dispatch.no_live_worker", request_id=request_id, model=model, error=str(exc))
        raise
    if only_if_idle and target.depth > 0:
        return None
    send(rt.settings.broker_url or "", "kvgraft.answer_query", request_id, queue=target.queue)
    log.info("dispatch.question_sent", request_id=request_id, queue=target.queue, depth=target.depth)
    return target.queue


def answer_request(rt: Runtime, request_id: str, params: AnswerParams = AnswerParams(), *,
                   final: bool = True, on_answer: Callable[[Answer], None] | None = None,
                   message: Message = IN_PROCESS) -> str:
    """The graft task's delivery: answer a stored question once (run_task: one outcome; a redelivered, finished
    request is left alone). `on_answer` sees the answer before it is recorded (what is not stored: its timings)."""
    return run_task(rt, QueryRequestRow, request_id,
                    lambda r, i, d: _answer_body(r, i, d, params, on_answer), final=final, message=message)


def _answer_body(rt: Runtime, request_id: str, delivery: Delivery, params: AnswerParams,
                 on_answer: Callable[[Answer], None] | None) -> str:
    with rt.session() as s:
        request = s.get(QueryRequestRow, request_id, with_for_update=True)
        if request is None:
            log.warning("answer.unknown_request", request_id=request_id)
            return "unknown"
        if request.status != "pending":
            return request.status
        lost = lost_deliveries(rt, s, request, delivery)
        if lost >= MAX_LOST_DELIVERIES:
            set_failed(request, WORKER_LOST, worker_lost_reason(lost))
            log.error("answer.worker_lost", request_id=request_id, deliveries=lost)
            return "failed"
        delivery.start(s)
        question, team_id, expected = request.question, request.team_id, dict(request.expected or {})
        options = dict(request.options or {})
    samples = options.get("samples")
    if isinstance(samples, int) and not isinstance(samples, bool) and 1 <= samples <= 64:
        params = replace(params, samples=samples)
    model = requested_model(options)
    log.info("answer.options", request_id=request_id, samples=params.samples, model=model)
    request = answer_request_for(rt.engine(model), question, team_id=team_id, expected=expected.get("answer"),
                                 verifier=expected.get("verifier"), params=params)
    answer = answer_recurring(rt, request_id, request, model)  # a repeat: with others waiting, together
    if answer is None:
        answer = run_policy(rt, request, AFTER_RECURRENCE)
    log.info("answer.done", request_id=request_id, route=answer.route, block_id=answer.block_id,
             verified=answer.verified, decode_tokens=answer.decode_tokens)
    if on_answer is not None:
        on_answer(answer)
    return record_answer(rt, request_id, answer, delivery=delivery)


def stored_question(session: Any, request_id: str) -> QueryRequestRow:
    """A stored question by id (LookupError: there is none)."""
    request = get_question(session, request_id=request_id)
    if request is None:
        raise LookupError(f"no query request {request_id}")
    return request


def question_outcome(session: Any, request: QueryRequestRow) -> dict[str, Any]:
    """A stored question as its asker sees it: pending, failed (with the error) or done with its answer's fields."""
    if request.status == "pending":
        return {"request_id": request.id, "status": "pending"}
    if request.status == "failed" or request.query_id is None:
        return {"request_id": request.id, "status": "failed", "error": request.error}
    row = session.get(AnswerRow, request.query_id)
    return {"request_id": request.id, "status": "done", "answer": row.answer, "route": row.route,
            "block_id": row.block_id, "decode_tokens": row.decode_tokens, "verified": row.verified,
            "attested": row.attested, "verified_by": row.verified_by, "query_id": row.id, "detail": row.detail,
            "binding": row.binding}


def ask_here(rt: Runtime, question: str, *, team_id: int | None, options: dict[str, Any] | None = None,
             attempts: int = 3, backoff_s: float = 1.0) -> tuple[str, Answer | None]:
    """Answer a question in this process the way a graft worker would (the embedded default): stored as a request,
    answered by the same task body with the embedded runner's retries, with exactly one outcome; returns the request
    id (see question_outcome) and the answer as computed here (None: it failed)."""
    request_id = submit_question(rt, question, team_id=team_id, options=options)
    seen: list[Answer] = []
    _retrying(rt, QueryRequestRow, request_id, partial(answer_request, rt, request_id, on_answer=seen.append),
              attempts=attempts, backoff_s=backoff_s)
    return request_id, (seen[-1] if seen else None)


def requeue_stale(rt: Runtime, *, older_than_s: float, lost_only: bool = False) -> dict[str, Any]:
    """Send again every problem and question still pending after `older_than_s` (for instance because the broker
    was unreachable when it was submitted); without a broker, run them here. Tasks are idempotent, so a duplicate
    message is harmless.

    `lost_only` (the periodic pass `kvgraft beat` schedules): only work that nothing will deliver again: its queue
    is empty (a message still waiting will be delivered) and no delivery of it is running (started deliveries all
    ended; a worker lost mid-task has its message redelivered by the broker)."""
    cutoff = utcnow() - dt.timedelta(seconds=older_than_s)
    broker = rt.settings.broker_url
    depths = {q: st.depth for q, st in queue_states(broker, ["solve"]).items()} if broker and lost_only else {}
    skipped = sorted(q for q, n in depths.items() if n > 0)

    def stale(model: type[ProblemRow] | type[QueryRequestRow]) -> list[str]:
        with rt.session() as s:
            return pending_ids(s, model=model, created_before=cutoff, idle_only=lost_only)

    problems = [] if "solve" in skipped else stale(ProblemRow)
    questions = stale(QueryRequestRow)
    if not broker:  # embedded: run them here, one by one
        work_in_process(rt, "solve", problems)
        work_in_process(rt, "answer", questions)
    else:
        from workers.queue.celery_app import send

        for pid in problems:
            send(broker, "kvgraft.solve_problem", pid)
        sent: list[str] = []
        for qid in questions:
            try:
                if send_question(rt, qid, only_if_idle=lost_only) is not None:
                    sent.append(qid)
            except NoLiveWorkerError:
                pass  # reported on the request (failed: no_live_worker)
        questions = sent
    log.info("dispatch.requeued", problems=len(problems), questions=len(questions), in_process=not broker,
             lost_only=lost_only, skipped_queues=skipped)
    return {"problems": len(problems), "questions": len(questions), "skipped_queues": skipped}


def pending_work(rt: Runtime) -> tuple[list[str], list[str]]:
    """Every problem and question still pending (oldest first): what an embedded server picks up again at start,
    since work queued in a process that died is otherwise never run."""
    with rt.session() as s:
        return pending_ids(s, model=ProblemRow), pending_ids(s, model=QueryRequestRow)


def work_in_process(rt: Runtime, kind: str, ids: list[str], *, attempts: int = 3, backoff_s: float = 1.0) -> None:
    """The embedded runner (no broker): each problem (`solve`) or question (`answer`) on its own, through run_task; a
    transient error is retried with backoff and, on the last attempt, ends that one `failed`, never the others. Where
    even the outcome cannot be recorded (the database is gone), the row stays pending for the next start or
    `kvgraft requeue`."""
    model: WorkRow = ProblemRow if kind == "solve" else QueryRequestRow
    for row_id in ids:
        body = solve_stored_problem if kind == "solve" else answer_request  # looked up now: tests replace them
        _retrying(rt, model, row_id, partial(body, rt, row_id), attempts=attempts, backoff_s=backoff_s)


def _retrying(rt: Runtime, model: WorkRow, row_id: str, delivery: Callable[..., str], *, attempts: int,
              backoff_s: float) -> None:
    """One row's deliveries in this process (`delivery(final=...)`, a body through run_task) until one ends without
    a transient error, `final` on the last attempt."""
    for attempt in range(attempts):
        final = attempt + 1 == attempts
        try:
            try:
                delivery(final=final)
                return
            except TRANSIENT as exc:
                if final:  # run_task records a transient error on the last attempt; a body that did not
                    record_failure(rt, model, row_id, exc)
                    return
                log.warning("dispatch.retry_in_process", id=row_id, attempt=attempt + 1, error=str(exc))
            time.sleep(backoff_s * 2**attempt)
        except Exception:  # noqa: BLE001 - the outcome itself could not be recorded: left pending, not lost
            log.exception("dispatch.outcome_not_recorded", table=model.__tablename__, id=row_id)
            return
