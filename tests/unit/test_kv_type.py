"""The KV cache's element type as a profile (KVGRAFT_KV_TYPE): q8_0 is another fingerprint, the gate holds under it,
its states are about half the bytes, a state of one type is refused by a context of the other, states transcode
between the one- and multi-sequence forms under it, and a type llama.cpp cannot run (a quantized V cache without
flash attention) is a clear error, not a context that fails later."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.batching import BatchCore, SequenceJob
from engine.errors import FingerprintMismatchError
from engine.gate import GateRequest, run_gate
from engine.graft import EngineConfig, GraftEngine
from engine.sampling import SamplingParams
from engine.texts import sample_tokens
from engine.tiny import TinyShape, write_tiny_gguf
from services.cli import app

pytestmark = pytest.mark.unit


def _engine(cache: Path, kv_type: str) -> GraftEngine:
    """The tiny model with heads of 32 (q8_0 blocks are 32 elements: llama.cpp needs them to divide a head)."""
    path = cache / "models" / "tiny-head32.gguf"
    if not path.exists():
        write_tiny_gguf(path, shape=TinyShape(n_head=2, n_head_kv=2))
    return GraftEngine.load(str(path), EngineConfig(n_ctx=1024, prefill_chunk=64, threads=2, kv_type=kv_type),
                            cache_dir=cache)


def test_q8_0_is_another_fingerprint_half_the_bytes_and_the_gate_holds(kvgraft_cache: Path) -> None:
    with _engine(kvgraft_cache, "f16") as f16, _engine(kvgraft_cache, "q8_0") as q8:
        assert (q8.fingerprint.type_k, q8.fingerprint.type_v) == ("q8_0", "q8_0")
        assert (f16.fingerprint.type_k, f16.fingerprint.type_v) == ("f16", "f16")
        assert q8.fingerprint.id != f16.fingerprint.id
        assert q8.profile(8).as_dict()["kv_type"] == "q8_0" and "kv_type" not in f16.profile(8).as_dict()
        assert q8.profile(8).id != f16.profile(8).id
        tokens = sample_tokens(f16, 300)
        small, big = q8.capture(tokens), f16.capture(tokens)
        assert len(small.payload) <= 0.55 * len(big.payload)
        assert small.payload == q8.capture(tokens).payload  # the control: capture is reproducible
        with pytest.raises(FingerprintMismatchError, match="type_k"):
            f16.graft(small, tokens[:4])
        result = run_gate(q8, GateRequest(n_tokens=200, n_query=8))
        assert result.passed and result.byte_exact and result.continuation_equal and result.recapture_equal


def test_q8_0_states_transcode_between_one_and_many_sequences(kvgraft_cache: Path) -> None:
    with _engine(kvgraft_cache, "q8_0") as q8:
        tokens = sample_tokens(q8, 90)
        with q8.open_context() as ctx:
            q8.prefill(ctx, tokens)
            alone = ctx.state_bytes()
        with q8.open_batch_context(3) as ctx:
            q8.prefill(ctx, sample_tokens(q8, 40, start=3), seq_id=0)
            q8.prefill(ctx, tokens, seq_id=1)
            assert ctx.state_bytes(1) == alone
        job = SequenceJob(tokens=tuple(tokens) + (5, 6, 7), params=SamplingParams(max_tokens=6), digests=True,
                          restore=q8.capture(tokens))
        with q8.open_context() as ctx:
            one = BatchCore(q8, ctx).run_all([(0, job)])[0]
        with q8.open_batch_context(3) as ctx:
            other = SequenceJob(tokens=tuple(sample_tokens(q8, 50, start=7)), params=SamplingParams(max_tokens=6))
            many = BatchCore(q8, ctx, pad_to=2).run_all([(0, other), (0, job)])[1]
        # the q8_0 state set into a slot of the batch context (not refused and prefilled instead)
        assert one.restored_tokens == many.restored_tokens == 90
        assert len(one.generated.tokens) == len(many.generated.tokens) == 6


def test_a_type_llama_cpp_cannot_run_or_does_not_know_is_a_clear_error(data_dir: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="needs flash attention on"):
        EngineConfig(kv_type="q8_0", flash_attn=False)
    with pytest.raises(ValueError, match="KV type must be one of"):
        EngineConfig(kv_type="q3_k")
    monkeypatch.setenv("KVGRAFT_KV_TYPE", "q3_k")
    result = CliRunner().invoke(app, ["blocks", "list", "--json"])
    assert result.exit_code != 0 and "KVGRAFT_KV_TYPE" in result.output
