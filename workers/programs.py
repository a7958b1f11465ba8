"""Generated programs: extracting the program from a sample, and verifying a program in the sandbox against a
known answer or a problem's verifier."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from workers.answers import answers_match, extract_answer
from workers.sandbox import SandboxLimits, SandboxResult, run_program

MAX_PROGRAM_CHARS = 8000


@dataclass(frozen=True)
class Verification:
    verdict: str  # verified | wrong | error | timeout | no_program | unchecked
    answer: str | None
    sandbox: dict[str, Any] | None

    @property
    def ran_cleanly(self) -> bool:
        return self.sandbox is not None and self.sandbox.get("reason") == "ok" and self.answer is not None


def extract_program(generated: str) -> str | None:
    """The program in a sample generated after an opening ```python fence (up to a closing fence, if any)."""
    program = generated.split("```", 1)[0].strip("\n")
    if not program.strip() or len(program) > MAX_PROGRAM_CHARS:
        return None
    return program


def verifier_source(verifier: Any) -> str | None:
    """A verifier is Python source defining `verify(answer: str) -> bool`, given as a string or {"python": ...}."""
    if verifier is None:
        return None
    if isinstance(verifier, str):
        return verifier
    if isinstance(verifier, dict) and isinstance(verifier.get("python"), str):
        return verifier["python"]
    raise ValueError('a verifier must be Python source defining verify(answer), or {"python": "..."}')


def _run_verifier(source: str, answer: str, limits: SandboxLimits | None) -> bool:
    program = f"{source}\n\nprint('KVGRAFT-VERIFIED' if verify({json.dumps(answer)}) else 'KVGRAFT-REJECTED')\n"
    result = run_program(program, limits=limits)
    return result.ok and extract_answer(result.stdout) == "KVGRAFT-VERIFIED"


def verify_program(program: str | None, *, answer: Any = None, verifier: Any = None,
                   limits: SandboxLimits | None = None) -> Verification:
    """Run a program in the sandbox; `verified` only when it ran cleanly and agreed with the known answer or the
    verifier; `unchecked` when it ran but there is nothing to check it against."""
    if program is None:
        return Verification("no_program", None, None)
    result: SandboxResult = run_program(program, limits=limits)
    printed = extract_answer(result.stdout)
    record = result.as_dict() | {"stdout": result.stdout[-2000:], "stderr": result.stderr[-2000:]}
    if result.timed_out:
        return Verification("timeout", printed, record)
    if not result.ok or printed is None:
        return Verification("error", printed, record)
    source = verifier_source(verifier)
    if source is not None:
        return Verification("verified" if _run_verifier(source, printed, limits) else "wrong", printed, record)
    if answer is not None:
        return Verification("verified" if answers_match(printed, answer) else "wrong", printed, record)
    return Verification("unchecked", printed, record)
