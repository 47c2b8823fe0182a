"""SPDC (Zhang & Xiao 2014): lazy sparse updates, convergence, agreement with dual CD."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import cdlearn
from cdlearn.api import make_problem
from cdlearn.kernels.spdc import prox_power, prox_step
from cdlearn.solvers import SOLVERS
from cdlearn.solvers.spdc import SPDCState, spdc_parameters

LOSSES = ("smooth_hinge", "logistic", "squared")


def _dense(seed=0, n=120, d=30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n))
    return X, y


def _sparse(seed=1, n=150, d=300, density=0.03):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    y = np.sign(rng.standard_normal(n))
    return X, y


def test_registered():
    spec = SOLVERS["spdc"]
    assert set(spec.losses) == {"squared", "logistic", "squared_hinge", "smooth_hinge"}
    assert set(spec.penalties) == {"l2", "elastic_net"}


@settings(max_examples=200, deadline=None)
@given(t=st.floats(-5, 5, allow_subnormal=False),
       v=st.floats(-3, 3, allow_subnormal=False), tau=st.floats(0.01, 10),
       l1=st.sampled_from([0.0, 0.05, 0.5, 2.0]), l2=st.floats(0.01, 2.0),
       k=st.integers(0, 400))
def test_prox_power_matches_repeated_steps(t, v, tau, l1, l2, k):
    """The O(1) lazy catch-up equals k explicit primal steps."""
    ref = t
    for _ in range(k):
        ref = prox_step(ref, v, tau, l1, l2)
    powers = (1.0 / (1.0 + tau * l2)) ** np.arange(k // 2 + 1)  # table shorter than k too
    got = prox_power(t, v, tau, l1, l2, k, powers)
    assert abs(got - ref) <= 1e-10 * (1.0 + abs(t) + abs(v) / l2)


@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
def test_lazy_equals_dense_updates(penalty):
    """The sparse (lazy) kernel follows the O(d)-per-iteration kernel's iterates."""
    X, y = _sparse()
    kw = dict(loss="smooth_hinge", penalty=penalty, lam=0.02, l1_ratio=0.3, solver="spdc",
              tol=1e-14, max_epochs=15, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = cdlearn.solve(X, y, **kw)
        dense = cdlearn.solve(X, y, dense_updates=True, **kw)
    np.testing.assert_allclose(lazy.w, dense.w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(lazy.alpha, dense.alpha, rtol=0, atol=1e-12)
    assert lazy.trace["passes"][-1] == pytest.approx(dense.trace["passes"][-1])


def test_epoch_touches_each_row_twice():
    """An epoch costs 2 nnz (a row read for x̄, a row write), not n·d."""
    X, y = _sparse()
    st_ = SPDCState(make_problem(X, y, loss="logistic", penalty="l2", lam=0.01), seed=0)
    entries, _ = st_.run_epoch()
    row_nnz = np.diff(X.indptr)
    assert entries <= 2 * row_nnz.max() * X.shape[0]
    assert 0.5 * X.nnz < entries / 2 < 2.0 * X.nnz


def test_step_sizes_of_theorem_1():
    X, y = _dense()
    p = make_problem(X, y, loss="logistic", penalty="l2", lam=0.05)
    tau, sigma, theta = spdc_parameters(p)
    n, R, gamma = X.shape[0], math.sqrt(np.max((X ** 2).sum(axis=1))), 4.0
    assert tau == pytest.approx(math.sqrt(gamma / (n * 0.05)) / (2 * R))
    assert sigma == pytest.approx(math.sqrt(n * 0.05 / gamma) / (2 * R))
    assert theta == pytest.approx(1 - 1 / (n + R * math.sqrt(n / (0.05 * gamma))))
    assert tau * sigma * R ** 2 == pytest.approx(0.25)


@pytest.mark.parametrize("make", [_dense, _sparse], ids=["dense", "sparse"])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
def test_converges_and_agrees_with_dual_cd(make, loss, penalty):
    X, y = make()
    kw = dict(loss=loss, penalty=penalty, lam=0.05, l1_ratio=0.4)
    ref = cdlearn.solve(X, y, solver="dual-cd", tol=1e-12, max_epochs=5000, **kw)
    assert ref.converged
    p0 = ref.trace["primal"][0]
    res = cdlearn.solve(X, y, solver="spdc", tol=1e-6, max_epochs=3000, seed=1, **kw)
    assert res.converged and res.solver == "spdc"
    assert res.gap <= 1e-6 * p0
    assert res.primal - ref.primal <= 1e-6 * p0
    assert res.primal - ref.primal >= -1e-11 * p0  # dual CD's optimum is certified
    # a tight run agrees with dual CD's solution coordinate by coordinate
    tight = cdlearn.solve(X, y, solver="spdc", tol=1e-13, max_epochs=5000, seed=1, **kw)
    assert tight.converged
    np.testing.assert_allclose(tight.w, ref.w, rtol=0, atol=1e-6)
    if penalty == "elastic_net":
        assert np.count_nonzero(tight.w) == np.count_nonzero(np.abs(ref.w) > 1e-9)


def test_seed_reproducible_and_distinct():
    X, y = _sparse()
    kw = dict(loss="logistic", penalty="l2", lam=0.01, solver="spdc", tol=1e-8)
    a = cdlearn.solve(X, y, seed=5, **kw)
    b = cdlearn.solve(X, y, seed=5, **kw)
    c = cdlearn.solve(X, y, seed=6, **kw)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.n_epochs == b.n_epochs
    assert not np.array_equal(a.w, c.w)


def test_warm_start_from_dual_solution():
    X, y = _dense()
    kw = dict(loss="smooth_hinge", penalty="l2", lam=0.05)
    ref = cdlearn.solve(X, y, solver="dual-cd", tol=1e-12, **kw)
    res = cdlearn.solve(X, y, solver="spdc", tol=1e-9, alpha0=ref.alpha, **kw)
    assert res.converged and res.n_epochs == 0


def test_custom_steps_and_zero_rows():
    X, y = _dense()
    X[:5] = 0.0  # all-zero rows are legal
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.1, solver="spdc",
                        tau=0.05, sigma=1.0, theta=0.9, tol=1e-8, max_epochs=4000)
    ref = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.1, solver="dual-cd",
                        tol=1e-12)
    assert res.converged
    assert res.primal == pytest.approx(ref.primal, rel=1e-7)


@pytest.mark.parametrize("kw, match", [
    (dict(loss="hinge"), "loss"),
    (dict(penalty="l1"), "penalty"),
    (dict(fit_intercept=True), "intercept"),
    (dict(sampling="importance"), "sampling"),
    (dict(batch_size=2), "batch_size"),
    (dict(penalty="elastic_net", l1_ratio=1.0), "strongly convex"),
    (dict(tau=-1.0), "tau"),
    (dict(theta=1.5), "theta"),
    (dict(sigma=float("nan")), "sigma"),
])
def test_errors(kw, match):
    X, y = _dense()
    args = dict(loss="logistic", penalty="l2", lam=0.1, solver="spdc")
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        cdlearn.solve(X, y, **args)


def test_unknown_option_and_type_errors():
    X, y = _dense()
    with pytest.raises(TypeError, match="accelerated"):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="spdc", accelerated=True)
    with pytest.raises(TypeError, match="tau"):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, solver="spdc", tau="big")
