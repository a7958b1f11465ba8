"""`kvgraft run`: the main job. Phase 1 solves and deposits (in-process, or through the `solve` queue when a broker
is configured), phase 2 replays every problem as a recurring query through the library (exact lookup only: a
problem that was not deposited abstains), phase 3 reports.

The same file, team and parameters name one batch (`batches.source_digest`): running the same command again
continues that batch, so problems already solved are not solved again and the report covers the whole file. The
CLI runs the job in a child process (workers.supervise), so that a native crash ends the command with one line
naming the problem and the signal."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from store.repository import batch_problems, get_batch, newest_batch_from
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.prefix import ensure_skill, measure_skill_saving
from workers.flywheel.prompts import style_for
from workers.flywheel.solve import SolveParams
from workers.problems import ProblemSpec, parse_problems_jsonl
from workers.queue.dispatch import dispatch_solves, submit_batch
from workers.runtime import Runtime, open_runtime
from workers.settings import load_settings
from workers.verify.answer_match import answers_match

STATUS_NAMES = {"solved": "deposited", "rejected": "rejected", "failed": "unsolved"}
REPLAY = AnswerParams(use_direct=False, use_transfer=False)


@dataclass(frozen=True)
class JobParams:
    solve: SolveParams = SolveParams()
    team: str = "local"
    shared: bool = False
    model: str | None = None
    wait_timeout_s: float = 6 * 3600
    fresh: bool = False  # a new batch even when this file was run before with the same team and parameters


JobEvent = Callable[[dict[str, Any]], None]


def source_digest(problems: list[ProblemSpec], params: JobParams, *, fingerprint: str) -> str:
    """SHA-256 over what the job was given: the problems in order, the team, sharing, the solving parameters and
    the architecture fingerprint it runs under (another model or build is another batch)."""
    body = {"problems": [asdict(p) for p in problems], "team": params.team, "shared": params.shared,
            "solve": asdict(params.solve), "fingerprint": fingerprint}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def _resumable_batch(rt: Runtime, digest: str, team: str) -> tuple[str, list[str]] | None:
    """The newest batch of `team` made from the same input, and its problem ids in order, if there is one."""
    with rt.session() as s:
        batch_id = newest_batch_from(s, source_digest=digest, team=team)
        if batch_id is None:
            return None
        return batch_id, [p.id for p in batch_problems(s, batch_id=batch_id)]


def _wait_for_batch(rt: Runtime, batch_id: str, total: int, timeout_s: float,
                    progress: Callable[[int], None] | None) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        with rt.session() as s:
            done = sum(p.status in STATUS_NAMES for p in batch_problems(s, batch_id=batch_id))
            batch = get_batch(s, batch_id=batch_id)
            finished = batch is not None and batch.status == "done"
        if progress:
            progress(done)
        if finished or done >= total:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"batch {batch_id}: {done}/{total} problems done after {timeout_s:.0f} s")
        time.sleep(1.0)


def run_job(rt: Runtime, problems: list[ProblemSpec], params: JobParams = JobParams(), *,
            on_solved: Callable[[int], None] | None = None,
            on_replayed: Callable[[int], None] | None = None,
            on_event: JobEvent | None = None) -> dict[str, Any]:
    """Solve, replay and report. `on_event` receives {"step": "solve" | "replay", "problem": external id, "n",
    "total"} before each problem is worked on (what a crash report names)."""
    emit = on_event or (lambda _event: None)
    engine = rt.engine(params.model)
    emit({"step": "skill", "model": engine.name})
    skill = ensure_skill(rt, engine, style_for(engine))
    saving = measure_skill_saving(engine, skill)
    digest = source_digest(problems, params, fingerprint=engine.fingerprint.id)
    resumed = None if params.fresh else _resumable_batch(rt, digest, params.team)
    if resumed is not None:
        batch_id, problem_ids = resumed
    else:
        batch_id, problem_ids = submit_batch(rt, problems, team=params.team, shared=params.shared,
                                             params=params.solve, model=params.model, source_digest=digest)
    external = {pid: spec.id for pid, spec in zip(problem_ids, problems, strict=True)}
    with rt.session() as s:
        already = sum(p.status in STATUS_NAMES for p in batch_problems(s, batch_id=batch_id))
    counter = {"n": already}
    if on_solved:
        on_solved(already)

    def starting(pid: str) -> None:
        emit({"step": "solve", "problem": external[pid], "n": counter["n"] + 1, "total": len(problem_ids)})

    def solved(_pid: str, _status: str) -> None:
        counter["n"] += 1
        if on_solved:
            on_solved(counter["n"])

    dispatch_solves(rt, problem_ids, progress=solved, on_start=starting)
    if rt.settings.broker_url:
        _wait_for_batch(rt, batch_id, len(problem_ids), params.wait_timeout_s, on_solved)
    with rt.session() as s:
        rows = batch_problems(s, batch_id=batch_id)
        team_id = get_batch(s, batch_id=batch_id).team_id  # type: ignore[union-attr]
    report_rows = []
    for i, problem in enumerate(rows, start=1):
        emit({"step": "replay", "problem": problem.external_id, "n": i, "total": len(rows)})
        outcome = dict(problem.outcome or {})
        replay = answer_question(rt, problem.question, team_id=team_id, model=params.model, params=REPLAY)
        correct = replay.route == "recurrence" and answers_match(replay.answer, outcome.get("answer"))
        report_rows.append({
            "id": problem.external_id, "status": STATUS_NAMES.get(problem.status, problem.status),
            "base_verified": outcome.get("route") == "sampled", "samples": outcome.get("samples", 0),
            "sample_tokens": outcome.get("sample_tokens", 0), "block_id": problem.block_id,
            "answer": outcome.get("answer"), "recurrence_answer": replay.answer,
            "recurrence_route": replay.route, "recurrence_decode_tokens": replay.decode_tokens,
            "recurrence_correct": correct, "reason": outcome.get("reason")})
        if on_replayed:
            on_replayed(i)
    deposited = [r for r in report_rows if r["status"] == "deposited"]
    on_recurrence = [r for r in deposited if r["recurrence_route"] == "recurrence"]
    base_tokens = sum(r["sample_tokens"] for r in report_rows)
    recurrence_tokens = sum(r["recurrence_decode_tokens"] for r in on_recurrence)
    totals = {
        "problems": len(report_rows),
        "deposited": len(deposited),
        "rejected": sum(r["status"] == "rejected" for r in report_rows),
        "unsolved": sum(r["status"] == "unsolved" for r in report_rows),
        "base_solved": sum(r["base_verified"] for r in report_rows),
        "base_samples_per_problem": params.solve.samples,
        "base_tokens": base_tokens,
        "recurrence_answered": len(on_recurrence),
        "recurrence_correct": sum(r["recurrence_correct"] for r in on_recurrence),
        "recurrence_decode_tokens_mean": round(recurrence_tokens / len(on_recurrence), 2) if on_recurrence else None,
        "token_ratio": round(base_tokens / recurrence_tokens, 1) if recurrence_tokens else None,
        **saving,
    }
    return {"batch_id": batch_id, "resumed": resumed is not None, "model": engine.name,
            "fingerprint": engine.fingerprint.id, "problems": report_rows, "totals": totals}


def run_job_child(emit: JobEvent, problems_jsonl: bytes, params: JobParams) -> dict[str, Any]:
    """run_job in a supervised child process (workers.supervise): progress and the problem at hand go to `emit`."""
    from workers.queue.shutdown import StopRequest

    specs = parse_problems_jsonl(problems_jsonl)
    settings = load_settings()  # this child process's settings
    stop = StopRequest(settings.shutdown_grace_s)  # SIGTERM: no new problem starts; the one running gets the grace
    stop.install()

    def on_event(event: dict[str, Any]) -> None:
        if event.get("step") in ("solve", "replay"):
            stop.check()
        emit(event)

    with open_runtime(settings) as rt:
        return run_job(rt, specs, params, on_event=on_event,
                       on_solved=lambda n: emit({"step": "solved", "n": n, "total": len(specs)}),
                       on_replayed=lambda n: emit({"step": "replayed", "n": n, "total": len(specs)}))
