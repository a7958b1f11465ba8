"""Read models of the HTTP API's block pages: which blocks a principal may list and open, a block's deposit as a
team sees it (`SeenAs`: never another team's private deposit, not even its time), a block's owners and the
problems and generations behind it (provenance), the provenance search, and the attestation summary.

Every function takes the session first and everything else by keyword, and only reads. `team_id` None means a
deployment-wide principal (operators and auditors), who sees every block and its first depositor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from store.db import AttestationRow, BlockOwnerRow, BlockRow, GenerationRow, ProblemRow, TeamRow, owner_key
from store.repository import block_visible_to, generations_of, get_batch, newest_first_page


@dataclass(frozen=True)
class SeenAs:
    """A block's deposit as one principal sees it."""

    team_id: int | None
    shared: bool
    created_at: datetime
    source: Any
    bytes: int  # the size of the deposit seen (a header names its depositor)


@dataclass(frozen=True)
class ProblemTrail:
    """A problem that produced a block, the team whose batch submitted it (None: no batch) and its generations."""

    problem: ProblemRow
    team_id: int | None
    generations: list[GenerationRow]


@dataclass(frozen=True)
class AttestationCount:
    """How many attestations of one fingerprint and numerics profile have one status."""

    fingerprint: str
    profile_id: str
    status: str
    count: int


def block_owners(session: Session, *, block_id: str) -> list[BlockOwnerRow]:
    """The block's owner rows, first deposit first."""
    return list(session.scalars(sa.select(BlockOwnerRow).where(BlockOwnerRow.block_id == block_id)
                                .order_by(BlockOwnerRow.created_at, BlockOwnerRow.id)).all())


def seen_as(session: Session, *, block: BlockRow, team_id: int | None) -> SeenAs:
    """(team, shared, deposited at, source) of a block as team `team_id` sees it. A team sees itself as the owner of
    a block it deposited (even when another team deposited the same content first, privately), with its own
    deposit's time and source, otherwise the team that shared it or the deployment's own library; operators and
    auditors (None) see the first depositor. Nothing about another team's private deposit is shown, not even its
    time."""
    if team_id is None:
        return SeenAs(block.team_id, block.shared, block.created_at, block.source, block.bytes)
    owners = block_owners(session, block_id=block.id)
    own = next((o for o in owners if o.owner_key == owner_key(team_id)), None)
    if own is not None:
        return SeenAs(own.team_id, own.shared, own.created_at, own.source,
                      own.bytes if own.bytes is not None else block.bytes)
    chosen = next((o for o in owners if o.shared), None) or next((o for o in owners if o.team_id is None), None)
    if chosen is None:
        return SeenAs(None, False, block.created_at, None, block.bytes)
    return SeenAs(chosen.team_id, chosen.shared, chosen.created_at, None,
                  chosen.bytes if chosen.bytes is not None else block.bytes)


def _seen_at(team_id: int) -> Any:
    """SQL: when a block was deposited as team `team_id` sees it (as seen_as): its own deposit, else the first
    shared deposit, else the deployment's. The order of a team's list, so that it never follows another team's
    private deposit times."""
    def first(*where: Any) -> Any:
        return (sa.select(sa.func.min(BlockOwnerRow.created_at)).where(BlockOwnerRow.block_id == BlockRow.id, *where)
                .scalar_subquery())

    return sa.func.coalesce(first(BlockOwnerRow.owner_key == owner_key(team_id)), first(BlockOwnerRow.shared.is_(True)),
                            first(BlockOwnerRow.team_id.is_(None)))


def visible_blocks(session: Session, *, team_id: int | None, kind: str | None = None,
                   fingerprint: str | None = None, limit: int = 100,
                   offset: int = 0) -> tuple[list[BlockRow], int]:
    """A page of the blocks the principal may see, newest first as it sees them (a team: by `_seen_at`), and the
    total number that match."""
    query = sa.select(BlockRow).where(block_visible_to(team_id))
    if kind is not None:
        query = query.where(BlockRow.kind == kind)
    if fingerprint is not None:
        query = query.where(BlockRow.fingerprint == fingerprint)
    total = session.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
    newest = BlockRow.created_at if team_id is None else _seen_at(team_id)
    rows = session.scalars(query.order_by(newest.desc(), BlockRow.id).limit(limit).offset(offset))
    return list(rows), total


def visible_block(session: Session, *, block_id: str, team_id: int | None) -> BlockRow | None:
    """The block if the principal may see it; another team's private block is None, like a missing one."""
    return session.scalar(sa.select(BlockRow).where(BlockRow.id == block_id, block_visible_to(team_id)))


def problem_trails(session: Session, *, block_id: str) -> list[ProblemTrail]:
    """The problems whose solution is the block, each with its batch's team and its generations (by sample)."""
    trails = []
    for p in session.scalars(sa.select(ProblemRow).where(ProblemRow.block_id == block_id)).all():
        batch = get_batch(session, batch_id=p.batch_id)
        trails.append(ProblemTrail(p, batch.team_id if batch else None, generations_of(session, problem_id=p.id)))
    return trails


def provenance_blocks(session: Session, *, block_id: str | None = None, problem_digest: str | None = None,
                      team: str | None = None, since: datetime | None = None, until: datetime | None = None,
                      limit: int = 100, offset: int = 0) -> tuple[list[BlockRow], int]:
    """A page of every block (an auditor's search; first depositor's time, newest first) matching the filters:
    the block id, a problem's question digest, the first depositor's team name, a deposit time window [since,
    until). Returns the page and the total number that match."""
    where: list[Any] = []
    if problem_digest is not None:
        of_problems = sa.select(ProblemRow.block_id).where(ProblemRow.question_digest == problem_digest)
        where.append(BlockRow.id.in_(of_problems))
    if team is not None:
        where.append(BlockRow.team_id.in_(sa.select(TeamRow.id).where(TeamRow.name == team)))
    if since is not None:
        where.append(BlockRow.created_at >= since)
    if until is not None:
        where.append(BlockRow.created_at < until)
    return newest_first_page(session, BlockRow, [(BlockRow.id, block_id)], BlockRow.id, limit=limit, offset=offset,
                             where=where)


def attestation_summary(session: Session) -> list[AttestationCount]:
    """Every attestation counted by fingerprint, numerics profile and status (deployment-wide)."""
    return [AttestationCount(fp, pid, st, n) for fp, pid, st, n in
            session.execute(sa.select(AttestationRow.fingerprint, AttestationRow.profile_id, AttestationRow.status,
                                      sa.func.count()).group_by(AttestationRow.fingerprint,
                                                                AttestationRow.profile_id, AttestationRow.status))]
