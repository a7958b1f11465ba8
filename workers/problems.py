"""Problem batches as submitted: JSONL lines or a JSON list of objects, validated all-or-nothing.

    {"id": str, "question": str, "answer": number|string (optional), "solution": str (optional reference program),
     "verifier": Python source defining verify(answer) -> bool, or {"python": ...} (optional)}

Each problem needs an answer or a verifier: without one nothing could be verified, so nothing could be deposited.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from workers.errors import WorkInputError
from workers.strict_json import loads_strict
from workers.verify.programs import verifier_source

MAX_PROBLEMS = 10_000
MAX_LINE_BYTES = 64 << 10
MAX_QUESTION_CHARS = 8_000
MAX_ID_CHARS = 200
MAX_PROGRAM_CHARS = 32_000
_KEYS = {"id", "question", "answer", "solution", "verifier"}


@dataclass(frozen=True)
class ProblemSpec:
    id: str
    question: str
    answer: int | float | str | None = None
    solution: str | None = None
    verifier: Any = None


class ProblemInputError(WorkInputError):
    """The batch is malformed; `errors` names each bad line (1-based) and what is wrong with it."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        self.errors = errors
        shown = "; ".join(f"line {n}: {msg}" for n, msg in errors[:20])
        more = f" (and {len(errors) - 20} more)" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} bad problem line(s): {shown}{more}")


def _problem(obj: Any) -> ProblemSpec:
    if not isinstance(obj, dict):
        raise ValueError("a problem must be a JSON object")
    unknown = set(obj) - _KEYS
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
    pid, question = obj.get("id"), obj.get("question")
    if not isinstance(pid, str) or not pid.strip() or len(pid) > MAX_ID_CHARS:
        raise ValueError(f"'id' must be a non-empty string of at most {MAX_ID_CHARS} characters")
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUESTION_CHARS:
        raise ValueError(f"'question' must be a non-empty string of at most {MAX_QUESTION_CHARS} characters")
    answer = obj.get("answer")
    if isinstance(answer, bool) or not (answer is None or isinstance(answer, int | float | str)):
        raise ValueError("'answer' must be a number or a string")
    if isinstance(answer, float) and not math.isfinite(answer):
        raise ValueError("'answer' must be finite")
    if isinstance(answer, str) and (not answer.strip() or len(answer) > 200):
        raise ValueError("'answer' string must be non-empty and at most 200 characters")
    solution = obj.get("solution")
    if solution is not None and (not isinstance(solution, str) or not solution.strip()
                                 or len(solution) > MAX_PROGRAM_CHARS):
        raise ValueError(f"'solution' must be a non-empty program of at most {MAX_PROGRAM_CHARS} characters")
    verifier = obj.get("verifier")
    source = verifier_source(verifier)
    if source is not None and len(source) > MAX_PROGRAM_CHARS:
        raise ValueError("'verifier' is too long")
    if answer is None and source is None:
        raise ValueError("a problem needs an 'answer' or a 'verifier' to be verified")
    if "\x00" in question or (solution and "\x00" in solution):
        raise ValueError("NUL bytes are not allowed")
    return ProblemSpec(pid.strip(), question.strip(), answer, solution, verifier)


def _collect(items: list[tuple[int, Any]]) -> list[ProblemSpec]:
    errors: list[tuple[int, str]] = []
    problems: list[ProblemSpec] = []
    seen: dict[str, int] = {}
    for n, obj in items:
        try:
            p = _problem(obj)
        except ValueError as exc:
            errors.append((n, str(exc)))
            continue
        if p.id in seen:
            errors.append((n, f"duplicate id {p.id!r} (first on line {seen[p.id]})"))
            continue
        seen[p.id] = n
        problems.append(p)
    if errors:
        raise ProblemInputError(errors)
    if not problems:
        raise ProblemInputError([(0, "no problems in the batch")])
    if len(problems) > MAX_PROBLEMS:
        raise ProblemInputError([(0, f"{len(problems)} problems exceed the batch limit of {MAX_PROBLEMS}")])
    return problems


def parse_problems_jsonl(data: bytes | str) -> list[ProblemSpec]:
    """Every non-blank line must be a valid problem object; otherwise nothing is accepted."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    items: list[tuple[int, Any]] = []
    errors: list[tuple[int, str]] = []
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            errors.append((n, f"line of {len(line)} bytes exceeds {MAX_LINE_BYTES}"))
            continue
        try:
            items.append((n, loads_strict(line.decode("utf-8"))))
        except UnicodeDecodeError:
            errors.append((n, "not UTF-8 text"))
        except json.JSONDecodeError as exc:  # JsonInputError too: too deep, too many digits, NaN, NUL
            errors.append((n, f"not valid JSON ({exc.msg} at column {exc.colno})"))
    try:
        problems = _collect(items)
    except ProblemInputError as exc:
        raise ProblemInputError(sorted(errors + exc.errors)) from None
    if errors:
        raise ProblemInputError(errors)
    return problems


def parse_problem_list(items: Any) -> list[ProblemSpec]:
    if not isinstance(items, list):
        raise ProblemInputError([(0, "expected a JSON list of problem objects")])
    return _collect(list(enumerate(items, start=1)))
