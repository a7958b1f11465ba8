"""The prompt cache, made of blocks: a prompt's tokens are cut at fixed chunk boundaries on the serving engine's
prefill grid (every `prefill_chunk` tokens) and, where the composition check found finer splits exact, at the
ends of its chat messages too; a chain hash names each prefix (chunk k's hash covers the fingerprint, the numerics
profile and every token before it); the longest stored prefix visible to the team is restored at its own
positions and only the rest is prefilled on the absolute grid, the calls a fresh prefill makes after that point:
the result is byte-equal to computing the whole prompt fresh (workers/serving/exactness.py measures it per
fingerprint and profile before the cache is used, and which prefix ends it holds for).

Stored prefixes are chunks (KVGRAFT_PREFIX_CHUNK_TOKENS, a multiple of the grid): the block named by the chain
hash of tokens[:e] holds only the cells of [s, e), s the storage boundary before e (engine/seqchunks.py), so a
conversation's next turn stores what it adds, and two prompts sharing a long head share its chunks. A prefix ending
at e is restored by reading its chain of chunks (concurrently) and joining them into one state, byte-identical to
the state captured in one piece; a chain is usable up to its first missing, evicted or unreadable chunk. A request
captures its state once, at its longest kept boundary, and every chunk it needs is cut from that capture. With
the chunk setting 0 each prefix is one block from position 0 (and such blocks, stored before chunks, still read).

Prefix blocks are deposited after the request, off the request's path (a background thread), deduplicated (the
object is written by an atomic replace under the row's lock whether the content is new, live under another owner or
evicted: the same statements, object-store and file-system calls in every case): the same prefix from another team
is the same block (its header names no team and no time), and the team becomes one more owner of it, within its
quota. A team only ever finds prefixes it owns (its own deposits), so one team's prompts are never revealed to
another: a lookup of another team's prefix is a miss like any other, and a deposit takes the same work whether or
not another team stored the same prefix. Every restore is recorded as a use (on the same background thread), the
block's and the team's own."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import structlog

from engine import seqchunks
from engine.errors import StateRestoreError
from engine.graft import GraftEngine, KVSnapshot
from store.blocks import block_key
from store.db import owner_key
from store.repository import owned_prefix_rows, record_block, record_prefix, set_quarantined
from store.retention import ensure_quota, prune, record_use
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, read_or_miss, snapshot_to_block

log = structlog.get_logger(__name__)

CHAIN_VERSION = "kvgraft-prefix-v1"


def serving_profile_id(engine: GraftEngine) -> str:
    """The numerics profile a served prompt is computed under (the grid's chunk-sized calls: the tiled class)."""
    return engine.profile(engine.config.prefill_chunk).id


def boundaries(engine: GraftEngine, n_prompt: int) -> list[int]:
    """Chunk boundaries a prefix may end at: multiples of the chunk, leaving at least one prompt token to prefill
    (its logits start the generation)."""
    c = engine.config.prefill_chunk
    return list(range(c, n_prompt, c))


def chain_hashes(engine: GraftEngine, tokens: Sequence[int], ends: Sequence[int] = (),
                 store_chunk: int = 0) -> dict[int, str]:
    """{boundary: chain hash of tokens[:boundary]} for every chunk boundary of the prompt and for each of `ends`
    (a prefix ending inside a chunk, at a message's end: the chain up to the chunk boundary before it, then the
    partial chunk, tagged so that it never equals a full chunk's hash). The stored chunk size is part of the chain
    (0, whole prefixes, keeps the chain prefixes had before chunks): one chain hash names one block's content."""
    c = engine.config.prefill_chunk
    seed = f"{CHAIN_VERSION}|{engine.fingerprint.id}|{serving_profile_id(engine)}|{c}"
    if store_chunk:
        seed += f"|chunks:{store_chunk}"
    h = hashlib.sha256(seed.encode()).digest()
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


def chunk_ends(kept: Sequence[int], store_chunk: int) -> list[int]:
    """Every chunk end the kept prefix ends need: each of them, and every storage boundary below the longest."""
    if not kept:
        return []
    top = max(kept)
    full = set(range(store_chunk, top, store_chunk)) if store_chunk > 0 else set()
    return sorted(full | set(kept))


def deposit_spans(kept: Sequence[int], base: int, store_chunk: int, grid: int) -> list[tuple[int, int]]:
    """The chunks [start, end) a request stores after `base` (the end of the restored chain's last grid-aligned
    point, 0 for none): to each kept end, cut at every storage boundary. A chunk ending on the grid is a point later
    chunks start from (every prompt sharing those tokens hashes every grid boundary, so the chain is found again);
    one ending elsewhere (a message's end, which a later prompt may not keep) is a leaf, started from the point
    before it. So a chat's turns store each cell about once. Whole prefixes (store_chunk 0): [0, end) each."""
    ends = [e for e in chunk_ends(kept, store_chunk) if e > base]
    if store_chunk <= 0:
        return [(0, e) for e in ends]
    spans: list[tuple[int, int]] = []
    point = base
    for end in ends:
        spans.append((point, end))
        if end % grid == 0:
            point = end
    return spans


@dataclass(frozen=True)
class CachedPrefix:
    block_ids: tuple[str, ...]  # the chain's chunk blocks, in position order (one: a prefix stored whole)
    chain_hash: str
    n_tokens: int
    snapshot: KVSnapshot  # the chunks joined into one state (its payload hashed here)
    last_start: int = 0  # where the chain's last chunk begins (a grid point: new chunks start there at the latest)


@dataclass(frozen=True)
class Lookup:
    cached: CachedPrefix | None  # the longest stored prefix the team owns, read and verified
    unreadable: frozenset[str] = frozenset()  # chain hashes whose block the team owns but could not be read
    owned_spans: frozenset[tuple[int, int]] = frozenset()  # (start, end) of the readable chunks the team owns


@dataclass(frozen=True)
class _Owned:
    chain_hash: str
    block_id: str
    end: int  # the prefix's end (the chain hash's position)
    start: int  # where the block's cells begin (0: the whole prefix)


_readers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="kvgraft-chunk-read")


