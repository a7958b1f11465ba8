"""The `kvgraft` command line. Thin: parse arguments, call workers/engine/store, print, translate errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from services.cli_api import serve, submit, teams_app, tokens_app
from services.cli_audit import audit_app, db_app
from services.cli_bench import bench_app
from services.cli_flywheel import ask, beat, requeue, run, worker, workers
from services.cli_models import models_app
from services.cli_store import attest, blocks_app, deposit
from services.common import JsonOpt, ModelOpt, cli_runtime, cli_settings, guard, model_name
from services.output import err, key_value_table, out, print_json, records_table
from workers.logs import configure_logging

app = typer.Typer(name="kvgraft", no_args_is_help=True, add_completion=False,
                  help="kvgraft: byte-exact KV-cache blocks for frozen language models.")
app.add_typer(bench_app, name="bench")
sandbox_app = typer.Typer(no_args_is_help=True, help="Run untrusted programs in the sandbox.")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(blocks_app, name="blocks")
app.add_typer(audit_app, name="audit")
app.add_typer(db_app, name="db")
app.add_typer(models_app, name="models")
app.command()(deposit)
app.command()(attest)
app.command()(run)
app.command()(ask)
app.command()(worker)
app.command()(requeue)
app.command()(beat)
app.command()(workers)
app.command()(serve)
app.command()(submit)
app.add_typer(tokens_app, name="tokens")
app.add_typer(teams_app, name="teams")


def _load(model: str | None, **config: Any):  # noqa: ANN202 - GraftEngine
    """The graft engine as the deployment configures it (KV type, flash attention), with `config` on top."""
    from engine.graft import GraftEngine
    from workers.settings import engine_config

    settings = cli_settings()
    return GraftEngine.load(model_name(model), engine_config(settings, **config), cache_dir=settings.cache_dir)


@app.callback()
def _main(log_level: Annotated[str | None, typer.Option(help="Log level for events on stderr "
                                                         "(default WARNING or KVGRAFT_LOG_LEVEL).")] = None) -> None:
    configure_logging(log_level)


@app.command()
def selfcheck(
    model: ModelOpt = None,
    tokens: Annotated[int, typer.Option("--tokens", "-n", min=8, max=4096, help="Gate block length N.")] = 64,
    json_out: JsonOpt = False,
) -> None:
    """Does this llama.cpp build run the model here? In a child process: the library's instruction-set flags, a few
    greedy decode tokens and the gate at a small N. A native crash (e.g. SIGILL from AMX under a VM) is reported in
    one line with the signal, the flags and the remedy. Exit 0 iff it decodes and the gate is byte-exact, else 1.
    The last step of `make setup`."""
    from workers.selfcheck import run_selfcheck

    report = run_selfcheck(model, n_tokens=tokens)
    if json_out:
        print_json(report.as_dict())
    if report.ok:
        if not json_out:
            print(report.line())
        return
    print(report.line(), file=sys.stderr)
    raise typer.Exit(1)


@app.command()
def fingerprint(model: ModelOpt = None, json_out: JsonOpt = False) -> None:
    """This machine's architecture fingerprint and its parts, and the default numerics profile."""

    def body() -> None:
        engine = _load(model)
        fp = engine.fingerprint
        profile = engine.profile(8)

        settings = cli_settings()
        record = {"model": engine.name, "gguf": str(engine.model.path), "fingerprint": fp.id,
                  "parts": fp.parts(), "profile_id": profile.id, "profile": profile.as_dict(),
                  "block_signing": settings.block_signing, "block_encryption": settings.block_encryption}
        if json_out:
            print_json(record)
        else:
            out.print(key_value_table(f"fingerprint {fp.id} ({engine.name})", fp.parts()))
            out.print(key_value_table(f"numerics profile {profile.id}", profile.as_dict()))
            out.print(f"block signing: {record['block_signing']}", highlight=False, markup=False)
            out.print(f"block encryption: {record['block_encryption']}", highlight=False, markup=False)

    guard(body)


