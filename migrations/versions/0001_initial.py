"""Initial schema: teams, API tokens, batches, problems, generations, blocks, attestations, queries, copies.

Constraint names follow `store.db.NAMING_CONVENTION` (pk_*, uq_*, ix_*, fk_*, ck_*), spelled out here so that the
revision does not change if the models do.

Revision ID: 0001_initial
Revises:
Create Date: 2025-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TOKEN_ROLES = ("submitter", "operator", "auditor")
BATCH_STATUSES = ("queued", "running", "done", "failed")
PROBLEM_STATUSES = ("pending", "solved", "failed", "rejected")
VERDICTS = ("verified", "wrong", "error", "timeout", "no_program", "reference")
BLOCK_KINDS = ("solution", "document", "skill", "probe")
ATTESTATION_STATUSES = ("attested", "functional", "refused")
QUERY_ROUTES = ("recurrence", "direct", "transfer", "context", "abstain")

# (table, column) pairs that carry a plain (non-unique) index named ix_<table>_<column>.
INDEXES = (
    ("api_tokens", "team_id"),
    ("batches", "team_id"),
    ("blocks", "fingerprint"),
    ("blocks", "team_id"),
    ("problems", "question_digest"),
    ("problems", "block_id"),
    ("attestations", "block_id"),
    ("attestations", "fingerprint"),
    ("queries", "team_id"),
    ("queries", "question_digest"),
    ("queries", "block_id"),
    ("copies", "block_id"),
)


def _check(table: str, column: str, values: tuple[str, ...]) -> sa.CheckConstraint:
    return sa.CheckConstraint(f"{column} IN ({', '.join(repr(v) for v in values)})", name=f"ck_{table}_{column}")


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], [f"{target}.id"], name=f"fk_{table}_{column}_{target}")


def _timestamp(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _sha(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.String(64), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_teams"),
        sa.UniqueConstraint("name", name="uq_teams_name"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        _sha("token_sha256"),
        sa.Column("label", sa.String(200), nullable=True),
        _timestamp("created_at"),
        _timestamp("revoked_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_tokens"),
        _fk("api_tokens", "team_id", "teams"),
        sa.UniqueConstraint("token_sha256", name="uq_api_tokens_token_sha256"),
        _check("api_tokens", "role", TOKEN_ROLES),
    )
    op.create_table(
        "batches",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("shared", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        _timestamp("created_at"),
        _timestamp("finished_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_batches"),
        _fk("batches", "team_id", "teams"),
        _check("batches", "status", BATCH_STATUSES),
    )
    op.create_table(
        "blocks",
        _sha("id"),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("n_tokens", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        _sha("payload_sha256"),
        sa.Column("object_key", sa.String(512), nullable=False),
        sa.Column("store_url", sa.String(1024), nullable=False),
        sa.Column("profile", sa.JSON(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column("source", sa.JSON(), nullable=True),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.Column("shared", sa.Boolean(), server_default=sa.false(), nullable=False),
        _sha("text_digest", nullable=True),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_blocks"),
        _fk("blocks", "team_id", "teams"),
        _check("blocks", "kind", BLOCK_KINDS),
    )
    op.create_table(
        "problems",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("batch_id", sa.String(32), nullable=False),
        sa.Column("external_id", sa.String(200), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        _sha("question_digest"),
        sa.Column("answer", sa.JSON(), nullable=True),
        sa.Column("solution", sa.Text(), nullable=True),
        sa.Column("verifier", sa.JSON(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("outcome", sa.JSON(), nullable=True),
        _sha("block_id", nullable=True),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_problems"),
        _fk("problems", "batch_id", "batches"),
        _fk("problems", "block_id", "blocks"),
        sa.UniqueConstraint("batch_id", "external_id", name="uq_problems_batch_id_external_id"),
        _check("problems", "status", PROBLEM_STATUSES),
    )
    op.create_table(
        "generations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("problem_id", sa.String(32), nullable=False),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        _sha("prompt_digest"),
        sa.Column("text", sa.Text(), nullable=False),
        _sha("text_digest"),
        sa.Column("program", sa.Text(), nullable=True),
        _sha("program_digest", nullable=True),
        sa.Column("sandbox_result", sa.JSON(), nullable=True),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_generations"),
        _fk("generations", "problem_id", "problems"),
        sa.UniqueConstraint("problem_id", "sample_index", name="uq_generations_problem_id_sample_index"),
        _check("generations", "verdict", VERDICTS),
    )
    op.create_table(
        "attestations",
        sa.Column("id", sa.Integer(), nullable=False),
        _sha("block_id", nullable=True),
        _sha("probe_digest", nullable=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("profile", sa.JSON(), nullable=False),
        sa.Column("profile_id", sa.String(64), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("floor_equal", sa.Boolean(), nullable=False),
        sa.Column("byte_exact", sa.Boolean(), nullable=False),
        sa.Column("kl_mean", sa.Double(), nullable=False),
        sa.Column("kl_max", sa.Double(), nullable=False),
        sa.Column("argmax_agree", sa.String(32), nullable=False),
        sa.Column("max_abs_diff", sa.Double(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("timings", sa.JSON(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_attestations"),
        _fk("attestations", "block_id", "blocks"),
        _check("attestations", "status", ATTESTATION_STATUSES),
    )
    op.create_table(
        "queries",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.Column("question", sa.Text(), nullable=False),
        _sha("question_digest"),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("route", sa.String(16), nullable=False),
        _sha("block_id", nullable=True),
        sa.Column("decode_tokens", sa.Integer(), nullable=True),
        sa.Column("verified", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("attested", sa.Boolean(), server_default=sa.false(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_queries"),
        _fk("queries", "team_id", "teams"),
        _check("queries", "route", QUERY_ROUTES),
    )
    op.create_table(
        "copies",
        sa.Column("id", sa.Integer(), nullable=False),
        _sha("block_id"),
        sa.Column("source_url", sa.String(1024), nullable=False),
        sa.Column("dest_url", sa.String(1024), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        _sha("sha256"),
        sa.Column("created", sa.Boolean(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_copies"),
    )
    for table, column in INDEXES:
        op.create_index(f"ix_{table}_{column}", table, [column])


def downgrade() -> None:
    for table, column in reversed(INDEXES):
        op.drop_index(f"ix_{table}_{column}", table_name=table)
    for table in ("copies", "queries", "attestations", "generations", "problems", "blocks", "batches",
                  "api_tokens", "teams"):
        op.drop_table(table)
