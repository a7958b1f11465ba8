"""Data functions over the provenance database, used by the rest of the app.

Every function takes the session first and everything else by keyword. They flush (so ids and defaults are
populated) but never commit: the caller owns the transaction.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
import structlog
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from store.db import (
    TOKEN_ROLES,
    ApiTokenRow,
    AttestationRow,
    BatchRow,
    BlockOwnerRow,
    BlockRow,
    CopyRow,
    DeliveryRow,
    GenerationRow,
    PrefixRow,
    ProblemRow,
    QueryRequestRow,
    TeamRow,
    WorkerRow,
    owner_key,
    utcnow,
)
from store.errors import StoreError, UnknownRoleError

log = structlog.get_logger(__name__)
RowT = TypeVar("RowT", TeamRow, BlockRow)

TOKEN_PREFIX = "kvg_"


def token_digest(token: str) -> str:
    """The SHA-256 hex digest under which a plaintext API token is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_connection(session: Session) -> None:
    """Run `SELECT 1`: raises if the database cannot be reached."""
    session.execute(sa.text("SELECT 1"))


def _insert_ignoring_conflict(session: Session, model: type[Any], values: dict[str, Any],
                              conflict_columns: list[str]) -> bool:
    """INSERT a row unless one with the same `conflict_columns` exists (even one committed concurrently).

    Returns whether this call inserted it. PostgreSQL and SQLite use INSERT ... ON CONFLICT DO NOTHING RETURNING; other
    dialects fall back to a savepoint that absorbs the IntegrityError.
    """
    dialect = session.get_bind().dialect.name
    table = model.__table__  # Core INSERTs still apply the columns' Python defaults (created_at, ...).
    if dialect in ("postgresql", "sqlite"):
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        stmt = (insert(table).values(**values).on_conflict_do_nothing(index_elements=conflict_columns)
                .returning(*(table.c[name] for name in conflict_columns)))
        return session.execute(stmt).first() is not None  # rowcount is not reliable across drivers
    try:
        with session.begin_nested():
            session.execute(sa.insert(table).values(**values))
    except IntegrityError:
        return False
    return True


def _changed(session: Session, row: RowT | None, event: str, **values: Any) -> RowT | None:
    """Set `values` on `row` (if there is one), flush, and log `event` naming the row; returns the row."""
    if row is not None:
        for column, value in values.items():
            setattr(row, column, value)
        session.flush()
        log.info(event, table=row.__tablename__, id=getattr(row, "id", None), **values)
    return row


def get_or_create_team(session: Session, *, name: str) -> TeamRow:
    """The team called `name`, created if missing (safe against a concurrent creation of the same name)."""
    team = session.scalar(sa.select(TeamRow).where(TeamRow.name == name))
    if team is not None:
        return team
    if _insert_ignoring_conflict(session, TeamRow, {"name": name}, ["name"]):
        log.info("db.team_created", team=name)
    return session.scalars(sa.select(TeamRow).where(TeamRow.name == name)).one()


def create_api_token(session: Session, *, team: TeamRow, role: str,
                     label: str | None = None) -> tuple[ApiTokenRow, str]:
    """A new API token for `team`; returns the row and the plaintext, which is shown once and never stored."""
    if role not in TOKEN_ROLES:
        raise UnknownRoleError(f"unknown token role {role!r}; expected one of {', '.join(TOKEN_ROLES)}")
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiTokenRow(team_id=team.id, role=role, token_sha256=token_digest(plaintext), label=label)
    session.add(token)
    session.flush()
    log.info("db.token_created", team_id=team.id, token_id=token.id, role=role)
    return token, plaintext


def find_token(session: Session, *, token: str) -> ApiTokenRow | None:
    """The unrevoked token whose plaintext is `token`, or None."""
    return session.scalar(sa.select(ApiTokenRow).where(ApiTokenRow.token_sha256 == token_digest(token),
                                                    ApiTokenRow.revoked_at.is_(None)))


def revoke_token(session: Session, *, token_id: int) -> ApiTokenRow:
    """Mark the token revoked (idempotent: a revoked token keeps its first revocation time)."""
    token = session.get(ApiTokenRow, token_id)
    if token is None:
        raise StoreError(f"no API token with id {token_id}")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
        session.flush()
        log.info("db.token_revoked", token_id=token_id, team_id=token.team_id)
    return token


def list_tokens(session: Session) -> list[tuple[ApiTokenRow, str]]:
    """Every API token (revoked ones too) with its team's name, by id."""
    return [(t, name) for t, name in session.execute(sa.select(ApiTokenRow, TeamRow.name)
                                                     .join(TeamRow, ApiTokenRow.team_id == TeamRow.id)
                                                     .order_by(ApiTokenRow.id)).all()]


