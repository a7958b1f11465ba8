"""The router: picks exactly one solution block for a new question by lexical similarity of the question text with
the stored problems' questions, numbers masked (a same-structure variant has new constants), or abstains below a
threshold. Two scorers: `lexical` (tf-idf cosine, the default) and `bm25` (Okapi BM25 through rank-bm25, its score
divided by the query's upper bound so one threshold fits every query). `kvgraft bench routing` compares them on
the flywheel sets (distractor families, paraphrases, off-distribution questions); the default scorer and its
threshold were picked on the development set only (docs/FLYWHEEL.md)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from store.route_index import NUMBER, STOP_WORDS, WORD_PATTERN, Retrieval, index_terms
from store.route_index import idf as smoothed_idf
from workers.flywheel.alignment import shape_word

DEFAULT_THRESHOLD = 0.7  # chosen on the dev set by `kvgraft bench routing` (docs/FLYWHEEL.md)
DEFAULT_BM25_THRESHOLD = 0.45  # likewise


def words(text: str) -> list[str]:
    """Content words, with every number replaced by one placeholder (the routing index's analyzer)."""
    return index_terms(text)


@dataclass(frozen=True)
class Candidate:
    key: str  # the block id
    question: str


@dataclass(frozen=True)
class RouteChoice:
    """The router's choice: the best candidate's key if it scored at least the threshold (None: no candidate
    did), its score and the runner-up's (the margin an abstention rests on)."""

    key: str | None
    score: float
    runner_up: float


def _cosine(a: Counter[str], b: Counter[str], idf: Callable[[str], float]) -> float:
    dot = sum(a[w] * b[w] * idf(w) ** 2 for w in a.keys() & b.keys())
    na = math.sqrt(sum((c * idf(w)) ** 2 for w, c in a.items()))
    nb = math.sqrt(sum((c * idf(w)) ** 2 for w, c in b.items()))
    return dot / (na * nb) if na and nb else 0.0


def _scores(query: list[str], docs: Sequence[tuple[str, list[str]]], idf: Callable[[str], float]
            ) -> list[tuple[float, str]]:
    q = Counter(query)
    return sorted(((_cosine(q, Counter(terms), idf), key) for key, terms in docs), reverse=True)


def _best(query: list[str], docs: Sequence[tuple[str, list[str]]], idf: Callable[[str], float],
          threshold: float) -> RouteChoice:
    scores = _scores(query, docs, idf)
    if not scores:
        return RouteChoice(None, 0.0, 0.0)
    best, key = scores[0]
    runner_up = scores[1][0] if len(scores) > 1 else 0.0
    return RouteChoice(key if best >= threshold else None, best, runner_up)


def route(question: str, candidates: Sequence[Candidate], *, threshold: float = DEFAULT_THRESHOLD) -> RouteChoice:
    """The best candidate if its score reaches `threshold`, else an abstention (key None): tf-idf cosine with idf
    over the candidates themselves (the linear scan: every candidate read and scored)."""
    docs = [(c.key, words(c.question)) for c in candidates]
    n = len(docs)
    df = Counter(w for _, d in docs for w in set(d))
    return _best(words(question), docs, lambda w: smoothed_idf(n, df[w]) if w in df else 1.0, threshold)


def route_indexed(question: str, retrieval: Retrieval, *, threshold: float = DEFAULT_THRESHOLD) -> RouteChoice:
    """The same tf-idf cosine over the candidates the routing index returned (store/route_index.py), idf from the
    catalogue's document frequencies; keys are problem ids. The index returns every problem that could reach
    `threshold` (unless it reports truncation), so the routed problem is the linear scan's whenever their idf
    agree; the runner-up is the best of the candidates only."""
    return _best(words(question), [(c.problem_id, list(c.terms)) for c in retrieval.candidates],
                 retrieval.stats.idf, threshold)


def ranked_indexed(question: str, retrieval: Retrieval, *, threshold: float, limit: int) -> list[tuple[float, str]]:
    """The candidates the routing index returned that reach `threshold`, best first (ties by problem id), at most
    `limit`: (score, problem id)."""
    scores = _scores(words(question), [(c.problem_id, list(c.terms)) for c in retrieval.candidates],
                     retrieval.stats.idf)
    return [(score, key) for score, key in scores if score >= threshold][:limit]


def shape_terms(terms: Sequence[str]) -> list[str]:
    """A problem's shape from its index terms: the words no slot renames (verbs, units, comparatives, ...) and the
    number placeholder; people, objects, kin and currencies dropped. Two instances of one template whose people
    and objects are all new have the same shape."""
    return [t for t in terms if t == NUMBER or shape_word(t)]


def shape_query(question: str) -> str:
    """The question's shape as a text the routing index can search (every number written as 1)."""
    return " ".join("1" if t == NUMBER else t for t in shape_terms(words(question)))


def ranked_shape(question: str, retrieval: Retrieval, *, threshold: float, limit: int) -> list[tuple[float, str]]:
    """The candidates ranked by tf-idf cosine of their shapes (shape_terms) with the question's, those reaching
    `threshold`, best first, at most `limit`: (score, problem id)."""
    query = shape_terms(words(question))
    if not query:
        return []
    scores = _scores(query, [(c.problem_id, shape_terms(c.terms)) for c in retrieval.candidates],
                     retrieval.stats.idf)
    return [(score, key) for score, key in scores if score >= threshold][:limit]


def route_bm25(question: str, candidates: Sequence[Candidate], *, threshold: float = DEFAULT_BM25_THRESHOLD,
               k1: float = 1.2, b: float = 0.75) -> RouteChoice:
    """Okapi BM25 over the candidates' content words (numbers masked), normalized to [0, 1] by the score a document
    would reach with every query word saturated: sum over the query's words of idf * (k1 + 1)."""
    from rank_bm25 import BM25Okapi

    if not candidates:
        return RouteChoice(None, 0.0, 0.0)
    corpus = [words(c.question) or ["<empty>"] for c in candidates]
    bm25 = BM25Okapi(corpus, k1=k1, b=b)
    query = words(question)
    bound = sum(max(bm25.idf.get(w, 0.0), 0.0) * (k1 + 1) for w in set(query))
    raw = bm25.get_scores(query) if query else [0.0] * len(candidates)
    scores = sorted(((float(r) / bound if bound > 0 else 0.0, c.key) for r, c in zip(raw, candidates, strict=True)),
                    reverse=True)
    best, key = scores[0]
    runner_up = scores[1][0] if len(scores) > 1 else 0.0
    return RouteChoice(key if best >= threshold else None, best, runner_up)


SCORERS = {"lexical": route, "bm25": route_bm25}


def route_passages(question: str, passages: Sequence[tuple[str, str]], *, threshold: float = 0.6
                   ) -> tuple[str, float] | None:
    """The passage (key, text) that covers the most of the question's content words, weighted by how rare each
    word is across the passages (numbers kept: a needle is often a number); None when the best covers less than
    `threshold` of the question's weight."""
    if not passages:
        return None
    terms = [w for w in WORD_PATTERN.findall(question.casefold()) if w not in STOP_WORDS]
    if not terms:
        return None
    docs = [set(WORD_PATTERN.findall(text.casefold())) for _, text in passages]
    n = len(docs)
    idf = {t: math.log((n + 1) / (1 + sum(t in d for d in docs))) + 1.0 for t in set(terms)}
    total = sum(idf[t] for t in set(terms))
    best_key, best = None, 0.0
    for (key, _), words in zip(passages, docs, strict=True):
        score = sum(idf[t] for t in set(terms) if t in words) / total
        if score > best:
            best_key, best = key, score
    return (best_key, best) if best_key is not None and best >= threshold else None
