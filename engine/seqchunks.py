"""A sequence's state cut into chunks of cells by position, and chunks joined back into one state.

The prompt cache stores a long prefix as chunks (workers/serving/prompt_cache.py): each chunk holds only the cells
of its own positions, so a conversation's turns store what is new instead of the whole prefix again. A cell's K and
V rows depend on the tokens up to it, never after, so the cells [a, b) of any state that holds them are the same
bytes whichever prompt (sharing tokens[:b]) computed them, under an exact configuration; joining the chunks
[0, s), [s, 2s), ..., [ks, n) of a prefix gives the bytes a one-piece capture of it gives (tests/unit/
test_prefix_chunks.py checks it, and the serving tests restore through chunks).

Works on the one-stream form blocks store (engine/seqstate.py), with one KV cache (a sliding-window model's second
cache holds only the window: such models are not served from the prompt cache), cells at consecutive positions in
order. Anything else is refused with StateRestoreError, never cut by guess.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from engine.errors import StateRestoreError
from engine.seqstate import MAGIC

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_CELL = struct.Struct("<iIi")


@dataclass(frozen=True)
class _Layer:
    type: int
    row: int  # bytes per cell (K, or V not transposed); per element for a transposed V
    n_embd: int  # transposed V: elements per cell (0 otherwise)
    offset: int  # where the layer's cell data starts


@dataclass(frozen=True)
class _Layout:
    buf: memoryview
    seq_id: int
    first_pos: int
    cells: int
    v_trans: int
    k: tuple[_Layer, ...]
    v: tuple[_Layer, ...]


def _take(buf: memoryview, off: int, st: struct.Struct) -> tuple[int, int]:
    if off + st.size > len(buf):
        raise StateRestoreError("sequence state ends early")
    return st.unpack_from(buf, off)[0], off + st.size


def _layout(payload: bytes | bytearray) -> _Layout:
    buf = memoryview(payload)
    if len(buf) < 16 or bytes(buf[:4]) != MAGIC:
        raise StateRestoreError("not a llama.cpp sequence state")
    seq_id, off = _take(buf, 4, _I32)
    n_stream, off = _take(buf, off, _U32)
    if n_stream != 1:
        raise StateRestoreError(f"chunks are cut from the one-stream form, not a state of {n_stream} streams")
    cells, off = _take(buf, off, _U32)
    if cells == 0:
        raise StateRestoreError("the sequence state holds no cells")
    positions = []
    for _ in range(cells):
        if off + _CELL.size > len(buf):
            raise StateRestoreError("sequence state ends early")
        pos, n_seq, _seq = _CELL.unpack_from(buf, off)
        if n_seq != 1:
            raise StateRestoreError("a cell carries several sequence ids; not cut into chunks")
        positions.append(pos)
        off += _CELL.size
    if positions != list(range(positions[0], positions[0] + cells)):
        raise StateRestoreError("the state's cells are not at consecutive positions in order; not cut into chunks")
    v_trans, off = _take(buf, off, _U32)
    n_layer, off = _take(buf, off, _U32)
    if v_trans not in (0, 1) or not 0 < n_layer < 4096:
        raise StateRestoreError(f"sequence state has an unknown data header (v_trans {v_trans}, {n_layer} layers)")
    k: list[_Layer] = []
    v: list[_Layer] = []
    for part in (k, v):
        for _ in range(n_layer):
            type_, off = _take(buf, off, _I32)
            if part is v and v_trans:
                el, off = _take(buf, off, _U32)
                n_embd, off = _take(buf, off, _U32)
                part.append(_Layer(type_, el, n_embd, off))
                off += el * n_embd * cells
            else:
                row, off = _take(buf, off, _U64)
                part.append(_Layer(type_, row, 0, off))
                off += row * cells
            if off > len(buf):
                raise StateRestoreError("sequence state ends early")
    if off != len(buf):
        raise StateRestoreError("the state holds more than one KV cache (or trailing bytes); not cut into chunks")
    return _Layout(buf, seq_id, positions[0], cells, v_trans, tuple(k), tuple(v))


def positions(payload: bytes | bytearray) -> tuple[int, int]:
    """The [first, end) positions a state's cells hold."""
    lay = _layout(payload)
    return lay.first_pos, lay.first_pos + lay.cells


def _write(parts: Sequence[tuple[_Layout, int, int]]) -> bytes:
    """The state holding cells [i0, i1) of each layout in turn (already checked to line up)."""
    first = parts[0][0]
    n = sum(i1 - i0 for _, i0, i1 in parts)
    out = [MAGIC, _I32.pack(first.seq_id), _U32.pack(1), _U32.pack(n)]
    cell_start = 16  # magic, seq id, n_stream, cell count
    out += [lay.buf[cell_start + i0 * _CELL.size:cell_start + i1 * _CELL.size] for lay, i0, i1 in parts]
    out += [_U32.pack(first.v_trans), _U32.pack(len(first.k))]
    for name in ("k", "v"):
        for li, layer in enumerate(getattr(first, name)):
            if name == "v" and first.v_trans:
                out += [_I32.pack(layer.type), _U32.pack(layer.row), _U32.pack(layer.n_embd)]
                for d in range(layer.n_embd):
                    for lay, i0, i1 in parts:
                        mine = lay.v[li]
                        base = mine.offset + d * lay.cells * mine.row
                        out.append(lay.buf[base + i0 * mine.row:base + i1 * mine.row])
            else:
                out += [_I32.pack(layer.type), _U64.pack(layer.row)]
                for lay, i0, i1 in parts:
                    mine = getattr(lay, name)[li]
                    out.append(lay.buf[mine.offset + i0 * mine.row:mine.offset + i1 * mine.row])
    return b"".join(out)


def cut(payload: bytes | bytearray, start: int, end: int) -> bytes:
    """The state of the cells at positions [start, end) only."""
    lay = _layout(payload)
    if not lay.first_pos <= start < end <= lay.first_pos + lay.cells:
        raise StateRestoreError(f"positions [{start}, {end}) are not all in the state's "
                                f"[{lay.first_pos}, {lay.first_pos + lay.cells})")
    return _write([(lay, start - lay.first_pos, end - lay.first_pos)])


def join(chunks: Sequence[bytes | bytearray]) -> bytes:
    """One state from chunks of consecutive positions (in order), of the same layer layout."""
    if not chunks:
        raise StateRestoreError("no chunks to join")
    lays = [_layout(c) for c in chunks]
    first = lays[0]
    for prev, lay in zip(lays, lays[1:], strict=False):
        if lay.first_pos != prev.first_pos + prev.cells:
            raise StateRestoreError(f"chunk at {lay.first_pos} does not follow the one ending at "
                                    f"{prev.first_pos + prev.cells}")
        if (lay.v_trans, [(x.type, x.row, x.n_embd) for x in lay.k + lay.v]) != (
                first.v_trans, [(x.type, x.row, x.n_embd) for x in first.k + first.v]):
            raise StateRestoreError("chunks of different layer layouts (another model or KV type)")
    return _write([(lay, 0, lay.cells) for lay in lays])
