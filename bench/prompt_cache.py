"""`kvgraft bench prompt-cache`: time to first token and total time of a chat request with a long shared prefix,
side by side in one run with the same model and prompts: (a) cold (cache off), (b) cached on the same pod, (c)
cached by another pod (the prefix read from the object store by a process that never saw it), against (d)
llama-cpp-python's own OpenAI server (`llama_cpp.server`, its RAM cache on) warm and after a restart. Then a
workload of requests sharing a few prefixes: prefilled tokens per request, hits, and byte mismatches of every
answer (cached, or capturing prefixes for later ones) against a fresh computation of the same prompt (logits
SHA-256 at the first generated position, and the text).

It starts what it needs (a moto S3 server, two `kvgraft serve` processes one after the other over one SQLite
catalogue and one S3 store, the llama.cpp server) and removes them afterwards."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.api import _answers, _process, _spawn
from bench.local_servers import free_port, moto_server
from bench.stats import share
from store.objects.s3 import S3ObjectStore
from store.repository import create_api_token, get_or_create_team
from workers.environment import environment
from workers.runtime import open_runtime
from workers.settings import load_settings

Progress = Callable[[str], None] | None
SUBJECTS = ["harbour", "mill", "orchard", "railway", "library", "foundry", "vineyard", "observatory", "ferry",
            "quarry"]
QUESTIONS = ["Who keeps the keys?", "When does the shift change?", "What is stored in the cellar?",
             "How many workers are there?", "What happens in winter?", "Where is the ledger kept?",
             "What is the rule about the lamps?", "Which door stays locked?", "What is repaired on Fridays?",
             "Who writes the reports?"]

KVGRAFT_ARMS = ("cold", "same_pod", "other_pod")
ARMS = (*KVGRAFT_ARMS, "llama_cpp_server_cold", "llama_cpp_server_warm", "llama_cpp_server_after_restart")
SAMPLE_KEYS = {"llama_cpp_server_after_restart": "llama_cpp_server_restart"}  # its key in ttft_samples_ms


@dataclass(frozen=True)
class PromptCacheBenchRequest:
    model: str | None = None
    prefix_tokens: int = 2000
    samples: int = 3  # prefixes timed per arm
    prefixes: int = 5  # the workload's shared prefixes
    requests: int = 50  # the workload's requests
    max_tokens: int = 8
    verify: bool = True  # compare every cached workload answer with a fresh computation
    turns: int = 10  # the multi-turn arm: a chat of this many turns (0: not run)
    turn_tokens: int = 200  # new tokens each turn adds (the user's message)
    system_tokens: int = 1000  # the chat's system prompt
    chunk_tokens: int = 256  # the chunked arm's stored chunk (KVGRAFT_PREFIX_CHUNK_TOKENS)
    kv_types: tuple[str, ...] = ("f16", "q8_0")  # the chunked arm under each KV type (q8_0 with flash attention on)


def lines_until(line: Callable[[int], str], n_tokens: int, count: Callable[[str], int], *, start: int = 0,
                every: int = 8) -> str:
    """Lines line(start), line(start + 1), ... joined, until they hold `n_tokens` tokens (as `count` counts them),
    counted whenever the next index is a multiple of `every`."""
    lines: list[str] = []
    i = start
    while True:
        lines.append(line(i))
        i += 1
        if i % every == 0 and count(" ".join(lines)) >= n_tokens:
            return " ".join(lines)


def _document(subject: str, n_tokens: int, count: Callable[[str], int]) -> str:
    """A deterministic manual about `subject` of about `n_tokens` tokens (as `count` counts them)."""
    return lines_until(lambda i: f"Rule {i} of the {subject}: the {['north', 'south', 'east', 'west'][i % 4]} room "
                                 f"is checked at {6 + i % 12} o'clock by the "
                                 f"{['keeper', 'clerk', 'warden', 'foreman'][i % 4]}, who notes {i * 7 % 31} items in "
                                 f"the {subject} book.", n_tokens, count)


def _messages(doc: str, question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": doc}, {"role": "user", "content": question}]


def _stream(client: httpx.Client, model: str, messages: list[dict[str, str]], max_tokens: int,
            extra: dict[str, Any] | None = None) -> tuple[float, float, dict[str, Any]]:
    """(time to first content token, total time) in ms of one streamed chat completion, and its `kvgraft`
    extension (empty from llama_cpp.server)."""
    body = {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": True,
            **(extra or {})}
    t0 = time.perf_counter()
    first = None
    ext: dict[str, Any] = {}
    with client.stream("POST", "/v1/chat/completions", json=body) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if first is None and line.startswith("data: {") and '"content": "' in line and '"content": ""' not in line:
                first = time.perf_counter()
            if line.startswith("data: {") and '"kvgraft"' in line:
                ext = json.loads(line[6:])["kvgraft"]
    end = time.perf_counter()
    return ((first or end) - t0) * 1000, (end - t0) * 1000, ext


def _post(client: httpx.Client, model: str, messages: list[dict[str, str]], max_tokens: int,
          cache: bool) -> dict[str, Any]:
    r = client.post("/v1/chat/completions", json={"model": model, "messages": messages, "max_tokens": max_tokens,
                                                   "temperature": 0, "kvgraft": {"cache": cache}})
    r.raise_for_status()
    return r.json()  # type: ignore[no-any-return]


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


@contextlib.contextmanager
def _pod(env: dict[str, str], tmp: Path, name: str, headers: dict[str, str], model: str) -> Iterator[int]:
    """A `kvgraft serve` process, ready (its serving engine loaded and its checks run: /readyz) and warmed up by one
    short unrelated request, so no arm's first request pays for them (the warm-up prompt is shorter than a chunk:
    it stores nothing)."""
    port = free_port()
    with _process(["serve", "--port", str(port), "--log-level", "warning"], env, tmp / f"{name}.log",
                  lambda: _answers(f"http://127.0.0.1:{port}/readyz")):
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=600) as c:
            _post(c, model, [{"role": "user", "content": "Warm up."}], 2, cache=True)
        yield port


@contextlib.contextmanager
def _llama_server(model_path: Path, n_ctx: int, threads: int, tmp: Path, name: str) -> Iterator[int]:
    """llama-cpp-python's OpenAI server with its RAM cache on, warmed up by the same short request as a pod."""
    port = free_port()
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--n_ctx", str(n_ctx),
            "--n_threads", str(threads), "--cache", "true", "--cache_type", "ram", "--port", str(port),
            "--host", "127.0.0.1"]
    with _spawn(argv, dict(os.environ), tmp / f"{name}.log", lambda: _answers(f"http://127.0.0.1:{port}/v1/models"),
                timeout=180):
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as c:
            c.post("/v1/chat/completions", json={"model": "x", "messages": [{"role": "user", "content": "Warm up."}],
                                                 "max_tokens": 2, "temperature": 0}).raise_for_status()
        yield port


