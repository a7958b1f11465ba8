"""`kvgraft bench batch-probe`: which llama.cpp configurations keep a sequence's logits byte-identical when it is
decoded in one llama_decode call beside other sequences, and what batching gains there.

For each configuration (flash attention on/off, a KV stream per sequence or one unified KV, the thread count) and
each prompt set, every sequence is first computed alone in a one-sequence context: its prompt prefilled on the
absolute grid, then greedy decode steps one token at a time, the SHA-256 of every logits row kept. The same
sequences are then computed together in one multi-sequence context, fed the same tokens, under three
compositions: every step one call over all sequences (`all`), calls over a changing subset of 1..S sequences
(`ragged`: row counts and sequence-id gaps change from call to call), and one sequence's prefill chunks in the
same calls as the others' decode rows (`prefill_beside`). Each position's digest is compared with the solo one, and
each sequence's state bytes after its prefill with the one-sequence context's (`state_equal`). Timing: the
median batched step against the sum of the solo steps it replaces.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from engine.graft import EngineConfig, GraftEngine
from engine.native import ContextConfig, DecodeRow, LlamaContext, LlamaModel
from engine.texts import sample_tokens
from workers.settings import load_settings

Progress = Callable[[str], None] | None

PROMPT_SETS = {"short": (9, 14, 19, 23, 27, 31, 34, 37), "long": (240, 380, 520, 660, 800, 900, 1000, 1080)}
COMPOSITIONS = ("all", "ragged", "prefill_beside")


_SETTINGS = {"flash_attn": {"on": (True,), "off": (False,), "both": (False, True)},
             "kv": {"streams": (False,), "unified": (True,), "both": (False, True)}}


def probe_configs(flash_attn: str = "both", kv: str = "both") -> tuple[tuple[bool, bool], ...]:
    """The (flash attention, unified KV) pairs to probe from the CLI's words: on/off/both, streams/unified/both."""
    chosen = []
    for option, word in (("flash_attn", flash_attn), ("kv", kv)):
        if word not in _SETTINGS[option]:
            raise ValueError(f"--{option.replace('_', '-')} takes {', '.join(_SETTINGS[option])}, not {word!r}")
        chosen.append(_SETTINGS[option][word])
    return tuple((fa, unified) for unified in chosen[1] for fa in chosen[0])


@dataclass(frozen=True)
class BatchProbeRequest:
    model: str | None = None
    prompt_sets: tuple[str, ...] = ("short", "long")
    steps: int = 8
    chunk: int = 64  # the prefill grid (the serving default)
    threads: tuple[int, ...] = ()  # default: the engine's thread count
    configs: tuple[tuple[bool, bool], ...] = probe_configs()  # (flash attention, unified KV)


@dataclass(frozen=True)
class SoloRun:
    state: bytes
    tokens: tuple[int, ...]  # the greedy tokens fed at each step
    digests: tuple[str, ...]  # first generated position (from the prefill), then one per step
    step_ms: tuple[float, ...]


def _sha(row: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(row, dtype=np.float32).tobytes()).hexdigest()


def _grid(n: int, chunk: int) -> list[tuple[int, int]]:
    return [(a, min(n, a + chunk)) for a in range(0, n, chunk)]


def _prefill(ctx: LlamaContext, prompt: Sequence[int], chunk: int, seq_id: int) -> np.ndarray:
    cuts = _grid(len(prompt), chunk)
    for a, b in cuts:
        ctx.decode(prompt[a:b], pos0=a, seq_id=seq_id, outputs=[b - a - 1] if (a, b) == cuts[-1] else ())
    return ctx.logits_row(cuts[-1][1] - cuts[-1][0] - 1)


def solo(model: LlamaModel, cfg: ContextConfig, prompt: Sequence[int], chunk: int, steps: int) -> SoloRun:
    with LlamaContext(model, cfg) as ctx:
        logits = _prefill(ctx, prompt, chunk, 0)
        state = ctx.state_bytes(0)
        digests, tokens, times = [_sha(logits)], [], []
        for i in range(steps):
            tok = int(np.argmax(logits))
            t0 = time.perf_counter()
            ctx.decode([tok], pos0=len(prompt) + i, outputs=[0])
            times.append((time.perf_counter() - t0) * 1000)
            logits = ctx.logits_row(0)
            tokens.append(tok)
            digests.append(_sha(logits))
    return SoloRun(state, tuple(tokens), tuple(digests), tuple(times))


def _subset(call: int, pending: list[int]) -> list[int]:
    """`ragged`: call k takes 1 + k mod len(pending) of the pending sequences, starting at a rotating offset."""
    size = 1 + call % len(pending)
    start = (call * 3) % len(pending)
    return sorted((pending * 2)[start:start + size])


