"""`kvgraft bench context`: a paged context store many times larger than the serving window.

Needles (facts with numbers) are planted at depths spread through a haystack of at least `ratio` x the window,
deposited as window-sized document blocks; each needle question is routed to one block, restored into the small
serving context and answered. Side by side: restore of a block (cold read) vs re-prefill of the same tokens for
block sizes 750-6000 tokens, a negative control (asking for a needle while the window holds another block), and
the serving process's peak memory with a 10x and an 80x store."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.graft import EngineConfig, GraftEngine
from engine.texts import passages, sample_tokens
from store.blockfile import read_block_file, write_block_file
from workers.environment import environment
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.documents import answer_from_block, deposit_document
from workers.runtime import open_runtime
from workers.seam import block_to_snapshot, snapshot_to_block
from workers.settings import load_settings

COLOURS = ("amber", "cobalt", "crimson", "emerald", "ivory", "jade", "scarlet", "violet", "saffron", "teal")
ASK = AnswerParams(use_direct=False, use_transfer=False)


@dataclass(frozen=True)
class ContextBenchRequest:
    window: int = 512
    ratio: int = 80
    needles: int = 8
    block_sizes: tuple[int, ...] = (750, 1500, 3000, 6000)
    runs: int = 3
    model: str | None = None
    gate_fraction: float = 0.1


def needle(i: int) -> tuple[str, str, str]:
    """(sentence, question, answer) of needle i."""
    colour, code = COLOURS[i % len(COLOURS)], str(1000 + (7919 * (i + 3)) % 9000)
    return (f"The access code for the {colour} vault is {code}.",
            f"What is the access code for the {colour} vault?", code)


def haystack(engine: GraftEngine, total_tokens: int, n_needles: int, n_docs: int) -> list[tuple[str, str]]:
    """`n_docs` documents of prose (about `total_tokens` tokens in all, by this model's tokenizer) with needles
    at spread depths."""
    paras = passages()
    mean_tokens = statistics.mean(len(engine.tokenize(p, add_special=False)) for p in paras)
    per_doc = max(1, round(total_tokens / n_docs / mean_tokens))
    docs = []
    placed = 0
    for d in range(n_docs):
        # every passage is numbered, so no two blocks of the store hold the same text (one block id each)
        body = [f"Record {d}.{k}. {paras[(d * 5 + k) % len(paras)]}" for k in range(per_doc)]
        while placed < n_needles and placed * n_docs // n_needles == d:
            depth = (placed * 37) % 100 / 100  # spread through the document
            body.insert(int(depth * len(body)), needle(placed)[0])
            placed += 1
        docs.append((f"haystack-{d:02d}.txt", "\n\n".join(body)))
    return docs


def _probe_memory(settings_env: dict[str, str], questions: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.context_probe", json.dumps(questions)], capture_output=True,
                         text=True, timeout=900, env=dict(os.environ) | settings_env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _drop_cache(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        return True
    except (OSError, AttributeError):
        return False


def _restore_vs_prefill(model: str | None, sizes: tuple[int, ...], runs: int, tmp: Path) -> list[dict[str, Any]]:
    settings = load_settings()
    engine = GraftEngine.load(model or settings.model, EngineConfig(n_ctx=max(8192, max(sizes) + 256)),
                              cache_dir=settings.cache_dir)
    rows = []
    try:
        for n in sizes:
            tokens = sample_tokens(engine, n + 1, start=n % 7)
            prefix, nxt = tokens[:n], tokens[n]
            path = tmp / f"sized-{n}.kvg"
            write_block_file(snapshot_to_block(engine.capture(prefix, n_query=1), kind="document"), path)
            restore, prefill, cold = [], [], True
            for _ in range(runs):
                cold = _drop_cache(path) and cold
                with engine.open_context() as ctx:
                    t0 = time.perf_counter()
                    engine.restore(ctx, block_to_snapshot(read_block_file(path)), payload_verified=True)
                    ctx.decode([nxt], pos0=n, outputs=[0])
                    restore.append((time.perf_counter() - t0) * 1000)
                with engine.open_context() as ctx:
                    t0 = time.perf_counter()
                    engine.prefill(ctx, prefix)
                    ctx.decode([nxt], pos0=n, outputs=[0])
                    prefill.append((time.perf_counter() - t0) * 1000)
            r, p = statistics.median(restore), statistics.median(prefill)
            rows.append({"block_tokens": n, "block_bytes": path.stat().st_size, "restore_ms": round(r, 2),
                         "reprefill_ms": round(p, 2), "speedup": round(p / r, 1),
                         "reads": "cold (posix_fadvise DONTNEED before each read)" if cold else "warm"})
    finally:
        engine.close()
    return rows


def run_context_bench(request: ContextBenchRequest, progress: Callable[[str], None] | None = None
                      ) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    model = request.model or load_settings().model
    tmp = Path(tempfile.mkdtemp(prefix="kvgraft-bench-context-"))
    env = {"KVGRAFT_DATA_DIR": str(tmp / "data"), "KVGRAFT_WINDOW_TOKENS": str(request.window),
           "KVGRAFT_MODEL": model, "KVGRAFT_DATABASE_URL": "", "KVGRAFT_STORE_URL": ""}
    env = {k: v for k, v in env.items() if v}
    with environment(env, unset=("KVGRAFT_DATABASE_URL", "KVGRAFT_STORE_URL", "KVGRAFT_BROKER_URL")):
        rt = open_runtime(load_settings())
        engine = rt.engine()
        target = request.ratio * request.window
        docs = haystack(engine, int(target * 1.05), request.needles, n_docs=max(8, request.ratio // 8))
        small_docs = max(1, len(docs) // 8)  # the first eighth is the 10x store
        questions = [needle(i)[1] for i in range(request.needles)]
        memory: dict[str, Any] = {}
        store_tokens = 0
        blocks: list[Any] = []
        for d, (name, text) in enumerate(docs):
            say(f"depositing {name} ({d + 1}/{len(docs)})")
            results = deposit_document(rt, engine, text=text, source=name, gate_fraction=request.gate_fraction,
                                       seed=d, shared=True)
            blocks += results
            store_tokens += sum(r.n_tokens for r in results)
            if d + 1 == small_docs:
                say("peak memory of a serving process, small store")
                memory["small_store"] = {"store_tokens": store_tokens,
                                         "ratio": round(store_tokens / request.window, 1)}
                memory["small_store"] |= _probe_memory(env, questions)
        say("peak memory of a serving process, full store")
        memory["full_store"] = {"store_tokens": store_tokens, "ratio": round(store_tokens / request.window, 1)}
        memory["full_store"] |= _probe_memory(env, questions)
        found, rows = 0, []
        for i, q in enumerate(questions):
            answer = answer_question(rt, q, params=ASK)
            ok = answer.route == "context" and needle(i)[2] in (answer.answer or "")
            found += ok
            holder = next(b.block_id for b in blocks if needle(i)[0] in _passage(rt, b.block_id))
            other = next(b.block_id for b in blocks if b.block_id != holder
                         and not any(needle(j)[0] in _passage(rt, b.block_id) for j in range(request.needles)))
            wrong_answer, _ = answer_from_block(rt, engine, rt.blocks.get(engine.fingerprint.id, other), q)
            rows.append({"question": q, "expected": needle(i)[2], "answer": answer.answer, "route": answer.route,
                         "block_id": answer.block_id, "routed_to_holder": answer.block_id == holder,
                         "found": ok, "decode_tokens": answer.decode_tokens,
                         "other_block_answer": wrong_answer,
                         "other_block_returns_needle": needle(i)[2] in (wrong_answer or "")})
        rt.close()
        unique = {b.block_id: b for b in blocks}
        if len(unique) != len(blocks):
            raise RuntimeError(f"the haystack repeated content: {len(blocks)} blocks, {len(unique)} distinct")
        say("restore vs re-prefill by block size")
        sized = _restore_vs_prefill(request.model, request.block_sizes, request.runs, tmp)
    small, full = memory["small_store"]["peak_rss_bytes"], memory["full_store"]["peak_rss_bytes"]
    return {"benchmark": "context", "model": model, "window_tokens": request.window,
            "store_tokens": store_tokens, "ratio": round(store_tokens / request.window, 1),
            "blocks": len(blocks), "gated_blocks": sum(b.gated for b in blocks),
            "needles_found": found, "needles_total": request.needles,
            "other_block_returns_needle": sum(r["other_block_returns_needle"] for r in rows),
            "needles": rows, "restore_vs_reprefill": sized, "memory": memory,
            "peak_memory_growth_pct": round((full / small - 1) * 100, 1)}


def _passage(rt: Any, block_id: str) -> str:
    from store.repository import get_block

    with rt.session() as s:
        row = get_block(s, block_id=block_id)
        return str((row.meta or {}).get("passage", "")) if row else ""
