"""Generated programs: extracting the program from a sample, and verifying a program in the sandbox against a
known answer or a problem's verifier.

A verifier is Python source defining `verify(answer: str) -> bool`. It receives the program's printed answer as a
string (carried to it as JSON data, never spliced into source) and must treat it as data: parse it (int(),
float(), json.loads(), a regular expression) and never eval() or exec() it. The answer is written by the
untrusted program, so a verifier that evaluates it runs the program's author's code with the verifier's authority:
it can make any comparison come out true (an object whose __eq__ always says yes), and no harness can tell.

The verdict travels out of band. A harness runs inside the sandbox: it forks the verifier into a process of its
own (the harness made itself non-dumpable first, so the verifier cannot open the harness's /proc entries), takes
that process's answer only as one byte on a private pipe plus a clean exit, and writes `<nonce> verified` or
`<nonce> rejected` to a channel descriptor only the harness holds, with a random per-run nonce the parent checks.
The verifier's stdout, stderr and exit status carry nothing: a verifier that prints "KVGRAFT-VERIFIED" and calls
os._exit(0) is rejected. Only `True` itself (not a truthy object) accepts. When the sandbox cannot start, the
error (SandboxUnavailableError) propagates: there is no verdict rather than a wrong one.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

import structlog

from workers.verify.answer_match import answers_match, extract_answer
from workers.verify.sandbox import SandboxLimits, SandboxResult, SandboxUnavailableError, run_harness, run_program

log = structlog.get_logger(__name__)

MAX_PROGRAM_CHARS = 8000


@dataclass(frozen=True)
class Verification:
    verdict: str  # verified | wrong | error | timeout | no_program | unchecked
    answer: str | None
    sandbox: dict[str, Any] | None

    @property
    def ran_cleanly(self) -> bool:
        return self.sandbox is not None and self.sandbox.get("reason") == "ok" and self.answer is not None


def extract_program(generated: str) -> str | None:
    """The program in a sample generated after an opening ```python fence (up to a closing fence, if any)."""
    program = generated.split("```", 1)[0].strip("\n")
    if not program.strip() or len(program) > MAX_PROGRAM_CHARS:
        return None
    return program


def verifier_source(verifier: Any) -> str | None:
    """A verifier is Python source defining `verify(answer: str) -> bool`, given as a string or {"python": ...}."""
    if verifier is None:
        return None
    if isinstance(verifier, str):
        return verifier
    if isinstance(verifier, dict) and isinstance(verifier.get("python"), str):
        return verifier["python"]
    raise ValueError('a verifier must be Python source defining verify(answer), or {"python": "..."}')


# The harness, run inside the sandbox with CHANNEL_FD (its private verdict channel) in its globals and the job as
# JSON on stdin. It is fixed code: the verifier's source and the answer reach it only as JSON strings.
VERIFIER_HARNESS = """
import ctypes, json, os, sys, traceback
job = json.loads(sys.stdin.buffer.read())
nonce = job["nonce"]
def report(word):
    os.write(CHANNEL_FD, (nonce + " " + word + "\\n").encode())
if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE 0: /proc/<harness>/fd closed
    report("harness-error prctl")
    raise SystemExit(3)
result_r, result_w = os.pipe()
sys.stdout.flush()
sys.stderr.flush()
pid = os.fork()
if pid == 0:
    code = 1
    try:
        os.close(CHANNEL_FD)
        os.close(result_r)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        source, answer = job["source"], job["answer"]
        del job, nonce
        namespace = {"__name__": "__main__"}
        exec(compile(source, "<verifier>", "exec"), namespace)
        accepted = namespace["verify"](answer) is True
        os.write(result_w, b"T" if accepted else b"F")
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
os.close(result_w)
_, status = os.waitpid(pid, 0)
os.set_blocking(result_r, False)
try:
    said = os.read(result_r, 8)
except BlockingIOError:
    said = b""
report("verified" if status == 0 and said == b"T" else "rejected")
"""


def _run_verifier(source: str, answer: str, limits: SandboxLimits | None) -> bool:
    """True only when the harness's private channel says `<this run's nonce> verified`."""
    nonce = secrets.token_hex(16)
    payload = json.dumps({"nonce": nonce, "source": source, "answer": answer}).encode()
    run = run_harness(VERIFIER_HARNESS, payload, limits=limits)
    if run.channel[:1] and run.channel[0].startswith(f"{nonce} harness-error"):
        raise SandboxUnavailableError(f"the verifier harness could not run: {run.channel[0].split(' ', 2)[-1]}")
    verified = run.channel == (f"{nonce} verified",)
    log.info("verifier.finished", verified=verified, reason=run.result.reason, channel_lines=len(run.channel))
    return verified


def verify_program(program: str | None, *, answer: Any = None, verifier: Any = None,
                   limits: SandboxLimits | None = None) -> Verification:
    """Run a program in the sandbox; `verified` only when it ran cleanly and agreed with the known answer or the
    verifier; `unchecked` when it ran but there is nothing to check it against."""
    if program is None:
        return Verification("no_program", None, None)
    result: SandboxResult = run_program(program, limits=limits)
    printed = extract_answer(result.stdout)
    record = result.as_dict() | {"stdout": result.stdout[-2000:], "stderr": result.stderr[-2000:]}
    if result.timed_out:
        return Verification("timeout", printed, record)
    if not result.ok or printed is None:
        return Verification("error", printed, record)
    source = verifier_source(verifier)
    if source is not None:
        return Verification("verified" if _run_verifier(source, printed, limits) else "wrong", printed, record)
    if answer is not None:
        return Verification("verified" if answers_match(printed, answer) else "wrong", printed, record)
    return Verification("unchecked", printed, record)


def recheck_program(program: str, expected: Any, verifier: Any = None, *,
                    limits: SandboxLimits | None = None) -> tuple[bool, str]:
    """Re-run a recorded program in the sandbox and check it still verifies: against the problem's verifier when it
    has one (a verifier-only problem has no expected answer), else against the expected answer."""
    check = verify_program(program, answer=expected, verifier=verifier, limits=limits)
    if check.verdict == "verified":
        return True, check.answer or ""
    sandbox = check.sandbox or {}
    if sandbox.get("reason") not in (None, "ok"):
        return False, f"sandbox verdict {sandbox.get('reason')} (exit {sandbox.get('exit_code')})"
    against = "the verifier" if verifier is not None else f"expected {expected!r}"
    return False, f"printed {check.answer!r}; {check.verdict} against {against}"
