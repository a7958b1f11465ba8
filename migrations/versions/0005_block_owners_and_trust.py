"""Per-team block ownership, trusted teams, whose verification an answer rests on, quarantined blocks.

- `block_owners`: one row per (block, owning team) with that deposit's `shared` flag and the team whose answer key
  verified it (`verified_by_team_id`, solution blocks). A deduplicated block is owned by every team that deposited
  it, so visibility is per team: a team sees a block it deposited or one deposited shared. `owner_key` is the team
  id as text, or `deployment` for blocks an operator deposited with no team (a portable unique key: NULLs are not
  equal in a unique constraint). Back-filled from `blocks.team_id/shared` and, for solution blocks, from the
  problems that produced them.
- `teams.trusted` (an operator marks a team whose shared verified blocks every team grafts by default) and
  `teams.graft_from` (a team's own choice of teams whose shared blocks it grafts; NULL: the default).
- `queries.verified_by`: the team whose key verified the block an answer rests on.
- `blocks.quarantined_at`: set by `kvgraft blocks repair` when a corrupted block could not be re-derived; readers
  treat a quarantined block as a miss.

Revision ID: 0005_block_owners_and_trust
Revises: 0004_deliveries_and_batch_source
Create Date: 2026-12-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.db import UTCDateTime

revision: str = "0005_block_owners_and_trust"
down_revision: str | None = "0004_deliveries_and_batch_source"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "block_owners",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("block_id", sa.String(64), sa.ForeignKey("blocks.id", name="fk_block_owners_block_id_blocks"),
                  nullable=False),
        sa.Column("owner_key", sa.String(32), nullable=False),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id", name="fk_block_owners_team_id_teams"),
                  nullable=True),
        sa.Column("shared", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("verified_by_team_id", sa.Integer,
                  sa.ForeignKey("teams.id", name="fk_block_owners_verified_by_team_id_teams"), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_block_owners"),
        sa.UniqueConstraint("block_id", "owner_key", name="uq_block_owners_block_id_owner_key"),
    )
    op.create_index("ix_block_owners_team_id", "block_owners", ["team_id"])
    op.add_column("teams", sa.Column("trusted", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("teams", sa.Column("graft_from", sa.JSON(none_as_null=True), nullable=True))
    op.add_column("queries", sa.Column("verified_by", sa.String(200), nullable=True))
    op.add_column("blocks", sa.Column("quarantined_at", UTCDateTime(), nullable=True))
    # the first depositor of each block (its row's team), verified by that team when one of its problems made it
    op.execute("""
        INSERT INTO block_owners (block_id, owner_key, team_id, shared, verified_by_team_id, created_at)
        SELECT b.id, COALESCE(CAST(b.team_id AS VARCHAR(32)), 'deployment'), b.team_id, b.shared,
               (SELECT MIN(ba.team_id) FROM problems p JOIN batches ba ON ba.id = p.batch_id
                 WHERE p.block_id = b.id AND ba.team_id = b.team_id),
               b.created_at
        FROM blocks b
    """)
    # every other team whose problems produced the same (deduplicated) block: one row per (block, team), shared
    # when any of its batches was
    op.execute("""
        INSERT INTO block_owners (block_id, owner_key, team_id, shared, verified_by_team_id, created_at)
        SELECT p.block_id, CAST(ba.team_id AS VARCHAR(32)), ba.team_id,
               MAX(CASE WHEN ba.shared THEN 1 ELSE 0 END) = 1, ba.team_id, MIN(ba.created_at)
        FROM problems p JOIN batches ba ON ba.id = p.batch_id
        WHERE p.block_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM block_owners o WHERE o.block_id = p.block_id
               AND o.owner_key = CAST(ba.team_id AS VARCHAR(32)))
        GROUP BY p.block_id, ba.team_id
    """)


def downgrade() -> None:
    op.drop_column("blocks", "quarantined_at")
    op.drop_column("queries", "verified_by")
    op.drop_column("teams", "graft_from")
    op.drop_column("teams", "trusted")
    op.drop_index("ix_block_owners_team_id", table_name="block_owners")
    op.drop_table("block_owners")
