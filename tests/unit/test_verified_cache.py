"""The in-memory cache of verified blocks: a hit returns what this process verified (a block id commits to its
content), bypassing it reads and verifies the origin, deleting and replacing evict, the byte bound holds (LRU),
and a bound of 0 keeps nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.blockfile import new_block
from store.blocks import BlockStore, block_key
from store.errors import BlockIntegrityError
from store.objects.local import LocalObjectStore

pytestmark = pytest.mark.unit


def _block(seed: int, size: int = 4000):  # noqa: ANN202 - store.blockfile.Block
    payload = bytes((seed + i) % 251 for i in range(size))
    return new_block(kind="document", tokens=[seed, 1, 2], pos_start=0, fingerprint="ab" * 16, profile={},
                     payload=payload)


def _flip(root: Path, block) -> None:  # noqa: ANN001
    path = root / block_key(block.fingerprint, block.block_id)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_hit_is_the_verified_copy_and_the_origin_is_still_checked(tmp_path: Path) -> None:
    store = BlockStore(LocalObjectStore(tmp_path), verified_cache_bytes=1 << 20)
    block = _block(1)
    store.put(block)
    first = store.get(block.fingerprint, block.block_id)
    _flip(tmp_path, block)  # the object is damaged behind this process's back
    assert store.get(block.fingerprint, block.block_id) is first  # the content its id commits to
    with pytest.raises(BlockIntegrityError):
        store.get(block.fingerprint, block.block_id, use_cache=False)  # verify, copy and attest read the origin
    store.delete(block.fingerprint, block.block_id)
    store.put(block)
    _flip(tmp_path, block)
    with pytest.raises(BlockIntegrityError):  # deleting evicted it: the damaged object is refused
        store.get(block.fingerprint, block.block_id)


def test_the_bound_holds_and_zero_keeps_nothing(tmp_path: Path) -> None:
    store = BlockStore(LocalObjectStore(tmp_path / "a"), verified_cache_bytes=9000)
    blocks = [_block(i) for i in range(3)]
    for b in blocks:
        store.put(b)
        store.get(b.fingerprint, b.block_id)
    assert store._verified_size <= 9000 and len(store._verified) == 2
    assert block_key(blocks[0].fingerprint, blocks[0].block_id) not in store._verified  # least recently used
    none = BlockStore(LocalObjectStore(tmp_path / "b"))
    none.put(blocks[0])
    none.get(blocks[0].fingerprint, blocks[0].block_id)
    assert none._verified_size == 0 and not none._verified


@pytest.mark.parametrize("read_cache", [False, True])
def test_one_teams_reads_never_warm_another_teams_cache(tmp_path: Path, read_cache: bool) -> None:
    """With a scope (a team), memory and the local read cache are that scope's own: team B's read of a block is
    served from the origin (an object read, the slow path) whether or not team A just read or deposited the same
    block; a second read of B's own is from B's copy; deleting a block drops every scope's copy."""
    from store.cache import LocalReadCache

    objects = LocalObjectStore(tmp_path / "origin")
    opens: list[str] = []
    original = objects.open
    objects.open = lambda key: (opens.append(key), original(key))[1]  # type: ignore[method-assign]
    cache = LocalReadCache(tmp_path / "read-cache", 1 << 20) if read_cache else None
    store = BlockStore(objects, cache=cache, verified_cache_bytes=1 << 20)
    block = _block(3)
    store.put(block)
    store.remember(block, scope="1")  # team A's deposit
    store.get(block.fingerprint, block.block_id, scope="1")  # and its read
    assert opens == []
    b_first = store.get(block.fingerprint, block.block_id, scope="2")
    assert len(opens) == 1  # B's first read goes to the origin, as if A had never held the block
    assert store.get(block.fingerprint, block.block_id, scope="2") is b_first and len(opens) == 1
    store.delete(block.fingerprint, block.block_id)
    store.put(block)
    _flip(tmp_path / "origin", block)
    for scope in ("1", "2"):
        with pytest.raises(BlockIntegrityError):  # no scope kept a copy of the deleted block
            store.get(block.fingerprint, block.block_id, scope=scope)


def test_a_cache_miss_reads_the_origin_once_into_memory_and_the_entry_and_keeps_no_unverified_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An object not in the local read cache is read from the origin straight into memory while it is hashed,
    its bytes written to the cache entry in the same pass (no second read from a temporary file); the entry
    appears only when the block verified, so a damaged object leaves no entry and no temporary file."""
    from store.cache import LocalReadCache

    objects = LocalObjectStore(tmp_path / "origin")
    opens: list[str] = []
    original = objects.open
    objects.open = lambda key: (opens.append(key), original(key))[1]  # type: ignore[method-assign]
    import store.blocks as blocks_module

    file_reads: list[Path] = []
    read_file = blocks_module.read_block_file
    monkeypatch.setattr(blocks_module, "read_block_file",
                        lambda path, **kw: (file_reads.append(path), read_file(path, **kw))[1])
    cache = LocalReadCache(tmp_path / "read-cache", 1 << 20)
    store = BlockStore(objects, cache=cache)
    good, bad = _block(5), _block(6)
    store.put(good)
    store.put(bad)
    got = store.get(good.fingerprint, good.block_id, scope="1")
    assert bytes(got.payload) == bytes(good.payload) and len(opens) == 1
    assert file_reads == []  # verified from the origin's stream, not read back from a file
    key = f"1|{block_key(good.fingerprint, good.block_id)}"
    assert cache.contains(key)
    with (tmp_path / "origin" / block_key(good.fingerprint, good.block_id)).open("rb") as f:
        assert cache.path_for(key).read_bytes() == f.read()  # the entry is the object's bytes
    assert bytes(store.get(good.fingerprint, good.block_id, scope="1").payload) == bytes(good.payload)
    assert len(opens) == 1 and len(file_reads) == 1  # the second read is the entry's
    _flip(tmp_path / "origin", bad)
    with pytest.raises(BlockIntegrityError):
        store.get(bad.fingerprint, bad.block_id, scope="1")
    assert not cache.contains(f"1|{block_key(bad.fingerprint, bad.block_id)}")
    assert not [p for p in (tmp_path / "read-cache").iterdir() if p.name.startswith(".tmp-")]
