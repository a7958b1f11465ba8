"""The records of scripts/device-check.sh: each stage's status, and the one JSON report made from the stage files.
Nothing here loads llama.cpp, so both run before the build and after a crash.

    python -m bench.device_report record --stages FILE --err FILE NAME RC SECONDS BOX [--skipped WHY]
        One stage's status into the stages file: exit status, seconds, its time box, whether it timed out, every
        line of its stderr that names an error (llama.cpp's `CUDA error`, `GGML_ASSERT`, an abort or a Python
        exception: what a crash leaves) and the head and tail of the rest.
    python -m bench.device_report report --dir RUN --out FILE
        One report from the stage files under RUN (each stage's JSON record and its status): per flash-attention
        setting, whether the graft is byte-exact (and where the first difference is), the fresh-vs-fresh floor,
        relocation, batch invariance (one process per probed configuration, so a crash names its configuration)
        and the GPU<->CPU restore, beside the attestation with its fingerprint.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

# stderr lines that say why a stage died (llama.cpp aborts print the CUDA call and its message on separate lines)
ERROR_LINE = re.compile(r"CUDA error|GGML_ASSERT|ggml_abort|\b[Ee]rror:|\b[A-Z]\w*Error\b|Traceback|"
                        r"Segmentation fault|Aborted|current device:|out of memory|Fatal Python error")
ERROR_LINES_KEPT = 40
# the batch probe's stages (scripts/device-check.sh), one process per configuration
BATCH_PROBE_STAGES = tuple(f"batch-probe-fa-{fa}-{kv}" for fa in ("off", "on") for kv in ("streams", "unified"))


# -- the stages --------------------------------------------------------------------------------------------------

def error_lines(text: str, keep: int = ERROR_LINES_KEPT) -> list[str]:
    """The lines of a stage's stderr that name an error, at most `keep` (the first ones and the last ones: the
    first failure is the cause, the last the abort)."""
    hits = [line.rstrip() for line in text.splitlines() if ERROR_LINE.search(line)]
    return hits if len(hits) <= keep else hits[: keep // 2] + ["[...]"] + hits[-keep // 2:]


def stage_status(rc: int, seconds: int, box: int, stderr: str, skipped: str | None = None) -> dict[str, Any]:
    tail = stderr if len(stderr) <= 3000 else stderr[:1500] + "\n[...]\n" + stderr[-1500:]
    return {"rc": rc, "seconds": seconds, "box_s": box, "timed_out": rc in (124, 137), "skipped": skipped or None,
            "error_lines": error_lines(stderr), "stderr_tail": tail}


def record_stage(stages: Path, name: str, status: dict[str, Any]) -> None:
    data = json.loads(stages.read_text()) if stages.is_file() else {}
    data[name] = status
    stages.write_text(json.dumps(data, indent=1))


# -- the report --------------------------------------------------------------------------------------------------

def _load(run: Path, name: str) -> Any:
    path = run / name
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        text = path.read_text()
        start = text.find("{")  # a record after log lines
        try:
            return json.loads(text[start:]) if start >= 0 else {"unparsed": text[-2000:]}
        except ValueError:
            return {"unparsed": text[-2000:]}


def _gate_summary(gate: dict[str, Any] | None) -> dict[str, Any] | None:
    if not isinstance(gate, dict) or "passed" not in gate:
        return gate
    return {"byte_exact": gate["byte_exact"], "passed": gate["passed"], "positions_equal": gate["positions_equal"],
            "continuation_equal": gate["continuation_equal"], "continuation_detail": gate["continuation_detail"],
            "recapture_equal": gate["recapture_equal"], "recapture_detail": gate["recapture_detail"],
            "first_difference": "; ".join(gate.get("failures") or []) or None,
            "fresh_floor_equal": gate["fresh_floor_equal"], "kl_max": gate["kl_max"],
            "max_abs_diff": gate["max_abs_diff"], "state_bytes": gate["state_bytes"],
            "timings_ms": gate.get("timings_ms"), "attestation_id": gate.get("attestation_id"),
            "fingerprint": gate["fingerprint"], "profile_id": gate["profile_id"]}


def _batch_probe(run: Path, status: dict[str, Any]) -> dict[str, Any] | None:
    """The batch probe's records, one process per configuration (BATCH_PROBE_STAGES) merged into one; a
    configuration with no record (its process died, it timed out, or it was skipped) is named under `failed` with
    its stage's status and error lines."""
    parts = {name: _load(run, f"{name}.json") for name in BATCH_PROBE_STAGES}
    if not any(parts.values()) and not any(name in status for name in BATCH_PROBE_STAGES):
        return None
    merged: dict[str, Any] = {"benchmark": "batch-probe", "results": [], "failed": {}}
    for name, part in parts.items():
        if isinstance(part, dict) and "results" in part:
            merged["results"] += part["results"]
            merged |= {k: v for k, v in part.items() if k not in ("results", "failed")}
        else:
            stage = status.get(name) or {}
            merged["failed"][name] = {"rc": stage.get("rc"), "skipped": stage.get("skipped"),
                                      "error_lines": stage.get("error_lines"), "output": part}
    return merged


