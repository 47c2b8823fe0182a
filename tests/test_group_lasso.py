"""GroupLasso estimator against skglm's GroupLasso and a numpy proximal-gradient reference."""

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.estimators import GroupLasso
from cdlearn.estimators._group import contiguous_groups


def _problem(n=50, d=24, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    w = np.zeros(d)
    w[:6] = rng.randn(6)
    return X, X @ w + 0.7 + 0.3 * rng.randn(n)


def _objective(X, y, w, b, alpha, groups, weights, sw=None):
    n = y.shape[0]
    sw = np.ones(n) if sw is None else sw * (n / sw.sum())
    r = y - X @ w - b
    pen = sum(wt * np.linalg.norm(w[g]) for g, wt in zip(groups, weights, strict=True))
    return sw @ r**2 / (2 * n) + alpha * pen


def _proximal_gradient(X, y, alpha, groups, weights, sw, iters=20_000, intercept=True):
    """FISTA on the centred problem (intercept profiled out), in numpy: the reference."""
    n = y.shape[0]
    s = sw * (n / sw.sum())
    mx, my = s @ X / s.sum(), s @ y / s.sum()
    if not intercept:
        mx, my = np.zeros_like(mx), 0.0
    Xc, yc = X - mx, y - my
    G = (Xc * s[:, None]).T @ Xc / n  # the gradient is G w - c
    c = Xc.T @ (s * yc) / n
    L = np.linalg.eigvalsh(G).max()
    w = np.zeros(X.shape[1])
    v, t = w.copy(), 1.0
    for _ in range(iters):
        u = v - (G @ v - c) / L
        w_new = u.copy()
        for g, wt in zip(groups, weights, strict=True):
            norm = np.linalg.norm(u[g])
            w_new[g] = 0.0 if norm <= alpha * wt / L else u[g] * (1 - alpha * wt / (L * norm))
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        v = w_new + (t - 1) / t_new * (w_new - w)
        done = np.max(np.abs(w_new - w)) < 1e-15
        w, t = w_new, t_new
        if done:
            break
    return w, my - mx @ w


GROUPS = [3, [4, 4, 8, 8], [[0, 5, 7], [1, 2, 3, 4], [6, *range(8, 24)]]]


@pytest.mark.parametrize("groups", GROUPS)
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_group_lasso_matches_proximal_gradient(groups, fit_intercept):
    X, y = _problem()
    if not fit_intercept:
        y = y - 0.7
    glist = [list(g) for g in contiguous_groups(groups, 24)]
    weights = np.random.RandomState(1).rand(len(glist)) + 0.5
    est = GroupLasso(groups=groups, alpha=0.1, weights=weights, fit_intercept=fit_intercept,
                     tol=1e-14, max_iter=100_000).fit(X, y)
    w_ref, b_ref = _proximal_gradient(X, y, 0.1, glist, weights, np.ones(50),
                                      intercept=fit_intercept)
    f = _objective(X, y, est.coef_, est.intercept_, 0.1, glist, weights)
    f_ref = _objective(X, y, w_ref, b_ref, 0.1, glist, weights)
    assert abs(f - f_ref) <= 1e-10 * f_ref
    np.testing.assert_allclose(est.coef_, w_ref, atol=1e-6)
    assert est.intercept_ == pytest.approx(b_ref, abs=1e-6)
    assert est.solver_ == "block-cd" and 0.0 <= est.dual_gap_ <= 1e-13
    norms = [np.linalg.norm(est.coef_[g]) for g in glist]
    if groups == 3:  # some groups are zero as whole blocks, others not
        assert min(norms) == 0.0 < max(norms)


@pytest.mark.slow  # skglm compiles its kernels in every process (~2 min here)
@pytest.mark.parametrize("groups", GROUPS)
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_group_lasso_matches_skglm(groups, fit_intercept):
    skglm = pytest.importorskip("skglm")
    X, y = _problem()
    glist = [list(g) for g in contiguous_groups(groups, 24)]
    weights = np.random.RandomState(1).rand(len(glist)) + 0.5
    ours = GroupLasso(groups=groups, alpha=0.1, weights=weights, fit_intercept=fit_intercept,
                      tol=1e-14, max_iter=100_000).fit(X, y)
    ref = skglm.GroupLasso(groups=groups, alpha=0.1, weights=weights,
                           fit_intercept=fit_intercept, tol=1e-14, max_iter=1000,
                           max_epochs=100_000).fit(X, y)
    f_ours = _objective(X, y, ours.coef_, ours.intercept_, 0.1, glist, weights)
    f_ref = _objective(X, y, ref.coef_, ref.intercept_, 0.1, glist, weights)
    assert abs(f_ours - f_ref) <= 1e-10 * f_ref
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-6)


