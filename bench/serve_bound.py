"""`kvgraft bench serve-bound`: the most output tokens/s kvgraft's schedule could serve one level of `kvgraft bench
serve-load`'s workload at (that level run alone on a fresh pod: `serve-load --concurrency C`) with each model's
kernels on this machine, measured in-process, for the issue's throughput targets.

On a CPU every computation of a process shares the same cores, so no schedule overlaps prefill with decoding:
the level's time is at least its prefill work plus its decode work. Prefill work: each request's chat prompt
prefilled alone on the serving grid in a one-sequence context (whole chunks, flash attention as served, after a
warm-up call), less the prefix it could restore from an earlier request of its team at a grid boundary (the
prompt cache at its best within the level; levels run before it on the same pod could leave more). Decode work:
the requests' `max_tokens` summed (no answer is longer), each token at the cost of one row of a decode call of
`rows` rows 16 cells deep (the fastest of a few calls; more cells cost more). Aggregate output tokens/s = output
tokens / time, and it grows with the output tokens, so the summed caps give the bound. It bounds schedules that
decode in calls of their own, as kvgraft's does; one that puts decode rows into a prompt's prefill call (as
llama-server's mixed batches do) pays about a prefill token per row instead, which `max_tokens_per_s_decode_free`
bounds as well. Batching several prompts' prefill into one call is not counted: with the weights' kernels here a
longer call changes a token's cost by a few percent, which the record's `prefill_chunk_gain` measures as 512-token
calls against the grid's for the first long prompt."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bench.serve_load import WORKLOADS, ServeLoadBenchRequest, workload
from engine.graft import GraftEngine
from engine.native import DecodeRow
from engine.prepare import file_type_name
from engine.stepcost import fastest_ms
from engine.texts import sample_tokens
from workers.serving.chat import chat_prompt
from workers.settings import engine_config, load_settings

Progress = Callable[[str], None] | None

@dataclass(frozen=True)
class ServeBoundRequest:
    models: tuple[str, ...] = ("smollm2-135m", "smollm2-135m-q8_0")
    concurrency: int = 8
    requests: int | None = None  # default the concurrency, at least 4 (as serve-load)
    workload: str = "specified"
    rows: int | None = None  # rows of the measured decode call (default the concurrency)
    threads: int | None = None


def _shared_prefix(a: Sequence[int], b: Sequence[int], grid: int) -> int:
    """The longest common prefix of a and b, cut down to the grid (where a stored prefix can end)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n // grid * grid


def restorable_starts(prompts: Sequence[Sequence[int]], teams: Sequence[str], grid: int) -> list[int]:
    """Where each prompt's prefill could start: the longest prefix, cut to the grid, it shares with an earlier
    prompt of the same team (a team restores only its own prefixes)."""
    return [max([_shared_prefix(p, prompts[j], grid) for j in range(i) if teams[j] == teams[i]] + [0])
            for i, p in enumerate(prompts)]


def _prefill_s(engine: GraftEngine, prompts: Sequence[Sequence[int]], starts: Sequence[int]) -> float:
    """Seconds to prefill each prompt from its start (the restorable prefix skipped) on the grid, one at a time,
    after one untimed call (the weights paged in)."""
    total = 0.0
    with engine.open_context() as ctx:
        engine.prefill(ctx, prompts[0][:engine.config.prefill_chunk], origin=0)
        for tokens, start in zip(prompts, starts, strict=True):
            ctx.clear()
            if start:  # the restored prefix's cells, computed outside the timing (a restore costs no compute)
                engine.prefill(ctx, tokens[:start], origin=0)
            t0 = time.perf_counter()
            engine.prefill(ctx, tokens[start:], pos0=start, origin=0)
            total += time.perf_counter() - t0
    return total


