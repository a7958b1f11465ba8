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
