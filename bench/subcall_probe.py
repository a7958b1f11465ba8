"""Whether a prompt's grid chunks fed as several smaller llama_decode calls ("sub-calls" of B tokens on the same
positions and sequence) compute the same bytes as one call per chunk: the SHA-256 of the last row's logits, of a
few greedy continuation steps' logits and of the sequence's saved state, in the serving context shape (a KV stream
per sequence, several slots; the prompt in slot 1). The whole-chunk reference is computed twice in fresh contexts
(the control). docs/ENGINE.md, "Prefill in sub-calls", has the figures.

    python -m bench.subcall_probe --model smollm2-135m --flash-attn off --chunk 64 --budgets 8,16,32 --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from engine.graft import EngineConfig, GraftEngine
from engine.texts import sample_tokens

SLOT = 1  # not slot 0: a sequence of a multi-slot context, as a joining one is
SLOTS = 4
STEPS = 4  # greedy continuation steps after the prompt


@dataclass(frozen=True)
class Digests:
    last_row: str
    state: str
    steps: tuple[str, ...]


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def run_prompt(engine: GraftEngine, tokens: tuple[int, ...], budget: int | None) -> Digests:
    """The prompt prefilled on the grid (each chunk in sub-calls of `budget` tokens; None: one call per chunk) in
    a fresh context of SLOTS streams, then STEPS greedy steps."""
    with engine.open_batch_context(SLOTS) as ctx:
        cuts = engine.grid(0, len(tokens), 0)
        for a, b in cuts:
            pieces = [(a, b)] if budget is None else engine.grid(a, b - a, a, step=budget)
            for p, q in pieces:
                last = q == len(tokens)
                ctx.decode(tokens[p:q], pos0=p, seq_id=SLOT, outputs=[q - p - 1] if last else ())
                if last:
                    row = ctx.logits_row(q - p - 1)
        last_row = _sha(row.tobytes())
        state = _sha(ctx.state_bytes(SLOT))
        steps = []
        pos = len(tokens)
        for _ in range(STEPS):
            ctx.decode([int(row.argmax())], pos0=pos, seq_id=SLOT, outputs=[0])
            row = ctx.logits_row(0)
            steps.append(_sha(row.tobytes()))
            pos += 1
    return Digests(last_row, state, tuple(steps))


def probe(engine: GraftEngine, lengths: tuple[int, ...], budgets: tuple[int, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"model": engine.name, "flash_attn": engine.config.flash_attn,
                           "prefill_chunk": engine.config.prefill_chunk, "threads": engine.config.threads,
                           "slots": SLOTS, "slot": SLOT, "steps": STEPS, "prompts": {}}
    for n in lengths:
        tokens = tuple(sample_tokens(engine, n, start=n))
        t0 = time.perf_counter()
        ref = run_prompt(engine, tokens, None)
        whole_ms = (time.perf_counter() - t0) * 1000
        row: dict[str, Any] = {"control_equal": run_prompt(engine, tokens, None) == ref,
                               "whole_ms": round(whole_ms, 1), "budgets": {}}
        for b in budgets:
            t0 = time.perf_counter()
            got = run_prompt(engine, tokens, b)
            row["budgets"][b] = {"last_row_equal": got.last_row == ref.last_row, "state_equal": got.state == ref.state,
                                 "steps_equal": sum(x == y for x, y in zip(got.steps, ref.steps, strict=True)),
                                 "ms": round((time.perf_counter() - t0) * 1000, 1)}
        out["prompts"][n] = row
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--flash-attn", choices=("on", "off"), default="off")
    p.add_argument("--budgets", default="16,32,64,128")
    p.add_argument("--lengths", default="300,700")
    p.add_argument("--chunk", type=int, default=64, help="the grid's prefill_chunk (the serving default: 64)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    config = EngineConfig(n_ctx=4096, flash_attn=a.flash_attn == "on", threads=a.threads, prefill_chunk=a.chunk)
    with GraftEngine.load(a.model, config) as engine:
        result = probe(engine, tuple(int(x) for x in a.lengths.split(",")),
                       tuple(int(x) for x in a.budgets.split(",")))
    print(json.dumps(result, indent=None if a.json else 2))


if __name__ == "__main__":
    main()
