"""`kvgraft bench api`: recurring queries through the whole distributed path (HTTP API -> RabbitMQ -> graft worker
-> S3 -> answer) versus the same queries answered in-process, side by side. It starts what it needs: a moto S3
server, a private RabbitMQ vhost (via rabbitmqctl), a graft worker and the API server, over a temporary SQLite
database; and removes them afterwards."""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.local_servers import free_port, moto_server, stop_process_group
from bench.stats import percentile
from store.objects.s3 import S3ObjectStore
from store.repository import create_api_token, get_or_create_team
from workers.environment import environment
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.solve import solve_problem
from workers.problems import ProblemSpec
from workers.queue.dispatch import submit_batch
from workers.runtime import open_runtime
from workers.settings import load_settings

QUESTIONS = [(f"A crate holds {n} apples. How many apples are in {m} crates?", n * m) for n, m in
             [(12, 5), (24, 3), (15, 7), (9, 11), (30, 4)]]


@dataclass(frozen=True)
class ApiBenchRequest:
    queries: int = 40
    model: str | None = None
    broker_url: str | None = None  # default: a private vhost on the local RabbitMQ


def _percentiles(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples) * 1000, 2), "p99_ms": round(percentile(samples, 0.99) * 1000, 2),
            "rps": round(len(samples) / sum(samples), 2)}