def batched(model: LlamaModel, cfg: ContextConfig, prompts: Sequence[Sequence[int]], refs: Sequence[SoloRun],
            chunk: int, composition: str) -> dict[str, Any]:
    n = len(prompts)
    equal = total = 0
    state_equal = 0
    step_ms: list[float] = []
    solo_ms: list[float] = []
    with LlamaContext(model, cfg) as ctx:
        late = n - 1 if composition == "prefill_beside" else None
        for s in range(n):
            if s == late:
                continue
            total += 1
            equal += _sha(_prefill(ctx, prompts[s], chunk, s)) == refs[s].digests[0]
            state_equal += ctx.state_bytes(s) == refs[s].state
        done = [0] * n  # steps fed per sequence
        late_cuts = _grid(len(prompts[late]), chunk) if late is not None else []
        call = 0
        while True:
            pending = [s for s in range(n) if s != late and done[s] < len(refs[s].tokens)]
            if late is not None and not late_cuts:
                pending = [s for s in range(n) if done[s] < len(refs[s].tokens)]
            if not pending and not late_cuts:
                break
            chosen = _subset(call, pending) if composition == "ragged" and pending else pending
            rows = [DecodeRow(refs[s].tokens[done[s]], len(prompts[s]) + done[s], s) for s in chosen]
            prefill_cut = late_cuts.pop(0) if late_cuts else None
            if prefill_cut is not None:
                a, b = prefill_cut
                rows += [DecodeRow(int(t), a + i, late, logits=(b == len(prompts[late]) and i == b - a - 1))
                         for i, t in enumerate(prompts[late][a:b])]
            t0 = time.perf_counter()
            ctx.decode_rows(rows)
            elapsed = (time.perf_counter() - t0) * 1000
            if prefill_cut is None and len(chosen) == n:
                step_ms.append(elapsed)
                solo_ms.append(sum(refs[s].step_ms[done[s]] for s in chosen))
            for i, s in enumerate(chosen):
                done[s] += 1
                total += 1
                equal += _sha(ctx.logits_row(i)) == refs[s].digests[done[s]]
            if prefill_cut is not None and prefill_cut[1] == len(prompts[late]):
                total += 1
                equal += _sha(ctx.logits_row(len(rows) - 1)) == refs[late].digests[0]
                state_equal += ctx.state_bytes(late) == refs[late].state
            call += 1
    record: dict[str, Any] = {"positions_equal": equal, "positions": total, "states_equal": state_equal,
                              "states": n}
    if step_ms:
        record |= {"batched_step_ms": round(statistics.median(step_ms), 2),
                   "solo_steps_ms": round(statistics.median(solo_ms), 2),
                   "speedup": round(statistics.median(solo_ms) / statistics.median(step_ms), 2)}
    return record


def run_batch_probe(request: BatchProbeRequest, progress: Progress = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    settings = load_settings()
    engine = GraftEngine.load(request.model, EngineConfig(n_ctx=2048, prefill_chunk=request.chunk,
                                                          gpu_layers=settings.gpu_layers),
                              cache_dir=settings.cache_dir)
    results = []
    try:
        for name in request.prompt_sets:
            lengths = PROMPT_SETS[name]
            prompts = [sample_tokens(engine, n, start=3 * i) for i, n in enumerate(lengths)]
            per_seq = max(256, -(-(max(lengths) + request.steps + 1) // 256) * 256)
            for threads in request.threads or (engine.config.threads,):
                for flash_attn, unified in request.configs:
                    say(f"{name} prompts, flash attention {'on' if flash_attn else 'off'}, "
                        f"{'unified KV' if unified else 'a KV stream per sequence'}, {threads} threads")
                    base = replace(engine.config.context(), n_ctx=per_seq, threads=threads, flash_attn=flash_attn)
                    refs = [solo(engine.model, base, p, request.chunk, request.steps) for p in prompts]
                    multi = replace(base, n_ctx=(per_seq * len(prompts)) if not unified else per_seq * len(prompts),
                                    n_seq_max=len(prompts), kv_unified=unified)
                    row: dict[str, Any] = {"prompts": name, "lengths": list(lengths), "threads": threads,
                                           "flash_attn": flash_attn, "kv": "unified" if unified else "streams"}
                    for composition in COMPOSITIONS:
                        row[composition] = batched(engine.model, multi, prompts, refs, request.chunk, composition)
                    results.append(row)
    finally:
        engine.close()
    return {"benchmark": "batch-probe", "model": engine.name, "steps": request.steps, "chunk": request.chunk,
            "results": results}
