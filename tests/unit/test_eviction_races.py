"""Eviction racing a re-deposit of the same content, and a pin made while a pass runs, on SQLite (unit) and
PostgreSQL (integration): eviction marks the row, then deletes the object; a re-deposit whose write found the
object still there used to clear the mark and lose the object to the delete (a live row without its object).
Marking, deleting and restoring now take turns on the block's row lock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from store import migrate
from store.blocks import BlockStore
from store.retention import _evict, plan_prune, reap
from tests.unit.test_retention import _blocks, _doc, _json
from workers.runtime import open_runtime


@pytest.fixture(params=[pytest.param("sqlite", marks=pytest.mark.unit),
                        pytest.param("postgresql", marks=pytest.mark.integration)])
def catalogue(request: pytest.FixtureRequest, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The embedded default, its catalogue on SQLite or on a fresh PostgreSQL database."""
    if request.param == "postgresql":
        url = str(request.getfixturevalue("pg_url"))
        migrate.upgrade(url)
        monkeypatch.setenv("KVGRAFT_DATABASE_URL", url)
    yield request.param


def _evicted_document(tmp_path: Path) -> tuple[dict[str, Any], Any]:
    """A deposited document marked evicted by a retention pass that has not yet deleted its object."""
    rec = _json(["deposit", _doc(tmp_path, 5), "--json"])["blocks"][0]
    with open_runtime() as rt:
        with rt.session() as s:
            plan = plan_prune(s, store_url=rt.blocks.url, budget_bytes=0, grace=timedelta(0))
        marked = _evict(rt.session, rt.blocks, plan.victims, "store_budget", grace=timedelta(0))
    assert marked.marked == ((rec["fingerprint"], rec["block_id"]),) and _blocks()[rec["block_id"]].evicted_at
    return rec, marked


def _consistent(rec: dict[str, Any]) -> None:
    """No row says live while its object is gone; the block verifies."""
    row = _blocks()[rec["block_id"]]
    with open_runtime() as rt:
        assert row.evicted_at is None and rt.blocks.exists(rec["fingerprint"], rec["block_id"])
    assert _json(["blocks", "verify", "--json"])["ok"] is True


def test_a_re_deposit_between_the_mark_and_the_delete_keeps_its_object(catalogue: str, tmp_path: Path) -> None:
    """Eviction marks the row, then deletes the object; the same content deposited in between (its write finds the
    object still there) used to clear the mark and lose the object to the delete. The reaper re-checks the row
    under its lock and leaves a restored block alone."""
    rec, marked = _evicted_document(tmp_path)
    assert _json(["deposit", _doc(tmp_path, 5), "--json"])["blocks"][0]["block_id"] == rec["block_id"]
    with open_runtime() as rt:
        assert reap(rt.session, rt.blocks, marked.marked) == 0
    _consistent(rec)


def test_a_re_deposit_while_the_object_is_being_deleted_writes_it_again(catalogue: str, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The other order: the reaper holds the row lock and is deleting the object when the re-deposit (whose write
    found the object still there) records its row. The deposit waits for the lock, sees the block evicted, and
    writes its object again before clearing the mark."""
    rec, marked = _evicted_document(tmp_path)
    deleting, proceed = threading.Event(), threading.Event()
    original = BlockStore.delete

    def slow_delete(self: BlockStore, fingerprint: str, block_id: str) -> None:
        deleting.set()
        proceed.wait(10)
        original(self, fingerprint, block_id)

    def reaper() -> None:
        with open_runtime() as rt:
            reap(rt.session, rt.blocks, marked.marked)

    monkeypatch.setattr(BlockStore, "delete", slow_delete)
    thread = threading.Thread(target=reaper)
    thread.start()
    assert deleting.wait(10)
    threading.Timer(0.5, proceed.set).start()  # the deposit below waits on the reaper's lock meanwhile
    assert _json(["deposit", _doc(tmp_path, 5), "--json"])["blocks"][0]["block_id"] == rec["block_id"]
    thread.join(10)
    _consistent(rec)


def test_eviction_rechecks_the_pin_when_it_marks(catalogue: str, tmp_path: Path) -> None:
    """A block pinned after the plan was made is kept."""
    rec = _json(["deposit", _doc(tmp_path, 6), "--json"])["blocks"][0]
    with open_runtime() as rt:
        with rt.session() as s:
            plan = plan_prune(s, store_url=rt.blocks.url, budget_bytes=0, grace=timedelta(0))
        assert [v.block_id for v in plan.victims] == [rec["block_id"]]
        _json(["blocks", "pin", rec["block_id"], "--json"])
        assert _evict(rt.session, rt.blocks, plan.victims, "store_budget").victims == ()
    assert _blocks()[rec["block_id"]].evicted_at is None
