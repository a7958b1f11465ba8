"""The routing index: solved problems' questions as index terms in the database, so that routing a question reads
the few problems that share its rare words instead of every visible problem.

PostgreSQL keeps the terms in a generated `tsvector` column with a GIN index, SQLite in an FTS5 table; both are
queried with team visibility, fingerprint and quarantine applied inside the query. Document frequencies live in
`route_terms` per fingerprint and partition (a team's problems, shared or not), maintained in the same transaction
as each indexed problem; the router's idf for a question is summed over the partitions the asking team may graft
from, without a scan, so the statistics a team's question is weighed with, and the candidates they select, are a
function of what that team may see and never of another team's private problems. The analyzer (`index_terms`) is
the router's: content words, stop words dropped, every number one placeholder.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
import structlog
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from store.db import BatchRow, BlockRow, ProblemRow, RouteDocRow, RouteTermRow, owner_key

log = structlog.get_logger(__name__)

NUMBER = "<num>"
MAX_TERM_CHARS = 64
DOCS_TERM = ""  # the route_terms row that counts documents
MAX_CANDIDATES = 256  # rows the index returns for one question; more matches are cut by the index's own rank

WORD_PATTERN = re.compile(r"[a-z]+|\d+(?:\.\d+)?")
STOP_WORDS = frozenset("a an the of to in on and or is are was were has have had how many much what does do "
                       "did each if it its for with at by from he she they his her their them there this that "
                       "be".split())


def index_terms(text: str) -> list[str]:
    """Content words of `text` in order, stop words dropped, every number replaced by one placeholder."""
    return [NUMBER if w[0].isdigit() else w for w in WORD_PATTERN.findall(text.casefold())
            if w not in STOP_WORDS and len(w) <= MAX_TERM_CHARS]


def idf(n_docs: int, docs: int) -> float:
    """Smoothed inverse document frequency (the router's): log((1 + n) / (1 + df)) + 1."""
    return math.log((1 + n_docs) / (1 + docs)) + 1.0


@dataclass(frozen=True)
class TermStats:
    n_docs: int
    df: dict[str, int]

    def idf(self, term: str) -> float:
        """A term no indexed problem has weighs 1.0, as in the router's linear scan."""
        docs = self.df.get(term, 0)
        return idf(self.n_docs, docs) if docs else 1.0


@dataclass(frozen=True)
class IndexedProblem:
    problem_id: str
    block_id: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Retrieval:
    candidates: list[IndexedProblem]
    stats: TermStats  # n_docs and df of every term of the question and of the candidates
    searched: tuple[str, ...]  # the terms the index was asked for
    truncated: bool  # more problems matched than MAX_CANDIDATES


def _fts_text(terms: Iterable[str]) -> str:
    return " ".join(t for t in terms if t != NUMBER)


TERM_KEY = ["fingerprint", "team_key", "shared", "term"]


def _upsert_counts(session: Session, fingerprint: str, team_id: int | None, shared: bool, terms: list[str]) -> None:
    """Add one document of this partition to each term's count (sorted, so concurrent writers lock rows in one
    order)."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = RouteTermRow.__table__
    for term in sorted(set(terms) | {DOCS_TERM}):
        stmt = insert(table).values(fingerprint=fingerprint, team_key=owner_key(team_id), shared=shared, term=term,
                                    docs=1)
        session.execute(stmt.on_conflict_do_update(index_elements=TERM_KEY, set_={"docs": table.c.docs + 1}))


def add_problem(session: Session, *, problem: ProblemRow, block: BlockRow) -> bool:
    """Index a solved problem and its solution block (once: a second call for the same problem does nothing).
    Returns whether it was added."""
    if session.scalar(sa.select(RouteDocRow.id).where(RouteDocRow.problem_id == problem.id)) is not None:
        return False
    batch = session.get(BatchRow, problem.batch_id)
    terms = index_terms(problem.question)
    team_id, shared = (batch.team_id if batch else None), bool(batch and batch.shared)
    doc = RouteDocRow(problem_id=problem.id, block_id=block.id, fingerprint=block.fingerprint, team_id=team_id,
                   shared=shared, terms=" ".join(terms))
    session.add(doc)
    session.flush()
    if session.get_bind().dialect.name == "sqlite":
        session.execute(sa.text("INSERT INTO route_fts (rowid, terms) VALUES (:id, :terms)"),
                        {"id": doc.id, "terms": _fts_text(terms)})
    _upsert_counts(session, block.fingerprint, team_id, shared, terms)
    log.info("route_index.added", problem_id=problem.id, block_id=block.id, terms=len(terms))
    return True


def _visible_partitions(team_id: int | None, sources: list[int]) -> Any:
    """SQL condition on RouteTermRow: the partitions whose problems the team may graft (as `_visible` on RouteDocRow):
    its own, shared or not, and the shared ones of its sources; team None (operators, embedded runs) every one."""
    if team_id is None:
        return sa.true()
    return sa.or_(RouteTermRow.team_key == owner_key(team_id),
                  sa.and_(RouteTermRow.shared.is_(True), RouteTermRow.team_key.in_([owner_key(t) for t in sources])))


def term_stats(session: Session, *, fingerprint: str, terms: Iterable[str], team_id: int | None,
               sources: list[int]) -> TermStats:
    """Document frequencies of `terms` (and the number of documents) over the indexed problems of this fingerprint
    that the team may graft: the same figures whatever other teams have indexed privately."""
    wanted = sorted(set(terms) | {DOCS_TERM})
    rows = session.execute(sa.select(RouteTermRow.term, sa.func.sum(RouteTermRow.docs)).where(
        RouteTermRow.fingerprint == fingerprint, RouteTermRow.term.in_(wanted), _visible_partitions(team_id, sources))
        .group_by(RouteTermRow.term)).all()
    df = {t: int(d) for t, d in rows if d}
    return TermStats(df.pop(DOCS_TERM, 0), df)


def _weights(query: list[str], stats: TermStats, threshold: float) -> tuple[dict[str, float], float]:
    """Each query term's tf-idf weight, and the bound (1 - threshold^2) |q|^2 on the squared weight a problem
    may lack and still reach `threshold`."""
    weight = {t: c * stats.idf(t) for t, c in Counter(query).items()}
    total = sum(w * w for w in weight.values())
    return weight, (1.0 - max(0.0, min(threshold, 1.0)) ** 2) * total


def search_terms(query: list[str], stats: TermStats, threshold: float) -> list[str]:
    """The fewest rarest terms of the query such that a problem sharing none of them cannot reach `threshold`
    cosine similarity: by Cauchy-Schwarz a document's cosine is at most |q restricted to shared terms| / |q|, so
    a document missing terms whose squared weight exceeds (1 - threshold^2) |q|^2 is below threshold. The number
    placeholder is never searched (every problem has it), and is counted as shared."""
    weight, bound = _weights(query, stats, threshold)
    chosen: list[str] = []
    missing = 0.0
    for term in sorted((t for t in weight if t != NUMBER), key=lambda t: (-weight[t], t)):
        chosen.append(term)
        missing += weight[term] ** 2
        if missing > bound:
            break
    return chosen


Expr = str | tuple[str, tuple["Expr", ...]]  # a term, or ("&" | "|", parts)
MAX_REQUIRED_TERMS = 12  # the heaviest terms the condition is built over; the others are assumed shared
MAX_EXPR_LEAVES = 128  # larger conditions fall back to search_terms' disjunction


def _leaves(expr: Expr) -> int:
    return 1 if isinstance(expr, str) else sum(_leaves(p) for p in expr[1])


def requirement(query: list[str], stats: TermStats, threshold: float) -> Expr | None:
    """The exact full-text condition for `threshold`: a boolean expression over the query's heaviest terms that a
    problem satisfies if and only if the squared weight of the query terms it lacks is at most (1 - threshold^2)
    |q|^2, the Cauchy-Schwarz bound of search_terms (every problem that can reach the threshold satisfies it, and
    far fewer than share one rare term). Terms no indexed problem has are missing from every problem; terms beyond
    the MAX_REQUIRED_TERMS heaviest are assumed shared (the condition only gets weaker). None: no problem can reach
    the threshold."""
    weight, bound = _weights(query, stats, threshold)
    unseen = sum(w * w for t, w in weight.items() if t != NUMBER and not stats.df.get(t))
    terms = sorted((t for t in weight if t != NUMBER and stats.df.get(t)), key=lambda t: (-weight[t], t))
    terms = terms[:MAX_REQUIRED_TERMS]
    squares = [weight[t] ** 2 for t in terms]
    suffix = [sum(squares[i:]) for i in range(len(terms) + 1)]

    def build(missing: float, i: int) -> Expr | bool:
        if missing > bound:
            return False
        if missing + suffix[i] <= bound:
            return True
        with_term = build(missing, i + 1)
        without = build(missing + squares[i], i + 1)  # never True: that case returned True above
        has = terms[i] if with_term is True else (False if with_term is False else ("&", (terms[i], with_term)))
        if without is False:
            return has
        return without if has is False else ("|", (has, without))  # type: ignore[return-value]

    built = build(unseen, 0)
    if built is False:
        return None
    if built is True or _leaves(built) > MAX_EXPR_LEAVES:  # type: ignore[arg-type]
        chosen = [t for t in search_terms(query, stats, threshold) if stats.df.get(t)]
        return ("|", tuple(chosen)) if chosen else None
    return built  # type: ignore[return-value]


def expr_terms(expr: Expr) -> set[str]:
    return {expr} if isinstance(expr, str) else set().union(*(expr_terms(p) for p in expr[1]))


def _render(expr: Expr, quote: Callable[[str], str], ops: dict[str, str]) -> str:
    if isinstance(expr, str):
        return quote(expr)
    return "(" + f" {ops[expr[0]]} ".join(_render(p, quote, ops) for p in expr[1]) + ")"


def _visible(team_id: int | None, sources: list[int]) -> Any:
    if team_id is None:
        return sa.true()
    return sa.or_(RouteDocRow.team_id == team_id,
                  sa.and_(RouteDocRow.shared.is_(True), RouteDocRow.team_id.in_(sources)))


def _candidates(dialect: str, required: Expr) -> Any:
    """Problems whose terms satisfy `required`, in an order that depends on nothing but each problem itself (it
    decides which candidates survive a truncation): PostgreSQL's ts_rank over the GIN-indexed tsvector (a function
    of the document and the query only), on SQLite the newest first (FTS5's bm25 weighs terms by every team's
    documents). Terms are [a-z]+ words: no query operator can be injected."""
    columns = (RouteDocRow.problem_id, RouteDocRow.block_id, RouteDocRow.terms)
    if dialect == "postgresql":
        tsq = sa.func.to_tsquery("simple", _render(required, str, {"&": "&", "|": "|"}))
        tsv = sa.literal_column("route_docs.tsv")
        return sa.select(*columns).where(tsv.op("@@")(tsq)).order_by(sa.func.ts_rank(tsv, tsq).desc())
    fts = sa.table("route_fts", sa.column("rowid"), sa.column("rank"))
    match = _render(required, lambda t: f'"{t}"', {"&": "AND", "|": "OR"})
    return (sa.select(*columns).select_from(fts).join(RouteDocRow, RouteDocRow.id == fts.c.rowid)
            .where(sa.literal_column("route_fts").op("MATCH")(match)).order_by(RouteDocRow.id.desc()))


@dataclass(frozen=True)
class Plan:
    """What one question asks of the index: the statement (None when no searched term is in the catalogue), the
    question's term statistics and the terms searched."""

    statement: Any
    stats: TermStats
    searched: tuple[str, ...]


