"""`kvgraft bench load`: many concurrent clients submitting batches and asking questions against a real API server
(`kvgraft serve`, embedded mode: SQLite, local blocks, work on its background thread) on loopback for a bounded
time. Reports requests held, errors, lost submissions (accepted problems without an outcome or missing: must be 0)
and latency percentiles per request kind."""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.api import _answers, _process
from bench.local_servers import free_port
from bench.stats import percentile
from store.repository import create_api_token, get_or_create_team
from workers.runtime import open_runtime
from workers.settings import load_settings


@dataclass(frozen=True)
class LoadBenchRequest:
    clients: int = 8
    seconds: float = 20.0
    model: str = "tiny"  # the load is on the service; a bigger model only slows the background solving
    drain_timeout_s: float = 300.0


SEED = [{"id": f"seed-{k}", "question": f"A tray holds {k + 6} cups. How many cups are on {k + 2} trays?",
         "answer": (k + 6) * (k + 2), "solution": f"print({k + 6} * {k + 2})"} for k in range(3)]


def _pct(values: list[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 2) if values else 0.0


def run_load_bench(request: LoadBenchRequest, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    tmp = Path(tempfile.mkdtemp(prefix="kvgraft-bench-load-"))
    env = dict(os.environ) | {"KVGRAFT_DATA_DIR": str(tmp / "data"), "KVGRAFT_MODEL": request.model,
                              "KVGRAFT_QUERY_TIMEOUT_S": "30"}
    for k in ("KVGRAFT_DATABASE_URL", "KVGRAFT_STORE_URL", "KVGRAFT_BROKER_URL"):
        env.pop(k, None)
    settings = load_settings(data_dir=tmp / "data", model=request.model, database_url=None, store_url=None,
                        broker_url=None)
    with open_runtime(settings) as rt, rt.session() as s:
        tokens = [create_api_token(s, team=get_or_create_team(s, name=f"load-{i % 3}"), role="submitter")[1]
                  for i in range(request.clients)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    accepted: list[tuple[str, str, int]] = []  # (token, batch id, problems)
    lock = threading.Lock()

    def client(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {tokens[i]}"}) as c:
            n = 0
            while time.monotonic() < deadline:
                n += 1
                kind = ("batch", "query", "read")[n % 3]
                t0 = time.perf_counter()
                try:
                    if kind == "batch":
                        body = [{"id": f"c{i}-{n}-{k}", "question": f"Client {i} asks: what is {n} plus {k}?",
                                 "answer": n + k, "solution": f"print({n} + {k})"} for k in range(1 + n % 3)]
                        r = c.post("/v1/batches", json=body)
                        if r.status_code == 201:
                            with lock:
                                accepted.append((tokens[i], r.json()["batch_id"], len(body)))
                    elif kind == "query":
                        r = c.post("/v1/queries", json={"question": SEED[n % len(SEED)]["question"]})
                    else:
                        r = c.get("/v1/blocks", params={"limit": 10})
                    ok = r.status_code < 400 or (kind == "query" and r.status_code == 202)
                except httpx.HTTPError:
                    ok = False
                with lock:
                    latencies[kind].append(time.perf_counter() - t0)
                    if not ok:
                        errors[kind] += 1

    try:
        with _process(["serve", "--port", str(port), "--log-level", "warning"], env, tmp / "api.log",
                      lambda: _answers(f"{url}/readyz")):
            say("seeding the recurring questions (a shared batch)")
            with httpx.Client(base_url=url, timeout=120, headers={"Authorization": f"Bearer {tokens[0]}"}) as c:
                seed = c.post("/v1/batches", json={"problems": SEED, "shared": True})
                seed.raise_for_status()
                while c.get(f"/v1/batches/{seed.json()['batch_id']}").json()["status"] != "done":
                    time.sleep(0.2)
            deadline = time.monotonic() + request.seconds
            say(f"{request.clients} clients for {request.seconds:.0f} s")
            threads = [threading.Thread(target=client, args=(i,)) for i in range(request.clients)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - t0
            say(f"draining {len(accepted)} accepted batches")
            lost, unfinished = 0, 0
            drain_deadline = time.monotonic() + request.drain_timeout_s
            for token, batch_id, n_problems in accepted:
                with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as c:
                    while True:
                        r = c.get(f"/v1/batches/{batch_id}")
                        if r.status_code != 200:
                            lost += n_problems
                            break
                        data = r.json()
                        if data["counts"]["total"] != n_problems:
                            lost += abs(n_problems - data["counts"]["total"])
                        if data["status"] == "done":
                            break
                        if time.monotonic() > drain_deadline:
                            unfinished += data["counts"]["pending"]
                            break
                        time.sleep(0.2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total = sum(len(v) for v in latencies.values())
    return {"benchmark": "load", "model": request.model, "clients": request.clients,
            "seconds": round(elapsed, 1), "requests": total, "requests_per_s": round(total / elapsed, 1),
            "errors": dict(errors), "error_count": sum(errors.values()),
            "batches_accepted": len(accepted), "problems_accepted": sum(n for _, _, n in accepted),
            "lost_submissions": lost, "unfinished_after_drain": unfinished,
            "latency_ms": {kind: {"p50": _pct(v, 0.5), "p95": _pct(v, 0.95), "p99": _pct(v, 0.99),
                                  "mean": round(statistics.mean(v) * 1000, 2)} for kind, v in latencies.items()}}
