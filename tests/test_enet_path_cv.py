"""enet_path / lasso_path and ElasticNetCV against scikit-learn converged tightly."""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from sklearn.model_selection import KFold

import cdlearn
from cdlearn.estimators import ElasticNet, ElasticNetCV, LassoCV


def _problem(n=60, d=20, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    w = np.zeros(d)
    w[:5] = rng.randn(5) * 2
    return X, X @ w + 1.0 + 0.5 * rng.randn(n)


def _centred(seed=0):
    X, y = _problem(seed=seed)
    return X - X.mean(axis=0), y - y.mean()  # the path functions fit no intercept


def _enet(X, y, w, alpha, rho):
    r = y - X @ w
    return r @ r / (2 * len(y)) + alpha * rho * np.abs(w).sum() + 0.5 * alpha * (1 - rho) * w @ w


# --------------------------------------------------------------------------- paths
@pytest.mark.parametrize("rho", [0.3, 0.8, 1.0])
@pytest.mark.parametrize("positive", [False, True])
def test_enet_path_matches_sklearn(rho, positive):
    X, y = _centred()
    a_ref, c_ref, _ = sk.enet_path(X, y, l1_ratio=rho, eps=1e-2, alphas=8, tol=1e-15,
                                   max_iter=1_000_000, positive=positive)
    alphas, coefs, gaps, n_iter = cdlearn.enet_path(
        X, y, l1_ratio=rho, eps=1e-2, alphas=8, tol=1e-13, max_iter=100_000,
        positive=positive, return_n_iter=True)
    np.testing.assert_allclose(alphas, a_ref, rtol=1e-12)
    assert coefs.shape == c_ref.shape == (20, 8) and gaps.shape == n_iter.shape == (8,)
    np.testing.assert_allclose(coefs, c_ref, atol=1e-5)
    for k, a in enumerate(alphas):
        f_ours, f_ref = _enet(X, y, coefs[:, k], a, rho), _enet(X, y, c_ref[:, k], a, rho)
        assert abs(f_ours - f_ref) <= 1e-10 * f_ref
        assert 0.0 <= gaps[k] <= 1e-12 * (y @ y / (2 * len(y)))
    if positive:
        assert coefs.min() >= 0.0


def test_enet_path_explicit_grid_l2_and_coef_init():
    X, y = _centred(seed=1)
    grid = [0.5, 2.0, 0.1]  # sorted decreasing, as scikit-learn's
    a_ref, c_ref, _ = sk.enet_path(X, y, l1_ratio=0.0, alphas=grid, tol=1e-15,
                                   max_iter=1_000_000)
    alphas, coefs, _ = cdlearn.enet_path(X, y, l1_ratio=0.0, alphas=grid, tol=1e-13,
                                         coef_init=np.ones(20))
    np.testing.assert_array_equal(alphas, [2.0, 0.5, 0.1])
    np.testing.assert_allclose(coefs, c_ref, atol=1e-6)
    with pytest.raises(ValueError, match="Automatic alpha grid generation is not supported for l1_ratio=0"):
        cdlearn.enet_path(X, y, l1_ratio=0.0)
    with pytest.raises(ValueError, match="l1_ratio must be in"):
        cdlearn.enet_path(X, y, l1_ratio=1.5)
    with pytest.raises(ValueError, match="positive=True is not allowed for multi-output"):
        cdlearn.enet_path(X, np.c_[y, y], alphas=grid, positive=True)  # a 2-d y: multi-task
    with pytest.raises(TypeError, match="max_iter or max_epochs"):
        cdlearn.enet_path(X, y, max_iter=5, max_epochs=5)


def test_lasso_path_is_enet_path_with_l1_ratio_one_and_keeps_n_alphas():
    X, y = _centred(seed=2)
    a1, c1, g1 = cdlearn.lasso_path(X, y, eps=1e-2, n_alphas=6, tol=1e-12)
    a2, c2, g2 = cdlearn.enet_path(X, y, l1_ratio=1.0, eps=1e-2, alphas=6, tol=1e-12)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(g1, g2)
    assert cdlearn.lasso_path is cdlearn.paths.lasso_path


# --------------------------------------------------------------------------- ElasticNetCV
@pytest.mark.parametrize("kw", [
    dict(l1_ratio=0.5),
    dict(l1_ratio=[0.2, 0.7, 1.0]),
    dict(l1_ratio=[0.3, 0.9], positive=True),
    dict(l1_ratio=[0.0, 0.5], alphas=[0.01, 0.1, 1.0]),
])
def test_elastic_net_cv_matches_sklearn(kw):
    X, y = _problem(n=80, d=30, seed=3)
    kw = dict({"alphas": 6}, **kw)
    ours = ElasticNetCV(cv=KFold(4), tol=1e-15, max_iter=100_000, **kw).fit(X, y)
    ref = sk.ElasticNetCV(cv=KFold(4), tol=1e-15, max_iter=1_000_000, **kw).fit(X, y)
    assert ours.alphas_.shape == ref.alphas_.shape
    np.testing.assert_allclose(ours.alphas_, ref.alphas_, rtol=1e-12)
    assert ours.mse_path_.shape == ref.mse_path_.shape
    np.testing.assert_allclose(ours.mse_path_, ref.mse_path_, rtol=1e-6)
    assert ours.alpha_ == ref.alpha_ and ours.l1_ratio_ == ref.l1_ratio_
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-6)
    assert ours.n_iter_ >= 1 and 0.0 <= ours.dual_gap_


