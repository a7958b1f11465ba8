"""Continuous batching: many sequences in one context, one llama_decode call per step over all that are decoding,
each sequence's logits byte-identical to the same sequence computed alone.

`BatchCore` holds the active sequences of one context (a KV stream per sequence: `kv_unified` off) and advances
them a step at a time: a sequence joins between steps (its restored prefix set into its own sequence, or a slot
that still holds the owner's prefix truncated to it), its prompt is prefilled on the absolute grid in its own
decode calls, one chunk per step, interleaved with the others' decode steps (with a step budget, `step_tokens`, a
chunk that starts while others decode is fed in sub-calls of that many tokens, the last taking the remainder,
one per step, where the `batch` check found that partition exact); then it decodes in the shared call (with
`split_cells`, a step whose sequences' KV lengths differ enough is split into calls of similar lengths, where the
check found that exact).
A finished or cancelled sequence leaves and frees its slot, which keeps its prompt's cells for the owner's next
request (the resident prefix: only the cells it computed). Why these rules keep each sequence exact, with the
measurements, is in docs/ENGINE.md: with a KV stream per sequence and decode rows only in shared calls, a row's
result does not depend on what shares the call, except where a kernel computes a lone row differently (ggml's
one-row matmul path, flash attention's split-KV path): there `pad_to=2` joins a pad row of a free neighbouring
slot to every lone row. A prefill chunk beside decode rows would be split by llama.cpp into ubatches that change
the joining sequence's grid, so it is never batched with them. The `batch` check (workers/serving) decides which
way a machine and model are exact, if any.

`BatchScheduler` is the one compute thread of a process: it runs queued calls (model load, checks) between steps
and drives a BatchCore, admitting waiting jobs fairly across owners (the owner with the fewest active sequences
first, and no owner past `owner_max_seqs`, so another owner finds a slot whenever that is below the slots).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog

from engine.errors import DecodeError, EngineError, StateRestoreError
from engine.graft import GraftEngine, KVSnapshot
from engine.native import DecodeRow, LlamaContext
from engine.sampling import Generated, Generation, OnText, SamplingParams, check_params

log = structlog.get_logger(__name__)
T = TypeVar("T")
VIEW_PAD = 256  # llama.cpp pads a ubatch's KV view to a multiple of this many cells (docs/ENGINE.md)


def view_of(cells: int) -> int:
    """The KV view llama.cpp gives a row whose stream holds `cells` cells after it (padded to VIEW_PAD)."""
    return -(-cells // VIEW_PAD) * VIEW_PAD


@dataclass(frozen=True)
class SequenceJob:
    tokens: tuple[int, ...]  # the whole prompt
    params: SamplingParams
    owner: str = ""  # the fairness and residency key (a team)
    restore: KVSnapshot | None = None  # the state of tokens[:restore.n_tokens], grafted first
    resident_ok: bool = False  # a slot still holding the owner's tokens[:restore.n_tokens] may be truncated to them
    captures: tuple[int, ...] = ()  # prompt positions after which the state is captured (ascending)
    capture_query: int = 8  # the query size of the captured snapshots' numerics profile
    # the tokens after the restored prefix fed in one decode call keeping every row's logits (the query class the
    # graft check attests: a recurrence question's feed), instead of on the grid keeping the last row only
    query_feed: bool = False
    on_text: OnText | None = None
    logprobs: int | None = None
    digests: bool = False  # keep the SHA-256 of every generated position's logits
    keep_rows: bool = False  # and the rows (the batch check measures how far a differing one is)
    cancel: threading.Event | None = None  # set: the sequence stops before its next step

    @classmethod
    def grafted(cls, snapshot: KVSnapshot, query: tuple[int, ...], params: SamplingParams, **extra: Any) -> SequenceJob:
        """A graft: `snapshot` restored, `query` fed after it in one call keeping every row, then generation."""
        return cls(tokens=snapshot.tokens + query, params=params, restore=snapshot, query_feed=True, **extra)


@dataclass(frozen=True)
class SequenceResult:
    generated: Generated
    first_logits_sha256: str
    captured: tuple[tuple[int, KVSnapshot], ...]  # (prompt position, state there) of each capture made
    reused: bool  # a slot holding the owner's prefix was truncated to it instead of restoring the block
    slot: int
    call_rows: tuple[int, ...]  # the sequences of each decode call it was in, step by step
    steps_after_cancel: int  # calls computed for it after its cancel event was set (at most the one in flight)
    timings_ms: dict[str, float] = field(default_factory=dict)  # queued, restore, prefill, decode
    restored_tokens: int = 0  # the prompt's tokens restored or reused, not prefilled (0 when a restore was refused)

    @property
    def batched_with(self) -> int:
        """The most sequences of one decode call this one was part of (0: it decoded nothing)."""
        return max(self.call_rows, default=0)


@dataclass
class _Seq:
    job: SequenceJob
    future: Future[SequenceResult] | None
    slot: int
    gen: Generation
    cuts: list[tuple[int, int, bool, bool]]  # prefill calls left: (start, end, capture after, last of the prompt)
    reused: bool
    pos: int
    t_join: float
    queued_ms: float
    restore_ms: float
    restored: int = 0  # prompt tokens restored or reused (0: the whole prompt prefilled)
    filled: int = 0  # positions the sequence's cells hold
    next_token: int | None = None
    first_sha: str = ""
    captured: list[tuple[int, KVSnapshot]] = field(default_factory=list)
    call_rows: list[int] = field(default_factory=list)  # real rows of each decode call it was in
    after_cancel: int = 0
    t_prefilled: float = 0.0
    split_until: int = 0  # the end of the chunk being fed in sub-calls (its pieces are not split again)


def _prefill_cuts(engine: GraftEngine, start: int, n: int, captures: tuple[int, ...]) -> list[tuple[int, int, bool,
                                                                                                       bool]]:
    """The decode calls of the prompt after `start`: on the absolute grid, split at each capture."""
    cuts: list[tuple[int, int, bool, bool]] = []
    pos = start
    for end in [*(b for b in captures if start < b < n), n]:
        grid = engine.grid(pos, end - pos, 0)
        cuts += [(a, b, b == end and end != n, b == n) for a, b in grid]
        pos = end
    return cuts


def budget_levels(step_tokens: int, step_tokens_max: int = 0) -> list[int]:
    """The step budgets a BatchCore uses, by the rows decoding (the k-th for k rows, the last for more):
    step_tokens x k up to step_tokens_max (one level where that is 0 or below step_tokens; none without a budget)."""
    if step_tokens <= 0:
        return []
    return [step_tokens * k for k in range(1, max(1, step_tokens_max // step_tokens) + 1)]


class BatchCore:
    """The active sequences of one context, advanced by `step()` (from one thread only)."""

    def __init__(self, engine: GraftEngine, ctx: LlamaContext, *, pad_to: int = 1, prefill_per_step: int = 1,
                 fill_gaps: bool = True, step_tokens: int = 0, step_tokens_max: int = 0,
                 split_cells: int = 0) -> None:
        if pad_to not in (1, 2):
            raise ValueError(f"pad_to must be 1 or 2, not {pad_to}")
        self.engine, self.ctx = engine, ctx
        self.max_seqs = ctx.config.n_seq_max
        # 2: no ubatch of a decode call holds a single row (a pad row of a free slot joins it). ggml computes a
        # one-row matmul with its own dot products and two rows or more with llamafile's tinyBLAS (F32, F16, BF16,
        # Q8_0, Q4_0, ... weights): another summation order, so alone and batched would differ (docs/ENGINE.md)
        self.pad_to = pad_to
        if pad_to > 1 and self.max_seqs < 2:
            raise ValueError("pad rows need a context of two sequences or more")
        self.prefill_per_step = prefill_per_step  # prefill chunks per step (each its own call)
        if step_tokens < 0:
            raise ValueError(f"step_tokens must be 0 (whole grid chunks) or positive, not {step_tokens}")
        # the prefill budget of a step while others decode (KVGRAFT_SERVING_STEP_TOKENS; 0: whole grid chunks): a
        # grid chunk that starts while a sequence decodes is fed in sub-calls of this many tokens (from the chunk's
        # start; the last takes the remainder, so under twice this), one per step, so a decoder waits for at most
        # one of them per step. Only where the `batch` check found that partition byte-equal to the whole chunk's
        # call (docs/ENGINE.md)
        self.step_tokens = step_tokens
        # KVGRAFT_SERVING_STEP_TOKENS_MAX: the budget grows with the rows decoding (step_tokens per row, a multiple of
        # it up to this; 0 or step_tokens: constant). A step of many decoders already costs many rows, so a longer
        # sub-call beside them costs each a similar share of its step while prompts are prefilled in fewer steps;
        # one decoder still waits for at most step_tokens. The `batch` check feeds every level's sizes
        self.step_levels = budget_levels(step_tokens, step_tokens_max)
        self.split_chunks = 0  # grid chunks fed in sub-calls
        self.sub_call_sizes: Counter[int] = Counter()  # the sizes of the sub-calls fed (what the check must cover)
        # a pad row (no logits) in each free slot between decoding ones: llama.cpp (a KV stream per sequence) makes
        # one ubatch of each run of consecutive sequence ids in a call, so a gap would split the step into ubatches
        # that share no weight reads (docs/ENGINE.md). A gap a prefilling sequence holds stays a gap
        self.fill_gaps = fill_gaps
        if split_cells < 0:
            raise ValueError(f"split_cells must be 0 (one decode call per step) or positive, not {split_cells}")
        # KVGRAFT_SERVING_SPLIT_CELLS (0: every decoding sequence in one call): llama.cpp gives every stream of a
        # ubatch a KV view as long as the ubatch's longest (rounded up to VIEW_PAD cells), so short sequences beside
        # a long one attend over its length. A step is split into calls of similar lengths where the attention
        # cells that saves (rows x view cells) exceed this many per extra ubatch (the cost of one more call, in
        # row-cells); only where the `batch` check found decoding split by length exact (docs/ENGINE.md)
        self.split_cells = split_cells
        self.split_steps = 0  # decode steps split into calls by length
        self.decode_calls = 0
        self.decode_ubatches = 0  # runs of consecutive sequence ids over the decode calls (llama.cpp's ubatches)
        self.pad_token = engine.model.token_bos() if engine.model.token_bos() >= 0 else 0
        self.held: list[tuple[str, tuple[int, ...]] | None] = [None] * self.max_seqs  # what each free slot holds
        self.active: dict[int, _Seq] = {}
        self._held_at: dict[int, int] = {}  # when each slot's resident prompt was left (a step counter)
        self._clock = itertools.count(1)
        self._turn = itertools.count()

    @property
    def free(self) -> int:
        return self.max_seqs - len(self.active)

    def _slot_for(self, job: SequenceJob) -> tuple[int, bool]:
        """The owner's slot still holding the prefix to restore (reused), else a free slot: one holding nothing
        (the lowest: llama.cpp batches consecutive sequence ids in one ubatch; with pad rows, rather not the only
        free neighbour of a lone decoding sequence), else the one whose resident prompt was left longest ago. So
        another team's request takes a team's resident prompt only when every free slot holds one."""
        free = [s for s in range(self.max_seqs) if s not in self.active]
        if not free:
            raise DecodeError("no free sequence slot")
        if job.restore is not None and job.resident_ok:
            k = job.restore.n_tokens
            for s in free:
                held = self.held[s]
                if held is not None and held[0] == job.owner and len(held[1]) >= k and held[1][:k] == job.tokens[:k]:
                    return s, True
        empty = [s for s in free if self.held[s] is None]
        if empty:
            view = view_of(len(job.tokens) + 1)  # its first decode row's (as _view)
            empty.sort(key=lambda s: (self.pad_to > 1 and self._only_pad_of_a_lone_decoder(s),
                                      self._length_distance(s, view), s))
            return empty[0], False
        return min(free, key=lambda s: self._held_at.get(s, 0)), False

    def _length_distance(self, slot: int, view: int) -> int:
        """With split_cells: how far a prompt of `view` cells is from its active neighbours' views at `slot` (the
        nearest; VIEW_PAD where it has none), so that sequences of similar length sit side by side and a step split
        by length keeps each group in one ubatch. 0 without split_cells (the lowest slot)."""
        if not self.split_cells:
            return 0
        near = [abs(self._decode_view(self.active[k]) - view) for k in (slot - 1, slot + 1) if k in self.active]
        return min(near, default=VIEW_PAD)

    def _decode_view(self, seq: _Seq) -> int:
        """The view `seq` decodes at: a prefilling one's after its whole prompt, not the cells it holds so far."""
        if seq.cuts:
            return view_of(max(seq.pos, len(seq.job.tokens)) + 1)
        return self._view(seq)

    def _only_pad_of_a_lone_decoder(self, slot: int) -> bool:
        for k in (slot - 1, slot + 1):
            seq = self.active.get(k)
            if seq is None or seq.cuts:
                continue
            neighbours = [j for j in (k - 1, k + 1) if 0 <= j < self.max_seqs and j != slot]
            if not any(j in self.active and not self.active[j].cuts for j in neighbours) and not any(
                    j not in self.active for j in neighbours):
                return True
        return False

    def join(self, job: SequenceJob, future: Future[SequenceResult] | None = None, queued_ms: float = 0.0) -> None:
        """Start a job in a free slot: set its prefix (truncate a resident one or restore the block) and plan its
        prefill. Raises (nothing started) on a job that cannot be computed."""
        n = len(job.tokens)
        if n == 0:
            raise DecodeError("the prompt is empty")
        check_params(job.params)
        gen = Generation(self.engine.model, job.params, on_text=job.on_text, logprobs=job.logprobs,
                         digests=job.digests, keep_rows=job.keep_rows)
        slot, reused = self._slot_for(job)
        t0 = time.perf_counter()
        self.held[slot] = None
        start = 0
        try:
            if reused:
                assert job.restore is not None
                start = job.restore.n_tokens
                self.ctx.truncate(start, seq_id=slot)
            else:
                if self.max_seqs == 1:
                    self.ctx.clear()  # the context as fresh as a pooled one (its buffers zeroed)
                else:  # the stream's stale bytes stay, masked out (the batch check reuses slots too)
                    self.ctx.seq_remove(slot)
                if job.restore is not None:
                    try:
                        if job.restore.pos_start != 0 or tuple(job.restore.tokens) != tuple(
                                job.tokens[:job.restore.n_tokens]):  # never another prompt's state
                            raise StateRestoreError("the prefix to restore is not this prompt's (its token ids or "
                                                    "positions differ)")
                        self.engine.restore(self.ctx, job.restore, seq_id=slot, payload_verified=True)
                        start = job.restore.n_tokens
                    except StateRestoreError as exc:  # e.g. a layout the stream transcoder refuses: prefill it
                        if job.query_feed:  # a graft's feed is defined after its block only
                            raise
                        log.warning("batch.restore_refused", slot=slot, error=str(exc))
                        self.ctx.seq_remove(slot)
            if job.query_feed and not 0 < start < n:
                raise DecodeError("a query feed needs a restored prefix and at least one token after it")
        except BaseException:
            self._drop(slot)
            raise
        restore_ms = (time.perf_counter() - t0) * 1000
        cuts = ([(start, n, False, True)] if job.query_feed
                else _prefill_cuts(self.engine, start, n, tuple(sorted(job.captures))))
        self.active[slot] = _Seq(job, future, slot, gen, cuts, reused, start, t0, queued_ms, restore_ms,
                                 restored=start, filled=start)
        log.debug("batch.joined", slot=slot, prompt_tokens=n, start=start, reused=reused, active=len(self.active))

    def _drop(self, slot: int) -> None:
        self.active.pop(slot, None)
        self.held[slot] = None
        with contextlib.suppress(EngineError):
            self.ctx.seq_remove(slot)

    def _fail(self, seq: _Seq, exc: BaseException) -> None:
        self._drop(seq.slot)
        log.warning("batch.sequence_failed", slot=seq.slot, error=f"{type(exc).__name__}: {exc}")
        if seq.future is not None and not seq.future.done():
            seq.future.set_exception(exc)

    def _finish(self, seq: _Seq, done: list[SequenceResult]) -> None:
        self.active.pop(seq.slot, None)
        kept = min(seq.filled, len(seq.job.tokens))  # a sequence cancelled in its prefill holds only part of it
        try:  # the slot keeps the prompt's cells (the generated ones dropped) for the owner's next request
            self.ctx.truncate(kept, seq_id=seq.slot)
            self.held[seq.slot] = (seq.job.owner, seq.job.tokens[:kept]) if kept else None
            self._held_at[seq.slot] = next(self._clock)
        except DecodeError:  # a memory that cannot drop them (a recurrent model's): not kept
            self._drop(seq.slot)
        now = time.perf_counter()
        t_pre = seq.t_prefilled or now
        timings = {"queued": round(seq.queued_ms, 2), "restore": round(seq.restore_ms, 2),
                   "prefill": round((t_pre - seq.t_join) * 1000 - seq.restore_ms, 2),
                   "decode": round((now - t_pre) * 1000, 2)}
        try:
            result = SequenceResult(seq.gen.result(), seq.first_sha, tuple(seq.captured), seq.reused, seq.slot,
                                    tuple(seq.call_rows), seq.after_cancel, timings, seq.restored)
        except Exception as exc:  # noqa: BLE001 - e.g. the last text piece could not be handed over
            if seq.future is not None and not seq.future.done():
                seq.future.set_exception(exc)
            return
        done.append(result)
        if seq.future is not None and not seq.future.done():
            seq.future.set_result(result)

    def _cancelled(self, seq: _Seq) -> bool:
        return seq.job.cancel is not None and seq.job.cancel.is_set()

    def step(self) -> list[SequenceResult]:
        """Cancelled sequences leave; one prefill call (the next chunk of one joining sequence, in turn; with a step
        budget and others decoding, the chunk's next sub-call: _split, the budget's level by the rows decoding);
        one decode call over every decoding sequence (with split_cells, calls of similar KV lengths: _by_length).
        The results of the sequences that finished. (Equal-length chunks of several sequences in one call were
        exact too, but gave no throughput where prefill is compute-bound and lengthened the others' inter-token
        gaps: docs/ENGINE.md.)"""
        done: list[SequenceResult] = []
        for seq in [s for s in self.active.values() if self._cancelled(s)]:
            seq.gen.end("cancelled")
            self._finish(seq, done)
        decoders = sum(1 for s in self.active.values() if not s.cuts and s.next_token is not None)
        budget = self.step_levels[min(decoders, len(self.step_levels)) - 1] if decoders and self.step_levels else 0
        for _ in range(self.prefill_per_step):
            prefilling = sorted((s for s in self.active.values() if s.cuts), key=lambda s: s.slot)
            if not prefilling:
                break
            seq = prefilling[next(self._turn) % len(prefilling)]
            if budget:
                self._split(seq, budget)
            self._prefill_chunk(seq, done)
            if budget:
                break  # others decode: one sub-call (under 2 * budget tokens) this step
        decoding = sorted((s for s in self.active.values() if not s.cuts), key=lambda s: s.slot)
        for seq in decoding:
            if seq.next_token is not None and self._cancelled(seq):  # cancelled during this step's prefill call
                seq.gen.end("cancelled")
                seq.next_token = None
            elif seq.next_token is not None and seq.pos >= self.ctx.n_seq_ctx:
                seq.gen.end("context")
                seq.next_token = None
            if seq.next_token is None:
                self._finish(seq, done)
        decoding = [s for s in decoding if s.next_token is not None]
        if decoding:
            self._decode(decoding, done)
        return done

    def _split(self, seq: _Seq, budget: int) -> None:
        """A grid chunk of 2 * `budget` tokens or more about to start becomes its sub-calls: `budget` tokens each from
        the chunk's start, the last one taking the remainder too (budget to 2*budget-1 tokens: never a sub-call of
        fewer rows than the budget, which a kernel may compute another way, as ggml does one row), the capture and
        the first token after the last one. Once split, a chunk is fed in those sub-calls to its end, whoever
        decodes: a chunk is computed whole or in this one partition. The `batch` check's budget trial feeds every
        sub-call size this makes (budget_jobs) before the budget is used."""
        a, b, capture, last = seq.cuts[0]
        if seq.job.query_feed or a < seq.split_until or b - a < 2 * budget:
            return  # (a piece of a chunk split at a higher level is not cut again once fewer rows decode)
        pieces = self.engine.grid(a, b - a, a, step=budget)
        if pieces[-1][1] - pieces[-1][0] < budget:  # the remainder joins the sub-call before it
            (p, _), (_, q) = pieces[-2], pieces.pop()
            pieces[-1] = (p, q)
        seq.cuts[0:1] = [(p, q, capture and q == b, last and q == b) for p, q in pieces]
        seq.split_until = b
        self.split_chunks += 1
        self.sub_call_sizes.update(q - p for p, q in pieces)

    def _prefill_chunk(self, seq: _Seq, done: list[SequenceResult]) -> None:
        """The next chunk (or sub-call) of a joining sequence, in a decode call of its own; its capture or first
        token after it."""
        a, b, capture, last = seq.cuts.pop(0)
        tokens = seq.job.tokens
        try:
            outputs = range(b - a) if seq.job.query_feed else [b - a - 1] if last else ()
            self.ctx.decode(tokens[a:b], pos0=a, seq_id=seq.slot, outputs=outputs)
            seq.filled = b
            if self._cancelled(seq):
                seq.after_cancel += 1
            if capture:
                try:
                    seq.captured.append((b, self.engine.snapshot(self.ctx, tokens[:b], n_query=seq.job.capture_query,
                                                                 seq_id=seq.slot)))
                except StateRestoreError as exc:  # not stored; the completion goes on
                    log.warning("batch.capture_refused", slot=seq.slot, position=b, error=str(exc))
            if last:
                logits = self.ctx.logits_row(b - a - 1)
                seq.first_sha = hashlib.sha256(logits.tobytes()).hexdigest()
                seq.t_prefilled = time.perf_counter()
                seq.pos = b
                seq.next_token = seq.gen.step(logits)
        except Exception as exc:  # noqa: BLE001 - this sequence fails; the others go on
            self._fail(seq, exc)
            return
        if last and seq.next_token is None:
            self._finish(seq, done)

    def _padded(self, decoding: list[_Seq]) -> tuple[list[_Seq], list[int]]:
        """With pad_to 2: the sequences to decode now and the free slots whose pad rows join them, so that every
        ubatch llama.cpp makes of the call (runs of consecutive sequence ids) holds at least two rows. A lone row
        whose neighbours are both busy prefilling (or missing) waits for the next step."""
        if self.pad_to == 1:
            return decoding, []
        slots = {s.slot for s in decoding}
        chosen: list[_Seq] = []
        pads: list[int] = []
        for seq in decoding:
            k = seq.slot
            if k - 1 in slots or k + 1 in slots or k - 1 in pads or k + 1 in pads:
                chosen.append(seq)
                continue
            free = [j for j in (k + 1, k - 1) if 0 <= j < self.max_seqs and j not in self.active]
            free.sort(key=lambda j: self.held[j] is not None)  # rather a slot holding no resident prompt
            if free:
                chosen.append(seq)
                pads.append(free[0])
        return chosen, pads

    def _gap_pads(self, slots: set[int]) -> list[int]:
        """The free slots between the lowest and the highest of `slots` (a resident prompt there is dropped)."""
        if not self.fill_gaps or not slots:
            return []
        return [j for j in range(min(slots), max(slots) + 1) if j not in slots and j not in self.active]

    def _view(self, seq: _Seq) -> int:
        """The KV cells a decode row of `seq` makes llama.cpp view (its cells after this row, padded)."""
        return view_of(seq.pos + 1)

    def _runs(self, slots: list[int]) -> list[list[int]]:
        """The ubatches llama.cpp makes of a call over `slots` (ascending): runs of consecutive sequence ids, a gap
        of free slots bridged by pad rows (fill_gaps), a gap another active sequence holds not."""
        runs: list[list[int]] = []
        for s in slots:
            if runs and (s == runs[-1][-1] + 1 or (self.fill_gaps and not any(
                    j in self.active for j in range(runs[-1][-1] + 1, s)))):
                runs[-1].append(s)
            else:
                runs.append([s])
        return runs

    def _call_cost(self, group: list[_Seq]) -> float | None:
        """A call's cost in row-cells: split_cells per ubatch, and each ubatch's rows times its longest view. None
        where a ubatch would hold fewer rows than pad_to with no free neighbour to pad it (it would wait)."""
        by_slot = {s.slot: s for s in group}
        cost = 0.0
        for run in self._runs(sorted(by_slot)):
            if len(run) < self.pad_to and not any(
                    0 <= j < self.max_seqs and j not in self.active for j in (run[0] - 1, run[-1] + 1)):
                return None
            cost += self.split_cells + len(run) * max(self._view(by_slot[s]) for s in run)
        return cost

    def _by_length(self, decoding: list[_Seq]) -> list[list[_Seq]]:
        """The decode calls of a step: one over every decoding sequence, or (split_cells > 0) the partition of
        the sequences ordered by view into consecutive groups of the least cost (_call_cost); ties keep fewer
        calls, so a step of equal views stays one call."""
        if not self.split_cells or len(decoding) < 2:
            return [decoding]
        if self.pad_to > 1:  # a row with neither a decoding nor a free neighbour waits whatever the partition
            decoding = self._padded(decoding)[0]
            if len(decoding) < 2:
                return [decoding]
        order = sorted(decoding, key=lambda s: (self._view(s), s.slot))
        if self._view(order[0]) == self._view(order[-1]):
            return [decoding]
        n = len(order)
        best: list[tuple[float, int, int]] = [(0.0, 0, 0)]  # (cost, calls, start of the last group) of order[:i]
        for i in range(1, n + 1):
            options = []
            for j in range(i):
                cost = self._call_cost(order[j:i])
                if cost is not None and best[j][0] != float("inf"):
                    options.append((best[j][0] + cost, best[j][1] + 1, j))
            best.append(min(options, default=(float("inf"), 0, 0)))
        if best[n][0] == float("inf"):
            return [decoding]
        groups: list[list[_Seq]] = []
        i = n
        while i > 0:
            j = best[i][2]
            groups.append(sorted(order[j:i], key=lambda s: s.slot))
            i = j
        return groups[::-1]

    def _decode(self, decoding: list[_Seq], done: list[SequenceResult]) -> None:
        groups = self._by_length(decoding)
        if len(groups) > 1:
            self.split_steps += 1
        for group in groups:
            self._decode_call([s for s in group if s.slot in self.active], done)

    def _decode_call(self, decoding: list[_Seq], done: list[SequenceResult]) -> None:
        decoding, pads = self._padded(decoding)
        if not decoding:
            return
        rows = [DecodeRow(int(s.next_token), s.pos, s.slot) for s in decoding]
        real = len(rows)
        gaps = self._gap_pads({s.slot for s in decoding} | set(pads))
        # a pad row keeps its logits too, so that the output projection also sees two rows or more; a gap's does not
        rows = sorted(rows + [DecodeRow(self.pad_token, 0, j) for j in pads]
                      + [DecodeRow(self.pad_token, 0, j, logits=False) for j in gaps], key=lambda r: r.seq_id)
        pads = pads + gaps
        batch_index = {r.seq_id: i for i, r in enumerate(rows)}  # llama_get_logits_ith takes the batch row
        self.decode_calls += 1
        self.decode_ubatches += 1 + sum(b.seq_id != a.seq_id + 1 for a, b in itertools.pairwise(rows))
        try:
            for j in pads:
                self.held[j] = None
                self.ctx.seq_remove(j)
            self.ctx.decode_rows(rows)
        except Exception as exc:  # noqa: BLE001 - every sequence of the call fails; the context goes on
            for seq in decoding:
                self._fail(seq, exc)
            return
        finally:
            for j in pads:
                with contextlib.suppress(EngineError):
                    self.ctx.seq_remove(j)
        for seq in decoding:
            i = batch_index[seq.slot]
            seq.pos += 1
            seq.filled = seq.pos
            seq.call_rows.append(real)
            if self._cancelled(seq):
                seq.after_cancel += 1
            try:
                seq.next_token = seq.gen.step(self.ctx.logits_row(i))
            except Exception as exc:  # noqa: BLE001 - e.g. a temperature with no distribution over this row
                self._fail(seq, exc)
                continue
            if seq.next_token is None:
                self._finish(seq, done)

    def cancel_all(self) -> list[SequenceResult]:
        """End every active sequence now (a closing process), each with what it has generated."""
        done: list[SequenceResult] = []
        for seq in list(self.active.values()):
            seq.gen.end("cancelled")
            self._finish(seq, done)
        return done

    def run_all(self, jobs: list[tuple[int, SequenceJob]]) -> list[SequenceResult]:
        """Drive jobs to the end on the calling thread, job i joining at step `at` (staggered joins), as many at a
        time as there are slots; results in job order (the batch check's schedule). The first job that failed
        raises (after every job has ended)."""
        outcomes = self.run_each(jobs)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return outcomes  # type: ignore[return-value]

    def run_each(self, jobs: list[tuple[int, SequenceJob]]) -> list[SequenceResult | Exception]:
        """As run_all, each job's result or the error it alone failed with (one job that cannot join or decode
        does not fail the others)."""
        futures: list[Future[SequenceResult]] = [Future() for _ in jobs]
        waiting = deque(sorted(range(len(jobs)), key=lambda i: jobs[i][0]))
        steps = 0
        while waiting or self.active:
            while waiting and jobs[waiting[0]][0] <= steps and self.free:
                i = waiting.popleft()
                try:
                    self.join(jobs[i][1], futures[i])
                except Exception as exc:  # noqa: BLE001 - this job's outcome; the others go on
                    futures[i].set_exception(exc)
            self.step()
            steps += 1
        outcomes: list[SequenceResult | Exception] = []
        for f in futures:
            exc = f.exception()
            outcomes.append(exc if isinstance(exc, Exception) else f.result())
        return outcomes


