"""`kvgraft bench serve-load`: many chat requests at once, side by side in one run on the same model, threads and
workload, at each concurrency: (a) kvgraft with batching off (KVGRAFT_SERVING_MAX_SEQS=1), (b) kvgraft batched
(KVGRAFT_SERVING_MAX_SEQS = the largest concurrency), (c) llama.cpp's own `llama-server` built from the llama.cpp
source vendored in the project's llama-cpp-python (`-np` = the concurrency, the same threads, flash attention as
kvgraft serves; scripts/build-llama-server.sh builds it once into the cache directory), (d) `llama_cpp.server`.

The workload is deterministic: chat requests of two teams, prompts spread over a token range (half of them share
one of two system prompts), greedy and seeded sampled, outputs spread over a range. Each kvgraft arm has its own
two teams, so neither restores a prefix the other deposited (each starts with a cold prompt cache, as the peers
do). Per arm and concurrency: aggregate output tokens/s over the level's wall time, time to first token and
inter-token latency as the client sees them. Every batched kvgraft answer is compared with the same request
served alone: with batching off (arm a), or, where the batched pod uses pad rows, the same requests again one at
a time on the batched pod (its text and the SHA-256 of every generated position's logits, `kvgraft.digests`); a
stream that ends in an error event fails the bench instead of counting as an answer. On each kvgraft pod (and
llama-server at the top concurrency): inter-token fairness, team B's decoding request alone and while team A's
~2,000-token prompt prefills (`fairness.itl_ms_p99_idle` / `fairness.itl_ms_p99_behind_prefill` per arm, and their
ratio). Then, on the batched pod: fairness (a 1-token request of team B, idle and while team A streams a long
generation) and cancellation (team A's stream closed by the client: the steps its sequence computed after the
server learned of it, and the tokens generated after the client closed, from the pod's `serve.completed` event).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.api import _answers, _process, _spawn
from bench.local_servers import free_port
from bench.prompt_cache import lines_until
from store.repository import create_api_token, get_or_create_team
from workers.environment import environment
from workers.runtime import open_runtime
from workers.settings import load_settings

Progress = Callable[[str], None] | None
ARMS = ("kvgraft_solo", "kvgraft_batched", "llama_server", "llama_cpp_server")
# kvgraft_split (asked for by name): a batched pod that splits decode steps by KV length (KVGRAFT_SERVING_SPLIT_CELLS)
EXTRA_ARMS = ("kvgraft_split",)
KVGRAFT_ARMS = ("kvgraft_solo", "kvgraft_batched", "kvgraft_split")
# the workloads by name: (prompt token range, output token range); `decode` is decode-heavy
WORKLOADS = {"specified": ((200, 2000), (64, 256)), "decode": ((20, 100), (256, 256))}
TOPICS = ["harbour", "mill", "orchard", "railway", "library", "foundry", "vineyard", "observatory", "ferry", "quarry",
          "bakery", "lighthouse", "granary", "tannery", "brewery", "smithy"]


@dataclass(frozen=True)
class ServeLoadBenchRequest:
    model: str | None = None
    concurrency: tuple[int, ...] = (1, 4, 8, 16)
    requests: int | None = None  # per level; default the concurrency, at least 4
    prompt_tokens: tuple[int, int] = (200, 2000)
    max_tokens: tuple[int, int] = (64, 256)
    workload: str = "specified"  # the name of the ranges' preset (WORKLOADS), recorded
    arms: tuple[str, ...] = ARMS
    long_tokens: int = 2000  # team A's generation in the fairness and cancellation measurements
    threads: int | None = None
    # the inter-token fairness measurement: team B's decoding request (`decode_tokens` out) alone, then while team
    # A's prompt of `prefill_tokens` prefills (fairness.itl_ms_p99_idle / _behind_prefill, per arm)
    prefill_tokens: int = 2000
    decode_tokens: int = 384
    step_tokens: int | None = None  # KVGRAFT_SERVING_STEP_TOKENS for the batched pods (None: not changed)
    step_tokens_max: int | None = None  # KVGRAFT_SERVING_STEP_TOKENS_MAX for the batched pods (None: not changed)
    step_ratio: float | None = None  # KVGRAFT_SERVING_STEP_RATIO for the batched pods (None: not changed)
    split_cells: int = 3072  # KVGRAFT_SERVING_SPLIT_CELLS for the kvgraft_split arm


@dataclass(frozen=True)
class Req:
    team: str
    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float
    seed: int


@dataclass(frozen=True)
class Outcome:
    ttft_ms: float
    gaps_ms: tuple[float, ...]
    text: str
    tokens: int
    ext: dict[str, Any]
    stamps: tuple[float, ...] = ()  # perf_counter() at each content piece


def _text(topic: str, n_tokens: int, count: Callable[[str], int], salt: int) -> str:
    return lines_until(lambda i: f"Note {i} on the {topic}: the {['north', 'south', 'east', 'west'][i % 4]} door "
                                 f"opens at {6 + i % 12} o'clock and the "
                                 f"{['keeper', 'clerk', 'warden', 'foreman'][i % 4]} counts {i * 7 % 31} crates.",
                       n_tokens, count, start=salt, every=4)


def workload(count: Callable[[str], int], n: int, request: ServeLoadBenchRequest, level: int) -> list[Req]:
    rng = random.Random(1000 + level)
    lo, hi = request.prompt_tokens
    shared = [_text("charter", max(16, lo // 2), count, 0), _text("handbook", max(16, lo // 2), count, 50)]
    reqs = []
    for i in range(n):
        total = rng.randint(lo, hi)
        if i % 2:  # shares a system prompt with other requests
            system = shared[i % 4 // 2]
            user = _text(TOPICS[i % len(TOPICS)], max(8, total - count(system)), count, 100 + i)
        else:
            system = _text(TOPICS[i % len(TOPICS)], max(8, total // 2), count, 200 + i)
            user = _text(TOPICS[(i + 5) % len(TOPICS)], max(8, total - count(system)), count, 300 + i)
        reqs.append(Req("team-a" if i % 2 == 0 else "team-b",
                        [{"role": "system", "content": system},
                         {"role": "user", "content": user + " Summarise the notes."}],
                        rng.randint(*request.max_tokens), 0.0 if i % 3 else 0.8, 7 + i))
    return reqs


def _stream(client: httpx.Client, model: str, req: Req, extra: dict[str, Any],
            stop_after: int | None = None, on_piece: Callable[[int], None] | None = None) -> Outcome:
    body = {"model": model, "messages": req.messages, "max_tokens": req.max_tokens, "temperature": req.temperature,
            "seed": req.seed, "stream": True, "stream_options": {"include_usage": True}, **extra}
    t0 = time.perf_counter()
    stamps: list[float] = []
    text: list[str] = []
    ext: dict[str, Any] = {}
    usage_tokens = None
    with client.stream("POST", "/v1/chat/completions", json=body) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith("data: {"):
                continue
            data = json.loads(line[6:])
            if data.get("error"):  # an error event in the stream: never counted as an answer
                raise RuntimeError(f"the server ended the stream with an error: {data['error']}")
            for choice in data.get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    stamps.append(time.perf_counter())
                    text.append(piece)
                    if on_piece is not None:
                        on_piece(len(stamps))
            if data.get("kvgraft"):
                ext = data["kvgraft"]
            if data.get("usage"):
                usage_tokens = data["usage"].get("completion_tokens")
            if stop_after is not None and len(stamps) >= stop_after:
                break  # the client goes away: the response is closed here
    first = stamps[0] if stamps else time.perf_counter()
    gaps = tuple((b - a) * 1000 for a, b in zip(stamps, stamps[1:], strict=False))
    return Outcome((first - t0) * 1000, gaps, "".join(text), usage_tokens if usage_tokens is not None else len(stamps),
                   ext, tuple(stamps))


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def _level(ports: Callable[[str], int], headers: dict[str, dict[str, str]], model: str, reqs: list[Req], c: int,
           extra: dict[str, Any]) -> tuple[dict[str, Any], list[Outcome]]:
    clients = {team: httpx.Client(base_url=f"http://127.0.0.1:{ports(team)}", headers=h, timeout=1800)
               for team, h in headers.items()}
    try:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(c) as pool:
            outcomes = list(pool.map(lambda r: _stream(clients[r.team], model, r, extra), reqs))
        wall = time.perf_counter() - t0
    finally:
        for client in clients.values():
            client.close()
    ttfts = [o.ttft_ms for o in outcomes]
    gaps = [g for o in outcomes for g in o.gaps_ms]
    tokens = sum(o.tokens for o in outcomes)
    return ({"output_tokens_per_s": round(tokens / wall, 2), "ttft_ms_p50": _pct(ttfts, 0.5),
             "ttft_ms_p99": _pct(ttfts, 0.99), "itl_ms_p50": _pct(gaps, 0.5), "requests": len(reqs),
             "output_tokens": tokens, "wall_s": round(wall, 2)}, outcomes)


@contextlib.contextmanager
def _pod(env: dict[str, str], tmp: Path, name: str) -> Iterator[int]:
    port = free_port()
    with _process(["serve", "--port", str(port), "--log-level", "warning"], env, tmp / f"{name}.log",
                  lambda: _answers(f"http://127.0.0.1:{port}/readyz")):
        yield port


def _warm(port: int, headers: dict[str, str], model: str) -> None:
    """One short request after the pod is ready (its checks run: /readyz) and before any timed request."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=1800) as c:
        c.post("/v1/chat/completions", json={"model": model, "messages": [{"role": "user", "content": "Warm up."}],
                                             "max_tokens": 2, "temperature": 0}).raise_for_status()


