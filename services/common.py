"""Shared pieces of the CLI: option types and the error guard that turns the project's errors into messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from engine.errors import EngineError
from services.output import err
from store.errors import StoreError, database_error

if TYPE_CHECKING:
    from workers.runtime import Runtime
    from workers.settings import Settings

T = TypeVar("T")

ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="GGUF path or known name: smollm2-135m "
                                              "(default, or KVGRAFT_MODEL), gemma3-270m, tiny")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def expected_errors() -> tuple[type[BaseException], ...]:
    from pydantic import ValidationError

    from workers.verify.sandbox import SandboxUnavailableError

    return (EngineError, StoreError, ValueError, LookupError, OSError, ValidationError, database_error(),
            SandboxUnavailableError, RuntimeError)


def _one_line(exc: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):  # a bad KVGRAFT_* setting: name it and say why
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def project_errors() -> tuple[type[BaseException], ...]:
    """The project's own error types, and what a user's input or environment causes (a bad setting, a missing file,
    an unreachable database): always one line."""
    from pydantic import ValidationError

    from workers.problems import ProblemInputError
    from workers.supervise import ChildError, NativeCrashError
    from workers.verify.sandbox import SandboxUnavailableError

    return (EngineError, StoreError, ProblemInputError, SandboxUnavailableError, ChildError, NativeCrashError,
            ValidationError, database_error(), OSError)


def guard(fn: Callable[[], T]) -> T:
    """Run a command body, turning the project's own errors into one-line messages and exit code 2. Built-in errors
    the project also raises for bad input (ValueError, LookupError, RuntimeError) are one line too, except under
    `--log-level debug`, where anything that is not a project error surfaces with its traceback (it may be a bug)."""
    from workers.logs import configured_level

    try:
        return fn()
    except expected_errors() as exc:
        if configured_level() == "DEBUG" and not isinstance(exc, project_errors()):
            raise
        message = _one_line(exc)
        err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
        raise typer.Exit(2) from None


def cli_settings() -> Settings:
    """This command's settings: read from the environment on first use (a bad setting is the command's one-line
    error, not a failure of `--help`), then kept on the command's Click context and passed on from there."""
    import click

    from workers.settings import load_settings

    ctx = click.get_current_context(silent=True)
    if ctx is None:  # called outside a command (a library caller): its own
        return load_settings()
    meta = ctx.find_root().meta
    if "kvgraft.settings" not in meta:
        meta["kvgraft.settings"] = load_settings()
    settings: Settings = meta["kvgraft.settings"]
    return settings


def cli_runtime() -> Runtime:
    """A runtime over this command's settings (cli_settings); the caller closes it (`with cli_runtime() as rt`)."""
    from workers.runtime import open_runtime

    return open_runtime(cli_settings())


def model_name(model: str | None) -> str:
    """The model a command runs: its --model, else KVGRAFT_MODEL (the bundled default)."""
    return model or cli_settings().model
