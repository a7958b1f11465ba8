"""The HTTP API (FastAPI): teams submit batches and questions, operators and auditors read blocks, provenance and
attestations. Thin: parse, authorize, call workers/ and store/; every error is JSON with a stable code.

With a broker (KVGRAFT_BROKER_URL) work goes to the Celery queues; without one (the embedded default) it runs on a
single background thread of this process, one model computation at a time."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any

import sqlalchemy as sa
import structlog
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.auth import AnyRole, Auditor, Principal, Staff, Submitter
from services.metrics import ApiMetrics
from store.db import Attestation, Batch, BlockRow, Generation, Problem, QueryRequest, Team
from store.db import Query as QueryRow
from store.repository import batch_problems, get_block, list_attestations
from workers.dispatch import answer_request, dispatch_solves, submit_batch, submit_question
from workers.problems import MAX_QUESTION_CHARS, ProblemInputError, parse_problem_list, parse_problems_jsonl
from workers.runtime import Runtime, open_runtime
from workers.settings import Settings
from workers.solve import SolveParams

log = structlog.get_logger(__name__)
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "text/plain")
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]


class QueryIn(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    answer: int | float | str | None = Field(default=None, description="Known answer, to verify against")
    verifier: str | None = Field(default=None, max_length=32_000, description="Python defining verify(answer)")


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


def _error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


_STATUS_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type",
                 422: "invalid_request"}


class Work:
    """Where submitted work runs: the Celery queues, or one background thread of this process."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.local = None if rt.settings.broker_url else ThreadPoolExecutor(1, thread_name_prefix="kvgraft-work")
        self.pending = 0
        self._lock = threading.Lock()

    def _track(self, fn: Any, *args: Any) -> None:
        with self._lock:
            self.pending += 1

        def run() -> None:
            try:
                fn(*args)
            except Exception as exc:  # noqa: BLE001 - logged; the database keeps the pending state visible
                log.error("api.background_failed", error=str(exc), task=getattr(fn, "__name__", "?"))
            finally:
                with self._lock:
                    self.pending -= 1

        assert self.local is not None
        self.local.submit(run)

    def solve(self, problem_ids: list[str]) -> bool:
        """Queue the problems; False when the broker could not be reached (the batch stays stored and pending
        until `kvgraft requeue` sends it)."""
        if self.local is not None:
            self._track(dispatch_solves, self.rt, problem_ids)
            return True
        try:
            dispatch_solves(self.rt, problem_ids)
        except Exception as exc:  # noqa: BLE001 - kombu raises several connection error types
            log.error("api.dispatch_deferred", problems=len(problem_ids), error=str(exc))
            return False
        return True

    def answer(self, request_id: str) -> bool:
        if self.local is not None:
            self._track(answer_request, self.rt, request_id)
            return True
        from workers.celery_app import send

        try:
            send(self.rt.settings.broker_url or "", "kvgraft.answer_query", request_id)
        except Exception as exc:  # noqa: BLE001
            log.error("api.dispatch_deferred", request_id=request_id, error=str(exc))
            return False
        return True

    def queue_depths(self) -> dict[str, int]:
        if self.local is not None:
            return {"local": self.pending}
        from workers.celery_app import QUEUES, sender

        depths: dict[str, int] = {}
        try:
            with sender(self.rt.settings.broker_url or "").connection_for_read() as conn:
                for name in QUEUES:
                    _, count, _ = conn.default_channel.queue_declare(queue=name, passive=True)
                    depths[name] = int(count)
        except Exception as exc:  # noqa: BLE001 - a scrape must not fail because the broker is down
            log.warning("api.queue_depth_unavailable", error=str(exc))
        return depths

    def close(self) -> None:
        if self.local is not None:
            self.local.shutdown(wait=True, cancel_futures=False)


def _team_owned(s: Any, model: Any, object_id: str, who: Principal, what: str) -> Any:
    """A batch or question of the caller's team; another team's, like a missing one, is a 404."""
    obj = s.get(model, object_id[:64])
    if obj is None or obj.team_id != who.team_id:
        raise ApiError(404, "not_found", f"no {what} {object_id}")
    return obj


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _block_item(row: BlockRow, team_names: dict[int, str]) -> dict[str, Any]:
    return {"id": row.id, "kind": row.kind, "fingerprint": row.fingerprint,
            "team": team_names.get(row.team_id) if row.team_id is not None else None, "n_tokens": row.n_tokens,
            "bytes": row.bytes, "shared": row.shared, "created_at": _iso(row.created_at)}


