"""Encryption required means required, tried as whoever can write the bucket: with a keyring configured, a clear
block planted under a sealed block's id (its header's answer rewritten; the payload cannot change, the id commits
to it) is refused on every read path (a read, the read cache, the prompt cache's read, copy, verify, the header
shown, repair), `blocks verify` names it `unsealed` and quarantines its row, and `blocks rekey` is the one reader
that seals clear blocks. A sealed block read without a keyring stays a clear error."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli import app
from store.block_crypto import Keyring
from store.blockfile import Block, encode, new_block
from store.blocks import BlockStore, block_key
from store.cache import LocalReadCache
from store.errors import BlockKeyMissingError, BlockUnsealedError
from store.integrity import copy_blocks, rekey_blocks
from store.objects.local import LocalObjectStore
from store.repository import get_block, record_block
from workers.runtime import open_runtime
from workers.seam import read_or_miss

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]
runner = CliRunner()
FP = "e" * 32


def _ring() -> Keyring:
    return Keyring.parse(f"k1:{base64.b64encode(os.urandom(32)).decode()}")


def _block(n: int = 0, answer: str = "42") -> Block:
    return new_block(kind="solution", tokens=[3, 4 + n, 5], pos_start=0, fingerprint=FP, profile={"t": 1},
                     payload=bytes([n + 1]) * 128, meta={"answer": answer, "question": "q"})


def _planted(block: Block, answer: str) -> bytes:
    """The attacker's object: the same id, identity and payload, in the clear, its answer rewritten."""
    return encode(Block(block.block_id, block.identity, block.payload, {**block.meta, "answer": answer}))


def _plant(root: Path, block: Block, answer: str) -> None:
    (root / block_key(FP, block.block_id)).write_bytes(_planted(block, answer))


def test_a_clear_block_planted_under_a_sealed_id_is_refused_on_every_store_read_path(tmp_path: Path) -> None:
    ring = _ring()
    store = BlockStore(LocalObjectStore(tmp_path / "s"), keyring=ring, verified_cache_bytes=1 << 20)
    cached = BlockStore(LocalObjectStore(tmp_path / "s"), keyring=ring,
                        cache=LocalReadCache(tmp_path / "cache", max_bytes=1 << 20))
    block = _block()
    store.put(block)
    assert store.get(FP, block.block_id, use_cache=False).meta["answer"] == "42"  # the control: sealed reads
    _plant(tmp_path / "s", block, "666")
    assert BlockStore(LocalObjectStore(tmp_path / "s")).get(FP, block.block_id).meta["answer"] == "666"  # no ring
    for read in (lambda: store.get(FP, block.block_id, use_cache=False),
                 lambda: store.get(FP, block.block_id, scope="team:1"),
                 lambda: cached.get(FP, block.block_id, scope="team:1"),
                 lambda: store.header(FP, block.block_id)):
        with pytest.raises(BlockUnsealedError):
            read()
    assert read_or_miss(store, FP, block.block_id, purpose="prompt_prefix", scope="team:2") is None
    copied = copy_blocks(store, BlockStore(LocalObjectStore(tmp_path / "dest"), keyring=ring))
    assert [o.block_id for o in copied if o.error] == [block.block_id]
    assert not any((tmp_path / "dest").rglob("*" + block.block_id))


def test_rekey_is_the_one_way_to_seal_clear_blocks_and_a_sealed_block_without_a_keyring_is_a_clear_error(
        tmp_path: Path) -> None:
    ring = _ring()
    objects = LocalObjectStore(tmp_path / "s")
    before = _block(1)
    BlockStore(objects).put(before)  # written before the deployment had a key
    store = BlockStore(objects, keyring=ring)
    with pytest.raises(BlockUnsealedError):
        store.get(FP, before.block_id, use_cache=False)
    assert [o.outcome for o in rekey_blocks(store)] == ["encrypted"]
    got = store.get(FP, before.block_id, use_cache=False)
    assert got.meta == before.meta and bytes(got.payload) == bytes(before.payload)
    with pytest.raises(BlockKeyMissingError, match="no block encryption key is configured"):
        BlockStore(objects).get(FP, before.block_id, use_cache=False)


