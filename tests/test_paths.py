"""Regularisation paths and the cross-validated estimators."""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler

import cdlearn
from cdlearn.estimators import LassoCV, LogisticRegressionCV
from cdlearn.paths import lambda_grid, lambda_max, lasso_path, path


def _problem(classification=False, n=80, d=30, seed=0, sparse=False):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) + 0.5  # uncentred columns: the intercept matters
    w = np.zeros(d)
    w[:5] = rng.randn(5)
    z = X @ w + 1.0 + 0.3 * rng.randn(n)
    y = np.where(z > np.median(z), 1.0, -1.0) if classification else z
    return (sp.csc_matrix(X) if sparse else X), y


def test_lasso_path_leu_converged_and_zero_at_lambda_max(load):
    X, y = load("leu", binary=True)
    tol = 1e-7
    res = path(X, y, loss="squared", penalty="l1", n_lams=10, eps=5e-2, tol=tol,
               max_epochs=20_000, seed=0)
    assert res.coefs.shape == (10, X.shape[1])
    assert np.all(np.diff(res.lams) < 0)
    assert np.all(res.converged)
    assert np.all(res.gaps <= tol * res.primal0)
    np.testing.assert_array_equal(res.coefs[0], 0.0)  # λ_max gives w = 0
    assert np.count_nonzero(res.coefs[-1]) > 0
    assert res.n_epochs[0] == 0  # w = 0 is certified optimal at once


@pytest.mark.parametrize("loss,penalty,sparse", [
    ("squared", "l1", False),
    ("squared", "elastic_net", True),
    ("logistic", "l1", True),
    ("squared_hinge", "l1", False),
])
def test_lambda_max_with_intercept(loss, penalty, sparse):
    X, y = _problem(loss != "squared", sparse=sparse)
    kw = dict(loss=loss, penalty=penalty, l1_ratio=0.5, fit_intercept=True)
    lmax = lambda_max(X, y, **kw)
    at = cdlearn.solve(X, y, lam=lmax, tol=1e-10, max_epochs=10_000, **kw)
    np.testing.assert_array_equal(at.w, 0.0)
    below = cdlearn.solve(X, y, lam=0.95 * lmax, tol=1e-10, max_epochs=10_000, **kw)
    assert np.count_nonzero(below.w) > 0


@pytest.mark.parametrize("loss,penalty", [("squared", "elastic_net"), ("logistic", "l2"),
                                          ("logistic", "l1")])
def test_path_every_point_certified(loss, penalty):
    X, y = _problem(loss == "logistic", sparse=True)
    tol = 1e-8
    res = path(X, y, loss=loss, penalty=penalty, l1_ratio=0.7, n_lams=12, eps=1e-2,
               fit_intercept=True, tol=tol, max_epochs=50_000, seed=1)
    assert np.all(res.converged)
    assert np.all(res.gaps <= tol * res.primal0)
    assert res.intercepts.shape == (12,) and res.n_epochs.shape == (12,)
    # each point matches a cold solve at the same λ (objective within the tolerance)
    for i in (3, 11):
        cold = cdlearn.solve(X, y, loss=loss, penalty=penalty, l1_ratio=0.7, lam=res.lams[i],
                             fit_intercept=True, tol=tol, max_epochs=50_000, seed=1)
        assert abs(cold.primal - res.primals[i]) <= 2 * tol * res.primal0
    if penalty == "l2":
        norms = np.linalg.norm(res.coefs, axis=1)
        assert np.all(np.diff(norms) > 0)  # less regularisation, larger weights
        assert norms[0] < 0.05 * norms[-1]  # glmnet's start is near zero


def test_warm_started_path_is_cheaper_than_cold_solves():
    X, y = _problem(False, n=200, d=50, seed=3)
    kw = dict(loss="squared", penalty="l1", tol=1e-8, max_epochs=50_000, seed=0)
    res = path(X, y, n_lams=10, eps=1e-2, **kw)
    cold = [cdlearn.solve(X, y, lam=lam, **kw).n_epochs for lam in res.lams]
    assert res.n_epochs.sum() < sum(cold)


def test_lambda_grid():
    g = lambda_grid(2.0, 5, 1e-2)
    np.testing.assert_allclose(g, np.geomspace(2.0, 0.02, 5))
    assert lambda_grid(0.0, 3).shape == (3,)  # degenerate (constant y): still a grid
    with pytest.raises(ValueError, match="n_lams"):
        lambda_grid(1.0, 0)


