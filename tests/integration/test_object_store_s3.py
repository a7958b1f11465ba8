"""The S3 object store against a real (moto) S3 server: write-once single and multipart puts, key prefixes,
error translation (missing keys, unreachable endpoints, 5xx answers), block reads through `open()`, and the
read-through cache in front of it."""

from __future__ import annotations

import hashlib
import http.server
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from bench.local_servers import free_port
from store.blockfile import encode, new_block, read_block, read_block_file
from store.cache import LocalReadCache
from store.errors import (
    BlockIntegrityError,
    BlockNotFoundError,
    InvalidObjectKeyError,
    ObjectStoreUnavailableError,
    StoreError,
)
from store.objects import open_object_store
from store.objects.s3 import S3ClientOptions, S3ObjectStore

pytestmark = pytest.mark.integration

MiB = 1 << 20
FAST_FAIL = S3ClientOptions(max_attempts=2, connect_timeout=1.0, read_timeout=1.0)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def bucket_of(url: str) -> str:
    return url.removeprefix("s3://").split("/", 1)[0]


@pytest.fixture
def raw_client(s3_admin_client: Any) -> Any:
    """A plain boto3 client on the moto server, to look behind the store's back."""
    return s3_admin_client


def run_concurrently(n: int, fn: Callable[[], bool]) -> list[bool]:
    """Start `n` threads that call `fn` at the same moment; their results, sorted."""
    barrier = threading.Barrier(n)
    results: list[bool] = []
    lock = threading.Lock()

    def go() -> None:
        barrier.wait()
        value = fn()
        with lock:
            results.append(value)

    threads = [threading.Thread(target=go) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(results)


def test_put_get_exists_list_delete_round_trip(s3_store: S3ObjectStore, raw_client: Any) -> None:
    data = b"block bytes" * 100
    result = s3_store.put("blocks/ab/abcdef", data, sha256=sha(data))
    assert (result.key, result.created, result.size) == ("blocks/ab/abcdef", True, len(data))
    assert s3_store.exists("blocks/ab/abcdef")
    assert s3_store.get("blocks/ab/abcdef") == data
    s3_store.put("blocks/cd/cdef", b"other", sha256=sha(b"other"))
    s3_store.put("top", b"t", sha256=sha(b"t"))
    # Stored under the URL's prefix; an object outside that prefix is not the store's.
    head = raw_client.head_object(Bucket=s3_store.bucket, Key="kvgraft/blocks/ab/abcdef")
    assert head["ContentLength"] == len(data)
    raw_client.put_object(Bucket=s3_store.bucket, Key="elsewhere/x", Body=b"x")

    assert [o.key for o in s3_store.list()] == ["blocks/ab/abcdef", "blocks/cd/cdef", "top"]
    assert [o.key for o in s3_store.list("blocks/a")] == ["blocks/ab/abcdef"]
    assert list(s3_store.list("nothing/")) == []
    (info,) = s3_store.list("blocks/ab/")
    assert info.size == len(data) and info.modified.utcoffset() == UTC.utcoffset(None)

    s3_store.delete("blocks/ab/abcdef")
    assert not s3_store.exists("blocks/ab/abcdef")
    s3_store.delete("blocks/ab/abcdef")  # missing is fine


def test_write_once_never_overwrites(s3_store: S3ObjectStore) -> None:
    first, second = b"first version", b"second version"
    assert s3_store.put("k", first, sha256=sha(first)).created
    assert s3_store.put("k", second, sha256=sha(second)).created is False
    assert s3_store.get("k") == first


def test_sha256_mismatch_is_refused(s3_store: S3ObjectStore) -> None:
    with pytest.raises(BlockIntegrityError, match="hashes to"):
        s3_store.put("k", b"data", sha256=sha(b"other data"))
    assert not s3_store.exists("k")


@pytest.mark.parametrize("key", ["", "/abs", "../x", "a/../b", "a//b", "a/"])
def test_invalid_keys_are_refused(s3_store: S3ObjectStore, key: str) -> None:
    with pytest.raises(InvalidObjectKeyError):
        s3_store.put(key, b"x", sha256=sha(b"x"))
    with pytest.raises(InvalidObjectKeyError):
        s3_store.open(key)


def test_missing_key_is_block_not_found(s3_store: S3ObjectStore) -> None:
    with pytest.raises(BlockNotFoundError):
        s3_store.open("no/such/key")
    with pytest.raises(BlockNotFoundError):
        s3_store.get("no/such/key")
    assert not s3_store.exists("no/such/key")


def test_multipart_put_round_trip_and_write_once(s3_store_url: str, s3_server: str, raw_client: Any) -> None:
    store = open_object_store(s3_store_url, s3_endpoint_url=s3_server, multipart_threshold=8 * MiB)
    data = bytes(range(256)) * (9 * MiB // 256)
    assert store.put("big", data, sha256=sha(data)).created
    assert store.get("big") == data
    etag = raw_client.head_object(Bucket=bucket_of(s3_store_url), Key="kvgraft/big")["ETag"]
    assert etag.strip('"').endswith("-2")  # 8 MiB + 1 MiB parts
    other = b"\x01" * (9 * MiB)
    parts: list[Any] = []
    assert isinstance(store, S3ObjectStore)
    store.client.meta.events.register("before-call.s3.UploadPart", lambda **_: parts.append(1))
    assert store.put("big", other, sha256=sha(other)).created is False
    assert store.get("big") == data
    assert len(parts) == 2  # uploaded in full though the key was taken: a put's time never tells who was first
    assert raw_client.list_multipart_uploads(Bucket=bucket_of(s3_store_url)).get("Uploads", []) == []
    store.close()


def test_multipart_completion_is_conditional(s3_store_url: str, s3_server: str, raw_client: Any) -> None:
    """Another writer publishes the key between our existence check and our completion: ours must not win."""
    store = open_object_store(s3_store_url, s3_endpoint_url=s3_server, multipart_threshold=8 * MiB)
    assert isinstance(store, S3ObjectStore)
    bucket = bucket_of(s3_store_url)

    def racer(**_: Any) -> None:
        raw_client.put_object(Bucket=bucket, Key="kvgraft/big", Body=b"the other writer")

    store.client.meta.events.register("before-call.s3.CompleteMultipartUpload", racer)
    data = b"m" * (9 * MiB)
    assert store.put("big", data, sha256=sha(data)).created is False
    assert store.get("big") == b"the other writer"
    assert raw_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    store.close()


def test_failed_multipart_upload_is_aborted(s3_store_url: str, s3_server: str, raw_client: Any) -> None:
    from botocore.exceptions import EndpointConnectionError

    store = open_object_store(s3_store_url, s3_endpoint_url=s3_server, multipart_threshold=8 * MiB)
    assert isinstance(store, S3ObjectStore)

    def drop_second_part(params: dict[str, Any], **_: Any) -> None:
        if params.get("PartNumber") == 2:
            raise EndpointConnectionError(endpoint_url=s3_server)

    store.client.meta.events.register("before-parameter-build.s3.UploadPart", drop_second_part)
    data = b"m" * (9 * MiB)
    with pytest.raises(ObjectStoreUnavailableError, match="part 2"):
        store.put("big", data, sha256=sha(data))
    assert not store.exists("big")
    assert raw_client.list_multipart_uploads(Bucket=bucket_of(s3_store_url)).get("Uploads", []) == []
    store.close()


def test_concurrent_multipart_puts_leave_one_object_and_no_upload(s3_store_url: str, s3_server: str,
                                                                 raw_client: Any) -> None:
    store = open_object_store(s3_store_url, s3_endpoint_url=s3_server, multipart_threshold=8 * MiB)
    data = b"m" * (9 * MiB)
    results = run_concurrently(3, lambda: store.put("big", data, sha256=sha(data)).created)
    # Real S3 decides a conditional completion atomically; moto checks, then assembles the parts, then stores,
    # so two racing completions can both succeed there (test_multipart_completion_is_conditional covers the rule).
    assert True in results
    assert store.get("big") == data
    assert raw_client.list_multipart_uploads(Bucket=bucket_of(s3_store_url)).get("Uploads", []) == []
    store.close()


def test_concurrent_puts_of_one_key_create_it_exactly_once(s3_store: S3ObjectStore) -> None:
    # Real S3 decides If-None-Match atomically; moto checks then writes, a window too small to hit in practice.
    data = b"same content" * 1000
    results = run_concurrently(8, lambda: s3_store.put("race/key", data, sha256=sha(data)).created)
    assert results == [False] * 7 + [True]
    assert s3_store.get("race/key") == data


def _block_bytes(payload: bytes) -> tuple[str, bytes]:
    block = new_block(kind="document", tokens=[2, 7, 1, 8], pos_start=0, fingerprint="ef" * 16,
                      profile={"n_batch": 512}, payload=payload)
    return block.block_id, encode(block)


def test_read_block_through_open(s3_store: S3ObjectStore) -> None:
    payload = bytes(range(256)) * 12_000  # ~3 MiB: several reads into one buffer
    block_id, raw = _block_bytes(payload)
    s3_store.put(f"blocks/{block_id}", raw, sha256=sha(raw))
    with s3_store.open(f"blocks/{block_id}") as stream:
        block = read_block(stream, expected_id=block_id, expected_fingerprint="ef" * 16)
    assert bytes(block.payload) == payload


def test_open_stream_reads_exact_sizes(s3_store: S3ObjectStore) -> None:
    data = bytes(range(256)) * 4096
    s3_store.put("obj", data, sha256=sha(data))
    stream = s3_store.open("obj")
    assert stream.readable()
    assert stream.read(10) == data[:10]
    buf = bytearray(1000)
    assert stream.readinto(buf) == 1000 and bytes(buf) == data[10:1010]
    assert stream.read() == data[1010:]
    assert stream.read(5) == b"" and stream.readinto(bytearray(5)) == 0
    stream.close()
    stream.close()
    with pytest.raises(ValueError):
        stream.read(1)


def test_bucket_is_not_created_implicitly(s3_server: str, raw_client: Any) -> None:
    store = S3ObjectStore("kvgraft-never-made", "p", endpoint_url=s3_server)
    with pytest.raises(StoreError, match="does not exist") as info:
        store.put("k", b"x", sha256=sha(b"x"))
    assert not isinstance(info.value, ObjectStoreUnavailableError)
    assert "kvgraft-never-made" not in [b["Name"] for b in raw_client.list_buckets()["Buckets"]]
    assert store.ensure_bucket() is True
    assert store.ensure_bucket() is False
    assert store.put("k", b"x", sha256=sha(b"x")).created
    store.close()


def test_unreachable_endpoint_is_unavailable_quickly() -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    store = S3ObjectStore("bucket", "p", endpoint_url=endpoint, options=FAST_FAIL)
    started = time.monotonic()
    with pytest.raises(ObjectStoreUnavailableError) as info:
        store.put("some/key", b"x", sha256=sha(b"x"))
    assert endpoint in str(info.value) and "some/key" in str(info.value)
    for op in (lambda: store.get("k"), lambda: store.exists("k"), lambda: list(store.list())):
        with pytest.raises(ObjectStoreUnavailableError):
            op()
    assert time.monotonic() - started < 10
    store.close()


class _Always503(http.server.BaseHTTPRequestHandler):
    """An S3 impostor that answers every request with 503 ServiceUnavailable."""

    body = b"<Error><Code>ServiceUnavailable</Code><Message>down for maintenance</Message></Error>"
    protocol_version = "HTTP/1.1"  # answers `Expect: 100-continue` at once instead of letting the client wait

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(503)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(self.body)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def failing_endpoint(aws_test_env: dict[str, str]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Always503)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_server_errors_are_unavailable(failing_endpoint: str) -> None:
    store = S3ObjectStore("bucket", endpoint_url=failing_endpoint,
                          options=S3ClientOptions(max_attempts=1, connect_timeout=1, read_timeout=1))
    with pytest.raises(ObjectStoreUnavailableError, match="503") as info:
        store.put("k1", b"x", sha256=sha(b"x"))
    assert failing_endpoint in str(info.value) and "k1" in str(info.value)
    for op in (lambda: store.get("k"), lambda: store.exists("k"), lambda: store.delete("k")):
        with pytest.raises(ObjectStoreUnavailableError):
            op()
    store.close()


def test_read_cache_in_front_of_s3(s3_store: S3ObjectStore, tmp_path: Path) -> None:
    block_id, raw = _block_bytes(b"kv" * 50_000)
    s3_store.put(block_id, raw, sha256=sha(raw))
    cache = LocalReadCache(tmp_path / "cache", max_bytes=len(raw) + 10)
    path = cache.fetch(block_id, lambda: s3_store.open(block_id))
    assert read_block_file(path, expected_id=block_id).payload == b"kv" * 50_000
    assert cache.fetch(block_id, lambda: s3_store.open("unused")) == path  # a hit does not load
    with pytest.raises(BlockNotFoundError):
        cache.fetch("absent", lambda: s3_store.open("absent"))
    assert not cache.contains("absent") and cache.total_bytes() == len(raw)
