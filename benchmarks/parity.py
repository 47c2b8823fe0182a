"""scikit-learn parity at default settings: coefficients and time (issue 18).

For each estimator case and problem, fits cdlearn's estimator at its default
settings and scikit-learn's at its defaults, and compares both ``coef_`` with a
reference converged to a very tight tolerance (scikit-learn's; skglm's for the
l1 logistic and scipy's Newton-CG for the squared hinge, where scikit-learn's
accurate solver, liblinear, penalises the intercept):

    err = ‖coef − coef*‖∞ / ‖coef*‖∞     (intercept excluded)

Times are medians of ``--repeats`` fits; ``ratio`` = cdlearn / scikit-learn
(< 1: cdlearn faster). Problems: standard datasets (diabetes, breast cancer
standardised, leukemia from ``CDLEARN_DATA``) and wide random ones (n ≪ d,
Gaussian X, 10-sparse truth); l1 strengths are ``1e-3·α_max`` on the wide
problems (issue 18's setting) and ``1e-2·α_max`` on the standard ones.

    python -m benchmarks.parity [--quick] [--out benchmarks/results/parity.md]

To add an estimator, append a :class:`EstimatorCase` to :data:`CASES`.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WIDE_SIZES = ((30, 300), (50, 1000), (100, 2000))
WIDE_ALPHA = 1e-3  # × α_max, issue 18's wide setting
STANDARD_ALPHA = 1e-2


@dataclass(frozen=True)
class Problem:
    name: str
    task: str  # "regression" or "classification"
    X: np.ndarray
    y: np.ndarray
    alpha_factor: float  # l1 strength as a fraction of α_max
    wide: bool


def _wide(task, seed, n, d) -> Problem:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[rng.choice(d, 10, replace=False)] = rng.standard_normal(10)
    y = X @ w + 0.1 * rng.standard_normal(n)
    if task == "classification":
        y = np.where(y > np.median(y), 1.0, -1.0)
    return Problem(f"wide {n}×{d} s{seed}", task, X, y, WIDE_ALPHA, True)


def problems(quick: bool) -> list[Problem]:
    from sklearn.datasets import load_breast_cancer, load_diabetes
    from sklearn.preprocessing import StandardScaler

    out = []
    X, y = load_diabetes(return_X_y=True)
    out.append(Problem("diabetes", "regression", X, y, STANDARD_ALPHA, False))
    X, y = load_breast_cancer(return_X_y=True)
    out.append(Problem("breast cancer", "classification", StandardScaler().fit_transform(X),
                       np.where(y == 1, 1.0, -1.0), STANDARD_ALPHA, False))
    if not quick:
        from cdlearn.datasets.libsvm import load_binary

        X, y = load_binary("leu")
        X = np.asarray(X.toarray())
        for task in ("regression", "classification"):
            out.append(Problem("leukemia", task, X, y, STANDARD_ALPHA, False))
    sizes = WIDE_SIZES[:2] if quick else WIDE_SIZES
    seeds = range(1) if quick else range(3)
    for task in ("regression", "classification"):
        out += [_wide(task, s * len(sizes) + i, n, d) for s in seeds
                for i, (n, d) in enumerate(sizes)]
    return out


def alpha_max(X, y, task, l1_ratio=1.0) -> float:
    """The smallest l1 strength with an all-zero solution (intercept fitted).

    Regression: scikit-learn's α (``‖Xᵀ(y − ȳ)‖∞ / (n ρ)``); classification: the
    λ of ``1/n Σ log(1 + e^{-y z}) + λ‖w‖₁`` (``‖Xᵀ(p − p̄)‖∞ / n``, p = (y+1)/2).
    """
    n = X.shape[0]
    if task == "regression":
        return float(np.max(np.abs(X.T @ (y - y.mean())))) / (n * l1_ratio)
    p = (y + 1.0) / 2.0
    return float(np.max(np.abs(X.T @ (p - p.mean())))) / n


@dataclass(frozen=True)
class EstimatorCase:
    """One estimator: cdlearn's, scikit-learn's default, and the tight reference.

    Each factory gets the problem's parameters (``params(problem)``) and returns
    an unfitted estimator; ``coef`` reads the compared coefficients.
    """

    name: str
    task: str
    params: Callable[[Problem], dict]
    cdlearn: Callable[[dict], object]
    sklearn: Callable[[dict], object]
    reference: Callable[[dict], object]
    coef: Callable[[object], np.ndarray] = lambda est: np.ravel(est.coef_)


def _l1_alpha(rho=1.0):
    return lambda pb: dict(alpha=pb.alpha_factor * alpha_max(pb.X, pb.y, pb.task, rho))


def _l1_C(pb):
    return dict(C=1.0 / (pb.X.shape[0] * pb.alpha_factor * 10 * alpha_max(pb.X, pb.y, pb.task)))


def _cases() -> list[EstimatorCase]:
    from sklearn import linear_model as lm
    from sklearn import svm

    import cdlearn.estimators as cd

    tight = dict(tol=1e-14, max_iter=1_000_000)
    return [
        EstimatorCase("Lasso", "regression", _l1_alpha(),
                      lambda p: cd.Lasso(**p), lambda p: lm.Lasso(**p),
                      lambda p: lm.Lasso(**p, **tight)),
        EstimatorCase("ElasticNet", "regression", _l1_alpha(0.5),
                      lambda p: cd.ElasticNet(**p), lambda p: lm.ElasticNet(**p),
                      lambda p: lm.ElasticNet(**p, **tight)),
        EstimatorCase("Ridge", "regression", lambda pb: dict(alpha=1.0),
                      lambda p: cd.Ridge(**p), lambda p: lm.Ridge(**p),
                      lambda p: lm.Ridge(**p, solver="svd")),
        EstimatorCase("LogisticRegression l2", "classification", lambda pb: dict(C=1.0),
                      lambda p: cd.LogisticRegression(**p),
                      lambda p: lm.LogisticRegression(**p),
                      lambda p: lm.LogisticRegression(**p, solver="newton-cg", tol=1e-12,
                                                      max_iter=100_000)),
        # l1 at 10× the wide/standard fraction of λ_max: nearer λ_max than the
        # regressions, where an l1 logistic on separable (n ≪ d) data is well posed
        EstimatorCase("LogisticRegression l1", "classification", _l1_C,
                      lambda p: cd.LogisticRegression(penalty="l1", **p),
                      lambda p: lm.LogisticRegression(l1_ratio=1.0, solver="saga", **p),
                      _skglm_l1_logistic),
        EstimatorCase("LinearSVC", "classification", lambda pb: dict(C=1.0),
                      lambda p: cd.LinearSVC(**p), lambda p: svm.LinearSVC(**p),
                      SquaredHingeReference),
    ]


class SquaredHingeReference:
    """``C Σ max(0, 1 − y(xᵀw + b))² + ½‖w‖²`` (b unpenalised) by scipy's Newton-CG.

    liblinear penalises its bias; scaling it out (``intercept_scaling=1e4``)
    left 6.6e-3 relative error on leukemia. The objective is piecewise quadratic,
    so Newton with its generalized Hessian converges to machine precision.
    """

    def __init__(self, p):
        self.C = p["C"]

    def fit(self, X, y):
        from scipy.optimize import minimize

        X = np.asarray(X, dtype=np.float64)
        d = X.shape[1]
        C = self.C

        def parts(v):
            m = 1.0 - y * (X @ v[:d] + v[d])
            return m, m > 0

        def fun(v):
            m, act = parts(v)
            return C * np.sum(m[act] ** 2) + 0.5 * v[:d] @ v[:d]

        def jac(v):
            m, act = parts(v)
            r = np.where(act, -2.0 * C * y * m, 0.0)
            return np.append(X.T @ r + v[:d], r.sum())

        def hessp(v, s):
            _, act = parts(v)
            u = np.where(act, 2.0 * C * (X @ s[:d] + s[d]), 0.0)
            return np.append(X.T @ u + s[:d], u.sum())

        res = minimize(fun, np.zeros(d + 1), jac=jac, hessp=hessp, method="Newton-CG",
                       options=dict(xtol=1e-15, maxiter=10_000))
        self.coef_ = res.x[None, :d]
        self.intercept_ = res.x[d:]
        return self


def _skglm_l1_logistic(p):
    """skglm's l1 logistic (unpenalised intercept) for ``1/n Σ log(1+e^{-yz}) + λ‖w‖₁``."""
    from skglm import SparseLogisticRegression

    class _Ref:
        def fit(self, X, y):
            lam = 1.0 / (p["C"] * X.shape[0])
            m = SparseLogisticRegression(alpha=lam, fit_intercept=True, tol=1e-13,
                                         max_iter=10_000).fit(X, y)
            self.coef_ = m.coef_
            return self

    return _Ref()


