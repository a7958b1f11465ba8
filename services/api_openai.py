"""OpenAI-compatible serving: `GET /v1/models`, `POST /v1/completions`, `POST /v1/chat/completions` (with
`stream: true` as server-sent events ending in `data: [DONE]`), bearer tokens and team scoping as in the rest of
the API, errors in OpenAI's shape ({"error": {"message", "type", "param", "code"}}). The prompt cache is made of
blocks (workers/serving/): `usage.prompt_tokens_details.cached_tokens` counts the restored tokens, and a `kvgraft`
object says what was restored, what was prefilled, whether the composition is attested here and, when the cache
was off, why."""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from engine.sampling import SamplingParams
from services.api_common import ApiError, rt_of
from services.auth import Submitter
from services.validation import GuardedRoute
from workers.serving.completion import Completion, CompletionRequest, ContextLengthError
from workers.serving.service import Serving, ServingBusy

router = APIRouter(route_class=GuardedRoute)

MAX_PROMPT_CHARS = 400_000
MAX_COMPLETION_TOKENS = 2048


class KvgraftOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cache: bool = Field(default=True, description="Use (and feed) the prompt cache")


class _Sampling(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)  # unknown OpenAI fields are accepted, unused
    model: str
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_COMPLETION_TOKENS)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=MAX_COMPLETION_TOKENS)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stop: str | list[str] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    n: int = Field(default=1, ge=1, le=1)
    kvgraft: KvgraftOptions = Field(default_factory=KvgraftOptions)

    def sampling(self, default_max: int) -> SamplingParams:
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        if len(stops) > 4 or any(not s or len(s) > 200 for s in stops):
            raise _invalid("stop must be up to 4 non-empty strings of at most 200 characters", "stop")
        seed = self.seed if self.seed is not None else secrets.randbits(31)
        return SamplingParams(max_tokens=self.max_completion_tokens or self.max_tokens or default_max,
                              temperature=self.temperature, top_k=0, top_p=self.top_p, seed=seed,
                              stop=tuple(stops))


class CompletionIn(_Sampling):
    prompt: str | list[str] = Field(description="One prompt (a list must hold exactly one)")


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        parts = []
        for part in self.content:
            if part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise _invalid("only text content parts are supported", "messages")
            parts.append(part["text"])
        return "".join(parts)


class ChatIn(_Sampling):
    messages: list[ChatMessage] = Field(min_length=1, max_length=256)


def _invalid(message: str, param: str | None = None, code: str | None = None, status: int = 400) -> ApiError:
    return ApiError(status, code or "invalid_request_error", message, type="invalid_request_error", param=param)


def serving_of(request: Request) -> Serving:
    state = request.app.state
    if getattr(state, "serving", None) is None:
        with _serving_lock:
            if getattr(state, "serving", None) is None:
                state.serving = Serving(rt_of(request))
    return state.serving  # type: ignore[no-any-return]


_serving_lock = threading.Lock()


def _check_model(serving: Serving, model: str) -> None:
    names = {serving.model_name, serving.model_name.rsplit("/", 1)[-1]}
    if model not in names:
        raise _invalid(f"the model {model!r} does not exist here; this server serves {serving.model_name!r}",
                       "model", "model_not_found", 404)


def _usage(c: Completion) -> dict[str, Any]:
    return {"prompt_tokens": c.prompt_tokens, "completion_tokens": len(c.tokens),
            "total_tokens": c.prompt_tokens + len(c.tokens),
            "prompt_tokens_details": {"cached_tokens": c.cache.restored_tokens}}


def _extension(c: Completion) -> dict[str, Any]:
    return {**c.cache.as_dict(), "first_logits_sha256": c.first_logits_sha256, "timings_ms": c.timings_ms}


@router.get("/v1/models", tags=["openai"])
def list_models(request: Request, who: Submitter) -> dict[str, Any]:
    serving = serving_of(request)
    return {"object": "list", "data": [{"id": serving.model_name, "object": "model", "created": 0,
                                        "owned_by": "kvgraft"}]}


