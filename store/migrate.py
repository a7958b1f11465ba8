"""Schema migrations from Python: Alembic configured from the packaged `migrations` directory (no alembic.ini).

SQLite deployments (the single-user default) are brought up to date by `ensure_schema` on their own; a PostgreSQL
deployment is upgraded only on purpose (`kvgraft db upgrade`), and every other entry point refuses to run against a
database whose schema revision is not this build's head.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import structlog
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from store.db import is_sqlite, make_engine, normalize_url, sqlite_path
from store.errors import SchemaAheadError, SchemaBehindError

log = structlog.get_logger(__name__)


def alembic_config(url_or_connection: str | Connection | None = None) -> Config:
    """An Alembic config over the packaged migrations, for a URL (main option) or an open connection (attribute)."""
    config = Config()
    config.set_main_option("script_location", str(files("migrations")))
    if isinstance(url_or_connection, Connection):
        config.attributes["connection"] = url_or_connection
    elif url_or_connection is not None:
        rendered = normalize_url(url_or_connection).render_as_string(hide_password=False)
        config.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return config


def head_revision() -> str:
    """The newest revision of this build's migrations."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError("the packaged migrations have no head revision")
    return head


def known_revisions() -> set[str]:
    """Every revision id this build's migrations know."""
    return {script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def current_revision(engine: Engine | Connection) -> str | None:
    """The revision the database is at, or None if it was never migrated (or was downgraded to base)."""
    if isinstance(engine, Connection):
        return MigrationContext.configure(engine).get_current_revision()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def _safe_url(url: str) -> str:
    return normalize_url(url).render_as_string(hide_password=True)


def _ensure_sqlite_directory(url: str) -> None:
    path = sqlite_path(url) if is_sqlite(url) else None
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)


def _migration_engine(url: str) -> Engine:
    """A short-lived engine for migrating (the SQLite file's directory is created first)."""
    _ensure_sqlite_directory(url)
    return make_engine(url, poolclass=NullPool)


def _run(url: str, action: str, revision: str) -> tuple[str | None, str | None]:
    engine = _migration_engine(url)
    try:
        with engine.connect() as connection:
            # SQLite batch migrations rebuild tables; foreign keys must be off while they do.
            if connection.dialect.name == "sqlite":
                connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            before = MigrationContext.configure(connection).get_current_revision()
            config = alembic_config(connection)
            if action == "upgrade":
                command.upgrade(config, revision)
            else:
                command.downgrade(config, revision)
            connection.commit()
            after = MigrationContext.configure(connection).get_current_revision()
        return before, after
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head") -> str | None:
    """Migrate the database at `url` up to `revision`; returns the revision it is at afterwards."""
    before, after = _run(url, "upgrade", revision)
    log.info("db.upgraded", url=_safe_url(url), from_revision=before, to_revision=after)
    return after


def downgrade(url: str, revision: str) -> str | None:
    """Migrate the database at `url` down to `revision` ("base" removes every table and view)."""
    before, after = _run(url, "downgrade", revision)
    log.info("db.downgraded", url=_safe_url(url), from_revision=before, to_revision=after)
    return after


def revision_at(url: str) -> str | None:
    """The revision the database at `url` is at (None: never migrated), read through a short-lived engine."""
    engine = make_engine(url, poolclass=NullPool)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def ensure_schema(url: str) -> None:
    """Make sure the database at `url` is at this build's head revision before the app uses it.

    SQLite: create the file's directory and migrate up by itself. PostgreSQL (and any other server): never migrate
    implicitly; raise SchemaBehindError if the database is behind (an empty database included), SchemaAheadError
    if it was migrated by a newer build.
    """
    head = head_revision()
    _ensure_sqlite_directory(url)
    current = revision_at(url)
    if current == head:
        return
    if current is not None and current not in known_revisions():
        raise SchemaAheadError(f"database schema revision {current!r} is unknown to this build (head {head!r}); "
                               "it was migrated by a newer kvgraft: upgrade kvgraft")
    if is_sqlite(url):
        upgrade(url)
        return
    log.warning("db.schema_behind", url=_safe_url(url), revision=current, head=head)
    raise SchemaBehindError(f"database schema is at revision {current or 'none (empty database)'}, this build needs "
                            f"{head}: run `kvgraft db upgrade`")
