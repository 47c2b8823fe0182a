"""gram-cd against ws-cd and plain cyclic primal CD on dense Lasso problems.

For benchopt's simulated Lasso designs and two smaller ones: the time of the
BLAS Gram ``XᵀX`` and of ``cdlearn.solve`` with ws-cd, plain cyclic primal CD
and gram-cd to a gap of 1e-6 / 1e-10 of P(0), medians of ``--repeat`` calls,
one thread. ``python -m benchmarks.gram_cost [--out benchmarks/results/gram_cost.md]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import cdlearn

CASES = [(10_000, 100, 0.0), (10_000, 100, 0.6), (500, 600, 0.6), (500, 600, 0.0),
         (300, 60, 0.0), (2000, 200, 0.6)]
SOLVERS = [("ws-cd", {}), ("primal-cd", dict(sampling="cyclic")), ("gram-cd", {})]


def correlated(n, d, rho, seed=27):
    """Gaussian rows with Toeplitz correlation ρ^|i-j| (benchopt's make_correlated_data)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, d))
    for j in range(1, d):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1.0 - rho * rho) * X[:, j]
    w = np.zeros(d)
    w[rng.choice(d, max(1, d // 10), replace=False)] = rng.standard_normal(max(1, d // 10))
    y = X @ w
    y += rng.standard_normal(n) * np.linalg.norm(y) / np.sqrt(n) / 3.0
    return np.asfortranarray(X), y


def _median_ms(k, f, *args, **kwargs):
    times, out = [], None
    for _ in range(k):
        t = time.perf_counter()
        out = f(*args, **kwargs)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times)), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    lines = ["# gram-cd against ws-cd and plain cyclic CD (dense Lasso)", "",
             f"`python -m benchmarks.gram_cost`: medians of {args.repeat} calls (ms), "
             "one thread; λ = reg·λmax; epochs in brackets.", "",
             "| problem | XᵀX | reg | tol | " + " | ".join(s for s, _ in SOLVERS) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(SOLVERS)]
    warnings.simplefilter("ignore")
    for n, d, rho in CASES:
        X, y = correlated(n, d, rho)
        gram_ms, _ = _median_ms(args.repeat, np.dot, X.T, X)
        lmax = np.abs(X.T @ y).max() / n
        for reg in (0.1, 0.01):
            for tol in (1e-6, 1e-10):
                cells = []
                for solver, kw in SOLVERS:
                    ms, r = _median_ms(args.repeat, cdlearn.solve, X, y, loss="squared",
                                       penalty="l1", lam=reg * lmax, solver=solver, tol=tol,
                                       max_epochs=100_000, **kw)
                    cells.append(f"{ms:.2f} ({r.n_epochs})")
                lines.append(f"| {n}×{d} ρ={rho} | {gram_ms:.2f} | {reg} | {tol:g} | "
                             + " | ".join(cells) + " |")
                print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
