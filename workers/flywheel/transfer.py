"""Transfer: a new question answered with the method of one routed solution block.

Two methods, tried in this order under `AnswerParams.transfer_method="auto"`:
1. `program`: a solution block whose problem the question aligns with (workers/flywheel/alignment.py: the same
   text but for numbers, people's names and objects renamed consistently, statements in any order, the same asked
   quantity) and that carries a verified parameterized program (workers/flywheel/parameterize.py): the question's
   numbers are bound to the parameters they align with and the program runs in the sandbox (zero decode tokens).
   The candidates are the team's solution problems the router scores at least PROGRAM_ROUTE_FLOOR, best first:
   alignment, not the lexical score, decides, so a question whose names and objects are all new still finds its
   problem;
2. `graft`: the block the router picks (threshold as for every route) is grafted at its own positions, the
   question is prefilled after it, and K programs are sampled and run in the sandbox.

With an answer key (expected answer or verifier) the first verified answer wins. Without one the post-graft gate
(workers/flywheel/transfer_gate.py) decides; with the gate off, the first answer that ran is returned."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from engine.graft import GraftEngine
from store.db import owner_key
from store.repository import get_problem, graft_sources, verifying_team
from store.route_index import retrieve
from workers.flywheel.alignment import (
    CURRENCY_PREFIXES,
    CURRENCY_SYMBOLS,
    CURRENCY_WORDS,
    LABEL_LIKE_SIGNS,
    Alignment,
    align,
    currencies_of,
    lemma,
)
from workers.flywheel.answer import Answer, AnswerRequest, agreeing
from workers.flywheel.attested import attested, prefill_classes
from workers.flywheel.parameterize import EXPLAINED, PARAM, ParameterizedProgram, numeric_literals
from workers.flywheel.prefix import GraftedPrefix
from workers.flywheel.prompts import tokens_of, transfer_part
from workers.flywheel.router import ranked_indexed, ranked_shape, route_indexed, shape_query
from workers.flywheel.solve import SolveParams, sample_program, sample_seed
from workers.flywheel.structure import QuestionNumber, question_numbers, structure_of
from workers.flywheel.transfer_gate import answer_out_of_domain, asked_matches, program_fit
from workers.runtime import Runtime
from workers.seam import block_to_snapshot, read_or_miss
from workers.verify.answer_match import answers_match
from workers.verify.programs import extract_program, verify_program

TRANSFER_METHODS = ("auto", "program", "graft")
PROGRAM_ROUTE_FLOOR = 0.3  # lexical score a program-route candidate needs (alignment decides; docs/FLYWHEEL.md)
PROGRAM_ROUTE_CANDIDATES = 8  # the best this many are aligned (by words, and as many more by shape)
SHAPE_FLOOR = 0.5  # shape score a program-route candidate found by shape needs (docs/FLYWHEEL.md)
_CARDINALS = {w: str(n) for n, w in enumerate("zero one two three four five six seven eight nine ten eleven "
                                             "twelve".split())}
_ORDINAL_FRACTIONS = frozenset("third quarter".split())
_POWERS = {"hundred": "100", "thousand": "1000", "million": "1000000"}
_DENOMINATORS = {**{w: n for n, ws in {"2": "half halves", "3": "third thirds", "4": "quarter quarters fourth fourths",
                                       "5": "fifth fifths", "6": "sixth sixths", "7": "seventh sevenths",
                                       "8": "eighth eighths", "9": "ninth ninths", "10": "tenth tenths"}.items()
                    for w in ws.split()}}


def _spelled(routed_question: str, uses: Counter[str] | None = None) -> Counter[str]:
    """The constants a fraction or a multiple spelled in words states, each as often as the text spells it: "three
    fifths" (3 and 5), "four times" (4), "a fifth" (5), "a thousand X in a Y" (1000), "time and a half" (3 and 2, or 1.5
    where `uses`, the program's constants, has 1.5), "two and a half" (5 and 2, or 2.5). Those words must agree,
    so the constants hold for the renamed question too; a number word elsewhere ("two shops") explains nothing (a
    program's 2 may still be a bicycle's wheels), and one spelled 4 explains one 4 of the program, not a car's 4
    wheels besides ("four times as many cars ... wheels"). A round trip asked for its money, distance or time states a 2
    (_round_trip_asked)."""
    words = re.findall(r"[a-z]+", routed_question.casefold())
    out: Counter[str] = Counter()
    for k in range(len(words) - 3):  # "time and a half" (3/2 or 1.5), "two and a half" (5/2 or 2.5)
        if words[k + 1:k + 4] == ["and", "a", "half"] and (words[k] == "time" or words[k] in _CARDINALS):
            whole = 1 if words[k] == "time" else int(_CARDINALS[words[k]])
            # the program writes the one form or the other: where it writes 1.5, the 3 and the 2 stay unexplained
            # (a tricycle's 3 wheels; review 7)
            out.update((f"{whole}.5",) if uses is not None and uses[f"{whole}.5"] else (str(2 * whole + 1), "2"))
    for k, (a, b, c) in enumerate(zip(words, words[1:], [*words[2:], ""], strict=False)):
        if a in _CARDINALS and b in _DENOMINATORS:
            out.update((_CARDINALS[a], _DENOMINATORS[b]))
        elif a in ("a", "an") and b in _DENOMINATORS and c == "of" and _DENOMINATORS[b] not in ("2", "3", "4"):
            out[_DENOMINATORS[b]] += 1  # "a fifth of the price": 5 (a half, third or quarter: EXPLAINED's words)
        elif a in _CARDINALS and b == "times":
            out[_CARDINALS[a]] += 1
        elif a in ("a", "one") and b in _POWERS and k + 4 < len(words) and words[k + 3] == "in" \
                and words[k + 4] in ("a", "an", "one", "each", "every"):
            # a measure's size in another ("a thousand megabytes in a gigabyte"): 1000; not "a thousand phones" or
            # "a hundred and fifty children", whose number a renamed object may carry (NOTE-review8 4)
            out[_POWERS[b]] += 1
    if _round_trip_asked(routed_question):
        out["2"] += 1  # the way there and the way back
    return out


# what a trip's own quantity is asked in: money, a distance, a time
_TRIP_MEASURES = frozenset("""kilometers kilometer km miles mile meters hours hour minutes minute fare fares toll tolls
    much""".split())


def _round_trip_asked(routed_question: str) -> bool:
    """Whether the asked sentence asks for a round trip's money, distance or time ("How many dollars does Rashid pay
    in tolls for the round trip?"): then it states one 2 (there and back). Not a round trip that only sets the scene
    ("... makes a round trip to the shop. How many wheels did he fix?": the 2 may be a bicycle's wheels,
    NOTE-review10)."""
    asked = re.split(r"(?<=[.!?])\s+", routed_question.strip())[-1].casefold()
    words = set(re.findall(r"[^\W\d_]+", asked))
    return re.search(r"\bround trips?\b", asked) is not None \
        and bool(words & _TRIP_MEASURES or any(w in CURRENCY_WORDS for w in words))


def unexplained_constants(body: str, routed_question: str, renamed: Iterable[str] = ()) -> list[str]:
    """The program's own constants (other than 0 and 1) that no fixed word of the routed problem explains: a
    constant the objects may carry ("5 bicycles" -> "5 tricycles" keeps the 2 wheels of a bicycle). A word of an
    object the question renames (`renamed`: the alignment's objects, "double - decker bus") explains nothing: it
    is not in the question ("each double-decker bus" -> "each van" drops the "double")."""
    found = re.findall(r"[a-z]+|%", routed_question.casefold())
    words = Counter(found)
    # "third" and "quarter" as an ordinal or a coin ("a third grader", "the third day") explain no 3 or 4: only as
    # a fraction, after a number word or "a"/"an", or before "of" (NOTE-review7b)
    for k, word in enumerate(found):
        if word in _ORDINAL_FRACTIONS and not ((k and (found[k - 1] in _CARDINALS or found[k - 1] in ("a", "an")))
                                               and (k + 1 < len(found) and found[k + 1] == "of")
                                               or (k and found[k - 1] in _CARDINALS and found[k - 1] != "one")):
            words[word] -= 1
    for word in {w for name in renamed for w in re.findall(r"[a-z]+", name.casefold())}:
        for form in [k for k in words if k == word or lemma(k) == word]:
            del words[form]
    uses = Counter(value for _, value in numeric_literals(body) or [])  # 2 and 2.0 are one constant
    spelled = _spelled(routed_question, Counter({str(v): n for v, n in uses.items()}))
    # each fixed word explains one use of its constant: "twice as many bicycles ... wheels" explains one 2, not
    # the bicycle's 2 wheels besides (a renamed object may carry another number of them)
    return sorted(str(v) for v in uses if str(v) not in ("0", "1")
                  and uses[v] > spelled[str(v)] + sum(words[w] for w in EXPLAINED.get(str(v), "").split()))


@dataclass(frozen=True)
class Routed:
    block_id: str
    score: float
    question: str  # the routed problem's question
    verified_by: str | None
    team_id: int | None = None  # the team it was routed for: whose view of its attestations counts
    answer: Any = None  # the routed problem's verified answer


def _routed(rt: Runtime, problem_id: str, block_id: str, score: float, team_id: int | None) -> Routed | None:
    with rt.session() as s:
        problem = get_problem(s, problem_id=problem_id)
        if problem is None:
            return None
        # whose key verified it: looked up for the routed block only, not the whole pool
        return Routed(block_id, score, problem.question, verifying_team(s, problem=problem), team_id,
                      (problem.outcome or {}).get("answer", problem.answer))


def _retrieve(rt: Runtime, engine: GraftEngine, question: str, team_id: int | None, threshold: float) -> Any:
    with rt.session() as s:
        sources = graft_sources(s, team_id=team_id) if team_id is not None else []
        return retrieve(s, question=question, fingerprint=engine.fingerprint.id, team_id=team_id,
                        sources=sources, threshold=threshold)


def route_solution(rt: Runtime, engine: GraftEngine, question: str, team_id: int | None,
                   threshold: float) -> Routed | None:
    """The one solution block (of this fingerprint, graftable by the team) whose problem is most like the question,
    or None below the threshold. The routing index returns the few problems that could reach the threshold
    (store/route_index.py); only those are scored."""
    found = _retrieve(rt, engine, question, team_id, threshold)
    chosen = route_indexed(question, found, threshold=threshold)
    if chosen.key is None:
        return None
    routed = next(c for c in found.candidates if c.problem_id == chosen.key)
    return _routed(rt, routed.problem_id, routed.block_id, chosen.score, team_id)


def program_candidates(rt: Runtime, engine: GraftEngine, question: str, team_id: int | None) -> list[Routed]:
    """The solution problems the program route aligns the question with: by words, score at least
    PROGRAM_ROUTE_FLOOR, the best PROGRAM_ROUTE_CANDIDATES first; then by shape (numbers, people, objects, kin and
    currencies masked: router.shape_terms), score at least SHAPE_FLOOR, the best PROGRAM_ROUTE_CANDIDATES not
    already found. So an instance whose people and objects are all new still finds its problem; alignment
    decides."""
    found = _retrieve(rt, engine, question, team_id, PROGRAM_ROUTE_FLOOR)
    blocks = {c.problem_id: c.block_id for c in found.candidates}
    ranked = ranked_indexed(question, found, threshold=PROGRAM_ROUTE_FLOOR, limit=PROGRAM_ROUTE_CANDIDATES)
    shape = shape_query(question)
    if shape:
        shaped = _retrieve(rt, engine, shape, team_id, SHAPE_FLOOR)
        blocks |= {c.problem_id: c.block_id for c in shaped.candidates}
        seen = {key for _, key in ranked}
        ranked += [(score, key) for score, key in ranked_shape(question, shaped, threshold=SHAPE_FLOOR,
                                                               limit=PROGRAM_ROUTE_CANDIDATES + len(seen))
                   if key not in seen][:PROGRAM_ROUTE_CANDIDATES]
    out = [_routed(rt, key, blocks[key], score, team_id) for score, key in ranked]
    return [r for r in out if r is not None]


@dataclass(frozen=True)
class ProgramTry:
    """What the program route found: its answer (None: it did not answer) and the report of every candidate it
    aligned the question with (the answer's `binding`)."""

    answer: Answer | None
    binding: dict[str, Any]


def _bound(form: ParameterizedProgram, values: list[str], routed: Routed, expected: Any, verifier: Any,
           gate: bool, how: str) -> tuple[Answer | None, str]:
    """Run the form bound to `values`; the answer (None when it did not answer) and why."""
    keyed = expected is not None or verifier is not None
    try:
        program = form.bind(values)
    except ValueError as exc:  # a number too long to bind: leave it to graft and sample
        return None, str(exc)
    check = verify_program(program, answer=expected, verifier=verifier)
    if check.answer is None or not (check.ran_cleanly or check.verdict in ("verified", "wrong")):
        return None, f"the bound program did not run cleanly ({check.verdict})"
    if check.verdict == "wrong":
        return None, "the answer key says the bound program's answer is wrong"  # left to the grafted samples
    if gate and not keyed:
        odd = answer_out_of_domain(check.answer, routed.answer)
        if odd is not None:
            return None, odd
    return Answer(check.answer, "program", routed.block_id, 0, verified=check.verdict == "verified", attested=False,
                  detail=f"verified parameterized program bound to the question's numbers by {how}; router score "
                         f"{routed.score:.2f}; nothing grafted", verified_by=routed.verified_by), "answered"


def _form_of(rt: Runtime, engine: GraftEngine, routed: Routed) -> ParameterizedProgram | None:
    block = read_or_miss(rt.blocks, engine.fingerprint.id, routed.block_id, purpose="transfer",
                         scope=owner_key(routed.team_id))
    return None if block is None else ParameterizedProgram.from_meta(block.meta.get("parameterized"))


def _tried(routed: Routed, alignment: Alignment | None, outcome: str) -> dict[str, Any]:
    return {"block_id": routed.block_id, "router_score": round(routed.score, 3), "outcome": outcome,
            **({"alignment": alignment.as_dict()} if alignment is not None else {})}


def form_refusal(form: ParameterizedProgram, alignment: Alignment, routed_question: str) -> str | None:
    """Why an aligned question may not bind the routed problem's form, or None: the alignment bound other numbers
    than the form's; it changes a label, a number the program does not use that counts nothing (_a_label), or an
    unused number written twice in one place only; it renames the currency where the routed problem counts coins or
    subunits or names a second currency ("How many dimes ... $3" -> "3 florins"); or it renames objects and the
    program has constants of its own ("5 bicycles ... wheels" -> "5 tricycles": the 2 is the object's)."""
    if form.numbers and tuple(b.routed for b in sorted(alignment.bindings, key=lambda b: b.param)) != form.numbers:
        return "the routed problem's numbers are not the form's"
    used = {int(i) for i in re.findall(rf"\b{PARAM}(\d+)\b", form.body)}
    written = question_numbers(routed_question)
    label = next((b for b in alignment.bindings if b.param not in used and not answers_match(b.question, b.routed)
                  and b.param < len(written) and _a_label(routed_question, written[b.param])), None)
    if label is not None:
        # a number the program does not use that names no quantity says which one ("In 2019, ... In 2021, ... in
        # 2021?", "in week 2"): another one may ask about another statement (NOTE-review9)
        return (f"the question changes {label.routed} -> {label.question}, a number the routed program does not "
                "use and that counts nothing (a label, which must stay)")
    # an unused number written more than once that the question changes in one place only ("Lane 4 is 400 meters
    # long. Ana runs lane 4" -> "Lane 6 ... lane 4": NOTE-review9b): it names one thing twice, the question two
    by_value: dict[str, set[str]] = {}
    for b in alignment.bindings:
        if b.param not in used:
            by_value.setdefault(b.routed, set()).add(b.question)
    split = next((value for value, images in by_value.items() if len(images) > 1), None)
    if split is not None:
        return (f"the question writes {split}, a number the routed program does not use, as "
                f"{' and '.join(sorted(by_value[split]))}: one thing named twice becomes two")
    renamed = {w.casefold() for a, b in alignment.renames if a != b and (_a_currency(a) or _a_currency(b))
               for w in (a, b)}
    coins = _COIN_WORDS & set(re.findall(r"[a-z]+", routed_question.casefold())) - renamed
    if renamed and (coins or len(currencies_of(routed_question)) > 1):
        # "How many dimes ... $3" -> "... 3 florins": a coin counts in one currency only; "2 shillings to the
        # florin" -> "to the guilder": a rate between two currencies holds for those two (NOTE-review10b)
        return (f"the question renames the currency and the routed problem counts its coins or subunits, or names "
                f"another currency ({', '.join(sorted(coins)) or 'several currencies'})")
    constants = unexplained_constants(form.body, routed_question, alignment.objects)
    if alignment.objects and constants:
        return (f"the question renames objects ({', '.join(alignment.objects)}) and the program has constants of "
                f"its own ({', '.join(constants)})")
    return None


# coins and subunits, each of one currency: a question that renames the currency keeps none of them
_COIN_WORDS = frozenset("""dime dimes nickel nickels penny pennies pence cent cents centavo centavos centime centimes
    kopek kopeks kopecks paisa paise fils halala halalas piastre piastres satang sen tiyin grosz groszy haler
    halers stuiver stuivers quarters kobo pesewa pesewas""".split())


def _a_currency(word: str) -> bool:
    """Whether a rename's word is a currency: a sign, a letter sign or a currency's word."""
    return word in CURRENCY_SYMBOLS or word in CURRENCY_PREFIXES or word.casefold() in CURRENCY_WORDS \
        or (len(word) == 1 and unicodedata.category(word) == "Sc")


# nouns that a number after them labels ("bus 7", "room 12", "grade 3", "player #9"): which one, not how many
_LABEL_NOUNS = frozenset("""bus buses room rooms grade grades chapter chapters lane lanes flight flights locker lockers
    gate gates platform platforms table tables level levels floor floors page aisle aisles seat row rows route
    routes line lines track tracks court courts field fields hole holes stage stages round rounds game games match
    matches episode episodes season seasons unit units apartment apartments suite suites house number day days
    week weeks year years class classes team teams group groups station stations exit exits ward wards block
    blocks lot lots bay bays door doors window windows box boxes cabin cabins car cars player players""".split())


def _a_label(question: str, number: QuestionNumber) -> bool:
    """Whether a number of the question names no quantity: after a label noun or "#" ("bus 7", "room 12", "player
    #9", "in week 2") or a letter sign that also labels ("G1", "RO2": LABEL_LIKE_SIGNS), or with no sign written
    against it ("$20", "kr20"), no percent sign and no lowercase word
    right after it ("20 liters", "6 rabbits"): "In 2019, ...", "who is 12, ..." name which, not how many."""
    before = question[number.start - 1] if number.start else " "
    glued = re.search(r"(?<![^\W\d_])([^\W\d_]+)$", question[:number.start])
    if glued is not None and glued.group(1) in LABEL_LIKE_SIGNS:
        return True  # "Grade G1 ... G2 ... gourdes": a sign that also labels, before a number no program uses
    words = re.findall(r"[^\W\d_]+|#", question[:number.start].casefold())
    if words and (words[-1] == "#" or words[-1] in _LABEL_NOUNS) and before in " #":
        return True
    after = re.sub(r"^-?[\d.,/]+", "", question[number.start:]).lstrip(" ")  # as written: "1,000" has its comma
    return before in " (\"'" and not (after[:1] == "%" or after[:1].islower())


def by_program(rt: Runtime, request: AnswerRequest, routed: Routed | None) -> ProgramTry:
    """The program route: the first candidate the question aligns with whose form answers. Without the gate (or
    with an answer key, which decides) the form of the block the router picked is also bound by position when the
    question has as many numbers."""
    engine, question, team_id = request.engine, request.question, request.team_id
    expected, verifier, gate = request.expected, request.verifier, request.params.post_graft_gate
    keyed = expected is not None or verifier is not None
    tried: list[dict[str, Any]] = []
    for candidate in program_candidates(rt, engine, question, team_id):
        alignment = align(question, candidate.question)
        if not alignment.aligned:
            tried.append(_tried(candidate, alignment, "not aligned"))
            continue
        form = _form_of(rt, engine, candidate)
        if form is None:
            tried.append(_tried(candidate, alignment, "the block carries no parameterized program"))
            continue
        refusal = form_refusal(form, alignment, candidate.question)
        if refusal is not None:
            tried.append(_tried(candidate, alignment, refusal))
            continue
        answer, outcome = _bound(form, alignment.values, candidate, expected, verifier, gate,
                                 f"alignment with the routed problem (kept {alignment.kept:.2f})")
        tried.append(_tried(candidate, alignment, outcome))
        if answer is not None:
            return ProgramTry(answer, {"method": "alignment", "tried": tried})
    if routed is not None and (keyed or not gate):
        form = _form_of(rt, engine, routed)
        values = [n.text for n in structure_of(question).numbers]
        if form is not None and len(values) == form.params:
            answer, outcome = _bound(form, values, routed, expected, verifier, gate, "position (no gate)")
            tried.append(_tried(routed, None, f"by position: {outcome}"))
            if answer is not None:
                return ProgramTry(answer, {"method": "position", "tried": tried})
    return ProgramTry(None, {"method": None, "tried": tried})


def binding_summary(binding: dict[str, Any] | None) -> str | None:
    """One line for a person: how the answering candidate bound the question's numbers (or why the best refused)."""
    if not binding or not binding.get("tried"):
        return None
    last = binding["tried"][-1] if binding.get("method") else binding["tried"][0]
    alignment = last.get("alignment") or {}
    if binding.get("method") == "alignment":
        bound = ", ".join(f"kvp_{b['param']}={b['question']} (was {b['routed']}: {b['context']})"
                          for b in alignment.get("bindings", []))
        renamed = ", ".join(f"{a}->{b}" for a, b in alignment.get("renames", [])) or "none"
        return f"bound by alignment (kept {alignment.get('kept')}): {bound}; renamed {renamed}"
    if binding.get("method") == "position":
        return "bound by position (no gate)"
    return f"refused: {alignment.get('reason') or last['outcome']}"


def _refusal(binding: dict[str, Any]) -> str:
    tried = binding["tried"]
    if not tried:
        return "no solution problem scores the program route's floor"
    first = tried[0]
    why = first.get("alignment", {}).get("reason") if first["outcome"] == "not aligned" else first["outcome"]
    return f"no verified parameterized program applies ({len(tried)} tried; the best: {why})"


def _by_graft(rt: Runtime, request: AnswerRequest, block: Any, routed: Routed) -> Answer:
    engine, style, question, params = request.engine, request.style, request.question, request.params
    expected, verifier, mine = request.expected, request.verifier, structure_of(request.question)
    keyed = expected is not None or verifier is not None
    gate = params.post_graft_gate and not keyed
    theirs = structure_of(routed.question)
    prompt = tokens_of(engine, transfer_part(style, question))
    if gate:
        alignment = align(question, routed.question)
        if alignment.failed_at == "asked":  # the statements align and the asked sentence does not: a near-miss
            return Answer(None, "abstain", routed.block_id, 0, verified=False, attested=False,
                          detail=f"post-graft gate: the question asks another quantity than the routed problem "
                                 f"({alignment.reason})", binding={"alignment": alignment.as_dict()})
        same, score = asked_matches(mine, theirs)
        if not same:  # decided before anything is sampled
            return Answer(None, "abstain", routed.block_id, 0, verified=False, attested=False,
                          detail=f"post-graft gate: the question asks another quantity than the routed problem "
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
            return Answer(answer, "transfer", routed.block_id, spent, verified=True,
                          attested=attested(rt, engine, routed.block_id, classes, team_id=routed.team_id),
                          detail=f"router score {routed.score:.2f}; sample {k} verified",
                          verified_by=routed.verified_by)
        fit = program_fit(program, check.ran_cleanly, mine, theirs)
        answers.append(answer)
        fitting.append(answer if fit.passed else None)
        reasons.append(fit.reason())
    is_attested = attested(rt, engine, routed.block_id, classes, team_id=routed.team_id)
    if not params.post_graft_gate:
        first = next((a for a in answers if a is not None), None)
        return Answer(first, "transfer", routed.block_id, spent, verified=False, attested=is_attested,
                      detail="post-graft gate off", verified_by=routed.verified_by)
    if keyed:
        return Answer(None, "abstain", routed.block_id, spent, verified=False, attested=is_attested,
                      detail=f"post-graft gate: no transferred program verified (router score {routed.score:.2f})")
    agreed = agreeing(fitting, params.samples)
    if agreed is None:
        return Answer(None, "abstain", routed.block_id, spent, verified=False, attested=is_attested,
                      detail=f"post-graft gate: too few fitting samples agree ({'; '.join(reasons)})")
    return Answer(agreed, "transfer", routed.block_id, spent, verified=False, attested=is_attested,
                  detail="post-graft gate: the samples fit the question and agree; nothing to verify against",
                  verified_by=routed.verified_by)


def transfer_answer(rt: Runtime, request: AnswerRequest) -> Answer | None:
    """The transfer route's answer (None: no block routed, or the routed block could not be read)."""
    engine, question, team_id, params = request.engine, request.question, request.team_id, request.params
    if params.transfer_method not in TRANSFER_METHODS:
        raise ValueError(f"transfer_method must be one of {', '.join(TRANSFER_METHODS)}")
    routed = route_solution(rt, engine, question, team_id, params.router_threshold)
    binding: dict[str, Any] | None = None
    if params.transfer_method in ("auto", "program"):
        tried = by_program(rt, request, routed)
        if tried.answer is not None:
            return replace(tried.answer, binding=tried.binding)
        binding = tried.binding
        if params.transfer_method == "program":
            if routed is None and not tried.binding["tried"]:
                return None
            return Answer(None, "abstain", routed.block_id if routed else tried.binding["tried"][0]["block_id"],
                          0, verified=False, attested=False, detail=_refusal(tried.binding), binding=tried.binding)
    if routed is None:
        return None
    block = read_or_miss(rt.blocks, engine.fingerprint.id, routed.block_id, purpose="transfer",
                         scope=owner_key(team_id))
    if block is None:
        return None
    answer = _by_graft(rt, request, block, routed)
    if binding is None:
        return answer
    return replace(answer, binding={**binding, **({"gate": answer.binding} if answer.binding else {})})
