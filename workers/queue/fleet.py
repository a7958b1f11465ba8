"""A mixed fleet: graft and attest work goes to a queue per architecture fingerprint (`graft.<fp>`,
`attest.<fp>`), which only workers that computed that fingerprint consume, so a task never reaches a worker that
must refuse its block. Each worker records itself at start (the `workers` table: kind, model, fingerprint,
queues); a dispatcher picks among the fingerprints whose queue has a live consumer (the broker's consumer count,
so a dead worker's row does not count), and reports work no live worker can do instead of queueing it forever."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

import structlog

from store.repository import find_recurrence, get_block, list_workers, record_worker
from workers.flywheel.answer import question_digest
from workers.runtime import Runtime

log = structlog.get_logger(__name__)

WORKER_KINDS = ("solve", "graft", "attest")


class NoLiveWorkerError(LookupError):
    """No live worker can do this work (none consumes the queue of the fingerprint it needs)."""


def graft_queue(fingerprint: str) -> str:
    return f"graft.{fingerprint}"


def attest_queue(fingerprint: str) -> str:
    return f"attest.{fingerprint}"


def worker_queues(kind: str, fingerprint: str, *, attest: bool = True) -> list[str]:
    """What a worker of `kind` consumes: solve workers the shared solve queue (they deposit under their own
    fingerprint), graft workers their fingerprint's graft queue (and attest queue), and every worker the
    model-free upkeep queue."""
    if kind == "solve":
        return ["solve", "upkeep"]
    if kind == "attest":
        return [attest_queue(fingerprint), "upkeep"]
    return [graft_queue(fingerprint), *([attest_queue(fingerprint)] if attest else []), "upkeep"]


def default_worker_name(kind: str, fingerprint: str) -> str:
    return f"{kind}-{fingerprint[:8]}@{socket.gethostname()}"


def register_worker(rt: Runtime, *, name: str, kind: str, model: str, fingerprint: str, queues: list[str]) -> None:
    """Record (or refresh) this worker's row."""
    with rt.session() as s:
        record_worker(s, name=name, kind=kind, model=model, fingerprint=fingerprint, queues=queues)
    log.info("fleet.worker_registered", name=name, kind=kind, model=model, fingerprint=fingerprint, queues=queues)


@dataclass(frozen=True)
class QueueState:
    queue: str
    depth: int
    consumers: int


def queue_states(broker_url: str, queues: list[str]) -> dict[str, QueueState]:
    """Depth and live consumers of each queue (a queue that does not exist has neither)."""
    from amqp.exceptions import NotFound

    from workers.queue.celery_app import sender, talking_to_broker  # celery only where a broker is configured

    states: dict[str, QueueState] = {}
    with talking_to_broker(f"answer for {len(queues)} queue(s)"), sender(broker_url).connection_for_write() as conn:
        for queue in queues:
            try:
                _, depth, consumers = conn.default_channel.queue_declare(queue=queue, passive=True)
                states[queue] = QueueState(queue, int(depth), int(consumers))
            except NotFound:
                states[queue] = QueueState(queue, 0, 0)
                conn.close()  # the failed passive declare closed the channel: start over on a fresh one
                conn.connect()
    return states


@dataclass(frozen=True)
class LiveFingerprint:
    fingerprint: str
    models: tuple[str, ...]
    queue: str
    depth: int
    consumers: int


def live_fingerprints(rt: Runtime, kind: str = "graft") -> list[LiveFingerprint]:
    """Fingerprints with at least one live consumer on their `kind` queue, and the models their workers run."""
    with rt.session() as s:
        rows = [(w.fingerprint, w.model) for w in list_workers(s, kinds=_kinds_serving(kind))]
    models: dict[str, set[str]] = {}
    for fp, model in rows:
        models.setdefault(fp, set()).add(model)
    name = attest_queue if kind == "attest" else graft_queue
    states = queue_states(rt.settings.broker_url or "", [name(fp) for fp in sorted(models)])
    return [LiveFingerprint(fp, tuple(sorted(models[fp])), name(fp), states[name(fp)].depth,
                            states[name(fp)].consumers)
            for fp in sorted(models) if states[name(fp)].consumers > 0]


def _model_matches(wanted: str, models: tuple[str, ...]) -> bool:
    return any(m == wanted or m.rsplit("/", 1)[-1] == wanted for m in models)


def choose_graft_queue(rt: Runtime, *, question: str, team_id: int | None, model: str | None) -> LiveFingerprint:
    """The graft queue a question goes to: among live fingerprints (of the asked model, if any), the one holding
    the question's recurrence block, else one running the deployment's default model, else the least loaded."""
    live = live_fingerprints(rt, "graft")
    if model is not None:
        live = [f for f in live if _model_matches(model, f.models)]
    if not live:
        known = _registered(rt, "graft")
        raise NoLiveWorkerError(f"no live graft worker{f' runs {model!r}' if model else ''}; registered: "
                                f"{known or 'none'} (start one: `kvgraft worker graft`)")
    with rt.session() as s:
        problem = find_recurrence(s, question_digest=question_digest(question), team_id=team_id)
        holder = get_block(s, block_id=problem.block_id) if problem is not None and problem.block_id else None
    by_fp = {f.fingerprint: f for f in live}
    if holder is not None and holder.fingerprint in by_fp:
        return by_fp[holder.fingerprint]
    default = [f for f in live if _model_matches(rt.settings.model, f.models)]
    return min(default or live, key=lambda f: (f.depth, f.fingerprint))


def attest_target(rt: Runtime, fingerprint: str) -> str:
    """The attest queue of a block's fingerprint, if a live worker consumes it."""
    live = {f.fingerprint: f for f in live_fingerprints(rt, "attest")}
    if fingerprint not in live:
        raise NoLiveWorkerError(f"no live worker of fingerprint {fingerprint} consumes {attest_queue(fingerprint)}; "
                                f"registered: {_registered(rt, 'attest') or 'none'}")
    return live[fingerprint].queue


def _kinds_serving(kind: str) -> tuple[str, ...]:
    """The worker kinds that consume a `kind` queue (graft workers also consume their fingerprint's attest queue)."""
    return ("graft", "attest") if kind == "attest" else (kind,)


def _registered(rt: Runtime, kind: str) -> str:
    with rt.session() as s:
        rows = [(w.name, w.model, w.fingerprint) for w in list_workers(s, kinds=_kinds_serving(kind))]
    return ", ".join(f"{n} ({m}, {fp[:12]})" for n, m, fp in rows)


def fleet_queues(rt: Runtime) -> list[str]:
    """Every queue a registered worker consumes."""
    with rt.session() as s:
        return sorted({q for w in list_workers(s) for q in w.queues})


def fleet_report(rt: Runtime) -> list[dict[str, Any]]:
    """Every registered worker with the state of its queues (for `kvgraft workers` and the metrics)."""
    with rt.session() as s:
        rows = list_workers(s)
        workers = [{"name": r.name, "kind": r.kind, "model": r.model, "fingerprint": r.fingerprint,
                    "queues": list(r.queues), "started_at": r.started_at.isoformat()} for r in rows]
    queues = sorted({q for w in workers for q in w["queues"]})
    states = queue_states(rt.settings.broker_url or "", queues) if rt.settings.broker_url and queues else {}
    for w in workers:
        w["live"] = bool(w["queues"]) and all(states.get(q, QueueState(q, 0, 0)).consumers > 0
                                              for q in w["queues"])
        w["depth"] = {q: states[q].depth for q in w["queues"] if q in states}
    return workers
