"""Solving one problem: verify a reference solution, or sample K programs after the grafted instructions prefix
and run each in the sandbox; on the first verified solution deposit a `solution` block. Nothing unverified is ever
deposited.

Idempotent: a problem that already has an outcome is left alone, and a redelivered task finds the samples it
recorded before (samples are keyed by problem and index, and sample k always uses the same seed)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import structlog

from engine.graft import GraftEngine
from engine.sampling import SamplingParams, generate_after_graft
from store.db import BatchRow, ProblemRow, nul_safe
from store.repository import (
    FINAL_PROBLEM_STATUSES,
    Delivery,
    generations_of,
    get_block,
    get_problem,
    record_generation,
    refresh_batch_status,
)
from store.route_index import add_problem
from workers.errors import TextTooLongError, WorkInputError
from workers.flywheel.deposit import deposit_tokens
from workers.flywheel.parameterize import derive
from workers.flywheel.prefix import GraftedPrefix, ensure_skill
from workers.flywheel.prompts import (
    PromptStyle,
    question_part,
    recurrence_query,
    solution_tail,
    style_for,
    tokens_of,
)
from workers.runtime import Runtime
from workers.verify.programs import Verification, extract_program, verify_program

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class SolveParams:
    samples: int = 4
    temperature: float = 0.7
    max_tokens: int = 160


@dataclass(frozen=True)
class SampleOutcome:
    index: int
    text: str
    program: str | None
    verification: Verification
    tokens: int


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sample_seed(key: str, index: int) -> int:
    """The seed of sample `index` for `key` (a problem's question digest): the same problem is sampled the same
    way in every run and on every redelivery of its task."""
    return int.from_bytes(hashlib.sha256(f"{key}/{index}".encode()).digest()[:8], "little")


def sample_program(engine: GraftEngine, skill: GraftedPrefix, prompt_tokens: list[int], *, seed: int,
                   params: SolveParams, style: PromptStyle, temperature: float | None = None) -> tuple[str, int]:
    """One sample after [skill prefix (grafted) + prompt]: the generated text and its token count. A prompt that
    leaves no room for a program in the serving window yields no sample."""
    room = engine.config.n_ctx - skill.n_tokens - len(prompt_tokens)
    if room < 8:
        log.warning("solve.no_room", window=engine.config.n_ctx, prefix=skill.n_tokens, prompt=len(prompt_tokens))
        return "", 0
    out = generate_after_graft(engine, skill.snapshot, prompt_tokens, SamplingParams(
        max_tokens=min(params.max_tokens, room - 1),
        temperature=params.temperature if temperature is None else temperature,
        seed=seed, stop=style.solution_stops), payload_verified=True)
    return out.text, len(out.tokens)


def solution_tokens(engine: GraftEngine, style: PromptStyle, skill: GraftedPrefix, question: str, program: str,
                    answer: str) -> tuple[list[int], str]:
    """[instructions prefix + problem + verified solution + final-answer line], and its text."""
    q_text, tail = question_part(style, question), solution_tail(style, program, answer)
    tokens = list(skill.snapshot.tokens) + tokens_of(engine, q_text) + tokens_of(engine, tail)
    return tokens, q_text + tail


def _record(rt: Runtime, problem_id: str, index: int, prompt_digest: str, text: str, program: str | None,
            verification: Verification, verdict: str) -> None:
    text, program = nul_safe(text), nul_safe(program) if program is not None else None  # digests cover what is kept
    with rt.session() as s:
        record_generation(s, problem_id=problem_id, sample_index=index, prompt_digest=prompt_digest, text=text,
                          text_digest=sha256_text(text), program=program,
                          program_digest=sha256_text(program) if program is not None else None,
                          sandbox_result=verification.sandbox, verdict=verdict, answer=verification.answer)


def _finish(rt: Runtime, problem_id: str, status: str, outcome: dict[str, Any], block_id: str | None = None, *,
            delivery: Delivery | None = None) -> None:
    """Record the problem's one terminal outcome, and end `delivery` in the same transaction; the row is locked, and
    an outcome already recorded (by a duplicate delivery running beside this one) is never overwritten."""
    with rt.session() as s:
        if delivery is not None:
            delivery.end(s)
        problem = s.get(ProblemRow, problem_id, with_for_update=True)
        if problem is None or problem.status in FINAL_PROBLEM_STATUSES:
            log.info("solve.outcome_kept", problem_id=problem_id, kept=problem.status if problem else None,
                     ignored=status)
            return
        problem.status, problem.outcome = status, outcome
        if block_id is not None:
            problem.block_id = block_id
        s.flush()
        if status == "solved" and block_id is not None:
            block = get_block(s, block_id=block_id)
            if block is not None and block.kind == "solution":
                add_problem(s, problem=problem, block=block)  # routable from this commit on
        refresh_batch_status(s, batch_id=problem.batch_id)
    log.info("solve.finished", problem_id=problem_id, status=status, block_id=block_id)


def _deposit_solution(rt: Runtime, engine: GraftEngine, style: PromptStyle, skill: GraftedPrefix, problem: Any,
                      program: str, answer: str, team_id: int, shared: bool) -> str:
    tokens, text = solution_tokens(engine, style, skill, problem.question, program, answer)
    form = derive(program, problem.question, answer)  # signed with the block: transfer binds it to new numbers
    log.info("solve.parameterized", problem_id=problem.id, derived=form is not None,
             params=form.params if form else 0)
    extra = {"parameterized": form.as_meta()} if form is not None else {}
    try:
        result = deposit_tokens(rt, engine, tokens=tokens, probe=tokens_of(engine, recurrence_query(style)),
                                kind="solution", text=text, team_id=team_id, shared=shared,
                                verified_by_team_id=team_id,
                                source={"problem_id": problem.id, "external_id": problem.external_id,
                                        "batch_id": problem.batch_id},
                                meta={"question": problem.question, "answer": answer, "skill_block": skill.block_id,
                                      **extra})
    except TextTooLongError as exc:  # the question (a sample is at most max_tokens) or its reference solution
        raise WorkInputError(f"the question with its verified solution does not fit a block: {exc}") from exc
    return result.block_id


def solve_problem(rt: Runtime, problem_id: str, *, model: str | None = None, params: SolveParams = SolveParams(),
                  delivery: Delivery | None = None) -> str:
    """Solve one stored problem; returns its final status (solved | failed | rejected). The transaction recording
    the outcome also ends `delivery`, the task's counted delivery."""
    with rt.session() as s:
        problem = get_problem(s, problem_id=problem_id)
        if problem is None:
            raise LookupError(f"no problem {problem_id}")
        if problem.status in FINAL_PROBLEM_STATUSES:
            return problem.status
        batch = s.get(BatchRow, problem.batch_id)
        assert batch is not None  # a foreign key
        team_id, shared = batch.team_id, batch.shared
        done = {g.sample_index: g for g in generations_of(s, problem_id=problem_id)}
    engine = rt.engine(model)
    style = style_for(engine)
    skill = ensure_skill(rt, engine, style)
    if problem.solution is not None:
        check = verify_program(problem.solution, answer=problem.answer, verifier=problem.verifier)
        verdict = "reference" if check.verdict == "verified" else check.verdict
        _record(rt, problem_id, 0, sha256_text(""), problem.solution, problem.solution, check,
                verdict if verdict != "unchecked" else "wrong")
        if verdict != "reference" or check.answer is None:
            _finish(rt, problem_id, "rejected",
                    {"reason": f"reference solution failed verification: {verdict}", "sandbox": check.sandbox},
                    delivery=delivery)
            return "rejected"
        block_id = _deposit_solution(rt, engine, style, skill, problem, problem.solution, check.answer, team_id,
                                     shared)
        _finish(rt, problem_id, "solved",
                {"route": "reference", "answer": check.answer, "samples": 0, "sample_tokens": 0}, block_id,
                delivery=delivery)
        return "solved"
    prompt = tokens_of(engine, question_part(style, problem.question))
    prompt_digest = sha256_text(question_part(style, problem.question))
    spent = 0
    for k in range(params.samples):
        if k in done:  # recorded by an earlier delivery of this task
            g = done[k]
            spent += len(engine.tokenize(g.text, add_special=False))
            if g.verdict == "verified" and g.program is not None and g.answer is not None:
                return _deposit_and_finish(rt, engine, style, skill, problem, g.program, g.answer,
                                           team_id, shared, k + 1, spent, delivery=delivery)
            continue
        text, n_tokens = sample_program(engine, skill, prompt, seed=sample_seed(problem.question_digest, k),
                                        params=params, style=style)
        spent += n_tokens
        program = extract_program(text)
        check = verify_program(program, answer=problem.answer, verifier=problem.verifier)
        verdict = check.verdict if check.verdict != "unchecked" else "wrong"
        _record(rt, problem_id, k, prompt_digest, text, program, check, verdict)
        log.info("solve.sample", problem_id=problem_id, index=k, verdict=verdict, tokens=n_tokens)
        if verdict == "verified" and program is not None and check.answer is not None:
            return _deposit_and_finish(rt, engine, style, skill, problem, program, check.answer,
                                       team_id, shared, k + 1, spent, delivery=delivery)
    _finish(rt, problem_id, "failed", {"reason": f"no verified solution in {params.samples} samples",
                                       "samples": params.samples, "sample_tokens": spent}, delivery=delivery)
    return "failed"


def _deposit_and_finish(rt: Runtime, engine: GraftEngine, style: PromptStyle, skill: GraftedPrefix, problem: Any,
                        program: str, answer: str, team_id: int, shared: bool, samples: int, spent: int, *,
                        delivery: Delivery | None) -> str:
    block_id = _deposit_solution(rt, engine, style, skill, problem, program, answer, team_id, shared)
    _finish(rt, problem.id, "solved", {"route": "sampled", "answer": answer, "samples": samples,
                                       "sample_tokens": spent}, block_id, delivery=delivery)
    return "solved"
