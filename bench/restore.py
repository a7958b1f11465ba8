"""`kvgraft bench restore`: cold prefill vs restore from a kvgraft block file vs llama-cpp-python's own state
cache (Llama.save_state/load_state through LlamaDiskCache), each followed by one decoded token, side by side."""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from engine.graft import EngineConfig, GraftEngine
from engine.native import LlamaContext
from engine.texts import sample_tokens
from store.blockfile import read_block_file, write_block_file
from workers.seam import block_to_snapshot, snapshot_to_block

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class RestoreBenchRequest:
    model: str | None = None
    tokens: tuple[int, ...] = (500, 2000, 4000)
    runs: int = 5
    measure_memory: bool = True


def theoretical_kv_bytes_per_token(engine: GraftEngine) -> int:
    """f16 K and V for every layer and KV head: n_layer x n_head_kv x (key_len + value_len) x 2 bytes."""
    import llama_cpp

    m = engine.model
    n_head = llama_cpp.llama_model_n_head(m.handle)
    n_head_kv = llama_cpp.llama_model_n_head_kv(m.handle)
    arch = m.architecture
    key_len = int(m.meta(f"{arch}.attention.key_length") or m.n_embd // n_head)
    value_len = int(m.meta(f"{arch}.attention.value_length") or m.n_embd // n_head)
    return m.n_layer * n_head_kv * (key_len + value_len) * 2


def _median_ms(fn: Callable[[], Any], runs: int, setup: Callable[[], Any] | None = None,
               teardown: Callable[[Any], None] | None = None) -> tuple[float, Any]:
    times, last = [], None
    for _ in range(runs):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        last = fn() if arg is None else fn(arg)
        times.append((time.perf_counter() - t0) * 1000)
        if teardown:
            teardown(arg)
    return statistics.median(times), last


def _decode_one(engine: GraftEngine, ctx: LlamaContext, token: int, pos: int) -> np.ndarray:
    ctx.decode([token], pos0=pos, outputs=[0])
    return ctx.logits_row(0)


def _peer_restore(model_path: Path, cfg: EngineConfig, tokens: Sequence[int], next_token: int, runs: int,
                  cache_dir: Path) -> float:
    from llama_cpp import Llama
    from llama_cpp.llama_cache import LlamaDiskCache

    llm = Llama(model_path=str(model_path), n_ctx=cfg.n_ctx, n_batch=cfg.n_batch, n_ubatch=cfg.n_ubatch,
                n_threads=cfg.threads, n_threads_batch=cfg.threads, flash_attn=cfg.flash_attn, verbose=False)
    try:
        llm.eval(list(tokens))
        cache = LlamaDiskCache(cache_dir=str(cache_dir))
        quiet = contextlib.redirect_stderr(io.StringIO())  # its __setitem__ prints progress lines
        with quiet:
            cache[tokens] = llm.save_state()

        def once() -> Any:
            state = cache[tokens]  # LlamaDiskCache.__getitem__ pops the entry
            llm.load_state(state)
            llm.eval([next_token])
            return state

        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            state = once()
            times.append((time.perf_counter() - t0) * 1000)
            with contextlib.redirect_stderr(io.StringIO()):
                cache[tokens] = state  # put it back, outside the timing
        return statistics.median(times)
    finally:
        llm.close()


def _memory_probe(model: str, block_path: Path, n_ctx: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.restore_probe", model, str(block_path), str(n_ctx)],
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_restore_bench(request: RestoreBenchRequest, progress: Callable[[str], None] | None = None
                      ) -> dict[str, Any]:
    n_ctx = max(4096, -(-(max(request.tokens) + 64) // 256) * 256)
    cfg = EngineConfig(n_ctx=n_ctx)
    engine = GraftEngine.load(request.model, cfg)
    results = []
    per_token_theory = theoretical_kv_bytes_per_token(engine)
    try:
        with tempfile.TemporaryDirectory(prefix="kvgraft-bench-") as tmp:
            for n in request.tokens:
                if progress:
                    progress(f"{n} tokens: cold prefill x{request.runs}")
                tokens = sample_tokens(engine, n + 1)
                prefix, nxt = tokens[:n], tokens[n]

                def cold(ctx: LlamaContext) -> np.ndarray:
                    engine.prefill(ctx, prefix)  # noqa: B023
                    return _decode_one(engine, ctx, nxt, n)  # noqa: B023

                prefill_ms, fresh_row = _median_ms(cold, request.runs, setup=engine.open_context,
                                                   teardown=lambda c: c.close())
                snapshot = engine.capture(prefix, n_query=1)
                block_path = Path(tmp) / f"block-{n}.kvg"
                write_block_file(snapshot_to_block(snapshot, kind="document"), block_path)
                if progress:
                    progress(f"{n} tokens: restore from block file x{request.runs}")

                def restore(ctx: LlamaContext) -> np.ndarray:
                    snap = block_to_snapshot(read_block_file(block_path))  # noqa: B023 - hashes while reading
                    engine.restore(ctx, snap, payload_verified=True)
                    return _decode_one(engine, ctx, nxt, n)  # noqa: B023

                restore_ms, restored_row = _median_ms(restore, request.runs, setup=engine.open_context,
                                                      teardown=lambda c: c.close())
                if progress:
                    progress(f"{n} tokens: llama-cpp-python LlamaDiskCache x{request.runs}")
                peer_ms = _peer_restore(engine.model.path, cfg, prefix, nxt, request.runs,
                                        Path(tmp) / f"peer-{n}")
                row: dict[str, Any] = {
                    "tokens": n,
                    "prefill_ms": round(prefill_ms, 2),
                    "restore_ms": round(restore_ms, 2),
                    "peer_restore_ms": round(peer_ms, 2),
                    "state_bytes": len(snapshot.payload),
                    "block_file_bytes": block_path.stat().st_size,
                    "state_bytes_per_token": round(len(snapshot.payload) / n, 1),
                    "theoretical_kv_bytes_per_token": per_token_theory,
                    "speedup_vs_prefill": round(prefill_ms / restore_ms, 1),
                    "speedup_vs_peer": round(peer_ms / restore_ms, 2),
                    "next_token_logits_equal": bool(np.array_equal(fresh_row.view(np.uint32),
                                                                   restored_row.view(np.uint32))),
                }
                if request.measure_memory:
                    mem = _memory_probe(request.model or engine.name, block_path, n_ctx)
                    row["restore_peak_rss_growth_bytes"] = mem["peak_growth"]
                    row["restore_peak_growth_over_state"] = round(mem["peak_growth"] / mem["state_bytes"], 2)
                results.append(row)
                log.info("bench.restore.row", **row)
    finally:
        engine.close()
    return {"benchmark": "restore", "model": engine.name, "fingerprint": engine.fingerprint.id,
            "profile": engine.profile(1).as_dict(), "runs": request.runs, "page_cache": "warm",
            "results": results}