def get_team(session: Session, *, team_id: int) -> TeamRow | None:
    return session.get(TeamRow, team_id)


def find_team(session: Session, *, name: str) -> TeamRow | None:
    """The team called `name`, or None."""
    return session.scalar(sa.select(TeamRow).where(TeamRow.name == name))


def list_teams(session: Session) -> list[TeamRow]:
    """Every team, by id."""
    return list(session.scalars(sa.select(TeamRow).order_by(TeamRow.id)).all())


def team_names(session: Session) -> dict[int, str]:
    """Every team's name by its id."""
    return dict(session.execute(sa.select(TeamRow.id, TeamRow.name)).all())


def set_team_trusted(session: Session, *, name: str, trusted: bool) -> TeamRow:
    """An operator's mark: the shared verified blocks of a trusted team are grafted by every team that has not
    chosen its own sources."""
    team = _changed(session, find_team(session, name=name), "db.team_trust_set", trusted=trusted)
    if team is None:
        raise StoreError(f"no team named {name!r}")
    return team


def set_team_quota(session: Session, *, name: str, quota_bytes: int | None) -> TeamRow | None:
    """The bytes of blocks the team may own (None: no quota); None when there is no such team."""
    return _changed(session, find_team(session, name=name), "db.team_quota_set", quota_bytes=quota_bytes)


def set_graft_from(session: Session, *, team_id: int, names: list[str] | None) -> list[str] | None:
    """A team's own choice of teams whose shared blocks it grafts (None: back to the operator-trusted default);
    returns the names recorded. Unknown names are refused."""
    team = session.get(TeamRow, team_id)
    if team is None:
        raise StoreError(f"no team {team_id}")
    if names is None:
        team.graft_from = None
        session.flush()
        return None
    found = dict(session.execute(sa.select(TeamRow.name, TeamRow.id).where(TeamRow.name.in_(names))).all())
    unknown = sorted(set(names) - set(found))
    if unknown:
        raise LookupError(f"no team named {', '.join(map(repr, unknown))}")
    team.graft_from = sorted({found[n] for n in names} - {team_id})
    session.flush()
    log.info("db.graft_from_set", team_id=team_id, sources=team.graft_from)
    return sorted(set(names) - {team.name})


def lock_block_row(session: Session, *, block_id: str) -> None:
    """Take the block row's write lock for the rest of the transaction (a no-op UPDATE: a row lock on PostgreSQL,
    the database's write lock on SQLite). Eviction, reaping and a re-deposit of an evicted block take turns on it."""
    session.execute(sa.update(BlockRow).where(BlockRow.id == block_id).values(evicted_at=BlockRow.evicted_at)
                    .execution_options(synchronize_session=False))


def record_block(session: Session, *, block_id: str, fingerprint: str, kind: str, n_tokens: int, bytes: int,
                 payload_sha256: str, object_key: str, store_url: str, profile: dict[str, Any],
                 meta: dict[str, Any] | None = None, source: dict[str, Any] | None = None,
                 team_id: int | None = None, shared: bool = False,
                 text_digest: str | None = None, verified_by_team_id: int | None = None,
                 restore_object: Callable[[], object] | None = None,
                 write_object: Callable[[], object] | None = None) -> tuple[BlockRow, bool]:
    """Catalogue a stored block, idempotently by block id, and record this deposit's owner (team, shared, whose key
    verified it, its own source and size): returns the row and whether this call created it.

    A block already catalogued (by this session, an earlier one, or a concurrent one) is kept as it is; the
    depositing team becomes one more owner of it, so deduplication never hides a block from its own depositor.
    The same statements run whether or not the block was there (an insert that may find it, the row's lock, the
    owner), so a team's deposit does the same work whether or not another team deposited the same content. The
    owner is recorded under the row's lock (store/retention), so a concurrent eviction either sees it or has marked
    the block first; a block that was evicted is restored: `restore_object` writes its object again (the eviction
    may have deleted it after this deposit's own write found it still there), then the mark is cleared, so the row
    never says live while its object is gone. Without `restore_object` an evicted block is refused (StoreError).

    With `write_object` instead (the prompt cache's deposits), the object is written under the row's lock in every
    case, new, live under another owner or evicted (an atomic replace: the same object-store and file-system
    calls), and the row's eviction and quarantine marks are cleared by the same UPDATE in every case: the deposit's
    work never depends on another team's history.
    """
    values = {"id": block_id, "fingerprint": fingerprint, "kind": kind, "n_tokens": n_tokens, "bytes": bytes,
              "payload_sha256": payload_sha256, "object_key": object_key, "store_url": store_url,
              "profile": profile, "meta": meta or {}, "source": source, "team_id": team_id, "shared": shared,
              "text_digest": text_digest}
    created = _insert_ignoring_conflict(session, BlockRow, values, ["id"])
    lock_block_row(session, block_id=block_id)
    row = session.get(BlockRow, block_id, populate_existing=True)
    if row is None:
        raise StoreError(f"block {block_id} was neither inserted nor found")
    if write_object is not None:
        write_object()
        session.execute(sa.update(BlockRow).where(BlockRow.id == block_id)
                        .values(evicted_at=None, quarantined_at=None).execution_options(synchronize_session=False))
        session.refresh(row)
    elif row.evicted_at is not None:  # evicted under a budget, and deposited again
        if restore_object is None:
            raise StoreError(f"block {block_id} was evicted; depositing it again must restore its object")
        restore_object()
        row.evicted_at = None
        log.info("db.block_restored", block_id=block_id)
    if write_object is None and row.quarantined_at is not None and not created:  # a fresh object just stored
        row.quarantined_at = None
        log.info("db.block_unquarantined", block_id=block_id)
    record_owner(session, block_id=block_id, team_id=team_id, shared=shared, verified_by_team_id=verified_by_team_id,
                 source=source, bytes=bytes)
    log.info("db.block_recorded", block_id=block_id, created=created, kind=kind)
    return row, created


