"""`kvgraft bench batch-probe --weights TYPE[,TYPE...]`: the kernel map. For each weight type, a copy of the model
in that type (the shipped file for its own type, else the one `kvgraft models prepare` makes, prepared here when
missing), with flash attention off and on, a KV stream per sequence:

- batch invariance: S sequences (short prompts, so the KV view stays under the 256 cells where flash attention
  changes path: this isolates the weight kernels) computed alone in a one-sequence context and together in one
  S-sequence context, every step over all of them (`all`) and over changing subsets of 1..S (`ragged`), each
  position's logits SHA-256 compared with the solo run's, and each prefilled state with the one-sequence
  context's;
- decode cost per row count: one llama_decode call of r rows (one per sequence, consecutive sequence ids), the
  median of a few calls, for each r in `rows`;
- prefill: one `chunk`-token call in a one-sequence context, tokens per second (median of a few);
- the ggml path each weight matmul takes at each row count, inferred from the vendored ggml-cpu source (see
  `matmul_path`) and the GGUF's tensor types (read with the gguf package), not observed at run time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.batch_probe import batched, solo
from engine.errors import ModelNotFoundError
from engine.graft import EngineConfig, GraftEngine
from engine.models import KNOWN_MODELS, prepared_name, resolve_model
from engine.native import ContextConfig, DecodeRow, LlamaContext, LlamaModel
from engine.prepare import file_type_name, prepare_model, weight_tensor_types
from engine.texts import sample_tokens
from workers.settings import load_settings

Progress = Callable[[str], None] | None

# the shipped model's own type: its name, not a prepared copy
SHIPPED_TYPES = {"smollm2-135m": "q4_1", "gemma3-270m": "q4_k_m", "tiny": "f32", "tiny-q4_1": "q4_1"}
MAP_LENGTHS = (9, 14, 19, 23, 27, 31, 34, 37, 12, 17, 21, 25, 29, 33, 36, 40)  # short: under 256 KV cells

# ggml-cpu on x86 with AVX2 or AVX-512 (this build: llamafile and repack compiled in), read in the vendored source:
# - ggml-cpu.c ggml_compute_forward: an op whose weight lives in the repack ("CPU_REPACK") extra buffer is computed
#   by repack.cpp first. repack.cpp ggml_repack_get_optimal_repack_type repacks on x86 only Q4_0 (q4_0_8x8), Q4_K
#   (q4_K_8x8), IQ4_NL (8x8), MXFP4, and Q2_K with AVX-512, each when the tensor's row count is a multiple of 8;
#   its forward_mul_mat runs a gemm over the largest multiple of 4 of the activation rows and a gemv over the rest.
# - ggml_compute_forward_mul_mat then tries tiled/tiled.cpp (GGML_CPU_TILED_MM, on by default): K-quants and IQ
#   types not repacked, at 8 rows or more (ggml_tiled_min_batch; GGML_CPU_TILED_MM_FORCE=1 takes it at any count).
# - then llamafile_sgemm (tinyBLAS) for F32, F16, BF16 (AVX512_BF16), Q8_0, Q4_0, Q5_0, IQ4_NL weights at two rows
#   or more ("only enable sgemm for prompt processing": n < 2 returns false);
# - else ggml's own per-row dot products (vec_dot, the weight type's vec_dot_type).
REPACKED = {"Q4_0", "Q4_K", "IQ4_NL", "MXFP4", "Q2_K"}
TILED = {"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_XS", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S",
         "IQ1_S", "IQ1_M"}
TINYBLAS = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q5_0", "IQ4_NL"}


def matmul_path(ggml_type: str, rows: int, *, repack: bool = True, llamafile: bool = True, tiled: bool = True,
                repackable: bool = True) -> str:
    """The kernel a weight matmul of `ggml_type` takes for `rows` activation rows on this x86 build (see above);
    `repackable`: the tensor's row count allows repacking (a multiple of 8) and it is not the token embedding."""
    if repack and repackable and ggml_type in REPACKED:
        if rows < 4:
            return "repack gemv"
        return "repack gemm" if rows % 4 == 0 else "repack gemm+gemv"
    if tiled and ggml_type in TILED and rows >= 8:
        return "tiled"
    if llamafile and ggml_type in TINYBLAS and rows >= 2:
        return "tinyBLAS"
    return "vec_dot"


def paths_by_rows(types: dict[str, int], rows: Sequence[int], system_info: str) -> dict[str, str]:
    """For each row count, the distinct paths the model's weight matrices take (`type: path`, joined)."""
    repack = "REPACK = 1" in system_info
    llamafile = "LLAMAFILE = 1" in system_info
    out = {}
    for r in rows:
        out[str(r)] = ", ".join(sorted({f"{t}: {matmul_path(t, r, repack=repack, llamafile=llamafile)}"
                                        for t in types}))
    return out