def _chunk_gain(engine: GraftEngine, tokens: Sequence[int]) -> float:
    """Prefill time of `tokens` in grid calls over the same in 512-token calls (above 1: longer calls are faster)."""
    times = []
    for step in (engine.config.prefill_chunk, min(512, engine.config.n_batch)):
        with engine.open_context() as ctx:
            t0 = time.perf_counter()
            for a, b in engine.grid(0, len(tokens), 0, step=step):
                ctx.decode(tokens[a:b], pos0=a)
            times.append(time.perf_counter() - t0)
    return round(times[0] / times[1], 3)


def _decode_row_ms(engine: GraftEngine, rows: int) -> float:
    """Milliseconds per row of a decode call of `rows` rows (one per sequence, 16 cells deep): the fastest of a few
    calls (engine.stepcost.fastest_ms)."""
    prompt = sample_tokens(engine, 16)
    with (engine.open_batch_context(rows) if rows > 1 else engine.open_context()) as ctx:
        for s in range(rows):
            ctx.decode(prompt, pos0=0, seq_id=s)
        return round(fastest_ms(ctx, [DecodeRow(prompt[-1], 16, s, True) for s in range(rows)]) / rows, 3)


def run_serve_bound(request: ServeBoundRequest, progress: Progress = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    if request.workload not in WORKLOADS:
        raise ValueError(f"--workload takes {', '.join(WORKLOADS)}, not {request.workload!r}")
    if request.concurrency < 1 or not request.models:
        raise ValueError("need a concurrency of at least 1 and a model")
    prompt_range, output_range = WORKLOADS[request.workload]
    shape = ServeLoadBenchRequest(prompt_tokens=prompt_range, max_tokens=output_range, workload=request.workload)
    settings = load_settings()
    rows = request.rows or request.concurrency
    n = request.requests or max(4, request.concurrency)
    record: dict[str, Any] = {"benchmark": "serve-bound", "workload": request.workload, "concurrency":
                              request.concurrency, "requests": n, "decode_rows": rows, "models": {}}
    for model in request.models:
        config = engine_config(settings, serving=True, n_ctx=4096)
        if request.threads:
            config = replace(config, threads=request.threads)
        with GraftEngine.load(model, config, cache_dir=settings.cache_dir) as engine:
            reqs = workload(lambda text, e=engine: len(e.tokenize(text)), n, shape, request.concurrency)
            prompts = [list(chat_prompt(engine, [(m["role"], m["content"]) for m in r.messages]).tokens)
                       for r in reqs]
            grid = engine.config.prefill_chunk
            starts = restorable_starts(prompts, [r.team for r in reqs], grid)
            say(f"{model}: prefill of {len(prompts)} prompts ({sum(map(len, prompts))} tokens)")
            prefill_s = _prefill_s(engine, prompts, starts)
            say(f"{model}: decode rows of 1 and {rows}")
            row_ms_1, row_ms_n = _decode_row_ms(engine, 1), _decode_row_ms(engine, rows)
            gain = _chunk_gain(engine, max(prompts, key=len))
            out_tokens = sum(r.max_tokens for r in reqs)
            computed = sum(len(p) - s for p, s in zip(prompts, starts, strict=True))
            best_s = prefill_s + out_tokens * row_ms_n / 1000
            one_row_s = prefill_s + out_tokens * row_ms_1 / 1000
            record["models"][model] = {
                "weights": file_type_name(engine.model), "prompt_tokens": sum(map(len, prompts)),
                "prompt_tokens_restorable": sum(starts), "prefill_tokens_computed": computed,
                "prefill_s": round(prefill_s, 4), "prefill_tokens_per_s": round(computed / prefill_s, 1),
                "prefill_chunk_gain": gain, "output_tokens_max": out_tokens,
                "decode_ms_per_row": {"1": row_ms_1, str(rows): row_ms_n},
                "bound_s": round(best_s, 4), "max_tokens_per_s": round(out_tokens / best_s, 2),
                "max_tokens_per_s_one_row": round(out_tokens / one_row_s, 2),
                "max_tokens_per_s_decode_free": round(out_tokens / prefill_s, 2)}
    return record
