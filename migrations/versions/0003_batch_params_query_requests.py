"""Batch solving parameters, and asynchronous query requests.

- `batches.params` (JSON, nullable): how the batch is solved (samples, temperature, max_tokens, model), read by the
  solve task so that task messages carry only ids.
- `query_requests`: a question submitted for answering through the graft queue: its team, the question, optional
  expected answer/verifier, status (pending|done|failed), the `queries` row that answered it, and an error.

Both are additive (ADD COLUMN, CREATE TABLE): no table the audit views read is rebuilt.

Revision ID: 0003_batch_params_query_requests
Revises: 0002_audit_views
Create Date: 2026-11-30 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.db import UTCDateTime

revision: str = "0003_batch_params_query_requests"
down_revision: str | None = "0002_audit_views"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("batches", sa.Column("params", sa.JSON(none_as_null=True), nullable=True))
    op.create_table(
        "query_requests",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id", name="fk_query_requests_team_id_teams"),
                  nullable=True),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("expected", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("query_id", sa.String(32), sa.ForeignKey("queries.id", name="fk_query_requests_query_id_queries"),
                  nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint("status IN ('pending', 'done', 'failed')", name="ck_query_requests_status"),
        sa.PrimaryKeyConstraint("id", name="pk_query_requests"),
    )
    op.create_index("ix_query_requests_team_id", "query_requests", ["team_id"])


def downgrade() -> None:
    op.drop_index("ix_query_requests_team_id", table_name="query_requests")
    op.drop_table("query_requests")
    op.drop_column("batches", "params")  # native DROP COLUMN (SQLite >= 3.35): the views over batches stay valid
