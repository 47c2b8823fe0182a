"""newton-cd on dense X with an l1 term: the working set's Hessian block by BLAS or the
data form, chosen per outer iteration (NewtonCDState._dense_l1_direction)."""

import warnings

import numpy as np
import pytest

import cdlearn
from cdlearn.api import auto_solver, make_problem
from cdlearn.objectives import primal_value
from cdlearn.solvers.intercept import margin_certificate
from cdlearn.solvers.newton_cd import NewtonCDState


def _correlated(n, d, seed, rho=0.5):
    rng = np.random.default_rng(seed)
    cov = rho ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    X = rng.standard_normal((n, d)) @ np.linalg.cholesky(cov).T
    beta = np.zeros(d)
    beta[rng.choice(d, size=max(2, d // 10), replace=False)] = rng.standard_normal(max(2, d // 10))
    y = np.where(X @ beta + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _sklearn_l1(X, y, lam):
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the penalty spelling of the installed version
        clf = LogisticRegression(solver="liblinear", C=1.0 / (lam * X.shape[0]), l1_ratio=1.0,
                                 fit_intercept=False, tol=1e-12, max_iter=100_000).fit(X, y)
    return clf.coef_.ravel()


# (n, d, lam as a fraction of λmax): 300 × 40, every iteration takes the block; 120 × 400 at
# 100 × 250 at λmax/50, the first sets (large, short model solves) take the data form
@pytest.mark.parametrize("n,d,frac,data_steps", [(300, 40, 0.1, False), (100, 250, 0.02, True)])
def test_dense_l1_logistic_matches_sklearn(n, d, frac, data_steps):
    X, y = _correlated(n, d, seed=n)
    lam = frac * float(np.abs(X.T @ y).max()) / (2 * n)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, tol=1e-14,
                        max_epochs=200)
    assert res.solver == "newton-cd" and res.converged
    blocks = res.info["block_steps"]
    assert blocks >= 1
    assert (blocks < res.n_epochs) == data_steps
    w_ref = _sklearn_l1(X, y, lam)
    ones = np.ones(n)
    p_ref = primal_value(1, X @ w_ref, y, ones, w_ref, lam, 0.0)
    # an exact certificate: no point beats P - gap, and scikit-learn's is no better
    assert res.gap <= 1e-14 * np.log(2)
    assert res.primal - res.gap <= p_ref * (1 + 1e-13)
    assert res.primal <= p_ref * (1 + 1e-12)
    assert np.max(np.abs(res.w - w_ref)) <= 1e-8 * np.max(np.abs(w_ref))
    assert np.array_equal(res.w != 0, np.abs(w_ref) > 1e-8 * np.max(np.abs(w_ref)))


def test_dense_l1_with_intercept_and_weights_matches_the_data_form():
    # the intercept is the compact block's last index; hessian="data" is the plain
    # data form on every iteration (no block), an independent path to the same optimum
    X, y = _correlated(250, 30, seed=3)
    y[:40] = 1.0  # unbalanced: a nonzero intercept
    sw = np.random.default_rng(4).uniform(0.0, 2.0, size=250)
    lam = 0.05 * float(np.abs(X.T @ y).max()) / 250
    kw = dict(loss="logistic", penalty="l1", lam=lam, fit_intercept=True, sample_weight=sw,
              solver="newton-cd", tol=1e-14, max_epochs=300)
    res = cdlearn.solve(X, y, **kw)
    ref = cdlearn.solve(X, y, hessian="data", **kw)
    assert res.converged and ref.converged
    assert res.info["block_steps"] >= 1 and "block_steps" not in ref.info
    assert abs(res.intercept) > 0.1
    assert res.intercept == pytest.approx(ref.intercept, rel=1e-7)
    assert np.max(np.abs(res.w - ref.w)) <= 1e-7 * np.max(np.abs(ref.w))
    assert res.primal == pytest.approx(ref.primal, rel=1e-13)


def test_dense_l1_certificate_reuses_the_gradient_exactly():
    # the l1 certificate rescales α = -n c and reuses g = Xᵀc: same numbers as the
    # generic certificate, which recomputes Xᵀα
    X, y = _correlated(200, 25, seed=5)
    sw = np.random.default_rng(6).uniform(0.0, 2.0, size=200)
    prob = make_problem(X, y, loss="logistic", penalty="l1", lam=0.01, fit_intercept=True,
                        sample_weight=sw)
    state = NewtonCDState(prob)
    assert state.dense_l1
    for _ in range(4):
        fused = state.certificate()
        ref = margin_certificate(state)
        assert fused[0] == pytest.approx(ref[0], rel=1e-13)
        assert fused[1] == pytest.approx(ref[1], rel=1e-12, abs=1e-14)
        assert fused[2] == pytest.approx(ref[2], rel=1e-9, abs=1e-15 * ref[0])
        state.run_epoch()


@pytest.mark.parametrize("n,d,expected", [(300, 40, "newton-cd"), (40, 300, "ws-cd")])
def test_auto_runs_newton_cd_on_dense_l1_logistic(n, d, expected):
    X, y = _correlated(n, d, seed=7)
    prob = make_problem(X, y, loss="logistic", penalty="l1", lam=1e-3)
    solver, reason = auto_solver(prob)
    assert solver == expected
    if expected == "newton-cd":
        assert "proximal Newton" in reason


def test_first_working_set_is_capped_and_the_optimum_unchanged():
    # at w = 0 newGLMNET's set holds every violator (here > 20): the dense l1 path keeps
    # the WS_START largest (plus the intercept) and still reaches scikit-learn's optimum
    from cdlearn.solvers import newton_cd

    X, y = _correlated(200, 80, seed=11, rho=0.3)
    lam = 0.15 * float(np.abs(X.T @ y).max()) / (2 * 200)
    prob = make_problem(X, y, loss="logistic", penalty="l1", lam=lam)
    state = NewtonCDState(prob)
    state.certificate()
    violators = int(np.sum(np.abs(state.g[:80]) > lam))  # 37
    assert violators > newton_cd.WS_START
    state.run_epoch()
    assert state.last["n_ws"] == newton_cd.WS_START
    res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, tol=1e-14,
                        max_epochs=300)
    assert res.solver == "newton-cd" and res.converged
    w_ref = _sklearn_l1(X, y, lam)
    p_ref = primal_value(1, X @ w_ref, y, np.ones(200), w_ref, lam, 0.0)
    assert res.primal <= p_ref * (1 + 1e-12)
    assert res.primal - res.gap <= p_ref * (1 + 1e-13)
    assert np.max(np.abs(res.w - w_ref)) <= 1e-7 * np.max(np.abs(w_ref))


def test_capped_set_with_intercept_and_zero_weights_matches_dropping_the_rows():
    # zero weights: sqrt(D_i) = 0, so X_ws Δ is gathered from the columns, not read from
    # sqrt(D)·X_ws; the rows with weight 0 cannot change the optimum
    X, y = _correlated(300, 60, seed=12)
    y[:50] = 1.0
    sw = np.random.default_rng(13).uniform(0.5, 2.0, size=300)
    sw[::7] = 0.0
    lam = 0.03 * float(np.abs(X.T @ y).max()) / 300
    kw = dict(loss="logistic", penalty="l1", lam=lam, fit_intercept=True,
              solver="newton-cd", tol=1e-14, max_epochs=300)
    res = cdlearn.solve(X, y, sample_weight=sw, **kw)
    keep = sw > 0
    # P averages over n: dropping rows rescales the loss by n/n_kept, so lam too
    ref = cdlearn.solve(X[keep], y[keep], sample_weight=sw[keep],
                        **dict(kw, lam=lam * 300 / keep.sum(), hessian="data"))
    prob = make_problem(X, y, loss="logistic", penalty="l1", lam=lam, fit_intercept=True,
                        sample_weight=sw)
    state = NewtonCDState(prob)
    state.certificate()
    state.run_epoch()
    assert state.last["n_ws"] <= 21  # WS_START features and the intercept
    assert res.converged and ref.converged and res.info["block_steps"] >= 1
    assert res.intercept == pytest.approx(ref.intercept, rel=1e-7)
    assert np.max(np.abs(res.w - ref.w)) <= 1e-7 * np.max(np.abs(ref.w))


def test_capped_set_with_intercept_and_weights_matches_sklearn_saga():
    from sklearn.linear_model import LogisticRegression

    X, y = _correlated(200, 60, seed=21)
    y[:30] = 1.0
    sw = np.random.default_rng(2).uniform(0.5, 2.0, size=200)
    lam = 0.03 * float(np.abs(X.T @ y).max()) / 200
    res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, fit_intercept=True,
                        sample_weight=sw, tol=1e-14, max_epochs=500)
    assert res.solver == "newton-cd" and res.converged and res.info["block_steps"] >= 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = LogisticRegression(solver="saga", C=1.0 / (lam * 200), l1_ratio=1.0, tol=1e-12,
                                 max_iter=200_000, random_state=0).fit(X, y, sample_weight=sw)

    def P(w, b):
        return (sw * np.logaddexp(0.0, -y * (X @ w + b))).sum() / 200 + lam * np.abs(w).sum()

    p_ref = P(ref.coef_.ravel(), ref.intercept_[0])
    assert abs(P(res.w, res.intercept) - p_ref) <= 1e-12 * p_ref
    assert np.max(np.abs(res.w - ref.coef_.ravel())) <= 1e-8 * np.max(np.abs(res.w))
    assert res.intercept == pytest.approx(ref.intercept_[0], rel=1e-8)
