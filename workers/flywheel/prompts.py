"""The texts the flywheel shows the model: the few-shot instructions prefix (itself a `skill` block), a question,
the verified solution with its final-answer line, the recurrence query and the transfer request.

Models with a ChatML template (SmolLM2-Instruct) get chat turns; others get plain text. The worked examples are
written for this project (no evaluation data set is used)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.graft import GraftEngine

SYSTEM = ("You solve math word problems by writing a short Python program. The program computes the answer "
          "step by step and prints only the final number.")
EXAMPLES = (
    ("A baker makes 14 loaves in the morning and 9 in the afternoon. He sells 17. How many loaves are left?",
     "made = 14 + 9\nsold = 17\nprint(made - sold)"),
    ("A train ticket costs 6 dollars. How much do 4 adults and 3 children pay in all if a child ticket costs "
     "half as much?",
     "adult = 6\nchild = adult / 2\nprint(4 * adult + 3 * child)"),
)
RECURRENCE_QUESTION = "What is the final answer?"
TRANSFER_NOTE = "A new question of the same kind. Use the same method with the new numbers."
MAX_ANSWER_TOKENS = 32  # far above an answer line: answers stop at their newline (bench flywheel counts any at it)


@dataclass(frozen=True)
class PromptStyle:
    chatml: bool

    @property
    def solution_stops(self) -> tuple[str, ...]:
        return ("```", "<|im_end|>") if self.chatml else ("```", "\nQuestion:")

    @property
    def answer_stops(self) -> tuple[str, ...]:
        return ("\n", "<|im_end|>") if self.chatml else ("\n",)


def style_for(engine: GraftEngine) -> PromptStyle:
    return PromptStyle(chatml=engine.model.has_token("<|im_start|>"))


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def instructions_prefix(style: PromptStyle) -> str:
    if style.chatml:
        shots = "".join(_turn("user", q) + _turn("assistant", f"```python\n{p}\n```") for q, p in EXAMPLES)
        return _turn("system", SYSTEM) + shots
    shots = "".join(f"Question: {q}\nProgram:\n```python\n{p}\n```\n\n" for q, p in EXAMPLES)
    return f"{SYSTEM}\n\n{shots}"


def question_part(style: PromptStyle, question: str) -> str:
    if style.chatml:
        return f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n```python\n"
    return f"Question: {question}\nProgram:\n```python\n"


def transfer_part(style: PromptStyle, question: str) -> str:
    return question_part(style, f"{TRANSFER_NOTE}\n{question}")


def solution_tail(style: PromptStyle, program: str, answer: str) -> str:
    """The verified program, the closing fence and the final-answer line that ends a solution block."""
    end = "<|im_end|>\n" if style.chatml else "\n\n"
    return f"{program.rstrip()}\n```\nFinal answer: {answer}{end}"


def recurrence_query(style: PromptStyle) -> str:
    if style.chatml:
        return f"<|im_start|>user\n{RECURRENCE_QUESTION}<|im_end|>\n<|im_start|>assistant\nFinal answer:"
    return f"Question: {RECURRENCE_QUESTION}\nFinal answer:"


def tokens_of(engine: GraftEngine, text: str, *, first: bool = False) -> list[int]:
    """Tokens of one prompt part; parts are tokenized separately and concatenated (BOS only on the first)."""
    return engine.tokenize(text, add_special=first, parse_special=True)


def normalize_question(question: str) -> str:
    """The key of the exact lookup: case-folded, whitespace collapsed, trailing punctuation dropped."""
    return re.sub(r"[\s?.!]+$", "", " ".join(question.casefold().split()))
