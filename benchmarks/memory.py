"""Peak extra memory of every solver, as a multiple of the input matrix's bytes.

``python -m benchmarks.memory`` (``make bench-memory``). For each solver of
``cdlearn.solvers.SOLVERS`` that supports a problem, for ``solver="auto"`` and
for the estimators, on news20 (CSR as loaded, the binary target of
``load_binary``: classes 1-10 vs 11-20; the same ±1 vector is the regression
target of the squared loss) and on Nesterov's generated Lasso with 10⁶ columns
(CSC as generated), it reports the peak memory of one ``cdlearn.solve`` / ``fit``
beyond what was allocated before it, divided by ``data + indices + indptr``
of the input.

How it is measured, and why two numbers:

- every case runs in a fresh subprocess (nothing cached from another case);
  the data are read from an ``.npz`` the parent wrote once; then the same case
  runs once on a 200-row slice of the same format and dtype, so numba's compile
  or cache load (tens of MB) is done before measuring; scikit-learn's
  ConvergenceWarning, which the capped solves raise, is imported before it
  too (the import holds 32 MB, 0.3x the 10⁶-column input, and read as part of
  dual CD's peak there, where the warm-up converged and did not import it);
- ``tracemalloc``: the peak of Python-level allocations during the call, numpy
  and scipy arrays included (numpy reports its buffers to tracemalloc). Exact
  and deterministic, but blind to allocations inside numba kernels (only
  vectors of length n here) and to memory held by BLAS;
- ``rss``: the kernel's resident high-water mark (``VmHWM``, reset through
  ``/proc/self/clear_refs`` just before the call) minus the resident size just
  before the call. It sees everything, but memory that the allocator freed
  earlier and reuses is not counted again, so it can read lower.

The figure compared with the 1.5× goal is the larger of the two. Each solve
is capped (``max_epochs``): the big temporaries are built at set-up, and the
iterates are vectors; the cap keeps the run short on a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.sparse as sp

GOAL = 1.5
# (loss, penalty) problems; each solver runs on every one it supports
PROBLEMS = [("logistic", "l2"), ("logistic", "l1"), ("squared", "l1"), ("squared", "l2"),
            ("squared_hinge", "l2"), ("hinge", "l2"), ("squared", "group_l2")]
BIG_PROBLEMS = [("squared", "l1"), ("squared", "l2")]
ESTIMATORS = ["Lasso", "ElasticNet", "Ridge", "LogisticRegression", "LinearSVC"]


# ---------------------------------------------------------------- measurement
def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{key} not in /proc/self/status")


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def input_bytes(X) -> int:
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return np.asarray(X).nbytes


def measure(call) -> dict:
    """Peak extra bytes of ``call()``: tracemalloc and resident high-water."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    hwm_ok = _reset_hwm()
    rss0 = _status("VmRSS")
    t0 = time.perf_counter()
    out = call()
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    rss = _status("VmHWM") - rss0 if hwm_ok else None
    return {"tracemalloc": peak, "rss": rss, "seconds": seconds, "result": out}


# ---------------------------------------------------------------- the cases
def _lam(X, y, loss, penalty) -> float:
    n = X.shape[0]
    if penalty in ("l1", "group_l2"):
        g = np.abs(np.asarray(X.T @ y).ravel()).max() / n
        return float(g) * (0.5 if loss == "logistic" else 1.0) / 10
    return 1.0 / n


def _groups(d: int) -> np.ndarray:
    return np.arange(d) // 10


def _run_case(X, y, kind: str, name: str, loss: str, penalty: str, max_epochs: int):
    import cdlearn

    if kind == "estimator":
        est = _estimator(name, X, max_epochs)
        return lambda: est.fit(X, y)
    lam = _lam(X, y, loss, penalty)
    kw = dict(loss=loss, penalty=penalty, lam=lam, solver=name, tol=1e-8,
              max_epochs=max_epochs)
    if penalty == "group_l2":
        kw["groups"] = _groups(X.shape[1])

    def call():
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # capped runs do not converge
            res = cdlearn.solve(X, y, **kw)
        return res.solver

    return call


def _estimator(name, X, max_iter):
    import cdlearn

    cls = getattr(cdlearn, name)
    if name in ("Lasso", "ElasticNet"):
        return cls(alpha=1e-3, max_iter=max_iter)
    if name == "Ridge":
        return cls(alpha=1.0, max_iter=max_iter)
    return cls(C=1.0, max_iter=max_iter)


def child(args) -> None:
    import warnings

    warnings.simplefilter("ignore")
    from cdlearn.solvers.base import convergence_warning

    convergence_warning()  # a one-time import, whatever the input's size (see above)
    f = np.load(args.data)
    fmt = str(f["format"])
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    X = cls((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
    y = np.array(f["y"])
    del f
    # warm-up on a small slice of the same format and dtypes (compiles or loads numba)
    small = cls(X[:200])
    if small.indices.dtype != X.indices.dtype:
        small.indices = small.indices.astype(X.indices.dtype)
        small.indptr = small.indptr.astype(X.indptr.dtype)
    ys = y[:200].copy()
    if args.loss != "squared" and np.unique(ys).size < 2:
        ys[0] = -ys[0]
    _run_case(small, ys, args.kind, args.name, args.loss, args.penalty, args.max_epochs)()
    del small, ys
    call = _run_case(X, y, args.kind, args.name, args.loss, args.penalty, args.max_epochs)
    m = measure(call)
    nbytes = input_bytes(X)
    ran = m.pop("result")
    print(json.dumps({**m, "input": nbytes,
                      "ran": ran if isinstance(ran, str) else args.name}))


# ---------------------------------------------------------------- the parent
def _save(path, X, y):
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape),
             format=np.array(X.format), y=y)


