"""What an attestation measured: `graft` (the gate over a block, or over a probe: `kvgraft gate`), or
`composition` (the serving process's check that a restored prompt prefix followed by the rest of the prompt is
byte-equal to a fresh prefill, and at which boundary granule). Probe lookups that stand in for a block's own gate
read only `graft` rows. Existing rows are all graft rows.

Revision ID: 0012_attestation_kind
Revises: 0011_prefix_blocks
Create Date: 2026-12-01 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_attestation_kind"
down_revision: str | None = "0011_prefix_blocks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("attestations", sa.Column("kind", sa.String(16), nullable=False, server_default="graft"))


def downgrade() -> None:
    bind = op.get_bind()
    views: list[tuple[str, str]] = []
    if bind.dialect.name == "sqlite":  # batch mode recreates the table: the views that read it go around it
        views = [(name, sql) for name, sql in bind.execute(sa.text(
            "SELECT name, sql FROM sqlite_master WHERE type = 'view' AND sql LIKE '%attestations%'"))]
        for name, _ in views:
            op.execute(f"DROP VIEW {name}")
    with op.batch_alter_table("attestations") as batch:
        batch.drop_column("kind")
    for _, sql in views:
        op.execute(sql)
