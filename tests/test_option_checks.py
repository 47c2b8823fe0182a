"""Options that used to be silently wrong: NaN/inf values, negative seeds, options of
another method, internal names in messages. Every entry point: ``cdlearn.solve``
(binary and one-vs-rest), ``cdlearn.path`` and the estimators."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cdlearn
import cdlearn.paths
from cdlearn.api import METHOD_OPTIONS
from cdlearn.estimators import (
    ElasticNet,
    Lasso,
    LassoCV,
    LinearSVC,
    LogisticRegression,
    LogisticRegressionCV,
    Ridge,
)

NAN, INF = math.nan, math.inf


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(30) > 0, 1.0, -1.0)
    return X, y, X @ np.arange(1.0, 5.0), np.arange(30) % 3


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
@pytest.mark.parametrize("name, extra", [
    ("lam", {}), ("tol", {}), ("intercept0", {"fit_intercept": True}),
    ("l1_ratio", {"penalty": "elastic_net"}), ("power", {"solver": "primal-cd"}),
])
def test_solve_non_finite_option(data, name, extra, bad):
    X, y, _, y3 = data
    kw = dict(loss="logistic", lam=0.1, **extra)
    kw[name] = bad
    for target in (y, y3):  # binary and one-vs-rest
        with pytest.raises(ValueError, match=f"^{name} must be finite"):
            cdlearn.solve(X, target, **kw)


@pytest.mark.parametrize("kw, name", [
    ({"lams": [0.1, NAN]}, "lams"), ({"eps": NAN}, "eps"), ({"tol": INF}, "tol"),
    ({"l1_ratio": NAN, "penalty": "elastic_net"}, "l1_ratio"),
    ({"intercept0": NAN, "fit_intercept": True}, "intercept0"), ({"n_lams": 2.5}, "n_lams"),
])
def test_path_bad_option(data, kw, name):
    X, y, _, _ = data
    with pytest.raises((ValueError, TypeError), match=name):
        cdlearn.path(X, y, loss="logistic", n_lams=3, **{**kw})


@pytest.mark.parametrize("est, name", [
    (Lasso(alpha=NAN), "alpha"), (ElasticNet(l1_ratio=NAN), "l1_ratio"),
    (Ridge(alpha=INF), "alpha"), (LogisticRegression(C=NAN), "C"),
    (LogisticRegression(l1_ratio=NAN), "l1_ratio"),  # unused with penalty="l2", still wrong
    (LinearSVC(tol=NAN), "tol"), (Lasso(max_iter=NAN), "max_iter"),
    (Lasso(max_iter=10.5), "max_iter"), (LassoCV(eps=NAN), "eps"),
    (LassoCV(n_alphas=0), "n_alphas"), (LassoCV(n_alphas=2.5), "n_alphas"),
    (LassoCV(alphas=0), "alphas"), (LassoCV(n_jobs=NAN), "n_jobs"),
    (LogisticRegressionCV(n_jobs=1.5), "n_jobs"),
])
def test_estimator_bad_option(data, est, name):
    X, y, yr, _ = data
    target = y if isinstance(est, LogisticRegression | LinearSVC | LogisticRegressionCV) else yr
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b") as info:
        est.fit(X, target)
    assert "n_lams" not in str(info.value) and "max_epochs" not in str(info.value)


# --------------------------------------------------------------------------- seeds
def test_negative_seed_is_one_error_everywhere(data):
    X, y, yr, y3 = data
    msg = r"^seed must be a non-negative integer or None, got -1$"
    with pytest.raises(ValueError, match=msg):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, seed=-1)
    with pytest.raises(ValueError, match=msg):
        cdlearn.solve(X, y3, loss="logistic", lam=0.1, seed=-1)
    with pytest.raises(ValueError, match=msg):
        cdlearn.path(X, y, loss="logistic", n_lams=2, seed=-1)
    with pytest.raises(TypeError, match="^seed must be"):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, seed=1.5)
    for est, target in [(Lasso(), yr), (Ridge(), yr), (LogisticRegression(), y),
                        (LinearSVC(), y), (LassoCV(n_alphas=2, cv=2), yr),
                        (LogisticRegressionCV(Cs=2, cv=2), y)]:
        for bad in (-1, NAN):
            with pytest.raises(ValueError, match="^random_state must be"):
                est.set_params(random_state=bad).fit(X, target)
    # seed 0 and a large seed are accepted, and a seed is reproducible
    a = cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="primal-cd", seed=2**70, tol=1e-3)
    b = cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="primal-cd", seed=2**70, tol=1e-3)
    np.testing.assert_array_equal(a.w, b.w)


# --------------------------------------------------------------------------- other methods' options
NON_DEFAULT = {"sampling": "uniform", "power": 2.0, "primal_step": "lipschitz",
               "dual_step": "fixed", "w0": np.zeros(4), "alpha0": np.zeros(30)}


def _cases():
    from cdlearn.solvers import SOLVERS

    for option, (_, methods) in METHOD_OPTIONS.items():
        for solver in SOLVERS:
            if solver not in methods:
                yield solver, option


@pytest.mark.parametrize("solver, option", list(_cases()))
def test_option_of_another_method_raises(data, solver, option):
    X, y, _, _ = data
    with pytest.raises(ValueError, match=rf"solver='{solver}' does not take {option}\b"):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, solver=solver, max_epochs=1,
                      **{option: NON_DEFAULT[option]})


def test_option_of_another_method_in_path_and_estimators(data):
    X, y, yr, y3 = data
    match = "solver='newton-cd' does not take sampling"
    with pytest.raises(ValueError, match=match):
        cdlearn.path(X, y, loss="logistic", penalty="l2", n_lams=2, solver="newton-cd",
                     sampling="uniform")
    with pytest.raises(ValueError, match=match):
        cdlearn.solve(X, y3, loss="logistic", lam=0.1, solver="newton-cd", sampling="uniform")
    for est, target in [(Ridge(solver="newton-cd", sampling="uniform"), yr),
                        (LogisticRegression(solver="newton-cd", sampling="uniform"), y),
                        (LinearSVC(solver="newton-cd", sampling="uniform"), y3),
                        (LogisticRegressionCV(Cs=2, cv=2, solver="newton-cd",
                                              sampling="uniform"), y)]:
        with pytest.raises(ValueError, match=match):
            est.fit(X, target)
    with pytest.raises(ValueError, match="solver='newton-cg' does not take power"):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="newton-cg", power=0.5)


@pytest.mark.parametrize("option", list(METHOD_OPTIONS))
def test_auto_runs_a_method_taking_the_options_given(data, option):
    """"auto" must not route an option to a method that would drop it."""
    X, y, _, _ = data
    res = cdlearn.solve(X, y, loss="logistic", lam=0.1, tol=1e-9,
                        **{option: NON_DEFAULT[option]})
    assert res.solver in METHOD_OPTIONS[option][1]
    ref = cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="newton-cd", tol=1e-12)
    assert res.primal == pytest.approx(ref.primal, rel=1e-7)


@pytest.mark.parametrize("cls, target", [(LassoCV, "yr"), (LogisticRegressionCV, "y")])
def test_cv_folds_run_the_requested_solver(data, monkeypatch, cls, target):
    """The folds' paths used to run solver="auto" whatever ``solver`` said."""
    X, y, yr, _ = data
    seen = []
    original = cdlearn.paths.solve

    def spy(*args, **kw):
        seen.append(kw.get("solver"))
        return original(*args, **kw)

    monkeypatch.setattr(cdlearn.paths, "solve", spy)
    kw = {"n_alphas": 3} if cls is LassoCV else {"Cs": 2}
    est = cls(solver="fista", cv=2, **kw).fit(X, y if target == "y" else yr)
    assert set(seen) == {"fista"} and len(seen) == (6 if cls is LassoCV else 4)
    assert est.solver_ == "fista"
