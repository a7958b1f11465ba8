"""One validated settings object, read from KVGRAFT_* environment variables and passed into components."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from pydantic import SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KVGRAFT_", extra="ignore", frozen=True)

    data_dir: Path = Path("./kvgraft-data")
    database_url: str | None = None
    store_url: str | None = None
    s3_endpoint_url: str | None = None
    broker_url: str | None = None
    model: str = "smollm2-135m"
    block_key: SecretStr | None = None
    cache_dir: Path | None = None
    read_cache_bytes: int = 2 << 30  # the local read-through cache of an s3:// store
    api_url: str = "http://127.0.0.1:8000"  # where `kvgraft submit` sends batches
    api_token: SecretStr | None = None  # the bearer token `kvgraft submit` uses
    query_timeout_s: float = 120.0  # how long POST /v1/queries waits for a graft worker before answering 202
    max_body_bytes: int = 8 << 20  # larger request bodies are refused with 413
    window_tokens: int = 4096  # the serving context (n_ctx) of engines this deployment runs
    log_level: str = "WARNING"  # structlog events on stderr at this level and above

    @field_validator("store_url")
    @classmethod
    def _known_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("file://", "s3://")):
            raise ValueError("KVGRAFT_STORE_URL must start with file:// or s3://")
        return value

    @cached_property
    def resolved_store_url(self) -> str:
        return self.store_url or f"file://{(self.data_dir / 'blocks').resolve()}"

    @cached_property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'kvgraft.db').resolve()}"

    @property
    def block_key_bytes(self) -> bytes | None:
        return self.block_key.get_secret_value().encode() if self.block_key else None
