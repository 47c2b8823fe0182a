"""Multi-core CD (issue 24): τ-nice dual/primal CD and newton-cg on threads.

The parallel kernels (:mod:`cdlearn.kernels.parallel_cd`) must give the serial
τ-nice iterates bit for bit (whatever the thread count), and threaded runs must
reach the optimum the serial methods reach.
"""

import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from cdlearn.api import faceoff_choice, make_problem, solve
from cdlearn.data import as_design
from cdlearn.faceoff import analyze
from cdlearn.kernels import parallel_cd
from cdlearn.kernels.parallel_cd import block_bounds, parallel_slice_dots
from cdlearn.multiclass import solve_ovr
from cdlearn.solvers import parallel
from cdlearn.solvers import working_set as ws_module
from cdlearn.solvers.parallel import (
    check_threads,
    current_threads,
    eso_epoch_growth,
    use_threads,
)
from cdlearn.solvers.working_set import top_ranks

two_threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                                 reason="numba may use one thread only (NUMBA_NUM_THREADS)")


@pytest.fixture(autouse=True)
def _threads_on_small_problems(monkeypatch):
    """The problems here are small: let their minibatches run on threads anyway."""
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 0)


def test_small_minibatches_stay_serial(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 4096)
    X, y = _data()  # 480 nonzeros over 80 rows: τ = 16 visits 96 entries
    r = solve(X, y, loss="logistic", lam=0.05, solver="dual-cd", batch_size=16,
              sampling="uniform", n_threads=2, max_epochs=2, check_every=2)
    assert r.info["n_threads"] == 1
    assert parallel.minibatch_threads(16, 480, 80) == 1
    assert parallel.minibatch_threads(16, 480 * 1000, 80) == parallel.current_threads() == 1


