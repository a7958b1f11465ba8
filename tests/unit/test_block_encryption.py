"""Encryption at rest (store/block_crypto.py), tested as whoever holds the bucket would try: the payload is not
readable in the object, a block under a key this deployment does not hold (or the wrong key under the right id)
is refused and never grafted, a ciphertext moved to another block or a header pointed at another key does not
decrypt, and rotation keeps old blocks readable until `kvgraft blocks rekey` moves them to the newest key."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli import app
from store.block_crypto import Keyring
from store.blockfile import new_block, read_header
from store.blocks import BlockStore, block_key
from store.errors import BlockKeyError
from store.objects.local import LocalObjectStore
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.runtime import open_runtime

pytestmark = pytest.mark.unit
runner = CliRunner()
FP = "f" * 32


def _key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def _block(marker: bytes, n: int = 0, meta: dict | None = None) -> object:
    return new_block(kind="document", tokens=[1, 2 + n, 987654], pos_start=0, fingerprint=FP, profile={"t": 1},
                     payload=marker * 64, meta=meta)


def _raw(store: BlockStore, block: object) -> bytes:
    with store.objects.open(block_key(FP, block.block_id)) as f:  # type: ignore[attr-defined]
        return f.read()


def _with_header(raw: bytes, header: dict) -> bytes:
    """The object's prefix and `header` (its length set), without the payload."""
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    return raw[:12] + len(text).to_bytes(4, "little") + text


def _write_raw(root: Path, block: object, data: bytes) -> None:
    (root / block_key(FP, block.block_id)).write_bytes(data)  # type: ignore[attr-defined]


def test_a_stored_block_tells_nothing_but_its_id_and_reads_back_under_the_same_id(tmp_path: Path) -> None:
    """The payload and the header's token ids, text and question are sealed; the block id (the plaintext's
    content address), the key id and the nonces are all that stay in the clear."""
    ring = Keyring.parse(f"k1:{_key()}")
    store = BlockStore(LocalObjectStore(tmp_path), keyring=ring)
    plain = BlockStore(LocalObjectStore(tmp_path / "plain"))
    marker = b"TEAM-SECRET-STATE-0123456789"
    block = _block(marker, meta={"question": "What is the launch code of project Heron?"})
    store.put(block)
    plain.put(block)
    raw = _raw(store, block)
    for secret in (marker, b"Heron", b"987654", b"tokens", b"question"):
        assert secret not in raw and secret in _raw(plain, block)  # the control: in the clear they are there
    clear = json.loads(raw[16:16 + int.from_bytes(raw[12:16], "little")])
    assert set(clear) == {"block_id", "encryption", "sealed"} and clear["encryption"]["key_id"] == "k1"
    with store.objects.open(block_key(FP, block.block_id)) as f:
        head = read_header(f, ring)
    assert head.encryption is not None and head.meta["question"].endswith("Heron?")
    got = store.get(FP, block.block_id, use_cache=False)
    assert bytes(got.payload) == bytes(block.payload) and got.meta == block.meta
    assert got.block_id == plain.get(FP, block.block_id, use_cache=False).block_id  # the plaintext's address


def test_a_block_under_a_key_not_held_or_the_wrong_key_is_refused(tmp_path: Path) -> None:
    writer = BlockStore(LocalObjectStore(tmp_path), keyring=Keyring.parse(f"k1:{_key()}"))
    block = _block(b"x")
    writer.put(block)
    for reader in (BlockStore(LocalObjectStore(tmp_path)),  # no keyring
                   BlockStore(LocalObjectStore(tmp_path), keyring=Keyring.parse(f"k2:{_key()}")),  # unknown id
                   BlockStore(LocalObjectStore(tmp_path), keyring=Keyring.parse(f"k1:{_key()}"))):  # wrong key
        with pytest.raises(BlockKeyError):
            reader.get(FP, block.block_id, use_cache=False)


