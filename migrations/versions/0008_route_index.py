"""The routing index: `route_docs` (one row per solved problem with its solution block, who may graft it, and its
question's index terms), `route_terms` (document frequency per fingerprint and term), and the full-text index over
the terms: a generated tsvector column with a GIN index on PostgreSQL, an FTS5 table on SQLite. Problems solved
before this revision are indexed here.

Revision ID: 0008_route_index
Revises: 0007_program_route
Create Date: 2026-12-01 15:00:00
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from store.route_index import DOCS_TERM, NUMBER, index_terms

revision: str = "0008_route_index"
down_revision: str | None = "0007_program_route"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _backfill(bind: sa.Connection, sqlite: bool) -> None:
    rows = bind.execute(sa.text(
        "SELECT p.id, p.question, b.team_id, b.shared, k.id, k.fingerprint FROM problems p "
        "JOIN batches b ON b.id = p.batch_id JOIN blocks k ON k.id = p.block_id "
        "WHERE p.status = 'solved' AND k.kind = 'solution'")).all()
    counts: Counter[tuple[str, str]] = Counter()
    for problem_id, question, team_id, shared, block_id, fingerprint in rows:
        terms = index_terms(question)
        doc_id = bind.execute(sa.text(
            "INSERT INTO route_docs (problem_id, block_id, fingerprint, team_id, shared, terms) "
            "VALUES (:p, :b, :f, :t, :s, :terms) RETURNING id"),
            {"p": problem_id, "b": block_id, "f": fingerprint, "t": team_id, "s": bool(shared),
             "terms": " ".join(terms)}).scalar_one()
        if sqlite:
            bind.execute(sa.text("INSERT INTO route_fts (rowid, terms) VALUES (:id, :terms)"),
                         {"id": doc_id, "terms": " ".join(t for t in terms if t != NUMBER)})
        counts.update((fingerprint, t) for t in set(terms) | {DOCS_TERM})
    if counts:
        bind.execute(sa.text("INSERT INTO route_terms (fingerprint, term, docs) VALUES (:f, :t, :d)"),
                     [{"f": f, "t": t, "d": d} for (f, t), d in sorted(counts.items())])


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    op.create_table(
        "route_docs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("problem_id", sa.String(32),
                  sa.ForeignKey("problems.id", name=op.f("fk_route_docs_problem_id_problems")), nullable=False),
        sa.Column("block_id", sa.String(64), sa.ForeignKey("blocks.id", name=op.f("fk_route_docs_block_id_blocks")),
                  nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id", name=op.f("fk_route_docs_team_id_teams")),
                  nullable=True),
        sa.Column("shared", sa.Boolean, server_default=sa.false(), nullable=False),
        sa.Column("terms", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_route_docs")),
        sa.UniqueConstraint("problem_id", name=op.f("uq_route_docs_problem_id")),
    )
    op.create_index(op.f("ix_route_docs_block_id"), "route_docs", ["block_id"])
    op.create_table(
        "route_terms",
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("term", sa.String(64), nullable=False),
        sa.Column("docs", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("fingerprint", "term", name=op.f("pk_route_terms")),
    )
    if sqlite:
        op.execute("CREATE VIRTUAL TABLE route_fts USING fts5(terms, content='', tokenize='ascii')")
    else:
        op.execute("ALTER TABLE route_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
                   "(to_tsvector('simple', replace(terms, '<num>', ''))) STORED")
        op.execute("CREATE INDEX ix_route_docs_tsv ON route_docs USING gin (tsv)")
    _backfill(bind, sqlite)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE route_fts")
    op.drop_table("route_terms")
    op.drop_index(op.f("ix_route_docs_block_id"), table_name="route_docs")
    op.drop_table("route_docs")
