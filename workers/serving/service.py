"""The serving engine of one API process: the model loaded with the prompt-cache grid, one completion at a time
(two llama.cpp computations on the same cores slow each other), the background prefix depositor, and the chat
format (ChatML when the model has its tokens, else plain `role: content` lines)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.graft import EngineConfig, GraftEngine
from workers.runtime import Runtime
from workers.serving.completion import Completion, CompletionRequest, complete
from workers.serving.prompt_cache import PrefixDepositor


@dataclass(frozen=True)
class ChatPrompt:
    tokens: tuple[int, ...]
    shared_end: int  # tokens before the last message: what the next turn (or another question) shares


class Serving:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._lock = threading.Lock()
        self._engine: GraftEngine | None = None
        self.depositor = PrefixDepositor(rt)

    @property
    def model_name(self) -> str:
        return self.rt.settings.model

    def engine(self) -> GraftEngine:
        with self._lock:
            if self._engine is None:
                s = self.rt.settings
                threads = {"threads": s.threads} if s.threads else {}
                self._engine = self.rt.engine(s.model, EngineConfig(
                    n_ctx=s.window_tokens, prefill_chunk=s.prompt_chunk_tokens, flash_attn=s.serving_flash_attn,
                    **threads))
            return self._engine

    def tokens(self, text: str) -> tuple[int, ...]:
        return tuple(self.engine().tokenize(text, add_special=True, parse_special=False))

    def chat(self, messages: Sequence[tuple[str, str]]) -> ChatPrompt:
        engine = self.engine()
        chatml = engine.model.has_token("<|im_start|>")

        def render(items: Sequence[tuple[str, str]], open_reply: bool) -> str:
            if chatml:
                body = "".join(f"<|im_start|>{r}\n{c}<|im_end|>\n" for r, c in items)
                return body + ("<|im_start|>assistant\n" if open_reply else "")
            return "".join(f"{r}: {c}\n" for r, c in items) + ("assistant:" if open_reply else "")

        full = engine.tokenize(render(messages, True), add_special=True, parse_special=chatml)
        shared = engine.tokenize(render(messages[:-1], False), add_special=True, parse_special=chatml) \
            if len(messages) > 1 else []
        return ChatPrompt(tuple(full), len(shared))

    def complete(self, request: CompletionRequest, on_text: Callable[[str], None] | None = None) -> Completion:
        engine = self.engine()
        with self._lock:
            return complete(self.rt, engine, request, self.depositor, on_text=on_text)

    def close(self) -> None:
        self.depositor.close()
