"""OpenAI-compatible serving: `GET /v1/models`, `POST /v1/completions`, `POST /v1/chat/completions` (with
`stream: true` as server-sent events ending in `data: [DONE]`), bearer tokens and team scoping as in the rest of
the API, errors in OpenAI's shape ({"error": {"message", "type", "param", "code"}}). The prompt cache is made of
blocks (workers/serving/): `usage.prompt_tokens_details.cached_tokens` counts the restored tokens, and a `kvgraft`
object says what was restored, what was prefilled, whether the composition is attested here and, when the cache
was off, why."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import threading
import time
import types
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from engine.sampling import MIN_TEMPERATURE, SamplingError, SamplingParams, TokenLogprob
from services.api_common import ApiError, rt_of
from services.auth import Submitter
from services.validation import GuardedRoute
from workers.serving.completion import Completion, CompletionCancelled, CompletionRequest, ContextLengthError
from workers.serving.service import Serving, ServingBusy, ServingUnavailable

router = APIRouter(route_class=GuardedRoute)

MAX_PROMPT_CHARS = 400_000
MAX_COMPLETION_TOKENS = 2048
MAX_SEED = 2**63 - 1

# OpenAI parameters this server does not implement: refused (400, naming the parameter) unless sent with their
# neutral value, never silently ignored.
UNSUPPORTED: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "tools": ("tool calls are not supported", lambda v: v in (None, [])),
    "tool_choice": ("tool calls are not supported", lambda v: v in (None, "none")),
    "parallel_tool_calls": ("tool calls are not supported", lambda v: v is None),
    "functions": ("function calls are not supported", lambda v: v in (None, [])),
    "function_call": ("function calls are not supported", lambda v: v in (None, "none")),
    "response_format": ("structured output (response_format) is not supported",
                        lambda v: v is None or v == {"type": "text"}),
    "logit_bias": ("logit_bias is not supported", lambda v: v in (None, {})),
    "presence_penalty": ("presence_penalty is not supported", lambda v: v in (None, 0)),
    "frequency_penalty": ("frequency_penalty is not supported", lambda v: v in (None, 0)),
    "best_of": ("best_of is not supported", lambda v: v in (None, 1)),
    "echo": ("echo is not supported", lambda v: v in (None, False)),
    "suffix": ("suffix is not supported", lambda v: v in (None, "")),
    "modalities": ("only text output is supported", lambda v: v in (None, ["text"])),
    "audio": ("audio output is not supported", lambda v: v is None),
    "prediction": ("predicted outputs are not supported", lambda v: v is None),
}
ACCEPTED = frozenset({"user", "metadata", "store", "service_tier"})  # request metadata, no effect on the output


# Every request model is strict: a JSON value of the wrong type is refused (400 naming the field), never coerced
# (`"max_tokens": "5"` or `true`, `"logprobs": "yes"` and `"kvgraft": {"cache": "yes"}` are errors; an integer is
# still a number where a float is asked for, as in JSON itself).
class KvgraftOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    cache: bool = Field(default=True, description="Use (and feed) the prompt cache")
    digests: bool = Field(default=False, description="Report the SHA-256 of every generated position's logits "
                          "(kvgraft.logits_sha256)")


class _Sampling(BaseModel):
    # other OpenAI fields are checked by `refuse_unsupported`: refused with 400 naming them, never ignored
    model_config = ConfigDict(extra="allow", allow_inf_nan=False, strict=True)
    model: str
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_COMPLETION_TOKENS)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=MAX_COMPLETION_TOKENS)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0,
                               description=f"0 (greedy), or from {MIN_TEMPERATURE} to 2")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    stop: str | list[str] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    n: int = Field(default=1, ge=1, description="Only 1 is supported")
    kvgraft: KvgraftOptions = Field(default_factory=KvgraftOptions)

    @field_validator("temperature")
    @classmethod
    def _sampleable(cls, value: float) -> float:
        if 0 < value < MIN_TEMPERATURE:  # logits / temperature would overflow: no distribution to sample
            raise ValueError(f"temperature must be 0 (greedy) or at least {MIN_TEMPERATURE}")
        return value

    def refuse_unsupported(self) -> None:
        """400 naming the first parameter this server does not implement (or does not know)."""
        if self.n != 1:
            raise _invalid("n > 1 is not supported: one choice per request", "n", "unsupported_parameter")
        for name, value in (self.model_extra or {}).items():
            if name in ACCEPTED:
                continue
            if name in UNSUPPORTED:
                why, neutral = UNSUPPORTED[name]
                if not neutral(value):
                    raise _invalid(f"{name}: {why} by this server", name, "unsupported_parameter")
                continue
            raise _invalid(f"unrecognized request argument supplied: {name}", name, "unknown_parameter")

    def stops(self) -> tuple[str, ...]:
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        if len(stops) > 4 or any(not s or len(s) > 200 for s in stops):
            raise _invalid("stop must be up to 4 non-empty strings of at most 200 characters", "stop")
        return tuple(stops)

    def sampling(self, default_max: int) -> SamplingParams:
        stops = self.stops()
        seed = self.seed if self.seed is not None else secrets.randbits(31)
        return SamplingParams(max_tokens=self.max_completion_tokens or self.max_tokens or default_max,
                              temperature=self.temperature, top_k=0, top_p=self.top_p, seed=seed,
                              stop=stops)


class CompletionIn(_Sampling):
    prompt: str | list[str] = Field(description="One prompt (a list must hold exactly one)")
    logprobs: int | None = Field(default=None, ge=0, le=5, description="Log-probabilities of each generated "
                                 "token and of this many most likely alternatives")


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
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
    logprobs: bool = Field(default=False, description="Log-probabilities of each generated token")
    top_logprobs: int | None = Field(default=None, ge=0, le=20, description="With logprobs: this many most likely "
                                     "alternatives per token")

    def logprobs_top(self) -> int | None:
        if self.top_logprobs is not None and not self.logprobs:
            raise _invalid("top_logprobs needs logprobs: true", "top_logprobs")
        return (self.top_logprobs or 0) if self.logprobs else None


BODY_MODELS: dict[str, type[BaseModel]] = {"/v1/completions": CompletionIn, "/v1/chat/completions": ChatIn}


def _members(annotation: Any) -> list[Any]:
    """The types a field's annotation admits, None left out (`str | list[str] | None`: str and list[str])."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [] if annotation is None else [annotation]


