"""What a command or task runs against: the settings, the block store, the database sessions and loaded engines.

The embedded default (no KVGRAFT_* set) is SQLite and a local block directory in the data dir, brought up to date
on first use; on PostgreSQL the schema must already be at head (`kvgraft db upgrade`)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

import structlog
from sqlalchemy.orm import Session, sessionmaker

from engine.graft import EngineConfig, GraftEngine
from store.blocks import BlockStore
from store.cache import LocalReadCache
from store.db import make_engine, session_factory
from store.migrate import ensure_schema
from store.objects import open_object_store
from workers.settings import Settings, engine_config, load_settings

log = structlog.get_logger(__name__)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True, eq=False)
class MemoSlot(Generic[K, V]):
    """One kind of value a process derives once and keeps (a skill block per engine and prompt style, a check's
    verdict per fingerprint), declared by the module that derives it: its keys and values are typed, and no
    other module's key can collide with it."""

    name: str


class ProcessMemo:
    """The values this process derived once, by slot and key."""

    def __init__(self) -> None:
        self._values: dict[tuple[MemoSlot[object, object], Hashable], object] = {}

    def get(self, slot: MemoSlot[K, V], key: K) -> V | None:
        return cast("V | None", self._values.get((cast("MemoSlot[object, object]", slot), key)))

    def put(self, slot: MemoSlot[K, V], key: K, value: V) -> V:
        self._values[(cast("MemoSlot[object, object]", slot), key)] = value
        return value

    def entries(self, slot: MemoSlot[K, V]) -> list[tuple[K, V]]:
        """Every key and value of one slot (for operators' tools and tests)."""
        return [(cast(K, key), cast(V, value)) for (s, key), value in self._values.items() if s is slot]


@dataclass
class Runtime:
    settings: Settings
    blocks: BlockStore
    sessions: sessionmaker[Session]
    _engines: dict[str, GraftEngine] = field(default_factory=dict)
    memo: ProcessMemo = field(default_factory=ProcessMemo)  # per-process values derived once

    def engine(self, model: str | None = None, config: EngineConfig | None = None) -> GraftEngine:
        """A loaded engine for `model` (default: KVGRAFT_MODEL), kept for the life of the runtime."""
        name = model or self.settings.model
        cfg = config or engine_config(self.settings)
        key = f"{name}|{cfg}"  # the graft engine asked for with or without its config is the same engine
        if key not in self._engines:
            self._engines[key] = GraftEngine.load(name, cfg, cache_dir=self.settings.cache_dir)
        return self._engines[key]

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in one transaction: committed on success, rolled back on any error."""
        with self.sessions.begin() as session:
            yield session

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()
        self.blocks.objects.close()


def open_block_store(settings: Settings, url: str | None = None) -> BlockStore:
    store_url = url or settings.resolved_store_url
    objects = open_object_store(store_url, s3_endpoint_url=settings.s3_endpoint_url)
    cache = None
    if store_url.startswith("s3://") and settings.read_cache_bytes > 0:
        cache = LocalReadCache(settings.data_dir / "read-cache", settings.read_cache_bytes)
    return BlockStore(objects, cache=cache, key=settings.block_key_bytes,
                      verified_cache_bytes=settings.verified_cache_bytes, keyring=settings.block_keyring)


_warned_unsigned = False


def warn_if_unsigned(settings: Settings) -> None:
    """Once per process: a `store.blocks_unsigned` warning when no block key is configured."""
    global _warned_unsigned
    if settings.block_key is None and not _warned_unsigned:
        _warned_unsigned = True
        log.warning("store.blocks_unsigned", detail=settings.block_signing)


def open_runtime(settings: Settings | None = None) -> Runtime:
    """A runtime over `settings` (the process's, passed down from its entry point; tests may leave it out)."""
    settings = settings or load_settings()
    warn_if_unsigned(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    url = settings.resolved_database_url
    ensure_schema(url)
    return Runtime(settings=settings, blocks=open_block_store(settings),
                   sessions=session_factory(make_engine(url)))
