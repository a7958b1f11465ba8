"""The provenance database on SQLite: what only SQLite has (implicit migration, pragmas), and the helpers the
repository suite (tests/unit/test_repository.py, both databases) and tests/integration/test_database.py share:
seeding, schema inspection, the concurrent-insert race, the audit view checks, the owner back-fill."""

from __future__ import annotations

import hashlib
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.orm import Session, sessionmaker

from store import migrate, repository
from store.db import (
    AnswerRow,
    ApiTokenRow,
    Base,
    BatchRow,
    BlockRow,
    GenerationRow,
    ProblemRow,
    make_engine,
    normalize_url,
    utcnow,
)
from store.errors import SchemaAheadError, StoreError, UnknownRoleError

pytestmark = pytest.mark.unit

TABLES = {"teams", "api_tokens", "batches", "problems", "generations", "blocks", "attestations", "queries", "copies"}
HEAD_TABLES = TABLES | {"query_requests", "block_owners", "route_docs", "route_terms", "evictions", "workers",
                                 "prefixes", "task_deliveries"}
AUDIT_VIEWS = {"audit_blocks", "audit_generations", "audit_attestations", "audit_queries"}
FIRST_REVISION = "0001_initial"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def schema_objects(url: str) -> tuple[set[str], set[str]]:
    """The kvgraft tables (without alembic_version) and views present in the database."""
    engine = make_engine(url)
    try:
        inspector = sa.inspect(engine)
        tables = {t for t in inspector.get_table_names() if _modelled(t, "table", {})}  # not SQLite's FTS5 tables
        return tables - {"alembic_version"}, set(inspector.get_view_names())
    finally:
        engine.dispose()


def _modelled(name: str | None, type_: str, parent_names: dict[str, Any]) -> bool:
    """What the models describe: not the full-text index the migrations add beside them (SQLite's FTS5 table
    `route_fts` and its shadow tables, PostgreSQL's generated `route_docs.tsv` and its GIN index)."""
    if type_ == "table":
        return not (name or "").startswith("route_fts")
    return name not in ("tsv", "ix_route_docs_tsv")


