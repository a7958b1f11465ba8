"""The post-graft gate without an answer key: does a transferred program apply to the new question?

A user's question carries no answer, so a transferred answer cannot be verified; the gate checks instead that the
routed method fits the question. A question-level check runs first, before anything is sampled:

- asked: the asked quantity (the question sentence, numbers masked) matches the routed problem's (Jaccard
  similarity of content words at least ASKED_MIN);

then, per sampled program:

- numbers used: every number of the new question appears as a literal in the program;
- no stale literals: no number of the routed problem that is absent from the new question survives in it;
- ran cleanly: the program exited 0 and printed an answer in the sandbox;

and the passing samples must agree (at least ceil(2K/3) of the K samples, as for the direct route). Before that,
a question whose statements align with the routed problem's and whose asked sentence does not
(workers/flywheel/alignment.py) is refused outright: it asks for something else of the same problem. A verified
parameterized program applies when the question aligns with its problem (the program route) and its answer is of
the kind the routed problem's was (answer_out_of_domain). ASKED_MIN was chosen on the development set only
(docs/FLYWHEEL.md)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from workers.flywheel.parameterize import numeric_literals
from workers.flywheel.structure import Structure, asked_similarity

ASKED_MIN = 0.6


@dataclass(frozen=True)
class ProgramFit:
    numbers_used: bool
    stale: tuple[str, ...]  # routed problem's numbers, absent from the question, still in the program
    ran_cleanly: bool

    @property
    def passed(self) -> bool:
        return self.numbers_used and not self.stale and self.ran_cleanly

    def reason(self) -> str:
        if not self.ran_cleanly:
            return "did not run cleanly"
        if self.stale:
            return f"keeps the routed problem's literals {', '.join(self.stale)}"
        return "does not use every number of the question" if not self.numbers_used else "fits"


def program_literals(program: str) -> set[Decimal]:
    """The values of a program's numeric literals (none for a program that does not tokenize: it cannot run)."""
    return {value for _, value in numeric_literals(program) or []}


def program_fit(program: str | None, ran_cleanly: bool, question: Structure, routed: Structure) -> ProgramFit:
    literals = program_literals(program or "")
    mine = {n.value for n in question.numbers}
    return ProgramFit(numbers_used=bool(program) and mine <= literals,
                      stale=tuple(n.text for n in routed.numbers if n.value not in mine and n.value in literals),
                      ran_cleanly=ran_cleanly)


def asked_matches(question: Structure, routed: Structure) -> tuple[bool, float]:
    score = asked_similarity(question.asked, routed.asked)
    return score >= ASKED_MIN, score


def answer_out_of_domain(answer: str | None, routed_answer: Any) -> str | None:
    """Why a bound program's answer is not of the kind the routed problem's verified answer is (a whole number
    where it was whole, not negative where it was not), or None when it is (or either is not a number): a binding
    that divides where the method never did, or takes more than there is, is a sign the question is not the same
    problem."""
    mine, theirs = _number(answer), _number(routed_answer)
    if mine is None or theirs is None:
        return None
    if theirs == theirs.to_integral_value() and abs(mine - mine.to_integral_value()) > Decimal("1e-9"):
        return f"the bound program's answer {answer} is not a whole number; the routed problem's ({routed_answer}) is"
    if theirs >= 0 > mine:
        return f"the bound program's answer {answer} is negative; the routed problem's ({routed_answer}) is not"
    return None


def _number(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value).strip().replace(",", ""))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None
