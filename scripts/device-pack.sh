#!/usr/bin/env bash
# Prepare, on a machine with network and the project's venv, everything scripts/device-check.sh needs on an
# offline NVIDIA machine, in one folder that travels there (at most 64 MiB with the project: this makes ~16 MiB):
#
#   scripts/device-pack.sh DIR [VENV]        (VENV: the project's venv, default .venv)
#
# DIR gets the project's files (tracked and untracked-not-ignored, without tests/ and docs/) and DIR/devpack/:
#   wheels/       the project's Python dependencies that the device image lacks, for CPython 3.12 manylinux x86-64
#                 (`pip download --only-binary :all: --python-version 3.12 --platform manylinux...`, no deps: the
#                 list below is what `kvgraft selfcheck|gate|regimes|fingerprint|bench restore|bench batch-probe`
#                 import beyond the image's packages)
#   llama_cpp_python-0.3.36.tar.gz   the sdist trimmed to what a CUDA build of the library needs (no model
#                 vocabularies, docs, tests, tools, examples, other backends, git objects): ~5 MiB of 77
#   smollm2-layout.json.gz   the default model's metadata (hyperparameters, its BPE tokenizer) and tensor list
#                 (bench/device_model.py export): device-check.sh builds a GGUF of that exact layout with random
#                 weights there, since the 98 MB model does not fit
# Then, on the device machine: `cd DIR && bash scripts/device-check.sh` (OUT set).
# Settings: KVGRAFT_LLAMA_SDIST (the full sdist; default: pip download, or pip's unpack folder).
set -euo pipefail

dir=${1:?usage: scripts/device-pack.sh DIR [VENV]}
venv=${2:-.venv}
py="$venv/bin/python"
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir/devpack/wheels"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "project files -> $dir"
(cd "$here" && git ls-files -co --exclude-standard | grep -v -E '^(tests|docs)/' | tar -cf - -T -) | tar -xf - -C "$dir"

# What the commands import that the device image (python 3.12, torch, numpy, typer, rich, jinja2, pyyaml, attrs,
# matplotlib, prometheus-client, scikit-build-core, cmake, ninja: /work/.library/device/KINDS.md) lacks or holds at
# another version; the versions are this venv's.
wheels="pydantic pydantic_core annotated-types typing-inspection pydantic-settings python-dotenv structlog sqlalchemy
alembic mako cryptography cffi pycparser diskcache gguf typer click rich typing_extensions annotated-doc shellingham"
specs=()
for name in $wheels; do
  v=$("$py" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name")
  specs+=("$name==$v")
done
echo "wheels: ${specs[*]}"
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux_2_34_x86_64 --platform manylinux_2_24_x86_64 \
  -d "$dir/devpack/wheels" "${specs[@]}"

sdist=${KVGRAFT_LLAMA_SDIST:-}
if [ -z "$sdist" ]; then
  "$py" -m pip download -q --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d "$tmp/sdist"
  sdist=$(ls "$tmp"/sdist/llama_cpp_python-0.3.36.tar.gz)
fi
echo "trimming $sdist"
tar -xzf "$sdist" -C "$tmp"
src="$tmp/llama_cpp_python-0.3.36"
v="$src/vendor/llama.cpp"
# git objects go (llama.cpp's build info needs only HEAD, refs and the index: `git rev-parse --short HEAD`)
rm -rf "$src"/.git/objects "$src"/.git/modules/vendor/llama.cpp/objects/pack "$src/.github" "$src/docs" "$src/tests" \
  "$src/examples"
mkdir -p "$src/.git/objects" "$src/.git/modules/vendor/llama.cpp/objects/pack"
rm -rf "$v"/{models,docs,tests,examples,tools,benches,media,gguf-py,conversion,pocs,app,.github,.devops,ci,skills}
rm -rf "$v"/{grammars,requirements}
for b in "$v"/ggml/src/ggml-*/; do
  case $(basename "$b") in ggml-cpu|ggml-cuda) ;; *) rm -rf "$b" ;; esac
done
tar -czf "$dir/devpack/llama_cpp_python-0.3.36.tar.gz" -C "$tmp" llama_cpp_python-0.3.36

echo "model layout"
model=$(PYTHONPATH="$here" "$py" -c 'from engine.models import resolve_model; print(resolve_model("smollm2-135m").path)')
PYTHONPATH="$here" "$py" -m bench.device_model export "$model" "$dir/devpack/smollm2-layout.json.gz"
du -sh "$dir" "$dir"/devpack/*
