"""Block CD over the rows of W: multi-task elastic net and multinomial logistic regression.

References: scikit-learn's MultiTaskLasso / MultiTaskElasticNet and
LogisticRegression (lbfgs for l2, saga for l1 / elastic net), converged tightly;
objectives are evaluated with independent numpy formulas written here.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from sklearn.datasets import load_digits, load_iris, load_wine, make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from cdlearn.estimators import LogisticRegression, MultiTaskElasticNet, MultiTaskLasso
from cdlearn.multioutput import solve_multinomial, solve_multitask


# --------------------------------------------------------------------------- references
def mt_objective(X, Y, W, b, alpha, rho, sw=None):
    """scikit-learn's multi-task objective; W is (d, K); weights rescaled to sum to n."""
    n = X.shape[0]
    sw = np.ones(n) if sw is None else sw * (n / sw.sum())
    R = Y - X @ W - b
    return (sw @ (R * R).sum(1)) / (2 * n) + alpha * rho * np.linalg.norm(W, axis=1).sum() \
        + 0.5 * alpha * (1 - rho) * (W * W).sum()


def ce_objective(X, y, W, b, C, rho=0.0, sw=None):
    """scikit-learn's multinomial objective C Σ s_i CE_i + r(W); y holds 0..K-1."""
    sw = np.ones(X.shape[0]) if sw is None else sw
    Z = X @ W + b
    m = Z.max(1)
    lse = m + np.log(np.exp(Z - m[:, None]).sum(1))
    ce = lse - Z[np.arange(len(y)), y]
    return C * (sw @ ce) + rho * np.abs(W).sum() + 0.5 * (1 - rho) * (W * W).sum()


def _mt_problem(seed=0, n=60, d=20, k=3):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    W = np.zeros((d, k))
    W[:4] = rng.randn(4, k)
    return X, X @ W + 0.3 * rng.randn(n, k) + 2.0


def _sparse_classes(seed=0, n=200, d=50, k=4):
    rng = np.random.RandomState(seed)
    X = sp.random(n, d, density=0.15, format="csr", random_state=rng)
    X.data = rng.randn(X.nnz)
    y = np.argmax(X @ rng.randn(d, k) + 0.5 * rng.randn(n, k), axis=1)
    return X, y


def _scaled(loader):
    X, y = loader(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _collect(trace):
    return trace["primal"], trace["dual"], trace["gap"]


# --------------------------------------------------------------------------- multi-task
@pytest.mark.parametrize("rho", [1.0, 0.6])
def test_multitask_matches_sklearn(rho):
    X, Y = _mt_problem()
    alpha = 0.1
    cls_ref = sk.MultiTaskLasso if rho == 1 else sk.MultiTaskElasticNet
    cls = MultiTaskLasso if rho == 1 else MultiTaskElasticNet
    kw = {} if rho == 1 else {"l1_ratio": rho}
    ref = cls_ref(alpha=alpha, tol=1e-12, max_iter=100_000, **kw).fit(X, Y)
    ours = cls(alpha=alpha, tol=1e-13, max_iter=100_000, **kw).fit(X, Y)
    assert ours.coef_.shape == ref.coef_.shape == (3, 20)
    f_ours = mt_objective(X, Y, ours.coef_.T, ours.intercept_, alpha, rho)
    f_ref = mt_objective(X, Y, ref.coef_.T, ref.intercept_, alpha, rho)
    assert abs(f_ours - f_ref) <= 1e-8 * f_ref
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)
    # the row-group penalty zeroes whole rows
    np.testing.assert_array_equal(np.all(ours.coef_ == 0, axis=0),
                                  np.all(np.abs(ref.coef_) < 1e-10, axis=0))
    np.testing.assert_allclose(ours.predict(X), X @ ours.coef_.T + ours.intercept_)


