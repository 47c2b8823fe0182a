"""RCDC paper, Algorithms 1-3 with general block norms, and Table 10's constants.

* Algorithm 1 (RCDC) with block norms ``‖t‖_(g) = ⟨B_g t, t⟩^½`` (3): ``B_g`` identity,
  diagonal, the block Gram matrix, or any SPD matrices; the step (9) is checked against
  its optimality conditions and the solutions against the ``B_g = I`` solver.
* Algorithm 3 (RCDS): ``penalty="none"`` with ``groups`` against least squares.
* Table 10 / update (58): L1-regularized L2-SVM and logistic constants and O(o_i) steps.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.kernels.block_cd import block_metric_step
from cdlearn.penalties_group import make_groups
from cdlearn.solvers.block_cd import BlockCDState, _block_hessians
from cdlearn.solvers.primal_cd import PrimalCDState

N, D = 200, 40
SIZES = [1, 2, 3, 4, 5, 6, 7, 6, 6]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    labels = rng.permutation(np.repeat(np.arange(len(SIZES)), SIZES))
    # strongly correlated columns inside one group: B_g = I is a poor block norm there
    g4 = np.flatnonzero(labels == 4)
    X[:, g4[1:]] = X[:, [g4[0]]] + 0.05 * X[:, g4[1:]]
    X[:, 3] *= 4.0
    w_true = np.zeros(D)
    for g in (0, 4, 6):
        w_true[labels == g] = rng.standard_normal(np.sum(labels == g))
    y = X @ w_true + 0.3 * rng.standard_normal(N)
    groups = make_groups(labels, D)
    grad0 = X.T @ y / N
    lam_max = max(np.linalg.norm(grad0[groups.members(g)]) / groups.weights[g]
                  for g in range(groups.n_groups))
    return X, y, labels, groups, 0.1 * lam_max


def block_kkt(X, y, w, groups, lam):
    grad = X.T @ (X @ w - y) / X.shape[0]
    worst = 0.0
    for g in range(groups.n_groups):
        m = groups.members(g)
        t = lam * groups.weights[g]
        nrm = np.linalg.norm(w[m])
        worst = max(worst, np.linalg.norm(grad[m]) - t if nrm == 0
                    else np.linalg.norm(grad[m] + t * w[m] / nrm))
    return worst


def random_spd(rng, m):
    A = rng.standard_normal((m, m))
    return A @ A.T + 0.5 * np.eye(m)


# ------------------------------------------------------------------ the step (9)
@pytest.mark.parametrize("m", [1, 2, 5, 12])
def test_metric_step_solves_the_block_subproblem(m):
    """u = argmin ½uᵀDu − rᵀu + τ‖u‖: check 0 ∈ Du − r + τ∂‖u‖ in both regimes."""
    rng = np.random.default_rng(m)
    for trial in range(50):
        d = np.exp(3.0 * rng.standard_normal(m))  # condition numbers up to ~1e8
        r = rng.standard_normal(m) * 10.0 ** rng.uniform(-3, 3)
        tau = float(np.linalg.norm(r) * rng.uniform(0.01, 1.5))
        u = np.empty(m)
        block_metric_step(r, d, tau, u)
        nu = np.linalg.norm(u)
        if np.linalg.norm(r) <= tau:
            assert nu == 0.0
        else:
            assert nu > 0
            res = d * u - r + tau * u / nu
            assert np.linalg.norm(res) <= 1e-10 * np.linalg.norm(r), trial
    # τ = 0 (RCDS): u = D⁻¹ r; D ∝ I: block soft-thresholding in one Newton step
    r = np.array([3.0, -4.0])
    block_metric_step(r, np.array([2.0, 2.0]), 0.0, u := np.empty(2))
    assert np.allclose(u, r / 2.0, rtol=1e-15)
    block_metric_step(r, np.array([2.0, 2.0]), 1.0, u)
    assert np.allclose(u, r * (1 - 1 / 5) / 2.0, rtol=1e-14)


# ------------------------------------------------------------ Algorithm 1, block norms
@pytest.mark.parametrize("norm", ["diagonal", "gram", "spd-list"])
def test_block_norms_reach_the_same_optimum(data, norm):
    X, y, labels, groups, lam = data
    ref = cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, tol=1e-15,
                        max_epochs=20000)
    assert ref.converged and block_kkt(X, y, ref.w, groups, lam) <= 1e-8
    if norm == "spd-list":
        rng = np.random.default_rng(1)
        block_norm = [random_spd(rng, int(k)) for k in groups.sizes]
    else:
        block_norm = norm
    res = cdlearn.solve(sp.csc_matrix(X), y, penalty="group_l2", lam=lam, groups=labels,
                        tol=1e-15, max_epochs=20000, block_norm=block_norm)
    assert res.converged
    assert block_kkt(X, y, res.w, groups, lam) <= 1e-8
    assert np.allclose(res.w, ref.w, atol=1e-8)
    assert res.primal == pytest.approx(ref.primal, rel=1e-12)
    if norm == "gram":
        # B_g = block Hessian: each step minimises F exactly over its block (up to the
        # 1e-10 ridge), so the correlated group costs far fewer epochs than with B_g = I
        assert res.n_epochs < 0.5 * ref.n_epochs


def test_block_lipschitz_constants_in_the_block_norm(data):
    X, y, labels, groups, lam = data
    problem = make_problem(X, y, loss="squared", penalty="group_l2", lam=lam, groups=labels)
    H = _block_hessians(problem, groups)
    diag = BlockCDState(problem, block_norm="diagonal")
    gram = BlockCDState(problem, block_norm="gram")
    for g in range(groups.n_groups):
        Xg = X[:, groups.members(g)]
        Hg = Xg.T @ Xg / N
        assert np.allclose(H[g], Hg, rtol=1e-12)
        s = 1.0 / np.sqrt(np.diag(Hg))
        assert diag.lips[g] == pytest.approx(np.linalg.eigvalsh(s[:, None] * Hg * s)[-1],
                                             rel=1e-10)
        assert gram.lips[g] == pytest.approx(1.0, rel=1e-8)
        # (6) in the block norm: tᵀ H t ≤ L_g tᵀ B t for random t
        B = np.diag(np.diag(Hg))
        for t in np.random.default_rng(g).standard_normal((20, Hg.shape[0])):
            assert t @ Hg @ t <= diag.lips[g] * (t @ B @ t) * (1 + 1e-12)


def test_single_gram_block_is_one_newton_step():
    """One group holding every feature, B = XᵀX/n: one RCDS step solves least squares."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((80, 10))
    y = rng.standard_normal(80)
    problem = make_problem(X, y, loss="squared", penalty="none", lam=None,
                           groups=np.zeros(10, dtype=int))
    st = BlockCDState(problem, block_norm="gram")
    st.run_epoch()
    assert np.allclose(st.w, np.linalg.lstsq(X, y, rcond=None)[0], atol=1e-8)


