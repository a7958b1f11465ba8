"""`kvgraft bench ...`: each benchmark prints a JSON record (--json) or a table; the figures go into
docs/BENCHMARKS.md with the exact command."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from services.common import JsonOpt, ModelOpt, guard, model_name
from services.output import err, key_value_table, out, print_json, records_table

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: each prints a JSON record (--json) or a table.")


def _stop_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _progress(name: str, json_out: bool) -> Callable[[str], None] | None:
    """Progress lines on stderr for a table run (a --json run prints only its record)."""
    return None if json_out else (lambda msg: err.print(f"[dim]bench {name}: {msg}[/]"))


def _measured(body: Callable[[], dict[str, Any]], json_out: bool) -> dict[str, Any] | None:
    """Run a benchmark (its errors as one line, exit 2); with --json print its record and return None, else return
    the record for the command's table."""
    record = guard(body)
    if json_out:
        print_json(record)
        return None
    return record


@bench_app.callback()
def _bench(ctx: typer.Context) -> None:
    """A benchmark stopped with SIGTERM unwinds like one stopped with Ctrl-C: the servers and processes it started
    (moto, `kvgraft serve` pods, workers, llama_cpp.server) are stopped with it, not left running. The previous
    handler comes back when the command ends (it matters when the CLI runs inside another program)."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set there
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    ctx.call_on_close(lambda: signal.signal(signal.SIGTERM, previous))


@bench_app.command("restore")
def bench_restore(
    model: ModelOpt = None,
    tokens: Annotated[str, typer.Option(help="Comma-separated block sizes in tokens.")] = "500,2000,4000",
    runs: Annotated[int, typer.Option(min=1, help="Timed runs per path; the median is reported.")] = 5,
    memory: Annotated[bool, typer.Option(help="Measure the restoring process's peak memory.")] = True,
    breakdown: Annotated[bool, typer.Option("--breakdown", help="Print where a cold verified restore's time goes "
                                                                "(context, read, hash, header, set_state, decode).")
                         ] = False,
    kv_types: Annotated[str, typer.Option(help="Comma-separated KV types, run side by side (f16,q8_0).")] = "f16",
    json_out: JsonOpt = False,
) -> None:
    """Cold prefill vs kvgraft's verified restore (cold from the store, warm from the verified cache, pooled) vs
    llama.cpp's state file, LlamaState without scores and LlamaDiskCache, vs the limit (read, memcpy, hash)."""
    from bench.restore import RestoreBenchRequest, run_restore_bench

    def body() -> dict[str, Any]:
        sizes = tuple(int(t) for t in tokens.split(",") if t.strip())
        if not sizes or min(sizes) < 1:
            raise ValueError("--tokens needs positive integers, e.g. 500,2000,4000")
        progress = _progress("restore", json_out)
        return run_restore_bench(RestoreBenchRequest(model=model_name(model), tokens=sizes, runs=runs,
                                                     measure_memory=memory, kv_types=_kv_types(kv_types)),
                                 progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    columns = ["kv_type", "tokens", "prefill_ms", "restore_ms", "restore_only_ms", "restore_warm_only_ms",
               "state_bytes_per_token", "raw_seq_file_ms",
               "state_no_scores_ms", "peer_restore_ms", "limit_ms", "limit_cold_ms", "hash_ms", "speedup_vs_prefill",
               "speedup_warm_vs_prefill"]
    out.print(records_table(f"bench restore: {record['model']} (median of {runs})", record["results"], columns))
    if breakdown:
        rows = [{"tokens": r["tokens"], **r["breakdown_ms"]} for r in record["results"]]
        out.print(records_table("where a cold verified restore's time goes (ms, each step alone)", rows,
                                list(rows[0].keys())))


@bench_app.command("store")
def bench_store(
    size_mb: Annotated[int, typer.Option(min=1, max=1024, help="Block payload size in MiB.")] = 20,
    count: Annotated[int, typer.Option(min=1, max=100, help="Blocks per store.")] = 5,
    s3_endpoint: Annotated[str | None, typer.Option(help="S3 endpoint to measure (default: start a local moto "
                                                         "server).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Put/get throughput of large blocks on local disk and S3, and the cost of verification vs a raw read."""
    from bench.store import StoreBenchRequest, run_store_bench

    def body() -> dict[str, Any]:
        progress = _progress("store", json_out)
        return run_store_bench(StoreBenchRequest(size_mb=size_mb, count=count, s3_endpoint_url=s3_endpoint),
                               progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    columns = ["store", "payloads", "block_bytes", "put_mb_s", "get_verified_mb_s", "raw_read_mb_s",
               "verify_overhead_pct", "get_verified_mb_s_warm", "raw_read_mb_s_warm", "verify_overhead_pct_warm",
               "verified_read_time_vs_clear"]
    out.print(records_table(f"bench store: {count} x {size_mb} MiB", record["results"], columns))


@bench_app.command("load")
def bench_load(
    clients: Annotated[int, typer.Option(min=1, max=256, help="Concurrent clients.")] = 8,
    seconds: Annotated[float, typer.Option(min=1, max=3600, help="How long the clients keep sending.")] = 20.0,
    model: Annotated[str, typer.Option(help="Model of the server under load.")] = "tiny",
    json_out: JsonOpt = False,
) -> None:
    """Concurrent clients submitting batches and queries to a real API server: held, errors, lost, latency."""
    from bench.load import LoadBenchRequest, run_load_bench

    def body() -> dict[str, Any]:
        progress = _progress("load", json_out)
        return run_load_bench(LoadBenchRequest(clients=clients, seconds=seconds, model=model), progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    out.print(key_value_table("bench load", record))


@bench_app.command("context")
def bench_context(
    window: Annotated[int, typer.Option(min=256, max=8192, help="Serving window (its n_ctx) in tokens.")] = 512,
    ratio: Annotated[int, typer.Option(min=2, max=1000, help="Store size as a multiple of the window.")] = 80,
    needles: Annotated[int, typer.Option(min=1, max=10)] = 8,
    model: ModelOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """A paged context store many times the serving window: needles found, restore vs re-prefill, memory."""
    from bench.context import ContextBenchRequest, run_context_bench

    def body() -> dict[str, Any]:
        progress = _progress("context", json_out)
        return run_context_bench(ContextBenchRequest(window=window, ratio=ratio, needles=needles,
                                                     model=model_name(model)), progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    out.print(key_value_table(f"bench context: {record['model']}", {k: v for k, v in record.items()
                                                                      if k not in ("needles", "memory")}))


@bench_app.command("api")
def bench_api(
    queries: Annotated[int, typer.Option(min=5, max=10_000, help="Recurring queries per path.")] = 40,
    model: ModelOpt = None,
    broker: Annotated[str | None, typer.Option(help="Broker URL (default: a private vhost on local RabbitMQ).")
                      ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Recurring queries through API -> RabbitMQ -> graft worker -> S3 vs in-process: p50/p99 and requests/s."""
    from bench.api import ApiBenchRequest, run_api_bench

    def body() -> dict[str, Any]:
        progress = _progress("api", json_out)
        return run_api_bench(ApiBenchRequest(queries=queries, model=model_name(model), broker_url=broker),
                             progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    out.print(records_table(f"bench api: {record['model']}, {queries} recurring queries",
                            [{"path": "in-process", **record["in_process"]},
                             {"path": "distributed", **record["distributed"]}], ["path", "p50_ms", "p99_ms", "rps"]))
    out.print(f"the distributed path adds {record['distributed_adds_p50_pct']}% to the in-process p50")


@bench_app.command("flywheel")
def bench_flywheel(
    dataset: Annotated[str, typer.Option(help="Shipped set: dev (thresholds were chosen on it), check (never "
                                              "used to choose anything), gsm-dev (GSM8K-style families with "
                                              "renamed people and objects, reordered statements and near-misses "
                                              "of entity, unit and step), gsm-check (the same templates, other "
                                              "seeds), varied-dev (44 varied families' even half: currencies, "
                                              "multi-word objects, kin, split statements, near misses per slot "
                                              "kind), varied-check (the odd half, never used to choose "
                                              "anything), varied-fresh (19 families written later and held "
                                              "out: run once, at the end), varied-dev2 (a second pool's even "
                                              "half: new vocabulary and shapes to tune on), varied-fresh2 "
                                              "(that pool's odd half, held out), varied-dev3 / varied-fresh3, "
                                              "varied-dev4 / varied-fresh4, varied-dev5 / varied-fresh5, "
                                              "varied-dev6 / varied-fresh6, varied-dev7 / varied-fresh7 and "
                                              "varied-dev8 / varied-fresh8 (six more pools written blind to the "
                                              "rules: even half to tune on, odd half held out).")] = "dev",
    library: Annotated[Path | None, typer.Option(help="Library JSONL (id, question, answer, optional solution): "
                                                      "problems to solve and deposit.")] = None,
    eval_file: Annotated[Path | None, typer.Option("--eval", help="Eval JSONL (id, question, answer, role: "
                                                                  "recurrence|transfer|renamed|reordered|near_miss|"
                                                                  "near_miss_entity|near_miss_unit|near_miss_step|"
                                                                  "off_distribution; default transfer).")] = None,
    model: ModelOpt = None,
    samples: Annotated[int, typer.Option("--samples", "-k", min=1, max=64, help="Sampling budget K.")] = 4,
    methods: Annotated[bool, typer.Option(help="Also run each transfer method alone on transfer and near-miss "
                                               "questions.")] = True,
    arms: Annotated[str | None, typer.Option(help="Comma-separated arms to run (default all): base_greedy, "
                                                  "base_best_of_k, library, library_gated, reference_library, "
                                                  "reference_library_gated, program, program_gated, graft, "
                                                  "graft_gated. The model-solved library is solved only for "
                                                  "library arms.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Deposit (model-solved and reference-seeded libraries), then recurrence, transfer, near-miss and
    off-distribution questions asked with no answer key: correct, wrong and abstain per arm with Wilson intervals,
    decode tokens and CPU-seconds, and the post-graft gate as a classifier."""
    from bench.flywheel import FlywheelBenchRequest, run_flywheel_bench

    def body() -> dict[str, Any]:
        progress = _progress("flywheel", json_out)
        return run_flywheel_bench(FlywheelBenchRequest(dataset=dataset, library=library, eval=eval_file,
                                                       samples=samples, model=model_name(model), methods=methods,
                                                       arms=tuple(a.strip() for a in (arms or "").split(",")
                                                                  if a.strip())),
                                  progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    rows = [{"phase": role, "arm": arm, **{k: figures.get(k) for k in
                                            ("correct", "wrong", "abstain", "decode_tokens_per_question",
                                             "cpu_s_per_question")}}
            for role, phase in record["phases"].items()
            for arm, figures in {**phase["arms"], **phase.get("transfer_methods", {})}.items() if figures]
    out.print(records_table(f"bench flywheel: {record['model']}, K={samples}, {record['dataset']}", rows,
                            ["phase", "arm", "correct", "wrong", "abstain", "decode_tokens_per_question",
                             "cpu_s_per_question"]))
    refusals = [{"phase": role, "arm": arm, "refusals": "; ".join(f"{k} x{n}" for k, n in figures["refusals"].items())}
                for role, phase in record["phases"].items()
                for arm, figures in phase.get("transfer_methods", {}).items()
                if figures and figures.get("refusals") and arm.startswith("program")]
    if refusals:
        out.print(records_table("program route refusals (failed_at: kind)", refusals, ["phase", "arm", "refusals"]))
    unseen = [{"arm": arm, "rows": rows_name, **{k: counted[k] for k in ("correct", "wrong", "abstain", "questions")}}
              for arm, figures in (record.get("unseen") or {}).items() if figures
              for rows_name, counted in (("all", figures["all"]), ("without paraphrase", figures["without_paraphrase"]),
                                         *((f"variant {v}", c) for v, c in figures["by_variant"].items()))]
    if unseen:
        out.print(records_table("unseen instances (transfer, renamed, reordered)", unseen,
                                ["arm", "rows", "correct", "wrong", "abstain", "questions"]))
    if record["library"] is not None:
        out.print(key_value_table("library (model-solved)", record["library"]))
    out.print(key_value_table("post-graft gate (model-solved library)", record["gate"]))
    out.print(key_value_table("post-graft gate (reference-seeded library)", record["gate_reference"]))


@bench_app.command("routing")
def bench_routing(
    dataset: Annotated[str, typer.Option(help="Shipped set to grade: dev or check.")] = "dev",
    library: Annotated[Path | None, typer.Option(help="Library JSONL (the candidates).")] = None,
    eval_file: Annotated[Path | None, typer.Option("--eval", help="Eval JSONL with `family` and `role`.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """The router's scorers (lexical, BM25) on a routing set: right, wrong and abstained routes, abstention on
    off-distribution questions, margins; thresholds chosen on the dev set. No model."""
    from bench.routing import RoutingBenchRequest, run_routing_bench

    record = guard(lambda: run_routing_bench(RoutingBenchRequest(dataset=dataset, library=library,
                                                                 eval=eval_file)))
    if json_out:
        print_json(record)
        return
    rows = [{"scorer": name, "threshold": g["threshold"], "right": g["in_library"]["right"],
             "wrong_route": g["in_library"]["wrong_route"], "abstain": g["in_library"]["abstain"],
             "off_abstain": g["off_distribution"]["abstain"], "off_routed": g["off_distribution"]["routed"],
             "margin_mean": g["margin_mean"]} for name, g in record["scorers"].items()]
    out.print(records_table(f"bench routing: {record['dataset']}", rows, list(rows[0].keys())))


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated block counts, got {text!r}") from None
    if not sizes or any(n < 10 or n > 10_000_000 for n in sizes):
        raise typer.BadParameter("each size must be between 10 and 10,000,000 blocks")
    return sizes


@bench_app.command("scale")
def bench_scale(
    sizes: Annotated[str, typer.Option(help="Catalogue sizes (solved problems with blocks), comma-separated.")
                     ] = "10000,100000,1000000",
    queries: Annotated[int, typer.Option(min=10, max=100_000, help="Routed questions per size.")] = 200,
    linear_max: Annotated[int, typer.Option(help="Time the linear scan up to this size.")] = 100_000,
    db: Annotated[str, typer.Option(help="PostgreSQL server URL; a private database is created on it.")
                  ] = "postgresql://postgres@127.0.0.1:5432/postgres",
    keep: Annotated[bool, typer.Option(help="Keep the private database afterwards.")] = False,
    workers: Annotated[str, typer.Option(help="Worker counts of the throughput runs (tiny model, RabbitMQ, S3 on "
                                              "moto); 'none' skips them.")] = "1,2,4",
    answers: Annotated[int, typer.Option(min=4, help="Questions per graft-throughput run.")] = 80,
    deposits: Annotated[int, typer.Option(min=2, help="Problems per deposit-throughput run.")] = 24,
    json_out: JsonOpt = False,
) -> None:
    """Routing over 10k-1M catalogued solution blocks on PostgreSQL (synthetic rows, real schema and index): the
    indexed router's p50/p99 and rows examined beside the linear scan it replaced; then graft and deposit
    throughput with 1, 2 and 4 workers on the tiny model, and S3 requests and database statements per answer and
    per deposit."""
    from bench.scale import ScaleBenchRequest, run_scale_bench

    parsed = _sizes(sizes)

    def body() -> dict[str, Any]:
        progress = _progress("scale", json_out)
        fleet = () if workers.strip().lower() == "none" else tuple(int(w) for w in workers.split(","))
        return run_scale_bench(ScaleBenchRequest(sizes=parsed, queries=queries, linear_max=linear_max,
                                                 server_url=db, keep=keep, fleet_workers=fleet,
                                                 fleet_answers=answers, fleet_deposits=deposits),
                               progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    out.print(records_table("bench scale: indexed routing", record["route"],
                            ["blocks", "p50_ms", "p99_ms", "rows_examined", "candidates_mean"]))
    if record["linear_scan"]:
        out.print(records_table("linear scan (before the index)", record["linear_scan"],
                                ["blocks", "p50_ms", "rows_examined"]))
    if record.get("graft_throughput"):
        out.print(records_table("graft throughput (tiny model)", record["graft_throughput"],
                                ["workers", "answers_per_s", "elapsed_s"]))
        out.print(records_table("deposit throughput (tiny model)", record["deposit_throughput"],
                                ["workers", "deposits_per_s", "elapsed_s"]))
        out.print(key_value_table("per answer (first read) / per deposit", {
            "answer s3_requests": record["per_answer"]["s3_requests"],
            "answer db_statements": record["per_answer"]["db_statements"],
            "deposit s3_requests": record["per_deposit"]["s3_requests"],
            "deposit db_statements": record["per_deposit"]["db_statements"]}))


@bench_app.command("prompt-cache")
def bench_prompt_cache(
    model: ModelOpt = None,
    prefix_tokens: Annotated[int, typer.Option(min=64, max=3500, help="Tokens of each shared prefix.")] = 2000,
    samples: Annotated[int, typer.Option(min=1, max=10, help="Prefixes timed per arm.")] = 3,
    prefixes: Annotated[int, typer.Option(min=1, max=10, help="Shared prefixes of the workload.")] = 5,
    requests: Annotated[int, typer.Option(min=1, max=500, help="Requests of the workload.")] = 50,
    verify: Annotated[bool, typer.Option(help="Recompute every cached workload answer fresh and compare.")] = True,
    turns: Annotated[int, typer.Option(min=0, max=50, help="Turns of the multi-turn chat arm (0: not run).")] = 10,
    turn_tokens: Annotated[int, typer.Option(min=8, max=1000, help="New tokens each turn adds.")] = 200,
    system_tokens: Annotated[int, typer.Option(min=16, max=3000, help="The multi-turn chat's system prompt.")
                             ] = 1000,
    chunk_tokens: Annotated[int, typer.Option(min=64, max=2048, help="The chunked arm's stored chunk (a multiple "
                                                                     "of the serving grid).")] = 256,
    kv_types: Annotated[str, typer.Option(help="The chunked arm under each of these KV types (f16,q8_0; q8_0 "
                                               "serves with flash attention on).")] = "f16,q8_0",
    json_out: JsonOpt = False,
) -> None:
    """Time to first token with a long shared prefix: cold, cached on the same pod, cached by another pod (read
    from S3), and llama-cpp-python's OpenAI server warm and after a restart; then a workload of requests sharing
    a few prefixes (prefilled tokens per request, byte mismatches against fresh computation); then a multi-turn
    chat served by a pod storing prefix chunks and by one storing whole prefixes (bytes stored, time to first
    token, byte mismatches)."""
    from bench.prompt_cache import PromptCacheBenchRequest, run_prompt_cache_bench

    def body() -> dict[str, Any]:
        progress = _progress("prompt-cache", json_out)
        return run_prompt_cache_bench(PromptCacheBenchRequest(
            model=model_name(model), prefix_tokens=prefix_tokens, samples=samples, prefixes=prefixes,
            requests=requests, verify=verify, turns=turns, turn_tokens=turn_tokens, system_tokens=system_tokens,
            chunk_tokens=chunk_tokens, kv_types=_kv_types(kv_types)), progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    rows = [{"arm": arm, "ttft_ms": record["ttft_ms"][arm], "total_ms": record["total_ms"][arm]}
            for arm in record["ttft_ms"]]
    out.print(records_table(f"bench prompt-cache: {record['model']}, {prefix_tokens}-token prefix", rows,
                            ["arm", "ttft_ms", "total_ms"]))
    steps = ["lookup", "restore", "prefill", "decode", "restored_tokens", "prefilled_tokens"]
    out.print(records_table("where kvgraft's time went (medians; ms, tokens)",
                            [{"arm": arm, **{k: v.get(k) for k in steps}} for arm, v in record["where_ms"].items()],
                            ["arm", *steps]))
    out.print(key_value_table("ratios and workload", {**record["ratios"], **{
        f"workload {k}": v for k, v in record["workload"].items()}}))
    if record.get("multi_turn"):
        turns_out = record["multi_turn"]
        keys = ["prefix_chunk_tokens", "final_prompt_tokens", "ttft_median_ms", "stored_bytes", "final_state_bytes",
                "stored_over_final_state", "byte_mismatches"]
        out.print(records_table("multi-turn chat: chunks vs whole prefixes",
                                [{"arm": arm, **{k: turns_out[arm][k] for k in keys}} for arm in turns_out
                                 if isinstance(turns_out[arm], dict)],
                                ["arm", *keys]))


@bench_app.command("batch-probe")
def bench_batch_probe(
    model: ModelOpt = None,
    prompt_sets: Annotated[str, typer.Option("--prompts", help="Prompt sets: short (9-37 tokens), long (240-1,080).")
                           ] = "short,long",
    steps: Annotated[int, typer.Option(min=1, max=64, help="Greedy decode steps per sequence.")] = 8,
    chunk: Annotated[int, typer.Option(min=1, max=512, help="The prefill grid (tokens per call).")] = 64,
    threads: Annotated[str, typer.Option(help="Comma-separated thread counts (default: the engine's; the kernel "
                                          "map: the first, else 2).")] = "",
    weights: Annotated[str, typer.Option(help="The kernel map instead: comma-separated weight types (q4_0, q4_1, "
                                         "q5_0, q8_0, q4_k_m, q6_k, f16, bf16, ...), each a copy of --model "
                                         "(prepared when missing), flash attention off and on: batch "
                                         "invariance at 1..max(--rows) sequences, decode ms per row count, prefill "
                                         "tokens/s and the ggml path per row count.")] = "",
    rows: Annotated[str, typer.Option(help="The kernel map's row counts (sequences decoded in one call).")
                    ] = "1,2,3,4,8,12,16",
    flash_attn: Annotated[str, typer.Option("--flash-attn", help="Flash attention settings to probe: on, off or "
                                            "both (one setting per process isolates a crash to it).")] = "both",
    kv: Annotated[str, typer.Option("--kv", help="KV layouts to probe: streams (one per sequence), unified or "
                                    "both.")] = "both",
    json_out: JsonOpt = False,
) -> None:
    """Which configurations keep each sequence's logits byte-identical inside a multi-sequence decode call
    (flash attention on/off, a KV stream per sequence or unified, threads), under three compositions of the calls,
    and the batched step's speed against the solo steps it replaces. With --weights: the kernel map of weight
    types (docs/ENGINE.md)."""
    from bench.batch_probe import PROMPT_SETS, BatchProbeRequest, probe_configs, run_batch_probe

    if weights:
        _kernel_map(model, weights, rows, threads, steps, chunk, json_out)
        return

    def body() -> dict[str, Any]:
        sets = tuple(p.strip() for p in prompt_sets.split(",") if p.strip())
        unknown = [p for p in sets if p not in PROMPT_SETS]
        if not sets or unknown:
            raise ValueError(f"--prompts takes {', '.join(PROMPT_SETS)}, not {', '.join(unknown) or 'nothing'}")
        counts = tuple(int(t) for t in threads.split(",") if t.strip())
        if any(t < 1 for t in counts):
            raise ValueError("--threads needs positive integers")
        configs = probe_configs(flash_attn, kv)
        progress = _progress("batch-probe", json_out)
        return run_batch_probe(BatchProbeRequest(model=model_name(model), prompt_sets=sets, steps=steps, chunk=chunk,
                                                 threads=counts, configs=configs), progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    rows = [{"prompts": r["prompts"], "threads": r["threads"], "flash_attn": r["flash_attn"], "kv": r["kv"],
             **{f"{c} equal": f"{r[c]['positions_equal']}/{r[c]['positions']}" for c in ("all", "ragged",
                                                                                         "prefill_beside")},
             "states equal": f"{r['all']['states_equal']}/{r['all']['states']}",
             "speedup": r["all"].get("speedup")} for r in record["results"]]
    out.print(records_table(f"bench batch-probe: {record['model']}", rows, list(rows[0].keys())))


def _kernel_map(model: str | None, weights: str, rows: str, threads: str, steps: int, chunk: int,
                json_out: bool) -> None:
    from bench.kernel_map import KernelMapRequest, run_kernel_map
    from engine.models import WEIGHT_TYPES

    def body() -> dict[str, Any]:
        types = tuple(w.strip().lower() for w in weights.split(",") if w.strip())
        unknown = [w for w in types if w not in WEIGHT_TYPES]
        if not types or unknown:
            raise ValueError(f"--weights takes {', '.join(WEIGHT_TYPES)}, not {', '.join(unknown) or 'nothing'}")
        counts = _ints(rows, "--rows")
        if max(counts) > 16:
            raise ValueError("--rows: at most 16 sequences")
        thread_counts = _ints(threads, "--threads") if threads.strip() else (2,)
        return run_kernel_map(KernelMapRequest(weights=types, source=model or "smollm2-135m", rows=counts,
                                               steps=min(steps, 8), chunk=chunk, threads=thread_counts[0]),
                              progress=_progress("batch-probe", json_out))

    record = _measured(body, json_out)
    if record is None:
        return
    table = [{"weights": r["weights"], "FA": "on" if r["flash_attn"] else "off",
              "all equal": f"{r['all']['positions_equal']}/{r['all']['positions']}",
              "ragged equal": f"{r['ragged']['positions_equal']}/{r['ragged']['positions']}",
              **{f"{k} rows ms": v for k, v in r["decode_ms"].items()},
              "prefill tok/s": r["prefill_tokens_per_s"]} for r in record["results"]]
    out.print(records_table(f"bench batch-probe kernel map: {record['source']}", table, list(table[0].keys())))


@bench_app.command("graft-batch")
def bench_graft_batch(
    model: ModelOpt = None,
    questions: Annotated[int, typer.Option(min=1, max=256, help="Recurring questions (one block each).")] = 8,
    block_tokens: Annotated[int, typer.Option(min=16, max=8192, help="Tokens per block.")] = 580,
    max_seqs: Annotated[str, typer.Option(help="Comma-separated batch sizes of the together arms.")] = "2,4,8",
    flash_attn: Annotated[bool, typer.Option("--flash-attn/--no-flash-attn",
                                             help="The graft engine's flash attention.")] = False,
    threads: Annotated[int | None, typer.Option(min=1, help="Threads (default: the engine's).")] = None,
    check: Annotated[bool, typer.Option("--check/--no-check", help="Run the engine's batch check too.")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Recurring questions answered one at a time against their answers decoded together, on the same blocks:
    answers per second, and every answer and position compared with the same graft decoded alone."""
    from bench.graft_batch import GraftBatchRequest, run_graft_batch

    def body() -> dict[str, Any]:
        progress = _progress("graft-batch", json_out)
        return run_graft_batch(GraftBatchRequest(model=model_name(model), questions=questions,
                                                 block_tokens=block_tokens, max_seqs=_ints(max_seqs, "--max-seqs"),
                                                 flash_attn=flash_attn, threads=threads, check=check),
                               progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    rows = [{k: a[k] for k in ("arm", "wall_s", "answers_per_s", "ratio_vs_alone")}
            | {"answers equal": f"{a['answers_equal']}/{record['questions']}",
               "positions equal": "-" if a["positions"] is None else f"{a['positions_equal']}/{a['positions']}"}
            for a in record["arms"]]
    out.print(records_table(f"bench graft-batch: {record['model']} (flash attention "
                            f"{'on' if record['flash_attn'] else 'off'})", rows, list(rows[0].keys())))
    if record["batch_check"]:
        out.print(f"batch check: {record['batch_check']['summary']}")


def _kv_types(text: str) -> tuple[str, ...]:
    """Comma-separated KV types, each one the engine knows (a clear error otherwise, before anything runs)."""
    from engine.graft import KV_TYPES

    types = tuple(t.strip() for t in text.split(",") if t.strip())
    unknown = [t for t in types if t not in KV_TYPES]
    if not types or unknown:
        raise ValueError(f"KV types are {', '.join(KV_TYPES)}, not {', '.join(unknown) or 'nothing'}")
    return types


def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise ValueError(f"{what} takes comma-separated positive integers, not {text!r}") from None
    if not values or min(values) < 1:
        raise ValueError(f"{what} takes comma-separated positive integers, not {text!r}")
    return values


@bench_app.command("serve-load")
def bench_serve_load(
    model: ModelOpt = None,
    concurrency: Annotated[str, typer.Option(help="Comma-separated concurrency levels.")] = "1,4,8,16",
    requests: Annotated[int | None, typer.Option(min=1, help="Requests per level (default the concurrency, "
                                                               "at least 4).")] = None,
    workload: Annotated[str, typer.Option(help="specified: 200-2,000-token prompts, 64-256 tokens out; decode: "
                                          "20-100-token prompts, 256 tokens out (a decode-heavy load). "
                                          "--prompt-tokens and --max-tokens override its ranges.")] = "specified",
    prompt_tokens: Annotated[str | None, typer.Option(help="The prompts' token range, LOW,HIGH (default: the "
                                                           "workload's).")] = None,
    max_tokens: Annotated[str | None, typer.Option(help="The outputs' token range, LOW,HIGH (default: the "
                                                        "workload's).")] = None,
    arms: Annotated[str, typer.Option(help="kvgraft_solo, kvgraft_batched, llama_server, llama_cpp_server; "
                                      "kvgraft_split (a batched pod splitting decode steps by KV length) when "
                                      "named.")] = "kvgraft_solo,kvgraft_batched,llama_server,llama_cpp_server",
    long_tokens: Annotated[int, typer.Option(min=16, max=2048, help="Team A's generation in the fairness and "
                                                                    "cancellation measurements.")] = 2000,
    threads: Annotated[int | None, typer.Option(min=1, help="Threads for every arm (default the engine's).")] = None,
    step_tokens: Annotated[int | None, typer.Option(min=0, help="KVGRAFT_SERVING_STEP_TOKENS for the batched pod: "
                                                                "its prefill budget of a step while others decode "
                                                                "(0: whole grid chunks; default: not changed).")
                           ] = None,
    step_tokens_max: Annotated[int | None, typer.Option(min=0, help="KVGRAFT_SERVING_STEP_TOKENS_MAX for the "
                                                                    "batched pods: the budget per decoding row up to "
                                                                    "this (default: not changed).")] = None,
    step_ratio: Annotated[float | None, typer.Option(min=0, help="KVGRAFT_SERVING_STEP_RATIO for the batched "
                                                                 "pods: the budget chosen from step costs measured "
                                                                 "at the pod's start (0: the budget as set; "
                                                                 "default: not changed).")] = None,
    split_cells: Annotated[int, typer.Option(min=1, help="KVGRAFT_SERVING_SPLIT_CELLS for the kvgraft_split arm: "
                                                         "the attention row-cells an extra decode call must "
                                                         "save.")] = 3072,
    prefill_tokens: Annotated[int, typer.Option(min=16, max=3000, help="Team A's prompt in the inter-token "
                                                                       "fairness measurement.")] = 2000,
    decode_tokens: Annotated[int, typer.Option(min=8, max=2048, help="Team B's decoding request's tokens in the "
                                                                     "inter-token fairness measurement.")] = 384,
    json_out: JsonOpt = False,
) -> None:
    """Many streamed chat requests at once: kvgraft with batching off and batched, llama.cpp's llama-server (built
    from the same vendored source, -np = the concurrency) and llama_cpp.server, side by side; output tokens/s,
    time to first token, inter-token latency, every batched answer against its solo computation, fairness across
    teams and a client that disconnects."""
    from bench.serve_load import WORKLOADS, ServeLoadBenchRequest, run_serve_load_bench

    def body() -> dict[str, Any]:
        levels = _ints(concurrency, "--concurrency")
        if workload not in WORKLOADS:
            raise ValueError(f"--workload takes {', '.join(WORKLOADS)}, not {workload!r}")
        preset_prompts, preset_outputs = WORKLOADS[workload]
        prompts = _ints(prompt_tokens, "--prompt-tokens") if prompt_tokens else preset_prompts
        outputs = _ints(max_tokens, "--max-tokens") if max_tokens else preset_outputs
        if len(prompts) != 2 or len(outputs) != 2 or prompts[0] > prompts[1] or outputs[0] > outputs[1]:
            raise ValueError("--prompt-tokens and --max-tokens take LOW,HIGH")
        if outputs[1] > 2048:
            raise ValueError("--max-tokens is at most 2048 (the API's limit)")
        progress = _progress("serve-load", json_out)
        return run_serve_load_bench(ServeLoadBenchRequest(
            model=model_name(model), concurrency=levels, requests=requests, prompt_tokens=(prompts[0], prompts[1]),
            max_tokens=(outputs[0], outputs[1]), arms=tuple(a.strip() for a in arms.split(",") if a.strip()),
            long_tokens=long_tokens, threads=threads, workload=workload, step_tokens=step_tokens,
            step_tokens_max=step_tokens_max, step_ratio=step_ratio, split_cells=split_cells,
            prefill_tokens=prefill_tokens,
            decode_tokens=decode_tokens), progress=progress)

    record = _measured(body, json_out)
    if record is None:
        return
    rows = [{"arm": arm, "concurrency": c, **row} for arm, by_c in record["arms"].items() for c, row in by_c.items()]
    out.print(records_table(f"bench serve-load: {record['model']}, {record['threads']} threads", rows,
                            ["arm", "concurrency", "output_tokens_per_s", "ttft_ms_p50", "ttft_ms_p99", "itl_ms_p50",
                             "requests", "wall_s"]))
    out.print(key_value_table("exactness, fairness, cancellation and ratios", {
        "batched_checked": record["batched_checked"], "batched_mismatches": record["batched_mismatches"],
        **{f"fairness {k}": v for k, v in record.get("fairness", {}).items()},
        **{f"cancel {k}": v for k, v in record.get("cancel", {}).items()}, **record["ratios"]}))


@bench_app.command("serve-bound")
def bench_serve_bound(
    models: Annotated[str, typer.Option(help="Comma-separated models (known names or prepared copies such as "
                                        "smollm2-135m-q8_0, made by `kvgraft models prepare`).")
                      ] = "smollm2-135m,smollm2-135m-q8_0",
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="The serve-load level whose requests are "
                                             "measured.")] = 8,
    requests: Annotated[int | None, typer.Option(min=1, help="Requests (default the concurrency, at least 4).")
                        ] = None,
    workload: Annotated[str, typer.Option(help="serve-load's workload preset: specified or decode.")] = "specified",
    rows: Annotated[int | None, typer.Option(min=1, max=64, help="Rows of the measured decode call (default the "
                                             "concurrency).")] = None,
    threads: Annotated[int | None, typer.Option(min=1, help="Threads (default the engine's).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """The most output tokens/s kvgraft's schedule could serve one serve-load level at (that level alone on a fresh
    pod) with each model's kernels here: its prompts' prefill work (less what the prompt cache could restore
    within the level) plus its output caps at the cost of a row of a full decode call, measured in-process
    (bench/serve_bound.py says why it bounds)."""
    from bench.serve_bound import ServeBoundRequest, run_serve_bound

    def body() -> dict[str, Any]:
        names = tuple(m.strip() for m in models.split(",") if m.strip())
        return run_serve_bound(ServeBoundRequest(models=names or (model_name(None),),
                                                 concurrency=concurrency, requests=requests, workload=workload,
                                                 rows=rows, threads=threads),
                               progress=_progress("serve-bound", json_out))

    record = _measured(body, json_out)
    if record is None:
        return
    table = [{"model": name, **{k: v for k, v in m.items() if not isinstance(v, dict)}}
             for name, m in record["models"].items()]
    out.print(records_table(f"bench serve-bound: {record['workload']} workload, {record['requests']} requests",
                            table, list(table[0].keys())))


@bench_app.command("deposit-privacy")
def bench_deposit_privacy(
    model: Annotated[str, typer.Option(help="Model whose prefix states are deposited.")] = "tiny",
    tokens: Annotated[int, typer.Option(min=2, max=8192, help="Prefix length in tokens (every arm the same).")] = 256,
    pairs: Annotated[int, typer.Option(min=1, max=200, help="Pairs of the three arms, the order alternated.")] = 9,
    json_out: JsonOpt = False,
) -> None:
    """Team B's prefix deposit when team A's same block was evicted, is live, or never existed (a wrong guess of
    the same length): paired times and ratios, where the time goes (object write, SQL) and the WAL bytes written."""
    from bench.deposit_privacy import DepositPrivacyRequest, run_deposit_privacy_bench

    def body() -> dict[str, Any]:
        return run_deposit_privacy_bench(DepositPrivacyRequest(model=model, tokens=tokens, pairs=pairs),
                                         progress=_progress("deposit-privacy", json_out))

    record = _measured(body, json_out)
    if record is None:
        return
    rows = [{"arm": arm, **{k: v["median"] for k, v in a.items() if isinstance(v, dict)},
             "statements": a["statements"], "wal_bytes": a["wal_bytes"]} for arm, a in record["arms"].items()]
    out.print(records_table(f"bench deposit-privacy: {record['model']}, {tokens} tokens, {pairs} pairs (medians)",
                            rows, list(rows[0].keys())))
    out.print(key_value_table("paired ratios (median, p25-p75)", {
        k: f"{v['median']} ({v['p25']}-{v['p75']}), slower in {v['slower_in']} of {v['pairs']}"
        for k, v in record["paired_ratios"].items()}))
