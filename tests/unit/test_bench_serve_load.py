"""`kvgraft bench serve-load`'s inter-token fairness counts the decoding request's gaps that overlap the other
team's prefill: a gap that ends after the prompt was sent, or starts before its first token, is behind it."""

from __future__ import annotations

import pytest

from bench.serve_load import gaps_overlapping

pytestmark = pytest.mark.unit


def test_the_gaps_behind_a_prefill_are_those_overlapping_it() -> None:
    stamps = (0.0, 0.01, 0.02, 0.5, 0.51, 0.52)
    assert gaps_overlapping(stamps, 0.015, 0.505) == pytest.approx([10.0, 480.0, 10.0])
    assert gaps_overlapping(stamps, 0.6, 0.7) == []
    assert gaps_overlapping((), 0.0, 1.0) == [] and gaps_overlapping((0.3,), 0.0, 1.0) == []