@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_multitask_gap_is_primal_minus_dual(rho):
    X, Y = _mt_problem(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve_multitask(X, Y, lam=0.05, l1_ratio=rho, tol=0.0, max_epochs=30)
    P, D, gap = _collect(res.trace)
    assert np.all(gap >= 0) and gap[0] > 1e-3 > gap[-1]
    np.testing.assert_allclose(P - D, gap, rtol=1e-9, atol=1e-13)
    # P is the independent objective at the returned point (λ = α, weights 1)
    assert res.primal == pytest.approx(mt_objective(X, Y, res.w, res.intercept, 0.05, rho),
                                       rel=1e-12)


def test_multitask_dense_equals_sparse_and_random_order():
    X, Y = _mt_problem(2)
    kw = dict(alpha=0.05, l1_ratio=0.7, tol=1e-12, max_iter=10_000)
    dense = MultiTaskElasticNet(**kw).fit(X, Y)
    sparse = MultiTaskElasticNet(**kw).fit(sp.csc_matrix(X), Y)
    rand = MultiTaskElasticNet(selection="random", random_state=0, **kw).fit(X, Y)
    # different iterates (dense columns are centred, sparse ones are not), one optimum:
    # at a gap ≤ 1e-12 P(0) the coefficients agree to ~sqrt(gap / λ2)
    for other in (sparse, rand):
        assert other.dual_gap_ <= 1e-11
        np.testing.assert_allclose(other.coef_, dense.coef_, atol=1e-6)
        np.testing.assert_allclose(other.intercept_, dense.intercept_, atol=1e-6)


def test_multitask_weights_equal_repeated_rows_and_warm_start():
    X, Y = _mt_problem(3, n=40)
    sw = np.tile([1.0, 2.0], 20)
    rep = np.repeat(np.arange(40), sw.astype(int))
    kw = dict(alpha=0.05, l1_ratio=0.8, tol=1e-13, max_iter=10_000)
    weighted = MultiTaskElasticNet(**kw).fit(X, Y, sample_weight=sw)
    repeated = MultiTaskElasticNet(**kw).fit(X[rep], Y[rep])
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-8)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-8)
    cold = MultiTaskElasticNet(**kw).fit(X, Y)
    warm = MultiTaskElasticNet(warm_start=True, **kw)
    warm.coef_, warm.intercept_ = cold.coef_.copy(), cold.intercept_.copy()
    warm.fit(X, Y)
    assert warm.n_iter_ <= 2 < cold.n_iter_
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=1e-9)


def test_multitask_errors():
    X, Y = _mt_problem()
    with pytest.raises(ValueError, match="mono-task"):
        MultiTaskLasso().fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="selection"):
        MultiTaskLasso(selection="greedy").fit(X, Y)
    with pytest.raises(ValueError, match="l1_ratio"):
        MultiTaskElasticNet(l1_ratio=1.5).fit(X, Y)
    with pytest.raises(ValueError, match="Y must have shape"):
        solve_multitask(X, Y[:10], lam=0.1)
    with pytest.raises(ValueError, match="W0 must have shape"):
        solve_multitask(X, Y, lam=0.1, W0=np.zeros((3, 20)))


# --------------------------------------------------------------------------- multinomial
@pytest.mark.parametrize("solver", ["auto", "multi-cd"])
@pytest.mark.parametrize("name", ["iris", "wine", "digits"])
def test_multinomial_l2_matches_lbfgs(name, solver):
    X, y = _scaled({"iris": load_iris, "wine": load_wine, "digits": load_digits}[name])
    if name == "digits":
        X, y = X[:300], y[:300]
    C = 0.5
    ref = sk.LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, y)
    ours = LogisticRegression(C=C, tol=1e-12, max_iter=100_000, solver=solver).fit(X, y)
    # "auto" is L-BFGS for the l2 penalty
    assert ours.solver_ == {"auto": "multinomial-lbfgs"}.get(solver, solver)
    assert ours.coef_.shape == ref.coef_.shape
    f_ours = ce_objective(X, y, ours.coef_.T, ours.intercept_, C)
    f_ref = ce_objective(X, y, ref.coef_.T, ref.intercept_, C)
    assert f_ours <= f_ref * (1 + 1e-10)
    assert f_ref <= f_ours * (1 + 1e-7)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    # intercepts are defined up to a common shift: cdlearn's are centred
    assert abs(ours.intercept_.sum()) < 1e-10
    np.testing.assert_allclose(ours.intercept_, ref.intercept_ - ref.intercept_.mean(),
                               atol=1e-4 * max(1.0, np.abs(ref.intercept_).max()))


