"""Answering a question through the library, in this order: exact lookup (recurrence), the confidence gate
(direct), transfer through one routed solution block, abstain. Every answer names its route, block, decode tokens,
and whether it was verified and its block attested on this machine."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Any

import structlog

from engine.graft import GraftEngine
from engine.sampling import SamplingParams, generate
from store.db import Query
from store.repository import (
    find_recurrence,
    get_block,
    latest_attestation,
    verifying_team,
    visible_solution_blocks,
)
from workers.flywheel.documents import answer_from_block, context_query, route_document
from workers.flywheel.prefix import GraftedPrefix, ensure_skill
from workers.flywheel.prompts import (
    MAX_ANSWER_TOKENS,
    PromptStyle,
    normalize_question,
    question_part,
    recurrence_query,
    style_for,
    tokens_of,
    transfer_part,
)
from workers.flywheel.router import DEFAULT_THRESHOLD, Candidate, route
from workers.flywheel.solve import SolveParams, sample_program, sample_seed
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, read_or_miss
from workers.verify.answer_match import answers_match, number_key
from workers.verify.programs import extract_program, verify_program

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class AnswerParams:
    samples: int = 4
    temperature: float = 0.7
    max_tokens: int = 160
    router_threshold: float = DEFAULT_THRESHOLD
    post_graft_gate: bool = True
    use_direct: bool = True
    use_transfer: bool = True
    use_context: bool = True
    context_threshold: float = 0.6


@dataclass(frozen=True)
class Answer:
    answer: str | None
    route: str  # recurrence | context | direct | transfer | abstain
    block_id: str | None
    decode_tokens: int
    verified: bool
    attested: bool
    detail: str = ""
    query_id: str | None = None
    verified_by: str | None = None  # the team whose answer key verified the block this answer rests on


    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def question_digest(question: str) -> str:
    return hashlib.sha256(normalize_question(question).encode("utf-8")).hexdigest()


def _checked(answer: str | None, expected: Any, verifier: Any) -> bool | None:
    """True/False when the question carries an answer or verifier to check against, None when it does not."""
    if answer is None:
        return False if expected is not None or verifier is not None else None
    if verifier is not None:
        return verify_program(f"print({answer!r})", verifier=verifier).verdict == "verified"
    if expected is not None:
        return answers_match(answer, expected)
    return None


def _attested(rt: Runtime, engine: GraftEngine, block_id: str, n_query: int) -> bool:
    """Whether the block is attested byte-exact here (its own attestation, or for a bulk-deposited block the
    probe attestation of this fingerprint and profile). A block never gated here is scheduled for attestation:
    an `attest` task with a broker, else gated inline once per process; until then answers say attested: false."""
    profile_id = engine.profile(n_query).id
    with rt.session() as s:
        att = latest_attestation(s, block_id=block_id, fingerprint=engine.fingerprint.id, profile_id=profile_id)
        if att is None:
            row = get_block(s, block_id=block_id)
            bulk = row is not None and row.kind == "document"
            probe = latest_attestation(s, block_id=None, fingerprint=engine.fingerprint.id, profile_id=profile_id)
            if bulk and probe is not None:
                return probe.status == "attested"
    if att is not None:
        return att.status == "attested"
    _schedule_attestation(rt, block_id)
    return False


def _schedule_attestation(rt: Runtime, block_id: str) -> None:
    key = f"attest-scheduled|{block_id}"
    if rt.memo.get(key):
        return
    rt.memo[key] = True
    if rt.settings.broker_url:
        from workers.queue.celery_app import send

        send(rt.settings.broker_url, "kvgraft.attest_block", block_id)
        log.info("answer.attest_enqueued", block_id=block_id)
    else:
        from workers.upkeep.attestation import attest_stored_block

        result = attest_stored_block(rt, block_id)
        log.info("answer.attested_inline", block_id=block_id, status=result["status"])


def _recurrence(rt: Runtime, engine: GraftEngine, style: PromptStyle, question: str,
                team_id: int | None) -> tuple[str, str, str | None, int, str | None] | None:
    """(block id, stored verified answer, decoded answer, decode tokens, verifying team) for an exact repeat, or
    None."""
    with rt.session() as s:
        problem = find_recurrence(s, question_digest=question_digest(question), team_id=team_id)
        if problem is None or problem.block_id is None:
            return None
        row = get_block(s, block_id=problem.block_id)
        stored_answer = str((problem.outcome or {}).get("answer", ""))
        verified_by = verifying_team(s, problem=problem)
    if row is None or row.fingerprint != engine.fingerprint.id:
        return None
    block = read_or_miss(rt.blocks, row.fingerprint, row.id, purpose="recurrence")
    if block is None:
        return None
    snapshot = block_to_snapshot(block)
    query = tokens_of(engine, recurrence_query(style))
    with engine.open_context() as ctx:
        engine.restore(ctx, snapshot, payload_verified=True)
        logits = engine.query(ctx, query, pos0=snapshot.pos_end).rows[-1]
        out = generate(engine, ctx, pos=snapshot.pos_end + len(query), logits=logits,
                       params=SamplingParams(max_tokens=MAX_ANSWER_TOKENS, temperature=0.0, stop=style.answer_stops))
    decoded = out.text.strip() or None
    return row.id, stored_answer, decoded, len(out.tokens), verified_by


def _agreeing(answers: list[str | None], samples: int) -> str | None:
    """The answer at least ceil(2K/3) of the K samples printed (numbers compared by value), else None."""
    def key(a: str) -> str:
        return number_key(a) or a

    keyed = [key(a) for a in answers if a is not None]
    if not keyed:
        return None
    value, count = Counter(keyed).most_common(1)[0]
    if count < max(2, -(-2 * samples // 3)):
        return None
    return next(a for a in answers if a is not None and key(a) == value)


def direct_samples(rt: Runtime, engine: GraftEngine, style: PromptStyle, prompt: list[int], skill: Any, seed_key: str,
                    params: AnswerParams) -> tuple[list[str | None], int]:
    answers: list[str | None] = []
    spent = 0
    solve = SolveParams(samples=params.samples, temperature=params.temperature, max_tokens=params.max_tokens)
    for k in range(params.samples):
        text, n = sample_program(engine, skill, prompt, seed=sample_seed(seed_key, k), params=solve, style=style)
        spent += n
        check = verify_program(extract_program(text))
        answers.append(check.answer if check.ran_cleanly else None)
    return answers, spent


def transfer_answer(rt: Runtime, engine: GraftEngine, style: PromptStyle, question: str, team_id: int | None,
              expected: Any, verifier: Any, params: AnswerParams) -> Answer | None:
    with rt.session() as s:
        pool = visible_solution_blocks(s, team_id=team_id, fingerprint=engine.fingerprint.id)
        candidates = [Candidate(b.id, p.question) for p, b in pool]
        verifiers = {b.id: verifying_team(s, problem=p) for p, b in pool}
    chosen = route(question, candidates, threshold=params.router_threshold)
    if chosen.key is None:
        return None
    by = verifiers.get(chosen.key)
    block = read_or_miss(rt.blocks, engine.fingerprint.id, chosen.key, purpose="transfer")
    if block is None:
        return None
    snapshot = block_to_snapshot(block)
    prompt = tokens_of(engine, transfer_part(style, question))
    solve = SolveParams(samples=params.samples, temperature=params.temperature, max_tokens=params.max_tokens)
    answers: list[str | None] = []
    spent = 0
    prefix = GraftedPrefix(chosen.key, snapshot, snapshot.n_tokens)  # the solution block plays the prefix's role
    for k in range(params.samples):
        text, n = sample_program(engine, prefix, prompt, seed=sample_seed(f"transfer/{question}", k), params=solve,
                                 style=style)
        spent += n
        check = verify_program(extract_program(text), answer=expected, verifier=verifier)
        answer = check.answer if check.ran_cleanly or check.verdict in ("verified", "wrong") else None
        answers.append(answer)
        if check.verdict == "verified":
            return Answer(answer, "transfer", chosen.key, spent, True, _attested(rt, engine, chosen.key, 8),
                          f"router score {chosen.score:.2f}; sample {k} verified", verified_by=by)
    attested = _attested(rt, engine, chosen.key, 8)
    if not params.post_graft_gate:
        first = next((a for a in answers if a is not None), None)
        return Answer(first, "transfer", chosen.key, spent, False, attested, "post-graft gate off", verified_by=by)
    if expected is not None or verifier is not None:
        return Answer(None, "abstain", chosen.key, spent, False, attested,
                      f"post-graft gate: no transferred program verified (router score {chosen.score:.2f})")
    agreed = _agreeing(answers, params.samples)
    if agreed is None:
        return Answer(None, "abstain", chosen.key, spent, False, attested,
                      "post-graft gate: the transferred programs disagree")
    return Answer(agreed, "transfer", chosen.key, spent, False, attested, "samples agree; nothing to verify against",
                  verified_by=by)


def query_row(question: str, team_id: int | None, result: Answer) -> Query:
    """The `queries` row recording an answer."""
    return Query(team_id=team_id, question=question, question_digest=question_digest(question),
                 answer=result.answer, route=result.route, block_id=result.block_id,
                 decode_tokens=result.decode_tokens, verified=result.verified, attested=result.attested,
                 verified_by=result.verified_by)


def answer_question(rt: Runtime, question: str, *, team_id: int | None = None, model: str | None = None,
                    expected: Any = None, verifier: Any = None, params: AnswerParams = AnswerParams(),
                    record: bool = True) -> Answer:
    """Answer and (with `record`) store the answer as a `queries` row; callers that must record it together with
    other state in one transaction pass record=False and use query_row()."""
    engine = rt.engine(model)
    style = style_for(engine)
    result = _answer(rt, engine, style, question, team_id, expected, verifier, params)
    if not record:
        return result
    with rt.session() as s:
        row = query_row(question, team_id, result)
        s.add(row)
        s.flush()
        query_id = row.id
    log.info("answer.done", route=result.route, block_id=result.block_id, verified=result.verified,
             decode_tokens=result.decode_tokens)
    return replace(result, query_id=query_id)


def _answer(rt: Runtime, engine: GraftEngine, style: PromptStyle, question: str, team_id: int | None,
            expected: Any, verifier: Any, params: AnswerParams) -> Answer:
    hit = _recurrence(rt, engine, style, question, team_id)
    if hit is None and params.use_context:
        chosen = route_document(rt, engine, question, team_id=team_id, threshold=params.context_threshold)
        block = None if chosen is None else read_or_miss(rt.blocks, engine.fingerprint.id, chosen[0],
                                                         purpose="context")
        if chosen is not None and block is not None:
            block_id, score = chosen
            answer, n = answer_from_block(rt, engine, block, question)
            checked = _checked(answer, expected, verifier)
            return Answer(answer, "context", block_id, n, bool(checked),
                          _attested(rt, engine, block_id, len(context_query(engine, question))),
                          f"document block routed with coverage {score:.2f}")
    if hit is not None:
        block_id, stored, decoded, n, by = hit
        agrees = answers_match(decoded, stored)
        checked = _checked(decoded, expected, verifier)
        verified = agrees and checked is not False
        detail = "" if agrees else f"decoded {decoded!r} differs from the verified answer {stored!r}"
        return Answer(decoded, "recurrence", block_id, n, verified,
                      _attested(rt, engine, block_id, len(tokens_of(engine, recurrence_query(style)))), detail,
                      verified_by=by)
    skill = ensure_skill(rt, engine, style)
    spent = 0
    if params.use_direct:
        prompt = tokens_of(engine, question_part(style, question))
        answers, spent = direct_samples(rt, engine, style, prompt, skill, f"direct/{question}", params)
        agreed = _agreeing(answers, params.samples)
        if agreed is not None:
            checked = _checked(agreed, expected, verifier)
            if checked is not False:
                return Answer(agreed, "direct", None, spent, bool(checked), False, "the model's own samples agree")
    if params.use_transfer:
        transferred = transfer_answer(rt, engine, style, question, team_id, expected, verifier, params)
        if transferred is not None:
            return replace(transferred, decode_tokens=spent + transferred.decode_tokens)
    return Answer(None, "abstain", None, spent, False, False, "no recurrence, no agreement, no block routed")
