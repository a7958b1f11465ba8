"""A joined chain is checked before it is set: a catalogue row pointing a prompt's chain at another prompt's chunk
(the same span, the same team: a bug, a hand-edited database, a repair gone wrong) is a miss, logged and the chunk
quarantined, never restored; the request is still byte-equal to computing it fresh."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from engine import seqchunks
from engine.graft import EngineConfig, GraftEngine
from store.db import BlockRow, PrefixRow
from store.repository import get_or_create_team
from tests.unit import test_prefix_chunks
from tests.unit.test_prefix_chunks import SYSTEM, TURNS, _chat
from workers.serving.exactness import composition_check
from workers.serving.prompt_cache import chain_hashes, lookup

pytestmark = [pytest.mark.unit, pytest.mark.timeout(300)]
api = test_prefix_chunks.api  # the fixture: the API over the tiny model, prefix chunks of 64 tokens

OTHER = ("Annex B. The greenhouse keeps four beds; bed one grows basil, bed two tomatoes, bed three peppers and "
         "bed four whatever the gardener planted last. Water is drawn from the north tank. ") * 5


def test_a_row_pointing_a_chain_at_another_prompts_chunk_is_a_miss_not_a_restore(api: dict[str, Any]) -> None:
    serving, rt = api["app"].state.serving, api["app"].state.runtime
    mine = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TURNS[0]}]
    other = [{"role": "system", "content": OTHER}, {"role": "user", "content": TURNS[0]}]
    _chat(api, mine)
    _chat(api, other)
    serving.depositor.wait()
    engine = serving.engine()
    tokens = list(serving.chat([(m["role"], m["content"]) for m in mine]).tokens)
    other_tokens = list(serving.chat([(m["role"], m["content"]) for m in other]).tokens)
    with rt.session() as s:
        team_id = get_or_create_team(s, name="team-a").id
    hashes = chain_hashes(engine, tokens, store_chunk=64)
    before = lookup(rt, engine, hashes, team_id, tokens=tokens, store_chunk=64)
    assert before.cached is not None and len(before.cached.block_ids) >= 2  # the control: a chain restores
    first_end = 64
    theirs = lookup(rt, engine, chain_hashes(engine, other_tokens, store_chunk=64), team_id)
    assert theirs.cached is not None
    wrong = theirs.cached.block_ids[0]  # the other prompt's chunk of [0, 64)
    with rt.session() as s:  # the catalogue row of my first chunk now names theirs
        s.execute(sa.update(PrefixRow).where(PrefixRow.chain_hash == hashes[first_end])
                  .values(block_id=wrong))
    after = lookup(rt, engine, hashes, team_id, tokens=tokens, store_chunk=64)
    assert after.cached is None or wrong not in after.cached.block_ids
    if after.cached is not None:
        assert list(after.cached.snapshot.tokens) == tokens[:after.cached.n_tokens]
    with rt.session() as s:
        assert s.get(BlockRow, wrong).quarantined_at is not None
    fresh = _chat(api, mine, kvgraft={"cache": False})
    again = _chat(api, mine)
    assert again["kvgraft"]["first_logits_sha256"] == fresh["kvgraft"]["first_logits_sha256"]
    assert wrong not in [c for r in again["kvgraft"]["restored"] for c in r["chunks"]]


@pytest.fixture()
def engine(kvgraft_cache: Path) -> Iterator[GraftEngine]:
    with GraftEngine.load("tiny", EngineConfig(n_ctx=512, prefill_chunk=16, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as e:
        yield e


def test_the_composition_check_refuses_the_cache_when_a_joined_chain_is_not_exact(
        engine: GraftEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The composition check restores the probe's prefix from chunks joined as the prompt cache stores and joins
    them: with a cut that takes its cells one position late (the right positions in the cells' headers, the next
    cell's K and V bytes), whole-state splits are still exact, but the joined chain is not, so the cache is
    refused and the attestation's reason says which trial differed."""
    good = composition_check(engine)  # the control: chains joined from correct cuts are exact here
    assert good.exact and good.chains and all(c.exact for c in good.chains)
    assert "joined chain of chunks ending 16+32: exact" in good.summary()
    real_cut = seqchunks.cut

    def late_cut(payload: bytes | bytearray, start: int, end: int) -> bytes:
        right = real_cut(payload, start, end)
        if end + 1 > seqchunks.positions(payload)[1]:
            return right
        head = 16 + 12 * (end - start)  # magic, seq id, streams, cell count; then 12 bytes per cell
        return right[:head] + real_cut(payload, start + 1, end + 1)[head:]

    monkeypatch.setattr(seqchunks, "cut", late_cut)
    bad = composition_check(engine)
    assert bad.reproducible and all(s.exact for s in bad.splits if s.granule == bad.chunk)
    assert bad.chains and not bad.chains[0].exact and bad.chains[0].composed_sha256 != bad.fresh_sha256
    assert not bad.exact
    assert "joined chain of chunks ending 16+32: differs" in bad.summary()
