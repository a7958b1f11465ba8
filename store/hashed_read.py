"""Reading a payload of known size into one buffer while hashing it: chunk by chunk, no second pass, no extra
copy; large payloads hash on a helper thread so hashing chunk i overlaps reading chunk i+1."""

from __future__ import annotations

import hashlib
import io
import os
import queue
import threading
from collections.abc import Callable
from typing import IO

READ_CHUNK = 1 << 20
PIPELINE_MIN_BYTES = 4 << 20  # below this, hashing inline is cheaper than a thread hand-off


def remaining_bytes(stream: IO[bytes]) -> int | None:
    """Bytes left in a stream of known size (a file, an in-memory buffer, an object with `content_length`), so a
    header claiming a huge payload is refused before the buffer is allocated."""
    try:
        if isinstance(stream, io.BytesIO):
            return len(stream.getbuffer()) - stream.tell()
        length = getattr(stream, "content_length", None)
        if isinstance(length, int):
            return length - stream.tell()
        return os.fstat(stream.fileno()).st_size - stream.tell()
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None


def _read_into(stream: IO[bytes], target: memoryview) -> int:
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return readinto(target) or 0
    chunk = stream.read(len(target))
    target[:len(chunk)] = chunk
    return len(chunk)


class _InlineSha256:
    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def update(self, data: memoryview) -> None:
        self._h.update(data)

    def hexdigest(self) -> str:
        return self._h.hexdigest()


class _PipelinedSha256:
    """SHA-256 on a helper thread, so hashing chunk i overlaps reading chunk i+1 (hashlib and file reads both
    release the GIL): verification costs about max(read, hash) instead of their sum."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()
        self._q: queue.Queue[memoryview | None] = queue.Queue(maxsize=8)
        self._t = threading.Thread(target=self._run, name="kvgraft-sha256", daemon=True)
        self._t.start()

    def _run(self) -> None:
        while (chunk := self._q.get()) is not None:
            self._h.update(chunk)

    def update(self, data: memoryview) -> None:
        self._q.put(data)

    def hexdigest(self) -> str:
        self._q.put(None)
        self._t.join()
        return self._h.hexdigest()


def read_hashed(stream: IO[bytes], n_bytes: int) -> tuple[bytearray, int, str]:
    """Up to `n_bytes` of `stream` into a new buffer: (buffer, bytes read, SHA-256 hex of the bytes read)."""
    payload = bytearray(n_bytes)
    view = memoryview(payload)
    hasher = _PipelinedSha256() if n_bytes >= PIPELINE_MIN_BYTES else _InlineSha256()
    got = 0
    try:
        while got < n_bytes:
            n = _read_into(stream, view[got:got + READ_CHUNK])
            if not n:
                break
            hasher.update(view[got:got + n])
            got += n
    finally:
        digest = hasher.hexdigest()
    view.release()
    return payload, got, digest



def read_decrypted_hashed(stream: IO[bytes], n_bytes: int,
                          decrypt_into: Callable[[memoryview, memoryview], int]) -> tuple[bytearray, int, str]:
    """Up to `n_bytes` of ciphertext from `stream`, each chunk decrypted into one plaintext buffer (`decrypt_into`:
    a stream cipher's update_into) and the plaintext hashed as it comes (on the helper thread for large payloads):
    (plaintext, bytes read, SHA-256 hex of the plaintext). Reading, decrypting and hashing overlap."""
    payload = bytearray(n_bytes + 16)  # update_into wants room for a cipher block past its input
    out = memoryview(payload)
    scratch = bytearray(min(READ_CHUNK, max(n_bytes, 1)))
    chunk = memoryview(scratch)
    hasher = _PipelinedSha256() if n_bytes >= PIPELINE_MIN_BYTES else _InlineSha256()
    got = 0
    try:
        while got < n_bytes:
            n = _read_into(stream, chunk[:min(len(chunk), n_bytes - got)])
            if not n:
                break
            written = decrypt_into(chunk[:n], out[got:got + n + 15])
            hasher.update(out[got:got + written])
            got += written
    finally:
        digest = hasher.hexdigest()
    out.release()
    chunk.release()
    del payload[got:]
    return payload, got, digest
