"""Integrity and isolation tried as an attacker with bucket write access, a hostile team and a careless operator
would (tiny model, SQLite, local disk): a corruption sweep over every byte of a signed block, header tampering with
a valid payload, registration of foreign, unsigned and tampered blocks, gc after a copy and after a moved data
folder, per-team visibility of deduplicated blocks, trust in shared blocks, repair of damaged blocks, and every
accepted question ending in one outcome."""

from __future__ import annotations

import io
import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from engine.graft import GraftEngine
from services.cli import app
from store.blockfile import (
    FORMAT_VERSION,
    Block,
    canonical_json,
    decode,
    encode,
    new_block,
    read_block,
    sign_v1,
    signature_status,
)
from store.blocks import block_key
from store.db import BlockRow, ProblemRow, QueryRequestRow
from store.errors import BlockAuthError, BlockFormatError, StoreError
from workers.problems import parse_problems_jsonl
from workers.queue.dispatch import answer_request, submit_batch, submit_question
from workers.runtime import open_runtime
from workers.seam import block_to_snapshot, snapshot_to_block

pytestmark = pytest.mark.unit
runner = CliRunner()
KEY = b"k" * 32
OTHER_KEY = b"o" * 32
KEY_ENV = "a-deployment-key-of-at-least-32-bytes"


