"""A query may be answered by the `program` route: a verified parameterized program of the routed solution block
bound to the question's numbers (workers/flywheel/parameterize.py). The route CHECK is rebuilt (batch mode, so
SQLite recreates the table). `query_requests.options` keeps what the asker chose (samples, model), so a graft
worker answers with them.

Revision ID: 0007_program_route
Revises: 0006_attestation_continuation
Create Date: 2026-12-01 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_program_route"
down_revision: str | None = "0006_attestation_continuation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_ROUTES = ("recurrence", "direct", "transfer", "context", "abstain")
ROUTES = ("recurrence", "direct", "transfer", "program", "context", "abstain")
OLD_NAME = "ck_queries_ck_queries_route"  # 0001 named it ck_queries_route, and the naming convention prefixed it


def _in(values: tuple[str, ...]) -> str:
    return f"route IN ({', '.join(repr(v) for v in values)})"


def _rebuild(routes: tuple[str, ...]) -> None:
    """Replace the CHECK. SQLite recreates the table, which it refuses under views that read it: those views are
    dropped first and re-created from their own stored SQL afterwards."""
    bind = op.get_bind()
    views: list[tuple[str, str]] = []
    if bind.dialect.name == "sqlite":
        views = [(name, sql) for name, sql in bind.execute(sa.text(
            "SELECT name, sql FROM sqlite_master WHERE type = 'view' AND sql LIKE '%queries%'"))]
        for name, _ in views:
            op.execute(f"DROP VIEW {name}")
    with op.batch_alter_table("queries") as batch:
        batch.drop_constraint(op.f(OLD_NAME), type_="check")
        batch.create_check_constraint(op.f(OLD_NAME), _in(routes))
    for _, sql in views:
        op.execute(sql)


def upgrade() -> None:
    _rebuild(ROUTES)
    op.add_column("query_requests", sa.Column("options", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    op.drop_column("query_requests", "options")
    op.execute("UPDATE queries SET route = 'transfer' WHERE route = 'program'")  # the nearest older route
    _rebuild(OLD_ROUTES)