def _run(serving: Serving, body: _Sampling, req: CompletionRequest, kind: str) -> Any:
    created = int(time.time())
    rid = ("chatcmpl-" if kind == "chat" else "cmpl-") + secrets.token_hex(12)
    model = serving.model_name
    try:
        serving.reserve(req.team_id)
    except ServingBusy as exc:
        raise ApiError(429, "rate_limit_exceeded", str(exc), type="requests", param=None,
                       headers={"Retry-After": str(exc.retry_after_s)}) from None
    if not body.stream:
        try:
            c = serving.complete(req)
        except ContextLengthError as exc:
            raise _invalid(str(exc), "messages" if kind == "chat" else "prompt", "context_length_exceeded") from None
        finally:
            serving.release(req.team_id)
        choice = ({"index": 0, "message": {"role": "assistant", "content": c.text}, "finish_reason": c.finish_reason,
                   "logprobs": None} if kind == "chat" else
                  {"index": 0, "text": c.text, "finish_reason": c.finish_reason, "logprobs": None})
        return JSONResponse({"id": rid, "object": "chat.completion" if kind == "chat" else "text_completion",
                             "created": created, "model": model, "choices": [choice], "usage": _usage(c),
                             "kvgraft": _extension(c)})
    pieces: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        try:
            pieces.put(("done", serving.complete(req, on_text=lambda t: pieces.put(("text", t)))))
        except Exception as exc:  # noqa: BLE001 - reported in the stream, in OpenAI's error shape
            pieces.put(("error", exc))
        finally:
            serving.release(req.team_id)

    # started here, not when the response is first read: the admission is released even if it never is
    try:
        threading.Thread(target=work, name="kvgraft-serve-stream", daemon=True).start()
    except BaseException:
        serving.release(req.team_id)
        raise
    return StreamingResponse(_stream(serving, body, pieces, kind, rid, created), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _stream(serving: Serving, body: _Sampling, pieces: queue.Queue[tuple[str, Any]], kind: str, rid: str,
            created: int) -> Iterator[str]:
    """Server-sent events: each piece of text as it is generated, the finish reason, usage when asked
    (stream_options.include_usage), then [DONE]. The completion runs on its own thread (`_run` starts it);
    pieces cross a queue."""
    obj = "chat.completion.chunk" if kind == "chat" else "text_completion"

    def event(choice: dict[str, Any], **extra: Any) -> str:
        return "data: " + json.dumps({"id": rid, "object": obj, "created": created, "model": serving.model_name,
                                      "choices": [choice], **extra}) + "\n\n"

    if kind == "chat":
        yield event({"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None})
    while True:
        what, value = pieces.get()
        if what == "text":
            yield event({"index": 0, "delta": {"content": value}, "finish_reason": None} if kind == "chat" else
                        {"index": 0, "text": value, "finish_reason": None, "logprobs": None})
        elif what == "error":
            code = "context_length_exceeded" if isinstance(value, ContextLengthError) else "server_error"
            yield "data: " + json.dumps({"error": {"message": str(value), "type": "invalid_request_error"
                                                   if code != "server_error" else "server_error",
                                                   "param": None, "code": code}}) + "\n\n"
            break
        else:
            c: Completion = value
            last = ({"index": 0, "delta": {}, "finish_reason": c.finish_reason} if kind == "chat" else
                    {"index": 0, "text": "", "finish_reason": c.finish_reason, "logprobs": None})
            yield event(last, kvgraft=_extension(c))
            if (body.stream_options or {}).get("include_usage"):
                yield "data: " + json.dumps({"id": rid, "object": obj, "created": created,
                                             "model": serving.model_name, "choices": [], "usage": _usage(c)}) + "\n\n"
            break
    yield "data: [DONE]\n\n"


@router.post("/v1/completions", tags=["openai"])
def create_completion(body: CompletionIn, request: Request, who: Submitter) -> Any:
    serving = serving_of(request)
    _check_model(serving, body.model)
    prompts = [body.prompt] if isinstance(body.prompt, str) else body.prompt
    if len(prompts) != 1:
        raise _invalid("exactly one prompt per request is supported", "prompt")
    if not prompts[0] or len(prompts[0]) > MAX_PROMPT_CHARS or "\x00" in prompts[0]:
        raise _invalid(f"the prompt must be 1 to {MAX_PROMPT_CHARS} characters without NUL", "prompt")
    req = CompletionRequest(serving.tokens(prompts[0]), body.sampling(16), who.team_id, cache=body.kvgraft.cache)
    return _run(serving, body, req, "completion")


@router.post("/v1/chat/completions", tags=["openai"])
def create_chat_completion(body: ChatIn, request: Request, who: Submitter) -> Any:
    serving = serving_of(request)
    _check_model(serving, body.model)
    messages = [(m.role if m.role != "developer" else "system", m.text()) for m in body.messages]
    if sum(len(t) for _, t in messages) > MAX_PROMPT_CHARS or any("\x00" in t for _, t in messages):
        raise _invalid(f"the messages must hold at most {MAX_PROMPT_CHARS} characters, without NUL", "messages")
    prompt = serving.chat(messages)
    room = serving.rt.settings.window_tokens - len(prompt.tokens)  # OpenAI's default: as much as fits
    req = CompletionRequest(prompt.tokens, body.sampling(max(1, min(MAX_COMPLETION_TOKENS // 4, room))), who.team_id,
                            cache=body.kvgraft.cache, keep_boundaries=prompt.message_ends)
    return _run(serving, body, req, "chat")
