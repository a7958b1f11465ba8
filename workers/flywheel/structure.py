"""The structure of a word problem as the transfer checks read it: its numbers in order of appearance (each with
the word that names its unit), and the asked quantity (the question sentence, numbers masked).

Two questions have the same structure when they carry the same count of numbers with the same units in the same
order and ask for the same quantity; a same-structure variant differs only in its constants."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from workers.flywheel.alignment import NUMBER as _NUMBER
from workers.flywheel.alignment import number_pattern, number_value

_WORD = re.compile(r"[a-z]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ASK_WORDS = ("how", "what", "find", "calculate", "compute", "determine", "which")
# words that carry no quantity: ignored when asked sentences are compared
_FILLER = frozenset("a an the of to in on and or is are was were be been will would does do did can could has have "
                    "had it its he she they his her their them there this that these those if for with at by from "
                    "as all each every then so up out".split())


@dataclass(frozen=True)
class QuestionNumber:
    value: Decimal
    text: str  # as written, commas removed (signed, decimal, or a fraction a/b)
    unit: str  # the content word naming its unit (see _unit)
    start: int  # character offset in the question


@dataclass(frozen=True)
class Structure:
    numbers: tuple[QuestionNumber, ...]
    asked: tuple[str, ...]  # the content words of the asked sentence, numbers masked as "<num>"

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(n.unit for n in self.numbers)


def _unit(before: str, after: str) -> str:
    """What a number counts, as `unit<context`: the unit is the first content word after the number in its
    sentence, else the last one before it ("cartons of 6." -> carton); the context is the content word just before
    the number ("reads 37 pages" -> read, "has 259 pages" -> book), so two numbers of the same unit in swapped
    roles do not look alike. Plural s dropped, so carton and cartons match."""
    end = re.search(r"[.!?;]", after)
    ahead = [w for w in _WORD.findall((after[:end.start()] if end else after).casefold()) if w not in _FILLER]
    start = max(before.rfind(c) for c in ".!?;")
    behind = [w for w in _WORD.findall(before[start + 1:].casefold()) if w not in _FILLER]
    unit = ahead[0] if ahead else (behind[-1] if behind else "")
    context = behind[-1] if behind and ahead else ""
    return f"{singular(unit)}<{singular(context)}"


def singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def question_numbers(question: str) -> tuple[QuestionNumber, ...]:
    out = []
    for match in number_pattern(question).finditer(question):
        text = match.group(0).replace(",", "")
        value = number_value(text)
        if value is None:  # a fraction over zero
            continue
        unit = _unit(question[max(0, match.start() - 60):match.start()], question[match.end():match.end() + 60])
        out.append(QuestionNumber(value, text, unit, match.start()))
    return tuple(out)


def asked_sentence(question: str) -> str:
    """The sentence that asks: the last one ending in '?', else the last one starting with an asking word, else
    the last sentence."""
    sentences = [s.strip() for s in _SENTENCE_END.split(question.strip()) if s.strip()]
    if not sentences:
        return ""
    for s in reversed(sentences):
        if s.endswith("?"):
            return s
    for s in reversed(sentences):
        if s.casefold().startswith(_ASK_WORDS):
            return s
    return sentences[-1]


def asked_words(question: str) -> tuple[str, ...]:
    """The content words of the asked clause: the asked sentence from its last asking word on ("If a farmer has 24
    eggs, how many cartons can he fill?" -> how many cartons fill), numbers masked."""
    sentence = asked_sentence(question).casefold()
    starts = [m.start() for m in re.finditer(r"\b(?:" + "|".join(_ASK_WORDS) + r")\b", sentence)]
    clause = sentence[starts[-1]:] if starts else sentence
    masked = _NUMBER.sub(" <num> ", clause)
    return tuple(w for w in re.findall(r"<num>|[a-z]+", masked) if w not in _FILLER)


def structure_of(question: str) -> Structure:
    return Structure(question_numbers(question), asked_words(question))


def asked_similarity(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Jaccard similarity of two asked sentences' content words (1.0 when both are empty)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)
