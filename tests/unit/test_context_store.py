"""The paged context store and cross-pod attestation on the tiny model: documents split into window-sized blocks,
questions routed to the one block that holds what they need, blocks copied to another pod and attested there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.context import haystack, needle
from engine.errors import FingerprintMismatchError
from engine.graft import EngineConfig, GraftEngine
from services.cli import app
from store.blockfile import encode
from store.blocks import block_key
from workers.flywheel.documents import split_text
from workers.seam import block_to_snapshot, snapshot_to_block

pytestmark = pytest.mark.unit
runner = CliRunner()


@pytest.fixture()
def pod(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KVGRAFT_WINDOW_TOKENS", "512")
    return data_dir


def _json(args: list[str], code: int = 0) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def test_split_text_keeps_blocks_within_the_window_and_records_offsets(tiny_engine: GraftEngine) -> None:
    docs = haystack(tiny_engine, 3000, 2, n_docs=1)
    text = docs[0][1]
    chunks = split_text(tiny_engine, text, max_tokens=400)
    assert len(chunks) > 3
    assert all(len(tiny_engine.tokenize(c.text)) <= 400 for c in chunks)
    assert all(text[c.start:c.end] == c.text for c in chunks)
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    assert split_text(tiny_engine, "A short text.", max_tokens=400)[0].text == "A short text."
    no_breaks = "word " * 2000  # one paragraph far longer than the window
    assert all(len(tiny_engine.tokenize(c.text)) <= 400 for c in split_text(tiny_engine, no_breaks, max_tokens=400))


def test_documents_are_routed_to_the_block_holding_the_answer(pod: Path, tmp_path: Path,
                                                              tiny_engine: GraftEngine) -> None:
    files = []
    for name, text in haystack(tiny_engine, 4000, 3, n_docs=3):
        f = tmp_path / name
        f.write_text(text)
        files.append(str(f))
    dep = _json(["deposit", *files, "--gate-fraction", "0.2", "--json"])
    assert dep["n_blocks"] > 6 and dep["gated"] < dep["n_blocks"] and dep["byte_exact"] is True
    assert all(b["n_tokens"] <= 512 - 128 for b in dep["blocks"])
    for i in range(3):
        sentence, question, _ = needle(i)
        answer = _json(["ask", question, "--json"])
        assert answer["route"] == "context" and answer["block_id"] is not None
        shown = _json(["blocks", "show", answer["block_id"], "--json"])
        assert sentence in shown["stored"]["text"]
        assert answer["attested"] is True  # its own gate, or the probe gate of this fingerprint and profile
    unrelated = _json(["ask", "Which planet has the most moons?", "--samples", "2", "--json"])
    assert unrelated["route"] == "abstain" and unrelated["answer"] is None


def test_blocks_copied_to_another_pod_are_registered_and_attested_there(
        pod: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "doc.txt"
    f.write_text("The ferry leaves the north pier at 07:40 and returns at 18:15 every weekday.")
    dep = _json(["deposit", str(f), "--json"])
    pod_b = tmp_path / "pod-b"
    _json(["blocks", "copy", "--to", f"file://{pod_b / 'blocks'}", "--json"])
    monkeypatch.setenv("KVGRAFT_DATA_DIR", str(pod_b))  # its own database, never told about the block
    assert _json(["blocks", "list", "--json"])["total"] == 0
    report = _json(["attest", "--json"])
    assert [(b["block_id"], b["status"], b["byte_exact"]) for b in report["blocks"]] == [
        (dep["block_id"], "attested", True)]
    assert report["summary"][0]["attested"] == 1 and report["summary"][0]["refused"] == 0
    assert _json(["blocks", "list", "--json"])["items"][0]["id"] == dep["block_id"]
    shown = _json(["blocks", "show", dep["block_id"], "--json"])
    assert shown["attestations"][0]["status"] == "attested"


def test_a_block_of_another_fingerprint_is_refused_and_reported(pod: Path, tiny_engine: GraftEngine) -> None:
    fa_off = GraftEngine(tiny_engine.model, EngineConfig(threads=2, flash_attn=False, n_ctx=512), name="tiny")
    block = snapshot_to_block(fa_off.capture(tiny_engine.tokenize("Captured with flash attention off.")),
                              kind="document", meta={"passage": "Captured with flash attention off."})
    path = pod / "blocks" / block_key(block.fingerprint, block.block_id)
    path.parent.mkdir(parents=True)
    path.write_bytes(encode(block))
    report = _json(["attest", "--all", "--json"])
    refused = [b for b in report["blocks"] if b["block_id"] == block.block_id]
    assert refused and refused[0]["status"] == "refused" and "cannot be grafted here" in refused[0]["reason"]
    assert any(s["refused"] == 1 and s["fingerprint"] == block.fingerprint for s in report["summary"])
    here = GraftEngine(tiny_engine.model, EngineConfig(threads=2, n_ctx=512), name="tiny")
    with here.open_context() as ctx, pytest.raises(FingerprintMismatchError, match="flash_attn"):
        here.restore(ctx, block_to_snapshot(block))
