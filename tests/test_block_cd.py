"""Group lasso by randomized block CD (RCDC Algorithm 1/2): KKT, peers, errors."""

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.penalties_group import make_groups
from cdlearn.solvers.block_cd import BlockCDState, block_lipschitz

N, D = 240, 60


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    X[:, 7] *= 5.0  # uneven block constants
    # non-contiguous groups of uneven sizes, given as a label vector
    labels = rng.permutation(np.repeat(np.arange(12), [1, 2, 3, 4, 5, 6, 7, 8, 6, 8, 5, 5]))
    w_true = np.zeros(D)
    for g in (0, 3, 7):
        w_true[labels == g] = rng.standard_normal(np.sum(labels == g))
    y = X @ w_true + 0.3 * rng.standard_normal(N)
    groups = make_groups(labels, D)
    # λ_max: the smallest λ with w = 0 optimal
    grad0 = X.T @ y / N
    lam_max = max(np.linalg.norm(grad0[groups.members(g)]) / groups.weights[g]
                  for g in range(groups.n_groups))
    return X, y, labels, groups, 0.2 * lam_max


def block_kkt(X, y, w, groups, lam, loss="squared", b=0.0):
    """Max over groups of the block KKT residual (squared or logistic loss)."""
    z = X @ w + b
    if loss == "squared":
        r = z - y
    else:
        r = -y / (1.0 + np.exp(y * z))
    grad = X.T @ r / X.shape[0]
    worst = 0.0
    for g in range(groups.n_groups):
        m = groups.members(g)
        t = lam * groups.weights[g]
        nrm = np.linalg.norm(w[m])
        if nrm == 0.0:
            worst = max(worst, np.linalg.norm(grad[m]) - t)
        else:
            worst = max(worst, np.linalg.norm(grad[m] + t * w[m] / nrm))
    return worst


def group_objective(X, y, w, groups, lam):
    r = X @ w - y
    pen = sum(groups.weights[g] * np.linalg.norm(w[groups.members(g)])
              for g in range(groups.n_groups))
    return 0.5 * r @ r / X.shape[0] + lam * pen


def test_block_kkt_and_gap(data):
    X, y, labels, groups, lam = data
    res = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, tol=1e-15,
                        max_epochs=2000)
    assert res.solver == "block-cd" and res.converged
    assert block_kkt(X, y, res.w, groups, lam) <= 1e-8
    assert res.gap <= 1e-13
    assert res.primal == pytest.approx(group_objective(X, y, res.w, groups, lam), rel=1e-12)
    # some groups are zero, some not; the active count is in the trace
    nz = [np.any(res.w[groups.members(g)] != 0) for g in range(groups.n_groups)]
    assert 0 < sum(nz) < groups.n_groups
    assert res.trace["active"][-1] == sum(nz)


def prox_gradient_group_lasso(X, y, groups, lam, n_iter=20000):
    """Independent reference: plain-numpy FISTA with block soft-thresholding."""
    n = X.shape[0]
    L = np.linalg.eigvalsh(X.T @ X)[-1] / n
    w = np.zeros(X.shape[1])
    v, t = w.copy(), 1.0
    for _ in range(n_iter):
        u = v - X.T @ (X @ v - y) / (n * L)
        w_new = np.zeros_like(u)
        for g in range(groups.n_groups):
            m = groups.members(g)
            nrm = np.linalg.norm(u[m])
            thr = lam * groups.weights[g] / L
            if nrm > thr:
                w_new[m] = (1.0 - thr / nrm) * u[m]
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        v = w_new + (t - 1.0) / t_new * (w_new - w)
        w, t = w_new, t_new
    return w


def test_agrees_with_proximal_gradient(data):
    X, y, labels, groups, lam = data
    res = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, tol=1e-15,
                        max_epochs=2000)
    ref = prox_gradient_group_lasso(X, y, groups, lam, n_iter=3000)
    assert block_kkt(X, y, ref, groups, lam) <= 1e-8  # the reference did converge
    assert np.allclose(res.w, ref, atol=1e-8)
    assert res.primal <= group_objective(X, y, ref, groups, lam) + 1e-15


@pytest.mark.slow  # skglm compiles its numba code on first use (~20 s)
def test_agrees_with_skglm(data):
    skglm = pytest.importorskip("skglm")
    X, y, labels, groups, lam = data
    res = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, tol=1e-15,
                        max_epochs=2000)
    lists = [list(map(int, groups.members(g))) for g in range(groups.n_groups)]
    peer = skglm.GroupLasso(lists, alpha=lam, weights=groups.weights, fit_intercept=False,
                            tol=1e-12, max_iter=1000, max_epochs=100000).fit(X, y)
    assert np.allclose(res.w, peer.coef_, atol=1e-7)
    assert res.primal <= group_objective(X, y, peer.coef_, groups, lam) + 1e-14


