"""`kvgraft blocks repair ID`: a catalogued block whose object is corrupted, truncated, tampered or gone is
re-derived (captured again from tokens that are known to be its own, on an engine of its fingerprint, and kept only
if the new block has the same id) or, when that is impossible, quarantined: its raw bytes are moved aside and the
row is marked, so that readers treat it as a miss. Where the tokens come from, in order: the damaged object's own
header (when its identity still hashes to the block id, the tokens are authentic), the skill prefix text of a skill
block, the problem, verified program and answer of a solution block."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import structlog

from engine.check import capture_with_reference
from engine.errors import EngineError
from engine.graft import GraftEngine
from store.blockfile import Block, read_header, signature_status
from store.blocks import block_key
from store.db import BlockRow, utcnow
from store.errors import BlockKeyMissingError, StoreError
from store.integrity import rewrite_under_row_lock
from store.repository import get_block, set_quarantined, solved_problem_of_block, verified_program
from workers.flywheel.deposit import probe_query
from workers.flywheel.prefix import ensure_skill
from workers.flywheel.prompts import instructions_prefix, recurrence_query, style_for, tokens_of
from workers.flywheel.solve import solution_tokens
from workers.runtime import Runtime
from workers.seam import UNREADABLE, snapshot_to_block

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class RepairResult:
    block_id: str
    status: str  # intact | rederived | quarantined | key_missing | evicted
    detail: str
    source: str | None = None  # where the re-derived tokens came from: header | skill | solution
    quarantine_key: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _from_header(rt: Runtime, row: BlockRow) -> tuple[list[int], dict[str, Any]] | None:
    """The damaged object's tokens (authentic when its identity still hashes to the id, since the id commits to
    them) and metadata: the header's own only when its signature still verifies under the deployment key (only the
    payload was damaged); otherwise the catalogue's, so that repair never re-signs metadata someone rewrote."""
    try:
        with rt.blocks.objects.open(block_key(row.fingerprint, row.id)) as stream:
            head = read_header(stream, rt.blocks.keyring)
    except (StoreError, OSError, ValueError):
        return None
    if head.block_id != row.id or head.identity.block_id() != row.id:
        return None
    key = rt.settings.block_key_bytes
    header_block = Block(head.block_id, head.identity, b"", head.meta, head.hmac, head.format_version)
    if key is not None and signature_status(header_block, key) == "signed":
        meta = {k: v for k, v in head.meta.items() if k != "probe"}
    else:
        meta = {**dict(row.meta or {}), "source": row.source}
    return list(head.identity.tokens), meta


def _from_catalogue(rt: Runtime, row: BlockRow, engine: GraftEngine) -> tuple[str, list[int], dict[str, Any]] | None:
    style = style_for(engine)
    if row.kind == "skill" and (row.source or {}).get("skill") == "instructions-prefix":
        text = instructions_prefix(style)
        return "skill", tokens_of(engine, text, first=True), {"text": text, "source": row.source}
    if row.kind == "solution":
        with rt.session() as s:
            problem = solved_problem_of_block(s, block_id=row.id)
            if problem is None:
                return None
            outcome = dict(problem.outcome or {})
            program = problem.solution if outcome.get("route") == "reference" else verified_program(
                s, problem_id=problem.id)
            question, answer = problem.question, outcome.get("answer")
        if program is None or answer is None:
            return None
        skill = ensure_skill(rt, engine, style)
        tokens, text = solution_tokens(engine, style, skill, question, program, str(answer))
        return "solution", tokens, {"text": text, "question": question, "answer": str(answer),
                                    "skill_block": skill.block_id,
                                    "probe": {"tokens": tokens_of(engine, recurrence_query(style))}}
    return None


def _rederive(rt: Runtime, row: BlockRow, tokens: list[int], meta: dict[str, Any], engine: GraftEngine) -> bool:
    """Capture `tokens` again and replace the object if the new block has the row's id."""
    if engine.fingerprint.id != row.fingerprint:
        return False
    probe = meta.get("probe", {}).get("tokens") or probe_query(engine)  # the catalogue's solution probe, or ours
    snapshot, reference = capture_with_reference(engine, tokens, probe, continuation=0)
    fresh_meta = {k: v for k, v in meta.items() if k not in ("probe",)} | {
        "probe": {"tokens": list(probe), "reference_sha256": reference.sha256()},
        "repaired_at": utcnow().isoformat()}
    block = snapshot_to_block(snapshot, kind=row.kind, meta=fresh_meta, key=rt.settings.block_key_bytes)
    if block.block_id != row.id:
        log.warning("repair.other_id", block_id=row.id, rederived=block.block_id)
        return False
    # atomic, read back verified (else the old bytes stay), under the row's lock: an evicted block is never
    # written back, and the row's bytes follow the object
    return rewrite_under_row_lock(rt.session, rt.blocks, row.id, lambda: rt.blocks.replace(block).size)


def repair_block(rt: Runtime, block_id: str, *, model: str | None = None,
                 engine: GraftEngine | None = None) -> RepairResult:
    """Repair one catalogued block (see the module docstring); LookupError when it is not catalogued."""
    with rt.session() as s:
        row = get_block(s, block_id=block_id)
        if row is None:
            raise LookupError(f"no catalogued block {block_id}")
        s.expunge(row)
    if row.evicted_at is not None:  # its object deleted by design: nothing to repair, never written back
        return RepairResult(block_id, "evicted", "the block was evicted; a deposit of the same content restores it")
    try:
        rt.blocks.get(row.fingerprint, row.id, use_cache=False)
    except BlockKeyMissingError as exc:  # not damaged: readable by whoever holds that key; left as it is
        return RepairResult(block_id, "key_missing", f"{exc}; configure that key (or rekey where it is held)")
    except UNREADABLE as exc:
        damage = f"{type(exc).__name__}: {exc}"
    else:
        with rt.session() as s:
            set_quarantined(s, block_id=block_id, quarantined=False)
        return RepairResult(block_id, "intact", "the object verifies (hash, id, fingerprint, signature)")
    engine = engine or rt.engine(model)
    derived = _from_header(rt, row)
    attempts = [("header", *derived)] if derived is not None else []
    from_catalogue = _from_catalogue(rt, row, engine)
    if from_catalogue is not None:
        attempts.append(from_catalogue)
    for source, tokens, meta in attempts:
        try:
            rederived = _rederive(rt, row, tokens, meta, engine)
        except (EngineError, StoreError, ValueError) as exc:  # e.g. tokens that do not fit this window
            log.warning("repair.attempt_failed", block_id=block_id, source=source, error=str(exc))
            continue
        if rederived:
            with rt.session() as s:
                set_quarantined(s, block_id=block_id, quarantined=False)
            log.warning("repair.rederived", block_id=block_id, source=source, damage=damage)
            return RepairResult(block_id, "rederived", damage, source=source)
    with rt.session() as s:
        if (now := get_block(s, block_id=block_id)) is not None and now.evicted_at is not None:
            return RepairResult(block_id, "evicted", damage + "; evicted while it was being repaired")
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    key = rt.blocks.quarantine(row.fingerprint, row.id, stamp=stamp)
    with rt.session() as s:
        set_quarantined(s, block_id=block_id, quarantined=True)
    log.warning("repair.quarantined", block_id=block_id, damage=damage, key=key)
    return RepairResult(block_id, "quarantined", damage + "; its content could not be re-derived here",
                        quarantine_key=key)
