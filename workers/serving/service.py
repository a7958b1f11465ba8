"""The serving engine of one API process: the model loaded with the prompt-cache grid, one completion at a time
(two llama.cpp computations on the same cores slow each other), all of them on one long-lived thread (see
`Serving`), admission (a team may have
KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT completions waiting or running, the process KVGRAFT_SERVING_QUEUE_MAX; more are
refused at once rather than queued without bound), the background prefix depositor, and the chat format
(workers/serving/chat.py)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from engine.graft import EngineConfig, GraftEngine
from engine.sampling import OnText
from workers.runtime import Runtime
from workers.serving.chat import ChatPrompt, chat_prompt
from workers.serving.completion import Completion, CompletionRequest, Resident, complete
from workers.serving.prompt_cache import PrefixDepositor


class ServingBusy(Exception):
    """Too many completions already waiting or running, for the team or for this process; retry later."""

    def __init__(self, scope: str, in_flight: int, limit: int, retry_after_s: int) -> None:
        super().__init__(f"{'the team has' if scope == 'team' else 'this server has'} {in_flight} completions "
                         f"waiting or running, its limit is {limit}; retry in {retry_after_s} s")
        self.scope, self.in_flight, self.limit, self.retry_after_s = scope, in_flight, limit, retry_after_s


class Serving:
    """Every llama.cpp computation of the serving engine (load, composition check, completions) runs on one
    thread of its own, whichever request thread asked. With an OpenMP build each thread that computes gets its
    own OpenMP team, and once the process manages more OpenMP threads than there are cores, libgomp stops spinning
    at barriers and sleeps instead: measured on 2 cores, a 15-token prefill at 2,221 tokens of context took ~80 ms
    from one thread and 108-135 ms once a second thread had computed (docs/BENCHMARKS.md)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._lock = threading.Lock()
        self._compute = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kvgraft-serving-engine")
        self._engine: GraftEngine | None = None
        self._resident = Resident()  # the context kept between requests (engine thread only)
        self.depositor = PrefixDepositor(rt)
        self._admitted: Counter[int] = Counter()
        self._admit_lock = threading.Lock()

    def reserve(self, team_id: int) -> None:
        """Admit one completion of the team now (before any work), or raise ServingBusy; `release` when done."""
        s = self.rt.settings
        with self._admit_lock:
            total = sum(self._admitted.values())
            if self._admitted[team_id] >= s.serving_team_max_in_flight:
                raise ServingBusy("team", self._admitted[team_id], s.serving_team_max_in_flight,
                                  s.busy_retry_after_s)
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
                s = self.rt.settings
                threads = {"threads": s.threads} if s.threads else {}
                self._engine = self._compute.submit(self.rt.engine, s.model, EngineConfig(
                    n_ctx=s.window_tokens, prefill_chunk=s.prompt_chunk_tokens, flash_attn=s.serving_flash_attn,
                    **threads)).result()
            return self._engine

    def tokens(self, text: str) -> tuple[int, ...]:
        return tuple(self.engine().tokenize(text, add_special=True, parse_special=False))

    def chat(self, messages: Sequence[tuple[str, str]]) -> ChatPrompt:
        return chat_prompt(self.engine(), messages)

    def complete(self, request: CompletionRequest, on_text: OnText | None = None) -> Completion:
        """Run one completion on the engine's thread (in arrival order, one at a time) and wait for it."""
        engine = self.engine()
        return self._compute.submit(complete, self.rt, engine, request, self.depositor, on_text,
                                    self._resident).result()

    def close(self) -> None:
        self._compute.shutdown(wait=True)
        self._resident.close()
        self.depositor.close()
