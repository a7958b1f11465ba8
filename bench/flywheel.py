"""`kvgraft bench flywheel`: the flywheel measured as a user meets it, on one problem set, every arm on the same
questions, every outcome counted (correct, wrong, abstain), in a fresh temporary deployment (SQLite, local blocks).

Phases:
(a) deposit: the model solves each library problem with K samples against its answer key; only verified programs
    are deposited (team `bench-solved`). A reference-seeded library (the rows' hand-written `solution`, verified in
    the sandbox) is a separate, labelled arm (team `bench-reference`).
(b)-(e) the eval questions by role, asked as a user asks: no answer key reaches the answering path.

Arms: `base_greedy` (one greedy program after the grafted instructions prefix), `base_best_of_k` (K sampled
programs, plurality vote), `library` / `library_gated` (recurrence, then transfer through the model-solved library,
post-graft gate off / on), and `reference_library` / `reference_library_gated` (the same over the reference-seeded
library). On transfer and near-miss questions the two transfer methods (verified parameterized program vs graft
and sample) also run alone over the reference library. Decode tokens are counted to each stop condition; CPU
seconds are this process's and its sandbox children's."""

from __future__ import annotations

import re
import resource
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.sets import ROLES, TRANSFER_ROLES, load_sets
from bench.stats import fraction, wilson
from store.db import ProblemRow
from store.repository import get_block, get_or_create_team
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.prefix import ensure_skill
from workers.flywheel.prompts import MAX_ANSWER_TOKENS, question_part, style_for, tokens_of
from workers.flywheel.routes import direct_samples
from workers.flywheel.solve import SolveParams, sample_program, solve_problem
from workers.problems import ProblemSpec
from workers.queue.dispatch import submit_batch
from workers.runtime import Runtime, open_runtime
from workers.settings import load_settings
from workers.verify.answer_match import answers_match, number_key
from workers.verify.programs import extract_program, verify_program

ARMS = ("base_greedy", "base_best_of_k", "library", "library_gated", "reference_library",
        "reference_library_gated")
METHOD_ARMS = ("program", "program_gated", "graft", "graft_gated")


@dataclass(frozen=True)
class FlywheelBenchRequest:
    dataset: str = "dev"
    library: Path | None = None
    eval: Path | None = None
    samples: int = 4
    temperature: float = 0.7
    max_tokens: int = 160
    model: str | None = None
    methods: bool = True  # run the two transfer methods alone too
    arms: tuple[str, ...] = ()  # only these arms (of ARMS and METHOD_ARMS); empty: all


def _cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = _cpu_s()
    out = fn()
    return out, _cpu_s() - t0


def outcome(answer: str | None, expected: Any) -> str:
    if answer is None:
        return "abstain"
    return "correct" if answers_match(answer, expected) else "wrong"


def plurality(answers: list[str | None]) -> str | None:
    """The answer most samples printed (numbers compared by value; ties: the first seen), None if none ran."""
    keyed = [(number_key(a) or a, a) for a in answers if a is not None]
    if not keyed:
        return None
    top, _ = Counter(k for k, _ in keyed).most_common(1)[0]
    return next(a for k, a in keyed if k == top)


def check_transfer_answers(library: list[dict[str, Any]], items: list[dict[str, Any]]) -> None:
    """A transfer variant must not have its base's answer (re-running the base program would score)."""
    base = {p.get("family"): p for p in library if p.get("family") is not None}
    same = [i["id"] for i in items if i["role"] == "transfer" and i.get("family") in base
            and answers_match(str(i["answer"]), base[i["family"]]["answer"])]
    if same:
        raise ValueError(f"transfer questions with their base problem's answer (they cannot show a failed "
                         f"transfer): {', '.join(same)}")


# the roles of an unseen instance of a deposited problem (not a recurrence, not a near miss)
UNSEEN_ROLES = ("transfer", "renamed", "reordered")


