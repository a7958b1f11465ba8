"""The architecture fingerprint (what must match for a state to be loadable and meaningful) and the numerics
profile (what must match for byte-exactness). Both are stable, printable and recorded with every capture."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engine.devices import CpuOnly, Devices, GpuDevice
from engine.native import ContextConfig, LlamaModel, llama

_HASH_CHUNK = 4 << 20
_sha_lock = threading.Lock()


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _digest_id(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:32]


def file_sha256(path: Path, cache_file: Path | None = None) -> str:
    """SHA-256 of a file, cached by (real path, size, mtime) in `cache_file` so a 100 MB GGUF is hashed once."""
    path = Path(path).resolve()
    st = path.stat()
    key = f"{path}|{st.st_size}|{st.st_mtime_ns}"
    with _sha_lock:
        cache: dict[str, str] = {}
        if cache_file is not None and cache_file.is_file():
            try:
                loaded = json.loads(cache_file.read_text())
                cache = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                cache = {}  # a damaged cache is only a cache
            if key in cache:
                return cache[key]
        h = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(_HASH_CHUNK):
                h.update(chunk)
        digest = h.hexdigest()
        if cache_file is not None:
            cache[key] = digest
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(cache, indent=0))
            os.replace(tmp, cache_file)
        return digest


def _ggml_build_info() -> dict[str, str]:
    """ggml's version and commit, read from the libggml shipped inside llama_cpp when it exports them."""
    import llama_cpp

    lib_dir = Path(llama_cpp.__file__).parent / "lib"
    info: dict[str, str] = {}
    for name in ("libggml-base.so", "libggml.so"):
        lib_path = lib_dir / name
        if not lib_path.exists():
            continue
        lib = ctypes.CDLL(str(lib_path))
        for field in ("version", "commit"):
            fn = getattr(lib, f"ggml_{field}", None)
            if fn is not None and field not in info:
                fn.restype = ctypes.c_char_p
                info[field] = (fn() or b"").decode()
    return info


# Environment variables ggml-cpu reads that change which kernel computes a matmul or a fused op (grep getenv in the
# vendored ggml/src/ggml-cpu): the tiled K-quant matmul's master switch and its force flag (tiled/tiled.cpp), op
# fusion (ggml-cpu.c), KleidiAI's SME kernels (ARM). The others ggml reads (backtraces, debug output, OpenMP's
# KMP_BLOCKTIME) change no result.
GGML_KERNEL_SWITCHES = ("GGML_CPU_TILED_MM", "GGML_CPU_TILED_MM_FORCE", "GGML_CPU_DISABLE_FUSION", "GGML_KLEIDIAI_SME")


def ggml_env() -> str:
    """The kernel switches set in this process, as ggml itself reads them: through the C library's getenv (they are
    ggml's configuration, not kvgraft's, which the engine never takes from the environment)."""
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    libc.getenv.argtypes = [ctypes.c_char_p]
    found = []
    for name in GGML_KERNEL_SWITCHES:
        value = libc.getenv(name.encode())
        if value is not None:
            found.append(f"{name}={value.decode(errors='replace')}")
    return " ".join(found)


def build_info() -> dict[str, str]:
    lib = llama()
    info = {
        "llama_cpp_python": lib.__version__,
        "system_info": lib.llama_print_system_info().decode().strip(),
        "gpu_offload": "yes" if lib.llama_supports_gpu_offload() else "no",
    }
    info.update({f"ggml_{k}": v for k, v in _ggml_build_info().items()})
    return info


