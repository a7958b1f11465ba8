"""Verified parameterized programs: a deposited program with the question's literals bound to named parameters.

When a verified program is deposited, every numeric literal in it whose value is one of the question's numbers is
replaced by the parameter of that number (`kvp_0`, `kvp_1`, ... in order of appearance in the question). The form
is kept only when (1) the question's numbers are distinct (otherwise a literal's parameter is ambiguous), (2) at
least one literal was bound, (3) bound to the original numbers it reproduces the verified answer in the sandbox,
and (4) bound to other numbers its answer changes for at least one of three perturbations (a program that
prints a constant is not a method). It travels
in the block's signed header (`meta.parameterized`), so a forged form breaks the block's signature.

A new question of the same structure (same count of numbers, same units, same asked quantity) is answered by
binding its numbers and running the program in the sandbox: zero decode tokens."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from workers.flywheel.structure import QuestionNumber, question_numbers, structure_of
from workers.verify.answer_match import answers_match
from workers.verify.programs import verify_program

PARAM = "kvp_"
MAX_PARAMS = 16
MAX_DIGITS = 60  # longer numbers are not bound (they stay with graft and sample)


@dataclass(frozen=True)
class ParameterizedProgram:
    body: str  # the program with bound literals replaced by kvp_<i>
    params: int
    units: tuple[str, ...]
    asked: tuple[str, ...]

    def bind(self, values: Sequence[str]) -> str:
        if len(values) != self.params:
            raise ValueError(f"the program takes {self.params} numbers, not {len(values)}")
        header = "".join(f"{PARAM}{i} = {_literal(v)}\n" for i, v in enumerate(values))
        return header + self.body

    def as_meta(self) -> dict[str, Any]:
        return {"body": self.body, "params": self.params, "units": list(self.units), "asked": list(self.asked)}

    @classmethod
    def from_meta(cls, meta: Any) -> ParameterizedProgram | None:
        """The form stored in a block's header, or None when absent or not of the expected shape."""
        if not isinstance(meta, dict):
            return None
        body, params, units, asked = meta.get("body"), meta.get("params"), meta.get("units"), meta.get("asked")
        if not (isinstance(body, str) and isinstance(params, int) and not isinstance(params, bool)
                and 0 < params <= MAX_PARAMS and isinstance(units, list) and len(units) == params
                and all(isinstance(u, str) for u in units) and isinstance(asked, list)
                and all(isinstance(w, str) for w in asked)):
            return None
        return cls(body, params, tuple(units), tuple(asked))


def _literal(text: str) -> str:
    """A question's number as a Python literal (an int when written without a fraction, else a float literal),
    written from its Decimal value: text that is not a plain decimal number of at most MAX_DIGITS digits is
    refused, so nothing of the question but a number reaches the program."""
    if len(text) > MAX_DIGITS + 1 or not text.replace(".", "", 1).isdigit():
        raise ValueError(f"not a plain decimal number of at most {MAX_DIGITS} digits: {text[:40]!r}")
    value = Decimal(text)
    if "." not in text:
        return format(value, "f")
    out = format(value.normalize(), "f")
    return out if "." in out else out + ".0"


def numeric_literals(program: str) -> list[tuple[tokenize.TokenInfo, Decimal]] | None:
    """The decimal numeric literals of a program with their tokens (hex, octal and complex ones skipped); None
    when the program does not tokenize."""
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(program).readline):
            if tok.type == tokenize.NUMBER:
                try:
                    found.append((tok, Decimal(tok.string.replace("_", ""))))
                except InvalidOperation:
                    continue
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return found


def substitute(program: str, numbers: Sequence[QuestionNumber]) -> tuple[str, int] | None:
    """The program with each literal equal to one of `numbers` replaced by its parameter, and the count replaced;
    None when the program does not tokenize."""
    literals = numeric_literals(program)
    if literals is None:
        return None
    index = {n.value: i for i, n in enumerate(numbers)}
    lines = io.StringIO(program).readlines()  # the lines tokenize numbers (splitlines splits on more)
    edits = [(tok.start[0], tok.start[1], tok.end[1], f"{PARAM}{index[value]}") for tok, value in literals
             if value in index]
    for row, col, end, name in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + name + line[end:]
    return "".join(lines), len(edits)


PERTURBATIONS = ((2, 3), (1, 7), (3, 1))  # v -> a*v + b: other numbers to bind, tried in turn


def _perturbed(numbers: Sequence[QuestionNumber], a: int, b: int) -> list[str]:
    with localcontext() as ctx:
        ctx.prec = 2 * MAX_DIGITS  # exact for every number derive accepts
        return [format(n.value * a + b, "f") for n in numbers]


def derive(program: str, question: str, answer: str) -> ParameterizedProgram | None:
    """The verified parameterized form of a verified program, or None when it has none (see the module doc).
    Runs the program two to four times in the sandbox."""
    numbers = question_numbers(question)
    if not numbers or len(numbers) > MAX_PARAMS or len({n.value for n in numbers}) != len(numbers):
        return None
    if any(len(n.text) > MAX_DIGITS for n in numbers):
        return None
    if PARAM in program:
        return None  # the program already uses our parameter names: binding would be ambiguous
    replaced = substitute(program, numbers)
    if replaced is None or replaced[1] == 0:
        return None
    structure = structure_of(question)
    form = ParameterizedProgram(replaced[0], len(numbers), structure.units, structure.asked)
    same = verify_program(form.bind([n.text for n in numbers]), answer=answer)
    if same.verdict != "verified":
        return None
    for a, b in PERTURBATIONS:  # the answer must move with the numbers (one coincidence is not enough to refuse)
        other = verify_program(form.bind(_perturbed(numbers, a, b)))
        if other.ran_cleanly and not answers_match(other.answer, answer):
            return form
    return None