def llama_server_binary(progress: Progress = None) -> tuple[Path, str]:
    """llama-server built from the vendored llama.cpp (built now if the cache directory has none)."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "build-llama-server.sh"
    t0 = time.perf_counter()
    if progress:
        progress("llama-server: building it from the vendored llama.cpp if the cache has none (minutes, once)")
    out = subprocess.run(["bash", str(script), str(Path(sys.executable).parents[1])], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    built = "already built" not in "\n".join(out)
    how = f"built now in {time.perf_counter() - t0:.0f} s" if built else "from the cache directory"
    return Path(out[-1]), how


@contextlib.contextmanager
def _llama_server(binary: Path, model_path: Path, n_ctx: int, np_: int, threads: int, flash_attn: bool, tmp: Path
                  ) -> Iterator[int]:
    port = free_port()
    argv = [str(binary), "-m", str(model_path), "-c", str(n_ctx * np_), "-np", str(np_), "-t", str(threads),
            "-tb", str(threads), "-b", "512", "-ub", "512", "-fa", "on" if flash_attn else "off",
            "--host", "127.0.0.1", "--port", str(port), "--no-webui"]
    with _spawn(argv, dict(os.environ), tmp / f"llama-server-{np_}.log",
                lambda: _answers(f"http://127.0.0.1:{port}/health"), timeout=300):
        yield port


@contextlib.contextmanager
def _llama_cpp_server(model_path: Path, n_ctx: int, threads: int, flash_attn: bool, tmp: Path) -> Iterator[int]:
    port = free_port()
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--n_ctx", str(n_ctx),
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--flash_attn", str(flash_attn).lower(),
            "--port", str(port), "--host", "127.0.0.1"]
    with _spawn(argv, dict(os.environ), tmp / "llama-cpp-server.log",
                lambda: _answers(f"http://127.0.0.1:{port}/v1/models"), timeout=180):
        yield port


def _completed_events(log: Path) -> list[dict[str, Any]]:
    events = []
    for line in log.read_text(errors="replace").splitlines():
        if '"serve.completed"' in line:
            with contextlib.suppress(json.JSONDecodeError):
                events.append(json.loads(line[line.index("{"):]))
    return events


def _fairness_and_cancel(port: int, headers: dict[str, dict[str, str]], model: str, log: Path, long_tokens: int,
                         count: Callable[[str], int]) -> dict[str, Any]:
    short = Req("team-b", [{"role": "user", "content": "Name one colour."}], 1, 0.0, 1)
    long = Req("team-a", [{"role": "system", "content": _text("archive", 200, count, 7)},
                          {"role": "user", "content": "Write everything you know about the archive."}],
               long_tokens, 0.9, 3)
    a = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers["team-a"], timeout=1800)
    b = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers["team-b"], timeout=1800)
    try:
        idle = [_stream(b, model, short, {}).ttft_ms for _ in range(3)]
        started, received = threading.Event(), [0]

        def stream_long() -> None:
            body = {"model": model, "messages": long.messages, "max_tokens": long.max_tokens,
                    "temperature": long.temperature, "seed": long.seed, "stream": True}
            with a.stream("POST", "/v1/chat/completions", json=body) as r:
                for line in r.iter_lines():
                    if '"content": "' in line and '"content": ""' not in line:
                        received[0] += 1
                        started.set()
                    if stop.is_set():
                        break  # the client goes away

        stop = threading.Event()
        t = threading.Thread(target=stream_long, daemon=True)
        before = len(_completed_events(log))
        t.start()
        started.wait(600)
        behind = [_stream(b, model, short, {}).ttft_ms for _ in range(3)]
        stop.set()
        t.join(600)
        deadline = time.monotonic() + 120
        cancelled: dict[str, Any] = {}
        while time.monotonic() < deadline and not cancelled:
            cancelled = next((e for e in _completed_events(log)[before:] if e.get("stopped_by") == "cancelled"), {})
            time.sleep(0.2)
    finally:
        a.close()
        b.close()
    return {"fairness": {"short_ttft_ms_idle": round(statistics.median(idle), 1),
                         "short_ttft_ms_behind_long": round(statistics.median(behind), 1),
                         "ratio": round(statistics.median(behind) / statistics.median(idle), 2)},
            "cancel": {"steps_after_disconnect": cancelled.get("steps_after_cancel"),
                       "tokens_generated": cancelled.get("completion_tokens"),
                       "tokens_received_by_client": received[0],
                       "tokens_after_client_close": (cancelled["completion_tokens"] - received[0]
                                                     if cancelled else None),
                       "long_tokens_asked": long_tokens, "found_in_log": bool(cancelled)}}


def gaps_overlapping(stamps: tuple[float, ...], start: float, end: float) -> list[float]:
    """The inter-token gaps (ms) between consecutive `stamps` whose interval overlaps (start, end)."""
    return [(y - x) * 1000 for x, y in zip(stamps, stamps[1:], strict=False) if y > start and x < end]


def _itl_fairness(port: int, headers: dict[str, dict[str, str]], model: str, count: Callable[[str], int],
                  prefill_tokens: int, decode_tokens: int, extra: dict[str, Any]
                  ) -> tuple[dict[str, Any], list[Outcome]]:
    """Team B's decoding request alone (its inter-token p99 idle), then again with team A's prompt of
    `prefill_tokens` sent once B has streamed 4 tokens: the p99 over B's gaps that overlap A's prefill (from A's
    send to A's first token). A's prompt is new to the pod (no prefix of it cached). The figures, and the three
    answers (B idle, B behind, A) to compare with another arm's."""
    decoder = Req("team-b", [{"role": "system", "content": _text("ledger", 60, count, 11)},
                             {"role": "user", "content": "Write everything you know about the ledger."}],
                  decode_tokens, 0.9, 5)
    prompt = Req("team-a", [{"role": "system", "content": _text("registry", prefill_tokens, count, 900)},
                            {"role": "user", "content": "Summarise the notes."}], 1, 0.0, 1)
    a = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers["team-a"], timeout=1800)
    b = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers["team-b"], timeout=1800)
    try:
        idle = _stream(b, model, decoder, extra)
        decoding = threading.Event()
        with ThreadPoolExecutor(1) as pool:
            def on_piece(n: int) -> None:
                if n >= 4:
                    decoding.set()

            behind_f = pool.submit(_stream, b, model, decoder, extra, None, on_piece)
            behind_f.add_done_callback(lambda _f: decoding.set())  # ended (or failed) before its 4th token
            if not decoding.wait(600) or behind_f.done():
                behind_f.result()  # its error, if it failed
                raise RuntimeError("the decoding request ended before it had streamed 4 tokens: nothing to "
                                   "measure behind the prefill (a longer --decode-tokens)")
            sent = time.perf_counter()
            filled = _stream(a, model, prompt, extra)
            first = sent + filled.ttft_ms / 1000
            behind = behind_f.result()
    finally:
        a.close()
        b.close()
    gaps = gaps_overlapping(behind.stamps, sent, first)
    idle_p99, behind_p99 = _pct(list(idle.gaps_ms), 0.99), _pct(gaps, 0.99)
    return {"itl_ms_p99_idle": idle_p99, "itl_ms_p99_behind_prefill": behind_p99,
            "ratio": round(behind_p99 / idle_p99, 2) if idle_p99 and behind_p99 else None,
            "idle_gaps": len(idle.gaps_ms), "behind_gaps": len(gaps),
            "prefill_prompt_ttft_ms": round(filled.ttft_ms, 1),
            "decoder_outlasted_prefill": bool(behind.stamps) and behind.stamps[-1] >= first,
            "decoder_tokens": [idle.tokens, behind.tokens],
            # B is seeded: behind the prefill it must be the same answer as idle (text and every position's logits)
            "decoder_equal_to_idle": (idle.text, idle.ext.get("logits_sha256")) == (
                behind.text, behind.ext.get("logits_sha256"))}, [idle, behind, filled]


