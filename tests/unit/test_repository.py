"""The repository suite, run on both databases the project supports: SQLite (unit) and a real PostgreSQL server
(integration, a fresh database per test). The same test bodies, parametrized by the `db_url` fixture; what only one
dialect has (SQLite pragmas and implicit migration, PostgreSQL's auditor role and the schema-behind refusal) stays in
test_database_sqlite.py and tests/integration/test_database.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.orm import sessionmaker

from store import migrate, repository
from store.db import AnswerRow, ApiTokenRow, ProblemRow, make_engine, session_factory, utcnow
from tests.unit.test_database_sqlite import (
    attestation_fields,
    block_fields,
    check_audit_views,
    check_owner_backfill,
    check_tokens,
    count_blocks,
    race_record_block,
    schema_differences,
    seed_provenance,
    sha,
)


@pytest.fixture(params=[pytest.param("sqlite", marks=pytest.mark.unit),
                        pytest.param("postgresql", marks=pytest.mark.integration)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'kvgraft.db'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def migrated(db_url: str) -> str:
    migrate.upgrade(db_url)
    return db_url


@pytest.fixture
def sessions(migrated: str) -> Iterator[sessionmaker]:
    engine = make_engine(migrated)
    yield session_factory(engine)
    engine.dispose()


def test_migrated_schema_matches_models(migrated: str) -> None:
    assert schema_differences(migrated) == []


def test_record_block_is_idempotent(sessions: sessionmaker) -> None:
    fields = block_fields("one")
    with sessions() as session:
        row, created = repository.record_block(session, **fields)
        again, created_again = repository.record_block(session, **{**fields, "object_key": "elsewhere"})
        session.commit()
    assert created and not created_again and again.object_key == fields["object_key"]
    with sessions() as session:
        _, created_later = repository.record_block(session, **fields)
        stored = repository.get_block(session, block_id=fields["block_id"])
    assert not created_later and stored is not None
    assert stored.profile == {"n_ctx": 512} and stored.source["file"] == "x.jsonl"
    assert stored.created_at.tzinfo is not None and stored.created_at.utcoffset() == timedelta(0)
    assert count_blocks(sessions, fields["block_id"]) == 1


def test_record_block_concurrent_sessions(sessions: sessionmaker) -> None:
    assert race_record_block(sessions) == [True, False]
    assert count_blocks(sessions, block_fields("raced")["block_id"]) == 1


def test_tokens_are_hashed_and_revocable(sessions: sessionmaker) -> None:
    with sessions() as session:
        check_tokens(session)
        session.commit()


def test_token_role_is_checked_by_the_database(sessions: sessionmaker) -> None:
    with sessions() as session:
        team = repository.get_or_create_team(session, name="t")
        session.add(ApiTokenRow(team_id=team.id, role="admin", token_sha256=sha("x")))
        with pytest.raises(IntegrityError):
            session.flush()


def test_foreign_keys_are_enforced(sessions: sessionmaker) -> None:
    with sessions() as session:
        session.add(ProblemRow(batch_id="missing", external_id="1", question="q", question_digest=sha("q")))
        with pytest.raises(IntegrityError):
            session.flush()


def test_naive_datetimes_are_refused(sessions: sessionmaker) -> None:
    with sessions() as session:
        session.add(AnswerRow(question="q", question_digest=sha("q"), route="direct", created_at=datetime(2025, 1, 1)))
        with pytest.raises(StatementError, match="naive datetime"):
            session.flush()


def test_get_or_create_team_and_list_blocks(sessions: sessionmaker) -> None:
    with sessions() as session:
        team = repository.get_or_create_team(session, name="alpha")
        assert repository.get_or_create_team(session, name="alpha").id == team.id
        for i in range(3):
            repository.record_block(session, **block_fields(f"a{i}", fingerprint="a" * 32, team_id=team.id))
        repository.record_block(session, **block_fields("b", fingerprint="b" * 32, kind="skill"))
        session.commit()
        page, total = repository.list_blocks(session, fingerprint="a" * 32, limit=2)
        assert total == 3 and len(page) == 2
        rest, _ = repository.list_blocks(session, fingerprint="a" * 32, limit=2, offset=2)
        assert len(rest) == 1 and {b.id for b in page} | {rest[0].id} == {sha(f"block:a{i}") for i in range(3)}
        assert repository.list_blocks(session, kind="skill")[1] == 1
        assert repository.list_blocks(session, team_id=team.id)[1] == 3
        assert repository.list_blocks(session)[1] == 4


def test_attestations_and_copies(sessions: sessionmaker) -> None:
    with sessions() as session:
        block, _ = repository.record_block(session, **block_fields("att"))
        t0 = utcnow()
        first = repository.record_attestation(session, **attestation_fields(
            fingerprint=block.fingerprint, block_id=block.id, status="refused", created_at=t0))
        latest = repository.record_attestation(session, **attestation_fields(
            fingerprint=block.fingerprint, block_id=block.id, created_at=t0 + timedelta(seconds=1)))
        probe = repository.record_attestation(session, **attestation_fields(fingerprint=block.fingerprint,
                                                                            block_id=None))
        found = repository.latest_attestation(session, block_id=block.id, fingerprint=block.fingerprint,
                                              profile_id="p" * 16)
        assert found is not None and found.id == latest.id
        assert repository.latest_attestation(session, block_id=None, fingerprint=block.fingerprint,
                                             profile_id="p" * 16).id == probe.id
        assert repository.latest_attestation(session, block_id=block.id, fingerprint=block.fingerprint,
                                             profile_id="other") is None
        listed, total = repository.list_attestations(session, block_id=block.id)
        assert total == 2 and [a.id for a in listed] == [latest.id, first.id]
        assert repository.list_attestations(session, status="refused")[1] == 1
        copy = repository.record_copy(session, block_id=block.id, source_url="file:///a", dest_url="s3://b/p",
                                      bytes=4096, sha256=sha("payload"), created=True)
        assert copy.id is not None and copy.created_at.tzinfo is not None
        with pytest.raises(TypeError):
            repository.record_copy(session, block_id=block.id, nonsense=1)


def test_audit_views_join_provenance(sessions: sessionmaker) -> None:
    with sessions() as session:
        seeded = seed_provenance(session)
        session.commit()
    with sessions() as session:
        check_audit_views(session, seeded)


def test_migration_0005_backfills_owners_from_real_data(db_url: str) -> None:
    check_owner_backfill(db_url)
