"""The routing index (store/route_index.py) on both databases: it returns what the linear scan would route to
(same problem, same score) while reading only the problems that share the question's rare words, applies team
visibility, fingerprint and quarantine inside the query, survives hostile question text, and indexes each
problem once. SQLite (FTS5) is a unit test, PostgreSQL (tsvector + GIN) an integration test."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from store import migrate, repository
from store.db import ProblemRow, RouteDocRow, RouteTermRow, make_engine, session_factory, utcnow
from store.route_index import (
    DOCS_TERM,
    TermStats,
    add_problem,
    index_terms,
    requirement,
    retrieve,
    search_terms,
    term_stats,
)
from tests.unit.test_database_sqlite import block_fields
from workers.flywheel.router import Candidate, _best, route, route_indexed

FP = "f" * 32
OTHER_FP = "e" * 32

NAMES = ["ana", "bo", "cyril", "dana", "emil", "fay", "gus", "hana", "ivo", "jun"]
ITEMS = ["apples", "marbles", "stickers", "pencils", "cookies", "shells", "stamps", "coins", "cards", "beads",
         "books", "kites", "plums", "nails", "bricks", "tiles", "ropes", "jars", "cups", "bells"]
ACTIONS = ["buys", "finds", "loses", "sells", "gives away", "bakes", "collects", "breaks", "trades", "paints"]
PLACES = ["market", "school", "beach", "garden", "attic", "harbor", "library", "bakery", "forest", "station"]


def question(rng: random.Random) -> str:
    name, item, other = rng.choice(NAMES), rng.choice(ITEMS), rng.choice(ITEMS)
    return (f"{name.title()} has {rng.randint(2, 90)} {item} and {rng.randint(2, 9)} {other}. At the "
            f"{rng.choice(PLACES)} {name} {rng.choice(ACTIONS)} {rng.randint(2, 40)} {item}. "
            f"How many {item} does {name} have now?")


@pytest.fixture(params=[pytest.param("sqlite", marks=pytest.mark.unit),
                        pytest.param("postgresql", marks=pytest.mark.integration)])
def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sessionmaker]:
    url = f"sqlite:///{tmp_path / 'kvgraft.db'}" if request.param == "sqlite" else str(
        request.getfixturevalue("pg_url"))
    migrate.upgrade(url)
    engine = make_engine(url)
    yield session_factory(engine)
    engine.dispose()


def solved(session: Session, *, team: str, shared: bool, questions: list[str], fingerprint: str = FP,
           index: bool = True) -> list[tuple[str, str]]:
    """A batch of solved problems of `team`, each with its own solution block: [(problem id, block id)]."""
    team_row = repository.get_or_create_team(session, name=team)
    batch = repository.create_batch(session, team_id=team_row.id, shared=shared, problems=[
        {"external_id": f"q{i}", "question": q, "question_digest": repository.token_digest(q), "answer": 1,
         "solution": None, "verifier": None} for i, q in enumerate(questions)])
    out = []
    for problem in repository.batch_problems(session, batch_id=batch.id):
        block, _ = repository.record_block(session, **{**block_fields(f"{team}:{problem.id}", team_id=team_row.id),
                                                       "fingerprint": fingerprint})
        problem.status, problem.block_id, problem.updated_at = "solved", block.id, utcnow()
        session.flush()
        if index:
            assert add_problem(session, problem=problem, block=block)
        out.append((problem.id, block.id))
    return out


def routed(session: Session, q: str, *, team_id: int | None = None, fingerprint: str = FP,
           threshold: float = 0.7) -> tuple[str | None, float, int]:
    sources = repository.graft_sources(session, team_id=team_id) if team_id is not None else []
    found = retrieve(session, question=q, fingerprint=fingerprint, team_id=team_id, sources=sources,
                     threshold=threshold)
    assert not found.truncated
    chosen = route_indexed(q, found, threshold=threshold)
    return chosen.key, chosen.score, len(found.candidates)


def test_indexed_route_agrees_with_the_linear_scan(sessions: sessionmaker) -> None:
    rng = random.Random(7)
    library = [question(rng) for _ in range(150)]
    with sessions() as s:
        ids = solved(s, team="t", shared=False, questions=library)
        s.commit()
        pool = [Candidate(pid, q) for (pid, _), q in zip(ids, library, strict=True)]
        # variants of stored problems (numbers changed), fresh draws from the same grammar, and unrelated text
        probes = [re.sub(r"\d+", "77", library[i]) for i in range(0, 150, 7)]
        probes += [question(rng) for _ in range(30)]
        probes += ["What is the capital of a country with many rivers?", "Sum the digits of 98765."]
        hits = agree = 0
        examined = []
        for q in probes:
            linear = route(q, pool, threshold=0.7)
            key, score, n = routed(s, q)
            examined.append(n)
            agree += key == linear.key
            hits += key is not None
            if key is not None:
                assert score == pytest.approx(linear.score, abs=1e-9)
        assert agree == len(probes), f"{agree}/{len(probes)} routes agree with the linear scan"
        assert 0 < hits < len(probes)  # some route, some abstain: the comparison can fail both ways
        assert sorted(examined)[len(examined) // 2] < len(library)  # the median question reads fewer rows


def test_visibility_fingerprint_and_quarantine_apply_inside_the_query(sessions: sessionmaker) -> None:
    q = "Gus has 12 kites and 3 jars. At the harbor gus paints 4 kites. How many kites does gus have now?"
    with sessions() as s:
        (mine, _), = solved(s, team="mine", shared=False, questions=[q])
        (private, _), = solved(s, team="private", shared=False, questions=[q.replace("12", "13")])
        (shared_untrusted, _), = solved(s, team="untrusted", shared=True, questions=[q.replace("12", "14")])
        (shared_trusted, _), = solved(s, team="trusted", shared=True, questions=[q.replace("12", "15")])
        (_, other_fp_block), = solved(s, team="mine", shared=False, questions=[q.replace("12", "16")],
                                      fingerprint=OTHER_FP)
        repository.set_team_trusted(s, name="trusted", trusted=True)
        me = repository.get_or_create_team(s, name="mine").id
        s.commit()

        sources = repository.graft_sources(s, team_id=me)
        found = retrieve(s, question=q, fingerprint=FP, team_id=me, sources=sources, threshold=0.7)
        seen = {c.problem_id for c in found.candidates}
        assert seen == {mine, shared_trusted}, "another team's private or untrusted block leaked into routing"
        assert private not in seen and shared_untrusted not in seen
        assert other_fp_block not in {c.block_id for c in found.candidates}

        # quarantine my block: it is no longer a candidate, the trusted team's is
        row = s.get(ProblemRow, mine)
        assert row is not None and row.block_id is not None
        block = repository.get_block(s, block_id=row.block_id)
        assert block is not None
        block.quarantined_at = utcnow()
        s.commit()
        key, _, _ = routed(s, q, team_id=me)
        assert key == shared_trusted
        # team None (an operator, or the embedded single user) sees every batch of the fingerprint
        found = retrieve(s, question=q, fingerprint=FP, team_id=None, sources=[], threshold=0.7)
        assert {c.problem_id for c in found.candidates} == {private, shared_untrusted, shared_trusted}


def test_another_teams_private_problems_never_change_a_teams_routing(sessions: sessionmaker) -> None:
    """The statistics a question is weighed with are counted over what the asking team may graft: an untrusted
    team's private batch full of the question's words changes neither B's term statistics, nor the candidates,
    nor the routed problem and its score, nor B's abstentions (with global counts, a batch like this made B's
    routed question abstain, and `route` told B that some team's private text holds a word)."""
    rng = random.Random(11)
    library = [question(rng) for _ in range(40)]
    probes = [re.sub(r"\d+", "5", library[i]) for i in range(0, 40, 4)] + [question(rng) for _ in range(10)]
    with sessions() as s:
        solved(s, team="b", shared=False, questions=library)
        solved(s, team="trusted", shared=True, questions=[question(rng) for _ in range(10)])
        repository.set_team_trusted(s, name="trusted", trusted=True)
        b = repository.get_or_create_team(s, name="b").id
        s.commit()

        def observe() -> list[Any]:
            sources = repository.graft_sources(s, team_id=b)
            out = []
            for q in probes:
                found = retrieve(s, question=q, fingerprint=FP, team_id=b, sources=sources, threshold=0.7)
                chosen = route_indexed(q, found, threshold=0.7)
                out.append((found.stats, [c.problem_id for c in found.candidates], found.searched,
                            chosen.key, round(chosen.score, 12), round(chosen.runner_up, 12)))
            return out

        before = observe()
        assert 0 < sum(r[3] is not None for r in before) < len(probes)  # some route, some abstain
        words = sorted({w for q in probes for w in index_terms(q) if w != "<num>"})
        flood = [" ".join(rng.sample(words, 6)) + f" {i} " + " ".join(words[:3]) for i in range(60)]
        solved(s, team="untrusted", shared=False, questions=flood)
        solved(s, team="untrusted-shared", shared=True, questions=flood[:20])  # shared, but not trusted by B
        s.commit()
        assert observe() == before


