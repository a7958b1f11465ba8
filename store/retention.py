"""Retention under a budget: use accounting per block and per owner, a byte budget per store, a byte quota per
team, and eviction of the least recently used evictable ownerships.

Only document and prompt-prefix blocks are evictable (they are re-derivable from their text; solution blocks are
verified work, skill and probe blocks are what solutions and attestations stand on), and never a pinned one.

Everything a team can see is counted and evicted per owner, so that nothing it sees depends on what another team
holds: a deduplicated block counts in full for each team that deposited it (its own deposit's size; the budget
counts the same way, so the bytes actually stored are at most the budget), each owner has its own recency
(`block_owners.last_used_at`, set by that team's answers and restores, and for a shared or deployment block by
the uses of the teams that see it through that owner), and evicting drops one team's ownership of a block. A team's
quota pass only ever drops the team's own ownerships: it never marks, deletes or even asks about a block's other
owners, so it does the same work whether or not another team holds the same content. A block left with no owner
is invisible to every team and is not counted any more; the store budget pass evicts such blocks first (and
`blocks gc` evicts them): its row marked (`evicted_at`, kept for provenance), then its object deleted by `reap`,
never one grafted within the grace period. Each dropped ownership and each evicted ownerless block is an
`evictions` record.

Marking, reaping and re-depositing take turns on the block's row lock (`lock_block_row`): the budget pass
re-checks the pin and the owners under it, the reaper deletes the object under it only if the row is still
evicted, and a deposit of an existing block records its owner under it and restores the object of an evicted one
before clearing the mark (store/repository.record_block). So a row that is not evicted always has its object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
import structlog
from sqlalchemy.orm import Session

from store.blocks import BlockStore
from store.db import BlockOwnerRow, BlockRow, EvictionRow, ProblemRow, TeamRow, owner_key, utcnow
from store.errors import StoreError
from store.repository import lock_block_row

log = structlog.get_logger(__name__)

EVICTABLE_KINDS = ("document", "prefix")
DEFAULT_GRACE = timedelta(seconds=60)

Sessions = Callable[[], AbstractContextManager[Session]]


class QuotaExceededError(StoreError):
    """A deposit would put a team over its byte quota, after evicting what of its own could be evicted."""


@dataclass(frozen=True)
class Victim:
    """One unit of eviction: a team's ownership of a block (`owner`, an owner key), or a block no team owns."""

    block_id: str
    fingerprint: str
    kind: str
    bytes: int
    grafts: int  # the owner's own uses (a block no team owns: all of its uses)
    last_used_at: str | None
    owner: str | None = None


@dataclass(frozen=True)
class EvictionPass:
    """What a pass evicted: the ownerships dropped, and the blocks left with no owner, marked evicted, whose
    objects `reap` deletes."""

    victims: tuple[Victim, ...] = ()
    marked: tuple[tuple[str, str], ...] = ()  # (fingerprint, block id)


@dataclass(frozen=True)
class PrunePlan:
    store_url: str
    budget_bytes: int
    bytes_before: int  # counted per owner (store/retention.owned_bytes)
    bytes_after: int
    victims: tuple[Victim, ...]
    short_by: int  # bytes still over the budget once every evictable ownership is gone (pinned or precious blocks)
    stored_bytes: int = 0  # the bytes the store actually holds (each block once)
    abandoned: tuple[Victim, ...] = ()  # blocks whose last owner was dropped: evicted first, whatever the budget

    def as_dict(self) -> dict[str, Any]:
        return {"store_url": self.store_url, "budget_bytes": self.budget_bytes, "bytes_before": self.bytes_before,
                "bytes_after": self.bytes_after, "stored_bytes": self.stored_bytes, "counted": "per owner",
                "evict": [asdict(v) for v in self.victims], "evict_bytes": sum(v.bytes for v in self.victims),
                "evict_abandoned": [asdict(v) for v in self.abandoned], "short_by": self.short_by}


