"""The recurrence route's parts: finding an exact repeat's verified block (`find_hit`), decoding its answer after
the graft (alone, or several questions' answers together in one batch context), and the answer it makes.

Decoded together, each question's grafted state sits in its own sequence of a batch context, its recurrence query
is fed in one decode call of its own keeping every row (the query class the graft check attests), and the answer
tokens of every question are decoded in shared calls. Graft workers do this only where this host's `batch`
attestation found each grafted answer decoded together equal, token for token and digest for digest, to the same
graft decoded alone in a one-sequence context (workers/serving/batch_check.py: `grafts_exact`); the caller passes
that decision in."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from engine.batching import BatchCore, SequenceJob
from engine.graft import GraftEngine, KVSnapshot
from engine.sampling import Generated, SamplingParams, generate_after_graft
from store.db import owner_key
from store.repository import find_recurrence, get_block, verifying_team
from workers.flywheel.answer import Answer, AnswerRequest, checked, question_digest
from workers.flywheel.attested import attested
from workers.flywheel.prompts import MAX_ANSWER_TOKENS, PromptStyle, recurrence_query, tokens_of
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, read_or_miss
from workers.verify.answer_match import answers_match


@dataclass(frozen=True)
class RecurrenceHit:
    """An exact repeat of a solved question: the block to graft and what its solving verified."""

    block_id: str
    stored_answer: str  # the answer the block's solution printed, verified when it was deposited
    verified_by: str | None  # the team whose answer key verified it
    snapshot: KVSnapshot
    query: tuple[int, ...]  # the recurrence query fed after the graft
    timings_ms: dict[str, float] = field(default_factory=dict)  # lookup, block_read


@dataclass(frozen=True)
class Decoded:
    """The answer decoded after a hit's graft, and how it was computed."""

    generated: Generated
    timings_ms: dict[str, float]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def answer_sampling(style: PromptStyle) -> SamplingParams:
    return SamplingParams(max_tokens=MAX_ANSWER_TOKENS, temperature=0.0, stop=style.answer_stops)


def find_hit(rt: Runtime, request: AnswerRequest) -> RecurrenceHit | None:
    """The verified block of the same normalized question, solved by a team this one grafts from, readable and of
    this engine's fingerprint; else None."""
    engine = request.engine
    t0 = time.perf_counter()
    with rt.session() as s:
        problem = find_recurrence(s, question_digest=question_digest(request.question), team_id=request.team_id)
        if problem is None or problem.block_id is None:
            return None
        row = get_block(s, block_id=problem.block_id)
        stored_answer = str((problem.outcome or {}).get("answer", ""))
        verified_by = verifying_team(s, problem=problem)
    if row is None or row.fingerprint != engine.fingerprint.id:
        return None
    t1 = time.perf_counter()
    block = read_or_miss(rt.blocks, row.fingerprint, row.id, purpose="recurrence", scope=owner_key(request.team_id))
    if block is None:
        return None
    snapshot = block_to_snapshot(block)
    query = tuple(tokens_of(engine, recurrence_query(request.style)))
    return RecurrenceHit(row.id, stored_answer, verified_by, snapshot, query,
                         {"lookup": _ms(t1 - t0), "block_read": _ms(time.perf_counter() - t1)})


def decode_alone(engine: GraftEngine, style: PromptStyle, hit: RecurrenceHit) -> Decoded:
    timings: dict[str, float] = {}
    out = generate_after_graft(engine, hit.snapshot, hit.query, answer_sampling(style), query_call=True,
                               payload_verified=True, timings=timings)
    return Decoded(out, timings)


def can_decode_together(hit: RecurrenceHit) -> bool:
    """A batch sequence starts at position 0 (a block captured elsewhere on the position axis is grafted alone)."""
    return hit.snapshot.pos_start == 0


def decode_together(engine: GraftEngine, style: PromptStyle, hits: list[RecurrenceHit],
                    max_seqs: int) -> list[Decoded | Exception]:
    """Every hit's answer, decoded in one batch context of `max_seqs` sequences (at most that many at a time); a
    hit whose graft cannot be restored or decoded gets its error, and the others their answers."""
    params = answer_sampling(style)
    jobs = [(0, SequenceJob.grafted(hit.snapshot, hit.query, params)) for hit in hits]
    t0 = time.perf_counter()
    with engine.pooled_batch_context(max_seqs) as ctx:
        t1 = time.perf_counter()
        outcomes = BatchCore(engine, ctx).run_each(jobs)
    context_ms = _ms(t1 - t0)
    return [r if isinstance(r, Exception) else
            Decoded(r.generated, {"context": context_ms, "restore": r.timings_ms.get("restore", 0.0),
                                  "feed": r.timings_ms.get("prefill", 0.0), "decode": r.timings_ms.get("decode", 0.0)})
            for r in outcomes]


def hit_answer(rt: Runtime, request: AnswerRequest, hit: RecurrenceHit, decoded: Decoded) -> Answer:
    """The recurrence route's answer: the decoded text, verified when it equals the block's verified answer (and
    the question's own key, where it has one), attested when the block is for the query class run."""
    engine = request.engine
    text = decoded.generated.text.strip() or None
    n = len(decoded.generated.tokens)
    request.ledger.add(n)
    agrees = answers_match(text, hit.stored_answer)
    verdict = checked(text, request.expected, request.verifier)
    detail = "" if agrees else f"decoded {text!r} differs from the verified answer {hit.stored_answer!r}"
    timings = {**hit.timings_ms, **decoded.timings_ms}
    t0 = time.perf_counter()
    is_attested = attested(rt, engine, hit.block_id, len(hit.query), team_id=request.team_id)
    timings["attestation_lookup"] = _ms(time.perf_counter() - t0)
    return Answer(text, "recurrence", hit.block_id, n, verified=agrees and verdict is not False,
                  attested=is_attested, detail=detail, verified_by=hit.verified_by, timings_ms=timings)
