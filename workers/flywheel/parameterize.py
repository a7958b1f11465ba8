"""Verified parameterized programs: a deposited program with the question's literals bound to named parameters.

When a verified program is deposited, every numeric literal in it whose value is one of the question's numbers is
replaced by the parameter of that number (`kvp_0`, `kvp_1`, ... in order of appearance in the question). The form
is kept only when (1) the question's numbers are distinct (otherwise a literal's parameter is ambiguous), or each
literal of a value the question writes more than once is assigned to a name holding the word its number counts
("2 friends share 2 pizzas": `friends = 2`, `pizzas = 2`), one literal per number, or the program also writes
the number as a constant a word of the question explains and the number's literal is the one assigned to a name
of its own clause ("makes 12 flapjacks ... 5 dozen eggs": `per_batch = 12`, `dozens * 12`; `_over_constants`), (2) at
least one literal was bound, (3) bound to the original numbers it reproduces the verified answer in the sandbox,
and (4) bound to other numbers its answer changes for at least one of three perturbations (a program that
prints a constant is not a method). It travels
in the block's signed header (`meta.parameterized`), so a forged form breaks the block's signature.

A new question of the same structure (same count of numbers, same units, same asked quantity) is answered by
binding its numbers and running the program in the sandbox: zero decode tokens."""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from workers.flywheel.alignment import money_at
from workers.flywheel.structure import QuestionNumber, question_numbers, singular, structure_of
from workers.verify.answer_match import answers_match
from workers.verify.programs import verify_program

# a program constant that a word the alignment keeps fixed explains (the word must agree, so the constant holds for
# the renamed question too): 100 for a percent, 2 for "twice", 60 for minutes per hour, ...
EXPLAINED = {"100": "percent % cent cents", "2": "twice double half halves weekend", "3": "triple thrice third thirds",
             "4": "quarter quarters", "12": "dozen dozens", "7": "week weeks", "60": "minute minutes hour hours",
             "24": "hour hours", "5": "weekday weekdays", "1000": "kilometers kilometer kilograms kilogram meters "
             "meter grams gram liters liter milliliters milliliter"}
PARAM = "kvp_"
MAX_PARAMS = 16
MAX_DIGITS = 60  # longer numbers are not bound (they stay with graft and sample)


@dataclass(frozen=True)
class ParameterizedProgram:
    body: str  # the program with bound literals replaced by kvp_<i>
    params: int
    units: tuple[str, ...]
    asked: tuple[str, ...]
    numbers: tuple[str, ...] = ()  # the routed problem's numbers as deposit read them (kvp_<i> is numbers[i])

    def bind(self, values: Sequence[str]) -> str:
        if len(values) != self.params:
            raise ValueError(f"the program takes {self.params} numbers, not {len(values)}")
        header = "".join(f"{PARAM}{i} = {_literal(v)}\n" for i, v in enumerate(values))
        return header + self.body

    def as_meta(self) -> dict[str, Any]:
        return {"body": self.body, "params": self.params, "units": list(self.units), "asked": list(self.asked),
                **({"numbers": list(self.numbers)} if self.numbers else {})}

    @classmethod
    def from_meta(cls, meta: Any) -> ParameterizedProgram | None:
        """The form stored in a block's header, or None when absent or not of the expected shape."""
        if not isinstance(meta, dict):
            return None
        body, params, units, asked = meta.get("body"), meta.get("params"), meta.get("units"), meta.get("asked")
        if not (isinstance(body, str) and isinstance(params, int) and not isinstance(params, bool)
                and 0 < params <= MAX_PARAMS and isinstance(units, list) and len(units) == params
                and all(isinstance(u, str) for u in units) and isinstance(asked, list)
                and all(isinstance(w, str) for w in asked)):
            return None
        numbers = meta.get("numbers", [])
        if not (isinstance(numbers, list) and len(numbers) in (0, params) and all(isinstance(n, str) for n in numbers)):
            return None
        if not bound_once(body):
            return None  # a form deposited before the rule (module doc, (2)) is refused as ambiguous
        return cls(body, params, tuple(units), tuple(asked), tuple(numbers))


