"""Shared pieces of the CLI: option types and the error guard that turns the project's errors into messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

from engine.errors import EngineError
from services.output import err
from store.errors import StoreError

T = TypeVar("T")

ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="GGUF path or known name: smollm2-135m "
                                              "(default, or KVGRAFT_MODEL), gemma3-270m, tiny")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def expected_errors() -> tuple[type[BaseException], ...]:
    from pydantic import ValidationError
    from sqlalchemy.exc import OperationalError

    from workers.verify.sandbox import SandboxUnavailableError

    return (EngineError, StoreError, ValueError, OSError, ValidationError, OperationalError,
            SandboxUnavailableError, RuntimeError)


def _one_line(exc: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):  # a bad KVGRAFT_* setting: name it and say why
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def guard(fn: Callable[[], T]) -> T:
    """Run a command body, turning the project's own errors into one-line messages and exit code 2."""
    try:
        return fn()
    except expected_errors() as exc:
        message = _one_line(exc)
        err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
        raise typer.Exit(2) from None