def record_owner(session: Session, *, block_id: str, team_id: int | None, shared: bool,
                 verified_by_team_id: int | None = None, source: dict[str, Any] | None = None,
                 bytes: int | None = None) -> BlockOwnerRow:
    """One team's ownership of a block (idempotent); a later shared deposit by the same team makes it shared. The
    owner's `source` and `bytes` are its own first deposit's provenance and size."""
    values = {"block_id": block_id, "owner_key": owner_key(team_id), "team_id": team_id, "shared": shared,
              "verified_by_team_id": verified_by_team_id, "source": source, "bytes": bytes}
    _insert_ignoring_conflict(session, BlockOwnerRow, values, ["block_id", "owner_key"])
    owner = session.scalars(sa.select(BlockOwnerRow).where(BlockOwnerRow.block_id == block_id,
                                                        BlockOwnerRow.owner_key == owner_key(team_id))).one()
    if shared and not owner.shared:
        owner.shared = True
    if owner.verified_by_team_id is None and verified_by_team_id is not None:
        owner.verified_by_team_id = verified_by_team_id
    session.flush()
    return owner


def block_visible_to(team_id: int | None) -> Any:
    """SQL condition on BlockRow: the team deposited the block, some team deposited it shared, or the deployment
    deposited it (an operator's deposit with no team: the deployment's own library). Team None: every block, for
    operators and auditors. Another team's private block is indistinguishable from a missing one."""
    if team_id is None:
        return sa.true()
    return sa.exists(sa.select(BlockOwnerRow.id).where(
        BlockOwnerRow.block_id == BlockRow.id,
        sa.or_(BlockOwnerRow.team_id == team_id, BlockOwnerRow.team_id.is_(None), BlockOwnerRow.shared.is_(True))))


def owned_by(team_id: int | None) -> Any:
    """SQL condition on BlockRow: this team (None: the deployment) has an owner row of the block, i.e. deposited it
    itself; narrower than block_visible_to, which also admits shared and deployment blocks."""
    return sa.exists(sa.select(BlockOwnerRow.id).where(BlockOwnerRow.block_id == BlockRow.id,
                                                    BlockOwnerRow.owner_key == owner_key(team_id)))


def graft_sources(session: Session, *, team_id: int) -> list[int]:
    """The teams whose shared verified blocks `team_id` grafts besides its own: its own choice (`graft_from`), or,
    when it has not chosen, the teams an operator marked trusted."""
    team = get_team(session, team_id=team_id)
    if team is not None and team.graft_from is not None:
        return [int(t) for t in team.graft_from]
    return [t for (t,) in session.execute(sa.select(TeamRow.id).where(TeamRow.trusted.is_(True)))]


def _graftable_by(session: Session, team_id: int | None) -> Any:
    """SQL condition on BatchRow: a team grafts what its own batches verified, and the shared batches of the teams it
    trusts (graft_sources); team None (operators, embedded single-user runs) grafts every batch's blocks."""
    if team_id is None:
        return sa.true()
    return sa.or_(BatchRow.team_id == team_id,
                  sa.and_(BatchRow.shared.is_(True), BatchRow.team_id.in_(graft_sources(session, team_id=team_id))))


def get_block(session: Session, *, block_id: str) -> BlockRow | None:
    return session.get(BlockRow, block_id)


def list_blocks(session: Session, *, fingerprint: str | None = None, kind: str | None = None,
                team_id: int | None = None, limit: int = 100, offset: int = 0) -> tuple[list[BlockRow], int]:
    """A page of blocks (newest first) matching the filters, and the total number that match."""
    filters = [(BlockRow.fingerprint, fingerprint), (BlockRow.kind, kind), (BlockRow.team_id, team_id)]
    return newest_first_page(session, BlockRow, filters, BlockRow.id, limit=limit, offset=offset)


