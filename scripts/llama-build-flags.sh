# Sourced by scripts/install-llama.sh and scripts/build-llama-server.sh: the llama.cpp build's flags and what
# identifies the machine it builds for (the inputs of their cache keys).
#
# Sets: version, cflags, cmake_args, cpu_flags, compiler.
version=0.3.36
amx_off="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if [ "${KVGRAFT_LLAMA_AMX:-0}" = 1 ]; then amx_off=""; fi
cflags="$(echo "$amx_off ${KVGRAFT_LLAMA_CFLAGS:-}" | xargs)"
cmake_args="$(echo "${KVGRAFT_LLAMA_CMAKE_ARGS:-}" | xargs)"
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | tr -s ' ' | cut -d: -f2- || uname -m)
compiler=$( (c++ --version 2>/dev/null || echo none) | head -n 1)

# CUDA (KVGRAFT_LLAMA_CUDA=1, read by scripts/install-llama.sh): ggml's CUDA backend for the architectures in
# KVGRAFT_LLAMA_CUDA_ARCHITECTURES (default 90: Hopper, the H100 and H200), with cuBLAS found where it is: the
# toolkit's own, else a pip-installed nvidia package's (nvidia/cu13/lib or nvidia/cublas/lib: PyTorch's copy).
# The toolkit's and cuBLAS's folders go into the libraries' RUNPATH, so the wheel loads without LD_LIBRARY_PATH.
# Every library is linked -Bsymbolic and compiled -fvisibility-inlines-hidden (fewer exported std:: template
# instances: libllama 955 instead of 1371). Measured on an H200 (docs/ENGINE.md, 'On a GPU'): neither prevents the
# SIGSEGV in std::regex when numpy is imported before llama_cpp (libllama still binds 56 libstdc++ template
# symbols it does not define to libggml-cuda's copies); the load order does, and engine/_load_order.py keeps it.
# The flags stay because this is the build the GPU gate was measured on.
#
# Sets: cuda_cmake_args, cuda_cflags (include paths), cuda_cxxflags, cuda_cudaflags, cuda_inputs (empty / "none"
# without CUDA).
cuda_cmake_args=""
cuda_cflags=""
cuda_cxxflags=""
cuda_cudaflags=""
cuda_inputs="none"
if [ "${KVGRAFT_LLAMA_CUDA:-0}" = 1 ]; then
  cuda_arch=${KVGRAFT_LLAMA_CUDA_ARCHITECTURES:-90}
  # the toolkit: CUDA_HOME, CUDA_PATH, where nvcc on PATH lives (it may be a wrapper script), /usr/local/cuda
  cuda_root=""
  nvcc_path=$(command -v nvcc || true)
  for r in "${CUDA_HOME:-}" "${CUDA_PATH:-}" "${nvcc_path:+$(dirname "$(dirname "$(readlink -f "$nvcc_path")")")}" \
           /usr/local/cuda; do
    if [ -n "$r" ] && [ -x "$r/bin/nvcc" ] && ls "$r"/include/cuda_runtime.h "$r"/targets/*/include/cuda_runtime.h \
         >/dev/null 2>&1; then cuda_root=$r; break; fi
  done
  if [ -z "$cuda_root" ]; then
    echo "error: KVGRAFT_LLAMA_CUDA=1 but no CUDA toolkit (nvcc and cuda_runtime.h) in CUDA_HOME, CUDA_PATH, beside" \
      "nvcc on PATH or in /usr/local/cuda" >&2
    return 1 2>/dev/null || exit 1
  fi
  nvcc_bin=$cuda_root/bin/nvcc
  cuda_lib=$(ls -d "$cuda_root"/lib64 "$cuda_root"/targets/*/lib 2>/dev/null | head -n 1)
  cuda_extra="-DCMAKE_CUDA_COMPILER=$nvcc_bin"
  cublas_dir=""
  for d in "$cuda_root"/lib64 "$cuda_root"/targets/*/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
    if [ -e "$d/libcublas.so" ]; then cublas_dir=$d; break; fi
  done
  if [ -z "$cublas_dir" ]; then
    # a pip-installed nvidia-cublas: nvidia/cu13/lib (CUDA 13 wheels) or nvidia/cublas/lib (CUDA 12 wheels), in the
    # Python that builds (KVGRAFT_LLAMA_PYTHON) or any python3 on PATH; it ships libcublas.so.N only, named to CMake
    for p in ${KVGRAFT_LLAMA_PYTHON:-} python3; do
      cublas_dir=$("$p" - 2>/dev/null <<'PY' || true
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
for root in roots:
    for hit in sorted(glob.glob(os.path.join(root, "*", "lib", "libcublas.so.*"))):
        print(os.path.dirname(hit))
        raise SystemExit
PY
)
      [ -n "$cublas_dir" ] && break
    done
    if [ -z "$cublas_dir" ]; then
      echo "error: KVGRAFT_LLAMA_CUDA=1 but no cuBLAS: not in the toolkit ($cuda_root) nor in a pip nvidia package" >&2
      return 1 2>/dev/null || exit 1
    fi
    cublas_so=$(ls "$cublas_dir"/libcublas.so.* | sort | head -n 1)
    cublaslt_so=$(ls "$cublas_dir"/libcublasLt.so.* | sort | head -n 1)
    cuda_extra="$cuda_extra -DCUDA_cublas_LIBRARY=$cublas_so -DCUDA_cublasLt_LIBRARY=$cublaslt_so"
    cuda_cflags="-I$(dirname "$cublas_dir")/include"
  fi
  # the driver library ggml-cuda links (CUDA::cuda_driver, its VMM pool): the toolkit's stub, else the driver's own
  if ! ls "$cuda_root"/lib64/stubs/libcuda.so "$cuda_root"/targets/*/lib/stubs/libcuda.so >/dev/null 2>&1; then
    drv=$(ls /usr/lib/x86_64-linux-gnu/libcuda.so /usr/lib64/libcuda.so /usr/local/nvidia/lib64/libcuda.so \
          /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 \
          2>/dev/null | head -n 1 || true)
    [ -z "$drv" ] && drv=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
    if [ -n "$drv" ]; then cuda_extra="$cuda_extra -DCUDA_cuda_driver_LIBRARY=$drv"
    else cuda_extra="$cuda_extra -DGGML_CUDA_NO_VMM=ON"; fi
  fi
  cuda_rpath=$(printf '%s' "$cuda_lib${cublas_dir:+:$cublas_dir}" | tr -s ':')
  cuda_cmake_args="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$cuda_arch -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF"
  cuda_cmake_args="$cuda_cmake_args -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
  cuda_cmake_args="$cuda_cmake_args -DCMAKE_SHARED_LINKER_FLAGS=-Wl,-Bsymbolic,-rpath,$cuda_rpath $cuda_extra"
  # inline template instances not exported (see above: this alone does not prevent the crash)
  cuda_cxxflags=$(echo "-fvisibility-inlines-hidden $cuda_cflags" | xargs)
  cuda_cudaflags=$(echo "-Xcompiler=-fvisibility-inlines-hidden $cuda_cflags" | xargs)
  cuda_inputs="arch=$cuda_arch nvcc=$("$nvcc_bin" --version | tail -n 1) cublas=${cublas_dir:-toolkit}"
fi
