"""Alembic migrations of the kvgraft provenance database; the only place the schema is created.

Run them with `kvgraft db upgrade` or `store.migrate.upgrade(url)`; `store.migrate.alembic_config` points Alembic's
script_location at this package, so no alembic.ini is needed.
"""
