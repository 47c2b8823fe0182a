"""DGPD (Lei et al., ICML 2017): Algorithm 1, Algorithm 2 with active sets, certificates."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import cdlearn
from cdlearn.api import make_problem
from cdlearn.kernels import dgpd as K
from cdlearn.solvers import SOLVERS
from cdlearn.solvers.dgpd import DGPDState


def _normalize_rows(X):
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _dense_problem():
    rng = np.random.default_rng(1)
    X = _normalize_rows(rng.standard_normal((60, 20)))
    y = np.sign(X @ rng.standard_normal(20) + 0.3 * rng.standard_normal(60))
    return X, y


def _sparse_problem():
    rng = np.random.default_rng(1)
    X = _normalize_rows(sp.random(80, 40, density=0.2, random_state=2, format="csr"))
    y = np.sign(X @ rng.standard_normal(40) + 0.1 * rng.standard_normal(80))
    y[y == 0] = 1.0
    return X, y


def _penalty(l1, mu):
    """The paper's g = μ/2‖x‖² + λ‖x‖₁ as cdlearn's (penalty, lam, l1_ratio)."""
    if l1 == 0.0:
        return dict(penalty="l2", lam=mu)
    return dict(penalty="elastic_net", lam=l1 + mu, l1_ratio=l1 / (l1 + mu))


def _solve_dgpd(X, y, loss, pen, **kw):
    kw.setdefault("tol", 1e-12)
    kw.setdefault("max_epochs", 20000)
    return cdlearn.solve(X, y, loss=loss, solver="dgpd", **pen, **kw)


def _check_against_dual_cd(X, y, loss, l1, mu, active_set):
    pen = _penalty(l1, mu)
    ref = cdlearn.solve(X, y, loss=loss, solver="dual-cd", tol=1e-13, max_epochs=20000, **pen)
    res = _solve_dgpd(X, y, loss, pen, active_set=active_set)
    p0 = res.trace["primal"][0]
    assert res.converged
    assert res.gap <= 1e-6 * p0
    assert res.gap <= 1e-12 * p0
    np.testing.assert_allclose(res.w, ref.w, atol=1e-6, rtol=0)
    np.testing.assert_allclose(res.alpha, ref.alpha, atol=2e-5, rtol=0)
    assert abs(res.primal - ref.primal) <= 1e-10 * p0
    # Definition 4.1 with D* from the tightly converged dual CD run
    state = DGPDState(make_problem(X, y, loss=loss, **pen), active_set=active_set)
    state.w[:], state.alpha[:] = res.w, res.alpha
    state._resync()
    delta_p, delta_d = state.suboptimality(dual_star=ref.dual)
    assert delta_p >= 0.0
    assert delta_p + delta_d <= 1e-6
    # records
    assert res.info["nnz_primal"] == np.count_nonzero(res.w)
    assert res.info["nnz_dual"] == np.count_nonzero(res.alpha)
    assert len(res.info["trace_nnz_dual"]) == len(res.trace)
    assert len(res.info["trace_delta_p"]) == len(res.trace)
    return res, ref


@pytest.mark.parametrize("active_set", [False, True])
@pytest.mark.parametrize("loss", ["smooth_hinge", "logistic"])
@pytest.mark.parametrize("l1, mu", [(0.0, 0.1), (0.01, 0.1)])
def test_dense_agrees_with_dual_cd(active_set, loss, l1, mu):
    X, y = _dense_problem()
    _check_against_dual_cd(X, y, loss, l1, mu, active_set)


@pytest.mark.parametrize("active_set", [False, True])
@pytest.mark.parametrize("loss", ["smooth_hinge", "logistic"])
def test_sparse_agrees_with_dual_cd(active_set, loss):
    X, y = _sparse_problem()
    _check_against_dual_cd(X, y, loss, 0.01, 0.1, active_set)


def test_squared_loss_agrees_with_dual_cd():
    X, _ = _dense_problem()
    y = X @ np.linspace(-1, 1, X.shape[1])
    for active_set in (False, True):
        _check_against_dual_cd(X, y, "squared", 0.001, 0.1, active_set)


_SLICES = {}


def _reuters_slice(load, rows):
    """The first ``rows`` reuters-money-fx documents, unit rows, empty columns dropped."""
    if rows not in _SLICES:
        if "all" not in _SLICES:  # parsing the file takes ~15 s: once per session
            _SLICES["all"] = load("reuters-money-fx", binary=True)
        X, y = _SLICES["all"]
        X = _normalize_rows(sp.csr_matrix(X)[:rows])
        _SLICES[rows] = (X[:, np.flatnonzero(X.getnnz(axis=0))], y[:rows])
    return _SLICES[rows]


@pytest.mark.parametrize("active_set", [False, True])
@pytest.mark.parametrize("loss", ["smooth_hinge", "logistic"])
def test_reuters_slice_agrees_with_dual_cd(load, active_set, loss):
    X, y = _reuters_slice(load, 120)
    res, _ = _check_against_dual_cd(X, y, loss, 0.01, 0.1, active_set)
    # the l1 part makes the primal sparse; the active set is the support
    assert res.info["nnz_primal"] < X.shape[1] // 10
    if active_set:
        assert res.trace["active"][-1] == res.info["nnz_primal"]


@pytest.mark.parametrize("loss", ["smooth_hinge", "logistic"])
def test_bag_of_words_reaches_dual_cd_optimum(load, loss):
    """Issue 20: Algorithm 2 on text at the dgpd-fig1 point (summed loss, λ = 0.1, μ = 0.01).

    1,500 reuters documents (5,687 words): the optimum has 312 nonzero weights and 357
    (smooth hinge) or all 1,500 (logistic) nonzero dual variables. Before the fix (one
    coordinate per search, rounds in a fixed order, step (16)) 300 epochs ended at gaps of
    2.8e-3 and 1.9e-2 P(0); now 44 and 13 epochs reach 1e-10 P(0).
    """
    X, y = _reuters_slice(load, 1500)
    n = X.shape[0]
    pen = dict(penalty="elastic_net", lam=0.11 / n, l1_ratio=0.1 / 0.11)
    ref = cdlearn.solve(X, y, loss=loss, solver="dual-cd", tol=1e-13, max_epochs=100_000, **pen)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a max_epochs warning fails the test
        res = _solve_dgpd(X, y, loss, pen, active_set=True, tol=1e-10, max_epochs=300)
    p0 = res.trace["primal"][0]
    assert res.converged
    assert res.gap <= 1e-10 * p0
    assert abs(res.primal - ref.primal) <= 1e-8 * ref.primal
    assert res.info["nnz_primal"] == np.count_nonzero(ref.w)
    # μ-strong convexity of P (μ = 0.01/n): ‖w - w*‖² ≤ 2 (P(w) - P*)/μ ≤ 2 gap/μ
    mu = 0.01 / n
    bound = np.sqrt(2 * res.gap / mu) + np.sqrt(2 * ref.gap / mu)
    assert np.linalg.norm(res.w - ref.w) <= bound


def test_active_set_sparse_dual_for_smooth_hinge():
    """Smooth hinge: well-classified samples have α_i = 0 and leave A_y (Algorithm 2, step 6)."""
    rng = np.random.default_rng(3)
    X = _normalize_rows(rng.standard_normal((200, 10)))
    y = np.sign(X @ rng.standard_normal(10))
    pen = _penalty(0.001, 0.01)
    res = _solve_dgpd(X, y, "smooth_hinge", pen, active_set=True, tol=1e-10)
    ref = cdlearn.solve(X, y, loss="smooth_hinge", solver="dual-cd", tol=1e-13, **pen)
    assert res.converged
    assert res.info["nnz_dual"] == np.count_nonzero(ref.alpha) < X.shape[0]
    np.testing.assert_allclose(res.w, ref.w, atol=1e-5)


def test_add_per_search_and_fixed_eta():
    X, y = _sparse_problem()
    pen = _penalty(0.01, 0.1)
    ref = cdlearn.solve(X, y, loss="smooth_hinge", solver="dual-cd", tol=1e-13, **pen)
    for opts in (dict(active_set=True, add_per_search=8), dict(active_set=True, eta=5.0),
                 dict(active_set=False, eta=5.0), dict(active_set=True, rounds=1),
                 dict(active_set=True, schedule="jacobi"),
                 dict(active_set=True, schedule="jacobi", add_per_search=5, rounds=20),
                 dict(active_set=True, growth="fixed"), dict(active_set=True, rounds=5),
                 dict(active_set=True, growth="fixed", add_per_search=3, rounds=1)):
        res = _solve_dgpd(X, y, "smooth_hinge", pen, **opts)
        assert res.converged, opts
        np.testing.assert_allclose(res.w, ref.w, atol=1e-6)
    res = _solve_dgpd(X, y, "smooth_hinge", pen, eta=5.0, tol=1e-3)
    assert res.info["eta"] == 5.0


def test_theorem_step_size():
    """Default η is Theorem 4.2's (16): 2n²μ / (s (5R² + nγμ)), γ = 1/β."""
    assert K.theorem_eta(10, 0.5, 4.0, 2.0, 3) == pytest.approx(2 * 100 * 0.5 / (3 * (10 + 20)))
    assert K.theorem_eta(10, 0.5, 4.0, 2.0, 0) == K.theorem_eta(10, 0.5, 4.0, 2.0, 1)
    X, y = _dense_problem()
    state = DGPDState(make_problem(X, y, loss="logistic", penalty="l2", lam=0.1))
    assert state.gamma == 4.0
    assert state.r2 == pytest.approx(1.0)
    state.run_epoch()
    s = state.stats[1]
    assert state.eta == pytest.approx(2 * 60**2 * 0.1 / (max(s, 1) * (5 + 60 * 4 * 0.1)))
    # active sets, Gauss-Seidel rounds: the SDCA step n²μ/‖[x_i]_A‖² of the restricted dual
    # (smallest over the active rows); l2 + logistic: every row and column ends up active
    problem = make_problem(X, y, loss="logistic", penalty="l2", lam=0.1)
    state = DGPDState(problem, active_set=True)
    for _ in range(5):
        state.run_epoch()
    assert list(state.counts[:2]) == [20, 60]
    assert state.eta == pytest.approx(60**2 * 0.1 / 1.0)  # unit rows
    # Jacobi rounds: (16) with the measured s, capped by n²μ/‖[X]_A‖_F² (dense: ‖·‖₁‖·‖∞ larger)
    state = DGPDState(problem, active_set=True, schedule="jacobi")
    state.run_epoch()
    assert 0 < state.eta <= 2 * 60**2 * 0.1 / (max(state.stats[1], 1) * (5 + 60 * 4 * 0.1))