@dataclass(frozen=True)
class ArchitectureFingerprint:
    """What must match for a captured state to be loadable and meaningful on this engine."""

    gguf_sha256: str
    gguf_bytes: int
    architecture: str
    llama_cpp_python: str
    ggml_version: str
    ggml_commit: str
    system_info: str
    backend: str
    gpu_layers: int
    type_k: str
    type_v: str
    flash_attn: str
    n_seq_max: int
    kv_unified: bool
    # the GPU an offloading engine computes on (engine/devices.py); None on the CPU backend, where they are left
    # out of parts() so that CPU fingerprints keep the ids they had before GPUs were named
    gpu_name: str | None = None
    gpu_count: int | None = None
    gpu_compute_capability: str | None = None
    gpu_driver: str | None = None
    cuda_runtime: str | None = None
    cublas: str | None = None
    cuda_build: str | None = None
    # ggml's own kernel switches as ggml sees them in this process (GGML_KERNEL_SWITCHES, `NAME=value` joined by
    # spaces); left out of the parts when none is set, so fingerprints made before it was recorded keep their ids
    ggml_env: str = ""

    @property
    def id(self) -> str:
        return _digest_id(self.parts())

    def parts(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None or k not in _GPU_PARTS}
        if not out["ggml_env"]:
            del out["ggml_env"]
        return out

    def differences(self, other_parts: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
        """Parts that differ: {name: (this engine's value, the other value)}."""
        mine = self.parts()
        keys = set(mine) | set(other_parts)
        return {k: (mine.get(k), other_parts.get(k)) for k in sorted(keys) if mine.get(k) != other_parts.get(k)}


_GPU_PARTS = ("gpu_name", "gpu_count", "gpu_compute_capability", "gpu_driver", "cuda_runtime", "cublas", "cuda_build")


def query_class(n_query: int) -> str:
    """The attention-kernel class of a query batch on llama.cpp's CPU flash-attention path:
    one token (split-KV path, thread-count dependent), 2-63 (per-row online softmax), 64+ (tiled)."""
    if n_query <= 1:
        return "single"
    return "small" if n_query < 64 else "tiled"


@dataclass(frozen=True)
class NumericsProfile:
    """What must match for byte-exactness: the prefill grid, threads, query-size class, SWA cache mode and KV
    element type."""

    n_ctx: int
    n_batch: int
    n_ubatch: int
    prefill_chunk: int
    threads: int
    query_class: str
    swa_full: bool
    kv_type: str = "f16"  # the KV cache's element type (also in the fingerprint); f16 is left out of the dict
    # on a GPU, the CUDA options that select kernels (engine/devices.py kernel_options: flash attention, CUDA
    # graphs, MMQ or cuBLAS, GGML_CUDA_* switches), sorted (name, value) pairs; empty on the CPU, and then not written
    cuda: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        return _digest_id(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        """The profile's fields; the default KV type and an empty CUDA part are not written, so f16 CPU profiles
        (and the blocks and attestations that name them) keep the ids they had before those were part of it."""
        out = asdict(self)
        if out["kv_type"] == "f16":
            del out["kv_type"]
        if self.cuda:
            out["cuda"] = dict(self.cuda)
        else:
            del out["cuda"]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NumericsProfile:
        optional = {"kv_type", "cuda"}
        missing = [k for k in cls.__dataclass_fields__ if k not in data and k not in optional]
        if missing:
            raise ValueError(f"numerics profile lacks {', '.join(missing)}")
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if "cuda" in fields:
            fields["cuda"] = cuda_pairs(fields["cuda"])
        return cls(**fields)


def cuda_pairs(options: dict[str, str] | Any) -> tuple[tuple[str, str], ...]:
    """A profile's CUDA options as sorted (name, value) pairs (from a dict, or pairs as a block's JSON holds them)."""
    items = options.items() if isinstance(options, dict) else options
    return tuple(sorted((str(k), str(v)) for k, v in items))


@dataclass(frozen=True)
class BatchProfile:
    """A numerics profile computed in a multi-sequence context: the sequences decoded in one call at most and
    the KV layout (`streams`: one KV stream per sequence). What a `batch` attestation is for."""

    base: NumericsProfile
    max_seqs: int
    kv_layout: str = "streams"
    check: str = ""  # the version of the check that measures it: a changed check measures again

    def as_dict(self) -> dict[str, Any]:
        return {**self.base.as_dict(), "max_seqs": self.max_seqs, "kv_layout": self.kv_layout, "check": self.check}

    @property
    def id(self) -> str:
        return _digest_id(self.as_dict())


def gpu_parts(gpus: tuple[GpuDevice, ...]) -> dict[str, Any]:
    """The fingerprint's GPU fields: the first GPU's, and how many there are (llama.cpp splits layers over all)."""
    first = gpus[0]
    return {"gpu_name": first.name, "gpu_count": len(gpus), "gpu_compute_capability": first.compute_capability,
            "gpu_driver": first.driver, "cuda_runtime": first.cuda_runtime, "cublas": first.cublas,
            "cuda_build": first.cuda_build}


def fingerprint_of(
    model: LlamaModel, config: ContextConfig, *, gguf_sha256: str, gpu_layers: int | None,
    devices: Devices | None = None,
) -> ArchitectureFingerprint:
    """The engine's fingerprint. `gpu_layers` None: the CPU backend alone (no device is given to llama.cpp); a
    number (0 included: ggml may still offload large batches to the GPU) on a machine with GPUs: the GPU backend,
    named in the GPU fields."""
    info = build_info()
    type_k, type_v = config.type_k, config.type_v  # what the context is created with (KVGRAFT_KV_TYPE)
    gpus = () if gpu_layers is None else (devices or CpuOnly()).gpus()
    return ArchitectureFingerprint(
        gguf_sha256=gguf_sha256,
        gguf_bytes=model.path.stat().st_size,
        architecture=model.architecture,
        llama_cpp_python=info["llama_cpp_python"],
        ggml_version=info.get("ggml_version", "unknown"),
        ggml_commit=info.get("ggml_commit", "unknown"),
        system_info=info["system_info"],
        backend="gpu" if gpus else "cpu",
        gpu_layers=gpu_layers or 0,
        type_k=type_k,
        type_v=type_v,
        flash_attn="on" if config.flash_attn else "off",
        n_seq_max=config.n_seq_max,
        kv_unified=config.kv_unified,
        **(gpu_parts(gpus) if gpus else {}),
        ggml_env=ggml_env(),
    )
