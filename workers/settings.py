"""One validated settings object, read from KVGRAFT_* environment variables and passed into components.

`load_settings()` is the one place outside tests that builds it: each process's entry point (a CLI command, a
Celery worker, the API app, a supervised child) calls it once and passes the object on. `engine_config()` is the
one place an EngineConfig is made from it."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from engine.graft import KV_TYPES, EngineConfig
from engine.models import DEFAULT_CACHE_DIR
from store.block_crypto import ALGORITHM, Keyring

MIN_BLOCK_KEY_BYTES = 32
PREFILL_CHUNK_ENV = "KVGRAFT_PROMPT_CHUNK_TOKENS"  # the documented name of Settings.prefill_chunk
RETIRED_TEAM_LIMIT = "KVGRAFT_SERVING_TEAM_MAX_SEQS"  # merged into KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT


class Settings(BaseSettings):
    # extra="forbid": a misspelt override is an error (unknown KVGRAFT_ variables in the environment are not read)
    model_config = SettingsConfigDict(env_prefix="KVGRAFT_", extra="forbid", frozen=True)

    data_dir: Path = Path("./kvgraft-data")
    database_url: str | None = None
    store_url: str | None = None
    s3_endpoint_url: str | None = None
    broker_url: str | None = None
    model: str = "smollm2-135m"
    block_key: SecretStr | None = None
    # payload encryption at rest (store/block_crypto.py): `id:key` entries (32-byte keys, base64 or hex), the last
    # the newest; the file's entries come first, then the variable's
    block_encryption_key: SecretStr | None = None
    block_encryption_key_file: Path | None = None
    cache_dir: Path = DEFAULT_CACHE_DIR  # generated and assembled model files, the GGUF hash cache
    read_cache_bytes: int = 2 << 30  # the local read-through cache of an s3:// store (0: none)
    verified_cache_bytes: int = 256 << 20  # blocks this process verified, kept in memory (0: none)
    api_url: str = "http://127.0.0.1:8000"  # where `kvgraft submit` sends batches
    api_token: SecretStr | None = None  # the bearer token `kvgraft submit` uses
    query_timeout_s: float = 120.0  # how long POST /v1/queries waits for a graft worker before answering 202
    max_body_bytes: int = 8 << 20  # larger request bodies are refused with 413
    work_queue_max: int = 256  # embedded mode: tasks queued or running on the API's work thread; more get 503
    team_max_pending_queries: int = 64  # questions a team may have in flight (POST /v1/queries); more get 429
    team_max_pending_batches: int = 32  # batches a team may have queued or running; more get 429
    busy_retry_after_s: int = 5  # the Retry-After (seconds) of those 429 and 503 answers
    # SIGTERM: how long `kvgraft serve` lets in-flight requests and work finish before cancelling them and exiting 0
    shutdown_grace_s: float = Field(10.0, ge=0, le=3600)
    # THE per-team limit of the serving engine (docs/OPERATIONS.md, "Admission"): OpenAI completions a team may have
    # waiting or running in this process (more get 429), and so the sequences it may hold in the batch at once.
    # Default: KVGRAFT_SERVING_MAX_SEQS - 1 (at least 1), so another team finds a slot
    serving_team_max_in_flight: int | None = Field(None, ge=1)
    serving_queue_max: int = 32  # OpenAI completions waiting or running in this process (all teams); more get 429
    # sequences the serving engine decodes in one call (continuous batching; 1: one completion at a time), used
    # only where this machine's `batch` check found them byte-identical to each served alone (docs/ENGINE.md)
    serving_max_seqs: int = 8
    # the serving engine's prefill budget of one step while other completions decode (0: whole grid chunks): a
    # joining prompt's grid chunk is fed in sub-calls of this many tokens (the last taking the remainder: at most
    # twice this less one), one per step, so a decoding completion waits for at most one of them per step. Used
    # only where this host's `batch` check found the sub-calls byte-identical to the whole chunk's call
    # (docs/ENGINE.md, "Prefill beside decoders")
    serving_step_tokens: int = Field(8, ge=0)
    # the budget grows with the completions decoding: KVGRAFT_SERVING_STEP_TOKENS per decoding row, in multiples of
    # it up to this many tokens (0 or the budget itself: constant), where the same check found every level exact
    serving_step_tokens_max: int = Field(32, ge=0)
    # the budget from measured costs (0, the default: KVGRAFT_SERVING_STEP_TOKENS as set): the serving engine
    # measures at its first start on a host what a decode row and prefill sub-calls cost here and uses the largest
    # of KVGRAFT_SERVING_STEP_TOKENS and its halvings (down to 4) whose step beside a decoder takes at most this many
    # times the decoder's step alone (docs/ENGINE.md, "The budget from measured costs"); the `batch` check then
    # decides that budget. Off by default: the choice, which every team's responses show, is a timing, and other
    # work on the machine at that start can move it
    serving_step_ratio: float = 0.0
    # a decode step whose sequences' KV lengths differ is split into calls of similar lengths where that saves more
    # attention cells (rows x the view each row is padded to) than this many per extra call (0: one call per step),
    # only where this host's `batch` check found decoding split by length exact (docs/ENGINE.md)
    serving_split_cells: int = Field(0, ge=0)
    # recurring questions a graft worker answers together (their answers decoded in shared calls; 1: one at a
    # time), used only where this host's `batch` check of the graft engine found each grafted answer decoded
    # together equal to the same graft decoded alone (docs/ENGINE.md)
    graft_max_seqs: int = 4
    # the graft engine's flash attention (on: blocks of sliding-window models stay exact for 2-63-token queries,
    # docs/ENGINE.md). Part of the fingerprint: blocks deposited under one setting are not grafted under the other.
    # Off lets graft workers batch where ggml computes a row one way whatever shares the call (docs/ENGINE.md)
    graft_flash_attn: bool = True
    # the KV cache's element type of every engine (f16; q8_0 and the others in engine/graft.py KV_TYPES, where the
    # gate passes): part of the fingerprint, chosen by the operator, never mixed. Quantized types need flash
    # attention on (llama.cpp quantizes the V cache only with it)
    kv_type: str = "f16"
    window_tokens: int = 4096  # the serving context (n_ctx) of engines this deployment runs
    # the serving engine's prefill_chunk (EngineConfig): prompts are prefilled in calls of this many tokens and
    # cached prefixes end at its multiples (the serving grid); KVGRAFT_PROMPT_CHUNK_TOKENS, its documented name
    prefill_chunk: int = Field(64, validation_alias=AliasChoices(PREFILL_CHUNK_ENV))
    # prompt-cache prefixes are stored as chunks of this many tokens, each holding only its own cells (a multiple
    # of prefill_chunk; 0: each prefix stored whole, from position 0)
    prefix_chunk_tokens: int = 256
    # the serving engine's flash attention: off, because on CPU a prompt's last partial chunk (2-63 query rows) at
    # 2,000 tokens of context takes ~2.5 s with it and ~0.4 s without (docs/BENCHMARKS.md); part of the fingerprint,
    # and the composition check decides whether the cache is exact under it
    serving_flash_attn: bool = False
    threads: int | None = None  # threads per engine (default: the cores, at most 8); part of the numerics profile
    # layers every engine offloads to a GPU (a CUDA build, scripts/install-llama.sh KVGRAFT_LLAMA_CUDA=1): unset,
    # none (the CPU backend alone, also on a CUDA build); `all` (-1) for a GPU profile. Part of the fingerprint, with
    # the GPU's name, compute capability, driver, CUDA runtime and cuBLAS: blocks are never grafted across them
    gpu_layers: int | None = None
    store_budget_bytes: int | None = None  # bytes the block store may hold; over it, documents are evicted (LRU)
    requeue_interval_s: float = 60.0  # how often `kvgraft beat` sends work that nothing will deliver again
    requeue_after_s: float = 300.0  # pending this long, on an empty queue, with no delivery running: lost
    # a solve or answer task's deadline: past it the work is abandoned, the row ends `failed` (deadline_exceeded) and
    # the worker takes its next task, under the solo pool too (workers/queue/outcome.py); Celery's hard time limit
    # (prefork pools) is this plus a minute
    task_deadline_s: float = Field(3600.0, gt=0)
    # each worker process marks the deliveries it holds alive this often; one not marked for delivery_lost_after_s
    # (or whose message the broker redelivered) lost its worker
    delivery_heartbeat_s: float = Field(10.0, gt=0)
    delivery_lost_after_s: float = Field(120.0, gt=0)
    log_level: str = "WARNING"  # structlog events on stderr at this level and above

    @model_validator(mode="before")
    @classmethod
    def _prefill_chunk_by_name(cls, data: Any) -> Any:
        """`prefill_chunk=` given in code (load_settings' overrides) sets the value whose one environment name is
        KVGRAFT_PROMPT_CHUNK_TOKENS, over the environment's (the field's own name is never read from it)."""
        if isinstance(data, dict) and "prefill_chunk" in data:
            data = {k: v for k, v in data.items() if k != "prefill_chunk"} | {PREFILL_CHUNK_ENV: data["prefill_chunk"]}
        return data

    @field_validator("serving_max_seqs", "graft_max_seqs")
    @classmethod
    def _some_seqs(cls, value: int, info: ValidationInfo) -> int:
        if not 1 <= value <= 64:
            raise ValueError(f"KVGRAFT_{(info.field_name or '').upper()} must be 1 to 64")
        return value

    @field_validator("serving_step_ratio")
    @classmethod
    def _a_ratio_of_steps(cls, value: float) -> float:
        if value != 0 and not 1 < value <= 100:
            raise ValueError("KVGRAFT_SERVING_STEP_RATIO must be 0 (the budget as set) or above 1 (at most 100): a "
                             "step beside a prompt's sub-call cannot cost less than the decode step alone")
        return value

    @model_validator(mode="before")
    @classmethod
    def _one_team_limit(cls, data: Any) -> Any:
        """KVGRAFT_SERVING_TEAM_MAX_SEQS was a second per-team limit (running sequences) that the in-flight limit
        made unreachable; set, it is refused rather than silently ignored."""
        if RETIRED_TEAM_LIMIT in os.environ or (isinstance(data, dict) and "serving_team_max_seqs" in data):
            raise ValueError(f"{RETIRED_TEAM_LIMIT} is gone: KVGRAFT_SERVING_TEAM_MAX_IN_FLIGHT is the one per-team "
                             f"limit (completions waiting or running, and so sequences held)")
        return data

    @property
    def team_max_in_flight(self) -> int:
        """Completions (sequences) one team may have waiting or running in a serving process."""
        if self.serving_team_max_in_flight is not None:
            return self.serving_team_max_in_flight
        return max(1, self.serving_max_seqs - 1)

    @field_validator("gpu_layers", mode="before")
    @classmethod
    def _layers(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("all", "-1"):
            return -1
        if isinstance(value, str) and value.strip().lower() in ("", "none"):
            return None
        if isinstance(value, int | str) and int(value) < -1:
            raise ValueError("KVGRAFT_GPU_LAYERS must be a layer count, `all` or unset")
        return value

    @field_validator("store_url")
    @classmethod
    def _known_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("file://", "s3://")):
            raise ValueError("KVGRAFT_STORE_URL must start with file:// or s3://")
        return value

    @field_validator("block_key")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().encode()) < MIN_BLOCK_KEY_BYTES:
            raise ValueError(f"KVGRAFT_BLOCK_KEY must be at least {MIN_BLOCK_KEY_BYTES} bytes "
                             f"(e.g. `openssl rand -hex 32`)")
        return value

    @field_validator("prefix_chunk_tokens")
    @classmethod
    def _on_the_grid(cls, value: int, info: ValidationInfo) -> int:
        grid = info.data.get("prefill_chunk", 64)
        if value < 0 or (value and (not grid or value % grid)):
            raise ValueError(f"KVGRAFT_PREFIX_CHUNK_TOKENS must be 0 or a multiple of KVGRAFT_PROMPT_CHUNK_TOKENS "
                             f"({grid})")
        return value

    @field_validator("kv_type")
    @classmethod
    def _known_kv_type(cls, value: str) -> str:
        if value not in KV_TYPES:
            raise ValueError(f"KVGRAFT_KV_TYPE must be one of {', '.join(KV_TYPES)}")
        return value

    @field_validator("block_encryption_key")
    @classmethod
    def _keyring_parses(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            try:
                Keyring.parse(value.get_secret_value())
            except ValueError as exc:
                raise ValueError(f"KVGRAFT_BLOCK_ENCRYPTION_KEY: {exc}") from None
        return value

    @cached_property
    def block_keyring(self) -> Keyring | None:
        """The keys block payloads are encrypted and decrypted with, or None (payloads stored in the clear)."""
        texts = []
        if self.block_encryption_key_file is not None:
            try:
                texts.append(self.block_encryption_key_file.read_text())
            except OSError as exc:
                raise ValueError(f"KVGRAFT_BLOCK_ENCRYPTION_KEY_FILE {self.block_encryption_key_file}: "
                                 f"{exc.strerror or exc}") from None
        if self.block_encryption_key is not None:
            texts.append(self.block_encryption_key.get_secret_value())
        if not texts:
            return None
        try:
            return Keyring.parse("\n".join(texts))
        except ValueError as exc:
            raise ValueError(f"block encryption keys: {exc}") from None

    @property
    def block_encryption(self) -> str:
        """Whether payloads are encrypted at rest, in words (never a key)."""
        ring = self.block_keyring
        if ring is None:
            return "off: payloads are stored in the clear (read access to the store can copy a team's state)"
        return f"{ALGORITHM}, new blocks under key {ring.newest!r} ({len(ring.keys)} key(s) readable)"

    @property
    def block_signing(self) -> str:
        """How blocks are protected, in words (shown by /v1/status and `kvgraft fingerprint`)."""
        if self.block_key is None:
            return "off: KVGRAFT_BLOCK_KEY is unset, blocks are unsigned (write access to the store can inject one)"
        return "hmac-sha256 over the whole block header (format 2)"

    @cached_property
    def resolved_store_url(self) -> str:
        return self.store_url or f"file://{(self.data_dir / 'blocks').resolve()}"

    @cached_property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'kvgraft.db').resolve()}"

    @property
    def block_key_bytes(self) -> bytes | None:
        return self.block_key.get_secret_value().encode() if self.block_key else None


def load_settings(**overrides: Any) -> Settings:
    """This process's settings, read from the environment (see the module's docstring: call it once, pass it on);
    `overrides` on top (a benchmark's own data dir)."""
    return Settings(**overrides)


def engine_config(settings: Settings, *, serving: bool = False, **overrides: Any) -> EngineConfig:
    """The EngineConfig the settings give: the graft engine's (KVGRAFT_GRAFT_FLASH_ATTN) or, with `serving`, the
    serving engine's (KVGRAFT_SERVING_FLASH_ATTN and its prefill grid); the window, KV type and threads for both;
    `overrides` (a gate's or self-check's n_ctx) on top."""
    fields: dict[str, Any] = {"n_ctx": settings.window_tokens, "kv_type": settings.kv_type,
                              "flash_attn": settings.serving_flash_attn if serving else settings.graft_flash_attn}
    if serving:
        fields["prefill_chunk"] = settings.prefill_chunk
    if settings.threads:
        fields["threads"] = settings.threads
    if settings.gpu_layers is not None:
        fields["gpu_layers"] = settings.gpu_layers
    return EngineConfig(**(fields | overrides))
