"""Object stores: where block files live, addressed by '/'-separated keys, chosen from a URL.

`file:///absolute/dir` (or `file://relative/dir`, resolved against the working directory) selects a local
directory; `s3://bucket/optional/prefix` selects an S3-compatible server through boto3.

Contract, the same for every implementation:

* Write-once. `put` publishes an object only if no object exists under its key, atomically: a concurrent `put` of
  the same key from any number of writers creates it exactly once, the others get `created=False`, and nothing is
  ever overwritten. Keys are content addresses (block ids), so a second writer holds the same bytes anyway.
* Whole or nothing. Readers never see half an object: a local object appears under its key by an atomic link of a
  fully written, fsynced temporary file; an S3 object appears when its single PUT or multipart upload completes.
* The caller's SHA-256 of the data is checked before anything is published, and sent to S3 as the object's
  checksum (per part for multipart uploads) so servers that validate checksums refuse corrupted uploads.
* Verify on read. The store does not vouch for what it returns: kvgraft re-verifies every download (the block
  format hashes the payload while reading it, see store/blockfile.py), because some S3 servers, moto among them,
  do not validate checksums, and disks rot.

Errors are the store's own: a missing key is `BlockNotFoundError`, a bad key `InvalidObjectKeyError`, a server that
cannot be reached, times out or answers 5xx `ObjectStoreUnavailableError` (retryable), anything else `StoreError`.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import io
import math
import os
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn
from urllib.parse import unquote, urlsplit

import structlog

from store.errors import (
    BlockIntegrityError,
    BlockNotFoundError,
    InvalidObjectKeyError,
    ObjectStoreUnavailableError,
    StoreError,
)

if TYPE_CHECKING:
    from botocore.client import BaseClient

log = structlog.get_logger(__name__)

Buffer = bytes | bytearray | memoryview

TMP_PREFIX = ".tmp-"
"""Name prefix of the temporary files a local store writes before publishing; never a key component."""

DEFAULT_MULTIPART_THRESHOLD = 64 << 20
MIN_PART_BYTES = 8 << 20
MAX_PARTS = 10_000
_COPY_CHUNK = 1 << 20
_CONFLICT_ATTEMPTS = 5


@dataclass(frozen=True)
class ObjectInfo:
    """One stored object as listed: its key (relative to the store), size in bytes and last modification (UTC)."""

    key: str
    size: int
    modified: datetime


@dataclass(frozen=True)
class PutResult:
    """The outcome of a write-once put: `created` is False when the key already held an object (left untouched);
    `size` is the number of bytes offered (equal to the stored object's for content-addressed keys)."""

    key: str
    created: bool
    size: int


def validate_key(key: str) -> str:
    """Return `key` if it is a safe relative '/'-separated key, else raise InvalidObjectKeyError."""
    if not isinstance(key, str) or not key:
        raise InvalidObjectKeyError(f"object key must be a non-empty string, got {key!r}")
    if key.startswith("/"):
        raise InvalidObjectKeyError(f"object key {key!r} is absolute")
    if "\x00" in key or "\\" in key:
        raise InvalidObjectKeyError(f"object key {key!r} contains a NUL or backslash")
    for part in key.split("/"):
        if part in ("", ".", ".."):
            raise InvalidObjectKeyError(f"object key {key!r} has an empty, '.' or '..' component")
        if part.startswith(TMP_PREFIX):
            raise InvalidObjectKeyError(f"object key {key!r} has a component starting with {TMP_PREFIX!r}")
    return key


def _view(data: Buffer) -> memoryview:
    return memoryview(data).cast("B")


def check_sha256(key: str, data: Buffer, sha256: str) -> memoryview:
    """Refuse `data` unless it hashes to the caller's `sha256` (hex); returns a flat byte view of it."""
    view = _view(data)
    actual = hashlib.sha256(view).hexdigest()
    if actual != sha256.lower():
        raise BlockIntegrityError(f"refusing to store {key!r}: data hashes to {actual}, caller claimed {sha256}")
    return view


class ObjectStore(ABC):
    """A write-once store of immutable objects under '/'-separated keys (see the module docstring)."""

    url: str

    @abstractmethod
    def put(self, key: str, data: Buffer, *, sha256: str) -> PutResult:
        """Store `data` under `key` unless the key exists; `sha256` is the caller's hex digest of `data`."""

    @abstractmethod
    def open(self, key: str) -> BinaryIO:
        """A readable binary stream of the object (supports `read(n)` and `readinto`); the caller closes it."""

    def get(self, key: str) -> bytes:
        """The whole object in memory."""
        with self.open(key) as stream:
            return stream.read()

    @abstractmethod
    def exists(self, key: str) -> bool:
        """Whether an object is stored under `key`."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove the object under `key`; a missing key is not an error."""

    @abstractmethod
    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Every object whose key starts with `prefix` (a plain string prefix, not only a directory)."""

    def close(self) -> None:
        """Release connections; the store is not used afterwards."""
        return None

    def __enter__(self) -> ObjectStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------------- local disk


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _makedirs_durable(path: Path) -> None:
    """Create `path` and missing parents, fsyncing each new directory's parent so the entries survive a crash."""
    missing: list[Path] = []
    cur = path
    while not cur.is_dir():
        missing.append(cur)
        cur = cur.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir()
        _fsync_dir(directory.parent)


def _write_temp(directory: Path, view: memoryview) -> Path:
    """Write `view` to a new fsynced temporary file in `directory`; returns its path."""
    fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=directory)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(view)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


