"""Attesting stored blocks on this machine: graft each block (as read from the store) and compare with a fresh
computation of its tokens at its recorded probe query; record the verdict for this fingerprint and profile.
Blocks present in the store but unknown to this database (copied from another pod) are registered from their
self-describing headers, only after a full verified read and together with their attestation."""

from __future__ import annotations

import hashlib
import socket
from collections import Counter
from typing import Any

import structlog

from engine.check import check_graft, floor_holds, reference_run
from engine.errors import EngineError
from store.blockfile import Block
from store.blocks import block_key
from store.db import BlockRow
from store.errors import StoreError
from store.repository import get_block, get_or_create_team, record_attestation, record_block, requester
from workers.flywheel.deposit import probe_query
from workers.gate_records import check_fields
from workers.runtime import Runtime
from workers.seam import block_to_snapshot

log = structlog.get_logger(__name__)


def _register(s: Any, rt: Runtime, block: Block) -> None:
    """Catalogue a block found in the store, from its verified (hash, id, fingerprint and, under a key, signature)
    header: the owner it names (team and shared flag); a header naming no owner gives no team visibility at all
    (operators still see it), never `shared`."""
    meta = dict(block.meta)
    owner = meta.get("owner") if isinstance(meta.get("owner"), dict) else None
    text = meta.get("text") if isinstance(meta.get("text"), str) else ""
    extra = {k: meta[k] for k in ("passage", "question", "answer", "model") if k in meta}
    team_id = None
    if owner is not None and owner.get("team"):
        team_id = get_or_create_team(s, name=str(owner["team"])).id
    ident = block.identity
    row_values = {"block_id": block.block_id, "fingerprint": ident.fingerprint, "kind": ident.kind,
                  "n_tokens": len(ident.tokens), "bytes": ident.payload_bytes,
                  "payload_sha256": ident.payload_sha256, "object_key": block_key(ident.fingerprint, block.block_id),
                  "store_url": rt.blocks.url, "profile": dict(ident.profile),
                  "meta": {"registered_from_header": True, **extra},
                  "source": meta.get("source") if isinstance(meta.get("source"), dict) else None,
                  "text_digest": hashlib.sha256(text.encode()).hexdigest() if text else None}
    if owner is None:
        s.add(BlockRow(id=block.block_id, team_id=None, shared=False, **{k: v for k, v in row_values.items()
                                                                          if k != "block_id"}))
        s.flush()
    else:
        record_block(s, team_id=team_id, shared=bool(owner.get("shared", False)),
                     restore_object=lambda: rt.blocks.put(block), **row_values)
    log.info("attest.registered", block_id=block.block_id, fingerprint=ident.fingerprint,
             owner=owner.get("team") if owner else None, shared=bool(owner and owner.get("shared")))


def attest_stored_block(rt: Runtime, block_id: str, *, fingerprint: str | None = None,
                        model: str | None = None, register: bool = False,
                        n_query: int | None = None, team_id: int | None = None) -> dict[str, Any]:
    """Gate one stored block here and record the attestation; a block of another fingerprint is refused. With
    `register`, a block this database has never seen is catalogued from its header, but only after a full verified
    read, and in the same transaction as its attestation: a block refused on read is never catalogued."""
    engine = rt.engine(model)
    fp = engine.fingerprint
    with rt.session() as s:
        row = get_block(s, block_id=block_id)
        stored_fp = fingerprint or (row.fingerprint if row is not None else fp.id)
    record: dict[str, Any] = {"block_id": block_id, "fingerprint": stored_fp}
    if row is None and not register:
        return record | {"status": "refused", "byte_exact": False, "reason": f"block {block_id} is not catalogued"}
    if stored_fp != fp.id:
        return record | {"status": "refused", "byte_exact": False,
                         "reason": f"captured under fingerprint {stored_fp}; this machine is {fp.id} (other weights, "
                                   f"build, flash-attention setting or KV type): it cannot be grafted here"}
    try:
        block = rt.blocks.get(stored_fp, block_id, use_cache=False)
        if block.kind == "prefix" and block.identity.pos_start > 0:
            return record | {"status": "refused", "byte_exact": False,
                             "reason": f"a prompt-cache chunk holds only the cells of positions "
                                       f"[{block.identity.pos_start}, {block.identity.pos_end}): it is checked as "
                                       f"part of its chain (the composition check), not grafted alone"}
        snapshot = block_to_snapshot(block)
        probe = [int(t) for t in block.meta.get("probe", {}).get("tokens", [])]  # type-checked on read
        if not probe:
            probe = probe_query(engine)
        if n_query is not None:
            if not 1 <= n_query <= engine.config.n_ctx - len(snapshot.tokens):
                raise ValueError(f"a {n_query}-token query does not fit after the block's {len(snapshot.tokens)} "
                                 f"tokens in the {engine.config.n_ctx}-token window")
            probe = (probe * (-(-n_query // len(probe))))[:n_query]
        reference = reference_run(engine, list(snapshot.tokens), probe)
        floor = floor_holds(reference, reference_run(engine, list(snapshot.tokens), probe))
        check = check_graft(engine, snapshot, reference, payload_verified=True)
    except (EngineError, StoreError, ValueError) as exc:
        log.warning("attest.refused", block_id=block_id, error=type(exc).__name__, detail=str(exc))
        return record | {"status": "refused", "byte_exact": False, "reason": str(exc)}
    fields = check_fields(check, floor)
    profile = engine.profile(len(probe))
    with rt.session() as s:  # registration and attestation commit together
        registered = False
        if get_block(s, block_id=block_id) is None:
            _register(s, rt, block)
            registered = True
        record_attestation(s, block_id=block_id, probe_digest=reference.sha256(), fingerprint=fp.id,
                           profile=profile.as_dict(), profile_id=profile.id, host=socket.gethostname(), timings={},
                           requested_by=requester(team_id), **fields)
    return record | {"status": fields["status"], "byte_exact": check.byte_exact, "reason": fields["reason"],
                     "continuation_equal": check.continuation_equal, "recapture_equal": check.recapture_equal,
                     "registered": registered, "profile": profile.as_dict(), "profile_id": profile.id}


def attest_store(rt: Runtime, *, all_fingerprints: bool = False, model: str | None = None) -> dict[str, Any]:
    """`kvgraft attest`: register and gate every block of this machine's fingerprint found in the store (with
    `all_fingerprints`, report the others as refused too)."""
    engine = rt.engine(model)
    mine = engine.fingerprint.id
    results = []
    for obj in rt.blocks.list(None if all_fingerprints else mine):
        results.append(attest_stored_block(rt, obj.block_id, fingerprint=obj.fingerprint, model=model,
                                           register=True))
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
