"""The worker registry of a mixed fleet: each worker records at start the fingerprint it computed, its model and
the queues it consumes (graft and attest queues are per fingerprint), so a dispatcher can send work only to
workers that can do it. Liveness is the broker's consumer count on those queues, not this table.

Revision ID: 0010_workers
Revises: 0009_retention
Create Date: 2026-12-01 17:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.db import UTCDateTime

revision: str = "0010_workers"
down_revision: str | None = "0009_retention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("model", sa.String(1024), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("queues", sa.JSON, nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_workers")),
    )
    op.create_index(op.f("ix_workers_fingerprint"), "workers", ["fingerprint"])


def downgrade() -> None:
    op.drop_index(op.f("ix_workers_fingerprint"), table_name="workers")
    op.drop_table("workers")
