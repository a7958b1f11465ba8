"""Whether the serving engine may decode several completions in one call here, decided by measurement on this
machine, per fingerprint and profile, before it does (the `batch` attestation).

The check serves a probe set of KVGRAFT_SERVING_MAX_SEQS completions (prompts of 9 to 270 tokens, several chunks
of the grid and past the 256 cells where ggml's flash attention changes path; greedy and sampled; 4 to 12 tokens
each, so they leave at different steps) each alone, twice (the control: serving alone must be reproducible here),
then together in one multi-sequence context under four schedules: every prompt prefilled first and all decoding
together (the full batch, shrinking as they leave), staggered joins (one every third step, prefill chunks
interleaved with the others' decode steps), all at once in reverse order in the slots the earlier runs left
(their stale cells masked), and staggered again with each prompt's first chunk restored from the state its alone
run captured (a stored prefix set into a slot while others decode). Each completion's tokens and the SHA-256 of
every position's logits are compared with its alone run, every state captured beside others with the
one-sequence context's bytes (what a block stores), and the check counts how many positions were decoded beside
others; batching is used only if every one is equal.

It first tries decode calls as they come (the alone run is the one-sequence context batching-off serving uses);
where that is not exact it tries pad rows (engine/batching.py: no ubatch of a single row, because ggml computes a
one-row matmul with other kernels than two rows or more for many weight types), with the alone run then served in
the batching context and the response saying so. A verdict recorded on this host for the same fingerprint and
batch profile is reused (the check runs once per deployment and host, not per process).
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import structlog

from engine.batching import VIEW_PAD, BatchCore, SequenceJob, SequenceResult, budget_levels
from engine.errors import EngineError
from engine.graft import GraftEngine
from engine.logits import Divergence, LogitsRows, compare, merge
from engine.prepare import file_type_name, weight_tensor_types
from engine.sampling import SamplingParams
from engine.stepcost import StepCosts, measure_step_costs
from store.repository import latest_attestation, record_attestation
from workers.flywheel.prompts import recurrence_query, style_for, tokens_of
from workers.gate_records import divergence_fields
from workers.runtime import Runtime
from workers.serving.exactness import PROBE_TEXT

log = structlog.get_logger(__name__)

CHECK_VERSION = "batch-check-v9"  # in the batch profile: a verdict of another version is not reused
PROBE_LENGTHS = (9, 70, 270, 37, 130, 20, 100, 45)
PROBE_TOKENS = (12, 6, 10, 8, 4, 12, 6, 10)


@dataclass(frozen=True)
class BatchCheck:
    max_seqs: int
    pad_to: int  # the fewest rows of one decode ubatch the check ran with (2: pad rows join a lone one)
    reproducible: bool  # each probe served alone twice gives the same tokens and digests
    sequences: int  # completions compared (over the schedules)
    tokens_equal: int
    positions: int
    positions_equal: int
    positions_batched: int  # of those, decoded in a call with other completions
    batched_with: int  # the most completions one decode call held
    ms: float
    divergence: Divergence | None = None  # alone vs batched over every compared position
    failure: str | None = None  # the check could not run (e.g. a state that cannot be transcoded)
    alone_equals_unbatched: bool | None = None  # with pad rows: alone equals the one-sequence context's result
    tried: tuple[str, ...] = ()  # earlier trials (pad 1) that were not exact
    states: int = 0  # prefix states captured beside others
    states_equal: int = 0  # of those, byte-equal to the one-sequence context's capture (what blocks store)
    first_rows_equal: bool = True  # every prompt's first generated position equals the one-sequence context's
    # grafts (a captured state restored, a few query tokens fed in one call keeping every row, a greedy answer:
    # a recurrence question) decoded together, against each grafted alone in a one-sequence context: the path the
    # graft check attests. Only without pad rows: with them a lone graft would not compute what was attested
    grafts: int = 0
    grafts_equal: int = 0
    # the prefill step budget (KVGRAFT_SERVING_STEP_TOKENS; 0: not asked): the probes and a prompt longer than a
    # grid chunk (capturing at its boundary) joining while others decode, their chunks fed in sub-calls of at most
    # this many tokens, against the same completions alone (whole grid chunks)
    step_tokens: int = 0
    step_tokens_max: int = 0  # the budget grown with the decoding rows up to this (0: constant); each level tried
    budget_sequences: int = 0
    budget_equal: int = 0  # tokens, every position's digest and the first row's SHA-256 equal to alone
    budget_states: int = 0
    budget_states_equal: int = 0
    budget_split_chunks: int = 0  # grid chunks the trial fed in sub-calls (0: it proved nothing)
    # sub-call sizes serving can make (budget .. 2*budget-1: BatchCore._split) that the trial did not feed
    budget_sizes_missing: tuple[int, ...] = ()
    # decode steps split by KV length (KVGRAFT_SERVING_SPLIT_CELLS; 0: not asked): the probes and a prompt of one
    # and a half grid chunks (a third view length) decoding together, every step whose views differ split into
    # calls by length, against the same completions alone
    split_cells: int = 0
    split_sequences: int = 0
    split_equal: int = 0  # tokens, every position's digest and the first row's SHA-256 equal to alone
    split_steps: int = 0  # decode steps the trial split (0: it proved nothing)

    @property
    def exact(self) -> bool:
        return (self.failure is None and self.reproducible and self.positions == self.positions_equal
                and self.tokens_equal == self.sequences and self.batched_with >= 2 and self.positions_batched > 0
                and self.states == self.states_equal and self.first_rows_equal)

    @property
    def budget_exact(self) -> bool:
        """Serving may feed a joining prompt's chunks in sub-calls of `step_tokens` while others decode."""
        return (self.exact and self.step_tokens > 0 and self.budget_split_chunks > 0 and not self.budget_sizes_missing
                and self.budget_sequences == self.budget_equal > 0 and self.budget_states == self.budget_states_equal)

    @property
    def allowed_step_tokens(self) -> int:
        return self.step_tokens if self.budget_exact else 0

    @property
    def allowed_step_tokens_max(self) -> int:
        return self.step_tokens_max if self.budget_exact else 0

    @property
    def split_exact(self) -> bool:
        """Serving may split a decode step into calls by KV length."""
        return (self.exact and self.split_cells > 0 and self.split_steps > 0
                and self.split_sequences == self.split_equal > 0)

    @property
    def allowed_split_cells(self) -> int:
        return self.split_cells if self.split_exact else 0

    def split_summary(self) -> str:
        if not self.split_cells:
            return "no split by length asked"
        return (f"decode steps split by KV length: {self.split_equal}/{self.split_sequences} completions equal to "
                f"alone over {self.split_steps} split steps: "
                + ("used" if self.split_exact else "NOT exact, one decode call per step"))

    def budget_summary(self) -> str:
        if not self.step_tokens:
            return "no prefill step budget asked"
        levels = budget_levels(self.step_tokens, self.step_tokens_max)
        return (f"prefill step budget {self.step_tokens}"
                + (f" per decoding row up to {levels[-1]}" if len(levels) > 1 else "")
                + f": {self.budget_equal}/{self.budget_sequences} completions and "
                f"{self.budget_states_equal}/{self.budget_states} captured states fed in sub-calls "
                f"({self.budget_split_chunks} grid chunks split"
                + (f"; sub-calls of {', '.join(map(str, self.budget_sizes_missing))} tokens not tried"
                   if self.budget_sizes_missing else "; every sub-call size tried")
                + ") equal to alone: "
                + ("used" if self.budget_exact else "NOT exact, whole grid chunks are fed"))

    @property
    def grafts_exact(self) -> bool:
        """Graft workers may decode several questions' answers together (workers/queue/dispatch.py)."""
        return self.exact and self.pad_to == 1 and self.grafts > 0 and self.grafts_equal == self.grafts

    def summary(self) -> str:
        if self.failure:
            return f"batch check failed: {self.failure}"
        pads = "" if self.pad_to == 1 else (
            f" with pad rows (no ubatch of one row; alone {'equals' if self.alone_equals_unbatched else 'differs from'}"
            " a one-sequence context)")
        return ("; ".join(self.tried) + ("; " if self.tried else "") +
                f"batch check of {self.max_seqs} sequences{pads}: {self.positions_equal}/{self.positions} positions "
                f"({self.positions_batched} decoded beside others) and {self.tokens_equal}/{self.sequences} "
                f"completions equal to each served alone (at most {self.batched_with} per decode call; prompts "
                f"restored from states captured alone among them), {self.states_equal}/{self.states} captured "
                f"states equal to a one-sequence context's, first positions "
                f"{'equal' if self.first_rows_equal else 'NOT equal'} to it; alone "
                f"{'reproducible' if self.reproducible else 'NOT reproducible'}; "
                + (f"{self.grafts_equal}/{self.grafts} grafted answers decoded together equal to each alone in a "
                   "one-sequence context" if self.grafts else "grafts not batched (pad rows)")
                + (f"; {self.budget_summary()}" if self.step_tokens else "")
                + (f"; {self.split_summary()}" if self.split_cells else ""))


