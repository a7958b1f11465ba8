"""Byte-exact capture and restore on the tiny model, always with the fresh-vs-fresh control in the same test."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.gate import GateRequest, run_gate
from engine.graft import EngineConfig, GraftEngine, KVSnapshot
from engine.texts import sample_tokens
from store.blockfile import write_block_file
from workers.seam import block_file_roundtrip, snapshot_to_block

pytestmark = pytest.mark.unit


def _prompt(engine: GraftEngine, n: int = 180, q: int = 8) -> tuple[list[int], list[int]]:
    tokens = sample_tokens(engine, n + q, start=2)
    return tokens[:n], tokens[n:]


def test_graft_equals_fresh_and_fresh_equals_fresh(tiny_engine: GraftEngine) -> None:
    prefix, query = _prompt(tiny_engine)
    fresh_a = tiny_engine.fresh(prefix, query)
    fresh_b = tiny_engine.fresh(prefix, query)
    assert fresh_a.sha256() == fresh_b.sha256()  # the floor: this configuration is deterministic
    snapshot = tiny_engine.capture(prefix, n_query=len(query))
    grafted = tiny_engine.graft(snapshot, query)
    assert grafted.row_sha256() == fresh_a.row_sha256()
    # and the graft is not trivially equal: a different prefix gives different logits
    other = tiny_engine.fresh(prefix[:-1] + [prefix[-1] + 1], query)
    assert other.sha256() != fresh_a.sha256()


def test_graft_over_a_separately_loaded_model_object(tiny_engine: GraftEngine) -> None:
    prefix, query = _prompt(tiny_engine, 150)
    fresh = tiny_engine.fresh(prefix, query)
    assert fresh.sha256() == tiny_engine.fresh(prefix, query).sha256()
    snapshot = block_file_roundtrip(tiny_engine.capture(prefix, n_query=len(query)))
    other = tiny_engine.sibling()
    try:
        assert other.model.handle != tiny_engine.model.handle
        assert other.graft(snapshot, query, payload_verified=True).sha256() == fresh.sha256()
    finally:
        other.close()


def test_graft_in_another_process(tiny_engine: GraftEngine, tmp_path: Path) -> None:
    prefix, query = _prompt(tiny_engine, 200)
    fresh = tiny_engine.fresh(prefix, query)
    assert fresh.sha256() == tiny_engine.fresh(prefix, query).sha256()
    block_path = tmp_path / "b.kvg"
    write_block_file(snapshot_to_block(tiny_engine.capture(prefix, n_query=len(query)), kind="document"),
                     block_path)
    script = textwrap.dedent(f"""
        import json
        from pathlib import Path
        from engine.graft import EngineConfig, GraftEngine
        from store.blockfile import read_block_file
        from workers.seam import block_to_snapshot
        from workers.settings import load_settings
        engine = GraftEngine.load("tiny", EngineConfig(threads=2), cache_dir=load_settings().cache_dir)
        snap = block_to_snapshot(read_block_file(Path({str(block_path)!r})))
        print(json.dumps({{"sha": engine.graft(snap, {query!r}, payload_verified=True).sha256()}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["sha"] == fresh.sha256()


def test_long_prompt_is_prefilled_in_chunks_without_crashing(tiny_engine: GraftEngine) -> None:
    prefix, query = _prompt(tiny_engine, 3000)
    assert len(prefix) > 5 * tiny_engine.config.n_batch
    fresh = tiny_engine.fresh(prefix, query)
    assert fresh.sha256() == tiny_engine.fresh(prefix, query).sha256()
    assert tiny_engine.graft(tiny_engine.capture(prefix), query).sha256() == fresh.sha256()


def test_gate_passes_on_tiny_and_reports_every_field(tiny_engine: GraftEngine) -> None:
    result = run_gate(tiny_engine, GateRequest(n_tokens=200, n_query=8), roundtrip=block_file_roundtrip)
    assert result.passed and result.byte_exact and result.fresh_floor_equal
    assert result.graft_sha256 == result.fresh_sha256
    assert result.argmax_agree == "8/8" and result.kl_max == 0.0 and result.max_abs_diff == 0.0
    assert result.profile["query_class"] == "small" and result.fingerprint == tiny_engine.fingerprint.id
    assert set(result.timings_ms) >= {"fresh_ms", "capture_ms", "persist_ms", "restore_query_ms"}


def test_gate_reports_a_graft_captured_on_another_batching_grid(tiny_engine: GraftEngine) -> None:
    """A capture prefilled in 50-token calls differs from the 512-token-grid reference: the gate must say so."""
    coarse_grid = EngineConfig(threads=2, prefill_chunk=50)
    other = GraftEngine(tiny_engine.model, coarse_grid, name="tiny")

    def recapture_on_other_grid(snapshot: KVSnapshot) -> KVSnapshot:
        return other.capture(list(snapshot.tokens), n_query=8)

    result = run_gate(tiny_engine, GateRequest(n_tokens=300, n_query=8, separate_model=False),
                      roundtrip=recapture_on_other_grid)
    assert result.fresh_floor_equal
    assert not result.byte_exact and not result.passed
    assert result.graft_sha256 != result.fresh_sha256
    assert any(f.startswith("graft:") for f in result.failures)
    assert result.kl_max < 1e-3  # a batching difference, not a wrong graft


def test_a_prefill_continued_on_the_absolute_grid_makes_the_calls_a_fresh_one_makes() -> None:
    """After a prefix restored at an unaligned position, origin 0 keeps the decode calls on multiples of the chunk
    (what a fresh prefill of the whole prompt does there); the default counts the grid from pos0."""
    engine = GraftEngine.__new__(GraftEngine)
    engine.config = EngineConfig(prefill_chunk=16)
    assert engine.grid(20, 30, origin=0) == [(20, 32), (32, 48), (48, 50)]
    assert engine.grid(20, 30, origin=None) == [(20, 36), (36, 50)]
    assert engine.grid(32, 16, origin=0) == [(32, 48)]
    assert engine.grid(5, 3, origin=0) == [(5, 8)]
    with pytest.raises(ValueError, match="before the grid's origin"):
        engine.grid(3, 4, origin=8)
