# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
# `make run EXTRAS=telegram` (comma-separated: telegram,slack,discord,providers) also installs those
# optional libraries; the command itself is then .venv/bin/mnemogate (`make check-config` runs one).
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8080
EXTRAS ?=
KNOWN_EXTRAS := telegram slack discord providers

comma := ,
empty :=
space := $(empty) $(empty)
extras := $(sort $(subst $(comma),$(space),$(EXTRAS)))
unknown_extras := $(filter-out $(KNOWN_EXTRAS),$(extras))
ifneq ($(unknown_extras),)
$(error unknown EXTRAS: $(unknown_extras) (known: $(KNOWN_EXTRAS), comma-separated))
endif
# One stamp per set of extras, so `make run EXTRAS=telegram` after a plain `make run` still installs it.
RUN_STAMP := $(VENV)/.installed-run$(if $(extras),-$(subst $(space),-,$(extras)))
RUN_SPEC := $(if $(extras),'.[$(subst $(space),$(comma),$(extras))]',.)

.PHONY: install run check-config test test-slow lint typecheck contracts clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 ($(PYTHON)) not found"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e $(RUN_SPEC)
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,telegram,slack,discord,providers]'
	@touch $@ $(VENV)/.installed-run

install: $(RUN_STAMP)

run: install
	$(BIN)/mnemogate serve --host $(HOST) --port $(PORT)

check-config: install
	$(BIN)/mnemogate check-config

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
