"""Dual CD's shrinking (liblinear's, for losses with dual bounds) and its defaults."""

import numpy as np
import pytest
from sklearn.svm import LinearSVC

import cdlearn
from cdlearn.api import default_sampling, make_problem, squared_l1_choice
from cdlearn.losses import LOSS_CODES
from cdlearn.objectives import duality_gap, primal_and_gap, primal_value
from references import sparse_classification_problem


def _problem(seed=0, n=600, d=80, weights=False):
    return sparse_classification_problem(seed, n, d, density=0.1, noise=0.2, weights=weights)


def _svc_objective(X, y, w, loss, lam):
    m = y * (X @ w)
    slack = np.maximum(0.0, 1.0 - m)
    phi = slack ** 2 if loss == "squared_hinge" else slack
    return phi.mean() + 0.5 * lam * (w @ w)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge", "smooth_hinge"])
@pytest.mark.parametrize("sampling", ["shuffle", "cyclic"])
@pytest.mark.parametrize("weights", [False, True])
def test_shrinking_reaches_the_same_optimum_with_fewer_entries(loss, sampling, weights):
    X, y, sw = _problem(weights=weights)
    kw = dict(loss=loss, penalty="l2", lam=1.0 / X.shape[0], solver="dual-cd",
              sampling=sampling, tol=1e-11, max_epochs=20000, sample_weight=sw)
    shrunk = cdlearn.solve(X, y, **kw)
    full = cdlearn.solve(X, y, shrinking=False, **kw)
    assert shrunk.converged and full.converged
    assert shrunk.gap <= 1e-11 * shrunk.trace["primal"][0]
    assert shrunk.primal == pytest.approx(full.primal, rel=1e-9)
    # shrinking drops samples at a bound: fewer rows visited in total
    assert shrunk.passes < 0.9 * full.passes
    assert shrunk.trace["active"].min() < X.shape[0]
    # at the optimum the samples with margin > 1 have α = 0 exactly
    m = y * (X @ shrunk.w)
    assert np.all(shrunk.alpha[m > 1 + 1e-6] == 0.0)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_shrinking_matches_liblinear_dual_solvers(loss):
    """Against scikit-learn's LinearSVC (liblinear -s 1 / -s 3), C = 1/(λn)."""
    X, y, _ = _problem(seed=3, n=500, d=60)
    n = X.shape[0]
    lam = 2.0 / n
    res = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=lam, solver="dual-cd",
                        tol=1e-12, max_epochs=50000)
    assert res.converged
    svc = LinearSVC(loss=loss, C=1.0 / (lam * n), fit_intercept=False, dual=True,
                    tol=1e-10, max_iter=100_000).fit(X, y)
    ref = _svc_objective(X, y, svc.coef_.ravel(), loss, lam)
    ours = _svc_objective(X, y, res.w, loss, lam)
    assert ours == pytest.approx(res.primal, rel=1e-12)
    assert ours == pytest.approx(ref, rel=1e-9)


def test_default_sampling_is_shuffle_for_serial_dual_cd():
    X, y, _ = _problem(seed=5)
    kw = dict(loss="logistic", penalty="l2", lam=1e-2, solver="dual-cd", tol=1e-10)
    default = cdlearn.solve(X, y, **kw)
    shuffled = cdlearn.solve(X, y, sampling="shuffle", **kw)
    np.testing.assert_array_equal(default.w, shuffled.w)
    uniform = cdlearn.solve(X, y, sampling="uniform", **kw)
    assert not np.array_equal(default.w, uniform.w)
    assert uniform.primal == pytest.approx(default.primal, rel=1e-8)
    prob = make_problem(X, y, loss="logistic", penalty="l2", lam=1e-2)
    assert default_sampling("dual-cd", prob) == "shuffle"
    assert default_sampling("dual-cd", prob, batch_size=4) == "uniform"
    assert default_sampling("primal-cd", prob) == "uniform"
    prob_b = make_problem(X, y, loss="logistic", penalty="l2", lam=1e-2, fit_intercept=True)
    assert default_sampling("dual-cd", prob_b) == "uniform"
    # with an intercept the default still runs (uniform pairs)
    res = cdlearn.solve(X, y, fit_intercept=True, **kw)
    assert res.converged
    # an explicit sampling is a CD option: auto keeps to primal/dual CD
    auto = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=1e-2, sampling="uniform")
    assert auto.solver in ("primal-cd", "dual-cd")
    # without: the squared loss's cost model picks, and it runs with its own sampling
    chosen, _ = squared_l1_choice(make_problem(X, y, loss="squared", penalty="l1", lam=1e-2))
    res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=1e-2)
    assert res.solver == chosen
    assert res.solver != "primal-cd" or "cyclic" in res.info["reason"]


@pytest.mark.parametrize("loss", list(LOSS_CODES))
def test_fused_primal_and_gap_match_the_separate_ones(loss):
    rng = np.random.default_rng(11)
    n, d = 300, 20
    X = rng.standard_normal((n, d))
    y = np.sign(rng.standard_normal(n)) if loss != "squared" else rng.standard_normal(n)
    w = 0.3 * rng.standard_normal(d)
    z = X @ w
    code = LOSS_CODES[loss]
    sw = rng.uniform(0.5, 2.0, n)
    # a feasible α: y·t with t in (0, 1) (in the domain of every loss)
    alpha = sw * y * rng.uniform(0.01, 0.99, n) if loss != "squared" else sw * rng.standard_normal(n)
    u = X.T @ alpha / n
    for l1, l2 in ((0.0, 0.1), (0.05, 0.1)):
        p_ref = primal_value(code, z, y, sw, w, l1, l2)
        g_ref = duality_gap(code, z, alpha, y, sw, w, u, l1, l2)
        p, g = primal_and_gap(code, z, alpha, y, sw, w, u, l1, l2)
        assert p == pytest.approx(p_ref, rel=1e-13)
        assert g == pytest.approx(g_ref, rel=1e-11)
    # at the dual point of the margins the logistic gap is tiny and still exact
    if loss == "logistic":
        a = sw * y / (1.0 + np.exp(y * z))
        g_ref = duality_gap(code, z, a, y, sw, w, X.T @ a / n, 0.0, 0.1)
        _, g = primal_and_gap(code, z, a, y, sw, w, X.T @ a / n, 0.0, 0.1)
        assert g == pytest.approx(g_ref, rel=1e-9)
    # infeasible α: infinite gap
    if loss in ("logistic", "hinge", "smooth_hinge"):
        bad = alpha.copy()
        bad[0] = 2.0 * sw[0] * y[0]
        assert primal_and_gap(code, z, bad, y, sw, w, u, 0.0, 0.1)[1] == np.inf