@pytest.mark.parametrize("hostile", [
    'apples" OR * NEAR(kites) ^ - {marbles}',
    "AND OR NOT NEAR apples",
    "apples' ; DROP TABLE route_docs; --",
    "\u202e\u0000 apples ! & | :* <-> (",
    "x" * 5000 + " apples",
])
def test_hostile_question_text_is_only_words(sessions: sessionmaker, hostile: str) -> None:
    with sessions() as s:
        solved(s, team="t", shared=False, questions=["Ana has 3 apples. How many apples does ana have now?"])
        s.commit()
        key, score, _ = routed(s, hostile)
        assert 0.0 <= score <= 1.0 + 1e-9
        assert s.scalar(sa.select(sa.func.count()).select_from(RouteDocRow)) == 1


def test_a_problem_is_indexed_once_and_counted_once(sessions: sessionmaker) -> None:
    q = "Bo has 4 cups and 2 bells. How many cups does bo have now?"
    with sessions() as s:
        (pid, bid), = solved(s, team="t", shared=False, questions=[q])
        problem, block = s.get(ProblemRow, pid), repository.get_block(s, block_id=bid)
        assert problem is not None and block is not None
        assert not add_problem(s, problem=problem, block=block)
        s.commit()
        stats = term_stats(s, fingerprint=FP, terms=index_terms(q), team_id=None, sources=[])
        assert stats.n_docs == 1 and stats.df == {"bo": 1, "cups": 1, "bells": 1, "now": 1, "<num>": 1}
        assert s.scalar(sa.select(RouteTermRow.docs).where(RouteTermRow.term == DOCS_TERM)) == 1


