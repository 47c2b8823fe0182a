"""dask-ml's LogisticRegression vs cdlearn.distributed on dense reuters, one LocalCluster.

``python -m benchmarks.distributed_dask_ml_dense SOLVER [MAX_ITER [OPTION]]``:
SOLVER is a dask-ml solver ("admm", its default; "lbfgs") or "cdlearn" (CoCoA+,
K = 2, MAX_ITER rounds). OPTION: for dask-ml, its ``normalize`` solver argument
(0/1, default 1 as dask-glm's: with it, dask-glm refuses reuters, "Multiple
constant columns detected!" -- reuters has empty columns -- so the runs that
finish pass 0: the same objective, unscaled); for cdlearn, the relative gap
``tol`` (default 1e-6). X = reuters-money-fx
as a dense float64 array (7770 x 8315, 0.52 GB), chunks of rows, one per worker
of a ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``. Same
objective: logistic loss, λ = 1/n, no intercept (dask-glm minimises Σφ + g(w)/C:
C = 1/(nλ)); dask-ml's answer is certified by cdlearn's duality gap at its
coefficients (:func:`benchmarks.distributed._gap`). Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np


def main(solver, max_iter=100, option=None):
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    from benchmarks.distributed import _gap
    from cdlearn.datasets.libsvm import load_binary

    X, y = load_binary("reuters-money-fx", download=False)
    n = X.shape[0]
    lam = 1.0 / n
    Xd = X.toarray()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        t0 = time.perf_counter()
        if solver == "cdlearn":
            import cdlearn.distributed as cdd

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = cdd.solve(Xd, y, loss="logistic", penalty="l2", lam=lam, client=client,
                                n_shards=2, method="cocoa+", max_rounds=max_iter,
                                tol=1e-6 if option is None else option)
            w, extra = res.w, dict(rounds=res.info["rounds"])
        else:
            from dask_ml.linear_model import LogisticRegression

            chunk = -(-n // 2)
            dX = da.from_array(Xd, chunks=(chunk, Xd.shape[1]))
            dy = da.from_array((y > 0).astype(np.float64), chunks=chunk)
            est = LogisticRegression(penalty="l2", C=1.0 / (n * lam), fit_intercept=False,
                                     solver=solver, max_iter=max_iter, tol=1e-10,
                                     solver_kwargs={"normalize": option != 0})
            est.fit(dX, dy)
            w, extra = np.asarray(est.coef_, dtype=np.float64).ravel(), {}
        seconds = time.perf_counter() - t0
    _, gap = _gap(X, y, w, "logistic", "l2", lam)
    print(json.dumps(dict(solver=solver, max_iter=max_iter, option=option,
                          seconds=round(seconds, 2),
                          gap=float(gap), **extra)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) if a.isdigit() else float(a) for a in sys.argv[2:]))