@dataclass(frozen=True)
class KernelMapRequest:
    weights: tuple[str, ...]
    source: str = "smollm2-135m"
    rows: tuple[int, ...] = (1, 2, 3, 4, 8, 12, 16)
    steps: int = 4
    chunk: int = 64
    threads: int = 2
    flash_attn: tuple[bool, ...] = (False, True)
    reps: int = 5


def model_for(source: str, weight_type: str, cache_dir: Path, threads: int, say: Callable[[str], None]) -> str:
    if SHIPPED_TYPES.get(source) == weight_type:
        return source
    name = prepared_name(source, weight_type)
    if name in KNOWN_MODELS:
        return name
    try:
        resolve_model(name, cache_dir=cache_dir)
    except ModelNotFoundError:
        say(f"preparing {name}")
        prepare_model(source, weight_type, cache_dir=cache_dir, threads=threads)
    return name


def _decode_costs(model: LlamaModel, cfg: ContextConfig, prompts: Sequence[Sequence[int]], rows: Sequence[int],
                  chunk: int, reps: int) -> dict[str, float]:
    """Median ms of one decode call of r rows (sequences 0..r-1), for each r."""
    pos = [len(p) for p in prompts]
    costs = {}
    with LlamaContext(model, cfg) as ctx:
        for s, p in enumerate(prompts):
            for a in range(0, len(p), chunk):
                ctx.decode(p[a:a + chunk], pos0=a, seq_id=s)
        for r in rows:
            times = []
            for _ in range(reps):
                batch = [DecodeRow(int(prompts[s][-1]), pos[s], s) for s in range(r)]
                t0 = time.perf_counter()
                ctx.decode_rows(batch)
                times.append((time.perf_counter() - t0) * 1000)
                for s in range(r):
                    pos[s] += 1
            costs[str(r)] = round(statistics.median(times), 2)
    return costs


def _prefill_rate(model: LlamaModel, cfg: ContextConfig, tokens: Sequence[int], reps: int) -> float:
    times = []
    with LlamaContext(model, cfg) as ctx:
        for _ in range(reps):
            ctx.clear()
            t0 = time.perf_counter()
            ctx.decode(tokens, pos0=0, outputs=[len(tokens) - 1])
            times.append(time.perf_counter() - t0)
    return round(len(tokens) / statistics.median(times), 1)


def run_kernel_map(request: KernelMapRequest, progress: Progress = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    settings = load_settings()
    n = max(request.rows)
    lengths = MAP_LENGTHS[:n] if n <= len(MAP_LENGTHS) else tuple(9 + 2 * i for i in range(n))
    results = []
    for weight_type in request.weights:
        name = model_for(request.source, weight_type, settings.cache_dir, request.threads, say)
        config = EngineConfig(n_ctx=256, prefill_chunk=request.chunk, threads=request.threads)
        with GraftEngine.load(name, config, cache_dir=settings.cache_dir) as engine:
            types = weight_tensor_types(engine.model.path)
            system_info = engine.fingerprint.system_info
            prompts = [sample_tokens(engine, m, start=3 * i) for i, m in enumerate(lengths)]
            per_seq = 256
            for flash_attn in request.flash_attn:
                say(f"{name}: flash attention {'on' if flash_attn else 'off'}")
                base = replace(engine.config.context(), n_ctx=per_seq, flash_attn=flash_attn)
                multi = replace(base, n_ctx=per_seq * n, n_seq_max=n)
                refs = [solo(engine.model, base, p, request.chunk, request.steps) for p in prompts]
                together = {c: batched(engine.model, multi, prompts, refs, request.chunk, c) for c in ("all", "ragged")}
                costs = _decode_costs(engine.model, multi, prompts, request.rows, request.chunk, request.reps)
                prefill = _prefill_rate(engine.model, base, sample_tokens(engine, request.chunk, start=1),
                                        request.reps)
                one = costs[str(min(request.rows))]
                results.append({
                    "weights": weight_type, "model": name, "file_type": file_type_name(engine.model),
                    "tensor_types": types, "flash_attn": flash_attn, "sequences": n,
                    "ggml_env": engine.fingerprint.ggml_env,
                    "all": {k: together["all"][k] for k in ("positions_equal", "positions", "states_equal",
                                                            "states")},
                    "ragged": {k: together["ragged"][k] for k in ("positions_equal", "positions")},
                    "decode_ms": costs,
                    "decode_gain": {r: round(int(r) * one / ms, 2) for r, ms in costs.items()},
                    "prefill_tokens_per_s": prefill,
                    "paths": paths_by_rows(types, request.rows, system_info)})
    return {"benchmark": "batch-probe", "mode": "kernel-map", "source": request.source, "threads": request.threads,
            "rows": list(request.rows), "steps": request.steps, "chunk": request.chunk, "prompt_lengths": list(lengths),
            "results": results}
