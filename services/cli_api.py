"""`kvgraft serve`, `kvgraft tokens create|list|revoke` and `kvgraft submit`: the API and its clients."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from services.common import JsonOpt, cli_runtime, cli_settings, guard
from services.output import err, key_value_table, out, print_json, records_table

tokens_app = typer.Typer(no_args_is_help=True, help="API bearer tokens (stored hashed; shown once).")
teams_app = typer.Typer(no_args_is_help=True, help="Teams, and which teams' shared blocks are trusted.")


def serve(host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
          port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
          log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info") -> None:
    """Serve the HTTP API (FastAPI under uvicorn). SIGTERM or SIGINT: stop admitting, let in-flight requests finish
    for KVGRAFT_SHUTDOWN_GRACE_S (then cancel them), stop a running check, and exit 0."""
    import os
    import signal
    import threading

    import uvicorn

    from services.api import create_app

    settings = cli_settings()
    app = create_app(settings)
    app.state.shutdown_grace_s = settings.shutdown_grace_s  # the lifespan's bound on closing the runtime
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level,
                                           timeout_graceful_shutdown=max(1, round(settings.shutdown_grace_s))))
    for sig in (signal.SIGTERM, signal.SIGINT):  # uvicorn re-raises the signal it stopped for: this handler takes
        signal.signal(sig, lambda *_: None)     # it, so that a stop it was asked for exits 0
    server.run()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        err.print("stopped; abandoning work still running after the grace period (it is redelivered)")
        os._exit(0)  # a thread still running work would hold the interpreter's exit


@tokens_app.command("create")
def tokens_create(team: Annotated[str, typer.Option(help="Team name (created if new).")],
                  role: Annotated[str, typer.Option(help="submitter | operator | auditor")],
                  label: Annotated[str | None, typer.Option(help="A note to recognise the token by.")] = None,
                  json_out: JsonOpt = False) -> None:
    """Create a token; the plaintext is printed once and only its SHA-256 is stored."""
    from store.repository import create_api_token, get_or_create_team

    def body() -> dict[str, Any]:
        with cli_runtime() as rt, rt.session() as s:
            row, token = create_api_token(s, team=get_or_create_team(s, name=team), role=role, label=label)
            return {"token": token, "id": row.id, "team": team, "role": role}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table("token created (shown once: store it now)", record))


@tokens_app.command("list")
def tokens_list(json_out: JsonOpt = False) -> None:
    """Tokens by id, team, role and state (never the token itself)."""
    from store.repository import list_tokens

    def body() -> list[dict[str, Any]]:
        with cli_runtime() as rt, rt.session() as s:
            rows = list_tokens(s)
            return [{"id": t.id, "team": name, "role": t.role, "label": t.label,
                     "created_at": t.created_at.isoformat(),
                     "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None} for t, name in rows]

    items = guard(body)
    if json_out:
        print_json({"items": items, "total": len(items)})
    else:
        out.print(records_table("API tokens", items, ["id", "team", "role", "label", "created_at", "revoked_at"]))


@tokens_app.command("revoke")
def tokens_revoke(token_id: Annotated[int, typer.Argument(help="Token id (from `kvgraft tokens list`).")]) -> None:
    """Revoke a token: it is refused (401) from now on."""
    from store.repository import revoke_token

    def body() -> None:
        with cli_runtime() as rt, rt.session() as s:
            revoke_token(s, token_id=token_id)

    guard(body)
    out.print(f"token {token_id} revoked")


@teams_app.command("list")
def teams_list(json_out: JsonOpt = False) -> None:
    """Teams: trusted (an operator's mark) and the teams each one chose to graft shared blocks from."""
    from store.repository import list_teams

    def body() -> list[dict[str, Any]]:
        with cli_runtime() as rt, rt.session() as s:
            teams = list_teams(s)
            names = {t.id: t.name for t in teams}
            return [{"id": t.id, "name": t.name, "trusted": t.trusted, "quota_bytes": t.quota_bytes,
                     "graft_from": None if t.graft_from is None else [names.get(i, i) for i in t.graft_from]}
                    for t in teams]

    items = guard(body)
    if json_out:
        print_json({"items": items, "total": len(items)})
    else:
        out.print(records_table("teams", items, ["id", "name", "trusted", "quota_bytes", "graft_from"]))


def _set_trust(name: str, trusted: bool) -> None:
    from store.repository import set_team_trusted

    def body() -> None:
        with cli_runtime() as rt, rt.session() as s:
            set_team_trusted(s, name=name, trusted=trusted)

    guard(body)
    out.print(f"team {name} is {'trusted' if trusted else 'not trusted'}")


@teams_app.command("trust")
def teams_trust(name: Annotated[str, typer.Argument(help="Team name.")]) -> None:
    """Mark a team trusted: every team that has not chosen its own sources grafts its shared verified blocks."""
    _set_trust(name, True)


@teams_app.command("untrust")
def teams_untrust(name: Annotated[str, typer.Argument(help="Team name.")]) -> None:
    """Withdraw the mark: the team's shared blocks are grafted only by teams that chose it."""
    _set_trust(name, False)


@teams_app.command("quota")
def teams_quota(name: Annotated[str, typer.Argument(help="Team name.")],
                size: Annotated[str, typer.Argument(help="Bytes of blocks the team may own (500MB, 2GiB), or none.")],
                json_out: JsonOpt = False) -> None:
    """Set a team's byte quota (the blocks it owns, each at its own deposit's size): a deposit that would exceed it
    first drops the team's own least recently used document and prompt-prefix ownerships, and is refused if that
    is not enough."""
    from services.cli_store import parse_size
    from store.repository import set_team_quota
    from store.retention import team_bytes

    def body() -> dict[str, Any]:
        quota = None if size.strip().lower() == "none" else parse_size(size)
        with cli_runtime() as rt, rt.session() as s:
            team = set_team_quota(s, name=name, quota_bytes=quota)
            if team is None:
                raise LookupError(f"no team {name!r}")
            return {"team": name, "quota_bytes": quota, "held_bytes": team_bytes(s, team_id=team.id)}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(f"team {name}: quota {record['quota_bytes'] if record['quota_bytes'] is not None else 'none'}, "
                  f"holds {record['held_bytes']} bytes")


def submit(
    problems: Annotated[Path, typer.Argument(help="Problems as JSONL.")],
    api: Annotated[str | None, typer.Option(help="API base URL (default KVGRAFT_API_URL).")] = None,
    token: Annotated[str | None, typer.Option(help="Bearer token (default KVGRAFT_API_TOKEN).")] = None,
    shared: Annotated[bool, typer.Option(help="Let every team reuse the blocks this batch produces.")] = False,
    wait: Annotated[bool, typer.Option(help="Wait for every problem's outcome, with a progress bar.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.")] = 6 * 3600,
    json_out: JsonOpt = False,
) -> None:
    """Submit a batch to the HTTP API (and optionally wait for its results)."""
    import httpx

    def body() -> dict[str, Any]:
        settings = cli_settings()
        base = (api or settings.api_url).rstrip("/")
        bearer = token or (settings.api_token.get_secret_value() if settings.api_token else None)
        if not bearer:
            raise ValueError("no API token: pass --token or set KVGRAFT_API_TOKEN")
        headers = {"Authorization": f"Bearer {bearer}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            answer = client.post("/v1/batches", params={"shared": shared}, content=problems.read_bytes(),
                                 headers={"Content-Type": "application/x-ndjson"})
            _raise_for(answer)
            batch_id = answer.json()["batch_id"]
            if not wait:
                return {"batch_id": batch_id, "status": "queued"}
            deadline = time.monotonic() + timeout
            with Progress(TextColumn("batch {task.fields[batch]}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, disable=json_out) as bar:
                task = bar.add_task("solving", total=None, batch=batch_id)
                while True:
                    state = client.get(f"/v1/batches/{batch_id}")
                    _raise_for(state)
                    data = state.json()
                    counts = data["counts"]
                    bar.update(task, total=counts["total"], completed=counts["total"] - counts["pending"])
                    if data["status"] in ("done", "failed"):
                        return data
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"batch {batch_id} not done after {timeout:.0f} s")
                    time.sleep(1.0)

    record = guard(body)
    if json_out:
        print_json(record)
    elif "problems" in record:
        out.print(records_table(f"batch {record['batch_id']}: {record['status']}", record["problems"],
                                ["id", "status", "answer", "block_id", "reason"]))
    else:
        out.print(f"batch {record['batch_id']} submitted")


def _raise_for(response: Any) -> None:
    if response.status_code >= 400:
        try:
            error = response.json()["error"]
            message = f"{error['code']}: {error['message']}"
        except (ValueError, KeyError, TypeError):
            message = response.text[:500]
        raise ValueError(f"the API answered {response.status_code}: {message}")
