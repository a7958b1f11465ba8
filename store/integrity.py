"""Checking a block store against its catalogue: verify every object, find missing and orphaned blocks, collect
orphans, and copy blocks between stores with end-to-end hash checks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import sqlalchemy as sa
import structlog
from sqlalchemy.orm import Session

from store.blocks import BlockObject, BlockStore
from store.db import BlockRow, utcnow
from store.errors import BlockFormatError, BlockIntegrityError, BlockNotFoundError, BlockUnsealedError
from store.repository import lock_block_row, set_quarantined
from store.retention import Sessions

log = structlog.get_logger(__name__)


MIN_ORPHAN_AGE = timedelta(minutes=10)  # a deposit writes its object before its row: never race one in flight


@dataclass(frozen=True)
class BlockCheck:
    block_id: str
    fingerprint: str
    status: str  # ok | missing | corrupted | unsealed | orphan | elsewhere | evicted (its object there: gc reaps it)
    detail: str = ""


@dataclass(frozen=True)
class VerifyReport:
    checks: tuple[BlockCheck, ...]
    counts: dict[str, int] = field(default_factory=dict)

    def failed(self, *, strict: bool = False) -> bool:
        bad = {"missing", "corrupted", "unsealed", "elsewhere"} | ({"orphan"} if strict else set())
        return any(c.status in bad for c in self.checks)


def _catalogued(session: Session, fingerprint: str | None) -> dict[str, BlockRow]:
    """Every catalogue row (of one fingerprint, or all), whatever store it names: an object is catalogued when any
    row has its block id."""
    query = sa.select(BlockRow)
    if fingerprint is not None:
        query = query.where(BlockRow.fingerprint == fingerprint)
    return {row.id: row for row in session.scalars(query)}


def catalogued_fingerprints(blocks: BlockStore, session: Session) -> list[str]:
    """Every fingerprint the catalogue or the store holds blocks of."""
    in_rows = set(session.scalars(sa.select(BlockRow.fingerprint).distinct()))
    return sorted(in_rows | {o.fingerprint for o in blocks.list()})


def verify_blocks(blocks: BlockStore, session: Session, *, fingerprint: str | None = None,
                  progress: Callable[[int], None] | None = None) -> VerifyReport:
    """Re-hash every object (of one fingerprint, or all) and compare the store with the catalogue rows. A row that
    names another store (a moved data folder, a copy registered elsewhere) fails as `elsewhere`: readers of this
    deployment would look for its object here."""
    rows = _catalogued(session, fingerprint)
    checks: list[BlockCheck] = []
    seen: set[str] = set()
    for n, obj in enumerate(blocks.list(fingerprint), start=1):
        seen.add(obj.block_id)
        try:
            blocks.get(obj.fingerprint, obj.block_id, use_cache=False)
        except BlockUnsealedError as exc:  # stored in the clear under a keyring: quarantined until rekey seals it
            checks.append(BlockCheck(obj.block_id, obj.fingerprint, "unsealed",
                                     f"{exc}; its row is quarantined" if obj.block_id in rows else str(exc)))
            if obj.block_id in rows:
                set_quarantined(session, block_id=obj.block_id, quarantined=True)
        except (BlockIntegrityError, BlockFormatError) as exc:
            checks.append(BlockCheck(obj.block_id, obj.fingerprint, "corrupted", str(exc)))
        else:
            if obj.block_id in rows and rows[obj.block_id].evicted_at is not None:
                checks.append(BlockCheck(obj.block_id, obj.fingerprint, "evicted",
                                         "evicted, its object not yet deleted (`blocks gc` deletes it)"))
            elif obj.block_id in rows:
                checks.append(BlockCheck(obj.block_id, obj.fingerprint, "ok"))
            else:
                checks.append(BlockCheck(obj.block_id, obj.fingerprint, "orphan",
                                         "object without a catalogue row (an interrupted deposit?)"))
        if progress:
            progress(n)
    for block_id, row in rows.items():
        if row.store_url != blocks.url:
            checks.append(BlockCheck(block_id, row.fingerprint, "elsewhere",
                                     f"its row names the store {row.store_url}, not this one ({blocks.url})"
                                     + ("" if block_id in seen else "; no object here either")))
        elif block_id not in seen and row.evicted_at is None:  # an evicted block's object is gone by design
            checks.append(BlockCheck(block_id, row.fingerprint, "missing", f"no object at {row.object_key}"))
    report = VerifyReport(tuple(checks), dict(Counter(c.status for c in checks)))
    log.info("store.verified", store=blocks.url, **report.counts)
    return report


def orphans(blocks: BlockStore, session: Session, *, older_than: timedelta,
            now: datetime | None = None) -> list[BlockObject]:
    """Objects whose block id no catalogue row has (rows naming any store count), last modified more than
    `older_than` ago; `older_than` below MIN_ORPHAN_AGE is refused."""
    if older_than < MIN_ORPHAN_AGE:
        raise ValueError(f"--older-than must be at least {int(MIN_ORPHAN_AGE.total_seconds() // 60)} minutes: a "
                         f"deposit in flight has its object before its row")
    rows = _catalogued(session, None)
    cutoff = (now or utcnow()) - older_than
    return [o for o in blocks.list() if o.block_id not in rows and o.info.modified < cutoff]


def collect_orphans(blocks: BlockStore, session: Session, *, older_than: timedelta,
                    dry_run: bool = False) -> list[BlockObject]:
    """Delete orphaned objects older than `older_than`. Never deletes an object whose block id has a row: each is
    checked again, against the catalogue as it is at that moment, right before it is deleted."""
    found = orphans(blocks, session, older_than=older_than)
    removed = []
    for o in found:
        if session.get(BlockRow, o.block_id, populate_existing=True) is not None:
            log.info("store.orphan_kept", block_id=o.block_id, reason="catalogued meanwhile")
            continue
        removed.append(o)
        if not dry_run:
            blocks.delete(o.fingerprint, o.block_id)
            log.info("store.orphan_removed", block_id=o.block_id, fingerprint=o.fingerprint)
    return removed


@dataclass(frozen=True)
class CopyOutcome:
    block_id: str
    fingerprint: str
    bytes: int
    created: bool
    payload_sha256: str
    error: str | None = None


def copy_blocks(source: BlockStore, dest: BlockStore, *, fingerprint: str | None = None,
                progress: Callable[[CopyOutcome], None] | None = None) -> list[CopyOutcome]:
    """Copy (never move) every block of `source` (or of one fingerprint) to `dest`: each is verified on read,
    written once, and read back from `dest` and verified again. A block that fails is reported, not copied."""
    outcomes: list[CopyOutcome] = []
    for obj in list(source.list(fingerprint)):
        try:
            block = source.get(obj.fingerprint, obj.block_id, use_cache=False)
            stored = dest.put(block)
            dest.get(obj.fingerprint, obj.block_id, use_cache=False)
            outcome = CopyOutcome(obj.block_id, obj.fingerprint, stored.size, stored.created,
                                  block.identity.payload_sha256)
        except (BlockIntegrityError, BlockFormatError, BlockNotFoundError) as exc:
            outcome = CopyOutcome(obj.block_id, obj.fingerprint, obj.info.size, False, "", str(exc))
        outcomes.append(outcome)
        log.info("store.block_copied", block_id=obj.block_id, dest=dest.url, created=outcome.created,
                 error=outcome.error)
        if progress:
            progress(outcome)
    return outcomes



@dataclass(frozen=True)
class RekeyOutcome:
    block_id: str
    fingerprint: str
    outcome: str  # current | encrypted | rekeyed | evicted (its row evicted: never written back) | refused
    error: str | None = None


def rewrite_under_row_lock(sessions: Sessions | None, blocks: BlockStore, block_id: str,
                           write: Callable[[], int]) -> bool:
    """Run `write` (an atomic rewrite of the block's object, read back verified; returns the object's size) under
    the block's catalogue row lock, the one eviction and reaping take: a block whose row is evicted is never
    written back (False; an eviction that comes later deletes what this wrote). The row's `bytes` is set to the
    object's size in the same transaction, committed only after the object verified. Without `sessions` (a store
    without a catalogue) `write` alone."""
    if sessions is None:
        write()
        return True
    with sessions() as s:
        lock_block_row(s, block_id=block_id)
        row = s.get(BlockRow, block_id, populate_existing=True)
        if row is not None and row.evicted_at is not None:
            log.info("store.rewrite_skipped", block_id=block_id, reason="evicted")
            return False
        size = write()
        if row is not None and row.store_url == blocks.url and row.bytes != size:
            row.bytes = size
    return True


def rekey_blocks(blocks: BlockStore, *, fingerprint: str | None = None, sessions: Sessions | None = None,
                 progress: Callable[[RekeyOutcome], None] | None = None) -> list[RekeyOutcome]:
    """Every block (of one fingerprint, or all) written under the keyring's newest key; one that cannot be read
    (damaged, or under a key not held) is reported `refused` and left as it is. With `sessions`, each is rewritten
    under its row lock (rewrite_under_row_lock): an evicted block is left to its reaper (`evicted`), and the row's
    bytes follow the object."""
    outcomes = []
    for obj in list(blocks.list(fingerprint)):
        done: list[str] = []

        def write(o: BlockObject = obj, done: list[str] = done) -> int:
            outcome, size = blocks.rekey(o.fingerprint, o.block_id)
            done.append(outcome)
            return size

        try:
            written = rewrite_under_row_lock(sessions, blocks, obj.block_id, write)
            outcome = RekeyOutcome(obj.block_id, obj.fingerprint, done[0] if written else "evicted")
        except (BlockIntegrityError, BlockFormatError, BlockNotFoundError) as exc:
            outcome = RekeyOutcome(obj.block_id, obj.fingerprint, "refused", str(exc))
        outcomes.append(outcome)
        if progress:
            progress(outcome)
    return outcomes
