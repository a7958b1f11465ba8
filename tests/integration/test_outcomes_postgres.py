"""Exactly one outcome on PostgreSQL, where text cannot hold NUL and a JSON answer can be any size: a 401-digit
integer answer and a program printing NUL are solved and recorded (they crashed the solve task before), a wrong
integer answer close to the right one is rejected, and a store error while answering ends the request `failed`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from store.db import GenerationRow, ProblemRow, QueryRequestRow
from store.migrate import upgrade
from workers.problems import parse_problems_jsonl
from workers.queue.dispatch import answer_request, dispatch_solves, submit_batch, submit_question
from workers.runtime import open_runtime

pytestmark = pytest.mark.integration


@pytest.fixture()
def pg_runtime(pg_url: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    upgrade(pg_url)
    monkeypatch.setenv("KVGRAFT_DATABASE_URL", pg_url)
    rt = open_runtime()
    yield rt
    rt.close()


def test_huge_integers_and_nul_output_end_in_outcomes_on_postgresql(pg_runtime: Any) -> None:
    big = int("7" * 401)
    lines = [{"id": "big", "question": "What is the big number?", "answer": big, "solution": f"print({big})"},
             {"id": "nul", "question": "What does it print?", "answer": 3, "solution": "print('3\\x00')"},
             {"id": "near", "question": "What is ten million?", "answer": 10000000, "solution": "print(10000009)"}]
    _, ids = submit_batch(pg_runtime, parse_problems_jsonl("\n".join(json.dumps(x) for x in lines)), team="t")
    dispatch_solves(pg_runtime, ids)
    with pg_runtime.session() as s:
        status = {p.external_id: p.status for p in s.scalars(sa.select(ProblemRow))}
        assert status == {"big": "solved", "nul": "solved", "near": "rejected"}
        big_row = s.scalars(sa.select(ProblemRow).where(ProblemRow.external_id == "big")).one()
        assert big_row.outcome["answer"] == str(big)
        nul_answer = s.scalar(sa.select(GenerationRow.answer)
                              .join(ProblemRow, ProblemRow.id == GenerationRow.problem_id)
                              .where(ProblemRow.external_id == "nul"))
        assert nul_answer == "3\ufffd"  # NUL stored as U+FFFD


def test_a_store_error_while_answering_ends_failed_on_postgresql(pg_runtime: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.flywheel.recurrence as answering
    from store.errors import BlockIntegrityError

    request = submit_question(pg_runtime, "What is 3 plus 4?", team_id=None)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise BlockIntegrityError("the routed block does not hash to its id")

    monkeypatch.setattr(answering, "find_recurrence", broken)
    assert answer_request(pg_runtime, request) == "failed"
    with pg_runtime.session() as s:
        assert s.get(QueryRequestRow, request).error.startswith("store_error: BlockIntegrityError")