def _counted(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {k: sum(r["outcome"] == k for r in rows) for k in ("correct", "wrong", "abstain")}
    return {**counts, "questions": len(rows), "intervals": {k: wilson(v, len(rows)) for k, v in counts.items()}}


class Tally:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, role: str, arm: str, item_id: str, answer: str | None, expected: Any, tokens: int, cpu: float,
            route: str | None = None, detail: str | None = None, binding: dict[str, Any] | None = None,
            variant: str | None = None) -> None:
        result = outcome(answer, expected)
        self.rows.append({"role": role, "arm": arm, "id": item_id, "answer": answer, "outcome": result,
                          **({"variant": variant} if variant else {}),
                          "decode_tokens": tokens, "cpu_s": round(cpu, 3), "route": route, "detail": detail,
                          **({"refusal": refusal_reason(binding)} if result == "abstain" and binding is not None
                             else {})})

    def arm(self, role: str, arm: str) -> dict[str, Any] | None:
        mine = [r for r in self.rows if r["role"] == role and r["arm"] == arm]
        if not mine:
            return None
        n = len(mine)
        counts = {k: sum(r["outcome"] == k for r in mine) for k in ("correct", "wrong", "abstain")}
        tokens, cpu = sum(r["decode_tokens"] for r in mine), sum(r["cpu_s"] for r in mine)
        return {**counts, "questions": n, "decode_tokens": tokens, "cpu_s": round(cpu, 3),
                "decode_tokens_per_question": round(tokens / n, 2), "cpu_s_per_question": round(cpu / n, 3),
                "intervals": {k: wilson(v, n) for k, v in counts.items()},
                "routes": dict(Counter(r["route"] for r in mine if r["route"])),
                "refusals": dict(Counter(r["refusal"] for r in mine if r.get("refusal")).most_common())}

    def unseen(self, arm: str) -> dict[str, Any] | None:
        """One arm's outcomes over every unseen instance of a deposited problem (UNSEEN_ROLES: new numbers, renamed,
        reordered), with Wilson intervals: all of them, then without the paraphrased questions (the asked clause's
        structure must agree, so the route refuses them by design: counted apart, never dropped), and per variant
        (`plain` for a row with none)."""
        mine = [r for r in self.rows if r["arm"] == arm and r["role"] in UNSEEN_ROLES]
        if not mine:
            return None
        variants = sorted({r.get("variant") or "plain" for r in mine})
        return {"all": _counted(mine),
                "without_paraphrase": _counted([r for r in mine if r.get("variant") != "paraphrase"]),
                "by_variant": {v: _counted([r for r in mine if (r.get("variant") or "plain") == v])
                               for v in variants}}

    def outcomes(self, arm: str, roles: tuple[str, ...]) -> dict[str, str]:
        return {r["id"]: r["outcome"] for r in self.rows if r["arm"] == arm and r["role"] in roles}


# the kinds of reason an alignment or the program route gives for a refusal (first match wins)
REFUSAL_KINDS = (("no candidate", "no solution problem|no candidate"),
                 ("statement count", "statements in the question"), ("number count", "numbers in the question"),
                 ("word must agree", "changes a word that must agree"), ("qualifier renamed", "qualifies a noun"),
                 ("unequal rename", "not a rename of the same length"), ("word dropped", "the question drops"),
                 ("word added", "the question adds"), ("currencies mixed", "mixing currencies"),
                 ("rename not one-to-one", "would stand for both|renames a (object|currency) unlike"),
                 ("asked-only rename", "which the rest of the question never does"),
                 ("category asked", "no statement names"), ("gender asked", "changes a person's gender"),
                 ("pronoun", "pronoun"), ("order", "another order"), ("kept", "of the routed problem's words kept"),
                 ("object constants", "constants of its own"), ("no program", "no parameterized program|"
                                                                "carries no parameterized"),
                 ("answer kind", "whole number|negative"), ("did not run", "did not run"))


def refusal_reason(binding: dict[str, Any]) -> str:
    """A program-route refusal as `failed_at: kind` (the first candidate tried, as `kvgraft ask` reports it):
    where the alignment failed (count, body, asked, kept; `route` when it aligned and the route refused) and the
    kind of reason (REFUSAL_KINDS, else `other`)."""
    tried = binding.get("tried") or []
    if not tried:
        return "route: no candidate"
    first = tried[0]
    alignment = first.get("alignment") or {}
    reason = alignment.get("reason") if first.get("outcome") == "not aligned" else first.get("outcome")
    where = alignment.get("failed_at") or "route"
    kind = next((name for name, pattern in REFUSAL_KINDS if re.search(pattern, str(reason))), "other")
    return f"{where}: {kind}"


