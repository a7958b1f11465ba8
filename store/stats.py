"""Deployment-wide counts read at scrape time (the HTTP API's Prometheus metrics, services/metrics.py):
attestations by status, sandbox verdicts of generations, work not yet answered, cache hits and misses, tokens
restored from blocks, evictions by reason. Every team's rows together; each function takes the session and only
reads. The store's byte totals are store/retention.py's (held_bytes, owned_bytes, eviction_totals)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from store.db import AnswerRow, AttestationRow, BlockRow, EvictionRow, GenerationRow, ProblemRow, QueryRequestRow


@dataclass(frozen=True)
class AnswerCounts:
    """Answers recorded: those that grafted a block (hits) out of all of them."""

    hits: int
    total: int


def _by(session: Session, column: Any) -> list[tuple[str, int]]:
    """(value, count) of every row, grouped by `column`."""
    return [(value, n) for value, n in session.execute(sa.select(column, sa.func.count()).group_by(column))]


def _pending(session: Session, model: type[ProblemRow] | type[QueryRequestRow]) -> int:
    return session.scalar(sa.select(sa.func.count()).select_from(model).where(model.status == "pending")) or 0


def attestations_by_status(session: Session) -> list[tuple[str, int]]:
    """(status, count) of every attestation recorded."""
    return _by(session, AttestationRow.status)


def generations_by_verdict(session: Session) -> list[tuple[str, int]]:
    """(verdict, count) of every generated program run in the sandbox."""
    return _by(session, GenerationRow.verdict)


def pending_problems(session: Session) -> int:
    """Problems not yet solved, failed or rejected."""
    return _pending(session, ProblemRow)


def pending_questions(session: Session) -> int:
    """Questions not yet answered."""
    return _pending(session, QueryRequestRow)


def answer_counts(session: Session) -> AnswerCounts:
    """Answers that grafted a block, and all answers."""
    hits, total = session.execute(sa.select(sa.func.count(AnswerRow.block_id), sa.func.count())).one()
    return AnswerCounts(hits, total)


def restored_tokens(session: Session) -> int:
    """Tokens restored from blocks by answers (each answer counts its block's tokens)."""
    return session.scalar(sa.select(sa.func.coalesce(sa.func.sum(BlockRow.n_tokens), 0))
                          .select_from(AnswerRow).join(BlockRow, BlockRow.id == AnswerRow.block_id)) or 0


def evictions_by_reason(session: Session) -> list[tuple[str, int]]:
    """(reason, count) of every eviction recorded."""
    return _by(session, EvictionRow.reason)
