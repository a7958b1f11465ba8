"""`kvgraft audit ...` (export and verify audit bundles) and `kvgraft db ...` (Alembic migrations)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from services.common import JsonOpt, cli_runtime, cli_settings, guard
from services.output import err, key_value_table, out, print_json

audit_app = typer.Typer(no_args_is_help=True, help="Export and verify audit bundles.")
db_app = typer.Typer(no_args_is_help=True, help="Database schema (Alembic migrations).")


@audit_app.command("export")
def audit_export(directory: Annotated[Path, typer.Argument(help="A new or empty directory.")],
                 json_out: JsonOpt = False) -> None:
    """Write an audit bundle: tables as JSONL, raw generations, programs, and a manifest of SHA-256 digests."""
    from store.audit import export_bundle
    from store.migrate import current_revision

    def body() -> dict[str, Any]:
        with cli_runtime() as rt, rt.session() as s:
            manifest = export_bundle(s, directory, schema_revision=current_revision(s.get_bind()))
        return {"directory": str(directory), "counts": manifest["counts"], "files": len(manifest["files"])}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table(f"audit bundle written to {directory}", record))


@audit_app.command("verify")
def audit_verify(directory: Annotated[Path, typer.Argument(help="An audit bundle directory.")],
                 rerun: Annotated[bool, typer.Option(help="Re-run every verified program in the sandbox.")] = True,
                 json_out: JsonOpt = False) -> None:
    """Recompute every digest and re-run every recorded verified program in the sandbox, with no model. Names each
    mismatch; exit 1 on any."""
    from store.audit import verify_bundle
    from workers.verify.programs import recheck_program

    def body() -> list[Any]:
        progress = (lambda where: err.print(f"[dim]re-running {where}[/]")) if not json_out else None
        return verify_bundle(directory, recheck=recheck_program if rerun else None, progress=progress)

    mismatches = guard(body)
    if json_out:
        print_json({"ok": not mismatches, "mismatches": [m.__dict__ for m in mismatches]})
    else:
        for m in mismatches:
            err.print(f"[red]mismatch[/] {m}")
        out.print("audit bundle verified" if not mismatches else f"{len(mismatches)} mismatch(es)")
    raise typer.Exit(1 if mismatches else 0)


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Option(help="Target revision.")] = "head") -> None:
    """Apply the migrations to KVGRAFT_DATABASE_URL (an explicit step on PostgreSQL)."""
    from store.migrate import upgrade

    def body() -> Any:
        settings = cli_settings()
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return upgrade(settings.resolved_database_url, revision)

    rev = guard(body)
    out.print(f"database at revision {rev}")


@db_app.command("current")
def db_current() -> None:
    """The database's revision and this build's head revision."""
    from store.migrate import head_revision, revision_at

    def body() -> tuple[str | None, str]:
        return revision_at(cli_settings().resolved_database_url), head_revision()

    current, head = guard(body)
    out.print(f"current {current or '(empty)'}, head {head}")
