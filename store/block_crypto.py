"""Encryption at rest of block payloads: AES-256-GCM under a keyring of named keys.

A block's payload is the model's state after reading a team's prompt and documents; with read access to the bucket
it could be copied and grafted or inverted. With a keyring configured (`KVGRAFT_BLOCK_ENCRYPTION_KEY` or
`KVGRAFT_BLOCK_ENCRYPTION_KEY_FILE`), every block written is encrypted under the newest key: the payload on disk is
the ciphertext and its 16-byte tag, and so is the header (the token ids, the text, question, answer and owner in
its metadata, and its signature): what stays in the clear is the block id, the key id and the two nonces. The
additional authenticated data binds each ciphertext to the block id and the key id, so a payload or header moved
to another block, or pointed at another key, does not decrypt. The block id stays the SHA-256 of the plaintext
identity: the same content has one id within a deployment, and chain hashes do not change (so whoever can compute
a guessed prompt's state can confirm that guess by the id; nothing in the object tells the prompt itself). Older
keys stay readable (rotation: new blocks under the newest, `kvgraft blocks rekey` re-encrypts the rest); a block
under a key this process does not hold is refused with BlockKeyError, never grafted.

Keyring text: entries `id:key` separated by commas or line breaks, the key 32 bytes as base64 or 64 hex digits;
the last entry is the newest. A bare key (no id) is named `k` + the first 12 hex digits of its SHA-256."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from store.errors import BlockFormatError, BlockKeyError, BlockKeyMissingError

ALGORITHM = "AES-256-GCM"
NONCE_BYTES = 12
TAG_BYTES = 16
_AAD_CONTEXT = b"kvgraft-block-payload-v1\x00"
_HEADER_AAD_CONTEXT = b"kvgraft-block-header-v1\x00"
_KEY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Encryption:
    """What a block's clear header says about its encryption: the key and the nonces of the sealed header and the
    sealed payload."""

    key_id: str
    nonce: bytes  # the payload's
    header_nonce: bytes

    def as_dict(self) -> dict[str, Any]:
        return {"alg": ALGORITHM, "key_id": self.key_id, "nonce": self.nonce.hex(),
                "header_nonce": self.header_nonce.hex()}

    @classmethod
    def from_dict(cls, data: object) -> Encryption:
        if not isinstance(data, dict) or data.get("alg") != ALGORITHM:
            raise BlockFormatError(f"block encryption must be {{\"alg\": \"{ALGORITHM}\", \"key_id\", \"nonce\", "
                                   "\"header_nonce\"}")
        key_id = data.get("key_id")
        if not isinstance(key_id, str) or not _KEY_ID.match(key_id):
            raise BlockFormatError("block encryption key_id must be 1-64 letters, digits, '.', '_' or '-'")
        return cls(key_id, _nonce(data.get("nonce")), _nonce(data.get("header_nonce")))


def _nonce(value: object) -> bytes:
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != NONCE_BYTES:
        raise BlockFormatError(f"block encryption nonces must be {NONCE_BYTES * 2} hex digits")
    return raw


def _aad(block_id: str, key_id: str) -> bytes:
    return _AAD_CONTEXT + block_id.encode() + b"\x00" + key_id.encode()


def _header_aad(block_id: str, key_id: str) -> bytes:
    return _HEADER_AAD_CONTEXT + block_id.encode() + b"\x00" + key_id.encode()


def _key_bytes(text: str, what: str) -> bytes:
    text = text.strip()
    raw: bytes | None = None
    if re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raw = bytes.fromhex(text)
    else:
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raw = None
    if raw is None or len(raw) != 32:
        raise ValueError(f"{what}: a block encryption key must be 32 bytes, as base64 or 64 hex digits")
    return raw


@dataclass(frozen=True)
class Keyring:
    """Named AES-256 keys; `newest` encrypts, every one decrypts."""

    keys: tuple[tuple[str, bytes], ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("a keyring needs at least one key")
        ids = [k for k, _ in self.keys]
        if len(set(ids)) != len(ids):
            raise ValueError(f"block encryption key ids must be unique: {', '.join(ids)}")

    @classmethod
    def parse(cls, text: str) -> Keyring:
        entries = [e.strip() for e in re.split(r"[,\n]", text) if e.strip() and not e.strip().startswith("#")]
        keys = []
        for n, entry in enumerate(entries, 1):
            key_id, sep, value = entry.partition(":")
            if not sep:
                raw = _key_bytes(entry, f"key {n}")
                key_id = "k" + hashlib.sha256(raw).hexdigest()[:12]
            else:
                key_id = key_id.strip()
                if not _KEY_ID.match(key_id):
                    raise ValueError(f"key {n}: id {key_id!r} must be 1-64 letters, digits, '.', '_' or '-'")
                raw = _key_bytes(value, f"key {key_id}")
            keys.append((key_id, raw))
        return cls(tuple(keys))

    @property
    def newest(self) -> str:
        return self.keys[-1][0]

    def key(self, key_id: str) -> bytes | None:
        return next((k for i, k in self.keys if i == key_id), None)

    def seal(self, block_id: str, header: bytes, payload: bytes | bytearray) -> tuple[Encryption, bytes, bytes]:
        """The header and the payload sealed under the newest key, each with its own nonce and bound to the block id
        and key id: (what the clear header says, sealed header, sealed payload)."""
        key_id, key = self.keys[-1]
        encryption = Encryption(key_id, os.urandom(NONCE_BYTES), os.urandom(NONCE_BYTES))
        cipher = AESGCM(key)
        sealed_header = cipher.encrypt(encryption.header_nonce, header, _header_aad(block_id, key_id))
        sealed_payload = cipher.encrypt(encryption.nonce, bytes(payload), _aad(block_id, key_id))
        return encryption, sealed_header, sealed_payload

    def _key_for(self, block_id: str, encryption: Encryption) -> bytes:
        key = self.key(encryption.key_id)
        if key is None:
            raise BlockKeyMissingError(f"block {block_id} is encrypted under key {encryption.key_id!r}, which this "
                                       f"deployment does not hold (held: {', '.join(i for i, _ in self.keys)})")
        return key

    def open_header(self, block_id: str, encryption: Encryption, sealed: bytes) -> bytes:
        """The header a block sealed (its identity, metadata and signature), authenticated."""
        try:
            return AESGCM(self._key_for(block_id, encryption)).decrypt(
                encryption.header_nonce, sealed, _header_aad(block_id, encryption.key_id))
        except InvalidTag:
            raise BlockKeyError(f"block {block_id}'s header does not decrypt under key {encryption.key_id!r}: it "
                                f"was changed, or it belongs to another block") from None

    def decryptor(self, block_id: str, encryption: Encryption) -> Decryption:
        """A streaming decryption of one block's payload (chunks in, plaintext out, the tag checked at the end)."""
        key = self._key_for(block_id, encryption)
        ctx = Cipher(algorithms.AES(key), modes.GCM(encryption.nonce)).decryptor()
        ctx.authenticate_additional_data(_aad(block_id, encryption.key_id))
        return Decryption(block_id, encryption.key_id, ctx)


class Decryption:
    """One payload's decryption: `update_into` per chunk, then `finish(tag)`; nothing decrypted is trusted (or
    returned by the block reader) before `finish` has checked the tag."""

    def __init__(self, block_id: str, key_id: str, ctx: Any) -> None:
        self.block_id, self.key_id, self._ctx = block_id, key_id, ctx

    def update_into(self, data: memoryview, out: memoryview) -> int:
        return int(self._ctx.update_into(data, out))

    def finish(self, tag: bytes) -> None:
        try:
            self._ctx.finalize_with_tag(tag)
        except (InvalidTag, ValueError):
            raise BlockKeyError(f"block {self.block_id} does not decrypt under key {self.key_id!r}: its payload or "
                                f"header was changed, or it belongs to another block") from None


def no_keyring_error(block_id: str, encryption: Encryption) -> BlockKeyError:
    return BlockKeyMissingError(f"block {block_id} is encrypted under key {encryption.key_id!r} and no block "
                                "encryption key is configured (KVGRAFT_BLOCK_ENCRYPTION_KEY or "
                                "KVGRAFT_BLOCK_ENCRYPTION_KEY_FILE)")
