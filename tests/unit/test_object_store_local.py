"""The local-disk object store and the read-through cache: write-once publishing, key safety, block reads through
`open()`, LRU eviction by bytes and never-partial entries."""

from __future__ import annotations

import hashlib
import io
import threading
import time
from datetime import UTC
from pathlib import Path
from typing import BinaryIO

import pytest
from structlog.testing import capture_logs

from store.blockfile import encode, new_block, read_block, read_block_file
from store.cache import LocalReadCache
from store.errors import (
    BlockIntegrityError,
    BlockNotFoundError,
    InvalidObjectKeyError,
    StoreError,
)
from store.objects import open_object_store
from store.objects.local import LocalObjectStore
from store.objects.s3 import S3ObjectStore

pytestmark = pytest.mark.unit

INVALID_KEYS = ["", "/abs/key", "..", "../x", "a/../b", "a/..", "a//b", "a/", ".", "a/./b", "a\\b", "a\x00b",
                ".tmp-x", "a/.tmp-y"]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.fixture
def store(tmp_path: Path) -> LocalObjectStore:
    opened = open_object_store(f"file://{tmp_path / 'objects'}")
    assert isinstance(opened, LocalObjectStore)
    return opened


# ------------------------------------------------------------------------------------------------ object store


def test_put_get_exists_list_delete_round_trip(store: LocalObjectStore) -> None:
    data = b"block bytes" * 100
    result = store.put("blocks/ab/abcdef", data, sha256=sha(data))
    assert (result.key, result.created, result.size) == ("blocks/ab/abcdef", True, len(data))
    assert store.exists("blocks/ab/abcdef")
    assert store.get("blocks/ab/abcdef") == data
    store.put("blocks/cd/cdef", b"other", sha256=sha(b"other"))
    store.put("top", b"t", sha256=sha(b"t"))

    assert sorted(o.key for o in store.list()) == ["blocks/ab/abcdef", "blocks/cd/cdef", "top"]
    assert sorted(o.key for o in store.list("blocks/")) == ["blocks/ab/abcdef", "blocks/cd/cdef"]
    assert [o.key for o in store.list("blocks/a")] == ["blocks/ab/abcdef"]  # a string prefix, not only a dir
    assert list(store.list("nothing/")) == []
    (info,) = store.list("blocks/ab/")
    assert info.size == len(data)
    assert info.modified.tzinfo is not None and info.modified.utcoffset() == UTC.utcoffset(None)

    store.delete("blocks/ab/abcdef")
    assert not store.exists("blocks/ab/abcdef")
    store.delete("blocks/ab/abcdef")  # missing is fine
    with pytest.raises(BlockNotFoundError):
        store.get("blocks/ab/abcdef")


def test_put_accepts_bytearray_and_memoryview(store: LocalObjectStore) -> None:
    data = b"0123456789" * 10
    assert store.put("ba", bytearray(data), sha256=sha(data)).created
    assert store.put("mv", memoryview(data), sha256=sha(data)).created
    assert store.get("ba") == store.get("mv") == data


def test_write_once_never_overwrites(store: LocalObjectStore) -> None:
    first, second = b"first version", b"second version"
    assert store.put("k", first, sha256=sha(first)).created
    again = store.put("k", second, sha256=sha(second))
    assert again.created is False
    assert store.get("k") == first
    assert files_under(store.root) == ["k"]


def test_sha256_mismatch_is_refused_and_leaves_nothing(store: LocalObjectStore) -> None:
    with pytest.raises(BlockIntegrityError, match="hashes to"):
        store.put("dir/k", b"data", sha256=sha(b"other data"))
    assert not store.exists("dir/k")
    assert files_under(store.root) == []


@pytest.mark.parametrize("key", INVALID_KEYS)
def test_invalid_keys_are_refused(store: LocalObjectStore, key: str) -> None:
    with pytest.raises(InvalidObjectKeyError):
        store.put(key, b"x", sha256=sha(b"x"))
    for op in (store.open, store.get, store.exists, store.delete):
        with pytest.raises(InvalidObjectKeyError):
            op(key)


def test_keys_that_collide_with_the_directory_tree_are_refused(store: LocalObjectStore) -> None:
    store.put("a/b", b"x", sha256=sha(b"x"))
    with pytest.raises(InvalidObjectKeyError, match="below an existing object"):
        store.put("a/b/c", b"y", sha256=sha(b"y"))
    with pytest.raises(InvalidObjectKeyError, match="directory"):
        store.put("a", b"z", sha256=sha(b"z"))
    assert files_under(store.root) == ["a/b"]


