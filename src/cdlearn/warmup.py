"""``cdlearn warmup``: compile the numba kernels of the common paths into the cache.

A fresh install has an empty numba cache, so each method's first fit compiles its
kernels (seconds to tens of seconds, ``benchmarks/results/coldstart.md``). Warm-up
fits tiny problems through the paths most users take -- every estimator's default
method on dense and sparse data, and ``cdlearn.solve`` with primal and dual CD and
l1-logistic ws-cd -- so that later processes load the kernels from the cache
(``NUMBA_CACHE_DIR``, else ``__pycache__`` next to the sources) instead of compiling
them. ``make install`` runs it.
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from . import data
from .compile_stats import CompileRecorder


def _problem(sparse: bool, n: int = 40, d: int = 8):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    if sparse:
        X[rng.random((n, d)) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    w = rng.standard_normal(d)
    y = X @ w + 0.1 * rng.standard_normal(n)
    return X, y, np.where(y > 0, 1.0, -1.0), np.arange(n) % 3


def _paths():
    """``(label, fit)``: the fits whose kernels warm-up compiles."""
    from . import estimators as est
    from .api import solve

    paths = []
    for sparse in (False, True):
        kind = "sparse" if sparse else "dense"
        X, y, y_pm, y3 = _problem(sparse)
        paths += [
            (f"Lasso ({kind})", lambda X=X, y=y: est.Lasso(alpha=0.01).fit(X, y)),
            (f"ElasticNet ({kind})", lambda X=X, y=y: est.ElasticNet(alpha=0.01).fit(X, y)),
            (f"Ridge ({kind})", lambda X=X, y=y: est.Ridge(alpha=1.0).fit(X, y)),
            (f"LogisticRegression ({kind})",
             lambda X=X, y=y_pm: est.LogisticRegression().fit(X, y)),
            (f"LogisticRegression multinomial ({kind})",
             lambda X=X, y=y3: est.LogisticRegression().fit(X, y)),
            (f"LinearSVC ({kind})", lambda X=X, y=y_pm: est.LinearSVC().fit(X, y)),
        ]
    X, _, y_pm, _ = _problem(True)
    for solver in ("primal-cd", "dual-cd"):
        paths.append((f"solve logistic/l2 {solver} (sparse)",
                      lambda X=X, y=y_pm, s=solver: solve(X, y, loss="logistic", penalty="l2",
                                                          lam=0.01, solver=s, max_epochs=5)))
    # ws-cd has one kernel for the squared loss (the Lasso above) and one for the others
    paths.append(("solve logistic/l1 ws-cd (sparse)",
                  lambda X=X, y=y_pm: solve(X, y, loss="logistic", penalty="l1", lam=0.01,
                                            solver="ws-cd", max_epochs=5)))
    return paths


@contextlib.contextmanager
def _loops_on_small_arrays():
    """Small arrays take numpy forms of the loops (``cdlearn.data.SMALL_ARRAY``), which
    would leave the loops of larger problems uncompiled: warm-up's tiny fits run them
    with the thresholds at -1, in every module that read them and in ``data`` for
    modules imported during the fits."""
    names = ("SMALL_ARRAY", "SMALL_INPUT")
    saved = []
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("cdlearn"):
            for name in names:
                if hasattr(module, name):
                    saved.append((module, name, getattr(module, name)))
                    setattr(module, name, -1)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
        for module in list(sys.modules.values()):  # those imported meanwhile too
            if getattr(module, "__name__", "").startswith("cdlearn"):
                for name in names:
                    if hasattr(module, name):
                        setattr(module, name, getattr(data, name))


def warmup(echo=print, only: str | None = None) -> tuple[int, float]:
    """Run the warm-up fits (those whose label contains ``only``, if given);
    returns (functions compiled, seconds spent compiling)."""
    paths = [(label, fit) for label, fit in _paths() if only is None or only in label]
    if not paths:
        raise ValueError(f"only={only!r} matches no warm-up path (labels: "
                         f"{', '.join(label for label, _ in _paths())})")
    total, seconds = 0, 0.0
    t0 = time.perf_counter()
    with warnings.catch_warnings(), _loops_on_small_arrays():
        # 5-epoch fits of tiny problems need not converge: only their kernels matter
        warnings.simplefilter("ignore")
        for label, fit in paths:
            with CompileRecorder() as rec:
                fit()
            total += len(rec.compiled)
            seconds += rec.seconds
            echo(f"  {label}: {len(rec.compiled)} functions compiled ({rec.seconds:.1f} s)")
    echo(f"warmup: {total} functions compiled in {seconds:.1f} s "
         f"({time.perf_counter() - t0:.1f} s in all); the numba cache is filled")
    return total, seconds
