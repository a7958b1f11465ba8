"""The provenance database on a real PostgreSQL server (a fresh database per test): migrations, model agreement,
the schema-behind refusal, concurrent idempotent inserts, hashed tokens, audit views and the auditor role."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, ProgrammingError
from sqlalchemy.orm import sessionmaker

from store import migrate
from store.db import make_engine, session_factory
from store.errors import SchemaAheadError, SchemaBehindError
from tests.unit.test_database_sqlite import (
    AUDIT_VIEWS,
    FIRST_REVISION,
    HEAD_TABLES,
    TABLES,
    schema_objects,
    seed_provenance,
)

pytestmark = pytest.mark.integration

AUDITOR = "kvgraft_auditor"


@pytest.fixture
def migrated_pg(pg_url: str) -> str:
    migrate.upgrade(pg_url)
    return pg_url


@pytest.fixture
def sessions(migrated_pg: str) -> Iterator[sessionmaker]:
    engine = make_engine(migrated_pg)
    yield session_factory(engine)
    engine.dispose()


def auditor_schema_grants(url: str) -> int:
    """How many privileges on schemas of this database are granted to the auditor role explicitly."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(sa.text(
                "SELECT count(*) FROM pg_namespace n, aclexplode(n.nspacl) a "
                "JOIN pg_roles r ON r.oid = a.grantee WHERE r.rolname = :role"), {"role": AUDITOR}).scalar_one()
    finally:
        engine.dispose()


def role_exists(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(sa.text("SELECT count(*) FROM pg_roles WHERE rolname = :role"),
                                      {"role": AUDITOR}).scalar_one() == 1
    finally:
        engine.dispose()


def as_auditor(connection: Connection, statement: str) -> list[sa.Row]:
    """Run `statement` under SET ROLE kvgraft_auditor in its own transaction, then RESET ROLE (or roll back)."""
    transaction = connection.begin()
    try:
        connection.exec_driver_sql(f"SET ROLE {AUDITOR}")
        rows = connection.exec_driver_sql(statement).all()
        connection.exec_driver_sql("RESET ROLE")
        return rows
    finally:
        transaction.rollback()


def test_migrations_upgrade_downgrade_upgrade(pg_url: str) -> None:
    assert migrate.upgrade(pg_url) == migrate.head_revision()
    assert schema_objects(pg_url) == (HEAD_TABLES, AUDIT_VIEWS)
    assert auditor_schema_grants(pg_url) > 0
    assert migrate.downgrade(pg_url, FIRST_REVISION) == FIRST_REVISION
    assert schema_objects(pg_url) == (TABLES, set())
    assert auditor_schema_grants(pg_url) == 0 and role_exists(pg_url)  # cluster-wide role kept, grants revoked
    assert migrate.downgrade(pg_url, "base") is None
    assert schema_objects(pg_url) == (set(), set())
    migrate.upgrade(pg_url)
    assert schema_objects(pg_url) == (HEAD_TABLES, AUDIT_VIEWS)


def test_ensure_schema_refuses_a_database_behind(pg_url: str) -> None:
    with pytest.raises(SchemaBehindError, match="kvgraft db upgrade"):
        migrate.ensure_schema(pg_url)  # empty database
    assert schema_objects(pg_url) == (set(), set())  # never migrated implicitly
    migrate.upgrade(pg_url, FIRST_REVISION)
    with pytest.raises(SchemaBehindError, match=FIRST_REVISION):
        migrate.ensure_schema(pg_url)
    migrate.upgrade(pg_url)
    migrate.ensure_schema(pg_url)


def test_ensure_schema_refuses_a_newer_database(migrated_pg: str) -> None:
    engine = make_engine(migrated_pg)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '9999_future'"))
    engine.dispose()
    with pytest.raises(SchemaAheadError):
        migrate.ensure_schema(migrated_pg)


def test_plain_postgresql_url_is_accepted(migrated_pg: str) -> None:
    plain = migrated_pg.replace("postgresql+psycopg://", "postgresql://")
    engine = make_engine(plain)
    assert engine.dialect.driver == "psycopg"
    assert migrate.current_revision(engine) == migrate.head_revision()
    engine.dispose()


def test_auditor_role_reads_views_only(sessions: sessionmaker, migrated_pg: str) -> None:
    with sessions() as session:
        seed_provenance(session)
        session.commit()
    engine = make_engine(migrated_pg)
    try:
        with engine.connect() as connection:
            for view in sorted(AUDIT_VIEWS):
                assert as_auditor(connection, f"SELECT * FROM {view}")
            for table in sorted(HEAD_TABLES):
                with pytest.raises(ProgrammingError, match="permission denied"):
                    as_auditor(connection, f"SELECT * FROM {table}")
            with pytest.raises(ProgrammingError, match="permission denied"):
                as_auditor(connection, "INSERT INTO teams (name, created_at) VALUES ('x', now()) RETURNING id")
            with pytest.raises(ProgrammingError, match="permission denied"):
                as_auditor(connection, "DELETE FROM blocks RETURNING id")
            with pytest.raises(DBAPIError):  # the views are neither writable nor granted beyond SELECT
                as_auditor(connection, "DELETE FROM audit_queries RETURNING query_id")
            assert connection.exec_driver_sql("SELECT current_user").scalar_one() != AUDITOR
    finally:
        engine.dispose()
