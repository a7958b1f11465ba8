"""A rewrite (rekey) racing an eviction, and the catalogue's sizes after a rekey: a rekey that read a block just
before an eviction deleted it used to write the object back (an evicted block resurrected: its row says evicted,
its content is in the bucket again); `bytes` stayed the clear object's size after the block was sealed."""

from __future__ import annotations

import base64
import os
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from store.integrity import rekey_blocks
from store.retention import _evict, plan_prune, reap
from tests.unit.test_retention import _blocks, _doc, _json
from workers.runtime import open_runtime

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]


def _key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def test_a_rekey_racing_an_eviction_never_resurrects_the_evicted_object(data_dir: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    old = f"old:{_key()}"
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", old)
    rec = _json(["deposit", _doc(tmp_path, 1), "--json"])["blocks"][0]
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"{old},new:{_key()}")
    about_to_write = threading.Event()
    outcomes: list[Any] = []

    def rekey() -> None:
        with open_runtime() as rt:
            replace = rt.blocks.objects.replace

            def slow_replace(*args: Any, **kwargs: Any) -> Any:
                about_to_write.set()  # the block is read; the eviction runs now
                time.sleep(1.0)
                return replace(*args, **kwargs)

            rt.blocks.objects.replace = slow_replace  # type: ignore[method-assign]
            outcomes.extend(rekey_blocks(rt.blocks, sessions=rt.session))

    thread = threading.Thread(target=rekey)
    thread.start()
    assert about_to_write.wait(30)
    with open_runtime() as rt:
        with rt.session() as s:
            plan = plan_prune(s, store_url=rt.blocks.url, budget_bytes=0, grace=timedelta(0))
        marked = _evict(rt.session, rt.blocks, plan.victims, "store_budget", grace=timedelta(0))
        reap(rt.session, rt.blocks, marked.marked)
    thread.join(30)
    assert [o.outcome for o in outcomes] == ["rekeyed"]
    assert _blocks()[rec["block_id"]].evicted_at is not None
    with open_runtime() as rt:
        assert not rt.blocks.exists(rec["fingerprint"], rec["block_id"])  # evicted stays evicted


def test_an_evicted_block_is_never_rekeyed_back(data_dir: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The mark made, the object not yet reaped: rekey leaves it to the reaper (`evicted`) instead of rewriting."""
    old = f"old:{_key()}"
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", old)
    rec = _json(["deposit", _doc(tmp_path, 2), "--json"])["blocks"][0]
    with open_runtime() as rt:
        with rt.session() as s:
            plan = plan_prune(s, store_url=rt.blocks.url, budget_bytes=0, grace=timedelta(0))
        marked = _evict(rt.session, rt.blocks, plan.victims, "store_budget", grace=timedelta(0))
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"{old},new:{_key()}")
    assert _json(["blocks", "rekey", "--json"])["evicted"] == 1
    with open_runtime() as rt:
        assert reap(rt.session, rt.blocks, marked.marked) == 1
        assert not rt.blocks.exists(rec["fingerprint"], rec["block_id"])


def test_bytes_follow_the_object_after_rekey(data_dir: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _json(["deposit", _doc(tmp_path, 3), "--json"])["blocks"][0]  # in the clear
    with open_runtime() as rt:
        clear = next(o.info.size for o in rt.blocks.list())
    assert _blocks()[rec["block_id"]].bytes == clear
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"k:{_key()}")
    assert _json(["blocks", "rekey", "--json"])["encrypted"] == 1
    with open_runtime() as rt:
        sealed = next(o.info.size for o in rt.blocks.list())
    assert sealed != clear and _blocks()[rec["block_id"]].bytes == sealed
