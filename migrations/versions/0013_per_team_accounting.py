"""Accounting per team, so that nothing a team sees depends on what another team holds:

- `block_owners.last_used_at`, `grafts`, `source` and `bytes`: each owner's own use of a (possibly deduplicated)
  block, its own deposit's provenance and size (a header names its depositor, so the same content stored by
  another team first may differ by a few bytes). Quotas and the store budget count these bytes and evict per
  owner, least recently used by that owner; backfilled from the `queries` each team answered with the block, and
  the first depositor's `source`; `bytes` null: the block's.
- `evictions.owner_key`: whose ownership an eviction dropped (null: a block no team owned).
- `attestations.requested_by`: the team (owner key) whose deposit or question caused the measurement (null: an
  operator's `kvgraft attest` or `gate`, or a serving process's own check). A team's answers and lists count only
  its own, its sharers' and operators' measurements made since it holds the block; earlier rows stay null.
- `route_terms` keyed by (fingerprint, team_key, shared, term): document frequencies per partition of the routing
  index (a team's own problems, and its shared ones), summed at query time over what the asking team may graft;
  rebuilt from `route_docs`.

Revision ID: 0013_per_team_accounting
Revises: 0012_attestation_kind
Create Date: 2026-12-02 09:00:00
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.db import UTCDateTime
from store.route_index import DOCS_TERM

revision: str = "0013_per_team_accounting"
down_revision: str | None = "0012_attestation_kind"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SAME_TEAM = "(q.team_id = block_owners.team_id OR (q.team_id IS NULL AND block_owners.team_id IS NULL))"


def _route_terms(key_columns: list[sa.Column]) -> None:  # type: ignore[type-arg]
    names = [c.name for c in key_columns]
    op.create_table("route_terms", *key_columns, sa.Column("docs", sa.Integer, nullable=False),
                    sa.PrimaryKeyConstraint(*names, name=op.f("pk_route_terms")))


def _term_rows(bind: sa.Connection, *, per_team: bool) -> list[dict[str, object]]:
    counts: Counter[tuple[object, ...]] = Counter()
    for fingerprint, team_id, shared, terms in bind.execute(sa.text(
            "SELECT fingerprint, team_id, shared, terms FROM route_docs")):
        scope = ("deployment" if team_id is None else str(team_id), bool(shared)) if per_team else ()
        counts.update((fingerprint, *scope, t) for t in set(terms.split()) | {DOCS_TERM})
    if per_team:
        return [{"f": f, "k": k, "s": s, "t": t, "d": d} for (f, k, s, t), d in sorted(counts.items())]
    return [{"f": f, "t": t, "d": d} for (f, t), d in sorted(counts.items())]


def upgrade() -> None:
    bind = op.get_bind()
    op.add_column("block_owners", sa.Column("last_used_at", UTCDateTime(), nullable=True))
    op.add_column("block_owners", sa.Column("grafts", sa.Integer, server_default="0", nullable=False))
    op.add_column("block_owners", sa.Column("source", sa.JSON, nullable=True))
    op.add_column("block_owners", sa.Column("bytes", sa.BigInteger, nullable=True))
    op.add_column("evictions", sa.Column("owner_key", sa.String(32), nullable=True))
    op.add_column("attestations", sa.Column("requested_by", sa.String(32), nullable=True))
    op.execute(f"UPDATE block_owners SET "
               f"grafts = (SELECT count(*) FROM queries q WHERE q.block_id = block_owners.block_id AND {SAME_TEAM}), "
               f"last_used_at = (SELECT max(q.created_at) FROM queries q "
               f"WHERE q.block_id = block_owners.block_id AND {SAME_TEAM})")
    op.execute("UPDATE block_owners SET source = (SELECT b.source FROM blocks b WHERE b.id = block_owners.block_id) "
               "WHERE block_owners.owner_key = (SELECT CASE WHEN b.team_id IS NULL THEN 'deployment' "
               "ELSE CAST(b.team_id AS VARCHAR(32)) END FROM blocks b WHERE b.id = block_owners.block_id)")
    rows = _term_rows(bind, per_team=True)
    op.drop_table("route_terms")
    _route_terms([sa.Column("fingerprint", sa.String(64), nullable=False),
                  sa.Column("team_key", sa.String(32), nullable=False),
                  sa.Column("shared", sa.Boolean, nullable=False),
                  sa.Column("term", sa.String(64), nullable=False)])
    if rows:
        bind.execute(sa.text("INSERT INTO route_terms (fingerprint, team_key, shared, term, docs) "
                             "VALUES (:f, :k, :s, :t, :d)"), rows)


def downgrade() -> None:
    bind = op.get_bind()
    rows = _term_rows(bind, per_team=False)
    op.drop_table("route_terms")
    _route_terms([sa.Column("fingerprint", sa.String(64), nullable=False),
                  sa.Column("term", sa.String(64), nullable=False)])
    if rows:
        bind.execute(sa.text("INSERT INTO route_terms (fingerprint, term, docs) VALUES (:f, :t, :d)"), rows)
    op.drop_column("evictions", "owner_key")  # native DROP COLUMN (SQLite >= 3.35): the views stay valid
    op.drop_column("attestations", "requested_by")
    for column in ("bytes", "source", "grafts", "last_used_at"):
        op.drop_column("block_owners", column)
