"""Ridge(positive=True): non-negative ridge against an independent NNLS reference."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import nnls

from cdlearn import Ridge


def _problem(seed=0, n=60, d=12):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n)
    return X, y


def _nnls_ridge(X, y, alpha, fit_intercept, sw=None):
    """argmin_{w ≥ 0} Σ s_i (y_i − x_iᵀw − b)² + α‖w‖² as one NNLS on augmented, centred data."""
    sw = np.ones(len(y)) if sw is None else sw
    if fit_intercept:
        X = X - np.average(X, axis=0, weights=sw)
        y = y - np.average(y, weights=sw)
    r = np.sqrt(sw)
    A = np.vstack([X * r[:, None], np.sqrt(alpha) * np.eye(X.shape[1])])
    return nnls(A, np.concatenate([y * r, np.zeros(X.shape[1])]), maxiter=10_000)[0]


@pytest.mark.parametrize("alpha", [1.0, 1e-3, 0.0])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_positive_ridge_matches_nnls(alpha, fit_intercept):
    X, y = _problem()
    ref = _nnls_ridge(X, y, alpha, fit_intercept)
    assert (ref == 0).any() and (ref > 0).any()  # the constraint is active
    model = Ridge(alpha=alpha, positive=True, fit_intercept=fit_intercept, tol=1e-10).fit(X, y)
    assert model.coef_.min() >= 0.0
    np.testing.assert_allclose(model.coef_, ref, rtol=0, atol=1e-8 * np.abs(ref).max())
    # at the defaults: the coefficients within 1e-4 of the optimum, relative to the largest
    default = Ridge(alpha=alpha, positive=True, fit_intercept=fit_intercept).fit(X, y)
    assert np.abs(default.coef_ - ref).max() <= 1e-4 * np.abs(ref).max()


def test_positive_ridge_sparse_weighted_multitarget():
    X, y = _problem(seed=1, n=80, d=10)
    rng = np.random.default_rng(2)
    sw = rng.uniform(0.5, 2.0, size=len(y))
    Y = np.column_stack([y, -y + 0.3])
    model = Ridge(alpha=0.5, positive=True, tol=1e-10).fit(sp.csr_matrix(X), Y, sample_weight=sw)
    for k in range(2):
        ref = _nnls_ridge(X, Y[:, k], 0.5, True, sw)
        np.testing.assert_allclose(model.coef_[k], ref, rtol=0, atol=1e-8 * np.abs(ref).max())


@pytest.mark.parametrize("solver", ["svd", "cholesky", "lsqr", "sparse_cg", "sag", "saga"])
def test_positive_ridge_rejects_scikit_learns_other_solvers(solver):
    X, y = _problem()
    with pytest.raises(ValueError, match=f"solver='{solver}' does not support positive fitting"):
        Ridge(positive=True, solver=solver).fit(X, y)


def test_lbfgs_needs_positive_and_runs_the_constrained_fit():
    X, y = _problem()
    with pytest.raises(ValueError, match="'lbfgs' solver can be used only when positive=True"):
        Ridge(solver="lbfgs").fit(X, y)
    model = Ridge(solver="lbfgs", positive=True, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(model.coef_, _nnls_ridge(X, y, 1.0, True), atol=1e-8)


def test_positive_ridge_is_finished_by_the_restricted_solve():
    """A wide problem with an intercept at tol=1e-12: the active-set solve on w ≥ 0 brings
    the intercept to rounding (the gap alone left it 1e-7 relative off, scikit-learn's
    test_ridge_sample_weight_consistency[lbfgs-wide])."""
    rng = np.random.RandomState(42)
    X, y = rng.rand(12, 24), rng.rand(12)
    model = Ridge(alpha=1.0, positive=True, tol=1e-12).fit(X, y)
    ref = _nnls_ridge(X, y, 1.0, True)
    np.testing.assert_allclose(model.coef_, ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(model.intercept_, y.mean() - X.mean(axis=0) @ ref, rtol=1e-12)