def param_of(path: str, loc: Sequence[Any]) -> str | None:
    """OpenAI's `param` for a schema violation at `loc` in the body of the route at `path`: the field's path
    (`max_tokens`, `kvgraft.cache`, `messages[0].content`), without the union-member tags pydantic puts in a location
    (`stop.str`); None when the body as a whole is at fault (not JSON, not an object)."""
    if len(loc) < 2 or loc[0] != "body" or path not in BODY_MODELS:
        return None
    name, current = "", [BODY_MODELS[path]]
    for part in loc[1:]:
        if isinstance(part, int):
            lists = [m for m in current if typing.get_origin(m) is list]
            name += f"[{part}]"
            current = _members(typing.get_args(lists[0])[0]) if lists and typing.get_args(lists[0]) else []
            continue
        part = str(part)
        models = [m for m in current if isinstance(m, type) and issubclass(m, BaseModel)]
        owner = next((m for m in models if part in m.model_fields), None)
        if owner is not None:
            name, current = f"{name}.{part}" if name else part, _members(owner.model_fields[part].annotation)
        elif len(current) > 1:  # a union member's tag: narrow to the members it names
            current = [m for m in current if part.split("[", 1)[0] in (getattr(m, "__name__", ""),
                                                                        getattr(typing.get_origin(m), "__name__", ""))]
        else:  # a key no model declares (an unknown field of a strict object, a dict's key)
            name, current = f"{name}.{part}" if name else part, []
    return name or None


