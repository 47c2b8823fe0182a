"""Dense tall logistic problems (issue 25): BLAS Gram, newton-cg's lagged-Hessian
preconditioner, proximal Newton for l1, and auto's choice between them."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

import cdlearn
from cdlearn.api import auto_solver, make_problem
from cdlearn.solvers.newton_cd import dense_gram
from cdlearn.solvers.newton_cg import choose_preconditioner


def _tall(seed=0, n=2000, d=20, separable=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 2.0, size=d)
    w = rng.standard_normal(d)
    noise = 0.0 if separable else 1.0
    y = np.where(X @ w + noise * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _logistic_grad(X, y, w, b=0.0):
    z = y * (X @ w + b)
    return -(X.T @ (y / (1.0 + np.exp(z)))) / X.shape[0]


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dense_gram_is_xtdx(fit_intercept):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((700, 9))
    D = rng.uniform(0.0, 1.0, 700)
    D[::7] = 0.0  # squared hinge: rows beyond the margin have no curvature
    m = 9 + int(fit_intercept)
    H = np.full((m, m), np.nan)
    assert dense_gram(X, D, fit_intercept, H) == 700 * 9 * 10 // 2
    A = np.hstack([X, np.ones((700, 1))]) if fit_intercept else X
    np.testing.assert_allclose(H, A.T @ (D[:, None] * A), rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_newton_cg_gram_matches_sklearn(fit_intercept):
    X, y = _tall(2)
    n = X.shape[0]
    lam = 1.0 / n
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="newton-cg",
                        tol=1e-12, fit_intercept=fit_intercept)
    assert res.info["preconditioner"] == "gram" and res.info["hessians"] >= 1
    ref = LogisticRegression(C=1.0 / (lam * n), solver="newton-cholesky", tol=1e-14,
                             max_iter=1000, fit_intercept=fit_intercept).fit(X, y)
    # gap 1e-12·P(0) leaves gradients ~1e-9, coefficients ~1e-8 relative
    np.testing.assert_allclose(res.w, ref.coef_.ravel(), rtol=5e-8, atol=1e-10)
    if fit_intercept:
        assert abs(res.intercept - ref.intercept_[0]) <= 5e-8 * abs(ref.intercept_[0]) + 1e-10
    assert res.converged and 0.0 <= res.gap <= 1e-12 * np.log(2.0)


def test_newton_cg_gram_separable_small_lambda():
    """benchopt's l2 simulation: y = sign(Xβ), lmbd = 0.01 (λ = 0.01/n): ill-conditioned."""
    X, y = _tall(3, n=3000, d=30, separable=True)
    n = X.shape[0]
    lam = 0.01 / n
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="newton-cg",
                        tol=1e-12)
    ref = LogisticRegression(C=1.0 / (lam * n), solver="newton-cholesky", tol=1e-14,
                             max_iter=1000, fit_intercept=False).fit(X, y)
    w_ref = ref.coef_.ravel()
    assert res.info["preconditioner"] == "gram" and res.info["hessians"] >= 2
    # the later lagged Gram matrices leave out the rows of tiny curvature D_i
    assert res.info["gram_rows"] < n
    def P(w):
        return np.logaddexp(0.0, -y * (X @ w)).mean() + 0.5 * lam * w @ w

    assert abs(P(res.w) - P(w_ref)) <= 1e-13 * P(w_ref)
    np.testing.assert_allclose(res.w, w_ref, rtol=1e-7, atol=1e-9 * np.abs(w_ref).max())
    assert res.gap <= 1e-12 * np.log(2.0)