def bound_once(body: str) -> bool:
    """Whether every parameter name occurs at most once in a form's body (False when it does not tokenize)."""
    seen: set[str] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(body).readline):
            if tok.type == tokenize.NAME and tok.string.startswith(PARAM):
                if tok.string in seen:
                    return False
                seen.add(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return False
    return True


_PLAIN = re.compile(r"-?\d+(?:\.\d+|/\d+)?")


def _literal(text: str) -> str:
    """A question's number as a Python literal (an int when written without a fraction, else a float literal; a
    fraction a/b as the parenthesized division), written from its Decimal parts: text that is not a plain signed
    decimal number or fraction of at most MAX_DIGITS digits is refused, so nothing of the question but a number
    reaches the program."""
    if len(text) > MAX_DIGITS + 1 or not _PLAIN.fullmatch(text):
        raise ValueError(f"not a plain decimal number or fraction of at most {MAX_DIGITS} digits: {text[:40]!r}")
    if "/" in text:
        num, den = text.split("/")
        if int(den) == 0:
            raise ValueError(f"not a number: {text!r} divides by zero")
        return f"({_literal(num)} / {_literal(den)})"
    value = Decimal(text)
    if "." not in text:
        return format(value, "f")
    out = format(value.normalize(), "f")
    return out if "." in out else out + ".0"


def numeric_literals(program: str) -> list[tuple[tokenize.TokenInfo, Decimal]] | None:
    """The decimal numeric literals of a program with their tokens (hex, octal and complex ones skipped); None
    when the program does not tokenize."""
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(program).readline):
            if tok.type == tokenize.NUMBER:
                try:
                    found.append((tok, Decimal(tok.string.replace("_", ""))))
                except InvalidOperation:
                    continue
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return found


_UNARY_AFTER = frozenset("( [ { , = : + - * / % ** // < > <= >= == != += -= *= /= return".split())


def _spans(program: str) -> list[tuple[tuple[int, int], tuple[int, int], Decimal, str]] | None:
    """The program's numbers as a question may write them: ((row, col) start, (row, col) end, value, text) for each
    decimal literal, for a unary minus with it ("-12"), and for a literal division of two integer literals ("3/4",
    "-3/4"); None when the program does not tokenize."""
    literals = numeric_literals(program)
    if literals is None:
        return None
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(program).readline)
              if t.type not in (tokenize.NL, tokenize.COMMENT)]
    position = {tok.start: i for i, tok in enumerate(tokens)}
    out = []
    for tok, value in literals:
        i = position[tok.start]
        here = [(tok.start, value, tok.string)]
        prev, before = (tokens[i - 1] if i >= 1 else None), (tokens[i - 2] if i >= 2 else None)
        if prev is not None and prev.string == "-" and prev.end == tok.start and (
                before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
                or before.string in _UNARY_AFTER):
            here.append((prev.start, -value, "-" + tok.string))
        out += [(start, tok.end, v, text) for start, v, text in here]
        den = tokens[i + 2] if i + 2 < len(tokens) and tokens[i + 1].string == "/" else None
        if den is not None and den.type == tokenize.NUMBER and den.string.isdigit() and int(den.string) \
                and tok.string.isdigit():
            with localcontext() as ctx:
                ctx.prec = 40
                out += [(start, den.end, v / Decimal(den.string), f"{text}/{den.string}") for start, v, text in here]
    return out


def _name_words(name: str) -> set[str]:
    return {singular(w) for w in name.casefold().split("_") if w}