def gate_figures(tally: Tally, ungated: str, gated: str, roles: tuple[str, ...]) -> dict[str, Any]:
    """The gate as a classifier over the same questions: of the ungated arm's wrong answers, the share the gated
    arm does not answer wrongly; of its correct answers, the share the gated arm still answers correctly."""
    before, after = tally.outcomes(ungated, roles), tally.outcomes(gated, roles)
    wrong = [q for q, o in before.items() if o == "wrong"]
    right = [q for q, o in before.items() if o == "correct"]
    removed = sum(after.get(q) != "wrong" for q in wrong)
    kept = sum(after.get(q) == "correct" for q in right)
    return {"wrong_removed": fraction(removed, len(wrong)), "correct_kept": fraction(kept, len(right)),
            "wrong_without_gate": len(wrong), "correct_without_gate": len(right),
            "wrong_removed_interval": wilson(removed, len(wrong)), "correct_kept_interval": wilson(kept, len(right)),
            "phases": list(roles)}


def _deposit(rt: Runtime, library: list[dict[str, Any]], *, team: str, reference: bool, params: SolveParams,
             model: str | None, say: Callable[[str], None]) -> dict[str, Any]:
    specs = [ProblemSpec(p["id"], p["question"], p["answer"], p.get("solution") if reference else None)
             for p in library]
    if reference and any(s.solution is None for s in specs):
        missing = [s.id for s in specs if s.solution is None]
        raise ValueError(f"the reference-seeded library needs a `solution` on every row: {', '.join(missing)}")
    _, ids = submit_batch(rt, specs, team=team, params=params, model=model)
    cpu = 0.0
    for n, pid in enumerate(ids, start=1):
        say(f"deposit ({team}) {n}/{len(ids)}")
        _, spent = _timed(lambda p=pid: solve_problem(rt, p, model=model, params=params))
        cpu += spent
    with rt.session() as s:
        problems = [s.get(ProblemRow, pid) for pid in ids]
        deposited = [p for p in problems if p is not None and p.status == "solved" and p.block_id]
        forms = sum(bool((get_block(s, block_id=p.block_id).meta or {}).get("parameterized")) for p in deposited)
        tokens = sum(int((p.outcome or {}).get("sample_tokens") or 0) for p in problems if p is not None)
    return {"problems": len(ids), "deposited": len(deposited), "verified_rate": fraction(len(deposited), len(ids)),
            "verified_interval": wilson(len(deposited), len(ids)), "decode_tokens": tokens, "cpu_s": round(cpu, 3),
            "parameterized": forms, "reference_seeded": reference,
            "per_problem": {p.external_id: p in deposited for p in problems if p is not None}}


def run_flywheel_bench(request: FlywheelBenchRequest, progress: Callable[[str], None] | None = None,
                       data_dir: Path | None = None) -> dict[str, Any]:
    library, items, library_path, eval_path = load_sets(request.dataset, request.library, request.eval)
    check_transfer_answers(library, items)
    say = progress or (lambda _msg: None)
    with tempfile.TemporaryDirectory(prefix="kvgraft-bench-flywheel-", dir=data_dir) as tmp:
        settings = load_settings(data_dir=Path(tmp), database_url=f"sqlite:///{tmp}/kvgraft.db",
                            store_url=f"file://{tmp}/blocks", broker_url=None)
        with open_runtime(settings) as rt:
            return _run(rt, request, library, items, say) | {
                "library_file": str(library_path), "eval_file": str(eval_path),
                "dataset": request.dataset if request.library is None else "files"}