@dataclass
class _Waiting:
    job: SequenceJob
    future: Future[SequenceResult]
    arrived: float
    order: int


class BatchScheduler:
    """The process's one compute thread: calls (`call`) run on it between steps, jobs (`submit`) are admitted into
    the attached BatchCore and stepped."""

    def __init__(self, name: str = "kvgraft-serving-engine") -> None:
        self._cv = threading.Condition()
        self._calls: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        self._idle_calls: deque[tuple[Callable[[], Any], Future[Any]]] = deque()  # run only while nothing is served
        self._waiting: list[_Waiting] = []
        self._core: BatchCore | None = None
        self._owner_max = 1
        self._order = itertools.count()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn` on the compute thread (between steps) and return its result."""
        return self._on_thread(self._calls, fn, *args, **kwargs)

    def call_idle(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn` on the compute thread once no sequence is active or waiting (background work, such as a check
        that must never delay a request: each of its calls waits while anything is served). RuntimeError once
        closed."""
        return self._on_thread(self._idle_calls, fn, *args, **kwargs)

    def _on_thread(self, queue: deque[tuple[Callable[[], Any], Future[Any]]], fn: Callable[..., T], *args: Any,
                   **kwargs: Any) -> T:
        """`fn` queued for the compute thread on `queue` and its result awaited (run at once when already on it)."""
        if threading.current_thread() is self._thread:
            return fn(*args, **kwargs)
        future: Future[T] = Future()
        with self._cv:
            if self._closed:
                raise RuntimeError("the compute thread is closed")
            queue.append((lambda: fn(*args, **kwargs), future))
            self._cv.notify()
        return future.result()

    def attach(self, core: BatchCore, owner_max_seqs: int) -> None:
        """Serve jobs from `core` (on the compute thread: call it through `call`)."""
        self._core, self._owner_max = core, max(1, owner_max_seqs)

    @property
    def core(self) -> BatchCore | None:
        return self._core

    def submit(self, job: SequenceJob) -> Future[SequenceResult]:
        future: Future[SequenceResult] = Future()
        with self._cv:
            if self._closed or self._core is None:
                raise RuntimeError("the batch scheduler has no context attached")
            self._waiting.append(_Waiting(job, future, time.perf_counter(), next(self._order)))
            self._cv.notify()
        return future

    def load(self) -> dict[str, int]:
        with self._cv:
            return {"waiting": len(self._waiting), "active": len(self._core.active) if self._core else 0}

    def _admissible(self) -> list[_Waiting]:
        """Waiting jobs to start now: cancelled ones dropped; then, while slots are free, the job of the owner with
        the fewest active sequences (oldest first), never an owner's past owner_max_seqs."""
        core = self._core
        if core is None:
            return []
        for w in [w for w in self._waiting if w.job.cancel is not None and w.job.cancel.is_set()]:
            self._waiting.remove(w)
            w.future.cancel()
        counts = Counter(s.job.owner for s in core.active.values())
        chosen: list[_Waiting] = []
        free = core.free
        while free > 0:
            eligible = [w for w in self._waiting if counts[w.job.owner] < self._owner_max]
            if not eligible:
                break
            w = min(eligible, key=lambda w: (counts[w.job.owner], w.order))
            self._waiting.remove(w)
            counts[w.job.owner] += 1
            chosen.append(w)
            free -= 1
        return chosen

    def _run(self) -> None:
        while True:
            with self._cv:
                while True:
                    if self._calls:
                        fn, fut = self._calls.popleft()
                        admit: list[_Waiting] = []
                        break
                    if self._closed:  # what still runs ends now, cancelled: the context is closed after this
                        if self._core is not None:
                            self._core.cancel_all()
                        for _, idle in self._idle_calls:
                            idle.set_exception(RuntimeError("the compute thread is closed"))
                        self._idle_calls.clear()
                        return
                    admit = self._admissible()
                    if admit or (self._core is not None and self._core.active):
                        fn = None
                        break
                    if self._idle_calls and not self._waiting:
                        fn, fut = self._idle_calls.popleft()
                        break
                    self._cv.wait()
            if fn is not None:
                if fut.set_running_or_notify_cancel():
                    try:
                        fut.set_result(fn())
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller
                        fut.set_exception(exc)
                continue
            core = self._core
            assert core is not None
            for w in admit:
                try:
                    core.join(w.job, w.future, (time.perf_counter() - w.arrived) * 1000)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    if not w.future.done():
                        w.future.set_exception(exc)
            try:
                core.step()
            except BaseException as exc:  # noqa: BLE001 - a bug: every active sequence fails, the thread goes on
                log.exception("batch.step_failed")
                for seq in list(core.active.values()):
                    core._fail(seq, exc)

    def close(self, timeout: float = 60) -> bool:
        """Stop: waiting jobs are cancelled, running sequences end (cancelled) at the next step, a call in progress
        finishes. Whether the thread has stopped (only then may the context be freed)."""
        with self._cv:
            self._closed = True
            for w in self._waiting:
                w.future.cancel()
            self._waiting.clear()
            self._cv.notify_all()
        self._thread.join(timeout=timeout)
        return not self._thread.is_alive()
