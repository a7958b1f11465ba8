"""Deposit, blocks list/show/verify/copy/gc and audit export/verify through the CLI, on SQLite and local disk."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli import app
from store.blockfile import new_block
from store.blocks import block_key
from store.db import BatchRow, GenerationRow, ProblemRow, TeamRow
from workers.runtime import open_runtime

pytestmark = pytest.mark.unit
runner = CliRunner()


def _run(args: list[str], code: int | None = 0) -> dict:
    result = runner.invoke(app, args)
    if code is not None:
        assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout) if result.stdout.strip().startswith("{") else {"_stderr": result.stderr}


def _deposit(tmp_path: Path, text: str, name: str = "doc.txt") -> dict:
    f = tmp_path / name
    f.write_text(text)
    return _run(["deposit", str(f), "--kind", "document", "--json"])


def _object_path(data_dir: Path, rec: dict) -> Path:
    return data_dir / "blocks" / rec["key"]


def test_deposit_is_gated_stored_recorded_and_idempotent(data_dir: Path, tmp_path: Path) -> None:
    first = _deposit(tmp_path, "The lighthouse keeper logged 47 ships in March.")
    assert first["byte_exact"] is True and first["created"] is True and first["n_tokens"] > 5
    again = _deposit(tmp_path, "The lighthouse keeper logged 47 ships in March.", "copy.txt")
    assert again["block_id"] == first["block_id"] and again["created"] is False
    listed = _run(["blocks", "list", "--json"])
    assert listed["total"] == 1 and listed["items"][0]["id"] == first["block_id"]
    assert {"id", "kind", "fingerprint", "team", "n_tokens"} <= set(listed["items"][0])
    shown = _run(["blocks", "show", first["block_id"], "--json"])
    assert shown["catalogue"]["n_tokens"] == first["n_tokens"]
    assert shown["stored"]["text"].startswith("The lighthouse keeper")
    assert shown["attestations"][0]["status"] == "attested"
    assert len(list((data_dir / "blocks").rglob("*"))) == 3  # blocks/<fingerprint>/<id>: one object
    assert _run(["blocks", "verify", "--json"])["ok"] is True


def test_verify_names_corrupted_truncated_missing_and_orphaned_blocks(data_dir: Path, tmp_path: Path) -> None:
    a = _deposit(tmp_path, "Alpha block text with the number 11.", "a.txt")
    b = _deposit(tmp_path, "Bravo block text with the number 22.", "b.txt")
    c = _deposit(tmp_path, "Charlie block text with the number 33.", "c.txt")
    pa = _object_path(data_dir, a)
    raw = bytearray(pa.read_bytes())
    raw[-7] ^= 0x10
    pa.write_bytes(bytes(raw))
    pb = _object_path(data_dir, b)
    pb.write_bytes(pb.read_bytes()[:-100])
    _object_path(data_dir, c).unlink()
    report = _run(["blocks", "verify", "--all", "--json"], code=1)
    status = {p["block_id"]: p["status"] for p in report["problems"]}
    assert status == {a["block_id"]: "corrupted", b["block_id"]: "corrupted", c["block_id"]: "missing"}
    assert "SHA-256" in next(p["detail"] for p in report["problems"] if p["block_id"] == a["block_id"])
    assert "truncated" in next(p["detail"] for p in report["problems"] if p["block_id"] == b["block_id"])


def test_an_interrupted_deposit_leaves_an_orphan_that_gc_removes(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.flywheel.deposit as deposit_module

    def crash(*args: object, **kwargs: object) -> None:
        raise OSError("simulated crash between the object write and the row commit")

    monkeypatch.setattr(deposit_module, "record_block", crash)
    f = tmp_path / "doc.txt"
    f.write_text("A deposit that dies halfway.")
    result = runner.invoke(app, ["deposit", str(f), "--json"])
    assert result.exit_code == 2 and "simulated crash" in result.stderr
    monkeypatch.undo()
    monkeypatch.setenv("KVGRAFT_DATA_DIR", str(data_dir))
    monkeypatch.setenv("KVGRAFT_MODEL", "tiny")
    assert _run(["blocks", "list", "--json"])["total"] == 0  # no row without its object, and no row at all
    report = _run(["blocks", "verify", "--all", "--json"])  # orphans are warnings
    assert report["ok"] is True and [p["status"] for p in report["problems"]] == ["orphan"]
    _run(["blocks", "verify", "--all", "--strict", "--json"], code=1)
    kept = _deposit(tmp_path, "A deposit that completes.", "ok.txt")
    assert _run(["blocks", "gc", "--older-than", "1h", "--json"])["removed"] == []  # too young
    refused = runner.invoke(app, ["blocks", "gc", "--older-than", "0s", "--json"])  # below the minimum age
    assert refused.exit_code == 2 and "at least" in refused.stderr
    for path in (data_dir / "blocks").rglob("*"):  # both objects, the orphan and the catalogued one, age 2 h
        if path.is_file():
            os.utime(path, (time.time() - 7200, time.time() - 7200))
    removed = _run(["blocks", "gc", "--older-than", "1h", "--json"])["removed"]
    assert len(removed) == 1 and removed[0]["block_id"] != kept["block_id"]
    assert _object_path(data_dir, kept).is_file()
    assert _run(["blocks", "verify", "--all", "--strict", "--json"])["ok"] is True


def test_copy_to_another_store_verifies_and_records(data_dir: Path, tmp_path: Path) -> None:
    rec = _deposit(tmp_path, "Copy me to the other pod.")
    dest = tmp_path / "other-store"
    out = _run(["blocks", "copy", "--to", f"file://{dest}", "--json"])
    assert out["copied"] == 1 and out["failed"] == []
    assert (dest / rec["key"]).read_bytes() == _object_path(data_dir, rec).read_bytes()
    again = _run(["blocks", "copy", "--to", f"file://{dest}", "--json"])
    assert again["copied"] == 0 and again["already_present"] == 1
    rt = open_runtime()
    try:
        with rt.session() as s:
            from store.db import CopyRow

            assert s.query(CopyRow).count() == 2
    finally:
        rt.close()


def test_a_block_filed_under_another_fingerprint_is_refused(data_dir: Path, tmp_path: Path) -> None:
    rec = _deposit(tmp_path, "An honest block.")
    foreign = new_block(kind="document", tokens=[1, 2, 3], pos_start=0, fingerprint="e" * 32, profile={},
                        payload=b"not a state of this machine")
    from store.blockfile import encode

    misfiled = data_dir / "blocks" / block_key(rec["fingerprint"], foreign.block_id)
    misfiled.write_bytes(encode(foreign))  # replayed into this fingerprint's directory
    report = _run(["blocks", "verify", "--json"], code=1)
    bad = {p["block_id"]: p for p in report["problems"]}
    assert bad[foreign.block_id]["status"] == "corrupted" and "fingerprint" in bad[foreign.block_id]["detail"]


def test_hmac_key_refuses_unsigned_blocks(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _deposit(tmp_path, "Deposited before the deployment had a key.")
    monkeypatch.setenv("KVGRAFT_BLOCK_KEY", "a-deployment-secret-of-32-bytes-or-more")
    report = _run(["blocks", "verify", "--json"], code=1)
    assert report["problems"][0]["block_id"] == rec["block_id"] and "HMAC" in report["problems"][0]["detail"]
    signed = _deposit(tmp_path, "Deposited with the key.", "signed.txt")
    assert signed["byte_exact"] is True
    report = _run(["blocks", "verify", "--json"], code=1)
    assert [p["block_id"] for p in report["problems"]] == [rec["block_id"]]


@pytest.mark.parametrize(("content", "message"), [
    (b"\x00\x01\x02binary", "binary"),
    (b"\xff\xfe\xfa not utf8", "not UTF-8"),
    (b"   \n", "empty"),
])
def test_bad_deposit_input_gets_a_clear_error(data_dir: Path, tmp_path: Path, content: bytes, message: str) -> None:
    f = tmp_path / "bad.txt"
    f.write_bytes(content)
    result = runner.invoke(app, ["deposit", str(f), "--json"])
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""
    assert _run(["blocks", "list", "--json"])["total"] == 0


def test_unknown_block_and_bad_kind(data_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["blocks", "show", "0" * 64])
    assert result.exit_code == 2 and "no block" in result.stderr
    f = tmp_path / "t.txt"
    f.write_text("text")
    result = runner.invoke(app, ["deposit", str(f), "--kind", "solution"])
    assert result.exit_code == 2 and "verified solving" in result.stderr


def _seed_provenance(answer: object, program: str, verdict: str = "verified") -> None:
    rt = open_runtime()
    try:
        with rt.session() as s:
            team = TeamRow(name="team-a")
            s.add(team)
            s.flush()
            batch = BatchRow(team_id=team.id)
            s.add(batch)
            s.flush()
            problem = ProblemRow(batch_id=batch.id, external_id="p1", question="What is 6 times 7?",
                              question_digest=hashlib.sha256(b"what is 6 times 7?").hexdigest(), answer=answer)
            s.add(problem)
            s.flush()
            text = f"```python\n{program}\n```"
            s.add(GenerationRow(problem_id=problem.id, sample_index=0, prompt_digest="0" * 64, text=text,
                             text_digest=hashlib.sha256(text.encode()).hexdigest(), program=program,
                             program_digest=hashlib.sha256(program.encode()).hexdigest(), verdict=verdict,
                             answer="42"))
    finally:
        rt.close()


def test_audit_export_and_verify_round_trip_reruns_programs(data_dir: Path, tmp_path: Path) -> None:
    _deposit(tmp_path, "A block to audit.")
    _seed_provenance(42, "print(6 * 7)")
    bundle = tmp_path / "bundle"
    exported = _run(["audit", "export", str(bundle), "--json"])
    assert exported["counts"]["generations"] == 1 and exported["counts"]["blocks"] == 1
    assert (bundle / "programs" / "1.py").read_text() == "print(6 * 7)"
    assert _run(["audit", "verify", str(bundle), "--json"])["ok"] is True
    assert "api_tokens" not in json.loads((bundle / "manifest.json").read_text())["counts"]
    result = runner.invoke(app, ["audit", "export", str(bundle)])
    assert result.exit_code == 2 and "not empty" in result.stderr


def test_audit_verify_detects_tampering_and_answers_that_no_longer_verify(data_dir: Path, tmp_path: Path) -> None:
    _seed_provenance(41, "print(6 * 7)")  # recorded as verified, but the program prints 42, not 41
    bundle = tmp_path / "bundle"
    _run(["audit", "export", str(bundle), "--json"])
    gens = bundle / "tables" / "generations.jsonl"
    row = json.loads(gens.read_text())
    row["text"] = "an edited generation"
    gens.write_text(json.dumps(row) + "\n")
    (bundle / "extra.txt").write_text("smuggled")
    report = _run(["audit", "verify", str(bundle), "--json"], code=1)
    kinds = {(m["kind"], m["where"]) for m in report["mismatches"]}
    assert ("digest", "tables/generations.jsonl") in kinds
    assert ("row_digest", "generation 1") in kinds
    assert ("unlisted_file", "extra.txt") in kinds
    assert ("answer", "generation 1") in kinds
