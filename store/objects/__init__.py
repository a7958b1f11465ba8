"""Object stores: where block files live, addressed by '/'-separated keys, chosen from a URL.

`file:///absolute/dir` (or `file://relative/dir`, resolved against the working directory) selects a local
directory; `s3://bucket/optional/prefix` selects an S3-compatible server through boto3.

Contract, the same for every implementation:

* Write-once. `put` publishes an object only if no object exists under its key, atomically: a concurrent `put` of
  the same key from any number of writers creates it exactly once, the others get `created=False`, and nothing is
  ever overwritten. Keys are content addresses (block ids), so a second writer holds the same bytes anyway.
* Whole or nothing. Readers never see half an object: a local object appears under its key by an atomic link of a
  fully written, fsynced temporary file; an S3 object appears when its single PUT or multipart upload completes.
* `replace`, the one overwrite (rekey, repair), is atomic at every size: the new bytes are written beside the old
  object (a temporary file renamed over it; a single PUT, or a multipart upload whose completion swaps it in) and a
  failure at any step leaves the old object; never delete-then-put.
* The caller's SHA-256 of the data is checked before anything is published, and sent to S3 as the object's
  checksum (per part for multipart uploads) so servers that validate checksums refuse corrupted uploads.
* Verify on read. The store does not vouch for what it returns: kvgraft re-verifies every download (the block
  format hashes the payload while reading it, see store/blockfile.py), because some S3 servers, moto among them,
  do not validate checksums, and disks rot.

Errors are the store's own: a missing key is `BlockNotFoundError`, a bad key `InvalidObjectKeyError`, a server that
cannot be reached, times out or answers 5xx `ObjectStoreUnavailableError` (retryable), anything else `StoreError`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

from store.errors import StoreError
from store.objects.base import Buffer, ObjectInfo, ObjectStore, PutResult, check_sha256, validate_key

__all__ = ["Buffer", "ObjectInfo", "ObjectStore", "PutResult", "check_sha256", "open_object_store",
           "register_scheme", "validate_key"]

# A backend is a factory from a parsed URL (and the open_object_store options) to a store, keyed by URL scheme;
# each backend module is imported only when its scheme is opened (boto3 only for s3://).
Factory = Callable[[SplitResult, dict[str, Any]], ObjectStore]
_BACKENDS: dict[str, Factory] = {}


def register_scheme(scheme: str, factory: Factory) -> None:
    _BACKENDS[scheme] = factory


def _open_file(parts: SplitResult, _options: dict[str, Any]) -> ObjectStore:
    from store.objects.local import LocalObjectStore

    path = unquote(parts.netloc + parts.path)
    if not path:
        raise StoreError(f"object store URL {parts.geturl()!r} names no directory")
    return LocalObjectStore(Path(path))


def _open_s3(parts: SplitResult, options: dict[str, Any]) -> ObjectStore:
    from store.objects.s3 import DEFAULT_MULTIPART_THRESHOLD, S3ObjectStore

    return S3ObjectStore(parts.netloc, unquote(parts.path), endpoint_url=options.get("s3_endpoint_url"),
                         multipart_threshold=options.get("multipart_threshold") or DEFAULT_MULTIPART_THRESHOLD)


register_scheme("file", _open_file)
register_scheme("s3", _open_s3)


def open_object_store(url: str, *, s3_endpoint_url: str | None = None,
                      multipart_threshold: int | None = None) -> ObjectStore:
    """The store a URL names: `file:///abs/dir`, `file://relative/dir` or `s3://bucket/optional/prefix`."""
    parts = urlsplit(url)
    factory = _BACKENDS.get(parts.scheme)
    if factory is None:
        raise StoreError(f"unsupported object store URL {url!r}: expected "
                         f"{' or '.join(f'{s}://' for s in sorted(_BACKENDS))}")
    return factory(parts, {"s3_endpoint_url": s3_endpoint_url, "multipart_threshold": multipart_threshold})
