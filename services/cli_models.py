"""`kvgraft models prepare` and `kvgraft models list`: requantized copies of a model and what is known of each."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from services.common import JsonOpt, cli_runtime, cli_settings, guard
from services.output import key_value_table, out, print_json, records_table

models_app = typer.Typer(no_args_is_help=True, help="Prepare requantized copies of a model and list the models.")


@models_app.command("prepare")
def prepare(
    model: Annotated[str, typer.Argument(help="A known model: smollm2-135m, gemma3-270m, tiny.")],
    weight_type: Annotated[str, typer.Option("--type", help="Weight type: q4_0, q4_1, q5_0, q5_1, q8_0, q4_k_s, "
                                             "q4_k_m, q5_k_s, q5_k_m, q6_k, iq4_nl, f16, bf16, f32.")],
    tokens: Annotated[int, typer.Option(min=16, max=4096, help="Tokens of the shipped text scored for "
                                                               "perplexity.")] = 512,
    json_out: JsonOpt = False,
) -> None:
    """Requantize MODEL to --type with llama.cpp's own quantizer, register it as MODEL-TYPE (its own file, weights
    hash and fingerprint) and store its perplexity against MODEL's on the shipped text beside it. A quantized source
    is dequantized first: the copy compounds the source's error (the record says so)."""
    from engine.graft import default_threads
    from engine.prepare import prepare_model

    def body() -> dict[str, Any]:
        settings = cli_settings()
        threads = settings.threads or default_threads()
        return prepare_model(model, weight_type, cache_dir=settings.cache_dir, threads=threads,
                             text_tokens=tokens).as_dict()

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table(f"prepared {record['name']}", record))


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
             "batches exactly here": r["batches_exactly"], "note": escape(r["note"] or "")} for r in records]
    out.print(records_table("models", rows, list(rows[0].keys())))
