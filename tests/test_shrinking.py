"""RCDC Lasso (Algorithm 4) with primal CD: Nesterov instances, q-shrinking, x0, Table 10."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import lsqr

import cdlearn
from cdlearn.api import make_problem
from cdlearn.datasets.nesterov import make_lasso_known_optimum
from cdlearn.solvers.primal_cd import PrimalCDState

M, N_FEAT, LAM = 2000, 1000, 1.0


@pytest.fixture(scope="module")
def lasso():
    A, b, x_star, F_star, info = make_lasso_known_optimum(
        M, N_FEAT, nnz_per_column=20, support_size=100, lam=LAM, seed=0, return_info=True)
    return A, b, x_star, info["v_star"]


def residual(A, x, x_star, v_star, lam=LAM):
    """F(x) − F* for F = ½‖Ax − b‖² + λ‖x‖₁, without cancellation.

    With d = x − x* and c = Aᵀv* (c_i = λ sign x*_i on the support, |c_i| < λ off it):
    F(x) − F* = ½‖Ad‖² + Σ_i (λ|x_i| − c_i x_i), every term ≥ 0.
    """
    Ad = A @ (x - x_star)
    c = A.T @ v_star
    return 0.5 * float(Ad @ Ad) + float(np.sum(lam * np.abs(x) - c * x))


def relative_residual(A, x, x_star, v_star, x0=None):
    x0 = np.zeros_like(x) if x0 is None else x0
    return residual(A, x, x_star, v_star) / residual(A, x0, x_star, v_star)


@pytest.mark.parametrize("kw", [
    {},
    {"sampling": "shrinking", "shrink_q": 0.9, "shrink_start": 5},
    {"sampling": "shrinking", "shrink_q": 0.5, "shrink_start": 0},
    {"sampling": "power", "power": 0.5},
], ids=["uniform", "shrink0.9", "shrink0.5-k0=0", "power0.5"])
def test_nesterov_lasso_to_1e12(lasso, kw):
    A, b, x_star, v_star = lasso
    # cdlearn's P = F/m with lam = λ/m
    res = cdlearn.solve(A, b, loss="squared", penalty="l1", lam=LAM / M, solver="primal-cd",
                        tol=1e-16, max_epochs=400, **kw)
    assert relative_residual(A, res.w, x_star, v_star) <= 1e-12
    assert np.array_equal(res.w != 0, x_star != 0)
    assert res.trace["nnz_w"][-1] == np.count_nonzero(x_star)


def test_least_squares_start(lasso):
    """RCDC §6.1 'choice of the initial point': x0 = x_LS (scipy lsqr) through ``w0``."""
    A, b, x_star, v_star = lasso
    x_ls = lsqr(A, b, atol=1e-12, btol=1e-12)[0]
    res = cdlearn.solve(A, b, loss="squared", penalty="l1", lam=LAM / M, w0=x_ls,
                        tol=1e-16, max_epochs=400)
    assert relative_residual(A, res.w, x_star, v_star, x0=x_ls) <= 1e-12
    assert np.array_equal(res.w != 0, x_star != 0)


def test_shrinking_support_bookkeeping(lasso):
    A, b, *_ = lasso
    problem = make_problem(A, b, loss="squared", penalty="l1", lam=LAM / M)
    w0 = np.zeros(N_FEAT)
    w0[::7] = 1.0
    state = PrimalCDState(problem, sampling="shrinking", shrink_q=0.9, shrink_start=1,
                          seed=0, w0=w0)
    assert set(state.supp[:state.n_supp[0]]) == set(np.flatnonzero(w0))
    for _ in range(6):
        state.run_epoch()
        supp = state.supp[:state.n_supp[0]]
        assert sorted(supp) == list(np.flatnonzero(state.w))
        assert np.all(state.pos[supp] == np.arange(supp.size))
        assert np.all(state.pos[state.w == 0] == -1)
    state.restore((w0, 0.0))
    assert set(state.supp[:state.n_supp[0]]) == set(np.flatnonzero(w0))


def test_shrinking_q0_is_uniform_draws(lasso):
    """q = 0 draws exactly as uniform sampling (same RNG stream) -> same iterates.

    Up to rounding: the squared-loss kernel of uniform sampling keeps the residual
    z - y, the shrinking kernel the margins z. A different draw would move the
    iterate by about the tolerance (1e-8), not by 1e-12.
    """
    A, b, *_ = lasso
    kw = dict(penalty="l1", lam=LAM / M, tol=1e-8, solver="primal-cd")
    a = cdlearn.solve(A, b, sampling="uniform", seed=1, **kw)
    s = cdlearn.solve(A, b, sampling="shrinking", shrink_q=0.0, seed=1, **kw)
    assert a.n_epochs == s.n_epochs
    np.testing.assert_allclose(a.w, s.w, rtol=0, atol=1e-12 * np.abs(a.w).max())
    other = cdlearn.solve(A, b, sampling="uniform", seed=2, **kw)
    assert np.abs(other.w - a.w).max() > 1e-10 * np.abs(a.w).max()


@pytest.mark.parametrize("q, k0", [(0.0, 0.0), (0.9, 3.0)])
def test_shrinking_draws_do_not_depend_on_calls(q, k0):
    """Draws made ahead (the prefetch pipeline before k0 / at q = 0) never go past a
    call's last step: one call or 7 calls whose ends cut across k0 give the same bits."""
    from cdlearn.experiments.rcdc_tables import Algorithm4, make_instance

    inst = make_instance(2000, 400, 4000, 20, seed=0)
    one, chunked = Algorithm4(inst, q=q, k0_epochs=k0, seed=1), Algorithm4(inst, q=q,
                                                                          k0_epochs=k0, seed=1)
    one.run(7 * 177)
    for _ in range(7):
        chunked.run(177)
    assert np.array_equal(one.x, chunked.x) and np.array_equal(one.g, chunked.g)
    assert np.array_equal(one.rng, chunked.rng) and one.nnz == chunked.nnz > 0