def _timed(make, X, y, repeats):
    """``(fitted estimator, median seconds)``; one untimed fit first (numba, caches)."""
    make().fit(X, y)
    times, est = [], None
    for _ in range(repeats):
        est = make()
        t = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - t)
    return est, statistics.median(times)


#: the accuracy of the "scikit-learn at the same accuracy" column (cdlearn's default tol)
SAME_ERR = 1e-4
#: its search: scikit-learn's tol divided by 100 per step, at most this many steps ...
TOL_STEPS = 5
#: ... and none after a fit that took longer than this (seconds)
TOL_SEARCH_BUDGET = 10.0


def _same_accuracy(case, p, pb, err, repeats):
    """scikit-learn's median time at the largest of tol, tol/100, ... with err ≤ SAME_ERR.

    Untimed fits find that tol (``max_iter`` raised 100× so that tol decides);
    then ``repeats`` timed fits. None when no step reaches it within the budget.
    """
    base = case.sklearn(p)
    tol = base.get_params().get("tol")
    if err(base.fit(pb.X, pb.y)) <= SAME_ERR:
        return _timed(lambda: case.sklearn(p), pb.X, pb.y, repeats)[1]
    if tol is None:
        return None
    max_iter = base.get_params().get("max_iter")
    extra = {"max_iter": 100 * max_iter} if isinstance(max_iter, int) else {}
    for _ in range(TOL_STEPS):
        tol /= 100.0
        q = dict(p, tol=tol, **extra)
        t = time.perf_counter()
        fitted = case.sklearn(q).fit(pb.X, pb.y)
        if err(fitted) <= SAME_ERR:
            return _timed(lambda q=q: case.sklearn(q), pb.X, pb.y, repeats)[1]
        if time.perf_counter() - t > TOL_SEARCH_BUDGET:
            return None
    return None