@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_multinomial_l1_and_elastic_net_match_saga(rho):
    X, y = _scaled(load_iris)
    C = 1.0
    n = X.shape[0]
    ref = sk.LogisticRegression(C=C, l1_ratio=rho, solver="saga", tol=1e-12,
                                max_iter=200_000, random_state=0).fit(X, y)
    penalty = "l1" if rho == 1 else "elastic_net"
    res = solve_multinomial(X, y, lam=1 / (C * n), penalty=penalty, l1_ratio=rho, tol=1e-13,
                            max_epochs=100_000)
    f_ours = ce_objective(X, y, res.w, res.intercept, C, rho)
    f_ref = ce_objective(X, y, ref.coef_.T, ref.intercept_, C, rho)
    assert f_ours <= f_ref * (1 + 1e-10)
    assert f_ref <= f_ours * (1 + 1e-7)
    # cdlearn's P is scikit-learn's objective divided by C n
    assert res.primal == pytest.approx(f_ours / (C * n), rel=1e-12)
    np.testing.assert_allclose(res.w.T, ref.coef_, atol=1e-3)


@pytest.mark.parametrize("penalty, solver", [("l2", "multi-cd"), ("l1", "auto"),
                                             ("elastic_net", "auto"),
                                             ("l2", "multinomial-lbfgs")])
def test_multinomial_gap_is_primal_minus_dual(penalty, solver):
    X, y = _sparse_classes(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve_multinomial(X, y, lam=0.02, penalty=penalty, l1_ratio=0.6, tol=0.0,
                                max_epochs=25 if solver != "multinomial-lbfgs" else 4,
                                solver=solver)
    assert res.solver == ("multi-cd" if solver == "auto" else solver)
    P, D, gap = _collect(res.trace)
    assert np.all(gap >= 0) and gap[-1] < 1e-2 * gap[0]
    np.testing.assert_allclose(P - D, gap, rtol=1e-9, atol=1e-13)
    # the primal is the independent objective (C = 1/(λn), divided by C n)
    n = X.shape[0]
    C, rho = 1 / (0.02 * n), {"l2": 0.0, "l1": 1.0, "elastic_net": 0.6}[penalty]
    assert res.primal == pytest.approx(
        ce_objective(X.toarray(), y, res.w, res.intercept, C, rho) / (C * n), rel=1e-12)


def test_multinomial_dense_equals_sparse_and_orders():
    X, y = _sparse_classes(2)
    kw = dict(lam=0.01, penalty="elastic_net", l1_ratio=0.5, tol=1e-13, max_epochs=50_000)
    sparse = solve_multinomial(X, y, **kw)
    dense = solve_multinomial(X.toarray(), y, **kw)
    shuffled = solve_multinomial(X, y, sampling="shuffle", seed=3, **kw)
    uniform = solve_multinomial(X, y, sampling="uniform", seed=3, **kw)
    assert sparse.converged and dense.converged and shuffled.converged and uniform.converged
    for other in (dense, shuffled, uniform):  # one optimum, to ~sqrt(gap / λ2)
        np.testing.assert_allclose(other.w, sparse.w, atol=2e-5)
        np.testing.assert_allclose(other.intercept, sparse.intercept, atol=2e-5)
        assert other.primal == pytest.approx(sparse.primal, rel=1e-11)


@pytest.mark.parametrize("solver", ["multinomial-lbfgs", "multi-cd"])
def test_multinomial_weights_equal_repeated_rows_and_warm_start(solver):
    X, y = _scaled(load_wine)
    sw = np.tile([1.0, 3.0], X.shape[0] // 2)
    rep = np.repeat(np.arange(X.shape[0]), sw.astype(int))
    # tol=1e-7: its coefficient target (≈ λ2 (tol ‖W‖∞)²) is above the gap floor 1e-16·P
    kw = dict(C=0.3, tol=1e-7, max_iter=100_000, solver=solver)
    weighted = LogisticRegression(**kw).fit(X, y, sample_weight=sw)
    repeated = LogisticRegression(**kw).fit(X[rep], y[rep])
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-7)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-7)
    warm = LogisticRegression(warm_start=True, **kw)
    warm.coef_, warm.intercept_ = weighted.coef_.copy(), weighted.intercept_.copy()
    warm.fit(X, y, sample_weight=sw)
    assert warm.n_iter_[0] <= min(2, weighted.n_iter_[0] - 1)
    np.testing.assert_allclose(warm.coef_, weighted.coef_, atol=1e-8)


