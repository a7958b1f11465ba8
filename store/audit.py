"""The audit bundle: the provenance tables as JSONL, every raw generation and program as a file, and a manifest of
SHA-256 digests, so an auditor can re-check every recorded score without a model.

    DIR/manifest.json            {"format", "created_at", "schema_revision", "counts", "files": {path: sha256}}
    DIR/tables/<table>.jsonl     one JSON object per row (API token hashes are never exported)
    DIR/generations/<id>.txt     the raw text of each generation
    DIR/programs/<id>.py         each extracted program (generation id), and reference-<problem id>.py
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from store.db import AnswerRow, AttestationRow, BatchRow, BlockRow, CopyRow, GenerationRow, ProblemRow, TeamRow, utcnow
from store.errors import StoreError

BUNDLE_FORMAT = "kvgraft-audit/1"
TABLES: dict[str, type[Any]] = {"teams": TeamRow, "batches": BatchRow, "problems": ProblemRow,
                                "generations": GenerationRow, "blocks": BlockRow, "attestations": AttestationRow,
                                "queries": AnswerRow, "copies": CopyRow}
RECHECKED_VERDICTS = ("verified", "reference")

# (program, expected answer) -> (answer still matches, what the re-run printed or why it failed)
Recheck = Callable[[str, Any, Any], tuple[bool, str]]  # (program, expected answer, verifier) -> (ok, detail)


@dataclass(frozen=True)
class Mismatch:
    kind: str  # missing_file | digest | unlisted_file | row_digest | answer | manifest
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.detail}"


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_text(text: str) -> str:
    return _sha256_bytes(text.encode("utf-8"))


def _row_dict(row: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column in sa.inspect(type(row)).columns:
        value = getattr(row, column.key)
        out[column.key] = value.isoformat() if isinstance(value, datetime) else value
    return out


def export_bundle(session: Session, directory: Path, *, schema_revision: str | None) -> dict[str, Any]:
    """Write the bundle into an empty (or new) directory; returns the manifest."""
    if directory.exists() and any(directory.iterdir()):
        raise StoreError(f"{directory} is not empty; export into a new directory")
    files: dict[str, str] = {}

    def write(rel: str, data: bytes) -> None:
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        files[rel] = _sha256_bytes(data)

    counts: dict[str, int] = {}
    for name, model in TABLES.items():
        rows = [_row_dict(r) for r in session.scalars(sa.select(model).order_by(*model.__table__.primary_key))]
        counts[name] = len(rows)
        write(f"tables/{name}.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode())
    for gen in session.scalars(sa.select(GenerationRow).order_by(GenerationRow.id)):
        write(f"generations/{gen.id}.txt", gen.text.encode("utf-8"))
        if gen.program is not None:
            write(f"programs/{gen.id}.py", gen.program.encode("utf-8"))
    for problem in session.scalars(sa.select(ProblemRow).where(ProblemRow.solution.is_not(None))
                                   .order_by(ProblemRow.id)):
        write(f"programs/reference-{problem.id}.py", (problem.solution or "").encode("utf-8"))
    manifest = {"format": BUNDLE_FORMAT, "created_at": utcnow().isoformat(), "schema_revision": schema_revision,
                "counts": counts, "files": dict(sorted(files.items()))}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def _read_jsonl(path: Path, where: str, mismatches: list[Mismatch]) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        try:
            row = json.loads(line)
        except ValueError:
            mismatches.append(Mismatch("manifest", f"{where}:{n}", "not valid JSON"))
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            mismatches.append(Mismatch("manifest", f"{where}:{n}", "not a JSON object"))
    return rows


def _inside(directory: Path, rel: object) -> Path | None:
    """`directory / rel` when it names a path inside the bundle (no absolute path, no `..`, no link leading out),
    else None."""
    if not isinstance(rel, str) or not rel or Path(rel).is_absolute() or ".." in Path(rel).parts or "\x00" in rel:
        return None
    path = directory / rel
    try:
        resolved = path.resolve()
        root = directory.resolve()
    except (OSError, RuntimeError):
        return None
    return path if resolved == root or root in resolved.parents else None


def verify_bundle(directory: Path, *, recheck: Recheck | None = None,
                  progress: Callable[[str], None] | None = None) -> list[Mismatch]:
    """Recompute every digest, cross-check row digests against the raw files, and re-run every recorded verified
    program through `recheck`. Returns every mismatch found (empty: the bundle is consistent)."""
    try:
        manifest = json.loads((directory / "manifest.json").read_text())
        listed: dict[str, str] = dict(manifest["files"])
        if manifest.get("format") != BUNDLE_FORMAT:
            return [Mismatch("manifest", "manifest.json", f"unknown format {manifest.get('format')!r}")]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [Mismatch("manifest", "manifest.json", f"unreadable: {exc}")]
    mismatches: list[Mismatch] = []
    for rel, digest in listed.items():
        path = _inside(directory, rel)
        if path is None:
            mismatches.append(Mismatch("manifest", str(rel), "path escapes the bundle (absolute, '..' or a link "
                                                             "outside it): not read"))
        elif not path.is_file():
            mismatches.append(Mismatch("missing_file", rel, "listed in the manifest but absent"))
        elif _sha256_bytes(path.read_bytes()) != digest:
            mismatches.append(Mismatch("digest", rel, "SHA-256 differs from the manifest"))
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory).as_posix()
        if path.is_file() and rel != "manifest.json" and rel not in listed:
            mismatches.append(Mismatch("unlisted_file", rel, "present but not in the manifest"))
    tables = directory / "tables"
    problems = {p["id"]: p for p in _read_jsonl(tables / "problems.jsonl", "problems", mismatches)} \
        if (tables / "problems.jsonl").is_file() else {}
    generations = _read_jsonl(tables / "generations.jsonl", "generations", mismatches) \
        if (tables / "generations.jsonl").is_file() else []
    for gen in generations:
        where = f"generation {gen.get('id')}"
        text, program = gen.get("text"), gen.get("program")
        if not isinstance(text, str) or _sha256_text(text) != gen.get("text_digest"):
            mismatches.append(Mismatch("row_digest", where, "text does not hash to text_digest"))
        raw = _inside(directory, f"generations/{gen.get('id')}.txt")
        if raw is None:
            mismatches.append(Mismatch("manifest", where, "generation id escapes the bundle: its file is not read"))
        elif raw.is_file() and isinstance(text, str) and raw.read_text(encoding="utf-8") != text:
            mismatches.append(Mismatch("row_digest", where, "raw generation file differs from the table row"))
        if program is not None and (not isinstance(program, str)
                                    or _sha256_text(program) != gen.get("program_digest")):
            mismatches.append(Mismatch("row_digest", where, "program does not hash to program_digest"))
        if recheck is not None and gen.get("verdict") in RECHECKED_VERDICTS and isinstance(program, str):
            problem = problems.get(gen.get("problem_id"))
            if problem is None:
                mismatches.append(Mismatch("answer", where, f"its problem {gen.get('problem_id')} is not exported"))
                continue
            if progress:
                progress(where)
            ok, detail = recheck(program, problem.get("answer"), problem.get("verifier"))
            if not ok:
                mismatches.append(Mismatch("answer", where, f"re-run no longer verifies: {detail}"))
    return mismatches
