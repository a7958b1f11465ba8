"""The provenance database: SQLAlchemy 2 models shared by PostgreSQL and SQLite, and engine/session factories.

The schema itself is created only by the Alembic migrations in `migrations/` (`kvgraft db upgrade`, or
`store.migrate.ensure_schema` on SQLite); these models must stay in agreement with them, which the database tests
check with alembic's `compare_metadata`. Ids that are UUIDs or SHA-256 digests are lowercase hex strings, JSON
columns use the portable `sa.JSON`, and every timestamp is timezone-aware UTC (stored as UTC on SQLite, which has
no time zones, and returned as aware datetimes on both dialects).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.pool import StaticPool

# Constraint names are fixed by convention so that migrations (and SQLite batch rebuilds) can address them.
NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

TOKEN_ROLES = ("submitter", "operator", "auditor")
BATCH_STATUSES = ("queued", "running", "done", "failed")
PROBLEM_STATUSES = ("pending", "solved", "failed", "rejected")
VERDICTS = ("verified", "wrong", "error", "timeout", "no_program", "reference")
BLOCK_KINDS = ("solution", "document", "skill", "probe", "prefix")
ATTESTATION_STATUSES = ("attested", "functional", "refused")
QUERY_ROUTES = ("recurrence", "direct", "transfer", "program", "context", "abstain")

SQLITE_BUSY_TIMEOUT_S = 15.0


def utcnow() -> datetime:
    """The current time as a timezone-aware UTC datetime (the only kind the database stores)."""
    return datetime.now(UTC)


def new_hex_id() -> str:
    """A fresh random id: 32 lowercase hex digits of a UUID4 (batches, problems, queries)."""
    return uuid.uuid4().hex


def one_of(column: str, values: tuple[str, ...]) -> str:
    """The SQL of a CHECK that `column` holds one of `values` (used by models and migrations alike)."""
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class UTCDateTime(sa.TypeDecorator[datetime]):
    """`DateTime(timezone=True)` that refuses naive datetimes, stores UTC and always returns aware UTC values."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: the database stores timezone-aware UTC only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def nul_safe(text: str) -> str:
    """`text` with NUL characters replaced by U+FFFD: PostgreSQL text cannot hold NUL, and model or program output
    may contain it. Callers that hash text apply this first, so digests cover exactly what is stored."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


class NulSafeText(sa.TypeDecorator[str]):
    """Text that may come from a model or a program: NUL is stored as U+FFFD (the same on SQLite and PostgreSQL)."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: sa.Dialect) -> str | None:
        return nul_safe(value) if isinstance(value, str) else value


class AnswerJSON(sa.TypeDecorator[Any]):
    """A JSON answer (number or string) stored exactly: an integer outside the 64-bit range is stored as its decimal
    string, because SQLite gives a JSON column NUMERIC affinity and would turn `777...7` (401 digits) into a float.
    Answers are compared as exact decimals (workers.verify.answer_match), so "12" and 12 are the same answer."""

    impl = sa.JSON(none_as_null=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            return str(value)
        return value


def _json() -> sa.JSON:
    """A JSON column type where Python None is SQL NULL (not the JSON literal `null`)."""
    return sa.JSON(none_as_null=True)


def _sha256() -> sa.String:
    return sa.String(64)


class Base(DeclarativeBase):
    """Declarative base of every kvgraft table; its metadata carries the constraint naming convention."""

    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)


class TeamRow(Base):
    """A tenant: owns API tokens, batches, blocks and queries."""

    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # an operator marks a team trusted: its shared verified blocks are grafted by every team that has not chosen
    trusted: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    # the team's own choice of team ids whose shared blocks it grafts (besides its own); None: the trusted teams
    graft_from: Mapped[Any | None] = mapped_column(_json())
    quota_bytes: Mapped[int | None] = mapped_column(sa.BigInteger)  # bytes of blocks it may own; None: no quota


