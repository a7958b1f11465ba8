"""Evidence that a delivery's worker is alive, and a task's deadline, for every runner of task bodies (a Celery
worker under any pool, the embedded runner, `kvgraft run` and `kvgraft ask` in-process).

- The heartbeat: each process keeps one `DeliveryWatch` per runtime, a thread that runs while the process holds
  deliveries. Every KVGRAFT_DELIVERY_HEARTBEAT_S it marks them alive (task_deliveries.heartbeat_at), and it ends
  each delivery whose body is over but whose end could not be recorded (the database was down): a worker that is
  alive never looks lost, and its counts come right once the database is back. A delivery that has not ended
  counts as lost only when its heartbeat is older than KVGRAFT_DELIVERY_LOST_AFTER_S or the broker redelivered
  its message (store.repository.count_lost_deliveries).
- The deadline: a body still running KVGRAFT_TASK_DEADLINE_S after it started, in a process's main thread (where
  the solo pool, a prefork pool's child, `kvgraft run` and `kvgraft ask` run it), is interrupted by a signal (so a
  blocking wait is interrupted too): `TaskDeadlineExceeded` is raised in the body, run_task records the outcome
  (`deadline_exceeded`) and returns, and the worker takes its next task. Celery's own hard limit, which only a
  prefork pool enforces, is set a minute later as a backstop. In another thread (an embedded API's work thread)
  the deadline is only logged (`task.deadline_exceeded`): Python cannot interrupt a thread safely.
- Shutdown: `abandon_running` interrupts the body running in the main thread the same way, raising
  `ShutdownAbandoned` (no outcome recorded: the row stays pending for a redelivery or the next run); a process told
  to stop calls it when KVGRAFT_SHUTDOWN_GRACE_S runs out (workers/queue/shutdown.py)."""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import structlog

from store.repository import Delivery, heartbeat_deliveries
from workers.errors import ShutdownAbandoned, TaskDeadlineExceeded
from workers.runtime import MemoSlot, Runtime

log = structlog.get_logger(__name__)

DEADLINE_SIGNAL = signal.SIGRTMIN + 3  # not SIGALRM: pytest-timeout and others arm that timer
_main_body_running = threading.Event()  # a body runs in the main thread under `deadline`
_abandon_reason: list[str] = []  # set once by abandon_running: the main thread's body raises ShutdownAbandoned
_admission_closed: list[str] = []  # set once by stop_admitting: no body starts in the main thread


def worker_id() -> str:
    """This process as a delivery names its worker (looked up each time: a forked child has its own pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class DeliveryWatch:
    """The deliveries this process holds (see the module's docstring); its thread runs only while there are some."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._held: dict[int, Delivery] = {}  # by id(delivery): running, or over with an end still to record
        self._over: set[int] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, delivery: Delivery) -> None:
        with self._lock:
            self._held[id(delivery)] = delivery
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="kvgraft-delivery-heartbeat", daemon=True)
                self._thread.start()

    def over(self, delivery: Delivery) -> None:
        """The delivery's body is over: forgotten once it has ended (now, or when the watch manages to end it)."""
        with self._lock:
            if delivery.open:
                self._over.add(id(delivery))
            else:
                self._held.pop(id(delivery), None)

    def settle(self) -> None:
        """End now the deliveries whose body is over and whose end was not recorded (before this process starts
        another: a retry must not find its own earlier delivery still open). Raises what the database raises."""
        with self._lock:
            pending = [self._held[k] for k in self._over if k in self._held]
        if not pending:
            return
        with self.rt.session() as s:
            for delivery in pending:
                delivery.end(s)
        self._forget_ended()

    def _forget_ended(self) -> None:
        with self._lock:
            for key in [k for k, d in self._held.items() if not d.open and (k in self._over or d.ended)]:
                self._held.pop(key, None)
                self._over.discard(key)

    def _run(self) -> None:
        every = self.rt.settings.delivery_heartbeat_s
        while True:
            self._wake.wait(every)
            with self._lock:
                if not self._held:
                    self._thread = None
                    return
                running = [d.id for k, d in self._held.items() if k not in self._over and d.open and d.id is not None]
            try:
                with self.rt.session() as s:
                    heartbeat_deliveries(s, delivery_ids=running)
                self.settle()
            except Exception as exc:  # noqa: BLE001 - the database may be down: tried again at the next beat
                log.warning("delivery.heartbeat_not_recorded", deliveries=len(running),
                            error=f"{type(exc).__name__}: {exc}")


_WATCH: MemoSlot[str, DeliveryWatch] = MemoSlot("delivery_watch")
_watch_lock = threading.Lock()


def watch_of(rt: Runtime) -> DeliveryWatch:
    with _watch_lock:
        return rt.memo.get(_WATCH, "watch") or rt.memo.put(_WATCH, "watch", DeliveryWatch(rt))


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """Raise TaskDeadlineExceeded in this thread if the block runs past `seconds` (see the module's docstring)."""
    thread = threading.current_thread()
    in_main = thread is threading.main_thread()
    armed = threading.Event()  # set while the block runs: a late timer raises nothing
    previous = None

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        if armed.is_set() and _abandon_reason:
            armed.clear()
            raise ShutdownAbandoned(_abandon_reason[0])
        if armed.is_set():
            armed.clear()
            raise TaskDeadlineExceeded(f"{what} ran past its deadline of {seconds:g} s (KVGRAFT_TASK_DEADLINE_S)")

    def expire() -> None:
        if not armed.is_set():
            return
        log.error("task.deadline_exceeded", task=what, deadline_s=seconds, interrupted=in_main)
        if in_main and thread.ident is not None:
            signal.pthread_kill(thread.ident, DEADLINE_SIGNAL)

    if in_main:
        previous = signal.signal(DEADLINE_SIGNAL, on_signal)
    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    armed.set()
    if in_main:
        _main_body_running.set()
    timer.start()
    try:
        if in_main and (_abandon_reason or _admission_closed):  # told to stop before this body started
            raise ShutdownAbandoned((_abandon_reason or _admission_closed)[0])
        yield
    finally:
        armed.clear()
        if in_main:
            _main_body_running.clear()
        timer.cancel()
        if in_main:
            signal.signal(DEADLINE_SIGNAL, previous if previous is not None else signal.SIG_DFL)


def abandon_running(reason: str) -> bool:
    """Interrupt the task body running in the main thread (now, or as soon as one starts) with ShutdownAbandoned;
    True if one was running. Called from another thread when a shutdown's grace runs out."""
    if not _abandon_reason:
        _abandon_reason.append(reason)
    main = threading.main_thread()
    if _main_body_running.is_set() and main.ident is not None:
        log.warning("task.abandoned_at_shutdown", reason=reason)
        signal.pthread_kill(main.ident, DEADLINE_SIGNAL)
        return True
    return False


def stop_admitting(reason: str) -> None:
    """No task body starts in the main thread from now on (it raises ShutdownAbandoned before it begins); the one
    running, if any, goes on."""
    if not _admission_closed:
        _admission_closed.append(reason)