def test_search_terms_keep_every_problem_that_can_reach_the_threshold() -> None:
    """The pruning bound on its own: for random documents, any document sharing none of the searched terms scores
    below the threshold (the property that lets the index skip it)."""
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(40)]
    docs = [[rng.choice(vocab[: rng.randint(5, 40)]) for _ in range(rng.randint(2, 12))] for _ in range(300)]
    df = Counter(w for d in docs for w in set(d))
    stats = TermStats(len(docs), dict(df))
    for _ in range(200):
        query = [rng.choice(vocab) for _ in range(rng.randint(1, 8))] + ["<num>"] * rng.randint(0, 3)
        threshold = rng.choice([0.3, 0.5, 0.7, 0.9])
        searched = set(search_terms(query, stats, threshold))
        for i, d in enumerate(docs):
            if not searched & set(d):
                score = _best(query, [(str(i), d)], stats.idf, 0.0).score
                assert score < threshold + 1e-12, (query, d, score, threshold)


def _satisfies(expr: Any, terms: set[str]) -> bool:
    if isinstance(expr, str):
        return expr in terms
    parts = [_satisfies(p, terms) for p in expr[1]]
    return all(parts) if expr[0] == "&" else any(parts)


def test_the_requirement_keeps_every_problem_that_can_reach_the_threshold_and_is_tighter() -> None:
    """The condition the index is asked for: every random document that reaches the threshold satisfies it; and
    it admits fewer documents than sharing one searched term would."""
    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(40)]
    docs = [[rng.choice(vocab[: rng.randint(5, 40)]) for _ in range(rng.randint(2, 12))] for _ in range(300)]
    df = Counter(w for d in docs for w in set(d))
    stats = TermStats(len(docs), dict(df))
    admitted = disjunction = 0
    for _ in range(200):
        query = [rng.choice(vocab) for _ in range(rng.randint(1, 8))] + ["<num>"] * rng.randint(0, 3)
        threshold = rng.choice([0.3, 0.5, 0.7, 0.9])
        expr = requirement(query, stats, threshold)
        searched = set(search_terms(query, stats, threshold))
        for i, d in enumerate(docs):
            score = _best(query, [(str(i), d)], stats.idf, 0.0).score
            ok = expr is not None and _satisfies(expr, set(d))
            if score >= threshold:
                assert ok, (query, d, score, threshold, expr)
            admitted += ok
            disjunction += bool(searched & set(d))
    assert admitted < disjunction
