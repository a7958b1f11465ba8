"""The peers and the limit `kvgraft bench restore` measures kvgraft's restore against, each on the same state:

- llama.cpp's own per-sequence state file (llama_state_seq_save_file / llama_state_seq_load_file) into a
  pre-created context: what kvgraft's block adds to, minus every check;
- llama-cpp-python's `LlamaState` restored without its `scores` (the logits array it pickles along), through the
  whole-context llama_state_set_data it uses;
- `LlamaDiskCache` as users get it (pickled state with scores; its `__getitem__` deletes the entry, timed);
- the limit: the same bytes read from the page cache (warm) and after dropping them from it (cold) into an
  allocated buffer, a memcpy of that many bytes, and SHA-256 of them, in this process.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import io
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.graft import EngineConfig, GraftEngine
from engine.native import GGML_TYPE_IDS, LlamaContext


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def drop_from_page_cache(path: Path) -> None:
    """Ask the kernel to forget the file's cached pages (clean pages are dropped), so the next read is cold."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_into(path: Path, buf: bytearray) -> int:
    with path.open("rb", buffering=0) as f:
        view, got = memoryview(buf), 0
        while got < len(buf):
            n = f.readinto(view[got:])
            if not n:
                break
            got += n
        view.release()
        return got


def limits(path: Path, n_bytes: int, runs: int) -> dict[str, float]:
    """Warm and cold reads of `n_bytes` of `path` into an allocated buffer, an in-memory copy, and SHA-256."""
    buf = bytearray(n_bytes)
    read_into(path, buf)  # warm the page cache

    def cold() -> None:
        drop_from_page_cache(path)
        t0 = time.perf_counter()
        read_into(path, buf)
        times.append((time.perf_counter() - t0) * 1000)

    times: list[float] = []
    for _ in range(runs):
        cold()
    cold_ms = statistics.median(times)
    read_into(path, buf)
    src = np.frombuffer(bytes(buf), dtype=np.uint8)
    dst = np.empty_like(src)
    return {"limit_ms": median_ms(lambda: read_into(path, buf), runs), "limit_cold_ms": cold_ms,
            "memcpy_ms": median_ms(lambda: np.copyto(dst, src), runs),
            "hash_ms": median_ms(lambda: hashlib.sha256(buf).digest(), runs)}


def raw_seq_file(engine: GraftEngine, tokens: Sequence[int], next_token: int, path: Path, runs: int
                 ) -> dict[str, Any]:
    """llama.cpp's state file: saved from a prefilled context, loaded into pre-created ones from the page cache
    (warm), after dropping it from the page cache (cold, as kvgraft's cold restore reads), and warm plus one
    token."""
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens)
        ctx.save_seq_file(path, tokens)
    n = len(tokens)
    only, cold, with_token, row = [], [], [], None
    for _ in range(runs):
        with engine.open_context() as ctx:
            t0 = time.perf_counter()
            ctx.load_seq_file(path, n + 8)
            only.append((time.perf_counter() - t0) * 1000)
        with engine.open_context() as ctx:
            drop_from_page_cache(path)
            t0 = time.perf_counter()
            ctx.load_seq_file(path, n + 8)
            cold.append((time.perf_counter() - t0) * 1000)
        with engine.open_context() as ctx:
            t0 = time.perf_counter()
            ctx.load_seq_file(path, n + 8)
            ctx.decode([next_token], pos0=n, outputs=[0])
            row = ctx.logits_row(0)
            with_token.append((time.perf_counter() - t0) * 1000)
    return {"raw_seq_file_ms": statistics.median(only), "raw_seq_file_cold_ms": statistics.median(cold),
            "raw_seq_file_plus_token_ms": statistics.median(with_token),
            "raw_seq_file_bytes": path.stat().st_size, "row": row}


def python_peers(model_path: Path, cfg: EngineConfig, tokens: Sequence[int], next_token: int, runs: int,
                 cache_dir: Path) -> dict[str, float]:
    """`LlamaState` without scores, and `LlamaDiskCache` as users get it, each with and without one token."""
    import llama_cpp
    from llama_cpp import Llama
    from llama_cpp.llama_cache import LlamaDiskCache

    llm = Llama(model_path=str(model_path), n_ctx=cfg.n_ctx, n_batch=cfg.n_batch, n_ubatch=cfg.n_ubatch,
                n_threads=cfg.threads, n_threads_batch=cfg.threads, flash_attn=cfg.flash_attn,
                n_gpu_layers=0 if cfg.gpu_layers is None else cfg.gpu_layers,
                type_k=GGML_TYPE_IDS[cfg.kv_type], type_v=GGML_TYPE_IDS[cfg.kv_type], verbose=False)
    try:
        llm.eval(list(tokens))
        state = llm.save_state()

        def no_scores(token: bool) -> None:
            llm.input_ids = state.input_ids.copy()
            llm.n_tokens = state.n_tokens
            arr = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
            if llama_cpp.llama_state_set_data(llm._ctx.ctx, arr, state.llama_state_size) != state.llama_state_size:
                raise RuntimeError("llama_state_set_data refused the state")
            if token:
                llm.eval([next_token])

        cache = LlamaDiskCache(cache_dir=str(cache_dir))
        quiet = contextlib.redirect_stderr(io.StringIO())  # its __setitem__ prints progress lines
        with quiet:
            cache[tokens] = state

        def disk_ms(token: bool) -> float:
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                got = cache[tokens]  # LlamaDiskCache.__getitem__ pops the entry: part of what users pay
                llm.load_state(got)
                if token:
                    llm.eval([next_token])
                times.append((time.perf_counter() - t0) * 1000)
                with contextlib.redirect_stderr(io.StringIO()):
                    cache[tokens] = got  # put back, outside the timing
            return statistics.median(times)

        return {"state_no_scores_ms": median_ms(lambda: no_scores(False), runs),
                "state_no_scores_plus_token_ms": median_ms(lambda: no_scores(True), runs),
                "disk_cache_only_ms": disk_ms(False), "peer_restore_ms": disk_ms(True),
                "disk_cache_entry_bytes": len(state.llama_state) + state.scores.nbytes}
    finally:
        llm.close()


def decode_one(ctx: LlamaContext, token: int, pos: int) -> np.ndarray:
    ctx.decode([token], pos0=pos, outputs=[0])
    return ctx.logits_row(0)
