"""A small driver reproducing benchopt's logistic-regression protocol offline.

benchopt 1.10's runner (``benchopt run``) needs its conda/pip solver installs and
a network fetch of the libsvm datasets; this driver runs the same thing with the
peers of this venv. It follows benchmark_logreg_l2 / benchmark_logreg_l1:

- objectives: ``Σ log(1 + e^{-y xᵀw}) + lmbd/2 ‖w‖²`` (l2, ``lmbd`` ∈ {1, 0.01}) and
  ``Σ log(1 + e^{-y xᵀw}) + lmbd ‖w‖₁`` with ``lmbd = reg·‖Xᵀy‖∞/2`` (l1,
  ``reg`` ∈ {0.5, 0.1, 0.05}); no intercept; cdlearn gets ``λ = lmbd/n``;
- data: the benchmarks' simulations (l2: ``X ~ N(0, 1)``, ``y = sign(Xβ)``,
  seed 42; l1: ``benchopt.datasets.make_correlated_data``, seed 42) at the
  sizes of issue 25, and the LIBSVM files available offline (a9a, leukemia);
- peers configured as the benchmarks' solver files (scikit-learn lbfgs /
  newton-cg / newton-cholesky / liblinear with tol 1e-15 or 1e-12 and a
  ``max_iter`` budget; skglm ``ProxNewton(tol=1e-12)`` by ``max_iter``; snapml
  ``tol=1e-12`` by ``max_iter``; celer by ``max_iter``), cdlearn by ``tol``
  (``benchmarks/benchopt/logreg_l*/solvers/cdlearn.py``);
- each solver runs at a growing budget (iterations 1, 2, 3, 4, 6, 8, ... or
  tolerances 10^{-k/2}), every budget ``--repeats`` times (median); the time to
  ε is the median time of the first budget whose objective ``f`` has
  ``(f - f*)/f* ≤ ε``, ``f*`` the best objective any solver reached;
- one thread (``OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS=1`` set below before numpy
  loads), CPU time of the process (the machine is shared: wall time measured
  the load more than the solvers).

``python -m benchmarks.benchopt.logreg_driver --out benchmarks/results`` writes
``benchopt_logreg.md`` (one row per case and ε: cdlearn, best peer, ratio).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

EPS = (1e-6, 1e-10)


# ----------------------------------------------------------------------------- data
def simulated_l2(n, d):
    rng = np.random.RandomState(42)
    beta = rng.randn(d)
    X = rng.randn(n, d)
    return X, np.sign(X @ beta)


def simulated_l1(n, d):
    from benchopt.datasets import make_correlated_data

    X, y, _ = make_correlated_data(n, d, random_state=42)
    return X, (2.0 * (y > 0) - 1.0)


def libsvm(name):
    from cdlearn.datasets import load_libsvm

    X, y = load_libsvm(name)
    if name == "leu":
        X = X.toarray() if hasattr(X, "toarray") else X
    return X, np.where(y > 0, 1.0, -1.0)


# ----------------------------------------------------------------------------- objective
def objective(X, y, w, penalty, lmbd):
    z = y * np.asarray(X @ w).ravel()
    loss = float(np.logaddexp(0.0, -z).sum())
    return loss + (lmbd * 0.5 * float(w @ w) if penalty == "l2" else lmbd * float(np.abs(w).sum()))


# ----------------------------------------------------------------------------- solvers
class _Value:
    def __init__(self, X, y, penalty, lmbd):
        self.args = X, y, penalty, lmbd

    def __call__(self, w):
        X, y, penalty, lmbd = self.args
        return objective(X, y, w, penalty, lmbd)


def _fmt(t):
    return "–" if t is None else f"{1e3 * t:.1f}"


def iter_budgets(stop=100_000):
    b, x = 1, 1.0
    while b <= stop:
        yield b
        x *= 1.4
        b = max(b + 1, int(round(x)))


def tol_budgets():
    for k in range(2, 31):
        yield 10.0 ** (-k / 2)


def solvers(penalty, X, y, lmbd, method="auto"):
    """``{name: (fit(budget) -> w, budgets)}`` mirroring the benchmarks' solver files."""
    from sklearn.linear_model import LogisticRegression

    import cdlearn

    n = X.shape[0]
    out = {}
    design = cdlearn.as_design(X)
    out["cdlearn"] = (lambda tol: cdlearn.solve(design, y, loss="logistic", penalty=penalty,
                                                lam=lmbd / n, tol=tol, max_epochs=100_000,
                                                solver=method).w,
                      tol_budgets)
    if penalty == "l2":
        for s in ("lbfgs", "newton-cg", "newton-cholesky", "liblinear"):
            out[f"sklearn-{s}"] = (
                lambda it, s=s: LogisticRegression(solver=s, C=1 / lmbd, fit_intercept=False,
                                                   tol=1e-15, max_iter=it).fit(X, y).coef_.ravel(),
                iter_budgets)
        from snapml import LogisticRegression as SnapLR

        out["snapml"] = (lambda it: SnapLR(fit_intercept=False, regularizer=lmbd, penalty="l2",
                                           tol=1e-12, dual=X.shape[0] >= X.shape[1],
                                           max_iter=it).fit(X, y).coef_.ravel(), iter_budgets)
    else:
        from celer import LogisticRegression as CelerLR
        from skglm.datafits import Logistic
        from skglm.estimators import GeneralizedLinearEstimator
        from skglm.penalties import L1
        from skglm.solvers import ProxNewton
        from snapml import LogisticRegression as SnapLR

        out["skglm"] = (lambda it: GeneralizedLinearEstimator(
            datafit=Logistic(), penalty=L1(lmbd / n),
            solver=ProxNewton(tol=1e-12, fit_intercept=False, max_iter=it)).fit(X, y)
            .coef_.ravel(), iter_budgets)
        out["snapml"] = (lambda it: SnapLR(fit_intercept=False, regularizer=lmbd, penalty="l1",
                                           tol=1e-12, dual=False, max_iter=it).fit(X, y)
                         .coef_.ravel(), iter_budgets)
        out["celer"] = (lambda it: CelerLR(penalty="l1", C=1 / lmbd, max_iter=it,
                                           max_epochs=100_000, p0=10, tol=1e-12,
                                           fit_intercept=False).fit(X, y).coef_.ravel(),
                        iter_budgets)
        out["sklearn-liblinear"] = (
            lambda it: LogisticRegression(solver="liblinear", C=1 / lmbd, l1_ratio=1.0,
                                          fit_intercept=False, tol=1e-12, max_iter=it)
            .fit(X, y).coef_.ravel(), iter_budgets)
    return out


