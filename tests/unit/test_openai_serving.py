"""The OpenAI-compatible endpoints on the embedded default (tiny model, SQLite, local blocks), through the HTTP
app: shapes, streaming, errors in OpenAI's shape, and the prompt cache made of blocks: a repeated prompt restores
its stored prefix and is byte-identical to computing it fresh (greedy tokens equal, logits SHA-256-equal at the
first generated position, with a fresh-vs-fresh control), prefixes are never found by another team, the same
prefix from two teams is one block, and a configuration the composition check refuses is served uncached and
says why."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from engine.logits import Divergence
from engine.sampling import SamplingParams
from services.api import create_app
from store.db import AttestationRow, BlockOwnerRow, BlockRow, PrefixRow
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.ready import wait_ready
from workers.runtime import open_runtime
from workers.serving.exactness import COMPOSITION, ChainResult, CompositionCheck, CompositionVerdict, SplitResult
from workers.settings import Settings

pytestmark = pytest.mark.unit

DOC = ("Section 4. The pump room holds three pumps; pump A runs on Mondays, pump B on Tuesdays and pump C when the "
       "level passes the red line. Valves are turned clockwise to close. ") * 6


def _serve(monkeypatch: pytest.MonkeyPatch, **env: str) -> Iterator[dict[str, Any]]:
    monkeypatch.setenv("KVGRAFT_PROMPT_CHUNK_TOKENS", "16")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    rt = open_runtime(settings)
    with rt.session() as s:
        tokens = {name: create_api_token(s, team=get_or_create_team(s, name=name), role="submitter")[1]
                  for name in ("team-a", "team-b")}
    rt.close()
    with TestClient(create_app(settings)) as client:
        wait_ready(client)  # traffic after the checks, as a load balancer sends it (the checks: test_serving_checks)
        yield {"client": client, "h": {n: {"Authorization": f"Bearer {t}"} for n, t in tokens.items()},
               "app": client.app}


@pytest.fixture()
def api(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    yield from _serve(monkeypatch)


@pytest.fixture()
def limited(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    yield from _serve(monkeypatch, KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT="1", KVGRAFT_SERVING_QUEUE_MAX="2")


def _wait_deposits(api: dict[str, Any]) -> None:
    api["app"].state.serving.depositor.wait()


def _complete(api: dict[str, Any], team: str = "team-a", **body: Any) -> dict[str, Any]:
    r = api["client"].post("/v1/completions", json={"model": "tiny", "prompt": DOC + " Which pump runs on Tuesdays?",
                                                    "max_tokens": 8, "temperature": 0, **body},
                           headers=api["h"][team])
    assert r.status_code == 200, r.text
    return r.json()


def test_models_and_auth(api: dict[str, Any]) -> None:
    c = api["client"]
    assert c.get("/v1/models").status_code == 401
    models = c.get("/v1/models", headers=api["h"]["team-a"]).json()
    assert models["object"] == "list" and models["data"][0]["id"] == "tiny"


def test_a_restored_prefix_is_byte_identical_to_fresh_computation(api: dict[str, Any]) -> None:
    fresh1 = _complete(api, kvgraft={"cache": False})
    fresh2 = _complete(api, kvgraft={"cache": False})
    assert fresh1["kvgraft"]["cache"] == "off" and fresh1["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    assert fresh1["kvgraft"]["first_logits_sha256"] == fresh2["kvgraft"]["first_logits_sha256"]  # the control
    first = _complete(api)
    assert first["kvgraft"]["cache"] == "miss" and first["kvgraft"]["deposits_scheduled"] >= 1
    _wait_deposits(api)
    again = _complete(api)
    k = again["kvgraft"]
    assert k["cache"] == "hit" and k["restored_tokens"] > 0 and k["restored_tokens"] % 16 == 0
    assert again["usage"]["prompt_tokens_details"]["cached_tokens"] == k["restored_tokens"]
    assert k["restored_tokens"] + k["prefilled_tokens"] == again["usage"]["prompt_tokens"]
    assert k["restored"][0]["attested"] is True
    assert k["first_logits_sha256"] == fresh1["kvgraft"]["first_logits_sha256"]
    assert again["choices"][0]["text"] == fresh1["choices"][0]["text"] == first["choices"][0]["text"]
    assert again["usage"]["completion_tokens"] == fresh1["usage"]["completion_tokens"]


def _prefix_blocks(api: dict[str, Any], team: str) -> set[str]:
    listed = api["client"].get("/v1/blocks?kind=prefix", headers=api["h"][team]).json()
    return {b["id"] for b in listed["items"]}


def test_prefixes_are_private_to_a_team_and_deduplicated_across_teams(api: dict[str, Any]) -> None:
    _complete(api, team="team-a")
    _wait_deposits(api)
    assert _complete(api, team="team-a")["kvgraft"]["cache"] == "hit"
    _complete(api, team="team-a", prompt="Only team A ever sends this prompt about the red line. " * 4)
    _wait_deposits(api)
    rt = api["app"].state.runtime
    with rt.session() as s:
        a_blocks = set(s.scalars(sa.select(BlockRow.id).where(BlockRow.kind == "prefix")))
    assert a_blocks and _prefix_blocks(api, "team-a") == a_blocks
    assert _prefix_blocks(api, "team-b") == set()  # before B sends anything: none of A's prefixes is listed
    other = _complete(api, team="team-b")
    assert other["kvgraft"]["cache"] == "miss" and other["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    _wait_deposits(api)
    assert _complete(api, team="team-b")["kvgraft"]["cache"] == "hit"
    with rt.session() as s:
        prefixes = s.scalars(sa.select(PrefixRow)).all()
        blocks = s.scalars(sa.select(BlockRow).where(BlockRow.kind == "prefix")).all()
        owners = s.scalars(sa.select(BlockOwnerRow).where(BlockOwnerRow.block_id.in_([b.id for b in blocks]))).all()
        b_owned = {o.block_id for o in owners if o.owner_key == "2"}
    assert len(prefixes) == len(blocks) == len(a_blocks) and {o.owner_key for o in owners} == {"1", "2"}
    assert all("owner" not in b.meta and "team" not in json.dumps(b.meta) for b in blocks)
    # B lists exactly the prefixes it deposited itself: the shared ones, never the one only A sent
    assert b_owned and _prefix_blocks(api, "team-b") == b_owned != a_blocks


def test_every_restore_of_a_prefix_records_its_use_for_the_team(api: dict[str, Any]) -> None:
    """Retention's recency: a hit counts as a use of the block and of the team's own ownership of it, so the
    most used prefixes are the last evicted, and one team's uses never keep another team's ownership alive."""
    _complete(api, team="team-a")
    _complete(api, team="team-b")
    _wait_deposits(api)
    hit = _complete(api, team="team-b")
    _wait_deposits(api)
    block_id = hit["kvgraft"]["restored"][0]["block_id"]
    rt = api["app"].state.runtime
    with rt.session() as s:
        row = s.get(BlockRow, block_id)
        owners = {o.owner_key: o for o in s.scalars(sa.select(BlockOwnerRow).where(BlockOwnerRow.block_id == block_id))}
    assert row is not None and row.grafts == 1 and row.last_used_at is not None
    assert owners["2"].grafts == 1 and owners["2"].last_used_at is not None
    assert owners["1"].grafts == 0 and owners["1"].last_used_at is None


def test_with_the_object_store_unreachable_a_request_is_served_uncached(api: dict[str, Any],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A request that has a stored prefix, while the object store cannot be reached: served (not a 500), fresh,
    with the reason in the `kvgraft` object; nothing captured for it."""
    from store.errors import ObjectStoreUnavailableError

    fresh = _complete(api, kvgraft={"cache": False})
    _complete(api)
    _wait_deposits(api)
    rt = api["app"].state.runtime

    def unreachable(*_: Any, **__: Any) -> Any:
        raise ObjectStoreUnavailableError("s3://bucket: connection refused")

    monkeypatch.setattr(rt.blocks, "get", unreachable)
    served = _complete(api)
    k = served["kvgraft"]
    assert k["cache"] == "off" and k["reason"].startswith("store_unavailable") and k["restored_tokens"] == 0
    assert k["deposits_scheduled"] == 0 and k["first_logits_sha256"] == fresh["kvgraft"]["first_logits_sha256"]
    assert served["choices"][0]["text"] == fresh["choices"][0]["text"]


