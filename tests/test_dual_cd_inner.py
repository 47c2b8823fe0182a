"""Dual CD's inexact logistic step (liblinear's inner tolerance) against the exact one."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.losses import LOSS_CODES, dual_coordinate_maximizer, dual_coordinate_step
from cdlearn.solvers import dual_cd
from references import sparse_classification_problem

LOGISTIC = LOSS_CODES["logistic"]


def _residual(t, t0, m, c):
    """The logistic dual step's optimality residual (liblinear's gp), margin units."""
    return math.log(t / (1.0 - t)) + m + c * (t - t0)


def _problem(seed=0, n=400, d=60, weights=False):
    return sparse_classification_problem(seed, n, d, density=0.15, noise=0.3, weights=weights)


@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_inexact_step_meets_its_tolerance_and_skips_when_already_met(y):
    rng = np.random.default_rng(3)
    for _ in range(300):
        t0 = rng.uniform(1e-6, 1 - 1e-6)
        m = rng.uniform(-6, 6)
        c = 10.0 ** rng.uniform(-3, 3)
        exact = y * dual_coordinate_maximizer(LOGISTIC, y * t0, y * m, y, c)
        assert abs(_residual(exact, t0, m, c)) <= 1e-9 * (1.0 + c)
        g0 = _residual(t0, t0, m, c)
        for eps in (1e-1, 1e-3, 1e-6):
            t = y * dual_coordinate_step(LOGISTIC, y * t0, y * m, y, c, eps)
            if abs(g0) <= eps:
                assert t == t0  # skipped: α unchanged, bit for bit
            else:
                assert abs(_residual(t, t0, m, c)) <= eps
                assert abs(t - exact) <= eps  # |dg/dt| ≥ 1/(t(1-t)) ≥ 4
    # eps = 0 is the exact maximiser, bit for bit
    assert dual_coordinate_step(LOGISTIC, 0.3 * y, 0.7 * y, y, 2.0, 0.0) == \
        dual_coordinate_maximizer(LOGISTIC, 0.3 * y, 0.7 * y, y, 2.0)


@pytest.mark.parametrize("sampling", ["uniform", "shuffle"])
@pytest.mark.parametrize("weights", [False, True])
def test_adaptive_inner_tolerance_reaches_the_exact_optimum(monkeypatch, sampling, weights):
    X, y, sw = _problem(weights=weights)
    kw = dict(loss="logistic", penalty="l2", lam=1.0 / X.shape[0], solver="dual-cd",
              sampling=sampling, tol=1e-13, max_epochs=5000, sample_weight=sw)
    adaptive = cdlearn.solve(X, y, **kw)
    monkeypatch.setattr(dual_cd, "INNER_EPS_START", 0.0)  # eps = 0 throughout: exact steps
    exact = cdlearn.solve(X, y, **kw)
    assert adaptive.converged and exact.converged
    p0 = adaptive.trace["primal"][0]
    assert adaptive.gap <= 1e-13 * p0 and exact.gap <= 1e-13 * p0
    # P is λ-strongly convex: ‖w - w*‖² ≤ 2 gap / λ for each run's certified w
    lam = 1.0 / X.shape[0]
    dist = np.linalg.norm(adaptive.w - exact.w)
    assert dist <= math.sqrt(2 * adaptive.gap / lam) + math.sqrt(2 * exact.gap / lam)
    assert dist <= 1e-5 * np.linalg.norm(exact.w)
    assert abs(adaptive.primal - exact.primal) <= 1e-12 * exact.primal
    assert abs(adaptive.primal - exact.primal) <= adaptive.gap + exact.gap
    # no more epochs than exact steps (the tolerance follows the gap)
    assert adaptive.n_epochs <= exact.n_epochs + 2
    # and the same seed gives the same bits
    monkeypatch.undo()
    again = cdlearn.solve(X, y, **kw)
    assert np.array_equal(again.w, adaptive.w) and np.array_equal(again.alpha, adaptive.alpha)


def test_inner_tolerance_schedule():
    """Starts at INNER_EPS_START, only decreases, follows √gap, floors at INNER_EPS_MIN."""
    X, y, _ = _problem(seed=1)
    p = make_problem(X, y, loss="logistic", penalty="l2", lam=1.0 / X.shape[0])
    st = dual_cd.DualCDState(p, sampling="shuffle", seed=0)
    assert st.inner_eps == dual_cd.INNER_EPS_START == 1e-2
    seen = [st.inner_eps]
    for _ in range(200):
        st.run_epoch()
        _, _, gap = st.certificate()
        seen.append(st.inner_eps)
        assert st.inner_eps <= max(dual_cd.INNER_EPS_MIN,
                                   dual_cd.INNER_EPS_GAP * math.sqrt(max(gap, 0.0))) + 1e-300
    assert all(b <= a for a, b in zip(seen[:-1], seen[1:], strict=True))
    assert seen[-1] == dual_cd.INNER_EPS_MIN == 1e-9
    # exact steps where the tolerance does not apply
    for kw in (dict(dual_step="fixed"), dict()):
        loss = "logistic" if kw else "squared_hinge"
        q = make_problem(X, y, loss=loss, penalty="l2", lam=1.0 / X.shape[0])
        assert dual_cd.DualCDState(q, sampling="uniform", **kw).inner_eps == 0.0


@pytest.mark.parametrize("eps", [3e-2, 1e-3])
def test_fixed_point_of_a_fixed_tolerance_has_gap_below_the_documented_bound(eps):
    """Where every |g_i| ≤ eps no step moves, and then gap ≤ mean(s)·eps²/8 (the
    reason INNER_EPS_MIN = 1e-9 cannot stall the solver above any tolerance)."""
    X, y, sw = _problem(seed=2, weights=True)
    p = make_problem(X, y, loss="logistic", penalty="l2", lam=1.0 / X.shape[0],
                     sample_weight=sw)
    st = dual_cd.DualCDState(p, sampling="cyclic", seed=0)
    for _ in range(20000):
        st.inner_eps = eps
        _, updates = st.run_epoch()
        if updates == 0:
            break
    assert updates == 0
    st.inner_eps = eps
    _, _, gap = st.certificate()
    bound = np.mean(sw) * eps * eps / 8.0
    assert 0.0 < gap <= bound
    # the bound is not vacuous: the exact optimum's gap is far below it
    st.inner_eps = 0.0
    for _ in range(200):
        st.run_epoch()
    assert st.certificate()[2] < 1e-6 * bound


# ----------------------------------------------------------------- identical rows
def _with_conflicting_duplicates(seed=4, n=300, d=40, copies=((0, 3), (1, 2), (2, 2))):
    """A sparse logistic problem where some rows appear several times with both labels."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    y[y == 0] = 1.0
    rows, labels = [X], [y]
    for r, k in copies:  # heavy row r, k extra copies alternating labels
        big = X[r] * 10.0 if X[r].nnz else sp.csr_matrix(np.full((1, d), 3.0))
        rows.append(sp.vstack([big] * (k + 1)))
        labels.append(np.array([(-1.0) ** j for j in range(k + 1)]))
    return sp.vstack(rows).tocsr(), np.concatenate(labels)


