"""`kvgraft bench deposit-privacy`: whether team B's prompt-cache deposit takes longer or shorter because team A
stored the same prefix before (the timing side of "a deposit's work never depends on another team's history").

Three arms, each a fresh data directory (SQLite catalogue, local object store) where team A deposits a prefix
block and then team B deposits one prefix of the same length, timed (workers/serving/prompt_cache.deposit_prefix):
- `evicted`: A's block was evicted under a budget (row kept with its mark, object deleted) before B sends A's
  exact prefix (a right guess of an evicted prompt);
- `live`: A's block is live when B sends A's exact prefix (a right guess);
- `wrong`: B sends a prefix nobody stored (a wrong guess of the same length).
One pair runs the three arms back to back, the order alternated from pair to pair (after one unrecorded deposit of
each arm: a process's first pays for imports and statement compilation); ratios are per pair. Beside the
total, each deposit's time in the object write (`write_ms`, BlockStore.write) and in SQL statements (`sql_ms`,
cursor execute to its return; the rest is encoding, the commit and Python), its statement count, and the bytes it
appended to SQLite's write-ahead log (`wal_bytes`: the pages its transactions changed) and which table or index each
of those pages belongs to (`wal_pages`) say where a difference comes from."""

from __future__ import annotations

import hashlib
import sqlite3
import statistics
import struct
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event

from engine.texts import sample_tokens
from store.repository import get_or_create_team
from store.retention import prune
from workers.runtime import Runtime, open_runtime
from workers.serving.prompt_cache import PendingPrefix, deposit_prefix
from workers.settings import load_settings

ARMS = ("evicted", "live", "wrong")
ORDERS = (("evicted", "live", "wrong"), ("wrong", "live", "evicted"), ("live", "wrong", "evicted"),
          ("evicted", "wrong", "live"), ("wrong", "evicted", "live"), ("live", "evicted", "wrong"))


@dataclass(frozen=True)
class DepositPrivacyRequest:
    model: str = "tiny"
    tokens: int = 256
    pairs: int = 9
    prefill_chunk: int = 16


class _Meter:
    """Where one deposit's time goes: statements and the object write; and the WAL's growth."""

    def __init__(self, rt: Runtime, wal: Path) -> None:
        self.wal = wal
        self.sql = self.commit = self.write = 0.0
        self.statements = 0
        self._t = 0.0
        bind = rt.sessions.kw["bind"]
        event.listen(bind, "before_cursor_execute", self._before)
        event.listen(bind, "after_cursor_execute", self._after)
        real_write = rt.blocks.write

        def write(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return real_write(*args, **kwargs)
            finally:
                self.write += time.perf_counter() - t0

        rt.blocks.write = write  # type: ignore[method-assign]

    def _before(self, *_a: Any) -> None:
        self._t = time.perf_counter()

    def _after(self, *_a: Any) -> None:
        self.sql += time.perf_counter() - self._t
        self.statements += 1

    def wal_size(self) -> int:
        return self.wal.stat().st_size if self.wal.exists() else 0


def _wal_tables(db: Path, wal: Path, start: int) -> list[str]:
    """The table or index of each page the WAL gained from byte `start` on (frame headers name the page; SQLite's
    dbstat table names its b-tree), in order."""
    data = wal.read_bytes()
    if len(data) < 32:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    pages = []
    off = max(start, 32)
    while off + 24 + page_size <= len(data):
        pages.append(struct.unpack(">I", data[off:off + 4])[0])
        off += 24 + page_size
    con = sqlite3.connect(str(db))
    try:
        names = dict(con.execute("SELECT pageno, name FROM dbstat").fetchall())
    except sqlite3.Error:  # an SQLite built without dbstat: the page numbers
        names = {}
    finally:
        con.close()
    return [str(names.get(p, p)) for p in pages]


def _one(request: DepositPrivacyRequest, arm: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kvgraft-bench-deposit-") as tmp:
        settings = load_settings(data_dir=Path(tmp), model=request.model, database_url=None, store_url=None,
                                 broker_url=None, prefill_chunk=request.prefill_chunk)
        with open_runtime(settings) as rt:
            engine = rt.engine()
            with rt.session() as s:
                a = get_or_create_team(s, name="a").id
                b = get_or_create_team(s, name="b").id
            base = sample_tokens(engine, request.tokens + 1)
            secret = engine.capture(base[:request.tokens])
            other = engine.capture(base[1:request.tokens + 1])  # same length, different content
            h_secret = hashlib.sha256(b"secret").hexdigest()
            h_other = hashlib.sha256(b"other").hexdigest()
            deposit_prefix(rt, engine, PendingPrefix(h_secret, secret), a)
            if arm == "evicted":
                evicted = prune(rt.session, rt.blocks, budget_bytes=0, grace=timedelta(0))[1]
                if not evicted:
                    raise RuntimeError("the budget evicted nothing: the evicted arm would not be one")
            guess = PendingPrefix(h_other, other) if arm == "wrong" else PendingPrefix(h_secret, secret)
            meter = _Meter(rt, Path(tmp) / "kvgraft.db-wal")
            wal0 = meter.wal_size()
            t0 = time.perf_counter()
            deposit_prefix(rt, engine, guess, b)
            total = time.perf_counter() - t0
            return {"total_ms": total * 1000, "write_ms": meter.write * 1000, "sql_ms": meter.sql * 1000,
                    "statements": meter.statements, "wal_bytes": meter.wal_size() - wal0,
                    "wal_pages": _wal_tables(Path(tmp) / "kvgraft.db", meter.wal, wal0)}


def _spread(values: list[float], digits: int = 3) -> dict[str, Any]:
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return {"median": round(statistics.median(values), digits), "p25": round(q[0], digits),
            "p75": round(q[2], digits), "min": round(min(values), digits), "max": round(max(values), digits)}


def run_deposit_privacy_bench(request: DepositPrivacyRequest,
                              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    if request.pairs < 1 or request.tokens < 2:
        raise ValueError("need at least one pair and two tokens")
    runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    orders = []
    for arm in ARMS:  # warm-up, not recorded: a process's first deposit pays for imports and statement compilation
        _one(request, arm)
    for i in range(request.pairs):
        order = ORDERS[i % len(ORDERS)]
        orders.append(list(order))
        for arm in order:
            runs[arm].append(_one(request, arm))
        if progress:
            progress(f"pair {i + 1}/{request.pairs}")
    arms = {arm: {key: _spread([r[key] for r in rs]) for key in ("total_ms", "write_ms", "sql_ms")}
            | {"statements": sorted({r["statements"] for r in rs}), "wal_bytes": sorted({r["wal_bytes"] for r in rs}),
               "wal_pages": sorted({tuple(sorted(r["wal_pages"])) for r in rs})}
            for arm, rs in runs.items()}
    ratios = {}
    for arm in ("evicted", "live"):
        paired = [x["total_ms"] / w["total_ms"] for x, w in zip(runs[arm], runs["wrong"], strict=True)]
        ratios[f"{arm}_over_wrong"] = _spread(paired) | {"slower_in": sum(r > 1 for r in paired),
                                                          "pairs": len(paired)}
    return {"bench": "deposit-privacy", "model": request.model, "prefix_tokens": request.tokens,
            "pairs": request.pairs, "warmup_per_arm": 1, "store": "local", "catalogue": "sqlite", "orders": orders,
            "arms": arms, "paired_ratios": ratios,
            "raw_ms": {arm: [round(r["total_ms"], 3) for r in rs] for arm, rs in runs.items()}}