def test_certificate_is_fenchel_young_gap_of_iterates():
    X, y = _sparse_problem()
    problem = make_problem(X, y, loss="smooth_hinge", **_penalty(0.01, 0.1))
    state = DGPDState(problem)
    for _ in range(3):
        state.run_epoch()
    primal, dual, gap = state.certificate()
    assert gap == pytest.approx(primal - dual, rel=1e-9, abs=1e-12)
    assert gap > 0
    # Δ_p = L(w, α) - D(α) (Definition 4.1), computed as Σ_k D_k
    L = state.lagrangian()
    assert state.last_delta_p == pytest.approx(L - dual, rel=1e-8, abs=1e-12)
    assert state.last_delta_p <= gap + 1e-12


# --------------------------------------------------------------------------- Lemma A.1
@st.composite
def saddle_states(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(2, 15))
    d = draw(st.integers(1, 12))
    sparse = draw(st.booleans())
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < (0.4 if sparse else 1.0))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    loss = draw(st.sampled_from(["smooth_hinge", "logistic", "squared"]))
    l1 = draw(st.sampled_from([0.0, 0.01, 0.3]))
    mu = draw(st.sampled_from([0.01, 0.1, 1.0]))
    w = rng.standard_normal(d) * (rng.random(d) < 0.5)
    t = rng.uniform(0.01, 0.99, n) * (rng.random(n) < 0.7)
    alpha = y * t if loss != "squared" else rng.standard_normal(n)
    X = sp.csr_matrix(X) if sparse else X
    return X, y, loss, l1, mu, w, alpha


