"""Cost of one ``cdlearn.solve`` call against benchopt's plain ``cd`` on the Lasso benchmark.

``python -m benchmarks.lasso_call_cost 500,600,0,0.1 10000,100,0,0.1 ...`` (n, d, ρ, reg
as benchopt's Simulated dataset and objective, fit_intercept=False): the CPU time
(``time.thread_time``, median of 40 calls after a warm-up) of the validation scan,
Xᵀy, benchopt ``cd``'s ``L = (X**2).sum(0)``, and of whole calls with ``max_epochs = k``
(cdlearn ``auto`` from zero, tol 1e-15, as the benchopt solver file calls it; ``cd``
with its ``L`` included, as its ``run`` computes it) for k = 1, 5, 10, 20, 40. The
difference at equal k is cdlearn's per-call cost outside the epochs. Needs benchopt.
"""

import sys
import time
import warnings

import numpy as np
from benchopt.datasets.simulated import make_correlated_data
from numba import njit

import cdlearn
from cdlearn import data as cd_data
from cdlearn.penalties import soft_threshold

from .overhead import wall


@njit
def _cd(X, y, lmbd, L, n_iter):
    """benchopt benchmark_lasso's ``cd`` solver (dense branch), for the comparison."""
    w = np.zeros(X.shape[1])
    R = np.copy(y)
    for _ in range(n_iter):
        for j in range(X.shape[1]):
            if L[j] == 0.0:
                continue
            old = w[j]
            w[j] = soft_threshold(w[j] + X[:, j] @ R / L[j], lmbd / L[j])
            diff = old - w[j]
            if diff != 0:
                R += diff * X[:, j]
    return w


def _median_ms(f, reps=40):
    return wall(f, reps, clock=time.thread_time)


def _row(X, y, lmbd, k) -> str:
    t_cd = _median_ms(lambda: _cd(X, y, lmbd, (X ** 2).sum(axis=0), k))
    out = []

    def ours():
        out[:] = [cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lmbd / X.shape[0],
                                solver="auto", tol=1e-15, max_epochs=k)]
    t_ours = _median_ms(ours)
    r = out[0]
    return (f"  k={k:3d} cd {t_cd:.3f} ms  cdlearn {t_ours:.3f} ms ({r.solver}, "
            f"epochs {r.n_epochs}, checks {len(r.trace)})")


def _case(n, d, rho, reg) -> None:
    X, y, _ = make_correlated_data(n, d, rho=rho, random_state=np.random.RandomState(27))
    X = np.asfortranarray(X)
    lmbd = reg * np.abs(X.T @ y).max()
    print(f"== {n}x{d} rho={rho} reg={reg}")
    print(f"  scan {_median_ms(lambda: cd_data._cache_scan(X)):.3f} ms   "
          f"Xᵀy {_median_ms(lambda: X.T @ y):.3f} ms   "
          f"cd's L {_median_ms(lambda: (X ** 2).sum(axis=0)):.3f} ms")
    for k in (1, 5, 10, 20, 40):
        print(_row(X, y, lmbd, k), flush=True)


def main(argv) -> int:
    warnings.filterwarnings("ignore")
    for spec in argv:
        n, d, rho, reg = spec.split(",")
        _case(int(n), int(d), float(rho), float(reg))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
