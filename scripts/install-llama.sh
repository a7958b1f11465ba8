#!/usr/bin/env bash
# Build llama-cpp-python once per (version, build flags, CPU, compiler, Python) and install exactly that wheel.
#
#   scripts/install-llama.sh VENV
#
# Why: the sdist compiles llama.cpp with -march=native. On a VM whose CPU reports AMX but traps on it, ggml's AMX
# kernels die with SIGILL at the first quantized matmul, so AMX is compiled out unless asked for. pip's own wheel cache
# is keyed by the sdist alone (not by CFLAGS/CMAKE_ARGS, not by the CPU), so a wheel built elsewhere or with other
# flags would be reused silently: this script never uses it (--no-cache-dir) and keeps its own wheel folder whose
# name is a hash of everything that changes the binary.
#
# Settings (environment):
#   KVGRAFT_LLAMA_AMX=1          keep ggml's AMX kernels (bare metal where AMX works); default: compiled out
#   KVGRAFT_LLAMA_CFLAGS="..."   extra C/C++ flags, appended to the AMX-off flags
#   KVGRAFT_LLAMA_CMAKE_ARGS="..."  passed to llama.cpp's CMake (e.g. "-DGGML_NATIVE=OFF -DGGML_AVX2=ON")
#   KVGRAFT_WHEEL_DIR            where keyed wheels live (default: ${KVGRAFT_CACHE_DIR:-~/.cache/kvgraft}/wheels)
#   KVGRAFT_LLAMA_CUDA=1         build ggml's CUDA backend too (scripts/llama-build-flags.sh: cuBLAS from the toolkit
#                                or a pip nvidia package, RUNPATH to both); its wheel gets a key of its own. Such a
#                                build is loaded before numpy by the engine (engine/_load_order.py)
#   KVGRAFT_LLAMA_CUDA_ARCHITECTURES  CUDA architectures to compile for (default 90: the H100 and H200)
#   KVGRAFT_LLAMA_SDIST=PATH     build from this llama-cpp-python sdist, offline (no index, no build isolation: the
#                                venv must hold scikit-build-core, cmake and ninja); scripts/device-check.sh uses it
# Ambient CFLAGS, CXXFLAGS and CMAKE_ARGS are ignored on purpose: only the KVGRAFT_LLAMA_* values reach the build,
# so the key names every input.
set -euo pipefail

venv=${1:?usage: scripts/install-llama.sh VENV}
py="$venv/bin/python"
export KVGRAFT_LLAMA_PYTHON="$py"  # where llama-build-flags.sh looks for a pip-installed cuBLAS first
# shellcheck source=scripts/llama-build-flags.sh
. "$(dirname "$0")/llama-build-flags.sh"
python_tag=$("$py" -c 'import sys, sysconfig; print(sys.implementation.cache_tag, sysconfig.get_platform())')
inputs=$(printf 'llama-cpp-python=%s\ncflags=%s\ncmake_args=%s\ncpu_flags=%s\ncompiler=%s\npython=%s\n' \
  "$version" "$cflags" "$cmake_args" "$cpu_flags" "$compiler" "$python_tag")
if [ "$cuda_inputs" != none ]; then  # CPU builds keep the keys they had
  inputs=$(printf '%s\ncuda=%s\ncuda_cmake_args=%s\ncuda_cxxflags=%s\ncuda_cudaflags=%s\n' "$inputs" "$cuda_inputs" \
    "$cuda_cmake_args" "$cuda_cxxflags" "$cuda_cudaflags")
  cmake_args=$(echo "$cmake_args $cuda_cmake_args" | xargs)
fi
key=$(printf '%s' "$inputs" | sha256sum | cut -c1-16)

root=${KVGRAFT_WHEEL_DIR:-${KVGRAFT_CACHE_DIR:-$HOME/.cache/kvgraft}/wheels}
dir="$root/llama-cpp-python-$version-$key"
stamp="$venv/.llama-build-key"

# The installed library must be the one the flags asked for: with AMX off, its system info names no AMX.
check_installed() {
  local info
  info=$("$py" -c 'import llama_cpp; print(llama_cpp.llama_print_system_info().decode())' 2>&1) || {
    echo "error: the installed llama-cpp-python does not load: $info" >&2; return 1; }
  if [ "${KVGRAFT_LLAMA_AMX:-0}" != 1 ] && printf '%s' "$info" | grep -q 'AMX'; then
    echo "error: the installed llama.cpp has AMX kernels although KVGRAFT_LLAMA_AMX is not 1: $info" >&2
    return 1
  fi
  if [ "${KVGRAFT_LLAMA_CUDA:-0}" = 1 ]; then
    printf '%s' "$info" | grep -q 'CUDA' || {
      echo "error: KVGRAFT_LLAMA_CUDA=1 but the installed llama.cpp has no CUDA backend: $info" >&2; return 1; }
    local lib_dir
    lib_dir=$("$py" -c 'import llama_cpp, os; print(os.path.join(os.path.dirname(llama_cpp.__file__), "lib"))')
    # the flags took (DT_FLAGS SYMBOLIC); see llama-build-flags.sh for what they do and do not prevent
    for so in "$lib_dir"/libllama.so "$lib_dir"/libggml-cuda.so; do
      if command -v readelf >/dev/null && ! readelf -d "$so" | grep -q 'SYMBOLIC'; then
        echo "error: $so was not linked with -Bsymbolic" >&2; return 1
      fi
    done
  fi
  echo "llama.cpp instruction sets: $info"
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] \
   && "$py" -c "import importlib.metadata as m; assert m.version('llama-cpp-python') == '$version'" 2>/dev/null; then
  echo "llama-cpp-python $version already installed from build $key"
  check_installed
  exit 0
fi

if ! ls "$dir"/llama_cpp_python-"$version"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $version (build $key; CFLAGS='$cflags' CMAKE_ARGS='$cmake_args')"
  echo "this compiles llama.cpp: about 12 minutes on 2 cores, once per flags and CPU"
  mkdir -p "$root"
  tmp=$(mktemp -d "$root/.build-$key-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  source_args=(--no-binary llama-cpp-python "llama-cpp-python==$version")
  if [ -n "${KVGRAFT_LLAMA_SDIST:-}" ]; then
    source_args=(--no-index --no-build-isolation "$KVGRAFT_LLAMA_SDIST")
  fi
  env -u CMAKE_ARGS -u CFLAGS -u CXXFLAGS -u CUDAFLAGS \
    CFLAGS="$cflags" CXXFLAGS="$(echo "$cflags $cuda_cxxflags" | xargs)" CUDAFLAGS="$cuda_cudaflags" \
    CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$py" -m pip wheel --no-deps --no-cache-dir "${source_args[@]}" -w "$tmp"
  printf '%s' "$inputs" >"$tmp/build-inputs.txt"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  trap - EXIT
fi

wheel=$(ls "$dir"/llama_cpp_python-"$version"-*.whl | head -n 1)
# --force-reinstall replaces any other build; the wheel file is named, so pip never looks for llama-cpp-python itself
# in an index or in its cache; --no-deps: its dependencies (numpy, typing-extensions, diskcache, jinja2) are the
# lock's, which `make setup` installs first (requirements/main.lock), or, offline (KVGRAFT_LLAMA_SDIST), installed
# already.
if [ -n "${KVGRAFT_LLAMA_SDIST:-}" ]; then
  "$py" -m pip install --force-reinstall --no-deps --no-index "$wheel"
else
  "$py" -m pip install --force-reinstall --no-deps "$wheel"
fi
rm -f "$stamp"
check_installed
printf '%s' "$key" >"$stamp"
echo "installed $wheel"
