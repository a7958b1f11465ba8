"""What every part of the HTTP API shares: the JSON error shape, ISO times, the request's runtime and work, the
paging parameters."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import JSONResponse

from services.work import Work
from workers.runtime import Runtime

Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra
        self.headers = headers or {}


OPENAI_PATHS = frozenset({"/v1/models", "/v1/completions", "/v1/chat/completions"})


def error_response(status: int, code: str, message: str, *, path: str | None = None, **extra: Any) -> JSONResponse:
    """The API's error body, {"error": {"code", "message", ...}}; on an OpenAI route (`path`) always with OpenAI's
    `type` and `param` too (param null when no one parameter is to blame)."""
    if path in OPENAI_PATHS:
        default = "server_error" if status >= 500 else ("requests" if status == 429 else "invalid_request_error")
        extra = {**extra, "type": extra.get("type") or default, "param": extra.get("param")}
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


STATUS_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type",
                 422: "invalid_request", 429: "too_many_requests", 503: "unavailable"}


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def rt_of(request: Request) -> Runtime:
    return request.app.state.runtime  # type: ignore[no-any-return]


def work_of(request: Request) -> Work:
    return request.app.state.work  # type: ignore[no-any-return]
