"""`kvgraft run`, `kvgraft ask` and `kvgraft worker`: the flywheel's commands."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from services.common import JsonOpt, ModelOpt, cli_runtime, cli_settings, guard
from services.output import err, key_value_table, out, print_json, records_table

SamplesOpt = Annotated[int, typer.Option("--samples", "-k", min=1, max=64, help="Samples K per problem.")]
TemperatureOpt = Annotated[float, typer.Option(min=0.0, max=2.0, help="Sampling temperature.")]


def _progress(disable: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err, disable=disable)


def run(
    problems: Annotated[Path, typer.Argument(help="Problems as JSONL: id, question, answer, solution, verifier.")],
    model: ModelOpt = None,
    samples: SamplesOpt = 4,
    temperature: TemperatureOpt = 0.7,
    max_tokens: Annotated[int, typer.Option(min=16, max=1024, help="Token budget per sample.")] = 160,
    team: Annotated[str, typer.Option(help="Team the batch belongs to.")] = "local",
    fresh: Annotated[bool, typer.Option(help="Start a new batch even if this file was run before (by default the "
                                              "same file, team and parameters continue their batch).")] = False,
    json_out: JsonOpt = False,
) -> None:
    """The main job: solve -> verify -> deposit every problem, replay each as a recurring query, report.

    The job runs in a child process: a native crash ends the command with one line naming the problem and the
    signal. What was deposited is kept, and running the same command again continues where it stopped. SIGTERM
    stops it within KVGRAFT_SHUTDOWN_GRACE_S + 5 s with exit status 0: no new problem starts, the one running may
    finish within the grace or is left pending, and the same command continues the batch."""
    from workers.flywheel.solve import SolveParams
    from workers.problems import parse_problems_jsonl
    from workers.queue.jobs import JobParams, run_job_child
    from workers.supervise import NativeCrashError, Stopped, run_in_child

    def body() -> dict[str, Any] | None:
        data = problems.read_bytes()
        specs = parse_problems_jsonl(data)  # bad input is refused here, before any child starts
        params = JobParams(solve=SolveParams(samples=samples, temperature=temperature, max_tokens=max_tokens),
                           team=team, model=model, fresh=fresh)
        with _progress(json_out) as bar:
            solve_task = bar.add_task("phase 1: solve, verify, deposit", total=len(specs))
            replay_task = bar.add_task("phase 2: replay as recurring queries", total=len(specs))

            def on_event(event: dict[str, Any]) -> None:
                if event.get("step") == "solved":
                    bar.update(solve_task, completed=event["n"])
                elif event.get("step") == "replayed":
                    bar.update(replay_task, completed=event["n"])

            try:
                return run_in_child(run_job_child, data, params, on_event=on_event,
                                    stop_grace_s=cli_settings().shutdown_grace_s)
            except Stopped:
                return None
            except NativeCrashError as crash:
                raise JobCrashedError(_crash_line(crash, problems.name)) from None

    report = guard(body)
    if report is None:
        err.print(f"kvgraft run: stopped (SIGTERM); every deposit so far is kept: run the same command again to "
                  f"continue the batch of {problems.name}", markup=False, highlight=False)
        raise typer.Exit(0)
    if json_out:
        print_json(report)
        return
    out.print(records_table(f"kvgraft run: {problems.name} on {report['model']} (batch {report['batch_id']})",
                            report["problems"], ["id", "status", "base_verified", "samples", "sample_tokens",
                                                 "answer", "recurrence_route", "recurrence_answer",
                                                 "recurrence_decode_tokens", "recurrence_correct"]))
    out.print(key_value_table("totals", report["totals"]))


class JobCrashedError(RuntimeError):
    """The job's child process died natively; the message is the one line the user reads."""


def _crash_line(crash: Any, file_name: str) -> str:
    event = crash.last_event
    step, problem = event.get("step"), event.get("problem")
    doing = {"solve": f"solving problem {problem!r} ({event.get('n')}/{event.get('total')})",
             "replay": f"replaying problem {problem!r} ({event.get('n')}/{event.get('total')})",
             "skill": "preparing the skill prefix"}.get(str(step), "starting the job")
    trace = f"; native trace: {crash.trace_path}" if crash.trace_path else ""
    return (f"llama.cpp {crash.reason} while {doing} of {file_name}; every deposit so far is kept: run the same "
            f"command again to continue (problems already solved are not solved again); if it happens again, run "
            f"`kvgraft selfcheck`{trace}")


