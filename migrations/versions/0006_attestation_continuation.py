"""What the grown graft check (engine/check.py) measures besides the query: `attestations.continuation_equal`
(greedy tokens decoded one at a time after the graft, logits SHA-equal at each step) and
`attestations.recapture_equal` (the restored state re-captured byte-equal to the block's payload). Nullable: older
attestations did not measure them.

Revision ID: 0006_attestation_continuation
Revises: 0005_block_owners_and_trust
Create Date: 2026-12-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_attestation_continuation"
down_revision: str | None = "0005_block_owners_and_trust"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("attestations", sa.Column("continuation_equal", sa.Boolean, nullable=True))
    op.add_column("attestations", sa.Column("recapture_equal", sa.Boolean, nullable=True))


def downgrade() -> None:
    op.drop_column("attestations", "recapture_equal")
    op.drop_column("attestations", "continuation_equal")
