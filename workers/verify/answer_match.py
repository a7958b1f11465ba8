"""Reading the answer a program printed and comparing it with the known answer."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from store.db import nul_safe

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
# Non-integer answers match within this relative tolerance (and this absolute one near zero); integers match
# exactly. docs/FLYWHEEL.md states the same.
REL_TOLERANCE = Decimal("1e-6")
ABS_TOLERANCE = Decimal("1e-9")
MAX_NUMBER_CHARS = 1000  # extract_answer keeps at most 1000 characters of a line
_EXPONENT_LIMIT = 10_000  # |exponent| beyond this is not an answer to a word problem, only an attack on Decimal


def extract_answer(stdout: str) -> str | None:
    """The last non-empty printed line, stripped, NUL-free (store.db.nul_safe); None when nothing was printed."""
    for line in reversed(nul_safe(stdout).strip().splitlines()):
        if line.strip():
            return line.strip()[:MAX_NUMBER_CHARS]
    return None


def parse_decimal(text: str) -> Decimal | None:
    """The last number in `text` (thousands separators allowed) as an exact Decimal, or None. Exact at any size:
    a 401-digit integer stays an integer (no float conversion, no overflow)."""
    found = _NUMBER.findall(text.replace("$", ""))
    if not found:
        return None
    try:
        value = Decimal(found[-1].replace(",", ""))
    except InvalidOperation:
        return None
    if not value.is_finite() or abs(value.adjusted()) > _EXPONENT_LIMIT:
        return None
    return value


def parse_number(text: str) -> float | None:
    """The last number in `text` as a float (for display and vote keys only; comparisons use parse_decimal), or None
    when there is none or it does not fit a float."""
    value = parse_decimal(text)
    if value is None:
        return None
    try:
        as_float = float(value)
    except (OverflowError, ValueError):
        return None
    return as_float if math.isfinite(as_float) else None


def number_key(text: str) -> str | None:
    """A canonical exact text of the number in `text` ("12", "12.0" and "12.00" share one key), or None."""
    value = parse_decimal(text)
    if value is None:
        return None
    return format(value.normalize(), "f")  # exact at any size (no int(): its 4,300-digit limit)


def _expected_decimal(expected: Any) -> Decimal | None:
    if isinstance(expected, bool):
        return None
    if isinstance(expected, int):
        return Decimal(expected)
    if isinstance(expected, float):
        return Decimal(repr(expected)) if math.isfinite(expected) else None
    if isinstance(expected, Decimal):
        return expected if expected.is_finite() else None
    want = str(expected).strip()
    return parse_decimal(want) if _NUMBER.fullmatch(want.replace("$", "").replace(",", "")) else None


def numbers_match(got: Decimal, want: Decimal) -> bool:
    """Integers compare exactly; a non-integer expected answer within REL_TOLERANCE (ABS_TOLERANCE near 0)."""
    if want == want.to_integral_value():
        return got == want
    with localcontext() as ctx:
        ctx.prec = 60
        return abs(got - want) <= max(REL_TOLERANCE * abs(want), ABS_TOLERANCE)


def answers_match(got: str | None, expected: Any) -> bool:
    """Numeric answers match exactly for integers and within a stated tolerance otherwise; other answers match as
    normalized (case- and whitespace-insensitive) strings."""
    if got is None or expected is None:
        return False
    if isinstance(expected, bool):
        expected = str(expected)
    want = _expected_decimal(expected)
    if want is not None:
        value = parse_decimal(got)
        return value is not None and numbers_match(value, want)
    if isinstance(expected, int | float):
        return False  # a non-finite float expected answer never matches
    text = str(expected).strip()
    return " ".join(got.lower().split()) == " ".join(text.lower().split())