@settings(max_examples=150, deadline=None)
@given(saddle_states())
def test_primal_step_decreases_lagrangian(case):
    """Lemma A.1: L(x^t, y^t) - L(x^{t+1}, y^t) ≥ (L(x^t, y^t) - D(y^t)) / ‖x^t - x̄^t‖₀ ≥ 0."""
    X, y, loss, l1, mu, w, alpha = case
    problem = make_problem(X, y, loss=loss, **_penalty(l1, mu))
    state = DGPDState(problem)
    state.w[:], state.alpha[:] = w, alpha
    state._resync()
    L0 = state.lagrangian()
    delta = state.primal_gap_part()  # L(x, y) - D(y) = L(x, y) - L(x̄, y)
    c = problem.design.csc
    n = problem.n_samples
    j, dec, count, _ = K.primal_greedy_step(c.data, c.indices, c.indptr, state.w, state.xta,
                                            state.margins, 1.0 / n, l1, mu)
    L1 = state.lagrangian()
    scale = 1e-9 * (1.0 + abs(L0))
    assert L1 <= L0 + scale
    assert L0 - L1 == pytest.approx(dec, abs=scale)
    if j >= 0:
        assert L0 - L1 >= delta / max(count, 1) - scale
    else:
        assert delta <= scale
    np.testing.assert_allclose(state.margins, problem.design.matvec(state.w), atol=1e-10)