class ApiTokenRow(Base):
    """An API credential of a team with one role; only the SHA-256 of the plaintext token is stored."""

    __tablename__ = "api_tokens"
    __table_args__ = (sa.CheckConstraint(one_of("role", TOKEN_ROLES), name="role"),)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    team_id: Mapped[int] = mapped_column(sa.ForeignKey("teams.id"), index=True)
    role: Mapped[str] = mapped_column(sa.String(16))
    token_sha256: Mapped[str] = mapped_column(_sha256(), unique=True)
    label: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class BatchRow(Base):
    """A submitted JSONL batch of problems; `shared` lets other teams reuse the blocks it produces."""

    __tablename__ = "batches"
    __table_args__ = (sa.CheckConstraint(one_of("status", BATCH_STATUSES), name="status"),)

    id: Mapped[str] = mapped_column(sa.String(32), primary_key=True, default=new_hex_id)
    team_id: Mapped[int] = mapped_column(sa.ForeignKey("teams.id"), index=True)
    shared: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    status: Mapped[str] = mapped_column(sa.String(16), default="queued")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    params: Mapped[Any | None] = mapped_column(_json())  # solving parameters (samples, temperature, model)
    # SHA-256 of what an embedded `kvgraft run` was given (problems, team, parameters): the same command continues it
    source_digest: Mapped[str | None] = mapped_column(sa.String(64), index=True)