def test_elastic_net_cv_refit_is_elastic_net_at_the_chosen_pair():
    X, y = _problem(n=70, d=15, seed=4)
    cv = ElasticNetCV(l1_ratio=[0.4, 0.9], alphas=5, cv=3, tol=1e-12).fit(X, y)
    direct = ElasticNet(alpha=cv.alpha_, l1_ratio=cv.l1_ratio_, tol=1e-12).fit(X, y)
    np.testing.assert_array_equal(cv.coef_, direct.coef_)
    assert cv.intercept_ == direct.intercept_ and cv.dual_gap_ == direct.dual_gap_


def test_elastic_net_cv_sparse_equals_dense():
    X, y = _problem(n=60, d=12, seed=5)
    X[np.abs(X) < 0.8] = 0.0
    kw = dict(l1_ratio=[0.5, 1.0], alphas=5, cv=KFold(3), tol=1e-13, max_iter=100_000)
    dense = ElasticNetCV(**kw).fit(X, y)
    sparse = ElasticNetCV(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.mse_path_, dense.mse_path_, rtol=1e-8)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-8)


def test_elastic_net_cv_errors():
    X, y = _problem()
    with pytest.raises(ValueError, match="Automatic alpha grid generation is not supported "
                                         "for l1_ratio=0"):
        ElasticNetCV(l1_ratio=[0.0, 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="l1_ratio must be in"):
        ElasticNetCV(l1_ratio=[0.5, 1.2]).fit(X, y)
    with pytest.raises(ValueError, match=r"alphas\[1\] == -1.0, must be >= 0.0"):
        ElasticNetCV(alphas=[0.1, -1.0]).fit(X, y)
    with pytest.raises(ValueError, match="alphas must be"):
        ElasticNetCV(alphas=[0.1, 0.0]).fit(X, y)
    with pytest.raises(TypeError, match="positive must be a bool"):
        ElasticNetCV(positive="no").fit(X, y)


def test_lasso_cv_is_elastic_net_cv_with_l1_ratio_one():
    X, y = _problem(n=60, d=15, seed=6)
    a = LassoCV(n_alphas=6, cv=KFold(3), tol=1e-12).fit(X, y)
    b = ElasticNetCV(l1_ratio=1.0, alphas=6, cv=KFold(3), tol=1e-12).fit(X, y)
    np.testing.assert_array_equal(a.mse_path_, b.mse_path_)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.alpha_ == b.alpha_ and not hasattr(a, "l1_ratio_") and b.l1_ratio_ == 1.0


def test_path_with_a_cd_option_resolves_auto_as_solve_does():
    """A sampling makes "auto" choose primal/dual CD (as in solve); the path used to
    resolve "auto" without the options, ran ws-cd and raised on sampling="importance"."""
    X, y = _centred(seed=7)
    kw = dict(penalty="l1", n_lams=4, eps=1e-2, tol=1e-12, max_epochs=100_000)
    cd = cdlearn.path(X, y, sampling="importance", **kw)
    ws = cdlearn.path(X, y, **kw)
    assert set(cd.solvers) == {"primal-cd"} and set(ws.solvers) == {"gram-cd"}
    np.testing.assert_allclose(cd.primals, ws.primals, rtol=1e-10)