def set_block_pinned(session: Session, *, block_id: str, pinned: bool) -> BlockRow | None:
    """Keep the block whatever the store's budget (or let retention evict it again); None when not catalogued."""
    return _changed(session, get_block(session, block_id=block_id), "db.block_pinned", pinned=pinned)


def owner_row(session: Session, *, block_id: str, team_id: int | None) -> BlockOwnerRow | None:
    """This team's (None: the deployment's) ownership of the block, if it deposited it."""
    return session.scalar(sa.select(BlockOwnerRow).where(BlockOwnerRow.block_id == block_id,
                                                         BlockOwnerRow.owner_key == owner_key(team_id)))


def document_passages(session: Session, *, fingerprint: str, team_id: int | None) -> list[tuple[str, str]]:
    """(block id, passage) of every live document block of this fingerprint the team may see, in block id order:
    the first of equal scores wins, and which one must not follow another team's deposit."""
    query = (sa.select(BlockRow.id, BlockRow.meta)
             .where(BlockRow.kind == "document", BlockRow.fingerprint == fingerprint,
                    BlockRow.quarantined_at.is_(None), BlockRow.evicted_at.is_(None), block_visible_to(team_id))
             .order_by(BlockRow.id))
    return [(bid, str((meta or {}).get("passage", ""))) for bid, meta in session.execute(query)]


def set_quarantined(session: Session, *, block_id: str, quarantined: bool) -> None:
    """Mark the block's row quarantined (now) or clear the mark."""
    session.execute(sa.update(BlockRow).where(BlockRow.id == block_id)
                    .values(quarantined_at=utcnow() if quarantined else None))


def record_attestation(session: Session, *, fingerprint: str, profile: Any, profile_id: str, host: str,
                       status: str, floor_equal: bool, byte_exact: bool, kl_mean: float, kl_max: float,
                       argmax_agree: str, max_abs_diff: float, kind: str = "graft", block_id: str | None = None,
                       probe_digest: str | None = None, continuation_equal: bool | None = None,
                       recapture_equal: bool | None = None, reason: str | None = None, timings: Any = None,
                       requested_by: str | None = None, created_at: datetime | None = None) -> AttestationRow:
    """Append one attestation: a gate measurement of a block (`block_id`) or of a probe (`probe_digest`) on a host
    and numerics profile (the columns are described on AttestationRow)."""
    attestation = AttestationRow(
        kind=kind, block_id=block_id, probe_digest=probe_digest, fingerprint=fingerprint, profile=profile,
        profile_id=profile_id, host=host, status=status, floor_equal=floor_equal, byte_exact=byte_exact,
        continuation_equal=continuation_equal, recapture_equal=recapture_equal, kl_mean=kl_mean, kl_max=kl_max,
        argmax_agree=argmax_agree, max_abs_diff=max_abs_diff, reason=reason, timings=timings,
        requested_by=requested_by, **({"created_at": created_at} if created_at is not None else {}))
    session.add(attestation)
    session.flush()
    log.info("db.attestation_recorded", attestation_id=attestation.id, block_id=attestation.block_id,
             status=attestation.status)
    return attestation


def requester(team_id: int | None) -> str | None:
    """The `requested_by` of a measurement a team's deposit or question caused (None: the deployment's own, an
    operator's, visible to every team that holds the block)."""
    return None if team_id is None else owner_key(team_id)


def attestation_visible_to(team_id: int | None) -> Any:
    """SQL condition on AttestationRow: the measurements a team may see, and that its answers count: those its own
    deposits and questions caused; those of a team that shares the block; and an operator's (or a probe's) made
    since the team holds the block. Never one another team's private deposit or question caused, nor one dated
    before the team's own deposit, so whether a block is attested for a team, and what it is shown of it, is the
    same whether or not another team holds the same content. Team None (operators, auditors, embedded runs):
    every one."""
    if team_id is None:
        return sa.true()
    key = owner_key(team_id)
    since = (sa.select(BlockOwnerRow.created_at).where(BlockOwnerRow.block_id == AttestationRow.block_id,
                                                    BlockOwnerRow.owner_key == key).scalar_subquery())
    sharer = sa.exists(sa.select(BlockOwnerRow.id).where(BlockOwnerRow.block_id == AttestationRow.block_id,
                                                      BlockOwnerRow.owner_key == AttestationRow.requested_by,
                                                      BlockOwnerRow.shared.is_(True)))
    return sa.or_(AttestationRow.requested_by == key, sharer,
                  sa.and_(AttestationRow.requested_by.is_(None),
                          sa.or_(since.is_(None), AttestationRow.created_at >= since)))