def _refusal(serving: Serving, exc: Exception, param: str) -> ApiError | None:
    """The OpenAI-shaped error for what serving refused (None: not a refusal, an internal error)."""
    if isinstance(exc, ContextLengthError):
        return _invalid(str(exc), param, "context_length_exceeded")
    if isinstance(exc, SamplingError):
        return _invalid(str(exc))
    if isinstance(exc, (CompletionCancelled, ServingUnavailable)):
        return ApiError(503, "server_unavailable", f"{exc}; retry", type="server_error", param=None,
                        headers={"Retry-After": str(serving.rt.settings.busy_retry_after_s)})
    return None


def _invalid(message: str, param: str | None = None, code: str | None = None, status: int = 400) -> ApiError:
    return ApiError(status, code or "invalid_request_error", message, type="invalid_request_error", param=param)


def serving_of(request: Request) -> Serving:
    state = request.app.state
    if getattr(state, "serving", None) is None:
        with _serving_lock:
            if getattr(state, "serving", None) is None:
                state.serving = Serving(rt_of(request))
                state.serving.start_checks()
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
    extra = {"logits_sha256": list(c.logits_sha256)} if c.logits_sha256 else {}
    return {**c.cache.as_dict(), "first_logits_sha256": c.first_logits_sha256, "timings_ms": c.timings_ms,
            "batching": c.batching, **extra}


@router.get("/v1/models", tags=["openai"])
def list_models(request: Request, who: Submitter) -> dict[str, Any]:
    serving = serving_of(request)
    return {"object": "list", "data": [{"id": serving.model_name, "object": "model", "created": 0,
                                        "owned_by": "kvgraft"}]}


def _logprobs(serving: Serving, lps: tuple[TokenLogprob, ...], kind: str, offset: int = 0) -> dict[str, Any] | None:
    """OpenAI's logprobs object for these tokens: chat's `content` list, or the legacy completions shape."""
    model = serving.engine().model

    def piece(token: int) -> tuple[str, bytes]:
        raw = model.piece_bytes([token])
        return raw.decode("utf-8", errors="replace"), raw

    if kind == "chat":
        def entry(token: int, logprob: float) -> dict[str, Any]:
            text, raw = piece(token)
            return {"token": text, "logprob": logprob, "bytes": list(raw)}

        return {"content": [entry(lp.token, lp.logprob) | {"top_logprobs": [entry(t, v) for t, v in lp.top]}
                            for lp in lps], "refusal": None}
    texts = [piece(lp.token)[0] for lp in lps]
    offsets = []
    for text in texts:
        offsets.append(offset)
        offset += len(text)
    return {"tokens": texts, "token_logprobs": [lp.logprob for lp in lps],
            "top_logprobs": [{piece(t)[0]: v for t, v in lp.top} for lp in lps], "text_offset": offsets}


def _reserve(serving: Serving, team_id: int) -> None:
    """Admit the request before anything is computed for it (its prompt is not even tokenized), or 429."""
    try:
        serving.reserve(team_id)
    except ServingBusy as exc:
        raise ApiError(429, "rate_limit_exceeded", str(exc), type="requests", param=None,
                       headers={"Retry-After": str(exc.retry_after_s)}) from None


