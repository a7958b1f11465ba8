"""Rewrites that never lose a block, tried from the fault's side: `blocks rekey` and `blocks repair` fail (an error
raised) and are killed (the process exits on the spot, no cleanup) at every step of their rewrite, on the local
store and on the moto S3 server with the multipart threshold lowered to 1 KiB (so that the small blocks take the
path of objects of 64 MiB and more). After each, every block is still there and readable under a key held (the old
or the new), and a rerun finishes the job with every row's `bytes` equal to its object's size. The steps: `write`
(the new bytes beside the old: the temporary file, the upload's parts), `switch` (the rename, the multipart
completion), `readback` (the new object read and verified), `catalogue` (the row's transaction that records it).
Each test asserts the list of steps it failed and killed at."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import multiprocessing
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.orm import Session

import store.objects.local as local_objects
from store.blocks import block_key
from store.db import BlockRow
from store.integrity import rekey_blocks
from store.objects.s3 import S3ObjectStore
from tests.unit.test_retention import _doc, _json
from workers.runtime import Runtime, open_runtime
from workers.upkeep.repair import repair_block

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]
STEPS = ("write", "switch", "readback", "catalogue")
KILLED = 137


class Fault(Exception):
    """The injected failure."""


def _key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "s3":
        monkeypatch.setenv("KVGRAFT_STORE_URL", request.getfixturevalue("s3_store_url"))
        monkeypatch.setenv("KVGRAFT_S3_ENDPOINT_URL", request.getfixturevalue("s3_server"))
    return str(request.param)


def _runtime() -> Runtime:
    rt = open_runtime()
    if isinstance(rt.blocks.objects, S3ObjectStore):
        rt.blocks.objects.multipart_threshold = 1024  # every block takes the multipart path
    return rt


@contextlib.contextmanager
def _fault(rt: Runtime, step: str, act: Callable[[], None]) -> Iterator[None]:
    """`act` (raise, or exit the process) at `step` of a rewrite through `rt`'s block store."""
    objects, blocks = rt.blocks.objects, rt.blocks
    replaced = [False]
    undo: list[Callable[[], None]] = []
    original_replace = objects.replace

    def replace(*args: Any, **kwargs: Any) -> Any:
        out = original_replace(*args, **kwargs)
        replaced[0] = True
        return out

    objects.replace = replace  # type: ignore[method-assign]
    undo.append(lambda: setattr(objects, "replace", original_replace))
    if step == "write" and isinstance(objects, S3ObjectStore):
        handler = _boto_fault(act)
        objects.client.meta.events.register("before-call.s3.UploadPart", handler)
        undo.append(lambda: objects.client.meta.events.unregister("before-call.s3.UploadPart", handler))
    elif step == "write":
        write_temp = local_objects._write_temp

        def failing_write(directory: Path, view: memoryview) -> Path:
            act()
            return write_temp(directory, view)

        local_objects._write_temp = failing_write  # type: ignore[assignment]
        undo.append(lambda: setattr(local_objects, "_write_temp", write_temp))
    elif step == "switch" and isinstance(objects, S3ObjectStore):
        handler = _boto_fault(act)
        objects.client.meta.events.register("before-call.s3.CompleteMultipartUpload", handler)
        undo.append(lambda: objects.client.meta.events.unregister("before-call.s3.CompleteMultipartUpload",
                                                                   handler))
    elif step == "switch":
        os_replace, root = os.replace, str(objects.root)  # type: ignore[attr-defined]

        def failing_replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            if str(dst).startswith(root):
                act()
            os_replace(src, dst, *args, **kwargs)

        os.replace = failing_replace  # type: ignore[assignment]
        undo.append(lambda: setattr(os, "replace", os_replace))
    elif step == "readback":
        read = blocks._read

        def failing_read(*args: Any, **kwargs: Any) -> Any:
            if replaced[0]:
                act()
            return read(*args, **kwargs)

        blocks._read = failing_read  # type: ignore[method-assign]
        undo.append(lambda: setattr(blocks, "_read", read))
    elif step == "catalogue":
        def before_commit(_session: Session) -> None:
            if replaced[0]:
                act()

        event.listen(Session, "before_commit", before_commit)
        undo.append(lambda: event.remove(Session, "before_commit", before_commit))
    try:
        yield
    finally:
        for u in reversed(undo):
            u()


def _boto_fault(act: Callable[[], None]) -> Callable[..., None]:
    def handler(**_: Any) -> None:
        act()
    return handler


def _raise() -> None:
    raise Fault("injected")


def _exit() -> None:
    os._exit(KILLED)