def test_chat_streams_what_it_answers(api: dict[str, Any]) -> None:
    messages = [{"role": "system", "content": DOC}, {"role": "user", "content": "Which pump runs on Mondays?"}]
    body = {"model": "tiny", "messages": messages, "max_tokens": 10, "temperature": 0}
    plain = api["client"].post("/v1/chat/completions", json=body, headers=api["h"]["team-a"]).json()
    assert plain["object"] == "chat.completion" and plain["choices"][0]["message"]["role"] == "assistant"
    with api["client"].stream("POST", "/v1/chat/completions", headers=api["h"]["team-a"],
                              json={**body, "stream": True, "stream_options": {"include_usage": True}}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(ch["choices"][0]["delta"].get("content", "") for ch in chunks if ch["choices"])
    assert text == plain["choices"][0]["message"]["content"]
    assert chunks[-1]["usage"]["completion_tokens"] == plain["usage"]["completion_tokens"]
    assert any(ch["choices"] and ch["choices"][0]["finish_reason"] for ch in chunks)


def _openai_error(r: Any, status: int, code: str, param: str | None) -> dict[str, Any]:
    """The response is an error in OpenAI's shape with this status, code and param."""
    assert r.status_code == status, (r.status_code, r.text)
    error = r.json()["error"]
    assert set(error) >= {"message", "type", "param", "code"} and error["message"], error
    assert (error["code"], error["param"]) == (code, param), error
    assert error["type"] == ("requests" if status == 429 else "server_error" if status >= 500
                             else "invalid_request_error"), error
    return error  # type: ignore[no-any-return]


def test_errors_are_in_openais_shape(api: dict[str, Any]) -> None:
    """Every error on the OpenAI routes carries message, type, param and code, whatever raised it: the model check,
    the context length, a schema violation (400 naming the field, as OpenAI does, not 422), a missing or wrong key
    (401), and a parameter this server does not implement (400 naming it, never silently ignored)."""
    c, h = api["client"], api["h"]["team-a"]
    _openai_error(c.post("/v1/completions", json={"model": "gpt-4", "prompt": "hi"}, headers=h),
                  404, "model_not_found", "model")
    _openai_error(c.post("/v1/completions", json={"model": "tiny", "prompt": "word " * 5000, "max_tokens": 2048},
                         headers=h), 400, "context_length_exceeded", "prompt")
    _openai_error(c.post("/v1/completions", json={"model": "tiny", "prompt": "hi", "n": 2}, headers=h),
                  400, "unsupported_parameter", "n")
    _openai_error(c.post("/v1/completions", json={"model": "tiny", "prompt": ["a", "b"]}, headers=h),
                  400, "invalid_request_error", "prompt")
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
    error = _openai_error(c.post("/v1/chat/completions", json={"model": "tiny", "messages": image}, headers=h),
                          400, "invalid_request_error", "messages")
    assert "text" in error["message"]
    _openai_error(c.post("/v1/chat/completions", json={"model": "tiny", "messages": []}, headers=h),
                  400, "invalid_value", "messages")
    _openai_error(c.post("/v1/completions", json={"model": "tiny", "prompt": "hi", "max_tokens": "many"},
                         headers=h), 400, "invalid_value", "max_tokens")
    for path in ("/v1/models", "/v1/completions", "/v1/chat/completions"):
        method = c.get if path == "/v1/models" else c.post
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            kwargs: dict[str, Any] = {"headers": headers} if path == "/v1/models" else {
                "headers": headers, "json": {"model": "tiny", "prompt": "hi"}}
            _openai_error(method(path, **kwargs), 401, "invalid_api_key", None)


@pytest.mark.parametrize(("path", "field", "value", "param"), [
    ("/v1/completions", "max_tokens", "5", "max_tokens"), ("/v1/completions", "max_tokens", True, "max_tokens"),
    ("/v1/completions", "logprobs", "2", "logprobs"), ("/v1/completions", "seed", 7.0, "seed"),
    ("/v1/chat/completions", "logprobs", "yes", "logprobs"), ("/v1/chat/completions", "stream", "true", "stream"),
    ("/v1/chat/completions", "kvgraft", {"cache": "yes"}, "kvgraft.cache"),
    ("/v1/chat/completions", "kvgraft", {"digests": 1}, "kvgraft.digests"),
    ("/v1/chat/completions", "temperature", "0.5", "temperature"), ("/v1/chat/completions", "stop", 5, "stop"),
    ("/v1/chat/completions", "messages", [{"role": "user", "content": 5}], "messages[0].content"),
    ("/v1/completions", "prompt", ["hi", 5], "prompt"),
])
def test_types_are_strict_and_param_names_the_field(api: dict[str, Any], path: str, field: str, value: Any,
                                                    param: str) -> None:
    """No coercion on the OpenAI routes: a string or a boolean where a number or a boolean is asked for is a 400
    naming the field (its path, without pydantic's union tags); an integer is still a number where a float is."""
    c, h = api["client"], api["h"]["team-a"]
    base: dict[str, Any] = ({"model": "tiny", "prompt": "hi"} if path == "/v1/completions" else
                            {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]})
    error = _openai_error(c.post(path, json={**base, "max_tokens": 1, field: value}, headers=h), 400,
                          "invalid_value", param)
    assert error["message"].startswith(f"invalid value for {param}:")
    assert c.post(path, json={**base, "max_tokens": 1, "temperature": 0, "top_p": 1}, headers=h).status_code == 200


