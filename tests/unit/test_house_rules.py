"""Rules of the house that no import contract expresses, checked over the source: the settings are built in one
place (workers/settings.load_settings) and passed on, an EngineConfig is made from them in one place
(workers/settings.engine_config), and the engine reads no environment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "store", "workers", "services", "bench")


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            out.append((str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path))))
    return out


def _calls(tree: ast.Module, name: str) -> list[ast.Call]:
    def called(node: ast.Call) -> str | None:
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None

    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and called(n) == name]


def test_settings_are_built_in_one_place() -> None:
    built = [f"{path}:{call.lineno}" for path, tree in _modules() for call in _calls(tree, "Settings")]
    assert built == [next(f"workers/settings.py:{c.lineno}" for c in _calls(
        ast.parse((ROOT / "workers/settings.py").read_text()), "Settings"))]


def test_every_runtime_is_opened_over_settings_passed_in() -> None:
    bare = [f"{path}:{call.lineno}" for path, tree in _modules() for call in _calls(tree, "open_runtime")
            if not call.args and not call.keywords]
    assert bare == []


def test_engine_configs_come_from_the_settings_in_one_place() -> None:
    """Outside the engine itself and the benchmarks' own arms, EngineConfig is made only by engine_config."""
    made = [f"{path}:{call.lineno}" for path, tree in _modules() for call in _calls(tree, "EngineConfig")
            if not path.startswith(("engine/", "bench/")) and path != "workers/settings.py"]
    assert made == []


def test_the_engine_reads_no_environment() -> None:
    reads = [f"{path}:{node.lineno}" for path, tree in _modules() if path.startswith("engine/")
             for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv")
             and isinstance(node.value, ast.Name) and node.value.id == "os"]
    assert reads == []