def record_use(session: Session, *, block_id: str, team_id: int | None) -> None:
    """One more use of this block (an answer grafted it, or a prompt restored it), now: counted for the block and
    for the ownership the team uses it through: its own, else the shared and deployment ownerships it sees it by
    (a team that shares a block keeps it alive while others use it)."""
    now = utcnow()
    session.execute(sa.update(BlockRow).where(BlockRow.id == block_id)
                    .values(grafts=BlockRow.grafts + 1, last_used_at=now))
    bump = {"grafts": BlockOwnerRow.grafts + 1, "last_used_at": now}
    if not session.execute(sa.update(BlockOwnerRow).where(BlockOwnerRow.block_id == block_id,
                                                       BlockOwnerRow.owner_key == owner_key(team_id))
                           .values(**bump)).rowcount:
        session.execute(sa.update(BlockOwnerRow).where(
            BlockOwnerRow.block_id == block_id, sa.or_(BlockOwnerRow.shared.is_(True), BlockOwnerRow.team_id.is_(None)))
            .values(**bump))


def _idle(last_used_at: Any, cutoff: datetime) -> Any:
    """SQL: never used, or last used before `cutoff` (outside the grace period)."""
    return sa.or_(last_used_at.is_(None), last_used_at < cutoff)


def _live(store_url: str) -> list[Any]:
    return [BlockRow.store_url == store_url, BlockRow.evicted_at.is_(None)]


def _ownerless() -> Any:
    return ~sa.exists(sa.select(BlockOwnerRow.id).where(BlockOwnerRow.block_id == BlockRow.id))


def _abandoned() -> Any:
    """SQL on BlockRow: no team owns it any more, and one did (a quota or the budget dropped its last owner)."""
    return sa.and_(_ownerless(), sa.exists(sa.select(EvictionRow.id).where(EvictionRow.block_id == BlockRow.id,
                                                                         EvictionRow.owner_key.is_not(None))))


def _never_owned() -> Any:
    """SQL on BlockRow: no team ever owned it (registered from a header that names none: operators' only)."""
    return sa.and_(_ownerless(), ~sa.exists(sa.select(EvictionRow.id).where(EvictionRow.block_id == BlockRow.id,
                                                                          EvictionRow.owner_key.is_not(None))))


def held_bytes(session: Session, *, store_url: str) -> int:
    """Bytes of the blocks this store holds (catalogued, not evicted), each block once."""
    return int(session.scalar(sa.select(sa.func.coalesce(sa.func.sum(BlockRow.bytes), 0))
                              .where(*_live(store_url))) or 0)


def _owner_bytes() -> Any:
    """SQL: an ownership's bytes, its own deposit's size (a header names its depositor), else the block's."""
    return sa.func.coalesce(BlockOwnerRow.bytes, BlockRow.bytes)


def owned_bytes(session: Session, *, store_url: str) -> int:
    """Bytes of the store counted per owner, what the budget bounds: each live block in full for every team that
    owns it (its own deposit's size), and once if no team ever did. Blocks whose last owner was dropped are not
    counted: the budget pass evicts them first, so how many of them another team's quota left never weighs on
    which ownerships of a team the budget drops."""
    per_owner = sa.select(sa.func.coalesce(sa.func.sum(_owner_bytes()), 0)).select_from(BlockRow).join(
        BlockOwnerRow, BlockOwnerRow.block_id == BlockRow.id).where(*_live(store_url))
    unowned = sa.select(sa.func.coalesce(sa.func.sum(BlockRow.bytes), 0)).where(*_live(store_url), _never_owned())
    return int(session.scalar(per_owner) or 0) + int(session.scalar(unowned) or 0)


