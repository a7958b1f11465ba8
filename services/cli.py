"""The `kvgraft` command line. Thin: parse arguments, call workers/engine/store, print, translate errors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from engine.errors import EngineError
from services.output import err, key_value_table, out, print_json, records_table
from store.errors import StoreError
from workers.logs import configure_logging

app = typer.Typer(name="kvgraft", no_args_is_help=True, add_completion=False,
                  help="kvgraft: byte-exact KV-cache blocks for frozen language models.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: each prints a JSON record (--json) or a table.")
app.add_typer(bench_app, name="bench")

T = TypeVar("T")
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="GGUF path or known name: smollm2-135m "
                                              "(default, or KVGRAFT_MODEL), gemma3-270m, tiny")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _guard(fn: Callable[[], T]) -> T:
    """Run a command body, turning the project's own errors into one-line messages and exit code 2."""
    try:
        return fn()
    except (EngineError, StoreError, ValueError, OSError) as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None


def _model(model: str | None) -> str:
    from workers.settings import Settings

    return model or Settings().model


def _load(model: str | None, **config: Any):  # noqa: ANN202 - GraftEngine
    from engine.graft import EngineConfig, GraftEngine

    return GraftEngine.load(_model(model), EngineConfig(**config))


@app.callback()
def _main(log_level: Annotated[str | None, typer.Option(help="Log level for events on stderr "
                                                         "(default WARNING or KVGRAFT_LOG_LEVEL).")] = None) -> None:
    configure_logging(log_level)


@app.command()
def fingerprint(model: ModelOpt = None, json_out: JsonOpt = False) -> None:
    """This machine's architecture fingerprint and its parts, and the default numerics profile."""

    def body() -> None:
        engine = _load(model)
        fp = engine.fingerprint
        profile = engine.profile(8)
        record = {"model": engine.name, "gguf": str(engine.model.path), "fingerprint": fp.id,
                  "parts": fp.parts(), "profile_id": profile.id, "profile": profile.as_dict()}
        if json_out:
            print_json(record)
        else:
            out.print(key_value_table(f"fingerprint {fp.id} ({engine.name})", fp.parts()))
            out.print(key_value_table(f"numerics profile {profile.id}", profile.as_dict()))

    _guard(body)


@app.command()
def gate(
    model: ModelOpt = None,
    tokens: Annotated[int, typer.Option("--tokens", "-n", min=1, help="Block length N: capture [0, N).")] = 256,
    query: Annotated[int, typer.Option("--query", "-q", min=1, help="Query tokens Q at [N, N+Q).")] = 8,
    json_out: JsonOpt = False,
) -> None:
    """Byte-exactness gate on this machine: fresh twice (the floor), capture, block file round trip, restore over a
    separately loaded model, query, compare. Exit 0 iff byte-exact and the floor holds, else 1."""
    from engine.gate import GateRequest, run_gate
    from workers.blocks import block_file_roundtrip

    def body() -> Any:
        engine = _load(model, n_ctx=max(4096, -(-(tokens + query) // 256) * 256))
        return run_gate(engine, GateRequest(n_tokens=tokens, n_query=query), roundtrip=block_file_roundtrip)

    result = _guard(body)
    record = result.as_dict()
    if json_out:
        print_json(record)
    else:
        shown = {k: v for k, v in record.items() if k not in ("fingerprint_parts", "failures")}
        verdict = "[bold green]BYTE-EXACT[/]" if result.passed else "[bold red]NOT BYTE-EXACT[/]"
        out.print(key_value_table(f"gate: {result.model}, N={tokens}, Q={query}", shown))
        out.print(verdict)
    for failure in result.failures:
        err.print(f"[red]failed:[/] {failure}")
    raise typer.Exit(0 if result.passed else 1)


@app.command()
def regimes(
    model: ModelOpt = None,
    prompts: Annotated[int, typer.Option(min=3, help="Prompts; samples per regime = prompts x query.")] = 4,
    query: Annotated[int, typer.Option("--query", "-q", min=2, max=63)] = 8,
    plot: Annotated[Path | None, typer.Option(help="Write a log-scale bar chart of KL by regime (PNG).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Positional regimes: own position, relocation, positional control, sequential composition (vs the same
    calls and vs monolithic) and independent stitching, each over prompts x query samples."""
    from engine.plot import plot_regimes
    from engine.regimes import RegimesRequest, flat_entries, run_regimes

    def body() -> dict[str, Any]:
        engine = _load(model)
        progress = (lambda msg: err.print(f"[dim]regimes: {msg}[/]")) if not json_out else None
        report = run_regimes(engine, RegimesRequest(prompts=prompts, n_query=query), progress=progress)
        if plot is not None:
            report["plot"] = str(plot_regimes(report, plot))
        return report

    report = _guard(body)
    if json_out:
        print_json(report)
        return
    rows = [{"regime": label, **entry} for label, entry in flat_entries(report)]
    out.print(records_table(f"positional regimes: {report['model']} (fingerprint {report['fingerprint']})", rows,
                            ["regime", "byte_equal", "kl_mean", "kl_max", "argmax_flips", "samples"]))
    if plot is not None:
        out.print(f"plot written to {report['plot']}")


@bench_app.command("restore")
def bench_restore(
    model: ModelOpt = None,
    tokens: Annotated[str, typer.Option(help="Comma-separated block sizes in tokens.")] = "500,2000,4000",
    runs: Annotated[int, typer.Option(min=1, help="Timed runs per path; the median is reported.")] = 5,
    memory: Annotated[bool, typer.Option(help="Measure the restoring process's peak memory.")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Cold prefill vs restore from a block file vs llama-cpp-python's LlamaDiskCache, each + 1 decoded token."""
    from bench.restore import RestoreBenchRequest, run_restore_bench

    def body() -> dict[str, Any]:
        sizes = tuple(int(t) for t in tokens.split(",") if t.strip())
        if not sizes or min(sizes) < 1:
            raise ValueError("--tokens needs positive integers, e.g. 500,2000,4000")
        progress = (lambda msg: err.print(f"[dim]bench restore: {msg}[/]")) if not json_out else None
        return run_restore_bench(RestoreBenchRequest(model=_model(model), tokens=sizes, runs=runs,
                                                     measure_memory=memory), progress=progress)

    record = _guard(body)
    if json_out:
        print_json(record)
        return
    out.print(records_table(f"bench restore: {record['model']} (median of {runs})", record["results"],
                            list(record["results"][0].keys())))


def main() -> None:
    app(prog_name="kvgraft")


if __name__ == "__main__":
    sys.exit(main())
