"""The one graft check: restore a snapshot and prove it computes what a fresh computation computes.

Three callers use it against three references: the gate (`kvgraft gate`: a separate fresh computation), a deposit
(the captured prefill's own query), an attestation on another machine (a fresh computation there). Each builds a
`Reference` with `reference_run` (or `extend_reference` on a context it already holds) and calls `check_graft`:

1. restore the snapshot into a fresh context and re-capture the state: its bytes must equal the snapshot's payload
   (`recapture_equal`);
2. the Q-token probe query in one decode call: its logits must be SHA-256-equal to the reference's (`byte_exact`);
3. greedy continuation, one token per decode call (the path answers take): at each of `continuation` steps the
   token and the logits' SHA-256 must equal the reference's (`continuation_equal`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.graft import GraftEngine, KVSnapshot
from engine.logits import Divergence, LogitsRows, compare
from engine.native import LlamaContext

DEFAULT_CONTINUATION = 16


@dataclass(frozen=True)
class Reference:
    """What a correct graft must reproduce: the probe's logits, then the greedy continuation's tokens and the
    SHA-256 of the logits row each was chosen from."""

    probe: tuple[int, ...]
    rows: LogitsRows
    continuation_tokens: tuple[int, ...]
    continuation_sha256: tuple[str, ...]

    def sha256(self) -> str:
        return self.rows.sha256()


@dataclass(frozen=True)
class GraftCheck:
    divergence: Divergence  # the probe query, graft vs reference
    graft_sha256: str
    reference_sha256: str
    recapture_equal: bool
    recapture_detail: str
    continuation_equal: bool
    continuation_detail: str
    continuation_steps: int

    @property
    def byte_exact(self) -> bool:
        return self.divergence.byte_equal

    @property
    def passed(self) -> bool:
        return self.byte_exact and self.recapture_equal and self.continuation_equal

    def failures(self) -> list[str]:
        out = []
        d = self.divergence
        if not d.byte_equal:
            out.append(f"graft: {d.positions_equal}/{d.positions} query positions byte-equal "
                       f"(KL mean {d.kl_mean:.3g}, max {d.kl_max:.3g})")
        if not self.recapture_equal:
            out.append(f"recapture: {self.recapture_detail}")
        if not self.continuation_equal:
            out.append(f"continuation: {self.continuation_detail}")
        return out


def _row_sha256(row: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(row, dtype=np.float32).tobytes()).hexdigest()


def _continue(engine: GraftEngine, ctx: LlamaContext, last_row: np.ndarray, pos: int,
              steps: int) -> tuple[list[int], list[str]]:
    """Greedy decoding one token per call from `last_row` at `pos`: the tokens and the SHA-256 of each row they were
    chosen from (the first is `last_row` itself)."""
    tokens: list[int] = []
    digests: list[str] = []
    row = last_row
    for i in range(steps):
        if pos + i >= engine.config.n_ctx:
            break
        digests.append(_row_sha256(row))
        token = int(np.argmax(row))
        tokens.append(token)
        ctx.decode([token], pos0=pos + i, outputs=[0])
        row = ctx.logits_row(0)
    return tokens, digests


def extend_reference(engine: GraftEngine, ctx: LlamaContext, probe: Sequence[int], pos0: int, *,
                     continuation: int = DEFAULT_CONTINUATION) -> Reference:
    """Run the probe at `pos0` in `ctx` (which holds the prefix) and then the greedy continuation: the reference."""
    rows = engine.query(ctx, probe, pos0=pos0)
    tokens, digests = _continue(engine, ctx, rows.rows[-1], pos0 + len(probe), continuation)
    return Reference(tuple(int(t) for t in probe), rows, tuple(tokens), tuple(digests))


def reference_run(engine: GraftEngine, prefix: Sequence[int], probe: Sequence[int], *,
                  continuation: int = DEFAULT_CONTINUATION) -> Reference:
    """A fresh computation: prefill `prefix` on the grid, the probe, then the greedy continuation."""
    with engine.open_context() as ctx:
        engine.prefill(ctx, prefix)
        return extend_reference(engine, ctx, probe, len(prefix), continuation=continuation)


def capture_with_reference(engine: GraftEngine, tokens: Sequence[int], probe: Sequence[int], *,
                           continuation: int = DEFAULT_CONTINUATION) -> tuple[KVSnapshot, Reference]:
    """Capture [0, N) and then, in the same context, run the probe and the continuation: the reference comes from
    the very prefill that was captured (prefill on the grid, then the probe call, then one token per call)."""
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens)
        snapshot = engine.snapshot(ctx, tokens, n_query=len(probe))
        return snapshot, extend_reference(engine, ctx, probe, len(tokens), continuation=continuation)


def floor_holds(a: Reference, b: Reference) -> bool:
    """Two fresh computations of the same tokens agree byte for byte (probe and continuation): the configuration
    is deterministic, so a graft can be held to equality."""
    return compare(a.rows, b.rows).byte_equal and a.continuation_sha256 == b.continuation_sha256


def check_graft(engine: GraftEngine, snapshot: KVSnapshot, reference: Reference, *,
                payload_verified: bool = False) -> GraftCheck:
    """Restore `snapshot` into a context of `engine` (a pooled one: what answers graft into) and compare everything
    with `reference`, which was computed in fresh contexts."""
    with engine.pooled_context() as ctx:
        engine.restore(ctx, snapshot, payload_verified=payload_verified)
        recaptured = ctx.state_bytes()
        payload = bytes(snapshot.payload)
        recapture_equal = recaptured == payload
        if recapture_equal:
            recapture_detail = f"{len(payload)} bytes equal"
        else:
            first = next((i for i, (a, b) in enumerate(zip(recaptured, payload, strict=False)) if a != b),
                         min(len(recaptured), len(payload)))
            recapture_detail = (f"re-captured {len(recaptured)} bytes vs a {len(payload)}-byte payload, first "
                                f"difference at byte {first}")
        rows = engine.query(ctx, reference.probe, pos0=snapshot.pos_end)
        steps = len(reference.continuation_tokens)
        tokens, digests = _continue(engine, ctx, rows.rows[-1], snapshot.pos_end + len(reference.probe), steps)
    divergence = compare(reference.rows, rows)
    mismatch = next((i for i in range(steps) if i >= len(digests) or digests[i] != reference.continuation_sha256[i]
                     or tokens[i] != reference.continuation_tokens[i]), None)
    if mismatch is None:
        continuation_equal, continuation_detail = True, f"{steps} greedy tokens equal, logits SHA-equal at each"
    else:
        continuation_equal = False
        got = tokens[mismatch] if mismatch < len(tokens) else None
        continuation_detail = (f"step {mismatch} of {steps} differs (token {got} vs "
                               f"{reference.continuation_tokens[mismatch]})")
    return GraftCheck(divergence=divergence, graft_sha256=rows.sha256(), reference_sha256=reference.sha256(),
                      recapture_equal=recapture_equal, recapture_detail=recapture_detail,
                      continuation_equal=continuation_equal, continuation_detail=continuation_detail,
                      continuation_steps=steps)