def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    model: ModelOpt = None,
    samples: SamplesOpt = 4,
    team: Annotated[str, typer.Option(help="Answer as this team (its blocks and shared ones).")] = "local",
    timeout: Annotated[float, typer.Option(help="Seconds to wait for a graft worker (with a broker).")] = 300.0,
    json_out: JsonOpt = False,
) -> None:
    """Answer through the library: exact lookup, confidence gate, transfer, abstain."""
    from store.repository import get_or_create_team
    from workers.queue.dispatch import ask_here, question_outcome, send_question, stored_question, submit_question

    options = {"samples": samples, **({"model": model} if model else {})}  # the worker answers with them

    def body() -> dict[str, Any]:
        if not question.strip():
            raise ValueError("the question is empty")
        with cli_runtime() as rt:
            with rt.session() as s:
                team_id = get_or_create_team(s, name=team).id
            if not rt.settings.broker_url:
                request_id, here = ask_here(rt, question, team_id=team_id, options=options)
                answered = _answered(rt, request_id)
                if answered is None:  # answered here, so done or failed: pending means its outcome was not recorded
                    raise RuntimeError(f"the answer to request {request_id} was not recorded")
                return answered | ({"timings_ms": here.timings_ms} if here is not None else {})
            request_id = submit_question(rt, question, team_id=team_id, options=options)
            send_question(rt, request_id)  # a worker of a fingerprint that can answer it, or NoLiveWorkerError
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if (answered := _answered(rt, request_id)) is not None:
                    return answered
                time.sleep(0.5)
            raise TimeoutError(f"no graft worker answered within {timeout:.0f} s (request {request_id})")

    def _answered(rt: Any, request_id: str) -> dict[str, Any] | None:
        """The answer's fields once the question has its outcome (None: still pending)."""
        with rt.session() as s:
            outcome = question_outcome(s, stored_question(s, request_id))
        if outcome["status"] == "failed":
            raise ValueError(f"answering failed: {outcome['error']}")
        if outcome["status"] != "done":
            return None
        return {k: outcome[k] for k in ("answer", "route", "block_id", "decode_tokens", "verified", "attested",
                                        "verified_by", "query_id", "detail", "binding")}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        from workers.flywheel.transfer import binding_summary

        out.print(key_value_table(question, {**record, "binding": binding_summary(record.get("binding"))}))


def worker(
    queue: Annotated[str, typer.Argument(help="solve | graft | attest")],
    attest: Annotated[bool, typer.Option(help="A graft worker also consumes the attest queue.")] = True,
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "INFO",
    hostname: Annotated[str | None, typer.Option(help="Worker node name (default KIND-FINGERPRINT8@host).")] = None,
) -> None:
    """A Celery worker for one kind of work: solve (the shared solve queue), graft (its fingerprint's graft and
    attest queues) or attest (its fingerprint's attest queue), and the upkeep queue; one model task at a time
    (solo pool), late acks, prefetch 1. It records its fingerprint, model and queues at start."""

    if queue not in ("solve", "graft", "attest"):
        err.print(f"[bold red]error:[/] unknown queue {queue!r}: expected solve, graft or attest")
        raise typer.Exit(2)
    from workers.verify.sandbox import SandboxUnavailableError
    from workers.verify.sandbox_probe import self_test

    try:  # every queue runs generated programs or verifiers: a worker without a sandbox must not take work
        self_test()
    except SandboxUnavailableError as exc:
        line = (str(exc).strip().splitlines() or ["the sandbox is unavailable"])[0]
        err.print(f"[bold red]error:[/] refusing to start the {queue} worker: {line} (see `kvgraft sandbox check`)",
                  markup=True, highlight=False)
        raise typer.Exit(2) from None
    settings = cli_settings()
    if not settings.broker_url:
        err.print("[bold red]error:[/] a worker needs a broker: set KVGRAFT_BROKER_URL "
                  "(e.g. amqp://guest:guest@127.0.0.1:5672//)")
        raise typer.Exit(2)
    from workers.queue import tasks
    from workers.queue.celery_app import run_with
    from workers.queue.fleet import default_worker_name, register_worker, worker_queues

    app = run_with(settings)  # the broker, and the settings its tasks' runtime uses

    # The fingerprint this worker computes decides what it consumes: graft and attest work comes only from its
    # fingerprint's queues, so a task never reaches a worker that must refuse its block (the engine loaded here
    # is the one its tasks use). Every worker also takes the model-free upkeep work `kvgraft beat` schedules.
    rt = tasks.runtime()
    try:
        engine = rt.engine()
    except Exception as exc:  # noqa: BLE001 - translated to one line at the edge
        err.print(f"[bold red]error:[/] the {queue} worker cannot load its model: {exc}", markup=True,
                  highlight=False)
        raise typer.Exit(2) from None
    fingerprint = engine.fingerprint.id
    queues = worker_queues(queue, fingerprint, attest=attest)
    name = hostname or default_worker_name(queue, fingerprint)
    register_worker(rt, name=name, kind=queue, model=rt.settings.model, fingerprint=fingerprint, queues=queues)
    err.print(f"{queue} worker {name}: fingerprint {fingerprint}, model {rt.settings.model}, queues "
              f"{', '.join(queues)}", markup=False, highlight=False)
    app.worker_main(["worker", "-Q", ",".join(queues), "--pool", "solo", "--concurrency", "1",
                     "--prefetch-multiplier", "1", "-n", name, "--without-gossip", "--without-mingle",
                     "--without-heartbeat", "--loglevel", loglevel])


