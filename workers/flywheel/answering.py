"""Answering a question through the library: the policy of routes (workers/flywheel/routes.py) run over one frozen
request, and the `queries` row that records the answer. Every answer names its route, block, decode tokens, whether
it was verified and its block attested on this machine, and whose key verified that block."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import structlog
from sqlalchemy.orm import Session

from engine.graft import GraftEngine
from store.db import AnswerRow
from store.retention import record_use
from workers.flywheel.answer import Answer, AnswerParams, AnswerRequest, question_digest
from workers.flywheel.prompts import style_for
from workers.flywheel.routes import run_policy
from workers.runtime import Runtime

log = structlog.get_logger(__name__)


def query_row(question: str, team_id: int | None, result: Answer) -> AnswerRow:
    """The `queries` row recording an answer."""
    return AnswerRow(team_id=team_id, question=question, question_digest=question_digest(question),
                 answer=result.answer, route=result.route, block_id=result.block_id,
                 decode_tokens=result.decode_tokens, verified=result.verified, attested=result.attested,
                 verified_by=result.verified_by, detail=result.detail or None, binding=result.binding)


def add_answer_row(session: Session, question: str, team_id: int | None, result: Answer) -> AnswerRow:
    """Record an answer: its `queries` row, and one more use of the block it grafted (retention's recency)."""
    row = query_row(question, team_id, result)
    session.add(row)
    session.flush()
    if result.block_id is not None:
        record_use(session, block_id=result.block_id, team_id=team_id)
    return row


def answer_request_for(engine: GraftEngine, question: str, *, team_id: int | None, expected: Any, verifier: Any,
                       params: AnswerParams) -> AnswerRequest:
    """The frozen request the routes answer."""
    return AnswerRequest(question=question, team_id=team_id, expected=expected, verifier=verifier, params=params,
                         engine=engine, style=style_for(engine))


def answer_question(rt: Runtime, question: str, *, team_id: int | None = None, model: str | None = None,
                    expected: Any = None, verifier: Any = None, params: AnswerParams = AnswerParams(),
                    record: bool = True) -> Answer:
    """Answer and (with `record`) store the answer as a `queries` row; callers that must record it together with
    other state in one transaction pass record=False and use add_answer_row()."""
    request = answer_request_for(rt.engine(model), question, team_id=team_id, expected=expected, verifier=verifier,
                                 params=params)
    result = run_policy(rt, request)
    if not record:
        return result
    t0 = time.perf_counter()
    with rt.session() as s:
        query_id = add_answer_row(s, question, team_id, result).id
    if result.timings_ms:
        result = replace(result, timings_ms={**result.timings_ms,
                                             "record": round((time.perf_counter() - t0) * 1000, 3)})
    log.info("answer.done", route=result.route, block_id=result.block_id, verified=result.verified,
             decode_tokens=result.decode_tokens)
    return replace(result, query_id=query_id)
