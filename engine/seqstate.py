"""One sequence's state bytes in the form a one-sequence context writes, whatever context it was captured in.

llama.cpp writes a sequence's state (llama_state_seq_get_data) with the context's stream count and one cell count
per stream: a context with a KV stream per sequence (kv_unified off, n_seq_max S) writes S counts, S - 1 of them
zero, and tags every cell with the sequence id; restoring requires the same stream count ("n_stream mismatch"
otherwise). The K and V bytes of the sequence's cells are the same whichever stream holds them (measured by
`kvgraft bench batch-probe`'s `states_equal` after this transcoding, and by tests/unit/test_batching.py). So a
block always stores the one-stream form (the form the fingerprint's n_seq_max 1 names), and a multi-sequence
context transcodes on capture and on restore: stored prefixes stay usable by every context size.

Layout (little-endian), per KV cache of the memory (a sliding-window model has two, written one after the other):
    u32 magic, i32 seq_id                                  (once, before the caches)
    u32 n_stream, then per stream: u32 cell_count and, when non-zero,
        cell_count x (i32 pos, u32 n_seq_id = 1, i32 seq_id)
        u32 v_trans, u32 n_layer, n_layer x (i32 type, u64 row_bytes, cell_count x row_bytes)     (K)
        n_layer x (i32 type, u64 row_bytes, cell_count x row_bytes)                 (V, v_trans 0)
        n_layer x (i32 type, u32 el_bytes, u32 n_embd, n_embd x cell_count x el_bytes) (V, v_trans 1)
A layout this parser does not account for exactly (cells with extra fields, layers without V) is refused with
StateRestoreError, never transcoded by guess.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from engine.errors import StateRestoreError

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_CELL = struct.Struct("<iIi")
MAGIC = _U32.pack(0xAF143CD8)  # llama-context.cpp's io_magic, before the sequence id


@dataclass(frozen=True)
class _Stream:
    cells: int
    body: bytes  # the cell metadata (seq ids as written) and the K/V data


def _u32(buf: memoryview, off: int) -> tuple[int, int]:
    if off + 4 > len(buf):
        raise StateRestoreError("sequence state ends early")
    return _U32.unpack_from(buf, off)[0], off + 4


def _data_end(buf: memoryview, off: int, cells: int) -> int:
    """The offset just past one stream's K/V data starting at `off`."""
    v_trans, off = _u32(buf, off)
    n_layer, off = _u32(buf, off)
    if v_trans not in (0, 1) or not 0 < n_layer < 4096:
        raise StateRestoreError(f"sequence state has an unknown data header (v_trans {v_trans}, {n_layer} layers)")
    for part in ("k", "v"):
        for _ in range(n_layer):
            off += 4  # type
            if part == "v" and v_trans:
                el, off = _u32(buf, off)
                n_embd, off = _u32(buf, off)
                off += n_embd * cells * el
            else:
                if off + 8 > len(buf):
                    raise StateRestoreError("sequence state ends early")
                row = _U64.unpack_from(buf, off)[0]
                off += 8 + row * cells
            if off > len(buf):
                raise StateRestoreError("sequence state ends early")
    return off


def _read_cache(buf: memoryview, off: int) -> tuple[list[_Stream], int]:
    n_stream, off = _u32(buf, off)
    if not 0 < n_stream <= 4096:
        raise StateRestoreError(f"sequence state names {n_stream} streams")
    streams = []
    for _ in range(n_stream):
        cells, off = _u32(buf, off)
        start = off
        if cells:
            for i in range(cells):
                if off + _CELL.size > len(buf):
                    raise StateRestoreError("sequence state ends early")
                _pos, n_seq, _seq = _CELL.unpack_from(buf, off)
                if n_seq != 1:
                    raise StateRestoreError(f"cell {i} of the sequence state carries {n_seq} sequence ids (or "
                                            "fields this transcoder does not know); not transcoded")
                off += _CELL.size
            off = _data_end(buf, off, cells)
        streams.append(_Stream(cells, bytes(buf[start:off])))
    return streams, off


def _caches(payload: bytes | bytearray) -> tuple[bytes, list[list[_Stream]]]:
    buf = memoryview(payload)
    if len(buf) < 12:
        raise StateRestoreError("sequence state too short")
    head = bytes(buf[:4])
    if head != MAGIC:
        raise StateRestoreError(f"not a llama.cpp sequence state (magic {head.hex()})")
    off = 8  # magic, seq_id
    caches = []
    while off < len(buf):
        streams, off = _read_cache(buf, off)
        if sum(1 for s in streams if s.cells) > 1:
            raise StateRestoreError("a single sequence's state holds cells in more than one stream")
        caches.append(streams)
    if off != len(buf):
        raise StateRestoreError("sequence state has trailing bytes")
    return head, caches


def _retag(body: bytes, cells: int, seq_id: int) -> bytes:
    """The stream body with every cell's sequence id set to `seq_id` (llama.cpp discards it on restore)."""
    out = bytearray(body)
    for i in range(cells):
        _I32.pack_into(out, i * _CELL.size + 8, seq_id)
    return bytes(out)


def _write(head: bytes, caches: list[list[_Stream]], n_stream: int, seq_id: int) -> bytes:
    parts = [head, _I32.pack(seq_id)]
    for streams in caches:
        held = next((s for s in streams if s.cells), None)
        parts.append(_U32.pack(n_stream))
        for s in range(n_stream):
            if held is not None and s == (seq_id if n_stream > 1 else 0):
                parts += [_U32.pack(held.cells), _retag(held.body, held.cells, seq_id)]
            else:
                parts.append(_U32.pack(0))
    return b"".join(parts)


def one_stream(payload: bytes | bytearray) -> bytes:
    """The state in the form a one-sequence context writes for sequence 0."""
    head, caches = _caches(payload)
    return _write(head, caches, 1, 0)


def into_streams(payload: bytes | bytearray, n_stream: int, seq_id: int) -> bytes:
    """A one-stream state laid out for sequence `seq_id` of a context with a KV stream per sequence."""
    if not 0 <= seq_id < n_stream:
        raise StateRestoreError(f"sequence {seq_id} outside a context of {n_stream} streams")
    head, caches = _caches(payload)
    if any(len(streams) != 1 for streams in caches):
        raise StateRestoreError("the state is not in the one-stream form blocks store")
    return _write(head, caches, n_stream, seq_id)
