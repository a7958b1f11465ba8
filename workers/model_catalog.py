"""`kvgraft models list`: the models this machine can serve (the shipped ones and copies `kvgraft models prepare`
made), each with its weight type, its quality against its source and whether it batches exactly here.

"Batches exactly here" is the recorded verdict of the serving engine's `batch` check (workers/serving/
batch_check.py) for the model's fingerprint under this deployment's serving configuration
(KVGRAFT_SERVING_MAX_SEQS, flash attention, grid, KV type) on this host: `yes` (with or without pad rows), `no`
(the check found a difference: completions are served one at a time), or `not checked` (no verdict recorded yet;
the serving engine runs the check before it batches). Listing never runs the check."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import EngineError
from engine.graft import GraftEngine
from engine.models import KNOWN_MODELS, PREPARED_DIR, ModelRef, resolve_model, split_prepared_name
from engine.prepare import file_type_name, read_quality
from store.repository import latest_attestation
from workers.runtime import Runtime
from workers.serving.batch_check import CHECK_VERSION
from workers.settings import engine_config


@dataclass(frozen=True)
class ModelListing:
    name: str
    path: str | None
    file_type: str | None
    source: str | None  # the model a prepared copy was made from (None: shipped)
    perplexity: float | None
    perplexity_delta_pct: float | None  # against the source, on the shipped text (engine/prepare.py)
    fingerprint: str | None
    batches_exactly: str  # yes / yes (pad rows) / no / not checked / unavailable
    batch_attestation_id: int | None
    # the flywheel solve rates of a prepared copy and its source on the same problems (bench/flywheel.py
    # `solve_rate`: dataset, problems, verified, samples, ...), None where not measured
    solve_rate: dict[str, Any] | None = None
    solve_rate_source: dict[str, Any] | None = None
    note: str | None = None  # why a model is unavailable, or what its quality record says

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _candidates(cache_dir: Path) -> list[str]:
    prepared = sorted(p.stem for p in (cache_dir / PREPARED_DIR).glob("*.gguf")
                      if split_prepared_name(p.stem) is not None)
    return [*KNOWN_MODELS, *prepared]


def _verdict(rt: Runtime, engine: GraftEngine) -> tuple[str, int | None]:
    max_seqs = rt.settings.serving_max_seqs
    if max_seqs <= 1:
        return "no (KVGRAFT_SERVING_MAX_SEQS is 1)", None
    profile = engine.batch_profile(max_seqs, check=CHECK_VERSION)
    with rt.session() as s:
        known = latest_attestation(s, block_id=None, fingerprint=engine.fingerprint.id, profile_id=profile.id,
                                   kind="batch", host=socket.gethostname())
        if known is None:
            return "not checked", None
        if known.status != "attested":
            return "no", known.id
        return ("yes (pad rows)" if int((known.profile or {}).get("pad_to", 1)) > 1 else "yes"), known.id


def list_models(rt: Runtime, names: list[str] | None = None) -> list[ModelListing]:
    """Each of `names` (default: the shipped models and every prepared copy in the cache), as the serving engine
    would load it under these settings."""
    settings = rt.settings
    config = engine_config(settings, serving=True)
    listings = []
    for name in names or _candidates(settings.cache_dir):
        try:
            ref: ModelRef = resolve_model(name, cache_dir=settings.cache_dir)
        except EngineError as exc:
            listings.append(ModelListing(name, None, None, None, None, None, None, "unavailable", None, note=str(exc)))
            continue
        quality = read_quality(ref.path) if split_prepared_name(name) else None
        with GraftEngine.load(ref, config, cache_dir=settings.cache_dir) as engine:
            file_type = file_type_name(engine.model)
            verdict, attestation_id = _verdict(rt, engine)
            fingerprint = engine.fingerprint.id
        note = None
        if quality is not None and quality.get("requantized_from"):
            note = f"requantized from {quality['requantized_from']}, not from the original weights"
        elif split_prepared_name(name) and quality is None:
            note = "no quality record: prepare it again"
        listings.append(ModelListing(
            name=name, path=str(ref.path), file_type=file_type,
            source=quality.get("source") if quality else None,
            perplexity=quality.get("perplexity") if quality else None,
            perplexity_delta_pct=quality.get("perplexity_delta_pct") if quality else None,
            fingerprint=fingerprint, batches_exactly=verdict, batch_attestation_id=attestation_id,
            solve_rate=_summary(quality, "solve_rate"), solve_rate_source=_summary(quality, "solve_rate_source"),
            note=note))
    return listings


def _summary(quality: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    rate = (quality or {}).get(key)
    if not isinstance(rate, dict):
        return None
    return {k: rate.get(k) for k in ("dataset", "problems", "verified", "samples", "rate", "interval")}