def test_l1_newton_on_dense_rows_kkt_and_agreement():
    rng = np.random.default_rng(4)
    n, d = 600, 80
    C = 0.6 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))  # correlated, as benchopt's
    X = rng.standard_normal((n, d)) @ np.linalg.cholesky(C).T
    beta = np.zeros(d)
    beta[rng.choice(d, 8, replace=False)] = rng.standard_normal(8)
    y = np.where(X @ beta + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    lam = 0.05 * np.abs(X.T @ y).max() / (2 * n)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, tol=1e-12)
    assert res.solver == "newton-cd"
    g = _logistic_grad(X, y, res.w)
    on = res.w != 0.0
    assert 0 < on.sum() < d
    # KKT of the l1 problem: ∇_j f = -λ sign(w_j) on the support, |∇_j f| <= λ off it
    assert np.abs(g[on] + lam * np.sign(res.w[on])).max() <= 1e-9 * lam
    assert np.abs(g[~on]).max() <= lam * (1 + 1e-9)
    ws = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, tol=1e-12,
                       solver="ws-cd")
    np.testing.assert_allclose(res.w, ws.w, rtol=1e-7, atol=1e-9)
    ref = LogisticRegression(C=1.0 / (lam * n), l1_ratio=1.0, solver="liblinear", tol=1e-12,
                             max_iter=10_000, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(res.w, ref.coef_.ravel(), atol=1e-5 * np.abs(res.w).max())
    assert res.gap <= 1e-12 * np.log(2.0)


def test_auto_choice_tall_dense_vs_wide_sparse():
    def choice(X, penalty, lam=1e-3):
        y = np.where(np.arange(X.shape[0]) % 2 == 0, 1.0, -1.0)
        return auto_solver(make_problem(X, y, loss="logistic", penalty=penalty, lam=lam))

    rng = np.random.default_rng(5)
    tall = rng.standard_normal((2000, 20))
    name, reason = choice(tall, "l2")
    assert name == "newton-cg" and "lagged XᵀDX" in reason
    assert choice(tall, "l1") == ("newton-cd", choice(tall, "l1")[1])
    assert "XᵀDX cheap to form" in choice(tall, "l1")[1]
    square = rng.standard_normal((300, 600))  # dense rows, Gram too dear: data form
    name, reason = choice(square, "l1")
    assert name == "newton-cd" and "dense rows" in reason
    assert choice(rng.standard_normal((38, 600)), "l1")[0] == "ws-cd"  # leukemia's shape
    wide = sp.random(200, 5000, density=0.01, random_state=0, format="csr")
    assert choice(wide, "l1")[0] == "ws-cd"
    assert choice(sp.csr_matrix(tall), "l2")[0] == "newton-cd"  # sparse few features: as before
    y = np.ones(300)
    assert choose_preconditioner(make_problem(square, y, loss="logistic", penalty="l2",
                                              lam=1e-3)) == "diagonal"


def test_preconditioner_option_errors():
    X, y = _tall(6, n=100, d=5)
    with pytest.raises(ValueError, match="preconditioner must be"):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="newton-cg",
                      preconditioner="cholesky")
    with pytest.raises(ValueError, match="preconditioner='gram' needs dense X"):
        cdlearn.solve(sp.csr_matrix(X), y, loss="logistic", lam=0.1, solver="newton-cg",
                      preconditioner="gram")
    res = cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="newton-cg",
                        preconditioner=True)
    assert res.info["preconditioner"] == "diagonal"


def test_auto_wide_squared_hinge_runs_dual_cd():
    """LinearSVC on n < d (leukemia, parity's wide problems): dual CD, not newton-cg."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 300))
    y = np.where(X[:, 0] + 0.1 * rng.standard_normal(30) > 0, 1.0, -1.0)
    name, reason = auto_solver(make_problem(X, y, loss="squared_hinge", penalty="l2",
                                            lam=1.0 / 30))
    assert name == "dual-cd" and "30 samples < 300 features" in reason
    assert "squared hinge" not in auto_solver(make_problem(X, y, loss="logistic",
                                                           penalty="l2", lam=1.0 / 30))[1]
    svc = cdlearn.LinearSVC(C=1.0, tol=1e-10).fit(X, y)
    assert svc.solver_ == "dual-cd"
    ref = cdlearn.solve(X, y, loss="squared_hinge", penalty="l2", lam=1.0 / 30,
                        fit_intercept=True, solver="newton-cg", tol=1e-13)
    np.testing.assert_allclose(svc.coef_.ravel(), ref.w, atol=1e-5 * np.abs(ref.w).max())
