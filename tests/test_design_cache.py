"""The design cache (cdlearn.data.DesignCache): hit on the same unchanged X, never stale."""

import gc
import warnings
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.data import as_design, design_cache


@pytest.fixture(autouse=True)
def fresh_cache():
    size = design_cache.max_entries
    design_cache.clear()
    design_cache.hits = design_cache.misses = 0
    yield design_cache
    design_cache.max_entries = size
    design_cache.clear()


def _data(kind, n=120, d=30, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.4)
    y = A[:, :5] @ np.arange(1.0, 6.0) + 0.1 * rng.standard_normal(n)
    X = {"F": np.asfortranarray(A), "C": np.ascontiguousarray(A), "csr": sp.csr_matrix(A),
         "csc": sp.csc_matrix(A)}[kind]
    return X, y


def _copy(X):
    return X.copy() if sp.issparse(X) else np.array(X, order="K", copy=True)


def _uncached(call):
    """``call()`` with the cache off: the reference every cached result must equal."""
    size = design_cache.max_entries
    design_cache.max_entries = 0
    try:
        return call()
    finally:
        design_cache.max_entries = size


LASSO = dict(loss="squared", penalty="l1", lam=0.05, tol=1e-10)


@pytest.mark.parametrize("kind", ["F", "C", "csr", "csc"])
def test_repeated_solves_hit_and_give_the_uncached_coefficients(kind):
    X, y = _data(kind)
    first = cdlearn.solve(X, y, **LASSO)
    assert (design_cache.hits, design_cache.misses, len(design_cache)) == (0, 1, 1)
    second = cdlearn.solve(X, 2.0 * y, **LASSO)  # another target, same X
    third = cdlearn.solve(X, y, **LASSO)
    assert (design_cache.hits, design_cache.misses) == (2, 1)
    reference = _uncached(lambda: cdlearn.solve(X, y, **LASSO))
    np.testing.assert_array_equal(third.w, first.w)
    np.testing.assert_allclose(first.w, reference.w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(second.w, _uncached(lambda: cdlearn.solve(X, 2.0 * y, **LASSO)).w,
                               rtol=0, atol=1e-12)
    assert first.gap <= 1e-10 * 0.5 * np.mean(y * y)


def _first_column_entry(X):
    """Index into ``X.data`` of a stored entry of column 0 (a feature of the support)."""
    cols = X.indices if X.format == "csr" else np.repeat(np.arange(X.shape[1]),
                                                          np.diff(X.indptr))
    return int(np.flatnonzero(cols == 0)[0])


def _mutations():
    def scale(X):
        if sp.issparse(X):
            X.data *= 2.0
        else:
            X *= 2.0

    def one_entry(X):
        if sp.issparse(X):
            X.data[_first_column_entry(X)] = 3.5
        else:
            X[3, 0] = 3.5

    def swap_rows(X):  # the same values, moved: sums of the entries do not change
        if sp.issparse(X):
            k = _first_column_entry(X)
            X.data[[k, 0]] = X.data[[0, k]]
        else:
            i = int(np.flatnonzero(X[:, 0])[0])
            X[[i, i + 1]] = X[[i + 1, i]]

    def sign_of_one(X):
        if sp.issparse(X):
            k = _first_column_entry(X)
            X.data[k] = -X.data[k]
        else:
            i = int(np.flatnonzero(X[:, 0])[0])
            X[i, 0] = -X[i, 0]

    return [scale, one_entry, swap_rows, sign_of_one]


@pytest.mark.parametrize("mutate", _mutations(), ids=lambda f: f.__name__)
@pytest.mark.parametrize("kind", ["F", "C", "csr"])
def test_x_mutated_in_place_misses_and_solves_the_new_problem(kind, mutate):
    X, y = _data(kind)
    before = cdlearn.solve(X, y, **LASSO)
    cdlearn.solve(X, y, **LASSO)
    assert (design_cache.hits, design_cache.misses) == (1, 1)
    mutate(X)
    after = cdlearn.solve(X, y, **LASSO)
    assert (design_cache.hits, design_cache.misses) == (1, 2)
    fresh = _uncached(lambda: cdlearn.solve(_copy(X), y, **LASSO))
    np.testing.assert_allclose(after.w, fresh.w, rtol=0, atol=1e-12)
    assert np.max(np.abs(after.w - before.w)) > 1e-6  # the problem did change
    cdlearn.solve(X, y, **LASSO)
    assert (design_cache.hits, design_cache.misses) == (2, 2)  # the new contents are cached


def test_sparse_arrays_replaced_miss():
    X, y = _data("csr")
    cdlearn.solve(X, y, **LASSO)
    X.data = X.data * 3.0
    after = cdlearn.solve(X, y, **LASSO)
    assert (design_cache.hits, design_cache.misses) == (0, 2)
    fresh = _uncached(lambda: cdlearn.solve(_copy(X), y, **LASSO))
    np.testing.assert_allclose(after.w, fresh.w, rtol=0, atol=1e-12)


def test_another_array_or_a_view_misses():
    X, y = _data("F")
    cdlearn.solve(X, y, **LASSO)
    cdlearn.solve(_copy(X), y, **LASSO)  # equal contents, another object
    cdlearn.solve(X[:, :], y, **LASSO)  # a view of X
    assert (design_cache.hits, design_cache.misses) == (0, 3)


def test_nan_written_into_a_cached_x_is_still_refused():
    X, y = _data("C")
    cdlearn.solve(X, y, **LASSO)
    X[2, 2] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        cdlearn.solve(X, y, **LASSO)
    X[2, 2] = 1e60
    with pytest.raises(ValueError, match="magnitude 1e"):
        cdlearn.solve(X, y, **LASSO)


def test_the_cache_does_not_keep_x_alive_and_is_bounded():
    X, y = _data("C")
    design_cache.max_entries = 2
    as_design(X).csc  # noqa: B018 - the column layout, a copy the entry keeps
    ref = weakref.ref(X)
    assert len(design_cache) == 1
    del X
    gc.collect()
    assert ref() is None and len(design_cache) == 0
    arrays = [_data("F", seed=s)[0] for s in range(3)]
    for A in arrays:
        as_design(A)
    assert len(design_cache) == 2
    as_design(arrays[0])  # the oldest was dropped: a miss
    assert (design_cache.hits, design_cache.misses) == (0, 5)


@pytest.mark.parametrize("solver, kind, options", [
    ("dual-cd", "csr", dict(loss="squared_hinge", penalty="l2", lam=0.01)),
    ("gram-cd", "F", dict(loss="squared", penalty="l1", lam=0.05)),
    ("newton-cd", "C", dict(loss="logistic", penalty="l2", lam=0.01)),
    ("primal-cd", "C", dict(loss="logistic", penalty="l1", lam=0.01)),
])
def test_methods_reading_cached_set_up_give_the_uncached_result(solver, kind, options):
    """Statistics, the copied layout and derived set-up (dual CD's identical rows,
    gram-cd's Gram matrix) come from the cache on the second call."""
    X, y = _data(kind)
    if options["loss"] != "squared":
        y = np.where(y > np.median(y), 1.0, -1.0)
    kw = dict(options, solver=solver, tol=1e-8, max_epochs=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cdlearn.solve(X, y, **kw)
        cached = cdlearn.solve(X, y, **kw)
        reference = _uncached(lambda: cdlearn.solve(X, y, **kw))
    assert design_cache.hits == 1
    np.testing.assert_allclose(cached.w, reference.w, rtol=0, atol=1e-12)
    assert cached.primal == pytest.approx(reference.primal, rel=1e-12)


def test_estimator_refits_hit_and_see_a_mutation():
    X, y = _data("F")
    a = cdlearn.Lasso(alpha=0.05, tol=1e-8).fit(X, y).coef_
    hits = design_cache.hits
    b = cdlearn.Lasso(alpha=0.05, tol=1e-8).fit(X, y).coef_
    assert design_cache.hits > hits
    np.testing.assert_array_equal(a, b)
    X[:, 0] *= -1.0
    misses = design_cache.misses
    c = cdlearn.Lasso(alpha=0.05, tol=1e-8).fit(X, y).coef_
    assert design_cache.misses == misses + 1
    fresh = _uncached(lambda: cdlearn.Lasso(alpha=0.05, tol=1e-8).fit(_copy(X), y).coef_)
    np.testing.assert_allclose(c, fresh, rtol=0, atol=1e-12)
    assert c[0] == pytest.approx(-a[0], rel=1e-6)


def test_a_large_copied_layout_is_not_kept_across_calls(monkeypatch):
    import cdlearn.data as data

    rng = np.random.default_rng(0)
    X = sp.random(40, 30, density=0.3, format="csr", random_state=rng)
    design_cache.clear()
    small = as_design(X)
    assert not np.may_share_memory(small.csc.data, X.data)  # the column view is a copy
    assert "view:csc" in small._derived  # kept: the next call on X reuses it
    monkeypatch.setattr(data, "CACHED_COPY_MAX_BYTES", 0)
    design_cache.clear()
    large = as_design(X)
    np.testing.assert_array_equal(large.csc.data, small.csc.data)
    assert "view:csc" not in large._derived


def test_a_small_x_seen_again_is_scanned_by_the_loop_and_still_sees_edits(monkeypatch):
    # a first call on a small X scans it in numpy (nothing to load on a cold start); a
    # repeat takes the compiled loop when that compiles nothing (numba's disk cache holds
    # it), whose fingerprint must equal numpy's (else every repeat would miss) and must
    # still change with an in-place edit
    from cdlearn import data

    X, y = _data("C")
    taken = []
    numpy_form, loop_form = data._scan_numpy, data._scan_loop
    monkeypatch.setattr(data, "_scan_numpy", lambda *a: taken.append("numpy") or numpy_form(*a))
    monkeypatch.setattr(data, "_scan_loop", lambda *a: taken.append("loop") or loop_form(*a))
    monkeypatch.setattr(data, "_LOOP_WIDTHS", set())
    monkeypatch.setattr(data, "_LOOP_ON_DISK", {8: False})  # an empty numba cache
    as_design(X)
    as_design(X)
    assert taken == ["numpy", "numpy"] and (design_cache.hits, design_cache.misses) == (1, 1)
    design_cache.clear()
    design_cache.hits = design_cache.misses = 0
    taken.clear()
    monkeypatch.setattr(data, "_LOOP_ON_DISK", {8: True})  # the loop is in numba's cache
    as_design(X)
    assert taken == ["numpy"] and (design_cache.hits, design_cache.misses) == (0, 1)
    as_design(X)
    assert taken == ["numpy", "loop"] and (design_cache.hits, design_cache.misses) == (1, 1)
    X[5, 7] = np.nextafter(X[5, 7], np.inf)  # one ulp
    np.testing.assert_array_equal(as_design(X).col_sq_norms,
                                  _uncached(lambda: as_design(_copy(X)).col_sq_norms))
    assert taken[-1] == "loop" and (design_cache.hits, design_cache.misses) == (1, 2)
    X[[0, 1]] = X[[1, 0]]  # rows swapped: the same values, moved
    as_design(X)
    assert (design_cache.hits, design_cache.misses) == (1, 3)
    fresh = _uncached(lambda: cdlearn.solve(_copy(X), y, **LASSO))
    np.testing.assert_allclose(cdlearn.solve(X, y, **LASSO).w, fresh.w, rtol=0, atol=1e-12)
    assert design_cache.hits == 2


def test_the_loop_counts_as_free_only_when_numba_s_cache_holds_it(monkeypatch):
    from numba import types

    from cdlearn import data

    cache_file = data._scan_loop._cache._cache_file
    magic = data._scan_loop.targetctx.codegen().magic_tuple()
    entry = ((types.Array(types.uint64, 1, "C"), types.uint64), magic)
    monkeypatch.setattr(data, "_LOOP_WIDTHS", set())
    monkeypatch.setattr(data, "_LOOP_ON_DISK", {})
    monkeypatch.setattr(cache_file, "_load_index", lambda: {entry: "data._scan_loop.nbc"})
    assert (data._loop_is_free(8), data._loop_is_free(4)) == (True, False)  # float64 only
    monkeypatch.setattr(cache_file, "_load_index", lambda: {})
    monkeypatch.setattr(data, "_LOOP_ON_DISK", {})
    assert data._loop_is_free(8) is False  # an empty or stale index: numpy's form
    monkeypatch.setattr(data, "_LOOP_WIDTHS", {8})
    assert data._loop_is_free(8) is True  # ran in this process
