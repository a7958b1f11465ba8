"""The Python stages of scripts/device-check.sh that are no `kvgraft` command, and its one JSON report.

    python -m bench.device_check xdev --model M --flash-attn on|off --out FILE
        GPU<->CPU restore on one host: the same 640-token prefix and 8-token probe (the gate's) computed fresh twice
        on the GPU (all layers offloaded) and twice on the CPU backend alone (no device given to llama.cpp); the
        state captured on each side restored on the other and checked there with the gate's graft check (engine/
        check.py: re-capture, the probe's logits, 16 greedy steps) against that side's fresh computation and the
        other side's; that the fingerprint gate refuses each cross-device restore (and why); state bytes, save
        (llama_state_seq_get_data) and restore (llama_state_seq_set_data) milliseconds on both sides.

The stage records and the one report are bench/device_report.py.

The cross-device checks graft a state under a fingerprint that is not its own on purpose (the measurement of what
the gate keeps out): the snapshot is relabelled with the target engine's fingerprint for the check alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.check import check_graft, floor_holds, reference_run
from engine.errors import FingerprintMismatchError
from engine.gate import DEFAULT_GATE_TOKENS
from engine.graft import EngineConfig, GraftEngine, KVSnapshot
from engine.logits import compare
from engine.texts import sample_tokens

REPS = 5


def _check(engine: GraftEngine, snapshot: KVSnapshot, reference: Any) -> dict[str, Any]:
    """The gate's graft check of a snapshot relabelled as `engine`'s own (see the module's docstring)."""
    forged = replace(snapshot, fingerprint=engine.fingerprint.id, fingerprint_parts=engine.fingerprint.parts())
    check = check_graft(engine, forged, reference)
    d = check.divergence
    return {"passed": check.passed, "byte_exact": check.byte_exact,
            "positions_equal": f"{d.positions_equal}/{d.positions}",
            "kl_mean": d.kl_mean, "kl_max": d.kl_max, "max_abs_diff": d.max_abs_diff,
            "argmax_agree": d.argmax_agree_text, "recapture_equal": check.recapture_equal,
            "continuation_equal": check.continuation_equal, "continuation_detail": check.continuation_detail}


def _refusal(engine: GraftEngine, snapshot: KVSnapshot) -> str:
    try:
        with engine.open_context() as ctx:
            engine.restore(ctx, snapshot)
    except FingerprintMismatchError as exc:
        return f"refused: {exc}"
    return "NOT REFUSED"


def _state_timings(engine: GraftEngine, tokens: list[int]) -> dict[str, Any]:
    """Bytes of the per-sequence state after prefilling `tokens`, and the median save and restore ms."""
    save, restore = [], []
    with engine.open_context() as ctx:
        engine.prefill(ctx, tokens)
        payload = ctx.state_bytes()
        for _ in range(REPS):
            t0 = time.perf_counter()
            ctx.state_bytes()
            save.append((time.perf_counter() - t0) * 1000)
    with engine.open_context() as ctx:
        for _ in range(REPS):
            ctx.clear()
            t0 = time.perf_counter()
            ctx.set_state(payload)
            restore.append((time.perf_counter() - t0) * 1000)
    return {"tokens": len(tokens), "state_bytes": len(payload), "save_ms": round(statistics.median(save), 3),
            "restore_ms": round(statistics.median(restore), 3), "reps": REPS}


def run_xdev(model: str, flash_attn: bool, *, n_tokens: int = DEFAULT_GATE_TOKENS, n_query: int = 8,
             cache_dir: Path | None = None, say: Any = print) -> dict[str, Any]:
    n_ctx = max(4096, -(-(n_tokens + n_query + 64) // 256) * 256)
    out: dict[str, Any] = {"model": model, "flash_attn": flash_attn, "n_tokens": n_tokens, "n_query": n_query}
    gpu = GraftEngine.load(model, EngineConfig(n_ctx=n_ctx, flash_attn=flash_attn, gpu_layers=-1),
                           cache_dir=cache_dir)
    cpu = GraftEngine.load(model, EngineConfig(n_ctx=n_ctx, flash_attn=flash_attn, gpu_layers=None),
                           cache_dir=cache_dir)
    try:
        out["gpu_fingerprint"] = {"id": gpu.fingerprint.id, "parts": gpu.fingerprint.parts(),
                                  "profile": gpu.profile(n_query).as_dict(), "profile_id": gpu.profile(n_query).id}
        out["cpu_fingerprint"] = {"id": cpu.fingerprint.id, "backend": cpu.fingerprint.parts()["backend"],
                                  "profile_id": cpu.profile(n_query).id}
        tokens = sample_tokens(gpu, n_tokens + n_query)
        prefix, probe = tokens[:n_tokens], tokens[n_tokens:]
        say("xdev: fresh on GPU and CPU")
        t0 = time.perf_counter()
        ref = {"gpu": reference_run(gpu, prefix, probe), "cpu": reference_run(cpu, prefix, probe)}
        out["fresh_ms_first"] = round((time.perf_counter() - t0) * 1000, 1)
        again = {"gpu": reference_run(gpu, prefix, probe), "cpu": reference_run(cpu, prefix, probe)}
        out["gpu_floor"] = floor_holds(ref["gpu"], again["gpu"])
        out["cpu_floor"] = floor_holds(ref["cpu"], again["cpu"])
        d = compare(ref["cpu"].rows, ref["gpu"].rows)
        out["gpu_fresh_vs_cpu_fresh"] = {"byte_equal": d.byte_equal, "positions_equal": f"{d.positions_equal}/"
                                         f"{d.positions}", "kl_max": d.kl_max, "max_abs_diff": d.max_abs_diff,
                                         "argmax_agree": d.argmax_agree_text,
                                         "continuation_tokens_equal":
                                             ref["cpu"].continuation_tokens == ref["gpu"].continuation_tokens}
        snap = {"gpu": gpu.capture(prefix, n_query=n_query), "cpu": cpu.capture(prefix, n_query=n_query)}
        a, b = bytes(snap["gpu"].payload), bytes(snap["cpu"].payload)
        out["state_bytes"] = {"gpu": len(a), "cpu": len(b), "equal": a == b,
                              "bytes_differing": sum(x != y for x, y in zip(a, b, strict=False))
                              if len(a) == len(b) else None}
        out["fingerprint_gate"] = {"gpu_state_on_cpu": _refusal(cpu, snap["gpu"]),
                                   "cpu_state_on_gpu": _refusal(gpu, snap["cpu"])}
        say("xdev: GPU state restored on the CPU, CPU state on the GPU")
        for src, dst, engine in (("gpu", "cpu", cpu), ("cpu", "gpu", gpu)):
            out[f"{src}_state_on_{dst}_vs_{dst}_fresh"] = _check(engine, snap[src], ref[dst])
            out[f"{src}_state_on_{dst}_vs_{src}_fresh"] = _check(engine, snap[src], ref[src])
        out["gpu_state_on_gpu_vs_gpu_fresh"] = _check(gpu, snap["gpu"], ref["gpu"])
        say("xdev: save/restore timings")
        out["state_timings"] = {"gpu": _state_timings(gpu, prefix), "cpu": _state_timings(cpu, prefix)}
    finally:
        gpu.close()
        cpu.close()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.device_check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    x = sub.add_parser("xdev")
    x.add_argument("--model", required=True)
    x.add_argument("--flash-attn", choices=("on", "off"), required=True)
    x.add_argument("--out", type=Path, required=True)
    x.add_argument("--tokens", type=int, default=DEFAULT_GATE_TOKENS)
    args = ap.parse_args(argv)
    from workers.logs import configure_logging
    from workers.settings import load_settings

    configure_logging()  # KVGRAFT_LOG_LEVEL, on stderr
    record = run_xdev(args.model, args.flash_attn == "on", n_tokens=args.tokens, cache_dir=load_settings().cache_dir)
    args.out.write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
