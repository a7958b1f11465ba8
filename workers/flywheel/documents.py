"""Documents in the paged context store: long texts split into window-sized blocks (each knows its source and
character offsets), deposited in bulk with the gate run on a probe and a sample of blocks, and questions answered
on the `context` route by grafting the one block that holds what they need."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any

import structlog

from engine.graft import GraftEngine
from engine.sampling import SamplingParams, generate_after_graft
from store.blockfile import Block
from store.repository import document_passages
from workers.errors import WorkInputError
from workers.flywheel.deposit import DepositResult, deposit_tokens, probe_query
from workers.flywheel.prompts import style_for, tokens_of
from workers.flywheel.router import route_passages
from workers.runtime import Runtime
from workers.seam import block_to_snapshot

log = structlog.get_logger(__name__)

QUERY_ROOM = 128  # tokens kept free in the serving window for the question and the answer
MAX_CONTEXT_ANSWER_TOKENS = 24


@dataclass(frozen=True)
class Chunk:
    text: str
    start: int  # character offsets in the source text
    end: int


def split_text(engine: GraftEngine, text: str, *, max_tokens: int) -> list[Chunk]:
    """Paragraph-aligned chunks of at most `max_tokens` tokens each (a paragraph longer than that is cut at line
    and then word boundaries). A text that fits gives one chunk."""
    if len(engine.tokenize(text)) <= max_tokens:
        return [Chunk(text, 0, len(text))]
    pieces: list[tuple[int, int]] = []
    pos = 0
    for para in text.split("\n\n"):
        pieces.append((pos, pos + len(para)))
        pos += len(para) + 2
    chunks: list[Chunk] = []
    cur_start: int | None = None
    cur_end = 0
    for start, end in _fit(engine, text, pieces, max_tokens):
        candidate = text[cur_start if cur_start is not None else start:end]
        if cur_start is not None and len(engine.tokenize(candidate)) > max_tokens:
            chunks.append(Chunk(text[cur_start:cur_end], cur_start, cur_end))
            cur_start = start
        elif cur_start is None:
            cur_start = start
        cur_end = end
    if cur_start is not None:
        chunks.append(Chunk(text[cur_start:cur_end], cur_start, cur_end))
    return [c for c in chunks if c.text.strip()]


def _fit(engine: GraftEngine, text: str, spans: list[tuple[int, int]], max_tokens: int) -> list[tuple[int, int]]:
    """Split any span longer than `max_tokens` at word boundaries."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if len(engine.tokenize(text[start:end])) <= max_tokens:
            out.append((start, end))
            continue
        piece_start = start
        words = [i for i in range(start, end) if text[i] == " "] + [end]
        last_ok = None
        for cut in words:
            if len(engine.tokenize(text[piece_start:cut])) <= max_tokens:
                last_ok = cut
                continue
            if last_ok is None or last_ok <= piece_start:  # one huge "word": hard cut
                last_ok = piece_start + max(1, (cut - piece_start) // 2)
            out.append((piece_start, last_ok))
            piece_start = last_ok
            last_ok = None
        if piece_start < end:
            out.append((piece_start, end))
    return out


def document_window(engine: GraftEngine) -> int:
    return engine.config.n_ctx - QUERY_ROOM


def deposit_document(rt: Runtime, engine: GraftEngine, *, text: str, source: str, team_id: int | None = None,
                     shared: bool = False, gate_fraction: float = 1.0, seed: int = 0) -> list[DepositResult]:
    """Split a text into window-sized blocks and deposit each. With gate_fraction < 1 only a random sample of the
    blocks (always at least the first) is gated; every block is still hash-verified on every read."""
    if not text.strip():
        raise ValueError("nothing to deposit: the text is empty")
    chunks = split_text(engine, text, max_tokens=document_window(engine))
    rng = random.Random(seed)
    probe = probe_query(engine)
    results = []
    for i, chunk in enumerate(chunks):
        gate = i == 0 or rng.random() < gate_fraction
        results.append(deposit_tokens(
            rt, engine, tokens=engine.tokenize(chunk.text), probe=probe, kind="document", text=chunk.text,
            source={"file": source, "part": i, "parts": len(chunks), "start": chunk.start, "end": chunk.end,
                    "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()},
            team_id=team_id, shared=shared, gate=gate, meta={"passage": chunk.text}))
    log.info("documents.deposited", source=source, blocks=len(results), gated=sum(r.gated for r in results))
    return results


def context_query(engine: GraftEngine, question: str) -> list[int]:
    if style_for(engine).chatml:
        return tokens_of(engine, f"\n\n<|im_start|>user\n{question} Answer from the text above in a few words."
                                 f"<|im_end|>\n<|im_start|>assistant\n")
    return tokens_of(engine, f"\n\nQuestion: {question}\nAnswer:")


def answer_from_block(rt: Runtime, engine: GraftEngine, block: Block, question: str) -> tuple[str | None, int]:
    """Graft one (verified) document block into a fresh serving context and decode a short answer after the
    question."""
    snapshot = block_to_snapshot(block)
    query = context_query(engine, question)
    room = engine.config.n_ctx - snapshot.pos_end - len(query)
    if room < 2:
        raise WorkInputError(f"the question ({len(query)} tokens with its framing) does not fit the serving window "
                             f"after a {snapshot.n_tokens}-token block")
    out = generate_after_graft(engine, snapshot, query, SamplingParams(
        max_tokens=min(MAX_CONTEXT_ANSWER_TOKENS, room - 1), stop=("\n", "<|im_end|>")),
        query_call=True, payload_verified=True)
    return out.text.strip() or None, len(out.tokens)


def route_document(rt: Runtime, engine: GraftEngine, question: str, *, team_id: int | None,
                   threshold: float) -> tuple[str, float] | None:
    """The one document block (of this fingerprint, visible to the team) whose passage best covers the question."""
    with rt.session() as s:
        passages = document_passages(s, fingerprint=engine.fingerprint.id, team_id=team_id)
    return route_passages(question, passages, threshold=threshold)


def describe(results: list[DepositResult]) -> dict[str, Any]:
    return {"blocks": [r.as_dict() for r in results], "n_blocks": len(results),
            "n_tokens": sum(r.n_tokens for r in results), "bytes": sum(r.bytes for r in results),
            "byte_exact": all(r.byte_exact for r in results if r.gated),
            "gated": sum(r.gated for r in results)}