def measure(case: EstimatorCase, pb: Problem, repeats: int) -> dict:
    p = case.params(pb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = case.coef(case.reference(p).fit(pb.X, pb.y))
        scale = float(np.max(np.abs(ref)))

        def err(est):
            return float(np.max(np.abs(case.coef(est) - ref))) / scale if scale > 0 else np.nan

        cd_est, t_cd = _timed(lambda: case.cdlearn(p), pb.X, pb.y, repeats)
        sk_est, t_sk = _timed(lambda: case.sklearn(p), pb.X, pb.y, repeats)
        t_same = _same_accuracy(case, p, pb, err, repeats)

    return dict(estimator=case.name, problem=pb.name, wide=pb.wide,
                shape=f"{pb.X.shape[0]}×{pb.X.shape[1]}", err=err(cd_est), err_sk=err(sk_est),
                t_cd=t_cd, t_sk=t_sk, t_same=t_same, solver=getattr(cd_est, "solver_", ""))


def table(rows: list[dict]) -> str:
    """Markdown: one row per standard problem, one (worst / median) for the wide ones.

    ``same``: cdlearn's time over scikit-learn's at the same accuracy
    (:func:`_same_accuracy`; "–" where its search did not get there).
    """
    lines = ["| estimator | problem | cdlearn err | scikit-learn default err | "
             "cdlearn ms | scikit-learn ms | time ratio | ratio at err ≤ 1e-4 |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]

    def same(r):
        return None if r["t_same"] is None else r["t_cd"] / r["t_same"]

    def fmt(x):
        return "–" if x is None else f"{x:.2f}"

    for name in dict.fromkeys(r["estimator"] for r in rows):
        mine = [r for r in rows if r["estimator"] == name]
        for r in mine:
            if not r["wide"]:
                lines.append(f"| {name} | {r['problem']} ({r['shape']}) | {r['err']:.1e} | "
                             f"{r['err_sk']:.1e} | {1e3 * r['t_cd']:.1f} | "
                             f"{1e3 * r['t_sk']:.1f} | {r['t_cd'] / r['t_sk']:.2f} | "
                             f"{fmt(same(r))} |")
        wide = [r for r in mine if r["wide"]]
        if wide:
            ratios = [r["t_cd"] / r["t_sk"] for r in wide]
            sk = [r["err_sk"] for r in wide]
            found = [same(r) for r in wide if same(r) is not None]
            same_text = (f"{max(found):.2f} ({statistics.median(found):.2f})"
                         + ("" if len(found) == len(wide) else f", {len(found)} of {len(wide)}")
                         if found else "–")
            lines.append(
                f"| {name} | wide ×{len(wide)}: max (median) | "
                f"{max(r['err'] for r in wide):.1e} | {min(sk):.0e}–{max(sk):.0e} | "
                f"{1e3 * statistics.median(r['t_cd'] for r in wide):.1f} | "
                f"{1e3 * statistics.median(r['t_sk'] for r in wide):.1f} | "
                f"{max(ratios):.2f} ({statistics.median(ratios):.2f}) | {same_text} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two problems per task, one run")
    ap.add_argument("--repeats", type=int, default=None, help="fits per timing (median)")
    ap.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = ap.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    rows = []
    pbs = problems(args.quick)
    for case in _cases():
        for pb in pbs:
            if pb.task != case.task:
                continue
            r = measure(case, pb, repeats)
            rows.append(r)
            same = "–" if r["t_same"] is None else f"{1e3 * r['t_same']:.1f} ms"
            print(f"{r['estimator']:<24} {r['problem']:<22} err {r['err']:.2e} "
                  f"sk {r['err_sk']:.2e} cd {1e3 * r['t_cd']:.1f} ms sk {1e3 * r['t_sk']:.1f} ms"
                  f" sk@1e-4 {same} ({r['solver']})", flush=True)
    out = (f"err = ‖coef − coef*‖∞ / ‖coef*‖∞ against a tightly converged reference; "
           f"time ratio = cdlearn / scikit-learn, medians of {repeats} fits, default "
           "settings for both; wide rows: the worst err, scikit-learn's err range, median "
           "times, worst (median) ratio. Last column: cdlearn's time over scikit-learn's "
           "with its tol divided by 100 until its err ≤ 1e-4 (max_iter ×100; – : not "
           f"reached in {TOL_STEPS} steps or a step took over {TOL_SEARCH_BUDGET:g} s).\n\n" + table(rows) + "\n")
    print("\n" + out)
    if args.out is not None:
        args.out.write_text(out)


if __name__ == "__main__":
    main()
