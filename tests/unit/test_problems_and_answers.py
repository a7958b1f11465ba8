"""Problem batch parsing (all-or-nothing, each bad line named), answer extraction and matching, the router."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.flywheel.router import Candidate, route
from workers.problems import ProblemInputError, parse_problem_list, parse_problems_jsonl
from workers.verify.answer_match import answers_match, extract_answer, parse_number
from workers.verify.programs import extract_program, verify_program

pytestmark = pytest.mark.unit


def test_valid_jsonl_parses() -> None:
    data = b'{"id": "a", "question": "1+1?", "answer": 2}\n\n{"id": "b", "question": "x?", "answer": "yes"}\n'
    problems = parse_problems_jsonl(data)
    assert [p.id for p in problems] == ["a", "b"] and problems[0].answer == 2


def test_every_bad_line_is_named_and_nothing_is_accepted() -> None:
    lines = [
        '{"id": "ok", "question": "fine?", "answer": 1}',
        '{"id": "x", "question": "no answer"}',
        "not json at all",
        '{"id": 5, "question": "numeric id", "answer": 1}',
        '{"id": "ok", "question": "dup", "answer": 1}',
        '{"id": "t", "question": "bool", "answer": true}',
        '["a", "list"]',
        '{"id": "u", "question": "q", "answer": 1, "surprise": 1}',
    ]
    with pytest.raises(ProblemInputError) as info:
        parse_problems_jsonl("\n".join(lines))
    bad = dict(info.value.errors)
    assert set(bad) == {2, 3, 4, 5, 6, 7, 8}
    assert "answer" in bad[2] and "JSON" in bad[3] and "id" in bad[4] and "duplicate" in bad[5]
    assert "surprise" in bad[8]


def test_binary_and_huge_lines_are_refused() -> None:
    with pytest.raises(ProblemInputError, match="UTF-8"):
        parse_problems_jsonl(b'\xff\xfe{"id": "a"}\n')
    huge = json.dumps({"id": "h", "question": "q" * 100_000, "answer": 1}).encode()
    with pytest.raises(ProblemInputError, match="exceeds"):
        parse_problems_jsonl(huge)
    with pytest.raises(ProblemInputError, match="no problems"):
        parse_problems_jsonl(b"\n\n")
    with pytest.raises(ProblemInputError, match="JSON list"):
        parse_problem_list({"id": "a"})


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_no_byte_string_crashes_the_jsonl_parser(data: bytes) -> None:
    with contextlib.suppress(ProblemInputError):
        parse_problems_jsonl(data)


@pytest.mark.parametrize(("printed", "expected", "ok"), [
    ("42", 42, True), ("42.0", 42, True), ("The answer is 1,234", 1234, True), ("$12.50", 12.5, True),
    ("41", 42, False), ("", 42, False), ("yes", "Yes", True), ("0.333333333", 1 / 3, True), ("nan", 1, False),
    ("42", "42", True), ("-7", -7, True),
])
def test_answers_match(printed: str, expected: object, ok: bool) -> None:
    assert answers_match(extract_answer(printed), expected) is ok


def test_extract_and_parse() -> None:
    assert extract_answer("step 1\n\n 27 \n") == "27"
    assert extract_answer("   ") is None
    assert parse_number("about 3.5e2 units") == 350.0
    assert extract_program("x = 1\nprint(x)\n```\nmore text") == "x = 1\nprint(x)"
    assert extract_program("   \n```") is None


def test_verify_program_verdicts() -> None:
    assert verify_program("print(6*7)", answer=42).verdict == "verified"
    assert verify_program("print(6*7)", answer=41).verdict == "wrong"
    assert verify_program("raise SystemExit(1)", answer=1).verdict == "error"
    assert verify_program(None, answer=1).verdict == "no_program"
    assert verify_program("print(6*7)").verdict == "unchecked"
    even = "def verify(answer):\n    return int(answer) % 2 == 0\n"
    assert verify_program("print(8)", verifier=even).verdict == "verified"
    assert verify_program("print(9)", verifier={"python": even}).verdict == "wrong"
    hostile = "def verify(answer):\n    import os\n    return os.path.exists('/work')\n"
    assert verify_program("print(1)", verifier=hostile).verdict == "wrong"  # the verifier runs sandboxed too


def test_router_picks_the_same_structure_and_abstains_on_unrelated() -> None:
    pool = [Candidate("b1", "A farmer collects 48 eggs and puts them into cartons of 6. How many cartons?"),
            Candidate("b2", "Tom saves 25 dollars each week. How many weeks to save 300 dollars?"),
            Candidate("b3", "A garden has 6 rows of 14 tulips. How many tulips are in the garden?")]
    hit = route("A farmer collects 96 eggs and puts them into cartons of 12. How many cartons?", pool)
    assert hit.key == "b1" and hit.score > hit.runner_up
    assert route("What is the capital city of the moon colony?", pool).key is None
    assert route("anything", []).key is None


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300), st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=20), st.none()))
def test_no_printed_text_crashes_the_answer_parser(printed: str, expected: object) -> None:
    got = extract_answer(printed)
    assert got is None or isinstance(got, str)
    value = parse_number(printed)
    assert value is None or isinstance(value, float)
    assert answers_match(got, expected) in (True, False)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_no_generated_text_crashes_program_extraction(text: str) -> None:
    program = extract_program(text)
    assert program is None or (isinstance(program, str) and "```" not in program)
