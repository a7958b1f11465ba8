"""The workers' own error types, and the stable reason a task's failure is recorded with.

A task that fails ends its problem or question `failed` with one of four reasons, chosen by the project's own
error types and never by a built-in base class (a bug that raises ValueError is a bug, not bad input):
`bad_input` (WorkInputError: what was submitted cannot be worked on as given), `store_error` (StoreError),
`engine_error` (EngineError) and `internal_error` (anything else, logged with its traceback)."""

from __future__ import annotations

from typing import Literal

from engine.errors import EngineError
from store.errors import StoreError

FailureReason = Literal["bad_input", "store_error", "engine_error", "internal_error"]


class WorkInputError(ValueError):
    """What was submitted (a batch, a question, a request's fields) cannot be worked on as given: the submitter's to
    fix, not a fault of the system."""


def failure_reason(exc: BaseException) -> FailureReason:
    """The stable reason a failure is recorded with (see the module's docstring)."""
    if isinstance(exc, WorkInputError):
        return "bad_input"
    if isinstance(exc, StoreError):
        return "store_error"
    if isinstance(exc, EngineError):
        return "engine_error"
    return "internal_error"
