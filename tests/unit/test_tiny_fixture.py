from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine.errors import ModelNotFoundError
from engine.models import resolve_model
from engine.tiny import write_tiny_gguf

pytestmark = pytest.mark.unit


def test_tiny_gguf_is_deterministic_per_seed(tmp_path: Path) -> None:
    def digest(p: Path) -> str:
        return hashlib.sha256(p.read_bytes()).hexdigest()

    a = write_tiny_gguf(tmp_path / "a.gguf", seed=1)
    b = write_tiny_gguf(tmp_path / "b.gguf", seed=1)
    c = write_tiny_gguf(tmp_path / "c.gguf", seed=2)
    assert digest(a) == digest(b) != digest(c)
    assert not list(tmp_path.glob(".tiny-*"))  # no temporary files left behind


def test_tiny_model_facts(tiny_engine) -> None:  # noqa: ANN001
    m = tiny_engine.model
    assert m.architecture == "llama" and m.n_layer == 2 and m.n_ctx_train >= 4096
    text = "Hello world, the answer is 42. Café ünïcödé 数学"
    assert m.detokenize(tiny_engine.tokenize(text, add_special=False)).strip() == text


def test_unknown_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="not a known name"):
        resolve_model("no-such-model", cache_dir=tmp_path)
