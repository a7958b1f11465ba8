"""The accelerator a llama.cpp build computes on, behind one small interface, so that the fingerprint and the
numerics profile name the GPU (device, compute capability, driver, CUDA runtime, cuBLAS, the build's CUDA flags and
the CUDA options that change kernels) and tests on a CPU can hand them a fake one.

`Devices` is the interface: `gpus()` lists the GPUs llama.cpp would compute on (none on a CPU build), and
`cuda_options(...)` the switches that select CUDA kernels. `CpuOnly` is the CPU implementation; `LlamaCudaDevices`
asks llama.cpp (ggml's device registry, its CUDA feature list), the CUDA driver and runtime, cuBLAS and NVML through
ctypes, reading the versions of the libraries this process actually loaded (/proc/self/maps)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# environment switches read by ggml's CUDA backend that change which kernels run or how they accumulate
# (ggml-cuda.cu, mmq.cu, ggml-backend.cpp); every GGML_CUDA_* variable is recorded, and these beside them
KERNEL_ENV = ("GGML_OP_OFFLOAD_MIN_BATCH",)
KERNEL_ENV_PREFIX = "GGML_CUDA_"
# the ones llama-cpp-python 0.3.36's ggml reads (getenv in its vendored source); LlamaCudaDevices reads them as
# ggml does, through the C library, so the profile names what the kernels were chosen by
GGML_SWITCHES = ("GGML_CUDA_ALLREDUCE", "GGML_CUDA_CUBLAS_COMPUTE_TYPE", "GGML_CUDA_DISABLE_FUSION",
                 "GGML_CUDA_DISABLE_GRAPHS", "GGML_CUDA_ENABLE_UNIFIED_MEMORY", "GGML_CUDA_GRAPH_OPT",
                 "GGML_CUDA_MMQ_PREC", "GGML_CUDA_NO_PINNED", "GGML_CUDA_PDL", "GGML_CUDA_REGISTER_HOST",
                 "GGML_OP_OFFLOAD_MIN_BATCH")


@dataclass(frozen=True)
class GpuDevice:
    """One GPU as the fingerprint names it."""

    name: str  # "NVIDIA H200"
    compute_capability: str  # "9.0"
    driver: str  # the kernel driver's version, "580.159.04"
    cuda_runtime: str  # the libcudart llama.cpp runs on, "13.0"
    cublas: str  # the libcublas it runs on, "13.1.0"
    cuda_build: str  # the CUDA part of llama.cpp's system info: "ARCHS = 900 | USE_GRAPHS = 1 | ..."


class Devices(Protocol):
    """What the fingerprint and the numerics profile ask about the accelerator."""

    def gpus(self) -> tuple[GpuDevice, ...]:
        """The GPUs llama.cpp computes on when layers are offloaded (empty: a CPU-only build or machine)."""
        ...

    def cuda_options(self, *, flash_attn: bool) -> dict[str, str]:
        """The CUDA options that select kernels for a context with this flash-attention setting ({} on a CPU)."""
        ...


class CpuOnly:
    """No accelerator: every engine computes on the CPU backend."""

    def gpus(self) -> tuple[GpuDevice, ...]:
        return ()

    def cuda_options(self, *, flash_attn: bool) -> dict[str, str]:
        return {}


def cuda_features(system_info: str) -> dict[str, str]:
    """The `CUDA : A = x | B = y` features of llama_print_system_info (ggml-cuda's build flags), as a dict."""
    m = re.search(r"CUDA\s*:\s*(.*?)(?:\|\s*[A-Z][A-Za-z0-9_]*\s*:|$)", system_info)
    if not m:
        return {}
    out: dict[str, str] = {}
    for item in m.group(1).split("|"):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def kernel_options(features: Mapping[str, str], env: Mapping[str, str], *, flash_attn: bool) -> dict[str, str]:
    """The CUDA options that change kernels, from the build's features and the process environment: flash
    attention, CUDA graphs (built with USE_GRAPHS, not disabled by GGML_CUDA_DISABLE_GRAPHS), the quantized matmul
    path (MMQ forced, cuBLAS forced, or chosen per shape) and every GGML_CUDA_* switch set."""
    graphs = features.get("USE_GRAPHS") == "1" and not env.get("GGML_CUDA_DISABLE_GRAPHS")
    if features.get("FORCE_MMQ") == "1":
        matmul = "mmq"
    elif features.get("FORCE_CUBLAS") == "1":
        matmul = "cublas"
    else:
        matmul = "auto"
    out = {"flash_attn": "on" if flash_attn else "off", "cuda_graphs": "on" if graphs else "off", "matmul": matmul}
    for key in sorted(env):
        if key.startswith(KERNEL_ENV_PREFIX) or key in KERNEL_ENV:
            out[f"env.{key}"] = env[key]
    return out


def ggml_switches() -> dict[str, str]:
    """GGML_SWITCHES as ggml sees them (the C library's getenv), those that are set."""
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    libc.getenv.argtypes = [ctypes.c_char_p]
    out = {}
    for name in GGML_SWITCHES:
        value = libc.getenv(name.encode())
        if value is not None:
            out[name] = value.decode(errors="replace")
    return out


def _loaded_library(stem: str) -> str | None:
    """The path of a shared library this process has mapped whose file name starts with `stem` (e.g.
    "libcublas.so"), so that its version is the one llama.cpp runs on."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        path = line.split(None, 5)[-1] if line.count(" ") >= 5 else ""
        if os.path.basename(path).startswith(stem):
            return path
    return None


def _version(major: int, minor: int, patch: int | None = None) -> str:
    return f"{major}.{minor}" + ("" if patch is None else f".{patch}")


def _cuda_runtime_version() -> str:
    path = _loaded_library("libcudart.so")
    v = ctypes.c_int(0)
    with contextlib.suppress(OSError, AttributeError):
        if path is not None and ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(v)) == 0:
            return _version(v.value // 1000, v.value % 1000 // 10)
    return "unknown"


def _cublas_version() -> str:
    path = _loaded_library("libcublas.so")
    parts = []
    with contextlib.suppress(OSError, AttributeError):
        lib = ctypes.CDLL(path) if path is not None else None
        for prop in (0, 1, 2):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL (libraryPropertyType)
            v = ctypes.c_int(0)
            if lib is None or lib.cublasGetProperty(prop, ctypes.byref(v)) != 0:
                return "unknown"
            parts.append(v.value)
        return _version(*parts)
    return "unknown"


def _driver_version() -> str:
    """The kernel driver's version: NVML's, else /proc/driver/nvidia/version, else the CUDA driver API's."""
    with contextlib.suppress(OSError, AttributeError):
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() == 0:
            buf = ctypes.create_string_buffer(96)
            try:
                if nvml.nvmlSystemGetDriverVersion(buf, len(buf)) == 0:
                    return buf.value.decode()
            finally:
                nvml.nvmlShutdown()
    with contextlib.suppress(OSError):
        m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([0-9][0-9.]+)", Path("/proc/driver/nvidia/version").read_text())
        if m:
            return m.group(1)
    with contextlib.suppress(OSError, AttributeError):
        v = ctypes.c_int(0)
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v)) == 0:
            return f"cuda {_version(v.value // 1000, v.value % 1000 // 10)}"
    return "unknown"


