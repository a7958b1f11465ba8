"""The kernel map (`kvgraft bench batch-probe --weights`) and what it pins: which ggml path a weight matmul takes
by type and row count (read in the vendored ggml-cpu source), that the map finds a type whose rows change with the
row count, and that ggml's kernel switches are part of the fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.kernel_map import matmul_path
from engine.fingerprint import fingerprint_of
from engine.graft import GraftEngine
from services.cli import app

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]
runner = CliRunner()


def test_matmul_path_follows_the_vendored_source() -> None:
    assert matmul_path("Q4_1", 1) == matmul_path("Q4_1", 16) == "vec_dot"  # no tinyBLAS, no repack, no tiles
    assert matmul_path("Q8_0", 1) == "vec_dot" and matmul_path("Q8_0", 2) == "tinyBLAS"  # sgemm: n < 2 refused
    assert [matmul_path("Q4_0", r) for r in (1, 3, 4, 6)] == ["repack gemv", "repack gemv", "repack gemm",
                                                                "repack gemm+gemv"]
    assert matmul_path("Q4_0", 4, repackable=False) == "tinyBLAS"
    assert [matmul_path("Q6_K", r) for r in (1, 7, 8)] == ["vec_dot", "vec_dot", "tiled"]
    assert matmul_path("Q4_K", 8) == "repack gemm"  # repacked weights never take the tiles
    assert matmul_path("Q6_K", 8, tiled=False) == "vec_dot"  # GGML_CPU_TILED_MM=0
    assert matmul_path("F16", 2, llamafile=False) == "vec_dot"


def test_the_map_finds_rows_that_change_with_the_row_count(kvgraft_cache: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny model's F32 weights take tinyBLAS at two rows or more and vec_dot alone: not every position of a
    sequence decoded beside others equals it decoded alone (the `batch` check's pad rows exist for this)."""
    monkeypatch.delenv("GGML_CPU_TILED_MM", raising=False)
    result = runner.invoke(app, ["bench", "batch-probe", "--model", "tiny", "--weights", "f32", "--rows", "1,2,4",
                                 "--steps", "3", "--chunk", "16", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert [(r["weights"], r["flash_attn"]) for r in record["results"]] == [("f32", False), ("f32", True)]
    for r in record["results"]:
        assert r["model"] == "tiny" and r["tensor_types"] == {"F32": 15}
        assert r["ggml_env"] == ""
        assert r["all"]["positions"] == 4 * 4 and r["all"]["positions_equal"] < r["all"]["positions"]
        assert set(r["decode_ms"]) == {"1", "2", "4"} and r["prefill_tokens_per_s"] > 0
        assert r["paths"]["1"] == "F32: vec_dot" and r["paths"]["2"] == "F32: tinyBLAS"


def test_ggml_kernel_switches_are_in_the_fingerprint(tiny_engine: GraftEngine,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GGML_CPU_TILED_MM", raising=False)
    cfg = tiny_engine.config.context()
    plain = fingerprint_of(tiny_engine.model, cfg, gguf_sha256="x", gpu_layers=0)
    assert "ggml_env" not in plain.parts()  # none set: the ids made before the field existed stay
    monkeypatch.setenv("GGML_CPU_TILED_MM", "0")
    switched = fingerprint_of(tiny_engine.model, cfg, gguf_sha256="x", gpu_layers=0)
    assert switched.parts()["ggml_env"] == "GGML_CPU_TILED_MM=0"
    assert switched.id != plain.id
    assert switched.differences(plain.parts()) == {"ggml_env": ("GGML_CPU_TILED_MM=0", None)}