def test_duplicate_groups_are_exactly_the_identical_rows():
    X, y = _with_conflicting_duplicates()
    p = make_problem(X, y, loss="logistic", penalty="l2", lam=1.0 / X.shape[0])
    st = dual_cd.DualCDState(p, sampling="shuffle")
    ptr, rows = st.groups
    groups = sorted(sorted(rows[ptr[g]:ptr[g + 1]].tolist()) for g in range(len(ptr) - 1))
    n0 = 300
    assert groups == [[n0, n0 + 1, n0 + 2, n0 + 3], [n0 + 4, n0 + 5, n0 + 6],
                      [n0 + 7, n0 + 8, n0 + 9]]
    # dense input: the same groups
    pd_ = make_problem(X.toarray(), y, loss="logistic", penalty="l2", lam=1.0 / X.shape[0])
    ptr_d, rows_d = dual_cd.DualCDState(pd_, sampling="shuffle").groups
    assert np.array_equal(ptr_d, ptr) and sorted(rows_d) == sorted(rows)
    # a candidate run holding different rows (a hash collision) keeps only equal ones
    v = st.view
    order = np.array([n0, 0, n0 + 1, 5], dtype=np.int64)
    ptr_c, rows_c = dual_cd.duplicate_row_groups(
        v.data, v.indices, v.indptr, order, np.array([0, 4], dtype=np.int64), p.sample_weight,
        p.y)
    assert ptr_c.tolist() == [0, 2] and rows_c.tolist() == [n0, n0 + 1]
    # copies with one label only are left to the single steps
    same = np.array([n0, n0 + 2], dtype=np.int64)
    assert y[n0] == y[n0 + 2]
    ptr_s, _ = dual_cd.duplicate_row_groups(
        v.data, v.indices, v.indptr, same, np.array([0, 2], dtype=np.int64), p.sample_weight,
        p.y)
    assert ptr_s.tolist() == [0]
    # zero weights leave a row out; no groups, no pass
    sw = np.ones(X.shape[0])
    sw[[n0 + 4, n0 + 5]] = 0.0
    pw = make_problem(X, y, loss="logistic", penalty="l2", lam=1.0 / X.shape[0],
                      sample_weight=sw)
    ptr_w, rows_w = dual_cd.DualCDState(pw, sampling="shuffle").groups
    assert len(ptr_w) == 3 and n0 + 4 not in rows_w and n0 + 5 not in rows_w
    Xs, ys, _ = _problem()
    ps_ = make_problem(Xs, ys, loss="logistic", penalty="l2", lam=1.0 / Xs.shape[0])
    assert dual_cd.DualCDState(ps_, sampling="shuffle").groups is None


