"""`kvgraft models prepare`: a copy of a known model with its weights requantized by llama.cpp's own quantizer
(libllama's `llama_model_quantize`, the vendored source llama-cpp-python is built from), registered under a name of
its own (`<source>-<type>`, engine/models.py) and measured against its source before it is used.

The copy is another GGUF file: another SHA-256, so another fingerprint, and blocks and attestations of the source
never apply to it. Its quality is measured beside it (`<name>.quality.json`): the perplexity of source and copy on
a fixed text shipped with the project (engine/data/passages.txt, the first `tokens` tokens, scored as one
sequence on the engine's prefill grid), and the relative change. When the source is itself quantized (the shipped
SmolLM2 file is Q4_1 and no higher-precision source is installed) the quantizer dequantizes it first
(`allow_requantize`): the copy can never be better than its source, and a lower type compounds the error; the
record says so (`requantized_from`).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import ModelLoadError
from engine.fingerprint import build_info, file_sha256
from engine.graft import EngineConfig, GraftEngine
from engine.models import (
    KNOWN_MODELS,
    WEIGHT_TYPES,
    ModelRef,
    prepared_name,
    prepared_path,
    resolve_model,
)
from engine.native import LlamaModel, llama
from engine.texts import PERPLEXITY_TEXT, sample_tokens

QUALITY_SUFFIX = ".quality.json"
PERPLEXITY_TOKENS = 512  # a few seconds per model on 2 cores at 135M parameters
QUALITY_VERSION = 1


@dataclass(frozen=True)
class Perplexity:
    tokens: int  # tokens scored (the text's first token is only context)
    nll_mean: float
    perplexity: float
    ms: float


@dataclass(frozen=True)
class PreparedModel:
    """What `kvgraft models prepare` made and measured (written beside the GGUF as `<name>.quality.json`)."""

    name: str
    weight_type: str  # what was asked for (a WEIGHT_TYPES key)
    file_type: str  # llama.cpp's name for the file's type, read back from the written model
    path: str
    sha256: str
    bytes: int
    source: str
    source_path: str
    source_sha256: str
    source_file_type: str
    requantized_from: str | None  # the source's quantized type when the quantizer had to dequantize it first
    text: str
    text_tokens: int
    perplexity_source: float
    perplexity: float
    perplexity_delta_pct: float  # (copy - source) / source, in percent
    quantizer: dict[str, str]
    quantize_ms: float
    version: int = QUALITY_VERSION

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def file_type_name(model: LlamaModel) -> str:
    """llama.cpp's name for a loaded model's weight type, e.g. `Q4_1` or `Q4_K - Medium` (for a file that does not
    record it, the type llama.cpp guessed from its tensors)."""
    lib = llama()
    name = lib.llama_ftype_name(lib.llama_model_ftype(model.handle))
    return (name or b"unknown").decode().removeprefix("(guessed) ")


def weight_tensor_types(path: Path) -> dict[str, int]:
    """A GGUF's weight matrices per ggml type (1-d tensors, norms and biases, left out), read with the gguf
    package: which kernels the model's matmuls can take (bench/kernel_map.py)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    return dict(sorted(Counter(t.tensor_type.name for t in reader.tensors if len(t.shape) > 1).items()))


def quantize_gguf(src: Path, dest: Path, weight_type: str, *, threads: int) -> None:
    """Write `src` requantized to `weight_type` at `dest` (atomically: a temporary file beside it, then renamed)."""
    if weight_type not in WEIGHT_TYPES:
        raise ValueError(f"--type must be one of {', '.join(WEIGHT_TYPES)}, not {weight_type!r}")
    lib = llama()
    params = lib.llama_model_quantize_default_params()
    params.ftype = WEIGHT_TYPES[weight_type]
    params.nthread = threads
    params.allow_requantize = True  # a quantized source is dequantized first (the record says so)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.stem}-", suffix=".gguf", dir=dest.parent)
    os.close(fd)
    try:
        rc = lib.llama_model_quantize(str(src).encode(), tmp_name.encode(), params)
        if rc != 0:
            raise ModelLoadError(f"llama.cpp could not quantize {src} to {weight_type} (llama_model_quantize "
                                 f"returned {rc})")
        os.replace(tmp_name, dest)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def perplexity(engine: GraftEngine, tokens: list[int]) -> Perplexity:
    """exp(mean negative log-likelihood) of tokens[1:] given their prefixes, the text decoded as one sequence in
    calls of the engine's prefill grid, every row's logits kept."""
    if len(tokens) < 2:
        raise ValueError("perplexity needs at least two tokens")
    t0 = time.perf_counter()
    nll = 0.0
    chunk = engine.config.prefill_chunk
    with engine.open_context() as ctx:
        for a in range(0, len(tokens) - 1, chunk):
            b = min(len(tokens) - 1, a + chunk)
            ctx.decode(tokens[a:b], pos0=a, outputs=range(b - a))
            for i in range(b - a):
                row = ctx.logits_row(i).astype(np.float64)
                top = float(row.max())
                log_z = top + math.log(float(np.exp(row - top).sum()))
                nll += log_z - float(row[tokens[a + i + 1]])
    n = len(tokens) - 1
    return Perplexity(n, nll / n, math.exp(nll / n), round((time.perf_counter() - t0) * 1000, 1))