class LocalObjectStore(ObjectStore):
    """Objects as files under `root`; a key's components are the relative path."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.url = f"file://{self.root}"

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*validate_key(key).split("/"))

    def put(self, key: str, data: Buffer, *, sha256: str) -> PutResult:
        path = self._path(key)
        view = check_sha256(key, data, sha256)
        if path.is_file():
            return PutResult(key, False, view.nbytes)
        if path.is_dir():
            raise InvalidObjectKeyError(f"object key {key!r} names a directory of other objects in {self.url}")
        try:
            _makedirs_durable(path.parent)
            tmp = _write_temp(path.parent, view)
        except (NotADirectoryError, FileExistsError):
            raise InvalidObjectKeyError(f"object key {key!r} lies below an existing object in {self.url}") from None
        try:
            created = self._publish(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        if created:
            _fsync_dir(path.parent)
        log.debug("object_store.put", store=self.url, key=key, created=created, size=view.nbytes)
        return PutResult(key, created, view.nbytes)

    @staticmethod
    def _publish(tmp: Path, path: Path) -> bool:
        """Link the finished temporary file to its final name unless that name exists (atomic, create-only)."""
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise StoreError(f"{path.parent} does not support hard links, which write-once publishing needs; "
                                 f"use a local filesystem such as ext4 or xfs") from exc
            raise
        return True

    def open(self, key: str) -> BinaryIO:
        path = self._path(key)
        try:
            return path.open("rb")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise BlockNotFoundError(f"no object {key!r} in {self.url}") from None

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        path = self._path(key)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, IsADirectoryError):
            path.unlink()
            log.debug("object_store.delete", store=self.url, key=key)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Objects under `prefix` in no guaranteed order; temporary files are skipped."""
        start = self._list_start(prefix)
        if start is None or not start.is_dir():
            return
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames.sort()
            rel_dir = Path(dirpath).relative_to(self.root).as_posix()
            for name in sorted(filenames):
                if name.startswith(TMP_PREFIX):
                    continue
                key = name if rel_dir == "." else f"{rel_dir}/{name}"
                if key.startswith(prefix):
                    info = self._info(key, Path(dirpath, name))
                    if info is not None:
                        yield info

    def _list_start(self, prefix: str) -> Path | None:
        """The deepest directory every key with `prefix` lies under, or None if no valid key can have it."""
        if "/" not in prefix:
            return self.root
        directory = prefix.rsplit("/", 1)[0]
        try:
            return self._path(directory)
        except InvalidObjectKeyError:
            return None

    @staticmethod
    def _info(key: str, path: Path) -> ObjectInfo | None:
        try:
            st = path.stat()
        except FileNotFoundError:  # deleted while listing
            return None
        return ObjectInfo(key, st.st_size, datetime.fromtimestamp(st.st_mtime, tz=UTC))


# --------------------------------------------------------------------------------------------------------- S3