def _named_literals(program: str) -> dict[tuple[int, int], set[str]]:
    """The literals a program assigns to a name on a line of their own (`pizzas = 2`), by their start: the name's
    words, singular ("num_pizzas" -> num, pizza)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(program).readline)
                  if t.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return {}
    out = {}
    for i in range(len(tokens) - 2):
        name, eq, lit = tokens[i], tokens[i + 1], tokens[i + 2]
        first = i == 0 or tokens[i - 1].type == tokenize.NEWLINE
        last = i + 3 >= len(tokens) or tokens[i + 3].type in (tokenize.NEWLINE, tokenize.ENDMARKER)
        if first and last and name.type == tokenize.NAME and eq.string == "=" and lit.type == tokenize.NUMBER:
            out[lit.start] = _name_words(name.string)
    return out


def _by_name(program: str, numbers: Sequence[QuestionNumber]) -> dict[tuple[int, int], int] | None:
    """For the question's numbers written more than once with one value ("2 friends share 2 pizzas"): which of
    them each of the program's literals of that value is, told by the name it is assigned to, which must hold the
    word the number counts (`friends = 2`, `pizzas = 2`), one literal per number and no two alike; None when any
    literal of such a value is not told apart that way (a constant, or a name that fits neither or both)."""
    spans = _spans(program)
    if spans is None:
        return None
    named = _named_literals(program)
    out: dict[tuple[int, int], int] = {}
    for value in {n.value for n in numbers if sum(m.value == n.value for m in numbers) > 1}:
        places = [i for i, n in enumerate(numbers) if n.value == value]
        units = [singular(numbers[i].unit.split("<")[0]) for i in places]
        if "" in units or len(set(units)) != len(units):
            return None
        starts = sorted({start for start, _, v, text in spans if v == value and "/" not in text})
        taken: set[int] = set()
        for start in starts:
            fits = [i for i, unit in zip(places, units, strict=True) if unit in named.get(start, set())]
            if len(fits) != 1 or fits[0] in taken:
                return None
            taken.add(fits[0])
            out[start] = fits[0]
    return out


def _over_constants(program: str, numbers: Sequence[QuestionNumber], question: str
                    ) -> dict[tuple[int, int], int] | None:
    """For each number of the question whose value the program also writes as a constant that a word of the
    question explains ("each batch makes 12 flapjacks ... 5 dozen eggs": `per_batch = 12` and `dozens * 12`), which
    literal is the number: the one literal of that value assigned to a name, a name that holds none of the words
    explaining the constant (`per_dozen = 12` is the constant), every other literal of that value one of the
    constants those words explain (as many as the question writes them); None when any such value is not told apart
    that way, or when there is none."""
    spans = _spans(program)
    if spans is None:
        return None
    named = _named_literals(program)
    words = Counter(re.findall(r"[a-z]+|%", question.casefold()))
    out: dict[tuple[int, int], int] = {}
    for index, number in enumerate(numbers):
        starts = sorted({start for start, _, v, text in spans if v == number.value and "/" not in text})
        if len(starts) < 2:
            continue
        explaining = EXPLAINED.get(format(number.value.normalize(), "f"), "").split()
        assigned = [start for start in starts if start in named]
        if len(assigned) != 1 or named[assigned[0]] & {singular(w) for w in explaining} \
                or len(starts) - 1 > sum(words[w] for w in explaining) \
                or not _names_its_clause(named[assigned[0]], question, number.start, explaining):
            return None
        out[assigned[0]] = index
    return out or None


# words of a program's name that tie it to no clause of the question
_NAME_FILLER = frozenset("per num number count total each of in on the a an to for is".split())
_PRICE_NAMES = frozenset("price cost fee fare".split())
_PRICE_WORDS = frozenset("sell sells sold cost costs charge charges charged".split())


# a past form a program's name may take for the verb its clause writes in the present (`bought = 2` for "He also buys
# 2 tins"): the verb's base
_PAST = {"bought": "buy", "sold": "sell", "paid": "pay", "spent": "spend", "made": "make", "kept": "keep",
         "gave": "give", "took": "take", "got": "get", "ate": "eat", "lost": "lose", "won": "win", "found": "find",
         "sent": "send", "grew": "grow", "caught": "catch", "brought": "bring", "built": "build", "drove": "drive",
         "rode": "ride", "ran": "run", "wrote": "write", "fed": "feed", "held": "hold", "lent": "lend"}


def _forms(word: str) -> set[str]:
    base = _PAST.get(word)
    return {word, singular(word), word[:-2] if len(word) > 4 and word.endswith("es") else word} \
        | ({base} if base else set())


def _names_its_clause(name: set[str], question: str, at: int, explaining: Sequence[str]) -> bool:
    """Whether a name the question's number at `at` is assigned to holds a word of the number's own clause
    ("Each batch ... makes 12 flapjacks": `per_batch`) and none of a clause that writes a word explaining the
    constant ("boxes of a dozen": `box = 12` may be the dozen; "eggs ... by the dozen": `eggs_in_carton` may be);
    review 38: a name that fits neither is no sign which literal is the number."""
    mine: set[str] = set()
    theirs: set[str] = set()
    offset = 0
    for clause in re.split(r"(?<=[.,;:!?])", question):
        words = {f for w in re.findall(r"[a-z]+", clause.casefold()) for f in _forms(w)}
        if offset <= at < offset + len(clause):
            mine |= words
        if words & set(explaining):
            theirs |= words
        offset += len(clause)
    name_forms = {f for w in name - _NAME_FILLER for f in _forms(w)}
    # a price is what its clause says a thing sells, costs or is charged for ("The milk sells for Kč2 a liter":
    # `price = 2`); the alias counts for the number's own clause only, never to clear an explaining one
    said = name_forms | ({f for w in name & _PRICE_NAMES for f in _PRICE_WORDS} if money_at(question, at) else set())
    return bool(said & mine) and not name_forms & theirs


def substitute(program: str, numbers: Sequence[QuestionNumber],
               named: dict[tuple[int, int], int] | None = None) -> tuple[str, int] | None:
    """The program with each number equal to one of `numbers` replaced by its parameter (a fraction a/b only where
    the program writes it a/b, a negative number with its minus), and the count replaced; None when the program does
    not tokenize. `named` (from `_by_name` or `_over_constants`) says which parameter each literal of a value the
    question writes more than once, or the program also writes as a constant, is; such a literal it does not name
    is left as it is."""
    spans = _spans(program)
    if spans is None:
        return None
    index = {n.value: i for i, n in enumerate(numbers)}
    repeated = {n.value for n in numbers if sum(m.value == n.value for m in numbers) > 1} \
        | {numbers[i].value for i in (named or {}).values()}
    fractions = {n.value for n in numbers if "/" in n.text}
    chosen: list[tuple[tuple[int, int], tuple[int, int], str]] = []
    # the widest span first (a fraction over its numerator, "-12" over "12"), never two that overlap
    for start, end, value, text in sorted(spans, key=lambda s: (s[0], -s[1][0], -s[1][1])):
        if value not in index or (value in fractions) != ("/" in text):
            continue
        if chosen and start < chosen[-1][1]:
            continue
        if value in repeated:
            if named is None or start not in named:
                continue
            chosen.append((start, end, f"{PARAM}{named[start]}"))
            continue
        chosen.append((start, end, f"{PARAM}{index[value]}"))
    lines = io.StringIO(program).readlines()  # the lines tokenize numbers (splitlines splits on more)
    for (row, col), (end_row, end), name in sorted(chosen, reverse=True):
        if end_row != row:
            continue
        line = lines[row - 1]
        lines[row - 1] = line[:col] + name + line[end:]
    return "".join(lines), sum(s[0][0] == s[1][0] for s in chosen)


PERTURBATIONS = ((2, 3), (1, 7), (3, 1))  # v -> a*v + b: other numbers to bind, tried in turn


def _perturbed(numbers: Sequence[QuestionNumber], a: int, b: int) -> list[str]:
    with localcontext() as ctx:
        ctx.prec = 2 * MAX_DIGITS  # exact for every number derive accepts
        return [format(n.value * a + b, "f") for n in numbers]


def derive(program: str, question: str, answer: str) -> ParameterizedProgram | None:
    """The verified parameterized form of a verified program, or None when it has none (see the module doc).
    Runs the program two to four times in the sandbox."""
    numbers = question_numbers(question)
    if not numbers or len(numbers) > MAX_PARAMS:
        return None
    if any(len(n.text) > MAX_DIGITS for n in numbers):
        return None
    if PARAM in program:
        return None  # the program already uses our parameter names: binding would be ambiguous
    named = None
    if len({n.value for n in numbers}) != len(numbers):
        named = _by_name(program, numbers)  # a value written twice: its literals told apart by their names
        if named is None:
            return None
    replaced = substitute(program, numbers, named)
    if replaced is not None and named is None and not bound_once(replaced[0]):
        # a number the program also writes as a constant its question explains ("12 flapjacks ... 5 dozen")
        constants = _over_constants(program, numbers, question)
        replaced = substitute(program, numbers, constants) if constants is not None else None
    if replaced is None or replaced[1] == 0 or not bound_once(replaced[0]):
        return None
    structure = structure_of(question)
    form = ParameterizedProgram(replaced[0], len(numbers), structure.units, structure.asked,
                                tuple(n.text for n in numbers))
    same = verify_program(form.bind([n.text for n in numbers]), answer=answer)
    if same.verdict != "verified":
        return None
    for a, b in PERTURBATIONS:  # the answer must move with the numbers (one coincidence is not enough to refuse)
        other = verify_program(form.bind(_perturbed(numbers, a, b)))
        if other.ran_cleanly and not answers_match(other.answer, answer):
            return form
    return None
