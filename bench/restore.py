"""`kvgraft bench restore`: cold prefill vs kvgraft's verified block restore vs the like-for-like peers (llama.cpp's
own per-sequence state file, llama-cpp-python's `LlamaState` without scores, `LlamaDiskCache` as users get it) vs the
limit (the same bytes read warm and cold into a buffer, a memcpy, SHA-256), each with and without one decoded token,
side by side in one process, with a breakdown of where kvgraft's restore time goes (bench/restore_peers.py)."""

from __future__ import annotations

import hashlib
import io
import json
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from bench.restore_peers import (
    decode_one,
    drop_from_page_cache,
    limits,
    median_ms,
    python_peers,
    raw_seq_file,
    read_into,
)
from engine.graft import EngineConfig, GraftEngine
from engine.native import LlamaContext
from engine.texts import sample_tokens
from store.blockfile import Block, read_block_file, read_header, signature_status, write_block_file
from workers.seam import block_to_snapshot, snapshot_to_block
from workers.settings import load_settings

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class RestoreBenchRequest:
    model: str | None = None
    tokens: tuple[int, ...] = (500, 2000, 4000)
    runs: int = 5
    measure_memory: bool = True
    kv_types: tuple[str, ...] = ("f16",)  # each run side by side (rows carry `kv_type`)


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


def _median_ctx_ms(fn: Callable[[LlamaContext], Any], engine: GraftEngine, runs: int,
                   before: Callable[[], None] | None = None) -> tuple[float, Any]:
    """Median of `fn(ctx)` over fresh pre-created contexts (creation outside the timing)."""
    times, last = [], None
    for _ in range(runs):
        with engine.open_context() as ctx:
            if before:
                before()
            t0 = time.perf_counter()
            last = fn(ctx)
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), last