def team_bytes(session: Session, *, team_id: int) -> int:
    """Bytes of the blocks a team owns, each its own deposit's size (a deduplicated block counts in full for every
    owner)."""
    return int(session.scalar(sa.select(sa.func.coalesce(sa.func.sum(_owner_bytes()), 0)).select_from(BlockRow)
                              .join(BlockOwnerRow, BlockOwnerRow.block_id == BlockRow.id)
                              .where(BlockOwnerRow.owner_key == owner_key(team_id), BlockRow.evicted_at.is_(None)))
               or 0)


def _evictable(session: Session, *, store_url: str, now: datetime, grace: timedelta,
               only_team: int | None = None) -> list[tuple[datetime, Victim]]:
    """Evictable ownerships (and, for the whole store, blocks no team ever owned) with each one's recency: the
    owner's own last use, else its deposit. Ownerships used by their owner within the grace period are kept. With
    `only_team`, that team's ownerships only: nothing here reads another team's rows."""
    base = [*_live(store_url), BlockRow.kind.in_(EVICTABLE_KINDS), BlockRow.pinned.is_(False),
            ~sa.exists(sa.select(ProblemRow.id).where(ProblemRow.block_id == BlockRow.id))]
    owned = (sa.select(BlockRow, BlockOwnerRow).join(BlockOwnerRow, BlockOwnerRow.block_id == BlockRow.id)
             .where(*base, _idle(BlockOwnerRow.last_used_at, now - grace)))
    if only_team is not None:
        owned = owned.where(BlockOwnerRow.owner_key == owner_key(only_team))
    units = [(o.last_used_at or o.created_at, _victim(b, o)) for b, o in session.execute(owned)]
    if only_team is None:
        unowned = sa.select(BlockRow).where(*base, _never_owned(), _idle(BlockRow.last_used_at, now - grace))
        units += [(b.last_used_at or b.created_at, _victim(b, None)) for b in session.scalars(unowned)]
    return sorted(units, key=lambda u: (u[0], u[1].block_id, u[1].owner or ""))


def _victim(row: BlockRow, owner: BlockOwnerRow | None) -> Victim:
    used = owner.last_used_at if owner is not None else row.last_used_at
    size = owner.bytes if owner is not None and owner.bytes is not None else row.bytes
    return Victim(row.id, row.fingerprint, row.kind, int(size),
                  int(owner.grafts if owner is not None else row.grafts),
                  used.isoformat() if used else None, owner.owner_key if owner is not None else None)


def _choose(units: list[tuple[datetime, Victim]], over: int) -> list[Victim]:
    chosen, freed = [], 0
    for _, victim in units:
        if freed >= over:
            break
        chosen.append(victim)
        freed += victim.bytes
    return chosen


def plan_prune(session: Session, *, store_url: str, budget_bytes: int, grace: timedelta = DEFAULT_GRACE,
               now: datetime | None = None) -> PrunePlan:
    """What bringing the store under `budget_bytes` (counted per owner) would evict, least recently used first,
    and the bytes before and after."""
    now = now or utcnow()
    before = owned_bytes(session, store_url=store_url)
    over = before - budget_bytes
    chosen = _choose(_evictable(session, store_url=store_url, now=now, grace=grace), over) if over > 0 else []
    after = before - sum(v.bytes for v in chosen)
    return PrunePlan(store_url, budget_bytes, before, after, tuple(chosen), max(0, after - budget_bytes),
                     held_bytes(session, store_url=store_url), tuple(_abandoned_blocks(session, store_url, now, grace)))


def _abandoned_blocks(session: Session, store_url: str, now: datetime, grace: timedelta) -> list[Victim]:
    """Evictable blocks of the store whose last owner was dropped, not pinned, not grafted within `grace`."""
    rows = session.scalars(sa.select(BlockRow).where(
        *_live(store_url), BlockRow.kind.in_(EVICTABLE_KINDS), BlockRow.pinned.is_(False), _abandoned(),
        _idle(BlockRow.last_used_at, now - grace)).order_by(BlockRow.id))
    return [_victim(row, None) for row in rows]