@contextlib.contextmanager
def _vhost(given: str | None) -> Iterator[str]:
    if given:
        yield given
        return
    if shutil.which("rabbitmqctl") is None:
        raise RuntimeError("no rabbitmqctl to make a private vhost: pass --broker URL")
    name = f"kvgraft-bench-{uuid.uuid4().hex[:10]}"
    subprocess.run(["rabbitmqctl", "add_vhost", name], check=True, capture_output=True, timeout=60)
    subprocess.run(["rabbitmqctl", "set_permissions", "-p", name, "guest", ".*", ".*", ".*"], check=True,
                   capture_output=True, timeout=60)
    try:
        yield f"amqp://guest:guest@127.0.0.1:5672/{name}"
    finally:
        subprocess.run(["rabbitmqctl", "delete_vhost", name], capture_output=True, timeout=60)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def _spawn(argv: list[str], env: dict[str, str], log: Path, ready: Callable[[], bool], *,
           timeout: float = 120) -> Iterator[None]:
    """A process in its own group, its output in `log`, until `ready()`; stopped with its group afterwards."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{argv[2:]} did not start:\n{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        yield
    finally:
        stop_process_group(proc)


def _process(args: list[str], env: dict[str, str], log: Path, ready: Callable[[], bool]
             ) -> contextlib.AbstractContextManager[None]:
    """A `kvgraft` command (`python -m services.cli ARGS`) as _spawn runs it (a `serve` is ready once its
    checks have finished, /readyz: minutes on a loaded machine)."""
    return _spawn([sys.executable, "-m", "services.cli", *args], env, log, ready, timeout=1800)


def run_api_bench(request: ApiBenchRequest, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    model = request.model or load_settings().model
    tmp = Path(tempfile.mkdtemp(prefix="kvgraft-bench-api-"))
    try:
        with moto_server(tmp) as s3, _vhost(request.broker_url) as broker, contextlib.ExitStack() as scope:
            env = {"KVGRAFT_DATA_DIR": str(tmp / "data"), "KVGRAFT_STORE_URL": "s3://kvgraft-bench/blocks",
                   "KVGRAFT_S3_ENDPOINT_URL": s3, "KVGRAFT_BROKER_URL": broker,
                   "KVGRAFT_MODEL": model, "AWS_ACCESS_KEY_ID": "bench",
                   "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1", "KVGRAFT_LOG_LEVEL": "WARNING"}
            scope.enter_context(environment(env))
            S3ObjectStore("kvgraft-bench", endpoint_url=s3).ensure_bucket()
            rt = open_runtime(load_settings())
            try:
                say("depositing the recurring problems")
                specs = [ProblemSpec(f"q{i}", q, a, f"print({a})") for i, (q, a) in enumerate(QUESTIONS)]
                _, ids = submit_batch(rt, specs, team="bench")
                for pid in ids:
                    solve_problem(rt, pid)
                with rt.session() as s:
                    team = get_or_create_team(s, name="bench")
                    team_id = team.id
                    _, token = create_api_token(s, team=team, role="submitter")
                questions = [QUESTIONS[i % len(QUESTIONS)][0] for i in range(request.queries)]
                say(f"in-process, warm caches: {request.queries} recurring queries")
                local, steps = _in_process(rt, questions, team_id)
            finally:
                rt.close()
            say(f"in-process, cold store (no read cache, no verified cache): {request.queries} recurring queries")
            with environment(COLD):
                cold_rt = open_runtime(load_settings())
                try:
                    local_cold, cold_steps = _in_process(cold_rt, questions, team_id)
                finally:
                    cold_rt.close()
            port = free_port()
            remote: dict[str, list[float]] = {}
            for label, extra in (("warm", {}), ("cold", COLD)):
                child_env = dict(os.environ) | extra
                worker_log = tmp / f"worker-{label}.log"
                with _process(["worker", "graft"], child_env, worker_log,
                              lambda log=worker_log: "ready" in log.read_text()), \
                        _process(["serve", "--port", str(port), "--log-level", "warning"], dict(os.environ),
                                 tmp / f"api-{label}.log", lambda: _answers(f"http://127.0.0.1:{port}/readyz")):
                    say(f"distributed ({label} worker caches): {request.queries} recurring queries over HTTP")
                    remote[label] = _over_http(port, token, questions)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    in_process, distributed = _percentiles(local), _percentiles(remote["warm"])
    graft = steps["restore"] + steps["feed"] + steps["decode"]
    return {"benchmark": "api", "model": model, "queries": request.queries,
            "in_process": in_process, "distributed": distributed,
            "in_process_cold_store": _percentiles(local_cold), "distributed_cold_store": _percentiles(remote["cold"]),
            "distributed_adds_p50_pct": round((distributed["p50_ms"] / in_process["p50_ms"] - 1) * 100, 1),
            "in_process_steps_ms": steps, "in_process_cold_store_steps_ms": cold_steps,
            "in_process_p50_over_restore_and_decode": round(in_process["p50_ms"] / graft, 2) if graft else None,
            "distributed_p50_over_in_process": round(distributed["p50_ms"] / in_process["p50_ms"], 2)}


COLD = {"KVGRAFT_READ_CACHE_BYTES": "0", "KVGRAFT_VERIFIED_CACHE_BYTES": "0"}


def _in_process(rt: Any, questions: list[str], team_id: int) -> tuple[list[float], dict[str, float]]:
    """Each question answered in this process (after one warm-up answer of each distinct question): latencies, and
    the median of each step of the answer (lookup, block read, context, restore, feed, decode, attestation lookup,
    record)."""
    params = AnswerParams(use_direct=False)
    for q in dict.fromkeys(questions):  # warm-up: engine, pool, and each block once (the warm path is warm)
        answer_question(rt, q, team_id=team_id, params=params)
    latencies: list[float] = []
    steps: dict[str, list[float]] = {}
    for q in questions:
        t0 = time.perf_counter()
        got = answer_question(rt, q, team_id=team_id, params=params)
        latencies.append(time.perf_counter() - t0)
        if got.route != "recurrence":
            raise RuntimeError(f"expected a recurrence answer, got {got}")
        for k, v in got.timings_ms.items():
            steps.setdefault(k, []).append(v)
    return latencies, {k: round(statistics.median(v), 3) for k, v in steps.items()}


def _over_http(port: int, token: str, questions: list[str]) -> list[float]:
    remote: list[float] = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        for q in dict.fromkeys(questions):  # warm-up: the worker's engine, pool and each block once
            client.post("/v1/queries", json={"question": q}).raise_for_status()
        for q in questions:
            t0 = time.perf_counter()
            r = client.post("/v1/queries", json={"question": q})
            remote.append(time.perf_counter() - t0)
            r.raise_for_status()
            if r.json().get("route") != "recurrence":
                raise RuntimeError(f"expected a recurrence answer, got {r.json()}")
    return remote
