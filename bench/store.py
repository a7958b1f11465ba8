"""`kvgraft bench store`: put/get throughput of large blocks on local disk and on an S3 endpoint, what
verification (SHA-256 while reading) adds to a raw read, and what encryption at rest (AES-256-GCM) costs the
verified read (`verified_read_time_vs_clear`). Payloads are random bytes: no model is involved."""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.local_servers import moto_server
from store.block_crypto import Keyring
from store.blockfile import Block, new_block
from store.blocks import BlockStore, block_key
from store.objects.local import LocalObjectStore
from store.objects.s3 import S3ObjectStore
from workers.environment import environment

FINGERPRINT = "bench" + "0" * 27


@dataclass(frozen=True)
class StoreBenchRequest:
    size_mb: int = 20
    count: int = 5
    s3_endpoint_url: str | None = None  # None: start a local moto server (real HTTP on loopback)


def _blocks(size: int, count: int) -> list[Block]:
    return [new_block(kind="document", tokens=[1, i + 2], pos_start=0, fingerprint=FINGERPRINT,
                      profile={"bench": True}, payload=os.urandom(size)) for i in range(count)]


def _time(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _mb_s(nbytes: int, seconds: list[float]) -> float:
    return round(nbytes / (1 << 20) / statistics.median(seconds), 1)


def _measure(store: BlockStore, blocks: list[Block], raw_read: Callable[[str], None] | None,
             drop_cache: Callable[[str], None] | None = None) -> dict[str, Any]:
    """put, then verified get and raw read of each block; with `drop_cache`, reads are measured cold (the page
    cache of the object dropped before each read) and warm."""
    size = len(blocks[0].payload)
    keys = [block_key(b.fingerprint, b.block_id) for b in blocks]
    puts = [_time(lambda b=b: store.put(b)) for b in blocks]
    row: dict[str, Any] = {"store": store.url.split(":", 1)[0], "block_bytes": size, "blocks": len(blocks),
                           "put_mb_s": _mb_s(size, puts)}

    def reads(fn: Callable[[int], Any], cold: bool) -> list[float]:
        times = []
        for i in range(len(blocks)):
            if cold and drop_cache is not None:
                drop_cache(keys[i])
            times.append(_time(lambda i=i: fn(i)))
        return times

    def verified(i: int) -> Block:
        return store.get(blocks[i].fingerprint, blocks[i].block_id)

    modes = [("", True), ("_warm", False)] if drop_cache is not None else [("", False)]
    for suffix, cold in modes:
        gets = reads(verified, cold)
        row[f"get_verified_mb_s{suffix}"] = _mb_s(size, gets)
        if raw_read is not None:
            raws = reads(lambda i: raw_read(keys[i]), cold)
            row[f"raw_read_mb_s{suffix}"] = _mb_s(size, raws)
            row[f"verify_overhead_pct{suffix}"] = round(
                (statistics.median(gets) / statistics.median(raws) - 1) * 100, 1)
    row["reads"] = "cold (page cache dropped before each read) and warm" if drop_cache else "as served"
    return row


@contextlib.contextmanager
def _s3_endpoint(url: str | None) -> Iterator[tuple[str, bool]]:
    if url:
        yield url, False
    else:
        with moto_server() as started:
            yield started, True


def run_store_bench(request: StoreBenchRequest, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Each store twice, payloads in the clear and encrypted (AES-256-GCM under a fresh key), same blocks."""
    blocks = _blocks(request.size_mb << 20, request.count)
    ring = Keyring.parse(os.urandom(32).hex())
    arms: tuple[tuple[str, Keyring | None], ...] = (("clear", None), ("aes-256-gcm", ring))
    results = []
    with tempfile.TemporaryDirectory(prefix="kvgraft-bench-store-") as tmp:
        for name, keyring in arms:
            root = Path(tmp) / f"blocks-{name}"
            local = LocalObjectStore(root)

            def raw_local(key: str, root: Path = root) -> None:
                path = root / key
                buf = bytearray(path.stat().st_size)
                with path.open("rb", buffering=0) as f:
                    f.readinto(buf)

            def drop_local(key: str, root: Path = root) -> None:
                fd = os.open(root / key, os.O_RDONLY)
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)

            if progress:
                progress(f"local disk, payloads {name}")
            results.append({**_measure(BlockStore(local, keyring=keyring), blocks, raw_local, drop_local),
                            "payloads": name})
    aws = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}
    with environment(defaults=aws), _s3_endpoint(request.s3_endpoint_url) as (endpoint, started):
        for name, keyring in arms:
            if progress:
                progress(f"S3 at {endpoint}" + (" (moto, started for this run)" if started else "")
                         + f", payloads {name}")
            s3 = S3ObjectStore(f"kvgraft-bench-{os.getpid()}-{name}", "kvgraft", endpoint_url=endpoint)
            s3.ensure_bucket()

            def raw_s3(key: str, s3: S3ObjectStore = s3) -> None:
                with s3.open(key) as stream:
                    while stream.read(1 << 20):
                        pass

            row = _measure(BlockStore(s3, keyring=keyring), blocks, raw_s3)
            row["endpoint"] = "moto (local, started for this run)" if started else endpoint
            results.append({**row, "payloads": name})
    for row in results:  # the encrypted arm's verified read against the clear arm's, same store and blocks
        if row["payloads"] != "clear":
            clear = next(r for r in results if r["store"] == row["store"] and r["payloads"] == "clear")
            row["verified_read_time_vs_clear"] = round(clear["get_verified_mb_s"] / row["get_verified_mb_s"], 2)
    return {"benchmark": "store", "size_mb": request.size_mb, "count": request.count, "results": results}