def _datasets(tmp: Path, quick: bool):
    from cdlearn.datasets.libsvm import load_binary
    from cdlearn.datasets.nesterov import make_lasso_known_optimum

    X, y = load_binary("news20", download=False)
    X = sp.csr_matrix(X)
    X.sort_indices()
    out = []
    _save(tmp / "news20.npz", X, y)
    out.append(("news20", tmp / "news20.npz", X, PROBLEMS))
    n, d = (10_000, 100_000) if quick else (100_000, 1_000_000)
    A, b, _x, _f = make_lasso_known_optimum(n, d, nnz_per_column=10, support_size=d // 100,
                                            lam=1.0)
    A = sp.csc_matrix(A)
    A.sort_indices()
    _save(tmp / "nesterov.npz", A, b)
    out.append((f"nesterov {n}x{d}", tmp / "nesterov.npz", A, BIG_PROBLEMS))
    return out


def _cases(X, problems, with_estimators: bool):
    from cdlearn.api import make_problem
    from cdlearn.solvers import SOLVERS

    small = X[:50]
    ys = np.where(np.arange(50) % 2 == 0, 1.0, -1.0)
    for loss, penalty in problems:
        groups = _groups(X.shape[1]) if penalty == "group_l2" else None
        p = make_problem(small, ys, loss=loss, penalty=penalty, lam=0.1, groups=groups)
        names = [s for s in SOLVERS if SOLVERS[s].supports(p)]
        for name in [*names, "auto"]:
            yield "solve", name, loss, penalty
    if with_estimators:
        for name in ESTIMATORS:
            loss = "squared" if name in ("Lasso", "ElasticNet", "Ridge") else "logistic"
            yield "estimator", name, loss, "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a 10⁵-column problem instead")
    ap.add_argument("--max-epochs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per case")
    ap.add_argument("--only", default=None, help="run the cases whose label contains this")
    ap.add_argument("--skip", default="scd,ascd",
                    help="solvers not run (default: the greedy methods, whose epochs take "
                         "minutes on these sizes; tests/test_memory.py bounds them)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--data"), ap.add_argument("--kind"), ap.add_argument("--name")
    ap.add_argument("--loss"), ap.add_argument("--penalty")
    args = ap.parse_args(argv)
    if args.child:
        child(args)
        return 0
    print(__doc__.split("\n\n", 2)[2].split("\n\nThe figure")[0])
    print(f"\ngoal: peak extra <= {GOAL}x the input; solves capped at {args.max_epochs} epochs\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    skip = set(filter(None, args.skip.split(",")))
    if skip:
        print(f"not run: {', '.join(sorted(skip))} (--skip)\n")
    worst = 0.0
    over = []
    with tempfile.TemporaryDirectory() as tmp:
        for ds, path, X, problems in _datasets(Path(tmp), args.quick):
            nb = input_bytes(X)
            print(f"## {ds}: {X.shape[0]} x {X.shape[1]}, {X.format.upper()} "
                  f"{X.dtype}/{X.indices.dtype}, nnz {X.nnz}, input {nb / 2**20:.1f} MiB\n")
            print("| case | ran | tracemalloc × | rss × | peak × | s |")
            print("|---|---|---:|---:|---:|---:|", flush=True)
            for kind, name, loss, penalty in _cases(X, problems, ds == "news20"):
                label = f"{name} {loss}/{penalty}" if kind == "solve" else f"{name}.fit"
                if (args.only and args.only not in label) or name in skip:
                    continue
                cmd = [sys.executable, "-m", "benchmarks.memory", "--child", "--data", str(path),
                       "--kind", kind, "--name", name, "--loss", loss, "--penalty", penalty,
                       "--max-epochs", str(args.max_epochs)]
                try:
                    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                          timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    print(f"| {label} | timed out after {args.timeout:g} s | | | | |", flush=True)
                    continue
                if proc.returncode != 0:
                    err = (proc.stderr.strip().splitlines() or ["?"])[-1]
                    print(f"| {label} | error: {err[:80]} | | | | |", flush=True)
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                tm = r["tracemalloc"] / r["input"]
                rss = None if r["rss"] is None else r["rss"] / r["input"]
                peak = max(tm, rss or 0.0)
                worst = max(worst, peak)
                if peak > GOAL:
                    over.append(f"{ds}: {label} {peak:.2f}x")
                rs = "n/a" if rss is None else f"{rss:.2f}"
                print(f"| {label} | {r['ran']} | {tm:.2f} | {rs} | {peak:.2f} | "
                      f"{r['seconds']:.2f} |", flush=True)
            print()
    print(f"worst peak: {worst:.2f}x the input; over {GOAL}x: "
          + ("none" if not over else "; ".join(over)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
