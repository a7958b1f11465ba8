"""What a serving step costs on this machine, measured before traffic, and the prefill budget that keeps a decoding
completion's step within a chosen multiple of its step alone (KVGRAFT_SERVING_STEP_RATIO, docs/ENGINE.md "The
budget from measured costs").

With a joining prompt beside a decoder, one step is the decoder's call plus one sub-call of the prompt's chunk, so
the decoder's gap grows from `decode_ms` to `decode_ms + sub_call_ms[s]`. The sub-call is measured where a long
prompt's is dearest: deep in its context (its rows attend to every cell before them); the decode row is measured
shallow, where a chat's answer usually starts. Both in a one-sequence context of the engine's configuration, each
the fastest of a few calls (the cells each call adds removed again, so every repeat computes the same call): a
call can only be slowed, by other work on the machine or by a serving engine's completion it waits behind, so
the fastest is the one least disturbed. Only times are taken here: which sub-call sizes are exact is the `batch`
check's to decide, and it is asked about the budget this chooses."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.graft import GraftEngine
from engine.native import DecodeRow, LlamaContext
from engine.texts import sample_tokens

DECODE_DEPTH = 128  # cells before the measured decode row
SUB_CALL_DEPTH = 1024  # cells before the measured sub-calls (less where the context is smaller)
REPEATS = 5


@dataclass(frozen=True)
class StepCosts:
    """Milliseconds (the fastest of REPEATS calls) of one decode row at `decode_depth` and of a prefill sub-call of
    each size at `sub_call_depth`, on this machine now."""

    decode_depth: int
    sub_call_depth: int
    decode_ms: float
    sub_call_ms: dict[int, float]
    measure_ms: float  # the measurement itself (the prefill to the depth included)

    def step_ratio(self, size: int) -> float:
        """A decoder's step beside a sub-call of `size` tokens over its step alone."""
        return (self.decode_ms + self.sub_call_ms[size]) / max(self.decode_ms, 1e-3)  # (a clock's 0 ms)

    def budget(self, ratio: float) -> int:
        """The largest measured size whose step stays within `ratio` times the decode step alone; the smallest
        measured size where none does (a budget is still far cheaper for a decoder than a whole chunk)."""
        sizes = sorted(self.sub_call_ms)
        fitting = [s for s in sizes if self.step_ratio(s) <= ratio]
        return fitting[-1] if fitting else sizes[0]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepCosts:
        """The costs as_dict recorded (an attestation's profile)."""
        return cls(int(data["decode_depth"]), int(data["sub_call_depth"]), float(data["decode_ms"]),
                   {int(k): float(v) for k, v in data["sub_call_ms"].items()}, float(data["measure_ms"]))

    def as_dict(self) -> dict[str, object]:
        return {"decode_depth": self.decode_depth, "sub_call_depth": self.sub_call_depth,
                "decode_ms": self.decode_ms, "sub_call_ms": {str(k): v for k, v in sorted(self.sub_call_ms.items())},
                "measure_ms": self.measure_ms}


def fastest_ms(ctx: LlamaContext, rows: Sequence[DecodeRow]) -> float:
    """Milliseconds of the fastest of REPEATS decode calls of `rows`, the cells each call adds removed before the
    next (every repeat computes the same call; a call can only be slowed, so the fastest is the least disturbed)."""
    starts: dict[int, int] = {}
    for row in rows:
        starts[row.seq_id] = min(starts.get(row.seq_id, row.pos), row.pos)
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        ctx.decode_rows(rows)
        times.append((time.perf_counter() - t0) * 1000)
        for seq_id, pos in starts.items():
            ctx.truncate(pos, seq_id=seq_id)
    return min(times)


def measure_step_costs(engine: GraftEngine, sizes: Sequence[int]) -> StepCosts:
    """One decode row at DECODE_DEPTH and a sub-call of each of `sizes` at SUB_CALL_DEPTH (both less where the
    context is smaller), in a one-sequence context of the engine's configuration."""
    if not sizes or min(sizes) <= 0:
        raise ValueError(f"sub-call sizes must be positive, not {list(sizes)}")
    t0 = time.perf_counter()
    room = engine.config.n_ctx - max(sizes) - 1
    deep = max(1, min(SUB_CALL_DEPTH, room))
    shallow = max(1, min(DECODE_DEPTH, deep))
    tokens = sample_tokens(engine, deep + max(sizes), start=3)
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens[:shallow], origin=0)
        decode_ms = round(fastest_ms(ctx, [DecodeRow(tokens[shallow], shallow, 0, True)]), 3)
        engine.prefill(ctx, tokens[shallow:deep], pos0=shallow, origin=0)
        sub = {s: round(fastest_ms(ctx, [DecodeRow(t, deep + i, 0, False)
                                         for i, t in enumerate(tokens[deep:deep + s])]), 3) for s in sorted(set(sizes))}
    return StepCosts(shallow, deep, decode_ms, sub, round((time.perf_counter() - t0) * 1000, 1))