def latest_attestation(session: Session, *, block_id: str | None, fingerprint: str,
                       profile_id: str, kind: str = "graft", team_id: int | None = None,
                       host: str | None = None) -> AttestationRow | None:
    """The newest `kind` attestation of `block_id` (None: of a probe) on this fingerprint and numerics profile,
    among those the team may see (team None: any), made on `host` if given."""
    block_condition = AttestationRow.block_id.is_(None) if block_id is None else AttestationRow.block_id == block_id
    host_condition = sa.true() if host is None else AttestationRow.host == host
    return session.scalar(sa.select(AttestationRow)
                          .where(block_condition, AttestationRow.fingerprint == fingerprint,
                                 AttestationRow.profile_id == profile_id, AttestationRow.kind == kind,
                                 attestation_visible_to(team_id), host_condition)
                          .order_by(AttestationRow.created_at.desc(), AttestationRow.id.desc()).limit(1))


def list_attestations(session: Session, *, block_id: str | None = None, fingerprint: str | None = None,
                      status: str | None = None, limit: int = 100, offset: int = 0,
                      visible_to: int | None = None, kind: str | None = None) -> tuple[list[AttestationRow], int]:
    """A page of attestations (newest first) matching the filters, and the total number that match; with
    `visible_to`, only those that team may see."""
    filters = [(AttestationRow.block_id, block_id), (AttestationRow.fingerprint, fingerprint),
               (AttestationRow.status, status), (AttestationRow.kind, kind)]
    return newest_first_page(session, AttestationRow, filters, AttestationRow.id.desc(), limit=limit, offset=offset,
                              where=[attestation_visible_to(visible_to)])


def newest_first_page(session: Session, model: Any, filters: list[tuple[Any, Any]], tiebreak: Any, *,
                       limit: int, offset: int, where: list[Any] | None = None) -> tuple[list[Any], int]:
    """Rows of `model` equal to every filter whose value is not None (and satisfying `where`), newest first (then
    `tiebreak`): one page, and the total number that match."""
    conditions = [column == value for column, value in filters if value is not None] + (where or [])
    total = session.scalar(sa.select(sa.func.count()).select_from(model).where(*conditions)) or 0
    rows = session.scalars(sa.select(model).where(*conditions).order_by(model.created_at.desc(), tiebreak)
                           .limit(limit).offset(offset)).all()
    return list(rows), total


def record_copy(session: Session, *, block_id: str, source_url: str, dest_url: str, bytes: int, sha256: str,
                created: bool) -> CopyRow:
    """Append one block copy record: from which store to which, its size and SHA-256, and whether it was new
    there."""
    copy = CopyRow(block_id=block_id, source_url=source_url, dest_url=dest_url, bytes=bytes, sha256=sha256,
                   created=created)
    session.add(copy)
    session.flush()
    log.info("db.copy_recorded", block_id=copy.block_id, dest_url=copy.dest_url, created=copy.created)
    return copy


FINAL_PROBLEM_STATUSES = ("solved", "failed", "rejected")


def create_batch(session: Session, *, team_id: int, shared: bool, problems: list[dict[str, Any]]) -> BatchRow:
    """A batch and its problems in one transaction; each problem dict holds external_id, question,
    question_digest, answer, solution, verifier."""
    batch = BatchRow(team_id=team_id, shared=shared, status="queued")
    session.add(batch)
    session.flush()
    for p in problems:
        session.add(ProblemRow(batch_id=batch.id, status="pending", **p))
    session.flush()
    log.info("db.batch_created", batch_id=batch.id, problems=len(problems), team_id=team_id)
    return batch


def get_problem(session: Session, *, problem_id: str) -> ProblemRow | None:
    return session.get(ProblemRow, problem_id)


def get_batch(session: Session, *, batch_id: str) -> BatchRow | None:
    return session.get(BatchRow, batch_id)


def get_question(session: Session, *, request_id: str) -> QueryRequestRow | None:
    return session.get(QueryRequestRow, request_id)


def count_pending_questions(session: Session, *, team_id: int) -> int:
    """The team's questions not yet answered (`pending`)."""
    return int(session.scalar(sa.select(sa.func.count()).select_from(QueryRequestRow).where(
        QueryRequestRow.team_id == team_id, QueryRequestRow.status == "pending")) or 0)


def count_unfinished_batches(session: Session, *, team_id: int) -> int:
    """The team's batches not yet finished (`queued` or `running`)."""
    return int(session.scalar(sa.select(sa.func.count()).select_from(BatchRow).where(
        BatchRow.team_id == team_id, BatchRow.status.in_(("queued", "running")))) or 0)


def batch_problems(session: Session, *, batch_id: str) -> list[ProblemRow]:
    return list(session.scalars(sa.select(ProblemRow).where(ProblemRow.batch_id == batch_id)
                                .order_by(ProblemRow.created_at, ProblemRow.id)))


