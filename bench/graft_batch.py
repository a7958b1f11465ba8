"""`kvgraft bench graft-batch`: recurring questions answered one at a time (what a graft worker does where batching is
off) against their answers decoded together (workers/flywheel/recurrence.py), on the same blocks in one run.

Blocks: `questions` states of `block_tokens` tokens of prose each (the size of a solution block: skill prefix,
question and solution), captured in a fresh context as a deposit does. Each question grafts one block, feeds the
recurrence query in one call and decodes a greedy answer of at most MAX_ANSWER_TOKENS. Arm `alone`: one
`generate_after_graft` per question, in turn. Arm `together/k`: batches of k (`decode_together`). Every answer of
every arm is compared with the alone arm, token for token, and every generated position's logits SHA-256 with the
same graft decoded alone in a one-sequence context. The `batch` check of this engine is run too: its `grafts_exact`
is whether a graft worker here would batch at all (flash attention on: a lone row past 512 cells takes another
attention path, so no).

Timings are wall seconds for the whole arm (restores included); the ratio is alone / arm on the same questions."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.batching import BatchCore, SequenceJob
from engine.graft import EngineConfig, GraftEngine
from engine.texts import sample_tokens
from workers.flywheel.prompts import recurrence_query, style_for, tokens_of
from workers.flywheel.recurrence import RecurrenceHit, answer_sampling, decode_alone, decode_together
from workers.serving.batch_check import batch_check
from workers.settings import load_settings

Progress = Callable[[str], None] | None


@dataclass(frozen=True)
class GraftBatchRequest:
    model: str | None = None
    questions: int = 8
    block_tokens: int = 580
    max_seqs: tuple[int, ...] = (2, 4, 8)
    flash_attn: bool = False
    threads: int | None = None
    check: bool = True  # run the engine's `batch` check (seconds on the tiny model, ~half a minute on SmolLM2)


def run_graft_batch(req: GraftBatchRequest, progress: Progress = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    threads = {"threads": req.threads} if req.threads else {}
    config = EngineConfig(n_ctx=max(1024, req.block_tokens + 256), flash_attn=req.flash_attn, **threads)
    with GraftEngine.load(req.model, config, cache_dir=load_settings().cache_dir) as engine:
        style = style_for(engine)
        query = tuple(tokens_of(engine, recurrence_query(style)))
        say(f"capturing {req.questions} blocks of {req.block_tokens} tokens")
        hits = [RecurrenceHit(f"q{i}", "", None, engine.capture(sample_tokens(engine, req.block_tokens, start=i),
                                                                n_query=len(query)), query)
                for i in range(req.questions)]
        params = answer_sampling(style)
        with engine.open_context() as ctx:  # the reference digests: each graft decoded alone, one-sequence context
            core = BatchCore(engine, ctx)
            reference = [core.run_all([(0, SequenceJob.grafted(h.snapshot, h.query, params, digests=True))])[0]
                         for h in hits]
        say("arm alone")
        t0 = time.perf_counter()
        alone = [decode_alone(engine, style, h) for h in hits]
        alone_s = time.perf_counter() - t0
        tokens = sum(len(d.generated.tokens) for d in alone)
        arms: list[dict[str, Any]] = [{"arm": "alone", "max_seqs": 1, "wall_s": round(alone_s, 3),
                                       "answers_per_s": round(len(hits) / alone_s, 2),
                                       "decode_tokens": tokens, "ratio_vs_alone": 1.0,
                                       "answers_equal": sum(a.generated.tokens == r.generated.tokens
                                                            for a, r in zip(alone, reference, strict=True)),
                                       "positions": None, "positions_equal": None}]
        for k in req.max_seqs:
            say(f"arm together/{k}")
            t0 = time.perf_counter()
            decoded = []
            for i in range(0, len(hits), k):
                decoded += decode_together(engine, style, hits[i:i + k], k)
            wall = time.perf_counter() - t0
            with engine.pooled_batch_context(k) as ctx:  # digests of the same batches (not timed)
                digested = []
                for i in range(0, len(hits), k):
                    digested += BatchCore(engine, ctx).run_all(
                        [(0, SequenceJob.grafted(h.snapshot, h.query, params, digests=True)) for h in hits[i:i + k]])
            pairs = [(r.generated.digests, d.generated.digests) for r, d in zip(reference, digested, strict=True)]
            arms.append({"arm": f"together/{k}", "max_seqs": k, "wall_s": round(wall, 3),
                         "answers_per_s": round(len(hits) / wall, 2),
                         "decode_tokens": sum(len(d.generated.tokens) for d in decoded),
                         "ratio_vs_alone": round(alone_s / wall, 2),
                         "answers_equal": sum(a.generated.tokens == d.generated.tokens
                                              for a, d in zip(alone, decoded, strict=True)),
                         "positions": sum(len(r) for r, _ in pairs),
                         "positions_equal": sum(sum(x == y for x, y in zip(r, d, strict=False)) for r, d in pairs)})
        verdict: dict[str, Any] | None = None
        if req.check:
            say(f"batch check of {max(req.max_seqs)} sequences")
            check = batch_check(engine, max(req.max_seqs))
            verdict = {"exact": check.exact, "pad_to": check.pad_to, "grafts": check.grafts,
                       "grafts_equal": check.grafts_equal, "grafts_exact": check.grafts_exact, "ms": check.ms,
                       "summary": check.summary()}
        return {"bench": "graft-batch", "model": engine.name, "fingerprint": engine.fingerprint.id,
                "flash_attn": req.flash_attn, "threads": engine.config.threads, "questions": req.questions,
                "block_tokens": req.block_tokens, "query_tokens": len(query), "arms": arms, "batch_check": verdict}