def test_multinomial_lbfgs_dense_equals_sparse_and_block_cd():
    X, y = _sparse_classes(2)
    kw = dict(lam=0.01, tol=1e-13, max_epochs=10_000)
    sparse = solve_multinomial(X, y, solver="multinomial-lbfgs", **kw)
    dense = solve_multinomial(X.toarray(), y, **kw)  # "auto": L-BFGS for l2
    cd = solve_multinomial(X, y, solver="multi-cd", **kw)
    assert dense.solver == sparse.solver == "multinomial-lbfgs"
    assert sparse.converged and dense.converged and cd.converged
    assert sparse.gap <= 1e-13 * np.log(4) and sparse.info["lbfgs_iterations"] > 0
    for other in (dense, cd):  # one optimum: ‖W − W*‖² ≤ 2 gap / λ2 (5e-6 here)
        np.testing.assert_allclose(other.w, sparse.w, atol=1e-5)
        np.testing.assert_allclose(other.intercept, sparse.intercept, atol=1e-5)
        assert other.primal == pytest.approx(sparse.primal, rel=1e-12)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_multinomial_lbfgs_without_penalty_matches_block_cd(fit_intercept):
    # overlapping classes in 3 features: the unpenalised optimum is finite
    rng = np.random.RandomState(0)
    X = rng.randn(300, 3)
    y = np.argmax(X @ rng.randn(3, 3) + 2.0 * rng.randn(300, 3), axis=1)
    kw = dict(lam=1.0, penalty="none", fit_intercept=fit_intercept, tol=1e-12,
              max_epochs=100_000)
    ours = solve_multinomial(X, y, **kw)
    cd = solve_multinomial(X, y, solver="multi-cd", **kw)
    assert ours.solver == "multinomial-lbfgs" and ours.dual is None
    assert ours.gap <= 1e-12 * np.log(3)  # the largest gradient entry
    assert ours.primal == pytest.approx(cd.primal, rel=1e-12)
    # unpenalised, a feature's K weights are defined up to a common shift
    np.testing.assert_allclose(ours.w - ours.w.mean(1, keepdims=True),
                               cd.w - cd.w.mean(1, keepdims=True), atol=1e-9)
    ref = sk.LogisticRegression(C=np.inf, fit_intercept=fit_intercept, tol=1e-12,
                                max_iter=100_000).fit(X, y)
    f_ref = ce_objective(X, y, ref.coef_.T, ref.intercept_, 1.0, 0.0) - 0.5 * np.sum(
        ref.coef_ ** 2)
    assert ours.primal * 300 <= f_ref * (1 + 1e-10)


def test_multinomial_lbfgs_errors():
    X, y = _scaled(load_iris)
    with pytest.raises(ValueError, match="solver='multinomial-lbfgs' or 'multinomial-newton' needs"):
        solve_multinomial(X, y, lam=0.1, penalty="l1", solver="multinomial-lbfgs")
    with pytest.raises(ValueError, match="solver='newton'"):
        solve_multinomial(X, y, lam=0.1, solver="newton")
    # scikit-learn's names of its multinomial solvers run cdlearn's choice
    assert LogisticRegression(solver="lbfgs").fit(X, y).solver_ == "multinomial-lbfgs"
    assert LogisticRegression(penalty="l1", C=0.5).fit(X, y).solver_ == "multi-cd"