@app.command()
def gate(
    model: ModelOpt = None,
    tokens: Annotated[int, typer.Option("--tokens", "-n", min=1, help="Block length N: capture [0, N) (default: "
                                         "more than one 512-token prefill chunk).")] = 640,
    query: Annotated[int, typer.Option("--query", "-q", min=1, help="Query tokens Q at [N, N+Q).")] = 8,
    record: Annotated[bool, typer.Option(help="Record the result as a probe attestation in the database.")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Byte-exactness gate on this machine: fresh twice (the floor), capture, block file round trip, restore over a
    separately loaded model, re-capture (recapture_equal), the Q-token query (byte_exact) and 16 greedy tokens one
    at a time (continuation_equal), each compared with fresh. Exit 0 iff all hold and the floor holds, else 1."""
    from engine.gate import GateRequest, run_gate
    from workers.seam import block_file_roundtrip

    def body() -> tuple[Any, int | None]:
        engine = _load(model, n_ctx=max(4096, -(-(tokens + query) // 256) * 256))
        result = run_gate(engine, GateRequest(n_tokens=tokens, n_query=query), roundtrip=block_file_roundtrip)
        if not record:
            return result, None
        from workers.gate_records import record_gate_result

        with cli_runtime() as rt:
            return result, record_gate_result(rt, result)

    result, attestation_id = guard(body)
    record_out = result.as_dict() | {"attestation_id": attestation_id}
    if json_out:
        print_json(record_out)
    else:
        shown = {k: v for k, v in record_out.items() if k not in ("fingerprint_parts", "failures", "passed")}
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
            plot_regimes(report, plot)
        return report

    report = guard(body)
    if json_out:
        print_json(report)  # exactly {model, fingerprint, profile, regimes}
        if plot is not None:
            err.print(f"plot written to {plot}")
        return
    rows = [{"regime": label, **entry} for label, entry in flat_entries(report)]
    out.print(records_table(f"positional regimes: {report['model']} (fingerprint {report['fingerprint']})", rows,
                            ["regime", "byte_equal", "kl_mean", "kl_max", "argmax_flips", "samples"]))
    if plot is not None:
        out.print(f"plot written to {plot}")


@sandbox_app.command("run")
def sandbox_run(
    file: Annotated[Path, typer.Argument(help="A Python program; kvgraft reads it and pipes its text in.")],
    wall_s: Annotated[float, typer.Option(min=0.1, max=600, help="Wall-clock limit in seconds.")] = 10.0,
    output_bytes: Annotated[int, typer.Option(min=1, help="Cap per output stream in bytes.")] = 1 << 20,
    json_out: JsonOpt = False,
) -> None:
    """Run one program in the sandbox and print its verdict (exit code 0 iff the program exited 0)."""
    from workers.verify.sandbox import SandboxLimits, SandboxUnavailableError, run_program

    def body() -> Any:
        source = file.read_bytes().decode("utf-8", errors="replace")
        try:
            return run_program(source, limits=SandboxLimits(wall_s=wall_s, output_bytes=output_bytes))
        except SandboxUnavailableError as exc:
            raise ValueError(str(exc)) from None

    result = guard(body)
    record = {k: result.as_dict()[k] for k in ("exit_code", "stdout", "stderr", "timed_out", "killed", "reason",
                                               "wall_ms", "stdout_truncated", "stderr_truncated", "mechanisms")}
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table(f"sandbox: {file}", record))
    raise typer.Exit(0 if result.ok else 1)


@sandbox_app.command("check")
def sandbox_check(json_out: JsonOpt = False) -> None:
    """Prove the sandbox contains a probe program (uid 65534, no network, read-only outside /tmp, seccomp, no
    nested user namespaces); exit 0 when it does, 1 with one line saying why not."""
    from workers.verify.sandbox import SandboxUnavailableError
    from workers.verify.sandbox_probe import self_test

    try:
        report = self_test()
    except SandboxUnavailableError as exc:
        line = (str(exc).strip().splitlines() or ["the sandbox is unavailable"])[0]
        if json_out:
            print_json({"contained": False, "error": line})
        else:
            err.print(f"[bold red]sandbox not contained:[/] {line}", markup=True, highlight=False)
        raise typer.Exit(1) from None
    record = report.as_dict()
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table("sandbox check: contained", {**record["mechanisms"], "wall_ms": record["wall_ms"]}))


def main() -> None:
    app(prog_name="kvgraft")


if __name__ == "__main__":
    sys.exit(main())
