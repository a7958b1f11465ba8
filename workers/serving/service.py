"""The serving engine of one API process: the model loaded with the prompt-cache grid, its computation owned by one
batch scheduler on one long-lived thread (engine/batching.py; two llama.cpp computations on the same cores slow
each other), continuous batching of up to KVGRAFT_SERVING_MAX_SEQS completions where this host's `batch` check
found it exact (else one at a time, and each response says why), admission (a team may have
KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT completions waiting or running, and so at most that many sequences in the batch;
the process KVGRAFT_SERVING_QUEUE_MAX; more are refused at once rather than queued without bound), the background
prefix depositor, and the chat format (workers/serving/chat.py)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass

from engine import native
from engine.batching import BatchCore, BatchScheduler, SequenceResult
from engine.graft import GraftEngine
from engine.sampling import OnText
from workers.runtime import Runtime
from workers.serving.batch_check import BatchPolicy, batching_policy
from workers.serving.chat import ChatPrompt, chat_prompt
from workers.serving.completion import (
    Completion,
    CompletionCancelled,
    CompletionPlan,
    CompletionRequest,
    finish,
    plan,
)
from workers.serving.exactness import CachePolicy, cache_policy
from workers.serving.prompt_cache import PrefixDepositor
from workers.settings import engine_config


class ServingBusy(Exception):
    """Too many completions already waiting or running, for the team or for this process; retry later. The message
    says which limit refused it; it gives the team's own count and limit, never the server's count (with the
    team's own, that would tell a team how many completions the others have in flight)."""

    def __init__(self, scope: str, in_flight: int, limit: int, retry_after_s: int) -> None:
        if scope == "team":
            why = (f"the team has {in_flight} completions waiting or running, its limit is {limit} "
                   f"(KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT)")
        else:
            why = "this server is at its limit of completions waiting or running (KVGRAFT_SERVING_QUEUE_MAX)"
        super().__init__(f"{why}; retry in {retry_after_s} s")
        self.scope, self.in_flight, self.limit, self.retry_after_s = scope, in_flight, limit, retry_after_s


class ServingUnavailable(Exception):
    """The serving engine is stopping; retry on another process."""


@dataclass(frozen=True)
class Started:
    engine: GraftEngine
    planned: CompletionPlan
    future: Future[SequenceResult]


class Serving:
    """Every llama.cpp computation of the serving engine (load, composition and batch checks, completions) runs on
    the scheduler's one thread, whichever request thread asked, and so does every other llama_decode of the process
    while this object is open (engine/native.set_compute_thread: an embedded API's work thread; services/api.py
    creates it before the work thread starts). With an OpenMP build each thread that computes gets its own team,
    and once the process manages more OpenMP threads than there are cores, libgomp stops spinning at barriers and
    sleeps instead: measured on 2 cores, a 15-token prefill at 2,221 tokens of context
    took ~80 ms from one thread and 108-135 ms once a second thread had computed (docs/BENCHMARKS.md)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._lock = threading.Lock()
        self.scheduler = BatchScheduler("kvgraft-serving-engine")
        # every llama_decode of this process from now on (an embedded API's work thread too) runs on this thread
        self._previous_runner = native.set_compute_thread(self.scheduler.call)
        self._engine: GraftEngine | None = None
        self.batching = BatchPolicy(1, "not started", None)
        self.depositor = PrefixDepositor(rt)
        self._admitted: Counter[int] = Counter()
        self._admit_lock = threading.Lock()

    def reserve(self, team_id: int) -> None:
        """Admit one completion of the team now (before any work), or raise ServingBusy; `release` when done."""
        s = self.rt.settings
        with self._admit_lock:
            total = sum(self._admitted.values())
            if self._admitted[team_id] >= s.team_max_in_flight:
                raise ServingBusy("team", self._admitted[team_id], s.team_max_in_flight, s.busy_retry_after_s)
            if total >= s.serving_queue_max:
                raise ServingBusy("server", total, s.serving_queue_max, s.busy_retry_after_s)
            self._admitted[team_id] += 1

    def release(self, team_id: int) -> None:
        with self._admit_lock:
            self._admitted[team_id] -= 1
            if self._admitted[team_id] <= 0:
                del self._admitted[team_id]

    @property
    def model_name(self) -> str:
        return self.rt.settings.model

    def engine(self) -> GraftEngine:
        with self._lock:
            if self._engine is None:
                self._engine = self.scheduler.call(self._start)
            return self._engine

    def _start(self) -> GraftEngine:
        """On the compute thread: load the model, decide batching (the `batch` check), open the context."""
        s = self.rt.settings
        engine = self.rt.engine(s.model, engine_config(s, serving=True))
        self.batching = batching_policy(self.rt, engine, s.serving_max_seqs)
        self.scheduler.attach(BatchCore(engine, engine.open_batch_context(self.batching.max_seqs),
                                        pad_to=self.batching.pad_to), owner_max_seqs=s.team_max_in_flight)
        return engine

    def tokens(self, text: str) -> tuple[int, ...]:
        return tuple(self.engine().tokenize(text, add_special=True, parse_special=False))

    def chat(self, messages: Sequence[tuple[str, str]]) -> ChatPrompt:
        return chat_prompt(self.engine(), messages)

    def _cache_policy(self, engine: GraftEngine, n_prompt: int) -> CachePolicy:
        """From the memo on the request's thread; the composition check, the first time, on the compute thread."""
        return cache_policy(self.rt, engine, n_prompt, compute=self.scheduler.call)

    def start(self, request: CompletionRequest, on_text: OnText | None = None,
              cancel: threading.Event | None = None, digests: bool = False) -> Started:
        """Plan the completion here (bad input raises now, before anything is computed) and hand it to the batch
        scheduler. A set `cancel` stops it before its next step (a streamed request whose client went away)."""
        engine = self.engine()
        planned = plan(self.rt, engine, request, lambda n: self._cache_policy(engine, n),
                       store_chunk=self.rt.settings.prefix_chunk_tokens)
        try:
            future = self.scheduler.submit(planned.job(on_text, cancel, digests))
        except RuntimeError as exc:  # closing
            raise ServingUnavailable(str(exc)) from None
        return Started(engine, planned, future)

    def wait(self, started: Started) -> Completion:
        """The completion's result, once computed (CompletionCancelled if it was stopped)."""
        try:
            result = started.future.result()
        except CancelledError:  # dropped from the queue: its client went away, or the process is stopping
            raise CompletionCancelled("the completion was stopped before it started") from None
        return finish(started.engine, started.planned, result, self.depositor, self.batching.as_dict())

    def complete(self, request: CompletionRequest, on_text: OnText | None = None,
                 cancel: threading.Event | None = None, digests: bool = False) -> Completion:
        """`start` and `wait`: plan here, compute as one sequence of the batch scheduler, wait for it."""
        return self.wait(self.start(request, on_text, cancel, digests))

    def close(self) -> None:
        if native.compute_thread() == self.scheduler.call:  # (bound methods compare by object and function)
            native.set_compute_thread(self._previous_runner)
        stopped = self.scheduler.close()
        if stopped and self.scheduler.core is not None:  # never free a context a live thread may still use
            self.scheduler.core.ctx.close()
        self.depositor.close()
