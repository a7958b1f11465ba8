"""`file://` object stores: a local directory, write-once by atomic links of fsynced temporary files."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import structlog

from store.errors import BlockNotFoundError, InvalidObjectKeyError, StoreError
from store.objects.base import TMP_PREFIX, Buffer, ObjectInfo, ObjectStore, PutResult, check_sha256, validate_key

log = structlog.get_logger(__name__)



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
        """Write-once. The bytes are written (and fsynced) whether or not the key already holds them, as an S3
        conditional put (or multipart upload) uploads them either way: a put takes the same time whether or not
        someone else stored the same content before (a deduplicated deposit must not tell its team that another
        team holds it)."""
        path = self._path(key)
        view = check_sha256(key, data, sha256)
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
        else:
            # the content is there already; refresh its time so `blocks gc` never takes an object a deposit is
            # about to catalogue (an orphan re-put by a redelivered deposit) for an old orphan
            with contextlib.suppress(OSError):
                os.utime(path)
        log.debug("object_store.put", store=self.url, key=key, created=created, size=view.nbytes)
        return PutResult(key, created, view.nbytes)

    def replace(self, key: str, data: Buffer, *, sha256: str) -> PutResult:
        """Atomic overwrite: a fully written, fsynced temporary file renamed over the object."""
        path = self._path(key)
        view = check_sha256(key, data, sha256)
        _makedirs_durable(path.parent)
        tmp = _write_temp(path.parent, view)
        try:
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(path.parent)
        return PutResult(key, True, view.nbytes)

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
