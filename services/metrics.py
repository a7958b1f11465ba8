"""Prometheus metrics of the HTTP API (every name prefixed `kvgraft_`): requests by path and status, answers by
route, graft (answer) latency, and, read from the database and the broker at scrape time, queue depths, gate
results, sandbox verdicts and the store's bytes. They are deployment-wide (every team's work together), so
`/metrics` answers operators and auditors only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import sqlalchemy as sa
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from store.db import Attestation, BlockRow, Eviction, Generation, Problem, Query, QueryRequest
from store.retention import eviction_totals, held_bytes, owned_bytes


class ApiMetrics:
    def __init__(self, runtime_of: Callable[[], Any], queue_depths: Callable[[], dict[str, int]]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("kvgraft_api_requests", "HTTP API requests by route template and status",
                                ["path", "status"], registry=self.registry)
        self.answers = Counter("kvgraft_answers", "Answers given by the API, by route", ["route"],
                               registry=self.registry)
        self.answer_latency = Histogram("kvgraft_graft_latency_seconds",
                                        "Time to answer a query through the library, seen by the API",
                                        buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120),
                                        registry=self.registry)
        self.registry.register(_StateCollector(runtime_of, queue_depths))


class _StateCollector(Collector):
    def __init__(self, runtime_of: Callable[[], Any], queue_depths: Callable[[], dict[str, int]]) -> None:
        self.runtime_of, self.queue_depths = runtime_of, queue_depths

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily("kvgraft_queue_depth", "Messages waiting per queue", labels=["queue"])
        for queue, n in self.queue_depths().items():
            depth.add_metric([queue], n)
        yield depth
        rt = self.runtime_of()
        if rt is None:
            return
        gates = GaugeMetricFamily("kvgraft_gate_results", "Attestations recorded, by status", labels=["status"])
        verdicts = GaugeMetricFamily("kvgraft_sandbox_verdicts", "Generated programs run in the sandbox, by verdict",
                                     labels=["verdict"])
        pending = GaugeMetricFamily("kvgraft_pending_work", "Problems and queries not yet answered",
                                    labels=["kind"])
        with rt.session() as s:
            for status, n in s.execute(sa.select(Attestation.status, sa.func.count()).group_by(Attestation.status)):
                gates.add_metric([status], n)
            for verdict, n in s.execute(sa.select(Generation.verdict, sa.func.count())
                                        .group_by(Generation.verdict)):
                verdicts.add_metric([verdict], n)
            pending.add_metric(["problems"], s.scalar(sa.select(sa.func.count()).select_from(Problem)
                                                      .where(Problem.status == "pending")) or 0)
            pending.add_metric(["queries"], s.scalar(sa.select(sa.func.count()).select_from(QueryRequest)
                                                     .where(QueryRequest.status == "pending")) or 0)
        yield gates
        yield verdicts
        yield pending
        yield from self._cache(rt)

    def _cache(self, rt: Any) -> Iterator[GaugeMetricFamily]:
        """What a user needs to see the cache work, each with its denominator: answers that grafted a block (hits)
        out of all answers, tokens restored from blocks, the store's bytes against its budget, evictions."""
        answers = GaugeMetricFamily("kvgraft_cache_answers", "Answers recorded, by whether they grafted a block",
                                    labels=["outcome"])
        restored = GaugeMetricFamily("kvgraft_cache_restored_tokens", "Tokens restored from blocks by answers")
        held = GaugeMetricFamily("kvgraft_store_bytes", "Bytes the block store holds (not evicted), each block once")
        owned = GaugeMetricFamily("kvgraft_store_owned_bytes", "Bytes of the store counted per owner, what the "
                                  "budget bounds (a deduplicated block in full for every team that owns it)")
        budget = GaugeMetricFamily("kvgraft_store_budget_bytes", "The store's byte budget (absent: none)")
        evictions = GaugeMetricFamily("kvgraft_evictions", "Ownerships evicted under a budget or quota",
                                      labels=["reason"])
        evicted_bytes = GaugeMetricFamily("kvgraft_evicted_bytes", "Bytes evicted under a budget or quota, per owner")
        with rt.session() as s:
            hits, total = s.execute(sa.select(sa.func.count(Query.block_id), sa.func.count())).one()
            answers.add_metric(["hit"], hits)
            answers.add_metric(["miss"], total - hits)
            restored.add_metric([], s.scalar(sa.select(sa.func.coalesce(sa.func.sum(BlockRow.n_tokens), 0))
                                             .select_from(Query).join(BlockRow, BlockRow.id == Query.block_id)) or 0)
            held.add_metric([], held_bytes(s, store_url=rt.blocks.url))
            owned.add_metric([], owned_bytes(s, store_url=rt.blocks.url))
            for reason, n in s.execute(sa.select(Eviction.reason, sa.func.count()).group_by(Eviction.reason)):
                evictions.add_metric([reason], n)
            evicted_bytes.add_metric([], eviction_totals(s)[1])
        if rt.settings.store_budget_bytes is not None:
            budget.add_metric([], rt.settings.store_budget_bytes)
        yield from (answers, restored, held, owned, budget, evictions, evicted_bytes)
