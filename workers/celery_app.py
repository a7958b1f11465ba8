"""The Celery application: RabbitMQ broker (KVGRAFT_BROKER_URL), queues `solve`, `graft` and `attest`.

Tasks are late-acked (a killed worker's task is redelivered), rejected back to the queue when the worker is lost,
prefetched one at a time, and carry only ids; results are not stored (the database holds every outcome)."""

from __future__ import annotations

from celery import Celery
from kombu import Queue

from workers.settings import Settings

QUEUES = ("solve", "graft", "attest")


def make_app(broker_url: str | None = None) -> Celery:
    app = Celery("kvgraft", broker=broker_url or Settings().broker_url or "amqp://guest:guest@127.0.0.1:5672//",
                 include=["workers.tasks"])
    app.conf.update(
        task_queues=[Queue(name, durable=True) for name in QUEUES],
        task_default_queue="solve",
        task_routes={"kvgraft.solve_problem": {"queue": "solve"}, "kvgraft.answer_query": {"queue": "graft"},
                     "kvgraft.attest_block": {"queue": "attest"}},
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


app = make_app()