def _probe_tokens(engine: GraftEngine, n: int) -> list[int]:
    base: list[int] = []
    while len(base) < n:
        base += engine.tokenize(PROBE_TEXT, add_special=not base)
    return base


def probe_jobs(engine: GraftEngine, n: int) -> list[SequenceJob]:
    """The probe completions; each prompt longer than a chunk captures its state at the first chunk boundary."""
    room = engine.config.n_ctx - max(PROBE_TOKENS) - 1
    base = _probe_tokens(engine, max(PROBE_LENGTHS) + 2 * n)
    jobs = []
    for i in range(n):
        length = min(room, PROBE_LENGTHS[i % len(PROBE_LENGTHS)])
        tokens = tuple(base[:1] + base[1 + i:length + i])  # different prompts, each starting with BOS
        params = SamplingParams(max_tokens=PROBE_TOKENS[i % len(PROBE_TOKENS)], temperature=0.8 if i % 2 else 0.0,
                                top_k=40, seed=17 + i)
        c = engine.config.prefill_chunk
        jobs.append(SequenceJob(tokens=tokens, params=params, owner=f"probe-{i % 2}", digests=True,
                                keep_rows=True, captures=(c,) if len(tokens) > c else (), capture_query=c))
    return jobs


def graft_jobs(engine: GraftEngine, jobs: list[SequenceJob]) -> list[SequenceJob]:
    """Recurrence-shaped probes: each probe prompt captured in a fresh context (as a block is deposited), grafted,
    the recurrence query a graft worker feeds (workers/flywheel/prompts.py) fed after it in one call, a greedy
    answer."""
    query = tuple(tokens_of(engine, recurrence_query(style_for(engine))))
    out = []
    for job in jobs:
        if len(job.tokens) + len(query) + max(PROBE_TOKENS) >= engine.config.n_ctx:
            continue
        state = engine.capture(job.tokens, n_query=len(query))
        out.append(SequenceJob.grafted(state, query, replace(job.params, temperature=0.0), owner=job.owner,
                                       digests=job.digests, keep_rows=job.keep_rows))
    return out


