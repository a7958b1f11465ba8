"""Counting outcomes for benchmarks: Wilson 95% score intervals, fractions that are null on an empty
denominator (never a made-up 0 or 1), counts with their denominators, and nearest-rank percentiles."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> list[float] | None:
    """The Wilson score interval [low, high] of a proportion, rounded to 3 places; None when n is 0."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [round(max(0.0, centre - half), 3), round(min(1.0, centre + half), 3)]


def fraction(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def share(count: int, of: int) -> dict[str, Any]:
    """A count with its denominator and their fraction."""
    return {"count": count, "of": of, "fraction": fraction(count, of)}


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank `q` quantile (0..1) of non-empty `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]
