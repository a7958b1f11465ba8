"""Deliveries as evidence: one row per delivery of a solve or answer task (worker, broker message, start, the
worker's heartbeat, deadline, end or loss), so that a delivery counts as lost only when its worker stopped marking
it alive or the broker redelivered its message, never by subtracting ended from started deliveries (a database blip
after a start, or concurrent deliveries of one row, made that count wrong).

Revision ID: 0016_task_deliveries
Revises: 0015_prefix_chunks
Create Date: 2026-12-04 17:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.db import UTCDateTime

revision: str = "0016_task_deliveries"
down_revision: str | None = "0015_prefix_chunks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "task_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("row_id", sa.String(32), nullable=False),
        sa.Column("worker", sa.String(300), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("heartbeat_at", UTCDateTime(), nullable=False),
        sa.Column("deadline_at", UTCDateTime(), nullable=True),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.Column("lost_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_deliveries")),
    )
    op.create_index("ix_task_deliveries_kind_row_id", "task_deliveries", ["kind", "row_id"])


def downgrade() -> None:
    op.drop_index("ix_task_deliveries_kind_row_id", table_name="task_deliveries")
    op.drop_table("task_deliveries")
