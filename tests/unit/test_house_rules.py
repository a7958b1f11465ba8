"""Rules of the house that no import contract expresses, checked over the source: the settings are built in one
place (workers/settings.load_settings) and passed on, an EngineConfig is made from them in one place
(workers/settings.engine_config), the engine reads no environment, and no module of workers or services builds a
SQL statement (every query lives in store)."""

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


def test_one_value_has_one_environment_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """The serving grid is read from KVGRAFT_PROMPT_CHUNK_TOKENS alone (the field's own name is no second one), an
    override in code sets it, and a misspelt override is an error rather than ignored."""
    from pydantic import ValidationError

    from workers.settings import load_settings

    monkeypatch.delenv("KVGRAFT_PROMPT_CHUNK_TOKENS", raising=False)
    monkeypatch.setenv("KVGRAFT_PREFILL_CHUNK", "32")
    assert load_settings().prefill_chunk == 64
    monkeypatch.setenv("KVGRAFT_PROMPT_CHUNK_TOKENS", "128")
    assert load_settings().prefill_chunk == 128
    assert load_settings(prefill_chunk=16).prefill_chunk == 16
    with pytest.raises(ValidationError):
        load_settings(prefil_chunk=16)


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


# What a module outside store may take from SQLAlchemy: the session's type and factory, and its error types. A
# statement (select, update, delete, insert, a join or a condition) is built in store, never beside the work.
SQLALCHEMY_OUTSIDE_STORE = {"sqlalchemy.orm": {"Session", "sessionmaker"}, "sqlalchemy.exc": None}


def _sql_builders(path: str, tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{path}:{node.lineno} import {a.name}" for a in node.names
                      if a.name.split(".")[0] == "sqlalchemy"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlalchemy":
            allowed = SQLALCHEMY_OUTSIDE_STORE.get(node.module or "", set())
            found += [f"{path}:{node.lineno} from {node.module} import {a.name}" for a in node.names
                      if allowed is not None and a.name not in allowed]
    return found


def test_workers_and_services_build_no_sql_statement() -> None:
    """Every query lives in store (docs/ARCHITECTURE.md, "Who may import whom"): workers and services call its data
    functions and change the attributes of the rows those return, in the transaction they own."""
    built = [hit for path, tree in _modules() if path.startswith(("workers/", "services/"))
             for hit in _sql_builders(path, tree)]
    assert built == []
    probe = ast.parse("import sqlalchemy as sa\nfrom sqlalchemy import select\nfrom sqlalchemy.orm import Session\n"
                      "from sqlalchemy.exc import OperationalError\n")
    assert _sql_builders("x.py", probe) == ["x.py:1 import sqlalchemy", "x.py:2 from sqlalchemy import select"]