def solve_rate(model: str, *, dataset: str = "dev", samples: int = 4, temperature: float = 0.7,
               max_tokens: int = 160, limit: int | None = None, progress: Callable[[str], None] | None = None,
               data_dir: Path | None = None) -> dict[str, Any]:
    """The flywheel's solve rate of `model` on a shipped set's library problems (several sets: `dev,gsm-dev`; the
    first `limit` of them): each solved with `samples` sampled programs (the same seeds for every model) and
    verified in the sandbox against its answer key, as phase (a) deposits them, in a fresh temporary deployment.
    A model's quality as the flywheel meets it: `kvgraft models prepare` stores it for the copy and its source, on
    the same problems."""
    names = [d.strip() for d in dataset.split(",") if d.strip()]
    if not names:
        raise ValueError("name at least one shipped flywheel set to solve")
    library, files = [], []
    for name in names:  # several sets: their problems one after another, each id prefixed by its set
        rows, _, path, _ = load_sets(name, None, None)
        library += [r | {"id": f"{name}/{r['id']}"} for r in rows] if len(names) > 1 else rows
        files.append(path.name)
    if limit is not None:
        if limit < 1:
            raise ValueError(f"the solve-rate limit must be at least 1, not {limit}")
        library = library[:limit]
    say = progress or (lambda _msg: None)
    params = SolveParams(samples=samples, temperature=temperature, max_tokens=max_tokens)
    with tempfile.TemporaryDirectory(prefix="kvgraft-solve-rate-", dir=data_dir) as tmp:
        settings = load_settings(data_dir=Path(tmp), database_url=f"sqlite:///{tmp}/kvgraft.db",
                                 store_url=f"file://{tmp}/blocks", broker_url=None)
        with open_runtime(settings) as rt:
            engine = rt.engine(model)
            ensure_skill(rt, engine, style_for(engine))  # the instructions prefix: not the problems' cost
            solved = _deposit(rt, library, team="solve-rate", reference=False, params=params, model=model, say=say)
            fingerprint = engine.fingerprint.id
    return {"dataset": ",".join(names), "library_files": files, "model": model, "fingerprint": fingerprint,
            "samples": samples, "temperature": temperature, "max_tokens": max_tokens,
            "problems": solved["problems"], "verified": solved["deposited"], "rate": solved["verified_rate"],
            "interval": solved["verified_interval"], "decode_tokens": solved["decode_tokens"],
            "cpu_s": solved["cpu_s"], "per_problem": solved["per_problem"]}


def _wanted(request: FlywheelBenchRequest) -> frozenset[str]:
    unknown = [a for a in request.arms if a not in ARMS + METHOD_ARMS]
    if unknown:
        raise ValueError(f"unknown arms {', '.join(unknown)}; known: {', '.join(ARMS + METHOD_ARMS)}")
    return frozenset(request.arms or ARMS + METHOD_ARMS)


