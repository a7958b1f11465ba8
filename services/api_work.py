"""The team-facing work of the HTTP API: batches of problems and questions submitted, their outcomes read back, and
whose shared blocks a team grafts. Parse, admit (services/work.py), store and dispatch through workers/; a team
only ever sees its own work (another team's batch or question is a 404, like a missing one)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from services.api_common import ApiError, iso, rt_of, work_of
from services.auth import Principal, Submitter
from services.validation import GuardedRoute
from services.work import Dispatch
from store.repository import (
    batch_problems,
    get_question,
    get_team,
    graft_sources,
    set_graft_from,
    team_names,
)
from store.repository import get_batch as stored_batch  # the route get_batch below takes the name
from workers.flywheel.solve import SolveParams
from workers.problems import (
    MAX_LINE_BYTES,
    MAX_QUESTION_CHARS,
    ProblemInputError,
    ProblemSpec,
    parse_problem_list,
    parse_problems_jsonl,
)
from workers.queue.dispatch import question_outcome, submit_batch, submit_question
from workers.runtime import Runtime
from workers.strict_json import loads_strict, screen_jsonl, unstorable

log = structlog.get_logger(__name__)
router = APIRouter(route_class=GuardedRoute)
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "text/plain")


class GraftFromIn(BaseModel):
    teams: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(max_length=1000)


class QueryIn(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)  # behind loads_strict, which refuses NaN and 1e400 already

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    answer: int | float | str | None = Field(default=None, description="Known answer, to verify against")
    verifier: str | None = Field(default=None, max_length=32_000, description="Python defining verify(answer)")


def _with_refused(parse: Callable[[], list[ProblemSpec]], refused: list[tuple[int, str]]) -> list[ProblemSpec]:
    """Run the problem parser; the lines refused before it (by the strict JSON rules) join its errors, one error per
    line, in one all-or-nothing ProblemInputError."""
    try:
        specs = parse()
    except ProblemInputError as exc:
        named = {n for n, _ in exc.errors}
        # a JSONL batch whose only lines were refused (and blanked) reads as empty to the parser: that is not news
        others = [e for e in exc.errors if not (refused and e[0] == 0 and e[1].startswith("no problems"))]
        raise ProblemInputError(sorted(others + [r for r in refused if r[0] not in named])) from None
    if refused:
        raise ProblemInputError(refused)
    return specs


def _parse_batch(body: bytes, ctype: str, shared: bool) -> tuple[list[ProblemSpec], bool]:
    """A batch body (JSON list, JSON object with `problems` and `shared`, or JSONL) -> its problems and `shared`.
    Every body is decoded by the strict JSON rules (workers/strict_json.py); a problem holding NUL is a bad line."""
    try:
        if ctype == "application/json":
            try:
                data = loads_strict(body, storable=False)
            except (ValueError, UnicodeDecodeError) as exc:  # a JsonInputError is a ValueError too
                raise ApiError(400, "malformed_json", f"the body is not valid JSON: {exc}") from None
            if isinstance(data, dict):
                flag = data.get("shared", shared)
                if not isinstance(flag, bool):
                    raise ApiError(400, "malformed_batch", "'shared' must be true or false")
                shared = flag
                data = data.get("problems")
            refused = [(n, why) for n, item in enumerate(data, start=1) if (why := unstorable(item))] \
                if isinstance(data, list) else []
            return _with_refused(lambda: parse_problem_list(data), refused), shared
        if ctype in JSONL_TYPES:
            screened, refused = screen_jsonl(body, max_line_bytes=MAX_LINE_BYTES)
            return _with_refused(lambda: parse_problems_jsonl(screened), refused), shared
    except ProblemInputError as exc:
        raise ApiError(400, "malformed_batch", str(exc),
                       lines=[{"line": n, "message": m} for n, m in exc.errors]) from None
    raise ApiError(415, "unsupported_media_type",
                   f"send application/json or JSONL ({', '.join(JSONL_TYPES)}), not {ctype}")


def _team_owned(found: Callable[[str], Any], object_id: str, who: Principal, what: str) -> Any:
    """A batch or question of the caller's team (`found` looks it up by id); another team's, like a missing one,
    is a 404."""
    obj = found(object_id[:64])
    if obj is None or obj.team_id != who.team_id:
        raise ApiError(404, "not_found", f"no {what} {object_id}")
    return obj


@router.post("/v1/batches", status_code=201, tags=["teams"], openapi_extra={"requestBody": {"content": {
    "application/json": {"schema": {"oneOf": [{"type": "array", "items": {"type": "object"}},
                                              {"type": "object", "properties": {
                                                  "problems": {"type": "array", "items": {"type": "object"}},
                                                  "shared": {"type": "boolean"}}}]}},
    "application/x-ndjson": {"schema": {"type": "string"}}}, "required": True}})
async def create_batch(request: Request, who: Submitter, shared: bool = False) -> dict[str, Any]:
    body = await request.body()
    limit = request.app.state.settings.max_body_bytes
    if len(body) > limit:
        raise ApiError(413, "payload_too_large", f"request bodies are limited to {limit} bytes")
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    specs, shared = await run_in_threadpool(_parse_batch, body, ctype, shared)
    rt, work = rt_of(request), work_of(request)

    def store() -> tuple[str, list[str], Dispatch]:
        with work.admission(who.team_id, "batches") as ticket:
            batch_id, ids = submit_batch(rt, specs, team=who.team_id, shared=shared, params=SolveParams())
        return batch_id, ids, work.solve(ticket, ids)

    batch_id, ids, dispatch = await run_in_threadpool(store)
    log.info("api.batch_submitted", batch_id=batch_id, problems=len(ids), team=who.team, queued=dispatch.queued)
    return {"batch_id": batch_id, "problems": len(ids), "dispatch": "queued" if dispatch.queued else "deferred"}


@router.get("/v1/batches/{batch_id}", tags=["teams"])
def get_batch(batch_id: str, request: Request, who: Submitter) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        batch = _team_owned(lambda i: stored_batch(s, batch_id=i), batch_id, who, "batch")
        problems = batch_problems(s, batch_id=batch.id)
        items = [{"id": p.external_id, "status": p.status, "block_id": p.block_id,
                  "answer": (p.outcome or {}).get("answer"), "reason": (p.outcome or {}).get("reason"),
                  "samples": (p.outcome or {}).get("samples")} for p in problems]
        counts = {"total": len(problems), "done": sum(p.status == "solved" for p in problems),
                  "failed": sum(p.status in ("failed", "rejected") for p in problems),
                  "pending": sum(p.status == "pending" for p in problems)}
        return {"batch_id": batch.id, "status": batch.status, "shared": batch.shared, "counts": counts,
                "created_at": iso(batch.created_at), "finished_at": iso(batch.finished_at),
                "problems": items}


def _query_result(s: Any, req: Any) -> dict[str, Any]:
    """A question's outcome as its team sees it over HTTP (the answer row's id is internal)."""
    return {k: v for k, v in question_outcome(s, req).items() if k != "query_id"}


def _read_outcome(rt: Runtime, request_id: str) -> dict[str, Any]:
    with rt.session() as s:
        return _query_result(s, get_question(s, request_id=request_id))


async def _await_outcome(rt: Runtime, request_id: str, finished: Future[None] | None) -> dict[str, Any]:
    """The question's result once it has an outcome or the wait (KVGRAFT_QUERY_TIMEOUT_S) is over, waiting
    without holding a thread: embedded, the end of the background task wakes it; with a broker it polls the
    database in short sessions, quickly at first (a recurrence answers in tens of ms), then every 100 ms."""
    deadline = time.monotonic() + rt.settings.query_timeout_s
    ended = asyncio.wrap_future(finished) if finished is not None else None
    pause = 0.002
    while True:
        result = await run_in_threadpool(_read_outcome, rt, request_id)
        left = deadline - time.monotonic()
        if result["status"] != "pending" or left <= 0:
            return result
        if ended is None:
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 1.5, 0.1)
        elif ended.done():
            return result  # the task ended without an outcome (logged: dispatch.outcome_not_recorded): still pending
        else:
            await asyncio.wait({ended}, timeout=left)


@router.post("/v1/queries", tags=["teams"])
async def create_query(body: QueryIn, request: Request, who: Submitter) -> JSONResponse:
    rt, work = rt_of(request), work_of(request)
    expected = {k: v for k, v in (("answer", body.answer), ("verifier", body.verifier)) if v is not None}
    if "\x00" in body.question:
        raise ApiError(400, "bad_request", "NUL bytes are not allowed in a question")

    def submit() -> tuple[str, Dispatch]:
        with work.admission(who.team_id, "queries") as ticket:
            request_id = submit_question(rt, body.question, team_id=who.team_id, expected=expected or None)
        return request_id, work.answer(ticket, request_id)

    request_id, dispatch = await run_in_threadpool(submit)
    t0 = time.perf_counter()
    if dispatch.refused is not None:
        raise ApiError(503, "no_live_worker", dispatch.refused, request_id=request_id)
    if not dispatch.queued:
        return JSONResponse({"request_id": request_id, "status": "pending", "dispatch": "deferred"},
                            status_code=202)
    result = await _await_outcome(rt, request_id, dispatch.finished)
    if result["status"] == "pending":
        return JSONResponse(result, status_code=202)
    metrics = request.app.state.metrics
    metrics.answer_latency.observe(time.perf_counter() - t0)
    if result["status"] == "done":
        metrics.answers.labels(route=result["route"]).inc()
        return JSONResponse(result)
    raise ApiError(422, "unanswerable", f"the question could not be answered: {result.get('error')}",
                   request_id=request_id)


@router.get("/v1/teams/me/graft-from", tags=["teams"])
def get_graft_from(request: Request, who: Submitter) -> dict[str, Any]:
    """Whose shared verified blocks this team grafts besides its own: its own choice, or (`chosen: false`) the
    teams an operator marked trusted."""
    with rt_of(request).session() as s:
        team = get_team(s, team_id=who.team_id)
        names = team_names(s)
        sources = graft_sources(s, team_id=who.team_id)
        return {"team": team.name if team else None, "chosen": bool(team and team.graft_from is not None),
                "teams": sorted(names[t] for t in sources if t in names)}


@router.put("/v1/teams/me/graft-from", tags=["teams"])
def put_graft_from(body: GraftFromIn, request: Request, who: Submitter) -> dict[str, Any]:
    """Choose whose shared verified blocks this team grafts (`teams: null` returns to the operator-trusted
    default). Every answer says whose key verified the block it used (`verified_by`)."""
    try:
        with rt_of(request).session() as s:
            set_graft_from(s, team_id=who.team_id, names=body.teams)
    except LookupError as exc:
        raise ApiError(422, "unknown_team", str(exc)) from None
    return get_graft_from(request, who)


@router.get("/v1/queries/{request_id}", tags=["teams"])
def get_query(request_id: str, request: Request, who: Submitter) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        return _query_result(s, _team_owned(lambda i: get_question(s, request_id=i), request_id, who, "query"))
