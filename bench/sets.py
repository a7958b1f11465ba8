"""The flywheel sets: the shipped `dev` and `check` pairs in bench/data (bench/flywheel_data.py writes them), or a
library and an eval file of the user's, read line by line with errors naming the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).parent / "data"
# transfer: new constants or a paraphrase; renamed: new constants, people and objects; reordered: the statements in
# another order; near_miss*: the library problem's wording and numbers asking for something else (another quantity,
# another entity, another unit, another step)
ROLES = ("recurrence", "transfer", "renamed", "reordered", "near_miss", "near_miss_entity", "near_miss_unit",
         "near_miss_step", "off_distribution")
TRANSFER_ROLES = tuple(r for r in ROLES if r not in ("recurrence", "off_distribution"))


def dataset_files(name: str) -> tuple[Path, Path]:
    library, evaluation = DATA_DIR / f"flywheel-{name}-library.jsonl", DATA_DIR / f"flywheel-{name}-eval.jsonl"
    if not library.exists() or not evaluation.exists():
        known = sorted(p.name.removeprefix("flywheel-").removesuffix("-library.jsonl")
                       for p in DATA_DIR.glob("flywheel-*-library.jsonl"))
        raise ValueError(f"no shipped dataset {name!r}; known: {', '.join(known)}")
    return library, evaluation


def read_jsonl(path: Path, *, what: str) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("question"),
                                                                                             str):
            raise ValueError(f"{path}:{n}: a {what} row needs a string `id` and `question`")
        if "answer" not in row:
            raise ValueError(f"{path}:{n}: a {what} row needs an `answer`")
        role = row.setdefault("role", "transfer")
        if what == "eval" and role not in ROLES:
            raise ValueError(f"{path}:{n}: role must be one of {', '.join(ROLES)}, not {role!r}")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no {what} rows")
    return rows


def load_sets(dataset: str, library: Path | None, evaluation: Path | None
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Path, Path]:
    """(library rows, eval rows, library file, eval file): both files given, or the shipped set `dataset`."""
    if (library is None) != (evaluation is None):
        raise ValueError("give both --library and --eval, or neither")
    library_path, eval_path = (library, evaluation) if library is not None and evaluation is not None \
        else dataset_files(dataset)
    return read_jsonl(library_path, what="library"), read_jsonl(eval_path, what="eval"), library_path, eval_path