def _rekey_child(step: str) -> None:
    with _runtime() as rt, _fault(rt, step, _exit):
        rekey_blocks(rt.blocks, sessions=rt.session)


def _repair_child(step: str, block_id: str) -> None:
    with _runtime() as rt, _fault(rt, step, _exit):
        repair_block(rt, block_id)


def _killed(target: Callable[..., None], *args: Any) -> int | None:
    """Run `target` in a new process (spawned: a fresh interpreter and runtime there, as a restarted pod has); its
    exit code (KILLED when it exited at the fault)."""
    process = multiprocessing.get_context("spawn").Process(target=target, args=args)
    process.start()
    process.join(120)
    if process.exitcode is None:
        process.kill()
    return process.exitcode


def _all_readable(ids: dict[str, str], ring: str) -> None:
    """Every block still there and verified under a key held (a keyring of both keys)."""
    os.environ["KVGRAFT_BLOCK_ENCRYPTION_KEY"] = ring
    with _runtime() as rt:
        listed = {o.block_id for o in rt.blocks.list()}
        assert set(ids) <= listed, f"lost: {set(ids) - listed}"
        for block_id, fp in ids.items():
            rt.blocks.get(fp, block_id, use_cache=False)


def _bytes_true(ids: dict[str, str]) -> None:
    with _runtime() as rt, rt.session() as s:
        sizes = {o.block_id: o.info.size for o in rt.blocks.list()}
        rows = {r.id: r.bytes for r in s.scalars(sa.select(BlockRow))}
    assert {i: rows[i] for i in ids} == {i: sizes[i] for i in ids}


def _deposit(tmp_path: Path, n: int) -> dict[str, str]:
    ids = {}
    for i in range(n):
        rec = _json(["deposit", _doc(tmp_path, i), "--json"])["blocks"][0]
        ids[rec["block_id"]] = rec["fingerprint"]
    return ids


def test_a_rekey_failed_or_killed_at_every_step_loses_no_block(backend: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = f"old:{_key()}", f"a-newer-key:{_key()}"  # ids of different lengths: the objects change size
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", old)
    ids = _deposit(tmp_path, 2)
    both, back = f"{old},{new}", f"{new},{old}"
    tried = []
    for step in STEPS:
        for how in ("failed", "killed"):
            monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", back)  # every block under the old key again
            with _runtime() as rt:
                rekey_blocks(rt.blocks, sessions=rt.session)
            monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", both)
            if how == "failed":
                with _runtime() as rt, _fault(rt, step, _raise), pytest.raises(Fault):
                    rekey_blocks(rt.blocks, sessions=rt.session)
            else:
                assert _killed(_rekey_child, step) == KILLED, step
            tried.append(f"{how}@{step}")
            _all_readable(ids, both)
            with _runtime() as rt:  # the rerun finishes the job
                assert {o.outcome for o in rekey_blocks(rt.blocks, sessions=rt.session)} <= {"rekeyed", "current"}
            _all_readable(ids, new)  # the old key retired: everything is under the new one
            _bytes_true(ids)
    assert tried == [f"{how}@{step}" for step in STEPS for how in ("failed", "killed")]


def _damage(rt: Runtime, fingerprint: str, block_id: str) -> None:
    with rt.blocks.objects.open(block_key(fingerprint, block_id)) as f:
        raw = bytearray(f.read())
    raw[-40] ^= 1  # a payload byte of the ciphertext
    rt.blocks.objects.replace(block_key(fingerprint, block_id), bytes(raw), sha256=hashlib.sha256(raw).hexdigest())


def test_a_repair_failed_or_killed_at_every_step_loses_no_block(backend: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ring = f"k:{_key()}"
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", ring)
    ids = _deposit(tmp_path, 2)
    damaged, intact = list(ids)
    tried = []
    for step in STEPS:
        for how in ("failed", "killed"):
            with _runtime() as rt:
                _damage(rt, ids[damaged], damaged)
                if how == "failed":
                    with _fault(rt, step, _raise), pytest.raises(Fault):
                        repair_block(rt, damaged)
                else:
                    assert _killed(_repair_child, step, damaged) == KILLED, step
            tried.append(f"{how}@{step}")
            _all_readable({intact: ids[intact]}, ring)
            with _runtime() as rt:
                assert rt.blocks.exists(ids[damaged], damaged)  # the damaged object, or its repair: never none
                assert repair_block(rt, damaged).status in ("rederived", "intact")
            _all_readable(ids, ring)
            _bytes_true(ids)
    assert tried == [f"{how}@{step}" for step in STEPS for how in ("failed", "killed")]
