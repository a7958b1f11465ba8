"""The store end to end on real services: PostgreSQL (a fresh database) and an S3 server over HTTP (moto)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from services.cli import app
from store.blocks import block_key
from workers.flywheel.deposit import deposit_text
from workers.runtime import open_runtime
from workers.settings import Settings

pytestmark = pytest.mark.integration
runner = CliRunner()


@pytest.fixture()
def services_env(pg_url: str, s3_store_url: str, s3_server: str, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"KVGRAFT_DATABASE_URL": pg_url, "KVGRAFT_STORE_URL": s3_store_url,
           "KVGRAFT_S3_ENDPOINT_URL": s3_server, "KVGRAFT_MODEL": "tiny",
           "KVGRAFT_DATA_DIR": str(tmp_path / "data")}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("KVGRAFT_BLOCK_KEY", raising=False)
    return env


def _run(args: list[str], code: int = 0) -> Any:
    result = runner.invoke(app, args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout) if result.stdout.strip().startswith("{") else result


def test_postgres_schema_must_be_upgraded_explicitly(services_env: dict[str, str], tmp_path: Path) -> None:
    f = tmp_path / "doc.txt"
    f.write_text("A document for a database that is not migrated yet.")
    result = runner.invoke(app, ["deposit", str(f), "--json"])
    assert result.exit_code == 2 and "kvgraft db upgrade" in result.stderr
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    rec = _run(["deposit", str(f), "--json"])
    assert rec["byte_exact"] is True and rec["key"].startswith("blocks/")


def test_deposit_verify_and_tamper_on_s3(services_env: dict[str, str], tmp_path: Path, s3_admin_client: Any,
                                         s3_store_url: str) -> None:
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    f = tmp_path / "doc.txt"
    f.write_text("The tide tables list high water at 06:12 and 18:40.")
    rec = _run(["deposit", str(f), "--json"])
    assert _run(["blocks", "verify", "--json"])["ok"] is True
    bucket = s3_store_url.removeprefix("s3://").split("/", 1)[0]
    key = "kvgraft/" + rec["key"]
    body = bytearray(s3_admin_client.get_object(Bucket=bucket, Key=key)["Body"].read())
    body[-3] ^= 0xFF
    s3_admin_client.put_object(Bucket=bucket, Key=key, Body=bytes(body))  # behind kvgraft's back
    report = _run(["blocks", "verify", "--json"], code=1)
    assert report["problems"] == [{"block_id": rec["block_id"], "fingerprint": rec["fingerprint"],
                                   "status": "corrupted", "detail": report["problems"][0]["detail"]}]
    s3_admin_client.delete_object(Bucket=bucket, Key=key)
    report = _run(["blocks", "verify", "--json"], code=1)
    assert report["problems"][0]["status"] == "missing"


def test_read_cache_detects_a_corrupted_entry_and_refetches(services_env: dict[str, str], tmp_path: Path) -> None:
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    # the read cache as another process meets it: no copy verified in this process's memory
    rt = open_runtime(Settings(verified_cache_bytes=0))
    try:
        rec = deposit_text(rt, rt.engine(), text="Cached blocks are re-verified on every read.", kind="document",
                           source={"test": "cache"})
        assert rt.blocks.cache is not None
        first = rt.blocks.get(rec.fingerprint, rec.block_id)
        cached = rt.blocks.cache.path_for(block_key(rec.fingerprint, rec.block_id))
        assert cached.is_file()
        damaged = bytearray(cached.read_bytes())
        damaged[-1] ^= 0x01
        cached.write_bytes(bytes(damaged))
        again = rt.blocks.get(rec.fingerprint, rec.block_id)
        assert bytes(again.payload) == bytes(first.payload)
        assert cached.read_bytes() != bytes(damaged)  # the entry was re-fetched from the origin
    finally:
        rt.close()


def test_concurrent_deposits_of_the_same_block_give_one_object_and_one_row(
        services_env: dict[str, str], s3_admin_client: Any, s3_store_url: str) -> None:
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    results: list[Any] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def deposit() -> None:
        rt = open_runtime()
        try:
            engine = rt.engine()
            barrier.wait()
            results.append(deposit_text(rt, engine, text="Three pods deposit the same fact at once: 1234.",
                                        kind="document", source={"test": "race"}))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            rt.close()

    threads = [threading.Thread(target=deposit) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == [] and len(results) == 3
    assert len({r.block_id for r in results}) == 1
    assert sum(r.created for r in results) >= 1
    bucket = s3_store_url.removeprefix("s3://").split("/", 1)[0]
    objects = s3_admin_client.list_objects_v2(Bucket=bucket, Prefix="kvgraft/blocks/").get("Contents", [])
    assert len(objects) == 1
    assert _run(["blocks", "list", "--json"])["total"] == 1


def test_copy_from_s3_to_local_disk_and_back(services_env: dict[str, str], tmp_path: Path) -> None:
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    f = tmp_path / "doc.txt"
    f.write_text("Operators copy blocks between pods of the same architecture.")
    rec = _run(["deposit", str(f), "--json"])
    dest = tmp_path / "pod-b"
    out = _run(["blocks", "copy", "--to", f"file://{dest}", "--fingerprint", rec["fingerprint"], "--json"])
    assert out["copied"] == 1 and out["failed"] == []
    assert (dest / rec["key"]).is_file()
    out = _run(["blocks", "copy", "--to", f"file://{dest}", "--fingerprint", "0" * 32, "--json"])
    assert out["copied"] == 0 and out["already_present"] == 0


def test_copies_between_two_buckets_and_from_disk_to_s3_then_attest_on_arrival(
        services_env: dict[str, str], tmp_path: Path, s3_admin_client: Any, s3_server: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    f = tmp_path / "doc.txt"
    f.write_text("Blocks move between pods of the same architecture and are re-attested on arrival.")
    rec = _run(["deposit", str(f), "--json"])
    second = "kvgraft-second-" + rec["block_id"][:8]
    s3_admin_client.create_bucket(Bucket=second)
    out = _run(["blocks", "copy", "--to", f"s3://{second}/pod-b", "--json"])
    assert out["copied"] == 1 and out["failed"] == []
    copied = s3_admin_client.get_object(Bucket=second, Key=f"pod-b/{rec['key']}")["Body"].read()
    assert len(copied) == rec["bytes"]
    # pod C: blocks on local disk, copied up to S3
    local = tmp_path / "pod-c-blocks"
    _run(["blocks", "copy", "--to", f"file://{local}", "--json"])
    monkeypatch.setenv("KVGRAFT_STORE_URL", f"file://{local}")
    monkeypatch.setenv("KVGRAFT_DATABASE_URL", f"sqlite:///{tmp_path / 'pod-c.db'}")
    third = "kvgraft-third-" + rec["block_id"][:8]
    s3_admin_client.create_bucket(Bucket=third)
    out = _run(["blocks", "copy", "--to", f"s3://{third}/x", "--json"])
    assert out["copied"] == 1
    # pod B: its own database, the second bucket; attest registers and gates what it finds
    monkeypatch.setenv("KVGRAFT_STORE_URL", f"s3://{second}/pod-b")
    monkeypatch.setenv("KVGRAFT_DATABASE_URL", f"sqlite:///{tmp_path / 'pod-b.db'}")
    report = _run(["attest", "--json"])
    assert [(b["block_id"], b["status"]) for b in report["blocks"]] == [(rec["block_id"], "attested")]
    assert _run(["blocks", "verify", "--json"])["ok"] is True