def newest_batch_from(session: Session, *, source_digest: str, team: str) -> str | None:
    """The newest batch of the team named `team` made from the input with this digest (`kvgraft run` resumes it)."""
    return session.scalar(sa.select(BatchRow.id).join(TeamRow, TeamRow.id == BatchRow.team_id)
                          .where(BatchRow.source_digest == source_digest, TeamRow.name == team)
                          .order_by(BatchRow.created_at.desc()).limit(1))


def finished_problem_ids(session: Session, *, problem_ids: list[str]) -> set[str]:
    """Those of `problem_ids` that have their outcome."""
    return set(session.scalars(sa.select(ProblemRow.id).where(ProblemRow.id.in_(problem_ids),
                                                              ProblemRow.status.in_(FINAL_PROBLEM_STATUSES))))


def pending_ids(session: Session, *, model: type[ProblemRow] | type[QueryRequestRow],
                created_before: datetime | None = None, idle_only: bool = False) -> list[str]:
    """The pending problems or questions (oldest first), created before `created_before` if given; `idle_only`:
    only those no delivery is working on (every started delivery ended)."""
    where = [model.status == "pending"]
    if created_before is not None:
        where.append(model.created_at < created_before)
    if idle_only:
        where.append(model.deliveries == model.deliveries_ended)
    return list(session.scalars(sa.select(model.id).where(*where).order_by(model.created_at)))


def solved_problem_of_block(session: Session, *, block_id: str) -> ProblemRow | None:
    """A solved problem whose solution block this is (the catalogue's record of what the block holds)."""
    return session.scalar(sa.select(ProblemRow).where(ProblemRow.block_id == block_id,
                                                      ProblemRow.status == "solved").limit(1))


def verified_program(session: Session, *, problem_id: str) -> str | None:
    """The program of one of the problem's verified samples."""
    return session.scalar(sa.select(GenerationRow.program).where(GenerationRow.problem_id == problem_id,
                                                                 GenerationRow.verdict == "verified").limit(1))


def generations_of(session: Session, *, problem_id: str) -> list[GenerationRow]:
    return list(session.scalars(sa.select(GenerationRow).where(GenerationRow.problem_id == problem_id)
                                .order_by(GenerationRow.sample_index)))


def record_generation(session: Session, *, problem_id: str, sample_index: int, prompt_digest: str, text: str,
                      text_digest: str, program: str | None, program_digest: str | None, sandbox_result: Any,
                      verdict: str, answer: str | None) -> tuple[GenerationRow, bool]:
    """One sample, idempotently by (problem, sample index): a redelivered task finds its earlier samples (the
    columns are described on GenerationRow)."""
    values = {"problem_id": problem_id, "sample_index": sample_index, "prompt_digest": prompt_digest, "text": text,
              "text_digest": text_digest, "program": program, "program_digest": program_digest,
              "sandbox_result": sandbox_result, "verdict": verdict, "answer": answer}
    created = _insert_ignoring_conflict(session, GenerationRow, values, ["problem_id", "sample_index"])
    row = session.scalar(sa.select(GenerationRow).where(GenerationRow.problem_id == problem_id,
                                                     GenerationRow.sample_index == sample_index))
    if row is None:
        raise StoreError(f"generation {problem_id}/{sample_index} was neither inserted nor found")
    return row, created


def refresh_batch_status(session: Session, *, batch_id: str) -> BatchRow:
    """queued -> running once any problem has an outcome; done once every problem has one."""
    batch = session.get(BatchRow, batch_id)
    if batch is None:
        raise StoreError(f"no batch {batch_id}")
    statuses = [s for (s,) in session.execute(sa.select(ProblemRow.status).where(ProblemRow.batch_id == batch_id))]
    finals = sum(s in FINAL_PROBLEM_STATUSES for s in statuses)
    if statuses and finals == len(statuses):
        if batch.status != "done":
            batch.status, batch.finished_at = "done", utcnow()
    elif finals and batch.status == "queued":
        batch.status = "running"
    session.flush()
    return batch


def find_recurrence(session: Session, *, question_digest: str, team_id: int | None) -> ProblemRow | None:
    """The newest solved problem with this normalized question whose block this team may use: its own team's,
    or any team's batch submitted with shared=true."""
    query = (sa.select(ProblemRow).join(BatchRow, ProblemRow.batch_id == BatchRow.id)
             .join(BlockRow, ProblemRow.block_id == BlockRow.id)
             .where(ProblemRow.question_digest == question_digest, ProblemRow.status == "solved",
                    BlockRow.quarantined_at.is_(None), BlockRow.evicted_at.is_(None), _graftable_by(session, team_id))
             .order_by(ProblemRow.updated_at.desc()).limit(1))
    return session.scalar(query)


