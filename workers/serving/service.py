"""The serving engine of one API process: the model loaded with the prompt-cache grid, its computation owned by one
batch scheduler on one long-lived thread (engine/batching.py; two llama.cpp computations on the same cores slow
each other), continuous batching of up to KVGRAFT_SERVING_MAX_SEQS completions where this host's `batch` check
found it exact (else one at a time, and each response says why), admission (a team may have
KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT completions waiting or running, and so at most that many sequences in the batch;
the process KVGRAFT_SERVING_QUEUE_MAX; more are refused at once rather than queued without bound), the background
prefix depositor, and the chat format (workers/serving/chat.py)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, replace

import structlog

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
from workers.serving.exactness import CachePolicy, cache_policy, composition_verdict, unverified
from workers.serving.prompt_cache import PrefixDepositor
from workers.settings import engine_config

log = structlog.get_logger(__name__)


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
    batching: dict[str, object]  # the batching policy when it was handed to the scheduler


class ChecksInterrupted(Exception):
    """The serving engine is closing: a check running in the background stops at its next decode."""


@dataclass(frozen=True)
class Readiness:
    """Whether the serving engine has its verdicts: `checking` names what is still being checked or loaded
    (model, batch, composition); `failed` a check that could not run (then the safe fallback is served: one
    completion at a time, no prompt cache, each response saying why)."""

    ready: bool
    checking: tuple[str, ...]
    failed: str | None = None


CHECKS = ("model", "batch", "composition")


class Serving:
    """Every llama.cpp computation of the serving engine (load, composition and batch checks, completions) runs on
    the scheduler's one thread, whichever request thread asked, and so does every other llama_decode of the process
    while this object is open (engine/native.set_compute_thread: an embedded API's work thread; services/api.py
    creates it before the work thread starts). With an OpenMP build each thread that computes gets its own team,
    and once the process manages more OpenMP threads than there are cores, libgomp stops spinning at barriers and
    sleeps instead: measured on 2 cores, a 15-token prefill at 2,221 tokens of context
    took ~80 ms from one thread and 108-135 ms once a second thread had computed (docs/BENCHMARKS.md).

    The checks (`start_checks`: the model loaded, the `batch` and `composition` verdicts, each reused where this
    host recorded it) run on a background thread whose decodes the scheduler runs only while no completion is
    active or waiting, so a request never waits for a check: before the verdicts it is served at once, one
    completion at a time and without the prompt cache, and its `kvgraft` object says why."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._lock = threading.Lock()
        self.scheduler = BatchScheduler("kvgraft-serving-engine")
        self._stopping = threading.Event()
        # every llama_decode of this process from now on (an embedded API's work thread too) runs on this thread
        self._previous_runner = native.set_compute_thread(self._compute)
        self._engine: GraftEngine | None = None
        self.batching = BatchPolicy(1, "checking: the batch check has not finished on this host; one completion at "
                                    "a time until it has", None)
        self.depositor = PrefixDepositor(rt)
        self._admitted: Counter[int] = Counter()
        self._admit_lock = threading.Lock()
        self._readiness = Readiness(False, CHECKS)
        self._checks: threading.Thread | None = None

    def _compute(self, fn: Callable[[], int]) -> int:
        """The process's compute runner: every decode runs between the scheduler's steps."""
        return self.scheduler.call(fn)

    def _compute_idle(self, fn: Callable[[], int]) -> int:
        """The checks thread's runner: a decode waits until nothing is served, and the check stops once this
        engine is closing (it never computes on its own thread)."""
        if self._stopping.is_set():
            raise ChecksInterrupted("the serving engine is closing")
        try:
            return self.scheduler.call_idle(fn)
        except RuntimeError:  # closed meanwhile: the check stops here (it never computes on its own thread)
            raise ChecksInterrupted("the serving engine is closing") from None

    def readiness(self) -> Readiness:
        return self._readiness

    def start_checks(self) -> None:
        """Load the model and reach the batch and composition verdicts in the background (once)."""
        with self._lock:
            if self._checks is not None or self._stopping.is_set():
                return
            self._checks = threading.Thread(target=self._run_checks, name="kvgraft-serving-checks", daemon=True)
            self._checks.start()

    def _left(self, done: str) -> None:
        r = self._readiness
        self._readiness = replace(r, checking=tuple(c for c in r.checking if c != done))

    def _run_checks(self) -> None:
        native.set_thread_runner(self._compute_idle)  # this thread's decodes wait for an idle engine
        t0 = time.perf_counter()
        s = self.rt.settings
        try:
            engine = self.engine()
            self._left("model")
            batching = batching_policy(self.rt, engine, s.serving_max_seqs, s.serving_step_tokens,
                                       s.serving_split_cells, s.serving_step_tokens_max, s.serving_step_ratio)
            self._left("batch")
            composition_verdict(self.rt, engine)
            self._left("composition")
            if batching.max_seqs > 1:  # the batching context replaces the one-slot one while nothing is served
                self.scheduler.call_idle(self._attach, engine, batching)
            else:
                self.batching = batching
        except Exception as exc:  # noqa: BLE001 - a failed check is served as before it (safe), and said so
            if not isinstance(exc, ChecksInterrupted) and not self._stopping.is_set():
                self._failed(exc)
                return
            log.info("serve.checks_interrupted", checking=list(self._readiness.checking))
            return
        self._readiness = Readiness(True, ())
        log.info("serve.ready", ms=round((time.perf_counter() - t0) * 1000, 1), batching=self.batching.max_seqs)

    def _failed(self, exc: Exception) -> None:
        """A check that could not run: one completion at a time and no prompt cache, each response saying why."""
        log.exception("serve.checks_failed", checking=list(self._readiness.checking), exc_info=exc)
        reason = f"{type(exc).__name__}: {exc}"
        if "batch" in self._readiness.checking:
            self.batching = BatchPolicy(1, f"batch_check_failed: {reason}", None)
        if self._engine is not None and "composition" in self._readiness.checking:
            unverified(self.rt, self._engine, reason)
        self._readiness = Readiness(True, (), reason)

    def _attach(self, engine: GraftEngine, batching: BatchPolicy) -> None:
        """On the compute thread with nothing active: serve from a context of `batching.max_seqs` slots."""
        old = self.scheduler.core
        self.scheduler.attach(BatchCore(engine, engine.open_batch_context(batching.max_seqs), pad_to=batching.pad_to,
                                        step_tokens=batching.step_tokens, step_tokens_max=batching.step_tokens_max,
                                        split_cells=batching.split_cells),
                              owner_max_seqs=self.rt.settings.team_max_in_flight)
        self.batching = batching
        if old is not None:
            old.ctx.close()

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
        """On the compute thread: load the model and open a one-slot context (one completion at a time until the
        `batch` verdict is known: `start_checks`)."""
        s = self.rt.settings
        engine = self.rt.engine(s.model, engine_config(s, serving=True))
        self.scheduler.attach(BatchCore(engine, engine.open_batch_context(1)), owner_max_seqs=s.team_max_in_flight)
        return engine

    def tokens(self, text: str) -> tuple[int, ...]:
        return tuple(self.engine().tokenize(text, add_special=True, parse_special=False))

    def chat(self, messages: Sequence[tuple[str, str]]) -> ChatPrompt:
        return chat_prompt(self.engine(), messages)

    def _cache_policy(self, engine: GraftEngine, n_prompt: int) -> CachePolicy:
        """From this process's verdict, on the request's thread (before it: the cache off, saying why)."""
        return cache_policy(self.rt, engine, n_prompt)

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
        return Started(engine, planned, future, self.batching.as_dict())

    def wait(self, started: Started) -> Completion:
        """The completion's result, once computed (CompletionCancelled if it was stopped)."""
        try:
            result = started.future.result()
        except CancelledError:  # dropped from the queue: its client went away, or the process is stopping
            raise CompletionCancelled("the completion was stopped before it started") from None
        return finish(started.engine, started.planned, result, self.depositor, started.batching)

    def complete(self, request: CompletionRequest, on_text: OnText | None = None,
                 cancel: threading.Event | None = None, digests: bool = False) -> Completion:
        """`start` and `wait`: plan here, compute as one sequence of the batch scheduler, wait for it."""
        return self.wait(self.start(request, on_text, cancel, digests))

    def close(self, timeout: float = 60) -> None:
        """Stop: a running check stops at its next decode, waiting completions are cancelled and running ones end
        (cancelled) at their next step; pending prefix deposits finish."""
        self._stopping.set()
        if native.compute_thread() == self._compute:  # (bound methods compare by object and function)
            native.set_compute_thread(self._previous_runner)
        stopped = self.scheduler.close(timeout)
        if self._checks is not None:
            self._checks.join(timeout)
        if stopped and self.scheduler.core is not None:  # never free a context a live thread may still use
            self.scheduler.core.ctx.close()
        self.depositor.close()
