"""The setup self-check: does this llama.cpp build run the default model on this CPU, byte-exactly?

In a child process (workers.supervise): read the library's instruction-set flags (`llama_print_system_info`), load
the model, decode a few tokens greedily (the first quantized matmuls: where an AMX build traps on a VM), then run the
byte-exactness gate at a small N. The parent never loads llama.cpp, so a native crash becomes one line with the
signal, the library's flags and what to do about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workers.supervise import ChildError, Emit, NativeCrashError, run_in_child

SELFCHECK_TOKENS = 64
SELFCHECK_DECODE = 4

REMEDY_AMX = ("the library was built with AMX kernels: rebuild without them (the default) with "
              "`unset KVGRAFT_LLAMA_AMX; make setup`")
REMEDY_PORTABLE = ("rebuild for a baseline CPU: `KVGRAFT_LLAMA_CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX2=ON "
                   "-DGGML_FMA=ON -DGGML_F16C=ON' make setup` (see README, 'When the self-check fails')")


@dataclass(frozen=True)
class SelfCheckReport:
    ok: bool
    model: str
    system_info: str
    steps: tuple[str, ...]
    decoded_text: str | None = None
    gate: dict[str, Any] | None = None
    failure: str | None = None
    signal: str | None = None
    remedy: str | None = None
    trace_path: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "model": self.model, "system_info": self.system_info, "steps": list(self.steps),
                "decoded_text": self.decoded_text, "gate": self.gate, "failure": self.failure,
                "signal": self.signal, "remedy": self.remedy, "trace_path": self.trace_path, **self.details}

    def line(self) -> str:
        """The one line a person reads."""
        if self.ok:
            gate = self.gate or {}
            return (f"self-check passed: {self.model} decodes and the gate is byte-exact at N={gate.get('n_tokens')} "
                    f"({gate.get('positions_equal')} positions); library: {self.system_info}")
        parts = [f"self-check failed: {self.failure}", f"library flags: {self.system_info or 'unknown'}"]
        if self.remedy:
            parts.append(f"remedy: {self.remedy}")
        if self.trace_path:
            parts.append(f"native trace: {self.trace_path}")
        return "; ".join(parts)


def remedy_for(system_info: str) -> str:
    return REMEDY_AMX if "AMX" in system_info and "AMX_INT8 = 1" in system_info else REMEDY_PORTABLE


def selfcheck_child(emit: Emit, model: str | None, n_tokens: int) -> dict[str, Any]:
    """The child's work (importable, so that a spawned interpreter can run it)."""
    from engine.fingerprint import build_info
    from engine.gate import GateRequest, run_gate
    from engine.graft import GraftEngine
    from engine.sampling import SamplingParams, generate
    from engine.texts import sample_tokens
    from workers.seam import block_file_roundtrip
    from workers.settings import engine_config, load_settings

    settings = load_settings()  # this child process's
    name = model or settings.model
    emit({"step": "library", "system_info": build_info()["system_info"]})
    emit({"step": "load", "model": name})
    engine = GraftEngine.load(name, engine_config(settings, n_ctx=max(512, n_tokens + 64)),
                              cache_dir=settings.cache_dir)
    try:
        emit({"step": "decode", "model": name})
        prompt = sample_tokens(engine, 16)
        ctx = engine.open_context()
        try:
            logits = engine.prefill_for_generation(ctx, prompt)
            out = generate(engine, ctx, pos=len(prompt), logits=logits,
                           params=SamplingParams(max_tokens=SELFCHECK_DECODE, temperature=0.0))
        finally:
            ctx.close()
        emit({"step": "gate", "model": name, "n_tokens": n_tokens})
        gate = run_gate(engine, GateRequest(n_tokens=n_tokens, n_query=8), roundtrip=block_file_roundtrip)
        return {"model": engine.name, "decoded_text": out.text, "decoded_tokens": len(out.tokens),
                "gate": gate.as_dict()}
    finally:
        engine.close()


def run_selfcheck(model: str | None = None, *, n_tokens: int = SELFCHECK_TOKENS, child: Any = selfcheck_child,
                  timeout_s: float = 600.0) -> SelfCheckReport:
    """Run the self-check in a child process and report; never raises for a crash of the child."""
    steps: list[str] = []
    seen: dict[str, Any] = {"system_info": "", "model": model or ""}

    def on_event(event: dict[str, Any]) -> None:
        steps.append(str(event.get("step")))
        seen.update({k: v for k, v in event.items() if k in ("system_info", "model")})

    try:
        result = run_in_child(child, model, n_tokens, on_event=on_event, timeout_s=timeout_s)
    except NativeCrashError as crash:
        step = crash.last_event.get("step", "start")
        sig = crash.reason.removeprefix("died with ")
        where = {"library": "loading the library", "load": "loading the model", "decode": "decoding",
                 "gate": "running the gate"}.get(step, step)
        return SelfCheckReport(
            ok=False, model=str(seen["model"]), system_info=str(seen["system_info"]), steps=tuple(steps),
            failure=f"llama.cpp {crash.reason} while {where} ({seen['model'] or 'default model'})",
            signal=sig, remedy=remedy_for(str(seen["system_info"])), trace_path=crash.trace_path)
    except (ChildError, TimeoutError) as exc:
        kind = exc.kind if isinstance(exc, ChildError) else "timeout"
        return SelfCheckReport(ok=False, model=str(seen["model"]), system_info=str(seen["system_info"]),
                               steps=tuple(steps), failure=f"{kind}: {exc}")
    gate = result["gate"]
    ok = bool(gate.get("passed"))
    return SelfCheckReport(
        ok=ok, model=result["model"], system_info=str(seen["system_info"]), steps=tuple(steps),
        decoded_text=result["decoded_text"], gate=gate,
        failure=None if ok else "the gate is not byte-exact: " + "; ".join(gate.get("failures", [])),
        remedy=None if ok else remedy_for(str(seen["system_info"])),
        details={"decoded_tokens": result["decoded_tokens"]})
