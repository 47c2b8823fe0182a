"""Partitioned CD on threads (issue 24, :mod:`cdlearn.kernels.partition_cd`).

``partition=K``: K blocks of coordinates, each one serial pass per epoch on a
private copy of the shared vector, the changes added (CoCoA+ with the blocks'
overlap as σ′). Must reach the serial optimum, give the same bits for a seed
and K on any number of threads, and never decrease the dual (adding is safe).
"""

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from cdlearn.api import make_problem, solve
from cdlearn.solvers.dual_cd import DualCDState
from cdlearn.solvers.parallel import Partition, check_partition, use_threads

two_threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                                 reason="numba may use one thread only (NUMBA_NUM_THREADS)")


def _data(n=120, d=60, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    w = rng.standard_normal(d)
    y = np.where(X @ w + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, X @ w + 0.1 * rng.standard_normal(n)


def _bits(r):
    return r.w.tobytes(), (None if r.alpha is None else r.alpha.tobytes())


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_dual_partition_reaches_serial_optimum(loss):
    X, y, _ = _data()
    kw = dict(loss=loss, lam=0.05, solver="dual-cd", tol=1e-10, max_epochs=5000, n_threads=1)
    ref = solve(X, y, **kw)
    runs = [solve(X, y, **kw, partition=3) for _ in range(2)]
    for r in runs:
        assert r.converged and r.gap <= 1e-10 * ref.trace["primal"][0]
        assert r.primal == pytest.approx(ref.primal, rel=1e-9, abs=1e-12)
    assert _bits(runs[0]) == _bits(runs[1])  # the same bits on repeat
    assert runs[0].n_epochs > ref.n_epochs  # the blocks' steps are smaller: more epochs


def test_primal_lasso_partition_reaches_serial_optimum():
    X, _, y = _data()
    X = X.tocsc()
    kw = dict(loss="squared", penalty="l1", lam=0.02, solver="primal-cd", tol=1e-10,
              max_epochs=20000, n_threads=1)
    ref = solve(X, y, **kw)
    runs = [solve(X, y, **kw, partition=2) for _ in range(2)]
    for r in runs:
        assert r.converged and r.gap <= 1e-10 * ref.trace["primal"][0]
        assert r.primal == pytest.approx(ref.primal, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(r.w, ref.w, atol=1e-5)
    assert _bits(runs[0]) == _bits(runs[1])
    # a different seed draws the same blocks (the primal passes are cyclic): same bits
    assert _bits(solve(X, y, **kw, partition=2, seed=5)) == _bits(runs[0])


def test_dual_partition_never_decreases_the_dual():
    # adding the blocks' changes is safe only with the overlap weights: with
    # weights 1 (σ' = 1) the dual falls and the method diverges on such data
    X, y, _ = _data(n=200, d=20)  # few features: every feature is in every block
    r = solve(X, y, loss="logistic", lam=1e-3, solver="dual-cd", partition=4, tol=1e-9,
              max_epochs=3000, check_every=1, n_threads=1)
    dual = r.trace["dual"][1:]
    assert r.converged
    assert np.all(np.diff(dual) >= -1e-13 * abs(dual[-1]))


def test_partition_overlap_counts():
    X = sp.csr_matrix(np.array([[1.0, 0, 2, 0], [0, 3, 4, 0], [5, 0, 0, 0], [0, 0, 6, 0]]))
    with use_threads(1):
        pt = Partition(X, np.diff(X.indptr), 4, 2, seed=0)
    np.testing.assert_array_equal(pt.parts, [0, 2, 4])
    # feature 0 in both blocks, 1 in the first, 2 in both, 3 in none (weight 1)
    np.testing.assert_array_equal(pt.overlap, [2.0, 1.0, 2.0, 1.0])
    np.testing.assert_allclose(pt.minor_weighted_powers(X), [1 * 2 + 4 * 2, 9 + 16 * 2, 50, 72])
    np.testing.assert_allclose(pt.data, X.data * np.sqrt([2, 2, 1, 2, 2, 2]))


def test_dense_partition_matches_sparse_optimum():
    X, y, _ = _data(n=60, d=10)
    kw = dict(loss="logistic", lam=0.01, solver="dual-cd", tol=1e-10, max_epochs=5000,
              partition=2, n_threads=1)
    rd, rs = solve(X.toarray(), y, **kw), solve(X, y, **kw)
    assert rd.primal == pytest.approx(rs.primal, rel=1e-9)


def test_partition_errors():
    X, y, _ = _data()
    p = make_problem(X, y, loss="logistic", penalty="elastic_net", lam=0.01, l1_ratio=0.5)
    with pytest.raises(ValueError, match="dual-cd with partition=K .* penalty='l2'"):
        DualCDState(p, sampling="shuffle", partition=2)
    with pytest.raises(ValueError, match="primal-cd with partition=K .* loss='squared'"):
        solve(X, y, loss="logistic", lam=0.01, solver="primal-cd", partition=2)
    with pytest.raises(ValueError, match="dual-cd with partition=K"):
        solve(X, y, loss="logistic", lam=0.01, solver="dual-cd", partition=2,
              sampling="uniform")
    with pytest.raises(TypeError, match="partition must be an integer or None, got bool"):
        check_partition(True, 10)
    with pytest.raises(ValueError, match="partition must be >= 0"):
        check_partition(-1, 10)
    with pytest.raises(ValueError, match="partition=11 exceeds the 10 coordinates"):
        check_partition(11, 10)
    assert check_partition(None, 10) == check_partition(0, 10) == 0


@two_threads
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("solver", ["dual-cd", "primal-cd"])
def test_partition_same_bits_on_any_thread_count(solver):
    # a few epochs only: each is two parallel regions, slow on a loaded machine
    X, y, yr = _data()
    kw = (dict(loss="logistic", lam=0.01) if solver == "dual-cd" else
          dict(loss="squared", penalty="l1", lam=0.02))
    runs = [solve(X, y if solver == "dual-cd" else yr, **kw, solver=solver, partition=3,
                  n_threads=t, max_epochs=4, check_every=4) for t in (2, 1)]
    assert [r.info["n_threads"] for r in runs] == [2, 1]
    assert runs[0].n_epochs == 4
    assert _bits(runs[0]) == _bits(runs[1])


def test_bench_threads_model():
    from benchmarks.threads import _epochs_at, model_speedup

    # partition: epochs 10 at K=2, 20 at K=4 -> power law K^1 beyond: 80 at K=16
    assert _epochs_at([(2, 10), (4, 20)], 16) == pytest.approx(80.0)
    assert _epochs_at([(2, 10), (4, 20)], 3) == pytest.approx(15.0)
    assert _epochs_at([(2, 19), (4, 15)], 64) == pytest.approx(15.0)  # never decreasing
    rows = [
        dict(method="serial", group="serial", threads=1, seconds=1.0, epochs=10,
             per_epoch=0.1),
        dict(method="t", group="tau8", threads=1, seconds=2.0, epochs=20, per_epoch=0.1, tau=8),
        dict(method="t", group="tau8", threads=2, seconds=1.2, epochs=20, per_epoch=0.06,
             tau=8),
    ]
    (name, s, model), (name0, s0, bound) = model_speedup(rows)
    assert s == pytest.approx(0.2) and s0 == 0.0 and name0 == "t (bound: s = 0)"
    # 1 / (20 · 0.1 · (0.2 + 0.8/8)) = 1/0.6
    assert model[8] == pytest.approx(1.0 / 0.6)
    assert model[16] is None  # P > τ
    assert bound[8] == pytest.approx(8.0 / 2.0)
