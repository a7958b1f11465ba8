"""The GPU in the fingerprint and the numerics profile, tested on a CPU with a fake device (engine/devices.py): a
GPU engine's fingerprint names the device, compute capability, driver, CUDA runtime, cuBLAS and the build's CUDA
flags, its profile the CUDA options that change kernels; a block captured under one GPU is refused on the CPU and
on another GPU (and the reverse), and an attestation of one is not found for the other; CPU fingerprints and
profiles keep the ids they had before GPUs were named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.devices import CpuOnly, GpuDevice, cuda_features, kernel_options
from engine.errors import FingerprintMismatchError
from engine.fingerprint import NumericsProfile, _digest_id
from engine.graft import GraftEngine
from engine.texts import sample_tokens

pytestmark = pytest.mark.unit

H200_INFO = ("CUDA : ARCHS = 900 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 | SSSE3 = 1 | "
             "AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 | REPACK = 1 | ")
H200 = GpuDevice(name="NVIDIA H200", compute_capability="9.0", driver="580.159.04", cuda_runtime="13.0",
                 cublas="13.1.0", cuda_build="ARCHS = 900 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128")

# the parts a CPU fingerprint had before GPUs were named: its id must not change (stored blocks name it)
CPU_PARTS = {"gguf_sha256", "gguf_bytes", "architecture", "llama_cpp_python", "ggml_version", "ggml_commit",
             "system_info", "backend", "gpu_layers", "type_k", "type_v", "flash_attn", "n_seq_max", "kv_unified"}


class FakeGpus:
    """The Devices interface with fixed GPUs and the kernel options derived as the CUDA implementation does."""

    def __init__(self, *gpus: GpuDevice, env: dict[str, str] | None = None) -> None:
        self._gpus = gpus
        self._env = env or {}

    def gpus(self) -> tuple[GpuDevice, ...]:
        return self._gpus

    def cuda_options(self, *, flash_attn: bool) -> dict[str, str]:
        return kernel_options(cuda_features(H200_INFO), self._env, flash_attn=flash_attn) if self._gpus else {}


def on(engine: GraftEngine, devices: object, **config: object) -> GraftEngine:
    """The same loaded model under another configuration and devices (the model stays the tiny engine's)."""
    cfg = replace(engine.config, **({"gpu_layers": -1} | config))
    return GraftEngine(engine.model, cfg, name=engine.name, cache_dir=engine._cache_dir, devices=devices)  # type: ignore[arg-type]


def test_a_gpu_engine_names_its_device_in_the_fingerprint(tiny_engine: GraftEngine) -> None:
    gpu = on(tiny_engine, FakeGpus(H200))
    parts = gpu.fingerprint.parts()
    assert parts["backend"] == "gpu" and parts["gpu_layers"] == -1
    assert {k: parts[k] for k in ("gpu_name", "gpu_count", "gpu_compute_capability", "gpu_driver", "cuda_runtime",
                                  "cublas", "cuda_build")} == {
        "gpu_name": "NVIDIA H200", "gpu_count": 1, "gpu_compute_capability": "9.0", "gpu_driver": "580.159.04",
        "cuda_runtime": "13.0", "cublas": "13.1.0", "cuda_build": H200.cuda_build}
    assert gpu.fingerprint.id != tiny_engine.fingerprint.id
    # every GPU field changes the id: another driver, another cuBLAS, another card, other build flags
    for field, value in (("driver", "580.65.06"), ("cublas", "13.0.2"), ("name", "NVIDIA H100 80GB HBM3"),
                         ("compute_capability", "10.0"), ("cuda_runtime", "12.8"),
                         ("cuda_build", "ARCHS = 900 | FORCE_MMQ = 1")):
        other = on(tiny_engine, FakeGpus(replace(H200, **{field: value})))
        assert other.fingerprint.id != gpu.fingerprint.id, field


def test_cpu_fingerprint_and_profile_keep_their_ids(tiny_engine: GraftEngine) -> None:
    fp = tiny_engine.fingerprint
    assert tiny_engine.config.gpu_layers is None
    assert set(fp.parts()) == CPU_PARTS and fp.parts()["backend"] == "cpu" and fp.parts()["gpu_layers"] == 0
    assert fp.id == _digest_id({k: getattr(fp, k) for k in CPU_PARTS})
    profile = tiny_engine.profile(8)
    assert "cuda" not in profile.as_dict()
    assert profile.id == _digest_id({k: v for k, v in profile.as_dict().items()})
    # a GPU build whose engine is told no layers (KVGRAFT_GPU_LAYERS unset) is a CPU engine: no GPU fields
    cpu_on_gpu_build = on(tiny_engine, FakeGpus(H200), gpu_layers=None)
    assert cpu_on_gpu_build.fingerprint.id == fp.id and cpu_on_gpu_build.profile(8).id == profile.id
    # and a machine without a GPU stays a CPU engine whatever the layer count
    assert on(tiny_engine, CpuOnly()).fingerprint.parts()["backend"] == "cpu"


def test_the_profile_names_the_cuda_options_that_change_kernels(tiny_engine: GraftEngine) -> None:
    gpu = on(tiny_engine, FakeGpus(H200))
    cuda = gpu.profile(8).as_dict()["cuda"]
    assert cuda == {"flash_attn": "on", "cuda_graphs": "on", "matmul": "auto"}
    assert gpu.profile(8).id != tiny_engine.profile(8).id
    fa_off = on(tiny_engine, FakeGpus(H200), flash_attn=False).profile(8)
    assert fa_off.as_dict()["cuda"]["flash_attn"] == "off" and fa_off.id != gpu.profile(8).id
    no_graphs = on(tiny_engine, FakeGpus(H200, env={"GGML_CUDA_DISABLE_GRAPHS": "1"})).profile(8)
    assert no_graphs.as_dict()["cuda"]["cuda_graphs"] == "off"
    assert no_graphs.as_dict()["cuda"]["env.GGML_CUDA_DISABLE_GRAPHS"] == "1" and no_graphs.id != gpu.profile(8).id
    # a block's JSON holds the options as a dict: read back, the profile has the same id
    assert NumericsProfile.from_dict(gpu.profile(8).as_dict()).id == gpu.profile(8).id


def test_kernel_options_follow_the_build_and_the_environment() -> None:
    assert cuda_features(H200_INFO) == {"ARCHS": "900", "USE_GRAPHS": "1", "PEER_MAX_BATCH_SIZE": "128"}
    assert cuda_features("CPU : SSE3 = 1 | AVX2 = 1 | ") == {}
    forced = kernel_options({"ARCHS": "900", "FORCE_MMQ": "1"}, {"GGML_CUDA_PDL": "0", "HOME": "/root",
                                                                 "GGML_OP_OFFLOAD_MIN_BATCH": "64"}, flash_attn=False)
    assert forced == {"flash_attn": "off", "cuda_graphs": "off", "matmul": "mmq", "env.GGML_CUDA_PDL": "0",
                      "env.GGML_OP_OFFLOAD_MIN_BATCH": "64"}
    assert kernel_options({"FORCE_CUBLAS": "1"}, {}, flash_attn=True)["matmul"] == "cublas"


def test_a_gpu_block_is_refused_on_the_cpu_and_on_another_gpu(tiny_engine: GraftEngine) -> None:
    gpu = on(tiny_engine, FakeGpus(H200))
    other_gpu = on(tiny_engine, FakeGpus(replace(H200, name="NVIDIA H100 80GB HBM3", driver="570.86.15")))
    tokens = sample_tokens(tiny_engine, 40)
    captured = gpu.capture(tokens, n_query=4)
    assert captured.fingerprint_parts["gpu_name"] == "NVIDIA H200"
    for engine, where in ((tiny_engine, "backend"), (other_gpu, "gpu_name")):
        with engine.open_context() as ctx, pytest.raises(FingerprintMismatchError, match=where):
            engine.restore(ctx, captured)
    # and a CPU block is refused on the GPU
    with gpu.open_context() as ctx, pytest.raises(FingerprintMismatchError, match="gpu_name"):
        gpu.restore(ctx, tiny_engine.capture(tokens, n_query=4))


def test_an_attestation_on_one_device_is_not_found_for_another(tiny_engine: GraftEngine, tmp_path: Path) -> None:
    from store import migrate
    from store.db import make_engine, session_factory
    from store.repository import latest_attestation, record_attestation

    url = f"sqlite:///{tmp_path / 'a.db'}"
    migrate.upgrade(url)
    db = make_engine(url)
    sessions = session_factory(db)
    gpu = on(tiny_engine, FakeGpus(H200))
    profile = gpu.profile(8)
    with sessions.begin() as s:
        record_attestation(s, fingerprint=gpu.fingerprint.id, profile=profile.as_dict(), profile_id=profile.id,
                           host="h200", status="attested", floor_equal=True, byte_exact=True, kl_mean=0.0,
                           kl_max=0.0, argmax_agree="8/8", max_abs_diff=0.0, probe_digest="d")
    with sessions() as s:
        assert latest_attestation(s, block_id=None, fingerprint=gpu.fingerprint.id, profile_id=profile.id)
        for engine in (tiny_engine, on(tiny_engine, FakeGpus(replace(H200, cublas="13.0.0")))):
            assert latest_attestation(s, block_id=None, fingerprint=engine.fingerprint.id,
                                      profile_id=engine.profile(8).id) is None
    db.dispose()


def test_gpu_layers_setting_reaches_the_engine_config(monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.settings import engine_config, load_settings

    monkeypatch.delenv("KVGRAFT_GPU_LAYERS", raising=False)
    assert load_settings().gpu_layers is None and engine_config(load_settings()).gpu_layers is None
    monkeypatch.setenv("KVGRAFT_GPU_LAYERS", "all")
    assert engine_config(load_settings()).gpu_layers == -1
    assert engine_config(load_settings(), serving=True).gpu_layers == -1
    monkeypatch.setenv("KVGRAFT_GPU_LAYERS", "12")
    assert engine_config(load_settings()).gpu_layers == 12
    monkeypatch.setenv("KVGRAFT_GPU_LAYERS", "-5")
    with pytest.raises(ValueError, match="KVGRAFT_GPU_LAYERS"):
        load_settings()


def test_ggml_switches_are_read_as_ggml_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.devices import ggml_switches

    monkeypatch.delenv("GGML_CUDA_DISABLE_GRAPHS", raising=False)
    assert "GGML_CUDA_DISABLE_GRAPHS" not in ggml_switches()
    monkeypatch.setenv("GGML_CUDA_DISABLE_GRAPHS", "1")  # os.environ writes through to the C environment
    assert ggml_switches()["GGML_CUDA_DISABLE_GRAPHS"] == "1"
