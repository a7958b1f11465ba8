"""Capture, restore and query: the graft engine over one loaded model and one pinned configuration.

The capture and every fresh reference prefill through the same batching grid (`prefill_chunk`-token decode calls
counted from the first position), so they feed llama.cpp identical ubatches; a query is always its own decode call.
A snapshot carries everything restore needs to refuse a wrong graft before it touches a context: the payload's
SHA-256 and size, and the architecture fingerprint it was captured under.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from engine.devices import Devices, detect_devices
from engine.errors import DecodeError, FingerprintMismatchError, PayloadIntegrityError
from engine.fingerprint import (
    ArchitectureFingerprint,
    BatchProfile,
    NumericsProfile,
    cuda_pairs,
    file_sha256,
    fingerprint_of,
    query_class,
)
from engine.logits import LogitsRows
from engine.models import DEFAULT_CACHE_DIR, ModelRef, resolve_model
from engine.native import ContextConfig, LlamaContext, LlamaModel, llama

log = structlog.get_logger(__name__)
POOL_SIZE = 2  # contexts kept per engine: a worker grafts one at a time; 2 covers a check beside an answer


KV_TYPES = ("f16", "bf16", "f32", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0")
QUANTIZED_KV_TYPES = ("q8_0", "q5_1", "q5_0", "q4_1", "q4_0")


def default_threads() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


@dataclass(frozen=True)
class EngineConfig:
    """The pinned configuration. The defaults were chosen by measurement (docs/ENGINE.md): flash attention on,
    512-token decode calls and ubatches, the serving thread count, swa_full off."""

    n_ctx: int = 4096
    n_batch: int = 512
    n_ubatch: int = 512
    prefill_chunk: int = 512
    threads: int = field(default_factory=default_threads)
    flash_attn: bool = True
    swa_full: bool = False
    # layers offloaded to a GPU (KVGRAFT_GPU_LAYERS): None, the CPU backend alone (no device given to llama.cpp,
    # also on a CUDA build); -1 all of them; part of the fingerprint, with the GPU's name, driver and libraries
    gpu_layers: int | None = None
    # the KV cache's element type, K and V (KVGRAFT_KV_TYPE): part of the fingerprint, so states of one type are
    # never restored into a context of another; q8_0 halves the bytes stored, moved and restored
    kv_type: str = "f16"

    def __post_init__(self) -> None:
        if self.kv_type not in KV_TYPES:
            raise ValueError(f"KV type must be one of {', '.join(KV_TYPES)}, not {self.kv_type!r}")
        if self.kv_type in QUANTIZED_KV_TYPES and not self.flash_attn:
            raise ValueError(f"KV type {self.kv_type} needs flash attention on: llama.cpp quantizes the V cache only "
                             "with it (for the serving engine: KVGRAFT_SERVING_FLASH_ATTN=true)")
        if not 0 < self.prefill_chunk <= self.n_batch:
            raise ValueError(f"prefill_chunk must be in (0, n_batch={self.n_batch}], got {self.prefill_chunk}")
        if not 0 < self.n_ubatch <= self.n_batch:
            raise ValueError(f"n_ubatch must be in (0, n_batch={self.n_batch}], got {self.n_ubatch}")

    def context(self, *, n_seq_max: int = 1, kv_unified: bool = False) -> ContextConfig:
        return ContextConfig(
            n_ctx=self.n_ctx,
            n_batch=self.n_batch,
            n_ubatch=self.n_ubatch,
            threads=self.threads,
            flash_attn=self.flash_attn,
            swa_full=self.swa_full,
            n_seq_max=n_seq_max,
            kv_unified=kv_unified,
            type_k=self.kv_type,
            type_v=self.kv_type,
        )


@dataclass(frozen=True)
class KVSnapshot:
    """A captured per-sequence KV state at positions [pos_start, pos_end) and what it was captured under."""

    tokens: tuple[int, ...]
    pos_start: int
    payload: bytes | bytearray
    payload_sha256: str
    fingerprint: str
    fingerprint_parts: dict[str, Any]
    profile: NumericsProfile

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def pos_end(self) -> int:
        return self.pos_start + len(self.tokens)


class GraftEngine:
    """One model under one configuration: fresh computation, capture, restore and graft."""

    def __init__(self, model: LlamaModel, config: EngineConfig, *, name: str | None = None,
                 cache_dir: Path | None = None, devices: Devices | None = None) -> None:
        self.model = model
        self.config = config
        self.name = name or model.path.name
        self._cache_dir = cache_dir or DEFAULT_CACHE_DIR
        self._devices = devices
        self._fingerprint: ArchitectureFingerprint | None = None
        self._pool: list[LlamaContext] = []  # cleared contexts kept for the next graft (see pooled_context)
        self._batch_pool: dict[int, LlamaContext] = {}  # one batch context per sequence count (pooled_batch_context)
        self._pool_lock = threading.Lock()

    @classmethod
    def load(cls, model: str | ModelRef | None = None, config: EngineConfig | None = None, *,
             cache_dir: Path | None = None) -> GraftEngine:
        ref = model if isinstance(model, ModelRef) else resolve_model(model, cache_dir=cache_dir)
        cfg = config or EngineConfig()
        t0 = time.perf_counter()
        loaded = LlamaModel(ref.path, gpu_layers=cfg.gpu_layers)
        log.info("engine.model_loaded", model=ref.name, path=str(ref.path),
                 ms=round((time.perf_counter() - t0) * 1000, 1))
        return cls(loaded, cfg, name=ref.name, cache_dir=cache_dir)

    def sibling(self) -> GraftEngine:
        """The same configuration over a separately loaded model object (for cross-object grafts)."""
        return GraftEngine(LlamaModel(self.model.path, gpu_layers=self.config.gpu_layers), self.config,
                           name=self.name, cache_dir=self._cache_dir, devices=self._devices)

    def close_pool(self) -> None:
        """Free the pooled contexts (the model stays loaded)."""
        with self._pool_lock:
            pooled, self._pool = self._pool + list(self._batch_pool.values()), []
            self._batch_pool = {}
        for ctx in pooled:
            ctx.close()

    def close(self) -> None:
        self.close_pool()
        self.model.close()

    def __enter__(self) -> GraftEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def devices(self) -> Devices:
        """The accelerator this engine's llama.cpp build computes on (engine/devices.py), asked once."""
        if self._devices is None:
            self._devices = detect_devices(llama())
        return self._devices

    @property
    def on_gpu(self) -> bool:
        """Whether this engine gives llama.cpp a GPU (KVGRAFT_GPU_LAYERS set, and the build and machine have one)."""
        return self.config.gpu_layers is not None and bool(self.devices.gpus())

    @property
    def fingerprint(self) -> ArchitectureFingerprint:
        if self._fingerprint is None:
            sha = file_sha256(self.model.path, self._cache_dir / "gguf-sha256.json")
            self._fingerprint = fingerprint_of(self.model, self.config.context(), gguf_sha256=sha,
                                               gpu_layers=self.config.gpu_layers,
                                               devices=self.devices if self.config.gpu_layers is not None else None)
        return self._fingerprint

    def profile(self, n_query: int) -> NumericsProfile:
        c = self.config
        cuda = cuda_pairs(self.devices.cuda_options(flash_attn=c.flash_attn)) if self.on_gpu else ()
        return NumericsProfile(n_ctx=c.n_ctx, n_batch=c.n_batch, n_ubatch=c.n_ubatch,
                               prefill_chunk=c.prefill_chunk, threads=c.threads,
                               query_class=query_class(n_query), swa_full=c.swa_full, kv_type=c.kv_type, cuda=cuda)

    # -- building blocks -------------------------------------------------------------------------------------

    def open_context(self, *, n_seq_max: int = 1, kv_unified: bool = False) -> LlamaContext:
        return LlamaContext(self.model, self.config.context(n_seq_max=n_seq_max, kv_unified=kv_unified))

    def open_batch_context(self, max_seqs: int) -> LlamaContext:
        """A context of `max_seqs` sequences with a KV stream each, every one `n_ctx` cells long (engine/batching.py;
        its states are read and written in the one-stream form, engine/seqstate.py, so the fingerprint is the
        engine's)."""
        if max_seqs == 1:
            return self.open_context()
        return LlamaContext(self.model, replace(self.config.context(n_seq_max=max_seqs),
                                                n_ctx=self.config.n_ctx * max_seqs))

    def batch_profile(self, max_seqs: int, check: str = "") -> BatchProfile:
        """The serving profile (the grid's chunk-sized calls) computed `max_seqs` sequences at a time."""
        return BatchProfile(self.profile(self.config.prefill_chunk), max_seqs, check=check)

    @contextmanager
    def pooled_context(self) -> Iterator[LlamaContext]:
        """A context of this engine's configuration from a small pool (at most POOL_SIZE kept): creating one
        allocates its KV cache (~75-100 ms at n_ctx 4096), clearing one is a memset of that cache (a few ms at
        most). A context handed back is
        emptied (llama_memory_clear with its data buffers), so the next graft meets it as a fresh one would (the
        graft check runs over pooled contexts, held to the fresh reference); one whose use raised is closed, not
        kept."""
        with self._pool_lock:
            ctx = self._pool.pop() if self._pool else None
        if ctx is None:
            ctx = self.open_context()
        keep = False
        try:
            yield ctx
            ctx.clear()
            keep = True
        finally:
            with self._pool_lock:
                if keep and len(self._pool) < POOL_SIZE and self.model.handle_open:
                    self._pool.append(ctx)
                    ctx = None
            if ctx is not None:
                ctx.close()

    @contextmanager
    def pooled_batch_context(self, max_seqs: int) -> Iterator[LlamaContext]:
        """The batch context of `max_seqs` sequences this engine keeps (one per size; its KV cache is max_seqs
        times a one-sequence context's, so it is not made per use). It is handed back as it was left: a BatchCore
        removes each slot's cells before a sequence joins it, and the `batch` check measures exactly that reuse
        (stale cells masked). One whose use raised is closed; one in use by another caller is not shared (a
        second context is made and closed after)."""
        with self._pool_lock:
            ctx = self._batch_pool.pop(max_seqs, None)
        if ctx is None:
            ctx = self.open_batch_context(max_seqs)
        keep = False
        try:
            yield ctx
            keep = True
        finally:
            with self._pool_lock:
                if keep and max_seqs not in self._batch_pool and self.model.handle_open:
                    self._batch_pool[max_seqs] = ctx
                    ctx = None
            if ctx is not None:
                ctx.close()

    def tokenize(self, text: str, *, add_special: bool = True, parse_special: bool = False) -> list[int]:
        return self.model.tokenize(text, add_special=add_special, parse_special=parse_special)

    def grid(self, pos0: int, n: int, origin: int | None, *, step: int | None = None) -> list[tuple[int, int]]:
        """Cut [pos0, pos0+n) into decode calls of at most `prefill_chunk` tokens (or `step`) at origin + k*chunk
        (origin None: pos0). A prompt restored at an unaligned position and continued with origin 0 makes the calls
        a fresh prefill of the whole prompt makes after that position."""
        step = step or self.config.prefill_chunk
        start = pos0 if origin is None else origin
        if pos0 < start:
            raise ValueError(f"pos0 {pos0} is before the grid's origin {start}")
        cuts: list[tuple[int, int]] = []
        pos, end = pos0, pos0 + n
        while pos < end:
            nxt = min(end, start + ((pos - start) // step + 1) * step)
            cuts.append((pos, nxt))
            pos = nxt
        return cuts

    def prefill(self, ctx: LlamaContext, tokens: Sequence[int], *, pos0: int = 0, seq_id: int = 0,
                origin: int | None = None) -> None:
        """Decode `tokens` at [pos0, pos0+n) in `prefill_chunk`-sized calls counted from `origin` (default pos0:
        the grid)."""
        for a, b in self.grid(pos0, len(tokens), origin):
            ctx.decode(tokens[a - pos0:b - pos0], pos0=a, seq_id=seq_id)

    def prefill_for_generation(self, ctx: LlamaContext, tokens: Sequence[int], *, pos0: int = 0,
                               seq_id: int = 0, origin: int | None = None) -> np.ndarray:
        """Prefill on the grid and return the logits row of the last token (what generation starts from)."""
        if not tokens:
            raise DecodeError("nothing to prefill")
        cuts = self.grid(pos0, len(tokens), origin)
        for a, b in cuts:
            last = (a, b) == cuts[-1]
            ctx.decode(tokens[a - pos0:b - pos0], pos0=a, seq_id=seq_id, outputs=[b - a - 1] if last else ())
        return ctx.logits_row(cuts[-1][1] - cuts[-1][0] - 1)

    def query(self, ctx: LlamaContext, tokens: Sequence[int], *, pos0: int, seq_id: int = 0) -> LogitsRows:
        """One decode call of the query tokens, with logits kept for every query row."""
        if not tokens:
            raise DecodeError("a query needs at least one token")
        ctx.decode(tokens, pos0=pos0, seq_id=seq_id, outputs=range(len(tokens)))
        rows = np.stack([ctx.logits_row(i) for i in range(len(tokens))])
        return LogitsRows(first_pos=pos0, rows=rows)

    def restore(self, ctx: LlamaContext, snapshot: KVSnapshot, *, seq_id: int = 0,
                payload_verified: bool = False) -> None:
        """Graft a snapshot into `ctx` at its own positions, refusing it first if it is not this engine's.

        `payload_verified=True` skips re-hashing only when the caller has just hashed exactly these bytes
        against `snapshot.payload_sha256` (the block reader does so while reading)."""
        mine = self.fingerprint
        if snapshot.fingerprint != mine.id:
            diff = mine.differences(snapshot.fingerprint_parts) if snapshot.fingerprint_parts else {}
            detail = "; ".join(f"{k}: captured {theirs!r}, here {ours!r}" for k, (ours, theirs) in diff.items())
            raise FingerprintMismatchError(
                f"state captured under fingerprint {snapshot.fingerprint}, this engine is {mine.id}"
                + (f" ({detail})" if detail else "")
            )
        if not payload_verified:
            verify_payload(snapshot.payload, snapshot.payload_sha256)
        ctx.set_state(snapshot.payload, seq_id=seq_id)
        log.debug("engine.restored", n_tokens=snapshot.n_tokens, bytes=len(snapshot.payload))

    # -- whole operations ------------------------------------------------------------------------------------

    def fresh(self, prefix: Sequence[int], query: Sequence[int], *, pos0: int = 0) -> LogitsRows:
        """Reference computation: prefill `prefix` at [pos0, pos0+N) on the grid, then the query at N."""
        with self.open_context() as ctx:
            self.prefill(ctx, prefix, pos0=pos0)
            return self.query(ctx, query, pos0=pos0 + len(prefix))

    def capture(self, tokens: Sequence[int], *, n_query: int = 8, pos0: int = 0) -> KVSnapshot:
        """Prefill `tokens` at [pos0, pos0+N) in a fresh context on the grid and capture the sequence state."""
        with self.open_context() as ctx:
            self.prefill(ctx, tokens, pos0=pos0)
            return self.snapshot(ctx, tokens, pos0=pos0, n_query=n_query)

    def snapshot(self, ctx: LlamaContext, tokens: Sequence[int], *, pos0: int = 0, n_query: int = 8,
                 seq_id: int = 0) -> KVSnapshot:
        payload = ctx.state_bytes(seq_id)
        fp = self.fingerprint
        return KVSnapshot(tokens=tuple(int(t) for t in tokens), pos_start=pos0, payload=payload,
                          payload_sha256=hashlib.sha256(payload).hexdigest(), fingerprint=fp.id,
                          fingerprint_parts=fp.parts(), profile=self.profile(n_query))

    def graft(self, snapshot: KVSnapshot, query: Sequence[int], *, shift: int = 0,
              payload_verified: bool = False) -> LogitsRows:
        """Restore a snapshot into a fresh context (optionally relocated by `shift`) and run the query after it."""
        with self.open_context() as ctx:
            self.restore(ctx, snapshot, payload_verified=payload_verified)
            if shift:
                ctx.seq_shift(shift)
            return self.query(ctx, query, pos0=snapshot.pos_end + shift)


def verify_payload(payload: bytes | bytearray, expected_sha256: str) -> None:
    digest = hashlib.sha256(payload).hexdigest()
    if digest != expected_sha256:
        raise PayloadIntegrityError(
            f"state payload SHA-256 {digest[:16]}... does not match the recorded {expected_sha256[:16]}... "
            f"({len(payload)} bytes): tampered or truncated; refusing to graft it"
        )


def with_payload(snapshot: KVSnapshot, payload: bytes | bytearray) -> KVSnapshot:
    """The same snapshot metadata over another payload (e.g. the bytes read back from a file)."""
    return replace(snapshot, payload=payload)
