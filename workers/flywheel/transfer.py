"""Transfer: a new question answered with the method of one routed solution block.

Two methods, tried in this order under `AnswerParams.transfer_method="auto"`:
1. `program`: the block carries a verified parameterized program (workers/flywheel/parameterize.py) and the
   question has the same structure: its numbers are bound and the program runs in the sandbox (zero decode tokens);
2. `graft`: the block is grafted at its own positions, the question is prefilled after it, and K programs are
   sampled and run in the sandbox.

With an answer key (expected answer or verifier) the first verified answer wins. Without one the post-graft gate
(workers/flywheel/transfer_gate.py) decides; with the gate off, the first answer that ran is returned."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.graft import GraftEngine
from store.db import owner_key
from store.repository import get_problem, graft_sources, verifying_team
from store.route_index import retrieve
from workers.flywheel.answer import Answer, AnswerParams, agreeing
from workers.flywheel.attested import attested, prefill_classes
from workers.flywheel.parameterize import ParameterizedProgram
from workers.flywheel.prefix import GraftedPrefix
from workers.flywheel.prompts import PromptStyle, tokens_of, transfer_part
from workers.flywheel.router import route_indexed
from workers.flywheel.solve import SolveParams, sample_program, sample_seed
from workers.flywheel.structure import Structure, structure_of
from workers.flywheel.transfer_gate import asked_matches, form_fit, program_fit
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, read_or_miss
from workers.verify.programs import extract_program, verify_program

TRANSFER_METHODS = ("auto", "program", "graft")


@dataclass(frozen=True)
class Routed:
    block_id: str
    score: float
    question: str  # the routed problem's question
    verified_by: str | None
    team_id: int | None = None  # the team it was routed for: whose view of its attestations counts


def route_solution(rt: Runtime, engine: GraftEngine, question: str, team_id: int | None,
                   threshold: float) -> Routed | None:
    """The one solution block (of this fingerprint, graftable by the team) whose problem is most like the question,
    or None below the threshold. The routing index returns the few problems that could reach the threshold
    (store/route_index.py); only those are scored."""
    with rt.session() as s:
        sources = graft_sources(s, team_id=team_id) if team_id is not None else []
        found = retrieve(s, question=question, fingerprint=engine.fingerprint.id, team_id=team_id,
                         sources=sources, threshold=threshold)
        chosen = route_indexed(question, found, threshold=threshold)
        if chosen.key is None:
            return None
        routed = next(c for c in found.candidates if c.problem_id == chosen.key)
        problem = get_problem(s, problem_id=routed.problem_id)
        if problem is None:
            return None
        # whose key verified it: looked up for the routed block only, not the whole pool
        return Routed(routed.block_id, chosen.score, problem.question, verifying_team(s, problem=problem), team_id)


def _by_program(form: ParameterizedProgram, mine: Structure, routed: Routed, expected: Any, verifier: Any,
                gate: bool) -> Answer | None:
    keyed = expected is not None or verifier is not None
    fit = form_fit(form, mine)
    if not (fit.applies if gate and not keyed else fit.bindable):  # with a key, the key decides
        return None
    try:
        program = form.bind([n.text for n in mine.numbers])
    except ValueError:  # a number too long to bind: leave it to graft and sample
        return None
    check = verify_program(program, answer=expected, verifier=verifier)
    if check.answer is None or not (check.ran_cleanly or check.verdict in ("verified", "wrong")):
        return None
    if check.verdict == "wrong":
        return None  # the key says no: leave it to the grafted samples
    return Answer(check.answer, "program", routed.block_id, 0, check.verdict == "verified", False,
                  f"verified parameterized program bound to the question's numbers ({fit.reason}); router score "
                  f"{routed.score:.2f}; nothing grafted", verified_by=routed.verified_by)


def _by_graft(rt: Runtime, engine: GraftEngine, style: PromptStyle, question: str, block: Any, mine: Structure,
              routed: Routed, expected: Any, verifier: Any, params: AnswerParams) -> Answer:
    keyed = expected is not None or verifier is not None
    gate = params.post_graft_gate and not keyed
    theirs = structure_of(routed.question)
    prompt = tokens_of(engine, transfer_part(style, question))
    if gate:
        same, score = asked_matches(mine, theirs)
        if not same:  # decided before anything is sampled
            return Answer(None, "abstain", routed.block_id, 0, False, False,
                          f"post-graft gate: the question asks another quantity than the routed problem "
                          f"(similarity {score:.2f})")
    snapshot = block_to_snapshot(block)
    prefix = GraftedPrefix(routed.block_id, snapshot, snapshot.n_tokens)  # the solution block as the prefix
    solve = SolveParams(samples=params.samples, temperature=params.temperature, max_tokens=params.max_tokens)
    answers: list[str | None] = []
    fitting: list[str | None] = []
    reasons: list[str] = []
    spent = 0
    # the query class this path runs: the prompt prefilled on the grid after the block, then one token at a time
    classes = prefill_classes(engine, len(prompt))
    for k in range(params.samples):
        text, n = sample_program(engine, prefix, prompt, seed=sample_seed(f"transfer/{question}", k), params=solve,
                                 style=style)
        spent += n
        program = extract_program(text)
        check = verify_program(program, answer=expected, verifier=verifier)
        answer = check.answer if check.ran_cleanly or check.verdict in ("verified", "wrong") else None
        if check.verdict == "verified":
            return Answer(answer, "transfer", routed.block_id, spent, True,
                          attested(rt, engine, routed.block_id, classes, team_id=routed.team_id),
                          f"router score {routed.score:.2f}; sample {k} verified", verified_by=routed.verified_by)
        fit = program_fit(program, check.ran_cleanly, mine, theirs)
        answers.append(answer)
        fitting.append(answer if fit.passed else None)
        reasons.append(fit.reason())
    is_attested = attested(rt, engine, routed.block_id, classes, team_id=routed.team_id)
    if not params.post_graft_gate:
        first = next((a for a in answers if a is not None), None)
        return Answer(first, "transfer", routed.block_id, spent, False, is_attested, "post-graft gate off",
                      verified_by=routed.verified_by)
    if keyed:
        return Answer(None, "abstain", routed.block_id, spent, False, is_attested,
                      f"post-graft gate: no transferred program verified (router score {routed.score:.2f})")
    agreed = agreeing(fitting, params.samples)
    if agreed is None:
        return Answer(None, "abstain", routed.block_id, spent, False, is_attested,
                      f"post-graft gate: too few fitting samples agree ({'; '.join(reasons)})")
    return Answer(agreed, "transfer", routed.block_id, spent, False, is_attested,
                  "post-graft gate: the samples fit the question and agree; nothing to verify against",
                  verified_by=routed.verified_by)


def transfer_answer(rt: Runtime, engine: GraftEngine, style: PromptStyle, question: str, team_id: int | None,
                    expected: Any, verifier: Any, params: AnswerParams) -> Answer | None:
    """The transfer route's answer (None: no block routed, or the routed block could not be read)."""
    if params.transfer_method not in TRANSFER_METHODS:
        raise ValueError(f"transfer_method must be one of {', '.join(TRANSFER_METHODS)}")
    routed = route_solution(rt, engine, question, team_id, params.router_threshold)
    if routed is None:
        return None
    block = read_or_miss(rt.blocks, engine.fingerprint.id, routed.block_id, purpose="transfer",
                         scope=owner_key(team_id))
    if block is None:
        return None
    mine = structure_of(question)
    if params.transfer_method in ("auto", "program"):
        form = ParameterizedProgram.from_meta(block.meta.get("parameterized"))
        answer = None if form is None else _by_program(form, mine, routed, expected, verifier,
                                                       params.post_graft_gate)
        if answer is not None:
            return answer
        if params.transfer_method == "program":
            return Answer(None, "abstain", routed.block_id, 0, False, False,
                          "no verified parameterized program applies to this question" if form is not None
                          else "the routed block carries no parameterized program")
    return _by_graft(rt, engine, style, question, block, mine, routed, expected, verifier, params)
