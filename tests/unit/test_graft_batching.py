"""Graft workers answering recurring questions together (workers/queue/recurring.py): each answer equal to the same
question answered alone, every position's logits SHA-256-equal to the same graft decoded alone in a one-sequence
context (what the graft check attests), batching only where the `batch` check says so, questions of other teams
answered only from blocks they may graft, and nothing taken that another delivery is working on.

The Q4_1 tiny model with flash attention off is the configuration where ggml computes a row the same way whatever
shares the call (docs/ENGINE.md); with flash attention on, a lone row past 512 padded KV cells takes another
attention path, so the check refuses and each question is answered alone."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from engine.batching import BatchCore, SequenceJob
from store.db import QueryRequestRow
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question, answer_request_for
from workers.flywheel.recurrence import answer_sampling, decode_alone, decode_together, find_hit
from workers.problems import ProblemSpec
from workers.queue import recurring
from workers.queue.dispatch import answer_request, solve_stored_problem, submit_batch, submit_question
from workers.runtime import Runtime, open_runtime

pytestmark = pytest.mark.unit

PROBLEMS = [
    ProblemSpec(id="r1", question="Sam reads 15 pages a day for 7 days. How many pages?", answer=105,
                solution="print(15 * 7)"),
    ProblemSpec(id="r2", question="A box holds 12 eggs. How many eggs are in 5 boxes?", answer=60,
                solution="eggs = 12 * 5\nprint(eggs)"),
    ProblemSpec(id="r3", question="Ann has 9 coins and finds 4 more. How many coins?", answer=13,
                solution="print(9 + 4)"),
]
ONLY_RECURRENCE = AnswerParams(use_direct=False, use_transfer=False, use_context=False)


def _runtime(data_dir: Path, monkeypatch: pytest.MonkeyPatch, *, flash_attn: bool) -> Runtime:
    monkeypatch.setenv("KVGRAFT_MODEL", "tiny-q4_1")
    monkeypatch.setenv("KVGRAFT_GRAFT_FLASH_ATTN", "true" if flash_attn else "false")
    monkeypatch.setenv("KVGRAFT_GRAFT_MAX_SEQS", "4")
    return open_runtime()


def _deposit(rt: Runtime, team: str) -> int:
    _batch, ids = submit_batch(rt, PROBLEMS, team=team)
    for pid in ids:
        assert solve_stored_problem(rt, pid) == "solved"
    with rt.session() as s:
        from store.repository import get_or_create_team

        return get_or_create_team(s, name=team).id


@pytest.fixture()
def fa_off(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Runtime, int]]:
    rt = _runtime(data_dir, monkeypatch, flash_attn=False)
    try:
        yield rt, _deposit(rt, "alpha")
    finally:
        rt.close()


def _answer_row(rt: Runtime, request_id: str) -> tuple[str, QueryRequestRow]:
    from store.db import AnswerRow

    with rt.session() as s:
        request = s.get(QueryRequestRow, request_id)
        assert request is not None
        s.expunge(request)
        if request.query_id is None:
            return request.status, request
        answer = s.get(AnswerRow, request.query_id)
        assert answer is not None
        return request.status, answer


def test_recurring_questions_taken_together_get_the_answers_each_gets_alone(fa_off: tuple[Runtime, int]) -> None:
    rt, alpha = fa_off
    alone = [answer_question(rt, p.question, team_id=alpha, params=ONLY_RECURRENCE, record=False) for p in PROBLEMS]
    assert all(a.route == "recurrence" for a in alone)  # random weights: the decoded text is not the answer
    policy = recurring.graft_batching(rt, rt.engine())
    assert policy.grafts, policy.graft_reason
    ids = [submit_question(rt, p.question, team_id=alpha) for p in PROBLEMS]
    unrelated = submit_question(rt, "What colour is the sky on Mars?", team_id=alpha)
    assert answer_request(rt, ids[0]) == "done"
    # the other repeats were taken and answered beside it; the question that is no repeat was left to its delivery
    for request_id, expected in zip(ids, alone, strict=True):
        status, row = _answer_row(rt, request_id)
        assert status == "done"
        assert (row.answer, row.route, row.block_id, row.decode_tokens, row.verified, row.attested) == (
            expected.answer, expected.route, expected.block_id, expected.decode_tokens, expected.verified,
            expected.attested)
    assert _answer_row(rt, unrelated)[0] == "pending"
    with rt.session() as s:  # every delivery started was ended (none looks lost)
        rows = s.scalars(sa.select(QueryRequestRow).where(QueryRequestRow.id.in_([*ids, unrelated]))).all()
        assert all(r.deliveries == r.deliveries_ended for r in rows)
        assert [r.deliveries for r in rows if r.id != unrelated] == [1, 1, 1]
    for request_id in ids[1:]:  # their own messages, delivered later, leave the outcome alone
        assert answer_request(rt, request_id) == "done"
    assert answer_request(rt, unrelated) == "done"


def test_grafted_answers_decoded_together_are_byte_identical_to_each_grafted_alone(
        fa_off: tuple[Runtime, int]) -> None:
    """Every position's logits digest of every question, decoded beside the others in the batch context, equals the
    same graft decoded alone in a one-sequence context (twice: the control), and the first row equals the attested
    path's (engine.graft: restore into a fresh context, the query in one call)."""
    rt, alpha = fa_off
    engine = rt.engine()
    hits = []
    for p in PROBLEMS:
        request = answer_request_for(engine, p.question, team_id=alpha, expected=None, verifier=None,
                                     params=ONLY_RECURRENCE)
        hit = find_hit(rt, request)
        assert hit is not None
        hits.append((request, hit))
    style = hits[0][0].style
    jobs = [SequenceJob(tokens=h.snapshot.tokens + h.query, params=answer_sampling(style), restore=h.snapshot,
                        query_feed=True, digests=True) for _, h in hits]
    runs = []
    for _ in range(2):
        with engine.open_context() as ctx:
            core = BatchCore(engine, ctx)
            runs.append([core.run_all([(0, job)])[0] for job in jobs])
    with engine.pooled_batch_context(4) as ctx:
        together = BatchCore(engine, ctx).run_all([(0, job) for job in jobs])
    assert max(r.batched_with for r in together) == len(jobs)
    for a, b, c in zip(*runs, together, strict=True):
        assert (a.generated.tokens, a.generated.digests) == (b.generated.tokens, b.generated.digests)  # control
        assert a.generated.tokens == c.generated.tokens and a.generated.digests == c.generated.digests
        assert a.first_logits_sha256 == c.first_logits_sha256
    for (_, hit), run in zip(hits, together, strict=True):
        attested_path = engine.graft(hit.snapshot, hit.query, payload_verified=True).rows[-1]
        assert hashlib.sha256(attested_path.tobytes()).hexdigest() == run.first_logits_sha256
    # and the route's own functions agree: decode_together equals decode_alone, text and tokens
    decoded = decode_together(engine, style, [h for _, h in hits], 4)
    for (_, hit), d in zip(hits, decoded, strict=True):
        assert d.generated.tokens == decode_alone(engine, style, hit).generated.tokens