def test_a_body_that_is_not_json_blames_no_parameter(api: dict[str, Any]) -> None:
    """A JSON decode error names no parameter (param null), not the character offset where decoding stopped."""
    c, h = api["client"], api["h"]["team-a"]
    for body in (b'{"model": "tiny", "prompt": "hi",}', b'{"model": "tiny", "prompt": NaN}', b'{"model"'):
        r = c.post("/v1/completions", content=body, headers={**h, "Content-Type": "application/json"})
        error = _openai_error(r, 400, "invalid_json", None)
        assert error["message"].startswith("the body is not valid JSON")
    _openai_error(c.post("/v1/completions", json=["not", "an", "object"], headers=h), 400, "invalid_value", None)


@pytest.mark.parametrize(("field", "value"), [
    ("tools", [{"type": "function", "function": {"name": "f", "parameters": {}}}]),
    ("tool_choice", "auto"), ("response_format", {"type": "json_object"}), ("logit_bias", {"50": 5}),
    ("presence_penalty", 0.5), ("frequency_penalty", 1.0), ("functions", [{"name": "f"}]),
    ("made_up_option", 1),
])
def test_parameters_this_server_does_not_implement_are_refused_naming_them(api: dict[str, Any], field: str,
                                                                           value: Any) -> None:
    """Not silently ignored with a 200: a 400 naming the parameter, nothing computed; the neutral value passes."""
    c, h = api["client"], api["h"]["team-a"]
    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, field: value}
    error = _openai_error(c.post("/v1/chat/completions", json=body, headers=h), 400,
                          "unknown_parameter" if field == "made_up_option" else "unsupported_parameter", field)
    assert field in error["message"]
    neutral = {"tools": [], "tool_choice": "none", "response_format": {"type": "text"}, "logit_bias": {},
               "presence_penalty": 0, "frequency_penalty": 0, "functions": []}
    if field in neutral:
        assert c.post("/v1/chat/completions", json={**body, field: neutral[field]}, headers=h).status_code == 200


