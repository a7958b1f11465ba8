"""`kvgraft bench routing`: the router's scorers compared on a routing set, with no model.

Candidates are the library's problems; every eval question of a library family should route to that family's
problem (recurrences, same-template and paraphrased transfers, near-misses: the gate, not the router, is what
refuses a near-miss), and every off-distribution question should be refused. Distractor families (similar words,
another operation) are in the library. Per scorer: routed to the right problem, routed to a wrong one, abstained,
and for off-distribution questions abstained vs routed, with Wilson intervals, and the margin (best score minus
runner-up) of right routes. The threshold of each scorer is the one that maximizes the mean of in-library accuracy
and off-distribution abstention on the development set (`dev`), whichever set is evaluated: a threshold is never
chosen on the set it is graded on."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from bench.stats import fraction, wilson
from workers.flywheel.router import SCORERS, Candidate

DATA_DIR = Path(__file__).parent / "data"
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))
ROLES = ("recurrence", "transfer", "near_miss", "off_distribution")


def dataset_files(name: str) -> tuple[Path, Path]:
    library, evaluation = DATA_DIR / f"flywheel-{name}-library.jsonl", DATA_DIR / f"flywheel-{name}-eval.jsonl"
    if not library.exists() or not evaluation.exists():
        known = sorted({p.name.split("-")[1] for p in DATA_DIR.glob("flywheel-*-library.jsonl")})
        raise ValueError(f"no shipped dataset {name!r}; known: {', '.join(known)}")
    return library, evaluation


def read_jsonl(path: Path, *, what: str) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("question"),
                                                                                             str):
            raise ValueError(f"{path}:{n}: a {what} row needs a string `id` and `question`")
        if "answer" not in row:
            raise ValueError(f"{path}:{n}: a {what} row needs an `answer`")
        role = row.setdefault("role", "transfer")
        if what == "eval" and role not in ROLES:
            raise ValueError(f"{path}:{n}: role must be one of {', '.join(ROLES)}, not {role!r}")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no {what} rows")
    return rows


@dataclass(frozen=True)
class RoutingBenchRequest:
    dataset: str = "dev"
    library: Path | None = None
    eval: Path | None = None


def _expected(library: list[dict[str, Any]], item: dict[str, Any]) -> str | None:
    """The library problem an eval question should route to: the one of its family (None: off-distribution)."""
    if item["role"] == "off_distribution":
        return None
    family = item.get("family")
    return next((p["id"] for p in library if family is not None and p.get("family") == family), None)


def _scored(library: list[dict[str, Any]], items: list[dict[str, Any]],
            scorer: Callable[..., Any]) -> list[tuple[dict[str, Any], Any]]:
    candidates = [Candidate(p["id"], p["question"]) for p in library]
    return [(item, scorer(item["question"], candidates, threshold=0.0)) for item in items]


def _grade(library: list[dict[str, Any]], scored: list[tuple[dict[str, Any], Any]], threshold: float
           ) -> dict[str, Any]:
    inside = [(i, r) for i, r in scored if _expected(library, i) is not None]
    outside = [(i, r) for i, r in scored if _expected(library, i) is None]
    right = [(i, r) for i, r in inside if r.score >= threshold and r.key == _expected(library, i)]
    wrong = sum(r.score >= threshold and r.key != _expected(library, i) for i, r in inside)
    refused = sum(r.score < threshold for _, r in outside)
    by_role = {}
    for role in ROLES:
        mine = [(i, r) for i, r in scored if i["role"] == role]
        if role == "off_distribution":
            by_role[role] = {"questions": len(mine), "abstain": sum(r.score < threshold for _, r in mine),
                             "routed": sum(r.score >= threshold for _, r in mine)}
        else:
            ok = sum(r.score >= threshold and r.key == _expected(library, i) for i, r in mine)
            bad = sum(r.score >= threshold and r.key != _expected(library, i) for i, r in mine)
            by_role[role] = {"questions": len(mine), "right": ok, "wrong_route": bad,
                             "abstain": len(mine) - ok - bad}
    return {
        "threshold": threshold,
        "in_library": {"questions": len(inside), "right": len(right), "wrong_route": wrong,
                       "abstain": len(inside) - len(right) - wrong, "accuracy": fraction(len(right), len(inside)),
                       "interval": wilson(len(right), len(inside))},
        "off_distribution": {"questions": len(outside), "abstain": refused, "routed": len(outside) - refused,
                             "abstain_rate": fraction(refused, len(outside)),
                             "interval": wilson(refused, len(outside))},
        "margin_mean": round(mean(r.score - r.runner_up for _, r in right), 3) if right else None,
        "by_role": by_role,
    }


def _objective(graded: dict[str, Any]) -> float:
    return ((graded["in_library"]["accuracy"] or 0.0) + (graded["off_distribution"]["abstain_rate"] or 0.0)) / 2


def chosen_thresholds() -> dict[str, float]:
    """Each scorer's threshold, chosen on the shipped development set."""
    library_path, eval_path = dataset_files("dev")
    library, items = read_jsonl(library_path, what="library"), read_jsonl(eval_path, what="eval")
    out = {}
    for name, scorer in SCORERS.items():
        scored = _scored(library, items, scorer)
        out[name] = max(THRESHOLDS, key=lambda t, s=scored: (_objective(_grade(library, s, t)), -t))
    return out


def run_routing_bench(request: RoutingBenchRequest) -> dict[str, Any]:
    if (request.library is None) != (request.eval is None):
        raise ValueError("give both --library and --eval, or neither")
    library_path, eval_path = ((request.library, request.eval) if request.library is not None
                               else dataset_files(request.dataset))
    assert library_path is not None and eval_path is not None
    library, items = read_jsonl(library_path, what="library"), read_jsonl(eval_path, what="eval")
    thresholds = chosen_thresholds()
    scorers = {name: _grade(library, _scored(library, items, scorer), thresholds[name])
               for name, scorer in SCORERS.items()}
    picked = max(scorers, key=lambda name: _objective(scorers[name]))
    return {"benchmark": "routing", "dataset": request.dataset if request.library is None else "files",
            "library": str(library_path), "eval": str(eval_path), "thresholds_chosen_on": "dev",
            "scorers": scorers, "best_here": picked}
