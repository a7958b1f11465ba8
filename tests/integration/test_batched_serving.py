"""Continuous batching through a real API process (`kvgraft serve`, PostgreSQL, S3) and the official `openai`
client: eight streamed requests of two teams at once, each byte-identical to the same request served alone; a
stream whose client disconnects stops computing; a team's short request is not held behind another team's long
one."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bench.local_servers import free_port
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.processes import KvgraftProcess, api_server
from workers.runtime import open_runtime

pytestmark = pytest.mark.integration

TOPICS = ["pumps", "valves", "boilers", "fuses", "ladders", "hoists", "lamps", "drains"]


def _clients(port: int) -> dict[str, Any]:
    import openai

    rt = open_runtime()
    with rt.session() as s:
        tokens = {team: create_api_token(s, team=get_or_create_team(s, name=team), role="submitter")[1]
                  for team in ("team-a", "team-b")}
    rt.close()
    return {team: openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=token, max_retries=0, timeout=300)
            for team, token in tokens.items()}


def _streamed(client: Any, i: int) -> tuple[str, list[str], dict[str, Any]]:
    messages = [{"role": "system", "content": f"Rules for the {TOPICS[i]}: " + "check them twice, log the hour. " * i},
                {"role": "user", "content": f"What do I do with the {TOPICS[i]}?"}]
    stream = client.chat.completions.create(model="tiny", messages=messages, max_tokens=24 + 4 * i,
                                            temperature=0 if i % 2 else 0.8, seed=i, stream=True,
                                            extra_body={"kvgraft": {"digests": True, "cache": False}})
    pieces, ext = [], {}
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        ext = (chunk.model_extra or {}).get("kvgraft") or ext
    return "".join(pieces), ext["logits_sha256"], ext


def _pod(tmp_path: Path, workers: list[KvgraftProcess], monkeypatch: pytest.MonkeyPatch, max_seqs: int) -> int:
    monkeypatch.setenv("KVGRAFT_SERVING_MAX_SEQS", str(max_seqs))
    port = free_port()
    workers.append(api_server(port, tmp_path))
    return port


def test_eight_streams_of_two_teams_each_equal_their_solo_completion(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    port = _pod(tmp_path, workers, monkeypatch, 8)
    clients = _clients(port)
    teams = [clients["team-a" if i % 2 else "team-b"] for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda i: _streamed(teams[i], i), range(8)))
    alone = [_streamed(teams[i], i) for i in range(8)]  # one at a time: each alone in the batch
    for (text, digests, ext), (solo_text, solo_digests, _) in zip(together, alone, strict=True):
        assert ext["batching"]["batching"] == "on" and "attestation_id" not in ext["batching"]
        assert "batched_with" not in ext["batching"]  # what else shared the calls is no team's business
        assert digests and digests == solo_digests and text == solo_text
    shared = [e["batched_with"] for e in _completed(workers[-1])]  # the operator's log says it
    assert len(shared) == 16 and max(shared[:8]) > 1 and shared[8:] == [1] * 8


def _completed(pod: KvgraftProcess) -> list[dict[str, Any]]:
    return [json.loads(line[line.index("{"):]) for line in pod.log().splitlines() if '"serve.completed"' in line]


def test_a_disconnected_stream_stops_and_a_short_request_is_not_held_behind_a_long_one(
        flywheel_env: dict[str, str], workers: list[KvgraftProcess], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    port = _pod(tmp_path, workers, monkeypatch, 2)
    clients = _clients(port)
    pod = workers[-1]
    long = clients["team-a"].chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "Tell me everything."}], max_tokens=2000,
        temperature=0.9, seed=5, stream=True)
    received = 0
    for chunk in long:
        if chunk.choices and chunk.choices[0].delta.content:
            received += 1
        if received == 3:
            break
    # team A streams; team B's one-token request is admitted beside it and answered while A is still running
    short = clients["team-b"].chat.completions.create(model="tiny", messages=[{"role": "user", "content": "Hi"}],
                                                      max_tokens=1, temperature=0)
    assert short.choices[0].finish_reason in ("length", "stop")
    assert not any(e.get("stopped_by") == "cancelled" or e.get("completion_tokens", 0) > 100 for e in _completed(pod))
    long.close()  # the client goes away
    deadline = time.monotonic() + 60
    while not (done := [e for e in _completed(pod) if e.get("stopped_by") == "cancelled"]):
        assert time.monotonic() < deadline, pod.log()[-3000:]
        time.sleep(0.1)
    assert done[0]["steps_after_cancel"] <= 1 and done[0]["completion_tokens"] < 2000
