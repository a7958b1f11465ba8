"""The routes of answering, each one small object with one method, `try_answer(rt, request) -> Answer | None`, and
the policy: the ordered list of routes (exact lookup, document context, the model's own agreeing samples, transfer
through one routed solution block); the first answer wins, and no answer is an abstention.

Routes read blocks through the seam's `read_or_miss`: a damaged block is a miss, never a crash."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

import structlog

from engine.graft import GraftEngine
from engine.sampling import SamplingParams, generate
from store.repository import (
    find_recurrence,
    get_block,
    latest_attestation,
    verifying_team,
    visible_solution_blocks,
)
from workers.flywheel.answer import Answer, AnswerParams, AnswerRequest, agreeing, checked, question_digest
from workers.flywheel.documents import answer_from_block, context_query, route_document
from workers.flywheel.prefix import GraftedPrefix, ensure_skill
from workers.flywheel.prompts import (
    MAX_ANSWER_TOKENS,
    PromptStyle,
    question_part,
    recurrence_query,
    tokens_of,
    transfer_part,
)
from workers.flywheel.router import Candidate, route
from workers.flywheel.solve import SolveParams, sample_program, sample_seed
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, read_or_miss
from workers.verify.answer_match import answers_match
from workers.verify.programs import extract_program, verify_program

log = structlog.get_logger(__name__)


class Route(Protocol):
    name: str

    def enabled(self, params: AnswerParams) -> bool: ...

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None: ...


def attested(rt: Runtime, engine: GraftEngine, block_id: str, n_query: int) -> bool:
    """Whether the block is attested byte-exact here (its own attestation, or for a bulk-deposited block the
    probe attestation of this fingerprint and profile). A block never gated here is scheduled for attestation as
    an `attest` task (with a broker; embedded, `kvgraft attest` does it), never gated inside a query; until then
    answers say attested: false."""
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
        log.info("answer.attestation_pending", block_id=block_id, detail="run `kvgraft attest` to gate it here")


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
        problems = {b.id: p for p, b in pool}
    chosen = route(question, candidates, threshold=params.router_threshold)
    if chosen.key is None:
        return None
    with rt.session() as s:  # whose key verified it: looked up for the routed block only, not the whole pool
        by = verifying_team(s, problem=problems[chosen.key])
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
            return Answer(answer, "transfer", chosen.key, spent, True, attested(rt, engine, chosen.key, 8),
                          f"router score {chosen.score:.2f}; sample {k} verified", verified_by=by)
    is_attested = attested(rt, engine, chosen.key, 8)
    if not params.post_graft_gate:
        first = next((a for a in answers if a is not None), None)
        return Answer(first, "transfer", chosen.key, spent, False, is_attested, "post-graft gate off", verified_by=by)
    if expected is not None or verifier is not None:
        return Answer(None, "abstain", chosen.key, spent, False, is_attested,
                      f"post-graft gate: no transferred program verified (router score {chosen.score:.2f})")
    agreed = agreeing(answers, params.samples)
    if agreed is None:
        return Answer(None, "abstain", chosen.key, spent, False, is_attested,
                      "post-graft gate: the transferred programs disagree")
    return Answer(agreed, "transfer", chosen.key, spent, False, is_attested, "samples agree; nothing to verify against",
                  verified_by=by)


class RecurrenceRoute:
    """The normalized question was solved before by a team this one grafts from: graft its block, decode."""

    name = "recurrence"

    def enabled(self, params: AnswerParams) -> bool:
        return True

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None:
        engine, style = request.engine, request.style
        hit = _recurrence(rt, engine, style, request.question, request.team_id)
        if hit is None:
            return None
        block_id, stored, decoded, n, by = hit
        request.ledger.add(n)
        agrees = answers_match(decoded, stored)
        verdict = checked(decoded, request.expected, request.verifier)
        detail = "" if agrees else f"decoded {decoded!r} differs from the verified answer {stored!r}"
        return Answer(decoded, "recurrence", block_id, n, agrees and verdict is not False,
                      attested(rt, engine, block_id, len(tokens_of(engine, recurrence_query(style)))), detail,
                      verified_by=by)


class ContextRoute:
    """A document block whose passage covers the question: graft it, decode a short answer."""

    name = "context"

    def enabled(self, params: AnswerParams) -> bool:
        return params.use_context

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None:
        engine = request.engine
        chosen = route_document(rt, engine, request.question, team_id=request.team_id,
                                threshold=request.params.context_threshold)
        if chosen is None:
            return None
        block_id, score = chosen
        block = read_or_miss(rt.blocks, engine.fingerprint.id, block_id, purpose="context")
        if block is None:
            return None
        answer, n = answer_from_block(rt, engine, block, request.question)
        request.ledger.add(n)
        return Answer(answer, "context", block_id, n, bool(checked(answer, request.expected, request.verifier)),
                      attested(rt, engine, block_id, len(context_query(engine, request.question))),
                      f"document block routed with coverage {score:.2f}")


class DirectRoute:
    """The confidence gate: K samples after the grafted skill prefix; used when they agree and ran cleanly."""

    name = "direct"

    def enabled(self, params: AnswerParams) -> bool:
        return params.use_direct

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None:
        engine, style, params = request.engine, request.style, request.params
        skill = ensure_skill(rt, engine, style)
        prompt = tokens_of(engine, question_part(style, request.question))
        answers, spent = direct_samples(rt, engine, style, prompt, skill, f"direct/{request.question}", params)
        request.ledger.add(spent)
        agreed = agreeing(answers, params.samples)
        if agreed is None:
            return None
        verdict = checked(agreed, request.expected, request.verifier)
        if verdict is False:
            return None
        return Answer(agreed, "direct", None, spent, bool(verdict), False, "the model's own samples agree")


class TransferRoute:
    """One solution block routed to by similarity, grafted, its method applied; the post-graft gate decides."""

    name = "transfer"

    def enabled(self, params: AnswerParams) -> bool:
        return params.use_transfer

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None:
        answer = transfer_answer(rt, request.engine, request.style, request.question, request.team_id,
                                 request.expected, request.verifier, request.params)
        if answer is not None:
            request.ledger.add(answer.decode_tokens)
        return answer


POLICY: tuple[Route, ...] = (RecurrenceRoute(), ContextRoute(), DirectRoute(), TransferRoute())


def run_policy(rt: Runtime, request: AnswerRequest, policy: tuple[Route, ...] = POLICY) -> Answer:
    """The first route that answers (its decode tokens counted with every route tried before it), else abstain."""
    for step in policy:
        if not step.enabled(request.params):
            continue
        answer = step.try_answer(rt, request)
        if answer is not None:
            return replace(answer, decode_tokens=request.ledger.total)
    return Answer(None, "abstain", None, request.ledger.total, False, False,
                  "no recurrence, no agreement, no block routed")
