"""`kvgraft models prepare` and `kvgraft models list`: requantized copies of a model and what is known of each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from services.common import JsonOpt, cli_runtime, cli_settings, guard
from services.output import err, key_value_table, out, print_json, records_table

models_app = typer.Typer(no_args_is_help=True, help="Prepare requantized copies of a model and list the models.")


@models_app.command("prepare")
def prepare(
    model: Annotated[str, typer.Argument(help="A known model: smollm2-135m, gemma3-270m, tiny.")],
    weight_type: Annotated[str, typer.Option("--type", help="Weight type: q4_0, q4_1, q5_0, q5_1, q8_0, q4_k_s, "
                                             "q4_k_m, q5_k_s, q5_k_m, q6_k, iq4_nl, f16, bf16, f32.")],
    tokens: Annotated[int, typer.Option(min=16, max=4096, help="Tokens of the shipped text scored for "
                                                               "perplexity.")] = 512,
    solve_rate: Annotated[bool, typer.Option("--solve-rate/--no-solve-rate", help="Also measure the flywheel's "
                          "solve rate of the copy and of MODEL on the same problems (minutes).")] = True,
    solve_dataset: Annotated[str, typer.Option(help="The shipped flywheel set(s) whose library problems "
                                                    "are solved (comma-separated: dev,gsm-dev,varied-dev).")] = "dev",
    solve_samples: Annotated[int, typer.Option(min=1, max=16, help="Sampled programs per problem (K).")] = 4,
    solve_limit: Annotated[int | None, typer.Option(min=1, help="Only the set's first N library problems.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Requantize MODEL to --type with llama.cpp's own quantizer, register it as MODEL-TYPE (its own file, weights
    hash and fingerprint) and store its quality against MODEL's beside it: the perplexity on the shipped text and
    (unless --no-solve-rate) the flywheel dev set's solve rate, K sampled programs per library problem verified in
    the sandbox, for copy and source on the same problems and seeds. A quantized source is dequantized first: the
    copy compounds the source's error (the record says so)."""
    from bench.flywheel import solve_rate as measure_solve_rate
    from engine.graft import default_threads
    from engine.prepare import prepare_model, record_solve_rates

    say = None if json_out else (lambda msg: err.print(f"[dim]models prepare: {msg}[/]"))

    def body() -> dict[str, Any]:
        settings = cli_settings()
        threads = settings.threads or default_threads()
        if say:
            say(f"quantizing {model} to {weight_type} and measuring perplexity")
        prepared = prepare_model(model, weight_type, cache_dir=settings.cache_dir, threads=threads,
                                 text_tokens=tokens)
        if not solve_rate:
            return prepared.as_dict()
        rates = {}
        for name in (prepared.name, model):
            rates[name] = measure_solve_rate(
                name, dataset=solve_dataset, samples=solve_samples, limit=solve_limit,
                progress=None if say is None else (lambda msg, n=name: say(f"solve rate of {n}: {msg}")))
        return record_solve_rates(Path(prepared.path), rates[prepared.name], rates[model])

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        shown = {k: v for k, v in record.items() if not k.startswith("solve_rate")}
        for key in ("solve_rate", "solve_rate_source"):
            if key in record:
                r = record[key]
                shown[key] = f"{r['verified']}/{r['problems']} ({r['dataset']}, K={r['samples']})"
        out.print(key_value_table(f"prepared {record['name']}", shown))


@models_app.command("list")
def list_models(
    names: Annotated[list[str] | None, typer.Argument(help="Only these models (default: every shipped model and "
                                                           "every prepared copy on this machine).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Every model this machine has (shipped and prepared): weight type, perplexity change against its source, and
    whether the serving engine's recorded `batch` check found it batching exactly here (`not checked` until the
    serving engine has run it)."""
    from workers.model_catalog import list_models as catalog

    def body() -> list[dict[str, Any]]:
        with cli_runtime() as rt:
            return [m.as_dict() for m in catalog(rt, names or None)]

    records = guard(body)
    if json_out:
        print_json({"models": records})
        return
    rows = [{"name": r["name"], "type": r["file_type"] or "-", "source": r["source"] or "-",
             "perplexity delta %": "-" if r["perplexity_delta_pct"] is None else r["perplexity_delta_pct"],
             "solve rate (source)": _solve_cell(r),
             "batches exactly here": r["batches_exactly"], "note": escape(r["note"] or "")} for r in records]
    out.print(records_table("models", rows, list(rows[0].keys())))


def _solve_cell(listing: dict[str, Any]) -> str:
    copy, source = listing.get("solve_rate"), listing.get("solve_rate_source")
    if not copy or not source:
        return "-"
    return f"{copy['verified']}/{copy['problems']} ({source['verified']}/{source['problems']}) {copy['dataset']}"