def _run(rt: Runtime, request: FlywheelBenchRequest, library: list[dict[str, Any]], items: list[dict[str, Any]],
         say: Callable[[str], None]) -> dict[str, Any]:
    wanted = _wanted(request)
    engine = rt.engine(request.model)
    style = style_for(engine)
    skill = ensure_skill(rt, engine, style)
    k = request.samples
    solve = SolveParams(samples=k, temperature=request.temperature, max_tokens=request.max_tokens)
    solved = _deposit(rt, library, team="bench-solved", reference=False, params=solve, model=request.model,
                      say=say) if wanted & {"library", "library_gated"} else None
    seeded = _deposit(rt, library, team="bench-reference", reference=True, params=solve, model=request.model,
                      say=say)
    with rt.session() as s:
        teams = {name: get_or_create_team(s, name=name).id for name in ("bench-solved", "bench-reference")}

    tally = Tally()
    for n, item in enumerate(items, start=1):
        role, qid, want = item["role"], item["id"], item["answer"]
        say(f"{role} {n}/{len(items)}: {qid}")
        prompt = tokens_of(engine, question_part(style, item["question"]))

        def greedy(p: list[int] = prompt) -> tuple[str | None, int]:
            text, used = sample_program(engine, skill, p, seed=0, params=solve, style=style, temperature=0.0)
            check = verify_program(extract_program(text))
            return (check.answer if check.ran_cleanly else None), used

        if "base_greedy" in wanted:
            (answer, used), cpu = _timed(greedy)
            tally.add(role, "base_greedy", qid, answer, want, used, cpu)

        def best_of_k(q: dict[str, Any] = item, p: list[int] = prompt) -> tuple[str | None, int]:
            answers, used = direct_samples(rt, engine, style, p, skill, f"bench/{q['id']}", AnswerParams(
                samples=k, temperature=request.temperature, max_tokens=request.max_tokens))
            return plurality(answers), used

        if "base_best_of_k" in wanted:
            (answer, used), cpu = _timed(best_of_k)
            tally.add(role, "base_best_of_k", qid, answer, want, used, cpu)

        arms = [("library", teams["bench-solved"], False, "auto"), ("library_gated", teams["bench-solved"], True,
                                                                   "auto"),
                ("reference_library", teams["bench-reference"], False, "auto"),
                ("reference_library_gated", teams["bench-reference"], True, "auto")]
        if request.methods and role in TRANSFER_ROLES:
            arms += [(f"{method}{'_gated' if gate else ''}", teams["bench-reference"], gate, method)
                     for method in ("program", "graft") for gate in (False, True)]
        if n % 2:  # alternate which of a gated/ungated pair runs first: the second finds warm caches
            arms = [arms[i ^ 1] for i in range(len(arms))]  # every pair is (ungated, gated)
        for arm, team_id, gate, method in arms:
            if arm not in wanted:
                continue
            params = AnswerParams(samples=k, temperature=request.temperature, max_tokens=request.max_tokens,
                                  post_graft_gate=gate, use_direct=False, use_context=False,
                                  transfer_method=method)
            got, cpu = _timed(lambda t=team_id, p=params, q=item: answer_question(
                rt, q["question"], team_id=t, model=request.model, params=p))
            tally.add(role, arm, qid, got.answer, want, got.decode_tokens, cpu, got.route, got.detail,
                      (got.binding or {}) if method == "program" else None, item.get("variant"))

    present = [r for r in ROLES if any(i["role"] == r for i in items)]
    phases = {role: {"questions": sum(i["role"] == role for i in items),
                     "arms": {arm: tally.arm(role, arm) for arm in ARMS},
                     **({"transfer_methods": {arm: tally.arm(role, arm) for arm in METHOD_ARMS}}
                        if request.methods and role in TRANSFER_ROLES else {})}
              for role in present}
    shifted = tuple(r for r in present if r != "recurrence")
    return {
        "benchmark": "flywheel", "model": engine.name, "fingerprint": engine.fingerprint.id, "samples": k,
        "temperature": request.temperature, "max_tokens": request.max_tokens, "arms": sorted(wanted),
        "recurrence_answer_cap": MAX_ANSWER_TOKENS,
        "recurrence_answers_at_cap": sum(r["route"] == "recurrence" and r["decode_tokens"] >= MAX_ANSWER_TOKENS
                                         for r in tally.rows),
        "library": solved, "reference_library": seeded, "phases": phases,
        "unseen": {arm: tally.unseen(arm) for arm in sorted(wanted)},
        "gate": gate_figures(tally, "library", "library_gated", shifted),
        "gate_reference": gate_figures(tally, "reference_library", "reference_library_gated", shifted),
        "gate_by_phase": {role: gate_figures(tally, "reference_library", "reference_library_gated", (role,))
                          for role in shifted},
        "recurrence": _recurrence_costs(tally, solved, seeded) if solved is not None else None,
        "rows": tally.rows,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _recurrence_costs(tally: Tally, solved: dict[str, Any], seeded: dict[str, Any]) -> dict[str, Any] | None:
    """Token and CPU ratios of base best-of-K vs each library on the recurrence questions (the same questions), and
    the number of recurrences that pays back the model-solved library's deposit cost. A library is only credited
    with the questions it answered correctly: the saving is counted over those (base cost there minus the
    library's); with none, the break-even is null (a library that answers nothing saves nothing)."""
    rows = [r for r in tally.rows if r["role"] == "recurrence"]
    if not rows:
        return None
    cost = {(r["arm"], r["id"]): r for r in rows}

    def over(arm: str, key: str, ids: list[str]) -> float:
        return sum(cost[(arm, i)][key] for i in ids)

    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 1) if b else None

    out: dict[str, Any] = {"deposit_decode_tokens": solved["decode_tokens"], "deposit_cpu_s": solved["cpu_s"],
                           "reference_deposit_cpu_s": seeded["cpu_s"]}
    for arm, deposit in (("library", solved), ("reference_library", seeded)):
        right = [r["id"] for r in rows if r["arm"] == arm and r["outcome"] == "correct"]
        base_tokens, lib_tokens = over("base_best_of_k", "decode_tokens", right), over(arm, "decode_tokens", right)
        base_cpu, lib_cpu = over("base_best_of_k", "cpu_s", right), over(arm, "cpu_s", right)
        saving, cpu_saving = (base_tokens - lib_tokens) / (len(right) or 1), (base_cpu - lib_cpu) / (len(right) or 1)
        out[arm] = {"correct": len(right), "questions": sum(r["arm"] == arm for r in rows),
                    "token_ratio_base_vs_library": ratio(base_tokens, lib_tokens) if right else None,
                    "cpu_ratio_base_vs_library": ratio(base_cpu, lib_cpu) if right else None,
                    "break_even_recurrences_tokens": round(deposit["decode_tokens"] / saving, 1)
                    if right and saving > 0 else None,
                    "break_even_recurrences_cpu": round(deposit["cpu_s"] / cpu_saving, 1)
                    if right and cpu_saving > 0 else None}
    return out