def test_multinomial_estimator_errors_and_ovr():
    X, y = _scaled(load_iris)
    with pytest.raises(ValueError, match="OneVsRestClassifier"):
        LogisticRegression(solver="dual-cd").fit(X, y)
    with pytest.raises(ValueError, match="sampling='importance'"):
        LogisticRegression(sampling="importance").fit(X, y)
    with pytest.raises(ValueError, match="batch_size=4"):
        LogisticRegression(batch_size=4).fit(X, y)
    # binary problems keep the single-column model
    two = LogisticRegression().fit(X[y < 2], y[y < 2])
    assert two.coef_.shape == (1, 4) and two.solver_ != "multi-cd"
    with pytest.raises(ValueError, match="at least 2 classes"):
        solve_multinomial(X, np.zeros(150), lam=0.1)


def test_multinomial_max_epochs_warns():
    X, y = _scaled(load_iris)
    with pytest.warns(ConvergenceWarning, match="max_epochs=2"):
        res = solve_multinomial(X, y, lam=1e-4, tol=1e-14, max_epochs=2)
    assert not res.converged and res.n_epochs == 2


# --------------------------------------------------------------------------- tol = accuracy of W
@pytest.mark.parametrize("ridge_alpha", [1e-6, 1.0, 1e6])
def test_multitask_ridge_closed_form(ridge_alpha):
    """MultiTaskElasticNet(l1_ratio=0) is ridge for every task: its coef_ matches the closed
    form at rtol 5e-7 (scikit-learn's test_enet_ridge_consistency). Before ``tol`` bounded
    W's error (a gap ≤ tol·P(0) alone), the cases 1e-6 and 1.0 failed."""
    n, d = 300, 100
    X, Y = make_regression(n_samples=n, n_features=d, n_targets=3, effective_rank=10,
                           n_informative=50, random_state=42)
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    W = np.linalg.solve(Xc.T @ Xc + ridge_alpha * np.eye(d), Xc.T @ Yc)
    b = Y.mean(0) - X.mean(0) @ W
    tol = 1e-11 if ridge_alpha >= 1e-2 else 1e-16
    m = MultiTaskElasticNet(alpha=ridge_alpha / n, l1_ratio=0, tol=tol).fit(X, Y)
    np.testing.assert_allclose(m.coef_, W.T, rtol=5e-7, atol=3e-11)
    np.testing.assert_allclose(m.intercept_, b, atol=1e-9 * np.abs(b).max())


def test_multitask_tol_bounds_coefficients():
    """The default tol=1e-4 is the relative accuracy of W (scikit-learn's default, here
    certified): against scikit-learn at tol=1e-14, within 1e-4·max|W|."""
    rng = np.random.RandomState(3)
    X = rng.randn(40, 120)
    Y = X[:, :6] @ rng.randn(6, 3) + 0.1 * rng.randn(40, 3)
    ref = sk.MultiTaskElasticNet(alpha=0.05, l1_ratio=0.7, tol=1e-14, max_iter=100000).fit(X, Y)
    m = MultiTaskElasticNet(alpha=0.05, l1_ratio=0.7).fit(X, Y)
    assert np.max(np.abs(m.coef_ - ref.coef_)) <= 1e-4 * np.max(np.abs(ref.coef_))


def test_multitask_lasso_ill_conditioned_reaches_skglm():
    """A badly scaled design (Vandermonde columns 1..64) at tol=1e-10: skglm 0.5's solution
    (the numbers of scikit-learn's test_multi_task_lasso_vs_skglm, 12 digits) to 1e-8,
    within
    max_iter=5000 and without a ConvergenceWarning. Block CD alone stopped at 5000 epochs
    with a gap of 2.2e-9; Newton on the non-zero rows (the group penalty is smooth there,
    ``stopping._group_newton``) finishes it."""
    X = np.vander(np.arange(5), 4).astype(float)
    Y = np.arange(15).reshape(5, 3).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = MultiTaskLasso(alpha=0.1, tol=1e-10, max_iter=5000).fit(X, Y)
    np.testing.assert_allclose(mt_objective(X, Y, m.coef_.T, m.intercept_, 0.1, 1.0),
                               0.4965993692547902, rtol=1e-10)
    np.testing.assert_allclose(m.intercept_, [0.219942959407, 1.219942959407, 2.219942959407],
                               rtol=1e-8)
    np.testing.assert_allclose(
        m.coef_, np.tile([-0.032075014794, 0.25430904614, 2.44785152982, 0], (3, 1)),
        rtol=1e-8, atol=1e-12)
