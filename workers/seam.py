"""The seam between engine and store: an engine snapshot becomes a store block, and a verified block becomes a
snapshot the engine can graft. The only module that knows both sides."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import structlog

from engine.fingerprint import NumericsProfile
from engine.graft import KVSnapshot
from store.blockfile import Block, new_block, read_block_file, write_block_file
from store.blocks import BlockStore
from store.errors import BlockFormatError, BlockIntegrityError, BlockNotFoundError

log = structlog.get_logger(__name__)

# A stored block that cannot be used: corrupted, truncated, tampered, unsigned under a key, or gone. Readers on the
# answering path treat it as a miss (logged), never as a crash; `kvgraft blocks repair` re-derives or quarantines it.
UNREADABLE = (BlockIntegrityError, BlockFormatError, BlockNotFoundError)


def read_or_miss(blocks: BlockStore, fingerprint: str, block_id: str, *, purpose: str,
                 scope: str | None = None) -> Block | None:
    """The verified block, or None (with a `blocks.unreadable` event) when it cannot be used; an unreachable store
    still raises (ObjectStoreUnavailableError is retried, not a miss). `scope`: the team reading it, whose own
    share of the caches serves it (BlockStore.get)."""
    try:
        return blocks.get(fingerprint, block_id, scope=scope)
    except UNREADABLE as exc:
        log.warning("blocks.unreadable", block_id=block_id, fingerprint=fingerprint, purpose=purpose,
                    error=type(exc).__name__, detail=str(exc))
        return None


def snapshot_to_block(snapshot: KVSnapshot, *, kind: str, meta: dict[str, Any] | None = None,
                      key: bytes | None = None) -> Block:
    full_meta = {"fingerprint_parts": snapshot.fingerprint_parts, **(meta or {})}
    return new_block(kind=kind, tokens=snapshot.tokens, pos_start=snapshot.pos_start,
                     fingerprint=snapshot.fingerprint, profile=snapshot.profile.as_dict(),
                     payload=snapshot.payload, meta=full_meta, key=key)


def block_to_snapshot(block: Block) -> KVSnapshot:
    """A snapshot over a block the store has already verified (hash checked while reading)."""
    ident = block.identity
    parts = block.meta.get("fingerprint_parts")
    return KVSnapshot(tokens=ident.tokens, pos_start=ident.pos_start, payload=block.payload,
                      payload_sha256=ident.payload_sha256, fingerprint=ident.fingerprint,
                      fingerprint_parts=parts if isinstance(parts, dict) else {},
                      profile=NumericsProfile.from_dict(dict(ident.profile)))


def block_file_roundtrip(snapshot: KVSnapshot, *, kind: str = "probe") -> KVSnapshot:
    """Write the snapshot as a block file and read it back verified: the gate's persistence step."""
    with tempfile.TemporaryDirectory(prefix="kvgraft-gate-") as tmp:
        path = Path(tmp) / "block.kvg"
        write_block_file(snapshot_to_block(snapshot, kind=kind), path)
        return block_to_snapshot(read_block_file(path))
