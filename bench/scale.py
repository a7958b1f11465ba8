"""`kvgraft bench scale`: routing over a catalogue of 10k, 100k and 1M solved problems on PostgreSQL (synthetic
rows, the real schema and the real index), the indexed router beside the linear scan it replaces; then the fleet
half (bench/scale_fleet.py): graft and deposit throughput with 1, 2 and 4 workers, and the S3 requests and
database statements of one answer and one deposit.

A private database is created on the server, migrated, and filled by COPY in steps up to each size (teams with
private, shared and trusted batches, one solution block row per problem, its routing index row and term counts as
a deposit would write them); the database is dropped afterwards unless asked to keep it. Questions are drawn from
a grammar over a synthetic vocabulary with Zipf-distributed word choice, so that common words are common; the
queries are variants of stored problems (numbers changed: they should route) and fresh draws from the same
grammar (mostly near misses), asked by one team through its visibility. Each query's time is the router's whole
cost: visibility sources, term statistics, the candidate query, and scoring."""

from __future__ import annotations

import itertools
import json
import random
import re
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import sqlalchemy as sa
from psycopg import sql

from bench.stats import percentile, share
from store import migrate
from store.db import make_engine, session_factory
from store.repository import graft_sources, visible_solution_blocks
from store.route_index import DOCS_TERM, index_terms, plan, retrieve
from workers.flywheel.router import DEFAULT_THRESHOLD, Candidate, route, route_indexed

FINGERPRINT = "b" * 32
TEAMS = 40
BATCH_ROWS = 100
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"

Progress = Callable[[str], None] | None


@dataclass(frozen=True)
class ScaleBenchRequest:
    sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000)
    queries: int = 200
    linear_max: int = 100_000  # the linear scan is timed up to this size
    linear_queries: int = 5
    explain_queries: int = 20  # queries whose candidate statement is run under EXPLAIN ANALYZE (rows examined)
    server_url: str = DEFAULT_SERVER
    keep: bool = False
    seed: int = 0
    fleet_workers: tuple[int, ...] = (1, 2, 4)  # empty: skip the fleet half (throughput, requests per operation)
    fleet_answers: int = 80
    fleet_deposits: int = 24


_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


class Grammar:
    """Questions of five shapes over a vocabulary of made-up words, each slot's word drawn with Zipf weights."""

    SHAPES = (
        "{a} has {n} {x} and {n} {y}. At the {p} {a} {v} {n} {x}. How many {x} does {a} have now?",
        "A {p} sells {x} for {n} dollars each. {a} {v} {n} {x} and {n} {y}. How much does {a} spend?",
        "{a} and {b} share {n} {x}. {b} {v} {n} of them at the {p}. How many {x} are left?",
        "Each {x} weighs {n} grams. {a} packs {n} {x} into a {y} at the {p}. What is the total weight?",
        "{a} reads {n} pages about {x} every day at the {p}. How many days until {a} finishes {n} pages?",
    )

    def __init__(self, rng: random.Random) -> None:
        def vocab(n: int, syllables: int) -> list[str]:
            seen: dict[str, None] = {}
            while len(seen) < n:
                seen["".join(rng.choice(_SYLLABLES) for _ in range(syllables))] = None
            return list(seen)

        self.rng = rng
        self.slots = {"a": vocab(3000, 3), "x": vocab(5000, 3), "p": vocab(1000, 2), "v": vocab(300, 2)}
        self.cum_weights = {k: list(itertools.accumulate(1.0 / (i + 1) ** 0.8 for i in range(len(v))))
                            for k, v in self.slots.items()}

    def _pick(self, slot: str) -> str:
        return self.rng.choices(self.slots[slot], cum_weights=self.cum_weights[slot])[0]

    def question(self) -> str:
        shape = self.rng.choice(self.SHAPES)
        words = {"a": self._pick("a"), "b": self._pick("a"), "x": self._pick("x"), "y": self._pick("x"),
                 "p": self._pick("p"), "v": self._pick("v")}
        text = shape.format(n="{n}", **words)
        while "{n}" in text:
            text = text.replace("{n}", str(self.rng.randint(2, 999)), 1)
        return text[0].upper() + text[1:]


