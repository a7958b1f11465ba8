"""The flywheel and routing benchmarks count honestly: Wilson intervals, null fractions on empty denominators,
every arm's outcomes summing to its phase's questions, transfer rows that repeat their base's answer refused, bad
input files named by line, thresholds chosen on the development set only. End to end on the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.flywheel import (
    ARMS,
    FlywheelBenchRequest,
    Tally,
    check_transfer_answers,
    gate_figures,
    plurality,
    run_flywheel_bench,
)
from bench.routing import RoutingBenchRequest, run_routing_bench
from bench.sets import dataset_files, read_jsonl
from bench.stats import fraction, wilson
from services.cli import app

pytestmark = pytest.mark.unit


def test_wilson_and_fraction() -> None:
    assert wilson(0, 0) is None and fraction(1, 0) is None
    assert wilson(0, 10) == [0.0, 0.278] and wilson(10, 10) == [0.722, 1.0]
    low, high = wilson(5, 10)  # type: ignore[misc]
    assert low < 0.5 < high and fraction(1, 3) == 0.333


def test_plurality_compares_numbers_by_value() -> None:
    assert plurality([None, "8.0", "7", "8"]) == "8.0"
    assert plurality([None, None]) is None


def test_transfer_rows_with_their_base_answer_are_refused() -> None:
    library = [{"id": "b", "family": "f", "question": "q", "answer": 8}]
    check_transfer_answers(library, [{"id": "t", "family": "f", "role": "transfer", "answer": 9}])
    with pytest.raises(ValueError, match="cannot show a failed transfer"):
        check_transfer_answers(library, [{"id": "t", "family": "f", "role": "transfer", "answer": "8.0"}])


def test_bad_input_files_are_named_by_line(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    for text, message in (('{"id": "a", "question": "q", "answer": 1}\n{oops\n', ":2: not JSON"),
                          ('{"id": "a", "question": "q"}\n', "needs an `answer`"),
                          ('{"id": 3, "question": "q", "answer": 1}\n', "string `id`"),
                          ('{"id": "a", "question": "q", "answer": 1, "role": "other"}\n', "role must be"),
                          ("\n", "no eval rows")):
        f.write_text(text)
        with pytest.raises(ValueError, match=message):
            read_jsonl(f, what="eval")
    f.write_text('{"id": "a", "question": "q", "answer": 1}\n')
    assert read_jsonl(f, what="eval")[0]["role"] == "transfer"  # a row without a role is a transfer
    with pytest.raises(ValueError, match="no shipped dataset 'nope'"):
        dataset_files("nope")


def test_gate_figures_count_the_same_questions() -> None:
    tally = Tally()
    for qid, ungated, gated in (("a", "1", None), ("b", "1", "1"), ("c", "2", "2"), ("d", "2", None),
                                ("e", None, None)):
        tally.add("transfer", "library", qid, ungated, 2, 0, 0.0)
        tally.add("transfer", "library_gated", qid, gated, 2, 0, 0.0)
    figures = gate_figures(tally, "library", "library_gated", ("transfer",))
    # wrong without the gate: a, b; removed: a (abstained); kept of correct c, d: c
    assert figures["wrong_without_gate"] == 2 and figures["wrong_removed"] == 0.5
    assert figures["correct_without_gate"] == 2 and figures["correct_kept"] == 0.5
    empty = gate_figures(Tally(), "library", "library_gated", ("transfer",))
    assert empty["wrong_removed"] is None and empty["correct_kept"] is None
    arm = tally.arm("transfer", "library")
    assert arm is not None and (arm["correct"], arm["wrong"], arm["abstain"]) == (2, 2, 1)


def test_routing_bench_grades_with_thresholds_chosen_on_dev() -> None:
    record = run_routing_bench(RoutingBenchRequest(dataset="check"))
    assert record["thresholds_chosen_on"] == "dev" and set(record["scorers"]) == {"lexical", "bm25"}
    for graded in record["scorers"].values():
        inside, outside = graded["in_library"], graded["off_distribution"]
        assert inside["right"] + inside["wrong_route"] + inside["abstain"] == inside["questions"] > 0
        assert outside["abstain"] + outside["routed"] == outside["questions"] > 0
        assert sum(r["questions"] for r in graded["by_role"].values()) == inside["questions"] + outside["questions"]


def test_shipped_sets_hold_every_role_and_no_transfer_repeats_its_base() -> None:
    for name in ("dev", "check"):
        library_path, eval_path = dataset_files(name)
        library, items = read_jsonl(library_path, what="library"), read_jsonl(eval_path, what="eval")
        check_transfer_answers(library, items)
        assert {i["role"] for i in items} == {"recurrence", "transfer", "near_miss", "off_distribution"}
        assert all("solution" in p for p in library)
        assert not any("gsm8k" in str(i.get("source", "")) or "svamp" in str(i.get("source", "")) for i in items)


def test_flywheel_bench_end_to_end_on_the_tiny_model(data_dir: Path, tmp_path: Path) -> None:
    library = [{"id": "cartons-base", "family": "cartons", "answer": 8,
                "question": "A farmer collects 48 eggs and packs them in cartons of 6. How many cartons does he fill?",
                "solution": "eggs = 48\nper_carton = 6\nprint(eggs // per_carton)"}]
    evaluation = [
        {"id": "r", "family": "cartons", "role": "recurrence", "question": library[0]["question"], "answer": 8},
        {"id": "t", "family": "cartons", "role": "transfer", "answer": 12,
         "question": "A farmer collects 84 eggs and packs them in cartons of 7. How many cartons does he fill?"},
        {"id": "n", "family": "cartons", "role": "near_miss", "answer": 144,
         "question": "A farmer collects 48 eggs and packs them in cartons of 6. How many eggs does he collect in 3 "
                     "days if he collects the same number each day?"},
        {"id": "o", "family": "off", "role": "off_distribution", "answer": 9,
         "question": "Jose starts with 7 bottle caps. He gets 2 more from Rebecca. How many bottle caps does Jose "
                     "end with?"}]
    lib, ev = tmp_path / "lib.jsonl", tmp_path / "eval.jsonl"
    lib.write_text("".join(json.dumps(r) + "\n" for r in library))
    ev.write_text("".join(json.dumps(r) + "\n" for r in evaluation))
    record = run_flywheel_bench(FlywheelBenchRequest(library=lib, eval=ev, samples=2, max_tokens=24),
                                data_dir=tmp_path)
    assert set(record["library"]) >= {"problems", "deposited", "decode_tokens"}
    assert record["reference_library"]["deposited"] == 1 and record["reference_library"]["parameterized"] == 1
    for role, phase in record["phases"].items():
        assert phase["questions"] == 1
        for arm in ARMS:
            counts = phase["arms"][arm]
            assert counts["correct"] + counts["wrong"] + counts["abstain"] == 1, (role, arm)
    transfer = record["phases"]["transfer"]
    assert transfer["arms"]["reference_library_gated"]["correct"] == 1  # the signed program, bound to 84 and 7
    assert transfer["arms"]["reference_library_gated"]["routes"] == {"program": 1}
    assert transfer["transfer_methods"]["program_gated"]["decode_tokens"] == 0
    assert record["phases"]["near_miss"]["arms"]["reference_library_gated"]["wrong"] == 0
    assert record["phases"]["recurrence"]["arms"]["reference_library"]["routes"] == {"recurrence": 1}
    assert record["unseen"]["reference_library_gated"]["all"]["correct"] == 1  # the transfer row alone
    assert record["unseen"]["reference_library_gated"]["by_variant"]["plain"]["questions"] == 1
    for key in ("wrong_removed", "correct_kept"):
        value = record["gate"][key]
        assert value is None or 0.0 <= value <= 1.0
    assert list(tmp_path.glob("kvgraft-bench-flywheel-*")) == []  # the temporary deployment is gone


def test_bench_commands_refuse_half_a_file_pair(tmp_path: Path) -> None:
    f = tmp_path / "lib.jsonl"
    f.write_text('{"id": "a", "question": "q", "answer": 1}\n')
    for command in ("flywheel", "routing"):
        result = CliRunner().invoke(app, ["bench", command, "--library", str(f), "--json"])
        assert result.exit_code == 2 and "give both --library and --eval" in result.stderr


def test_the_routers_default_thresholds_are_the_ones_the_dev_set_picks() -> None:
    from bench.routing import chosen_thresholds
    from workers.flywheel.router import DEFAULT_BM25_THRESHOLD, DEFAULT_THRESHOLD

    assert chosen_thresholds() == {"lexical": DEFAULT_THRESHOLD, "bm25": DEFAULT_BM25_THRESHOLD}


def test_program_route_refusals_are_reported_by_where_and_kind() -> None:
    from bench.flywheel import refusal_reason

    assert refusal_reason({}) == "route: no candidate"
    binding = {"tried": [{"outcome": "not aligned", "alignment": {
        "failed_at": "asked", "reason": "the asked sentence: 'pounds -> rupees' renames a currency unlike '£ -> $' "
                                        "elsewhere (a question mixing currencies)"}}]}
    assert refusal_reason(binding) == "asked: currencies mixed"
    assert refusal_reason({"tried": [{"outcome": "the question renames objects (bike) and the program has "
                                                 "constants of its own (2)"}]}) == "route: object constants"
    tally = Tally()
    tally.add("renamed", "program_gated", "q1", None, 5, 0, 0.0, binding=binding)
    tally.add("renamed", "program_gated", "q2", "5", 5, 0, 0.0, binding={})
    assert tally.arm("renamed", "program_gated")["refusals"] == {"asked: currencies mixed": 1}


def test_unseen_instances_count_paraphrases_apart_and_never_drop_them() -> None:
    """`unseen` counts every transfer, renamed and reordered row of an arm (recurrences and near misses are not
    unseen instances), then the same rows without the paraphrased questions, then each variant: the three add up."""
    tally = Tally()
    rows = [("transfer", "t1", "5", 5, None), ("transfer", "t2", None, 5, "paraphrase"),
            ("renamed", "r1", "7", 5, None), ("renamed", "r2", "5", 5, "edit_person"),
            ("reordered", "o1", None, 5, "reorder"), ("recurrence", "c1", "5", 5, None),
            ("near_miss_step", "n1", "9", 5, None)]
    for role, qid, answer, expected, variant in rows:
        tally.add(role, "program_gated", qid, answer, expected, 0, 0.0, variant=variant)
    unseen = tally.unseen("program_gated")
    assert unseen is not None and tally.unseen("program") is None
    assert {k: unseen["all"][k] for k in ("correct", "wrong", "abstain", "questions")} == \
        {"correct": 2, "wrong": 1, "abstain": 2, "questions": 5}
    assert unseen["without_paraphrase"]["questions"] == 4 and unseen["without_paraphrase"]["abstain"] == 1
    assert unseen["all"]["intervals"]["correct"] == wilson(2, 5)
    assert {v: c["questions"] for v, c in unseen["by_variant"].items()} == \
        {"edit_person": 1, "paraphrase": 1, "plain": 2, "reorder": 1}
    assert sum(c["questions"] for c in unseen["by_variant"].values()) == unseen["all"]["questions"]
