"""Prompt-cache prefixes stored as chunks (engine/seqchunks.py, workers/serving/prompt_cache.py): a chunk holds
only its own cells, chunks captured by different prompts join into the bytes of a one-piece capture, a
conversation stores what each turn adds (not the whole prefix again), every turn restored through its chain is
byte-identical to computing it fresh, and a chain is usable up to its first missing chunk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from engine import seqchunks
from engine.errors import StateRestoreError
from engine.graft import EngineConfig, GraftEngine
from engine.texts import sample_tokens
from services.api import create_app
from store.db import BlockOwnerRow, BlockRow, PrefixRow, utcnow
from store.repository import create_api_token, get_or_create_team
from tests.fixtures.ready import wait_ready
from workers.runtime import open_runtime
from workers.serving.prompt_cache import chain_hashes, lookup
from workers.settings import Settings

pytestmark = pytest.mark.unit

SYSTEM = ("Section 4. The pump room holds three pumps; pump A runs on Mondays, pump B on Tuesdays and pump C when "
          "the level passes the red line. Valves are turned clockwise to close. ") * 5
TURNS = ["Which pump runs on Tuesdays?", "And on Mondays?", "What happens at the red line?",
         "How are valves closed?", "How many pumps are there?"]


@pytest.mark.parametrize("flash_attn", [True, False])
def test_chunks_cut_from_different_captures_join_into_the_one_piece_state(kvgraft_cache: Path,
                                                                         flash_attn: bool) -> None:
    with GraftEngine.load("tiny", EngineConfig(n_ctx=2048, prefill_chunk=64, threads=2, flash_attn=flash_attn),
                          cache_dir=kvgraft_cache) as e:
        tokens = sample_tokens(e, 700)
        whole = e.capture(tokens).payload
        assert e.capture(tokens).payload == whole  # the control: a capture is reproducible
        first = e.capture(tokens[:256]).payload  # another prompt's state at 256
        second = seqchunks.cut(e.capture(tokens[:600]).payload, 256, 512)  # and another's, cut
        joined = seqchunks.join([first, second, seqchunks.cut(whole, 512, 700)])
        assert joined == whole
        assert seqchunks.cut(whole, 0, 256) == first and seqchunks.positions(second) == (256, 512)
        with pytest.raises(StateRestoreError, match="does not follow"):
            seqchunks.join([first, seqchunks.cut(whole, 300, 700)])
        with pytest.raises(StateRestoreError, match="not all in"):
            seqchunks.cut(first, 100, 300)


@pytest.fixture()
def api(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    monkeypatch.setenv("KVGRAFT_PROMPT_CHUNK_TOKENS", "16")
    monkeypatch.setenv("KVGRAFT_PREFIX_CHUNK_TOKENS", "64")
    settings = Settings()
    rt = open_runtime(settings)
    with rt.session() as s:
        token = create_api_token(s, team=get_or_create_team(s, name="team-a"), role="submitter")[1]
    rt.close()
    with TestClient(create_app(settings)) as client:
        wait_ready(client)
        yield {"client": client, "h": {"Authorization": f"Bearer {token}"}, "app": client.app}


def _chat(api: dict[str, Any], messages: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
    r = api["client"].post("/v1/chat/completions", headers=api["h"],
                           json={"model": "tiny", "messages": messages, "max_tokens": 6, "temperature": 0, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def _stored_prefix_bytes(api: dict[str, Any]) -> int:
    rt = api["app"].state.runtime
    with rt.session() as s:
        return int(s.scalar(sa.select(sa.func.sum(BlockRow.bytes)).where(BlockRow.kind == "prefix")) or 0)


def test_a_conversation_stores_what_each_turn_adds_and_every_turn_is_exact(api: dict[str, Any]) -> None:
    serving = api["app"].state.serving
    messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM}]
    for n, question in enumerate(TURNS):
        messages.append({"role": "user", "content": question})
        fresh = _chat(api, messages, kvgraft={"cache": False})
        cached = _chat(api, messages)
        k = cached["kvgraft"]
        assert k["first_logits_sha256"] == fresh["kvgraft"]["first_logits_sha256"]
        assert cached["choices"][0]["message"]["content"] == fresh["choices"][0]["message"]["content"]
        if n:
            assert k["cache"] == "hit" and len(k["restored"][0]["chunks"]) >= 2  # through a chain of chunks
        serving.depositor.wait()
        messages.append({"role": "assistant", "content": cached["choices"][0]["message"]["content"]})
    engine = serving.engine()
    prompt = serving.chat([(m["role"], m["content"]) for m in messages]).tokens
    final_state = len(engine.capture(list(prompt)).payload)
    stored = _stored_prefix_bytes(api)
    # every turn's prefix stored whole would be the sum of all their states; chunks store each cell about once
    # (message-end chunks overlap the full chunk they end in)
    assert stored <= 1.3 * final_state, (stored, final_state)
    again = _chat(api, messages[:-1])  # the last turn asked again: everything it needs is held, nothing stored
    assert again["kvgraft"]["cache"] == "hit" and again["kvgraft"]["deposits_scheduled"] == 0


def test_the_joined_chain_is_the_one_piece_state_and_a_missing_chunk_ends_it(api: dict[str, Any]) -> None:
    serving = api["app"].state.serving
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TURNS[0]}]
    first = _chat(api, messages)
    assert first["kvgraft"]["deposits_scheduled"] >= 3
    serving.depositor.wait()
    rt, engine = api["app"].state.runtime, serving.engine()
    tokens = list(serving.chat([(m["role"], m["content"]) for m in messages]).tokens)
    with rt.session() as s:
        team_id = get_or_create_team(s, name="team-a").id
    found = lookup(rt, engine, chain_hashes(engine, tokens, store_chunk=64), team_id)
    assert found.cached is not None and len(found.cached.block_ids) >= 3
    end = found.cached.n_tokens
    assert found.cached.snapshot.payload == engine.capture(tokens[:end]).payload
    # evict the second chunk: the chain stops before it (the first chunk still restores), and stays exact
    second = found.cached.block_ids[1]
    with rt.session() as s:
        s.execute(sa.update(BlockRow).where(BlockRow.id == second).values(evicted_at=utcnow()))
        ends = dict(s.execute(sa.select(PrefixRow.block_id, PrefixRow.n_tokens)
                              .where(PrefixRow.block_id.in_(found.cached.block_ids[:2]))).all())
        assert s.scalar(sa.select(sa.func.count()).select_from(BlockOwnerRow).where(BlockOwnerRow.block_id == second))
    fresh = _chat(api, messages, kvgraft={"cache": False})
    again = _chat(api, messages)
    k = again["kvgraft"]
    # restored up to the first chunk's end (or a message-end chunk inside the evicted one's span), not past it
    assert k["cache"] == "hit" and ends[found.cached.block_ids[0]] <= k["restored_tokens"] < ends[second]
    assert k["first_logits_sha256"] == fresh["kvgraft"]["first_logits_sha256"]