@pytest.mark.parametrize(("field", "value"), [
    ("seed", -1), ("temperature", 1e-310), ("temperature", 1e-7), ("temperature", -0.5), ("temperature", 2.5),
    ("top_p", 0), ("seed", 2**64), ("max_tokens", 0), ("top_logprobs", 21), ("logprobs", "maybe"),
])
def test_hostile_sampling_values_are_refused_before_any_computation(api: dict[str, Any], field: str,
                                                                    value: Any) -> None:
    """Values that used to fail inside generation, after the prefill (HTTP 500, the resident context closed), are
    refused with 400 naming them before the prompt is computed; the resident prompt another request left in its
    slot is still there afterwards."""
    c, h = api["client"], api["h"]["team-a"]
    _chat(api, "Which pump runs on Mondays?")  # leaves the resident prompt
    serving = api["app"].state.serving
    resident = list(serving.scheduler.core.held)
    assert any(held is not None for held in resident)
    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, field: value}
    _openai_error(c.post("/v1/chat/completions", json=body, headers=h), 400, "invalid_value", field)
    stream = c.post("/v1/chat/completions", json={**body, "stream": True}, headers=h)
    _openai_error(stream, 400, "invalid_value", field)
    assert serving.scheduler.core.held == resident


@pytest.mark.parametrize("params", [SamplingParams(seed=-1, temperature=0.7), SamplingParams(temperature=1e-310),
                                    SamplingParams(temperature=float("nan")), SamplingParams(top_p=0.0)])
def test_the_engine_refuses_unsampleable_values_before_computing(api: dict[str, Any], params: Any) -> None:
    """Behind the API's validation, the serving engine itself refuses what cannot be sampled before it touches
    the context: nothing is prefilled, and the resident prompt another request left is still there."""
    from engine.sampling import SamplingError
    from workers.serving.completion import CompletionRequest

    _chat(api, "Which pump runs on Mondays?")
    serving = api["app"].state.serving
    ctx, resident = serving.scheduler.core.ctx, list(serving.scheduler.core.held)
    decoded: list[int] = []
    original = ctx.decode_rows
    ctx.decode_rows = lambda *a, **k: (decoded.append(1), original(*a, **k))[1]
    try:
        with pytest.raises(SamplingError):
            serving.complete(CompletionRequest(serving.tokens("Which pump?"), params, team_id=1))
    finally:
        ctx.decode_rows = original
    assert decoded == [] and serving.scheduler.core.held == resident


