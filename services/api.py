"""The HTTP API (FastAPI): teams submit batches and questions, operators and auditors read blocks, provenance and
attestations. Thin: parse, authorize, call workers/ and store/; every error is JSON with a stable code.

With a broker (KVGRAFT_BROKER_URL) work goes to the Celery queues; without one (the embedded default) it runs on a
background work thread of this process, one task at a time (a question repeating a solved one may answer other
waiting repeats beside it: workers/queue/recurring.py). Every model computation of the process, the work
thread's included, runs on the serving engine's one compute thread (engine/batching.py), interleaved with the
OpenAI endpoints' completions (services/api_openai.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from contextlib import asynccontextmanager
from typing import Annotated, Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.api_blocks import router as blocks_router
from services.api_common import OPENAI_PATHS, STATUS_CODES, ApiError, error_response, iso, rt_of, work_of
from services.api_openai import router as openai_router
from services.auth import Principal, Staff, Submitter
from services.body import BodyLimit
from services.metrics import ApiMetrics
from services.validation import GuardedRoute
from services.work import Dispatch, QueueFull, TeamBusy, Work
from store.repository import (
    batch_problems,
    check_connection,
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
from workers.runtime import Runtime, open_runtime
from workers.serving.service import Serving
from workers.settings import Settings, load_settings
from workers.strict_json import loads_strict, screen_jsonl, unstorable

log = structlog.get_logger(__name__)
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


def _validation_message(error: Any) -> str:
    """A validation error's message; a body the strict JSON decoder refused says why (FastAPI keeps it in ctx)."""
    message = str(error.get("msg", ""))
    reason = (error.get("ctx") or {}).get("error")
    if error.get("type") == "json_invalid" and isinstance(reason, str):
        message = f"{message}: {reason}"
    return message


def _team_owned(found: Callable[[str], Any], object_id: str, who: Principal, what: str) -> Any:
    """A batch or question of the caller's team (`found` looks it up by id); another team's, like a missing one,
    is a 404."""
    obj = found(object_id[:64])
    if obj is None or obj.team_id != who.team_id:
        raise ApiError(404, "not_found", f"no {what} {object_id}")
    return obj


def attach_runtime(app: FastAPI, rt: Runtime) -> None:
    """Give the app its runtime and work executor (done by the lifespan; tests may do it themselves)."""
    app.state.runtime = rt
    if not rt.settings.broker_url:  # embedded: the serving engine's thread computes for the work thread too, from
        app.state.serving = Serving(rt)  # the first decode (a second OpenMP team would slow both: BENCHMARKS.md)
    app.state.work = Work(rt)