async def _run(serving: Serving, body: _Sampling, build: Callable[[], CompletionRequest], kind: str,
               request: Request, team_id: int) -> Any:
    """Tokenize (`build`) and serve an admitted request (released when it ends, streamed or not)."""
    created = int(time.time())
    rid = ("chatcmpl-" if kind == "chat" else "cmpl-") + secrets.token_hex(12)
    model = serving.model_name
    digests = body.kvgraft.digests
    param = "messages" if kind == "chat" else "prompt"
    if not body.stream:
        cancel = threading.Event()  # the client went away: the sequence stops before its next step, like a stream
        try:
            req = await run_in_threadpool(build)
            c = await _unless_disconnected(run_in_threadpool(serving.complete, req, None, cancel, digests), request,
                                           cancel)
        except Exception as exc:
            refusal = _refusal(serving, exc, param)
            if refusal is None:
                raise
            raise refusal from None
        finally:
            serving.release(team_id)
        lps = _logprobs(serving, c.logprobs, kind) if req.logprobs is not None else None
        choice = ({"index": 0, "message": {"role": "assistant", "content": c.text}, "finish_reason": c.finish_reason,
                   "logprobs": lps} if kind == "chat" else
                  {"index": 0, "text": c.text, "finish_reason": c.finish_reason, "logprobs": lps})
        return JSONResponse({"id": rid, "object": "chat.completion" if kind == "chat" else "text_completion",
                             "created": created, "model": model, "choices": [choice], "usage": _usage(c),
                             "kvgraft": _extension(c)})
    loop = asyncio.get_running_loop()
    pieces: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    cancel = threading.Event()

    def put(item: tuple[str, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the event loop is gone: so is the client
            loop.call_soon_threadsafe(pieces.put_nowait, item)

    try:  # planned before the response starts: bad input is a 400, not an event in a 200 stream
        req = await run_in_threadpool(build)
        started = await run_in_threadpool(serving.start, req, lambda t, lps: put(("text", (t, lps))), cancel,
                                          digests)
    except BaseException as exc:
        serving.release(team_id)
        refusal = _refusal(serving, exc, param) if isinstance(exc, Exception) else None
        if refusal is None:
            raise
        raise refusal from None

    def work() -> None:
        try:
            put(("done", serving.wait(started)))
        except Exception as exc:  # noqa: BLE001 - reported in the stream, in OpenAI's error shape
            put(("error", exc))
        finally:
            serving.release(team_id)

    # started here, not when the response is first read: the admission is released even if it never is
    try:
        threading.Thread(target=work, name="kvgraft-serve-stream", daemon=True).start()
    except BaseException:
        serving.release(team_id)
        raise
    return StreamingResponse(_stream(serving, body, req, pieces, cancel, request, kind, rid, created),
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


DISCONNECT_POLL_S = 0.05


async def _unless_disconnected(work: Awaitable[Completion], request: Request, cancel: threading.Event) -> Completion:
    """Await a non-streamed completion while listening on the request's channel: once its client has gone (or the
    request's task is cancelled) `cancel` is set, and the sequence stops before its next step and frees its slot."""

    async def listen() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        cancel.set()

    listener = asyncio.ensure_future(listen())
    try:
        return await work
    finally:
        listener.cancel()
        cancel.set()  # a no-op once it has ended


async def _stream(serving: Serving, body: _Sampling, req: CompletionRequest, pieces: asyncio.Queue[tuple[str, Any]],
                  cancel: threading.Event, request: Request, kind: str, rid: str, created: int) -> AsyncIterator[str]:
    """Server-sent events: each piece of text as it is generated (with its tokens' logprobs when asked), the finish
    reason, usage when asked (stream_options.include_usage), then [DONE]. The completion runs on the scheduler
    (`_run` starts it); pieces cross a queue. A client that goes away (found between pieces, and every
    DISCONNECT_POLL_S while none comes) sets `cancel`: the sequence stops before its next step and frees its
    slot."""
    obj = "chat.completion.chunk" if kind == "chat" else "text_completion"
    offset = 0

    def event(choice: dict[str, Any], **extra: Any) -> str:
        return "data: " + json.dumps({"id": rid, "object": obj, "created": created, "model": serving.model_name,
                                      "choices": [choice], **extra}) + "\n\n"

    try:
        if kind == "chat":
            yield event({"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None})
        while True:
            try:
                what, value = await asyncio.wait_for(pieces.get(), DISCONNECT_POLL_S)
            except TimeoutError:
                if await request.is_disconnected():
                    return
                continue
            if what == "text":
                text, lps = value
                logprobs = _logprobs(serving, lps, kind, offset) if req.logprobs is not None else None
                offset += len(text)
                yield event({"index": 0, "delta": {"content": text}, "logprobs": logprobs, "finish_reason": None}
                            if kind == "chat" else
                            {"index": 0, "text": text, "finish_reason": None, "logprobs": logprobs})
                if await request.is_disconnected():
                    return
            elif what == "error":
                code = ("context_length_exceeded" if isinstance(value, ContextLengthError) else
                        "invalid_request_error" if isinstance(value, SamplingError) else "server_error")
                kind_of = "server_error" if code == "server_error" else "invalid_request_error"
                yield "data: " + json.dumps({"error": {"message": str(value), "type": kind_of, "param": None,
                                                       "code": code}}) + "\n\n"
                break
            else:
                c: Completion = value
                last = ({"index": 0, "delta": {}, "finish_reason": c.finish_reason} if kind == "chat" else
                        {"index": 0, "text": "", "finish_reason": c.finish_reason, "logprobs": None})
                yield event(last, kvgraft=_extension(c))
                if (body.stream_options or {}).get("include_usage"):
                    yield "data: " + json.dumps({"id": rid, "object": obj, "created": created,
                                                 "model": serving.model_name, "choices": [],
                                                 "usage": _usage(c)}) + "\n\n"
                break
        yield "data: [DONE]\n\n"
    finally:
        cancel.set()  # a client gone (or the response closed): stop computing; a no-op once it has ended


@router.post("/v1/completions", tags=["openai"])
async def create_completion(body: CompletionIn, request: Request, who: Submitter) -> Any:
    body.refuse_unsupported()
    serving = serving_of(request)
    _check_model(serving, body.model)
    prompts = [body.prompt] if isinstance(body.prompt, str) else body.prompt
    if len(prompts) != 1:
        raise _invalid("exactly one prompt per request is supported", "prompt")
    if not prompts[0] or len(prompts[0]) > MAX_PROMPT_CHARS or "\x00" in prompts[0]:
        raise _invalid(f"the prompt must be 1 to {MAX_PROMPT_CHARS} characters without NUL", "prompt")
    sampling = body.sampling(16)
    _reserve(serving, who.team_id)

    def build() -> CompletionRequest:
        return CompletionRequest(serving.tokens(prompts[0]), sampling, who.team_id, cache=body.kvgraft.cache,
                                 logprobs=body.logprobs)

    return await _run(serving, body, build, "completion", request, who.team_id)


@router.post("/v1/chat/completions", tags=["openai"])
async def create_chat_completion(body: ChatIn, request: Request, who: Submitter) -> Any:
    body.refuse_unsupported()
    top = body.logprobs_top()
    serving = serving_of(request)
    _check_model(serving, body.model)
    messages = [(m.role if m.role != "developer" else "system", m.text()) for m in body.messages]
    if sum(len(t) for _, t in messages) > MAX_PROMPT_CHARS or any("\x00" in t for _, t in messages):
        raise _invalid(f"the messages must hold at most {MAX_PROMPT_CHARS} characters, without NUL", "messages")
    body.stops()  # checked before the prompt is tokenized
    _reserve(serving, who.team_id)

    def build() -> CompletionRequest:
        prompt = serving.chat(messages)
        room = serving.rt.settings.window_tokens - len(prompt.tokens)  # OpenAI's default: as much as fits
        return CompletionRequest(prompt.tokens, body.sampling(max(1, min(MAX_COMPLETION_TOKENS // 4, room))),
                                 who.team_id, cache=body.kvgraft.cache, keep_boundaries=prompt.message_ends,
                                 logprobs=top)

    return await _run(serving, body, build, "chat", request, who.team_id)