class S3ObjectStream(io.BufferedIOBase):
    """A readable stream over an S3 GetObject body: `read(n)` returns n bytes unless the object ends first,
    `readinto(buffer)` fills the buffer likewise (botocore's StreamingBody has no readinto), transport failures
    while reading become ObjectStoreUnavailableError."""

    def __init__(self, body: Any, *, describe: str, content_length: int | None = None) -> None:
        super().__init__()
        self._body = body
        self._describe = describe
        self.content_length = content_length  # the object's size, when the server said
        self._pos = 0

    def tell(self) -> int:
        return self._pos

    def readable(self) -> bool:
        return True

    def _read_some(self, n: int) -> bytes:
        from botocore.exceptions import BotoCoreError

        try:
            data = self._body.read(n)
            self._pos += len(data)
            return data
        except BotoCoreError as exc:
            raise ObjectStoreUnavailableError(f"reading {self._describe} failed: {exc}") from exc

    def read1(self, size: int | None = -1) -> bytes:
        self._check_open()
        return self._read_some(_COPY_CHUNK if size is None or size < 0 else size)

    def read(self, size: int | None = -1) -> bytes:
        self._check_open()
        if size is None or size < 0:
            chunks = []
            while chunk := self._read_some(_COPY_CHUNK):
                chunks.append(chunk)
            return b"".join(chunks)
        buf = bytearray(size)
        n = self.readinto(buf)
        del buf[n:]
        return bytes(buf)

    def readinto(self, buffer: Any) -> int:
        self._check_open()
        view = memoryview(buffer).cast("B")
        got = 0
        while got < view.nbytes:
            chunk = self._read_some(min(view.nbytes - got, _COPY_CHUNK))
            if not chunk:
                break
            view[got:got + len(chunk)] = chunk
            got += len(chunk)
        return got

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed S3 object stream")

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(Exception):
                self._body.close()
        super().close()


@dataclass(frozen=True)
class S3ClientOptions:
    """How the boto3 client behaves: retries (standard mode, attempts include the first) and timeouts in seconds."""

    max_attempts: int = 3
    connect_timeout: float = 3.0
    read_timeout: float = 5.0


