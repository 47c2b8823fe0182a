# cdlearn — all set-up goes through these targets (Python 3.11).
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-all bench bench-quick lint clean fuzz-cli

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or make PYTHON=python3)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/cdlearn demo

test: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m pytest -q -m "not slow"

test-all: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m pytest -q

bench: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.run

bench-quick: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.run --quick

# CLI fuzz: malformed LIBSVM and model files through `cdlearn` subprocesses (CI runs 30)
fuzz-cli: $(STAMP)
	CDLEARN_FUZZ_CLI=$${CDLEARN_FUZZ_CLI:-600} $(PY) -m pytest -q tests/test_cli_fuzz.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
