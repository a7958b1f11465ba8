"""Owned llama.cpp handles: a loaded model and an inference context, with every return code checked.

This is the only module that talks to `llama_cpp`'s ctypes API. Each handle is freed exactly once (close() or
the context manager); each call whose status llama.cpp reports is checked and turned into an EngineError, and
each call that llama.cpp would abort the process on (a decode larger than n_batch) is refused before it is made.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import structlog

from engine import seqstate
from engine.errors import DecodeError, ModelLoadError, StateRestoreError

log = structlog.get_logger(__name__)

_backend_lock = threading.Lock()
_backend_ready = False

# ggml type ids of the KV-cache element types we name in fingerprints.
GGML_TYPE_NAMES = {0: "f32", 1: "f16", 2: "q4_0", 3: "q4_1", 6: "q5_0", 7: "q5_1", 8: "q8_0", 30: "bf16"}
GGML_TYPE_IDS = {name: type_id for type_id, name in GGML_TYPE_NAMES.items()}


_compute_runner: Callable[[Callable[[], int]], int] | None = None


def set_compute_thread(runner: Callable[[Callable[[], int]], int] | None
                       ) -> Callable[[Callable[[], int]], int] | None:
    """Route every llama_decode of the process through `runner` (a batch scheduler's `call`: the one thread that
    computes), or, with None, let each caller compute on its own thread; the previous runner is returned. Only
    llama_decode runs ggml's OpenMP work: state reads and writes, memory ops and context creation are copies and
    bookkeeping and stay on the caller's thread. With an OpenMP build, each thread that computes gets a team of its
    own, and once a process manages more OpenMP threads than cores libgomp sleeps at barriers (docs/BENCHMARKS.md):
    the serving engine installs its scheduler here, so that an embedded API's work thread decodes on it too."""
    global _compute_runner
    previous, _compute_runner = _compute_runner, runner
    return previous


def compute_thread() -> Callable[[Callable[[], int]], int] | None:
    return _compute_runner


_this_thread = threading.local()


def set_thread_runner(runner: Callable[[Callable[[], int]], int] | None) -> None:
    """Route the calling thread's llama_decode calls through `runner`, over the process's (a serving engine's
    background check: its decodes wait until nothing is served, and stop when that engine closes, whatever
    runner the process has by then)."""
    _this_thread.runner = runner


_log_callback = None  # keeps the ctypes callback alive for the life of the process
_last_level = 1


def _route_llama_log(level: int, text: bytes, _user_data: object) -> None:
    """llama.cpp's log lines become structlog events: errors as `llama_cpp.error`, the rest at debug level."""
    global _last_level
    level = _last_level if level == 5 else level  # 5 = continuation of the previous line
    _last_level = level
    line = text.decode("utf-8", errors="replace").rstrip()
    if not line:
        return
    if level == 3:
        log.error("llama_cpp.error", message=line)
    else:
        log.debug("llama_cpp.log", level=level, message=line)


def llama():  # noqa: ANN201 - the ctypes module
    """Import llama_cpp once, initialise the backend, and route its log output through structlog."""
    global _backend_ready, _log_callback
    import llama_cpp

    with _backend_lock:
        if not _backend_ready:
            logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
            _log_callback = llama_cpp.llama_log_callback(_route_llama_log)
            llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
            llama_cpp.llama_backend_init()
            _backend_ready = True
    return llama_cpp


@dataclass(frozen=True)
class DecodeRow:
    """One token of a multi-sequence decode call: its id, position, sequence and whether its logits are kept."""

    token: int
    pos: int
    seq_id: int
    logits: bool = True


@dataclass(frozen=True)
class ContextConfig:
    """Everything a context is created with. Two contexts with equal configs compute identically."""

    n_ctx: int
    n_batch: int
    n_ubatch: int
    threads: int
    flash_attn: bool
    swa_full: bool = False
    n_seq_max: int = 1
    kv_unified: bool = False
    type_k: str = "f16"  # the KV cache's element types (GGML_TYPE_NAMES)
    type_v: str = "f16"


