"""`kvgraft bench flywheel`: the flywheel's claims measured side by side on one problem set.

- base: best-of-K sampling with no library (verified against the known answer) vs recurrence after deposit;
- transfer: same-structure variants with new constants, with the routed solution block grafted vs without it;
- near-miss: questions that share a base's wording but ask something else, answered through transfer with the
  post-graft gate vs without it (the answering path is not given the answer; the benchmark scores it);
- CPU-seconds per answer on each route (this process and its sandbox children): the energy proxy here.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.jobs import JobParams, run_job
from workers.flywheel.prefix import ensure_skill
from workers.flywheel.prompts import question_part, style_for, tokens_of
from workers.flywheel.routes import direct_samples, transfer_answer
from workers.flywheel.solve import SolveParams
from workers.problems import ProblemSpec
from workers.runtime import Runtime
from workers.verify.answer_match import answers_match

DEFAULT_DATA = Path(__file__).parent / "data" / "flywheel.jsonl"


@dataclass(frozen=True)
class FlywheelBenchRequest:
    data: Path = DEFAULT_DATA
    samples: int = 4
    temperature: float = 0.7
    max_tokens: int = 160
    model: str | None = None


def _cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = _cpu_s()
    out = fn()
    return out, _cpu_s() - t0


def load_items(path: Path) -> list[dict[str, Any]]:
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for item in items:
        if item.get("role") not in ("base", "variant", "near_miss") or "answer" not in item:
            raise ValueError(f"{path}: every line needs role base|variant|near_miss and an answer: {item.get('id')}")
    return items


def run_flywheel_bench(rt: Runtime, request: FlywheelBenchRequest,
                       progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    items = load_items(request.data)
    engine = rt.engine(request.model)
    style = style_for(engine)
    skill = ensure_skill(rt, engine, style)
    params = AnswerParams(samples=request.samples, temperature=request.temperature, max_tokens=request.max_tokens)
    say = progress or (lambda _msg: None)
    bases = [i for i in items if i["role"] == "base"]

    # 1. base best-of-K with no library (the reference program is not used here)
    base_rows = []
    for item in bases:
        say(f"base best-of-{request.samples}: {item['id']}")
        prompt = tokens_of(engine, question_part(style, item["question"]))
        (answers, tokens), cpu = _timed(lambda it=item, p=prompt: direct_samples(
            rt, engine, style, p, skill, f"bench/{it['id']}", params))
        base_rows.append({"id": item["id"], "solved": any(answers_match(a, item["answer"]) for a in answers),
                          "tokens": tokens, "cpu_s": cpu})

    # 2. deposit the bases (reference programs verified in the sandbox), then replay as recurring queries
    say("depositing base problems")
    specs = [ProblemSpec(i["id"], i["question"], i["answer"], i.get("solution")) for i in bases]
    job = run_job(rt, specs, JobParams(solve=SolveParams(samples=request.samples, temperature=request.temperature,
                                                         max_tokens=request.max_tokens), team="bench",
                                       model=request.model))
    team_id = _team_id(rt, "bench")
    recurrence_rows = []
    for item in bases:
        say(f"recurrence: {item['id']}")
        answer, cpu = _timed(lambda it=item: answer_question(
            rt, it["question"], team_id=team_id, model=request.model,
            params=AnswerParams(use_direct=False, use_transfer=False)))
        recurrence_rows.append({"id": item["id"], "route": answer.route,
                                "correct": answers_match(answer.answer, item["answer"]),
                                "decode_tokens": answer.decode_tokens, "cpu_s": cpu})

    # 3. transfer on variants: grafted block vs no block (best-of-K against the known answer in both)
    transfer_rows = []
    for item in (i for i in items if i["role"] == "variant"):
        say(f"transfer: {item['id']}")
        with_block, cpu_with = _timed(lambda it=item: transfer_answer(
            rt, engine, style, it["question"], team_id, it["answer"], None, params))
        prompt = tokens_of(engine, question_part(style, item["question"]))
        (plain, plain_tokens), cpu_without = _timed(lambda it=item, p=prompt: direct_samples(
            rt, engine, style, p, skill, f"bench/plain/{it['id']}", params))
        transfer_rows.append({
            "id": item["id"], "routed_block": with_block.block_id if with_block else None,
            "with_block_correct": bool(with_block and with_block.verified),
            "with_block_tokens": with_block.decode_tokens if with_block else 0, "with_block_cpu_s": cpu_with,
            "without_block_correct": any(answers_match(a, item["answer"]) for a in plain),
            "without_block_tokens": plain_tokens, "without_block_cpu_s": cpu_without})

    # 4. near-miss questions through transfer, with and without the post-graft gate (no answer given)
    near_rows = []
    for item in (i for i in items if i["role"] == "near_miss"):
        row: dict[str, Any] = {"id": item["id"]}
        for gate in (True, False):
            say(f"near-miss ({'gate on' if gate else 'gate off'}): {item['id']}")
            p = AnswerParams(samples=request.samples, temperature=request.temperature,
                             max_tokens=request.max_tokens, post_graft_gate=gate)
            got, cpu = _timed(lambda it=item, pp=p: transfer_answer(rt, engine, style, it["question"], team_id,
                                                                       None, None, pp))
            answered = got is not None and got.answer is not None
            key = "gate" if gate else "no_gate"
            row[f"{key}_route"] = got.route if got else "abstain"
            row[f"{key}_answer"] = got.answer if got else None
            row[f"{key}_wrong"] = answered and not answers_match(got.answer, item["answer"])  # type: ignore[union-attr]
            row[f"{key}_cpu_s"] = cpu
        near_rows.append(row)

    base_tokens = sum(r["tokens"] for r in base_rows)
    rec_ok = [r for r in recurrence_rows if r["route"] == "recurrence"]
    rec_tokens = sum(r["decode_tokens"] for r in rec_ok)
    wrong_gate = sum(r["gate_wrong"] for r in near_rows)
    wrong_nogate = sum(r["no_gate_wrong"] for r in near_rows)
    summary = {
        "base_problems": len(base_rows),
        "base_best_of_k_solved": sum(r["solved"] for r in base_rows),
        "base_tokens": base_tokens,
        "deposited": job["totals"]["deposited"],
        "recurrence_correct": sum(r["correct"] for r in recurrence_rows),
        "recurrence_decode_tokens_mean": round(rec_tokens / len(rec_ok), 2) if rec_ok else None,
        "token_ratio_base_vs_recurrence": round(base_tokens / rec_tokens, 1) if rec_tokens else None,
        "variants": len(transfer_rows),
        "transfer_with_block_correct": sum(r["with_block_correct"] for r in transfer_rows),
        "transfer_without_block_correct": sum(r["without_block_correct"] for r in transfer_rows),
        "near_miss": len(near_rows),
        "near_miss_wrong_with_gate": wrong_gate,
        "near_miss_wrong_without_gate": wrong_nogate,
        "gate_removes_wrong_pct": round(100 * (1 - wrong_gate / wrong_nogate), 1) if wrong_nogate else None,
        "cpu_s_per_answer": {
            "base_best_of_k": round(mean(r["cpu_s"] for r in base_rows), 3) if base_rows else None,
            "recurrence": round(mean(r["cpu_s"] for r in recurrence_rows), 3) if recurrence_rows else None,
            "transfer": round(mean(r["with_block_cpu_s"] for r in transfer_rows), 3) if transfer_rows else None,
            "direct_without_block": round(mean(r["without_block_cpu_s"] for r in transfer_rows), 3)
            if transfer_rows else None,
        },
    }
    return {"benchmark": "flywheel", "model": engine.name, "fingerprint": engine.fingerprint.id,
            "samples": request.samples, "data": str(request.data), "summary": summary, "base": base_rows,
            "recurrence": recurrence_rows, "transfer": transfer_rows, "near_miss": near_rows,
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _team_id(rt: Runtime, name: str) -> int:
    from store.repository import get_or_create_team

    with rt.session() as s:
        return get_or_create_team(s, name=name).id
