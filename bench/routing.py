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

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from bench.sets import ROLES, load_sets
from bench.stats import fraction, wilson
from workers.flywheel.router import SCORERS, Candidate

THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))


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
    library, items, _, _ = load_sets("dev", None, None)
    out = {}
    for name, scorer in SCORERS.items():
        scored = _scored(library, items, scorer)
        out[name] = max(THRESHOLDS, key=lambda t, s=scored: (_objective(_grade(library, s, t)), -t))
    return out


def run_routing_bench(request: RoutingBenchRequest) -> dict[str, Any]:
    library, items, library_path, eval_path = load_sets(request.dataset, request.library, request.eval)
    thresholds = chosen_thresholds()
    scorers = {name: _grade(library, _scored(library, items, scorer), thresholds[name])
               for name, scorer in SCORERS.items()}
    picked = max(scorers, key=lambda name: _objective(scorers[name]))
    return {"benchmark": "routing", "dataset": request.dataset if request.library is None else "files",
            "library": str(library_path), "eval": str(eval_path), "thresholds_chosen_on": "dev",
            "scorers": scorers, "best_here": picked}
