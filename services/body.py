"""Request bodies, read defensively: a byte limit counted while the body streams in (the strict JSON parser is
workers/strict_json.py, shared with the JSONL batch parser).

`BodyLimit` wraps the ASGI `receive` channel and counts the bytes of every `http.request` message; past the limit it
raises `BodyTooLarge` (a 413) from `receive` itself, so whatever is reading the body stops there and the rest of a
chunked upload is never read. A declared Content-Length over the limit is refused before the body is touched.
"""

from __future__ import annotations

import structlog
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger(__name__)


class BodyTooLarge(HTTPException):
    """The request body passed the byte limit; answered 413 by the API's HTTPException handler."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, detail=f"request bodies are limited to {limit} bytes")
        self.limit = limit


class BodyLimit:
    """ASGI middleware: at most `max_bytes` of request body per request, counted as it streams in."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    log.warning("api.body_too_large", path=scope.get("path"), received=received,
                                limit=self.max_bytes)
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, counted, send)
