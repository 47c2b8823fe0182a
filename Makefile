# cdlearn — all set-up goes through these targets (Python 3.11).
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-all test-sklearn fuzz fuzz-cli bench bench-quick bench-memory bench-parity bench-distributed lint clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or make PYTHON=python3)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,bench,distributed]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/cdlearn demo

# two pytest workers (pytest-xdist): CI's machine has 2 cores, the suite is CPU-bound
test: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m pytest -q -m "not slow" -n 2

test-all: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m pytest -q

# scikit-learn's own linear_model / svm tests with cdlearn's estimators (several minutes);
# writes tests_sklearn/results/report.{md,json}
test-sklearn: $(STAMP)
	$(PY) -m tests_sklearn

# property-based fuzz of solve and the estimators: 2 tests x CDLEARN_FUZZ_EXAMPLES cases
fuzz: $(STAMP)
	CDLEARN_FUZZ_EXAMPLES=$${CDLEARN_FUZZ_EXAMPLES:-2500} $(PY) -m pytest -q tests/test_fuzz.py \
		--hypothesis-show-statistics

bench: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.run

bench-quick: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.run --quick

bench-memory: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
		MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 $(PY) -m benchmarks.memory

bench-parity: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.parity --out benchmarks/results/parity.md

# cdlearn.distributed on a 2-worker LocalCluster: rounds, bytes, time vs shards
bench-distributed: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
		MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 $(PY) -m benchmarks.distributed --out benchmarks/results/distributed.md

# CLI fuzz: malformed LIBSVM and model files through `cdlearn` subprocesses (CI runs 30)
fuzz-cli: $(STAMP)
	CDLEARN_FUZZ_CLI=$${CDLEARN_FUZZ_CLI:-600} $(PY) -m pytest -q tests/test_cli_fuzz.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tests_sklearn

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
