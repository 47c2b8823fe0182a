"""``positive=True`` (w ≥ 0): penalty layer, solvers, certificate, estimators vs scikit-learn."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from sklearn.exceptions import ConvergenceWarning

import cdlearn
from cdlearn.estimators import ElasticNet, Lasso, LassoCV
from cdlearn.paths import lambda_max
from cdlearn.penalties import (
    coordinate_prox_step,
    coordinate_violation,
    dual_feasible_scale,
    penalty_conjugate,
    penalty_fenchel_young,
    penalty_value,
)


def _problem(n=60, d=40, seed=0, sparse=False):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    if sparse:
        X *= rng.rand(n, d) < 0.3
    w = np.zeros(d)
    w[:8] = rng.randn(8) * 2  # some negative: the constraint binds
    y = X @ w + 0.5 + 0.2 * rng.randn(n)
    return (sp.csc_matrix(X) if sparse else X), y


def enet_objective(X, y, w, b, alpha, rho):
    n = y.shape[0]
    r = y - X @ w - b
    return r @ r / (2 * n) + alpha * rho * np.abs(w).sum() + 0.5 * alpha * (1 - rho) * w @ w


# --------------------------------------------------------------------------- penalty layer
def test_positive_conjugate_is_the_sup_over_nonnegative_t():
    """(λg + ι(w≥0))*(u) = Σ sup_{t≥0} (u t - λ1 t - λ2/2 t²), by brute force on a grid."""
    rng = np.random.RandomState(1)
    u = rng.randn(7) * 2
    t = np.linspace(0.0, 40.0, 400_001)
    for l1, l2 in [(0.3, 0.7), (0.0, 1.5)]:
        brute = sum(np.max((uj - l1) * t - 0.5 * l2 * t * t) for uj in u)
        assert penalty_conjugate(u, l1, l2, positive=True) == pytest.approx(brute, abs=1e-8)
        # the unconstrained conjugate counts the negative side too
        assert penalty_conjugate(u, l1, l2) > penalty_conjugate(u, l1, l2, positive=True)
    # λ2 = 0: the one-sided indicator of max_j u_j ≤ λ1
    assert penalty_conjugate(np.array([-5.0, 0.2]), 0.3, 0.0, positive=True) == 0.0
    assert penalty_conjugate(np.array([-5.0, 0.2]), 0.3, 0.0) == np.inf
    assert penalty_conjugate(np.array([0.4, 0.2]), 0.3, 0.0, positive=True) == np.inf


@pytest.mark.parametrize("l1,l2", [(0.3, 0.7), (0.3, 0.0), (0.0, 0.5)])
def test_positive_fenchel_young_equals_value_plus_conjugate_minus_inner(l1, l2):
    rng = np.random.RandomState(2)
    w = np.abs(rng.randn(9)) * (rng.rand(9) < 0.6)
    u = rng.randn(9)
    if l2 == 0.0:
        u = np.minimum(u, l1)  # in the dual domain
    fy = penalty_fenchel_young(w, u, l1, l2, positive=True)
    direct = (penalty_value(w, l1, l2, positive=True)
              + penalty_conjugate(u, l1, l2, positive=True) - w @ u)
    assert fy >= 0.0
    assert fy == pytest.approx(direct, rel=1e-12, abs=1e-14)
    assert penalty_value(-w - 1.0, l1, l2, positive=True) == np.inf
    assert penalty_fenchel_young(-w - 1.0, u, l1, l2, positive=True) == np.inf


def test_positive_dual_rescaling_is_one_sided():
    u = np.array([-3.0, 0.1, 0.5])
    # symmetric: |-3| > 1 forces s = 1/3; one-sided: only 0.5 counts, feasible as is
    assert dual_feasible_scale(u, 1.0, 0.0) == pytest.approx(1.0 / 3.0)
    assert dual_feasible_scale(u, 1.0, 0.0, positive=True) == 1.0
    assert dual_feasible_scale(u, 0.25, 0.0, positive=True) == pytest.approx(0.5)
    assert dual_feasible_scale(-np.abs(u), 0.25, 0.0, positive=True) == 1.0


def test_positive_prox_and_violation():
    # argmin_{t ≥ 0} g (t - w) + L/2 (t - w)² + l1 t + l2/2 t², by brute force
    t = np.linspace(0.0, 10.0, 1_000_001)
    for w, g, L, l1, l2 in [(0.5, 3.0, 2.0, 0.1, 0.2), (0.5, -1.0, 2.0, 0.1, 0.2),
                            (0.0, 0.05, 1.0, 0.1, 0.0)]:
        brute = t[np.argmin(g * (t - w) + 0.5 * L * (t - w) ** 2 + l1 * t + 0.5 * l2 * t * t)]
        assert coordinate_prox_step(w, g, L, l1, l2, True) == pytest.approx(brute, abs=1e-5)
    assert coordinate_prox_step(0.5, 3.0, 2.0, 0.1, 0.2, True) == 0.0
    assert coordinate_prox_step(0.5, 3.0, 2.0, 0.1, 0.2) < 0.0
    # at w_j = 0, only -g > l1 violates: ∂ = (-∞, l1]
    assert coordinate_violation(0.0, 5.0, 1.0, 0.0, True) == 0.0
    assert coordinate_violation(0.0, 5.0, 1.0, 0.0) == 4.0
    assert coordinate_violation(0.0, -1.5, 1.0, 0.0, True) == 0.5


# --------------------------------------------------------------------------- solve
@pytest.mark.parametrize("penalty,rho", [("l1", 1.0), ("elastic_net", 0.5)])
@pytest.mark.parametrize("solver", ["auto", "ws-cd", "primal-cd"])
@pytest.mark.parametrize("sparse", [False, True])
def test_solve_positive_matches_sklearn(penalty, rho, solver, sparse):
    X, y = _problem(sparse=sparse)
    Xd = X.toarray() if sparse else X
    lam = 0.05 * lambda_max(X, y, penalty=penalty, l1_ratio=rho, fit_intercept=True,
                            positive=True)
    res = cdlearn.solve(X, y, loss="squared", penalty=penalty, lam=lam, l1_ratio=rho,
                        positive=True, solver=solver, fit_intercept=True, tol=1e-13,
                        max_epochs=100_000)
    ref = sk.ElasticNet(alpha=lam, l1_ratio=rho, positive=True, tol=1e-15,
                        max_iter=1_000_000).fit(Xd, y)
    free = sk.ElasticNet(alpha=lam, l1_ratio=rho, tol=1e-12, max_iter=100_000).fit(Xd, y)
    assert free.coef_.min() < -1e-2  # the constraint binds on this problem
    assert res.converged and res.w.min() >= 0.0
    assert res.solver == ("ws-cd" if solver == "auto" else solver)
    ours = enet_objective(Xd, y, res.w, res.intercept, lam, rho)
    theirs = enet_objective(Xd, y, ref.coef_, ref.intercept_, lam, rho)
    assert ours == pytest.approx(res.primal, rel=1e-12)
    assert abs(ours - theirs) <= 1e-10 * theirs
    np.testing.assert_allclose(res.w, ref.coef_, atol=1e-5)
    # the certificate: P - D = gap, 0 ≤ gap, and P* lies within it
    assert res.primal - res.dual == pytest.approx(res.gap, abs=1e-12)
    assert 0.0 <= res.gap <= 1e-13 * res.trace["primal"][0]
    assert theirs >= res.dual - 1e-14


@pytest.mark.parametrize("penalty", ["l1", "elastic_net"])
def test_positive_gap_bounds_suboptimality_along_the_run(penalty):
    """Every certified gap is ≥ P(w_k) - P*: the one-sided conjugate is a valid dual."""
    X, y = _problem(seed=3)
    lam = 0.02 * lambda_max(X, y, penalty=penalty, positive=True)
    kw = dict(loss="squared", penalty=penalty, lam=lam, positive=True, solver="primal-cd",
              sampling="uniform", check_every=1)
    star = cdlearn.solve(X, y, tol=1e-14, max_epochs=100_000, **kw).primal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = cdlearn.solve(X, y, tol=1e-14, max_epochs=30, **kw)
    primal, gap = res.trace["primal"], res.trace["gap"]
    assert np.all(gap >= 0.0) and gap[-1] < gap[0]
    assert np.all(primal - star <= gap * (1 + 1e-9) + 1e-15)


def test_positive_logistic_ws_cd_and_primal_cd_agree():
    rng = np.random.RandomState(4)
    X = rng.randn(80, 20)
    y = np.where(X @ rng.randn(20) + 0.3 * rng.randn(80) > 0, 1.0, -1.0)
    lam = 0.05 * lambda_max(X, y, loss="logistic", positive=True)
    out = [cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, positive=True,
                         solver=s, fit_intercept=True, tol=1e-12, max_epochs=100_000)
           for s in ("ws-cd", "primal-cd")]
    for r in out:
        assert r.converged and r.w.min() >= 0.0 and 0 <= r.gap <= 1e-11
    assert out[0].primal == pytest.approx(out[1].primal, rel=1e-10)
    np.testing.assert_allclose(out[0].w, out[1].w, atol=1e-5)


def test_positive_without_penalty_is_nonnegative_least_squares():
    from scipy.optimize import nnls

    X, y = _problem(n=50, d=10, seed=5)
    res = cdlearn.solve(X, y, loss="squared", penalty="none", positive=True, tol=1e-12,
                        max_epochs=100_000)
    assert res.solver == "primal-cd"
    w_ref, _ = nnls(X, y)
    np.testing.assert_allclose(res.w, w_ref, atol=1e-6)


@pytest.mark.parametrize("solver", ["dual-cd", "newton-cd", "fista", "scd"])
def test_positive_unsupported_solvers_raise(solver):
    X, y = _problem()
    with pytest.raises(ValueError, match=rf"solver='{solver}' does not support positive=True"):
        cdlearn.solve(X, y, loss="squared", penalty="elastic_net", lam=0.1, positive=True,
                      solver=solver)


def test_unsupported_penalty_message_names_l1_ratio_only_for_dual_cd():
    # block-cd used to say "penalty='elastic_net' with l1_ratio=1" for any l1_ratio
    X, y = _problem()
    with pytest.raises(ValueError) as err:
        cdlearn.solve(X, y, penalty="elastic_net", lam=0.1, l1_ratio=0.5, solver="block-cd")
    assert "l1_ratio=1" not in str(err.value) and "penalty='elastic_net'" in str(err.value)
    with pytest.raises(ValueError, match="with l1_ratio=1"):
        cdlearn.solve(X, y, penalty="elastic_net", lam=0.1, l1_ratio=1.0, solver="dual-cd")


def test_positive_bad_values_raise():
    X, y = _problem()
    with pytest.raises(TypeError, match="positive must be a bool"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, positive="yes")
    with pytest.raises(ValueError, match="shrinking.*positive"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, positive=True, solver="primal-cd",
                      sampling="shrinking")
    with pytest.raises(ValueError, match="positive"):
        cdlearn.solve(X, y, penalty="group_l2", lam=0.1, groups=np.arange(40) // 4,
                      positive=True)
    with pytest.raises(TypeError, match="positive must be a bool"):
        Lasso(positive=1).fit(X, y)


def test_positive_lambda_max_is_one_sided():
    rng = np.random.RandomState(6)
    X = rng.randn(60, 40)
    y = -3.0 * X[:, 0] + 0.5 * X[:, 1] + 1.0 + 0.1 * rng.randn(60)
    lmax = lambda_max(X, y, penalty="l1", fit_intercept=True, positive=True)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    assert lmax == pytest.approx(np.max(Xc.T @ yc) / 60, rel=1e-12)  # scikit-learn's grid
    assert lmax < 0.5 * lambda_max(X, y, penalty="l1", fit_intercept=True)
    for f, nonzero in ((1.0 + 1e-9, False), (0.999, True)):
        res = cdlearn.solve(X, y, penalty="l1", lam=f * lmax, positive=True, fit_intercept=True,
                            tol=1e-12)
        assert bool(np.any(res.w > 0)) is nonzero


def test_positive_warm_start_is_projected():
    X, y = _problem()
    res = cdlearn.solve(X, y, penalty="l1", lam=0.05, positive=True, w0=-np.ones(40),
                        tol=1e-10)
    assert res.converged and res.w.min() >= 0.0


# --------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("make,ref", [
    (lambda: Lasso(alpha=0.05, positive=True),
     lambda: sk.Lasso(alpha=0.05, positive=True)),
    (lambda: ElasticNet(alpha=0.05, l1_ratio=0.3, positive=True),
     lambda: sk.ElasticNet(alpha=0.05, l1_ratio=0.3, positive=True)),
])
@pytest.mark.parametrize("sparse", [False, True])
def test_positive_estimators_match_sklearn(make, ref, sparse):
    X, y = _problem(sparse=sparse)
    sw = np.random.RandomState(0).rand(60) + 0.5
    ours = make().set_params(tol=1e-13, max_iter=100_000).fit(X, y, sample_weight=sw)
    theirs = ref().set_params(tol=1e-15, max_iter=1_000_000).fit(X, y, sample_weight=sw)
    assert ours.coef_.min() >= 0.0
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-6)
    assert ours.intercept_ == pytest.approx(theirs.intercept_, abs=1e-6)


def test_positive_lasso_cv_matches_sklearn():
    from sklearn.model_selection import KFold

    X, y = _problem(n=80, d=20, seed=7)
    ours = LassoCV(n_alphas=8, cv=KFold(3), positive=True, tol=1e-13,
                   max_iter=100_000).fit(X, y)
    ref = sk.LassoCV(alphas=8, cv=KFold(3), positive=True, tol=1e-14,
                     max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(ours.alphas_, ref.alphas_, rtol=1e-12)
    np.testing.assert_allclose(ours.mse_path_, ref.mse_path_, rtol=1e-6)
    assert ours.alpha_ == ref.alpha_
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    assert ours.coef_.min() >= 0.0


def test_positive_ridge_penalty_routes_to_ws_cd_and_matches_sklearn():
    import warnings as w

    X, y = _problem(seed=8)
    ours = ElasticNet(alpha=0.3, l1_ratio=0.0, positive=True, tol=1e-14,
                      max_iter=100_000).fit(X, y)
    with w.catch_warnings():
        w.simplefilter("ignore")  # scikit-learn advises Ridge for l1_ratio=0
        ref = sk.ElasticNet(alpha=0.3, l1_ratio=0.0, positive=True, tol=1e-15,
                            max_iter=1_000_000).fit(X, y)
    assert ours.solver_ == "ws-cd" and ours.coef_.min() >= 0.0
    assert np.count_nonzero(ours.coef_ == 0.0) > 0  # the constraint is active
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