def _measure(ref: ModelRef, n_tokens: int, threads: int, cache_dir: Path) -> tuple[Perplexity, str]:
    config = EngineConfig(n_ctx=max(256, -(-n_tokens // 256) * 256), prefill_chunk=64, flash_attn=False,
                          threads=threads)
    with GraftEngine.load(ref, config, cache_dir=cache_dir) as engine:
        return perplexity(engine, sample_tokens(engine, n_tokens)), file_type_name(engine.model)


def quality_path(gguf: Path) -> Path:
    return gguf.with_name(gguf.stem + QUALITY_SUFFIX)


def read_quality(gguf: Path) -> dict[str, Any] | None:
    """The quality record beside a prepared model, or None when there is none (or it does not parse)."""
    path = quality_path(gguf)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, record: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def record_solve_rates(gguf: Path, copy: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """Add the flywheel solve rates of a prepared copy and of its source (the same problems, seeds and samples:
    bench/flywheel.py `solve_rate`) to the copy's quality record; the record as written."""
    record = read_quality(gguf)
    if record is None:
        raise ModelLoadError(f"{gguf} has no quality record: prepare it again")
    if copy.get("problems") != source.get("problems") or copy.get("samples") != source.get("samples"):
        raise ValueError("the solve rates of a copy and its source must be measured on the same problems and samples")
    record |= {"solve_rate": copy, "solve_rate_source": source,
               "solve_rate_delta": int(copy["verified"]) - int(source["verified"])}
    _write_json(quality_path(gguf), record)
    return record


def prepare_model(source: str, weight_type: str, *, cache_dir: Path, threads: int,
                  text_tokens: int = PERPLEXITY_TOKENS) -> PreparedModel:
    """Requantize the known model `source` to `weight_type`, register it as `<source>-<type>` and measure its
    perplexity against the source's on the shipped text. Preparing again replaces the copy and its record."""
    if source not in KNOWN_MODELS:
        raise ValueError(f"models prepare takes a known model ({', '.join(KNOWN_MODELS)}), not {source!r}")
    weight_type = weight_type.lower()
    if weight_type not in WEIGHT_TYPES:
        raise ValueError(f"--type must be one of {', '.join(WEIGHT_TYPES)}, not {weight_type!r}")
    name = prepared_name(source, weight_type)
    if name in KNOWN_MODELS:
        raise ValueError(f"{name!r} already names a shipped model; it is not prepared")
    src = resolve_model(source, cache_dir=cache_dir)
    ppl_source, source_type = _measure(src, text_tokens, threads, cache_dir)
    if source_type.lower().replace(" - medium", "_m").replace(" - small", "_s").replace(" ", "") == weight_type:
        raise ValueError(f"{source} is already {source_type}: nothing to prepare")
    dest = prepared_path(cache_dir, name)
    t0 = time.perf_counter()
    quantize_gguf(src.path, dest, weight_type, threads=threads)
    quantize_ms = round((time.perf_counter() - t0) * 1000, 1)
    ppl, file_type = _measure(ModelRef(name, dest), text_tokens, threads, cache_dir)
    hash_cache = cache_dir / "gguf-sha256.json"
    info = build_info()
    requantized = None if source_type.upper() in ("F32", "ALL F32", "F16", "MOSTLY F16", "BF16") else source_type
    record = PreparedModel(
        name=name, weight_type=weight_type, file_type=file_type, path=str(dest),
        sha256=file_sha256(dest, hash_cache), bytes=dest.stat().st_size,
        source=source, source_path=str(src.path), source_sha256=file_sha256(src.path, hash_cache),
        source_file_type=source_type, requantized_from=requantized, text=PERPLEXITY_TEXT, text_tokens=text_tokens,
        perplexity_source=round(ppl_source.perplexity, 6), perplexity=round(ppl.perplexity, 6),
        perplexity_delta_pct=round((ppl.perplexity - ppl_source.perplexity) / ppl_source.perplexity * 100, 4),
        quantizer={"llama_cpp_python": info["llama_cpp_python"], "ggml_commit": info.get("ggml_commit", "unknown"),
                   "function": "llama_model_quantize"},
        quantize_ms=quantize_ms)
    _write_json(quality_path(dest), record.as_dict())
    return record