@settings(max_examples=100, deadline=None)
@given(saddle_states(), st.floats(1e-3, 1e3))
def test_dual_step_increases_lagrangian(case, eta):
    """The proximal dual step (8) never decreases L(x, ·) and picks the largest score (7)."""
    X, y, loss, l1, mu, w, alpha = case
    problem = make_problem(X, y, loss=loss, **_penalty(l1, mu))
    state = DGPDState(problem)
    state.w[:], state.alpha[:] = w, alpha
    state._resync()
    L0 = state.lagrangian()
    r = problem.design.csr
    scores = [K.dual_score(problem.loss_code, a, z, yi)
              for a, z, yi in zip(state.alpha, state.margins, problem.y, strict=True)]
    _i, best, _, _ = K.dual_greedy_step(r.data, r.indices, r.indptr, problem.y,
                                    problem.sample_weight, state.alpha, state.xta,
                                    state.margins, problem.loss_code, eta)
    assert best == pytest.approx(max(scores))
    assert state.lagrangian() >= L0 - 1e-9 * (1.0 + abs(L0))
    np.testing.assert_allclose(state.xta, problem.design.rmatvec(state.alpha), atol=1e-10)


# --------------------------------------------------------------------------- API
def test_registered():
    spec = SOLVERS["dgpd"]
    assert set(spec.options) >= {"active_set", "eta", "rounds", "add_per_search"}
    assert "smooth_hinge" in spec.losses and "logistic" in spec.losses
    assert set(spec.penalties) == {"l2", "elastic_net"}


def test_same_seed_same_result():
    X, y = _sparse_problem()
    pen = _penalty(0.01, 0.1)
    for active_set in (False, True):
        a = _solve_dgpd(X, y, "logistic", pen, tol=1e-8, active_set=active_set, seed=0)
        b = _solve_dgpd(X, y, "logistic", pen, tol=1e-8, active_set=active_set, seed=0)
        c = _solve_dgpd(X, y, "logistic", pen, tol=1e-8, active_set=active_set, seed=7)
        np.testing.assert_array_equal(a.w, b.w)
        np.testing.assert_array_equal(a.alpha, b.alpha)
        if active_set:  # the seed orders the rounds over A_y: same optimum, other iterates
            np.testing.assert_allclose(a.w, c.w, atol=1e-6)
        else:  # Algorithm 1 is greedy throughout: the seed plays no role
            np.testing.assert_array_equal(a.w, c.w)
        np.testing.assert_array_equal(a.trace["gap"], b.trace["gap"])


