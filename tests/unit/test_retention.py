"""Retention under a budget on the embedded default (tiny model, SQLite, local blocks): a soak that deposits
documents past the store's budget never holds more than the budget plus one block, evicts least recently used
documents first and never a solution, a pinned or a recently grafted block; `blocks prune --dry-run` changes
nothing; an evicted block is a miss and a re-deposit restores it; a team's quota evicts only its own blocks and
refuses a deposit it cannot make room for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from services.cli import app
from services.cli_store import parse_size
from store.db import BlockRow, Eviction, Team
from store.retention import QuotaExceededError, ensure_quota, held_bytes, record_use
from workers.runtime import open_runtime

pytestmark = pytest.mark.unit
runner = CliRunner()


def _json(args: list[str], code: int = 0) -> Any:
    result = runner.invoke(app, args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def _doc(tmp_path: Path, i: int) -> str:
    f = tmp_path / f"doc{i}.txt"
    f.write_text(f"Document {i}. The warehouse code for aisle {i} is {1000 + i * 7}. " * 3)
    return str(f)


def _blocks() -> dict[str, BlockRow]:
    with open_runtime() as rt, rt.session() as s:
        return {b.id: b for b in s.scalars(sa.select(BlockRow))}


def test_parse_size() -> None:
    assert parse_size("500MB") == 500 * 10**6 and parse_size("2GiB") == 2 << 30 and parse_size("123") == 123
    with pytest.raises(ValueError):
        parse_size("lots")


def test_a_soak_past_the_budget_never_exceeds_it_by_more_than_one_block(data_dir: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    first = _json(["deposit", _doc(tmp_path, 0), "--json"])
    block_bytes = first["bytes"]
    budget = 3 * block_bytes + block_bytes // 2  # room for three and a half documents
    monkeypatch.setenv("KVGRAFT_STORE_BUDGET_BYTES", str(budget))
    pinned = first["blocks"][0]["block_id"]
    _json(["blocks", "pin", pinned, "--json"])
    held = []
    for i in range(1, 9):
        _json(["deposit", _doc(tmp_path, i), "--json"])
        with open_runtime() as rt, rt.session() as s:
            held.append(held_bytes(s, store_url=rt.blocks.url))
    largest = max(b.bytes for b in _blocks().values())
    assert max(held) <= budget + largest, (held, budget, largest)
    rows = _blocks()
    evicted = [b for b in rows.values() if b.evicted_at is not None]
    assert len(evicted) >= 4 and rows[pinned].evicted_at is None  # the pinned block outlives newer ones
    with open_runtime() as rt:
        assert all(not rt.blocks.exists(b.fingerprint, b.id) for b in evicted)  # objects deleted
        with rt.session() as s:
            logged = s.scalar(sa.select(sa.func.count()).select_from(Eviction).where(Eviction.reason == "store_budget"))
    assert logged == len(evicted)
    # least recently used first: the documents deposited first (after the pinned one) went first
    order = sorted(rows.values(), key=lambda b: b.created_at)
    alive = [b.evicted_at is None for b in order if b.id != pinned]
    assert alive == sorted(alive), alive


def test_prune_dry_run_changes_nothing_and_spares_recent_and_precious_blocks(data_dir: Path, tmp_path: Path) -> None:
    dep = [_json(["deposit", _doc(tmp_path, i), "--json"])["blocks"][0]["block_id"] for i in range(4)]
    with open_runtime() as rt, rt.session() as s:
        record_use(s, block_id=dep[0])  # grafted just now: inside the grace period
    plan = _json(["blocks", "prune", "--budget", "1", "--dry-run", "--json"])
    assert plan["dry_run"] and plan["evicted"] == 0 and plan["bytes_before"] == plan["bytes_now"]
    assert {v["block_id"] for v in plan["evict"]} == set(dep[1:])
    assert plan["short_by"] == plan["bytes_after"] - 1 > 0
    assert all(b.evicted_at is None for b in _blocks().values())
    done = _json(["blocks", "prune", "--budget", "1", "--json"])
    assert done["evicted"] == 3 and done["bytes_now"] == done["bytes_after"]
    assert _blocks()[dep[0]].evicted_at is None
    # the evicted block is gone from the store, and depositing the same text again restores it
    again = _json(["deposit", _doc(tmp_path, 1), "--json"])
    assert again["blocks"][0]["block_id"] == dep[1] and _blocks()[dep[1]].evicted_at is None


def test_solution_blocks_are_never_evicted(data_dir: Path, tmp_path: Path) -> None:
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps({"id": "r", "question": "A box holds 6 pens. How many pens are in 3 boxes?",
                                    "answer": 18, "solution": "print(6 * 3)"}) + "\n")
    result = runner.invoke(app, ["run", str(problems), "--json"])
    assert result.exit_code == 0, result.stderr
    kinds = {b.kind for b in _blocks().values()}
    assert "solution" in kinds
    plan = _json(["blocks", "prune", "--budget", "0", "--grace", "0s", "--json"])
    assert all(v["kind"] == "document" for v in plan["evict"]) and plan["short_by"] > 0
    assert all(b.evicted_at is None for b in _blocks().values() if b.kind != "document")


def test_a_team_quota_evicts_only_the_teams_own_blocks_and_refuses_what_it_cannot_fit(
        data_dir: Path, tmp_path: Path) -> None:
    with open_runtime() as rt, rt.session() as s:
        for name in ("small", "other"):
            s.add(Team(name=name))
    other = _json(["deposit", _doc(tmp_path, 0), "--team", "other", "--json"])["blocks"][0]
    mine = _json(["deposit", _doc(tmp_path, 1), "--team", "small", "--json"])["blocks"][0]
    _json(["teams", "quota", "small", str(int(mine["bytes"] * 1.5)), "--json"])
    # a second document of the team fits only once its first is evicted; the other team's block is untouched
    _json(["deposit", _doc(tmp_path, 2), "--team", "small", "--json"])
    rows = _blocks()
    assert rows[mine["block_id"]].evicted_at is not None and rows[other["block_id"]].evicted_at is None
    with open_runtime() as rt, rt.session() as s:
        team_id = s.scalar(sa.select(Team.id).where(Team.name == "small"))
        assert s.scalar(sa.select(Eviction.reason).where(Eviction.block_id == mine["block_id"])) == "team_quota"
        with pytest.raises(QuotaExceededError, match="quota"):
            ensure_quota(rt.session, rt.blocks, team_id=team_id, block_id="0" * 64,
                         incoming_bytes=mine["bytes"] * 10)
    refused = runner.invoke(app, ["teams", "quota", "small", "10", "--json"])
    assert refused.exit_code == 0
    failed = runner.invoke(app, ["deposit", _doc(tmp_path, 3), "--team", "small", "--json"])
    assert failed.exit_code == 2 and "quota" in failed.stderr
