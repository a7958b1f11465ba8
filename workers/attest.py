"""Attesting stored blocks on this machine: graft each block (as read from the store) and compare with a fresh
computation of its tokens at its recorded probe query; record the verdict for this fingerprint and profile.
Blocks present in the store but unknown to this database (copied from another pod) are registered from their
self-describing headers first."""

from __future__ import annotations

import hashlib
import socket
from collections import Counter
from typing import Any

import structlog

from engine.errors import EngineError
from engine.logits import compare
from store.blocks import block_key
from store.errors import StoreError
from store.repository import get_block, record_attestation, record_block
from workers.attestations import divergence_fields, status_of
from workers.blocks import block_to_snapshot
from workers.deposit import probe_query
from workers.runtime import Runtime

log = structlog.get_logger(__name__)


def register_from_header(rt: Runtime, fingerprint: str, block_id: str) -> bool:
    """Catalogue a stored block this database has never seen, from its header; True if a row was created."""
    identity, meta = rt.blocks.header(fingerprint, block_id)
    source = meta.get("source") if isinstance(meta.get("source"), dict) else None
    text = meta.get("text") if isinstance(meta.get("text"), str) else ""
    extra = {k: meta[k] for k in ("passage", "question", "answer", "model") if k in meta}
    with rt.session() as s:
        if get_block(s, block_id=block_id) is not None:
            return False
        _, created = record_block(
            s, block_id=block_id, fingerprint=identity.fingerprint, kind=identity.kind,
            n_tokens=len(identity.tokens), bytes=identity.payload_bytes, payload_sha256=identity.payload_sha256,
            object_key=block_key(fingerprint, block_id), store_url=rt.blocks.url, profile=dict(identity.profile),
            meta={"registered_from_header": True, **extra}, source=source,
            text_digest=hashlib.sha256(text.encode()).hexdigest() if text else None, shared=True)
    log.info("attest.registered", block_id=block_id, fingerprint=fingerprint)
    return created


def attest_stored_block(rt: Runtime, block_id: str, *, fingerprint: str | None = None,
                        model: str | None = None) -> dict[str, Any]:
    """Gate one stored block here and record the attestation; a block of another fingerprint is refused."""
    engine = rt.engine(model)
    fp = engine.fingerprint
    with rt.session() as s:
        row = get_block(s, block_id=block_id)
        stored_fp = fingerprint or (row.fingerprint if row is not None else fp.id)
    record: dict[str, Any] = {"block_id": block_id, "fingerprint": stored_fp}
    if stored_fp != fp.id:
        return record | {"status": "refused", "byte_exact": False,
                         "reason": f"captured under fingerprint {stored_fp}; this machine is {fp.id} (other weights, "
                                   f"build, flash-attention setting or KV type): it cannot be grafted here"}
    try:
        block = rt.blocks.get(stored_fp, block_id, use_cache=False)
        snapshot = block_to_snapshot(block)
        probe = [int(t) for t in (block.meta.get("probe") or {}).get("tokens", [])]
        if not probe:
            probe = probe_query(engine)
        reference = engine.fresh(list(snapshot.tokens), probe)
        floor = compare(reference, engine.fresh(list(snapshot.tokens), probe)).byte_equal
        div = compare(reference, engine.graft(snapshot, probe, payload_verified=True))
    except (EngineError, StoreError, ValueError) as exc:
        return record | {"status": "refused", "byte_exact": False, "reason": str(exc)}
    status = status_of(div.byte_equal, floor)
    profile = engine.profile(len(probe))
    with rt.session() as s:
        record_attestation(s, block_id=block_id if get_block(s, block_id=block_id) else None,
                           probe_digest=reference.sha256(), fingerprint=fp.id, profile=profile.as_dict(),
                           profile_id=profile.id, host=socket.gethostname(), status=status, floor_equal=floor,
                           timings={}, reason=None if div.byte_equal else f"KL max {div.kl_max:.3g}",
                           **divergence_fields(div))
    return record | {"status": status, "byte_exact": div.byte_equal, "reason": None,
                     "profile": profile.as_dict(), "profile_id": profile.id}


def attest_store(rt: Runtime, *, all_fingerprints: bool = False, model: str | None = None) -> dict[str, Any]:
    """`kvgraft attest`: register and gate every block of this machine's fingerprint found in the store (with
    `all_fingerprints`, report the others as refused too)."""
    engine = rt.engine(model)
    mine = engine.fingerprint.id
    results = []
    for obj in rt.blocks.list(None if all_fingerprints else mine):
        if obj.fingerprint == mine:
            try:
                register_from_header(rt, obj.fingerprint, obj.block_id)
            except StoreError as exc:
                results.append({"block_id": obj.block_id, "fingerprint": obj.fingerprint, "status": "refused",
                                "byte_exact": False, "reason": str(exc)})
                continue
        results.append(attest_stored_block(rt, obj.block_id, fingerprint=obj.fingerprint, model=model))
    counts: Counter[tuple[str, str]] = Counter()
    profiles: dict[str, Any] = {}
    for r in results:
        key = r.get("profile_id", "-")
        profiles[key] = r.get("profile")
        counts[(r["fingerprint"], key, r["status"])] += 1  # type: ignore[index]
    summary: dict[tuple[str, str], dict[str, Any]] = {}
    for (fp, pid, status), n in counts.items():  # type: ignore[misc]
        entry = summary.setdefault((fp, pid), {"fingerprint": fp, "profile": profiles.get(pid), "profile_id": pid,
                                               "attested": 0, "functional": 0, "refused": 0})
        entry[status] += n
    blocks = [{k: r.get(k) for k in ("block_id", "fingerprint", "status", "byte_exact", "reason")} for r in results]
    return {"blocks": blocks, "summary": list(summary.values())}