def make_s3_client(*, endpoint_url: str | None, options: S3ClientOptions) -> BaseClient:
    """A boto3 S3 client; credentials and region come from the standard AWS environment and config files."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": options.max_attempts},
        connect_timeout=options.connect_timeout,
        read_timeout=options.read_timeout,
        s3={"addressing_style": "path"} if endpoint_url else None,
    )
    return boto3.session.Session().client("s3", endpoint_url=endpoint_url, config=config)


_UNAVAILABLE_CODES = frozenset({"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout",
                                "RequestTimeTooSkewed", "Throttling", "ThrottlingException"})
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


def _error_code(exc: Exception) -> tuple[str, int]:
    response = getattr(exc, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return code, status


def _b64_sha256(data: memoryview | bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


class S3ObjectStore(ObjectStore):
    """Objects in one S3 bucket under an optional key prefix, through boto3 (created lazily)."""

    def __init__(self, bucket: str, prefix: str = "", *, endpoint_url: str | None = None,
                 multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD,
                 options: S3ClientOptions | None = None, client: BaseClient | None = None) -> None:
        if not bucket:
            raise StoreError("an s3:// store URL needs a bucket name")
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        if self.prefix:
            validate_key(self.prefix)
        self.multipart_threshold = max(1, multipart_threshold)
        self.url = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._endpoint_url = endpoint_url
        self._options = options or S3ClientOptions()
        self._client = client
        self._client_lock = threading.Lock()
        self._conditional_writes = True  # False once the server answers 501 to If-None-Match

    # -- plumbing

    @property
    def client(self) -> BaseClient:
        """The boto3 client, made on first use (boto3 is imported then); one client serves every thread."""
        with self._client_lock:
            if self._client is None:
                self._client = make_s3_client(endpoint_url=self._endpoint_url, options=self._options)
            return self._client

    @property
    def endpoint(self) -> str:
        return self._endpoint_url or "the default AWS S3 endpoint"

    def _full(self, key: str) -> str:
        validate_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _translate(self, exc: Exception, op: str, key: str) -> NoReturn:
        """Raise the store error for a boto3/botocore failure of `op` on `key`."""
        from botocore.exceptions import (
            ConnectionError,
            HTTPClientError,
            IncompleteReadError,
            NoCredentialsError,
            ResponseStreamingError,
        )

        where = f"{op} s3://{self.bucket}/{self._full(key) if key else self.prefix} at {self.endpoint}"
        if isinstance(exc, ConnectionError | HTTPClientError | ResponseStreamingError | IncompleteReadError):
            log.warning("object_store.unavailable", store=self.url, endpoint=self.endpoint, op=op, key=key,
                        error=str(exc))
            raise ObjectStoreUnavailableError(f"object store unavailable: {where}: {exc}") from exc
        if isinstance(exc, NoCredentialsError):
            raise StoreError(f"{where}: no AWS credentials configured") from exc
        code, status = _error_code(exc)
        if code in _MISSING_CODES:
            raise BlockNotFoundError(f"no object {key!r} in {self.url}") from exc
        if status >= 500 or code in _UNAVAILABLE_CODES:
            log.warning("object_store.unavailable", store=self.url, endpoint=self.endpoint, op=op, key=key,
                        code=code, status=status)
            raise ObjectStoreUnavailableError(f"object store unavailable: {where}: HTTP {status} {code}") from exc
        if code == "NoSuchBucket":
            raise StoreError(f"{where}: bucket {self.bucket!r} does not exist (create it with ensure_bucket)") from exc
        raise StoreError(f"{where}: {exc}") from exc

    @contextlib.contextmanager
    def _errors(self, op: str, key: str = "") -> Iterator[None]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield
        except (BotoCoreError, ClientError) as exc:
            self._translate(exc, op, key)

    # -- the interface

    def put(self, key: str, data: Buffer, *, sha256: str) -> PutResult:
        full = self._full(key)
        view = check_sha256(key, data, sha256)
        if view.nbytes >= self.multipart_threshold:
            created = self._put_multipart(key, full, view)
        else:
            body, checksum = view.tobytes(), base64.b64encode(bytes.fromhex(sha256)).decode()
            created = self._write_if_absent(key, "put", lambda extra: self.client.put_object(
                Bucket=self.bucket, Key=full, Body=body, ChecksumSHA256=checksum, **extra))
        log.debug("object_store.put", store=self.url, key=key, created=created, size=view.nbytes)
        return PutResult(key, created, view.nbytes)

    def _write_if_absent(self, key: str, op: str, write: Callable[[dict[str, str]], object]) -> bool:
        """Run a conditional write (`write(extra_args)`); False when the key already holds an object.

        Uses `If-None-Match: *`; a server that answers 501 to it gets an existence check first instead (racy, but
        the racing writers of a content-addressed key hold the same bytes)."""
        from botocore.exceptions import BotoCoreError, ClientError

        for _ in range(_CONFLICT_ATTEMPTS):
            if not self._conditional_writes and self.exists(key):
                return False
            try:
                write({"IfNoneMatch": "*"} if self._conditional_writes else {})
                return True
            except ClientError as exc:
                code, status = _error_code(exc)
                if code == "PreconditionFailed" or status == 412:
                    return False
                if code == "ConditionalRequestConflict":  # a concurrent conditional write: ask again
                    continue
                if code == "NotImplemented" and self._conditional_writes:
                    log.warning("object_store.no_conditional_writes", store=self.url, endpoint=self.endpoint)
                    self._conditional_writes = False
                    continue
                self._translate(exc, op, key)
            except BotoCoreError as exc:
                self._translate(exc, op, key)
        raise ObjectStoreUnavailableError(f"{op} of {key!r} at {self.endpoint} kept conflicting; retry later")

    def _put_multipart(self, key: str, full: str, view: memoryview) -> bool:
        if self.exists(key):  # spare the upload; the conditional completion still decides
            return False
        with self._errors("put (create multipart upload)", key):
            upload_id = self.client.create_multipart_upload(
                Bucket=self.bucket, Key=full, ChecksumAlgorithm="SHA256")["UploadId"]
        created = False
        try:
            parts = self._upload_parts(key, full, view, upload_id)
            created = self._write_if_absent(key, "put (complete multipart upload)", lambda extra: (
                self.client.complete_multipart_upload(Bucket=self.bucket, Key=full, UploadId=upload_id,
                                                      MultipartUpload={"Parts": parts}, **extra)))
            return created
        finally:
            if not created:
                self._abort(full, upload_id)

    def _upload_parts(self, key: str, full: str, view: memoryview, upload_id: str) -> list[dict[str, Any]]:
        part_size = max(MIN_PART_BYTES, math.ceil(view.nbytes / MAX_PARTS))
        parts = []
        for number, start in enumerate(range(0, view.nbytes, part_size), start=1):
            chunk = view[start:start + part_size].tobytes()
            checksum = _b64_sha256(chunk)
            with self._errors(f"put (part {number})", key):
                answer = self.client.upload_part(Bucket=self.bucket, Key=full, UploadId=upload_id,
                                                 PartNumber=number, Body=chunk, ChecksumSHA256=checksum)
            parts.append({"PartNumber": number, "ETag": answer["ETag"], "ChecksumSHA256": checksum})
        return parts

    def _abort(self, full: str, upload_id: str) -> None:
        try:
            self.client.abort_multipart_upload(Bucket=self.bucket, Key=full, UploadId=upload_id)
        except Exception as exc:  # best effort: a lifecycle rule cleans up what is left
            log.warning("object_store.abort_failed", store=self.url, key=full, upload_id=upload_id, error=str(exc))

    def open(self, key: str) -> BinaryIO:
        full = self._full(key)
        with self._errors("get", key):
            answer = self.client.get_object(Bucket=self.bucket, Key=full)
        length = answer.get("ContentLength")
        stream = S3ObjectStream(answer["Body"], describe=f"s3://{self.bucket}/{full} at {self.endpoint}",
                                content_length=length if isinstance(length, int) else None)
        return stream  # type: ignore[return-value]

    def exists(self, key: str) -> bool:
        full = self._full(key)
        try:
            with self._errors("head", key):
                self.client.head_object(Bucket=self.bucket, Key=full)
        except BlockNotFoundError:
            return False
        return True

    def delete(self, key: str) -> None:
        full = self._full(key)
        with self._errors("delete", key):
            self.client.delete_object(Bucket=self.bucket, Key=full)
        log.debug("object_store.delete", store=self.url, key=key)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Objects under `prefix` in lexicographic key order."""
        base = f"{self.prefix}/" if self.prefix else ""
        paginator = self.client.get_paginator("list_objects_v2")
        with self._errors("list", ""):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=base + prefix):
                for item in page.get("Contents", []):
                    modified = item["LastModified"]
                    if modified.tzinfo is None:
                        modified = modified.replace(tzinfo=UTC)
                    yield ObjectInfo(item["Key"][len(base):], int(item["Size"]), modified.astimezone(UTC))

    def ensure_bucket(self) -> bool:
        """Create the bucket if it does not exist; returns whether it was created."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
            return False
        except ClientError as exc:
            code, status = _error_code(exc)
            if status != 404 and code not in ("NoSuchBucket", "NotFound", "404"):
                self._translate(exc, "head bucket", "")
        except BotoCoreError as exc:
            self._translate(exc, "head bucket", "")
        region = self.client.meta.region_name
        extra: dict[str, Any] = {}
        if region and region != "us-east-1":
            extra["CreateBucketConfiguration"] = {"LocationConstraint": region}
        try:
            self.client.create_bucket(Bucket=self.bucket, **extra)
        except ClientError as exc:
            if _error_code(exc)[0] in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                return False
            self._translate(exc, "create bucket", "")
        except BotoCoreError as exc:
            self._translate(exc, "create bucket", "")
        log.info("object_store.bucket_created", store=self.url, endpoint=self.endpoint)
        return True

    def close(self) -> None:
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()


# -------------------------------------------------------------------------------------------------------- URLs


def open_object_store(url: str, *, s3_endpoint_url: str | None = None,
                      multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD) -> ObjectStore:
    """The store a URL names: `file:///abs/dir`, `file://relative/dir` or `s3://bucket/optional/prefix`."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        path = unquote(parts.netloc + parts.path)
        if not path:
            raise StoreError(f"object store URL {url!r} names no directory")
        return LocalObjectStore(Path(path))
    if parts.scheme == "s3":
        return S3ObjectStore(parts.netloc, unquote(parts.path), endpoint_url=s3_endpoint_url,
                             multipart_threshold=multipart_threshold)
    raise StoreError(f"unsupported object store URL {url!r}: expected file:// or s3://")