def _compute_capability(ordinal: int) -> str:
    with contextlib.suppress(OSError, AttributeError):
        cuda = ctypes.CDLL("libcuda.so.1")
        dev = ctypes.c_int(0)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        if (cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(dev), ordinal) == 0
                and cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) == 0  # ..._COMPUTE_CAPABILITY_MAJOR
                and cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) == 0):  # ..._MINOR
            return _version(major.value, minor.value)
    return "unknown"


class LlamaCudaDevices:
    """The GPUs of this process's llama.cpp build (ggml's device registry), with their driver, runtime and cuBLAS
    versions; read once and kept."""

    def __init__(self, lib_dir: Path, system_info: str, env: Mapping[str, str] | None = None) -> None:
        self._lib_dir = lib_dir
        self._features = cuda_features(system_info)
        self._env = dict(ggml_switches() if env is None else env)
        self._gpus: tuple[GpuDevice, ...] | None = None

    def _registry(self) -> list[tuple[str, str]]:
        """(name, description) of each GPU device ggml registered ("CUDA0", "NVIDIA H200")."""
        ggml = ctypes.CDLL(str(self._lib_dir / "libggml.so"))
        ggml.ggml_backend_dev_count.restype = ctypes.c_size_t
        ggml.ggml_backend_dev_get.restype = ctypes.c_void_p
        ggml.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
        for fn in ("ggml_backend_dev_name", "ggml_backend_dev_description"):
            getattr(ggml, fn).restype = ctypes.c_char_p
            getattr(ggml, fn).argtypes = [ctypes.c_void_p]
        ggml.ggml_backend_dev_type.restype = ctypes.c_int
        ggml.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
        out = []
        for i in range(ggml.ggml_backend_dev_count()):
            dev = ggml.ggml_backend_dev_get(i)
            if ggml.ggml_backend_dev_type(dev) == 1:  # GGML_BACKEND_DEVICE_TYPE_GPU
                out.append(((ggml.ggml_backend_dev_name(dev) or b"").decode(),
                            (ggml.ggml_backend_dev_description(dev) or b"").decode()))
        return out

    def gpus(self) -> tuple[GpuDevice, ...]:
        if self._gpus is None:
            build = " | ".join(f"{k} = {v}" for k, v in self._features.items())
            found = []
            for name, description in self._registry():
                m = re.fullmatch(r"CUDA(\d+)", name)
                ordinal = int(m.group(1)) if m else 0
                found.append(GpuDevice(name=description or name, compute_capability=_compute_capability(ordinal),
                                       driver=_driver_version(), cuda_runtime=_cuda_runtime_version(),
                                       cublas=_cublas_version(), cuda_build=build))
            self._gpus = tuple(found)
        return self._gpus

    def cuda_options(self, *, flash_attn: bool) -> dict[str, str]:
        if not self.gpus():
            return {}
        return kernel_options(self._features, self._env, flash_attn=flash_attn)


def detect_devices(llama_cpp_module: object) -> Devices:
    """The devices of this llama.cpp build: LlamaCudaDevices for a CUDA build, else CpuOnly."""
    info = llama_cpp_module.llama_print_system_info().decode()  # type: ignore[attr-defined]
    if not llama_cpp_module.llama_supports_gpu_offload() or "CUDA" not in info:  # type: ignore[attr-defined]
        return CpuOnly()
    lib_dir = Path(llama_cpp_module.__file__).parent / "lib"  # type: ignore[attr-defined]
    return LlamaCudaDevices(lib_dir, info)