def budget_jobs(engine: GraftEngine, jobs: list[SequenceJob], step_tokens: int, max_seqs: int,
                probes: bool = True) -> list[SequenceJob]:
    """The probes with a prompt of one and a half grid chunks second (capturing its state at the chunk boundary,
    greedy): it joins while the first decodes, so its chunks are fed in sub-calls, the capture among them; then
    one short prompt for each size the last sub-call of a chunk can have (2*budget + r tokens, r = 1 .. budget-1:
    sub-calls of budget and budget + r), each joining while others decode (the first decodes until the last has
    joined: _outlasting)."""
    c = engine.config.prefill_chunk
    room = engine.config.n_ctx - max(PROBE_TOKENS) - 1
    n = min(room, c + c // 2)
    base = _probe_tokens(engine, max(n, 3 * step_tokens + 1))
    long = SequenceJob(tokens=tuple(base[:n]), params=SamplingParams(max_tokens=6, seed=5),
                       owner="probe-1", digests=True, keep_rows=True, captures=(c,) if n > c else (), capture_query=c)
    sizes = [SequenceJob(tokens=tuple(base[r:r + 2 * step_tokens + r]), params=SamplingParams(max_tokens=4, seed=r),
                         owner=f"probe-size-{r}", digests=True, keep_rows=True)
             for r in range(1, step_tokens) if 2 * step_tokens + r <= min(room, c)]
    rest = [long, *sizes, *(jobs[1:] if probes else ())]
    return [_outlasting(engine, jobs[0], rest, step_tokens, max_seqs), *rest]


def _outlasting(engine: GraftEngine, first: SequenceJob, rest: list[SequenceJob], step_tokens: int,
                max_seqs: int) -> SequenceJob:
    """`first` decoding until the last of `rest` has joined and started its prefill (one joins every other step,
    or, with fewer free slots than jobs, when a slot frees: each job's sub-calls and tokens), so that every chunk
    of theirs starts beside a decoder; at most as long as the context holds."""
    steps = [-(-len(j.tokens) // step_tokens) + j.params.max_tokens + 1 for j in rest]
    need = max(2 * len(rest), -(-sum(steps) // max(1, max_seqs - 1))) + max(steps, default=0) + 8
    room = engine.config.n_ctx - len(first.tokens) - 1
    return replace(first, params=replace(first.params, max_tokens=max(first.params.max_tokens, min(need, room))))


def _budget_trial(engine: GraftEngine, jobs: list[SequenceJob], max_seqs: int, pad_to: int,
                  step_tokens: int, step_tokens_max: int = 0) -> dict[str, Any]:
    """Each budget level's trial (_level_trial: the budget serving uses with that many rows decoding, fixed), the
    probe completions in the first only; the counts summed, the sizes missing over every level's."""
    totals: Counter[str] = Counter()
    missing: set[int] = set()
    for i, level in enumerate(budget_levels(step_tokens, step_tokens_max)):
        trial = _level_trial(engine, budget_jobs(engine, jobs, level, max_seqs, probes=i == 0), max_seqs, pad_to, level)
        missing |= set(trial.pop("budget_sizes_missing"))
        totals.update(trial)
    return {**totals, "step_tokens_max": step_tokens_max, "budget_sizes_missing": tuple(sorted(missing))}


def _level_trial(engine: GraftEngine, probes: list[SequenceJob], max_seqs: int, pad_to: int,
                 step_tokens: int) -> dict[str, Any]:
    """Each budget probe alone (as the trial's alone: a one-sequence context without pad rows, else the batch
    context with them) against all of them joining one after another, prompts fed in sub-calls of `step_tokens`
    while others decode: tokens, every position's digest, the first row's SHA-256 and the captured states."""
    with engine.open_context() as ctx:
        alone = [BatchCore(engine, ctx).run_all([(0, j)])[0] for j in probes] if pad_to == 1 else []
    with engine.open_batch_context(max_seqs) as ctx:
        if pad_to > 1:
            alone = [BatchCore(engine, ctx, pad_to=pad_to).run_all([(0, j)])[0] for j in probes]
        core = BatchCore(engine, ctx, pad_to=pad_to, step_tokens=step_tokens)
        budgeted = core.run_all([(max(0, 2 * i - 1), j) for i, j in enumerate(probes)])
    states = states_equal = 0
    for ref, got in zip(alone, budgeted, strict=True):
        for (pa, a), (pb, b) in zip(ref.captured, got.captured, strict=False):
            states += 1
            states_equal += pa == pb and a.payload == b.payload
        states += abs(len(ref.captured) - len(got.captured))  # a capture made on one side only is unequal
    return {"budget_sequences": len(probes),
            "budget_equal": sum(_equal(a, b) for a, b in zip(alone, budgeted, strict=True)),
            "budget_states": states, "budget_states_equal": states_equal, "budget_split_chunks": core.split_chunks,
            "budget_sizes_missing": tuple(sorted(k for k in sub_call_sizes(step_tokens, engine.config.prefill_chunk)
                                                 if not core.sub_call_sizes[k]))}


def split_jobs(engine: GraftEngine, jobs: list[SequenceJob]) -> list[SequenceJob]:
    """A prompt two views longer than the longest probe (greedy; at least one and a half grid chunks) first, then
    the probes once it decodes: decoding together, their rows' views fall in two or three lengths."""
    c = engine.config.prefill_chunk
    room = engine.config.n_ctx - max(PROBE_TOKENS) - 1
    n = min(room, max(c + c // 2, max(PROBE_LENGTHS) + 2 * VIEW_PAD))
    long = SequenceJob(tokens=tuple(_probe_tokens(engine, n)[:n]), params=SamplingParams(max_tokens=40, seed=7),
                       owner="probe-long", digests=True, keep_rows=True)
    return [long, *jobs]


def _split_trial(engine: GraftEngine, jobs: list[SequenceJob], max_seqs: int, pad_to: int,
                 step_tokens: int, step_tokens_max: int, split_cells: int) -> dict[str, Any]:
    """Each split probe alone (as the budget trial's alone) against all of them decoding together with every step
    whose views differ split by length, twice: with split_cells 1 (any saving splits: the finest partitions) and
    with serving's own value (its coarser groups, short rows beside a long one up to its view), prompts fed with
    the step budget serving uses. Counted over both runs; a split step in either proves the split was tried."""
    probes = split_jobs(engine, jobs)
    with engine.open_context() as ctx:
        alone = [BatchCore(engine, ctx).run_all([(0, j)])[0] for j in probes] if pad_to == 1 else []
    equal = steps = 0
    with engine.open_batch_context(max_seqs) as ctx:
        if pad_to > 1:
            alone = [BatchCore(engine, ctx, pad_to=pad_to).run_all([(0, j)])[0] for j in probes]
        for cells in sorted({1, split_cells}):
            core = BatchCore(engine, ctx, pad_to=pad_to, step_tokens=step_tokens, step_tokens_max=step_tokens_max,
                             split_cells=cells)
            first = len(engine.grid(0, len(probes[0].tokens), 0))  # the others join once the long one decodes
            split = core.run_all([(0, probes[0]), *((first + i, j) for i, j in enumerate(probes[1:]))])
            equal += sum(_equal(a, b) for a, b in zip(alone, split, strict=True))
            steps += core.split_steps
    return {"split_cells": split_cells, "split_sequences": len(probes) * len({1, split_cells}),
            "split_equal": equal, "split_steps": steps}


def sub_call_sizes(step_tokens: int, chunk: int) -> set[int]:
    """The sizes of the sub-calls BatchCore._split can make of chunks up to `chunk` tokens: the budget, and the
    budget plus a remainder (a chunk of at least 2 * budget tokens, the remainder joining the last sub-call)."""
    return {step_tokens + n % step_tokens for n in range(2 * step_tokens, chunk + 1)}


def _key(r: SequenceResult) -> tuple[tuple[int, ...], tuple[str, ...]]:
    return r.generated.tokens, r.generated.digests


def _equal(a: SequenceResult, b: SequenceResult) -> bool:
    """Tokens, every position's digest and the first row's SHA-256 the same."""
    return _key(a) == _key(b) and a.first_logits_sha256 == b.first_logits_sha256


def _trial(engine: GraftEngine, jobs: list[SequenceJob], max_seqs: int, pad_to: int,
           unbatched: list[SequenceResult], grafts: list[SequenceJob],
           grafted_alone: list[SequenceResult]) -> BatchCheck:
    t0 = time.perf_counter()
    captured = {i: r.captured[0][1] for i, r in enumerate(unbatched) if r.captured}
    restoring = [replace(job, restore=captured[i], captures=()) if i in captured else job
                 for i, job in enumerate(jobs)]
    with engine.open_batch_context(max_seqs) as ctx:
        alone_core = BatchCore(engine, ctx, pad_to=pad_to)
        first = unbatched if pad_to == 1 else [alone_core.run_all([(0, job)])[0] for job in jobs]
        control = [alone_core.run_all([(0, job)])[0] for job in jobs]
        full = BatchCore(engine, ctx, pad_to=pad_to, prefill_per_step=10**6).run_all([(0, j) for j in jobs])
        staggered = BatchCore(engine, ctx, pad_to=pad_to).run_all([(3 * i, job) for i, job in enumerate(jobs)])
        reverse = BatchCore(engine, ctx, pad_to=pad_to).run_all([(0, job) for job in reversed(jobs)])[::-1]
        restored = BatchCore(engine, ctx, pad_to=pad_to).run_all([(2 * i, j) for i, j in enumerate(restoring)])
        grafted = (BatchCore(engine, ctx).run_all([(i % 2, j) for i, j in enumerate(grafts)]) if pad_to == 1
                   else [])
    reproducible = all(_key(a) == _key(b) for a, b in zip(first, control, strict=True))
    sequences = tokens_equal = positions = positions_equal = batched = states = states_equal = 0
    divergences = []
    for run in (full, staggered, reverse, restored):
        for i, (ref, got) in enumerate(zip(first, run, strict=True)):
            sequences += 1
            tokens_equal += ref.generated.tokens == got.generated.tokens
            positions += len(ref.generated.digests)
            pairs = list(zip(ref.generated.digests, got.generated.digests, strict=False))
            positions_equal += sum(a == b for a, b in pairs)
            batched += sum(1 for n in got.call_rows[:max(0, len(pairs) - 1)] if n > 1)
            n = min(len(ref.generated.rows), len(got.generated.rows))
            divergences.append(compare(LogitsRows(0, np.stack(ref.generated.rows[:n])),
                                       LogitsRows(0, np.stack(got.generated.rows[:n]))))
            if i in captured and got.captured:
                states += 1
                states_equal += got.captured[0][1].payload == captured[i].payload
    grafts_equal = sum(_equal(a, b) for a, b in zip(grafted_alone, grafted, strict=False))
    same_as_unbatched = all(_key(a) == _key(b) for a, b in zip(first, unbatched, strict=True))
    first_rows = all(a.generated.digests[:1] == b.generated.digests[:1] for a, b in zip(first, unbatched, strict=True))
    return BatchCheck(max_seqs, pad_to, reproducible, sequences, tokens_equal, positions, positions_equal, batched,
                      max(r.batched_with for r in (*full, *staggered, *reverse, *restored)),
                      round((time.perf_counter() - t0) * 1000, 1), merge(divergences),
                      alone_equals_unbatched=same_as_unbatched, states=states, states_equal=states_equal,
                      first_rows_equal=first_rows, grafts=len(grafted), grafts_equal=grafts_equal)


def batch_check(engine: GraftEngine, max_seqs: int, step_tokens: int = 0, split_cells: int = 0,
                step_tokens_max: int = 0) -> BatchCheck:
    """Pad 1 (decode calls as they come) first; where that is not exact, pad 2 (no ubatch of a single row). Then,
    where one is exact and a step budget is asked, prompts fed in sub-calls of that budget beside decoders; and
    where a split by length is asked, decode steps split by KV length (with the budget allowed)."""
    t0 = time.perf_counter()
    jobs = probe_jobs(engine, max_seqs)
    tried: list[str] = []
    try:
        with engine.open_context() as ctx:
            unbatched_core = BatchCore(engine, ctx)
            unbatched = [unbatched_core.run_all([(0, job)])[0] for job in jobs]
            grafts = graft_jobs(engine, jobs)
            grafted_alone = [unbatched_core.run_all([(0, job)])[0] for job in grafts]
        for pad_to in (1, 2):
            check = _trial(engine, jobs, max_seqs, pad_to, unbatched, grafts, grafted_alone)
            if check.exact:
                break
            if pad_to == 1:
                tried.append(f"without pad rows: {check.positions_equal}/{check.positions} positions equal")
        if check.exact and step_tokens > 0:
            check = replace(check, step_tokens=step_tokens,
                            **_budget_trial(engine, jobs, max_seqs, check.pad_to, step_tokens, step_tokens_max))
        if check.exact and split_cells > 0:
            check = replace(check, **_split_trial(engine, jobs, max_seqs, check.pad_to, check.allowed_step_tokens,
                                                  check.allowed_step_tokens_max, split_cells))
    except EngineError as exc:
        log.warning("serve.batch_check_failed", error=str(exc))
        return BatchCheck(max_seqs, 1, False, 0, 0, 0, 0, 0, 0, round((time.perf_counter() - t0) * 1000, 1),
                          failure=f"{type(exc).__name__}: {exc}")
    check = replace(check, ms=round((time.perf_counter() - t0) * 1000, 1), tried=tuple(tried))
    log.info("serve.batch_checked", exact=check.exact, max_seqs=max_seqs, pad_to=check.pad_to,
             positions=check.positions, positions_equal=check.positions_equal,
             positions_batched=check.positions_batched, grafts=check.grafts, grafts_equal=check.grafts_equal,
             step_tokens=check.step_tokens, budget_exact=check.budget_exact, split_cells=check.split_cells,
             split_exact=check.split_exact, split_steps=check.split_steps, ms=check.ms)
    return check


@dataclass(frozen=True)
class BatchPolicy:
    max_seqs: int  # sequences decoded together (1: batching off)
    reason: str | None  # why batching is off
    attestation_id: int | None
    pad_to: int = 1  # 2: pad rows keep every decode ubatch at two rows or more
    grafts: bool = False  # several questions' grafted answers may be decoded together (BatchCheck.grafts_exact)
    # the prefill step budget the check allowed (BatchCore.step_tokens; 0: whole grid chunks) and, where one was
    # asked and not allowed, why
    step_tokens: int = 0
    step_reason: str | None = None
    step_tokens_max: int = 0  # the budget per decoding row up to this (0: constant), where the check allowed it
    # decode steps split by KV length (BatchCore.split_cells; 0: one call per step) and, where asked and not
    # allowed, why
    split_cells: int = 0
    split_reason: str | None = None
    # KVGRAFT_SERVING_STEP_RATIO (0: the budget as set) and the step costs measured for it at this start
    step_ratio: float = 0.0
    step_costs: StepCosts | None = field(default=None, compare=False)

    @property
    def graft_reason(self) -> str | None:
        """Why graft workers answer one question at a time here, or None when they may batch."""
        if self.grafts:
            return None
        if self.max_seqs <= 1:
            return self.reason
        return ("batched grafts were not all equal to each grafted alone in a one-sequence context (the path the "
                f"graft check attests){' (pad rows needed)' if self.pad_to > 1 else ''} "
                f"(attestation {self.attestation_id})")

    def as_dict(self) -> dict[str, object]:
        """What a team's response shows (no attestation id: ids count every team's attestations)."""
        return {"batching": "on" if self.max_seqs > 1 else "off", "reason": self.reason,
                "max_seqs": self.max_seqs, "pad_rows": self.pad_to > 1, "prefill_step_tokens": self.step_tokens,
                "prefill_step_tokens_max": self.step_tokens_max, "prefill_step_ratio": self.step_ratio,
                "split_cells": self.split_cells}


def weights_of(engine: GraftEngine) -> dict[str, object]:
    """The weight types a verdict was decided for (recorded in the `batch` attestation's profile): the file's type
    and its weight matrices per ggml type, which decide the matmul kernels a row meets (docs/ENGINE.md)."""
    return {"file_type": file_type_name(engine.model), "tensors": weight_tensor_types(engine.model.path)}


def step_budget(engine: GraftEngine, step_tokens: int) -> int:
    """The budget that changes anything: below the grid's chunk (0 otherwise: every chunk fits one step)."""
    return step_tokens if 0 < step_tokens < engine.config.prefill_chunk else 0


def measured_sizes(step_tokens: int) -> list[int]:
    """The budgets a measured choice picks from: `step_tokens` and its halvings down to 4 (or `step_tokens` alone
    where it is 4 or less)."""
    sizes, size = [], step_tokens
    while size >= min(4, step_tokens) and size > 0:
        sizes.append(size)
        size //= 2
    return sorted(sizes)


def measured_budget(engine: GraftEngine, step_tokens: int, step_ratio: float) -> tuple[int, StepCosts | None]:
    """The budget per decoding row chosen from this machine's measured step costs: the largest of `step_tokens`
    and its halvings whose step beside a decoder stays within `step_ratio` times the decoder's step alone.
    `step_tokens` unmeasured where it is the one candidate, or where the measurement cannot run here (the check
    still decides whichever budget it is asked about)."""
    sizes = [s for s in measured_sizes(step_tokens) if 2 * s < min(engine.config.n_ctx, engine.config.n_batch)]
    if len(sizes) < 2:
        return step_tokens, None
    try:
        costs = measure_step_costs(engine, sizes)
        chosen = costs.budget(step_ratio)
    except (EngineError, ArithmeticError) as exc:
        log.warning("serve.step_budget_measure_failed", asked=step_tokens, error=f"{type(exc).__name__}: {exc}")
        return step_tokens, None
    log.info("serve.step_budget_measured", asked=step_tokens, ratio=step_ratio, chosen=chosen,
             decode_ms=costs.decode_ms, sub_call_ms=costs.sub_call_ms, measure_ms=costs.measure_ms)
    return chosen, costs


def _budget_max(engine: GraftEngine, max_seqs: int, budget: int, step_tokens_max: int) -> int:
    """The top level of the budget grown with the decoding rows (0: constant): levels past half the grid's chunk
    split nothing, and past max_seqs - 1 decoders none is used."""
    levels = [b for b in budget_levels(budget, step_tokens_max)
              if 2 * b <= engine.config.prefill_chunk][:max(1, max_seqs - 1)]
    return levels[-1] if len(levels) > 1 else 0


def batching_policy(rt: Runtime, engine: GraftEngine, max_seqs: int, step_tokens: int = 0,
                    split_cells: int = 0, step_tokens_max: int = 0, step_ratio: float = 0.0) -> BatchPolicy:
    """Batching of up to `max_seqs` sequences where this host's `batch` attestation (recorded now if there is
    none) found it exact; else one completion at a time, saying why. With a prefill step budget
    (KVGRAFT_SERVING_STEP_TOKENS), the budget where the same check found sub-calls exact (else 0, saying why); with
    `step_ratio` (KVGRAFT_SERVING_STEP_RATIO) that budget is the most a step may take, and the one the check is
    asked about is chosen from step costs measured on this host before the check (measured_budget; recorded with
    the verdict and reused with it, so a restart neither measures again nor meets another verdict); with a split
    by length (KVGRAFT_SERVING_SPLIT_CELLS), the split where the check found it exact (else 0, saying why)."""
    if max_seqs <= 1:
        return BatchPolicy(1, "KVGRAFT_SERVING_MAX_SEQS is 1", None)
    budget = step_budget(engine, step_tokens)
    ratio = step_ratio if budget else 0.0
    budget_max = _budget_max(engine, max_seqs, budget, step_tokens_max)
    costs: StepCosts | None = None
    # the budget asked is part of what the check measures: another budget, another verdict; a measured budget is
    # keyed by what it is chosen from (the most a step may take, its growth and the ratio)
    asked = (f"+step-{budget}-{step_tokens_max}-ratio-{ratio!r}" if ratio else
             (f"+step-{budget}" if budget else "") + (f"-{budget_max}" if budget_max else ""))
    profile = engine.batch_profile(max_seqs, check=CHECK_VERSION + asked
                                   + (f"+split2-{split_cells}" if split_cells else ""))
    host = socket.gethostname()
    with rt.session() as s:
        known = latest_attestation(s, block_id=None, fingerprint=engine.fingerprint.id, profile_id=profile.id,
                                   kind="batch", host=host)
        if known is not None:
            exact, attestation_id, reason = known.status == "attested", known.id, known.reason
            recorded = known.profile or {}
            pad_to = int(recorded.get("pad_to", 1))
            grafts = bool(recorded.get("grafts", False))
            allowed = int(recorded.get("step_tokens", 0))
            allowed_max = int(recorded.get("step_tokens_max", 0))
            step_reason = recorded.get("step_tokens_reason")
            split = int(recorded.get("split_cells", 0))
            split_reason = recorded.get("split_cells_reason")
            budget = int(recorded.get("step_tokens_asked", budget))  # what the check was asked
            if ratio and recorded.get("step_costs"):
                costs = StepCosts.from_dict(recorded["step_costs"])
    if known is None:
        if ratio:
            budget, costs = measured_budget(engine, budget, ratio)
            budget_max = _budget_max(engine, max_seqs, budget, step_tokens_max)
        check = batch_check(engine, max_seqs, budget, split_cells, budget_max)
        exact, reason, pad_to, grafts = check.exact, check.summary(), check.pad_to, check.grafts_exact
        allowed, allowed_max = check.allowed_step_tokens, check.allowed_step_tokens_max
        step_reason = None if allowed or not budget else f"step_budget_not_exact: {check.budget_summary()}"
        split = check.allowed_split_cells
        split_reason = None if split or not split_cells else f"split_not_exact: {check.split_summary()}"
        if check.divergence is None:  # it could not run: nothing measured to record
            return BatchPolicy(1, f"batch_check_failed: {check.failure}", None)
        with rt.session() as s:
            attestation_id = record_attestation(
                s, kind="batch", block_id=None, probe_digest=None, fingerprint=engine.fingerprint.id,
                profile={**profile.as_dict(), "pad_to": check.pad_to, "grafts": check.grafts_exact,
                         "weights": weights_of(engine), "step_tokens_asked": budget, "step_tokens": allowed,
                         "step_tokens_max_asked": budget_max, "step_tokens_max": allowed_max,
                         "step_tokens_reason": step_reason, "split_cells_asked": split_cells,
                         "step_tokens_setting": step_tokens, "step_ratio": ratio,
                         "step_costs": costs.as_dict() if costs else None,
                         "split_cells": split, "split_cells_reason": split_reason},
                profile_id=profile.id, host=host,
                status="attested" if check.exact else "functional", floor_equal=check.reproducible,
                continuation_equal=None, recapture_equal=None, reason=reason,
                **{**divergence_fields(check.divergence), "byte_exact": check.exact},
                timings={"batch_check_ms": check.ms}).id
    if exact:
        if step_reason:
            log.warning("serve.step_budget_refused", step_tokens=budget, reason=step_reason)
        if split_reason:
            log.warning("serve.split_refused", split_cells=split_cells, reason=split_reason)
        return BatchPolicy(max_seqs, None, attestation_id, pad_to, grafts, allowed, step_reason, allowed_max,
                           split, split_reason, ratio, costs)
    return BatchPolicy(1, f"batch_not_exact: {reason}", attestation_id, step_ratio=ratio, step_costs=costs)