def test_max_epochs_warns_and_returns_best():
    X, y = _sparse_problem()
    with pytest.warns(Warning, match="max_epochs"):
        res = _solve_dgpd(X, y, "smooth_hinge", _penalty(0.0, 0.1), max_epochs=2)
    assert not res.converged
    assert res.gap == pytest.approx(np.min(res.trace["gap"]), rel=1e-12) or (
        res.primal == np.min(res.trace["primal"]))


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(loss="hinge"), ValueError, "loss"),
    (dict(penalty="l1", lam=0.1), ValueError, "penalty"),
    (dict(penalty="elastic_net", lam=0.1, l1_ratio=1.0), ValueError, "l2"),
    (dict(fit_intercept=True), ValueError, "intercept"),
    (dict(eta=-1.0), ValueError, "eta"),
    (dict(eta=np.inf), ValueError, "eta"),
    (dict(eta="big"), TypeError, "eta"),
    (dict(rounds=0), ValueError, "rounds"),
    (dict(rounds=2.5), TypeError, "rounds"),
    (dict(add_per_search=0), ValueError, "add_per_search"),
    (dict(active_set="yes"), TypeError, "active_set"),
    (dict(active_set=True, schedule="random"), ValueError, "schedule"),
    (dict(active_set=True, growth="triple"), ValueError, "growth"),
    (dict(active_set=True, rounds="many"), ValueError, "rounds"),
    (dict(sampling="importance"), ValueError, "sampling"),
    (dict(batch_size=2), ValueError, "batch_size"),
    (dict(dual_step="fixed"), ValueError, "dual_step"),
    (dict(shrink_q=0.5), TypeError, "shrink_q"),
])
def test_bad_input(kwargs, exc, match):
    X, y = _dense_problem()
    args = dict(loss="smooth_hinge", penalty="l2", lam=0.1, solver="dgpd", max_epochs=2)
    args.update(kwargs)
    with pytest.raises(exc, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cdlearn.solve(X, y, **args)


def test_bad_labels():
    X, y = _dense_problem()
    with pytest.raises(ValueError, match="y"):
        cdlearn.solve(X, y * 2, loss="logistic", penalty="l2", lam=0.1, solver="dgpd")


@pytest.mark.parametrize("active_set", [False, True])
def test_sample_weights_agree_with_dual_cd(active_set):
    X, y = _sparse_problem()
    sw = np.ones(X.shape[0])
    sw[:10] = 2.0
    sw[10:15] = 0.0
    pen = _penalty(0.01, 0.1)
    a = _solve_dgpd(X, y, "logistic", pen, sample_weight=sw, active_set=active_set)
    b = cdlearn.solve(X, y, loss="logistic", solver="dual-cd", tol=1e-13, sample_weight=sw,
                      **pen)
    assert a.converged
    assert np.all(a.alpha[10:15] == 0.0)
    np.testing.assert_allclose(a.w, b.w, atol=1e-6)


def test_float32_and_empty_rows_and_columns():
    X, y = _dense_problem()
    X = np.hstack([X, np.zeros((X.shape[0], 2))])
    X[5] = 0.0
    pen = _penalty(0.01, 0.1)
    ref = cdlearn.solve(X, y, loss="smooth_hinge", solver="dual-cd", tol=1e-13, **pen)
    for active_set in (False, True):
        res = _solve_dgpd(X.astype(np.float32), y, "smooth_hinge", pen, active_set=active_set,
                          tol=1e-10)
        assert res.converged
        assert np.all(res.w[-2:] == 0.0)
        np.testing.assert_allclose(res.w, ref.w, atol=1e-4)