def schema_differences(url: str) -> list[Any]:
    """What alembic autogenerate would change to make the migrated database match the models (empty: agreement)."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return compare_metadata(MigrationContext.configure(connection, opts={"include_name": _modelled}),
                                    Base.metadata)
    finally:
        engine.dispose()


def block_fields(name: str, *, fingerprint: str = "f" * 32, team_id: int | None = None,
                 kind: str = "solution") -> dict[str, Any]:
    """record_block keyword arguments for a fake block whose id is derived from `name`."""
    return {"block_id": sha(f"block:{name}"), "fingerprint": fingerprint, "kind": kind, "n_tokens": 12,
            "bytes": 4096, "payload_sha256": sha(f"payload:{name}"), "object_key": f"blocks/{name}.kvg",
            "store_url": "file:///tmp/blocks", "profile": {"n_ctx": 512}, "meta": {"text": name},
            "source": {"problem_id": None, "file": "x.jsonl", "offset": 0}, "team_id": team_id}


def attestation_fields(*, fingerprint: str, block_id: str | None, status: str = "attested",
                       created_at: datetime | None = None) -> dict[str, Any]:
    fields: dict[str, Any] = {"block_id": block_id, "probe_digest": None if block_id else sha("probe"),
                              "fingerprint": fingerprint, "profile": {"n_ctx": 512}, "profile_id": "p" * 16,
                              "host": "host-a", "status": status, "floor_equal": True, "byte_exact": True,
                              "kl_mean": 0.0, "kl_max": 0.0, "argmax_agree": "8/8", "max_abs_diff": 0.0,
                              "reason": None, "timings": {"graft": 1.5}}
    if created_at is not None:
        fields["created_at"] = created_at
    return fields


def seed_provenance(session: Session) -> dict[str, Any]:
    """A small provenance graph: two teams, a shared batch with two problems solved by one block, generations,
    attestations of two fingerprints (the newest of F1 is a probe's), an orphan block and two queries."""
    t0 = utcnow() - timedelta(hours=1)
    alpha = repository.get_or_create_team(session, name="alpha")
    repository.get_or_create_team(session, name="beta")
    block, _ = repository.record_block(session, **block_fields("b1", fingerprint="1" * 32, team_id=alpha.id))
    orphan, _ = repository.record_block(session, **block_fields("b2", fingerprint="3" * 32, kind="document"))
    batch = BatchRow(team_id=alpha.id, shared=True, status="done", created_at=t0)
    session.add(batch)
    session.flush()
    problems = [ProblemRow(batch_id=batch.id, external_id=f"q-{i}", question=f"question {i}",
                        question_digest=sha(f"question {i}"), answer={"value": i}, status="solved",
                        block_id=block.id, created_at=t0 + timedelta(minutes=i)) for i in (1, 2)]
    session.add_all(problems)
    session.flush()
    session.add_all([GenerationRow(problem_id=problems[0].id, sample_index=i, prompt_digest=sha("prompt"),
                                text=f"text {i}", text_digest=sha(f"text {i}"), program="print(1)",
                                program_digest=sha("print(1)"), sandbox_result={"stdout": "1"},
                                verdict="verified" if i == 0 else "wrong", answer="1") for i in (0, 1)])
    old = repository.record_attestation(session, **attestation_fields(
        fingerprint="1" * 32, block_id=block.id, status="functional", created_at=t0 + timedelta(minutes=5)))
    new = repository.record_attestation(session, **attestation_fields(
        fingerprint="1" * 32, block_id=None, created_at=t0 + timedelta(minutes=10)))
    other = repository.record_attestation(session, **attestation_fields(
        fingerprint="2" * 32, block_id=None, created_at=t0 + timedelta(minutes=20)))
    queries = [AnswerRow(team_id=alpha.id, question="question 1", question_digest=sha("question 1"), answer="1",
                     route="recurrence", block_id=block.id, decode_tokens=3, verified=True, attested=True),
               AnswerRow(team_id=None, question="unknown", question_digest=sha("unknown"), route="abstain")]
    session.add_all(queries)
    session.flush()
    return {"team_id": alpha.id, "batch_id": batch.id, "block_id": block.id, "orphan_id": orphan.id,
            "problem_ids": [p.id for p in problems], "attestation_ids": (old.id, new.id, other.id),
            "query_ids": [q.id for q in queries]}


def view_rows(session: Session, view: str, key: str) -> dict[Any, dict[str, Any]]:
    rows = session.execute(sa.text(f"SELECT * FROM {view}")).mappings().all()
    return {row[key]: dict(row) for row in rows}


def check_audit_views(session: Session, seeded: dict[str, Any]) -> None:
    """Assert that each audit view joins the seeded provenance as documented in docs/AUDIT-SQL.md."""
    old_id, new_id, _other_id = seeded["attestation_ids"]
    blocks = view_rows(session, "audit_blocks", "block_id")
    assert set(blocks) == {seeded["block_id"], seeded["orphan_id"]}
    solved = blocks[seeded["block_id"]]
    assert solved["team_name"] == "alpha" and solved["kind"] == "solution"
    assert solved["problem_id"] == seeded["problem_ids"][0] and solved["problem_external_id"] == "q-1"
    assert solved["problem_question_digest"] == sha("question 1") and solved["problem_count"] == 2
    assert solved["attestation_id"] == new_id and solved["attestation_status"] == "attested"
    assert solved["attestation_block_id"] is None
    orphan = blocks[seeded["orphan_id"]]
    assert orphan["team_name"] is None and orphan["problem_id"] is None and orphan["problem_count"] == 0
    assert orphan["attestation_id"] is None

    generations = view_rows(session, "audit_generations", "sample_index")
    assert set(generations) == {0, 1}
    for row in generations.values():
        assert row["problem_id"] == seeded["problem_ids"][0] and row["problem_external_id"] == "q-1"
        assert row["problem_question_digest"] == sha("question 1") and row["batch_id"] == seeded["batch_id"]
        assert row["team_id"] == seeded["team_id"] and row["team_name"] == "alpha"
        assert row["problem_block_id"] == seeded["block_id"] and bool(row["batch_shared"])
    assert generations[0]["verdict"] == "verified" and generations[1]["verdict"] == "wrong"

    attestations = view_rows(session, "audit_attestations", "attestation_id")
    assert set(attestations) == set(seeded["attestation_ids"])
    assert attestations[old_id]["block_kind"] == "solution" and attestations[old_id]["block_team_name"] == "alpha"
    assert attestations[new_id]["block_kind"] is None and attestations[new_id]["probe_digest"] == sha("probe")
    assert attestations[old_id]["argmax_agree"] == "8/8" and attestations[old_id]["status"] == "functional"

    queries = view_rows(session, "audit_queries", "query_id")
    answered, abstained = (queries[q] for q in seeded["query_ids"])
    assert answered["team_name"] == "alpha" and answered["route"] == "recurrence"
    assert answered["block_kind"] == "solution" and answered["block_fingerprint"] == "1" * 32
    assert bool(answered["verified"]) and bool(answered["attested"])
    assert abstained["team_name"] is None and abstained["block_id"] is None and abstained["route"] == "abstain"


def race_record_block(factory: sessionmaker) -> list[bool]:
    """Two sessions record the same block id at once: the second inserts while the first's row is uncommitted.

    Returns the created flags (first, second); raises whatever either session raised.
    """
    fields = block_fields("raced")
    first = factory()
    second_started = threading.Event()
    outcome: dict[str, Any] = {}

    def second() -> None:
        try:
            with factory() as session:
                second_started.set()
                _, outcome["created"] = repository.record_block(session, **fields)
                session.commit()
        except BaseException as exc:  # re-raised in the main thread
            outcome["error"] = exc

    try:
        _, first_created = repository.record_block(first, **fields)
        thread = threading.Thread(target=second)
        thread.start()
        assert second_started.wait(5)
        thread.join(0.3)  # the second insert now waits on the first's uncommitted row (or lock)
        first.commit()
        thread.join(10)
        assert not thread.is_alive()
    finally:
        first.close()
    if "error" in outcome:
        raise outcome["error"]
    return [first_created, outcome["created"]]


def count_blocks(factory: sessionmaker, block_id: str) -> int:
    with factory() as session:
        return session.scalar(sa.select(sa.func.count()).select_from(BlockRow).where(BlockRow.id == block_id)) or 0


def check_tokens(session: Session) -> None:
    """Tokens are stored as SHA-256 only, found by plaintext, and not found once revoked."""
    team = repository.get_or_create_team(session, name="tokens")
    token, plaintext = repository.create_api_token(session, team=team, role="submitter", label="ci")
    assert plaintext.startswith("kvg_") and len(plaintext) > 40
    assert token.token_sha256 == sha(plaintext)
    stored = session.execute(sa.select(ApiTokenRow.__table__)).mappings().all()
    assert all(plaintext not in str(value) for row in stored for value in row.values())
    found = repository.find_token(session, token=plaintext)
    assert found is not None and found.id == token.id and found.role == "submitter"
    assert repository.find_token(session, token=plaintext + "x") is None
    other, other_plain = repository.create_api_token(session, team=team, role="auditor")
    revoked = repository.revoke_token(session, token_id=token.id)
    first_revoked_at = revoked.revoked_at
    assert first_revoked_at is not None
    assert repository.revoke_token(session, token_id=token.id).revoked_at == first_revoked_at
    assert repository.find_token(session, token=plaintext) is None
    assert repository.find_token(session, token=other_plain).id == other.id
    with pytest.raises(UnknownRoleError):
        repository.create_api_token(session, team=team, role="admin")
    with pytest.raises(StoreError):
        repository.revoke_token(session, token_id=10_000)


@pytest.fixture
def migrated_sqlite(sqlite_url: str) -> str:
    migrate.upgrade(sqlite_url)
    return sqlite_url


def test_migrations_upgrade_downgrade_upgrade(sqlite_url: str) -> None:
    assert migrate.upgrade(sqlite_url) == migrate.head_revision()
    assert schema_objects(sqlite_url) == (HEAD_TABLES, AUDIT_VIEWS)
    assert migrate.downgrade(sqlite_url, FIRST_REVISION) == FIRST_REVISION
    assert schema_objects(sqlite_url) == (TABLES, set())
    assert migrate.downgrade(sqlite_url, "base") is None
    assert schema_objects(sqlite_url) == (set(), set())
    migrate.upgrade(sqlite_url)
    assert schema_objects(sqlite_url) == (HEAD_TABLES, AUDIT_VIEWS)


def test_ensure_schema_creates_directory_and_migrates(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'nested' / 'dir' / 'kvgraft.db'}"
    migrate.ensure_schema(url)
    assert (tmp_path / "nested" / "dir" / "kvgraft.db").is_file()
    engine = make_engine(url)
    assert migrate.current_revision(engine) == migrate.head_revision()
    engine.dispose()
    migrate.ensure_schema(url)  # already at head: nothing to do


def test_ensure_schema_upgrades_sqlite_from_first_revision(sqlite_url: str) -> None:
    migrate.upgrade(sqlite_url, FIRST_REVISION)
    migrate.ensure_schema(sqlite_url)
    assert schema_objects(sqlite_url) == (HEAD_TABLES, AUDIT_VIEWS)


def test_ensure_schema_refuses_unknown_revision(migrated_sqlite: str) -> None:
    engine = make_engine(migrated_sqlite)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '9999_future'"))
    engine.dispose()
    with pytest.raises(SchemaAheadError):
        migrate.ensure_schema(migrated_sqlite)


def test_engine_settings(migrated_sqlite: str) -> None:
    assert normalize_url("postgresql://u@h:5432/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgresql+psycopg://u@h/db").drivername == "postgresql+psycopg"
    engine = make_engine(migrated_sqlite)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    engine.dispose()


def check_owner_backfill(url: str) -> None:
    """Migration 0005 back-fills block_owners from data: the first depositor, and one row per other team whose
    batches produced the same block (shared when any of them was), even across several batches of that team."""
    migrate.upgrade(url, "0004_deliveries_and_batch_source")
    engine = make_engine(url)
    now = "2026-11-30 10:00:00+00:00"
    with engine.begin() as c:
        c.execute(sa.text("INSERT INTO teams (id, name, created_at) VALUES (1, 'a', :t), (2, 'b', :t)"), {"t": now})
        c.execute(sa.text("INSERT INTO blocks (id, fingerprint, kind, n_tokens, bytes, payload_sha256, object_key, "
                          "store_url, profile, meta, team_id, shared, created_at) VALUES "
                          "(:id, 'fp', 'solution', 3, 10, :sha, 'k', 'file:///s', '{}', '{}', 1, false, :t)"),
                  {"id": "b" * 64, "sha": "c" * 64, "t": now})
        for batch, team, shared in [("x1", 1, False), ("x2", 2, False), ("x3", 2, True)]:
            c.execute(sa.text("INSERT INTO batches (id, team_id, shared, status, created_at) VALUES "
                              "(:b, :team, :shared, 'done', :t)"), {"b": batch, "team": team, "shared": shared,
                                                                    "t": now})
            c.execute(sa.text("INSERT INTO problems (id, batch_id, external_id, question, question_digest, "
                              "status, block_id, created_at, updated_at) VALUES (:p, :b, 'q', 'q', :d, 'solved', "
                              ":blk, :t, :t)"), {"p": f"p{batch}", "b": batch, "d": "d" * 64, "blk": "b" * 64,
                                                 "t": now})
    engine.dispose()
    migrate.upgrade(url)
    engine = make_engine(url)
    with engine.connect() as c:
        rows = c.execute(sa.text("SELECT owner_key, team_id, shared, verified_by_team_id FROM block_owners "
                                 "ORDER BY owner_key")).all()
    engine.dispose()
    assert [(r[0], r[1], bool(r[2]), r[3]) for r in rows] == [("1", 1, False, 1), ("2", 2, True, 2)]
