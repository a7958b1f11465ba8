"""The block file format: round trips, refusals, and a property test that no byte string crashes the parser."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.blockfile import (
    MAGIC,
    Block,
    decode,
    encode,
    new_block,
    read_block_file,
    write_block_file,
)
from store.errors import BlockAuthError, BlockFormatError, BlockIntegrityError, StoreError

pytestmark = pytest.mark.unit


def _block(payload: bytes = b"kv-state-bytes" * 100, key: bytes | None = None, **meta: object) -> Block:
    return new_block(kind="document", tokens=[1, 5, 9, 2], pos_start=0, fingerprint="ab" * 16,
                     profile={"n_batch": 512, "threads": 2}, payload=payload, meta=meta, key=key)


def test_round_trip_and_deterministic_id(tmp_path: Path) -> None:
    a, b = _block(created_at="2026-01-01"), _block(created_at="2027-06-30", source="other")
    assert a.block_id == b.block_id  # meta (timestamps, sources) never enters the id
    assert a.block_id != _block(payload=b"x" * 1400).block_id
    path = tmp_path / "blk"
    n = write_block_file(a, path)
    assert n == path.stat().st_size
    back = read_block_file(path, expected_id=a.block_id, expected_fingerprint="ab" * 16)
    assert back.block_id == a.block_id and bytes(back.payload) == bytes(a.payload)
    assert back.identity == a.identity and back.meta["created_at"] == "2026-01-01"


def test_flipped_payload_byte_is_refused() -> None:
    data = bytearray(encode(_block()))
    data[-5] ^= 0x40
    with pytest.raises(BlockIntegrityError, match="SHA-256 mismatch"):
        decode(bytes(data))


def test_truncated_and_extended_blocks_are_refused() -> None:
    data = encode(_block())
    with pytest.raises(BlockIntegrityError, match="truncated"):
        decode(data[:-1])
    with pytest.raises(BlockFormatError, match="truncated"):
        decode(data[:20])
    with pytest.raises(BlockIntegrityError, match="after its payload"):
        decode(data + b"\x00")


def test_tampered_identity_is_refused() -> None:
    block = _block()
    data = encode(block)
    (hlen,) = struct.unpack_from("<I", data, 12)
    header = json.loads(data[16:16 + hlen])
    header["identity"]["tokens"][1] = 6  # claim other tokens for the same payload
    raw = json.dumps(header).encode()
    forged = data[:12] + struct.pack("<I", len(raw)) + raw + data[16 + hlen:]
    with pytest.raises(BlockIntegrityError, match="tampered"):
        decode(forged)


def test_wrong_fingerprint_and_wrong_id_are_refused() -> None:
    data = encode(_block())
    with pytest.raises(BlockIntegrityError, match="fingerprint"):
        decode(data, expected_fingerprint="cd" * 16)
    with pytest.raises(BlockIntegrityError, match="expected"):
        decode(data, expected_id="0" * 64)


def test_hmac_when_a_key_is_set() -> None:
    key = b"deployment-secret"
    signed = encode(_block(key=key))
    assert decode(signed, key=key).hmac is not None
    with pytest.raises(BlockAuthError, match="no HMAC"):
        decode(encode(_block()), key=key)
    with pytest.raises(BlockAuthError, match="does not match"):
        decode(signed, key=b"another-key")


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    write_block_file(_block(), tmp_path / "x")
    assert [p.name for p in tmp_path.iterdir()] == ["x"]


def test_new_block_validates_its_fields() -> None:
    with pytest.raises(BlockFormatError, match="kind"):
        new_block(kind="weights", tokens=[1], pos_start=0, fingerprint="f", profile={}, payload=b"x")
    with pytest.raises(BlockFormatError, match="fingerprint"):
        new_block(kind="skill", tokens=[1], pos_start=0, fingerprint="a/b", profile={}, payload=b"x")


_valid = encode(_block(payload=b"p" * 64))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.binary(max_size=512),
    st.binary(max_size=64).map(lambda b: MAGIC + b),
    st.tuples(st.integers(0, len(_valid) - 1), st.integers(0, 255)).map(
        lambda t: _valid[:t[0]] + bytes([t[1]]) + _valid[t[0] + 1:]),
    st.integers(0, len(_valid)).map(lambda n: _valid[:n]),
))
def test_no_byte_string_crashes_the_parser(data: bytes) -> None:
    try:
        block = decode(data)
    except StoreError:
        return
    # anything accepted must be self-consistent
    assert hashlib.sha256(block.payload).hexdigest() == block.identity.payload_sha256
    assert block.identity.block_id() == block.block_id


def test_header_length_bomb_is_refused_without_reading_it() -> None:
    data = MAGIC + struct.pack("<HHI", 1, 0, 0xFFFFFFFF)
    with pytest.raises(BlockFormatError, match="exceeds"):
        decode(data)
