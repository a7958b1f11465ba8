"""Exceptions raised by the engine. Callers translate them to messages only at the CLI/API edge."""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class ModelNotFoundError(EngineError):
    """A model name is unknown, or its GGUF file is missing or unreadable."""


class ModelLoadError(EngineError):
    """llama.cpp refused to load a GGUF file or to create a context."""


class DecodeError(EngineError):
    """llama_decode returned a non-zero status, or a request would exceed a context limit."""


class StateRestoreError(EngineError):
    """A KV state could not be restored; nothing was grafted."""


class PayloadIntegrityError(StateRestoreError):
    """A state payload's SHA-256 or size does not match what its snapshot records (tampered or truncated)."""


class FingerprintMismatchError(StateRestoreError):
    """A state was captured under another architecture fingerprint or numerics profile than this engine's."""