def detach_runtime(app: FastAPI) -> None:
    serving = getattr(app.state, "serving", None)
    if serving is not None:  # the OpenAI endpoints' engine: pending prefix deposits finish first
        serving.close()
        app.state.serving = None
    app.state.work.close()
    app.state.runtime.close()
    del app.state.work, app.state.runtime


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or load_settings()  # `kvgraft serve` passes its own

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if hasattr(app.state, "runtime"):  # attached by its owner (a test harness): theirs to close
            yield
            return
        attach_runtime(app, open_runtime(settings))
        mine = app.state.work
        try:
            yield
        finally:
            if getattr(app.state, "work", None) is mine:
                detach_runtime(app)
            else:  # someone re-attached meanwhile: close only what this lifespan opened
                mine.close()
                mine.rt.close()

    app = FastAPI(title="kvgraft", version="0.1.0", lifespan=lifespan,
                  description="Byte-exact KV-cache blocks for frozen language models: teams, operators, auditors.")
    app.router.route_class = GuardedRoute  # every route: NUL-free path and query, aware datetimes, strict JSON
    # Inside limit_and_count (which refuses a declared Content-Length over the limit first): bodies are counted as
    # they stream in, and reading stops with a 413 at the limit.
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    metrics = ApiMetrics(lambda: getattr(app.state, "runtime", None),
                         lambda: app.state.work.queue_depths() if hasattr(app.state, "work") else {})
    app.state.metrics = metrics

    @app.middleware("http")
    async def limit_and_count(request: Request, call_next: Any) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > settings.max_body_bytes):
            response = error_response(413, "payload_too_large",
                                      f"request bodies are limited to {settings.max_body_bytes} bytes",
                                      path=request.url.path)
        else:
            response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        metrics.requests.labels(path=path, status=str(response.status_code)).inc()
        return response

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        response = error_response(exc.status, exc.code, exc.message, path=request.url.path, **exc.extra)
        response.headers.update(exc.headers)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        path = request.url.path
        code = STATUS_CODES.get(exc.status_code, "error")
        if path in OPENAI_PATHS and exc.status_code == 401:
            code = "invalid_api_key"  # OpenAI's code for a missing, wrong or revoked key
        response = error_response(exc.status_code, code, str(exc.detail), path=path)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [{"where": ".".join(str(p) for p in e.get("loc", ())), "message": _validation_message(e)}
                    for e in exc.errors()]
        if request.url.path in OPENAI_PATHS:  # OpenAI answers a bad parameter with 400, naming it
            first = exc.errors()[0] if exc.errors() else {}
            where = [str(p) for p in first.get("loc", ())][1:]  # after "body"
            param = ".".join(where) or None
            return error_response(400, "invalid_value", f"invalid value for {param or 'the body'}: "
                                  f"{_validation_message(first)}", path=request.url.path, param=param,
                                  details=problems)
        return error_response(422, "invalid_request", "the request does not match the API schema", details=problems)

    @app.exception_handler(TeamBusy)
    async def team_busy(_: Request, exc: TeamBusy) -> JSONResponse:
        log.info("api.team_limited", team_id=exc.team_id, kind=exc.kind, in_flight=exc.in_flight, limit=exc.limit)
        response = error_response(429, "too_many_in_flight", str(exc), kind=exc.kind, limit=exc.limit)
        response.headers["Retry-After"] = str(exc.retry_after_s)
        return response

    @app.exception_handler(QueueFull)
    async def queue_full(_: Request, exc: QueueFull) -> JSONResponse:
        log.warning("api.queue_full", depth=exc.depth, limit=exc.limit)
        response = error_response(503, "queue_full", str(exc))
        response.headers["Retry-After"] = str(exc.retry_after_s)
        return response

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("api.unexpected_error", error=repr(exc))
        return error_response(500, "internal_error", "unexpected server error; it has been logged",
                              path=request.url.path)

    @app.get("/healthz", tags=["service"])
    def healthz(request: Request) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            check_connection(s)
        return {"status": "ok", "store": rt.blocks.url, "broker": bool(rt.settings.broker_url),
                "blocks_signed": rt.settings.block_key is not None, "block_signing": rt.settings.block_signing,
                "block_encryption": rt.settings.block_encryption}

    @app.get("/metrics", tags=["operators"], response_class=PlainTextResponse)
    def prometheus_metrics(who: Staff) -> PlainTextResponse:
        """Prometheus metrics of the whole deployment, for operators and auditors (a bearer token in the scrape
        config): store bytes, evictions and answer counts over every team are not a team's to see."""
        return PlainTextResponse(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.post("/v1/batches", status_code=201, tags=["teams"], openapi_extra={"requestBody": {"content": {
        "application/json": {"schema": {"oneOf": [{"type": "array", "items": {"type": "object"}},
                                                  {"type": "object", "properties": {
                                                      "problems": {"type": "array", "items": {"type": "object"}},
                                                      "shared": {"type": "boolean"}}}]}},
        "application/x-ndjson": {"schema": {"type": "string"}}}, "required": True}})
    async def create_batch(request: Request, who: Submitter, shared: bool = False) -> dict[str, Any]:
        body = await request.body()
        if len(body) > settings.max_body_bytes:
            raise ApiError(413, "payload_too_large", f"request bodies are limited to {settings.max_body_bytes} bytes")
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

    @app.get("/v1/batches/{batch_id}", tags=["teams"])
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
                return result  # the task ended without an outcome (logged as api.background_failed): still pending
            else:
                await asyncio.wait({ended}, timeout=left)

    @app.post("/v1/queries", tags=["teams"])
    async def create_query(body: QueryIn, request: Request, who: Submitter
                           ) -> JSONResponse:
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
        metrics.answer_latency.observe(time.perf_counter() - t0)
        if result["status"] == "done":
            metrics.answers.labels(route=result["route"]).inc()
            return JSONResponse(result)
        raise ApiError(422, "unanswerable", f"the question could not be answered: {result.get('error')}",
                       request_id=request_id)

    @app.get("/v1/teams/me/graft-from", tags=["teams"])
    def get_graft_from(request: Request, who: Submitter) -> dict[str, Any]:
        """Whose shared verified blocks this team grafts besides its own: its own choice, or (`chosen: false`) the
        teams an operator marked trusted."""
        with rt_of(request).session() as s:
            team = get_team(s, team_id=who.team_id)
            names = team_names(s)
            sources = graft_sources(s, team_id=who.team_id)
            return {"team": team.name if team else None, "chosen": bool(team and team.graft_from is not None),
                    "teams": sorted(names[t] for t in sources if t in names)}

    @app.put("/v1/teams/me/graft-from", tags=["teams"])
    def put_graft_from(body: GraftFromIn, request: Request, who: Submitter) -> dict[str, Any]:
        """Choose whose shared verified blocks this team grafts (`teams: null` returns to the operator-trusted
        default). Every answer says whose key verified the block it used (`verified_by`)."""
        try:
            with rt_of(request).session() as s:
                set_graft_from(s, team_id=who.team_id, names=body.teams)
        except LookupError as exc:
            raise ApiError(422, "unknown_team", str(exc)) from None
        return get_graft_from(request, who)

    @app.get("/v1/queries/{request_id}", tags=["teams"])
    def get_query(request_id: str, request: Request, who: Submitter) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            return _query_result(s, _team_owned(lambda i: get_question(s, request_id=i), request_id, who, "query"))

    app.include_router(blocks_router)
    app.include_router(openai_router)
    return app
