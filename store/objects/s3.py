"""`s3://` object stores: one bucket (and key prefix) of an S3-compatible server through boto3, the only module
that imports it: write-once by conditional puts (`If-None-Match: *`), multipart uploads past a threshold, SHA-256
checksums sent with every part, and a streaming reader."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

import structlog

from store.errors import BlockNotFoundError, ObjectStoreUnavailableError, StoreError
from store.objects.base import Buffer, ObjectInfo, ObjectStore, PutResult, check_sha256, validate_key

if TYPE_CHECKING:
    from botocore.client import BaseClient

log = structlog.get_logger(__name__)

DEFAULT_MULTIPART_THRESHOLD = 64 << 20
MIN_PART_BYTES = 8 << 20
MAX_PARTS = 10_000
_COPY_CHUNK = 1 << 20
_CONFLICT_ATTEMPTS = 5


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

    def replace(self, key: str, data: Buffer, *, sha256: str) -> PutResult:
        """Atomic at every size: a single unconditional PUT, or past the multipart threshold a multipart upload whose
        parts lie beside the old object until its completion swaps them in (readers see the old or the new bytes,
        never neither); a failure before the completion aborts the upload and leaves the old object as it was."""
        full = self._full(key)
        view = check_sha256(key, data, sha256)
        if view.nbytes >= self.multipart_threshold:
            with self._errors("replace (create multipart upload)", key):
                upload_id = self.client.create_multipart_upload(
                    Bucket=self.bucket, Key=full, ChecksumAlgorithm="SHA256")["UploadId"]
            completed = False
            try:
                parts = self._upload_parts(key, full, view, upload_id)
                with self._errors("replace (complete multipart upload)", key):
                    self.client.complete_multipart_upload(Bucket=self.bucket, Key=full, UploadId=upload_id,
                                                          MultipartUpload={"Parts": parts})
                completed = True
            finally:
                if not completed:
                    self._abort(full, upload_id)
        else:
            with self._errors("replace", key):
                self.client.put_object(Bucket=self.bucket, Key=full, Body=view.tobytes(),
                                       ChecksumSHA256=base64.b64encode(bytes.fromhex(sha256)).decode())
        log.debug("object_store.replace", store=self.url, key=key, size=view.nbytes)
        return PutResult(key, True, view.nbytes)

    def _write_if_absent(self, key: str, op: str, write: Callable[[dict[str, str]], object]) -> bool:
        """Run a conditional write (`write(extra_args)`); False when the key already holds an object.

        Uses `If-None-Match: *`; a server that answers 501 to it gets an existence check first instead (racy: two
        writers of one block id hold the same identity and payload, though their headers' metadata may differ)."""
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
        """Every part is uploaded whether or not the key already holds the object (the conditional completion
        decides): a put takes the same time whether or not another team stored the same content first. A server
        without conditional writes is asked whether the object exists first (the only way to stay write-once)."""
        if not self._conditional_writes and self.exists(key):
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
