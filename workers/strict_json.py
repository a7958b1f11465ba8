"""One strict JSON parser for untrusted input (HTTP bodies and JSONL batches from any source).

`loads_strict` refuses, with a `JsonInputError` (a `json.JSONDecodeError`, so callers that catch decode errors need
nothing new), what Python's `json` module would either crash on or accept but the catalogue cannot store:

* nesting deeper than MAX_JSON_DEPTH (the C decoder recurses and raises RecursionError at about 1,000 levels);
* a number literal of more than MAX_NUMBER_DIGITS digits (`int()` raises a plain ValueError past 4,300 digits,
  and the digits cost quadratic time to convert below that);
* NaN, Infinity and -Infinity (not JSON; PostgreSQL's json type refuses them), and a float that overflows to
  infinity (1e400);
* NUL (U+0000) and lone surrogates in any string or key (PostgreSQL text cannot hold NUL; a lone surrogate cannot
  be encoded as UTF-8 for either database).

The depth and digit checks run on the raw text before the decoder sees it, so nothing deep is ever recursed into.
"""

from __future__ import annotations

import json
import math
import re
import sys
from itertools import accumulate
from typing import Any

MAX_JSON_DEPTH = 64
MAX_NUMBER_DIGITS = min(sys.get_int_max_str_digits() or 4300, 4300)

# A JSON string (an unterminated one runs to the end of the text, so every scan stays linear).
_STRING = r'"(?:[^"\\]++|\\[\s\S]?)*+(?:"|\Z)'
_HAZARD = rf"[0-9]{{{MAX_NUMBER_DIGITS + 1},}}|NaN|Infinity"
_BARE_STRING = re.compile(_STRING.encode())
_BARE_HAZARD = re.compile(_HAZARD.encode())
# The exact scan, run only when the fast one found something: a string, a bracket or a hazard, in order.
_TOKEN = re.compile(rf"{_STRING}|[\[{{]|[\]}}]|{_HAZARD}")
_BRACKETS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[{]}"))
_ESCAPED_HAZARD = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class JsonInputError(json.JSONDecodeError):
    """Well-formed or not, JSON this API refuses to decode or store (see the module docstring)."""


def _max_depth(bare: bytes) -> int:
    """The deepest bracket nesting of JSON text whose strings were removed (UTF-8 continuation bytes are never
    ASCII, so deleting every other byte leaves exactly the brackets)."""
    steps = memoryview(bare.translate(_BRACKETS, _NOT_BRACKETS)).cast("b")
    return max(accumulate(steps), default=0)


def _scan(text: str) -> None:
    """Refuse deep nesting, over-long numbers and non-finite constants outside strings, before decoding: a fast
    pass over the text without its strings, then, only if it found something, an exact pass for the position."""
    bare = _BARE_STRING.sub(b"", text.encode("utf-8", "surrogatepass"))
    if _BARE_HAZARD.search(bare) is None and _max_depth(bare) <= MAX_JSON_DEPTH:
        return
    depth = 0
    for m in _TOKEN.finditer(text):
        c = m.group()[0]
        if c == '"':
            continue
        if c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise JsonInputError(f"nested deeper than {MAX_JSON_DEPTH} levels", text, m.start())
        elif c in "]}":
            depth -= 1
            if depth < 0:
                return  # unbalanced: not JSON at all, and the decoder says where
        elif c.isdigit():
            raise JsonInputError(f"a number of more than {MAX_NUMBER_DIGITS} digits", text, m.start())
        else:
            raise JsonInputError(f"{m.group()} is not JSON (numbers must be finite)", text, m.start())


class _OutOfRange(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(f"the number {literal[:40]} is out of range")
        self.literal = literal


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _OutOfRange(literal)
    return value


def _refuse_constant(name: str) -> Any:  # unreachable after _scan; kept so the decoder can never return NaN
    raise ValueError(f"{name} is not JSON (numbers must be finite)")


def unstorable(value: Any) -> str | None:
    """Why a decoded JSON value cannot be stored (NUL or a lone surrogate in a string or key), or None. Iterative:
    `loads_strict` bounds the depth already, but nothing here recurses either."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return "NUL (U+0000) is not allowed in strings"
            if _LONE_SURROGATE.search(item):
                return "a lone UTF-16 surrogate is not allowed in strings"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def loads_strict(data: bytes | str, *, storable: bool = True) -> Any:
    """Decode one JSON document, refusing what the module docstring lists with a JsonInputError. With
    storable=False, strings are not checked for NUL and lone surrogates from escapes (the caller runs `unstorable`
    on the parts it keeps, to name them in its own error)."""
    if isinstance(data, bytes | bytearray):
        text = bytes(data).decode(json.detect_encoding(data), "surrogatepass")
    else:
        text = data
    surrogate = _LONE_SURROGATE.search(text)  # raw ones (never paired in a str): refuse before anything else
    if surrogate:
        raise JsonInputError("a lone UTF-16 surrogate is not allowed", text, surrogate.start())
    _scan(text)
    try:
        value = json.loads(text, parse_float=_finite_float, parse_constant=_refuse_constant)
    except json.JSONDecodeError:
        raise
    except _OutOfRange as exc:
        raise JsonInputError(str(exc), text, max(text.find(exc.literal), 0)) from None
    except (ValueError, RecursionError) as exc:  # int()'s digit limit, should the limits above ever change
        raise JsonInputError(str(exc), text, 0) from None
    escape = _ESCAPED_HAZARD.search(text) if storable else None
    if escape:  # only \u0000 and \udXXX escapes can decode to NUL or a lone surrogate: else nothing to walk
        problem = unstorable(value)
        if problem:
            raise JsonInputError(problem, text, escape.start())
    return value


def screen_jsonl(body: bytes, *, max_line_bytes: int) -> tuple[bytes, list[tuple[int, str]]]:
    """JSONL lines `loads_strict` refuses, as (1-based line, message), and the body with those lines blanked (line
    numbers unchanged) for the ordinary line parser, which reports everything else. Lines that are blank, too long
    or not UTF-8 are left to that parser."""
    lines = body.split(b"\n")
    refused: list[tuple[int, str]] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip() or len(line) > max_line_bytes:
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            loads_strict(text)
        except JsonInputError as exc:
            refused.append((n, f"{exc.msg} (at column {exc.colno})"))
            lines[n - 1] = b""
        except json.JSONDecodeError:
            continue  # ordinary syntax errors: the line parser words them
    return b"\n".join(lines), refused
