"""Retention under a budget: use accounting per block, a byte budget per store, a byte quota per team, and
eviction of the least recently used evictable blocks.

Only document and prompt-prefix blocks are evictable (they are re-derivable from their text; solution blocks are
verified work, skill and probe blocks are what solutions and attestations stand on), and never a pinned one or
one grafted within the grace period (an answer may be reading it). Eviction marks the row (`evicted_at`, kept for
provenance, with an `evictions` record) before it deletes the object, and a concurrent pass evicts each block once:
the mark is a conditional UPDATE. A re-deposit of the same content restores the block (store/repository.record_block).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
import structlog
from sqlalchemy.orm import Session

from store.blocks import BlockStore
from store.db import BlockOwner, BlockRow, Eviction, Problem, Team, owner_key, utcnow
from store.errors import StoreError
from store.repository import owned_by

log = structlog.get_logger(__name__)

EVICTABLE_KINDS = ("document", "prefix")
DEFAULT_GRACE = timedelta(seconds=60)

Sessions = Callable[[], AbstractContextManager[Session]]


class QuotaExceededError(StoreError):
    """A deposit would put a team over its byte quota, after evicting what of its own could be evicted."""


@dataclass(frozen=True)
class Victim:
    block_id: str
    fingerprint: str
    kind: str
    bytes: int
    grafts: int
    last_used_at: str | None


@dataclass(frozen=True)
class PrunePlan:
    store_url: str
    budget_bytes: int
    bytes_before: int
    bytes_after: int
    victims: tuple[Victim, ...]
    short_by: int  # bytes still over the budget once every evictable block is gone (pinned or precious blocks)

    def as_dict(self) -> dict[str, Any]:
        return {"store_url": self.store_url, "budget_bytes": self.budget_bytes, "bytes_before": self.bytes_before,
                "bytes_after": self.bytes_after, "evict": [asdict(v) for v in self.victims],
                "evict_bytes": sum(v.bytes for v in self.victims), "short_by": self.short_by}


def record_use(session: Session, *, block_id: str) -> None:
    """One more answer grafted from this block, now."""
    session.execute(sa.update(BlockRow).where(BlockRow.id == block_id)
                    .values(grafts=BlockRow.grafts + 1, last_used_at=utcnow()))


def held_bytes(session: Session, *, store_url: str) -> int:
    """Bytes of the blocks this store holds (catalogued, not evicted)."""
    return int(session.scalar(sa.select(sa.func.coalesce(sa.func.sum(BlockRow.bytes), 0)).where(
        BlockRow.store_url == store_url, BlockRow.evicted_at.is_(None))) or 0)


def team_bytes(session: Session, *, team_id: int) -> int:
    """Bytes of the blocks a team owns (each deduplicated block counts in full for every owner)."""
    owned = sa.select(BlockOwner.block_id).where(BlockOwner.owner_key == owner_key(team_id))
    return int(session.scalar(sa.select(sa.func.coalesce(sa.func.sum(BlockRow.bytes), 0)).where(
        BlockRow.id.in_(owned), BlockRow.evicted_at.is_(None))) or 0)


def _evictable(session: Session, *, store_url: str, now: datetime, grace: timedelta,
               only_team: int | None = None) -> list[BlockRow]:
    """Evictable blocks of the store, least recently used first (never used: oldest deposit first)."""
    recency = sa.func.coalesce(BlockRow.last_used_at, BlockRow.created_at)
    where = [BlockRow.store_url == store_url, BlockRow.kind.in_(EVICTABLE_KINDS), BlockRow.pinned.is_(False),
             BlockRow.evicted_at.is_(None),
             sa.or_(BlockRow.last_used_at.is_(None), BlockRow.last_used_at < now - grace),
             ~sa.exists(sa.select(Problem.id).where(Problem.block_id == BlockRow.id))]
    if only_team is not None:  # the team's own blocks that no other owner holds
        where.append(owned_by(only_team))
        where.append(~sa.exists(sa.select(BlockOwner.id).where(BlockOwner.block_id == BlockRow.id,
                                                               BlockOwner.owner_key != owner_key(only_team))))
    return list(session.scalars(sa.select(BlockRow).where(*where).order_by(recency, BlockRow.id)))


def _victim(row: BlockRow) -> Victim:
    return Victim(row.id, row.fingerprint, row.kind, int(row.bytes), int(row.grafts),
                  row.last_used_at.isoformat() if row.last_used_at else None)


def _choose(rows: list[BlockRow], over: int) -> list[BlockRow]:
    chosen, freed = [], 0
    for row in rows:
        if freed >= over:
            break
        chosen.append(row)
        freed += int(row.bytes)
    return chosen


def plan_prune(session: Session, *, store_url: str, budget_bytes: int, grace: timedelta = DEFAULT_GRACE,
               now: datetime | None = None) -> PrunePlan:
    """What bringing the store under `budget_bytes` would evict (least recently used first) and the bytes before
    and after."""
    now = now or utcnow()
    before = held_bytes(session, store_url=store_url)
    over = before - budget_bytes
    chosen = _choose(_evictable(session, store_url=store_url, now=now, grace=grace), over) if over > 0 else []
    after = before - sum(int(r.bytes) for r in chosen)
    return PrunePlan(store_url, budget_bytes, before, after, tuple(_victim(r) for r in chosen),
                     max(0, after - budget_bytes))


def _evict(sessions: Sessions, blocks: BlockStore, victims: list[Victim], reason: str) -> list[Victim]:
    """Mark each victim evicted (once, even against a concurrent pass), then delete its object."""
    done: list[Victim] = []
    for victim in victims:
        with sessions() as s:
            marked = s.execute(sa.update(BlockRow).where(BlockRow.id == victim.block_id,
                                                         BlockRow.evicted_at.is_(None))
                               .values(evicted_at=utcnow())).rowcount
            if not marked:
                continue
            s.add(Eviction(block_id=victim.block_id, bytes=victim.bytes, reason=reason, store_url=blocks.url))
        try:
            blocks.delete(victim.fingerprint, victim.block_id)
        except Exception as exc:  # noqa: BLE001 - the row says evicted; `blocks gc` removes a stray object
            log.warning("retention.object_not_deleted", block_id=victim.block_id, error=str(exc))
        done.append(victim)
        log.info("retention.evicted", block_id=victim.block_id, bytes=victim.bytes, reason=reason)
    return done


def prune(sessions: Sessions, blocks: BlockStore, *, budget_bytes: int, grace: timedelta = DEFAULT_GRACE,
          dry_run: bool = False) -> tuple[PrunePlan, list[Victim]]:
    """Bring the store under `budget_bytes`: the plan, and what was evicted (nothing on a dry run)."""
    with sessions() as s:
        plan = plan_prune(s, store_url=blocks.url, budget_bytes=budget_bytes, grace=grace)
    if dry_run or not plan.victims:
        return plan, []
    evicted = _evict(sessions, blocks, list(plan.victims), "store_budget")
    if plan.short_by:
        log.warning("retention.over_budget", store_url=blocks.url, short_by=plan.short_by,
                    budget_bytes=budget_bytes)
    return plan, evicted


def ensure_quota(sessions: Sessions, blocks: BlockStore, *, team_id: int | None, block_id: str,
                 incoming_bytes: int, grace: timedelta = DEFAULT_GRACE) -> list[Victim]:
    """Make room for a deposit of `incoming_bytes` under the team's quota by evicting its own least recently used
    evictable blocks; raise QuotaExceededError if that is not enough. A block the team already owns is free."""
    if team_id is None:
        return []
    with sessions() as s:
        team = s.get(Team, team_id)
        if team is None or team.quota_bytes is None:
            return []
        owned = s.scalar(sa.select(BlockOwner.id).join(BlockRow, BlockRow.id == BlockOwner.block_id).where(
            BlockOwner.block_id == block_id, BlockOwner.owner_key == owner_key(team_id),
            BlockRow.evicted_at.is_(None)))
        if owned is not None:
            return []
        held, quota, name = team_bytes(s, team_id=team_id), int(team.quota_bytes), team.name
        over = held + incoming_bytes - quota
        if over <= 0:
            return []
        victims = [_victim(r) for r in _choose(_evictable(s, store_url=blocks.url, now=utcnow(), grace=grace,
                                                          only_team=team_id), over)]
    if sum(v.bytes for v in victims) < over:
        raise QuotaExceededError(f"team {name!r} holds {held} bytes of its {quota}-byte quota; this block needs "
                                 f"{incoming_bytes} more and only {sum(v.bytes for v in victims)} bytes of its own "
                                 f"blocks can be evicted")
    return _evict(sessions, blocks, victims, "team_quota")


def eviction_totals(session: Session) -> tuple[int, int]:
    """(evictions, bytes evicted) over the deployment's life."""
    n, total = session.execute(sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(Eviction.bytes), 0))).one()
    return int(n), int(total)
