"""The chat format of served prompts: ChatML when the model has its control tokens, else plain `role: content`
lines, and where a chat's prefixes worth storing end.

Only the template's own markup becomes control tokens. The template is cut at its control tokens, as llama.cpp
cuts a text it parses for them, and every piece between two of them (a role name and the message content
together) is tokenized as text: content that spells `<|im_end|>` or `<|im_start|>system` is text and can never
open a turn of another role. For content without such text the tokens are those of tokenizing the whole rendered
template with control tokens parsed (tests/model checks it on the default model). The plain format has no control
tokens: a message holding a line `system: ...` is only text there too, but nothing marks where it came from, so
a model without ChatML should not be served to mutually distrusting authors of one chat."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.graft import GraftEngine

IM_START, IM_END = "<|im_start|>", "<|im_end|>"

Piece = tuple[str, bool]  # (text, is one of the template's control tokens)


@dataclass(frozen=True)
class ChatPrompt:
    tokens: tuple[int, ...]
    # where the first message and all before the last end, each with the next message's role header: what the
    # next turn or another question shares, so where a stored prefix may end
    message_ends: tuple[int, ...]


def _header(role: str, chatml: bool) -> list[Piece]:
    return [(IM_START, True), (f"{role}\n", False)] if chatml else [(f"{role}: ", False)]


def render(messages: Sequence[tuple[str, str]], *, chatml: bool, open_reply: bool) -> list[Piece]:
    """The template as pieces in order."""
    pieces: list[Piece] = []
    for role, content in messages:
        pieces += ([(IM_START, True), (f"{role}\n{content}", False), (IM_END, True), ("\n", False)]
                   if chatml else [(f"{role}: {content}\n", False)])
    if open_reply:
        pieces += _header("assistant", chatml) if chatml else [("assistant:", False)]
    return pieces


def tokenize_pieces(engine: GraftEngine, pieces: Sequence[Piece]) -> list[int]:
    """Control tokens parsed as such, every text piece (adjacent ones joined) tokenized as text; BOS once, first."""
    merged: list[Piece] = []
    for text, control in pieces:
        if merged and not control and not merged[-1][1]:
            merged[-1] = (merged[-1][0] + text, False)
        elif text:
            merged.append((text, control))
    out: list[int] = []
    for i, (text, control) in enumerate(merged):
        out += engine.tokenize(text, add_special=i == 0, parse_special=control)
    return out


def chat_prompt(engine: GraftEngine, messages: Sequence[tuple[str, str]]) -> ChatPrompt:
    chatml = engine.model.has_token(IM_START)

    def end_of(k: int, full: list[int]) -> int | None:
        """Where the first k messages end in the prompt, with the next message's role header when its tokens are
        still a prefix of the prompt's (the header is what every question after the same messages shares too),
        else without it; None when the tokenizer merged across the boundary either way."""
        head_only = render(messages[:k], chatml=chatml, open_reply=False)
        for pieces in (head_only + _header(messages[k][0], chatml), head_only):
            head = tokenize_pieces(engine, pieces)
            if full[:len(head)] == head:
                return len(head)
        return None

    full = tokenize_pieces(engine, render(messages, chatml=chatml, open_reply=True))
    ends = {end_of(k, full) for k in {1, len(messages) - 1} if 0 < k < len(messages)}
    return ChatPrompt(tuple(full), tuple(sorted(e for e in ends if e)))
