"""On a CUDA build the engine imports llama_cpp before numpy (engine/_load_order.py: with numpy first, loading a
BPE model crashed in std::regex on an H200); on a CPU build it imports nothing."""

from __future__ import annotations

import importlib.machinery
import sys
from pathlib import Path

import pytest

from engine import _load_order

pytestmark = pytest.mark.unit


def _package_at(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    spec = importlib.machinery.ModuleSpec("llama_cpp", None, is_package=True)
    spec.submodule_search_locations = [str(root)]
    monkeypatch.setattr(_load_order.importlib.util, "find_spec", lambda name: spec if name == "llama_cpp" else None)


def test_a_cuda_build_is_imported_first_and_a_cpu_build_is_not(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libggml-cpu.so").touch()
    _package_at(monkeypatch, tmp_path)
    assert _load_order.load_llama_first() is False  # the CPU build: nothing to order
    (tmp_path / "lib" / "libggml-cuda.so.0").touch()
    assert _load_order.load_llama_first() is True
    assert "llama_cpp" in sys.modules


def test_no_llama_cpp_installed_is_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_load_order.importlib.util, "find_spec", lambda name: None)
    assert _load_order.load_llama_first() is False


def test_this_machines_build_is_checked_without_error() -> None:
    lib = Path(__import__("llama_cpp").__file__).parent / "lib"
    assert _load_order.load_llama_first() is any(lib.glob("libggml-cuda.so*"))
