"""On a CUDA build of llama.cpp, its libraries are loaded before numpy (imported by the engine's modules).

Measured on an H200 (docs/ENGINE.md, 'On a GPU'): with numpy imported first, loading a model with a BPE vocabulary
crashed with SIGSEGV in std::regex (llama_vocab's pre-tokenizer) jumping into libggml-cuda, with libllama linked
-Bsymbolic: LD_DEBUG showed 81 of libllama's symbols (56 of them libstdc++ template instances libllama does not
define) bound to libggml-cuda's exported copies. With llama_cpp imported first (it loads its libraries
RTLD_GLOBAL), the same load, the gate and every other check ran. A CPU build has no libggml-cuda and is left
alone (nothing is imported here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def load_llama_first() -> bool:
    """Import llama_cpp now if the installed build has the CUDA backend; True when it did."""
    spec = importlib.util.find_spec("llama_cpp")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return False
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    if not any(lib.glob("libggml-cuda.so*")):
        return False
    import llama_cpp  # noqa: F401 - its libraries before numpy's

    return True
