"""Full-gradient baselines (FISTA / ISTA): Nesterov Lasso, agreement with primal CD, L."""

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.datasets.nesterov import make_lasso_known_optimum
from cdlearn.solvers.full_gradient import full_lipschitz

M, N_FEAT, LAM = 2000, 1000, 1.0


def residual(A, x, x_star, v_star, lam=LAM):
    """F(x) − F* = ½‖A(x − x*)‖² + Σ_i (λ|x_i| − (Aᵀv*)_i x_i), all terms ≥ 0."""
    Ad = A @ (x - x_star)
    c = A.T @ v_star
    return 0.5 * float(Ad @ Ad) + float(np.sum(lam * np.abs(x) - c * x))


@pytest.fixture(scope="module")
def lasso():
    A, b, x_star, _, info = make_lasso_known_optimum(
        M, N_FEAT, nnz_per_column=20, support_size=100, lam=LAM, seed=0, return_info=True)
    return A, b, x_star, info["v_star"]


@pytest.mark.parametrize("accelerated, max_epochs", [(True, 3000), (False, 3000)],
                         ids=["fista", "ista"])
def test_nesterov_lasso(lasso, accelerated, max_epochs):
    A, b, x_star, v_star = lasso
    res = cdlearn.solve(A, b, penalty="l1", lam=LAM / M, solver="fista", tol=1e-16,
                        max_epochs=max_epochs, accelerated=accelerated)
    assert res.converged
    rel = residual(A, res.w, x_star, v_star) / residual(A, np.zeros(N_FEAT), x_star, v_star)
    assert rel <= 1e-12
    assert np.array_equal(res.w != 0, x_star != 0)
    # an epoch is one full gradient = 2 passes over the nonzeros
    assert res.passes == pytest.approx(2.0 * res.n_epochs)


def test_fista_needs_more_passes_than_cd(lasso):
    A, b, *_ = lasso
    fg = cdlearn.solve(A, b, penalty="l1", lam=LAM / M, solver="fista", tol=1e-10,
                       max_epochs=3000)
    cd = cdlearn.solve(A, b, penalty="l1", lam=LAM / M, solver="primal-cd", tol=1e-10)
    assert fg.converged and cd.converged
    assert fg.passes > cd.passes


@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge", "smooth_hinge"])
@pytest.mark.parametrize("penalty", ["l1", "l2", "elastic_net"])
def test_agrees_with_primal_cd(loss, penalty):
    rng = np.random.default_rng(0)
    X = sp.random(150, 40, density=0.3, random_state=2, format="csr")
    y = rng.standard_normal(150) if loss == "squared" else np.where(
        rng.random(150) < 0.5, -1.0, 1.0)
    kw = dict(loss=loss, penalty=penalty, lam=0.02, tol=1e-12, fit_intercept=True)
    fg = cdlearn.solve(X, y, solver="fista", max_epochs=20000, **kw)
    cd = cdlearn.solve(X, y, solver="primal-cd", max_epochs=5000, **kw)
    assert fg.converged and cd.converged
    assert fg.primal == pytest.approx(cd.primal, rel=1e-10)
    assert fg.intercept == pytest.approx(cd.intercept, abs=1e-5)


def test_no_penalty_is_least_squares():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 10))
    y = rng.standard_normal(100)
    res = cdlearn.solve(X, y, penalty="none", solver="fista", tol=1e-12, max_epochs=5000)
    assert res.dual is None and res.converged
    assert np.allclose(res.w, np.linalg.lstsq(X, y, rcond=None)[0], atol=1e-9)


def test_lipschitz_is_an_upper_bound():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((80, 30)) * np.linspace(0.1, 3.0, 30)
    y = np.where(rng.random(80) < 0.5, -1.0, 1.0)
    for loss, beta in (("squared", 1.0), ("logistic", 0.25)):
        for fit_intercept in (False, True):
            p = make_problem(X, y, loss=loss, penalty="l2", lam=0.1,
                             fit_intercept=fit_intercept)
            Xt = np.hstack([X, np.ones((80, 1))]) if fit_intercept else X
            true = beta * np.linalg.eigvalsh(Xt.T @ Xt)[-1] / 80
            assert full_lipschitz(p) == pytest.approx(true, rel=1e-8)


def test_options_and_errors():
    X = np.eye(5)
    y = np.ones(5)
    with pytest.raises(ValueError, match="sampling"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, solver="fista", sampling="importance")
    with pytest.raises(TypeError, match="accelerated"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, solver="primal-cd", accelerated=False)
    with pytest.raises(ValueError, match="hinge"):
        cdlearn.solve(X, y, loss="hinge", penalty="l2", lam=0.1, solver="fista")