def test_lasso_path_matches_sklearn():
    X, y = _problem(False, n=60, d=20, seed=2)
    X, y = X - X.mean(axis=0), y - y.mean()  # lasso_path fits no intercept
    a_ref, c_ref, g_ref = sk.lasso_path(X, y, eps=1e-2, alphas=10, tol=1e-14,
                                        max_iter=100_000)
    alphas, coefs, gaps, n_iter = lasso_path(X, y, eps=1e-2, n_alphas=10, tol=1e-12,
                                             max_epochs=100_000, return_n_iter=True)
    np.testing.assert_allclose(alphas, a_ref, rtol=1e-12)
    assert coefs.shape == c_ref.shape == (20, 10)
    np.testing.assert_allclose(coefs, c_ref, atol=1e-6)
    assert gaps.shape == (10,) and n_iter.shape == (10,)
    # same objective values along the path, to 1e-8 relative
    for k, a in enumerate(alphas):
        def f(w, a=a):
            r = y - X @ w
            return r @ r / (2 * len(y)) + a * np.abs(w).sum()
        assert abs(f(coefs[:, k]) - f(c_ref[:, k])) <= 1e-8 * f(c_ref[:, k])


def test_lasso_cv_matches_sklearn():
    X, y = load_diabetes(return_X_y=True)
    cv = KFold(5, shuffle=True, random_state=0)
    ref = sk.LassoCV(alphas=20, cv=cv, tol=1e-10, max_iter=100_000).fit(X, y)
    ours = LassoCV(alphas=20, cv=cv, tol=1e-9, max_iter=100_000, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.alphas_, ref.alphas_, rtol=1e-12)
    assert ours.mse_path_.shape == ref.mse_path_.shape == (20, 5)
    np.testing.assert_allclose(ours.mse_path_, ref.mse_path_, rtol=1e-4)
    assert ours.alpha_ == ref.alpha_
    # refit on the full data at alpha_
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-4, atol=1e-3)
    assert ours.score(X, y) == pytest.approx(ref.score(X, y), rel=1e-6)


def test_lasso_cv_parallel_folds_match_sequential():
    X, y = _problem(False, n=120, d=15, seed=5)
    kw = dict(alphas=8, cv=KFold(4), tol=1e-8, random_state=0)
    seq = LassoCV(**kw).fit(X, y)
    par = LassoCV(n_jobs=2, **kw).fit(X, y)
    # not bit-identical: workers run BLAS with another thread count (rounding)
    np.testing.assert_allclose(par.mse_path_, seq.mse_path_, rtol=1e-6)
    assert par.alpha_ == seq.alpha_
    np.testing.assert_allclose(par.coef_, seq.coef_, rtol=1e-6, atol=1e-8)


def test_logistic_regression_cv_matches_sklearn():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    Cs = np.logspace(-2, 1, 6)
    ref = sk.LogisticRegressionCV(Cs=Cs, cv=cv, tol=1e-10, max_iter=10_000,
                                  scoring="neg_log_loss", l1_ratios=(0.0,),
                                  use_legacy_attributes=False).fit(X, y)
    kw = dict(Cs=Cs, cv=cv, tol=1e-10, max_iter=100_000, random_state=0,
              scoring="neg_log_loss", l1_ratios=(0.0,))
    ours = LogisticRegressionCV(n_jobs=2, use_legacy_attributes=False, **kw).fit(X, y)
    assert ours.scores_.shape == ref.scores_.shape == (4, 1, 6)
    np.testing.assert_allclose(ours.scores_, ref.scores_, rtol=1e-4)
    assert ours.C_ == ref.C_ and ours.l1_ratio_ == ref.l1_ratio_ == 0.0
    assert ours.coefs_paths_.shape == ref.coefs_paths_.shape == (4, 1, 6, 1, X.shape[1] + 1)
    assert ours.n_iter_.shape == ref.n_iter_.shape
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    # scikit-learn's legacy layout (its transitional default), on half the grid; the
    # reference's layout at its default tol (lbfgs at tol=1e-10 takes 28 s here)
    kw["Cs"] = Cs[:3]
    legacy = LogisticRegressionCV(use_legacy_attributes=True, **kw).fit(X, y)
    ref = sk.LogisticRegressionCV(use_legacy_attributes=True,
                                  **{k: kw[k] for k in ("Cs", "cv", "scoring", "l1_ratios")}
                                  ).fit(X, y)
    for name in ("C_", "l1_ratio_", "n_iter_"):
        assert np.shape(getattr(legacy, name)) == np.shape(getattr(ref, name)), name
    assert legacy.scores_.keys() == ref.scores_.keys() == {1}
    np.testing.assert_allclose(legacy.scores_[1][:, :, 0], ours.scores_[:, 0, :3], rtol=1e-12)
    assert legacy.coefs_paths_[1].shape == ref.coefs_paths_[1].shape
    np.testing.assert_allclose(legacy.coefs_paths_[1][:, :, 0], ours.coefs_paths_[:, 0, :3, 0],
                               rtol=1e-10)
    np.testing.assert_array_equal(legacy.l1_ratio_, ref.l1_ratio_)


