"""structlog configuration for every entry point: events go to stderr (stdout stays for --json output)."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import structlog


class _CurrentStderr:
    """Writes to whatever sys.stderr is at the time of the write (test runners swap it per invocation)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_configured: str | None = None


def configured_level() -> str | None:
    """The level this process configured (passed on to supervised child processes), or None."""
    return _configured


def configure_logging(level: str | None = None) -> None:
    global _configured
    # the variable itself, not load_settings(): a bad setting elsewhere (e.g. a short KVGRAFT_BLOCK_KEY) must reach the
    # command's own error message, not fail while logging is set up
    name = (level or os.environ.get("KVGRAFT_LOG_LEVEL") or "WARNING").upper()
    _configured = name
    numeric = logging.getLevelNamesMapping().get(name, logging.WARNING)
    render: list[Any] = ([structlog.dev.ConsoleRenderer(colors=False)] if sys.stderr.isatty() else
                         [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()])  # tracebacks
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"), *render],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
