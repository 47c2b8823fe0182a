"""Passes over X that one ``cdlearn.solve`` Lasso call makes, counted end to end.

``python -m benchmarks.lasso_passes`` solves benchopt's tall (10,000 × 100) and square
(500 × 600, ρ = 0.6) problems at 0.1 λmax with ``max_epochs=k`` and counts, on the
second call (the design cached, as in benchopt's repeated runs): the validation scans
(:func:`cdlearn.data._scan`, which also fingerprints X for the design cache), products
with X or Xᵀ (``Design.matvec``/``rmatvec`` and gram-cd's direct BLAS products),
statistics computed (column norms ...), and the epochs' share (``result.passes``:
entries read by the coordinate steps / nnz). A counter wraps each function; one pass =
nnz entries.
"""

from __future__ import annotations

import argparse
import functools
import warnings

import numpy as np

import cdlearn
import cdlearn.data as data
from cdlearn.solvers import SOLVERS

COUNTS: dict[str, float] = {}


def _count(name, weight=lambda *a, **k: 1.0):
    def wrap(f):
        @functools.wraps(f)
        def inner(*a, **k):
            COUNTS[name] = COUNTS.get(name, 0.0) + weight(*a, **k)
            return f(*a, **k)
        return inner
    return wrap


def install(nnz_of):
    data._scan = _count("validation scan", lambda bits, *_: bits.shape[0] / nnz_of())(
        data._scan)
    data.Design.matvec = _count("X w (matvec)")(data.Design.matvec)
    data.Design.rmatvec = _count("Xᵀ r (rmatvec)")(data.Design.rmatvec)
    data.Design._statistic = _count("statistic computed",
                                    lambda self, name: float(
                                        name not in self.__dict__.get("_stats", {})))(
        data.Design._statistic)
    gram = SOLVERS["gram-cd"]  # imports the module
    del gram
    import cdlearn.solvers.gram_cd as g

    def restore_weight(self):
        return float(bool(np.any(self.w)))

    def cert_weight(self):
        return 0.0 if (not self.problem.fit_intercept and not np.any(self.w)) else 1.0

    g.GramCDState._restore_margins = _count("gram-cd X w", restore_weight)(
        g.GramCDState._restore_margins)
    g.GramCDState.certificate = _count("gram-cd Xᵀα", cert_weight)(g.GramCDState.certificate)
    g.gram_system = _count("gram-cd c = Xᵀy")(g.gram_system)


def main(argv=None) -> int:
    from benchopt.datasets.simulated import make_correlated_data

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    current = {"nnz": 1}
    install(lambda: current["nnz"])
    rows = []
    for n, d, rho in [(10_000, 100, 0.0), (500, 600, 0.6)]:
        X, y, _ = make_correlated_data(n, d, rho=rho, random_state=np.random.RandomState(27))
        X = np.asfortranarray(X)
        current["nnz"] = X.size
        lam = 0.1 * np.abs(X.T @ y).max() / n
        for solver in ("auto", "primal-cd", "gram-cd", "ws-cd"):
            kw = dict(penalty="l1", lam=lam, solver=solver, tol=1e-15, max_epochs=args.epochs)
            cdlearn.solve(X, y, **kw)  # the design cached, as benchopt's later calls
            COUNTS.clear()
            res = cdlearn.solve(X, y, **kw)
            counts = {k: v for k, v in COUNTS.items() if v}
            counts["epochs' steps"] = res.passes
            total = sum(counts.values())
            listed = ", ".join(f"{k} {v:.3g}" for k, v in counts.items())
            rows.append(f"| {n}×{d} ρ={rho} | {solver} → {res.solver} | {total:.2f} | "
                        f"{listed} |")
    print(f"Passes over X of one call, max_epochs={args.epochs}, tol 1e-15 (no early stop), "
          "0.1 λmax, second call on the same X\n")
    print("| problem | solver | passes | of which |\n|---|---|---:|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