def _chain(owned: dict[int, list[_Owned]], end: int, refused: set[str]) -> list[_Owned] | None:
    """Blocks that together hold [0, end), in position order, none of them refused; None where there are none.
    Computed for every end in ascending order (each end's chain from its rows' starts' chains), so the work is
    linear in the rows however many blocks share a chain hash."""
    best: dict[int, list[_Owned]] = {}
    for e in sorted(k for k in owned if k <= end):
        for row in owned[e]:
            if row.block_id in refused or not 0 <= row.start < e:
                continue
            if row.start == 0:
                best[e] = [row]
                break
            if row.start in best:
                best[e] = [*best[row.start], row]
                break
    return best.get(end)


def _joined(engine: GraftEngine, blocks: list[Any], end: int) -> KVSnapshot:
    first = block_to_snapshot(blocks[0])
    if len(blocks) == 1:
        return first
    payload = seqchunks.join([b.payload for b in blocks])
    tokens = tuple(t for b in blocks for t in b.identity.tokens)
    if len(tokens) != end:
        raise StateRestoreError(f"the chain's chunks hold {len(tokens)} tokens, not {end}")
    return KVSnapshot(tokens=tokens, pos_start=0, payload=payload, payload_sha256=hashlib.sha256(payload).hexdigest(),
                      fingerprint=first.fingerprint, fingerprint_parts=first.fingerprint_parts, profile=first.profile)


def _chain_mismatch(engine: GraftEngine, chain: list[_Owned], blocks: list[Any], end: int, hashes: dict[int, str],
                    tokens: Sequence[int] | None, store_chunk: int | None) -> tuple[str, str] | None:
    """(block id, why) of the first chunk that is not the prompt's own, else None: each chunk starts where its row
    says and where the one before ends, the joined token ids equal the prompt's, and the chain hash recomputed from
    the joined chunks' own tokens equals the one the catalogue matched (a wrong row, by a bug, a hand-edited
    database or a repair gone wrong, is never restored)."""
    at = 0
    joined: list[int] = []
    for row, block in zip(chain, blocks, strict=True):
        ident = block.identity
        if ident.pos_start != row.start or ident.pos_start != at or ident.pos_end != row.end:
            return row.block_id, (f"chunk holds [{ident.pos_start}, {ident.pos_end}), its row says "
                                  f"[{row.start}, {row.end}) after {at}")
        joined.extend(ident.tokens)
        at = ident.pos_end
        if tokens is not None and list(ident.tokens) != list(tokens[ident.pos_start:ident.pos_end]):
            return row.block_id, "the chunk's token ids are not the prompt's"
    if at != end:
        return chain[-1].block_id, f"the chain ends at {at}, not {end}"
    if store_chunk is not None:
        # the prompt's token after the prefix (or any) only lets chain_hashes name `end` itself
        probe = joined + [0]
        if chain_hashes(engine, probe, [end], store_chunk).get(end) != hashes[end]:
            return chain[-1].block_id, "the chain hash of the joined chunks is not the catalogue's"
    return None


