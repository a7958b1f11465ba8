"""The seam between engine and store: an engine snapshot becomes a store block, and a verified block becomes a
snapshot the engine can graft. The only module that knows both sides."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from engine.fingerprint import NumericsProfile
from engine.graft import KVSnapshot
from store.blockfile import Block, new_block, read_block_file, write_block_file


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