# ------------------------------------------------------------------ Algorithm 3 (RCDS)
@pytest.mark.parametrize("block_norm", [None, "diagonal", "gram"])
def test_rcds_least_squares(block_norm):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 30))
    y = rng.standard_normal(150)
    labels = np.repeat(np.arange(6), 5)
    res = cdlearn.solve(X, y, penalty="none", groups=labels, tol=1e-13, max_epochs=5000,
                        block_norm=block_norm, sampling="importance")
    assert res.solver == "block-cd" and res.converged and res.dual is None
    assert np.allclose(res.w, np.linalg.lstsq(X, y, rcond=None)[0], atol=1e-9)
    # the reported gap is the optimality violation max_g ‖∇_g f‖
    grad = X.T @ (X @ res.w - y) / 150
    assert res.gap == pytest.approx(max(np.linalg.norm(grad[labels == g]) for g in range(6)),
                                    rel=1e-6, abs=1e-15)


def test_logistic_with_diagonal_block_norm(data):
    X, y, labels, groups, _ = data
    yb = np.where(y > np.median(y), 1.0, -1.0)
    lam = 0.01
    a = cdlearn.solve(X, yb, loss="logistic", penalty="group_l2", lam=lam, groups=labels,
                      tol=1e-13, max_epochs=20000)
    b = cdlearn.solve(X, yb, loss="logistic", penalty="group_l2", lam=lam, groups=labels,
                      tol=1e-13, max_epochs=20000, block_norm="diagonal")
    assert a.converged and b.converged
    assert np.allclose(a.w, b.w, atol=1e-7)
    assert b.primal == pytest.approx(a.primal, rel=1e-11)