def _batch_summary(batch: dict[str, Any] | None, flash_attn: bool) -> Any:
    if not isinstance(batch, dict) or "results" not in batch:
        return batch
    rows = []
    for r in batch["results"]:
        if r.get("flash_attn") != flash_attn:
            continue
        rows.append({"prompts": r["prompts"], "kv": r["kv"], "threads": r["threads"],
                     **{c: f"{r[c]['positions_equal']}/{r[c]['positions']}" for c in ("all", "ragged",
                                                                                      "prefill_beside") if c in r},
                     "states_equal": f"{r['all']['states_equal']}/{r['all']['states']}",
                     "speedup": r["all"].get("speedup")})
    setting = "on" if flash_attn else "off"
    failed = {k: v for k, v in batch.get("failed", {}).items() if f"-fa-{setting}" in k}
    invariant = all(r["all"]["positions_equal"] == r["all"]["positions"] for r in batch["results"]
                    if r.get("flash_attn") == flash_attn) if rows and not failed else None
    return {"all_rows_invariant_in_full_batches": invariant, "rows": rows, "failed": failed}


def _relocation(regimes: dict[str, Any] | None) -> Any:
    if not isinstance(regimes, dict) or "regimes" not in regimes:
        return regimes
    r = regimes["regimes"]
    return {"own_position": r.get("own_position"), "relocation": r.get("relocation")}


def build_report(run: Path) -> dict[str, Any]:
    status = _load(run, "stages.json") or {}
    report: dict[str, Any] = {"report": "kvgraft device-check", "version": 2, "stages": status,
                              "machine": _load(run, "machine.json"), "build": _load(run, "build.json"),
                              "load_test": _load(run, "load-test.json"), "model": _load(run, "model.json"),
                              "selfcheck": _load(run, "selfcheck.json"),
                              "fingerprint": _load(run, "fingerprint.json")}
    batch = _batch_probe(run, status)
    for fa in ("on", "off"):
        gate = _load(run, f"gate-fa-{fa}.json")
        report[f"flash_attn_{fa}"] = {
            "graft": _gate_summary(gate),
            "relocation": _relocation(_load(run, f"regimes-fa-{fa}.json")),
            "batch_invariance": _batch_summary(batch, fa == "on"),
            "gpu_cpu_restore": _load(run, f"xdev-fa-{fa}.json"),
            "attestation": {"fingerprint": gate.get("fingerprint"), "fingerprint_parts": gate.get("fingerprint_parts"),
                            "profile_id": gate.get("profile_id"), "profile": gate.get("profile"),
                            "status": "attested" if gate.get("passed") and gate.get("fresh_floor_equal")
                            else "functional", "attestation_id": gate.get("attestation_id")}
            if isinstance(gate, dict) and "fingerprint" in gate else None}
    report["bench_restore"] = _load(run, "bench-restore.json")
    report["batch_probe"] = batch
    return report


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.device_report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("record")
    s.add_argument("--stages", type=Path, required=True)
    s.add_argument("--err", type=Path, required=True)
    s.add_argument("--skipped", default="")
    s.add_argument("name")
    s.add_argument("rc", type=int)
    s.add_argument("seconds", type=int)
    s.add_argument("box", type=int)
    r = sub.add_parser("report")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.cmd == "record":
        stderr = args.err.read_text(errors="replace") if args.err.is_file() else ""
        record_stage(args.stages, args.name, stage_status(args.rc, args.seconds, args.box, stderr, args.skipped))
        return
    args.out.write_text(json.dumps(build_report(args.dir), indent=1))


if __name__ == "__main__":
    main()
