"""The versioned block file format.

    offset 0   magic       8 bytes  b"KVGRAFT\\x00"
    offset 8   version     u16 little-endian (2; version 1 is still read)
    offset 10  flags       u16 (0, or 1: the block is encrypted, store/block_crypto.py)
    offset 12  header_len  u32 (at most MAX_HEADER_BYTES)
    offset 16  header      header_len bytes of UTF-8 JSON
    then       payload     exactly identity.payload_bytes bytes, up to the end of the file

An encrypted block (flag 1) has a clear header of only {block_id, encryption: {alg, key_id, nonce, header_nonce},
sealed: base64 of the AES-256-GCM ciphertext of the header above}, and its payload is the ciphertext of the
payload and its 16-byte tag.

The header holds `block_id`, `identity` (the deterministic fields: kind, token ids, positions, fingerprint,
profile, payload SHA-256 and size), `meta` (text, question, answer, passage, sources, owner, probe, fingerprint
parts, created_at: not part of the id) and an optional `hmac`. The block id is the SHA-256 of the canonical JSON of
`identity`, which commits to the payload through its SHA-256: the same content deposited twice has one id, and no
timestamp or task id ever enters it. Every read re-hashes the payload while reading it (no second pass, no extra
copy) and refuses any mismatch.

Signatures. In version 2 the HMAC-SHA256 under the deployment key covers the whole canonical header (block id,
identity and meta), so rewriting a signed block's question, answer, passage, source, owner or probe breaks it.
Version 1 signed only the block id: such blocks are still read, but under a key they count as `unsigned-v1` and
are refused like unsigned ones. Known meta fields are type-checked on write and on read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac as hmac_lib
import io
import json
import os
import struct
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from store.block_crypto import TAG_BYTES, Encryption, Keyring, no_keyring_error
from store.errors import BlockAuthError, BlockFormatError, BlockIntegrityError, BlockUnsealedError
from store.hashed_read import read_decrypted_hashed, read_hashed, remaining_bytes

MAGIC = b"KVGRAFT\x00"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
_SIGNATURE_CONTEXT = b"kvgraft-block-header-v2\x00"
_PREFIX = struct.Struct("<8sHHI")
FLAG_ENCRYPTED = 0x1
MAX_HEADER_BYTES = 16 << 20
MAX_PAYLOAD_BYTES = 8 << 30
KINDS = ("solution", "document", "skill", "probe", "prefix")
_HEX = frozenset("0123456789abcdef")


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _is_sha256_hex(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


@dataclass(frozen=True)
class BlockIdentity:
    """The deterministic fields a block id commits to."""

    kind: str
    tokens: tuple[int, ...]
    pos_start: int
    fingerprint: str
    profile: Mapping[str, Any]
    payload_sha256: str
    payload_bytes: int

    @property
    def pos_end(self) -> int:
        return self.pos_start + len(self.tokens)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tokens": list(self.tokens),
            "pos_start": self.pos_start,
            "pos_end": self.pos_end,
            "fingerprint": self.fingerprint,
            "profile": dict(self.profile),
            "payload_sha256": self.payload_sha256,
            "payload_bytes": self.payload_bytes,
        }

    def block_id(self) -> str:
        return hashlib.sha256(canonical_json(self.as_dict())).hexdigest()

    @classmethod
    def from_dict(cls, data: object) -> BlockIdentity:
        if not isinstance(data, dict):
            raise BlockFormatError("block identity is not an object")
        try:
            kind, tokens, pos_start = data["kind"], data["tokens"], data["pos_start"]
            fingerprint, profile = data["fingerprint"], data["profile"]
            sha, size, pos_end = data["payload_sha256"], data["payload_bytes"], data["pos_end"]
        except KeyError as exc:
            raise BlockFormatError(f"block identity lacks {exc.args[0]!r}") from None
        if kind not in KINDS:
            raise BlockFormatError(f"unknown block kind {kind!r}")
        if not isinstance(tokens, list) or not all(type(t) is int and t >= 0 for t in tokens):
            raise BlockFormatError("block tokens must be a list of non-negative integers")
        if type(pos_start) is not int or pos_start < 0 or type(pos_end) is not int:
            raise BlockFormatError("block positions must be non-negative integers")
        if pos_end != pos_start + len(tokens):
            raise BlockFormatError(f"block positions [{pos_start}, {pos_end}) do not match {len(tokens)} tokens")
        if not isinstance(fingerprint, str) or not fingerprint or "/" in fingerprint:
            raise BlockFormatError("block fingerprint must be a non-empty string without '/'")
        if not isinstance(profile, dict):
            raise BlockFormatError("block profile must be an object")
        if not _is_sha256_hex(sha):
            raise BlockFormatError("payload_sha256 must be 64 lowercase hex digits")
        if type(size) is not int or not 0 < size <= MAX_PAYLOAD_BYTES:
            raise BlockFormatError(f"payload_bytes must be a positive integer up to {MAX_PAYLOAD_BYTES}")
        return cls(kind, tuple(tokens), pos_start, fingerprint, profile, sha, size)


@dataclass(frozen=True)
class Block:
    """A verified block: its id, identity, free metadata, optional HMAC and the state payload."""

    block_id: str
    identity: BlockIdentity
    payload: bytes | bytearray
    meta: Mapping[str, Any] = field(default_factory=dict)
    hmac: str | None = None
    format_version: int = FORMAT_VERSION

    @property
    def n_tokens(self) -> int:
        return len(self.identity.tokens)

    @property
    def kind(self) -> str:
        return self.identity.kind

    @property
    def fingerprint(self) -> str:
        return self.identity.fingerprint

    def signed_part(self) -> dict[str, Any]:
        """What a version-2 signature covers: the header without its `hmac`."""
        return {"block_id": self.block_id, "identity": self.identity.as_dict(), "meta": dict(self.meta)}

    def header(self) -> dict[str, Any]:
        out = self.signed_part()
        if self.hmac is not None:
            out["hmac"] = self.hmac
        return out


def sign_v1(block_id: str, key: bytes) -> str:
    """The version-1 signature (block id only): read for old blocks, never written."""
    return hmac_lib.new(key, block_id.encode(), hashlib.sha256).hexdigest()


def sign(signed_part: Mapping[str, Any], key: bytes) -> str:
    """The version-2 signature: HMAC-SHA256 over a context string and the canonical header (id, identity, meta)."""
    return hmac_lib.new(key, _SIGNATURE_CONTEXT + canonical_json(dict(signed_part)), hashlib.sha256).hexdigest()


def signature_status(block: Block, key: bytes | None) -> str:
    """`signed` (version 2, valid under `key`), `bad-signature`, `unsigned`, `unsigned-v1` (a version-1 block: its
    HMAC covers only the id), or `no-key` (no key configured: nothing to check against)."""
    if block.format_version < 2:
        return "unsigned-v1" if key is not None or block.hmac is not None else "no-key"
    if block.hmac is None:
        return "unsigned" if key is not None else "no-key"
    if key is None:
        return "no-key"
    return "signed" if hmac_lib.compare_digest(block.hmac, sign(block.signed_part(), key)) else "bad-signature"


# Types of the meta fields kvgraft reads; other fields are kept as they are (any JSON).
_META_STR = ("text", "passage", "question", "model", "created_at", "skill_block", "probe_reference_sha256")
_META_DICT = ("fingerprint_parts", "parameterized")


def validate_meta(meta: object) -> dict[str, Any]:
    """The meta object, type-checked field by field; BlockFormatError names the first bad field."""
    if not isinstance(meta, dict):
        raise BlockFormatError("block meta must be an object")
    for name in _META_STR:
        if name in meta and not isinstance(meta[name], str):
            raise BlockFormatError(f"block meta {name!r} must be a string")
    for name in _META_DICT:
        if name in meta and meta[name] is not None and not isinstance(meta[name], dict):
            raise BlockFormatError(f"block meta {name!r} must be an object")
    if "source" in meta and not (meta["source"] is None or isinstance(meta["source"], dict | str)):
        raise BlockFormatError("block meta 'source' must be an object, a string or null")
    if "answer" in meta and (isinstance(meta["answer"], bool) or not isinstance(meta["answer"], str | int | float)):
        raise BlockFormatError("block meta 'answer' must be a string or a number")
    if "probe" in meta:
        probe = meta["probe"]
        tokens = probe.get("tokens") if isinstance(probe, dict) else None
        if (not isinstance(probe, dict) or not isinstance(tokens, list)
                or not all(type(t) is int and t >= 0 for t in tokens)
                or not isinstance(probe.get("reference_sha256", ""), str)):
            raise BlockFormatError("block meta 'probe' must be {\"tokens\": [non-negative integers], "
                                   "\"reference_sha256\": string}")
    if "owner" in meta:
        owner = meta["owner"]
        if (not isinstance(owner, dict) or not isinstance(owner.get("shared", False), bool)
                or not (owner.get("team") is None or isinstance(owner.get("team"), str))):
            raise BlockFormatError("block meta 'owner' must be {\"team\": string or null, \"shared\": boolean}")
    return meta


def new_block(*, kind: str, tokens: tuple[int, ...] | list[int], pos_start: int, fingerprint: str,
              profile: Mapping[str, Any], payload: bytes | bytearray, meta: Mapping[str, Any] | None = None,
              key: bytes | None = None) -> Block:
    """Build a block from a captured payload; the id is computed here, never supplied."""
    identity = BlockIdentity.from_dict(BlockIdentity(
        kind, tuple(int(t) for t in tokens), pos_start, fingerprint, dict(profile),
        hashlib.sha256(payload).hexdigest(), len(payload)).as_dict())
    block = Block(identity.block_id(), identity, payload, validate_meta(dict(meta or {})))
    return signed(block, key) if key else block


def signed(block: Block, key: bytes) -> Block:
    """The same block as a version-2 block signed under `key` (the id does not change)."""
    unsigned = Block(block.block_id, block.identity, block.payload, dict(block.meta), None, FORMAT_VERSION)
    return Block(block.block_id, block.identity, block.payload, dict(block.meta), sign(unsigned.signed_part(), key),
                 FORMAT_VERSION)


def _framed(header: bytes, version: int, flags: int) -> bytes:
    if len(header) > MAX_HEADER_BYTES:
        raise BlockFormatError(f"block header of {len(header)} bytes exceeds {MAX_HEADER_BYTES}")
    return _PREFIX.pack(MAGIC, version, flags, len(header)) + header


def encode_header(block: Block) -> bytes:
    return _framed(canonical_json(block.header()), block.format_version, 0)


def encode(block: Block, keyring: Keyring | None = None) -> bytes:
    """The block's bytes; with a keyring, its header and payload sealed under the newest key (the clear header then
    holds only the block id and what decrypting needs: the key id and the nonces)."""
    if keyring is None:
        return encode_header(block) + bytes(block.payload)
    encryption, sealed_header, sealed_payload = keyring.seal(block.block_id, canonical_json(block.header()),
                                                             block.payload)
    clear = {"block_id": block.block_id, "encryption": encryption.as_dict(),
             "sealed": base64.b64encode(sealed_header).decode()}
    return _framed(canonical_json(clear), block.format_version, FLAG_ENCRYPTED) + sealed_payload


def write_block_file(block: Block, path: Path) -> int:
    """Write atomically (temporary file, fsync, rename); returns the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            head = encode_header(block)
            f.write(head)
            f.write(block.payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(head) + len(block.payload)


def _read_exact(stream: IO[bytes], n: int, what: str) -> bytes:
    data = stream.read(n)
    if data is None or len(data) != n:
        raise BlockFormatError(f"truncated block: {what} needs {n} bytes, got {len(data or b'')}")
    return data


@dataclass(frozen=True)
class BlockHeader:
    block_id: str
    identity: BlockIdentity
    meta: dict[str, Any]
    hmac: str | None
    format_version: int
    encryption: Encryption | None = None  # the payload is sealed under this key id


def read_header(stream: IO[bytes], keyring: Keyring | None = None, *, allow_clear: bool = False) -> BlockHeader:
    """Parse and type-check the prefix and JSON header; leaves the stream at the first payload byte. Nothing here is
    authenticated yet (read_block checks the id, the payload and the signature), except a sealed header, which is
    decrypted under `keyring` (BlockKeyError when it holds no such key or the header does not authenticate).

    With a `keyring`, encryption is required: a block stored in the clear is refused (BlockUnsealedError) before
    its header is parsed, since whoever can write the bucket could have written it with any header. Only
    `kvgraft blocks rekey`, which seals such blocks, reads them, with `allow_clear`."""
    magic, version, flags, header_len = _PREFIX.unpack(_read_exact(stream, _PREFIX.size, "the prefix"))
    if magic != MAGIC:
        raise BlockFormatError("not a kvgraft block (bad magic)")
    if version not in READABLE_VERSIONS:
        raise BlockFormatError(f"unsupported block format version {version} (this build reads "
                               f"{', '.join(map(str, READABLE_VERSIONS))})")
    if flags not in (0, FLAG_ENCRYPTED):
        raise BlockFormatError(f"unsupported block flags {flags:#x}")
    if header_len > MAX_HEADER_BYTES:
        raise BlockFormatError(f"block header of {header_len} bytes exceeds {MAX_HEADER_BYTES}")
    if keyring is not None and not flags & FLAG_ENCRYPTED and not allow_clear:
        raise BlockUnsealedError("a block stored in the clear, while block encryption is configured: refused (its "
                                 "header is not authenticated; `kvgraft blocks rekey` seals the clear blocks this "
                                 "deployment wrote before it had a key)")
    raw = _read_exact(stream, header_len, "the header")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BlockFormatError(f"block header is not valid UTF-8 JSON: {exc}") from None
    if not isinstance(header, dict):
        raise BlockFormatError("block header is not a JSON object")
    encryption = None
    if flags & FLAG_ENCRYPTED:
        header, encryption = _opened(header, keyring)
    block_id, meta, mac = header.get("block_id"), header.get("meta", {}), header.get("hmac")
    if not _is_sha256_hex(block_id):
        raise BlockFormatError("block_id must be 64 lowercase hex digits")
    if mac is not None and not _is_sha256_hex(mac):
        raise BlockFormatError("block hmac must be 64 lowercase hex digits")
    if encryption is None and ("encryption" in header or "sealed" in header):
        raise BlockFormatError("block flags and header disagree on whether the block is encrypted")
    return BlockHeader(block_id, BlockIdentity.from_dict(header.get("identity")), validate_meta(meta), mac, version,
                       encryption)


def _opened(clear: dict[str, Any], keyring: Keyring | None) -> tuple[dict[str, Any], Encryption]:
    """The sealed header of an encrypted block, decrypted and checked to name the clear header's block id."""
    block_id, sealed = clear.get("block_id"), clear.get("sealed")
    if not _is_sha256_hex(block_id) or not isinstance(sealed, str) or set(clear) != {"block_id", "encryption",
                                                                                     "sealed"}:
        raise BlockFormatError("an encrypted block's clear header must be {block_id, encryption, sealed}")
    encryption = Encryption.from_dict(clear.get("encryption"))
    if keyring is None:
        raise no_keyring_error(block_id, encryption)
    try:
        raw = base64.b64decode(sealed, validate=True)
    except (binascii.Error, ValueError):
        raise BlockFormatError(f"block {block_id}: its sealed header is not base64") from None
    try:
        inner = json.loads(keyring.open_header(block_id, encryption, raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BlockFormatError(f"block {block_id}: its sealed header is not UTF-8 JSON: {exc}") from None
    if not isinstance(inner, dict) or inner.get("block_id") != block_id:
        raise BlockIntegrityError(f"block {block_id}: its sealed header names another block")
    return inner, encryption


def read_block(stream: IO[bytes], *, expected_id: str | None = None, key: bytes | None = None,
               expected_fingerprint: str | None = None, keyring: Keyring | None = None,
               allow_clear: bool = False) -> Block:
    """Read and verify one block. The payload is read straight into one buffer and hashed chunk by chunk. With a
    `key`, the block must carry a valid version-2 signature over its whole header (BlockAuthError otherwise). An
    encrypted payload is decrypted under `keyring` (BlockKeyError when it holds no such key, or the payload does not
    authenticate under it), then hashed like any other; with a keyring, a clear block is refused unless
    `allow_clear` (read_header)."""
    head = read_header(stream, keyring, allow_clear=allow_clear)
    block_id, identity, meta, mac = head.block_id, head.identity, head.meta, head.hmac
    if expected_id is not None and block_id != expected_id:
        raise BlockIntegrityError(f"object holds block {block_id}, expected {expected_id}")
    if identity.block_id() != block_id:
        raise BlockIntegrityError(f"block {block_id}: its identity fields hash to {identity.block_id()} (tampered)")
    if expected_fingerprint is not None and identity.fingerprint != expected_fingerprint:
        raise BlockIntegrityError(
            f"block {block_id} is for fingerprint {identity.fingerprint}, expected {expected_fingerprint}")
    if key is not None:
        status = signature_status(Block(block_id, identity, b"", meta, mac, head.format_version), key)
        if status == "unsigned-v1":
            raise BlockAuthError(f"block {block_id} is unsigned-v1: a format-1 block whose HMAC covers only its id, "
                                 f"not its metadata; re-deposit it (or `kvgraft blocks repair`) under this key")
        if status == "unsigned":
            raise BlockAuthError(f"block {block_id} carries no HMAC but a block key is configured")
        if status != "signed":
            raise BlockAuthError(f"block {block_id}: HMAC does not match its header under the configured block key "
                                 f"(tampered metadata or another key)")
    if head.encryption is not None:
        return _read_sealed(stream, head, keyring)
    remaining = remaining_bytes(stream)
    if remaining is not None and remaining < identity.payload_bytes:
        raise BlockIntegrityError(f"block {block_id} is truncated: payload {remaining} of "
                                  f"{identity.payload_bytes} bytes")
    payload, got, digest = read_hashed(stream, identity.payload_bytes)
    if got != identity.payload_bytes:
        raise BlockIntegrityError(f"block {block_id} is truncated: payload {got} of {identity.payload_bytes} bytes")
    if stream.read(1):
        raise BlockIntegrityError(f"block {block_id} has bytes after its payload")
    if digest != identity.payload_sha256:
        raise BlockIntegrityError(f"block {block_id}: payload SHA-256 mismatch (corrupted or tampered)")
    return Block(block_id, identity, payload, meta, mac, head.format_version)


def _read_sealed(stream: IO[bytes], head: BlockHeader, keyring: Keyring | None) -> Block:
    """An encrypted payload: read, decrypted and hashed chunk by chunk in one pass, then its tag checked and its
    plaintext's SHA-256 compared with the identity (the content address is the plaintext's)."""
    block_id, identity = head.block_id, head.identity
    assert head.encryption is not None and keyring is not None  # read_header opened the sealed header with it
    decryption = keyring.decryptor(block_id, head.encryption)
    remaining = remaining_bytes(stream)
    size = identity.payload_bytes + TAG_BYTES
    if remaining is not None and remaining < size:
        raise BlockIntegrityError(f"block {block_id} is truncated: sealed payload {remaining} of {size} bytes")
    payload, got, digest = read_decrypted_hashed(stream, identity.payload_bytes, decryption.update_into)
    tag = stream.read(TAG_BYTES) if got == identity.payload_bytes else b""
    if got != identity.payload_bytes or tag is None or len(tag) != TAG_BYTES:
        raise BlockIntegrityError(f"block {block_id} is truncated: sealed payload shorter than {size} bytes")
    if stream.read(1):
        raise BlockIntegrityError(f"block {block_id} has bytes after its payload")
    decryption.finish(tag)
    if digest != identity.payload_sha256:
        raise BlockIntegrityError(f"block {block_id}: payload SHA-256 mismatch (corrupted or tampered)")
    return Block(block_id, identity, payload, head.meta, head.hmac, head.format_version)


def read_block_file(path: Path, **kwargs: Any) -> Block:
    with path.open("rb", buffering=0) as f:
        return read_block(f, **kwargs)  # type: ignore[arg-type]


def decode(data: bytes, **kwargs: Any) -> Block:
    return read_block(io.BytesIO(data), **kwargs)