def plan(session: Session, *, question: str, fingerprint: str, team_id: int | None, sources: list[int],
         threshold: float, limit: int = MAX_CANDIDATES) -> Plan:
    """The candidate query for a question: indexed problems of this fingerprint, graftable by the team and not
    quarantined, that satisfy the question's requirement; at most `limit` + 1 rows (one more tells truncation)."""
    query = index_terms(question)
    stats = term_stats(session, fingerprint=fingerprint, terms=query, team_id=team_id, sources=sources)
    required = requirement(query, stats, threshold)
    if required is None:  # nothing indexed can reach the threshold
        return Plan(None, stats, ())
    searched = tuple(sorted(expr_terms(required)))
    statement = (_candidates(session.get_bind().dialect.name, required)
                 .join(BlockRow, BlockRow.id == RouteDocRow.block_id)
                 .where(RouteDocRow.fingerprint == fingerprint, BlockRow.quarantined_at.is_(None),
                        _visible(team_id, sources))
                 .limit(limit + 1))
    return Plan(statement, stats, searched)


def retrieve(session: Session, *, question: str, fingerprint: str, team_id: int | None, sources: list[int],
             threshold: float, limit: int = MAX_CANDIDATES) -> Retrieval:
    """The indexed problems that could reach `threshold` against the question (at most `limit`, best by the
    index's rank), with the term statistics the router scores them with."""
    found = plan(session, question=question, fingerprint=fingerprint, team_id=team_id, sources=sources,
                 threshold=threshold, limit=limit)
    if found.statement is None:
        return Retrieval([], found.stats, (), False)
    rows = session.execute(found.statement).all()
    truncated = len(rows) > limit
    candidates = [IndexedProblem(p, b, tuple(t.split())) for p, b, t in rows[:limit]]
    stats = found.stats
    doc_terms = {t for c in candidates for t in c.terms} - stats.df.keys()
    if doc_terms:
        more = term_stats(session, fingerprint=fingerprint, terms=doc_terms, team_id=team_id, sources=sources)
        stats = TermStats(stats.n_docs, {**stats.df, **more.df})
    if truncated:
        log.info("route_index.truncated", searched=len(found.searched), limit=limit)
    return Retrieval(candidates, stats, found.searched, truncated)
