"""Graft workers answering recurring questions together: the body that answers a question which is an exact repeat
of a solved one also takes up to KVGRAFT_GRAFT_MAX_SEQS - 1 other waiting questions that are repeats too, and
decodes all their answers in one batch context (workers/flywheel/recurrence.py), each recorded as its own outcome.

The same body runs in a Celery graft worker, the embedded runner and the API's work thread, so all three batch.
A question is taken only when no delivery is working on it, by one conditional update that starts its delivery
(two workers cannot both take it); its own task message, delivered later, finds it answered and leaves it. If the
shared decode fails for one question, that question alone is left: a taken one is released untouched (its own
delivery answers it), the asking one is answered alone, as it would have been; another question's block never
decides this one's outcome.

Batching is used only where this host's `batch` attestation of the graft engine found every grafted answer
decoded together equal to the same graft decoded alone in a one-sequence context (the path the graft check
attests); elsewhere each question is answered alone and the log says why (`graft.batching_off`). Which questions
shared a batch is logged for the operator and never shown to a team: an answer and its figures are the same
whether or not another team's question was decoded beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog

from engine.errors import EngineError
from engine.graft import GraftEngine
from store.db import QueryRequestRow, utcnow
from store.repository import Delivery, claim_waiting_question, waiting_questions
from workers.flywheel.answer import Answer, AnswerParams, AnswerRequest
from workers.flywheel.answering import add_answer_row, answer_request_for
from workers.flywheel.recurrence import (
    RecurrenceHit,
    can_decode_together,
    decode_alone,
    decode_together,
    find_hit,
    hit_answer,
)
from workers.runtime import MemoSlot, Runtime
from workers.serving.batch_check import BatchPolicy, batching_policy

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Taken:
    """A waiting question this body took beside its own: its delivery is started and must be ended."""

    delivery: Delivery
    request: AnswerRequest
    hit: RecurrenceHit

    @property
    def request_id(self) -> str:
        return self.delivery.row_id


def requested_model(options: dict[str, Any]) -> str | None:
    model = options.get("model")
    return model if isinstance(model, str) else None


GRAFT_BATCHING: MemoSlot[str, BatchPolicy] = MemoSlot("graft_batching")  # by the graft engine's fingerprint


def graft_batching(rt: Runtime, engine: GraftEngine) -> BatchPolicy:
    """This host's batching verdict for the graft engine (the `batch` check, run once per host and fingerprint)."""
    policy = rt.memo.get(GRAFT_BATCHING, engine.fingerprint.id)
    if policy is None:
        policy = rt.memo.put(GRAFT_BATCHING, engine.fingerprint.id,
                             batching_policy(rt, engine, rt.settings.graft_max_seqs))
        if policy.graft_reason:
            log.warning("graft.batching_off", fingerprint=engine.fingerprint.id, reason=policy.graft_reason)
    return policy


def record_answer(rt: Runtime, request_id: str, answer: Answer, *, delivery: Delivery) -> str:
    """The answer, the request's outcome and the end of `delivery`, committed together (exactly one outcome: a
    request that already has one is left as it is)."""
    with rt.session() as s:
        delivery.end(s)
        request = s.get(QueryRequestRow, request_id, with_for_update=True)
        if request is None or request.status != "pending":
            return request.status if request is not None else "unknown"
        row = add_answer_row(s, request.question, request.team_id, answer)
        request.status, request.finished_at, request.query_id = "done", utcnow(), row.id
    return "done"


def _release(rt: Runtime, deliveries: list[Delivery]) -> None:
    """End the claimed deliveries no recorded answer ended; their outcomes are left to their own deliveries."""
    for delivery in deliveries:
        if not delivery.ended:
            with rt.session() as s:
                delivery.end(s)


def _candidates(rt: Runtime, own_id: str, model: str | None, limit: int) -> list[tuple[str, str, int | None,
                                                                                        dict[str, Any]]]:
    """(id, question, team, expected) of the waiting questions for the same model, oldest first (not claimed)."""
    with rt.session() as s:
        return [(r.id, r.question, r.team_id, dict(r.expected or {}))
                for r in waiting_questions(s, exclude=own_id, limit=4 * limit)
                if requested_model(dict(r.options or {})) == model]


