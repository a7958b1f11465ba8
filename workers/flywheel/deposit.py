"""Depositing a text as a block: capture, gate, store the object, then record the rows (object first, row second).

The gate of a deposit compares, at a fixed probe query after the block, the logits of the very prefill that was
captured with the logits after grafting the block *as read back from the store* (so the stored bytes themselves are
proven), and checks the fresh-vs-fresh floor with a second prefill."""

from __future__ import annotations

import hashlib
import socket
import time
from dataclasses import dataclass
from typing import Any

import structlog

from engine.check import capture_with_reference, check_graft, floor_holds, reference_run
from engine.graft import GraftEngine
from store.db import utcnow
from store.repository import (
    get_block,
    get_team,
    latest_attestation,
    lock_block_row,
    owner_row,
    record_attestation,
    record_block,
    record_owner,
    requester,
)
from store.retention import ensure_quota, prune
from workers.errors import TextTooLongError
from workers.gate_records import check_fields
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, snapshot_to_block

log = structlog.get_logger(__name__)

PROBE_TEXT = "\n\nIn short, the text above says that"
DEPOSIT_KINDS = ("document", "skill", "solution")
MAX_TEXT_BYTES = 4 << 20


@dataclass(frozen=True)
class DepositResult:
    block_id: str
    n_tokens: int
    bytes: int
    byte_exact: bool | None  # None: not gated individually (bulk deposit); hash-verified on every read
    created: bool
    fingerprint: str
    kind: str
    key: str
    gated: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {"block_id": self.block_id, "n_tokens": self.n_tokens, "bytes": self.bytes,
                "byte_exact": self.byte_exact, "created": self.created, "fingerprint": self.fingerprint,
                "kind": self.kind, "key": self.key, "gated": self.gated}


def probe_query(engine: GraftEngine) -> list[int]:
    """The fixed query run after every deposited block by its gate (at most 8 tokens, at least 2)."""
    tokens = engine.tokenize(PROBE_TEXT, add_special=False)[:8]
    if len(tokens) < 2:
        raise ValueError("the probe text tokenizes to fewer than 2 tokens on this model")
    return tokens


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def deposit_text(rt: Runtime, engine: GraftEngine, *, text: str, kind: str, source: dict[str, Any],
                 team_id: int | None = None, shared: bool = False) -> DepositResult:
    """A document or skill text as one block, gated at the fixed probe query."""
    if kind not in DEPOSIT_KINDS:
        raise ValueError(f"unknown block kind {kind!r}; expected one of {', '.join(DEPOSIT_KINDS)}")
    if not text.strip():
        raise ValueError("nothing to deposit: the text is empty")
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        raise ValueError(f"text of {len(text.encode('utf-8'))} bytes exceeds {MAX_TEXT_BYTES}")
    return deposit_tokens(rt, engine, tokens=engine.tokenize(text), probe=probe_query(engine), kind=kind,
                          text=text, source=source, team_id=team_id, shared=shared)


