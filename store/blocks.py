"""Blocks in an object store: keys `blocks/<fingerprint>/<block id>`, write-once puts, verified reads, and an
optional bounded local read-through cache whose corrupted entries are detected and re-fetched."""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import structlog

from store.block_crypto import Keyring
from store.blockfile import Block, BlockIdentity, encode, read_block, read_block_file, read_header
from store.cache import LocalReadCache
from store.errors import BlockFormatError, BlockIntegrityError
from store.objects import ObjectInfo, ObjectStore

log = structlog.get_logger(__name__)

BLOCKS_PREFIX = "blocks/"
QUARANTINE_PREFIX = "quarantine/"


def block_key(fingerprint: str, block_id: str) -> str:
    return f"{BLOCKS_PREFIX}{fingerprint}/{block_id}"


def _scoped(scope: str | None, key: str) -> str:
    """The key a cached copy is held under: one per scope (a team), so that no scope's reads warm another's."""
    return key if scope is None else f"{scope}|{key}"


def _unscoped(cache_key: str) -> str:
    return cache_key.rsplit("|", 1)[-1]


def parse_block_key(key: str) -> tuple[str, str] | None:
    """(fingerprint, block id) of a well-formed block key, else None."""
    parts = key.split("/")
    if len(parts) != 3 or parts[0] + "/" != BLOCKS_PREFIX or not parts[1] or len(parts[2]) != 64:
        return None
    return parts[1], parts[2]


@dataclass(frozen=True)
class StoredBlock:
    block_id: str
    fingerprint: str
    key: str
    size: int
    created: bool  # False when the same content was already stored (write-once)


@dataclass(frozen=True)
class BlockObject:
    """An object found under the blocks/ prefix."""

    fingerprint: str
    block_id: str
    info: ObjectInfo


