"""The prompt cache, made of blocks: a prompt's tokens are cut at fixed chunk boundaries on the serving engine's
prefill grid (every `prefill_chunk` tokens) and, where the composition check found finer splits exact, at the
ends of its chat messages too; a chain hash names each prefix (chunk k's hash covers the fingerprint, the numerics
profile and every token before it); the longest stored prefix visible to the team is restored at its own
positions and only the rest is prefilled on the absolute grid, the calls a fresh prefill makes after that point:
the result is byte-equal to computing the whole prompt fresh (workers/serving/exactness.py measures it per
fingerprint and profile before the cache is used, and which prefix ends it holds for).

Prefix blocks are deposited after the request, off the request's path (a background thread), write-once and
deduplicated: the same prefix from another team is the same block (its header names no team and no time), and the
team becomes one more owner of it, within its quota. A team only ever finds prefixes it owns (its own deposits), so
one team's prompts are never revealed to another: a lookup of another team's prefix is a miss like any other, and
a deposit takes the same work whether or not another team stored the same prefix. Every restore is recorded as a
use (on the same background thread), the block's and the team's own."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import sqlalchemy as sa
import structlog

from engine.graft import GraftEngine, KVSnapshot
from store.db import BlockRow, PrefixRow, owner_key
from store.repository import owned_by, record_block, record_prefix
from store.retention import ensure_quota, prune, record_use
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, read_or_miss, snapshot_to_block

log = structlog.get_logger(__name__)

CHAIN_VERSION = "kvgraft-prefix-v1"


def chunk_tokens(engine: GraftEngine) -> int:
    return engine.config.prefill_chunk


def serving_profile_id(engine: GraftEngine) -> str:
    """The numerics profile a served prompt is computed under (the grid's chunk-sized calls: the tiled class)."""
    return engine.profile(chunk_tokens(engine)).id


def boundaries(engine: GraftEngine, n_prompt: int) -> list[int]:
    """Chunk boundaries a prefix may end at: multiples of the chunk, leaving at least one prompt token to prefill
    (its logits start the generation)."""
    c = chunk_tokens(engine)
    return list(range(c, n_prompt, c))


def chain_hashes(engine: GraftEngine, tokens: Sequence[int], ends: Sequence[int] = ()) -> dict[int, str]:
    """{boundary: chain hash of tokens[:boundary]} for every chunk boundary of the prompt and for each of `ends`
    (a prefix ending inside a chunk, at a message's end: the chain up to the chunk boundary before it, then the
    partial chunk, tagged so that it never equals a full chunk's hash)."""
    c = chunk_tokens(engine)
    h = hashlib.sha256(f"{CHAIN_VERSION}|{engine.fingerprint.id}|{serving_profile_id(engine)}|{c}".encode()).digest()
    chain = {0: h}
    out: dict[int, str] = {}
    for end in boundaries(engine, len(tokens)):
        h = hashlib.sha256(h + np.asarray(tokens[end - c:end], dtype="<i4").tobytes()).digest()
        chain[end] = h
        out[end] = h.hex()
    for end in ends:
        if 0 < end < len(tokens) and end % c:
            base = (end // c) * c
            out[end] = hashlib.sha256(chain[base] + b"|partial|"
                                      + np.asarray(tokens[base:end], dtype="<i4").tobytes()).hexdigest()
    return out


@dataclass(frozen=True)
class CachedPrefix:
    block_id: str
    chain_hash: str
    n_tokens: int
    snapshot: KVSnapshot


@dataclass(frozen=True)
class Lookup:
    cached: CachedPrefix | None  # the longest stored prefix the team owns, read and verified
    owned: frozenset[str]  # chain hashes of the prompt the team owns a live, readable prefix block for
    unreadable: frozenset[str] = frozenset()  # chain hashes whose block the team owns but could not be read


def lookup(rt: Runtime, engine: GraftEngine, hashes: dict[int, str], team_id: int) -> Lookup:
    """In one query, the prompt's prefixes this team owns: the longest of them that is not quarantined is read and
    verified (a damaged or missing block is a miss, and the next longest is tried), and the owned chain hashes
    tell which prefixes the request need not capture again (not one that is quarantined or could not be read: the
    request captures it, and its deposit restores the block). An unreachable object store raises
    ObjectStoreUnavailableError (the request is then served uncached)."""
    if not hashes:
        return Lookup(None, frozenset())
    by_hash = {h: n for n, h in hashes.items()}
    with rt.session() as s:
        rows = s.execute(
            sa.select(PrefixRow.chain_hash, PrefixRow.block_id, PrefixRow.n_tokens, BlockRow.quarantined_at)
            .join(BlockRow, BlockRow.id == PrefixRow.block_id)
            .where(PrefixRow.chain_hash.in_(list(by_hash)), BlockRow.evicted_at.is_(None), owned_by(team_id))
            .order_by(PrefixRow.n_tokens.desc())).all()
    owned = {chain_hash for chain_hash, _, _, quarantined_at in rows if quarantined_at is None}
    unreadable: set[str] = set()
    for chain_hash, block_id, n_tokens, quarantined_at in rows:
        if quarantined_at is not None or by_hash.get(chain_hash) != n_tokens:
            continue
        # read through this team's own share of the process's caches: how fast it comes back never depends on
        # another team having read the same block
        block = read_or_miss(rt.blocks, engine.fingerprint.id, block_id, purpose="prompt_prefix",
                             scope=owner_key(team_id))
        if block is not None:
            return Lookup(CachedPrefix(block_id, chain_hash, n_tokens, block_to_snapshot(block)),
                          frozenset(owned - unreadable), frozenset(unreadable))
        unreadable.add(chain_hash)
    return Lookup(None, frozenset(owned - unreadable), frozenset(unreadable))


@dataclass(frozen=True)
class PendingPrefix:
    chain_hash: str
    snapshot: KVSnapshot
    replace: bool = False  # the team's stored block for it could not be read: overwrite the damaged object


class PrefixDepositor:
    """Deposits prefix blocks on one background thread, in order, off the requests' path; `wait()` for tests and
    shutdown."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kvgraft-prefix-deposit")
        self._futures: list[Future[None]] = []
        self._lock = threading.Lock()

    def submit(self, engine: GraftEngine, pending: list[PendingPrefix], team_id: int) -> None:
        for item in pending:
            self._track(self._pool.submit(self._deposit, engine, item, team_id))

    def used(self, block_id: str, team_id: int) -> None:
        """Record a restore of a prefix block (retention's recency, the block's and the team's), off the path."""
        self._track(self._pool.submit(self._record_use, block_id, team_id))

    def _track(self, future: Future[None]) -> None:
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()] + [future]

    def wait(self, timeout: float = 60.0) -> None:
        """Until every deposit and use handed over so far has finished."""
        while True:
            with self._lock:
                futures = [f for f in self._futures if not f.done()]
            if not futures:
                return
            for f in futures:
                f.result(timeout=timeout)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def _record_use(self, block_id: str, team_id: int) -> None:
        try:
            with self.rt.session() as s:
                record_use(s, block_id=block_id, team_id=team_id)
        except Exception as exc:  # noqa: BLE001 - a lost use only makes the block look older to retention
            log.warning("prompt_cache.use_not_recorded", block_id=block_id, error=str(exc))

    def _deposit(self, engine: GraftEngine, item: PendingPrefix, team_id: int) -> None:
        try:
            deposit_prefix(self.rt, engine, item, team_id)
        except Exception as exc:  # noqa: BLE001 - a failed deposit only costs a later request a prefill
            log.warning("prompt_cache.deposit_failed", chain_hash=item.chain_hash, error=str(exc))


def deposit_prefix(rt: Runtime, engine: GraftEngine, item: PendingPrefix, team_id: int) -> str:
    """Store one prefix block (write-once: the same content is the same block id; `replace` overwrites a damaged
    object) and record this team as an owner of it and its chain hash, within the team's quota (its own least
    recently used prefixes and documents make room, else QuotaExceededError: the prefix is not stored); then the
    retention budget applies (prefix blocks are evictable)."""
    meta = {"chain_hash": item.chain_hash, "model": engine.name, "chunk": chunk_tokens(engine)}
    block = snapshot_to_block(item.snapshot, kind="prefix", meta=meta, key=rt.settings.block_key_bytes)
    ensure_quota(rt.session, rt.blocks, team_id=team_id, block_id=block.block_id,
                 incoming_bytes=block.identity.payload_bytes)
    stored = rt.blocks.replace(block) if item.replace else rt.blocks.put(block)
    with rt.session() as s:
        record_block(s, block_id=block.block_id, fingerprint=block.fingerprint, kind="prefix",
                     n_tokens=item.snapshot.n_tokens, bytes=stored.size,
                     payload_sha256=block.identity.payload_sha256, object_key=stored.key,
                     store_url=rt.blocks.url, profile=item.snapshot.profile.as_dict(), meta=meta, source=None,
                     team_id=team_id, shared=False, restore_object=lambda: rt.blocks.put(block))
        record_prefix(s, chain_hash=item.chain_hash, block_id=block.block_id, fingerprint=block.fingerprint,
                      profile_id=serving_profile_id(engine), n_tokens=item.snapshot.n_tokens)
    rt.blocks.remember(block, scope=owner_key(team_id))  # the team's next request on this pod: from memory
    log.info("prompt_cache.deposited", block_id=block.block_id, n_tokens=item.snapshot.n_tokens,
             created=stored.created)
    if rt.settings.store_budget_bytes is not None:
        prune(rt.session, rt.blocks, budget_bytes=rt.settings.store_budget_bytes)
    return block.block_id
