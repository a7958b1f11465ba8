"""The few-shot instructions prefix as a `skill` block: deposited once per fingerprint, then grafted at [0, P)
before every solving prompt instead of being prefilled again."""

from __future__ import annotations

import time
from dataclasses import dataclass

import structlog

from engine.graft import GraftEngine, KVSnapshot
from workers.flywheel.deposit import deposit_tokens, probe_query
from workers.flywheel.prompts import PromptStyle, instructions_prefix, tokens_of
from workers.runtime import MemoSlot, Runtime
from workers.seam import block_to_snapshot, read_or_miss

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class GraftedPrefix:
    block_id: str
    snapshot: KVSnapshot
    n_tokens: int


SKILLS: MemoSlot[tuple[str, bool], GraftedPrefix] = MemoSlot("skills")  # by fingerprint and ChatML or not


def ensure_skill(rt: Runtime, engine: GraftEngine, style: PromptStyle) -> GraftedPrefix:
    """The instructions-prefix skill block of this engine, deposited on first use and read back verified."""
    cache_key = (engine.fingerprint.id, style.chatml)
    cached = rt.memo.get(SKILLS, cache_key)
    if cached is not None:
        return cached
    text = instructions_prefix(style)
    tokens = tokens_of(engine, text, first=True)
    source = {"skill": "instructions-prefix", "chatml": style.chatml}
    result = deposit_tokens(rt, engine, tokens=tokens, probe=probe_query(engine), kind="skill", text=text,
                            source=source, shared=True)
    block = read_or_miss(rt.blocks, result.fingerprint, result.block_id, purpose="skill")
    if block is None:  # a damaged skill object would wedge all solving: it is re-derivable, so deposit it again
        result = deposit_tokens(rt, engine, tokens=tokens, probe=probe_query(engine), kind="skill", text=text,
                                source=source, shared=True, replace=True)
        log.warning("skill.repaired", block_id=result.block_id)
        block = rt.blocks.get(result.fingerprint, result.block_id)
    skill = GraftedPrefix(result.block_id, block_to_snapshot(block), len(tokens))
    rt.memo.put(SKILLS, cache_key, skill)
    log.info("skill.ready", block_id=result.block_id, n_tokens=len(tokens))
    return skill


def measure_skill_saving(engine: GraftEngine, skill: GraftedPrefix) -> dict[str, float]:
    """Restoring the prefix block vs prefilling its tokens, in one process, side by side (ms)."""
    tokens = list(skill.snapshot.tokens)
    with engine.open_context() as ctx:
        t0 = time.perf_counter()
        engine.prefill(ctx, tokens)
        prefill_ms = (time.perf_counter() - t0) * 1000
    with engine.open_context() as ctx:
        t0 = time.perf_counter()
        engine.restore(ctx, skill.snapshot, payload_verified=True)
        graft_ms = (time.perf_counter() - t0) * 1000
    return {"skill_tokens": len(tokens), "skill_prefill_ms": round(prefill_ms, 2),
            "skill_graft_ms": round(graft_ms, 2)}
