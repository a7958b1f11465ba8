"""The gate on the real default model (SmolLM2-135M-Instruct) with a short prompt. Serial and small."""

from __future__ import annotations

import pytest

from engine.gate import GateRequest, run_gate
from engine.graft import GraftEngine
from workers.blocks import block_file_roundtrip

pytestmark = pytest.mark.model


def test_gate_is_byte_exact_on_the_default_model(smollm2_engine: GraftEngine) -> None:
    result = run_gate(smollm2_engine, GateRequest(n_tokens=48, n_query=8), roundtrip=block_file_roundtrip)
    assert result.fresh_floor_equal, result.failures
    assert result.byte_exact, result.failures
    assert result.graft_sha256 == result.fresh_sha256
    assert result.fingerprint_parts["architecture"] == "llama"
    # SmolLM2: 30 layers x 3 KV heads x (64 + 64) x f16 = 23,040 B/token, plus a little cell metadata
    assert 23040 * 48 <= result.state_bytes < 23100 * 48


def test_relocation_is_not_exact_on_the_default_model(smollm2_engine: GraftEngine) -> None:
    from engine.logits import compare
    from engine.texts import sample_tokens

    tokens = sample_tokens(smollm2_engine, 48 + 4)
    prefix, query = tokens[:48], tokens[48:]
    snapshot = smollm2_engine.capture(prefix, n_query=4)
    own = compare(smollm2_engine.fresh(prefix, query), smollm2_engine.graft(snapshot, query))
    moved = compare(smollm2_engine.fresh(prefix, query, pos0=64), smollm2_engine.graft(snapshot, query, shift=64))
    assert own.byte_equal
    assert not moved.byte_equal and moved.kl_max < 0.05
