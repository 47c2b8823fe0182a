"""The compiled certificate of the squared loss (kernels.squared_certificate).

Against the numpy certificate it replaces (objectives.certificate_from_margins) at
iterates of a run, dense and sparse, with weights, an intercept, positive=True
and the elastic net; against the closed form of the Lasso's dual at the rescaled
residual; at scikit-learn's tightly converged Lasso the gap is rounding. Plain
cyclic CD's Anderson steps: P never increases, the optimum is scikit-learn's.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk

import cdlearn
from cdlearn.api import make_problem
from cdlearn.objectives import certificate_from_margins
from cdlearn.solvers.primal_cd import ANDERSON_K, PrimalCDState


@pytest.fixture(autouse=True)
def _compiled_on_small_inputs(monkeypatch):
    # small inputs keep the numpy certificate (no compilation on a first fit)
    monkeypatch.setattr("cdlearn.solvers.primal_cd.SMALL_INPUT", -1)


def _data(n=60, d=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 1:] += 0.6 * X[:, :-1]
    X[rng.random((n, d)) < 0.3] = 0.0  # sparse input keeps explicit structure
    w = np.zeros(d)
    w[:5] = rng.standard_normal(5)
    return X, X @ w + 0.2 * rng.standard_normal(n) + 0.7


def _numpy_certificate(state):
    p = state.problem
    return certificate_from_margins(p.design, p.loss_code, state.z, p.y, p.sample_weight,
                                    state.w, p.l1, p.l2, p.positive)


@pytest.mark.parametrize("layout", ["F", "csc"])
@pytest.mark.parametrize("penalty,fit_intercept,weighted,positive", [
    ("l1", False, False, False),
    ("l1", True, True, False),
    ("elastic_net", False, True, False),
    ("l1", False, False, True),
    ("elastic_net", True, False, True),
])
def test_compiled_certificate_equals_numpys(layout, penalty, fit_intercept, weighted,
                                            positive):
    X, y = _data()
    n = X.shape[0]
    sw = np.random.default_rng(1).uniform(0.3, 2.0, n) if weighted else None
    Xin = np.asfortranarray(X) if layout == "F" else sp.csc_matrix(X)
    lam = 0.1 * np.abs(X.T @ y).max() / n
    p = make_problem(Xin, y, loss="squared", penalty=penalty, lam=lam, l1_ratio=0.8,
                     fit_intercept=fit_intercept, sample_weight=sw, positive=positive)
    state = PrimalCDState(p, sampling="cyclic")
    seen = 0
    for _ in range(40):
        ours = state.certificate()  # refreshes z, the intercept and the residual
        ref = _numpy_certificate(state)
        scale = abs(ref[0])
        np.testing.assert_allclose(ours[:2], ref[:2], rtol=1e-13, atol=0)
        assert abs(ours[2] - ref[2]) <= 1e-13 * scale
        assert ours[2] >= 0.0
        seen += ref[2] < 1e-6 * scale  # the agreement holds at small gaps too
        state.run_epoch()
    assert seen >= 3


def test_first_check_from_the_cached_product_is_the_same_certificate():
    X, y = _data(seed=2)
    n = X.shape[0]
    lam = 0.2 * np.abs(X.T @ y).max() / n
    p = make_problem(np.asfortranarray(X), y, loss="squared", penalty="l1", lam=lam)
    first = PrimalCDState(p, sampling="cyclic").certificate()  # w = 0: u = Xᵀy/n cached
    state = PrimalCDState(p, sampling="cyclic")
    state._checks = 1  # not the first check: the pass over X
    np.testing.assert_allclose(first, state.certificate(), rtol=1e-14, atol=0)
    np.testing.assert_allclose(first, _numpy_certificate(state), rtol=1e-14, atol=0)


def test_lasso_certificate_matches_the_closed_form_dual():
    # D(θα) of the Lasso with α = -r: -(1/n)Σ(½θ²r² + θ r y), θ = min(1, λ/‖Xᵀr‖∞·n)
    X, y = _data(seed=4)
    n = X.shape[0]
    lam = 0.05 * np.abs(X.T @ y).max() / n
    p = make_problem(np.asfortranarray(X), y, loss="squared", penalty="l1", lam=lam)
    state = PrimalCDState(p, sampling="cyclic")
    for _ in range(3):
        state.run_epoch()
    primal, dual, gap = state.certificate()
    r = X @ state.w - y
    theta = min(1.0, lam / (np.abs(X.T @ r).max() / n))
    assert theta < 1.0  # the rescaling is exercised
    p_ref = 0.5 * r @ r / n + lam * np.abs(state.w).sum()
    d_ref = -(0.5 * theta ** 2 * r @ r + theta * r @ y) / n
    assert abs(primal - p_ref) <= 1e-14 * p_ref
    assert abs(dual - d_ref) <= 1e-13 * p_ref
    assert abs(gap - (p_ref - d_ref)) <= 1e-13 * p_ref


def test_gap_is_rounding_at_sklearns_optimum():
    X, y = _data(seed=5)
    n = X.shape[0]
    lam = 0.05 * np.abs(X.T @ y).max() / n
    ref = sk.Lasso(alpha=lam, fit_intercept=False, tol=1e-16, max_iter=1_000_000).fit(X, y)
    p = make_problem(np.asfortranarray(X), y, loss="squared", penalty="l1", lam=lam)
    state = PrimalCDState(p, sampling="cyclic", w0=ref.coef_)
    state._checks = 1
    primal, _, gap = state.certificate()
    r = y - X @ ref.coef_
    assert abs(primal - (0.5 * r @ r / n + lam * np.abs(ref.coef_).sum())) <= 1e-14 * primal
    assert 0.0 <= gap <= 1e-13 * primal


def test_small_inputs_keep_the_numpy_certificate(monkeypatch):
    X, y = _data(seed=6)
    lam = 0.1 * np.abs(X.T @ y).max() / X.shape[0]
    p = make_problem(np.asfortranarray(X), y, loss="squared", penalty="l1", lam=lam)
    assert PrimalCDState(p, sampling="cyclic")._u is not None
    monkeypatch.setattr("cdlearn.solvers.primal_cd.SMALL_INPUT", X.size)
    assert PrimalCDState(p, sampling="cyclic")._u is None


@pytest.mark.parametrize("layout,fit_intercept,positive", [
    ("F", False, False), ("csc", True, False), ("F", False, True)])
def test_anderson_steps_of_plain_cd_lower_p_and_reach_sklearns_optimum(layout, fit_intercept,
                                                                      positive):
    X, y = _data(80, 120, seed=7)
    n = X.shape[0]
    lam = 0.05 * np.abs(X.T @ (y - y.mean())).max() / n
    Xin = np.asfortranarray(X) if layout == "F" else sp.csc_matrix(X)
    p = make_problem(Xin, y, loss="squared", penalty="l1", lam=lam,
                     fit_intercept=fit_intercept, positive=positive)
    state = PrimalCDState(p, sampling="cyclic")

    def objective():
        r = y - X @ state.w - state.intercept
        return 0.5 * r @ r / n + lam * np.abs(state.w).sum()

    values = [objective()]
    for _ in range(60):
        state.run_epoch()  # a CD epoch, then every 5th an extrapolation kept if lower
        values.append(objective())
    assert state.stats["anderson_accepted"] >= 2
    assert np.all(np.diff(values) <= 1e-14 * values[0])
    res = cdlearn.solve(Xin, y, penalty="l1", lam=lam, solver="primal-cd", sampling="cyclic",
                        fit_intercept=fit_intercept, positive=positive, tol=1e-13,
                        max_epochs=10_000)
    assert res.converged and res.info["anderson_accepted"] >= 1
    ref = sk.Lasso(alpha=lam, fit_intercept=fit_intercept, positive=positive, tol=1e-16,
                   max_iter=1_000_000).fit(X, y)
    r = y - X @ ref.coef_ - ref.intercept_
    p_ref = 0.5 * r @ r / n + lam * np.abs(ref.coef_).sum()
    assert abs(res.primal - p_ref) <= 1e-10 * p_ref
    np.testing.assert_allclose(res.w, ref.coef_, atol=1e-5 * np.abs(ref.coef_).max())


def test_stretched_interval_checks_halfway_to_the_predicted_stop():
    from cdlearn.solvers.base import STRETCHED_INTERVAL, _predicted_interval

    # the gap fell 100× in 4 epochs: 3e-12 is 15.05 epochs on from 1e-4
    assert _predicted_interval(4, (4, 1e-2), 8, 1e-4, 3e-12) == 4
    assert _predicted_interval(4, (4, 1e-2), 8, 1e-4, 3e-12, stretch=True) == 8
    assert _predicted_interval(4, (4, 1e-2), 8, 1e-4, 1e-30, stretch=True) == STRETCHED_INTERVAL
    # within two intervals of the predicted stop (7.05, 1.40 epochs): as without stretch
    assert _predicted_interval(4, (4, 1e-2), 8, 1e-4, 3e-8, stretch=True) == 4
    assert _predicted_interval(4, (4, 1e-2), 8, 1e-4, 2e-5, stretch=True) == 2


@pytest.mark.parametrize("tol", [1e-6, 1e-10])
def test_plain_cd_tol_run_stops_soon_after_the_gap_reaches_tol(tol):
    X, y = _data(100, 150, seed=9)
    n = X.shape[0]
    lam = 0.05 * np.abs(X.T @ y).max() / n
    kw = dict(penalty="l1", lam=lam, solver="primal-cd", sampling="cyclic")
    D = np.asfortranarray(X)
    every = cdlearn.solve(D, y, tol=1e-15, max_epochs=300, check_every=1, **kw)
    threshold = tol * 0.5 * (y @ y) / n
    first = int(every.trace["epoch"][np.argmax(every.trace["gap"] <= threshold)])
    assert every.trace["gap"][first] <= threshold
    res = cdlearn.solve(D, y, tol=tol, max_epochs=300, **kw)
    assert res.converged and res.gap <= threshold
    assert res.info["anderson_accepted"] >= 1
    assert first - 3 <= res.n_epochs <= first + 3  # rounding moves the trajectories apart
    assert len(res.trace) - 1 <= res.n_epochs // 4 + 1  # checks: ≤ 1 per 4 epochs (+ epoch 0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_check_just_before_the_last_epoch_waits_for_its_check():
    rng = np.random.default_rng(10)
    X = np.asfortranarray(rng.standard_normal((100, 150)))  # no zeros: interval 4 epochs
    y = X[:, :5] @ rng.standard_normal(5) + 0.1 * rng.standard_normal(100)
    lam = 0.05 * np.abs(X.T @ y).max() / X.shape[0]
    kw = dict(penalty="l1", lam=lam, solver="primal-cd", sampling="cyclic", tol=1e-15)
    D = X
    # the check due at 8 is within 2 epochs of the last (9), at 4 it is not
    assert list(cdlearn.solve(D, y, max_epochs=9, **kw).trace["epoch"]) == [0, 4, 9]
    assert list(cdlearn.solve(D, y, max_epochs=5, **kw).trace["epoch"]) == [0, 5]
    assert list(cdlearn.solve(D, y, max_epochs=7, **kw).trace["epoch"]) == [0, 4, 7]
    # without the stretch (small inputs: the numpy certificate) the check at 8 is made
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("cdlearn.solvers.primal_cd.SMALL_INPUT", X.size)
        assert list(cdlearn.solve(D, y, max_epochs=9, **kw).trace["epoch"]) == [0, 4, 8, 9]


@pytest.mark.parametrize("layout,sampling,fit_intercept,weighted,positive", [
    ("F", "cyclic", False, False, False),
    ("csc", "cyclic", True, True, False),
    ("F", "cyclic", True, False, True),
    ("csc", "uniform", False, True, False),
])
def test_run_epochs_gives_the_iterates_of_as_many_run_epoch_calls(layout, sampling,
                                                                  fit_intercept, weighted,
                                                                  positive):
    X, y = _data(80, 120, seed=11)
    n = X.shape[0]
    sw = np.random.default_rng(2).uniform(0.3, 2.0, n) if weighted else None
    Xin = np.asfortranarray(X) if layout == "F" else sp.csc_matrix(X)
    lam = 0.05 * np.abs(X.T @ (y - y.mean())).max() / n
    p = make_problem(Xin, y, loss="squared", penalty="elastic_net", lam=lam, l1_ratio=0.9,
                     fit_intercept=fit_intercept, sample_weight=sw, positive=positive)
    one, batched = (PrimalCDState(p, sampling=sampling, seed=3) for _ in range(2))
    assert batched.epoch_batch > 0
    for k in (1, 4, 10, 7):  # a certificate between stretches, as _run makes them
        entries = [one.run_epoch()[0] for _ in range(k)]
        assert batched.run_epochs(k) == (sum(entries), entries[-1])
        np.testing.assert_array_equal(batched.w, one.w)
        np.testing.assert_array_equal(batched.resid, one.resid)
        assert batched.intercept == one.intercept and batched.counter == one.counter
        assert batched.certificate() == one.certificate()
    if sampling == "cyclic":
        assert batched.stats == one.stats and one.stats["anderson_tried"] == 22 // ANDERSON_K
