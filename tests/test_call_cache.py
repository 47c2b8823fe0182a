"""What a call keeps on the design for the next call on the same X (issue 25, per-call
overhead): P(0) for the last y, max ‖x_i‖² of the certificate check, y's fingerprint. Each
must follow a changed y or X exactly: a stale value would change the stopping threshold
or the claim that a gap certifies anything."""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import cdlearn
from cdlearn.api import make_problem
from cdlearn.data import as_design, design_cache
from cdlearn.losses import LOSS_CODES
from cdlearn.objectives import primal_value
from cdlearn.solvers.base import initial_primal

PROBLEM = dict(loss="squared", penalty="l1", lam=0.05)
LASSO = dict(PROBLEM, tol=1e-8)


@pytest.fixture(autouse=True)
def fresh_cache():
    design_cache.clear()
    yield
    design_cache.clear()


def _data(n=80, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X[:, :3] @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(n)
    return X, y


def _p0(y, sw=None):
    """P(0) of the squared loss computed afresh (no cache involved)."""
    sw = np.ones_like(y) if sw is None else sw
    return primal_value(LOSS_CODES["squared"], np.zeros(y.shape[0]), y, sw, np.zeros(1),
                        0.0, 0.0)


def test_p0_is_kept_for_the_last_y_and_follows_every_change_of_it():
    X, y = _data()
    design = as_design(X)
    key = ("P(0)", LOSS_CODES["squared"])
    values = [initial_primal(make_problem(design, y, **PROBLEM)) for _ in range(3)]
    assert values == [_p0(y)] * 3
    assert values[0] == pytest.approx(0.5 * np.mean(y * y), rel=1e-14)  # its closed form
    assert design._derived[key][0] is not None  # marked by y's fingerprint from call 2
    y[7] = np.nextafter(y[7], np.inf)  # one ulp, in place
    assert initial_primal(make_problem(design, y, **PROBLEM)) == _p0(y)
    y[7] += 3.0
    assert initial_primal(make_problem(design, y, **PROBLEM)) == _p0(y)
    assert _p0(y) != values[0]
    # weights: computed, never taken from (nor stored in) the unit-weight entry
    sw = np.linspace(0.5, 2.0, y.shape[0])
    mark = design._derived[key]
    weighted = initial_primal(make_problem(design, y, sample_weight=sw, **PROBLEM))
    assert weighted == _p0(y, sw) and design._derived[key] == mark
    assert weighted == pytest.approx(0.5 * np.sum(sw * y * y) / y.shape[0], rel=1e-14)


@pytest.mark.parametrize("passed", ["array", "design"])
def test_solves_after_y_changes_equal_uncached_solves(passed):
    """The threshold tol·P(0) is in the message; the solve must be the uncached one's."""
    X, y = _data(seed=1)
    Z = X if passed == "array" else as_design(X)
    for _ in range(2):
        cdlearn.solve(Z, y, **LASSO)
    for change in (lambda v: 3.0 * v, lambda v: np.r_[np.nextafter(v[0], 0.0), v[1:]]):
        y = change(y)
        got = cdlearn.solve(Z, y, **LASSO)
        design_cache.clear()
        ref = cdlearn.solve(as_design(X.copy()), y.copy(), **LASSO)
        assert got.message == ref.message and got.n_epochs == ref.n_epochs
        np.testing.assert_array_equal(got.w, ref.w)
        assert got.gap == ref.gap


def test_x_scaled_in_place_is_examined_again_by_the_certificate_check():
    """max ‖x_i‖² is kept on the design: after ``X *= 2e12`` in place (a new design: the
    fingerprint misses) the gap is rounding and must not be claimed (the kept value of
    the well-scaled X would have said it certifies)."""
    rng = np.random.default_rng(10)
    X = rng.standard_normal((30, 5))
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    opts = dict(loss="logistic", penalty="l2", lam=1e-3, solver="primal-cd", tol=1e-6,
                max_epochs=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            assert cdlearn.solve(X, y, **opts).converged
    X *= 2e12
    with pytest.warns(ConvergenceWarning, match="below its float64 rounding"):
        res = cdlearn.solve(X, y, **opts)
    assert not res.converged and res.info["gap_unverifiable"] is True
    X /= 2e12  # back to (about) the first scale: certified again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cdlearn.solve(X, y, **opts)
    assert res.converged and res.gap <= 1e-6 * math.log(2.0)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_repeat_scanned_without_its_count_still_counts_an_edited_x(order):
    """A repeated X is scanned by the compiled loop without the nonzero count (a hit has
    it cached); an in-place edit makes it a miss, whose design must count afresh."""
    X = np.asfortranarray(_data(n=400, d=400)[0]) if order == "F" else _data(n=400, d=400)[0]
    assert X.size > 1 << 17  # the compiled loop from the first call
    first = as_design(X)
    assert first.nnz == X.size and as_design(X).nnz == X.size
    X[:7, 3] = 0.0
    X[5, 9] = -0.0  # not a nonzero
    assert as_design(X).nnz == np.count_nonzero(X) == X.size - 8
    assert as_design(X).nnz == X.size - 8  # and the hit keeps that count