def _psycopg_url(url: str) -> str:
    """psycopg's own connection URL for an SQLAlchemy one (postgresql+psycopg:// -> postgresql://)."""
    return re.sub(r"^postgresql\+\w+://", "postgresql://", url)


class Catalogue:
    """The private database and what has been loaded into it so far."""

    def __init__(self, server_url: str, seed: int) -> None:
        self.server_url = _psycopg_url(server_url)
        self.name = f"kvgraft_scale_{uuid.uuid4().hex[:12]}"
        self.rng = random.Random(seed)
        self.grammar = Grammar(self.rng)
        self.rows = 0
        self.questions: list[str] = []  # a sample of stored questions, to draw routable variants from
        self.team_ids: list[int] = []
        self.counts: Counter[tuple[str, bool, str]] = Counter()
        self.load_s = 0.0

    @property
    def url(self) -> str:
        return self.server_url.rsplit("/", 1)[0] + f"/{self.name}"

    def _admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.server_url, autocommit=True)

    def create(self) -> None:
        with self._admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.name)))
        migrate.upgrade(self.url)
        with psycopg.connect(self.url) as conn:
            for i in range(TEAMS):
                # a quarter of the teams are trusted (their shared batches are grafted by every team)
                row = conn.execute("INSERT INTO teams (name, created_at, trusted) VALUES (%s, now(), %s) RETURNING id",
                                   (f"team-{i}", i % 4 == 0)).fetchone()
                assert row is not None
                self.team_ids.append(int(row[0]))

    @property
    def asker(self) -> int:
        """The team whose questions are routed: not trusted, so it sees its own batches and the trusted teams'
        shared ones."""
        return self.team_ids[1]

    def visible_to_asker(self, team_id: int, shared: bool) -> bool:
        return team_id == self.asker or (shared and self.team_ids.index(team_id) % 4 == 0)

    def drop(self) -> None:
        with self._admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name)))

    def _batches(self, n: int) -> Iterator[tuple[str, int, bool, list[str]]]:
        while n > 0:
            size = min(BATCH_ROWS, n)
            yield (uuid.uuid4().hex, self.rng.choice(self.team_ids), self.rng.random() < 0.5,
                   [self.grammar.question() for _ in range(size)])
            n -= size

    def grow(self, size: int) -> None:
        """COPY rows until the catalogue holds `size` solved problems, then refresh the term counts and statistics."""
        started = time.perf_counter()
        added: Counter[tuple[str, bool, str]] = Counter()  # (team key, shared, term): route_terms' partitions
        with psycopg.connect(self.url) as conn:
            with conn.cursor() as cur:
                batches = list(self._batches(size - self.rows))
                with cur.copy("COPY batches (id, team_id, shared, status, created_at) FROM STDIN") as copy:
                    for batch_id, team_id, shared, _ in batches:
                        copy.write_row((batch_id, team_id, shared, "done", "2026-12-01T00:00:00Z"))
                docs: list[tuple[str, str, int, bool, str]] = []
                with cur.copy("COPY blocks (id, fingerprint, kind, n_tokens, bytes, payload_sha256, object_key, "
                              "store_url, profile, meta, team_id, shared, created_at) FROM STDIN") as copy:
                    for _, team_id, shared, questions in batches:
                        for _ in questions:
                            block_id = self.rng.randbytes(32).hex()
                            copy.write_row((block_id, FINGERPRINT, "solution", 400, 9_000_000, block_id,
                                            f"blocks/{block_id[:2]}/{block_id}.kvg", "s3://bench/", "{}", "{}",
                                            team_id, shared, "2026-12-01T00:00:00Z"))
                            docs.append((block_id, "", team_id, shared, ""))
                with cur.copy("COPY problems (id, batch_id, external_id, question, question_digest, status, "
                              "block_id, deliveries, deliveries_ended, created_at, updated_at) FROM STDIN") as copy:
                    i = 0
                    for batch_id, _, _, questions in batches:
                        for j, q in enumerate(questions):
                            problem_id = uuid.uuid4().hex
                            copy.write_row((problem_id, batch_id, f"q{j}", q, "0" * 64, "solved", docs[i][0], 1, 1,
                                            "2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z"))
                            terms = index_terms(q)
                            added.update((str(docs[i][2]), docs[i][3], t) for t in set(terms) | {DOCS_TERM})
                            docs[i] = (docs[i][0], problem_id, docs[i][2], docs[i][3], " ".join(terms))
                            if self.visible_to_asker(docs[i][2], docs[i][3]) and self.rng.random() < 0.2:
                                self.questions.append(q)
                            i += 1
                with cur.copy("COPY route_docs (block_id, problem_id, team_id, shared, terms, fingerprint) "
                              "FROM STDIN") as copy:
                    for doc in docs:
                        copy.write_row((*doc, FINGERPRINT))
                cur.execute("CREATE TEMP TABLE term_delta (team_key text, shared bool, term text, docs int) "
                            "ON COMMIT DROP")
                with cur.copy("COPY term_delta (team_key, shared, term, docs) FROM STDIN") as copy:
                    for (team_key, shared, term), n in added.items():
                        copy.write_row((team_key, shared, term, n))
                cur.execute("INSERT INTO route_terms (fingerprint, team_key, shared, term, docs) "
                            "SELECT %s, team_key, shared, term, docs FROM term_delta "
                            "ON CONFLICT (fingerprint, team_key, shared, term) "
                            "DO UPDATE SET docs = route_terms.docs + excluded.docs", (FINGERPRINT,))
            conn.commit()
            conn.autocommit = True
            conn.execute("VACUUM ANALYZE")
        self.counts.update(added)
        self.rows = size
        self.load_s += time.perf_counter() - started

    def probes(self, n: int) -> list[str]:
        """Half variants of stored problems the asker may graft (new numbers), half fresh draws from the grammar."""
        variants = [re.sub(r"\d+", lambda _: str(self.rng.randint(2, 999)), self.rng.choice(self.questions))
                    for _ in range(n // 2)]
        return variants + [self.grammar.question() for _ in range(n - len(variants))]


def _rows_examined(plan_json: Any) -> int:
    """Rows of route_docs the plan read: returned by its scans plus removed by their filters and rechecks."""
    total = 0
    stack = [plan_json[0]["Plan"]]
    while stack:
        node = stack.pop()
        if node.get("Relation Name") == "route_docs":
            loops = node.get("Actual Loops", 1)
            total += int((node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
                          + node.get("Rows Removed by Index Recheck", 0)) * loops)
        stack.extend(node.get("Plans", []))
    return total


def _measure(catalogue: Catalogue, request: ScaleBenchRequest, progress: Progress) -> dict[str, Any]:
    engine = make_engine(catalogue.url)
    sessions = session_factory(engine)
    asker = catalogue.asker
    probes = catalogue.probes(request.queries)
    times: list[float] = []
    routed = candidates = truncated = 0
    examined: list[int] = []
    try:
        with sessions() as s:
            for q in probes[:3]:  # warm the connection and the buffer cache
                retrieve(s, question=q, fingerprint=FINGERPRINT, team_id=asker,
                         sources=graft_sources(s, team_id=asker), threshold=DEFAULT_THRESHOLD)
            for q in probes:
                started = time.perf_counter()
                found = retrieve(s, question=q, fingerprint=FINGERPRINT, team_id=asker,
                                 sources=graft_sources(s, team_id=asker), threshold=DEFAULT_THRESHOLD)
                chosen = route_indexed(q, found, threshold=DEFAULT_THRESHOLD)
                times.append((time.perf_counter() - started) * 1000)
                routed += chosen.key is not None
                candidates += len(found.candidates)
                truncated += found.truncated
            for q in probes[:request.explain_queries]:
                p = plan(s, question=q, fingerprint=FINGERPRINT, team_id=asker,
                         sources=graft_sources(s, team_id=asker), threshold=DEFAULT_THRESHOLD)
                if p.statement is None:
                    examined.append(0)
                    continue
                compiled = p.statement.compile(dialect=engine.dialect, compile_kwargs={"render_postcompile": True})
                raw = s.connection().exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {compiled}",
                                                     dict(compiled.params)).scalar_one()
                examined.append(_rows_examined(raw if isinstance(raw, list) else json.loads(raw)))
        entry: dict[str, Any] = {
            "blocks": catalogue.rows, "p50_ms": round(statistics.median(times), 2),
            "p99_ms": round(percentile(times, 0.99), 2), "rows_examined": int(statistics.median(examined)),
            "rows_examined_max": max(examined), "candidates_mean": round(candidates / len(probes), 1),
            "routed": share(routed, len(probes)), "truncated": share(truncated, len(probes))}
        with sessions() as s:  # what the catalogue costs per block on disk (table, its indexes and TOAST)
            entry["bytes_per_block"] = {table: round(int(s.execute(sa.text(
                f"SELECT pg_total_relation_size('{table}')")).scalar_one()) / catalogue.rows)
                for table in ("blocks", "problems", "route_docs", "batches")}
            entry["route_terms_rows"] = int(s.execute(sa.text("SELECT count(*) FROM route_terms")).scalar_one())
        linear: dict[str, Any] | None = None
        if catalogue.rows <= request.linear_max:
            linear_times: list[float] = []
            agree = 0
            with sessions() as s:
                for q in probes[:request.linear_queries]:
                    started = time.perf_counter()
                    pool = visible_solution_blocks(s, team_id=asker, fingerprint=FINGERPRINT)
                    chosen = route(q, [Candidate(p.id, p.question) for p, _ in pool], threshold=DEFAULT_THRESHOLD)
                    linear_times.append((time.perf_counter() - started) * 1000)
                    indexed = route_indexed(q, retrieve(s, question=q, fingerprint=FINGERPRINT, team_id=asker,
                                                        sources=graft_sources(s, team_id=asker),
                                                        threshold=DEFAULT_THRESHOLD), threshold=DEFAULT_THRESHOLD)
                    agree += indexed.key == chosen.key
            linear = {"blocks": catalogue.rows, "p50_ms": round(statistics.median(linear_times), 1),
                      "rows_examined": len(pool), "agrees_with_index": share(agree, len(linear_times))}
        if progress:
            progress(f"{catalogue.rows} blocks: index p50 {entry['p50_ms']} ms"
                     + (f", linear p50 {linear['p50_ms']} ms" if linear else ""))
        return {"route": entry, "linear_scan": linear}
    finally:
        engine.dispose()


def run_scale_bench(request: ScaleBenchRequest, progress: Progress = None) -> dict[str, Any]:
    catalogue = Catalogue(request.server_url, request.seed)
    catalogue.create()
    route_rows: list[dict[str, Any]] = []
    linear_rows: list[dict[str, Any]] = []
    try:
        for size in sorted(request.sizes):
            if progress:
                progress(f"loading {size - catalogue.rows} rows (to {size})")
            catalogue.grow(size)
            measured = _measure(catalogue, request, progress)
            route_rows.append(measured["route"])
            if measured["linear_scan"] is not None:
                linear_rows.append(measured["linear_scan"])
    finally:
        if not request.keep:
            catalogue.drop()
    fleet: dict[str, Any] = {}
    if request.fleet_workers:
        from bench.scale_fleet import FleetBenchRequest, run_fleet_bench

        scratch = Catalogue(request.server_url, request.seed)
        scratch.create()
        try:
            fleet = run_fleet_bench(FleetBenchRequest(
                database_url=scratch.url, workers=request.fleet_workers, answers=request.fleet_answers,
                deposits=request.fleet_deposits), progress=progress)
        finally:
            scratch.drop()
    first, last = route_rows[0], route_rows[-1]
    return {
        "database": "postgresql", "threshold": DEFAULT_THRESHOLD, "queries": request.queries,
        "route": route_rows, "linear_scan": linear_rows,
        "route_p50_growth": round(last["p50_ms"] / first["p50_ms"], 2) if first["p50_ms"] else None,
        "load_s": round(catalogue.load_s, 1), "database_kept": catalogue.name if request.keep else None,
        **fleet,
    }