def _visible(query: Any, who: Principal) -> Any:
    """Blocks a principal may see: operators/auditors all; a team its own and shared ones."""
    if who.deployment_wide:
        return query
    return query.where(sa.or_(BlockRow.team_id == who.team_id, BlockRow.shared.is_(True)))


def attach_runtime(app: FastAPI, rt: Runtime) -> None:
    """Give the app its runtime and work executor (done by the lifespan; tests may do it themselves)."""
    app.state.runtime = rt
    app.state.work = Work(rt)


def detach_runtime(app: FastAPI) -> None:
    app.state.work.close()
    app.state.runtime.close()
    del app.state.work, app.state.runtime


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

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
    metrics = ApiMetrics(lambda: getattr(app.state, "runtime", None),
                         lambda: app.state.work.queue_depths() if hasattr(app.state, "work") else {})
    app.state.metrics = metrics

    @app.middleware("http")
    async def limit_and_count(request: Request, call_next: Any) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > settings.max_body_bytes):
            response = _error(413, "payload_too_large",
                              f"request bodies are limited to {settings.max_body_bytes} bytes")
        else:
            response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        metrics.requests.labels(path=path, status=str(response.status_code)).inc()
        return response

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message, **exc.extra)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        response = _error(exc.status_code, _STATUS_CODES.get(exc.status_code, "error"), str(exc.detail))
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [{"where": ".".join(str(p) for p in e.get("loc", ())), "message": e.get("msg", "")}
                    for e in exc.errors()]
        return _error(422, "invalid_request", "the request does not match the API schema", details=problems)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.error("api.unexpected_error", error=repr(exc))
        return _error(500, "internal_error", "unexpected server error; it has been logged")

    def rt_of(request: Request) -> Runtime:
        return request.app.state.runtime  # type: ignore[no-any-return]

    @app.get("/healthz", tags=["service"])
    def healthz(request: Request) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            s.execute(sa.text("SELECT 1"))
        return {"status": "ok", "store": rt.blocks.url, "broker": bool(rt.settings.broker_url)}

    @app.get("/metrics", tags=["service"], response_class=PlainTextResponse)
    def prometheus_metrics() -> PlainTextResponse:
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
        try:
            if ctype == "application/json":
                try:
                    data = json.loads(body)
                except (ValueError, UnicodeDecodeError) as exc:
                    raise ApiError(400, "malformed_json", f"the body is not valid JSON: {exc}") from None
                if isinstance(data, dict):
                    flag = data.get("shared", shared)
                    if not isinstance(flag, bool):
                        raise ApiError(400, "malformed_batch", "'shared' must be true or false")
                    shared = flag
                    data = data.get("problems")
                specs = parse_problem_list(data)
            elif ctype in JSONL_TYPES:
                specs = parse_problems_jsonl(body)
            else:
                raise ApiError(415, "unsupported_media_type",
                               f"send application/json or JSONL ({', '.join(JSONL_TYPES)}), not {ctype}")
        except ProblemInputError as exc:
            raise ApiError(400, "malformed_batch", str(exc),
                           lines=[{"line": n, "message": m} for n, m in exc.errors]) from None
        rt = rt_of(request)
        batch_id, ids = submit_batch(rt, specs, team=who.team_id, shared=shared, params=SolveParams())
        queued = request.app.state.work.solve(ids)
        log.info("api.batch_submitted", batch_id=batch_id, problems=len(ids), team=who.team, queued=queued)
        return {"batch_id": batch_id, "problems": len(ids), "dispatch": "queued" if queued else "deferred"}

    @app.get("/v1/batches/{batch_id}", tags=["teams"])
    def get_batch(batch_id: str, request: Request, who: Submitter) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            batch = _team_owned(s, Batch, batch_id, who, "batch")
            problems = batch_problems(s, batch_id=batch.id)
            items = [{"id": p.external_id, "status": p.status, "block_id": p.block_id,
                      "answer": (p.outcome or {}).get("answer"), "reason": (p.outcome or {}).get("reason"),
                      "samples": (p.outcome or {}).get("samples")} for p in problems]
            counts = {"total": len(problems), "done": sum(p.status == "solved" for p in problems),
                      "failed": sum(p.status in ("failed", "rejected") for p in problems),
                      "pending": sum(p.status == "pending" for p in problems)}
            return {"batch_id": batch.id, "status": batch.status, "shared": batch.shared, "counts": counts,
                    "created_at": _iso(batch.created_at), "finished_at": _iso(batch.finished_at),
                    "problems": items}

    def _query_result(s: Any, req: QueryRequest) -> dict[str, Any]:
        if req.status == "pending":
            return {"request_id": req.id, "status": "pending"}
        if req.status == "failed" or req.query_id is None:
            return {"request_id": req.id, "status": "failed", "error": req.error}
        row = s.get(QueryRow, req.query_id)
        return {"request_id": req.id, "status": "done", "answer": row.answer, "route": row.route,
                "block_id": row.block_id, "decode_tokens": row.decode_tokens, "verified": row.verified,
                "attested": row.attested}

    @app.post("/v1/queries", tags=["teams"])
    def create_query(body: QueryIn, request: Request, who: Submitter
                     ) -> JSONResponse:
        rt = rt_of(request)
        expected = {k: v for k, v in (("answer", body.answer), ("verifier", body.verifier)) if v is not None}
        if "\x00" in body.question:
            raise ApiError(400, "bad_request", "NUL bytes are not allowed in a question")
        request_id = submit_question(rt, body.question, team_id=who.team_id, expected=expected or None)
        t0 = time.perf_counter()
        if not request.app.state.work.answer(request_id):
            return JSONResponse({"request_id": request_id, "status": "pending", "dispatch": "deferred"},
                                status_code=202)
        deadline = time.monotonic() + rt.settings.query_timeout_s
        pause = 0.002  # poll quickly at first (a recurrence answers in tens of ms), then back off
        while True:
            with rt.session() as s:
                req = s.get(QueryRequest, request_id)
                result = _query_result(s, req)
            if result["status"] != "pending":
                break
            if time.monotonic() > deadline:
                return JSONResponse(result, status_code=202)
            time.sleep(pause)
            pause = min(pause * 1.5, 0.1)
        metrics.answer_latency.observe(time.perf_counter() - t0)
        if result["status"] == "done":
            metrics.answers.labels(route=result["route"]).inc()
            return JSONResponse(result)
        raise ApiError(422, "unanswerable", f"the question could not be answered: {result.get('error')}",
                       request_id=request_id)

    @app.get("/v1/queries/{request_id}", tags=["teams"])
    def get_query(request_id: str, request: Request, who: Submitter) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            return _query_result(s, _team_owned(s, QueryRequest, request_id, who, "query"))

    @app.get("/v1/blocks", tags=["blocks"])
    def list_blocks(request: Request, who: AnyRole, limit: Limit = 100, offset: Offset = 0,
                    kind: str | None = None, fingerprint: str | None = None) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            query = _visible(sa.select(BlockRow), who)
            if kind is not None:
                query = query.where(BlockRow.kind == kind)
            if fingerprint is not None:
                query = query.where(BlockRow.fingerprint == fingerprint)
            total = s.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
            rows = s.scalars(query.order_by(BlockRow.created_at.desc(), BlockRow.id).limit(limit).offset(offset))
            names = dict(s.execute(sa.select(Team.id, Team.name)).all())
            return {"items": [_block_item(r, names) for r in rows], "total": total}

    @app.get("/v1/blocks/{block_id}", tags=["blocks"])
    def show_block(block_id: str, request: Request,
                   who: AnyRole) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            row = s.scalar(_visible(sa.select(BlockRow).where(BlockRow.id == block_id[:64]), who))
            if row is None:
                raise ApiError(404, "not_found", f"no block {block_id}")
            names = dict(s.execute(sa.select(Team.id, Team.name)).all())
            atts, _ = list_attestations(s, block_id=row.id, limit=100)
            return _block_item(row, names) | {
                "object_key": row.object_key, "payload_sha256": row.payload_sha256, "profile": row.profile,
                "source": row.source if (who.deployment_wide or row.team_id == who.team_id) else None,
                "attestations": [_attestation_item(a) for a in atts]}

    def _provenance(s: Any, row: BlockRow, names: dict[int, str]) -> dict[str, Any]:
        problems = s.scalars(sa.select(Problem).where(Problem.block_id == row.id)).all()
        out = []
        for p in problems:
            batch = s.get(Batch, p.batch_id)
            gens = s.scalars(sa.select(Generation).where(Generation.problem_id == p.id)
                             .order_by(Generation.sample_index)).all()
            out.append({"problem_id": p.id, "external_id": p.external_id, "question": p.question,
                        "question_digest": p.question_digest, "answer": p.answer, "status": p.status,
                        "batch_id": p.batch_id, "team": names.get(batch.team_id) if batch else None,
                        "generations": [{"sample_index": g.sample_index, "prompt_digest": g.prompt_digest,
                                         "text_digest": g.text_digest, "program_digest": g.program_digest,
                                         "verdict": g.verdict, "answer": g.answer,
                                         "sandbox": (g.sandbox_result or {}).get("reason"),
                                         "created_at": _iso(g.created_at)} for g in gens]})
        atts, _ = list_attestations(s, block_id=row.id, limit=1000)
        return {"block": _block_item(row, names) | {"payload_sha256": row.payload_sha256,
                                                   "object_key": row.object_key, "store_url": row.store_url,
                                                   "source": row.source, "text_digest": row.text_digest},
                "problems": out, "attestations": [_attestation_item(a) for a in atts]}

    @app.get("/v1/provenance/{block_id}", tags=["auditors"])
    def provenance(block_id: str, request: Request, who: Auditor) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            row = get_block(s, block_id=block_id[:64])
            if row is None:
                raise ApiError(404, "not_found", f"no block {block_id}")
            names = dict(s.execute(sa.select(Team.id, Team.name)).all())
            return _provenance(s, row, names)

    @app.get("/v1/provenance", tags=["auditors"])
    def provenance_search(request: Request, who: Auditor, block_id: str | None = None,
                          problem_digest: str | None = None, team: str | None = None,
                          since: datetime | None = None, until: datetime | None = None,
                          limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            query = sa.select(BlockRow)
            if block_id is not None:
                query = query.where(BlockRow.id == block_id)
            if problem_digest is not None:
                query = query.where(BlockRow.id.in_(sa.select(Problem.block_id)
                                                    .where(Problem.question_digest == problem_digest)))
            if team is not None:
                query = query.join(Team, BlockRow.team_id == Team.id).where(Team.name == team)
            if since is not None:
                query = query.where(BlockRow.created_at >= since)
            if until is not None:
                query = query.where(BlockRow.created_at < until)
            total = s.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
            rows = s.scalars(query.order_by(BlockRow.created_at.desc(), BlockRow.id).limit(limit).offset(offset))
            names = dict(s.execute(sa.select(Team.id, Team.name)).all())
            return {"items": [_provenance(s, r, names) for r in rows], "total": total}

    @app.get("/v1/attestations", tags=["operators", "auditors"])
    def attestations(request: Request, who: Staff, block_id: str | None = None, fingerprint: str | None = None,
                     status: str | None = None, limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
        rt = rt_of(request)
        with rt.session() as s:
            rows, total = list_attestations(s, block_id=block_id, fingerprint=fingerprint, status=status,
                                            limit=limit, offset=offset)
            summary = [{"fingerprint": fp, "profile_id": pid, "status": st, "count": n} for fp, pid, st, n in
                       s.execute(sa.select(Attestation.fingerprint, Attestation.profile_id, Attestation.status,
                                           sa.func.count()).group_by(Attestation.fingerprint,
                                                                     Attestation.profile_id, Attestation.status))]
            return {"items": [_attestation_item(a) for a in rows], "total": total, "summary": summary}

    return app


def _attestation_item(a: Attestation) -> dict[str, Any]:
    return {"id": a.id, "block_id": a.block_id, "fingerprint": a.fingerprint, "profile_id": a.profile_id,
            "profile": a.profile, "host": a.host, "status": a.status, "byte_exact": a.byte_exact,
            "floor_equal": a.floor_equal, "kl_mean": a.kl_mean, "kl_max": a.kl_max,
            "argmax_agree": a.argmax_agree, "max_abs_diff": a.max_abs_diff, "reason": a.reason,
            "created_at": _iso(a.created_at)}