def _data(dense=False, n=80, d=40, seed=0):
    # small, with few minibatches per epoch: every batch is two fork-joins of the
    # thread team, which a loaded 2-core machine makes slow
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    w = rng.standard_normal(d)
    y = np.where(X @ w + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return (X.toarray() if dense else X), y


def _pair(**kw):
    """The τ-nice solve on 1 and 2 threads, and twice a short run on 2 threads."""
    X, y = _data(kw.pop("dense", False))
    runs = [solve(X, y, **kw, n_threads=t) for t in (1, 2)]
    short = dict(kw, max_epochs=12, check_every=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        again = [solve(X, y, **short, n_threads=2) for _ in range(2)]
    _assert_identical(again)
    return runs


def _assert_identical(runs):
    ref = runs[0]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.w, ref.w)
        if ref.alpha is not None:
            np.testing.assert_array_equal(r.alpha, ref.alpha)
        assert r.intercept == ref.intercept and r.n_epochs == ref.n_epochs


@two_threads
@pytest.mark.parametrize("loss,penalty,dense", [
    ("logistic", "l2", False), ("squared_hinge", "elastic_net", False),
    pytest.param("hinge", "l2", True, marks=pytest.mark.slow), ("squared", "l2", False)])
def test_dual_threads_bit_identical_and_optimal(loss, penalty, dense):
    lam = 5e-2
    runs = _pair(loss=loss, penalty=penalty, lam=lam, solver="dual-cd", batch_size=16,
                 sampling="uniform", tol=1e-9, max_epochs=5000, dense=dense)
    assert [r.info["n_threads"] for r in runs] == [1, 2]
    _assert_identical(runs)
    serial = solve(*_data(dense), loss=loss, penalty=penalty, lam=lam, solver="dual-cd",
                   tol=1e-9, max_epochs=5000)
    for r in (runs[1], serial):
        assert r.converged and r.gap <= 1e-9 * r.trace["primal"][0]
    assert abs(runs[1].primal - serial.primal) <= 1e-8 * abs(serial.primal)


@two_threads
@pytest.mark.parametrize("loss,penalty,extra", [
    ("squared", "l1", {}), ("logistic", "l2", {"fit_intercept": True}),
    pytest.param("squared_hinge", "elastic_net", {}, marks=pytest.mark.slow),
    pytest.param("squared", "l1", {"positive": True}, marks=pytest.mark.slow),
    ("logistic", "l1", {"dense": True})])
def test_primal_threads_bit_identical_and_optimal(loss, penalty, extra):
    lam = 2e-2 if loss != "squared" else 1e-2
    extra = dict(extra)
    dense = extra.pop("dense", False)
    runs = _pair(loss=loss, penalty=penalty, lam=lam, solver="primal-cd", batch_size=8,
                 sampling="uniform", tol=1e-9, max_epochs=20000, dense=dense, **extra)
    assert [r.info["n_threads"] for r in runs] == [1, 2]
    _assert_identical(runs)
    serial = solve(*_data(dense), loss=loss, penalty=penalty, lam=lam, solver="primal-cd",
                   tol=1e-9, max_epochs=20000, **extra)
    for r in (runs[1], serial):
        assert r.converged and r.gap <= 1e-9 * r.trace["primal"][0]
    assert abs(runs[1].primal - serial.primal) <= 1e-8 * abs(serial.primal)
    assert np.count_nonzero(runs[1].w) > 0


@two_threads
def test_newton_cg_threads_same_optimum():
    X, y = _data(n=300, d=200)
    kw = dict(loss="logistic", penalty="l2", lam=1e-3, solver="newton-cg", tol=1e-12)
    two = _same_optimum_on_threads(X, y, kw, primal_rtol=1e-8, rtol=1e-5, atol=1e-8)
    assert two.info["n_threads"] == 2


def _same_optimum_on_threads(X, y, kw, *, primal_rtol, rtol, atol):
    """1 and 2 threads reach the same optimum (gap ≤ tol), 2 threads twice the same bits."""
    one, two, again = (solve(X, y, **kw, n_threads=t) for t in (1, 2, 2))
    np.testing.assert_array_equal(two.w, again.w)
    for r in (one, two):
        assert r.converged and r.gap <= kw["tol"] * r.trace["primal"][0]
    assert abs(one.primal - two.primal) <= primal_rtol * one.primal
    np.testing.assert_allclose(two.w, one.w, rtol=rtol, atol=atol)
    return two


@two_threads
@pytest.mark.parametrize("loss,penalty,extra", [
    ("squared", "l1", {}), ("logistic", "l1", {"fit_intercept": True}),
    ("squared", "elastic_net", {"positive": True})])
def test_ws_cd_on_threads_same_bits(monkeypatch, loss, penalty, extra):
    """ws-cd on 2 threads (its column view of CSR input transposed in blocks) makes
    the serial iterates bit for bit."""
    X, y = _data(n=120, d=300)
    kw = dict(loss=loss, penalty=penalty, lam=1e-2, solver="ws-cd", tol=1e-10, **extra)
    serial = solve(X, y, **kw, n_threads=2)  # below PARALLEL_MIN_COPY: one thread
    monkeypatch.setattr(parallel, "PARALLEL_MIN_COPY", 0)
    runs = [solve(X, y, **kw, n_threads=t) for t in (1, 2, 2)]
    assert serial.info["n_threads"] == 1
    assert [r.info["n_threads"] for r in runs] == [1, 2, 2]
    _assert_identical([serial, *runs])
    assert runs[1].converged and runs[1].gap <= 1e-10 * runs[1].trace["primal"][0]
    assert np.count_nonzero(runs[1].w) > 0
    assert parallel.copy_threads(as_design(X.toarray())) == 1  # dense: no copy


@two_threads
@pytest.mark.parametrize("n,d,fit_intercept", [(120, 40, True), (30, 200, False)])
def test_serial_dual_cd_certificate_on_threads_same_bits(monkeypatch, n, d, fit_intercept):
    """Serial dual CD on 2 threads: only its certificate's Xw runs on threads (row dots;
    with d > 4n scipy's product would scatter from the columns), the same bits."""
    X, y = _data(n=n, d=d)
    kw = dict(loss="logistic", penalty="l2", lam=1e-2, solver="dual-cd", tol=1e-10,
              fit_intercept=fit_intercept)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_COPY", 0)
    calls = []
    dots = parallel_cd.parallel_slice_dots
    monkeypatch.setattr(parallel_cd, "parallel_slice_dots",
                        lambda *a: calls.append(current_threads()) or dots(*a))
    runs = [solve(X, y, **kw, n_threads=t) for t in (1, 2)]
    assert calls and set(calls) == {2}
    _assert_identical(runs)
    np.testing.assert_array_equal(runs[0].trace["gap"], runs[1].trace["gap"])
    assert runs[1].converged and runs[1].gap <= 1e-10 * runs[1].trace["primal"][0]


def test_top_ranks_breaks_ties_by_lowest_index():
    rng = np.random.default_rng(2)
    for _ in range(50):
        d = int(rng.integers(1, 40))
        rank = rng.integers(0, 4, size=d).astype(float)
        rank[rng.random(d) < 0.2] = np.inf
        rank[rng.random(d) < 0.2] = -np.inf
        size = int(rng.integers(1, d + 1))
        ref = np.sort(np.lexsort((np.arange(d), -rank))[:size])  # by rank, then index
        np.testing.assert_array_equal(top_ranks(rank, size), ref)


@two_threads
@pytest.mark.parametrize("positive", [False, True])
def test_ws_cd_scoring_on_threads_same_working_sets(monkeypatch, positive):
    """The threaded scoring pass (violations, ranks, counts) picks the serial pass's
    working sets, also among tied ranks (every column three times, empty columns)."""
    X, y = _data(n=60, d=40)
    X = sp.hstack([X, X, sp.csr_matrix((60, 5)), X]).tocsr()
    kw = dict(loss="squared", penalty="l1", lam=2e-3, solver="ws-cd", tol=1e-10, p0=4,
              positive=positive)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_COPY", 0)
    sizes = {}
    real = ws_module.top_ranks

    def spy(rank, size):
        out = real(rank, size)
        sizes.setdefault(current_threads(), []).append((size, out.tolist()))
        return out

    monkeypatch.setattr(ws_module, "top_ranks", spy)
    runs = [solve(X, y, **kw, n_threads=t) for t in (1, 2)]
    assert [r.info["n_threads"] for r in runs] == [1, 2]
    _assert_identical(runs)
    assert sizes[1] == sizes[2] and any(s < 125 for s, _ in sizes[1])
    assert runs[1].converged and runs[1].gap <= 1e-10 * runs[1].trace["primal"][0]


@two_threads
@pytest.mark.parametrize("shape", [(70, 200), (200, 70), (3, 40)])
def test_parallel_slice_dots_are_scipys_products(shape):
    """Xᵀq from the column view and Xv from the row view, on 1 and 2 threads, equal
    scipy's bit for bit (one thread per slice, summed in slice order), with empty
    leading and trailing slices, fewer slices than blocks, and dense views."""
    rng = np.random.default_rng(5)
    X = sp.random(*shape, density=0.2, random_state=5, format="lil")
    X[0, :] = X[-1, :] = 0.0
    X[:, 0] = X[:, -1] = 0.0
    X = X.tocsr()
    X.data = rng.standard_normal(X.nnz)
    q, v = rng.standard_normal(shape[0]), rng.standard_normal(shape[1])
    for M in (X, X.toarray()):
        design = as_design(M)
        for threads in (1, 2):
            with use_threads(threads):
                assert current_threads() == threads
                for layout, vec, ref in (("csc", q, X.T @ q), ("csr", v, X @ v)):
                    view = design.view(layout)
                    out = parallel_slice_dots(view.data, view.indices, view.indptr, vec,
                                              np.full(ref.shape[0], np.nan))
                    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("threads", [2, 3, 7])
def test_views_transposed_on_threads_are_the_same_matrix(fmt, threads):
    rng = np.random.default_rng(3)
    X = sp.random(50, 30, density=0.1, random_state=3, format=fmt)
    X.data = rng.standard_normal(X.nnz)
    X = X.tolil()
    X[5, :] = 0.0  # an empty slice of each layout
    X[:, 7] = 0.0
    X = X.asformat(fmt)
    other = "csc" if fmt == "csr" else "csr"
    serial, blocked = as_design(X).view(other), as_design(X).view(other, threads)
    ref = X.asformat(other)
    ref.sort_indices()
    for v in (serial, blocked):
        np.testing.assert_array_equal(v.indptr, ref.indptr)
        np.testing.assert_array_equal(v.indices, ref.indices)
        np.testing.assert_array_equal(v.data, ref.data)


def test_block_bounds_balance_nonzeros():
    nnz = np.array([5, 0, 1, 1, 1, 1, 1, 0, 10, 0])
    b = block_bounds(nnz, 3)
    assert b[0] == 0 and b[-1] == nnz.size and np.all(np.diff(b) >= 0) and b.size == 4
    sums = [nnz[b[k]:b[k + 1]].sum() for k in range(3)]
    assert sum(sums) == 20 and max(sums) <= 20 / 3 + 10  # within one index of even
    np.testing.assert_array_equal(block_bounds(nnz, 1), [0, 10])
    np.testing.assert_array_equal(block_bounds(np.zeros(4), 2), [0, 2, 4])
    assert block_bounds(nnz, 50).size == nnz.size + 1  # never more blocks than indices


def test_eso_epoch_growth_closed_form():
    # all-ones n×d: every column has n nonzeros, so the dual τ-nice weights are τ
    # and v_i(τ) = τd; every row has d, so the primal v_j(τ) = τn
    n, d, tau, beta, lam = 30, 7, 5, 0.25, 1e-3
    design = as_design(np.ones((n, d)))
    g = beta / (lam * n)
    assert eso_epoch_growth(design, tau, beta=beta, lam=lam, primal=False) == pytest.approx(
        (1 + g * tau * d) / (1 + g * d), rel=1e-12)
    assert eso_epoch_growth(design, tau, beta=beta, lam=lam, primal=True) == pytest.approx(
        (1 + g * tau * n) / (1 + g * n), rel=1e-12)


def test_auto_with_minibatches_prices_the_eso_growth():
    # a feature in every row: τ-nice dual steps shrink (its ω = n), primal ones much less
    rng = np.random.default_rng(1)
    n, d = 400, 300
    X = sp.random(n, d, density=0.01, random_state=2, format="lil")
    X[:, 0] = 1.0
    X = X.tocsr()
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    problem = make_problem(X, y, loss="logistic", penalty="l2", lam=1e-3)
    choice, reason = faceoff_choice(problem, 64, 4)
    gp = eso_epoch_growth(problem.design, 64, beta=0.25, lam=1e-3, primal=True)
    gd = eso_epoch_growth(problem.design, 64, beta=0.25, lam=1e-3, primal=False)
    assert gp == pytest.approx(1.63, abs=0.01) and gd == pytest.approx(10.3, abs=0.1)
    ratio = analyze(X, loss="logistic", lam=1e-3).time_ratio * gp / gd
    assert "τ-nice minibatches (τ=64 on 4 thread(s))" in reason
    assert reason.endswith(f"= {ratio:.3g}") and choice == ("primal-cd" if ratio <= 1 else
                                                           "dual-cd")
    with pytest.warns(ConvergenceWarning):
        r = solve(X, y, loss="logistic", penalty="l2", lam=1e-3, batch_size=64,
                  sampling="uniform", n_threads=1, max_epochs=1)
    assert r.solver == choice and "τ=64 on 1 thread(s)" in r.info["reason"]


def test_n_threads_checked():
    X, y = _data()
    with pytest.raises(TypeError, match="n_threads must be an integer or None"):
        solve(X, y, lam=0.1, n_threads="2")
    with pytest.raises(ValueError, match="n_threads must be a non-zero integer"):
        solve(X, y, lam=0.1, n_threads=0)
    assert check_threads(-1) == check_threads(None) >= 1
    assert check_threads(3) == 3


@two_threads
def test_ovr_shares_the_threads_between_jobs():
    X, _ = _data(n=60)
    y = np.arange(60) % 3
    kw = dict(loss="logistic", penalty="l2", lam=5e-2, solver="dual-cd", batch_size=12,
              sampling="uniform", tol=1e-8)
    split = solve_ovr(X, y, n_jobs=2, n_threads=2, **kw)
    whole = solve_ovr(X, y, n_jobs=1, n_threads=2, **kw)
    assert [r.info["n_threads"] for r in split.results] == [1, 1, 1]
    assert [r.info["n_threads"] for r in whole.results] == [2, 2, 2]
    np.testing.assert_array_equal(split.coef, whole.coef)  # threads never change bits


def test_use_threads_restores_numba_count():
    before = numba.get_num_threads()
    with use_threads(2) as n:
        assert n == 2 and numba.get_num_threads() == before  # untouched until used
        assert current_threads() == min(2, numba.config.NUMBA_NUM_THREADS)
        assert numba.get_num_threads() == current_threads()
    assert numba.get_num_threads() == before and current_threads() == 1


def test_current_threads_sets_numba_count_only_when_it_differs(monkeypatch):
    calls = []
    real = numba.set_num_threads
    monkeypatch.setattr(numba, "set_num_threads", lambda k: (calls.append(k), real(k))[1])
    have = numba.get_num_threads()
    with use_threads(have):  # already numba's count: neither set nor restored
        assert current_threads(always_parallel=True) == have
    assert calls == [] and numba.get_num_threads() == have
    if numba.config.NUMBA_NUM_THREADS > 1:
        real(1)
        try:
            with use_threads(2):
                assert current_threads() == 2 and numba.get_num_threads() == 2
            assert calls == [2, 1] and numba.get_num_threads() == 1
        finally:
            real(have)


@two_threads
def test_estimator_n_jobs_gives_the_problem_its_threads(monkeypatch):
    import cdlearn.estimators._base as base
    from cdlearn import LinearSVC, LogisticRegression

    seen = []
    real = base.run_many

    def spy(design, targets, kws, n_jobs=None):
        seen.append([kw["n_threads"] for kw in kws])
        return real(design, targets, kws, n_jobs=n_jobs)

    monkeypatch.setattr(base, "run_many", spy)
    X, y = _data()
    kw = dict(C=1.0, solver="dual-cd", sampling="uniform", batch_size=16, tol=1e-6,
              random_state=0,
              fit_intercept=False)
    one = LogisticRegression(**kw).fit(X, y)
    two = LogisticRegression(**kw, n_jobs=2).fit(X, y)
    y3 = np.arange(X.shape[0]) % 3
    LinearSVC(**kw, n_jobs=2).fit(X, y3)  # one-vs-rest
    assert seen == [[1], [2], [1, 1, 1]]  # binary: both threads; 3 classes on 2 jobs: 1 each
    np.testing.assert_array_equal(one.coef_, two.coef_)


def test_use_threads_finds_the_blas_libraries_once_and_restores_them(monkeypatch):
    """Finding BLAS scans the process's libraries (~8 ms, a third of a small
    LogisticRegression fit): done once per process, not per solve; limits restored."""
    import threadpoolctl

    made = []
    real = threadpoolctl.ThreadpoolController

    class Counting(real):
        def __init__(self, *a, **k):
            made.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", Counting)
    monkeypatch.setattr(parallel, "_blas_libraries", None)
    monkeypatch.setattr(parallel, "available_cores", lambda: 4)  # n = 1 is then a limit
    libs = parallel.blas_libraries()
    before = [lib.get_num_threads() for lib in libs]
    for _ in range(3):
        with parallel.use_threads(1, blas=True):
            assert all(lib.get_num_threads() == 1 for lib in libs)
    assert len(made) == 1
    assert [lib.get_num_threads() for lib in libs] == before


def _one_feature_rows(n, d, seed=0):
    """Every row has one nonzero: τ-nice primal CD's ESO growth is exactly 1."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.random(n) + 0.5, (np.arange(n), rng.integers(0, d, n))),
                      shape=(n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def test_epoch_growth_matches_the_eso_and_the_partition():
    X, _ = _data(n=60, d=50)
    design = as_design(X)
    g = 0.25 / (1e-2 * 60)
    for primal in (True, False):
        # the τ-nice ESO itself (sampling.eso_tau_nice's weights), not its linear form
        view, minor = (design.csc, design.row_nnz) if primal else (design.csr, design.col_nnz)
        serial = 1 + g * parallel.tau_nice_eso(view, minor, 1).max()
        for tau in (1, 4, 16):
            assert eso_epoch_growth(design, tau, beta=0.25, lam=1e-2, primal=primal) == \
                pytest.approx((1 + g * parallel.tau_nice_eso(view, minor, tau).max()) / serial,
                              rel=1e-12)
    # partitioned dual CD over 3 blocks: the scaled rows' norms of its own Partition
    pt = parallel.Partition(design.csr, design.row_nnz, 50, 3, 0)
    v = pt.minor_weighted_powers(design.csr)
    assert parallel.partition_epoch_growth(
        design, 3, beta=0.25, lam=1e-2, primal=False) == pytest.approx(
        (1 + g * v.max()) / (1 + g * design.row_sq_norms.max()), rel=1e-12)


def test_auto_on_threads_prices_each_candidate(monkeypatch):
    """auto on P threads: the parallel method where the model predicts it faster (rows of
    one nonzero: τ-nice primal's ESO growth is 1), else the serial face-off choice; one
    thread is the serial choice, unchanged."""
    from cdlearn import api
    from cdlearn.faceoff import predicted_seconds

    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 8192)  # the shipped rule
    X, y = _one_feature_rows(60_000, 3_000)
    problem = make_problem(X, y, loss="logistic", penalty="l2", lam=1e-3)
    serial = api.faceoff_choice(problem)
    assert api.auto_solver(problem, n_threads=1) == serial and serial[0] == "primal-cd"
    solver, options, reason = api.parallel_choice(problem, 2)
    # τ = 2·4^k with τ·nnz ≥ 8192·d: 512 is the first (20 nonzeros per column)
    assert (solver, options) == ("primal-cd", {"batch_size": 512, "sampling": "uniform"})
    epoch = predicted_seconds("primal", "logistic", X.nnz, 3_000)
    t = api.TAU_NICE_EPOCH_EXCESS["primal"] * (
        api.TAU_NICE_EPOCH_COST["primal"] / 2 + 3_000 / 512 * api.FORK_JOIN_SECONDS / epoch)
    assert f"τ-nice primal τ=512 {t:.3g} (ESO growth 1)" in reason and t < 1
    assert reason.startswith("on 2 threads: predicted time over serial primal-cd")
    assert reason.endswith(f"→ τ-nice primal τ=512; serial choice: {serial[1]}")
    assert api.auto_solver(problem, n_threads=2) == ("primal-cd", reason)
    # news20-like rows (5% dense): no candidate can win at 2 threads, each says its bound
    Xs = sp.random(2000, 1000, density=0.05, random_state=1, format="csr")
    ys = np.where(np.random.default_rng(1).random(2000) < 0.5, 1.0, -1.0)
    small = make_problem(Xs, ys, loss="logistic", penalty="l2", lam=1e-3)
    solver, options, reason = api.parallel_choice(small, 2)
    assert (solver, options) == (api.faceoff_choice(small)[0], {}) == ("dual-cd", {})
    part = api.PARTITION_EPOCH_EXCESS * api.PARTITION_EPOCH_COST * (
        api.PARTITION_SERIAL_SHARE + (1 - api.PARTITION_SERIAL_SHARE) / 2)
    dual = api.TAU_NICE_EPOCH_EXCESS["dual"] * api.TAU_NICE_EPOCH_COST["dual"] / 2
    assert f"τ-nice dual ≥ {dual:.3g}, partition dual K=2 ≥ {part:.3g}" in reason
    assert "→ serial dual-cd" in reason


@two_threads
def test_auto_parallel_choice_runs_and_reaches_the_serial_optimum(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 8192)
    X, y = _one_feature_rows(60_000, 3_000)
    kw = dict(loss="logistic", penalty="l2", lam=1e-3, tol=1e-12)
    two, again = (solve(X, y, **kw, n_threads=2) for _ in range(2))
    one = solve(X, y, **kw, n_threads=1)
    assert two.solver == one.solver == "primal-cd" and two.info["n_threads"] == 2
    assert two.info["reason"].startswith("on 2 threads") and "→ τ-nice primal τ=512" in \
        two.info["reason"]
    assert one.info["reason"].startswith("face-off eq. (15)")
    _assert_identical([two, again])
    for r in (one, two):
        assert r.converged and r.gap <= 1e-12 * r.trace["primal"][0]
    assert abs(two.primal - one.primal) <= 1e-10 * one.primal


def test_cv_folds_share_the_cores(monkeypatch):
    """LassoCV / LogisticRegressionCV: each fold's solves get the cores over the folds
    joblib runs at once (None: one worker, all the cores), never both at full count."""
    import joblib

    from cdlearn import LassoCV, LogisticRegressionCV
    from cdlearn.estimators import _cv

    seen = []
    real = _cv.path

    def spy(X, y, **kw):
        seen.append(kw["n_threads"])
        return real(X, y, **kw)

    monkeypatch.setattr(_cv, "path", spy)
    monkeypatch.setattr(_cv, "available_cores", lambda: 4)
    X, y = _data(n=60, d=10)
    got = {}
    with joblib.parallel_config(backend="threading"):  # the spy is seen by the workers
        for n_jobs in (None, 2, -1):
            seen.clear()
            LassoCV(cv=3, alphas=3, n_jobs=n_jobs).fit(X, y)
            got["lasso", n_jobs] = sorted(set(seen)), len(seen)
            if n_jobs == -1:
                continue
            seen.clear()
            LogisticRegressionCV(Cs=2, cv=3, n_jobs=n_jobs, scoring="accuracy", l1_ratios=(0.0,),
                                 use_legacy_attributes=False).fit(X, y)
            got["logistic", n_jobs] = sorted(set(seen)), len(seen)
    # 3 folds: None -> 1 at a time (4 threads each); 2 -> 2 threads; -1 -> joblib's
    # cpu count (≥ 2 here) capped at the 3 folds
    share = 4 // min(3, joblib.effective_n_jobs(-1))
    assert got == {("lasso", None): ([4], 3), ("lasso", 2): ([2], 3),
                   ("lasso", -1): ([share], 3), ("logistic", None): ([4], 3),
                   ("logistic", 2): ([2], 3)}
    assert _cv.fold_threads(1, 5) == 4 and _cv.fold_threads(8, 5) == 1


@two_threads
def test_newton_cd_blas_threads_same_optimum():
    """newton-cd's Gram-form Hessian XᵀDX runs in BLAS on the solve's threads
    (threadpoolctl): 1 and 2 threads reach the same optimum, the same count the same bits."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((400, 30))
    y = np.where(X @ rng.standard_normal(30) + rng.standard_normal(400) > 0, 1.0, -1.0)
    kw = dict(loss="logistic", penalty="l1", lam=1e-2, solver="newton-cd", tol=1e-12)
    _same_optimum_on_threads(X, y, kw, primal_rtol=1e-10, rtol=1e-6, atol=1e-9)


@two_threads
def test_estimator_n_jobs_lets_auto_choose_the_parallel_method(monkeypatch):
    """LogisticRegression(n_jobs=2) on a binary problem: auto on its 2 threads (the
    model of cdlearn.api.parallel_choice) runs τ-nice primal CD where it predicts it
    faster; n_jobs=None (one thread) keeps the serial choice; same optimum."""
    import cdlearn.estimators._base as base
    from cdlearn import LogisticRegression

    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 8192)
    seen = []
    real = base.run_many

    def spy(design, targets, kws, n_jobs=None):
        seen.append([(kw["solver"], kw["batch_size"], kw["sampling"], kw["n_threads"])
                     for kw in kws])
        return real(design, targets, kws, n_jobs=n_jobs)

    monkeypatch.setattr(base, "run_many", spy)
    X, y = _one_feature_rows(60_000, 3_000)
    kw = dict(C=1 / 60, fit_intercept=False, tol=1e-10, random_state=0)
    one = LogisticRegression(**kw).fit(X, y)
    two = LogisticRegression(**kw, n_jobs=2).fit(X, y)
    assert seen == [[("primal-cd", 1, None, 1)], [("primal-cd", 512, "uniform", 2)]]
    p1, p2 = (solve(X, y, loss="logistic", lam=1e-3, w0=m.coef_.ravel(), max_epochs=0,
                    solver="primal-cd", n_threads=1).primal for m in (one, two))
    assert abs(p1 - p2) <= 1e-10 * p1