class BlockStore:
    """Blocks over an object store. Two caches, both of verified bytes: the optional local read-through cache of
    an s3:// store (files, re-verified on every read), and a bounded in-memory cache of blocks already verified by
    this process or made by it (`remember`) (`verified_cache_bytes`, LRU): a block id commits to its content, so a
    verified block stays what it was; deleting, replacing or quarantining a block here evicts it."""

    def __init__(self, objects: ObjectStore, *, cache: LocalReadCache | None = None,
                 key: bytes | None = None, verified_cache_bytes: int = 0, keyring: Keyring | None = None) -> None:
        self.objects = objects
        self.keyring = keyring  # payloads written encrypted under its newest key; every key of it reads
        self.cache = cache
        self.hmac_key = key
        self.verified_cache_bytes = verified_cache_bytes
        self._verified: OrderedDict[str, Block] = OrderedDict()
        self._verified_size = 0
        self._copies: dict[str, set[str]] = {}  # object key -> the keys its copies are held under, one per scope
        self._scopes: set[str] = set()  # scopes that have read through the local read cache
        self._lock = threading.Lock()

    def _remember(self, key: str, block: Block) -> Block:
        size = len(block.payload)
        if size > self.verified_cache_bytes:
            return block
        if not isinstance(block.payload, bytes):  # the copy every later caller shares cannot be changed
            block = Block(block.block_id, block.identity, bytes(block.payload), dict(block.meta), block.hmac,
                          block.format_version)
        with self._lock:
            if key not in self._verified:
                self._verified[key] = block
                self._verified_size += size
                self._copies.setdefault(_unscoped(key), set()).add(key)
            while self._verified_size > self.verified_cache_bytes:
                gone, old = self._verified.popitem(last=False)
                self._verified_size -= len(old.payload)
                self._copies.get(_unscoped(gone), set()).discard(gone)
        return block

    def remember(self, block: Block, *, scope: str | None = None) -> None:
        """Keep a block this process made (its payload hashed here) as verified, so that this process's next get
        of it (in the same `scope`) need not read it back."""
        self._remember(_scoped(scope, block_key(block.fingerprint, block.block_id)), block)

    def _forget(self, key: str) -> None:
        """Drop every scope's copy of the object under `key` from this process's memory and from the local read
        cache (entries another process made under scopes this one never served stay until they age out; every
        read re-verifies them, and a block id commits to its content)."""
        with self._lock:
            for cached in self._copies.pop(key, set()):
                old = self._verified.pop(cached, None)
                if old is not None:
                    self._verified_size -= len(old.payload)
            scopes = list(self._scopes)
        if self.cache is not None:
            for cache_key in [key] + [_scoped(scope, key) for scope in scopes]:
                self.cache.evict(cache_key)

    @property
    def url(self) -> str:
        return self.objects.url

    def put(self, block: Block) -> StoredBlock:
        data = encode(block, self.keyring)
        key = block_key(block.fingerprint, block.block_id)
        result = self.objects.put(key, data, sha256=hashlib.sha256(data).hexdigest())
        log.info("store.block_put", block_id=block.block_id, fingerprint=block.fingerprint, bytes=len(data),
                 created=result.created, store=self.url)
        return StoredBlock(block.block_id, block.fingerprint, key, len(data), result.created)

    def encode(self, block: Block) -> bytes:
        """The block's object bytes (sealed under the newest key where a keyring is set)."""
        return encode(block, self.keyring)

    def write(self, block: Block, data: bytes) -> StoredBlock:
        """Write `data` (this block's encode) by the backend's atomic replace, whether or not the key holds an
        object: the same object-store and file-system calls either way (a deposit must not take another course
        because another team stored, or once stored, the same content). Cached copies are kept: the content
        under a block id is the same whoever wrote it."""
        key = block_key(block.fingerprint, block.block_id)
        self.objects.replace(key, data, sha256=hashlib.sha256(data).hexdigest())
        log.info("store.block_written", block_id=block.block_id, fingerprint=block.fingerprint, bytes=len(data),
                 store=self.url)
        return StoredBlock(block.block_id, block.fingerprint, key, len(data), True)

    def get(self, fingerprint: str, block_id: str, *, use_cache: bool = True, scope: str | None = None) -> Block:
        """Read and verify a block (hash, id, fingerprint, HMAC when a key is set), or return the copy this process
        verified before; `use_cache=False` reads the origin store directly (verification, attestation, copies).
        With a `scope` (a team), both caches are that scope's own: whether a read is served from memory or the
        local disk, hence how long it takes, depends only on that scope's reads and deposits, never on another
        team having read the same block."""
        key = block_key(fingerprint, block_id)
        cache_key = _scoped(scope, key)
        if scope is not None and scope not in self._scopes:
            with self._lock:
                self._scopes.add(scope)
        if use_cache:
            with self._lock:
                hit = self._verified.get(cache_key)
                if hit is not None:
                    self._verified.move_to_end(cache_key)
                    return hit
        block = self._read(key, block_id, fingerprint, cache_key if use_cache else None)
        return self._remember(cache_key, block) if use_cache else block

    def _read(self, key: str, block_id: str, fingerprint: str, cache_key: str | None,
              allow_clear: bool = False) -> Block:
        # the keyring goes to every read: with one, a block stored in the clear is refused there (BlockUnsealedError)
        checks: dict[str, Any] = {"expected_id": block_id, "expected_fingerprint": fingerprint,
                                  "key": self.hmac_key, "keyring": self.keyring, "allow_clear": allow_clear}
        if self.cache is None or cache_key is None:
            with self.objects.open(key) as stream:
                return read_block(stream, **checks)
        if not self.cache.contains(cache_key):
            # a miss: the object streams from the origin into memory while it is hashed (and decrypted), and into
            # the cache entry in the same pass; the entry appears only once the block verified
            with self.objects.open(key) as stream, self.cache.filling(cache_key) as sink:
                return read_block(_Tee(stream, sink), **checks)
        path = self.cache.fetch(cache_key, lambda: self.objects.open(key))
        try:
            return read_block_file(path, **checks)
        except FileNotFoundError:  # evicted by another process between fetch and open
            log.info("store.cache_raced", block_id=block_id)
        except (BlockIntegrityError, BlockFormatError) as exc:
            log.warning("store.cache_corrupt", block_id=block_id, error=str(exc))
            self.cache.evict(cache_key)
        path = self.cache.fetch(cache_key, lambda: self.objects.open(key))
        return read_block_file(path, **checks)  # a second failure is the origin's and is raised

    def header(self, fingerprint: str, block_id: str) -> tuple[BlockIdentity, dict[str, Any]]:
        """Identity and metadata of a stored block without reading its payload: NOT verified (no payload hash, no
        signature check), for display only; anything that catalogues or grafts a block uses get()."""
        with self.objects.open(block_key(fingerprint, block_id)) as stream:
            head = read_header(stream, self.keyring)
        if head.block_id != block_id or head.identity.block_id() != block_id:
            raise BlockIntegrityError(f"object {block_key(fingerprint, block_id)} holds block {head.block_id}")
        return head.identity, head.meta

    def rekey(self, fingerprint: str, block_id: str) -> tuple[str, int]:
        """Write a block under the keyring's newest key: (`current`, it already is; `encrypted`, it was stored in
        the clear; or `rekeyed`, it was under an older key) and the object's size now. It is read and verified
        first (signature, payload hash, decryption under its key), so a damaged block or one under a key not held
        is refused, not rewritten; the rewrite is atomic (the old object until the new one is whole) and read back
        verified, else the old bytes are put back (_overwrite). The one reader of clear blocks under a keyring."""
        if self.keyring is None:
            raise ValueError("no block encryption key is configured (KVGRAFT_BLOCK_ENCRYPTION_KEY or "
                             "KVGRAFT_BLOCK_ENCRYPTION_KEY_FILE)")
        key = block_key(fingerprint, block_id)
        with self.objects.open(key) as stream:
            raw = stream.read()
        head = read_header(io.BytesIO(raw), self.keyring, allow_clear=True)
        if head.encryption is not None and head.encryption.key_id == self.keyring.newest:
            return "current", len(raw)
        block = read_block(io.BytesIO(raw), expected_id=block_id, expected_fingerprint=fingerprint,
                           key=self.hmac_key, keyring=self.keyring, allow_clear=True)
        stored = self._overwrite(block, previous=raw)
        outcome = "encrypted" if head.encryption is None else "rekeyed"
        log.info("store.block_rekeyed", block_id=block_id, fingerprint=fingerprint, outcome=outcome,
                 key_id=self.keyring.newest, previous_key_id=head.encryption.key_id if head.encryption else None)
        return outcome, stored.size

    def replace(self, block: Block) -> StoredBlock:
        """Overwrite a damaged object with a block re-derived under the same id (the write-once put would keep the
        damaged bytes), atomically on every backend: readers see the old or the new object, never a mix or
        nothing; read back verified."""
        stored = self._overwrite(block)
        log.warning("store.block_replaced", block_id=block.block_id, fingerprint=block.fingerprint)
        return stored

    def _overwrite(self, block: Block, *, previous: bytes | None = None) -> StoredBlock:
        """The object written again under the same key (encrypted under the newest key where a keyring is set)
        by the backend's atomic replace, every cached copy of the old one dropped, and the new object read back
        and verified; if it does not verify, `previous` (the old object's bytes, when the caller holds them) is put
        back before the error is raised, so that a rewrite never leaves less than it found."""
        data = encode(block, self.keyring)
        key = block_key(block.fingerprint, block.block_id)
        self.objects.replace(key, data, sha256=hashlib.sha256(data).hexdigest())
        self._forget(key)
        try:
            self._read(key, block.block_id, block.fingerprint, None)
        except (BlockIntegrityError, BlockFormatError):
            if previous is not None:
                self.objects.replace(key, previous, sha256=hashlib.sha256(previous).hexdigest())
                log.error("store.rewrite_undone", block_id=block.block_id, fingerprint=block.fingerprint)
            raise
        return StoredBlock(block.block_id, block.fingerprint, key, len(data), True)

    def quarantine(self, fingerprint: str, block_id: str, *, stamp: str) -> str | None:
        """Move a damaged object (its raw bytes, unverified) to `quarantine/<fingerprint>/<id>-<stamp>` and delete
        it from the blocks prefix; returns the quarantine key, or None when there was no object to move."""
        key = block_key(fingerprint, block_id)
        if not self.objects.exists(key):
            return None
        with self.objects.open(key) as stream:
            raw = stream.read()
        target = f"{QUARANTINE_PREFIX}{fingerprint}/{block_id}-{stamp}"
        self.objects.put(target, raw, sha256=hashlib.sha256(raw).hexdigest())
        self.delete(fingerprint, block_id)
        log.warning("store.block_quarantined", block_id=block_id, fingerprint=fingerprint, key=target)
        return target

    def exists(self, fingerprint: str, block_id: str) -> bool:
        return self.objects.exists(block_key(fingerprint, block_id))

    def delete(self, fingerprint: str, block_id: str) -> None:
        key = block_key(fingerprint, block_id)
        self.objects.delete(key)
        self._forget(key)

    def list(self, fingerprint: str | None = None) -> Iterator[BlockObject]:
        prefix = BLOCKS_PREFIX + (f"{fingerprint}/" if fingerprint else "")
        for info in self.objects.list(prefix):
            parsed = parse_block_key(info.key)
            if parsed is None:
                log.warning("store.stray_object", key=info.key)
                continue
            yield BlockObject(parsed[0], parsed[1], info)


class _Tee(io.RawIOBase):
    """A stream that writes every byte read from `source` to `sink` (the origin's bytes into a cache entry while
    they are read and verified); `content_length` and `tell` are the source's."""

    def __init__(self, source: Any, sink: BinaryIO) -> None:
        super().__init__()
        self._source, self._sink = source, sink
        self.content_length = getattr(source, "content_length", None)

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return int(self._source.tell())

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        readinto = getattr(self._source, "readinto", None)
        if readinto is not None:
            n = readinto(view) or 0
        else:
            data = self._source.read(len(view))
            n = len(data)
            view[:n] = data
        if n:
            self._sink.write(view[:n])
        return n

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        if data:
            self._sink.write(data)
        return bytes(data)