def visible_solution_blocks(session: Session, *, team_id: int | None, fingerprint: str) -> list[tuple[ProblemRow,
                                                                                                     BlockRow]]:
    """Solved problems and their solution blocks of this fingerprint that this team may use (the router's pool)."""
    query = (sa.select(ProblemRow, BlockRow).join(BatchRow, ProblemRow.batch_id == BatchRow.id)
             .join(BlockRow, ProblemRow.block_id == BlockRow.id)
             .where(ProblemRow.status == "solved", BlockRow.kind == "solution", BlockRow.fingerprint == fingerprint,
                    BlockRow.quarantined_at.is_(None), _graftable_by(session, team_id)))
    return [(p, b) for p, b in session.execute(query)]


def verifying_team(session: Session, *, problem: ProblemRow) -> str | None:
    """The name of the team whose answer key (or verifier, or reference program) verified this problem's block."""
    return session.scalar(sa.select(TeamRow.name).join(BatchRow, BatchRow.team_id == TeamRow.id)
                          .where(BatchRow.id == problem.batch_id))


def record_prefix(session: Session, *, chain_hash: str, block_id: str, fingerprint: str, profile_id: str,
                  n_tokens: int) -> bool:
    """Name a stored prompt-prefix block by its chain hash (once per block: a concurrent pod recording the same
    chunk leaves the first row). Returns whether this call recorded it."""
    return _insert_ignoring_conflict(session, PrefixRow, {
        "chain_hash": chain_hash, "block_id": block_id, "fingerprint": fingerprint, "profile_id": profile_id,
        "n_tokens": n_tokens}, ["chain_hash", "block_id"])


def owned_prefix_rows(session: Session, *, chain_hashes: list[str], team_id: int) -> list[tuple[Any, ...]]:
    """(chain_hash, block_id, prefix end, block tokens, quarantined_at) of every live prefix block this team owns
    among `chain_hashes` (the prompt cache's lookup; a chunk's cells are [end - block tokens, end))."""
    return [tuple(r) for r in session.execute(
        sa.select(PrefixRow.chain_hash, PrefixRow.block_id, PrefixRow.n_tokens, BlockRow.n_tokens,
                  BlockRow.quarantined_at)
        .join(BlockRow, BlockRow.id == PrefixRow.block_id)
        .where(PrefixRow.chain_hash.in_(chain_hashes), BlockRow.evicted_at.is_(None), owned_by(team_id))).all()]


def start_delivery(session: Session, *, model: type[ProblemRow] | type[QueryRequestRow], row_id: str,
                   worker: str, message_id: str | None = None, deadline_s: float | None = None) -> int:
    """Count one delivery of a task on its row (started before the task body runs) and record it (task_deliveries:
    its worker, its broker message, its deadline); returns the delivery's id."""
    session.execute(sa.update(model).where(model.id == row_id).values(deliveries=model.deliveries + 1))
    now = utcnow()
    row = DeliveryRow(kind=model.__tablename__, row_id=row_id, worker=worker[:300],
                      message_id=message_id[:255] if message_id else None, started_at=now, heartbeat_at=now,
                      deadline_at=now + timedelta(seconds=deadline_s) if deadline_s else None)
    session.add(row)
    session.flush()
    return row.id


def end_delivery(session: Session, *, model: type[ProblemRow] | type[QueryRequestRow], row_id: str,
                 delivery_id: int | None = None) -> None:
    """Count the end of one delivery (the body returned or raised) and record when it ended."""
    session.execute(sa.update(model).where(model.id == row_id)
                    .values(deliveries_ended=model.deliveries_ended + 1))
    if delivery_id is not None:
        session.execute(sa.update(DeliveryRow).where(DeliveryRow.id == delivery_id, DeliveryRow.ended_at.is_(None))
                        .values(ended_at=utcnow()))


def heartbeat_deliveries(session: Session, *, delivery_ids: list[int]) -> None:
    """Mark these running deliveries alive as of now (their worker's heartbeat)."""
    if delivery_ids:
        session.execute(sa.update(DeliveryRow).where(DeliveryRow.id.in_(delivery_ids), DeliveryRow.ended_at.is_(None))
                        .values(heartbeat_at=utcnow()))


def mark_redelivered_lost(session: Session, *, model: type[ProblemRow] | type[QueryRequestRow], row_id: str,
                          message_id: str) -> int:
    """The broker redelivered this message: every running delivery of the row that came in it lost its worker
    (the broker redelivers only a message whose consumer is gone). Returns how many were marked."""
    result = session.execute(
        sa.update(DeliveryRow)
        .where(DeliveryRow.kind == model.__tablename__, DeliveryRow.row_id == row_id,
               DeliveryRow.message_id == message_id, DeliveryRow.ended_at.is_(None), DeliveryRow.lost_at.is_(None))
        .values(lost_at=utcnow()))
    return int(getattr(result, "rowcount", 0) or 0)