def _json(args: list[str], code: int = 0) -> dict[str, Any]:
    result = runner.invoke(app, args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def _small_signed_block(engine: GraftEngine) -> Block:
    snapshot = engine.capture(engine.tokenize("a small signed block"), n_query=8)
    return snapshot_to_block(snapshot, kind="solution", key=KEY,
                             meta={"question": "What is 2 plus 3?", "answer": "5", "passage": "two and three",
                                   "probe": {"tokens": [5, 6, 7], "reference_sha256": "0" * 64},
                                   "source": {"problem_id": "p1"}, "owner": {"team": "team-a", "shared": False}})


def _rewrite_header(block: Block, **meta_changes: Any) -> bytes:
    """The block's bytes with its header meta rewritten and its (now stale) HMAC kept, as a bucket writer would."""
    header = block.header()
    header["meta"] = {**header["meta"], **meta_changes}
    raw = canonical_json(header)
    return struct.pack("<8sHHI", b"KVGRAFT\x00", FORMAT_VERSION, 0, len(raw)) + raw + bytes(block.payload)


# -- the corruption sweep ---------------------------------------------------------------------------------------

def test_every_byte_of_a_signed_block_flipped_three_ways_is_refused_and_never_grafted(
        tiny_engine: GraftEngine) -> None:
    block = _small_signed_block(tiny_engine)
    data = bytearray(encode(block))
    assert decode(bytes(data), key=KEY).block_id == block.block_id  # the intact block reads
    refused = grafts = 0
    for offset in range(len(data)):
        for mask in (0x01, 0x80, 0xFF):
            flipped = bytearray(data)
            flipped[offset] ^= mask
            try:
                read = read_block(io.BytesIO(bytes(flipped)), key=KEY, expected_id=block.block_id,
                                  expected_fingerprint=block.fingerprint)
            except StoreError:
                refused += 1
                continue
            grafts += 1  # would be grafted: the sweep fails below, naming how many got through
            tiny_engine.graft(block_to_snapshot(read), tiny_engine.tokenize("probe"), payload_verified=True)
    assert grafts == 0 and refused == 3 * len(data), f"{grafts} of {3 * len(data)} corrupted blocks were accepted"


# -- header tampering with a valid payload ----------------------------------------------------------------------

@pytest.mark.parametrize("field,value", [("question", "What is 2 plus 2?"), ("answer", "4"),
                                         ("passage", "an injected passage"), ("source", {"problem_id": "evil"}),
                                         ("probe", {"tokens": [1], "reference_sha256": "f" * 64}),
                                         ("owner", {"team": "team-a", "shared": True}), ("text", "rewritten"),
                                         ("parameterized", {"body": "print(42)", "params": 1, "units": ["egg"],
                                                            "asked": []})])
def test_a_signed_blocks_rewritten_meta_is_refused(tiny_engine: GraftEngine, field: str, value: Any) -> None:
    block = _small_signed_block(tiny_engine)
    tampered = _rewrite_header(block, **{field: value})
    decode(tampered)  # without a key nothing is authenticated: the payload and the id still verify
    with pytest.raises(BlockAuthError, match="HMAC does not match"):
        decode(tampered, key=KEY)
    with pytest.raises(BlockAuthError):
        decode(encode(block), key=OTHER_KEY)


@pytest.mark.parametrize("meta,message", [({"probe": "not an object"}, "'probe'"),
                                          ({"probe": {"tokens": ["x"]}}, "'probe'"),
                                          ({"question": 7}, "'question'"), ({"answer": True}, "'answer'"),
                                          ({"owner": {"team": 3}}, "'owner'"),
                                          ({"fingerprint_parts": []}, "'fingerprint_parts'"),
                                          ({"parameterized": "print(42)"}, "'parameterized'")])
def test_meta_of_the_wrong_type_is_refused_on_read(tiny_engine: GraftEngine, meta: dict[str, Any],
                                                   message: str) -> None:
    block = new_block(kind="document", tokens=[1, 2, 3], pos_start=0, fingerprint="fp", profile={}, payload=b"x" * 9)
    with pytest.raises(BlockFormatError, match=message):
        decode(_rewrite_header(block, **meta))


def test_a_format_1_block_reads_but_counts_as_unsigned_v1_under_a_key(tiny_engine: GraftEngine) -> None:
    current = _small_signed_block(tiny_engine)
    old = Block(current.block_id, current.identity, current.payload, dict(current.meta),
                sign_v1(current.block_id, KEY), 1)
    data = encode(old)
    assert struct.unpack_from("<H", data, 8)[0] == 1
    assert decode(data).format_version == 1  # still read
    assert signature_status(decode(data), KEY) == "unsigned-v1"
    with pytest.raises(BlockAuthError, match="unsigned-v1"):
        decode(data, key=KEY)
    assert signature_status(decode(encode(current)), KEY) == "signed"


def test_keys_shorter_than_32_bytes_are_refused(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("KVGRAFT_BLOCK_KEY", "short")
    result = runner.invoke(app, ["blocks", "list", "--json"])
    assert result.exit_code == 2 and "at least 32 bytes" in result.stderr


def test_unsigned_blocks_are_said_so_by_fingerprint(data_dir: Path) -> None:
    assert _json(["fingerprint", "--json"])["block_signing"].startswith("off:")


# -- registration of blocks found in the store ------------------------------------------------------------------

def _plant(pod: Path, block: Block, data: bytes | None = None) -> None:
    path = pod / "blocks" / block_key(block.fingerprint, block.block_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if data is not None else encode(block))


def test_attest_registers_only_fully_verified_blocks_and_never_as_shared(
        data_dir: Path, tiny_engine: GraftEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVGRAFT_BLOCK_KEY", KEY_ENV)
    key = KEY_ENV.encode()
    snap = lambda text: tiny_engine.capture(tiny_engine.tokenize(text), n_query=8)  # noqa: E731
    signed_private = snapshot_to_block(snap("a signed private passage"), kind="document", key=key,
                                       meta={"passage": "a signed private passage",
                                             "owner": {"team": "team-a", "shared": False}})
    signed_ownerless = snapshot_to_block(snap("a signed passage naming no owner"), kind="document", key=key,
                                         meta={"passage": "a signed passage naming no owner"})
    unsigned = snapshot_to_block(snap("an unsigned injected passage"), kind="document",
                                 meta={"passage": "an unsigned injected passage", "owner": {"team": None,
                                                                                          "shared": True}})
    foreign = snapshot_to_block(snap("signed with another deployment's key"), kind="document", key=OTHER_KEY,
                                meta={"passage": "signed with another deployment's key"})
    tampered = snapshot_to_block(snap("a passage rewritten in the bucket"), kind="document", key=key,
                                 meta={"passage": "a passage rewritten in the bucket",
                                       "owner": {"team": "team-a", "shared": False}})
    bad_probe = snapshot_to_block(snap("a block whose probe is a string"), kind="document", key=key)
    for block in (signed_private, signed_ownerless, unsigned, foreign):
        _plant(data_dir, block)
    _plant(data_dir, tampered, _rewrite_header(tampered, owner={"team": "team-a", "shared": True}))
    _plant(data_dir, bad_probe, _rewrite_header(bad_probe, probe="not an object"))
    report = _json(["attest", "--json"])  # one bad block never aborts the others
    status = {b["block_id"]: b["status"] for b in report["blocks"]}
    assert status[signed_private.block_id] == status[signed_ownerless.block_id] == "attested"
    for refused in (unsigned, foreign, tampered, bad_probe):
        assert status[refused.block_id] == "refused"
    rt = open_runtime()
    try:
        with rt.session() as s:
            rows = {r.id: r for r in s.scalars(sa.select(BlockRow))}
            assert set(rows) == {signed_private.block_id, signed_ownerless.block_id}  # refused: never catalogued
            assert rows[signed_private.block_id].shared is False
            assert rows[signed_ownerless.block_id].shared is False and rows[signed_ownerless.block_id].team_id is None
        # no team can see the ownerless block, nor team-b the private one; the refused ones are nowhere
        from store.repository import block_visible_to, get_or_create_team

        with rt.session() as s:
            team_b = get_or_create_team(s, name="team-b").id
            team_a = get_or_create_team(s, name="team-a").id
            seen_b = set(s.scalars(sa.select(BlockRow.id).where(block_visible_to(team_b))))
            seen_a = set(s.scalars(sa.select(BlockRow.id).where(block_visible_to(team_a))))
        assert seen_b == set() and seen_a == {signed_private.block_id}
    finally:
        rt.close()


# -- gc and verify against the catalogue by block id ------------------------------------------------------------

def _deposit(tmp_path: Path, text: str, name: str) -> dict[str, Any]:
    f = tmp_path / name
    f.write_text(text)
    return _json(["deposit", str(f), "--json"])


def test_gc_after_a_copy_to_another_store_deletes_no_catalogued_block(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _deposit(tmp_path, "A catalogued block that gc must never delete.", "a.txt")
    other = tmp_path / "other-store"
    _json(["blocks", "copy", "--to", f"file://{other}", "--json"])
    monkeypatch.setenv("KVGRAFT_STORE_URL", f"file://{other}")  # the deployment now reads the copy
    for path in other.rglob("*"):
        if path.is_file():
            import os
            import time

            os.utime(path, (time.time() - 7200, time.time() - 7200))
    assert _json(["blocks", "gc", "--older-than", "1h", "--json"])["removed"] == []
    assert (other / block_key(kept["fingerprint"], kept["block_id"])).is_file()
    report = _json(["blocks", "verify", "--json"], code=1)  # the rows still name the first store
    assert [p["status"] for p in report["problems"]] == ["elsewhere"]


def test_gc_after_the_data_folder_moved_deletes_nothing_and_verify_fails(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _deposit(tmp_path, "A block whose data folder is moved by an operator.", "a.txt")
    moved = tmp_path / "moved-data"
    shutil.move(str(data_dir), str(moved))
    monkeypatch.setenv("KVGRAFT_DATA_DIR", str(moved))
    import os
    import time

    for path in (moved / "blocks").rglob("*"):
        if path.is_file():
            os.utime(path, (time.time() - 7200, time.time() - 7200))
    assert _json(["blocks", "gc", "--older-than", "1h", "--json"])["removed"] == []
    assert (moved / "blocks" / block_key(kept["fingerprint"], kept["block_id"])).is_file()
    report = _json(["blocks", "verify", "--json"], code=1)
    assert report["problems"][0]["status"] == "elsewhere" and "names the store" in report["problems"][0]["detail"]
    refused = runner.invoke(app, ["blocks", "gc", "--older-than", "0", "--json"])
    assert refused.exit_code == 2 and "at least 10 minutes" in refused.stderr


# -- repair -----------------------------------------------------------------------------------------------------

def _flip_payload(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_corrupted_document_is_rederived_from_its_header_and_one_beyond_repair_is_quarantined(
        data_dir: Path, tmp_path: Path) -> None:
    doc = _deposit(tmp_path, "The depot opens at 06:10 and closes at 22:40.", "a.txt")
    path = data_dir / "blocks" / block_key(doc["fingerprint"], doc["block_id"])
    _flip_payload(path)
    _json(["blocks", "verify", "--json"], code=1)
    repaired = _json(["blocks", "repair", doc["block_id"], "--json"])
    assert repaired["status"] == "rederived" and repaired["source"] == "header"
    assert _json(["blocks", "verify", "--json"])["ok"] is True
    path.write_bytes(b"KVGRAFT\x00" + b"\x00" * 40)  # header destroyed: a document cannot be re-derived
    quarantined = _json(["blocks", "repair", doc["block_id"], "--json"], code=1)
    assert quarantined["status"] == "quarantined" and quarantined["quarantine_key"].startswith("quarantine/")
    assert not path.exists() and (data_dir / "blocks" / quarantined["quarantine_key"]).is_file()
    answer = _json(["ask", "When does the depot open?", "--json"])
    assert answer["block_id"] != doc["block_id"]  # a quarantined block is a miss, not a crash


PROBLEMS = "\n".join(json.dumps(p) for p in [
    {"id": "r1", "question": "Sam reads 15 pages a day for 7 days. How many pages?", "answer": 105,
     "solution": "print(15 * 7)"}])


def test_a_corrupted_skill_block_no_longer_wedges_solving(data_dir: Path, tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(PROBLEMS)
    _json(["run", str(f), "--json"])
    rt = open_runtime()
    try:
        with rt.session() as s:
            skill = s.scalars(sa.select(BlockRow).where(BlockRow.kind == "skill")).one()
            solution = s.scalars(sa.select(BlockRow).where(BlockRow.kind == "solution")).one()
    finally:
        rt.close()
    _flip_payload(data_dir / "blocks" / skill.object_key)
    _flip_payload(data_dir / "blocks" / solution.object_key)
    report = _json(["run", str(f), "--fresh", "--json"])  # the skill block repairs itself on first use
    assert report["problems"][0]["status"] == "deposited"
    repaired = _json(["blocks", "repair", solution.id, "--json"])
    assert repaired["status"] in ("rederived", "intact")  # a re-deposit of the same content may have fixed it
    assert _json(["blocks", "verify", "--json"])["ok"] is True


# -- per-team visibility and trust ------------------------------------------------------------------------------

def test_a_deduplicated_block_is_visible_to_each_depositor_and_private_ones_to_nobody_else(data_dir: Path) -> None:
    from store.repository import block_visible_to, get_or_create_team
    from workers.queue.dispatch import dispatch_solves

    rt = open_runtime()
    try:
        problem = [{"id": "x", "question": "A rack holds 4 hats. How many hats are on 6 racks?", "answer": 24,
                    "solution": "print(4 * 6)"}]
        text = json.dumps(problem[0])
        _, a_ids = submit_batch(rt, parse_problems_jsonl(text), team="team-a", shared=False)
        dispatch_solves(rt, a_ids)
        _, b_ids = submit_batch(rt, parse_problems_jsonl(text), team="team-b", shared=True)
        dispatch_solves(rt, b_ids)
        with rt.session() as s:
            block_a = s.get(ProblemRow, a_ids[0]).block_id
            assert block_a is not None and s.get(ProblemRow, b_ids[0]).block_id == block_a  # deduplicated
            ids = {n: get_or_create_team(s, name=n).id for n in ("team-a", "team-b", "team-c")}
            visible = {n: set(s.scalars(sa.select(BlockRow.id).where(BlockRow.kind == "solution",
                                                                      block_visible_to(t))))
                       for n, t in ids.items()}
        assert visible == {"team-a": {block_a}, "team-b": {block_a}, "team-c": {block_a}}  # B shared it
        _, c_ids = submit_batch(rt, parse_problems_jsonl(json.dumps(
            {"id": "y", "question": "A tray holds 5 cups. How many cups are on 3 trays?", "answer": 15,
             "solution": "print(5 * 3)"})), team="team-c", shared=False)
        dispatch_solves(rt, c_ids)
        with rt.session() as s:
            private_c = s.get(ProblemRow, c_ids[0]).block_id
            seen_by_a = set(s.scalars(sa.select(BlockRow.id).where(block_visible_to(ids["team-a"]))))
        assert private_c not in seen_by_a
    finally:
        rt.close()


def test_a_team_grafts_shared_blocks_only_from_teams_it_trusts_and_answers_say_whose(data_dir: Path) -> None:
    from store.repository import get_or_create_team, set_graft_from, set_team_trusted
    from workers.flywheel.answer import AnswerParams
    from workers.flywheel.answering import answer_question
    from workers.queue.dispatch import dispatch_solves

    replay = AnswerParams(use_direct=False, use_transfer=False, use_context=False)
    rt = open_runtime()
    try:
        wrong = {"id": "w", "question": "What is 6 times 7?", "answer": 41, "solution": "print(41)"}  # wrong key
        _, ids = submit_batch(rt, parse_problems_jsonl(json.dumps(wrong)), team="careless", shared=True)
        dispatch_solves(rt, ids)
        with rt.session() as s:
            reader = get_or_create_team(s, name="reader").id
        assert answer_question(rt, wrong["question"], team_id=reader, params=replay).route == "abstain"
        with rt.session() as s:
            set_team_trusted(s, name="careless", trusted=True)
        trusted = answer_question(rt, wrong["question"], team_id=reader, params=replay)
        assert trusted.route == "recurrence" and trusted.verified_by == "careless"
        with rt.session() as s:
            set_graft_from(s, team_id=reader, names=[])  # the reader's own choice overrides the operator's
        assert answer_question(rt, wrong["question"], team_id=reader, params=replay).route == "abstain"
        with rt.session() as s:
            owners = s.execute(sa.text("SELECT verified_by_team_id FROM block_owners")).scalars().all()
            careless = get_or_create_team(s, name="careless").id
        assert careless in owners  # provenance records whose key verified the block
    finally:
        rt.close()


# -- exactly one outcome ----------------------------------------------------------------------------------------

def test_a_store_error_while_answering_ends_the_request_failed_with_a_reason(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.flywheel.recurrence as answering

    rt = open_runtime()
    try:
        request = submit_question(rt, "What is 3 plus 4?", team_id=None)

        def broken(*args: Any, **kwargs: Any) -> None:
            raise BlockFormatError("the catalogue points at a block in an unknown format")

        monkeypatch.setattr(answering, "find_recurrence", broken)
        assert answer_request(rt, request) == "failed"
        with rt.session() as s:
            row = s.get(QueryRequestRow, request)
            assert row.status == "failed" and row.error.startswith("store_error: BlockFormatError")
        assert answer_request(rt, request) == "failed"  # a redelivery leaves the outcome alone
    finally:
        rt.close()


def test_a_corrupted_recurrence_block_is_a_miss_and_the_request_still_ends(data_dir: Path, tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(PROBLEMS)
    _json(["run", str(f), "--json"])
    rt = open_runtime()
    try:
        with rt.session() as s:
            solution = s.scalars(sa.select(BlockRow).where(BlockRow.kind == "solution")).one()
        (data_dir / "blocks" / solution.object_key).unlink()
        request = submit_question(rt, "Sam reads 15 pages a day for 7 days. How many pages?", team_id=None)
        from workers.flywheel.answer import AnswerParams

        assert answer_request(rt, request, AnswerParams(use_direct=False, use_transfer=False)) == "done"
        with rt.session() as s:
            from store.db import AnswerRow

            row = s.get(QueryRequestRow, request)
            assert row.status == "done" and s.get(AnswerRow, row.query_id).route == "abstain"
    finally:
        rt.close()


def test_a_duplicate_delivery_never_overwrites_a_terminal_outcome(data_dir: Path) -> None:
    from workers.flywheel.solve import _finish

    rt = open_runtime()
    try:
        _, ids = submit_batch(rt, parse_problems_jsonl(json.dumps(
            {"id": "d", "question": "What is 1 plus 1?", "answer": 2, "solution": "print(2)"})), team="t")
        _finish(rt, ids[0], "solved", {"route": "reference", "answer": "2"})
        _finish(rt, ids[0], "failed", {"reason": "a late duplicate delivery"})
        with rt.session() as s:
            assert s.get(ProblemRow, ids[0]).status == "solved"
    finally:
        rt.close()


@pytest.mark.parametrize("got,expected,match", [
    ("10000009", 10000000, False), ("10000000", 10000000, True), ("10000000.0", 10000000, True),
    ("1" * 401, int("1" * 401), True), ("1" * 400 + "2", int("1" * 401), False), ("12.5", 12, False),
    ("0.3333333", "0.3333333", True), ("0.333", 1 / 3, False), ("3.1415926", 3.14159265, True),
    ("1e999999999", 5, False), ("12\x00", 12, True), ("Twelve", "twelve", True), ("12", float("nan"), False),
])
def test_answers_compare_integers_exactly_at_any_size(got: str, expected: Any, match: bool) -> None:
    from workers.verify.answer_match import answers_match

    assert answers_match(got, expected) is match


def test_a_401_digit_answer_and_a_nul_printing_program_end_in_outcomes(data_dir: Path, tmp_path: Path) -> None:
    big = int("7" * 401)
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(json.dumps(p) for p in [
        {"id": "big", "question": "What is the big number?", "answer": big, "solution": f"print({big})"},
        {"id": "nul", "question": "What does it print?", "answer": 3, "solution": "print('3\\x00')"}]))
    report = _json(["run", str(f), "--json"])
    assert [p["status"] for p in report["problems"]] == ["deposited", "deposited"]


# -- audit ------------------------------------------------------------------------------------------------------

def test_audit_verify_rechecks_verifier_only_problems_against_their_verifier(data_dir: Path,
                                                                             tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "even", "question": "Name an even number below 10.", "solution": "print(4)",
                             "verifier": "def verify(a):\n    return int(a) % 2 == 0"}) + "\n")
    assert _json(["run", str(f), "--json"])["problems"][0]["status"] == "deposited"
    bundle = tmp_path / "bundle"
    _json(["audit", "export", str(bundle), "--json"])
    report = _json(["audit", "verify", str(bundle), "--json"])
    assert report["ok"] is True and report["mismatches"] == []


def test_audit_verify_never_reads_outside_the_bundle(data_dir: Path, tmp_path: Path) -> None:
    import hashlib

    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    bundle = tmp_path / "bundle"
    _json(["audit", "export", str(bundle), "--json"])
    (bundle / "link.txt").symlink_to(secret)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["files"].update({str(secret): digest, "../secret.txt": digest, "link.txt": digest})
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    report = _json(["audit", "verify", str(bundle), "--json"], code=1)
    hostile = {m["where"]: m for m in report["mismatches"] if m["kind"] == "manifest"}
    assert set(hostile) == {str(secret), "../secret.txt", "link.txt"}
    assert all("escapes the bundle" in m["detail"] for m in hostile.values())


def test_a_task_that_gives_up_ends_its_problem_failed(data_dir: Path) -> None:
    import workers.queue.tasks as tasks
    from store.errors import ObjectStoreUnavailableError

    rt = open_runtime()
    try:
        _, ids = submit_batch(rt, parse_problems_jsonl(json.dumps(
            {"id": "g", "question": "What is 2 plus 2?", "answer": 4, "solution": "print(4)"})), team="t")
        tasks._runtime = None
        tasks.solve_problem_task.on_failure(ObjectStoreUnavailableError("S3 down after 8 retries"), "task-id",
                                            (ids[0],), {}, None)
        with rt.session() as s:
            problem = s.get(ProblemRow, ids[0])
            assert problem.status == "failed" and problem.outcome["reason"] == "store_error"
            assert "S3 down" in problem.outcome["detail"]
    finally:
        if tasks._runtime is not None:
            tasks._runtime.close()
            tasks._runtime = None
        rt.close()


def test_repair_never_re_signs_metadata_that_was_rewritten_in_the_bucket(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVGRAFT_BLOCK_KEY", KEY_ENV)
    doc = _deposit(tmp_path, "The ferry leaves the north pier at 07:40.", "a.txt")
    path = data_dir / "blocks" / block_key(doc["fingerprint"], doc["block_id"])
    original = decode(path.read_bytes(), key=KEY_ENV.encode())
    path.write_bytes(_rewrite_header(original, passage="The ferry never runs.", text="The ferry never runs.",
                                     owner={"team": "attacker", "shared": True}))
    _json(["blocks", "verify", "--json"], code=1)  # the rewritten header no longer verifies
    repaired = _json(["blocks", "repair", doc["block_id"], "--json"])
    assert repaired["status"] == "rederived" and repaired["source"] == "header"
    fixed = decode(path.read_bytes(), key=KEY_ENV.encode())
    assert fixed.meta.get("passage") == "The ferry leaves the north pier at 07:40."
    assert fixed.meta.get("owner", {}).get("team") != "attacker"


def test_a_quarantined_block_deposited_again_is_served_again(data_dir: Path, tmp_path: Path) -> None:
    text = "The depot opens at 06:10 and closes at 22:40."
    doc = _deposit(tmp_path, text, "a.txt")
    path = data_dir / "blocks" / block_key(doc["fingerprint"], doc["block_id"])
    path.write_bytes(b"KVGRAFT\x00" + b"\x00" * 40)
    assert _json(["blocks", "repair", doc["block_id"], "--json"], code=1)["status"] == "quarantined"
    again = _deposit(tmp_path, text, "b.txt")
    assert again["block_id"] == doc["block_id"]
    rt = open_runtime()
    try:
        with rt.session() as s:
            assert s.get(BlockRow, doc["block_id"]).quarantined_at is None
    finally:
        rt.close()


def test_work_accepted_by_an_embedded_server_that_died_runs_when_it_starts_again(data_dir: Path) -> None:
    import time

    from fastapi.testclient import TestClient

    from services.api import create_app
    from workers.settings import Settings

    rt = open_runtime()
    try:  # what a server accepted and stored before it died, without running it
        batch_id, ids = submit_batch(rt, parse_problems_jsonl(json.dumps(
            {"id": "left", "question": "What is 5 plus 6?", "answer": 11, "solution": "print(11)"})), team="t")
        request = submit_question(rt, "What is 5 plus 6?", team_id=None)
    finally:
        rt.close()
    with TestClient(create_app(Settings())):
        deadline = time.monotonic() + 60
        rt = open_runtime()
        try:
            while True:
                with rt.session() as s:
                    done = (s.get(ProblemRow, ids[0]).status != "pending", s.get(QueryRequestRow, request).status)
                if done[0] and done[1] != "pending":
                    break
                assert time.monotonic() < deadline, done
                time.sleep(0.1)
            with rt.session() as s:
                assert s.get(ProblemRow, ids[0]).status == "solved"
        finally:
            rt.close()


def test_in_process_a_transient_error_is_retried_then_fails_only_its_own_problem(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.queue.dispatch as dispatch
    from store.errors import ObjectStoreUnavailableError

    rt = open_runtime()
    try:
        lines = [{"id": "flaky", "question": "What is 2 plus 9?", "answer": 11, "solution": "print(11)"},
                 {"id": "fine", "question": "What is 3 plus 9?", "answer": 12, "solution": "print(12)"}]
        _, ids = submit_batch(rt, parse_problems_jsonl("\n".join(json.dumps(x) for x in lines)), team="t")
        real = dispatch.solve_stored_problem
        calls: list[str] = []

        def flaky(runtime: Any, problem_id: str, **kwargs: Any) -> str:
            calls.append(problem_id)
            if problem_id == ids[0]:
                raise ObjectStoreUnavailableError("S3 is down")
            return real(runtime, problem_id, **kwargs)

        monkeypatch.setattr(dispatch, "solve_stored_problem", flaky)
        dispatch.work_in_process(rt, "solve", ids, attempts=3, backoff_s=0)
        assert calls.count(ids[0]) == 3
        with rt.session() as s:
            assert s.get(ProblemRow, ids[0]).status == "failed" and s.get(ProblemRow, ids[0]).outcome["reason"] == \
                "store_error"
            assert s.get(ProblemRow, ids[1]).status == "solved"
    finally:
        rt.close()


def test_requeue_without_a_broker_runs_pending_work_here(data_dir: Path) -> None:
    rt = open_runtime()
    try:
        _, ids = submit_batch(rt, parse_problems_jsonl(json.dumps(
            {"id": "p", "question": "What is 4 plus 4?", "answer": 8, "solution": "print(8)"})), team="t")
    finally:
        rt.close()
    result = runner.invoke(app, ["requeue", "--older-than", "0s", "--json"])
    assert result.exit_code == 0, result.stderr
    rt = open_runtime()
    try:
        with rt.session() as s:
            assert s.get(ProblemRow, ids[0]).status == "solved"
    finally:
        rt.close()
