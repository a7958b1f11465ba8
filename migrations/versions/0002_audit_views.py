"""Read-only audit views over the provenance tables, and (PostgreSQL) the NOLOGIN role `kvgraft_auditor`.

Views (documented column by column in docs/AUDIT-SQL.md), one row per underlying record:

- `audit_blocks`: each block with its team name, the first problem that produced it (id, external id, question
  digest), how many problems point at it, and the latest attestation of its fingerprint (any block or probe).
- `audit_generations`: each generation with its problem (external id, question digest, status), batch and team.
- `audit_attestations`: each attestation with its block's kind and team (null for probe attestations).
- `audit_queries`: each query with its team name and the kind/fingerprint of the block it used.

The SQL is portable (plain joins and correlated `LIMIT 1` subqueries) between PostgreSQL and SQLite. On PostgreSQL
the role `kvgraft_auditor` is created if it does not exist and granted USAGE on the current schema and SELECT on
exactly these views, never on a table. Roles are cluster-wide and may serve several databases, so the downgrade
revokes what this revision granted in this database and drops the views, but never drops the role.

Note for later revisions: SQLite batch migrations that rebuild a table referenced here must drop and re-create
the views around the rebuild.

Revision ID: 0002_audit_views
Revises: 0001_initial
Create Date: 2025-01-01 00:00:01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002_audit_views"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUDITOR_ROLE = "kvgraft_auditor"

VIEWS: dict[str, str] = {
    "audit_blocks": """
SELECT b.id AS block_id, b.kind, b.fingerprint, b.n_tokens, b.bytes, b.payload_sha256, b.object_key, b.store_url,
       b.profile, b.meta, b.source, b.text_digest, b.shared, b.created_at,
       b.team_id, t.name AS team_name,
       p.id AS problem_id, p.external_id AS problem_external_id, p.question_digest AS problem_question_digest,
       (SELECT COUNT(*) FROM problems pc WHERE pc.block_id = b.id) AS problem_count,
       a.id AS attestation_id, a.block_id AS attestation_block_id, a.status AS attestation_status,
       a.profile_id AS attestation_profile_id, a.host AS attestation_host, a.byte_exact AS attestation_byte_exact,
       a.floor_equal AS attestation_floor_equal, a.created_at AS attested_at
FROM blocks b
LEFT JOIN teams t ON t.id = b.team_id
LEFT JOIN problems p ON p.id = (
    SELECT p1.id FROM problems p1 WHERE p1.block_id = b.id ORDER BY p1.created_at, p1.id LIMIT 1)
LEFT JOIN attestations a ON a.id = (
    SELECT a1.id FROM attestations a1 WHERE a1.fingerprint = b.fingerprint
    ORDER BY a1.created_at DESC, a1.id DESC LIMIT 1)
""",
    "audit_generations": """
SELECT g.id AS generation_id, g.problem_id, p.external_id AS problem_external_id,
       p.question_digest AS problem_question_digest, p.status AS problem_status, p.block_id AS problem_block_id,
       p.batch_id, ba.status AS batch_status, ba.shared AS batch_shared, ba.created_at AS batch_created_at,
       ba.team_id, t.name AS team_name,
       g.sample_index, g.prompt_digest, g.text, g.text_digest, g.program, g.program_digest, g.sandbox_result,
       g.verdict, g.answer, g.created_at
FROM generations g
JOIN problems p ON p.id = g.problem_id
JOIN batches ba ON ba.id = p.batch_id
JOIN teams t ON t.id = ba.team_id
""",
    "audit_attestations": """
SELECT a.id AS attestation_id, a.block_id, a.probe_digest, a.fingerprint, a.profile, a.profile_id, a.host,
       a.status, a.floor_equal, a.byte_exact, a.kl_mean, a.kl_max, a.argmax_agree, a.max_abs_diff, a.reason,
       a.timings, a.created_at,
       b.kind AS block_kind, b.team_id AS block_team_id, t.name AS block_team_name
FROM attestations a
LEFT JOIN blocks b ON b.id = a.block_id
LEFT JOIN teams t ON t.id = b.team_id
""",
    "audit_queries": """
SELECT q.id AS query_id, q.team_id, t.name AS team_name, q.question, q.question_digest, q.answer, q.route,
       q.block_id, b.kind AS block_kind, b.fingerprint AS block_fingerprint, q.decode_tokens, q.verified,
       q.attested, q.created_at
FROM queries q
LEFT JOIN teams t ON t.id = q.team_id
LEFT JOIN blocks b ON b.id = q.block_id
""",
}

_VIEW_LIST = ", ".join(VIEWS)

# Creating the role races with other databases of the same cluster being migrated at once: tolerate that.
_GRANT_POSTGRESQL = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{AUDITOR_ROLE}') THEN
        BEGIN
            CREATE ROLE {AUDITOR_ROLE} NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO {AUDITOR_ROLE}', current_schema());
    GRANT SELECT ON {_VIEW_LIST} TO {AUDITOR_ROLE};
END
$$
"""

_REVOKE_POSTGRESQL = f"""
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{AUDITOR_ROLE}') THEN
        REVOKE ALL ON {_VIEW_LIST} FROM {AUDITOR_ROLE};
        EXECUTE format('REVOKE USAGE ON SCHEMA %I FROM {AUDITOR_ROLE}', current_schema());
    END IF;
END
$$
"""


def _is_postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    for name, select in VIEWS.items():
        op.execute(f"CREATE VIEW {name} AS {select.strip()}")
    if _is_postgresql():
        op.execute(_GRANT_POSTGRESQL)


def downgrade() -> None:
    if _is_postgresql():
        op.execute(_REVOKE_POSTGRESQL)
    for name in reversed(VIEWS):
        op.execute(f"DROP VIEW IF EXISTS {name}")
