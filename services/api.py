"""The HTTP API (FastAPI): teams submit batches and questions, operators and auditors read blocks, provenance and
attestations. Thin: parse, authorize, call workers/ and store/; every error is JSON with a stable code.

With a broker (KVGRAFT_BROKER_URL) work goes to the Celery queues; without one (the embedded default) it runs on a
background work thread of this process, one task at a time (a question repeating a solved one may answer other
waiting repeats beside it: workers/queue/recurring.py). Every model computation of the process, the work
thread's included, runs on the serving engine's one compute thread (engine/batching.py), interleaved with the
OpenAI endpoints' completions (services/api_openai.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.api_blocks import router as blocks_router
from services.api_common import OPENAI_PATHS, STATUS_CODES, ApiError, error_response
from services.api_openai import param_of
from services.api_openai import router as openai_router
from services.api_service import router as service_router
from services.api_work import router as work_router
from services.body import BodyLimit
from services.metrics import ApiMetrics
from services.validation import GuardedRoute
from services.work import QueueFull, TeamBusy, Work
from workers.runtime import Runtime, open_runtime
from workers.serving.service import Serving
from workers.settings import Settings, load_settings

log = structlog.get_logger(__name__)


def _validation_message(error: Any) -> str:
    """A validation error's message; a body the strict JSON decoder refused says why (FastAPI keeps it in ctx)."""
    message = str(error.get("msg", ""))
    reason = (error.get("ctx") or {}).get("error")
    if error.get("type") == "json_invalid" and isinstance(reason, str):
        message = f"{message}: {reason}"
    return message


def attach_runtime(app: FastAPI, rt: Runtime) -> None:
    """Give the app its runtime and work executor (done by the lifespan; tests may do it themselves)."""
    app.state.runtime = rt
    # the serving engine first: embedded, its thread computes for the work thread too, from the first decode (a
    # second OpenMP team would slow both: BENCHMARKS.md); its checks start now, in the background (/readyz)
    app.state.serving = Serving(rt)
    app.state.serving.start_checks()
    app.state.work = Work(rt)


def detach_runtime(app: FastAPI, grace_s: float | None = None) -> None:
    """Close what attach_runtime opened; with `grace_s` (a process told to stop) each part gets at most that long:
    a running check stops at its next decode, completions still running are cancelled, queued work is dropped
    (pending rows, requeued later), and a task still running after it is abandoned with the runtime it uses."""
    serving = getattr(app.state, "serving", None)
    if serving is not None:  # the OpenAI endpoints' engine: pending prefix deposits finish first
        serving.close(timeout=60 if grace_s is None else grace_s)
        app.state.serving = None
    stopped = app.state.work.close(grace_s)
    if stopped:  # never close the engine under a task still running on it (the process is exiting anyway)
        app.state.runtime.close()
    del app.state.work, app.state.runtime


def _answer_errors_as_json(app: FastAPI) -> None:
    """Every error is a JSON body with a stable code: the project's ApiError, HTTP errors (OpenAI's codes on its
    paths), schema violations (OpenAI's 400 naming the parameter on its paths, else 422), a team's limit (429) and
    a full work queue (503), both with Retry-After; anything unexpected is a logged 500."""

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
            if first.get("type") == "json_invalid":  # no parameter to blame: its location is a character offset
                return error_response(400, "invalid_json", f"the body is not valid JSON: {_validation_message(first)}",
                                      path=request.url.path, param=None)
            param = param_of(request.url.path, tuple(first.get("loc", ())))
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
        log.error("api.unexpected_error", error=repr(exc), exc_info=exc)
        return error_response(500, "internal_error", "unexpected server error; it has been logged",
                              path=request.url.path)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or load_settings()  # `kvgraft serve` passes its own

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if hasattr(app.state, "runtime"):  # attached by its owner (a test harness): theirs to close
            yield
            return
        attach_runtime(app, open_runtime(settings))
        mine, my_serving = app.state.work, app.state.serving
        try:
            yield
        finally:
            if getattr(app.state, "work", None) is mine:
                detach_runtime(app, getattr(app.state, "shutdown_grace_s", None))
            else:  # someone re-attached meanwhile: close only what this lifespan opened (its checks stopped first)
                my_serving.close()
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
    app.state.settings = settings  # the routes' limits (the runtime's settings may be a test harness's)

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

    _answer_errors_as_json(app)
    app.include_router(service_router)
    app.include_router(work_router)
    app.include_router(blocks_router)
    app.include_router(openai_router)
    return app
