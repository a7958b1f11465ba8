"""Reading the answer a program printed and comparing it with the known answer."""

from __future__ import annotations

import math
import re
from typing import Any

from workers.sandbox import SandboxLimits, run_program

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
REL_TOLERANCE = 1e-6
ABS_TOLERANCE = 1e-6


def extract_answer(stdout: str) -> str | None:
    """The last non-empty printed line, stripped; None when nothing was printed."""
    for line in reversed(stdout.strip().splitlines()):
        if line.strip():
            return line.strip()[:1000]
    return None


def parse_number(text: str) -> float | None:
    """The last number in `text` (thousands separators allowed), or None."""
    found = _NUMBER.findall(text.replace("$", ""))
    if not found:
        return None
    try:
        value = float(found[-1].replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def answers_match(got: str | None, expected: Any) -> bool:
    """Numeric answers match within a small tolerance; other answers match as normalized strings."""
    if got is None or expected is None:
        return False
    if isinstance(expected, bool):
        expected = str(expected)
    if isinstance(expected, int | float):
        value = parse_number(got)
        return value is not None and math.isclose(value, float(expected), rel_tol=REL_TOLERANCE,
                                                  abs_tol=ABS_TOLERANCE)
    want = str(expected).strip()
    expected_number = parse_number(want) if _NUMBER.fullmatch(want.replace(",", "")) else None
    if expected_number is not None:
        return answers_match(got, expected_number)
    return " ".join(got.lower().split()) == " ".join(want.lower().split())


def recheck_program(program: str, expected: Any, *, limits: SandboxLimits | None = None) -> tuple[bool, str]:
    """Re-run a recorded program in the sandbox and check that it still prints the expected answer."""
    result = run_program(program, limits=limits)
    got = extract_answer(result.stdout)
    if not result.ok:
        return False, f"sandbox verdict {result.reason} (exit {result.exit_code})"
    if not answers_match(got, expected):
        return False, f"printed {got!r}, expected {expected!r}"
    return True, got or ""
