"""The prompt cache: blocks of kind `prefix` (a prompt's tokens up to a chunk boundary, evictable under the
retention budget) and `prefixes`, the chain hash of each stored prefix (over the fingerprint, the numerics profile
and every chunk before it) naming its block. The blocks kind CHECK is rebuilt (batch mode: SQLite recreates the
table, with the views that read it dropped and re-created from their own stored SQL around it).

Revision ID: 0011_prefix_blocks
Revises: 0010_workers
Create Date: 2026-12-01 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.db import UTCDateTime

revision: str = "0011_prefix_blocks"
down_revision: str | None = "0010_workers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_KINDS = ("solution", "document", "skill", "probe")
KINDS = ("solution", "document", "skill", "probe", "prefix")
NAME = "ck_blocks_ck_blocks_kind"  # 0001 named it ck_blocks_kind, and the naming convention prefixed it


def _rebuild(kinds: tuple[str, ...]) -> None:
    bind = op.get_bind()
    views: list[tuple[str, str]] = []
    if bind.dialect.name == "sqlite":
        views = [(name, sql) for name, sql in bind.execute(sa.text(
            "SELECT name, sql FROM sqlite_master WHERE type = 'view' AND sql LIKE '%blocks%'"))]
        for name, _ in views:
            op.execute(f"DROP VIEW {name}")
    with op.batch_alter_table("blocks") as batch:
        batch.drop_constraint(op.f(NAME), type_="check")
        batch.create_check_constraint(op.f(NAME), f"kind IN ({', '.join(repr(k) for k in kinds)})")
    for _, sql in views:
        op.execute(sql)


def upgrade() -> None:
    _rebuild(KINDS)
    op.create_table(
        "prefixes",
        sa.Column("chain_hash", sa.String(64), nullable=False),
        sa.Column("block_id", sa.String(64), sa.ForeignKey("blocks.id", name=op.f("fk_prefixes_block_id_blocks")),
                  nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("profile_id", sa.String(32), nullable=False),
        sa.Column("n_tokens", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("chain_hash", name=op.f("pk_prefixes")),
    )
    op.create_index(op.f("ix_prefixes_block_id"), "prefixes", ["block_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_prefixes_block_id"), table_name="prefixes")
    op.drop_table("prefixes")
    op.execute("DELETE FROM evictions WHERE block_id IN (SELECT id FROM blocks WHERE kind = 'prefix')")
    op.execute("DELETE FROM block_owners WHERE block_id IN (SELECT id FROM blocks WHERE kind = 'prefix')")
    op.execute("DELETE FROM attestations WHERE block_id IN (SELECT id FROM blocks WHERE kind = 'prefix')")
    op.execute("DELETE FROM blocks WHERE kind = 'prefix'")  # the older schema has no such kind
    _rebuild(OLD_KINDS)