def test_logprobs_are_exact_and_reported_per_token(api: dict[str, Any]) -> None:
    """`logprobs`/`top_logprobs` (chat) and `logprobs` (completions): one entry per generated token, the chosen
    token's log-probability equal to the top alternative's where greedy picked it, the alternatives sorted, the
    same values served from the prompt cache as computed fresh, and streamed the same as returned."""
    c, h = api["client"], api["h"]["team-a"]
    body = {"model": "tiny", "messages": [{"role": "system", "content": DOC}, {"role": "user", "content":
            "Which pump runs on Mondays?"}], "max_tokens": 6, "temperature": 0, "logprobs": True, "top_logprobs": 3}
    fresh = c.post("/v1/chat/completions", json={**body, "kvgraft": {"cache": False}}, headers=h).json()
    content = fresh["choices"][0]["logprobs"]["content"]
    assert len(content) == fresh["usage"]["completion_tokens"] > 0
    for entry in content:
        tops = entry["top_logprobs"]
        assert len(tops) == 3 and [t["logprob"] for t in tops] == sorted((t["logprob"] for t in tops), reverse=True)
        assert entry["logprob"] == tops[0]["logprob"] <= 0.0 and entry["token"] == tops[0]["token"]  # greedy
        assert bytes(entry["bytes"]).decode("utf-8", "replace") == entry["token"]
    assert "".join(e["token"] for e in content).startswith(fresh["choices"][0]["message"]["content"])
    c.post("/v1/chat/completions", json=body, headers=h)
    _wait_deposits(api)
    cached = c.post("/v1/chat/completions", json=body, headers=h).json()
    assert cached["kvgraft"]["cache"] == "hit" and cached["choices"][0]["logprobs"] == fresh["choices"][0]["logprobs"]
    with c.stream("POST", "/v1/chat/completions", headers=h, json={**body, "stream": True}) as r:
        chunks = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: {")]
    streamed = [e for ch in chunks if ch["choices"] and ch["choices"][0].get("logprobs")
                for e in ch["choices"][0]["logprobs"]["content"]]
    assert streamed == content
    plain = c.post("/v1/completions", json={"model": "tiny", "prompt": "The pump room", "max_tokens": 4,
                                            "temperature": 0, "logprobs": 2}, headers=h).json()
    legacy = plain["choices"][0]["logprobs"]
    assert len(legacy["tokens"]) == len(legacy["token_logprobs"]) == len(legacy["top_logprobs"]) == \
        plain["usage"]["completion_tokens"]
    assert all(len(t) <= 2 for t in legacy["top_logprobs"]) and legacy["text_offset"][0] == 0
    no_logprobs = c.post("/v1/completions", json={"model": "tiny", "prompt": "The pump room", "max_tokens": 4},
                         headers=h).json()
    assert no_logprobs["choices"][0]["logprobs"] is None


def _chat(api: dict[str, Any], question: str, team: str = "team-a", **extra: Any) -> dict[str, Any]:
    messages = [{"role": "system", "content": DOC}, {"role": "user", "content": question}]
    r = api["client"].post("/v1/chat/completions", headers=api["h"][team],
                           json={"model": "tiny", "messages": messages, "max_tokens": 8, "temperature": 0, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_prefix_ends_where_the_system_message_ends_and_stays_exact(api: dict[str, Any]) -> None:
    """Another question after the same system message restores the prefix up to the message's end (rounded to the
    boundary granule the composition check measured), not just to the chunk boundary before it, and is byte-equal
    to computing that request fresh."""
    seed_question, question = "Which pump runs on Mondays?", "Which way are the valves turned to close?"
    seed_fresh = _chat(api, seed_question, kvgraft={"cache": False})
    seed = _chat(api, seed_question)  # a miss that captures its prefixes: it composes too, and must equal fresh
    assert seed["kvgraft"]["cache"] == "miss" and seed["kvgraft"]["deposits_scheduled"] >= 2
    assert seed["kvgraft"]["first_logits_sha256"] == seed_fresh["kvgraft"]["first_logits_sha256"]
    serving = api["app"].state.serving
    system_end = serving.chat([("system", DOC), ("user", question)]).message_ends[0]
    a, b = serving.chat([("system", DOC), ("user", seed_question)]).tokens, serving.chat(
        [("system", DOC), ("user", question)]).tokens
    common = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    _wait_deposits(api)
    fresh1, fresh2 = _chat(api, question, kvgraft={"cache": False}), _chat(api, question, kvgraft={"cache": False})
    assert fresh1["kvgraft"]["first_logits_sha256"] == fresh2["kvgraft"]["first_logits_sha256"]  # the control
    cached = _chat(api, question)
    k = cached["kvgraft"]
    granule = k["boundary_granule"]
    assert granule in (1, 4, 16) and k["cache"] == "hit"
    # at least the system message (to the granule); more only where the seed's chunk boundary is still shared
    assert (system_end // granule) * granule <= k["restored_tokens"] <= common
    assert k["first_logits_sha256"] == fresh1["kvgraft"]["first_logits_sha256"]
    assert cached["choices"][0]["message"]["content"] == fresh1["choices"][0]["message"]["content"]


def test_the_composition_check_is_an_attestation(api: dict[str, Any]) -> None:
    """Recorded as an attestation of kind `composition`, which the auditor finds by kind (a team's response names
    no attestation id: ids count every team's attestations)."""
    first = _complete(api)
    _wait_deposits(api)
    again = _complete(api)
    for k in (first["kvgraft"], again["kvgraft"]):
        assert "composition_attestation_id" not in k and "attestation_id" not in k["batching"]
        assert all(set(r) == {"block_id", "tokens", "chunks", "attested", "from"} for r in k["restored"])
        assert "attestation" not in json.dumps(k).replace('"attested"', "")
    assert again["kvgraft"]["restored"]
    rt = api["app"].state.runtime
    with rt.session() as s:
        auditor = create_api_token(s, team=get_or_create_team(s, name="audit"), role="auditor")[1]
    listed = api["client"].get("/v1/attestations?kind=composition",
                               headers={"Authorization": f"Bearer {auditor}"}).json()
    assert listed["total"] == 1 and listed["items"][0]["kind"] == "composition"
    attestation_id = listed["items"][0]["id"]
    with rt.session() as s:
        row = s.get(AttestationRow, attestation_id)
        assert row is not None and row.block_id is None and row.status == "attested" and row.byte_exact
        assert row.kind == "composition" and row.reason.startswith("composition check")
        assert "exact at 32 (granule 16)" in row.reason
        assert "joined chain of chunks ending 16+32: exact" in row.reason
        assert row.profile["prefill_chunk"] == 16


def _refuse(api: dict[str, Any], check: CompositionCheck) -> None:
    _complete(api)  # loads the serving engine and runs the real check (exact here)
    rt = api["app"].state.runtime
    entries = rt.memo.entries(COMPOSITION)
    assert entries and all(v.exact for _, v in entries)
    for k, _ in entries:
        rt.memo.put(COMPOSITION, k, CompositionVerdict.of(check, None))


def _check(aligned: bool, unaligned: bool) -> CompositionCheck:
    div = Divergence(True, 1, 1, 0.0, 0.0, 1, 0.0)
    splits = (SplitResult((32,), 16, aligned, "b" * 64),) + tuple(SplitResult((s,), 1, unaligned, "c" * 64)
                                                                 for s in (17, 31, 33))
    return CompositionCheck(True, "a" * 64, 16, 39, splits, div, 1.0,
                            chains=(ChainResult((16, 32), True, "d" * 64),))


def test_a_composition_the_check_refuses_is_served_uncached_and_says_why(api: dict[str, Any]) -> None:
    _refuse(api, _check(aligned=False, unaligned=False))
    refused = _complete(api)
    assert refused["kvgraft"]["cache"] == "off" and refused["kvgraft"]["reason"].startswith("composition_not_exact")
    assert refused["usage"]["prompt_tokens_details"]["cached_tokens"] == 0


def test_where_only_aligned_splits_are_exact_prefixes_end_at_chunk_boundaries(api: dict[str, Any]) -> None:
    _refuse(api, _check(aligned=True, unaligned=False))
    _chat(api, "Which pump runs on Mondays?")
    _wait_deposits(api)
    k = _chat(api, "Which way are the valves turned to close?")["kvgraft"]
    assert k["boundary_granule"] == 16 and k["cache"] == "hit" and k["restored_tokens"] % 16 == 0
    rt = api["app"].state.runtime
    with rt.session() as s:
        assert all(n % 16 == 0 for n in s.scalars(sa.select(PrefixRow.n_tokens)))


def test_completions_over_the_admission_limits_are_refused_at_once(limited: dict[str, Any]) -> None:
    """A team past its in-flight limit (1 here), and any team past the server's (2), gets 429 in OpenAI's shape
    with Retry-After while other work is served; neither a refused request nor a finished one, streamed or not,
    holds a slot afterwards."""
    api = limited
    _complete(api, max_tokens=2)
    serving = api["app"].state.serving
    retry = str(serving.rt.settings.busy_retry_after_s)
    with serving.rt.session() as s:
        team_a = get_or_create_team(s, name="team-a").id
    serving.reserve(team_a)  # a completion of team-a in flight
    r = api["client"].post("/v1/completions", json={"model": "tiny", "prompt": "hi", "max_tokens": 2},
                           headers=api["h"]["team-a"])
    assert r.status_code == 429 and r.headers["Retry-After"] == retry
    assert r.json()["error"]["code"] == "rate_limit_exceeded" and "the team has 1" in r.json()["error"]["message"]
    assert _complete(api, team="team-b", max_tokens=2)["choices"]  # another team is still served
    serving.reserve(99)  # another team's: now the server holds 2 of 2
    r = api["client"].post("/v1/chat/completions", headers=api["h"]["team-b"], json={
        "model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "stream": True})
    message = r.json()["error"]["message"]  # which limit, never how many completions the server holds
    assert r.status_code == 429 and "this server is at its limit" in message and not any(c.isdigit() for c in
                                                                                         message.split(";")[0])
    serving.release(99)
    serving.release(team_a)
    assert serving._admitted == {}
    assert _complete(api, team="team-a", max_tokens=2)["choices"]
    with api["client"].stream("POST", "/v1/completions", headers=api["h"]["team-a"], json={
            "model": "tiny", "prompt": "hi", "max_tokens": 2, "stream": True}) as r:
        assert r.status_code == 200 and "data: [DONE]" in list(r.iter_lines())
    deadline = time.monotonic() + 10
    while serving._admitted and time.monotonic() < deadline:  # the stream's thread releases its slot as it ends
        time.sleep(0.05)
    assert serving._admitted == {}


def test_every_decode_of_an_embedded_process_runs_on_the_serving_thread(api: dict[str, Any],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the serving engine has started, a question answered on the embedded API's work thread decodes on the
    serving engine's thread too, interleaved with completions (the work thread itself never runs llama_decode)."""
    import llama_cpp

    threads: list[str] = []
    decode = llama_cpp.llama_decode

    def recording(*args: Any) -> int:
        threads.append(threading.current_thread().name)
        return int(decode(*args))

    _complete(api, max_tokens=2)  # the serving engine started
    monkeypatch.setattr(llama_cpp, "llama_decode", recording)
    with ThreadPoolExecutor(2) as pool:
        asked = pool.submit(api["client"].post, "/v1/queries", json={"question": "What is 7 times 6?"},
                            headers=api["h"]["team-a"])
        served = pool.submit(_complete, api, max_tokens=4)
        r = asked.result(timeout=600)
        served.result(timeout=600)
    assert r.status_code in (200, 202), r.text
    assert threads and set(threads) == {"kvgraft-serving-engine"}, set(threads)


def test_every_serving_computation_runs_on_one_thread(api: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Completions streamed and not, from several request threads, all decode on the serving engine's one thread
    (a second computing thread makes libgomp sleep at barriers: a slower prefill for every request after)."""
    from engine.native import LlamaContext

    threads: set[str] = set()
    decode = LlamaContext.decode

    def recording(self: LlamaContext, *args: Any, **kwargs: Any) -> None:
        threads.add(threading.current_thread().name)
        decode(self, *args, **kwargs)

    monkeypatch.setattr(LlamaContext, "decode", recording)
    _complete(api)
    with api["client"].stream("POST", "/v1/chat/completions", headers=api["h"]["team-a"], json={
            "model": "tiny", "messages": [{"role": "user", "content": "Streamed?"}], "max_tokens": 4,
            "stream": True}) as r:
        assert "data: [DONE]" in list(r.iter_lines())
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda q: _chat(api, q), ["One?", "Two?", "Three?"]))
    assert len(threads) == 1 and next(iter(threads)).startswith("kvgraft-serving-engine"), threads


@pytest.fixture()
def one_slot(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    yield from _serve(monkeypatch, KVGRAFT_SERVING_MAX_SEQS="1")


@pytest.mark.parametrize("serving", ["api", "one_slot"])
def test_a_prefix_from_the_resident_context_equals_one_from_its_block_and_fresh(serving: str,
                                                                                request: pytest.FixtureRequest
                                                                                ) -> None:
    """A finished request's slot still holds its prompt: a request whose stored prefix is there is truncated to
    it instead of restoring the block. Both ways, and fresh, give the same logits and text (batching on, and with
    one slot, as batching off serves)."""
    api = request.getfixturevalue(serving)
    _chat(api, "Which pump runs on Mondays?")
    _wait_deposits(api)
    question = "Which way are the valves turned to close?"
    via_context = _chat(api, question)
    rt = api["app"].state.runtime
    verdict = rt.memo.entries(COMPOSITION)[0][1]
    # where the composition check found truncation not exact here, the block is restored instead
    assert via_context["kvgraft"]["restored"][0]["from"] == ("context" if verdict.resident else "block")
    answers = [via_context]
    if serving == "one_slot":  # (with several slots, a new request takes an empty one: the resident stays)
        _complete(api, prompt="Something else entirely, to displace the context. " * 4)
        via_block = _chat(api, question)
        assert via_block["kvgraft"]["restored"][0]["from"] == "block"  # (the longer prefix via_context deposited)
        answers.append(via_block)
    answers.append(_chat(api, question, kvgraft={"cache": False}))
    digests = {r["kvgraft"]["first_logits_sha256"] for r in answers}
    texts = {r["choices"][0]["message"]["content"] for r in answers}
    assert len(digests) == 1 and len(texts) == 1


def test_the_resident_context_serves_only_the_team_that_left_it(api: dict[str, Any]) -> None:
    """Team B owns the same prefix (deposited by both), but the context holds team A's last prompt: B's request
    restores its block, so neither `from` nor the restore time tells B what A asked."""
    for team in ("team-a", "team-b"):
        _chat(api, "Which pump runs on Mondays?", team=team)
        _wait_deposits(api)
    _chat(api, "Which pump runs on Mondays?", team="team-a")  # the context now holds team A's prompt
    other = _chat(api, "Which pump runs on Mondays?", team="team-b")
    assert other["kvgraft"]["cache"] == "hit" and other["kvgraft"]["restored"][0]["from"] == "block"


def test_one_per_team_limit_admits_as_many_completions_as_the_team_may_hold_sequences(
        api: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT is the one per-team limit: a team is admitted as many completions as it
    may hold sequences in the batch (default max_seqs - 1 = 7; it was 4 admitted against 7 sequences, the second
    limit unreachable), the next gets 429; the retired second limit is refused, not silently ignored."""
    from pydantic import ValidationError

    from workers.serving.service import ServingBusy

    _complete(api, max_tokens=1)  # the engine started: the scheduler has its per-team limit
    serving = api["app"].state.serving
    settings = serving.rt.settings
    assert settings.team_max_in_flight == settings.serving_max_seqs - 1 == serving.scheduler._owner_max == 7
    with serving.rt.session() as s:
        team_a = get_or_create_team(s, name="team-a").id
    for _ in range(7):
        serving.reserve(team_a)
    try:
        with pytest.raises(ServingBusy):
            serving.reserve(team_a)
        r = api["client"].post("/v1/completions", json={"model": "tiny", "prompt": "hi", "max_tokens": 1},
                               headers=api["h"]["team-a"])
        assert r.status_code == 429 and "the team has 7" in r.json()["error"]["message"]
    finally:
        for _ in range(7):
            serving.release(team_a)
    monkeypatch.setenv("KVGRAFT_SERVING_TEAM_MAX_SEQS", "3")
    with pytest.raises(ValidationError, match="KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT is the one per-team limit"):
        Settings()


def test_a_request_refused_with_429_costs_no_tokenization(limited: dict[str, Any],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Admission comes before the prompt is tokenized: a refused request costs the server nothing of its size."""
    api = limited
    _complete(api, max_tokens=1)  # the engine loaded
    serving = api["app"].state.serving
    tokenized: list[str] = []
    tokens, chat = serving.tokens, serving.chat
    monkeypatch.setattr(serving, "tokens", lambda text: (tokenized.append("prompt"), tokens(text))[1])
    monkeypatch.setattr(serving, "chat", lambda messages: (tokenized.append("chat"), chat(messages))[1])
    with serving.rt.session() as s:
        team_a = get_or_create_team(s, name="team-a").id
    serving.reserve(team_a)
    try:
        for path, body in (("/v1/completions", {"prompt": DOC * 20}),
                           ("/v1/chat/completions", {"messages": [{"role": "user", "content": DOC * 20}]})):
            r = api["client"].post(path, json={"model": "tiny", "max_tokens": 2, **body}, headers=api["h"]["team-a"])
            assert r.status_code == 429
    finally:
        serving.release(team_a)
    assert tokenized == []
    _complete(api, max_tokens=1)
    assert tokenized == ["prompt"]  # the patch counts (an admitted request is tokenized)


def test_the_batch_check_is_an_attestation_and_responses_say_how_they_were_batched(api: dict[str, Any]) -> None:
    body = _complete(api, max_tokens=2)
    batching = body["kvgraft"]["batching"]
    assert batching["batching"] == "on" and batching["reason"] is None and batching["max_seqs"] == 8
    rt = api["app"].state.runtime
    with rt.session() as s:
        stored = s.scalars(sa.select(AttestationRow).where(AttestationRow.kind == "batch")).all()
    assert len(stored) == 1 and stored[0].status == "attested" and "attestation_id" not in batching
    assert stored[0].profile["max_seqs"] == 8 and stored[0].profile["kv_layout"] == "streams"
    assert stored[0].byte_exact and stored[0].floor_equal and stored[0].kl_max == 0


def test_a_batch_check_that_fails_serves_one_at_a_time_and_says_why(data_dir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.serving import batch_check

    real = batch_check.batch_check

    def inexact(engine: Any, max_seqs: int, *args: Any) -> Any:
        from dataclasses import replace
        check = real(engine, max_seqs, *args)
        return replace(check, positions_equal=check.positions - 1)

    monkeypatch.setattr(batch_check, "batch_check", inexact)
    for api in _serve(monkeypatch, KVGRAFT_SERVING_STEP_RATIO="4"):
        batching = _complete(api, max_tokens=2)["kvgraft"]["batching"]
        assert batching["batching"] == "off" and batching["max_seqs"] == 1
        assert batching["reason"].startswith("batch_not_exact:") and "attestation" not in batching["reason"]
        assert api["app"].state.serving.scheduler.core.max_seqs == 1
        # the step costs measured before the check stay visible to operators (GET /v1/status) with batching off
        assert batching["prefill_step_ratio"] == 4.0 and api["app"].state.serving.batching.step_costs is not None
