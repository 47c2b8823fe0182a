"""Nesterov's Lasso generator with a known optimum (RCDC paper §6.1)."""

import numpy as np
import pytest
import scipy.sparse as sp

from cdlearn.datasets.nesterov import make_lasso_known_optimum

DISTRIBUTIONS = ["uniform", "lognormal", "pareto", "natural"]


def objective(A, b, x, lam):
    r = A @ x - b
    return 0.5 * float(r @ r) + lam * float(np.abs(x).sum())


def kkt_errors(A, b, x, lam):
    """(max |a_iᵀ(Ax−b) + λ sign x_i| on the support, max |a_iᵀ(Ax−b)| off it)."""
    g = A.T @ (A @ x - b)
    on = x != 0
    on_err = np.abs(g[on] + lam * np.sign(x[on])).max(initial=0.0)
    off_max = np.abs(g[~on]).max(initial=0.0)
    return on_err, off_max


def two_point(n, seed=0):
    """The paper's Figure 2 (plot 1-2) law: 98 % of L_i = 1e-6, 2 % of L_i = 1e3."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.98, 1e-6, 1e3)


@pytest.mark.parametrize("dist", DISTRIBUTIONS + ["array"])
@pytest.mark.parametrize("pattern", [{"nnz_per_column": 12}, {"density": 0.05}])
def test_kkt_holds_and_f_star_exact(dist, pattern):
    m, n, lam = 400, 250, 0.7
    cd = two_point(n) if dist == "array" else dist
    A, b, x, F = make_lasso_known_optimum(
        m, n, support_size=30, lam=lam, column_distribution=cd, seed=3, **pattern
    )
    assert np.count_nonzero(x) == 30
    on_err, off_max = kkt_errors(A, b, x, lam)
    assert on_err < 1e-10
    assert off_max < lam
    assert abs(objective(A, b, x, lam) - F) <= 1e-12 * F


def test_return_types_and_canonical_csc():
    m, n, k = 500, 300, 7
    A, b, x, F = make_lasso_known_optimum(m, n, nnz_per_column=k, support_size=20, seed=1)
    assert isinstance(A, sp.csc_matrix)
    assert A.shape == (m, n)
    assert A.indices.dtype == np.int32 and A.indptr.dtype == np.int32
    assert A.data.dtype == np.float64
    assert b.dtype == np.float64 and b.shape == (m,)
    assert x.dtype == np.float64 and x.shape == (n,)
    assert type(F) is float
    assert np.all(np.diff(A.indptr) == k)
    assert A.nnz == n * k
    assert np.all(A.data != 0.0)
    for j in range(n):
        rows = A.indices[A.indptr[j] : A.indptr[j + 1]]
        assert np.all(np.diff(rows) > 0)  # sorted and distinct
        assert rows[0] >= 0 and rows[-1] < m
    # scipy agrees that nothing needs summing or sorting
    B = A.copy()
    B.sum_duplicates()
    assert B.nnz == A.nnz


@pytest.mark.parametrize("k", [1, 60, 61, 120, 240])
def test_dense_and_single_entry_columns(k):
    # 4k > m switches the row sampler to selection sampling; k = 1 cannot be sheared.
    m, n, lam = 240, 40, 0.5
    A, b, x, F, info = make_lasso_known_optimum(
        m, n, nnz_per_column=k, support_size=5, lam=lam, seed=2, return_info=True
    )
    assert np.all(np.diff(A.indptr) == k)
    for j in range(n):
        rows = A.indices[A.indptr[j] : A.indptr[j + 1]]
        assert np.all(np.diff(rows) > 0)
    if k == m:
        assert np.array_equal(A.indices[:m], np.arange(m))
    on_err, off_max = kkt_errors(A, b, x, lam)
    assert on_err < 1e-10 and off_max < lam
    assert abs(objective(A, b, x, lam) - F) <= 1e-12 * F


def test_density_counts_are_binomial():
    m, n, d = 1000, 400, 0.02
    A, b, x, F = make_lasso_known_optimum(m, n, density=d, support_size=10, seed=4)
    counts = np.diff(A.indptr)
    assert abs(counts.mean() - m * d) < 4 * np.sqrt(m * d * (1 - d) / n)
    assert len(np.unique(counts)) > 3


def test_sklearn_lasso_agrees():
    from sklearn.linear_model import Lasso

    m, n, lam = 300, 100, 1.0
    A, b, x, F = make_lasso_known_optimum(m, n, nnz_per_column=30, support_size=10, lam=lam, seed=0)
    est = Lasso(alpha=lam / m, fit_intercept=False, tol=1e-12, max_iter=100000)
    est.fit(A, b)
    F_sk = objective(A, b, est.coef_, lam)
    assert F_sk >= F * (1 - 1e-12)  # x* is optimal: nobody does better
    assert (F_sk - F) <= 1e-8 * F
    assert np.array_equal(np.flatnonzero(est.coef_), np.flatnonzero(x))
    np.testing.assert_allclose(est.coef_, x, atol=1e-6)


def test_same_seed_same_instance():
    kw = dict(nnz_per_column=9, support_size=12, column_distribution="lognormal")
    A1, b1, x1, F1 = make_lasso_known_optimum(200, 80, seed=7, **kw)
    A2, b2, x2, F2 = make_lasso_known_optimum(200, 80, seed=7, **kw)
    assert np.array_equal(A1.indptr, A2.indptr)
    assert np.array_equal(A1.indices, A2.indices)
    assert np.array_equal(A1.data, A2.data)
    assert np.array_equal(b1, b2) and np.array_equal(x1, x2) and F1 == F2
    A3, b3, x3, F3 = make_lasso_known_optimum(200, 80, seed=8, **kw)
    assert not np.array_equal(A1.indices, A3.indices)
    assert F1 != F3


def test_info_matches_instance():
    m, n, lam = 300, 120, 0.8
    A, b, x, F, info = make_lasso_known_optimum(
        m, n, nnz_per_column=10, support_size=15, lam=lam, seed=5, return_info=True
    )
    np.testing.assert_allclose(info["v_star"], b - A @ x, atol=1e-13)
    assert F == pytest.approx(
        0.5 * info["v_star"] @ info["v_star"] + lam * np.abs(x).sum(), rel=1e-14
    )
    assert np.array_equal(info["support"], np.flatnonzero(x))
    np.testing.assert_allclose(info["lipschitz"], sp.linalg.norm(A, axis=0) ** 2, rtol=1e-12)
    corr = A.T @ info["v_star"] / lam
    np.testing.assert_allclose(info["correlation"], corr, atol=1e-12)
    S = info["support"]
    np.testing.assert_allclose(corr[S], np.sign(x[S]), atol=1e-12)


def test_lipschitz_targets_are_met():
    # Small λ makes every target feasible: the support floor λ²/‖v*_R‖² is below 1e-6.
    m, n = 2000, 500
    L = two_point(n, seed=1)
    A, b, x, F, info = make_lasso_known_optimum(
        m,
        n,
        nnz_per_column=20,
        support_size=50,
        lam=1e-4,
        column_distribution=L,
        seed=6,
        return_info=True,
    )
    assert info["n_target_missed"] == 0
    np.testing.assert_allclose(sp.linalg.norm(A, axis=0) ** 2, L, rtol=1e-10)
    on_err, off_max = kkt_errors(A, b, x, 1e-4)
    assert on_err < 1e-10 and off_max < 1e-4


def test_support_floor_is_reported():
    # λ = 1 and targets 1e-6: support columns cannot be that small and are raised.
    A, b, x, F, info = make_lasso_known_optimum(
        300,
        100,
        nnz_per_column=10,
        support_size=10,
        column_distribution=np.full(100, 1e-6),
        seed=0,
        return_info=True,
    )
    assert info["n_target_missed"] == 10
    S = info["support"]
    assert np.all(info["lipschitz"][S] > 1e-3)
    off = np.ones(100, dtype=bool)
    off[S] = False
    np.testing.assert_allclose(info["lipschitz"][off], 1e-6, rtol=1e-10)


def test_empty_support():
    A, b, x, F = make_lasso_known_optimum(100, 30, nnz_per_column=5, support_size=0, seed=0)
    assert not x.any()
    assert F == pytest.approx(0.5 * b @ b, rel=1e-15)
    assert np.abs(A.T @ b).max() < 1.0


def test_float32_data():
    m, n, lam = 300, 100, 1.0
    A, b, x, F = make_lasso_known_optimum(
        m, n, nnz_per_column=10, support_size=10, lam=lam, seed=0, dtype=np.float32
    )
    assert A.data.dtype == np.float32 and b.dtype == np.float64 and x.dtype == np.float64
    A64 = A.astype(np.float64)
    on_err, off_max = kkt_errors(A64, b, x, lam)
    assert on_err < 1e-5 and off_max < lam
    assert abs(objective(A64, b, x, lam) - F) <= 1e-6 * F


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(support_size=101, nnz_per_column=5), "support_size"),
        (dict(support_size=-1, nnz_per_column=5), "support_size"),
        (dict(support_size=5, nnz_per_column=51), "nnz_per_column"),
        (dict(support_size=5, nnz_per_column=0), "nnz_per_column"),
        (dict(support_size=5, nnz_per_column=5, lam=0.0), "lam"),
        (dict(support_size=5, nnz_per_column=5, lam=-1.0), "lam"),
        (dict(support_size=5, nnz_per_column=5, lam=np.nan), "lam"),
        (dict(support_size=5, nnz_per_column=5, x_scale=0.0), "x_scale"),
        (dict(support_size=5), "nnz_per_column"),
        (dict(support_size=5, nnz_per_column=5, density=0.1), "density"),
        (dict(support_size=5, density=0.0), "density"),
        (dict(support_size=5, density=1.5), "density"),
        (
            dict(support_size=5, nnz_per_column=5, column_distribution="cauchy"),
            "column_distribution",
        ),
        (
            dict(support_size=5, nnz_per_column=5, column_distribution=np.ones(3)),
            "column_distribution",
        ),
        (
            dict(support_size=5, nnz_per_column=5, column_distribution=-np.ones(100)),
            "column_distribution",
        ),
        (dict(support_size=5, nnz_per_column=5, dtype=np.int64), "dtype"),
        (dict(support_size=100, density=0.002), "support_size"),  # too few nonempty columns
    ],
)
def test_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_lasso_known_optimum(50, 100, seed=0, **kwargs)


def test_bad_shapes():
    with pytest.raises(ValueError, match="n_samples"):
        make_lasso_known_optimum(0, 10, nnz_per_column=1, support_size=1)
    with pytest.raises(ValueError, match="n_features"):
        make_lasso_known_optimum(10, 0, nnz_per_column=1, support_size=0)
    with pytest.raises(TypeError, match="nnz_per_column"):
        make_lasso_known_optimum(10, 10, nnz_per_column=2.5, support_size=1)