def test_blocks_verify_reports_and_quarantines_a_clear_block_and_rekey_clears_it(data_dir: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch
                                                                                   ) -> None:
    key = base64.b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"k1:{key}")
    block = _block(2)
    rt = open_runtime()
    try:
        stored = BlockStore(rt.blocks.objects).put(block)  # in the clear
        with rt.session() as s:
            record_block(s, block_id=block.block_id, fingerprint=FP, kind="solution", n_tokens=3, bytes=stored.size,
                         payload_sha256=block.identity.payload_sha256, object_key=stored.key,
                         store_url=rt.blocks.url, profile={"t": 1}, meta={}, source=None)
    finally:
        rt.close()
    verify = runner.invoke(app, ["blocks", "verify", "--json"])
    assert verify.exit_code == 1, verify.output
    record = json.loads(verify.stdout)
    assert [(p["block_id"], p["status"]) for p in record["problems"]] == [(block.block_id, "unsealed")]
    rt = open_runtime()
    try:
        with rt.session() as s:
            assert get_block(s, block_id=block.block_id).quarantined_at is not None
    finally:
        rt.close()
    rekey = runner.invoke(app, ["blocks", "rekey", "--json"])
    assert rekey.exit_code == 0 and json.loads(rekey.stdout)["encrypted"] == 1, rekey.output
    again = runner.invoke(app, ["blocks", "verify", "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["counts"] == {"ok": 1}, again.output
    rt = open_runtime()
    try:
        with rt.session() as s:
            assert get_block(s, block_id=block.block_id).quarantined_at is None
    finally:
        rt.close()


def test_a_planted_clear_solution_block_is_never_grafted_and_repair_never_reads_its_header(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The attack end to end: the sealed solution block of a solved problem replaced in the bucket by a clear block
    of the same id whose answer says 666. Answering the repeat never grafts it (a miss), and `blocks repair`
    re-derives the block sealed from the catalogue (never from the planted header), answer and all."""
    from workers.flywheel.answer import AnswerParams
    from workers.flywheel.answering import answer_question

    question = "Sam reads 15 pages a day for 7 days. How many pages?"
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps({"id": "r1", "question": question, "answer": 105, "solution": "print(15 * 7)"}))
    monkeypatch.setenv("KVGRAFT_BLOCK_ENCRYPTION_KEY", f"a:{base64.b64encode(os.urandom(32)).decode()}")
    assert runner.invoke(app, ["run", str(problems), "--samples", "1", "--json"]).exit_code == 0
    params = AnswerParams(use_direct=False, use_transfer=False)
    rt = open_runtime()
    try:
        control = answer_question(rt, question, params=params, record=False)
        assert control.route == "recurrence" and control.block_id is not None  # the control: grafted when sealed
        solution = rt.blocks.get(rt.engine().fingerprint.id, control.block_id, use_cache=False)
        path = rt.blocks.objects.root / block_key(solution.fingerprint, solution.block_id)  # type: ignore[attr-defined]
        path.write_bytes(_planted(solution, "666"))
    finally:
        rt.close()
    rt = open_runtime()
    try:
        answer = answer_question(rt, question, params=params, record=False)
        assert answer.route != "recurrence" and answer.block_id is None
    finally:
        rt.close()
    repair = runner.invoke(app, ["blocks", "repair", solution.block_id, "--json"])
    assert repair.exit_code == 0 and json.loads(repair.stdout)["status"] == "rederived", repair.output
    assert path.read_bytes()[10] == 1  # flags: sealed again
    rt = open_runtime()
    try:
        assert str(rt.blocks.get(solution.fingerprint, solution.block_id, use_cache=False).meta["answer"]) == "105"
    finally:
        rt.close()


MODES = {"clear": (False, False), "signed": (True, False), "sealed": (False, True), "both": (True, True)}


@pytest.mark.parametrize("mode", list(MODES))
def test_what_a_bucket_writer_can_and_cannot_do_in_each_mode(tmp_path: Path, mode: str) -> None:
    """docs/OPERATIONS.md's table of modes, row by row: what whoever can write the bucket (but holds neither key)
    reads, and which of their rewrites a reader of this deployment uses."""
    signing, sealing = MODES[mode]
    hmac_key = os.urandom(32) if signing else None
    ring = _ring() if sealing else None
    store = BlockStore(LocalObjectStore(tmp_path), key=hmac_key, keyring=ring)
    block = new_block(kind="solution", tokens=[7, 8, 9], pos_start=0, fingerprint=FP, profile={"t": 1},
                      payload=b"STATE-OF-TEAM-A" * 8, meta={"answer": "42", "question": "Heron launch code?"},
                      key=hmac_key)
    store.put(block)
    path = tmp_path / block_key(FP, block.block_id)
    original = path.read_bytes()
    # reading: the question and the state are in the object unless sealed
    assert (b"Heron" in original and b"STATE-OF-TEAM-A" in original) is not sealing
    assert block.block_id.encode() in original  # the id is always in the clear

    def used(data: bytes) -> str | None:
        """The answer a reader uses after the object became `data`, or None when it is refused."""
        path.write_bytes(data)
        store._forget(block_key(FP, block.block_id))
        got = read_or_miss(store, FP, block.block_id, purpose="test")
        return None if got is None else str(got.meta["answer"])

    # the header rewritten in the clear (the attacker signs nothing, seals nothing): used only in the clear mode
    rewritten = encode(Block(block.block_id, block.identity, block.payload, {**block.meta, "answer": "666"},
                             block.hmac))
    assert used(rewritten) == ("666" if mode == "clear" else None)
    # the payload swapped under the same id: refused in every mode (the id commits to the payload's hash)
    swapped = encode(Block(block.block_id, block.identity, b"STATE-OF-TEAM-B" * 8, dict(block.meta), block.hmac))
    assert used(swapped) is None
    # the object deleted: a miss in every mode (never a wrong answer)
    path.unlink()
    assert read_or_miss(store, FP, block.block_id, purpose="test") is None
    # the deployment's own earlier object put back (a replay of what it wrote): used in every mode
    assert used(original) == "42"


def test_rekey_seals_a_planted_clear_block_unless_blocks_are_signed(tmp_path: Path) -> None:
    """The limit of the sealed mode alone: `blocks rekey` seals whatever clear object it finds; with a signing key
    too it refuses one the deployment did not sign."""
    ring, hmac_key = _ring(), os.urandom(32)
    block = _block(3)
    planted = _planted(block, "666")  # unsigned, in the clear
    for key, outcome in ((None, "encrypted"), (hmac_key, "refused")):
        root = tmp_path / str(outcome)
        (root / block_key(FP, block.block_id)).parent.mkdir(parents=True)
        (root / block_key(FP, block.block_id)).write_bytes(planted)
        assert [o.outcome for o in rekey_blocks(BlockStore(LocalObjectStore(root), key=key, keyring=ring))] == [
            outcome]