class ProblemRow(Base):
    """One JSONL line of a batch: the question (and its normalized digest), reference data, outcome and block."""

    __tablename__ = "problems"
    __table_args__ = (
        sa.UniqueConstraint("batch_id", "external_id"),
        sa.CheckConstraint(one_of("status", PROBLEM_STATUSES), name="status"),
    )

    id: Mapped[str] = mapped_column(sa.String(32), primary_key=True, default=new_hex_id)
    batch_id: Mapped[str] = mapped_column(sa.ForeignKey("batches.id"))
    external_id: Mapped[str] = mapped_column(sa.String(200))
    question: Mapped[str] = mapped_column(sa.Text)
    question_digest: Mapped[str] = mapped_column(_sha256(), index=True)
    answer: Mapped[Any | None] = mapped_column(AnswerJSON())
    solution: Mapped[str | None] = mapped_column(sa.Text)
    verifier: Mapped[Any | None] = mapped_column(_json())
    status: Mapped[str] = mapped_column(sa.String(16), default="pending")
    outcome: Mapped[Any | None] = mapped_column(_json())
    block_id: Mapped[str | None] = mapped_column(sa.ForeignKey("blocks.id"), index=True)
    # Task deliveries that started / that returned or raised: the difference is deliveries that lost their worker.
    deliveries: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0")
    deliveries_ended: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class GenerationRow(Base):
    """One sampled solution attempt for a problem: digests of prompt/text/program, sandbox result and verdict."""

    __tablename__ = "generations"
    __table_args__ = (
        sa.UniqueConstraint("problem_id", "sample_index"),
        sa.CheckConstraint(one_of("verdict", VERDICTS), name="verdict"),
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    problem_id: Mapped[str] = mapped_column(sa.ForeignKey("problems.id"))
    sample_index: Mapped[int] = mapped_column(sa.Integer)
    prompt_digest: Mapped[str] = mapped_column(_sha256())
    text: Mapped[str] = mapped_column(NulSafeText())
    text_digest: Mapped[str] = mapped_column(_sha256())
    program: Mapped[str | None] = mapped_column(NulSafeText())
    program_digest: Mapped[str | None] = mapped_column(_sha256())
    sandbox_result: Mapped[Any | None] = mapped_column(_json())
    verdict: Mapped[str] = mapped_column(sa.String(16))
    answer: Mapped[str | None] = mapped_column(NulSafeText())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class BlockRow(Base):
    """The catalogue entry of a stored block: `id` is the block id, where the bytes live, and where they came from.

    `bytes` is the stored object's size, `source` the provenance (e.g. {"problem_id", "file", "offset"}), and
    `profile`/`meta` copy the block header's numerics profile and free metadata.
    """

    __tablename__ = "blocks"
    __table_args__ = (sa.CheckConstraint(one_of("kind", BLOCK_KINDS), name="kind"),)

    id: Mapped[str] = mapped_column(_sha256(), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(sa.String(64), index=True)
    kind: Mapped[str] = mapped_column(sa.String(16))
    n_tokens: Mapped[int] = mapped_column(sa.Integer)
    bytes: Mapped[int] = mapped_column(sa.BigInteger)
    payload_sha256: Mapped[str] = mapped_column(_sha256())
    object_key: Mapped[str] = mapped_column(sa.String(512))
    store_url: Mapped[str] = mapped_column(sa.String(1024))
    profile: Mapped[Any] = mapped_column(sa.JSON)
    meta: Mapped[Any] = mapped_column(sa.JSON)
    source: Mapped[Any | None] = mapped_column(_json())
    team_id: Mapped[int | None] = mapped_column(sa.ForeignKey("teams.id"), index=True)
    shared: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    text_digest: Mapped[str | None] = mapped_column(_sha256())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    quarantined_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # corrupt and not re-derivable: a miss
    # use accounting and retention (store/retention.py): answers grafted from it, when last, kept regardless of
    # the budget, evicted (its object deleted; the row stays for provenance, and a re-deposit restores it)
    grafts: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0")
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    pinned: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    evicted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class BlockOwnerRow(Base):
    """One team's deposit of a (possibly deduplicated) block: visibility is per owner row, never per first
    depositor. `owner_key` is the team id as text, or `deployment` for an operator's deposit with no team."""

    __tablename__ = "block_owners"
    __table_args__ = (sa.UniqueConstraint("block_id", "owner_key"),)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    block_id: Mapped[str] = mapped_column(sa.ForeignKey("blocks.id"))
    owner_key: Mapped[str] = mapped_column(sa.String(32))
    team_id: Mapped[int | None] = mapped_column(sa.ForeignKey("teams.id"), index=True)
    shared: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    verified_by_team_id: Mapped[int | None] = mapped_column(sa.ForeignKey("teams.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # this owner's own use of the block (answers and restores of this team), its own deposit's provenance and its
    # own deposit's size (a header names its depositor; null: the block's) (0013): quotas and the budget count
    # these bytes and evict per owner by this recency, and a team is shown only its own source and size
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    grafts: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0")
    source: Mapped[Any | None] = mapped_column(_json())
    bytes: Mapped[int | None] = mapped_column(sa.BigInteger)


def owner_key(team_id: int | None) -> str:
    return "deployment" if team_id is None else str(team_id)


class AttestationRow(Base):
    """One gate measurement of a block (or, with `block_id` null, of a probe) on a host and numerics profile;
    `kind` composition: the serving process's prompt-cache composition check (a probe, 0012)."""

    __tablename__ = "attestations"
    __table_args__ = (sa.CheckConstraint(one_of("status", ATTESTATION_STATUSES), name="status"),)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(16), default="graft", server_default="graft")  # graft|composition
    block_id: Mapped[str | None] = mapped_column(sa.ForeignKey("blocks.id"), index=True)
    probe_digest: Mapped[str | None] = mapped_column(_sha256())
    fingerprint: Mapped[str] = mapped_column(sa.String(64), index=True)
    profile: Mapped[Any] = mapped_column(sa.JSON)
    profile_id: Mapped[str] = mapped_column(sa.String(64))
    host: Mapped[str] = mapped_column(sa.String(255))
    status: Mapped[str] = mapped_column(sa.String(16))
    floor_equal: Mapped[bool] = mapped_column(sa.Boolean)
    byte_exact: Mapped[bool] = mapped_column(sa.Boolean)
    continuation_equal: Mapped[bool | None] = mapped_column(sa.Boolean)  # greedy continuation equal (0006)
    recapture_equal: Mapped[bool | None] = mapped_column(sa.Boolean)  # restored state re-captured equal (0006)
    kl_mean: Mapped[float] = mapped_column(sa.Double)
    kl_max: Mapped[float] = mapped_column(sa.Double)
    argmax_agree: Mapped[str] = mapped_column(sa.String(32))
    max_abs_diff: Mapped[float] = mapped_column(sa.Double)
    reason: Mapped[str | None] = mapped_column(NulSafeText())
    timings: Mapped[Any] = mapped_column(sa.JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # the team (owner key) whose deposit or question caused this measurement; null: an operator or the serving
    # process itself (0013). A team is shown only what it may see (store/repository.attestation_visible_to)
    requested_by: Mapped[str | None] = mapped_column(sa.String(32))


class AnswerRow(Base):
    """One answered (or abstained) question: the route taken, the block used, and whether it was verified/attested."""

    __tablename__ = "queries"
    __table_args__ = (sa.CheckConstraint(one_of("route", QUERY_ROUTES), name="route"),)

    id: Mapped[str] = mapped_column(sa.String(32), primary_key=True, default=new_hex_id)
    team_id: Mapped[int | None] = mapped_column(sa.ForeignKey("teams.id"), index=True)
    question: Mapped[str] = mapped_column(sa.Text)
    question_digest: Mapped[str] = mapped_column(_sha256(), index=True)
    answer: Mapped[str | None] = mapped_column(NulSafeText())
    route: Mapped[str] = mapped_column(sa.String(16))
    block_id: Mapped[str | None] = mapped_column(_sha256(), index=True)
    decode_tokens: Mapped[int | None] = mapped_column(sa.Integer)
    verified: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    attested: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    verified_by: Mapped[str | None] = mapped_column(sa.String(200))  # the team whose key verified the block used
    detail: Mapped[str | None] = mapped_column(NulSafeText())  # the route's words: the gate's verdict, a refusal
    binding: Mapped[Any | None] = mapped_column(_json())  # the transfer route's binding report (Answer.binding)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class EvictionRow(Base):
    """One ownership dropped under a byte budget or a team quota (`owner_key`), or one block no team owned evicted
    (`owner_key` null): its object deleted, its row kept with `evicted_at` (store/retention.py)."""

    __tablename__ = "evictions"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    block_id: Mapped[str] = mapped_column(sa.ForeignKey("blocks.id"), index=True)
    bytes: Mapped[int] = mapped_column(sa.BigInteger)
    reason: Mapped[str] = mapped_column(sa.String(32))  # store_budget | team_quota | abandoned
    store_url: Mapped[str] = mapped_column(sa.String(1024))
    owner_key: Mapped[str | None] = mapped_column(sa.String(32))  # whose ownership was dropped (0013)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class WorkerRow(Base):
    """A worker of the fleet as it announced itself at start: its kind (solve, graft, attest), model, the
    fingerprint it computed and the queues it consumes. Whether it is alive is the broker's consumer count."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(sa.String(200), primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(16))
    model: Mapped[str] = mapped_column(sa.String(1024))
    fingerprint: Mapped[str] = mapped_column(sa.String(64), index=True)
    queues: Mapped[Any] = mapped_column(sa.JSON)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class PrefixRow(Base):
    """A stored prompt prefix: its chain hash (over the fingerprint, the numerics profile, the stored chunk size and
    every token up to this end) names a prefix block holding the KV cells of [end - the block's tokens, end); the
    rest of the prefix is the chain before it. Visibility is the block's owners."""

    __tablename__ = "prefixes"

    chain_hash: Mapped[str] = mapped_column(_sha256(), primary_key=True)
    # a chain hash may name several blocks: the prefix's last chunk cut from different starts (prompt_cache.py)
    block_id: Mapped[str] = mapped_column(sa.ForeignKey("blocks.id"), primary_key=True, index=True)
    fingerprint: Mapped[str] = mapped_column(sa.String(64))
    profile_id: Mapped[str] = mapped_column(sa.String(32))
    n_tokens: Mapped[int] = mapped_column(sa.Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RouteDocRow(Base):
    """A solved problem in the routing index: its solution block, who may graft it (the batch's team and shared
    flag, copied so that visibility is applied inside the index query) and its question's index terms
    (store/route_index.py). PostgreSQL adds a generated `tsv` tsvector column with a GIN index over them; SQLite
    mirrors `terms` into the FTS5 table `route_fts` (rowid = `id`). Both exist only in the migrations."""

    __tablename__ = "route_docs"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    problem_id: Mapped[str] = mapped_column(sa.ForeignKey("problems.id"), unique=True)
    block_id: Mapped[str] = mapped_column(sa.ForeignKey("blocks.id"), index=True)
    fingerprint: Mapped[str] = mapped_column(sa.String(64))
    team_id: Mapped[int | None] = mapped_column(sa.ForeignKey("teams.id"))
    shared: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false())
    terms: Mapped[str] = mapped_column(sa.Text)


class RouteTermRow(Base):
    """Document frequency of one index term among the indexed problems of one fingerprint and one partition: a
    team's (`team_key`, as owner_key) problems, shared or not. The router's idf for a team sums the partitions it
    may graft from (0013), so another team's private problems never weigh its questions. The row with term ''
    counts the documents themselves."""

    __tablename__ = "route_terms"

    fingerprint: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    team_key: Mapped[str] = mapped_column(sa.String(32), primary_key=True)
    shared: Mapped[bool] = mapped_column(sa.Boolean, primary_key=True)
    term: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    docs: Mapped[int] = mapped_column(sa.Integer, default=0)


QUERY_REQUEST_STATUSES = ("pending", "done", "failed")


class QueryRequestRow(Base):
    """A question submitted for answering through the graft queue, and the `queries` row that answered it."""

    __tablename__ = "query_requests"
    __table_args__ = (sa.CheckConstraint(one_of("status", QUERY_REQUEST_STATUSES), name="status"),)

    id: Mapped[str] = mapped_column(sa.String(32), primary_key=True, default=new_hex_id)
    team_id: Mapped[int | None] = mapped_column(sa.ForeignKey("teams.id"), index=True)
    question: Mapped[str] = mapped_column(sa.Text)
    expected: Mapped[Any | None] = mapped_column(_json())  # {"answer": ..., "verifier": ...} when known
    options: Mapped[Any | None] = mapped_column(_json())  # {"samples": K, "model": name} the asker chose
    status: Mapped[str] = mapped_column(sa.String(16), default="pending")
    query_id: Mapped[str | None] = mapped_column(sa.ForeignKey("queries.id"))
    error: Mapped[str | None] = mapped_column(NulSafeText())
    # Task deliveries that started / that returned or raised: the difference is deliveries that lost their worker.
    deliveries: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0")
    deliveries_ended: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class DeliveryRow(Base):
    """One delivery of a solve or answer task to a worker process (the rows' `deliveries` / `deliveries_ended`
    count them): the row it works on (`kind`: its table), the worker (host and pid), the broker message it came in
    (the Celery task id, which a retry keeps), when it started, when its worker last marked it alive, its deadline,
    and how it ended: `ended_at` (the body returned or raised) or `lost_at` (the broker redelivered its message: its
    worker is gone). One with neither whose heartbeat is older than KVGRAFT_DELIVERY_LOST_AFTER_S lost its worker
    too; a worker alive but whose end could not be recorded keeps marking it and ends it later."""

    __tablename__ = "task_deliveries"
    __table_args__ = (sa.Index("ix_task_deliveries_kind_row_id", "kind", "row_id"),)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(32))  # problems | query_requests
    row_id: Mapped[str] = mapped_column(sa.String(32))
    worker: Mapped[str] = mapped_column(sa.String(300))
    message_id: Mapped[str | None] = mapped_column(sa.String(255))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    deadline_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    lost_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class CopyRow(Base):
    """One block copy between stores: source and destination URLs, size, SHA-256, and whether it was new there."""

    __tablename__ = "copies"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    block_id: Mapped[str] = mapped_column(_sha256(), index=True)
    source_url: Mapped[str] = mapped_column(sa.String(1024))
    dest_url: Mapped[str] = mapped_column(sa.String(1024))
    bytes: Mapped[int] = mapped_column(sa.BigInteger)
    sha256: Mapped[str] = mapped_column(_sha256())
    created: Mapped[bool] = mapped_column(sa.Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL; plain `postgresql://` (and psycopg2) URLs are pointed at the psycopg 3 driver."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def is_sqlite(url: str | URL) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def sqlite_path(url: str | URL) -> str | None:
    """The file path of a file-backed SQLite URL, or None for an in-memory database."""
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    return database


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
    finally:
        cursor.close()


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for a kvgraft database URL.

    SQLite: usable from several threads, foreign keys on, WAL journal, a busy timeout so that concurrent writers
    wait instead of failing (an in-memory database uses one shared connection). PostgreSQL: psycopg 3, with
    pre-ping so that connections dropped by the server are replaced.
    """
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        connect_args = {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S, **kwargs.pop("connect_args", {})}
        if sqlite_path(parsed) is None:
            kwargs.setdefault("poolclass", StaticPool)
        engine = sa.create_engine(parsed, connect_args=connect_args, **kwargs)
        event.listen(engine, "connect", _sqlite_on_connect)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return sa.create_engine(parsed, **kwargs)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions bound to `engine`; objects stay readable after commit (no expiry on commit)."""
    return sessionmaker(bind=engine, expire_on_commit=False)
