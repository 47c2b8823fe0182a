"""Ridge against independent references where scikit-learn's tests found it off (issue 18).

- alpha = 0 (and its limit alpha → 0) on a rank-deficient X: the minimum-norm
  least-squares solution, the intercept by centring (numpy's lstsq / pinv);
"""

import numpy as np
import pytest
import scipy.sparse as sp

from cdlearn import Ridge


def _rank_deficient(n, d, seed=0):
    """A wide or duplicated-column X (rank < d) and a target with a non-zero mean."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X = 0.5 * np.hstack([X, X])  # duplicated columns: singular whatever n and d
    y = rng.uniform(-10, 10, n) + 3.0
    return X, y


def _min_norm(X, y, fit_intercept, sample_weight=None):
    """argmin ‖w‖ among the minimisers of Σ s_i (y_i − x_iᵀw − b)², b minimised out."""
    s = np.ones(len(y)) if sample_weight is None else sample_weight
    if fit_intercept:
        xm, ym = s @ X / s.sum(), s @ y / s.sum()
    else:
        xm, ym = np.zeros(X.shape[1]), 0.0
    r = np.sqrt(s)
    w = np.linalg.lstsq(r[:, None] * (X - xm), r * (y - ym), rcond=None)[0]
    return w, ym - xm @ w


@pytest.mark.parametrize("shape", [(6, 10), (20, 4)], ids=["wide", "long"])
@pytest.mark.parametrize("solver", ["auto", "svd", "lsqr", "sag"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
def test_unpenalised_ridge_is_minimum_norm(shape, solver, fit_intercept, sparse):
    X, y = _rank_deficient(*shape)
    sw = np.linspace(0.5, 2.0, len(y))
    w_ref, b_ref = _min_norm(X, y, fit_intercept, sw)
    Xc = sp.csr_matrix(X) if sparse else X
    model = Ridge(alpha=0.0, solver=solver, tol=1e-10, fit_intercept=fit_intercept)
    model.fit(Xc, y, sample_weight=sw)
    np.testing.assert_allclose(model.coef_, w_ref, rtol=1e-9, atol=1e-12)
    assert model.intercept_ == pytest.approx(b_ref if fit_intercept else 0.0, rel=1e-9, abs=1e-12)
    # the certificate of the unpenalised problem: the gradient's size, at rounding level
    assert model.dual_gap_ <= 1e-12 * np.mean(sw * y**2)


@pytest.mark.parametrize("solver", ["svd", "cholesky", "lsqr", "sparse_cg"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_tiny_alpha_is_the_minimum_norm_limit(solver, fit_intercept):
    """alpha = 1e-16 on a wide X: the ridge solution is the pseudo-inverse's to ~1e-14
    (the eigen route divided rounding by λ2 = 1e-18 and was off by 1e-2)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((25, 50))
    y = X @ rng.standard_normal(50) + 10.0
    w_ref, b_ref = _min_norm(X, y, fit_intercept)
    model = Ridge(alpha=1e-16, solver=solver, tol=1e-12, fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(model.coef_, w_ref, rtol=1e-7, atol=1e-10)
    assert model.intercept_ == pytest.approx(b_ref if fit_intercept else 0.0, abs=1e-10)


@pytest.mark.parametrize("solver", ["sag", "saga"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("tol", [1e-4, 1e-10])
def test_dual_route_reaches_the_closed_form(solver, sparse, tol):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((5, 12)) * np.logspace(0, -2, 12)  # small coefficients too
    y = rng.uniform(-10, 10, 5)
    sw = np.linspace(0.5, 2.0, 5)
    alpha = 0.01
    xm, ym = sw @ X / sw.sum(), sw @ y / sw.sum()
    Xc = X - xm
    w_ref = np.linalg.solve(Xc.T @ (sw[:, None] * Xc) + alpha * np.eye(12), Xc.T @ (sw * (y - ym)))
    model = Ridge(alpha=alpha, solver=solver, tol=tol, random_state=0)
    model.fit(sp.csr_matrix(X) if sparse else X, y, sample_weight=sw)
    np.testing.assert_allclose(model.coef_, w_ref, rtol=1e-9)
    assert model.intercept_ == pytest.approx(ym - xm @ w_ref, rel=1e-9)
    assert model.dual_gap_ <= 1e-14
