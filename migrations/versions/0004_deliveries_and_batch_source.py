"""Deliveries counted by the project, and the source digest of a batch.

- `problems.deliveries`, `problems.deliveries_ended`, and the same on `query_requests`: a task body increments
  `deliveries` when it starts working on the row and `deliveries_ended` when it returns or raises. A delivery that
  started and never ended lost its worker (SIGILL, SIGSEGV, an OOM kill, SIGKILL); classic RabbitMQ queues do not
  count redeliveries, so the project does, and after 3 lost deliveries the row ends `failed` with reason
  `worker_lost` instead of wedging its batch.
- `batches.source_digest` (nullable, indexed): SHA-256 over what an embedded `kvgraft run` was given (the file's
  problems, the team and the solving parameters), so that running the same command again continues that batch.

Additive only (ADD COLUMN with server defaults): no table the audit views read is rebuilt.

Revision ID: 0004_deliveries_and_batch_source
Revises: 0003_batch_params_query_requests
Create Date: 2026-12-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_deliveries_and_batch_source"
down_revision: str | None = "0003_batch_params_query_requests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTED = ("problems", "query_requests")


def upgrade() -> None:
    for table in COUNTED:
        op.add_column(table, sa.Column("deliveries", sa.Integer, nullable=False, server_default="0"))
        op.add_column(table, sa.Column("deliveries_ended", sa.Integer, nullable=False, server_default="0"))
    op.add_column("batches", sa.Column("source_digest", sa.String(64), nullable=True))
    op.create_index("ix_batches_source_digest", "batches", ["source_digest"])


def downgrade() -> None:
    op.drop_index("ix_batches_source_digest", table_name="batches")
    op.drop_column("batches", "source_digest")
    for table in COUNTED:
        op.drop_column(table, "deliveries_ended")
        op.drop_column(table, "deliveries")
