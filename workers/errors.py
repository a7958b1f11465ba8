"""The workers' own error types, which errors are transient, and the stable reason a task's failure is recorded with.

A task that fails ends its problem or question `failed` with a reason chosen by the project's own error types and
never by a built-in base class (a bug that raises ValueError is a bug, not bad input):

- `bad_input`: WorkInputError, what was submitted cannot be worked on as given;
- `store_error`: StoreError (a missing or damaged block, the object store unavailable on the last attempt);
- `engine_error`: EngineError;
- `unavailable`: another transient error (TRANSIENT: the database, the broker or the sandbox) still failing on the
  last attempt, infrastructure rather than a bug;
- `internal_error`: anything else, a bug, logged with its traceback.

- `deadline_exceeded`: TaskDeadlineExceeded, the body ran past KVGRAFT_TASK_DEADLINE_S and was abandoned.

Two more reasons are recorded where they are decided: `worker_lost` by a task body (its row's last deliveries each
lost their worker) and `no_live_worker` when a question is sent (no live graft worker can take it); a problem none
of whose samples verified ends `failed` with what its samples did."""

from __future__ import annotations

from typing import Literal

from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from engine.errors import EngineError
from store.errors import ObjectStoreUnavailableError, StoreError
from workers.verify.sandbox_types import SandboxUnavailableError

FailureReason = Literal["bad_input", "store_error", "engine_error", "unavailable", "internal_error",
                        "deadline_exceeded"]


class WorkInputError(ValueError):
    """What was submitted (a batch, a question, a request's fields) cannot be worked on as given: the submitter's to
    fix, not a fault of the system."""


class TextTooLongError(ValueError):
    """A text whose block would not fit the serving window with its probe. Whose fault that is depends on whose text
    it is: a submitted question or reference solution is bad input (the caller says so with WorkInputError); the
    deployment's own skill prefix in a window too small for it is a configuration error (`internal_error`)."""


class TaskDeadlineExceeded(BaseException):
    """A task body ran past KVGRAFT_TASK_DEADLINE_S and was interrupted (workers/queue/liveness.py). A BaseException,
    so that no `except Exception` inside the body swallows it; run_task records it as the outcome."""


class ShutdownAbandoned(BaseException):
    """The process was told to stop (SIGTERM) and a task body was still running when KVGRAFT_SHUTDOWN_GRACE_S ran out:
    it is interrupted like a body past its deadline (workers/queue/liveness.py) but records no outcome, so its row
    stays pending and is worked on again (the broker redelivers an unacknowledged message; `kvgraft run` continues
    its batch). A BaseException, so that no `except Exception` inside the body swallows it."""


class BrokerUnavailableError(ConnectionError):
    """The message broker cannot be reached or refused an operation (kombu's connection and operational errors,
    translated where a task is sent or a queue is inspected)."""


# Errors worth retrying: everything else that goes wrong while working on a problem or question ends it `failed`.
# A sandbox that stops working under a running worker is infrastructure, not the problem's fault: retried too.
TRANSIENT: tuple[type[BaseException], ...] = (ObjectStoreUnavailableError, OperationalError, PoolTimeoutError,
                                              ConnectionError, SandboxUnavailableError)


def failure_reason(exc: BaseException) -> FailureReason:
    """The stable reason a failure is recorded with (see the module's docstring)."""
    if isinstance(exc, WorkInputError):
        return "bad_input"
    if isinstance(exc, StoreError):
        return "store_error"
    if isinstance(exc, EngineError):
        return "engine_error"
    if isinstance(exc, TRANSIENT):
        return "unavailable"
    if isinstance(exc, TaskDeadlineExceeded):
        return "deadline_exceeded"
    return "internal_error"
