"""Random Fourier / Random Binning features (Rahimi & Recht 2007; DGPD §5)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import RBFSampler
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

import cdlearn.features as features
from cdlearn.features import RandomBinningFeatures, RandomFourierFeatures

# 200 points in 5 dimensions; gamma and sigma put the kernel values around 0.4,
# where the estimators' variance is largest.
GAMMA = 0.1
SIGMA = 5.0


@pytest.fixture(scope="module")
def points():
    return np.random.default_rng(0).standard_normal((200, 5))


def rff_mean_error(X, n_components, seed):
    Z = RandomFourierFeatures(n_components, gamma=GAMMA, random_state=seed).fit_transform(X)
    return np.abs(Z @ Z.T - rbf_kernel(X, gamma=GAMMA)).mean()


def rb_mean_error(X, n_components, seed):
    Z = RandomBinningFeatures(n_components, sigma=SIGMA, random_state=seed).fit_transform(X)
    exact = np.exp(-np.abs(X[:, None, :] - X[None, :, :]).sum(axis=2) / SIGMA)
    return np.abs((Z @ Z.T).toarray() - exact).mean()


@parametrize_with_checks(
    [
        RandomFourierFeatures(n_components=20, random_state=0),
        RandomBinningFeatures(n_components=20, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --- kernel approximation ----------------------------------------------------


def test_rff_error_decreases_with_n_components(points):
    errors = [np.mean([rff_mean_error(points, D, s) for s in range(3)]) for D in (100, 1000, 10000)]
    assert errors[0] > errors[1] > errors[2]


@pytest.mark.parametrize("seed", range(3))
def test_rff_error_small_at_4000(points, seed):
    # Each entry of Z Z^T averages D terms of variance <= 1, so its error is about
    # 1/sqrt(D) = 0.016; mean |error| is ~0.011 (max 0.019 over 60 seeds x data sets:
    # errors of nearby pairs are correlated, so the mean over pairs still fluctuates).
    assert rff_mean_error(points, 4000, seed) < 0.025


def test_rff_matches_sklearn_rbf_sampler(points):
    # Same construction and same draws as scikit-learn's RBFSampler: an independent reference.
    ours = RandomFourierFeatures(300, gamma=0.3, random_state=7).fit_transform(points)
    theirs = RBFSampler(gamma=0.3, n_components=300, random_state=7).fit_transform(points)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_rb_error_decreases_with_n_components(points):
    errors = [np.mean([rb_mean_error(points, P, s) for s in range(3)]) for P in (50, 500, 5000)]
    assert errors[0] > errors[1] > errors[2]


@pytest.mark.parametrize("seed", range(3))
def test_rb_error_small_at_2000(points, seed):
    # Each entry is the mean of P Bernoulli(k) draws: std <= 0.5/sqrt(P) = 0.011;
    # mean |error| is ~0.008 (max 0.015 over 60 seeds x data sets).
    assert rb_mean_error(points, 2000, seed) < 0.02


def test_rb_kernel_uses_sigma_like_sklearn_laplacian(points):
    Z = RandomBinningFeatures(3000, sigma=SIGMA, random_state=1).fit_transform(points)
    exact = laplacian_kernel(points, gamma=1.0 / SIGMA)
    assert np.abs((Z @ Z.T).toarray() - exact).mean() < 0.02


def test_rb_columns_are_exactly_the_distinct_bins(points):
    # Brute force from the fitted grids: Z Z^T * P counts the grids where two rows
    # share a bin, and each grid has as many columns as distinct bin vectors.
    P = 40
    rb = RandomBinningFeatures(P, sigma=0.7, random_state=3)
    Z = rb.fit_transform(points)
    shared = np.zeros((len(points), len(points)))
    for p in range(P):
        bins = np.floor((points - rb.bin_shifts_[p]) / rb.bin_widths_[p]).astype(np.int64)
        distinct, inverse = np.unique(bins, axis=0, return_inverse=True)
        assert rb.grid_ptr_[p + 1] - rb.grid_ptr_[p] == len(distinct)
        shared += inverse[:, None] == inverse[None, :]
    np.testing.assert_allclose((Z @ Z.T).toarray() * P, shared, atol=1e-9)
    assert rb.n_output_features_ == Z.shape[1] == rb.grid_ptr_[-1]


# --- structure of the output --------------------------------------------------


def test_rb_training_rows_have_one_entry_per_grid(points):
    P = 64
    Z = RandomBinningFeatures(P, sigma=1.0, random_state=0).fit_transform(points)
    assert sp.isspmatrix_csr(Z)
    np.testing.assert_array_equal(np.diff(Z.indptr), P)
    np.testing.assert_allclose(Z.data, 1.0 / np.sqrt(P))
    assert Z.has_canonical_format
    for i in range(Z.shape[0]):
        row = Z.indices[Z.indptr[i] : Z.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)


def test_rb_unseen_bins_give_no_entry(points):
    P = 30
    rb = RandomBinningFeatures(P, sigma=1.0, random_state=0).fit(points)
    far = np.full((1, points.shape[1]), 1e6)
    assert rb.transform(far).nnz == 0
    new = np.random.default_rng(5).standard_normal((50, points.shape[1]))
    Z = rb.transform(new)
    counts = np.diff(Z.indptr)
    assert counts.max() <= P and counts.min() < P
    np.testing.assert_allclose(Z.data, 1.0 / np.sqrt(P))
    assert Z.has_canonical_format


@pytest.mark.parametrize(
    "make",
    [
        lambda: RandomFourierFeatures(50, random_state=0),
        lambda: RandomBinningFeatures(50, random_state=0),
    ],
)
def test_rows_transformed_alone_match_batch(points, make):
    est = make().fit(points[:120])
    new = points[120:]
    batch = est.transform(new)
    batch = batch.toarray() if sp.issparse(batch) else batch
    for i in (0, 17, 79):
        alone = est.transform(new[i : i + 1])
        alone = alone.toarray() if sp.issparse(alone) else alone
        # exact for binning; the dense product of RFF may differ in the last bit (BLAS)
        np.testing.assert_allclose(alone[0], batch[i], rtol=1e-12, atol=1e-15)
    fitted = est.transform(points[:120])
    again = make().fit_transform(points[:120])
    if sp.issparse(fitted):
        fitted, again = fitted.toarray(), again.toarray()
    np.testing.assert_array_equal(fitted, again)


@pytest.mark.parametrize("cls", [RandomFourierFeatures, RandomBinningFeatures])
def test_same_random_state_same_output(points, cls):
    a = cls(40, random_state=11).fit_transform(points)
    b = cls(40, random_state=11).fit_transform(points)
    c = cls(40, random_state=12).fit_transform(points)
    if sp.issparse(a):
        a, b, c = a.toarray(), b.toarray(), c.toarray()
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


@pytest.mark.parametrize("cls", [RandomFourierFeatures, RandomBinningFeatures])
def test_sparse_input_matches_dense(cls):
    X = sp.random(80, 30, density=0.2, random_state=0, format="csr")
    dense = cls(40, random_state=0).fit_transform(X.toarray())
    for sparse_X in (X, X.tocsc()):
        out = cls(40, random_state=0).fit_transform(sparse_X)
        if sp.issparse(out):
            out, expected = out.toarray(), dense.toarray()
        else:
            expected = dense
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_rff_float32(points):
    z64 = RandomFourierFeatures(100, gamma=GAMMA, random_state=0).fit_transform(points)
    z32 = RandomFourierFeatures(100, gamma=GAMMA, random_state=0, dtype=np.float32).fit_transform(
        points
    )
    assert z32.dtype == np.float32 and z64.dtype == np.float64
    np.testing.assert_allclose(z32, z64, atol=1e-5)


def test_rb_float32_input_keeps_float32(points):
    Z = RandomBinningFeatures(20, random_state=0).fit_transform(points.astype(np.float32))
    assert Z.dtype == np.float32


def test_rb_binning_is_fast_enough_for_2000x64():
    # Not a timing assertion: a size check that the vectorised path handles it.
    X = np.random.default_rng(0).standard_normal((2000, 64))
    Z = RandomBinningFeatures(100, sigma=20.0, random_state=0).fit_transform(X)
    assert Z.shape[0] == 2000 and Z.nnz == 2000 * 100


def test_rb_detects_hash_collisions(points, monkeypatch):
    # A degenerate hash puts every bin of a grid under one key: fit must notice.
    def constant_hash(bins, salts, multipliers):
        shape = bins.shape[:2]
        return np.zeros(shape, np.uint64), np.zeros(shape, np.uint64)

    monkeypatch.setattr(features, "_hash_bins", constant_hash)
    with pytest.raises(RuntimeError, match="hash collision"):
        RandomBinningFeatures(5, sigma=0.5, random_state=0).fit(points)


# --- bad input ----------------------------------------------------------------


@pytest.mark.parametrize("cls", [RandomFourierFeatures, RandomBinningFeatures])
@pytest.mark.parametrize("n_components", [0, -3, 2.5, True, "10"])
def test_bad_n_components(points, cls, n_components):
    with pytest.raises(ValueError, match="n_components"):
        cls(n_components=n_components).fit(points)


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.nan, np.inf])
def test_bad_sigma(points, sigma):
    with pytest.raises(ValueError, match="sigma"):
        RandomBinningFeatures(sigma=sigma).fit(points)


@pytest.mark.parametrize("gamma", [0.0, -1.0, np.nan])
def test_bad_gamma(points, gamma):
    with pytest.raises(ValueError, match="gamma"):
        RandomFourierFeatures(gamma=gamma).fit(points)


def test_bad_dtype(points):
    with pytest.raises(ValueError, match="dtype"):
        RandomFourierFeatures(dtype=np.int32).fit(points)


@pytest.mark.parametrize("cls", [RandomFourierFeatures, RandomBinningFeatures])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_inf_input(points, cls, bad):
    X = points.copy()
    X[3, 2] = bad
    with pytest.raises(ValueError):
        cls(10, random_state=0).fit(X)
    est = cls(10, random_state=0).fit(points)
    with pytest.raises(ValueError):
        est.transform(X)


@pytest.mark.parametrize("cls", [RandomFourierFeatures, RandomBinningFeatures])
def test_wrong_number_of_features_at_transform(points, cls):
    est = cls(10, random_state=0).fit(points)
    with pytest.raises(ValueError, match="features"):
        est.transform(points[:, :3])