class LlamaModel:
    """A loaded GGUF model (llama_model*), its vocabulary and a few shape facts."""

    def __init__(self, path: Path, *, gpu_layers: int | None = None) -> None:
        """`gpu_layers` None: the CPU backend alone (on a GPU build, llama.cpp is given an empty device list, so
        no weight, KV cell or large batch goes to a GPU); a number: layers offloaded (-1: all)."""
        lib = llama()
        self.path = Path(path)
        params = lib.llama_model_default_params()
        params.n_gpu_layers = 0 if gpu_layers is None else gpu_layers
        self._no_devices = None
        if gpu_layers is None and lib.llama_supports_gpu_offload():
            self._no_devices = (ctypes.c_void_p * 1)(None)  # a NULL-terminated empty list, alive while loading
            params.devices = ctypes.addressof(self._no_devices)
        handle = lib.llama_model_load_from_file(str(self.path).encode(), params)
        if not handle:
            raise ModelLoadError(f"llama.cpp could not load the GGUF file {self.path}")
        self._handle = handle
        self._contexts: weakref.WeakSet[LlamaContext] = weakref.WeakSet()  # closed before the model is freed
        self._vocab = lib.llama_model_get_vocab(handle)
        self.n_vocab: int = lib.llama_vocab_n_tokens(self._vocab)
        self.n_ctx_train: int = lib.llama_model_n_ctx_train(handle)
        self.n_layer: int = lib.llama_model_n_layer(handle)
        self.n_embd: int = lib.llama_model_n_embd(handle)
        self.architecture: str = self.meta("general.architecture") or "unknown"
        self.n_swa: int = int(lib.llama_model_n_swa(handle))  # the sliding attention window (0: none)

    @property
    def handle(self):  # noqa: ANN201 - llama_model_p
        if self._handle is None:
            raise ModelLoadError(f"model {self.path} is closed")
        return self._handle

    def meta(self, key: str) -> str | None:
        lib = llama()
        buf = ctypes.create_string_buffer(256)
        n = lib.llama_model_meta_val_str(self.handle, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            lib.llama_model_meta_val_str(self.handle, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", errors="replace")

    def tokenize(self, text: str, *, add_special: bool = True, parse_special: bool = False) -> list[int]:
        """Token ids of `text`; `add_special` adds BOS where the model wants it, `parse_special` reads control
        tokens written as text (e.g. ChatML's <|im_start|>) as those tokens."""
        lib = llama()
        data = text.encode("utf-8")
        cap = len(data) + 8
        buf = (lib.llama_token * cap)()
        n = lib.llama_tokenize(self._vocab, data, len(data), buf, cap, add_special, parse_special)
        if n < 0:
            cap = -n
            buf = (lib.llama_token * cap)()
            n = lib.llama_tokenize(self._vocab, data, len(data), buf, cap, add_special, parse_special)
            if n < 0:
                raise DecodeError(f"tokenization failed ({n})")
        return list(buf[:n])

    def piece_bytes(self, tokens: Sequence[int], *, render_special: bool = False) -> bytes:
        """The bytes the tokens stand for (a token may hold part of a UTF-8 character)."""
        lib = llama()
        out = bytearray()
        buf = ctypes.create_string_buffer(64)
        for tok in tokens:
            n = lib.llama_token_to_piece(self._vocab, int(tok), buf, len(buf), 0, render_special)
            if n < 0:
                big = ctypes.create_string_buffer(-n)
                n = lib.llama_token_to_piece(self._vocab, int(tok), big, len(big), 0, render_special)
                out += big.raw[:n]
            else:
                out += buf.raw[:n]
        return bytes(out)

    def detokenize(self, tokens: Sequence[int], *, render_special: bool = False) -> str:
        return self.piece_bytes(tokens, render_special=render_special).decode("utf-8", errors="replace")

    def token_bos(self) -> int:
        return int(llama().llama_vocab_bos(self._vocab))

    def is_end_of_generation(self, token: int) -> bool:
        return bool(llama().llama_vocab_is_eog(self._vocab, int(token)))

    def has_token(self, text: str) -> bool:
        """Whether `text` (e.g. "<|im_start|>") is a single control token of this vocabulary."""
        toks = self.tokenize(text, add_special=False, parse_special=True)
        return len(toks) == 1 and self.detokenize(toks, render_special=True) == text

    @property
    def handle_open(self) -> bool:
        return self._handle is not None

    def close(self) -> None:
        """Free the model, closing its live contexts first (a context must never outlive its model)."""
        if self._handle is not None:
            for ctx in list(self._contexts):
                ctx.close()
            llama().llama_model_free(self._handle)
            self._handle = None

    def __enter__(self) -> LlamaModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort; close() is the contract
        with contextlib.suppress(Exception):  # interpreter shutdown may have torn llama_cpp down
            self.close()


class LlamaContext:
    """An inference context (llama_context*) over one model: decode, logits rows, per-sequence state, memory ops."""

    def __init__(self, model: LlamaModel, config: ContextConfig) -> None:
        lib = llama()
        if config.n_ubatch > config.n_batch:
            raise ModelLoadError(f"n_ubatch {config.n_ubatch} exceeds n_batch {config.n_batch}")
        params = lib.llama_context_default_params()
        params.n_ctx = config.n_ctx
        params.n_batch = config.n_batch
        params.n_ubatch = config.n_ubatch
        params.n_threads = config.threads
        params.n_threads_batch = config.threads
        params.flash_attn_type = 1 if config.flash_attn else 0
        params.swa_full = config.swa_full
        params.n_seq_max = config.n_seq_max
        params.kv_unified = config.kv_unified
        params.type_k = GGML_TYPE_IDS[config.type_k]
        params.type_v = GGML_TYPE_IDS[config.type_v]
        params.no_perf = True
        handle = lib.llama_init_from_model(model.handle, params)
        if not handle:
            raise ModelLoadError(f"llama.cpp could not create a context with {config}")
        self._handle = handle
        self.model = model
        self.config = config
        self.n_ctx: int = lib.llama_n_ctx(handle)
        # each sequence's own cells: n_ctx / n_seq_max with a KV stream per sequence (llama.cpp pads it to 256)
        self.n_seq_ctx: int = self.n_ctx if config.kv_unified or config.n_seq_max == 1 else (
            int(lib.llama_n_ctx_seq(handle)) if hasattr(lib, "llama_n_ctx_seq") else self.n_ctx // config.n_seq_max)
        self.n_batch: int = lib.llama_n_batch(handle)
        self._batch = lib.llama_batch_init(self.n_batch, 0, 1)  # allocated once, reused by every decode
        model._contexts.add(self)

    @property
    def handle(self):  # noqa: ANN201 - llama_context_p
        if self._handle is None:
            raise DecodeError("context is closed")
        return self._handle

    def decode(self, tokens: Sequence[int], *, pos0: int, seq_id: int = 0, outputs: Sequence[int] = ()) -> None:
        """One llama_decode call of `tokens` at positions [pos0, pos0+len); logits kept for batch rows `outputs`."""
        n = len(tokens)
        if pos0 < 0 or pos0 + n > self.n_seq_ctx:
            raise DecodeError(f"positions [{pos0}, {pos0 + n}) do not fit a context of {self.n_seq_ctx} tokens")
        want = set(outputs)
        if not want <= set(range(n)):
            raise DecodeError(f"output rows {sorted(want)} outside a batch of {n}")
        self.decode_rows([DecodeRow(int(tok), pos0 + i, seq_id, i in want) for i, tok in enumerate(tokens)])

    def decode_rows(self, rows: Sequence[DecodeRow]) -> None:
        """One llama_decode call over rows of any of the context's sequences (batch row i is `rows[i]`; its logits,
        where kept, are `logits_row(i)`). llama.cpp splits a multi-stream call into ubatches of consecutive sequence
        ids with equal row counts, so callers keep one sequence's prefill chunk out of other sequences' rows."""
        lib = llama()
        n = len(rows)
        if n == 0:
            return
        if n > self.n_batch:  # llama.cpp aborts the whole process on this; refuse it here
            raise DecodeError(f"a decode of {n} tokens exceeds n_batch {self.n_batch}")
        for row in rows:
            if not 0 <= row.seq_id < self.config.n_seq_max:
                raise DecodeError(f"sequence {row.seq_id} outside this context's {self.config.n_seq_max}")
            if not 0 <= row.pos < self.n_seq_ctx:
                raise DecodeError(f"position {row.pos} does not fit a context of {self.n_seq_ctx} tokens")
        handle = self.handle
        batch = self._batch
        for i, row in enumerate(rows):
            batch.token[i] = row.token
            batch.pos[i] = row.pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = row.seq_id
            batch.logits[i] = 1 if row.logits else 0
        batch.n_tokens = n
        runner = getattr(_this_thread, "runner", None) or _compute_runner
        try:
            rc = lib.llama_decode(handle, batch) if runner is None else runner(lambda: lib.llama_decode(handle, batch))
        except RuntimeError:  # the compute thread closed meanwhile (a stopping process): compute here
            rc = lib.llama_decode(handle, batch)
        if rc != 0:
            raise DecodeError(f"llama_decode returned {rc} for {n} tokens at position {rows[0].pos}")

    def logits_row(self, i: int) -> np.ndarray:
        """A copy of the float32 logits of batch row i of the last decode (the row must have been requested)."""
        lib = llama()
        ptr = lib.llama_get_logits_ith(self.handle, i)
        if not ptr:
            raise DecodeError(f"no logits for batch row {i}")
        return np.ctypeslib.as_array(ptr, shape=(self.model.n_vocab,)).copy()

    def state_size(self, seq_id: int = 0) -> int:
        return int(llama().llama_state_seq_get_size(self.handle, seq_id))

    @property
    def streams(self) -> int:
        """KV streams of the context: one per sequence unless the KV is unified."""
        return 1 if self.config.kv_unified else self.config.n_seq_max

    def state_bytes(self, seq_id: int = 0) -> bytes:
        """The per-sequence state of `seq_id` (KV cells and their positions) as bytes, in the form a one-sequence
        context writes (engine/seqstate.py: a multi-stream context's own form is transcoded)."""
        raw = self._raw_state(seq_id)
        return raw if self.streams == 1 else seqstate.one_stream(raw)

    def _raw_state(self, seq_id: int) -> bytes:
        lib = llama()
        size = self.state_size(seq_id)
        buf = bytearray(size)
        arr = (ctypes.c_uint8 * size).from_buffer(buf)
        written = lib.llama_state_seq_get_data(self.handle, arr, size, seq_id)
        del arr
        if written <= 0 or written > size:
            raise StateRestoreError(f"llama_state_seq_get_data wrote {written} of {size} bytes")
        return bytes(buf[:written]) if written != size else bytes(buf)

    def set_state(self, payload: bytes | bytearray, seq_id: int = 0) -> None:
        """Restore a per-sequence state (one-stream form) without copying the payload where the context has one
        stream; raise unless llama.cpp read all of it."""
        lib = llama()
        if len(payload) == 0:
            raise StateRestoreError("empty state payload")
        if self.streams > 1:  # blocks hold the one-stream form
            payload = seqstate.into_streams(payload, self.streams, seq_id)
        size = len(payload)
        if isinstance(payload, bytearray):
            src = (ctypes.c_uint8 * size).from_buffer(payload)
        else:  # points into the bytes object's own buffer: no copy
            src = ctypes.cast(ctypes.c_char_p(payload), ctypes.POINTER(ctypes.c_uint8))
        read = lib.llama_state_seq_set_data(self.handle, src, size, seq_id)
        del src
        if read == 0:
            raise StateRestoreError(
                "llama.cpp refused the state (llama_state_seq_set_data returned 0): it does not fit this "
                "context's KV layout, e.g. captured with flash attention "
                f"{'off' if self.config.flash_attn else 'on'} and restored with it "
                f"{'on' if self.config.flash_attn else 'off'}, or the payload is damaged"
            )
        if read != size:
            raise StateRestoreError(f"llama.cpp read {read} of {size} state bytes; the payload does not match")

    def save_seq_file(self, path: Path, tokens: Sequence[int], seq_id: int = 0) -> int:
        """llama.cpp's own per-sequence state file (llama_state_seq_save_file): its bytes written."""
        lib = llama()
        arr = (lib.llama_token * len(tokens))(*tokens)
        written = lib.llama_state_seq_save_file(self.handle, str(path).encode(), seq_id, arr, len(tokens))
        if written == 0:
            raise StateRestoreError(f"llama_state_seq_save_file wrote nothing to {path}")
        return int(written)

    def load_seq_file(self, path: Path, capacity: int, seq_id: int = 0) -> list[int]:
        """Restore a llama.cpp per-sequence state file into `seq_id`; the tokens it carries. It checks nothing
        but sizes: no hash, no signature, no fingerprint."""
        lib = llama()
        out = (lib.llama_token * capacity)()
        count = ctypes.c_size_t(0)
        read = lib.llama_state_seq_load_file(self.handle, str(path).encode(), seq_id, out, capacity,
                                             ctypes.byref(count))
        if read == 0:
            raise StateRestoreError(f"llama_state_seq_load_file refused {path}")
        return list(out[:count.value])

    def clear(self) -> None:
        """Empty the KV memory (metadata and data buffers) so the context can serve another graft."""
        lib = llama()
        lib.llama_memory_clear(lib.llama_get_memory(self.handle), True)

    def seq_shift(self, delta: int, seq_id: int = 0) -> None:
        """Relocate every cell of `seq_id` by `delta` positions (RoPE K-shift applied at the next decode)."""
        lib = llama()
        lib.llama_memory_seq_add(lib.llama_get_memory(self.handle), seq_id, -1, -1, delta)

    def seq_copy(self, src: int, dst: int) -> None:
        lib = llama()
        lib.llama_memory_seq_cp(lib.llama_get_memory(self.handle), src, dst, -1, -1)

    def seq_remove(self, seq_id: int) -> None:
        lib = llama()
        if not lib.llama_memory_seq_rm(lib.llama_get_memory(self.handle), seq_id, -1, -1):
            raise DecodeError(f"llama_memory_seq_rm refused to clear sequence {seq_id}")

    def truncate(self, n_pos: int, seq_id: int = 0) -> None:
        """Remove the cells of `seq_id` at positions >= n_pos (their bytes stay in the buffers, masked out)."""
        lib = llama()
        if not lib.llama_memory_seq_rm(lib.llama_get_memory(self.handle), seq_id, n_pos, -1):
            raise DecodeError(f"llama_memory_seq_rm refused to remove positions >= {n_pos} of sequence {seq_id}")

    def seq_pos_max(self, seq_id: int = 0) -> int:
        lib = llama()
        return int(lib.llama_memory_seq_pos_max(lib.llama_get_memory(self.handle), seq_id))

    def close(self) -> None:
        if self._handle is not None:
            lib = llama()
            lib.llama_free(self._handle)
            lib.llama_batch_free(self._batch)
            self._handle = None

    def __enter__(self) -> LlamaContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