def test_shrinking_other_losses():
    rng = np.random.default_rng(0)
    X = sp.random(300, 80, density=0.1, random_state=1, format="csc")
    y = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    for loss in ("logistic", "squared_hinge"):
        ref = cdlearn.solve(X, y, loss=loss, penalty="l1", lam=0.01, tol=1e-12,
                            max_epochs=3000)
        res = cdlearn.solve(X, y, loss=loss, penalty="l1", lam=0.01, tol=1e-12,
                            sampling="shrinking", shrink_q=0.9, shrink_start=2,
                            max_epochs=3000, fit_intercept=False)
        assert res.converged
        assert res.primal == pytest.approx(ref.primal, rel=1e-10)


def test_shrinking_errors(lasso):
    A, b, *_ = lasso
    with pytest.raises(ValueError, match="shrink_q"):
        cdlearn.solve(A, b, penalty="l1", lam=0.1, sampling="shrinking", shrink_q=1.5)
    with pytest.raises(ValueError, match="shrink_start"):
        cdlearn.solve(A, b, penalty="l1", lam=0.1, sampling="shrinking", shrink_start=-1)
    with pytest.raises(ValueError, match="shrinking"):
        cdlearn.solve(A, b, penalty="l2", lam=0.1, sampling="shrinking", solver="dual-cd")
    with pytest.raises(TypeError, match="shrink_q"):
        cdlearn.solve(A, b, penalty="l2", lam=0.1, solver="dual-cd", shrink_q=0.5)


# ---------------------------------------------------------------- RCDC §6.2, Table 10
@pytest.mark.parametrize("loss, liblinear", [("squared_hinge", 5), ("logistic", 6)])
def test_l1_svm_and_logistic_match_liblinear(loss, liblinear):
    """L1-regularized L2-SVM (liblinear -s 5) and logistic (-s 6) with C = 1/(λn).

    Table 10's coordinate constants are primal CD's ``L_j = β‖X_j‖²/n`` up to the
    scaling P = λF (see the note in :mod:`cdlearn.solvers.primal_cd`); this checks the
    whole method against liblinear on the same objective.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(3)
    n, d = 400, 60
    X = sp.random(n, d, density=0.2, random_state=4, format="csr")
    w_true = np.where(rng.random(d) < 0.2, rng.standard_normal(d), 0.0)
    y = np.where(X @ w_true + 0.1 * rng.standard_normal(n) > 0, 1.0, -1.0)
    lam = 0.005
    C = 1.0 / (lam * n)
    if liblinear == 5:
        peer = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=C, tol=1e-8,
                         fit_intercept=False, max_iter=1000).fit(X, y)
    else:
        peer = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C, tol=1e-8,
                                  fit_intercept=False, max_iter=1000).fit(X, y)
    w_peer = peer.coef_.ravel()
    res = cdlearn.solve(X, y, loss=loss, penalty="l1", lam=lam, tol=1e-13, max_epochs=5000)
    for kw in ({"primal_step": "lipschitz"}, {"sampling": "shrinking", "shrink_q": 0.5}):
        other = cdlearn.solve(X, y, loss=loss, penalty="l1", lam=lam, tol=1e-11,
                              max_epochs=20000, **kw)
        assert other.primal == pytest.approx(res.primal, rel=1e-9)
    z = X @ w_peer
    if loss == "squared_hinge":
        data = np.mean(np.maximum(0.0, 1.0 - y * z) ** 2)
    else:
        data = np.mean(np.logaddexp(0.0, -y * z))
    p_peer = data + lam * np.abs(w_peer).sum()
    assert res.converged
    assert res.primal <= p_peer + 1e-12
    assert p_peer - res.primal <= 1e-6 * res.primal
    assert np.allclose(res.w, w_peer, atol=1e-3)
