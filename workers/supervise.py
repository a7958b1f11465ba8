"""Native work in a child process, so that a native crash (SIGILL from an instruction the CPU traps, SIGSEGV, an
OOM kill) ends in a reason instead of taking the caller down with it.

`run_in_child(target, *args)` starts a fresh interpreter (multiprocessing "spawn": nothing native is inherited, no
OpenMP state is forked), calls `target(emit, *args)` there and returns its result. The child reports progress by
calling `emit(event_dict)`; the parent hands each event to `on_event` and remembers the last one, so that a crash
can say what the child was doing. A Python exception in the child comes back as `ChildError`; a death by a signal
comes back as `NativeCrashError` with the signal, the last event and the file holding the child's faulthandler
traceback. The parent never loads llama.cpp itself.

With `stop_grace_s`, SIGTERM on the parent (called in its main thread) is passed to the child, which stops within
its grace (workers/queue/shutdown.StopRequest); a child still alive `stop_grace_s` + STOP_BACKSTOP_S later is
killed. A child that did not return its result then comes back as `Stopped` (not as a crash or an error).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger(__name__)

Emit = Callable[[dict[str, Any]], None]
STOP_BACKSTOP_S = 3.0  # after the grace: a child told to stop that is still alive is killed

SIGNAL_MEANINGS = {
    signal.SIGILL: "illegal instruction: the library uses an instruction this CPU traps",
    signal.SIGSEGV: "segmentation fault",
    signal.SIGBUS: "bus error",
    signal.SIGFPE: "arithmetic fault",
    signal.SIGABRT: "aborted (a failed assertion in native code)",
    signal.SIGKILL: "killed (SIGKILL: out of memory, or by hand)",
}


def describe_signal(signum: int) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
    meaning = SIGNAL_MEANINGS.get(signal.Signals(signum))
    return f"{name} ({meaning})" if meaning else name


class ChildError(RuntimeError):
    """The child raised a Python exception; `kind` is its type name, the message its text."""

    def __init__(self, kind: str, message: str, trace: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.trace = trace


class Stopped(RuntimeError):
    """The parent was told to stop (SIGTERM) and the child ended without its result; `last_event`: its last step."""

    def __init__(self, last_event: dict[str, Any]) -> None:
        super().__init__("stopped by SIGTERM")
        self.last_event = last_event


@dataclass
class NativeCrashError(RuntimeError):
    """The child died by a signal (or exited without a result)."""

    signum: int | None
    exitcode: int | None
    last_event: dict[str, Any] = field(default_factory=dict)
    trace_path: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.reason)

    @property
    def reason(self) -> str:
        if self.signum is not None:
            return f"died with {describe_signal(self.signum)}"
        return f"exited with status {self.exitcode} before returning a result"

    def __str__(self) -> str:
        return self.reason


def _child_main(conn: Any, target: Callable[..., Any], args: tuple[Any, ...], trace_path: str,
                log_level: str | None) -> None:
    import faulthandler

    from workers.logs import configure_logging

    configure_logging(log_level)
    trace = open(trace_path, "w")  # noqa: SIM115 - must stay open until the process dies
    faulthandler.enable(file=trace, all_threads=True)

    def emit(event: dict[str, Any]) -> None:
        conn.send(("event", event))

    try:
        result = target(emit, *args)
    except BaseException as exc:  # every Python-level failure goes back to the parent as data
        conn.send(("error", (type(exc).__name__, str(exc), traceback.format_exc())))
    else:
        conn.send(("result", result))
    finally:
        conn.close()


def run_in_child(target: Callable[..., Any], *args: Any, on_event: Callable[[dict[str, Any]], None] | None = None,
                 poll_s: float = 0.2, timeout_s: float | None = None, stop_grace_s: float | None = None) -> Any:
    """Call `target(emit, *args)` in a fresh child process and return its result (see the module docstring).
    `target` and `args` must be importable/picklable; the result must be picklable."""
    import threading
    import time

    ctx = multiprocessing.get_context("spawn")
    parent_conn, child_conn = ctx.Pipe(duplex=False)
    fd, trace_path = tempfile.mkstemp(prefix="kvgraft-native-", suffix=".trace")
    os.close(fd)
    from workers.logs import configured_level

    proc = ctx.Process(target=_child_main, args=(child_conn, target, args, trace_path, configured_level()),
                       daemon=False)
    proc.start()
    child_conn.close()
    stop_at: list[float] = []  # when SIGTERM came (set by the handler)
    handling = stop_grace_s is not None and threading.current_thread() is threading.main_thread()
    previous: Any = None
    if handling:
        def on_term(_signum: int, _frame: Any) -> None:
            if not stop_at:
                stop_at.append(time.monotonic())
                if proc.pid is not None and proc.is_alive():
                    os.kill(proc.pid, signal.SIGTERM)  # also when the signal reached only this process

        previous = signal.signal(signal.SIGTERM, on_term)
    last_event: dict[str, Any] = {}
    outcome: tuple[str, Any] | None = None
    try:
        waited = 0.0
        while outcome is None:
            if parent_conn.poll(poll_s):
                try:
                    kind, payload = parent_conn.recv()
                except EOFError:  # the child closed its end without a result: it died
                    break
                if kind == "event":
                    last_event = payload
                    if on_event is not None:
                        on_event(payload)
                else:
                    outcome = (kind, payload)
            elif not proc.is_alive():
                if parent_conn.poll(0):  # the child sent its last message and exited between the two checks
                    continue
                break
            elif stop_at and time.monotonic() > stop_at[0] + (stop_grace_s or 0.0) + STOP_BACKSTOP_S:
                log.warning("supervise.child_killed_at_stop", grace_s=stop_grace_s, last_event=last_event)
                proc.kill()
            else:
                waited += poll_s
                if timeout_s is not None and waited > timeout_s:
                    proc.kill()
                    Path(trace_path).unlink(missing_ok=True)
                    raise TimeoutError(f"the child process gave no result within {timeout_s:.0f} s "
                                       f"(last step: {last_event or 'none'})")
        proc.join(timeout=30)
    finally:
        parent_conn.close()
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=10)
        if handling:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
    if stop_at and (outcome is None or outcome[0] == "error"):
        Path(trace_path).unlink(missing_ok=True)
        log.info("supervise.child_stopped", last_event=last_event, outcome=outcome[1][0] if outcome else None)
        raise Stopped(last_event)
    if outcome is None:
        code = proc.exitcode
        crash = NativeCrashError(signum=-code if code is not None and code < 0 else None, exitcode=code,
                                 last_event=last_event, trace_path=_kept_trace(trace_path))
        log.info("supervise.child_crashed", reason=crash.reason, last_event=last_event, trace=crash.trace_path)
        raise crash
    Path(trace_path).unlink(missing_ok=True)
    kind, payload = outcome
    if kind == "error":
        raise ChildError(*payload)
    return payload


def _kept_trace(path: str) -> str | None:
    """The faulthandler trace of a crashed child, or None (and the file removed) when it wrote nothing."""
    p = Path(path)
    if p.exists() and p.stat().st_size > 0:
        return str(p)
    p.unlink(missing_ok=True)
    return None
