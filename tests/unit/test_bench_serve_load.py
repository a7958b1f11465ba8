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


def test_the_split_arm_is_compared_with_batching_off_and_its_ratios_are_its_own() -> None:
    from bench.serve_load import Outcome, _compare, _ratios

    def out(text: str, sha: str) -> Outcome:
        return Outcome(1.0, (), text, 1, {"logits_sha256": [sha]})

    answers = {"kvgraft_solo": {8: [out("a", "x"), out("b", "y")]},
               "kvgraft_batched": {8: [out("a", "x"), out("b", "y")]},
               "kvgraft_split": {8: [out("a", "x"), out("b", "z")]}}  # one position's logits differ
    assert _compare(answers)["batched_mismatches"] == 0
    split = _compare(answers, "kvgraft_split")
    assert split["batched_checked"] == 2 and split["batched_mismatches"] == 1
    assert split["mismatch_details"][0]["first_differing_position"] == 0
    ratios = _ratios({"kvgraft_solo": {8: {"output_tokens_per_s": 10.0}},
                      "kvgraft_batched": {8: {"output_tokens_per_s": 12.0}},
                      "kvgraft_split": {8: {"output_tokens_per_s": 15.0}}})
    assert ratios == {"batched_over_kvgraft_solo_8": 1.2, "split_over_kvgraft_batched_8": 1.25,
                      "split_over_kvgraft_solo_8": 1.5}
