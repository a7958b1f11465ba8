"""The API's request-validation layer, ahead of FastAPI's own, for every route (the app's `route_class`):

* no path parameter, query parameter name or query value may hold NUL (U+0000) or a lone surrogate: PostgreSQL
  text cannot store NUL, and psycopg refuses to send a string it cannot encode as UTF-8, so such a value would fail
  inside a query instead of being refused here (SQLite would accept it, so the rule is the same on both);
* a datetime query parameter (any declared `datetime`, now or in routes added later) must carry a UTC offset and
  stay within year 1..9999 once converted to UTC: the catalogue stores aware UTC only, and
  `0001-01-01T00:00:00+14:00` overflows on the way there;
* JSON bodies are decoded by `loads_strict` (bounded depth and number size, finite numbers, no NUL).

Each refusal is a RequestValidationError, so it reaches clients as the API's usual 422 `invalid_request`."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from fastapi import params
from fastapi.dependencies.utils import get_flat_params
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import TypeAdapter, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from workers.strict_json import loads_strict

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
_DATETIME = TypeAdapter(datetime)
_INLINE_JSON_BYTES = 64 << 10  # larger bodies are decoded on a worker thread, not on the event loop


class StrictJsonRequest(Request):
    """A request whose `json()` is `loads_strict` (FastAPI decodes JSON bodies through it)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            self._json = loads_strict(body) if len(body) <= _INLINE_JSON_BYTES else \
                await run_in_threadpool(loads_strict, body)
        return self._json


def _is_datetime(annotation: Any) -> bool:
    if annotation is datetime:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_is_datetime(a) for a in typing.get_args(annotation))
    return False


def _unstorable(where: str, value: str) -> dict[str, Any] | None:
    m = _UNSTORABLE.search(value)
    if m is None:
        return None
    what = "NUL (U+0000)" if m.group() == "\x00" else "a lone UTF-16 surrogate"
    return {"type": "value_error", "loc": tuple(where.split(".", 1)), "msg": f"{what} is not allowed",
            "input": value}


def _moment_error(name: str, raw: str) -> dict[str, Any] | None:
    try:
        value = _DATETIME.validate_python(raw)
    except ValidationError:
        return None  # not a datetime at all: FastAPI's own validation words that
    if value.tzinfo is None or value.utcoffset() is None:
        msg = "a datetime must carry a UTC offset (Z or +HH:MM)"
    else:
        try:
            value.astimezone(UTC)
            return None
        except OverflowError:
            msg = "the datetime is out of range once converted to UTC"
    return {"type": "value_error", "loc": ("query", name), "msg": msg, "input": raw}


def request_errors(request: Request, moments: frozenset[str]) -> list[dict[str, Any]]:
    """What this layer refuses in a request's path and query, as RequestValidationError items."""
    errors: list[dict[str, Any]] = []
    for name, value in request.path_params.items():
        if isinstance(value, str) and (error := _unstorable(f"path.{name}", value)):
            errors.append(error)
    for name, value in request.query_params.multi_items():
        error = _unstorable(f"query.{name}", name) or _unstorable(f"query.{name}", value)
        if error is None and name in moments:
            error = _moment_error(name, value)
        if error:
            errors.append(error)
    return errors


class GuardedRoute(APIRoute):
    """An APIRoute that runs `request_errors` first and gives FastAPI a StrictJsonRequest."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        moments = frozenset(f.alias for f in get_flat_params(self.dependant)
                            if isinstance(f.field_info, params.Query) and _is_datetime(f.field_info.annotation))

        async def guarded(request: Request) -> Response:
            errors = request_errors(request, moments)
            if errors:
                raise RequestValidationError(errors)
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return guarded