def _evict(sessions: Sessions, blocks: BlockStore, victims: Iterable[Victim], reason: str, *,
           grace: timedelta | None = None) -> EvictionPass:
    """Drop each victim's ownership (once, even against a concurrent pass), under its block's row lock, re-checking
    the pin there. With `grace` (the store budget), a block left with no owner is marked evicted in the same
    transaction unless any team grafted it within the grace period (a graft may be reading it); its object is left
    to `reap`. Without (a team's quota), nothing but the ownership changes."""
    done: list[Victim] = []
    marked: list[tuple[str, str]] = []
    for victim in victims:
        with sessions() as s:
            lock_block_row(s, block_id=victim.block_id)
            row = s.get(BlockRow, victim.block_id, populate_existing=True)
            if row is None or row.evicted_at is not None or row.pinned:  # pinned after the plan was made: kept
                continue
            if victim.owner is None:  # a block no team owns: evicted now, or (owned or used meanwhile) kept
                if grace is None or not _mark_if_ownerless(s, victim.block_id, grace):
                    continue
                marked.append((victim.fingerprint, victim.block_id))
                s.add(EvictionRow(block_id=victim.block_id, bytes=victim.bytes, reason=reason, store_url=blocks.url))
            else:
                if not s.execute(sa.delete(BlockOwnerRow).where(BlockOwnerRow.block_id == victim.block_id,
                                                             BlockOwnerRow.owner_key == victim.owner)).rowcount:
                    continue
                s.add(EvictionRow(block_id=victim.block_id, bytes=victim.bytes, reason=reason, store_url=blocks.url,
                               owner_key=victim.owner))
                if grace is not None and _mark_if_ownerless(s, victim.block_id, grace):
                    marked.append((victim.fingerprint, victim.block_id))
        done.append(victim)
        log.info("retention.evicted", block_id=victim.block_id, owner=victim.owner, bytes=victim.bytes,
                 reason=reason)
    return EvictionPass(tuple(done), tuple(marked))


def _mark_if_ownerless(session: Session, block_id: str, grace: timedelta) -> bool:
    """Mark the block evicted if no team owns it, it is not pinned and no one grafted it within `grace` (the row
    lock is held)."""
    owned = sa.exists(sa.select(BlockOwnerRow.id).where(BlockOwnerRow.block_id == block_id))
    return bool(session.execute(sa.update(BlockRow).where(
        BlockRow.id == block_id, ~owned, BlockRow.pinned.is_(False), BlockRow.evicted_at.is_(None),
        _idle(BlockRow.last_used_at, utcnow() - grace))
        .values(evicted_at=utcnow()).execution_options(synchronize_session=False)).rowcount)


def collect_abandoned(sessions: Sessions, blocks: BlockStore, *, grace: timedelta = DEFAULT_GRACE,
                      dry_run: bool = False) -> list[Victim]:
    """Evict the evictable blocks of this store whose last owner was dropped (a team's quota, or the budget) and
    that no one grafted within `grace`: marked under the row lock (each an `evictions` record, reason
    `abandoned`), then their objects deleted."""
    with sessions() as s:
        found = _abandoned_blocks(s, blocks.url, utcnow(), grace)
    if dry_run:
        return found
    evicted = _evict(sessions, blocks, found, "abandoned", grace=grace)
    reap(sessions, blocks, evicted.marked)
    return list(evicted.victims)


def reap(sessions: Sessions, blocks: BlockStore, marked: Iterable[tuple[str, str]]) -> int:
    """Delete the objects of blocks marked evicted, each under its row lock and only if the row is still evicted
    (a re-deposit may have restored it meanwhile). Returns how many were deleted."""
    deleted = 0
    for fingerprint, block_id in marked:
        try:
            with sessions() as s:
                lock_block_row(s, block_id=block_id)
                row = s.get(BlockRow, block_id, populate_existing=True)
                if row is None or row.evicted_at is None:
                    log.info("retention.reap_skipped", block_id=block_id, reason="restored")
                    continue
                blocks.delete(fingerprint, block_id)
                deleted += 1
        except Exception as exc:  # noqa: BLE001 - the row says evicted; `blocks gc` deletes a stray object later
            log.warning("retention.object_not_deleted", block_id=block_id, error=str(exc))
    return deleted