def _wait_prefixes(rt: Any, at_least: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if _prefix_count(rt) >= at_least:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {at_least} prefix blocks were deposited within {timeout:.0f} s")
        time.sleep(0.2)


def run_prompt_cache_bench(request: PromptCacheBenchRequest, progress: Progress = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    tmp = Path(tempfile.mkdtemp(prefix="kvgraft-bench-prompt-"))
    model = request.model or load_settings().model
    try:
        with moto_server(tmp) as s3, contextlib.ExitStack() as scope:
            base = {"KVGRAFT_DATABASE_URL": f"sqlite:///{tmp / 'catalogue.db'}", "KVGRAFT_STORE_URL":
                    "s3://kvgraft-prompts/blocks", "KVGRAFT_S3_ENDPOINT_URL": s3, "KVGRAFT_MODEL": model,
                    "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                    "KVGRAFT_LOG_LEVEL": "WARNING"}
            scope.enter_context(environment({**base, "KVGRAFT_DATA_DIR": str(tmp / "bench")},
                                            unset=["KVGRAFT_BROKER_URL"]))  # the pods serve in-process
            S3ObjectStore("kvgraft-prompts", endpoint_url=s3).ensure_bucket()
            rt = open_runtime(load_settings())
            scope.callback(rt.close)
            with rt.session() as s:
                _, token = create_api_token(s, team=get_or_create_team(s, name="bench"), role="submitter")
            engine = rt.engine(model)
            model_path, threads = engine.model.path, engine.config.threads
            docs = [_document(SUBJECTS[i % len(SUBJECTS)], request.prefix_tokens, lambda t: len(engine.tokenize(t)))
                    for i in range(max(request.prefixes, request.samples))]
            served = load_settings().model
            headers = {"Authorization": f"Bearer {token}"}
            pod_env = {**os.environ}
            runs: dict[str, list[tuple[float, float, dict[str, Any]]]] = {arm: [] for arm in ARMS}

            def timed(arm: str, client: httpx.Client, doc: str, question: str, **extra: Any) -> None:
                runs[arm].append(_stream(client, served, _messages(doc, question), request.max_tokens, extra))

            with _pod({**pod_env, "KVGRAFT_DATA_DIR": str(tmp / "pod-a")}, tmp, "pod-a", headers, served) as port, \
                    httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=600) as a:
                deposited = 0
                for i in range(request.samples):
                    say(f"pod A, prefix {i}: cold, then deposit, then cached on the same pod")
                    timed("cold", a, docs[i], QUESTIONS[0], kvgraft={"cache": False})
                    seed = _post(a, served, _messages(docs[i], QUESTIONS[0]), request.max_tokens, cache=True)
                    deposited += seed["kvgraft"]["deposits_scheduled"]
                    _wait_prefixes(rt, deposited)  # every prefix that request computed, not just the first
                    timed("same_pod", a, docs[i], QUESTIONS[1])
            workload: dict[str, Any] = {}
            with _pod({**pod_env, "KVGRAFT_DATA_DIR": str(tmp / "pod-b")}, tmp, "pod-b", headers, served) as port, \
                    httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=600) as b:
                for i in range(request.samples):
                    say(f"pod B (pod A gone), prefix {i}: restored from the object store")
                    timed("other_pod", b, docs[i], QUESTIONS[2])
                say(f"workload: {request.requests} requests over {request.prefixes} prefixes on pod B")
                workload = _workload(b, served, docs[:request.prefixes], request)
            multi_turn: dict[str, Any] = {}
            if request.turns:
                multi_turn = _multi_turn(rt, engine, served, request, tmp, pod_env, say)
            say("llama_cpp.server (RAM cache on): cold, warm, after a restart")
            with _llama_server(model_path, engine.config.n_ctx, threads, tmp, "llama-1") as port, \
                    httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as ls:
                for i in range(request.samples):
                    timed("llama_cpp_server_cold", ls, docs[i], QUESTIONS[0])
                    timed("llama_cpp_server_warm", ls, docs[i], QUESTIONS[1])
            with _llama_server(model_path, engine.config.n_ctx, threads, tmp, "llama-2") as port, \
                    httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as ls:
                for i in range(request.samples):
                    timed("llama_cpp_server_after_restart", ls, docs[i], QUESTIONS[2])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ttft = {arm: _median([t for t, _, _ in r]) for arm, r in runs.items()}
    total = {arm: _median([x for _, x, _ in r]) for arm, r in runs.items()}
    return {"benchmark": "prompt-cache", "model": model, "prefix_tokens": request.prefix_tokens,
            "samples": request.samples, "chunk_tokens": load_settings().prefill_chunk, "ttft_ms": ttft,
            "total_ms": total,
            "ttft_samples_ms": {SAMPLE_KEYS.get(arm, arm): [t for t, _, _ in r] for arm, r in runs.items()},
            "ratios": {"cold_over_same_pod": round(ttft["cold"] / ttft["same_pod"], 1),
                       "cold_over_other_pod": round(ttft["cold"] / ttft["other_pod"], 1),
                       "llama_warm_over_same_pod": round(ttft["llama_cpp_server_warm"] / ttft["same_pod"], 2),
                       "llama_restart_over_other_pod": round(ttft["llama_cpp_server_after_restart"]
                                                             / ttft["other_pod"], 1)},
            "where_ms": {arm: _breakdown([ext for _, _, ext in runs[arm]]) for arm in KVGRAFT_ARMS},
            "workload": workload, "multi_turn": multi_turn}


def _owned_prefix_bytes(rt: Any, team_id: int) -> tuple[int, int]:
    """(bytes, blocks) of the prefix blocks a team owns."""
    import sqlalchemy as sa

    from store.db import BlockOwnerRow, BlockRow

    with rt.session() as s:
        row = s.execute(sa.select(sa.func.coalesce(sa.func.sum(BlockRow.bytes), 0), sa.func.count())
                        .join(BlockOwnerRow, BlockOwnerRow.block_id == BlockRow.id)
                        .where(BlockRow.kind == "prefix", BlockOwnerRow.team_id == team_id)).one()
    return int(row[0]), int(row[1])


def _state_bytes(engine: Any, n_tokens: int) -> int:
    """A one-piece state's bytes for n tokens (linear in n: measured at two lengths)."""
    from engine.texts import sample_tokens

    a, b = (len(engine.capture(sample_tokens(engine, k)).payload) for k in (64, 128))
    return a + (b - a) * (n_tokens - 64) // 64


def _multi_turn(rt: Any, engine: Any, model: str, request: PromptCacheBenchRequest, tmp: Path,
                pod_env: dict[str, str], say: Callable[[str], None]) -> dict[str, Any]:
    """A chat of `turns` turns over one system prompt, each adding a user message of about `turn_tokens`, served
    by a pod storing chunks and by one storing whole prefixes (own teams, one pod at a time): time to first token
    per turn, bytes the team's prefix blocks take after the last turn against the final prompt's one-piece state,
    and every cached turn's first position and text against the same prompt computed fresh."""
    count = lambda t: len(engine.tokenize(t))  # noqa: E731
    system = _document("signal box", request.system_tokens, count)
    users = [lines_until(lambda i, k=k: f"Turn {k}, note {i}: the {SUBJECTS[(k + i) % len(SUBJECTS)]} reports "
                                        f"{(k * 13 + i * 7) % 97} crates and {(k + i) % 9} carts.",
                         request.turn_tokens, count, every=2) + " What is the total?" for k in range(request.turns)]
    chunk = str(request.chunk_tokens)
    arms: dict[str, dict[str, str]] = {"chunks": {"KVGRAFT_PREFIX_CHUNK_TOKENS": chunk},
                                       "whole": {"KVGRAFT_PREFIX_CHUNK_TOKENS": "0"}}
    for kv in request.kv_types:
        if kv != "f16":  # a quantized KV cache needs flash attention on: another numerics profile, its own fresh
            arms[f"chunks_{kv}"] = {"KVGRAFT_PREFIX_CHUNK_TOKENS": chunk, "KVGRAFT_KV_TYPE": kv,
                                    "KVGRAFT_SERVING_FLASH_ATTN": "true"}
    fresh_of: dict[str, list[str]] = {}  # each configuration's fresh answers, computed by its first arm
    out: dict[str, Any] = {}
    for arm, arm_env in arms.items():
        config = json.dumps({k: v for k, v in arm_env.items() if k != "KVGRAFT_PREFIX_CHUNK_TOKENS"})
        fresh = fresh_of.setdefault(config, [])
        computes_fresh = not fresh
        with rt.session() as s:
            team = get_or_create_team(s, name=f"bench-multi-turn-{arm}")
            _, token = create_api_token(s, team=team, role="submitter")
            team_id = team.id
        headers = {"Authorization": f"Bearer {token}"}
        env = {**pod_env, "KVGRAFT_DATA_DIR": str(tmp / f"pod-turns-{arm}"), **arm_env}
        ttft, mismatches, hits, restored, prompt_tokens = [], 0, 0, [], 0
        with _pod(env, tmp, f"pod-turns-{arm}", headers, model) as port, \
                httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=600) as c:
            messages = [{"role": "system", "content": system}]
            deposited = _prefix_count(rt)
            for k, user in enumerate(users):
                say(f"multi-turn ({arm}): turn {k + 1} of {len(users)}")
                messages.append({"role": "user", "content": user})
                if computes_fresh and request.verify:
                    fresh.append(json.dumps(_fresh_key(_post(c, model, messages, request.max_tokens, cache=False))))
                t, _total, ext = _stream(c, model, messages, request.max_tokens, {"kvgraft": {"cache": True}})
                deposited += ext.get("deposits_scheduled", 0)
                _wait_prefixes(rt, deposited)
                answer = _post(c, model, messages, request.max_tokens, cache=True)  # what the turn answers
                ttft.append(t)
                hits += ext.get("cache") == "hit"
                restored.append(ext.get("restored_tokens", 0))
                prompt_tokens = answer["usage"]["prompt_tokens"]
                if request.verify and json.dumps(_fresh_key(answer)) != fresh[k]:
                    mismatches += 1
                deposited += answer["kvgraft"]["deposits_scheduled"]
                _wait_prefixes(rt, deposited)
                messages.append({"role": "assistant", "content": answer["choices"][0]["message"]["content"]})
        stored, blocks = _owned_prefix_bytes(rt, team_id)
        final = _state_bytes(engine, prompt_tokens)  # an f16 state (the q8_0 arm's ratio is against it too)
        out[arm] = {"prefix_chunk_tokens": int(arm_env["KVGRAFT_PREFIX_CHUNK_TOKENS"]),
                    "kv_type": arm_env.get("KVGRAFT_KV_TYPE", "f16"), "turns": len(users),
                    "final_prompt_tokens": prompt_tokens,
                    "ttft_ms": [round(x, 1) for x in ttft], "ttft_median_ms": _median(ttft[1:] or ttft),
                    "hits": share(hits, len(users)), "restored_tokens": restored,
                    "stored_bytes": stored, "stored_blocks": blocks, "final_state_bytes": final,
                    "stored_over_final_state": round(stored / final, 2),
                    "byte_mismatches": share(mismatches, len(users)) if request.verify else None}
    out["chunks_ttft_over_whole"] = round(out["chunks"]["ttft_median_ms"] / out["whole"]["ttft_median_ms"], 2)
    for arm in arms:
        if arm.startswith("chunks_"):
            out[f"{arm}_bytes_over_chunks"] = round(out[arm]["stored_bytes"] / out["chunks"]["stored_bytes"], 3)
    out["system_tokens"], out["turn_tokens"] = request.system_tokens, request.turn_tokens
    return out


