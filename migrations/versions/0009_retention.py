"""Retention under a budget: per-block use accounting (`grafts`, `last_used_at`), `pinned` and `evicted_at` on
blocks, a byte quota per team (`teams.quota_bytes`, none: unlimited), and the `evictions` log (which block, how
many bytes, why, from which store).

Revision ID: 0009_retention
Revises: 0008_route_index
Create Date: 2026-12-01 16:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.db import UTCDateTime

revision: str = "0009_retention"
down_revision: str | None = "0008_route_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # native ADD COLUMN on both dialects: no table the audit views read is rebuilt
    op.add_column("blocks", sa.Column("grafts", sa.Integer, server_default="0", nullable=False))
    op.add_column("blocks", sa.Column("last_used_at", UTCDateTime(), nullable=True))
    op.add_column("blocks", sa.Column("pinned", sa.Boolean, server_default=sa.false(), nullable=False))
    op.add_column("blocks", sa.Column("evicted_at", UTCDateTime(), nullable=True))
    op.add_column("teams", sa.Column("quota_bytes", sa.BigInteger, nullable=True))
    op.create_table(
        "evictions",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("block_id", sa.String(64), sa.ForeignKey("blocks.id", name=op.f("fk_evictions_block_id_blocks")),
                  nullable=False),
        sa.Column("bytes", sa.BigInteger, nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("store_url", sa.String(1024), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evictions")),
    )
    op.create_index(op.f("ix_evictions_block_id"), "evictions", ["block_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_evictions_block_id"), table_name="evictions")
    op.drop_table("evictions")
    op.drop_column("teams", "quota_bytes")  # native DROP COLUMN (SQLite >= 3.35): the views stay valid
    for column in ("evicted_at", "pinned", "last_used_at", "grafts"):
        op.drop_column("blocks", column)