def test_list_never_escapes_the_root_and_skips_temporary_files(store: LocalObjectStore) -> None:
    (store.root.parent / "outside").write_bytes(b"secret")
    (store.root / ".tmp-inflight").write_bytes(b"half")
    store.put("a/b", b"x", sha256=sha(b"x"))
    (store.root / "a" / ".tmp-also").write_bytes(b"half")
    assert [o.key for o in store.list()] == ["a/b"]
    assert list(store.list("../")) == []
    assert list(store.list("a/../")) == []


def test_concurrent_puts_of_one_key_create_it_exactly_once(store: LocalObjectStore) -> None:
    data = b"same content" * 4096
    barrier = threading.Barrier(16)
    results: list[bool] = []
    lock = threading.Lock()

    def put() -> None:
        barrier.wait()
        created = store.put("race/key", data, sha256=sha(data)).created
        with lock:
            results.append(created)

    threads = [threading.Thread(target=put) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 15 + [True]
    assert store.get("race/key") == data
    assert files_under(store.root) == ["race/key"]  # no temporary file left behind


def test_missing_key_is_block_not_found(store: LocalObjectStore) -> None:
    with pytest.raises(BlockNotFoundError):
        store.open("no/such/key")
    with pytest.raises(BlockNotFoundError):
        store.get("no/such/key")
    store.put("dir/file", b"x", sha256=sha(b"x"))
    with pytest.raises(BlockNotFoundError):
        store.open("dir")  # a directory is not an object
    with pytest.raises(BlockNotFoundError):
        store.open("dir/file/below")
    assert not store.exists("no/such/key")


def _block_bytes(payload: bytes = b"kv-state" * 5000) -> tuple[str, bytes]:
    block = new_block(kind="document", tokens=[3, 1, 4, 1, 5], pos_start=0, fingerprint="cd" * 16,
                      profile={"n_batch": 512}, payload=payload)
    return block.block_id, encode(block)


def test_read_block_through_open(store: LocalObjectStore) -> None:
    block_id, raw = _block_bytes()
    store.put(f"blocks/{block_id}", raw, sha256=sha(raw))
    with store.open(f"blocks/{block_id}") as stream:
        block = read_block(stream, expected_id=block_id, expected_fingerprint="cd" * 16)
    assert bytes(block.payload) == b"kv-state" * 5000


def test_store_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    absolute = open_object_store(f"file://{tmp_path / 'abs'}")
    assert isinstance(absolute, LocalObjectStore)
    assert absolute.root == tmp_path / "abs" and absolute.url == f"file://{tmp_path / 'abs'}"
    monkeypatch.chdir(tmp_path)
    relative = open_object_store("file://rel/dir")
    assert isinstance(relative, LocalObjectStore) and relative.root == (tmp_path / "rel" / "dir").resolve()
    s3 = open_object_store("s3://bucket/some/prefix/", s3_endpoint_url="http://127.0.0.1:1")
    assert isinstance(s3, S3ObjectStore)  # no connection is made until an operation needs one
    assert (s3.bucket, s3.prefix, s3.url) == ("bucket", "some/prefix", "s3://bucket/some/prefix")
    with pytest.raises(StoreError, match="unsupported"):
        open_object_store("ftp://host/dir")
    with pytest.raises(StoreError):
        open_object_store("s3:///no-bucket")


# ------------------------------------------------------------------------------------------------ read cache


class CountingLoader:
    """A loader of fixed bytes that counts its calls."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.calls = 0

    def __call__(self) -> BinaryIO:
        self.calls += 1
        return io.BytesIO(self.data)


def test_cache_miss_then_hit(tmp_path: Path) -> None:
    cache = LocalReadCache(tmp_path / "cache", max_bytes=1 << 20)
    loader = CountingLoader(b"object bytes")
    with capture_logs() as events:
        first = cache.fetch("blocks/ab/k", loader)
        second = cache.fetch("blocks/ab/k", loader)
    assert first == second and first.read_bytes() == b"object bytes"
    assert first.parent == tmp_path / "cache"
    assert loader.calls == 1
    assert cache.contains("blocks/ab/k") and not cache.contains("other")
    assert cache.total_bytes() == len(b"object bytes")
    assert [e["event"] for e in events] == ["cache.miss", "cache.hit"]


def test_cache_names_are_safe_for_any_key(tmp_path: Path) -> None:
    cache = LocalReadCache(tmp_path / "cache", max_bytes=1 << 20)
    path = cache.fetch("../../etc/passwd", CountingLoader(b"x"))
    assert path.parent == tmp_path / "cache" and len(path.name) == 64


def test_cache_evicts_least_recently_used_by_bytes(tmp_path: Path) -> None:
    cache = LocalReadCache(tmp_path / "cache", max_bytes=250)
    for key in ("a", "b"):
        cache.fetch(key, CountingLoader(key.encode() * 100))
    cache.fetch("a", CountingLoader(b""))  # a hit: "a" becomes the most recently used
    with capture_logs() as events:
        cache.fetch("c", CountingLoader(b"c" * 100))
    assert cache.contains("a") and cache.contains("c") and not cache.contains("b")
    assert cache.total_bytes() == 200 <= cache.max_bytes
    assert [e["reason"] for e in events if e["event"] == "cache.evict"] == ["lru"]

    big = cache.fetch("big", CountingLoader(b"B" * 400))  # larger than the bound: kept, everything else goes
    assert big.read_bytes() == b"B" * 400
    assert [cache.contains(k) for k in ("a", "c", "big")] == [False, False, True]


def test_corrupted_entry_is_evicted_and_fetched_again(tmp_path: Path, store: LocalObjectStore) -> None:
    block_id, raw = _block_bytes()
    store.put(block_id, raw, sha256=sha(raw))
    cache = LocalReadCache(tmp_path / "cache", max_bytes=1 << 20)
    loads: list[str] = []

    def loader() -> BinaryIO:
        loads.append(block_id)
        return store.open(block_id)

    path = cache.fetch(block_id, loader)
    corrupted = bytearray(path.read_bytes())
    corrupted[-10] ^= 0xFF
    path.write_bytes(corrupted)
    with pytest.raises(BlockIntegrityError):
        read_block_file(cache.fetch(block_id, loader), expected_id=block_id)
    assert cache.evict(block_id, reason="corrupted")
    assert not cache.evict(block_id)
    block = read_block_file(cache.fetch(block_id, loader), expected_id=block_id)
    assert bytes(block.payload) == b"kv-state" * 5000
    assert len(loads) == 2


class SlowStream(io.RawIOBase):
    """`total` bytes of 'z' delivered in small chunks with pauses; raises OSError after `fail_after` bytes."""

    def __init__(self, total: int, *, fail_after: int | None = None) -> None:
        self.left, self.sent, self.fail_after = total, 0, fail_after

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.fail_after is not None and self.sent >= self.fail_after:
            raise OSError("connection dropped")
        n = min(len(buffer), self.left, 32 << 10)
        buffer[:n] = b"z" * n
        self.left -= n
        self.sent += n
        time.sleep(0.005)
        return n


def test_cache_never_shows_a_partial_entry(tmp_path: Path) -> None:
    cache = LocalReadCache(tmp_path / "cache", max_bytes=1 << 30)
    total = 1 << 20
    target = cache.path_for("slow")
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if target.exists():
                seen.append(target.stat().st_size)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        path = cache.fetch("slow", lambda: SlowStream(total))  # type: ignore[arg-type,return-value]
    finally:
        done.set()
        watcher.join()
    assert path == target and path.stat().st_size == total
    assert set(seen) <= {total}


def test_failed_load_leaves_no_entry_and_no_temporary_file(tmp_path: Path) -> None:
    cache = LocalReadCache(tmp_path / "cache", max_bytes=1 << 30)

    def flaky() -> BinaryIO:
        return SlowStream(1 << 20, fail_after=128 << 10)  # type: ignore[return-value]

    def missing() -> BinaryIO:
        raise BlockNotFoundError("gone")

    with pytest.raises(OSError, match="connection dropped"):
        cache.fetch("flaky", flaky)
    with pytest.raises(BlockNotFoundError):
        cache.fetch("missing", missing)
    assert not cache.contains("flaky") and not cache.contains("missing")
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_put_of_existing_content_refreshes_its_time_for_gc(tmp_path: Path) -> None:
    import hashlib
    import os
    import time

    store = LocalObjectStore(tmp_path / "store")
    data = b"an orphan a redelivered deposit puts again"
    sha = hashlib.sha256(data).hexdigest()
    store.put("blocks/fp/" + "a" * 64, data, sha256=sha)
    path = tmp_path / "store" / "blocks" / "fp" / ("a" * 64)
    os.utime(path, (time.time() - 7200, time.time() - 7200))
    assert store.put("blocks/fp/" + "a" * 64, data, sha256=sha).created is False
    assert time.time() - path.stat().st_mtime < 60
