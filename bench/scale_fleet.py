"""The fleet half of `kvgraft bench scale`: graft throughput with 1, 2 and 4 graft workers and deposit throughput
with 1, 2 and 4 solve workers on the tiny model (so the system's own overhead is measured, not the model), over
real PostgreSQL, RabbitMQ (a private vhost) and S3 (a moto server), and the S3 requests and database statements of
one answer and one deposit, counted in this process (SQLAlchemy's cursor events, botocore's request events).
Every engine runs one thread, so N workers use N cores: throughput can grow until the machine's cores are busy."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event

from bench.api import _process, _vhost
from bench.local_servers import moto_server
from store.db import ProblemRow, QueryRequestRow
from store.objects.s3 import S3ObjectStore
from workers.environment import environment
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.solve import solve_problem
from workers.problems import ProblemSpec
from workers.queue.dispatch import dispatch_solves, send_question, submit_batch, submit_question
from workers.runtime import Runtime, open_runtime
from workers.settings import load_settings

Progress = Callable[[str], None] | None
RECURRING = [(f"A shelf holds {n} jars. How many jars are on {m} shelves?", n * m) for n, m in
             [(12, 5), (24, 3), (15, 7), (9, 11), (30, 4), (8, 13), (17, 6), (21, 9)]]


@dataclass(frozen=True)
class FleetBenchRequest:
    database_url: str  # an empty, migrated PostgreSQL database
    workers: tuple[int, ...] = (1, 2, 4)
    answers: int = 80  # questions per graft-throughput run
    deposits: int = 24  # problems per deposit-throughput run


class _Counters:
    def __init__(self) -> None:
        self.statements = 0
        self.s3: dict[str, int] = {}

    def on_statement(self, *_: Any) -> None:
        self.statements += 1

    def on_s3(self, event_name: str = "", **_: Any) -> None:
        op = event_name.rsplit(".", 1)[-1]
        self.s3[op] = self.s3.get(op, 0) + 1

    def snapshot(self) -> tuple[int, int, dict[str, int]]:
        return self.statements, sum(self.s3.values()), dict(self.s3)


@contextlib.contextmanager
def _counting(rt: Runtime) -> Iterator[_Counters]:
    counters = _Counters()
    engine = rt.sessions.kw["bind"]
    event.listen(engine, "before_cursor_execute", counters.on_statement)
    client = rt.blocks.objects.client  # type: ignore[attr-defined]
    client.meta.events.register("before-call.s3", counters.on_s3)
    try:
        yield counters
    finally:
        event.remove(engine, "before_cursor_execute", counters.on_statement)
        client.meta.events.unregister("before-call.s3", counters.on_s3)


def _per(counters: _Counters, start: tuple[int, int, dict[str, int]], n: int) -> dict[str, Any]:
    statements, s3, ops = counters.snapshot()
    by_op = {k: round((v - start[2].get(k, 0)) / n, 2) for k, v in ops.items() if v - start[2].get(k, 0)}
    return {"s3_requests": round((s3 - start[1]) / n, 2), "db_statements": round((statements - start[0]) / n, 2),
            "s3_by_operation": by_op, "n": n}


def _wait_done(rt: Runtime, model: type[ProblemRow] | type[QueryRequestRow], ids: list[str], timeout: float,
               logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    final = ("solved", "failed", "rejected") if model is ProblemRow else ("done", "failed")
    while True:
        with rt.session() as s:
            pending = s.query(model).filter(model.id.in_(ids), model.status.notin_(final)).count()
        if not pending:
            return
        if time.monotonic() > deadline:
            tails = "\n".join(p.read_text(errors="replace")[-1500:] for p in logs if p.exists())
            raise RuntimeError(f"{pending} of {len(ids)} still pending after {timeout:.0f} s\n{tails}")
        time.sleep(0.05)


def _settle(rt: Runtime, quiet_s: float = 1.5, timeout: float = 120) -> None:
    """Wait until no attestation is queued or being recorded: the attest queue is empty and the attestations
    table has not grown for `quiet_s`."""
    from store.db import AttestationRow
    from workers.queue.fleet import attest_queue, queue_states

    queue = attest_queue(rt.engine().fingerprint.id)
    deadline, last, since = time.monotonic() + timeout, -1, time.monotonic()
    while time.monotonic() < deadline:
        with rt.session() as s:
            count = s.query(AttestationRow).count()
        depth = queue_states(rt.settings.broker_url or "", [queue])[queue].depth
        if count != last or depth:
            last, since = count, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
        time.sleep(0.2)


@contextlib.contextmanager
def _workers(kind: str, n: int, tmp: Path) -> Iterator[list[Path]]:
    with contextlib.ExitStack() as stack:
        logs = []
        for i in range(n):
            log = tmp / f"{kind}-{n}-{i}.log"
            stack.enter_context(_process(["worker", kind, "--hostname", f"{kind}-{n}-{i}@bench"], dict(os.environ),
                                         log, lambda log=log: log.exists() and "ready" in log.read_text()))
            logs.append(log)
        yield logs


def run_fleet_bench(request: FleetBenchRequest, progress: Progress = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    tmp = Path(tempfile.mkdtemp(prefix="kvgraft-bench-scale-"))
    try:
        with moto_server(tmp) as s3, _vhost(None) as broker, contextlib.ExitStack() as scope:
            scope.enter_context(environment({
                "KVGRAFT_DATA_DIR": str(tmp / "data"), "KVGRAFT_DATABASE_URL": request.database_url,
                "KVGRAFT_STORE_URL": "s3://kvgraft-scale/blocks", "KVGRAFT_S3_ENDPOINT_URL": s3,
                "KVGRAFT_BROKER_URL": broker, "KVGRAFT_MODEL": "tiny", "KVGRAFT_THREADS": "1",
                "AWS_ACCESS_KEY_ID": "bench",
                "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1", "KVGRAFT_LOG_LEVEL": "WARNING"}))
            S3ObjectStore("kvgraft-scale", endpoint_url=s3).ensure_bucket()
            rt = open_runtime(load_settings())
            try:
                return _measure(rt, request, tmp, say)
            finally:
                rt.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _measure(rt: Runtime, request: FleetBenchRequest, tmp: Path, say: Callable[[str], None]) -> dict[str, Any]:
    say("depositing the recurring problems in-process (deposits counted)")
    specs = [ProblemSpec(f"r{i}", q, a, f"print({a})") for i, (q, a) in enumerate(RECURRING)]
    _, ids = submit_batch(rt, specs, team="bench")
    with _counting(rt) as counters:
        start = counters.snapshot()
        for pid in ids:
            solve_problem(rt, pid)
        per_deposit = _per(counters, start, len(ids))
        params = AnswerParams(use_direct=False)
        questions = [q for q, _ in RECURRING]
        start = counters.snapshot()
        for q in questions:
            answer_question(rt, q, params=params)  # the first of each: read from S3 and verified
        per_answer_first = _per(counters, start, len(questions))
        start = counters.snapshot()
        for q in questions:
            answer_question(rt, q, params=params)  # again: the verified cache serves the block
        per_answer_warm = _per(counters, start, len(questions))
    graft: list[dict[str, Any]] = []
    for n in request.workers:
        say(f"graft throughput: {n} graft worker(s), {request.answers} recurring questions")
        with _workers("graft", n, tmp) as logs:
            warm = [submit_question(rt, q, team_id=None) for q, _ in RECURRING * n]  # each worker's caches
            for r in warm:
                send_question(rt, r)
            _wait_done(rt, QueryRequestRow, warm, 120, logs)
            _settle(rt)  # the attestations the warm-up scheduled run now, not inside the timed run
            asked = [submit_question(rt, RECURRING[i % len(RECURRING)][0], team_id=None)
                     for i in range(request.answers)]
            t0 = time.perf_counter()
            for r in asked:
                send_question(rt, r)
            _wait_done(rt, QueryRequestRow, asked, 600, logs)
            elapsed = time.perf_counter() - t0
        graft.append({"workers": n, "answers_per_s": round(request.answers / elapsed, 1),
                      "answers": request.answers, "elapsed_s": round(elapsed, 2)})
    deposit: list[dict[str, Any]] = []
    for n in request.workers:
        say(f"deposit throughput: {n} solve worker(s), {request.deposits} problems")
        def problems(tag: str, count: int, base: int, n: int = n) -> list[str]:
            specs = [ProblemSpec(f"{tag}{n}-{i}", f"A van carries {base + i} boxes. How many boxes do 2 vans carry?",
                                 2 * (base + i), f"print({2 * (base + i)})") for i in range(count)]
            return submit_batch(rt, specs, team="bench")[1]

        warm, pids = problems("w", 2 * n, 100_000 * n), problems("d", request.deposits, 100_000 * n + 1000)
        with _workers("solve", n, tmp) as logs:
            dispatch_solves(rt, warm)  # each worker's first solves (its skill prefix, connections) are not timed
            _wait_done(rt, ProblemRow, warm, 300, logs)
            t0 = time.perf_counter()
            dispatch_solves(rt, pids)
            _wait_done(rt, ProblemRow, pids, 600, logs)
            elapsed = time.perf_counter() - t0
        deposit.append({"workers": n, "deposits_per_s": round(request.deposits / elapsed, 2),
                        "deposits": request.deposits, "elapsed_s": round(elapsed, 2)})
    return {"graft_throughput": graft, "deposit_throughput": deposit, "per_answer": per_answer_first,
            "per_answer_verified_cache": per_answer_warm, "per_deposit": per_deposit,
            "read_cache": {"answers": per_answer_warm["n"], "s3_gets_per_answer":
                           per_answer_warm["s3_by_operation"].get("GetObject", 0.0),
                           "first_answer_s3_gets": per_answer_first["s3_by_operation"].get("GetObject", 0.0)},
            "cores": os.cpu_count(), "threads_per_worker": 1}
