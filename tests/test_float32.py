"""float32 input: scikit-learn's output dtypes, float64-quality fits, X never upcast."""

import gc
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import linear_model, svm

import cdlearn

N, D = 120, 8


def _data(fmt, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    w = rng.standard_normal(D)
    y = X @ w + 0.3 * rng.standard_normal(N)
    X = X.astype(dtype)
    return (sp.csr_matrix(X) if fmt == "csr" else X), y.astype(dtype)


#: (cdlearn estimator, scikit-learn estimator, target kind)
PAIRS = {
    "Lasso": (lambda: cdlearn.Lasso(alpha=0.01), lambda: linear_model.Lasso(alpha=0.01), "reg"),
    "ElasticNet": (lambda: cdlearn.ElasticNet(alpha=0.01),
                   lambda: linear_model.ElasticNet(alpha=0.01), "reg"),
    "Ridge": (lambda: cdlearn.Ridge(alpha=1.0), lambda: linear_model.Ridge(alpha=1.0), "reg"),
    "LassoCV": (lambda: cdlearn.LassoCV(cv=3), lambda: linear_model.LassoCV(cv=3), "reg"),
    "LogisticRegression": (lambda: cdlearn.LogisticRegression(),
                           lambda: linear_model.LogisticRegression(), "bin"),
    "LogisticRegression-3": (lambda: cdlearn.LogisticRegression(),
                             lambda: linear_model.LogisticRegression(), "3"),
    "LinearSVC": (lambda: cdlearn.LinearSVC(), lambda: svm.LinearSVC(), "bin"),
    "LogisticRegressionCV": (lambda: cdlearn.LogisticRegressionCV(cv=3),
                             lambda: linear_model.LogisticRegressionCV(cv=3), "bin"),
}


def _target(y, kind):
    if kind == "reg":
        return y
    if kind == "bin":
        return (y > 0).astype(np.int64)
    return np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))


def _dtypes(est, X):
    out = {"coef_": est.coef_.dtype, "intercept_": np.asarray(est.intercept_).dtype,
           "predict": est.predict(X).dtype}
    for name in ("decision_function", "predict_proba"):
        if hasattr(est, name):
            out[name] = getattr(est, name)(X).dtype
    if hasattr(est, "mse_path_"):
        out["mse_path_"] = est.mse_path_.dtype
    return out


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(PAIRS))
def test_output_dtypes_are_scikit_learns(name, dtype, fmt):
    ours, theirs, kind = PAIRS[name]
    X, y = _data(fmt, dtype)
    t = _target(y, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _dtypes(theirs().fit(X, t), X)
        got = _dtypes(ours().fit(X, t), X)
    assert got == expected


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("name", ["Lasso", "ElasticNet", "Ridge", "LogisticRegression",
                                  "LinearSVC"])
def test_float32_fit_matches_the_float64_fit(name, fmt):
    ours, _, kind = PAIRS[name]
    X32, y = _data(fmt, np.float32)
    X64 = X32.astype(np.float64)
    t = _target(y.astype(np.float64), kind)
    a = ours().set_params(tol=1e-10).fit(X32, t)
    b = ours().set_params(tol=1e-10).fit(X64, t)
    assert a.solver_ == b.solver_
    c32, c64 = np.asarray(a.coef_, np.float64), np.asarray(b.coef_, np.float64)
    assert np.linalg.norm(c32 - c64) <= 1e-4 * np.linalg.norm(c64)
    np.testing.assert_allclose(np.asarray(a.intercept_, np.float64),
                               np.asarray(b.intercept_, np.float64),
                               rtol=1e-4, atol=1e-4 * np.linalg.norm(c64))


def _fit_peak(est, X, y):
    est.fit(X, y)  # numba's compile or cache load is not counted
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        est.fit(X, y)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("name", ["Lasso", "Ridge", "LogisticRegression", "LinearSVC"])
def test_auto_routes_do_not_upcast_float32_x(name, fmt):
    """A float64 copy of a float32 matrix alone is 2× its bytes (dense) or 1× (CSR data)."""
    n, d = 400, 600
    rng = np.random.default_rng(3)
    A = rng.standard_normal((n, d)).astype(np.float32)
    A[rng.random((n, d)) < 0.7] = 0.0
    X = sp.csr_matrix(A) if fmt == "csr" else A
    y = A.astype(np.float64) @ rng.standard_normal(d)
    ours, _, kind = PAIRS[name]
    est = ours().set_params(max_iter=3)
    nbytes = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if fmt == "csr" else X.nbytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peak = _fit_peak(est, X, _target(y, kind))
    assert peak <= 1.5 * nbytes + 12 * 8 * (n + d), (est.solver_, peak / nbytes)
