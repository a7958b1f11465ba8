"""Where the API's submitted work runs, and how much of it a team may have in flight.

With a broker (KVGRAFT_BROKER_URL) work goes to the Celery queues; without one (the embedded default) it runs on a
single background thread of this process, one task at a time, from a queue bounded by KVGRAFT_WORK_QUEUE_MAX.

Admission comes before anything is stored: `Work.admission(team, kind)` refuses with `TeamBusy` when the team
already has KVGRAFT_TEAM_MAX_PENDING_QUERIES questions (or ..._BATCHES batches) in flight, and, embedded, with
`QueueFull` when the local queue is full. In flight means: embedded, admitted here and not yet finished by the
background thread (exact: the queue is this process's); with a broker, stored and not yet finished (questions
`pending`, batches `queued` or `running`), counted in the database under a per-team lock of this process, so a
team's limit holds exactly per API process and across N processes admits at most N-1 extra at once."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import structlog

from store.repository import count_pending_questions, count_unfinished_batches
from workers.errors import TRANSIENT
from workers.queue.dispatch import dispatch_solves, pending_work, send_question, work_in_process
from workers.queue.fleet import NoLiveWorkerError, fleet_queues, queue_states
from workers.runtime import Runtime

log = structlog.get_logger(__name__)
Kind = Literal["queries", "batches"]


class QueueFull(Exception):
    """The embedded work queue is full (every team's work counts); try again later."""

    def __init__(self, depth: int, limit: int, retry_after_s: int) -> None:
        # no count: with the team's own, it would tell a team how much work the others have queued
        super().__init__(f"the work queue is full (KVGRAFT_WORK_QUEUE_MAX, all teams together); "
                         f"retry in {retry_after_s} s")
        self.depth, self.limit, self.retry_after_s = depth, limit, retry_after_s


class TeamBusy(Exception):
    """The team already has as much work of this kind in flight as it may; try again when some has finished."""

    def __init__(self, team_id: int, kind: Kind, in_flight: int, limit: int, retry_after_s: int) -> None:
        super().__init__(f"the team has {in_flight} {kind} in flight, its limit is {limit}; "
                         f"retry in {retry_after_s} s")
        self.team_id, self.kind, self.in_flight, self.limit = team_id, kind, in_flight, limit
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Ticket:
    """One admitted unit of a team's work; embedded, it holds a slot of the queue until the task ends."""

    team_id: int
    kind: Kind
    held: bool


@dataclass(frozen=True)
class Dispatch:
    """What became of submitted work: queued (False: the broker could not be reached, the work stays stored and
    pending until `kvgraft requeue`), and, embedded, the future of the background task."""

    queued: bool
    finished: Future[None] | None = None
    refused: str | None = None  # why no worker can take it (the work ended `failed`): no live worker of its kind


def _deferred(exc: Exception, **ids: object) -> Dispatch:
    """Work stored but not sent: it stays pending (nothing accepted is lost) until `kvgraft beat` or `kvgraft requeue`
    sends it, and the client still gets its ids. The broker or database unavailable is expected; anything else is a
    bug, logged with its traceback."""
    if isinstance(exc, TRANSIENT):
        log.error("api.dispatch_deferred", error=f"{type(exc).__name__}: {exc}", **ids)
    else:
        log.error("api.dispatch_failed", error=f"{type(exc).__name__}: {exc}", exc_info=exc, **ids)
    return Dispatch(False)


class Work:
    """Where submitted work runs: the Celery queues, or one background thread of this process."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        settings = rt.settings
        self.local = None if settings.broker_url else ThreadPoolExecutor(1, thread_name_prefix="kvgraft-work")
        self.max_queued = settings.work_queue_max
        self.limits: dict[Kind, int] = {"queries": settings.team_max_pending_queries,
                                        "batches": settings.team_max_pending_batches}
        self.retry_after_s = settings.busy_retry_after_s
        self.pending = 0
        self._in_flight: Counter[tuple[int, Kind]] = Counter()
        self._lock = threading.Lock()
        self._team_locks: dict[int, threading.Lock] = {}
        if self.local is not None:  # work accepted by an embedded server that stopped: run it again
            problems, questions = pending_work(rt)
            if problems or questions:
                log.info("api.pending_resumed", problems=len(problems), questions=len(questions))
                self.local.submit(work_in_process, rt, "solve", problems)
                self.local.submit(work_in_process, rt, "answer", questions)

    # -- admission ---------------------------------------------------------------------------------------------

    @contextmanager
    def admission(self, team_id: int, kind: Kind) -> Iterator[Ticket]:
        """Admit one unit of `kind` work for the team, or raise TeamBusy / QueueFull. Store the work inside the
        block and pass the ticket to `solve` or `answer` after it; if the block raises, the admission is undone."""
        if self.local is not None:
            ticket = self._reserve(team_id, kind)
            try:
                yield ticket
            except BaseException:
                self._release(ticket)
                raise
            return
        with self._team_lock(team_id):  # count and store under one lock: concurrent admissions see each other
            in_flight = self._stored_in_flight(team_id, kind)
            if in_flight >= self.limits[kind]:
                raise TeamBusy(team_id, kind, in_flight, self.limits[kind], self.retry_after_s)
            yield Ticket(team_id, kind, held=False)

    def in_flight(self, team_id: int, kind: Kind) -> int:
        if self.local is not None:
            with self._lock:
                return self._in_flight[(team_id, kind)]
        return self._stored_in_flight(team_id, kind)

    def _reserve(self, team_id: int, kind: Kind) -> Ticket:
        with self._lock:
            held = self._in_flight[(team_id, kind)]
            if held >= self.limits[kind]:
                raise TeamBusy(team_id, kind, held, self.limits[kind], self.retry_after_s)
            if self.pending >= self.max_queued:
                raise QueueFull(self.pending, self.max_queued, self.retry_after_s)
            self.pending += 1
            self._in_flight[(team_id, kind)] += 1
        return Ticket(team_id, kind, held=True)

    def _release(self, ticket: Ticket) -> None:
        if not ticket.held:
            return
        with self._lock:
            self.pending -= 1
            key = (ticket.team_id, ticket.kind)
            self._in_flight[key] -= 1
            if self._in_flight[key] <= 0:
                del self._in_flight[key]

    def _team_lock(self, team_id: int) -> threading.Lock:
        with self._lock:
            return self._team_locks.setdefault(team_id, threading.Lock())

    def _stored_in_flight(self, team_id: int, kind: Kind) -> int:
        with self.rt.session() as s:
            if kind == "queries":
                return count_pending_questions(s, team_id=team_id)
            return count_unfinished_batches(s, team_id=team_id)

    # -- dispatch ----------------------------------------------------------------------------------------------

    def _track(self, ticket: Ticket, kind: str, ids: list[str]) -> Future[None]:
        """Run the work on the background thread through the embedded runner, which gives each row its one
        outcome (workers/queue/outcome.py); the team's slot is freed when it ends."""
        assert self.local is not None
        try:
            future = self.local.submit(work_in_process, self.rt, kind, ids)
        except RuntimeError:  # shut down meanwhile
            self._release(ticket)
            raise
        future.add_done_callback(lambda f: self._ended(ticket, f))  # run, failed or cancelled: the slot is free
        return future

    def _ended(self, ticket: Ticket, future: Future[None]) -> None:
        self._release(ticket)
        exc = None if future.cancelled() else future.exception()
        if exc is not None:  # the runner itself failed (its rows stay pending for the next start or a requeue)
            log.error("api.background_failed", task=ticket.kind, error=f"{type(exc).__name__}: {exc}", exc_info=exc)

    def solve(self, ticket: Ticket, problem_ids: list[str]) -> Dispatch:
        """Queue the problems; not queued when the broker could not be reached (the batch stays stored and pending
        until `kvgraft requeue` sends it)."""
        if self.local is not None:
            return Dispatch(True, self._track(ticket, "solve", problem_ids))
        try:
            dispatch_solves(self.rt, problem_ids)
        except Exception as exc:  # noqa: BLE001 - stored either way: see _deferred
            return _deferred(exc, problems=len(problem_ids))
        return Dispatch(True)

    def answer(self, ticket: Ticket, request_id: str) -> Dispatch:
        if self.local is not None:
            return Dispatch(True, self._track(ticket, "answer", [request_id]))
        try:
            send_question(self.rt, request_id)
        except NoLiveWorkerError as exc:
            return Dispatch(False, refused=str(exc))
        except Exception as exc:  # noqa: BLE001 - stored either way: see _deferred
            return _deferred(exc, request_id=request_id)
        return Dispatch(True)

    def queue_depths(self) -> dict[str, int]:
        if self.local is not None:
            return {"local": self.pending}
        from workers.queue.celery_app import QUEUES  # celery only where a broker is configured

        try:
            names = sorted(set(QUEUES) | set(fleet_queues(self.rt)))
            return {q: st.depth for q, st in queue_states(self.rt.settings.broker_url or "", names).items()}
        except Exception as exc:  # noqa: BLE001 - a scrape must not fail because the broker is down
            log.warning("api.queue_depth_unavailable", error=str(exc))
            return {}

    def close(self, timeout: float | None = None) -> bool:
        """Stop the embedded work thread: with a timeout (a process told to stop), work still queued is dropped (its
        rows stay pending for `kvgraft requeue` and beat) and the task running is waited for that long; without,
        everything queued finishes first. Whether the thread has stopped."""
        if self.local is None:
            return True
        if timeout is None:
            self.local.shutdown(wait=True, cancel_futures=False)
            return True
        self.local.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + timeout
        for thread in list(getattr(self.local, "_threads", ())):
            thread.join(max(0.0, deadline - time.monotonic()))
        running = any(t.is_alive() for t in getattr(self.local, "_threads", ()))
        if running:
            log.warning("api.work_abandoned", grace_s=timeout)  # its delivery is redelivered as a lost one
        return not running
