"""Logits rows, their SHA-256 digests, and the divergence measures between two runs (KL, argmax, max |diff|)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LogitsRows:
    """float32 logits for consecutive absolute positions `first_pos`, `first_pos + 1`, ... (one row each)."""

    first_pos: int
    rows: np.ndarray  # shape (n_positions, n_vocab), float32, C-contiguous

    def __post_init__(self) -> None:
        if self.rows.dtype != np.float32 or self.rows.ndim != 2:
            raise ValueError("logits rows must be a 2-D float32 array")

    @property
    def n_positions(self) -> int:
        return int(self.rows.shape[0])

    def row_sha256(self) -> list[str]:
        """SHA-256 of each position's float32 logits bytes."""
        return [hashlib.sha256(np.ascontiguousarray(r).tobytes()).hexdigest() for r in self.rows]

    def sha256(self) -> str:
        """SHA-256 over every position's row digest, in order: one digest for the whole query."""
        h = hashlib.sha256()
        for d in self.row_sha256():
            h.update(bytes.fromhex(d))
        return h.hexdigest()


@dataclass(frozen=True)
class Divergence:
    """How a candidate run's logits differ from a reference run's, position by position."""

    byte_equal: bool
    positions: int
    positions_equal: int
    kl_mean: float
    kl_max: float
    argmax_agree: int
    max_abs_diff: float

    @property
    def argmax_flips(self) -> int:
        return self.positions - self.argmax_agree

    @property
    def argmax_agree_text(self) -> str:
        return f"{self.argmax_agree}/{self.positions}"


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def kl_per_position(reference: np.ndarray, candidate: np.ndarray) -> np.ndarray:
    """KL(reference || candidate) per row, in nats, computed in float64."""
    lp, lq = _log_softmax(reference), _log_softmax(candidate)
    kl = (np.exp(lp) * (lp - lq)).sum(axis=-1)
    return np.maximum(kl, 0.0)  # clamp float64 round-off below zero


def compare(reference: LogitsRows, candidate: LogitsRows, *, same_positions: bool = True) -> Divergence:
    """Compare two runs row by row. `same_positions=False` compares the same tokens at different positions
    (the graft-free positional control)."""
    moved = same_positions and reference.first_pos != candidate.first_pos
    if reference.rows.shape != candidate.rows.shape or moved:
        raise ValueError(
            f"cannot compare logits at {reference.first_pos}+{reference.rows.shape} "
            f"with {candidate.first_pos}+{candidate.rows.shape}"
        )
    ref_d, cand_d = reference.row_sha256(), candidate.row_sha256()
    equal = sum(a == b for a, b in zip(ref_d, cand_d, strict=True))
    kl = kl_per_position(reference.rows, candidate.rows)
    agree = int((reference.rows.argmax(axis=-1) == candidate.rows.argmax(axis=-1)).sum())
    diff = np.abs(reference.rows.astype(np.float64) - candidate.rows.astype(np.float64))
    return Divergence(
        byte_equal=equal == len(ref_d),
        positions=len(ref_d),
        positions_equal=equal,
        kl_mean=float(kl.mean()) if len(kl) else 0.0,
        kl_max=float(kl.max()) if len(kl) else 0.0,
        argmax_agree=agree,
        max_abs_diff=float(diff.max()) if diff.size else 0.0,
    )


def merge(divergences: list[Divergence]) -> Divergence:
    """Pool several comparisons into one (KL mean weighted by positions)."""
    total = sum(d.positions for d in divergences)
    if total == 0:
        raise ValueError("nothing to merge")
    return Divergence(
        byte_equal=all(d.byte_equal for d in divergences),
        positions=total,
        positions_equal=sum(d.positions_equal for d in divergences),
        kl_mean=sum(d.kl_mean * d.positions for d in divergences) / total,
        kl_max=max(d.kl_max for d in divergences),
        argmax_agree=sum(d.argmax_agree for d in divergences),
        max_abs_diff=max(d.max_abs_diff for d in divergences),
    )