def test_group_lasso_matches_proximal_gradient_with_sample_weights_and_sparse_input():
    X, y = _problem(seed=2)
    sw = np.random.RandomState(3).rand(50) + 0.5
    groups = [[0, 1, 2, 3], [4, 5], list(range(6, 24))]
    weights = np.array([1.0, 2.0, 0.5])
    w_ref, b_ref = _proximal_gradient(X, y, 0.05, groups, weights, sw)
    for Xin in (X, sp.csc_matrix(X), sp.csr_matrix(X)):
        est = GroupLasso(groups=groups, alpha=0.05, weights=weights, tol=1e-14,
                         max_iter=100_000).fit(Xin, y, sample_weight=sw)
        f = _objective(X, y, est.coef_, est.intercept_, 0.05, groups, weights, sw)
        f_ref = _objective(X, y, w_ref, b_ref, 0.05, groups, weights, sw)
        assert abs(f - f_ref) <= 1e-10 * f_ref
        np.testing.assert_allclose(est.coef_, w_ref, atol=1e-6)
        assert est.intercept_ == pytest.approx(b_ref, abs=1e-6)


def test_group_lasso_default_weights_are_one_and_singletons_give_the_lasso():
    from sklearn.linear_model import Lasso

    X, y = _problem(seed=4)
    gl = GroupLasso(groups=1, alpha=0.05, tol=1e-14, max_iter=100_000).fit(X, y)
    ref = Lasso(alpha=0.05, tol=1e-15, max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(gl.coef_, ref.coef_, atol=1e-7)
    assert cdlearn.GroupLasso is GroupLasso and cdlearn.ElasticNetCV.__name__ == "ElasticNetCV"


def test_group_lasso_warm_start_and_multi_target():
    X, y = _problem(seed=5)
    est = GroupLasso(groups=4, alpha=0.1, tol=1e-12, warm_start=True).fit(X, y)
    first = est.n_iter_
    est.fit(X, y)
    assert est.n_iter_ < first  # started at the solution
    Y = np.c_[y, -2 * y]
    multi = GroupLasso(groups=4, alpha=0.1, tol=1e-12).fit(X, Y)
    single = GroupLasso(groups=4, alpha=0.1, tol=1e-12).fit(X, y)
    assert multi.coef_.shape == (2, 24)
    np.testing.assert_allclose(multi.coef_[0], single.coef_, atol=1e-8)


def test_group_lasso_errors():
    X, y = _problem()
    with pytest.raises(ValueError, match="groups=5: contiguous groups"):
        GroupLasso(groups=5).fit(X, y)
    with pytest.raises(ValueError, match="sum to n_features=24"):
        GroupLasso(groups=[4, 4]).fit(X, y)
    with pytest.raises(ValueError, match="do not cover every feature"):
        GroupLasso(groups=[[0, 1], [2, 3]]).fit(X, y)
    with pytest.raises(ValueError, match="group weights must have 8 entries"):
        GroupLasso(groups=3, weights=[1.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match="group weights must be finite and > 0"):
        GroupLasso(groups=12, weights=[1.0, -2.0]).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        GroupLasso(groups=3, alpha=-1.0).fit(X, y)
