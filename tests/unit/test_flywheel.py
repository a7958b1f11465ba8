"""The flywheel on the tiny model, deterministic through reference solutions: deposit, recurrence, idempotent
re-runs, and nothing deposited without verification."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from engine.sampling import SamplingParams, generate
from services.cli import app
from store.db import BlockRow, GenerationRow, ProblemRow
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.prompts import MAX_ANSWER_TOKENS, recurrence_query, style_for, tokens_of
from workers.flywheel.solve import SolveParams, solve_problem
from workers.problems import parse_problems_jsonl
from workers.queue.dispatch import submit_batch
from workers.runtime import open_runtime
from workers.seam import block_to_snapshot

pytestmark = pytest.mark.unit
runner = CliRunner()

PROBLEMS = "\n".join(json.dumps(p) for p in [
    {"id": "r1", "question": "Sam reads 15 pages a day for 7 days. How many pages?", "answer": 105,
     "solution": "print(15 * 7)"},
    {"id": "r2", "question": "A box holds 12 eggs. How many eggs are in 5 boxes?", "answer": 60,
     "solution": "eggs = 12 * 5\nprint(eggs)"},
    {"id": "bad", "question": "What is 7 plus 8?", "answer": 15, "solution": "print(7 + 9)"},
    {"id": "crash", "question": "What is 1 plus 1?", "answer": 2, "solution": "raise RuntimeError('boom')"},
    {"id": "v1", "question": "Name an even number below 10.", "verifier": "def verify(a):\n    return int(a) % 2 == 0",
     "solution": "print(4)"},
])


def _run(tmp_path: Path, text: str = PROBLEMS, *extra: str) -> dict:
    f = tmp_path / "problems.jsonl"
    f.write_text(text)
    result = runner.invoke(app, ["run", str(f), "--samples", "2", "--json", *extra])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_run_deposits_verified_solutions_only_and_replays_them(data_dir: Path, tmp_path: Path) -> None:
    report = _run(tmp_path)
    status = {p["id"]: p for p in report["problems"]}
    assert {k: v["status"] for k, v in status.items()} == {
        "r1": "deposited", "r2": "deposited", "bad": "rejected", "crash": "rejected", "v1": "deposited"}
    for pid in ("bad", "crash"):
        assert status[pid]["block_id"] is None and status[pid]["recurrence_route"] == "abstain"
        assert status[pid]["samples"] == 0  # a rejected reference is never sampled
    for pid in ("r1", "r2", "v1"):
        assert status[pid]["recurrence_route"] == "recurrence"
        assert 1 <= status[pid]["recurrence_decode_tokens"] <= MAX_ANSWER_TOKENS
    totals = report["totals"]
    assert totals["deposited"] == 3 and totals["rejected"] == 2 and totals["recurrence_answered"] == 3
    assert totals["skill_graft_ms"] > 0 and totals["skill_prefill_ms"] > 0
    rt = open_runtime()
    try:
        with rt.session() as s:
            kinds = sorted(k for (k,) in s.execute(sa.select(BlockRow.kind)))
            assert kinds == ["skill", "solution", "solution", "solution"]
            verdicts = dict(s.execute(sa.select(ProblemRow.external_id, GenerationRow.verdict)
                                      .join(GenerationRow, GenerationRow.problem_id == ProblemRow.id)).all())
            assert verdicts == {"r1": "reference", "r2": "reference", "bad": "wrong", "crash": "error",
                                "v1": "reference"}
    finally:
        rt.close()


def test_a_rerun_is_idempotent_by_content(data_dir: Path, tmp_path: Path) -> None:
    first = _run(tmp_path)
    second = _run(tmp_path, PROBLEMS, "--fresh")  # a new batch of the same problems
    blocks = lambda r: {p["id"]: p["block_id"] for p in r["problems"]}  # noqa: E731
    assert blocks(first) == blocks(second)
    assert first["batch_id"] != second["batch_id"]
    assert _count(BlockRow) == 4


def test_the_same_command_again_continues_its_batch_and_solves_nothing_twice(data_dir: Path,
                                                                             tmp_path: Path) -> None:
    first = _run(tmp_path)
    generations = _count(GenerationRow)
    again = _run(tmp_path)
    assert again["batch_id"] == first["batch_id"] and again["resumed"] and not first["resumed"]
    assert again["problems"] == first["problems"]
    assert _count(GenerationRow) == generations
    other_team = _run(tmp_path, PROBLEMS, "--team", "another")  # another team's run is its own batch
    assert other_team["batch_id"] != first["batch_id"]


def _count(model: type) -> int:
    rt = open_runtime()
    try:
        with rt.session() as s:
            return int(s.scalar(sa.select(sa.func.count()).select_from(model)) or 0)
    finally:
        rt.close()


def test_recurrence_decodes_exactly_what_a_fresh_computation_decodes(data_dir: Path, tmp_path: Path) -> None:
    _run(tmp_path, PROBLEMS.splitlines()[0])
    rt = open_runtime()
    try:
        engine = rt.engine()
        style = style_for(engine)
        answer = answer_question(rt, "Sam reads 15 pages a day for 7 days. How many pages?",
                                 params=AnswerParams(use_direct=False, use_transfer=False))
        assert answer.route == "recurrence" and answer.block_id is not None
        block = block_to_snapshot(rt.blocks.get(engine.fingerprint.id, answer.block_id))
        query = tokens_of(engine, recurrence_query(style))
        with engine.open_context() as ctx:  # fresh: prefill the block's tokens, then the same query and decode
            engine.prefill(ctx, list(block.tokens))
            logits = engine.query(ctx, query, pos0=block.pos_end).rows[-1]
            fresh = generate(engine, ctx, pos=block.pos_end + len(query), logits=logits,
                             params=SamplingParams(max_tokens=MAX_ANSWER_TOKENS, stop=style.answer_stops))
        assert (fresh.text.strip() or None) == answer.answer
        assert len(fresh.tokens) == answer.decode_tokens
        # the question is matched after normalization (case, spaces, trailing punctuation)
        again = answer_question(rt, "  sam reads 15 pages a day for 7 days.   how many pages ",
                                params=AnswerParams(use_direct=False, use_transfer=False))
        assert again.route == "recurrence" and again.block_id == answer.block_id
    finally:
        rt.close()


def test_unsolved_problem_records_every_sample_and_deposits_nothing(data_dir: Path) -> None:
    rt = open_runtime()
    try:
        specs = parse_problems_jsonl(json.dumps({"id": "s", "question": "What is 3 times 4?", "answer": 12}))
        _, (pid,) = submit_batch(rt, specs, team="t")
        assert solve_problem(rt, pid, params=SolveParams(samples=3, max_tokens=40)) == "failed"
        assert solve_problem(rt, pid, params=SolveParams(samples=3, max_tokens=40)) == "failed"  # idempotent
        with rt.session() as s:
            gens = s.scalars(sa.select(GenerationRow).where(GenerationRow.problem_id == pid)).all()
            assert sorted(g.sample_index for g in gens) == [0, 1, 2]
            assert all(g.verdict != "verified" for g in gens)
            assert s.scalar(sa.select(sa.func.count()).select_from(BlockRow).where(BlockRow.kind == "solution")) == 0
    finally:
        rt.close()


def test_a_redelivered_solve_resumes_from_its_recorded_samples(data_dir: Path) -> None:
    rt = open_runtime()
    try:
        specs = parse_problems_jsonl(json.dumps({"id": "s", "question": "What is 3 times 4?", "answer": 12}))
        _, (pid,) = submit_batch(rt, specs, team="t")
        solve_problem(rt, pid, params=SolveParams(samples=2, max_tokens=40))
        with rt.session() as s:  # as if the worker died after recording two samples
            problem = s.get(ProblemRow, pid)
            problem.status, problem.outcome = "pending", None
            first = {g.sample_index: g.text_digest for g in
                     s.scalars(sa.select(GenerationRow).where(GenerationRow.problem_id == pid))}
        assert solve_problem(rt, pid, params=SolveParams(samples=4, max_tokens=40)) == "failed"
        with rt.session() as s:
            again = {g.sample_index: g.text_digest for g in
                     s.scalars(sa.select(GenerationRow).where(GenerationRow.problem_id == pid))}
        assert sorted(again) == [0, 1, 2, 3] and {k: again[k] for k in first} == first
    finally:
        rt.close()


def test_ask_binds_the_verified_program_or_abstains_rather_than_guessing(data_dir: Path, tmp_path: Path) -> None:
    _run(tmp_path)
    # the same structure as r2 (12 eggs a box, 5 boxes) with new numbers: r2's signed parameterized program
    result = runner.invoke(app, ["ask", "A box holds 20 eggs. How many eggs are in 3 boxes?", "--samples", "2",
                                 "--json"])
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert {"answer", "route", "block_id", "decode_tokens", "verified", "attested"} <= set(answer)
    assert (answer["route"], answer["answer"], answer["verified"]) == ("program", "60", False)
    # another structure (two quantities of eggs): the tiny model's grafted samples do not pass the gate
    other = json.loads(runner.invoke(app, ["ask", "A box holds 20 eggs. How many boxes hold 100 eggs?",
                                           "--samples", "2", "--json"]).stdout)
    assert other["route"] == "abstain" and other["answer"] is None and other["verified"] is False
    repeat = json.loads(runner.invoke(app, ["ask", "A box holds 12 eggs. How many eggs are in 5 boxes?",
                                            "--json"]).stdout)
    assert repeat["route"] == "recurrence" and repeat["attested"] is True
    assert 1 <= repeat["decode_tokens"] <= MAX_ANSWER_TOKENS


def test_bad_problem_file_is_a_clear_error(data_dir: Path, tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"id": "a", "question": "q", "answer": 1}\n{oops\n')
    result = runner.invoke(app, ["run", str(f), "--json"])
    assert result.exit_code == 2 and "line 2" in result.stderr
    assert _count(ProblemRow) == 0
