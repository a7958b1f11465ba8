"""The object store interface shared by every backend (see store/objects/__init__.py for the contract), and the
checks every backend applies to keys and data."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO

from store.errors import BlockIntegrityError, InvalidObjectKeyError

Buffer = bytes | bytearray | memoryview

TMP_PREFIX = ".tmp-"
"""Name prefix of the temporary files a local store writes before publishing; never a key component."""




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
    def replace(self, key: str, data: Buffer, *, sha256: str) -> PutResult:
        """Overwrite `key` atomically, at every size (the one exception to write-once: a block rewritten under its
        content address by rekey or repair): the new bytes are written beside the old object, which readers see
        until the new one is whole; a failure at any step leaves the old object as it was. Never delete-then-put."""

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
