"""Defects found by scikit-learn's own tests (``tests_sklearn``, issue 18), one test each.

Each test states scikit-learn 1.9's behaviour (checked against scikit-learn
itself where it is a shape or a type) and fails on the code before the fix.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from cdlearn.estimators import (
    ElasticNet,
    Lasso,
    LassoCV,
    LinearSVC,
    LogisticRegression,
    Ridge,
)


def _regression(n=40, d=5, k=1, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    Y = X @ rng.randn(d, k) + 0.3 + 0.1 * rng.randn(n, k)
    return X, Y


@pytest.mark.parametrize("name", ["Lasso", "ElasticNet", "Ridge"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_one_target_shapes_are_scikit_learns(name, fit_intercept):
    # y of shape (n, 1) gave coef_ (1, d); a 1-d y gave a Python float intercept_
    X, Y = _regression()
    ours, theirs = globals()[name], getattr(sk, name)
    for y in (Y, Y[:, 0]):
        a = ours(alpha=0.01, fit_intercept=fit_intercept).fit(X, y)
        b = theirs(alpha=0.01, fit_intercept=fit_intercept).fit(X, y)
        assert a.coef_.shape == b.coef_.shape == (X.shape[1],)
        assert np.shape(a.intercept_) == np.shape(b.intercept_)
        assert type(a.intercept_) is type(b.intercept_)
        assert a.predict(X).shape == b.predict(X).shape
        np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-3)
        if name != "Ridge":
            assert isinstance(a.n_iter_, int) and np.ndim(a.dual_gap_) == 0


def test_ridge_one_alpha_per_target():
    X, Y = _regression(k=3)
    alphas = np.array([0.1, 10.0, 0.0])
    ours = Ridge(alpha=alphas, tol=1e-10).fit(X, Y)
    theirs = sk.Ridge(alpha=alphas).fit(X, Y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-7, atol=1e-9)
    for k, a in enumerate(alphas):  # the same as one fit per target
        one = Ridge(alpha=a, tol=1e-10).fit(X, Y[:, k])
        np.testing.assert_allclose(ours.coef_[k], one.coef_, rtol=1e-9, atol=1e-12)
    same = Ridge(alpha=[2.0], tol=1e-10).fit(X, Y)  # one alpha for all targets
    np.testing.assert_allclose(same.coef_, Ridge(alpha=2.0, tol=1e-10).fit(X, Y).coef_)
    with pytest.raises(ValueError, match="Number of targets and number of penalties do not "
                                         "correspond: 2 != 3"):
        Ridge(alpha=[1.0, 2.0]).fit(X, Y)
    with pytest.raises(ValueError, match=r"alpha\[1\] must be >= 0"):
        Ridge(alpha=[1.0, -2.0, 1.0]).fit(X, Y)


def test_sparse_coef_of_lasso_and_elastic_net():
    X, Y = _regression(d=8)
    for est in (Lasso(alpha=0.3), ElasticNet(alpha=0.3)):
        est.fit(X, Y[:, 0])
        sc = est.sparse_coef_
        assert sp.issparse(sc) and sc.format == "csr" and sc.shape == (1, X.shape[1])
        np.testing.assert_array_equal(sc.toarray()[0], est.coef_)
    est = Lasso(alpha=0.3).fit(X, np.column_stack([Y[:, 0], -Y[:, 0]]))
    assert est.sparse_coef_.shape == (2, X.shape[1])


@pytest.mark.parametrize("cls", [LogisticRegression, LinearSVC])
def test_sparsify_and_densify(cls):
    rng = np.random.RandomState(0)
    X = rng.randn(60, 6)
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.randn(60) > 0).astype(int)
    with pytest.raises(NotFittedError, match=f"Estimator, {cls.__name__}, must be fitted "
                                             "before sparsifying"):
        cls().sparsify()
    est = cls(C=0.1).fit(X, y)
    dense = est.decision_function(X)
    assert est.sparsify() is est and sp.issparse(est.coef_)
    np.testing.assert_allclose(est.decision_function(X), dense, rtol=1e-12)
    np.testing.assert_allclose(est.decision_function(sp.csr_matrix(X)), dense, rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X), (dense > 0).astype(int))
    est.fit(X, y)  # a refit from a sparse coef_ (warm_start reads it) works
    assert est.densify() is est and isinstance(est.coef_, np.ndarray)
    np.testing.assert_allclose(est.decision_function(X), dense, rtol=1e-12)


def test_tol_zero_runs_to_max_iter():
    # scikit-learn allows tol=0 (max_iter decides) but for LinearSVC; cdlearn refused it
    X, Y = _regression(d=8)
    y = Y[:, 0]
    for est in (Lasso(alpha=0.01, tol=0, max_iter=1), ElasticNet(alpha=0.01, tol=0, max_iter=1),
                LassoCV(tol=0, max_iter=1, cv=3)):
        with pytest.warns(ConvergenceWarning):
            est.fit(X, y)
    # ... and, given the epochs, converges as tightly as at a small tol
    est = ElasticNet(alpha=0.01, tol=0, max_iter=10_000).fit(X, y)
    ref = sk.ElasticNet(alpha=0.01, tol=1e-14, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-6)
    ridge = Ridge(alpha=1.0, tol=0).fit(X, y)  # one Newton step solves it; no warning needed
    np.testing.assert_allclose(ridge.coef_, sk.Ridge(alpha=1.0).fit(X, y).coef_, rtol=1e-9)
    logistic = LogisticRegression(tol=0).fit(X, y > 0.3)
    ref = sk.LogisticRegression(tol=1e-12, max_iter=10_000).fit(X, y > 0.3)
    np.testing.assert_allclose(logistic.coef_, ref.coef_, rtol=1e-6)
    with pytest.raises(ValueError, match="tol must be > 0"):
        LinearSVC(tol=0).fit(X, y > 0.3)


def test_max_iter_zero():
    # scikit-learn's classifiers take max_iter=0 (the starting point); its regressors refuse it
    X, Y = _regression(d=4)
    y = Y[:, 0] > 0.3
    for est in (LogisticRegression(max_iter=0), LinearSVC(max_iter=0)):
        with pytest.warns(ConvergenceWarning):
            est.fit(X, y)
        np.testing.assert_array_equal(est.coef_, np.zeros((1, X.shape[1])))
        np.testing.assert_array_equal(est.intercept_, [0.0])
        np.testing.assert_array_equal(est.n_iter_, [0])
    np.testing.assert_allclose(est.decision_function(X), 0.0)
    np.testing.assert_allclose(LogisticRegression(max_iter=0).fit(X, y).predict_proba(X), 0.5)
    for est in (Lasso(max_iter=0), Ridge(max_iter=0)):
        with pytest.raises(ValueError, match="max_iter must be >= 1, got 0"):
            est.fit(X, Y[:, 0])


def test_dual_gap_is_scikit_learns():
    # scikit-learn's test_lasso_dual_gap: dual point θ = R / (‖XᵀR‖∞ / nα); cdlearn reported
    # its solver's certificate (another dual point: 3.8e-12 against the test's value)
    from cdlearn.estimators._regression import enet_dual_gap

    rng = np.random.RandomState(0)
    X = rng.randn(10, 30)
    y = X[:, :5] @ rng.randn(5) + rng.randn(10)
    n = len(y)
    alpha = 0.01 * np.max(np.abs(X.T @ y)) / n
    clf = Lasso(alpha=alpha, fit_intercept=False).fit(X, y)
    R = y - X @ clf.coef_
    primal = 0.5 * np.mean(R ** 2) + alpha * np.sum(np.abs(clf.coef_))
    R /= np.max(np.abs(X.T @ R) / (n * alpha))
    np.testing.assert_allclose(clf.dual_gap_, primal - 0.5 * (np.mean(y ** 2)
                                                             - np.mean((y - R) ** 2)), rtol=1e-7)
    # weights and intercept: the gap of the centred, √s-scaled problem without them
    sw = rng.uniform(0.5, 2, n)
    sw *= n / sw.sum()
    xm, ym = sw @ X / n, sw @ y / n
    Xt, yt = np.sqrt(sw)[:, None] * (X - xm), np.sqrt(sw) * (y - ym)
    w = clf.coef_ + 0.01 * rng.randn(30)
    for rho in (1.0, 0.3, 0.0):
        got = enet_dual_gap(X, y, sw, w, ym - xm @ w, 0.1, rho, fit_intercept=True)
        ref = enet_dual_gap(Xt, yt, np.ones(n), w, 0.0, 0.1, rho, fit_intercept=False)
        assert got > 0
        np.testing.assert_allclose(got, ref, rtol=1e-9)
    est = ElasticNet(alpha=0.1, l1_ratio=0.3, tol=1e-8).fit(X, y, sample_weight=sw)
    assert 0 <= est.dual_gap_ <= 1e-6  # a certificate: ≥ 0, and small at a tight fit


def test_positive_with_precompute():
    # precompute=True chose newton-cd, which refuses positive=True
    X, y = [[-1], [0], [1]], [1, 0, -1]
    for precompute in (False, True):
        assert Lasso(alpha=0.1, precompute=precompute, positive=True).fit(X, y).coef_[0] == 0.0


def test_convergence_warning_texts_are_scikit_learns():
    X = np.array([[-1, -1, 1, 1], [1, 1, -1, -1]])
    y = np.array([-1, 1])
    reg = Lasso(alpha=1e-10, fit_intercept=False, warm_start=True, max_iter=1, tol=1e-10)
    reg.coef_ = np.array([1, 1, 1, 1000])
    with pytest.warns(ConvergenceWarning, match="Objective did not converge. You might want to "
                                                "increase the number of iterations"):
        reg.fit(X, y)
    rng = np.random.RandomState(0)
    Xc = rng.randn(80, 5)
    yc = (Xc[:, 0] + 0.5 * rng.randn(80) > 0).astype(int)
    for est, text in ((LinearSVC(max_iter=1), "Liblinear failed to converge, increase the "
                                               "number of iterations."),
                      (LogisticRegression(solver="newton-cg", max_iter=1),
                       "newton-cg failed to converge.* Increase the number of iterations."),
                      (LogisticRegression(solver="lbfgs", max_iter=1), "lbfgs failed to converge")):
        with pytest.warns(ConvergenceWarning, match=text):
            est.fit(Xc, yc)
    assert isinstance(LinearSVC(max_iter=2).fit(Xc, yc).n_iter_, int)


def test_path_arguments_are_scikit_learns():
    from cdlearn import lasso_path

    X, Y = _regression(d=4)
    with pytest.raises(ValueError, match="Unexpected parameters in params"):
        lasso_path(X, Y[:, 0], normalize=True, fit_intercept=True)
    with pytest.warns(FutureWarning, match="'n_alphas' was deprecated in 1.9"):
        lasso_path(X, Y[:, 0], n_alphas=5)
    with pytest.warns(FutureWarning, match="'alphas=None' is deprecated"):
        lasso_path(X, Y[:, 0], alphas=None)
    assert len(lasso_path(X, Y[:, 0], alphas=5)[0]) == 5
    with pytest.raises(ValueError, match=r"alphas\[1\] == -1, must be >= 0.0."):
        LassoCV(alphas=[0.1, -1]).fit(X, Y[:, 0])
    with pytest.raises(TypeError, match=r"alphas\[2\] must be an instance of float, not str"):
        LassoCV(alphas=[1, 2, "3"]).fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="Automatic alpha grid generation is not supported "
                                         "for l1_ratio=0"):
        __import__("cdlearn").ElasticNetCV(l1_ratio=0).fit(X, Y[:, 0])


def test_precomputed_gram_array():
    # a Gram array was refused (ValueError); scikit-learn checks one entry and uses it
    X, Y = _regression(n=60, d=6)
    y = Y[:, 0]
    sw = np.random.RandomState(1).lognormal(size=60)
    w = sw * 60 / sw.sum()
    Xr = (X - np.average(X, axis=0, weights=w)) * np.sqrt(w)[:, None]
    ref = sk.ElasticNet(alpha=0.01, tol=1e-12, max_iter=100_000).fit(X, y, sample_weight=sw)
    ours = ElasticNet(alpha=0.01, precompute=Xr.T @ Xr).fit(X - np.average(X, axis=0, weights=w),
                                                             y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6)
    with pytest.raises(ValueError, match=r"did not pass validation.*element \(3,4\)"):
        ElasticNet(precompute=2 * Xr.T @ Xr).fit(X - np.average(X, axis=0, weights=w), y,
                                                 sample_weight=sw)


def test_small_tol_reaches_its_accuracy():
    # the gap target's floor (1e-12·P) capped the coefficients' accuracy near 1e-6, whatever
    # tol asked: scikit-learn's tests at tol=1e-9..1e-10 compare at rtol 1e-7
    rng = np.random.RandomState(0)
    w = rng.randn(20)
    w[10:] = 0
    X = rng.randn(50, 20)
    y = X @ w
    ref = sk.ElasticNet(tol=1e-15, max_iter=1_000_000).fit(X, y)
    for selection in ("cyclic", "random"):
        ours = ElasticNet(selection=selection, tol=1e-9, random_state=42).fit(X, y)
        assert np.abs(ours.coef_ - ref.coef_).max() <= 1e-8 * np.abs(ref.coef_).max()
    from sklearn.datasets import make_regression

    X, y = make_regression(n_samples=60, n_features=20, random_state=42, noise=1.0)
    ref = sk.Ridge(alpha=1.0, solver="cholesky").fit(X, y)
    for solver, tol in (("lsqr", 1e-10), ("sag", 1e-15)):  # scikit-learn's test_ridge_regression
        ours = Ridge(alpha=1.0, solver=solver, tol=tol).fit(X, y)
        assert np.abs(ours.coef_ - ref.coef_).max() <= 1e-9 * np.abs(ref.coef_).max()
        assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-6)
        assert ours.solver_ == solver  # scikit-learn's solver_: the name asked for


def test_unpenalised_with_scikit_learn_solver_names():
    # Ridge(alpha=0, solver="lsqr"/"sag") and LogisticRegression(C=inf, solver="newton-cg")
    # mapped to methods that need an l2 part (ValueError)
    X, Y = _regression(n=50, d=5)
    ols = sk.LinearRegression().fit(X, Y[:, 0])
    for solver in ("lsqr", "sparse_cg", "sag", "saga", "svd"):
        ours = Ridge(alpha=0, solver=solver, tol=1e-10).fit(X, Y[:, 0])
        np.testing.assert_allclose(ours.coef_, ols.coef_, rtol=1e-8)
    yc = (Y[:, 0] + np.random.RandomState(3).randn(50) > 0.3).astype(int)
    ref = sk.LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(X, yc)
    for solver in ("newton-cg", "lbfgs"):
        ours = LogisticRegression(C=np.inf, solver=solver, tol=1e-10).fit(X, yc)
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5)
    with pytest.raises(ValueError, match="Sample weights must be 1D array or scalar"):
        Ridge().fit(X, Y[:, 0], sample_weight=np.ones((50, 1)))


def test_enet_path_takes_scikit_learns_tuning_parameters():
    from cdlearn import enet_path

    X, Y = _regression(d=4)
    # one layout for both: C and F input round differently in λmax = ‖Xᵀy‖∞/n (the grids
    # differ by an ulp), which is not what the parameters below are checked for
    X = np.asfortranarray(X)
    ref = enet_path(X, Y[:, 0], alphas=3, tol=1e-10)
    got = enet_path(X, Y[:, 0], alphas=3, tol=1e-10, check_input=False,
                    precompute=True, copy_X=True, Xy=X.T @ Y[:, 0])
    np.testing.assert_array_equal(got[1], ref[1])


def test_logistic_scikit_learn_solver_names():
    # newton-cg on three classes raised (cdlearn's newton-cg is binary); C=inf with
    # newton-cg raised; liblinear's coef_ is float64 for float32 X in scikit-learn
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    ref = LogisticRegression(tol=1e-8).fit(X, y)
    for solver in ("newton-cg", "lbfgs", "newton-cholesky"):
        ours = LogisticRegression(solver=solver, tol=1e-8).fit(X, y)
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6)
    unpen = LogisticRegression(C=np.inf, solver="newton-cg").fit(X[:100, :2], y[:100] * 0 + (
        X[:100, 0] > 5.4))
    assert unpen.solver_ == "newton-cd"
    X32 = X.astype(np.float32)
    assert LogisticRegression(solver="liblinear").fit(X32, y == 2).coef_.dtype == np.float64
    assert LogisticRegression(solver="newton-cg").fit(X32, y == 2).coef_.dtype == np.float32