def _memory_probe(model: str, block_path: Path, n_ctx: int, kv_type: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.restore_probe", model, str(block_path), str(n_ctx), kv_type],
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _breakdown(engine: GraftEngine, block_path: Path, key: bytes, nxt: int, n: int, runs: int) -> dict[str, float]:
    """Each step of a cold verified restore timed alone (medians): context creation, the cold read, SHA-256 of
    the payload, header parse and signature check, llama_state_seq_set_data, the first decode."""
    buf = bytearray(block_path.stat().st_size)

    read_ms = statistics.median([_timed_ms(lambda: read_into(block_path, buf),
                                           before=lambda: drop_from_page_cache(block_path)) for _ in range(runs)])
    header = bytes(buf[:16 + int.from_bytes(buf[12:16], "little")])  # prefix + JSON header (see store/blockfile.py)
    head = read_header(io.BytesIO(header))
    payload = bytes(buf[len(header):len(header) + head.identity.payload_bytes])

    def check_header() -> None:
        parsed = read_header(io.BytesIO(header))
        signature_status(Block(parsed.block_id, parsed.identity, b"", parsed.meta, parsed.hmac,
                               parsed.format_version), key)

    header_ms = median_ms(check_header, runs)
    snapshot = block_to_snapshot(read_block_file(block_path, key=key))
    set_ms, _ = _median_ctx_ms(lambda ctx: ctx.set_state(snapshot.payload), engine, runs)
    decode_times = []
    for _ in range(runs):
        with engine.open_context() as ctx:
            ctx.set_state(snapshot.payload)
            t0 = time.perf_counter()
            decode_one(ctx, nxt, n)
            decode_times.append((time.perf_counter() - t0) * 1000)

    def create() -> None:
        engine.open_context().close()

    return {"context_create": round(median_ms(create, runs), 2), "read_cold": round(read_ms, 2),
            "hash": round(median_ms(lambda: hashlib.sha256(payload).digest(), runs), 2),
            "header_and_signature": round(header_ms, 3), "set_state": round(set_ms, 2),
            "first_decode": round(statistics.median(decode_times), 2)}


def _timed_ms(fn: Callable[[], Any], before: Callable[[], None] | None = None) -> float:
    if before:
        before()
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return a is not None and b is not None and bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def run_restore_bench(request: RestoreBenchRequest, progress: Callable[[str], None] | None = None
                      ) -> dict[str, Any]:
    """Every KV type of the request in turn, on the same token counts; each row names its type, and a type after
    the first gets its bytes and times as ratios of the first's (`vs_first_kv_type`)."""
    records = [_restore_bench_one(request, kv_type, progress) for kv_type in request.kv_types]
    first = {r["tokens"]: r for r in records[0]["results"]}
    for record in records[1:]:
        for row in record["results"]:
            base = first[row["tokens"]]
            row["vs_first_kv_type"] = {
                "kv_type": records[0]["kv_type"],
                "state_bytes": round(row["state_bytes"] / base["state_bytes"], 3),
                "restore_cold_verified": round(row["restore_only_ms"] / base["restore_only_ms"], 3),
                "restore_plus_token": round(row["restore_ms"] / base["restore_ms"], 3),
                "prefill": round(row["prefill_ms"] / base["prefill_ms"], 3)}
    out = dict(records[0])
    out["results"] = [row for record in records for row in record["results"]]
    out["kv_types"] = list(request.kv_types)
    out["fingerprints"] = {r["kv_type"]: r["fingerprint"] for r in records}
    return out


def _restore_bench_one(request: RestoreBenchRequest, kv_type: str, progress: Callable[[str], None] | None
                       ) -> dict[str, Any]:
    n_ctx = max(4096, -(-(max(request.tokens) + 64) // 256) * 256)
    settings = load_settings()
    cfg = EngineConfig(n_ctx=n_ctx, kv_type=kv_type, gpu_layers=settings.gpu_layers)
    engine = GraftEngine.load(request.model, cfg, cache_dir=settings.cache_dir)
    key = secrets.token_bytes(32)  # blocks are signed, as a deployment with a key reads them
    say = progress or (lambda _msg: None)
    results = []
    per_token_theory = theoretical_kv_bytes_per_token(engine)
    try:
        with tempfile.TemporaryDirectory(prefix="kvgraft-bench-") as tmp:
            for n in request.tokens:
                say(f"{n} tokens: cold prefill x{request.runs}")
                tokens = sample_tokens(engine, n + 1)
                prefix, nxt = tokens[:n], tokens[n]

                def cold_prefill(ctx: LlamaContext) -> np.ndarray:
                    engine.prefill(ctx, prefix)  # noqa: B023
                    return decode_one(ctx, nxt, n)  # noqa: B023

                prefill_ms, fresh_row = _median_ctx_ms(cold_prefill, engine, request.runs)
                snapshot = engine.capture(prefix, n_query=1)
                block_path = Path(tmp) / f"block-{n}.kvg"
                write_block_file(snapshot_to_block(snapshot, kind="document", key=key), block_path)
                say(f"{n} tokens: kvgraft restore, cold from the store and verified, and warm x{request.runs}")
                drop = lambda: drop_from_page_cache(block_path)  # noqa: B023, E731

                def verified(ctx: LlamaContext, token: bool) -> np.ndarray | None:
                    snap = block_to_snapshot(read_block_file(block_path, key=key))  # noqa: B023 - hashed as read
                    engine.restore(ctx, snap, payload_verified=True)
                    return decode_one(ctx, nxt, n) if token else None  # noqa: B023

                restore_ms, restored_row = _median_ctx_ms(lambda c: verified(c, True), engine, request.runs, drop)
                restore_only_ms, _ = _median_ctx_ms(lambda c: verified(c, False), engine, request.runs, drop)
                cached = block_to_snapshot(read_block_file(block_path, key=key))  # the worker's verified cache
                warm_only_ms, _ = _median_ctx_ms(lambda c: engine.restore(c, cached, payload_verified=True),  # noqa: B023
                                                 engine, request.runs)
                warm_ms, warm_row = _median_ctx_ms(
                    lambda c: (engine.restore(c, cached, payload_verified=True), decode_one(c, nxt, n))[1],  # noqa: B023
                    engine, request.runs)
                pooled_ms, pooled_row = _pooled(engine, cached, nxt, n, request.runs)
                say(f"{n} tokens: llama.cpp state file, LlamaState without scores, LlamaDiskCache x{request.runs}")
                raw = raw_seq_file(engine, prefix, nxt, Path(tmp) / f"seq-{n}.bin", request.runs)
                peers = python_peers(engine.model.path, cfg, prefix, nxt, request.runs, Path(tmp) / f"peer-{n}")
                say(f"{n} tokens: the limit (read warm and cold, memcpy, SHA-256) and the breakdown")
                limit = limits(block_path, len(snapshot.payload), request.runs)
                row: dict[str, Any] = {
                    "kv_type": kv_type,
                    "tokens": n,
                    "prefill_ms": round(prefill_ms, 2),
                    "restore_ms": round(restore_ms, 2),
                    "restore_only_ms": round(restore_only_ms, 2),
                    "restore_warm_ms": round(warm_ms, 2),
                    "restore_warm_only_ms": round(warm_only_ms, 2),
                    "restore_pooled_plus_token_ms": round(pooled_ms, 2),
                    "raw_seq_file_ms": round(raw["raw_seq_file_ms"], 2),
                    "raw_seq_file_cold_ms": round(raw["raw_seq_file_cold_ms"], 2),
                    "raw_seq_file_plus_token_ms": round(raw["raw_seq_file_plus_token_ms"], 2),
                    "state_no_scores_ms": round(peers["state_no_scores_ms"], 2),
                    "state_no_scores_plus_token_ms": round(peers["state_no_scores_plus_token_ms"], 2),
                    "disk_cache_only_ms": round(peers["disk_cache_only_ms"], 2),
                    "peer_restore_ms": round(peers["peer_restore_ms"], 2),
                    **{k: round(v, 2) for k, v in limit.items()},
                    "state_bytes": len(snapshot.payload),
                    "block_file_bytes": block_path.stat().st_size,
                    "raw_seq_file_bytes": raw["raw_seq_file_bytes"],
                    "disk_cache_entry_bytes": peers["disk_cache_entry_bytes"],
                    "state_bytes_per_token": round(len(snapshot.payload) / n, 1),
                    "theoretical_kv_bytes_per_token": per_token_theory,
                    "speedup_vs_prefill": round(prefill_ms / restore_ms, 1),
                    "speedup_warm_vs_prefill": round(prefill_ms / warm_ms, 1),
                    "speedup_vs_peer": round(peers["peer_restore_ms"] / restore_ms, 2),
                    "warm_over_limit": round(warm_only_ms / limit["limit_ms"], 2),
                    "cold_over_limit_and_hash": round(restore_only_ms / (limit["limit_cold_ms"] + limit["hash_ms"]), 2),
                    "cold_verified_over_raw_seq_file_cold": round(restore_only_ms / raw["raw_seq_file_cold_ms"], 2),
                    "breakdown_ms": _breakdown(engine, block_path, key, nxt, n, request.runs),
                    "next_token_logits_equal": _same(fresh_row, restored_row),
                    "warm_and_pooled_logits_equal": _same(fresh_row, warm_row) and _same(fresh_row, pooled_row),
                    "raw_seq_file_logits_equal": _same(fresh_row, raw["row"]),
                }
                if request.measure_memory:
                    mem = _memory_probe(request.model or engine.name, block_path, n_ctx, kv_type)
                    row["restore_peak_rss_growth_bytes"] = mem["peak_growth"]
                    row["restore_peak_growth_over_state"] = round(mem["peak_growth"] / mem["state_bytes"], 2)
                results.append(row)
                log.info("bench.restore.row", **{k: v for k, v in row.items() if k != "breakdown_ms"})
    finally:
        engine.close()
    return {"benchmark": "restore", "model": engine.name, "fingerprint": engine.fingerprint.id, "kv_type": kv_type,
            "profile": engine.profile(1).as_dict(), "runs": request.runs, "blocks_signed": True,
            "results": results}


def _pooled(engine: GraftEngine, snapshot: Any, nxt: int, n: int, runs: int) -> tuple[float, np.ndarray | None]:
    """Restore plus one token through the engine's context pool (a context cleared and reused, no creation)."""
    with engine.pooled_context():
        pass  # the pool holds one context before the timing, as a serving worker's does after its first answer
    times, row = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        with engine.pooled_context() as ctx:
            engine.restore(ctx, snapshot, payload_verified=True)
            row = decode_one(ctx, nxt, n)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), row