def test_a_block_moved_under_another_id_a_flipped_byte_or_a_header_pointed_at_another_key_does_not_decrypt(
        tmp_path: Path) -> None:
    k1, k2 = _key(), _key()
    ring = Keyring.parse(f"k1:{k1},k2:{k2}")
    store = BlockStore(LocalObjectStore(tmp_path), keyring=ring)
    a, b = _block(b"a", 0), _block(b"b", 1)
    store.put(a)
    store.put(b)
    raw_a = _raw(store, a)
    tail = 16 + int.from_bytes(raw_a[12:16], "little")
    clear_a = json.loads(raw_a[16:tail])
    # all of a (its key id, nonces, sealed header and payload) under b's id: only the authenticated data, which
    # binds the block id, tells them apart
    _write_raw(tmp_path, b, _with_header(raw_a, {**clear_a, "block_id": b.block_id}) + raw_a[tail:])
    with pytest.raises(BlockKeyError):
        store.get(FP, b.block_id, use_cache=False)
    flipped = bytearray(raw_a)
    flipped[-20] ^= 1  # the payload's ciphertext
    _write_raw(tmp_path, a, bytes(flipped))
    with pytest.raises(BlockKeyError):
        store.get(FP, a.block_id, use_cache=False)
    assert clear_a["encryption"]["key_id"] == "k2"  # the newest
    _write_raw(tmp_path, a, _with_header(raw_a, {**clear_a, "encryption": {**clear_a["encryption"],
                                                                          "key_id": "k1"}}) + raw_a[tail:])
    with pytest.raises(BlockKeyError):
        store.get(FP, a.block_id, use_cache=False)
    _write_raw(tmp_path, a, raw_a)  # the control: the untouched bytes read
    assert bytes(store.get(FP, a.block_id, use_cache=False).payload) == bytes(a.payload)


def test_rotation_keeps_old_blocks_readable_and_rekey_moves_them_to_the_newest_key(data_dir: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                                  tmp_path: Path) -> None:
    old, new = _key(), _key()
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"old:{old}")
    rt = open_runtime()
    try:
        clear = _block(b"c", 0)
        BlockStore(rt.blocks.objects).put(clear)  # one from before encryption was turned on
        under_old = _block(b"o", 1)
        rt.blocks.put(under_old)
    finally:
        rt.close()
    key_file = tmp_path / "keys"
    key_file.write_text(f"# oldest first\nold:{old}\nnew:{new}\n")
    monkeypatch.delenv("KVGRAFT_BLOCK_ENCRYPTION_KEY")
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY_FILE", str(key_file))
    result = runner.invoke(app, ["blocks", "rekey", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert (record["key_id"], record["rekeyed"], record["encrypted"], record["refused"]) == ("new", 1, 1, 0)
    again = json.loads(runner.invoke(app, ["blocks", "rekey", "--json"]).stdout)
    assert again["current"] == 2 and again["rekeyed"] == again["encrypted"] == 0
    key_file.write_text(f"new:{new}\n")  # the old key retired: everything still reads
    rt = open_runtime()
    try:
        for block in (clear, under_old):
            assert bytes(rt.blocks.get(FP, block.block_id, use_cache=False).payload) == bytes(block.payload)
    finally:
        rt.close()


def test_a_deposited_block_under_another_deployments_key_is_never_grafted(data_dir: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    question = "Sam reads 15 pages a day for 7 days. How many pages?"
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps({"id": "r1", "question": question, "answer": 105, "solution": "print(15 * 7)"}))
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"a:{_key()}")
    assert runner.invoke(app, ["run", str(problems), "--samples", "1", "--json"]).exit_code == 0
    params = AnswerParams(use_direct=False, use_transfer=False)
    rt = open_runtime()
    try:  # the control: under its own key the repeat is grafted
        assert answer_question(rt, question, params=params, record=False).route == "recurrence"
    finally:
        rt.close()
    for ring in (f"b:{_key()}", f"a:{_key()}", None):  # another key id, the wrong key under its id, no key
        if ring is None:
            monkeypatch.delenv("KVGRAFT_BLOCK_ENCRYPTION_KEY")
        else:
            monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", ring)
        rt = open_runtime()
        try:
            answer = answer_question(rt, question, params=params, record=False)
            assert answer.route != "recurrence" and answer.block_id is None
        finally:
            rt.close()
        verify = runner.invoke(app, ["blocks", "verify", "--json"])
        assert verify.exit_code == 1 and "key 'a'" in verify.stdout
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"b:{_key()}")
    listed = json.loads(runner.invoke(app, ["blocks", "list", "--json"]).stdout)
    solution = next(b for b in listed["items"] if b["kind"] == "solution")
    before = sorted(p.read_bytes() for p in (data_dir / "blocks").rglob("*") if p.is_file())
    repair = runner.invoke(app, ["blocks", "repair", solution["id"], "--json"])
    assert repair.exit_code == 1 and json.loads(repair.stdout)["status"] == "key_missing"
    # not re-derived over, not quarantined: the deployment holding key a still reads it
    assert sorted(p.read_bytes() for p in (data_dir / "blocks").rglob("*") if p.is_file()) == before


def test_a_malformed_key_is_a_clear_error(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", "k1:c2hvcnQ=")
    result = runner.invoke(app, ["blocks", "list", "--json"])
    assert result.exit_code != 0 and "32 bytes" in result.output
    with pytest.raises(ValueError, match="unique"):
        Keyring.parse(f"k:{_key()},k:{_key()}")