def evicted_with_objects(session: Session, blocks: BlockStore) -> list[tuple[str, str]]:
    """Blocks of this store marked evicted whose object is still there (a pass stopped between marking and
    reaping): what `blocks gc` reaps."""
    rows = session.execute(sa.select(BlockRow.fingerprint, BlockRow.id).where(
        BlockRow.store_url == blocks.url, BlockRow.evicted_at.is_not(None))).all()
    return [(fp, bid) for fp, bid in rows if blocks.exists(fp, bid)]


def prune(sessions: Sessions, blocks: BlockStore, *, budget_bytes: int, grace: timedelta = DEFAULT_GRACE,
          dry_run: bool = False) -> tuple[PrunePlan, list[Victim]]:
    """Bring the store under `budget_bytes`: the plan, and what was evicted (nothing on a dry run)."""
    with sessions() as s:
        plan = plan_prune(s, store_url=blocks.url, budget_bytes=budget_bytes, grace=grace)
    if dry_run or not (plan.victims or plan.abandoned):
        return plan, []
    evicted = _evict(sessions, blocks, plan.abandoned + plan.victims, "store_budget", grace=grace)
    reap(sessions, blocks, evicted.marked)
    if plan.short_by:
        log.warning("retention.over_budget", store_url=blocks.url, short_by=plan.short_by,
                    budget_bytes=budget_bytes)
    return plan, list(evicted.victims)


def ensure_quota(sessions: Sessions, blocks: BlockStore, *, team_id: int | None, block_id: str,
                 incoming_bytes: int, grace: timedelta = DEFAULT_GRACE) -> EvictionPass:
    """Make room for a deposit of `incoming_bytes` under the team's quota by dropping its own least recently used
    evictable ownerships; raise QuotaExceededError if that is not enough. A block the team already owns is free.
    Only the team's ownerships change: a block left with no owner is evicted by the store budget or `blocks gc`,
    never here, so this pass does the same work whether or not another team owns any of these blocks."""
    if team_id is None:
        return EvictionPass()
    with sessions() as s:
        team = s.get(TeamRow, team_id)
        if team is None or team.quota_bytes is None:
            return EvictionPass()
        owned = s.scalar(sa.select(BlockOwnerRow.id).join(BlockRow, BlockRow.id == BlockOwnerRow.block_id).where(
            BlockOwnerRow.block_id == block_id, BlockOwnerRow.owner_key == owner_key(team_id),
            BlockRow.evicted_at.is_(None)))
        if owned is not None:
            return EvictionPass()
        held, quota, name = team_bytes(s, team_id=team_id), int(team.quota_bytes), team.name
        over = held + incoming_bytes - quota
        if over <= 0:
            return EvictionPass()
        victims = _choose(_evictable(s, store_url=blocks.url, now=utcnow(), grace=grace, only_team=team_id), over)
    if sum(v.bytes for v in victims) < over:
        raise QuotaExceededError(f"team {name!r} holds {held} bytes of its {quota}-byte quota; this block needs "
                                 f"{incoming_bytes} more and only {sum(v.bytes for v in victims)} bytes of its own "
                                 f"blocks can be evicted")
    return _evict(sessions, blocks, victims, "team_quota")


def eviction_totals(session: Session) -> tuple[int, int]:
    """(ownerships evicted, their bytes counted per owner) over the deployment's life."""
    n, total = session.execute(sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(EvictionRow.bytes), 0))).one()
    return int(n), int(total)
