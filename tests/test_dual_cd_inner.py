"""Dual CD's inexact logistic step (liblinear's inner tolerance) against the exact one."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.losses import LOSS_CODES, dual_coordinate_maximizer, dual_coordinate_step
from cdlearn.solvers import dual_cd

LOGISTIC = LOSS_CODES["logistic"]


def _residual(t, t0, m, c):
    """The logistic dual step's optimality residual (liblinear's gp), margin units."""
    return math.log(t / (1.0 - t)) + m + c * (t - t0)


def _problem(seed=0, n=400, d=60, weights=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    y[y == 0] = 1.0
    sw = rng.uniform(0.5, 2.0, n) if weights else None
    return X, y, sw


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
