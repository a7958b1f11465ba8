"""The post-graft gate without an answer key: does a transferred program apply to the new question?

A user's question carries no answer, so a transferred answer cannot be verified; the gate checks instead that the
routed method fits the question. A question-level check runs first, before anything is sampled:

- asked: the asked quantity (the question sentence, numbers masked) matches the routed problem's (Jaccard
  similarity of content words at least ASKED_MIN);

then, per sampled program:

- numbers used: every number of the new question appears as a literal in the program;
- no stale literals: no number of the routed problem that is absent from the new question survives in it;
- ran cleanly: the program exited 0 and printed an answer in the sandbox;

and the passing samples must agree (at least ceil(2K/3) of the K samples, as for the direct route). A verified
parameterized program applies when the question has as many numbers with the same units in the same order and the
asked check passes. ASKED_MIN was chosen on the development set only (docs/FLYWHEEL.md)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from workers.flywheel.parameterize import ParameterizedProgram, numeric_literals
from workers.flywheel.structure import QuestionNumber, Structure, asked_similarity

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


@dataclass(frozen=True)
class FormFit:
    applies: bool  # the gate's verdict: same count, units and asked quantity
    bindable: bool  # same count of numbers (all that binding itself needs)
    reason: str


def form_fit(form: ParameterizedProgram, question: Structure) -> FormFit:
    numbers: tuple[QuestionNumber, ...] = question.numbers
    if len(numbers) != form.params:
        return FormFit(False, False, f"{len(numbers)} numbers in the question, the program takes {form.params}")
    if tuple(n.unit for n in numbers) != form.units:
        return FormFit(False, True, f"units {[n.unit for n in numbers]} differ from the program's {list(form.units)}")
    score = asked_similarity(question.asked, form.asked)
    if score < ASKED_MIN:
        return FormFit(False, True, f"asks another quantity (similarity {score:.2f} < {ASKED_MIN})")
    return FormFit(True, True, "same structure")
