"""Prompt-cache prefixes stored as chunks: a chain hash may name several blocks (the same prefix chunked from
different starts by prompts with different histories), so `prefixes` is keyed by (chain_hash, block_id) instead of
chain_hash alone. Earlier rows (whole prefixes from position 0) stay as they are and still read.

Revision ID: 0015_prefix_chunks
Revises: 0014_answer_binding
Create Date: 2026-12-03 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015_prefix_chunks"
down_revision: str | None = "0014_answer_binding"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("prefixes") as batch:
        batch.drop_constraint(op.f("pk_prefixes"), type_="primary")
        batch.create_primary_key(op.f("pk_prefixes"), ["chain_hash", "block_id"])


def downgrade() -> None:
    # keep one row per chain hash (the oldest), as the older key requires
    op.execute("DELETE FROM prefixes WHERE EXISTS (SELECT 1 FROM prefixes p WHERE p.chain_hash = prefixes.chain_hash "
               "AND (p.created_at < prefixes.created_at OR (p.created_at = prefixes.created_at "
               "AND p.block_id < prefixes.block_id)))")
    with op.batch_alter_table("prefixes") as batch:
        batch.drop_constraint(op.f("pk_prefixes"), type_="primary")
        batch.create_primary_key(op.f("pk_prefixes"), ["chain_hash"])
