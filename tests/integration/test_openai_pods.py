"""The OpenAI-compatible endpoints driven by the official `openai` client against two API processes (`kvgraft
serve`) over one PostgreSQL catalogue and one S3 store: a prompt computed on pod A is deposited as prefix blocks,
pod A is stopped, and pod B restores the prefix from S3, streaming and not, with the same tokens and the same
first-position logits digest as a fresh computation on pod B."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from bench.local_servers import free_port
from store.db import PrefixRow
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.processes import KvgraftProcess, api_server
from workers.runtime import open_runtime

pytestmark = pytest.mark.integration

MANUAL = ("Boiler room rules. The feed valve is opened a quarter turn at a time; the gauge must stay under eight "
          "bar; the blue lever drains the tank and is never touched while the burner runs. ") * 8


def _prefixes() -> int:
    rt = open_runtime()
    try:
        with rt.session() as s:
            return int(s.scalar(sa.select(sa.func.count()).select_from(PrefixRow)) or 0)
    finally:
        rt.close()


def test_a_prefix_computed_on_pod_a_is_restored_on_pod_b(flywheel_env: dict[str, str], workers: list[KvgraftProcess],
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    monkeypatch.setenv("KVGRAFT_PROMPT_CHUNK_TOKENS", "32")
    rt = open_runtime()
    with rt.session() as s:
        _, token = create_api_token(s, team=get_or_create_team(s, name="ops"), role="submitter")
    rt.close()
    messages: Any = [{"role": "system", "content": MANUAL}, {"role": "user", "content": "What does the blue lever do?"}]
    extra = {"kvgraft": {"cache": True}}

    port_a = free_port()
    pod_a = api_server(port_a, tmp_path)
    workers.append(pod_a)
    a = openai.OpenAI(base_url=f"http://127.0.0.1:{port_a}/v1", api_key=token, max_retries=0, timeout=120)
    assert [m.id for m in a.models.list()] == ["tiny"]
    first = a.chat.completions.create(model="tiny", messages=messages, max_tokens=12, temperature=0,
                                      extra_body=extra)
    assert first.usage is not None and first.usage.prompt_tokens_details.cached_tokens == 0
    deadline = time.monotonic() + 60
    while _prefixes() == 0:  # deposited off the request's path
        assert time.monotonic() < deadline, pod_a.log()[-2000:]
        time.sleep(0.2)
    pod_a.stop()

    port_b = free_port()
    pod_b = api_server(port_b, tmp_path)
    workers.append(pod_b)
    b = openai.OpenAI(base_url=f"http://127.0.0.1:{port_b}/v1", api_key=token, max_retries=0, timeout=120)
    fresh = b.chat.completions.create(model="tiny", messages=messages, max_tokens=12, temperature=0,
                                      extra_body={"kvgraft": {"cache": False}})
    cached = b.chat.completions.create(model="tiny", messages=messages, max_tokens=12, temperature=0,
                                       extra_body=extra)
    assert cached.usage is not None and cached.usage.prompt_tokens_details.cached_tokens > 0
    ext_cached, ext_fresh = cached.model_extra["kvgraft"], fresh.model_extra["kvgraft"]
    assert ext_cached["cache"] == "hit" and ext_fresh["cache"] == "off"
    assert ext_cached["first_logits_sha256"] == ext_fresh["first_logits_sha256"] == first.model_extra["kvgraft"][
        "first_logits_sha256"]
    assert cached.choices[0].message.content == fresh.choices[0].message.content == first.choices[0].message.content

    stream = b.chat.completions.create(model="tiny", messages=messages, max_tokens=12, temperature=0, stream=True,
                                       stream_options={"include_usage": True}, extra_body=extra)
    pieces, usage = [], None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.usage is not None:
            usage = chunk.usage
    assert "".join(pieces) == cached.choices[0].message.content
    assert usage is not None
    assert usage.prompt_tokens_details.cached_tokens == cached.usage.prompt_tokens_details.cached_tokens

    completion = b.completions.create(model="tiny", prompt=MANUAL + "\nQ: What is the limit of the gauge?\nA:",
                                      max_tokens=6, temperature=0)
    assert completion.object == "text_completion" and completion.usage is not None
    with pytest.raises(openai.NotFoundError):
        b.chat.completions.create(model="gpt-4o", messages=messages, max_tokens=4)
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"http://127.0.0.1:{port_b}/v1", api_key="kvg_wrong", max_retries=0).models.list()