@pytest.mark.parametrize("block_norm, match", [
    ("cholesky", "block_norm must be"),
    ([np.eye(2)], "one matrix per group"),
    ("spd-bad", "positive definite"),
    ("asym", "symmetric"),
])
def test_block_norm_errors(data, block_norm, match):
    X, y, labels, groups, lam = data
    if block_norm == "spd-bad":
        block_norm = [-np.eye(int(k)) for k in groups.sizes]
    elif block_norm == "asym":
        block_norm = [np.eye(int(k)) + np.triu(np.ones((k, k)), 1) for k in groups.sizes]
    with pytest.raises(ValueError, match=match):
        cdlearn.solve(X, y, penalty="group_l2", lam=lam, groups=labels, block_norm=block_norm)


def test_groups_with_l1_still_rejected(data):
    X, y, labels, *_ = data
    with pytest.raises(ValueError, match="groups"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, groups=labels)


# ----------------------------------------------------------- Table 10 and update (58)
@pytest.mark.parametrize("loss, table10", [
    ("squared_hinge", lambda gamma, col_sq: 2.0 * gamma * col_sq),
    ("logistic", lambda gamma, col_sq: gamma / 4.0 * col_sq),
])
def test_table10_constants_and_o_i_steps(loss, table10):
    """L_i of Table 10 (with y_j² = 1) for F = γΣL + ‖w‖₁ equal cdlearn's L_i times γn.

    cdlearn minimises P = F/(γn) (λ = 1/(γn)), so its coordinate constants must be Table
    10's divided by γn, giving the same 1/L_i steps; a cyclic pass touches each column's
    o_i nonzeros once, i.e. nnz(X) entries in total (update (58) is O(o_i)).
    """
    rng = np.random.default_rng(4)
    n, d = 300, 50
    X = sp.random(n, d, density=0.1, random_state=5, format="csr")
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    gamma = 2.0
    problem = make_problem(X, y, loss=loss, penalty="l1", lam=1.0 / (gamma * n))
    st = PrimalCDState(problem, sampling="cyclic", step="lipschitz")
    col_sq = np.asarray(X.multiply(X).sum(axis=0)).ravel()
    assert np.allclose(st.lips * gamma * n, table10(gamma, col_sq), rtol=1e-13)
    entries, _ = st.run_epoch()
    assert entries == X.nnz
    # the maintained margins are exact: z = Xw after a pass (r = −y∘z of (58))
    assert np.allclose(st.z, X @ st.w, atol=1e-13)


# ------------------------------------------------- initial point x_LS (§6.1) through w0
def test_least_squares_start_option():
    from scipy.sparse.linalg import lsqr

    from cdlearn.api import least_squares_start
    from cdlearn.datasets.nesterov import make_lasso_known_optimum

    m, n, lam = 600, 200, 0.05
    A, b, x_star, F_star, info = make_lasso_known_optimum(
        m, n, nnz_per_column=15, support_size=20, lam=lam, seed=7, return_info=True)
    problem = make_problem(A, b, loss="squared", penalty="l1", lam=lam / m)
    x_ls = least_squares_start(problem)
    ref = lsqr(A, b, atol=1e-12, btol=1e-12, iter_lim=2000)[0]
    assert np.allclose(x_ls, ref, atol=1e-10)
    assert np.allclose(A.T @ (A @ x_ls - b), 0.0, atol=1e-8)  # normal equations
    res = cdlearn.solve(A, b, penalty="l1", lam=lam / m, w0="least_squares", tol=1e-16,
                        max_epochs=500)
    same = cdlearn.solve(A, b, penalty="l1", lam=lam / m, w0=x_ls, tol=1e-16, max_epochs=500)
    assert np.array_equal(res.w, same.w)
    # RCDC "done when": relative residual 1e-12 from x_LS and the exact support of x*
    c = A.T @ info["v_star"]

    def gap(x):
        d = A @ (x - x_star)
        return 0.5 * float(d @ d) + float(np.sum(lam * np.abs(x) - c * x))

    assert gap(res.w) <= 1e-12 * gap(x_ls)
    assert np.array_equal(res.w != 0, x_star != 0)
    # sample weights are row scalings of the least-squares problem
    sw = np.random.default_rng(8).uniform(0.5, 2.0, m)
    pw = make_problem(A, b, loss="squared", penalty="l1", lam=lam / m, sample_weight=sw)
    xw = least_squares_start(pw)
    assert np.allclose(A.T @ (sw * (A @ xw - b)), 0.0, atol=1e-8)
    with pytest.raises(ValueError, match="w0"):
        cdlearn.solve(A, b, penalty="l1", lam=0.1, w0="lsqr")
