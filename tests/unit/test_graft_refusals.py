"""A graft that would be wrong is refused with a clear exception before (or instead of) touching a context."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import DecodeError, FingerprintMismatchError, PayloadIntegrityError, StateRestoreError
from engine.fingerprint import file_sha256
from engine.graft import EngineConfig, GraftEngine
from engine.texts import sample_tokens

pytestmark = pytest.mark.unit


@pytest.fixture()
def snapshot(tiny_engine: GraftEngine):  # noqa: ANN201
    return tiny_engine.capture(sample_tokens(tiny_engine, 120), n_query=8)


def test_tampered_payload_is_refused(tiny_engine: GraftEngine, snapshot) -> None:  # noqa: ANN001
    payload = bytearray(snapshot.payload)
    payload[len(payload) // 2] ^= 0x01
    with tiny_engine.open_context() as ctx, pytest.raises(PayloadIntegrityError, match="tampered or truncated"):
        tiny_engine.restore(ctx, replace(snapshot, payload=bytes(payload)))


def test_truncated_payload_is_refused_by_hash_and_by_llama_cpp(tiny_engine: GraftEngine, snapshot) -> None:  # noqa: ANN001
    short = replace(snapshot, payload=snapshot.payload[:-17])
    with tiny_engine.open_context() as ctx, pytest.raises(PayloadIntegrityError):
        tiny_engine.restore(ctx, short)
    # even when the hash check is skipped, llama.cpp's return code is checked: no crash, no silent graft
    for cut in (10, len(snapshot.payload) // 2, len(snapshot.payload) - 1):
        with tiny_engine.open_context() as ctx, pytest.raises(StateRestoreError, match="returned 0"):
            tiny_engine.restore(ctx, replace(snapshot, payload=snapshot.payload[:cut]), payload_verified=True)


def test_state_from_another_fingerprint_is_refused(tiny_engine: GraftEngine, snapshot) -> None:  # noqa: ANN001
    parts = dict(snapshot.fingerprint_parts, gguf_sha256="0" * 64)
    foreign = replace(snapshot, fingerprint="f" * 32, fingerprint_parts=parts)
    with tiny_engine.open_context() as ctx, pytest.raises(FingerprintMismatchError, match="gguf_sha256"):
        tiny_engine.restore(ctx, foreign)


def test_flash_attention_mismatch_is_refused_clearly(tiny_engine: GraftEngine) -> None:
    fa_off = GraftEngine(tiny_engine.model, EngineConfig(threads=2, flash_attn=False), name="tiny")
    tokens = sample_tokens(tiny_engine, 100)
    captured_off = fa_off.capture(tokens)
    with tiny_engine.open_context() as ctx, pytest.raises(FingerprintMismatchError, match="flash_attn"):
        tiny_engine.restore(ctx, captured_off)
    # had the fingerprint been forged, llama.cpp's refusal (set_data returns 0) is still caught and explained
    forged = replace(captured_off, fingerprint=tiny_engine.fingerprint.id)
    with tiny_engine.open_context() as ctx, pytest.raises(StateRestoreError, match="flash attention"):
        tiny_engine.restore(ctx, forged)


def test_oversized_decode_is_refused_instead_of_aborting(tiny_engine: GraftEngine) -> None:
    tokens = sample_tokens(tiny_engine, tiny_engine.config.n_batch + 1)
    with tiny_engine.open_context() as ctx, pytest.raises(DecodeError, match="exceeds n_batch"):
        ctx.decode(tokens, pos0=0)
    with tiny_engine.open_context() as ctx, pytest.raises(DecodeError, match="do not fit"):
        ctx.decode(tokens[:8], pos0=tiny_engine.config.n_ctx - 4)


def test_fingerprint_changes_when_one_byte_of_the_gguf_changes(tiny_engine: GraftEngine, tmp_path: Path) -> None:
    copy = tmp_path / "copy.gguf"
    shutil.copyfile(tiny_engine.model.path, copy)
    same = GraftEngine.load(str(copy), EngineConfig(threads=2), cache_dir=tmp_path)
    assert same.fingerprint.id == tiny_engine.fingerprint.id
    same.close()
    data = bytearray(copy.read_bytes())
    data[-3] ^= 0x01  # inside the last tensor's float data: the file still loads
    flipped = tmp_path / "flipped.gguf"
    flipped.write_bytes(bytes(data))
    changed = GraftEngine.load(str(flipped), EngineConfig(threads=2), cache_dir=tmp_path)
    try:
        assert changed.fingerprint.id != tiny_engine.fingerprint.id
        assert set(changed.fingerprint.differences(tiny_engine.fingerprint.parts())) == {"gguf_sha256"}
    finally:
        changed.close()


def test_gguf_hash_cache_is_keyed_by_size_and_mtime(tmp_path: Path) -> None:
    f, cache = tmp_path / "m.gguf", tmp_path / "sha.json"
    f.write_bytes(b"a" * 100)
    first = file_sha256(f, cache)
    assert file_sha256(f, cache) == first and cache.is_file()
    f.write_bytes(b"b" * 100)
    import os

    os.utime(f, ns=(1, 1))
    assert file_sha256(f, cache) != first


def test_closing_a_model_closes_its_live_contexts_first(tiny_engine: GraftEngine) -> None:
    from engine.errors import DecodeError
    from engine.native import LlamaModel

    model = LlamaModel(tiny_engine.model.path)
    engine = GraftEngine(model, tiny_engine.config, name="tiny")
    ctx = engine.open_context()
    engine.prefill(ctx, engine.tokenize("a context left open"))
    model.close()  # must not free the model under the live context
    with pytest.raises(DecodeError, match="closed"):
        ctx.decode([1], pos0=0)
    ctx.close()  # idempotent


def test_one_context_decodes_many_times_with_one_batch(tiny_engine: GraftEngine) -> None:
    with tiny_engine.open_context() as ctx:
        batch = ctx._batch
        for i in range(20):
            ctx.decode([5 + i], pos0=i, outputs=[0])
        assert ctx._batch is batch
