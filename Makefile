# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8080

.PHONY: run test test-slow lint typecheck contracts clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 ($(PYTHON)) not found"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,telegram,slack,discord,providers]'
	@touch $@ $(VENV)/.installed-run

run: $(VENV)/.installed-run
	$(BIN)/mnemogate serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

contracts: $(VENV)/.installed-test
	$(BIN)/lint-imports

test: lint typecheck contracts
	$(BIN)/python -m pytest -m "not slow" -q

test-slow: $(VENV)/.installed-test
	$(BIN)/python -m pytest -m slow -q

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
