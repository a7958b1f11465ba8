"""The Celery application: RabbitMQ broker (KVGRAFT_BROKER_URL), the shared `solve` queue, a `graft.<fp>` and an
`attest.<fp>` queue per architecture fingerprint (workers/queue/fleet.py), and `upkeep` (model-free periodic work
every worker also consumes; `kvgraft beat` schedules it).

Tasks are late-acked (a killed worker's task is redelivered), rejected back to the queue when the worker is lost,
prefetched one at a time, and carry only ids; results are not stored (the database holds every outcome)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from amqp.exceptions import AMQPError, IrrecoverableChannelError, IrrecoverableConnectionError
from celery import Celery, signals
from kombu import Queue
from kombu.exceptions import EncodeError, KombuError

from workers.errors import BrokerUnavailableError
from workers.settings import Settings, load_settings

QUEUES = ("solve", "upkeep")  # fixed queues; graft and attest queues are per fingerprint (workers/queue/fleet.py)
TASK_QUEUES = {"kvgraft.solve_problem": "solve", "kvgraft.requeue_lost": "upkeep"}
DEFAULT_BROKER = "amqp://guest:guest@127.0.0.1:5672//"
# What kombu and py-amqp raise when the broker cannot be reached or drops the connection, and among those what
# retrying cannot mend (a payload that does not encode, credentials or a vhost the broker refuses).
BROKER_ERRORS: tuple[type[BaseException], ...] = (KombuError, AMQPError, OSError)
NOT_AN_OUTAGE: tuple[type[BaseException], ...] = (EncodeError, IrrecoverableChannelError, IrrecoverableConnectionError)


@contextmanager
def talking_to_broker(doing: str) -> Iterator[None]:
    """Where a task is sent or a queue inspected: an outage among BROKER_ERRORS becomes BrokerUnavailableError
    (transient); what retrying cannot mend is raised as it is."""
    try:
        yield
    except NOT_AN_OUTAGE:
        raise
    except BROKER_ERRORS as exc:
        raise BrokerUnavailableError(f"the broker did not {doing}: {type(exc).__name__}: {exc}") from exc


def make_app(broker_url: str | None = None) -> Celery:
    app = Celery("kvgraft", broker=broker_url or DEFAULT_BROKER, include=["workers.queue.tasks"])
    app.conf.update(
        task_queues=[Queue(name, durable=True) for name in QUEUES],
        task_default_queue="solve",
        task_routes={name: {"queue": queue} for name, queue in TASK_QUEUES.items()},
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_cancel_long_running_tasks_on_connection_loss=True,
        task_time_limit=3600,
    )
    return app


@lru_cache(maxsize=8)
def sender(broker_url: str) -> Celery:
    """An app for sending tasks to `broker_url` (senders name tasks, they need not import them)."""
    return make_app(broker_url)


def send(broker_url: str, task_name: str, *args: str, queue: str | None = None) -> None:
    """Queue a task by name with id arguments, on `queue` (graft and attest tasks: their fingerprint's queue) or
    the fixed queue its route names."""
    target = queue or TASK_QUEUES.get(task_name)
    if target is None:
        raise ValueError(f"{task_name} has no fixed queue: name the fingerprint's queue")
    with talking_to_broker(f"take {task_name} for {target}"):
        sender(broker_url).send_task(task_name, args=list(args), queue=target)


# The app the workers run. `kvgraft worker` and `kvgraft beat` point it at their settings (`run_with`) before it
# starts; the worker's tasks then run on those same settings (`worker_settings`).
app = make_app()
_worker_settings: Settings | None = None


def run_with(settings: Settings) -> Celery:
    """Point the workers' app at this process's settings: the broker, and `kvgraft beat`'s schedule (work deferred
    while the broker was down is sent again without a person)."""
    global _worker_settings
    _worker_settings = settings
    app.conf.broker_url = settings.broker_url or DEFAULT_BROKER
    # a prefork pool's backstop: the task's own deadline (workers/queue/liveness.py) interrupts it a minute earlier
    app.conf.task_time_limit = settings.task_deadline_s + 60
    app.conf.beat_schedule = {"requeue-lost": {"task": "kvgraft.requeue_lost", "schedule": settings.requeue_interval_s,
                                               "options": {"queue": "upkeep", "expires": settings.requeue_interval_s}}}
    return app


@signals.worker_init.connect
@signals.beat_init.connect
def _configure_from_environment(**_: object) -> None:
    """A worker or beat started by `celery -A workers.queue.celery_app` itself (not through `kvgraft worker` or
    `kvgraft beat`): point the app at the settings read once from the environment before it connects."""
    worker_settings()


@signals.worker_shutting_down.connect
def _shutdown_within_grace(**_: object) -> None:
    """SIGTERM, SIGINT or SIGQUIT on a worker: the running task gets KVGRAFT_SHUTDOWN_GRACE_S, then it is handed
    back to the broker and the process exits 0 (workers/queue/shutdown.py). Runs in the worker's main thread, in
    the signal handler: an idle worker stops at once (its event loop may otherwise wait seconds for its next timer
    before it sees Celery's stop flag)."""
    from celery.exceptions import WorkerShutdown
    from celery.worker import state

    from workers.queue.shutdown import on_shutting_down

    on_shutting_down(worker_settings().shutdown_grace_s, lambda: bool(state.active_requests))
    if not state.active_requests:
        raise WorkerShutdown(0)


def worker_settings() -> Settings:
    """The settings this worker process runs on: those it was started with, else read once from the
    environment."""
    if _worker_settings is None:
        run_with(load_settings())
    assert _worker_settings is not None
    return _worker_settings