def test_list_groups_sparse_and_samplings_same_solution(data):
    X, y, labels, groups, lam = data
    lists = [groups.members(g) for g in range(groups.n_groups)]
    ref = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, tol=1e-14,
                        max_epochs=2000).w
    for kw in ({"sampling": "power", "power": 0.5}, {"sampling": "importance"},
               {"sampling": "cyclic"},
               {"block_probs": np.linspace(1.0, 2.0, groups.n_groups)}):
        res = cdlearn.solve(sp.csc_matrix(X), y, penalty="group_l2", lam=lam, groups=lists,
                            tol=1e-14, max_epochs=2000, solver="block-cd", **kw)
        assert res.converged, kw
        assert np.allclose(res.w, ref, atol=1e-8), kw


def test_singleton_groups_are_the_lasso(data):
    X, y, *_ = data
    lam = 0.05
    a = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=np.arange(D), tol=1e-14,
                      max_epochs=2000)
    b = cdlearn.solve(X, y, penalty="l1", lam=lam, tol=1e-14, max_epochs=2000)
    assert np.allclose(a.w, b.w, atol=1e-9)
    assert a.primal == pytest.approx(b.primal, rel=1e-12)


def test_logistic_with_intercept(data):
    X, y, labels, groups, _ = data
    yb = np.where(y > np.median(y) + 0.5, 1.0, -1.0)
    lam = 0.02
    res = cdlearn.solve(X, yb, loss="logistic", penalty="group_l2", lam=lam, groups=labels,
                        fit_intercept=True, tol=1e-13, max_epochs=3000)
    assert res.converged
    assert block_kkt(X, yb, res.w, groups, lam, loss="logistic", b=res.intercept) <= 1e-7
    z = X @ res.w + res.intercept
    assert abs(np.sum(-yb / (1.0 + np.exp(yb * z)))) / N <= 1e-9  # intercept optimal


def test_block_lipschitz_exact_and_power_iteration(data):
    X, y, labels, groups, lam = data
    problem = make_problem(X, y, loss="squared", penalty="group_l2", lam=lam, groups=labels)
    exact = block_lipschitz(problem, groups)
    power = block_lipschitz(problem, groups, exact_block=1)  # force power iteration
    for g in range(groups.n_groups):
        Xg = X[:, groups.members(g)]
        true = np.linalg.eigvalsh(Xg.T @ Xg)[-1] / N
        assert exact[g] == pytest.approx(true, rel=1e-12)
        assert true * (1 - 1e-12) <= power[g] <= 1.011 * true


def test_seed_reproducible(data):
    X, y, labels, _, lam = data
    a = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, tol=1e-6, seed=3)
    b = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, tol=1e-6, seed=3)
    assert np.array_equal(a.w, b.w)


def test_zero_column_group():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 6))
    X[:, 2:4] = 0.0
    y = rng.standard_normal(50)
    res = cdlearn.solve(X, y, penalty="group_l2", lam=0.01, groups=[0, 0, 1, 1, 2, 2],
                        tol=1e-12, w0=np.ones(6))
    assert res.converged and np.all(res.w[2:4] == 0.0)


@pytest.mark.parametrize("groups, match", [
    ([[0, 1, 2], [2, 3], list(range(4, D))], "overlap"),
    ([[0, 1, 2], [3, D], list(range(4, D))], "out of range"),
    ([[0, 1], list(range(3, D))], "do not cover"),
    (np.zeros(D - 1), "one per feature"),
    (None, "groups is required"),
    ([[0, 1, 0], list(range(2, D))], "repeats"),
    ([[], list(range(D))], "non-empty"),
])
def test_bad_groups(data, groups, match):
    X, y, *_ = data
    with pytest.raises(ValueError, match=match) as err:
        cdlearn.solve(X, y, penalty="group_l2", lam=0.1, groups=groups)
    assert "groups" in str(err.value)


def test_groups_need_group_penalty_and_block_solver(data):
    X, y, labels, *_ = data
    with pytest.raises(ValueError, match="groups"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, groups=labels)
    with pytest.raises(ValueError, match="group_l2"):
        cdlearn.solve(X, y, penalty="group_l2", lam=0.1, groups=labels, solver="primal-cd")
    with pytest.raises(ValueError, match="block_probs"):
        cdlearn.solve(X, y, penalty="group_l2", lam=0.1, groups=labels, block_probs=[1.0, 2.0])
    with pytest.raises(ValueError, match="batch_size"):
        BlockCDState(make_problem(X, y, loss="squared", penalty="group_l2", lam=0.1,
                                  groups=labels), batch_size=2)