def run_serve_load_bench(request: ServeLoadBenchRequest, progress: Progress = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    unknown = set(request.arms) - set(ARMS) - set(EXTRA_ARMS)
    if unknown or not request.arms:
        raise ValueError(f"--arms takes {', '.join(ARMS + EXTRA_ARMS)}, not {', '.join(sorted(unknown)) or 'nothing'}")
    tmp = Path(tempfile.mkdtemp(prefix="kvgraft-bench-serve-load-"))
    model = request.model or load_settings().model
    top = max(request.concurrency)
    # room for the longest prompt (the workload's counts leave out the chat markup) and its output, and for the
    # fairness measurement's long request (a 200-token system prompt, `long_tokens` out)
    need = max(request.prompt_tokens[1] * 5 // 4 + request.max_tokens[1], 200 * 5 // 4 + request.long_tokens,
               request.prefill_tokens * 5 // 4 + 8, 60 * 5 // 4 + request.decode_tokens) + 64
    window = -(-need // 256) * 256
    try:
        with contextlib.ExitStack() as scope:
            base = {"KVGRAFT_DATABASE_URL": f"sqlite:///{tmp / 'catalogue.db'}", "KVGRAFT_MODEL": model,
                    "KVGRAFT_STORE_URL": f"file://{tmp / 'blocks'}", "KVGRAFT_WINDOW_TOKENS": str(window),
                    "KVGRAFT_SERVING_QUEUE_MAX": str(max(32, 4 * top)),
                    "KVGRAFT_LOG_LEVEL": "INFO", "KVGRAFT_DATA_DIR": str(tmp / "bench")}
            if request.threads:
                base["KVGRAFT_THREADS"] = str(request.threads)
            # each kvgraft arm's own settings on top (the rest are the deployment's defaults): the solo arm has one
            # sequence, so its team limit (default max_seqs - 1 = 1) is raised to let a team's requests wait in
            # the process's queue, as the peer servers queue them; the batched arm keeps the default team limit
            arm_settings = {"kvgraft_solo": {"KVGRAFT_SERVING_MAX_SEQS": "1",
                                             "KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT": str(top)},
                            "kvgraft_batched": {"KVGRAFT_SERVING_MAX_SEQS": str(top)},
                            "kvgraft_split": {"KVGRAFT_SERVING_MAX_SEQS": str(top),
                                              "KVGRAFT_SERVING_SPLIT_CELLS": str(request.split_cells)}}
            for batched in ("kvgraft_batched", "kvgraft_split"):  # the prefill budget beside decoders (where the
                if request.step_tokens is not None:  # batch check allows)
                    arm_settings[batched]["KVGRAFT_SERVING_STEP_TOKENS"] = str(request.step_tokens)
                if request.step_tokens_max is not None:
                    arm_settings[batched]["KVGRAFT_SERVING_STEP_TOKENS_MAX"] = str(request.step_tokens_max)
                if request.step_ratio is not None:
                    arm_settings[batched]["KVGRAFT_SERVING_STEP_RATIO"] = str(request.step_ratio)
            changed = {"every_arm": base, **{arm: arm_settings[arm] for arm in request.arms if arm in arm_settings}}
            say(f"settings changed: {json.dumps(changed)}")
            scope.enter_context(environment(base, unset=["KVGRAFT_BROKER_URL"]))
            settings = load_settings()
            rt = open_runtime(settings)
            scope.callback(rt.close)
            with rt.session() as s:  # each kvgraft arm its own two teams: prefixes are private to a team, so no
                # arm restores what another deposited (each starts with a cold prompt cache)
                tokens = {arm: {team: {"Authorization": "Bearer " + create_api_token(
                    s, team=get_or_create_team(s, name=f"{arm}-{team}"), role="submitter")[1]}
                    for team in ("team-a", "team-b")} for arm in KVGRAFT_ARMS}
            engine = rt.engine(model)  # the tokenizer for the workload, and the model's path (nothing computed)
            model_path, threads = engine.model.path, request.threads or engine.config.threads
            flash_attn = settings.serving_flash_attn

            def count(text: str) -> int:
                return len(engine.tokenize(text))

            levels = {c: workload(count, request.requests or max(4, c), request, c) for c in request.concurrency}
            arms: dict[str, dict[int, dict[str, Any]]] = {arm: {} for arm in request.arms}
            answers: dict[str, dict[int, list[Outcome]]] = {arm: {} for arm in request.arms}
            extra = {"kvgraft": {"digests": True}}
            record: dict[str, Any] = {"benchmark": "serve-load", "model": engine.name, "threads": threads,
                                      "flash_attn": flash_attn, "window_tokens": window,
                                      "workload": {"name": request.workload,
                                                   "prompt_tokens": list(request.prompt_tokens),
                                                   "max_tokens": list(request.max_tokens),
                                                   "requests": {c: len(r) for c, r in levels.items()}}}
            record["settings"] = changed  # every setting this benchmark changed, per arm
            itl: dict[str, dict[str, Any]] = {}  # the inter-token fairness per arm
            itl_answers: dict[str, list[Outcome]] = {}
            for arm in KVGRAFT_ARMS:
                if arm not in request.arms:
                    continue
                env = {**os.environ, **arm_settings[arm], "KVGRAFT_DATA_DIR": str(tmp / arm)}
                headers = tokens[arm]
                with _pod(env, tmp, arm) as port:
                    _warm(port, headers["team-a"], settings.model)
                    for c, reqs in levels.items():
                        say(f"{arm}: concurrency {c}, {len(reqs)} requests")
                        arms[arm][c], answers[arm][c] = _level(lambda _t, p=port: p, headers, settings.model, reqs, c,
                                                               extra)
                    say(f"{arm}: inter-token gaps idle and behind a {request.prefill_tokens}-token prompt")
                    itl[arm], itl_answers[arm] = _itl_fairness(port, headers, settings.model, count,
                                                               request.prefill_tokens, request.decode_tokens, extra)
                    if arm == "kvgraft_split":
                        record["split_batching"] = next((o.ext.get("batching") for c in answers[arm]
                                                         for o in answers[arm][c] if o.ext), None)
                    if arm == "kvgraft_batched":
                        say("kvgraft_batched: fairness and cancellation")
                        record |= _fairness_and_cancel(port, headers, settings.model, tmp / f"{arm}.log",
                                                       request.long_tokens, count)
                        record["batching"] = next((o.ext.get("batching") for c in answers[arm]
                                                   for o in answers[arm][c] if o.ext), None)
                        shared = [e.get("batched_with", 0) for e in _completed_events(tmp / f"{arm}.log")]
                        record["batched_answers_sharing_a_call"] = sum(n > 1 for n in shared[1:])
                        if (record["batching"] or {}).get("pad_rows"):  # alone means alone on this pod
                            say("kvgraft_batched: each request again, alone (the reference under pad rows)")
                            answers["kvgraft_batched_alone"] = {
                                c: _level(lambda _t, p=port: p, headers, settings.model, reqs, 1, extra)[1]
                                for c, reqs in levels.items()}
            if "llama_server" in request.arms:
                binary, how = llama_server_binary(say)
                record["llama_server"] = {"binary": str(binary), "how": how}
                for c, reqs in levels.items():
                    say(f"llama-server -np {c}: {len(reqs)} requests")
                    with _llama_server(binary, model_path, window, c, threads, flash_attn, tmp) as port:
                        _warm(port, {}, "x")
                        arms["llama_server"][c], _ = _level(lambda _t, p=port: p, {"team-a": {}, "team-b": {}},
                                                            "x", reqs, c, {})
                        if c == top:
                            itl["llama_server"] = _itl_fairness(port, {"team-a": {}, "team-b": {}}, "x", count,
                                                                request.prefill_tokens, request.decode_tokens, {})[0]
            if "llama_cpp_server" in request.arms:
                with _llama_cpp_server(model_path, window, threads, flash_attn, tmp) as port:
                    _warm(port, {}, "x")
                    for c, reqs in levels.items():
                        say(f"llama_cpp.server: concurrency {c}, {len(reqs)} requests")
                        arms["llama_cpp_server"][c], _ = _level(lambda _t, p=port: p, {"team-a": {}, "team-b": {}},
                                                                "x", reqs, c, {})
            record["arms"] = arms
            fairness = record.setdefault("fairness", {})
            for key in ("itl_ms_p99_idle", "itl_ms_p99_behind_prefill"):
                fairness[key] = {arm: m[key] for arm, m in itl.items()}
            fairness["itl_ratio_behind_prefill"] = {arm: m["ratio"] for arm, m in itl.items()}
            fairness["itl_detail"] = itl
            if {"kvgraft_solo", "kvgraft_batched"} <= itl_answers.keys():  # B idle, B behind, A: batched vs off
                fairness["itl_answers_checked"] = 3
                fairness["itl_answers_mismatches"] = sum(
                    (x.text, x.ext.get("logits_sha256")) != (y.text, y.ext.get("logits_sha256")) or not x.ext
                    for x, y in zip(itl_answers["kvgraft_batched"], itl_answers["kvgraft_solo"], strict=True))
            record |= _compare(answers)
            if "kvgraft_split" in answers:
                record |= {f"split_{k}": v for k, v in _compare(answers, "kvgraft_split").items()}
            record["ratios"] = _ratios(arms)
            return record
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _compare(answers: dict[str, dict[int, list[Outcome]]], arm: str = "kvgraft_batched") -> dict[str, Any]:
    """Every batched answer (of `arm`) against the same request served alone: with batching off (arm a), or, where
    the batched pod uses pad rows (alone is then computed with its pad row), alone on the batched pod. The text and
    every position's logits digest."""
    batched = answers.get(arm)
    if not batched:
        return {"batched_checked": 0, "batched_mismatches": None}
    alone = answers.get("kvgraft_batched_alone") or answers.get("kvgraft_solo")
    if not alone:
        return {"batched_checked": 0, "batched_mismatches": None}

    def mismatches(reference: dict[int, list[Outcome]]) -> tuple[int, list[dict[str, Any]]]:
        checked, bad = 0, []
        for c, outs in batched.items():
            for i, (got, ref) in enumerate(zip(outs, reference[c], strict=True)):
                checked += 1
                a, b = got.ext.get("logits_sha256") or [], ref.ext.get("logits_sha256") or []
                if got.text != ref.text or a != b or not a:
                    first = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
                    bad.append({"concurrency": c, "request": i, "first_differing_position": first,
                                "positions": [len(a), len(b)],
                                "cache": [got.ext.get("cache"), ref.ext.get("cache")],
                                "restored_tokens": [got.ext.get("restored_tokens"), ref.ext.get("restored_tokens")],
                                "from": [[r.get("from") for r in e.get("restored") or []] for e in (got.ext, ref.ext)]})
        return checked, bad

    checked, bad = mismatches(alone)
    out: dict[str, Any] = {"batched_checked": checked, "batched_mismatches": len(bad), "mismatch_details": bad,
                           "batched_reference": "alone_on_the_batched_pod" if "kvgraft_batched_alone" in answers
                           else "batching_off"}
    if "kvgraft_batched_alone" in answers and "kvgraft_solo" in answers:
        out["batched_mismatches_vs_batching_off"] = len(mismatches(answers["kvgraft_solo"])[1])
    return out


def _ratios(arms: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    batched = arms.get("kvgraft_batched", {})
    for c, row in batched.items():
        for peer in ("kvgraft_solo", "llama_server", "llama_cpp_server"):
            other = arms.get(peer, {}).get(c)
            if other and other["output_tokens_per_s"]:
                out[f"batched_over_{peer}_{c}"] = round(row["output_tokens_per_s"] / other["output_tokens_per_s"], 2)
    for c, row in arms.get("kvgraft_split", {}).items():
        for peer in ("kvgraft_batched", "kvgraft_solo"):
            other = arms.get(peer, {}).get(c)
            if other and other["output_tokens_per_s"]:
                out[f"split_over_{peer}_{c}"] = round(row["output_tokens_per_s"] / other["output_tokens_per_s"], 2)
    return out
