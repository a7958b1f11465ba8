"""Answers keep why they were given: `queries.detail` (the route's words: the gate's verdict, a refusal's reason)
and `queries.binding` (the transfer route's report: which number of the question bound which parameter of the
routed program, the renames, the alignment's kept share, every candidate refused and why). Earlier rows stay null.

Revision ID: 0014_answer_binding
Revises: 0013_per_team_accounting
Create Date: 2026-12-02 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_answer_binding"
down_revision: str | None = "0013_per_team_accounting"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # ADD / DROP COLUMN natively (SQLite >= 3.35): `queries` is not rebuilt, so the audit views stay valid
    op.add_column("queries", sa.Column("detail", sa.Text(), nullable=True))
    op.add_column("queries", sa.Column("binding", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    op.drop_column("queries", "binding")
    op.drop_column("queries", "detail")
