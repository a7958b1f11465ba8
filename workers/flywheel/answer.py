"""What an answer is: the parameters of answering, the answer record, and the frozen request each route of the
policy (workers/flywheel/routes.py) is asked to answer."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.graft import GraftEngine
from workers.flywheel.prompts import PromptStyle, normalize_question
from workers.flywheel.router import DEFAULT_THRESHOLD
from workers.verify.answer_match import answers_match, number_key
from workers.verify.programs import verify_program


@dataclass(frozen=True)
class AnswerParams:
    samples: int = 4
    temperature: float = 0.7
    max_tokens: int = 160
    router_threshold: float = DEFAULT_THRESHOLD
    post_graft_gate: bool = True
    transfer_method: str = "auto"  # auto | program | graft (workers/flywheel/transfer.py)
    use_direct: bool = True
    use_transfer: bool = True
    use_context: bool = True
    context_threshold: float = 0.6


@dataclass(frozen=True)
class Answer:
    answer: str | None
    route: str  # recurrence | context | direct | program | transfer | abstain
    block_id: str | None
    decode_tokens: int
    verified: bool
    attested: bool
    detail: str = ""
    query_id: str | None = None
    verified_by: str | None = None  # the team whose answer key verified the block this answer rests on
    timings_ms: dict[str, float] = field(default_factory=dict)  # per step, where the route measures them
    # the transfer route's report: which number of the question bound which parameter, the renames, the alignment's
    # confidence (kept share) and why each candidate was refused (workers/flywheel/transfer.py)
    binding: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TokenLedger:
    """Decode tokens spent by every route tried for one question (an answer reports all of them)."""

    total: int = 0

    def add(self, n: int) -> None:
        self.total += n


@dataclass(frozen=True)
class AnswerRequest:
    """One question as the routes see it: who asks, what it may be checked against, how to answer, on which
    engine and prompt style."""

    question: str
    team_id: int | None
    expected: Any
    verifier: Any
    params: AnswerParams
    engine: GraftEngine
    style: PromptStyle
    ledger: TokenLedger = field(default_factory=TokenLedger)


def question_digest(question: str) -> str:
    return hashlib.sha256(normalize_question(question).encode("utf-8")).hexdigest()


def checked(answer: str | None, expected: Any, verifier: Any) -> bool | None:
    """True/False when the question carries an answer or verifier to check against, None when it does not."""
    if answer is None:
        return False if expected is not None or verifier is not None else None
    if verifier is not None:
        return verify_program(f"print({answer!r})", verifier=verifier).verdict == "verified"
    if expected is not None:
        return answers_match(answer, expected)
    return None


def agreeing(answers: list[str | None], samples: int) -> str | None:
    """The answer at least ceil(2K/3) of the K samples printed (numbers compared by value), else None."""
    def key(a: str) -> str:
        return number_key(a) or a

    keyed = [key(a) for a in answers if a is not None]
    if not keyed:
        return None
    value, count = Counter(keyed).most_common(1)[0]
    if count < max(2, -(-2 * samples // 3)):
        return None
    return next(a for a in answers if a is not None and key(a) == value)