def lookup(rt: Runtime, engine: GraftEngine, hashes: dict[int, str], team_id: int, *,
           tokens: Sequence[int] | None = None, store_chunk: int | None = None) -> Lookup:
    """In one query, the prompt's prefix chunks this team owns; the longest prefix whose whole chain of chunks is
    owned, not quarantined and readable is read (its chunks concurrently), verified and joined (a damaged or
    missing chunk is a miss, and the next longest prefix is tried), and the owned chunks' spans tell which the
    request need not store again (not one that is quarantined or could not be read: the request captures it, and
    its deposit restores the block). With the prompt's `tokens` and `store_chunk`, the joined chain is checked
    to be the prompt's (_chain_mismatch) before it is used; a chunk that is not is quarantined and a miss. An
    unreachable object store raises ObjectStoreUnavailableError (the
    request is then served uncached)."""
    if not hashes:
        return Lookup(None)
    by_hash = {h: n for n, h in hashes.items()}
    with rt.session() as s:
        rows = owned_prefix_rows(s, chain_hashes=list(by_hash), team_id=team_id)
    owned_rows: dict[int, list[_Owned]] = {}
    for h, block_id, end, block_tokens, quarantined_at in rows:
        if quarantined_at is None and by_hash.get(h) == end:
            owned_rows.setdefault(end, []).append(_Owned(h, block_id, end, end - block_tokens))
    refused: set[str] = set()  # block ids that could not be read or joined
    unreadable: set[str] = set()
    scope = owner_key(team_id)

    def spans(excluded: set[str]) -> frozenset[tuple[int, int]]:
        return frozenset((r.start, r.end) for rs in owned_rows.values() for r in rs if r.block_id not in excluded)

    def read(row: _Owned) -> Any:
        # through this team's own share of the process's caches: how fast it comes back never depends on another
        # team having read the same block
        return read_or_miss(rt.blocks, engine.fingerprint.id, row.block_id, purpose="prompt_prefix", scope=scope)

    for end in sorted(owned_rows, reverse=True):
        while (chain := _chain(owned_rows, end, refused)) is not None:
            blocks = list(_readers.map(read, chain)) if len(chain) > 1 else [read(chain[0])]
            missing = [r for r, b in zip(chain, blocks, strict=True) if b is None]
            if missing:
                refused.update(r.block_id for r in missing)
                unreadable.update(r.chain_hash for r in missing)
                continue
            wrong = _chain_mismatch(engine, chain, blocks, end, hashes, tokens, store_chunk)
            if wrong is not None:  # a catalogue row pointing the chain at another prompt's chunk: a miss
                log.error("prompt_cache.chain_mismatch", chain_hash=hashes[end], block_id=wrong[0], error=wrong[1])
                with rt.session() as s:
                    set_quarantined(s, block_id=wrong[0], quarantined=True)
                refused.add(wrong[0])
                continue
            try:
                snapshot = _joined(engine, blocks, end)
            except StateRestoreError as exc:  # chunks that do not join (another layout): a miss
                log.warning("prompt_cache.chain_refused", chain_hash=hashes[end], error=str(exc))
                refused.update(r.block_id for r in chain)
                continue
            return Lookup(CachedPrefix(tuple(r.block_id for r in chain), hashes[end], end, snapshot, chain[-1].start),
                          frozenset(unreadable), spans(refused))
    return Lookup(None, frozenset(unreadable), spans(refused))


def chunk_snapshot(state: KVSnapshot, start: int, end: int) -> KVSnapshot:
    """The chunk [start, end) of a captured state (whole when it is all of it)."""
    if (start, end) == (state.pos_start, state.pos_end):
        return state
    payload = seqchunks.cut(state.payload, start, end)
    return replace(state, tokens=state.tokens[start - state.pos_start:end - state.pos_start], pos_start=start,
                   payload=payload, payload_sha256=hashlib.sha256(payload).hexdigest())


@dataclass(frozen=True)
class PendingPrefix:
    chain_hash: str
    snapshot: KVSnapshot
    replace: bool = False  # the team's stored block for it could not be read (every deposit overwrites it now)


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
    meta = {"chain_hash": item.chain_hash, "model": engine.name, "chunk": engine.config.prefill_chunk,
            "prefix_end": item.snapshot.pos_end}
    block = snapshot_to_block(item.snapshot, kind="prefix", meta=meta, key=rt.settings.block_key_bytes)
    ensure_quota(rt.session, rt.blocks, team_id=team_id, block_id=block.block_id,
                 incoming_bytes=block.identity.payload_bytes)
    data = rt.blocks.encode(block)
    with rt.session() as s:
        # the object written under the row's lock, new, live under another owner or evicted alike (the same
        # statements, object-store and file-system calls): the deposit's work tells nothing of another team
        _, created = record_block(
            s, block_id=block.block_id, fingerprint=block.fingerprint, kind="prefix",
            n_tokens=item.snapshot.n_tokens, bytes=len(data), payload_sha256=block.identity.payload_sha256,
            object_key=block_key(block.fingerprint, block.block_id), store_url=rt.blocks.url,
            profile=item.snapshot.profile.as_dict(), meta=meta, source=None, team_id=team_id, shared=False,
            write_object=lambda: rt.blocks.write(block, data))
        record_prefix(s, chain_hash=item.chain_hash, block_id=block.block_id, fingerprint=block.fingerprint,
                      profile_id=serving_profile_id(engine), n_tokens=item.snapshot.pos_end)
    rt.blocks.remember(block, scope=owner_key(team_id))  # the team's next request on this pod: from memory
    log.info("prompt_cache.deposited", block_id=block.block_id, start=item.snapshot.pos_start,
             end=item.snapshot.pos_end, created=created)
    if rt.settings.store_budget_bytes is not None:
        prune(rt.session, rt.blocks, budget_bytes=rt.settings.store_budget_bytes)
    return block.block_id