def count_lost_deliveries(session: Session, *, model: type[ProblemRow] | type[QueryRequestRow], row_id: str,
                          silent_since: datetime) -> int:
    """Deliveries of the row that lost their worker, by evidence: never ended, and either marked lost (their message
    was redelivered) or not marked alive since `silent_since` (their worker stopped heartbeating)."""
    return session.scalar(
        sa.select(sa.func.count()).select_from(DeliveryRow)
        .where(DeliveryRow.kind == model.__tablename__, DeliveryRow.row_id == row_id, DeliveryRow.ended_at.is_(None),
               sa.or_(DeliveryRow.lost_at.is_not(None), DeliveryRow.heartbeat_at < silent_since))) or 0


@dataclass
class Delivery:
    """One delivery of a task on its row (a problem or a question), counted on the row and recorded in
    task_deliveries. It starts in the transaction that checks the row and ends in the one that records the row's
    outcome, so the count always describes the state beside it; a delivery that ends without an outcome (a transient
    error, a question left to its own delivery) ends alone. Whether a delivery that has not ended lost its worker is
    decided by evidence (its heartbeat, the broker's redelivery), never by the count."""

    model: type[ProblemRow] | type[QueryRequestRow]
    row_id: str
    started: bool = False  # both flags are set when the transaction that counted them commits
    ended: bool = False
    worker: str = ""  # the process holding it (host:pid)
    message_id: str | None = None  # the broker message it came in (a Celery task id)
    redelivered: bool = False  # the broker marked that message redelivered
    deadline_s: float | None = None
    id: int | None = None  # its task_deliveries row (None: claimed beside another delivery, counted only)

    def start(self, session: Session) -> None:
        """Count and record its start in `session`'s transaction (the one that checked the row)."""
        self.id = start_delivery(session, model=self.model, row_id=self.row_id, worker=self.worker,
                                 message_id=self.message_id, deadline_s=self.deadline_s)
        sa.event.listen(session, "after_commit", self._started, once=True)

    def end(self, session: Session) -> None:
        """Count its end in `session`'s transaction (the one recording the outcome, if any); a rolled-back end is
        ended again later, and a delivery is never ended twice."""
        if self.ended or not self.started:  # never started (its check did not commit): nothing to end
            return
        end_delivery(session, model=self.model, row_id=self.row_id, delivery_id=self.id)
        sa.event.listen(session, "after_commit", self._ended, once=True)

    @property
    def open(self) -> bool:
        return self.started and not self.ended

    def _started(self, _session: Session) -> None:
        self.started = True

    def _ended(self, _session: Session) -> None:
        self.ended = True


def waiting_questions(session: Session, *, exclude: str, limit: int) -> list[QueryRequestRow]:
    """Pending questions no delivery is working on (oldest first), other than `exclude`: what a graft worker may
    take beside its own."""
    return list(session.scalars(
        sa.select(QueryRequestRow).where(QueryRequestRow.status == "pending", QueryRequestRow.id != exclude,
                                      QueryRequestRow.deliveries == QueryRequestRow.deliveries_ended)
        .order_by(QueryRequestRow.created_at).limit(limit)))


def claim_waiting_question(session: Session, *, request_id: str) -> bool:
    """Start a delivery of a pending question only if no other delivery is working on it (one statement, so two
    workers cannot both claim it); True if this one did."""
    result = session.execute(
        sa.update(QueryRequestRow)
        .where(QueryRequestRow.id == request_id, QueryRequestRow.status == "pending",
               QueryRequestRow.deliveries == QueryRequestRow.deliveries_ended)
        .values(deliveries=QueryRequestRow.deliveries + 1))
    return bool(getattr(result, "rowcount", 0) == 1)


def record_worker(session: Session, *, name: str, kind: str, model: str, fingerprint: str,
                  queues: list[str]) -> None:
    """Record (or refresh, as of now) a worker's row as it announced itself at start."""
    row = session.get(WorkerRow, name)
    if row is None:
        session.add(WorkerRow(name=name, kind=kind, model=model, fingerprint=fingerprint, queues=queues))
    else:
        row.kind, row.model, row.fingerprint = kind, model, fingerprint
        row.queues, row.started_at = queues, utcnow()
    session.flush()


def list_workers(session: Session, *, kinds: tuple[str, ...] | None = None) -> list[WorkerRow]:
    """The registered workers (of these kinds, if given), by name."""
    query = sa.select(WorkerRow).order_by(WorkerRow.name)
    if kinds is not None:
        query = query.where(WorkerRow.kind.in_(kinds))
    return list(session.scalars(query))
