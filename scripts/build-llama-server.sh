#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` from the llama.cpp source vendored in the llama-cpp-python sdist the project
# installs (the same version, build flags and CPU as scripts/install-llama.sh), once, into the cache directory.
# `kvgraft bench serve-load` runs it as the peer; it prints the binary's path on its last line.
#
#   scripts/build-llama-server.sh VENV
#
# Settings: KVGRAFT_LLAMA_AMX, KVGRAFT_LLAMA_CFLAGS, KVGRAFT_LLAMA_CMAKE_ARGS as for install-llama.sh;
# KVGRAFT_LLAMA_SERVER_DIR (default: ${KVGRAFT_CACHE_DIR:-~/.cache/kvgraft}/llama-server).
set -euo pipefail

venv=${1:?usage: scripts/build-llama-server.sh VENV}
py="$venv/bin/python"
# shellcheck source=scripts/llama-build-flags.sh
. "$(dirname "$0")/llama-build-flags.sh"
inputs=$(printf 'llama-cpp-python=%s\ncflags=%s\ncmake_args=%s\ncpu_flags=%s\ncompiler=%s\n' \
  "$version" "$cflags" "$cmake_args" "$cpu_flags" "$compiler")
key=$(printf '%s' "$inputs" | sha256sum | cut -c1-16)
root=${KVGRAFT_LLAMA_SERVER_DIR:-${KVGRAFT_CACHE_DIR:-$HOME/.cache/kvgraft}/llama-server}
dir="$root/$version-$key"

if [ -x "$dir/llama-server" ]; then
  echo "llama-server from llama-cpp-python $version's llama.cpp already built ($key)"
  echo "$dir/llama-server"
  exit 0
fi

echo "building llama-server from llama-cpp-python $version's vendored llama.cpp (build $key): several minutes"
mkdir -p "$root"
tmp=$(mktemp -d "$root/.build-$key-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$py" -m pip download --no-deps --no-binary :all: --no-cache-dir "llama-cpp-python==$version" -d "$tmp/sdist"
tar -xzf "$tmp"/sdist/llama_cpp_python-"$version".tar.gz -C "$tmp"
src="$tmp/llama_cpp_python-$version/vendor/llama.cpp"
# shellcheck disable=SC2086 # cmake_args is a list of arguments
env -u CMAKE_ARGS CFLAGS="$cflags" CXXFLAGS="$cflags" \
  cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF $cmake_args >"$tmp/cmake.log"
cmake --build "$tmp/build" --target llama-server -j "$(nproc)" >"$tmp/build.log"
mkdir -p "$dir.new"
cp "$tmp/build/bin/llama-server" "$dir.new/"
printf '%s' "$inputs" >"$dir.new/build-inputs.txt"
rm -rf "$dir"
mv "$dir.new" "$dir"
echo "$dir/llama-server"
