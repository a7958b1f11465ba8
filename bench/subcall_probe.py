"""Whether a prompt's grid chunks fed as several smaller llama_decode calls ("sub-calls" of B tokens on the same
positions and sequence) compute the same bytes as one call per chunk: the SHA-256 of the last row's logits, of a
few greedy continuation steps' logits and of the sequence's saved state, in the serving context shape (a KV stream
per sequence, several slots; the prompt in slot 1). The whole-chunk reference is computed twice in fresh contexts
(the control). With --step-times: the time of each BatchCore step while a 2,000-token prompt joins beside a
decoding sequence, per step budget (what a decoder waits per token). docs/ENGINE.md, "Prefill beside decoders",
has the figures.

    python -m bench.subcall_probe --model smollm2-135m --flash-attn off --chunk 64 --budgets 8,16,32 --json
    python -m bench.subcall_probe --step-times --n-ctx 2816 --budgets 0,4,8,16,32
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from dataclasses import dataclass
from typing import Any

from engine.batching import BatchCore, SequenceJob
from engine.graft import EngineConfig, GraftEngine
from engine.sampling import SamplingParams
from engine.texts import sample_tokens
from workers.logs import configure_logging

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


def step_times(engine: GraftEngine, budget: int, prompt: int = 2000) -> dict[str, Any]:
    """A sequence decoding (60-token prompt, sampled), then a `prompt`-token one joining (capturing its state at
    the last 256-token boundary, as the prompt cache does): the time of each step until that prompt is prefilled."""
    d = SequenceJob(tokens=tuple(sample_tokens(engine, 60, start=1)),
                    params=SamplingParams(max_tokens=400, temperature=0.9, seed=5))
    p = SequenceJob(tokens=tuple(sample_tokens(engine, prompt, start=7)), params=SamplingParams(max_tokens=1),
                    captures=((prompt - 1) // 256 * 256,))
    with engine.open_batch_context(2) as ctx:
        core = BatchCore(engine, ctx, step_tokens=budget)
        core.join(d)
        for _ in range(5):
            core.step()
        core.join(p)
        ms: list[float] = []
        while 1 in core.active and core.active[1].cuts:
            t0 = time.perf_counter()
            core.step()
            ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    return {"budget": budget, "steps": len(ms), "p50_ms": round(statistics.median(ms), 1),
            "p90_ms": round(ms[int(0.9 * len(ms))], 1), "p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1),
            "max_ms": round(ms[-1], 1), "prefill_s": round(sum(ms) / 1000, 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--flash-attn", choices=("on", "off"), default="off")
    p.add_argument("--budgets", default="16,32,64,128")
    p.add_argument("--lengths", default="300,700")
    p.add_argument("--chunk", type=int, default=64, help="the grid's prefill_chunk (the serving default: 64)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--step-times", action="store_true", help="step times behind a 2,000-token prompt instead")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    configure_logging()  # KVGRAFT_LOG_LEVEL (WARNING), on stderr: stdout holds the record alone
    config = EngineConfig(n_ctx=a.n_ctx, flash_attn=a.flash_attn == "on", threads=a.threads, prefill_chunk=a.chunk)
    budgets = tuple(int(x) for x in a.budgets.split(","))
    with GraftEngine.load(a.model, config) as engine:
        result: Any = ([step_times(engine, b) for b in budgets] if a.step_times
                       else probe(engine, tuple(int(x) for x in a.lengths.split(",")), budgets))
    print(json.dumps(result, indent=None if a.json else 2))


if __name__ == "__main__":
    main()