def _minus_derivative(loss, z, y):
    """-φ'(z, y) for the logistic and squared hinge losses."""
    if loss == "logistic":
        return y / (1.0 + math.exp(y * z))
    return 2.0 * y * max(0.0, 1.0 - y * z)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_group_step_is_the_exact_block_maximiser(loss):
    """After a pass, each group's α_j = -s_j φ'(z', y_j) at the new common margin z'."""
    X, y = _with_conflicting_duplicates()
    sw = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    p = make_problem(X, y, loss=loss, penalty="l2", lam=1.0 / X.shape[0],
                     sample_weight=sw)
    st = dual_cd.DualCDState(p, sampling="shuffle")
    st.groups_backup = st.groups
    st.groups = None
    st.run_epoch()  # somewhere away from the optimum
    d0 = st.certificate()[1]
    v = st.view
    ptr, rows = st.groups_backup
    for g in range(len(ptr) - 1):  # one group at a time: later groups move these margins
        members = rows[ptr[g]:ptr[g + 1]]
        dual_cd.dual_cd_group_pass(
            v.data, v.indices, v.indptr, p.y, p.sample_weight, st.alpha, st.v, st.w,
            p.design.row_sq_norms, st.inv_l2n, 0.0, p.loss_code, np.array([0, len(members)]),
            members)
        z = X @ st.w
        for j in members:
            want = sw[j] * _minus_derivative(loss, z[j], y[j])
            assert st.alpha[j] == pytest.approx(want, rel=1e-9, abs=1e-12)
        d1 = st.certificate()[1]
        assert d1 >= d0 - 1e-15  # an ascent step on the dual
        d0 = d1
    np.testing.assert_allclose(st.w, X.T @ st.alpha * st.inv_l2n, atol=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_duplicates_converge_in_few_epochs_to_the_same_optimum(monkeypatch, loss):
    X, y = _with_conflicting_duplicates()
    kw = dict(loss=loss, penalty="l2", lam=1.0 / X.shape[0], solver="dual-cd",
              sampling="shuffle", tol=1e-11, max_epochs=20000)
    grouped = cdlearn.solve(X, y, **kw)
    monkeypatch.setattr(dual_cd, "_duplicate_groups", lambda *a: None)
    plain = cdlearn.solve(X, y, **kw)
    assert grouped.converged and plain.converged
    assert abs(grouped.primal - plain.primal) <= grouped.gap + plain.gap
    lam = 1.0 / X.shape[0]
    dist = np.linalg.norm(grouped.w - plain.w)
    assert dist <= math.sqrt(2 * grouped.gap / lam) + math.sqrt(2 * plain.gap / lam)
    assert grouped.n_epochs * 5 <= plain.n_epochs  # single steps crawl along the group
