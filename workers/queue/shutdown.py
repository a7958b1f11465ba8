"""Shutdown within a bound for `kvgraft worker` (Celery, solo pool: the task runs in the worker's main thread).

SIGTERM (or SIGINT/SIGQUIT) starts Celery's warm shutdown: the worker stops taking messages and waits for the running
task. Celery's own soft shutdown (`worker_soft_shutdown_timeout`) cannot bound that under the solo pool: it sleeps
inside the signal handler, in the very thread the task runs in. So `on_shutting_down` starts a watch thread instead:

- no task running, or the task ends within KVGRAFT_SHUTDOWN_GRACE_S: Celery's warm shutdown ends the process (exit 0);
- still running at the grace: the body is interrupted (`abandon_running`: ShutdownAbandoned in the main thread, no
  outcome recorded, its delivery ended), the task raises Celery's WorkerShutdown(0), and the worker stops without
  acknowledging the message: the broker hands it to another worker (late acks), so nothing is lost;
- a body that cannot be interrupted (native code that does not return, a task outside run_task) does not hold the
  process: ABANDON_BACKSTOP_S after the grace the process exits 0 at once (os._exit); its connection closes and the
  broker redelivers the unacknowledged message all the same."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import structlog

from workers.errors import ShutdownAbandoned
from workers.queue.liveness import abandon_running, stop_admitting

log = structlog.get_logger(__name__)

ABANDON_BACKSTOP_S = 3.0  # after the grace: interrupting the body must have ended the process by then
_started = threading.Event()


def on_shutting_down(grace_s: float, running: Callable[[], bool], *,
                     reason: str = "the worker was told to stop") -> None:
    """Start the watch (once): `running()` says whether a task is still running (Celery's active requests)."""
    if _started.is_set():
        return
    _started.set()
    log.warning("worker.shutdown", grace_s=grace_s)
    threading.Thread(target=_watch, args=(grace_s, running, reason), name="kvgraft-shutdown-watch",
                     daemon=True).start()


def _watch(grace_s: float, running: Callable[[], bool], reason: str) -> None:
    until = time.monotonic() + grace_s
    while running() and time.monotonic() < until:
        time.sleep(0.1)
    if not running():
        return  # Celery's warm shutdown ends the process
    log.warning("worker.shutdown.abandon", grace_s=grace_s, reason=reason)
    abandon_running(f"{reason}: still running after KVGRAFT_SHUTDOWN_GRACE_S={grace_s:g} s; handed back")
    time.sleep(ABANDON_BACKSTOP_S)
    log.error("worker.shutdown.exit_now", grace_s=grace_s, backstop_s=ABANDON_BACKSTOP_S)
    os._exit(0)


class StopRequest:
    """SIGTERM on a process that runs task bodies in its main thread itself (`kvgraft run`'s job child, `kvgraft
    requeue` without a broker): the handler stops admitting (no task body starts; `check` raises ShutdownAbandoned
    before the next piece of work) and, if a body is still running KVGRAFT_SHUTDOWN_GRACE_S later, interrupts it
    (`abandon_running`: no outcome, the row stays pending for the next run). A process still alive
    ABANDON_BACKSTOP_S after that (blocked where nothing can interrupt it) exits 0 at once: what it had not finished
    stays pending. Install it in the main thread."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.requested = threading.Event()

    def install(self) -> None:
        import signal

        signal.signal(signal.SIGTERM, self._on_signal)

    def _on_signal(self, _signum: int, _frame: object) -> None:
        if self.requested.is_set():
            return
        self.requested.set()
        stop_admitting("told to stop: the rest is left for the next run")
        threading.Thread(target=self._abandon_after_grace, name="kvgraft-stop-grace", daemon=True).start()

    def _abandon_after_grace(self) -> None:
        time.sleep(self.grace_s)
        abandon_running(f"told to stop: still running after KVGRAFT_SHUTDOWN_GRACE_S={self.grace_s:g} s")
        time.sleep(ABANDON_BACKSTOP_S)
        log.error("shutdown.exit_now", grace_s=self.grace_s, backstop_s=ABANDON_BACKSTOP_S)
        os._exit(0)

    def check(self) -> None:
        """Raise ShutdownAbandoned if a stop was requested (called before each piece of work starts)."""
        if self.requested.is_set():
            raise ShutdownAbandoned("told to stop: the rest is left for the next run")