def deposit_tokens(rt: Runtime, engine: GraftEngine, *, tokens: list[int], probe: list[int], kind: str, text: str,
                   source: dict[str, Any], team_id: int | None = None, shared: bool = False,
                   meta: dict[str, Any] | None = None, gate: bool = True,
                   verified_by_team_id: int | None = None, replace: bool = False) -> DepositResult:
    """Capture `tokens` at [0, N) as a block, store it (object first), gate the stored bytes at the `probe` query
    (graft vs the captured prefill's own reference, and the fresh floor), then record the rows (row second).
    A team depositing again content it already owns, stored and attested here, returns at once (a redelivered
    task); content another team deposited first is deposited in full, the team becoming one more owner. The signed
    header names the first depositor (`owner`: team name and shared flag). `replace` overwrites a stored object of
    the same id that could not be read (a damaged re-derivable block: the capture is deterministic)."""
    if len(tokens) + len(probe) > engine.config.n_ctx:
        raise TextTooLongError(f"the text is {len(tokens)} tokens; a block must fit the serving window of "
                               f"{engine.config.n_ctx - len(probe)} tokens")
    t0 = time.perf_counter()
    snapshot, reference = capture_with_reference(engine, tokens, probe)
    with rt.session() as session:
        team = get_team(session, team_id=team_id) if team_id is not None else None
        owner = {"team": team.name if team is not None else None, "shared": shared}
    block = snapshot_to_block(snapshot, kind=kind, key=rt.settings.block_key_bytes, meta={
        "text": text, "source": source, "created_at": utcnow().isoformat(), "model": engine.name,
        "probe": {"tokens": probe, "reference_sha256": reference.sha256()}, "owner": owner, **(meta or {})})
    # the team's quota first (its own least recently used documents make room, or the deposit is refused)
    ensure_quota(rt.session, rt.blocks, team_id=team_id, block_id=block.block_id,
                 incoming_bytes=block.identity.payload_bytes)
    with rt.session() as session:
        row = get_block(session, block_id=block.block_id)
        # a team depositing again what it already owns is done; another team's deposit of the same content does
        # the whole deposit (gate included), so that it takes the same work whether or not the content was there
        mine = owner_row(session, block_id=block.block_id, team_id=team_id)
        if row is not None and row.evicted_at is None and mine is not None and not replace:
            lock_block_row(session, block_id=block.block_id)  # an eviction takes turns with this deposit
            session.refresh(row)
            done = latest_attestation(session, block_id=block.block_id, fingerprint=block.fingerprint,
                                      profile_id=snapshot.profile.id, team_id=team_id)
            if row.evicted_at is None and done is not None and rt.blocks.exists(block.fingerprint, block.block_id):
                record_owner(session, block_id=block.block_id, team_id=team_id, shared=shared,
                             verified_by_team_id=verified_by_team_id, source=source)
                log.info("deposit.already_present", block_id=block.block_id)
                return DepositResult(block.block_id, len(tokens), mine.bytes or row.bytes, done.byte_exact, False,
                                     block.fingerprint, kind, row.object_key)
    stored = rt.blocks.replace(block) if replace else rt.blocks.put(block)  # object first
    if not gate:
        result = _record_ungated(rt, engine, block, stored, snapshot, tokens, text, kind, source, team_id, shared,
                                 reference.sha256(), meta)  # documents: no answer key verifies them
        enforce_store_budget(rt)
        return result
    readback = rt.blocks.get(block.fingerprint, block.block_id, use_cache=False)  # the stored bytes themselves
    check = check_graft(engine, block_to_snapshot(readback), reference, payload_verified=True)
    floor = floor_holds(reference, reference_run(engine, tokens, probe))
    timings = {"deposit_ms": round((time.perf_counter() - t0) * 1000, 1)}
    with rt.session() as session:  # row second
        _, created = record_block(
            session, block_id=block.block_id, fingerprint=block.fingerprint, kind=kind, n_tokens=len(tokens),
            bytes=stored.size, payload_sha256=block.identity.payload_sha256, object_key=stored.key,
            store_url=rt.blocks.url, profile=snapshot.profile.as_dict(),
            meta={"model": engine.name, "probe_reference_sha256": reference.sha256(), **(meta or {})},
            source=source, team_id=team_id, shared=shared, text_digest=text_digest(text),
            verified_by_team_id=verified_by_team_id, restore_object=lambda: rt.blocks.put(block))
        record_attestation(
            session, block_id=block.block_id, probe_digest=reference.sha256(), fingerprint=block.fingerprint,
            profile=snapshot.profile.as_dict(), profile_id=snapshot.profile.id, host=socket.gethostname(),
            timings=timings, requested_by=requester(team_id),
            **check_fields(check, floor))
    log.info("deposit.done", block_id=block.block_id, n_tokens=len(tokens), byte_exact=check.byte_exact,
             continuation=check.continuation_equal, recapture=check.recapture_equal,
             created=created or stored.created, kind=kind)
    enforce_store_budget(rt)
    return DepositResult(block.block_id, len(tokens), stored.size, check.passed and floor,
                         stored.created or created, block.fingerprint, kind, stored.key)


def enforce_store_budget(rt: Runtime) -> None:
    """The automatic retention pass after a deposit: drop least recently used document and prefix ownerships while
    the store holds more than KVGRAFT_STORE_BUDGET_BYTES counted per owner (none: no budget)."""
    budget = rt.settings.store_budget_bytes
    if budget is not None:
        prune(rt.session, rt.blocks, budget_bytes=budget)


def _record_ungated(rt: Runtime, engine: GraftEngine, block: Any, stored: Any, snapshot: Any, tokens: list[int],
                    text: str, kind: str, source: dict[str, Any], team_id: int | None, shared: bool,
                    reference_sha256: str, meta: dict[str, Any] | None) -> DepositResult:
    """A bulk-deposited block: catalogued without its own gate (the gate ran on a probe and on a sample)."""
    with rt.session() as session:
        _, created = record_block(
            session, block_id=block.block_id, fingerprint=block.fingerprint, kind=kind, n_tokens=len(tokens),
            bytes=stored.size, payload_sha256=block.identity.payload_sha256, object_key=stored.key,
            store_url=rt.blocks.url, profile=snapshot.profile.as_dict(),
            meta={"model": engine.name, "probe_reference_sha256": reference_sha256, **(meta or {})},
            source=source, team_id=team_id, shared=shared, text_digest=text_digest(text),
            restore_object=lambda: rt.blocks.put(block))
    return DepositResult(block.block_id, len(tokens), stored.size, None, stored.created or created,
                         block.fingerprint, kind, stored.key, gated=False)
