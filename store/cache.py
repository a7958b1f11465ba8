"""A bounded read-through disk cache of objects, for workers that pull blocks from an object store on demand.

Each cached object is one file named by the SHA-256 of its key (any key is a safe name) in a single directory.
Recency is the file's modification time, refreshed on every hit; when the cached bytes exceed the bound, the least
recently used entries are removed. An entry appears only by renaming a complete temporary file into place, so
another process or thread never sees a partial file. The cache does not verify content: callers read entries with
store.blockfile.read_block (which re-hashes the payload) and `evict` an entry that fails.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import structlog

log = structlog.get_logger(__name__)

TMP_PREFIX = ".tmp-"
STALE_TMP_SECONDS = 3600.0
"""A temporary file older than this is left over from a crashed writer and is removed while evicting."""
_COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class CacheEntry:
    """One cached file as seen by an eviction scan: its path, size in bytes and last use (mtime, ns)."""

    path: Path
    size: int
    used_ns: int


def entry_name(key: str) -> str:
    """The file name an object key is cached under: the hex SHA-256 of the key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _mark_used(path: Path) -> None:
    """Set the file's mtime to now from the fine-grained user-space clock (the kernel's is coarse, ~ms)."""
    now = time.time_ns()
    os.utime(path, ns=(now, now))


class LocalReadCache:
    """A read-through cache of at most `max_bytes` (plus the entry just fetched, if that alone is larger) in
    `directory`, least recently used entries evicted first."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be non-negative, got {max_bytes}")
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.directory.mkdir(parents=True, exist_ok=True)

    def path_for(self, key: str) -> Path:
        """Where `key` is (or would be) cached."""
        return self.directory / entry_name(key)

    def fetch(self, key: str, loader: Callable[[], BinaryIO]) -> Path:
        """The cached file of `key`, loading it with `loader` (a stream the cache reads and closes) on a miss.

        The returned file may be evicted by another process later; open it promptly (an open file stays readable)."""
        path = self.path_for(key)
        if self._touch(path):
            log.debug("cache.hit", key=key, path=str(path))
            return path
        size = self._load(path, loader)
        log.info("cache.miss", key=key, path=str(path), bytes=size)
        self._evict_to_bound(keep=path)
        return path

    @contextlib.contextmanager
    def filling(self, key: str) -> Iterator[BinaryIO]:
        """A temporary file to write `key`'s bytes into while the caller reads them from the origin (one pass); it
        becomes the entry only if the block exits normally (the caller verified what it read), else it is removed.
        Not fsynced: an entry is re-verified on every read, and a torn one is evicted and fetched again."""
        path = self.path_for(key)
        fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=self.directory)
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                yield out
            _mark_used(tmp)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        log.info("cache.filled", key=key, path=str(path), bytes=path.stat().st_size)
        self._evict_to_bound(keep=path)

    def contains(self, key: str) -> bool:
        return self.path_for(key).is_file()

    def evict(self, key: str, *, reason: str = "requested") -> bool:
        """Remove `key`'s entry (e.g. found corrupted); returns whether there was one."""
        path = self.path_for(key)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        log.info("cache.evict", key=key, path=str(path), reason=reason)
        return True

    def total_bytes(self) -> int:
        """Bytes held by complete entries (temporary files of fetches in progress are not counted)."""
        return sum(entry.size for entry in self._entries())

    # -- internals

    @staticmethod
    def _touch(path: Path) -> bool:
        """Mark `path` as just used; False if it is not cached (never was, or evicted meanwhile)."""
        try:
            _mark_used(path)
        except FileNotFoundError:
            return False
        return True

    def _load(self, path: Path, loader: Callable[[], BinaryIO]) -> int:
        """Stream the loader's bytes into a temporary file and rename it to `path`; returns the size."""
        fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=self.directory)
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                stream = loader()
                try:
                    shutil.copyfileobj(stream, out, _COPY_CHUNK)
                finally:
                    stream.close()
                out.flush()
                os.fsync(out.fileno())
                size = out.tell()
            _mark_used(tmp)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return size

    def _entries(self) -> list[CacheEntry]:
        entries = []
        with os.scandir(self.directory) as it:
            for item in it:
                if item.name.startswith(TMP_PREFIX):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    st = item.stat(follow_symlinks=False)
                    entries.append(CacheEntry(Path(item.path), st.st_size, st.st_mtime_ns))
        return entries

    def _evict_to_bound(self, *, keep: Path) -> None:
        entries = sorted(self._entries(), key=lambda e: (e.used_ns, e.path.name))
        total = sum(e.size for e in entries)
        for entry in entries:
            if total <= self.max_bytes:
                break
            if entry.path == keep:
                continue
            with contextlib.suppress(FileNotFoundError):
                entry.path.unlink()
                log.info("cache.evict", path=str(entry.path), bytes=entry.size, reason="lru")
            total -= entry.size
        if total > self.max_bytes:
            log.warning("cache.over_bound", total_bytes=total, max_bytes=self.max_bytes)
        self._remove_stale_temps()

    def _remove_stale_temps(self) -> None:
        cutoff = time.time() - STALE_TMP_SECONDS
        with os.scandir(self.directory) as it:
            for item in it:
                if item.name.startswith(TMP_PREFIX):
                    with contextlib.suppress(FileNotFoundError):
                        if item.stat(follow_symlinks=False).st_mtime < cutoff:
                            os.unlink(item.path)
                            log.info("cache.stale_tmp_removed", path=item.path)