def _fresh_key(answer: dict[str, Any]) -> list[str]:
    return [answer["kvgraft"]["first_logits_sha256"], answer["choices"][0]["message"]["content"]]


def _prefix_count(rt: Any) -> int:
    import sqlalchemy as sa

    from store.db import PrefixRow

    with rt.session() as s:
        return int(s.scalar(sa.select(sa.func.count()).select_from(PrefixRow)) or 0)


def _breakdown(exts: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of where a kvgraft arm's time went (`kvgraft.timings_ms`) and what it restored and prefilled."""
    steps = sorted({k for e in exts for k in e.get("timings_ms", {})})
    out: dict[str, Any] = {k: _median([e["timings_ms"][k] for e in exts if k in e.get("timings_ms", {})])
                           for k in steps}
    for key in ("restored_tokens", "prefilled_tokens"):
        out[key] = _median([e[key] for e in exts if key in e]) if any(key in e for e in exts) else None
    out["boundary_granule"] = next((e["boundary_granule"] for e in exts if "boundary_granule" in e), None)
    return out


def _workload(client: httpx.Client, model: str, docs: list[str], request: PromptCacheBenchRequest) -> dict[str, Any]:
    prompts = [_messages(docs[i % len(docs)], QUESTIONS[(i // len(docs)) % len(QUESTIONS)] + f" ({i})")
               for i in range(request.requests)]
    answers = [_post(client, model, m, request.max_tokens, cache=True) for m in prompts]
    prefilled = [a["kvgraft"]["prefilled_tokens"] for a in answers]
    prompt = [a["usage"]["prompt_tokens"] for a in answers]
    hits = sum(a["kvgraft"]["cache"] == "hit" for a in answers)
    out: dict[str, Any] = {"requests": len(answers), "prefixes": len(docs),
                           "prompt_tokens_mean": round(statistics.mean(prompt), 1),
                           "prefilled_tokens_mean": round(statistics.mean(prefilled), 1),
                           "prefilled_tokens_total": sum(prefilled), "prompt_tokens_total": sum(prompt),
                           "hits": share(hits, len(answers))}
    if request.verify:  # every answer: a hit restored a prefix, a miss captured them (both compose)
        mismatched = {"hit": 0, "miss": 0, "off": 0}
        for m, a in zip(prompts, answers, strict=True):
            fresh = _post(client, model, m, request.max_tokens, cache=False)
            mismatched[a["kvgraft"]["cache"]] += (
                fresh["kvgraft"]["first_logits_sha256"] != a["kvgraft"]["first_logits_sha256"]
                or fresh["choices"][0]["message"]["content"] != a["choices"][0]["message"]["content"])
        out["byte_mismatches"] = share(sum(mismatched.values()), len(answers))
        out["byte_mismatches_of_hits"] = share(mismatched["hit"], hits)
    return out
