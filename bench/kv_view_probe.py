"""What a decode call of several KV streams costs when their lengths differ, and whether a row's bytes depend on
what shares its call. llama.cpp gives every stream of a multi-stream ubatch the same KV view, padded to the
longest stream's cells (rounded up to 256), so a short sequence decoded beside a long one attends over the long
one's length. Measured here in the serving context shape (a KV stream per sequence): the median time of one decode
step of `rows` sequences, all short, one long and the others short (in one call, and in two calls: the long one
alone, then the short ones), all long, and one sequence alone at each length; and the SHA-256 of each row's logits
in the mixed call against the same row's in the split calls (a row's bytes must not depend on the view's padding
for splitting a step by length to keep answers exact; the long row, alone in the split step, also meets the
one-row kernel question). docs/ENGINE.md, "Decode steps of mixed lengths", has the
figures.

    python -m bench.kv_view_probe --model smollm2-135m --short 256 --long 2048 --rows 8 --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from typing import Any

from engine.graft import EngineConfig, GraftEngine
from engine.native import DecodeRow, LlamaContext
from engine.texts import sample_tokens
from workers.logs import configure_logging


class _Streams:
    """Slots 0..rows-1 of one multi-stream context, each filled to a length on the grid (refilled only when it
    changes), decoded at that length again and again (truncated back after each step)."""

    def __init__(self, engine: GraftEngine, ctx: LlamaContext, tokens: list[int]) -> None:
        self.engine, self.ctx, self.tokens = engine, ctx, tokens
        self.lengths: dict[int, int] = {}

    def fill(self, lengths: list[int]) -> None:
        for slot, n in enumerate(lengths):
            if self.lengths.get(slot) == n:
                continue
            self.ctx.seq_remove(slot)
            for a, b in self.engine.grid(0, n, 0):
                self.ctx.decode(self.tokens[a:b], pos0=a, seq_id=slot)
            self.lengths[slot] = n

    def step(self, lengths: list[int], calls: list[list[int]]) -> tuple[float, dict[int, str]]:
        """One decode step of every slot of `calls` (each inner list one llama_decode call): its milliseconds and
        each row's logits digest; then every slot truncated back to its length."""
        digests: dict[int, str] = {}
        t0 = time.perf_counter()
        for call in calls:
            self.ctx.decode_rows([DecodeRow(int(self.tokens[lengths[s]]), lengths[s], s) for s in call])
            for i, s in enumerate(call):
                digests[s] = hashlib.sha256(self.ctx.logits_row(i).tobytes()).hexdigest()
        ms = (time.perf_counter() - t0) * 1000
        for s in (s for call in calls for s in call):
            self.ctx.truncate(lengths[s], seq_id=s)
        return ms, digests


def run_probe(model: str, *, short: int, long: int, rows: int, reps: int, threads: int,
              flash_attn: bool) -> dict[str, Any]:
    if not 2 <= rows <= 16 or not 0 < short < long:
        raise ValueError("rows must be 2-16 and 0 < short < long")
    config = EngineConfig(n_ctx=-(-(long + 64) // 256) * 256, prefill_chunk=64, flash_attn=flash_attn,
                          threads=threads)
    cases = {
        "all_short_one_call": ([short] * rows, [list(range(rows))]),
        "one_long_one_call": ([long] + [short] * (rows - 1), [list(range(rows))]),
        "one_long_two_calls": ([long] + [short] * (rows - 1), [[0], list(range(1, rows))]),
        "all_long_one_call": ([long] * rows, [list(range(rows))]),
        "one_short_alone": ([short], [[0]]),
        "one_long_alone": ([long], [[0]]),
    }
    with GraftEngine.load(model, config) as engine, engine.open_batch_context(rows) as ctx:
        streams = _Streams(engine, ctx, sample_tokens(engine, long + 1))
        times: dict[str, list[float]] = {name: [] for name in cases}
        digests: dict[str, dict[int, str]] = {}
        for rnd in range(2):  # each case in both orders: a drift of the machine falls on every case alike
            order = list(cases.items()) if rnd == 0 else list(reversed(cases.items()))
            for name, (lengths, calls) in order:
                streams.fill(lengths)
                for _ in range(reps):
                    ms, got = streams.step(lengths, calls)
                    times[name].append(ms)
                    if digests.setdefault(name, got) != got:
                        raise RuntimeError(f"{name}: a row's logits changed between repeats of the same call")
        median = {name: round(statistics.median(t), 2) for name, t in times.items()}
        mixed, split = digests["one_long_one_call"], digests["one_long_two_calls"]
        return {
            "benchmark": "kv_view_probe", "model": engine.name, "fingerprint": engine.fingerprint.id,
            "threads": threads, "flash_attn": flash_attn, "short": short, "long": long, "rows": rows,
            "reps": 2 * reps, "median_ms": median,
            "split_over_mixed": round(median["one_long_two_calls"] / median["one_long_one_call"], 3),
            "mixed_over_all_short": round(median["one_long_one_call"] / median["all_short_one_call"], 3),
            # the short rows attend over the long view in the mixed call and over their own in the split one
            # (both calls of two rows or more); the long row is alone in the split step, so a weight type whose
            # one-row matmul takes another kernel (F32, F16, BF16: docs/ENGINE.md) differs there for that reason
            "short_rows_equal_mixed_vs_split": sum(mixed[s] == split[s] for s in mixed if s > 0),
            "short_rows_compared": rows - 1, "long_row_equal_mixed_vs_alone": mixed[0] == split[0],
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--short", type=int, default=256)
    parser.add_argument("--long", type=int, default=2048)
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--flash-attn", choices=("on", "off"), default="off")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    configure_logging()  # KVGRAFT_LOG_LEVEL (WARNING), on stderr: stdout holds the record alone
    record = run_probe(args.model, short=args.short, long=args.long, rows=args.rows, reps=args.reps,
                       threads=args.threads, flash_attn=args.flash_attn == "on")
    print(json.dumps(record, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
