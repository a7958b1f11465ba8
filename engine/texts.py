"""Sample text for the gate, the regimes and the benchmarks: plain prose shipped with the package.

It is not drawn from any evaluation data set. Token sequences of any length are made by cycling the passages."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from engine.graft import GraftEngine

PERPLEXITY_TEXT = "engine/data/passages.txt"  # the fixed text model quality is measured on (engine/prepare.py)


@lru_cache(maxsize=1)
def passages() -> tuple[str, ...]:
    text = resources.files("engine").joinpath("data/passages.txt").read_text(encoding="utf-8")
    return tuple(p.strip() for p in text.split("\n\n") if p.strip())


def sample_tokens(engine: GraftEngine, n: int, *, start: int = 0) -> list[int]:
    """`n` tokens of prose beginning with passage `start` (BOS first), cycling through the passages."""
    if n <= 0:
        raise ValueError("need a positive number of tokens")
    ps = passages()
    tokens = engine.tokenize(ps[start % len(ps)])
    i = start + 1
    while len(tokens) < n:
        tokens += engine.tokenize("\n\n" + ps[i % len(ps)], add_special=False)
        i += 1
    return tokens[:n]
