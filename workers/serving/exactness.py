"""When the prompt cache may be used, decided by measurement on this machine, not assumed.

Before the first served prompt of a fingerprint and profile, the composition check computes a probe prompt of a
few chunks twice fresh (the control: fresh computation must be reproducible here) and once composed: the first
chunks prefilled and captured, the block written and read back, restored into another context, the rest
prefilled on the same grid. The cache is used only if the composed logits are SHA-256-equal to the fresh ones.
A sliding-window model is never served from the cache past its window (masked cells are not restored exactly
with swa_full off)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import structlog

from engine.graft import GraftEngine
from workers.runtime import Runtime
from workers.seam import block_file_roundtrip

log = structlog.get_logger(__name__)

PROBE_TEXT = ("The harbour master logs each ship that enters: its name, its cargo, the hour and the berth. "
              "Ledgers from older years are kept in the tower room, bound in blue cloth. ")


@dataclass(frozen=True)
class CompositionCheck:
    exact: bool
    reproducible: bool  # fresh vs fresh (the control)
    fresh_sha256: str
    composed_sha256: str
    probe_tokens: int
    split_at: int


def _sha(engine: GraftEngine, tokens: list[int], *, split: int | None = None) -> str:
    if split is None:
        with engine.pooled_context() as ctx:
            return hashlib.sha256(engine.prefill_for_generation(ctx, tokens).tobytes()).hexdigest()
    with engine.pooled_context() as ctx:
        engine.prefill(ctx, tokens[:split])
        snapshot = engine.snapshot(ctx, tokens[:split], n_query=engine.config.prefill_chunk)
    stored = block_file_roundtrip(snapshot, kind="prefix")  # the bytes a prefix block carries, read back
    with engine.pooled_context() as ctx:
        engine.restore(ctx, stored, payload_verified=True)
        return hashlib.sha256(engine.prefill_for_generation(ctx, tokens[split:], pos0=split).tobytes()).hexdigest()


def composition_check(engine: GraftEngine) -> CompositionCheck:
    c = engine.config.prefill_chunk
    tokens: list[int] = []
    while len(tokens) < 2 * c + 7:
        tokens += engine.tokenize(PROBE_TEXT, add_special=not tokens)
    tokens = tokens[:2 * c + 7]
    fresh, control = _sha(engine, tokens), _sha(engine, tokens)
    composed = _sha(engine, tokens, split=2 * c)
    result = CompositionCheck(composed == fresh and fresh == control, fresh == control, fresh, composed,
                              len(tokens), 2 * c)
    log.info("serve.composition_checked", exact=result.exact, reproducible=result.reproducible,
             fingerprint=engine.fingerprint.id, chunk=c)
    return result


def cache_refusal(rt: Runtime, engine: GraftEngine, n_prompt: int) -> str | None:
    """Why the prompt cache must not serve this prompt here (None: it may)."""
    swa = engine.model.n_swa
    if swa and n_prompt > swa:
        return (f"sliding_window: the model attends over a window of {swa} tokens and the prompt is {n_prompt}; "
                "a prefix restored past the window is not exact with swa_full off")
    key = f"composition|{engine.fingerprint.id}|{engine.profile(engine.config.prefill_chunk).id}"
    check = rt.memo.get(key)
    if not isinstance(check, CompositionCheck):
        check = composition_check(engine)
        rt.memo[key] = check
    if not check.exact:
        return ("composition_not_exact: on this machine a restored prefix followed by the rest of the prompt "
                f"is not byte-equal to a fresh prefill (fresh {check.fresh_sha256[:12]}, composed "
                f"{check.composed_sha256[:12]}{'' if check.reproducible else ', and fresh is not reproducible'})")
    return None