def test_another_teams_repeat_is_not_taken_without_a_block_it_may_graft(fa_off: tuple[Runtime, int]) -> None:
    rt, alpha = fa_off
    with rt.session() as s:
        from store.repository import get_or_create_team

        beta = get_or_create_team(s, name="beta").id
    mine = submit_question(rt, PROBLEMS[0].question, team_id=alpha)
    theirs = submit_question(rt, PROBLEMS[1].question, team_id=beta)  # alpha's private block answers it for alpha only
    assert answer_request(rt, mine) == "done"
    status, _ = _answer_row(rt, theirs)
    assert status == "pending"
    with rt.session() as s:
        row = s.get(QueryRequestRow, theirs)
        assert row is not None and row.deliveries == row.deliveries_ended
    assert answer_request(rt, theirs) == "done"
    _, answer = _answer_row(rt, theirs)
    assert answer.route != "recurrence" and answer.block_id is None


def test_a_question_another_delivery_is_working_on_is_not_taken(fa_off: tuple[Runtime, int],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The claim decides, not the listing: even offered a question another delivery is working on (as a listing
    racing that delivery's start would), the conditional update refuses to take it."""
    rt, alpha = fa_off

    def every_pending(session: Any, *, exclude: str, limit: int) -> list[QueryRequestRow]:
        return list(session.scalars(sa.select(QueryRequestRow).where(QueryRequestRow.status == "pending",
                                                                   QueryRequestRow.id != exclude)
                                    .order_by(QueryRequestRow.created_at).limit(limit)))

    monkeypatch.setattr(recurring, "waiting_questions", every_pending)
    first = submit_question(rt, PROBLEMS[0].question, team_id=alpha)
    busy = submit_question(rt, PROBLEMS[1].question, team_id=alpha)
    free = submit_question(rt, PROBLEMS[2].question, team_id=alpha)
    with rt.session() as s:  # a delivery started elsewhere and still running
        s.execute(sa.update(QueryRequestRow).where(QueryRequestRow.id == busy).values(deliveries=1))
    assert answer_request(rt, first) == "done"
    assert _answer_row(rt, free)[0] == "done"  # taken beside it
    status, row = _answer_row(rt, busy)
    assert status == "pending" and row.deliveries == 1 and row.deliveries_ended == 0  # untouched


def test_with_flash_attention_on_the_check_refuses_and_each_question_is_answered_alone(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = _runtime(data_dir, monkeypatch, flash_attn=True)
    try:
        alpha = _deposit(rt, "alpha")
        policy = recurring.graft_batching(rt, rt.engine())
        assert not policy.grafts and policy.graft_reason
        ids = [submit_question(rt, p.question, team_id=alpha) for p in PROBLEMS]
        assert answer_request(rt, ids[0]) == "done"
        assert [_answer_row(rt, i)[0] for i in ids[1:]] == ["pending", "pending"]
    finally:
        rt.close()


def test_a_taken_question_whose_graft_fails_leaves_the_others_answered(fa_off: tuple[Runtime, int],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """One question's graft that cannot be set into the batch context (a state the context refuses) fails only that
    question, which is released for its own delivery; the asking one and the others are answered as alone."""
    from dataclasses import replace as dc_replace

    rt, alpha = fa_off
    alone = {p.question: answer_question(rt, p.question, team_id=alpha, params=ONLY_RECURRENCE, record=False)
             for p in PROBLEMS}
    real = recurring.find_hit

    def broken_for_the_second(rt_: Runtime, request: Any) -> Any:
        hit = real(rt_, request)
        if hit is not None and request.question == PROBLEMS[1].question:
            hit = dc_replace(hit, snapshot=dc_replace(hit.snapshot, payload=b"\x00" * 64))
        return hit

    monkeypatch.setattr(recurring, "find_hit", broken_for_the_second)
    ids = [submit_question(rt, p.question, team_id=alpha) for p in PROBLEMS]
    assert answer_request(rt, ids[0]) == "done"
    statuses = {i: _answer_row(rt, i)[0] for i in ids}
    assert statuses == {ids[0]: "done", ids[1]: "pending", ids[2]: "done"}
    for request_id, p in ((ids[0], PROBLEMS[0]), (ids[2], PROBLEMS[2])):
        row = _answer_row(rt, request_id)[1]
        assert (row.answer, row.decode_tokens) == (alone[p.question].answer, alone[p.question].decode_tokens)
    with rt.session() as s:
        row = s.get(QueryRequestRow, ids[1])
        assert row is not None and row.deliveries == row.deliveries_ended == 1 and row.error is None


def test_a_taken_questions_failing_answer_never_becomes_the_askers_outcome(fa_off: tuple[Runtime, int],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoded together, one taken question's own answer checks raise (a sandbox gone, a database error, a bug):
    that question is released to its own delivery untouched, and neither its error nor its text reaches the asking
    question (possibly another team's), which is answered as alone; the third is answered too."""
    rt, alpha = fa_off
    alone = {p.question: answer_question(rt, p.question, team_id=alpha, params=ONLY_RECURRENCE, record=False)
             for p in PROBLEMS}
    real = recurring.hit_answer

    def failing_for_the_second(rt_: Runtime, request: Any, hit: Any, decoded: Any) -> Any:
        if request.question == PROBLEMS[1].question:
            raise RuntimeError(f"checking {request.question!r} failed")
        return real(rt_, request, hit, decoded)

    monkeypatch.setattr(recurring, "hit_answer", failing_for_the_second)
    ids = [submit_question(rt, p.question, team_id=alpha) for p in PROBLEMS]
    assert answer_request(rt, ids[0]) == "done"
    asker = _answer_row(rt, ids[0])[1]
    assert (asker.answer, asker.decode_tokens) == (alone[PROBLEMS[0].question].answer,
                                                   alone[PROBLEMS[0].question].decode_tokens)
    assert _answer_row(rt, ids[2])[0] == "done"
    with rt.session() as s:
        rows = {r.id: r for r in s.scalars(sa.select(QueryRequestRow).where(QueryRequestRow.id.in_(ids)))}
        assert rows[ids[0]].error is None and rows[ids[1]].status == "pending" and rows[ids[1]].error is None
        assert all(r.deliveries == r.deliveries_ended == 1 for r in rows.values())
    monkeypatch.setattr(recurring, "hit_answer", real)
    assert answer_request(rt, ids[1]) == "done"  # its own delivery answers it