def sweep(fit, budgets, value, repeats, cap, f_ref):
    """[(budget, median CPU seconds, objective)] until the objective is within 1e-11 of
    ``f_ref`` (a tight run's), stays flat for 8 iteration budgets, or ``cap`` CPU
    seconds pass."""
    rows, spent, prev, same = [], 0.0, None, 0
    for b in budgets():
        times = []
        for _ in range(repeats):
            t0 = time.process_time()
            w = fit(b)
            times.append(time.process_time() - t0)
        spent += sum(times)
        f = value(w)
        rows.append((b, float(np.median(times)), f))
        same = same + 1 if prev is not None and abs(f - prev) <= 1e-14 * abs(f) else 0
        prev = f
        # flat objective: the iteration budgets' end; tolerance budgets are finite, and
        # loose ones return one iterate (a9a l1: tol 1e-1 ... 1e-8 all stopped after 2 outer)
        flat = same >= 8 and budgets is not tol_budgets
        if (f - f_ref) <= 1e-11 * abs(f_ref) or flat or spent > cap:
            break
    return rows


def time_to(rows, f_star, eps):
    for _, t, f in rows:
        if (f - f_star) / abs(f_star) <= eps:
            return t
    return None


def cases(which):
    l2 = [("sim 10000x100", lambda: simulated_l2(10_000, 100)),
          ("sim 1000x1000", lambda: simulated_l2(1_000, 1_000)),
          ("a9a", lambda: libsvm("a9a"))]
    l1 = [("sim 10000x100", lambda: simulated_l1(10_000, 100)),
          ("sim 1000x1000", lambda: simulated_l1(1_000, 1_000)),
          ("sim 500x2000", lambda: simulated_l1(500, 2_000)),
          ("a9a", lambda: libsvm("a9a")),
          ("leukemia", lambda: libsvm("leu"))]
    if which in ("l2", "both"):
        for name, load in l2:
            yield "l2", name, load, (1.0, 0.01)
    if which in ("l1", "both"):
        for name, load in l1:
            yield "l1", name, load, (0.5, 0.1, 0.05)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--which", choices=("l1", "l2", "both"), default="both")
    ap.add_argument("--only", default="", help="substring of the case names to run")
    ap.add_argument("--params", default="",
                    help="comma-separated lmbd (l2) / reg (l1) values to keep (default: all)")
    ap.add_argument("--solver", default="auto", help="cdlearn's solver (default: auto)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cap", type=float, default=60.0, help="CPU seconds per solver and case")
    ap.add_argument("--peers", default="",
                    help="comma-separated peer names to keep (default: all of the benchmark's)")
    ap.add_argument("--out", default=None, help="directory for benchopt_logreg.md")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    lines = ["| benchmark | data | lmbd / reg | ε | cdlearn auto (ms) | best peer (ms) | "
             "ratio | all peers (ms) |", "|---|---|---|---|---|---|---|---|"]
    for penalty, name, load, params in cases(args.which):
        if args.only and args.only not in name:
            continue
        X, y = load()
        for par in params:
            if args.params and par not in {float(v) for v in args.params.split(",")}:
                continue
            lmbd = par if penalty == "l2" else par * float(np.abs(X.T @ y).max()) / 2.0
            value = _Value(X, y, penalty, lmbd)
            table = solvers(penalty, X, y, lmbd, args.solver)
            if args.peers:
                keep = {"cdlearn", *args.peers.split(",")}
                table = {k: v for k, v in table.items() if k in keep}
            tight = {"cdlearn": 1e-15, "sklearn-lbfgs": 10_000, "skglm": 1000}
            f_ref = min(value(table[k][0](b)) for k, b in tight.items() if k in table)
            runs = {}
            for sname, (fit, budgets) in table.items():
                fit(next(iter(budgets())))  # warm-up: imports, numba caches
                runs[sname] = sweep(fit, budgets, value, args.repeats, args.cap, f_ref)
            f_star = min(f for rows in runs.values() for _, _, f in rows)
            import cdlearn

            choice = cdlearn.solve(X, y, loss="logistic", penalty=penalty,
                                   lam=lmbd / X.shape[0], tol=1e-2, solver=args.solver)
            for eps in EPS:
                times = {s: time_to(rows, f_star, eps) for s, rows in runs.items()}
                peers = {s: t for s, t in times.items() if s != "cdlearn" and t is not None}
                best = min(peers, key=peers.get) if peers else None
                ours = times["cdlearn"]
                ratio = (f"{ours / peers[best]:.2f}×" if ours is not None and best
                         else "–")
                others = ", ".join(f"{s} {_fmt(t)}" for s, t in times.items() if s != "cdlearn")
                row = (f"| logreg_{penalty} | {name} | {par:g} | {eps:g} | {_fmt(ours)} "
                       f"({choice.solver}) | {_fmt(peers.get(best))} ({best}) | {ratio} | "
                       f"{others} |")
                print(row, flush=True)
                lines.append(row)
    if args.out:
        path = Path(args.out) / "benchopt_logreg.md"
        path.write_text("\n".join(lines) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
