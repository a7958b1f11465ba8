"""The routes of answering, each one small object with one method, `try_answer(rt, request) -> Answer | None`, and
the policy: the ordered list of routes (exact lookup, document context, the model's own agreeing samples, transfer
through one routed solution block); the first answer wins, and no answer is an abstention.

Routes read blocks through the seam's `read_or_miss`: a damaged block is a miss, never a crash."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

import structlog

from engine.graft import GraftEngine
from store.db import owner_key
from workers.flywheel.answer import Answer, AnswerParams, AnswerRequest, agreeing, checked
from workers.flywheel.attested import attestation
from workers.flywheel.documents import answer_from_block, context_query, route_document
from workers.flywheel.prefix import ensure_skill
from workers.flywheel.prompts import PromptStyle, question_part, tokens_of
from workers.flywheel.recurrence import decode_alone, find_hit, hit_answer
from workers.flywheel.solve import SolveParams, sample_program, sample_seed
from workers.flywheel.transfer import transfer_answer
from workers.runtime import Runtime
from workers.seam import read_or_miss
from workers.verify.programs import extract_program, verify_program

log = structlog.get_logger(__name__)


class Route(Protocol):
    name: str

    def enabled(self, params: AnswerParams) -> bool: ...

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None: ...


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


class RecurrenceRoute:
    """The normalized question was solved before by a team this one grafts from: graft its block, decode."""

    name = "recurrence"

    def enabled(self, params: AnswerParams) -> bool:
        return True

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None:
        hit = find_hit(rt, request)
        if hit is None:
            return None
        return hit_answer(rt, request, hit, decode_alone(request.engine, request.style, hit))


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
        block = read_or_miss(rt.blocks, engine.fingerprint.id, block_id, purpose="context",
                             scope=owner_key(request.team_id))
        if block is None:
            return None
        answer, n = answer_from_block(rt, engine, block, request.question)
        request.ledger.add(n)
        n_query = len(context_query(engine, request.question))  # one decode call: the class the check attests
        att = attestation(rt, engine, block_id, n_query, team_id=request.team_id)
        detail = "; ".join(d for d in (f"document block routed with coverage {score:.2f}",
                                       att.detail([engine.profile(n_query).id])) if d)
        return Answer(answer, "context", block_id, n,
                      verified=bool(checked(answer, request.expected, request.verifier)), attested=att.ok,
                      detail=detail)


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
        return Answer(agreed, "direct", None, spent, verified=bool(verdict), attested=False,
                      detail="the model's own samples agree")


class TransferRoute:
    """One solution block routed to by similarity; its verified parameterized program bound to the question's
    numbers, or the block grafted and its method sampled; the post-graft gate decides (workers/flywheel/transfer.py)."""

    name = "transfer"

    def enabled(self, params: AnswerParams) -> bool:
        return params.use_transfer

    def try_answer(self, rt: Runtime, request: AnswerRequest) -> Answer | None:
        answer = transfer_answer(rt, request)
        if answer is not None:
            request.ledger.add(answer.decode_tokens)
        return answer


POLICY: tuple[Route, ...] = (RecurrenceRoute(), ContextRoute(), DirectRoute(), TransferRoute())
# the policy for a question already found not to be a repeat (workers/queue/recurring.py looked)
AFTER_RECURRENCE: tuple[Route, ...] = tuple(r for r in POLICY if r.name != "recurrence")


def run_policy(rt: Runtime, request: AnswerRequest, policy: tuple[Route, ...] = POLICY) -> Answer:
    """The first route that answers (its decode tokens counted with every route tried before it), else abstain."""
    for step in policy:
        if not step.enabled(request.params):
            continue
        answer = step.try_answer(rt, request)
        if answer is not None:
            return replace(answer, decode_tokens=request.ledger.total)
    return Answer(None, "abstain", None, request.ledger.total, verified=False, attested=False,
                  detail="no recurrence, no agreement, no block routed")