def test_logistic_regression_cv_multiclass_and_no_refit():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    Cs = np.array([0.1, 1.0, 10.0])
    m = LogisticRegressionCV(Cs=Cs, cv=3, refit=False, tol=1e-6, random_state=0,
                             l1_ratios=(0.0,), scoring=None,
                             use_legacy_attributes=False).fit(X, y)
    assert m.coef_.shape == (3, 4) and m.scores_.shape == (3, 1, 3)
    # scikit-learn's refit=False: the mean of each fold's best C
    assert m.C_ == pytest.approx(Cs[m.scores_[:, 0].argmax(axis=1)].mean())
    assert m.score(X, y) > 0.85
    np.testing.assert_allclose(m.predict_proba(X).sum(axis=1), 1.0)


def test_top_level_path_matches_independent_solves():
    """``cdlearn.path`` (the issue's public name) warm-starts to the same optima as cold solves."""
    X, y = _problem(classification=True)
    lams = [0.05, 0.01, 0.002]
    res = cdlearn.path(X, y, loss="logistic", penalty="elastic_net", l1_ratio=0.5, lams=lams,
                       tol=1e-11, fit_intercept=True)
    for lam, primal in zip(res.lams, res.primals, strict=True):
        cold = cdlearn.solve(X, y, loss="logistic", penalty="elastic_net", l1_ratio=0.5,
                             lam=lam, tol=1e-11, fit_intercept=True)
        assert primal == pytest.approx(cold.primal, rel=1e-9)
    assert cdlearn.lasso_path is lasso_path


@pytest.mark.parametrize("l1_ratio", [1.0, 0.6])
def test_multitask_path_matches_sklearn(l1_ratio):
    """A 2-d y gives scikit-learn's multi-task path: its α grid (max_j ‖X_jᵀY‖₂ / nρ),
    coefs (n_targets, n_features, n_alphas) within 1e-6 of scikit-learn at tol 1e-14,
    the same for sparse X; positive=True raises as scikit-learn's (before: every 2-d y
    raised "multi-task paths are not offered")."""
    rng = np.random.RandomState(0)
    X = rng.randn(50, 20)
    Y = X[:, :4] @ rng.randn(4, 3) + 0.1 * rng.randn(50, 3)
    Y -= Y.mean(0)
    X -= X.mean(0)
    ref = sk.enet_path(X, Y, l1_ratio=l1_ratio, alphas=10, eps=1e-2, tol=1e-14, max_iter=100000)
    alphas, coefs, gaps = cdlearn.enet_path(X, Y, l1_ratio=l1_ratio, alphas=10, eps=1e-2,
                                            tol=1e-12)
    np.testing.assert_allclose(alphas, ref[0], rtol=1e-12)
    assert coefs.shape == ref[1].shape == (3, 20, 10)
    assert np.max(np.abs(coefs - ref[1])) <= 1e-6 * np.max(np.abs(ref[1]))
    assert np.all(np.abs(gaps) <= 1e-11)
    sparse_coefs = cdlearn.enet_path(sp.csr_matrix(X), Y, l1_ratio=l1_ratio, alphas=alphas,
                                     tol=1e-12)[1]
    np.testing.assert_allclose(sparse_coefs, coefs, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="positive=True is not allowed for multi-output"):
        cdlearn.enet_path(X, Y, l1_ratio=l1_ratio, alphas=10, positive=True)