def _take(rt: Runtime, engine: GraftEngine, candidates: list[tuple[str, str, int | None, dict[str, Any]]],
          limit: int) -> list[Taken]:
    """Up to `limit` of the candidates that are repeats decodable together, each claimed (on any error, every
    claim made so far is released before it is raised)."""
    taken: list[Taken] = []
    claimed: Delivery | None = None  # claimed, not yet taken or released
    try:
        for request_id, question, team_id, expected in candidates:
            if len(taken) >= limit:
                break
            with rt.session() as s:
                if not claim_waiting_question(s, request_id=request_id):
                    continue
            claimed = Delivery(QueryRequestRow, request_id, started=True)
            request = answer_request_for(engine, question, team_id=team_id, expected=expected.get("answer"),
                                         verifier=expected.get("verifier"), params=AnswerParams())
            try:
                hit = find_hit(rt, request)
            except Exception as exc:  # noqa: BLE001 - its own delivery will meet (and record) the error
                log.info("graft.take_skipped", request_id=request_id, error=f"{type(exc).__name__}: {exc}")
                hit = None
            if hit is None or not can_decode_together(hit):  # left to its own delivery
                _release(rt, [claimed])
                claimed = None
                continue
            taken.append(Taken(claimed, request, hit))
            claimed = None
    except BaseException:
        _release(rt, [t.delivery for t in taken] + ([claimed] if claimed else []))
        raise
    return taken


def answer_recurring(rt: Runtime, own_id: str, own: AnswerRequest, model: str | None) -> Answer | None:
    """The asking question's answer if it is a repeat (None: it is not; the policy answers it), with the other
    repeats taken meanwhile answered and recorded beside it."""
    hit = find_hit(rt, own)
    if hit is None:
        return None
    engine = own.engine
    limit = rt.settings.graft_max_seqs - 1
    taken: list[Taken] = []
    policy = None
    if limit >= 1 and can_decode_together(hit):
        candidates = _candidates(rt, own_id, model, limit)
        if candidates:
            policy = graft_batching(rt, engine)
            if policy.grafts:
                taken = _take(rt, engine, candidates, min(limit, policy.max_seqs - 1))
    if not taken:
        return hit_answer(rt, own, hit, decode_alone(engine, own.style, hit))
    try:
        assert policy is not None
        try:
            decoded = decode_together(engine, own.style, [hit, *(t.hit for t in taken)], policy.max_seqs)
        except EngineError as exc:  # e.g. no memory for the batch context: every question as if alone
            log.warning("graft.batch_unavailable", error=f"{type(exc).__name__}: {exc}")
            decoded = [exc] * (1 + len(taken))
        for t, outcome in zip(taken, decoded[1:], strict=True):
            if not isinstance(outcome, Exception):
                try:  # its answer's own checks and record: an error there is its, never the asker's
                    record_answer(rt, t.request_id, hit_answer(rt, t.request, t.hit, outcome), delivery=t.delivery)
                    continue
                except Exception as exc:  # noqa: BLE001 - left to its own delivery, which meets (and records) it
                    outcome = exc
            log.info("graft.taken_failed", request_id=t.request_id, error=f"{type(outcome).__name__}: {outcome}")
    finally:
        _release(rt, [t.delivery for t in taken])
    log.info("graft.answered_together", questions=1 + len(taken), request_id=own_id,
             taken=[t.request_id for t in taken])
    mine = decoded[0]
    if isinstance(mine, Exception):  # another question's graft never decides this one: answered alone, as before
        log.info("graft.own_failed_together", request_id=own_id, error=f"{type(mine).__name__}: {mine}")
        return hit_answer(rt, own, hit, decode_alone(engine, own.style, hit))
    return hit_answer(rt, own, hit, mine)
