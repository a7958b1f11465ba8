"""Prometheus metrics of the HTTP API (every name prefixed `kvgraft_`): requests by path and status, answers by
route, graft (answer) latency, and, read from the database and the broker at scrape time, queue depths, gate
results, sandbox verdicts and the store's bytes. They are deployment-wide (every team's work together), so
`/metrics` answers operators and auditors only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from store.retention import eviction_totals, held_bytes, owned_bytes
from store.stats import (
    answer_counts,
    attestations_by_status,
    evictions_by_reason,
    generations_by_verdict,
    pending_problems,
    pending_questions,
    restored_tokens,
)


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
            for status, n in attestations_by_status(s):
                gates.add_metric([status], n)
            for verdict, n in generations_by_verdict(s):
                verdicts.add_metric([verdict], n)
            pending.add_metric(["problems"], pending_problems(s))
            pending.add_metric(["queries"], pending_questions(s))
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
            counted = answer_counts(s)
            answers.add_metric(["hit"], counted.hits)
            answers.add_metric(["miss"], counted.total - counted.hits)
            restored.add_metric([], restored_tokens(s))
            held.add_metric([], held_bytes(s, store_url=rt.blocks.url))
            owned.add_metric([], owned_bytes(s, store_url=rt.blocks.url))
            for reason, n in evictions_by_reason(s):
                evictions.add_metric([reason], n)
            evicted_bytes.add_metric([], eviction_totals(s)[1])
        if rt.settings.store_budget_bytes is not None:
            budget.add_metric([], rt.settings.store_budget_bytes)
        yield from (answers, restored, held, owned, budget, evictions, evicted_bytes)
