"""Alembic environment: migrates the connection in `config.attributes["connection"]` (what `store.migrate` passes),
or else the database at the `sqlalchemy.url` main option. SQLite runs in batch mode (table rebuilds for ALTERs)."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from store.db import Base, make_engine

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database: set config.attributes['connection'] or the sqlalchemy.url main option")
    return url


def run_migrations_offline() -> None:
    """Emit the SQL for the URL's dialect instead of running it (`alembic upgrade --sql`)."""
    url = _url()
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=url.startswith("sqlite"))
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_url(), poolclass=NullPool)
    try:
        with engine.connect() as connection:
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
