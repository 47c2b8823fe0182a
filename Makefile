# cdlearn — all set-up goes through these targets (Python 3.11).
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo docs test test-all test-sklearn fuzz fuzz-cli bench bench-quick bench-memory bench-parity bench-coldstart bench-benchopt bench-benchopt-logreg bench-distributed bench-threads lint clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or make PYTHON=python3)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,bench,docs,distributed]'
	$(VENV)/bin/cdlearn warmup  # compile the common paths' kernels into numba's cache
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/cdlearn demo

# two pytest workers (pytest-xdist): CI's machine has 2 cores, the suite is CPU-bound
test: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m pytest -q -m "not slow" -n 2

# the documentation site, offline, warnings as errors: docs/_build/html/index.html.
# Every gallery example runs (LIBSVM files from CDLEARN_DATA where present);
# `make test` builds the quick version (tests/test_docs.py). The gallery output is
# removed first: sphinx-gallery would skip an unchanged example that was not run before.
docs: $(STAMP)
	rm -rf docs/auto_examples docs/generated docs/sg_execution_times.rst
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m sphinx -W --keep-going -q \
		-b html docs docs/_build/html

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
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
		$(PY) -m benchmarks.overhead --out benchmarks/results/overhead.md

bench-quick: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.run --quick

bench-memory: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} OPENBLAS_NUM_THREADS=1 \
		MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 $(PY) -m benchmarks.memory

# per estimator and solver: import + first fit with an empty numba cache, compiled functions
bench-coldstart: $(STAMP)
	$(PY) -m benchmarks.coldstart

# τ-nice and partitioned CD on 1 and 2 threads (issue 24): time to gap 1e-6, ESO growth,
# a model at 8-64 cores; benchmarks/results/threads.md. QUICK=1: the smaller sizes.
# numba's pool pinned to 2 threads (the runs ask for 1 or 2); BLAS on one
bench-threads: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} NUMBA_NUM_THREADS=2 \
		OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		$(PY) -m benchmarks.threads $${QUICK:+--quick} --out benchmarks/results/threads.md

bench-parity: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.parity --out benchmarks/results/parity.md

bench-distributed: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
		MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 $(PY) -m benchmarks.distributed

# benchopt's public Lasso benchmark with cdlearn's solver files (benchmarks/benchopt/lasso;
# leukemia read from $CDLEARN_DATA);
# BENCHMARK=path/to/benchmark_lasso checkout, else it is cloned (needs the network)
bench-benchopt: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} PATH=$(CURDIR)/$(VENV)/bin:$$PATH \
		$(PY) -m benchmarks.benchopt.run \
		$${BENCHMARK:+--benchmark $$BENCHMARK} --out benchmarks/results/benchopt_lasso.md

# benchopt's benchmark_logreg_l2 / _l1 protocol offline (benchmarks/benchopt/logreg_driver.py;
# the cdlearn solver files for benchopt itself are in benchmarks/benchopt/logreg_l*/solvers)
bench-benchopt-logreg: $(STAMP)
	CDLEARN_DATA=$${CDLEARN_DATA:-$(CURDIR)/../shared/data} $(PY) -m benchmarks.benchopt.logreg_driver \
		--out benchmarks/results

# CLI fuzz: malformed LIBSVM and model files through `cdlearn` subprocesses (CI runs 30)
fuzz-cli: $(STAMP)
	CDLEARN_FUZZ_CLI=$${CDLEARN_FUZZ_CLI:-600} $(PY) -m pytest -q tests/test_cli_fuzz.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tests_sklearn examples docs/conf.py docs/_ext

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache docs/_build docs/generated \
		docs/auto_examples docs/sg_execution_times.rst