def workers(json_out: JsonOpt = False) -> None:
    """The fleet: every registered worker's kind, model, fingerprint and queues, whether its queues have live
    consumers (the broker's count) and how many messages wait in each."""
    from workers.queue.fleet import fleet_report

    def body() -> list[dict[str, Any]]:
        with cli_runtime() as rt:
            return fleet_report(rt)

    items = guard(body)
    if json_out:
        print_json({"items": items, "total": len(items)})
        return
    rows = [{**w, "fingerprint": w["fingerprint"][:16], "queues": ", ".join(w["queues"]),
             "depth": sum(w["depth"].values())} for w in items]
    out.print(records_table("workers", rows, ["name", "kind", "model", "fingerprint", "live", "depth", "queues"]))


def beat(
    schedule: Annotated[Path | None, typer.Option(help="Celery beat's schedule file (default: in KVGRAFT_DATA_DIR).")
                        ] = None,
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "INFO",
) -> None:
    """The scheduler (Celery beat): every KVGRAFT_REQUEUE_INTERVAL_S it has a worker send again the pending work
    that nothing will deliver (submitted while the broker was down: pending for KVGRAFT_REQUEUE_AFTER_S, its
    queue empty, no delivery running). Run one per deployment."""

    settings = cli_settings()
    if not settings.broker_url:
        err.print("[bold red]error:[/] beat needs a broker: set KVGRAFT_BROKER_URL")
        raise typer.Exit(2)
    from workers.queue.celery_app import run_with

    app = run_with(settings)
    path = schedule or settings.data_dir / "celerybeat-schedule"
    path.parent.mkdir(parents=True, exist_ok=True)
    app.start(["beat", "--schedule", str(path), "--loglevel", loglevel])


def requeue(older_than: Annotated[str, typer.Option(help="Only work pending for longer than this (30s, 5m, 1h).")
                                  ] = "5m",
            json_out: JsonOpt = False) -> None:
    """Send again the problems and questions still pending (e.g. submitted while the broker was down); without a
    broker, work on them here. SIGTERM stops it within KVGRAFT_SHUTDOWN_GRACE_S + 5 s with exit status 0: nothing
    new starts, the task running may finish within the grace or is left pending, and running it again goes on."""
    from services.cli_store import parse_age
    from workers.errors import ShutdownAbandoned
    from workers.queue.dispatch import requeue_stale
    from workers.queue.shutdown import StopRequest

    stop = StopRequest(cli_settings().shutdown_grace_s)

    def body() -> dict[str, Any]:
        age = parse_age(older_than)
        stop.install()
        with cli_runtime() as rt:
            return requeue_stale(rt, older_than_s=age.total_seconds())

    try:
        record = guard(body)
    except ShutdownAbandoned:
        record = None
    if record is None or stop.requested.is_set():
        err.print("kvgraft requeue: stopped (SIGTERM); what was not sent or worked on is still pending: run it "
                  "again to go on", markup=False, highlight=False)
        raise typer.Exit(0)
    if json_out:
        print_json(record)
    else:
        out.print(f"requeued {record['problems']} problem(s) and {record['questions']} question(s)")
