"""Random feature maps: explicit features whose inner products approximate a kernel.

Rahimi & Recht, "Random features for large-scale kernel machines", NIPS 2007.
The DGPD paper (Lei et al., §5) trains linear models on Mnist and Aloi mapped
with Random Fourier features (dense, RBF kernel) and Random Binning features
(very sparse, Laplacian kernel); these transformers produce those inputs.

Both are scikit-learn transformers: ``fit`` draws the random map (and, for
binning, records the bins seen), ``transform`` applies it, ``random_state``
makes the map reproducible. This module is preprocessing: it imports no solver.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .data import check_positive

__all__ = ["RandomFourierFeatures", "RandomBinningFeatures"]


def _check_n_components(n_components) -> int:
    if (
        isinstance(n_components, bool)
        or not isinstance(n_components, numbers.Integral)
        or n_components < 1
    ):
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
    return int(n_components)


class RandomFourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Random Fourier features for the RBF kernel ``exp(-gamma ||x - y||^2)``.

    ``z(x) = sqrt(2/D) cos(W^T x + b)`` with ``W ~ N(0, 2 gamma I)`` and
    ``b ~ U[0, 2 pi]``, so that ``E[z(x)^T z(y)]`` is the RBF kernel and the
    error of ``z(x)^T z(y)`` is ``O(1/sqrt(D))`` (Rahimi & Recht, NIPS 2007;
    the "RF" features of DGPD §5). The output is dense.

    Parameters
    ----------
    n_components : int, default=500
        Number of features ``D``.
    gamma : float, default=1.0
        Kernel parameter, > 0.
    random_state : int, RandomState instance or None, default=None
        Seed of the random map.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the weights and of the output.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features_in_, n_components)
        ``W``.
    random_offset_ : ndarray of shape (n_components,)
        ``b``.
    n_features_in_ : int
        Number of input features seen in ``fit``.
    """

    def __init__(self, n_components=500, gamma=1.0, random_state=None, dtype=np.float64):
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state
        self.dtype = dtype

    def _output_dtype(self) -> np.dtype:
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be np.float64 or np.float32, got {self.dtype!r}")
        return dtype

    def fit(self, X, y=None):
        """Draw ``W`` and ``b`` for the number of features of ``X`` (dense or sparse)."""
        n_components = _check_n_components(self.n_components)
        gamma = check_positive("gamma", self.gamma)
        dtype = self._output_dtype()
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32])
        rng = check_random_state(self.random_state)
        # Drawn in float64 whatever ``dtype``: one seed gives one map.
        weights = rng.normal(0.0, np.sqrt(2.0 * gamma), size=(X.shape[1], n_components))
        offset = rng.uniform(0.0, 2.0 * np.pi, size=n_components)
        self.random_weights_ = weights.astype(dtype, copy=False)
        self.random_offset_ = offset.astype(dtype, copy=False)
        return self

    def transform(self, X):
        """Map ``X`` (dense or sparse) to the dense array ``z(X)`` of shape (n_samples, D)."""
        check_is_fitted(self)
        dtype = self.random_weights_.dtype
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=dtype, reset=False)
        projection = np.asarray(X @ self.random_weights_, dtype=dtype)
        projection += self.random_offset_
        np.cos(projection, out=projection)
        projection *= np.sqrt(2.0 / projection.shape[1]).astype(dtype)
        return projection

    @property
    def _n_features_out(self):
        return self.random_offset_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        try:
            # The output dtype is ``dtype`` whatever the input's: only that one is preserved.
            tags.transformer_tags.preserves_dtype = [self._output_dtype().name]
        except ValueError:
            pass
        return tags


# splitmix64 finaliser: a bijection of 64-bit words that spreads every input bit.
_MIX_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))
_MIX_MULTIPLIERS = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))

# Bin coordinates computed per numpy call: the float64/uint64 temporaries
# (~0.5 MB each) stay in cache, which makes hashing ~3x faster than whole-array passes.
_CHUNK_ELEMENTS = 1 << 16
# (grid, sample) pairs hashed and grouped at once: bounds the memory of the hashes.
_BLOCK_PAIRS = 1 << 20


def _mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser applied in place to a uint64 array."""
    z ^= z >> _MIX_SHIFTS[0]
    z *= _MIX_MULTIPLIERS[0]
    z ^= z >> _MIX_SHIFTS[1]
    z *= _MIX_MULTIPLIERS[1]
    z ^= z >> _MIX_SHIFTS[2]
    return z


def _grid_bins(X: np.ndarray, widths: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Bin coordinates ``floor((x_k - u_k) / delta_k)`` of every row of ``X`` in every grid.

    ``X`` is (n, d) float64, ``widths`` and ``shifts`` are (g, d); returns (g, n, d)
    float64 integers (kept as floats: no integer overflow for large coordinates).
    """
    bins = X[None, :, :] - shifts[:, None, :]
    bins /= widths[:, None, :]
    np.floor(bins, out=bins)
    bins += 0.0  # -0.0 -> +0.0: equal bins must have equal bit patterns
    return bins


def _hash_bins(bins: np.ndarray, salts: np.ndarray, multipliers: np.ndarray):
    """Two independent 64-bit hashes of each bin vector (last axis of ``bins``).

    Each coordinate's bit pattern is salted per (grid, feature) and mixed by a
    bijection, then the mixed words are combined with two random odd multiplier
    vectors modulo 2^64 (uint64 arithmetic wraps).
    """
    words = bins.view(np.uint64) ^ salts[:, None, :]
    _mix64(words)
    hash_a = (words * multipliers[0]).sum(axis=2, dtype=np.uint64)
    words *= multipliers[1]
    hash_b = words.sum(axis=2, dtype=np.uint64)
    return hash_a, hash_b


def _hash_grids(X, widths, shifts, salts, multipliers):
    """Hash pairs, each of shape (g, n), of the bin of every row of ``X`` in g grids.

    Bins are computed and hashed in cache-sized chunks of (grids, rows).
    """
    n_grids, n_features = widths.shape
    n_samples = X.shape[0]
    rows = max(1, min(n_samples, _CHUNK_ELEMENTS // n_features))
    grids = max(1, _CHUNK_ELEMENTS // (rows * n_features)) if rows == n_samples else 1
    hash_a = np.empty((n_grids, n_samples), dtype=np.uint64)
    hash_b = np.empty((n_grids, n_samples), dtype=np.uint64)
    for g0 in range(0, n_grids, grids):
        g1 = min(g0 + grids, n_grids)
        for r0 in range(0, n_samples, rows):
            r1 = min(r0 + rows, n_samples)
            bins = _grid_bins(X[r0:r1], widths[g0:g1], shifts[g0:g1])
            hash_a[g0:g1, r0:r1], hash_b[g0:g1, r0:r1] = _hash_bins(bins, salts[g0:g1], multipliers)
    return hash_a, hash_b


def _same_bins(X, rows, other_rows, grids, widths, shifts) -> bool:
    """Whether ``rows[i]`` and ``other_rows[i]`` of ``X`` share their bin of grid ``grids[i]``, for all i."""
    step = max(1, _CHUNK_ELEMENTS // X.shape[1])
    for start in range(0, rows.shape[0], step):
        chunk = slice(start, start + step)
        width, shift = widths[grids[chunk]], shifts[grids[chunk]]
        # Same operations as _grid_bins, so equal bins give equal values.
        here = np.floor((X[rows[chunk]] - shift) / width)
        there = np.floor((X[other_rows[chunk]] - shift) / width)
        if not np.array_equal(here, there):
            return False
    return True


def _lookup(table, queries) -> np.ndarray:
    """Index in ``table`` of each query key, or -1 where it is absent.

    ``table`` and ``queries`` are triples ``(grid, hash_a, hash_b)`` of equal-length
    arrays; the table is sorted lexicographically and has no repeated key. One
    joint sort places each query right after its equal table key, if any.
    """
    n_table = table[0].shape[0]
    n_queries = queries[0].shape[0]
    keys = [np.concatenate([t, q]) for t, q in zip(table, queries, strict=True)]
    is_query = np.concatenate([np.zeros(n_table, np.int8), np.ones(n_queries, np.int8)])
    order = np.lexsort((is_query, keys[2], keys[1], keys[0]))
    position = np.arange(order.shape[0])
    # Sorted position of the last table key at or before each sorted position.
    last_table = np.where(order < n_table, position, -1)
    np.maximum.accumulate(last_table, out=last_table)
    query_at = order >= n_table
    query_position = np.empty(n_queries, dtype=np.intp)
    query_position[order[query_at] - n_table] = position[query_at]
    candidate_position = last_table[query_position]
    candidate = order[np.maximum(candidate_position, 0)]  # < n_table whenever position >= 0
    found = candidate_position >= 0
    for t, q in zip(table, queries, strict=True):
        found &= t[np.where(found, candidate, 0)] == q
    return np.where(found, candidate, -1)


class RandomBinningFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Random Binning features for the Laplacian kernel ``exp(-||x - y||_1 / sigma)``.

    Each of the ``P = n_components`` grids draws, per input feature ``k``, a
    width ``delta_k ~ Gamma(shape=2, scale=sigma)`` and a shift
    ``u_k ~ U[0, delta_k)``. A point falls in the bin
    ``(floor((x_k - u_k) / delta_k))_k`` of each grid; the bin has one column
    and the point gets ``1/sqrt(P)`` there. Two points share a bin of a grid
    with probability ``exp(-||x - y||_1 / sigma)``, so ``z(x)^T z(y)``, the
    fraction of grids where they share a bin, is an unbiased estimate of the
    kernel with error ``O(1/sqrt(P))`` (Rahimi & Recht, NIPS 2007; the very
    sparse "RB" features of DGPD §5).

    Columns are the distinct (grid, bin) pairs seen in ``fit``, grid by grid.
    At ``transform``, a point whose bin of a grid was not seen in ``fit`` gets
    no entry for that grid, so new rows may have fewer than ``P`` nonzeros
    (training rows have exactly ``P``). Inputs are binned in float64; sparse
    input is densified (every coordinate enters the bin).

    Bins are identified by two independent 64-bit hashes of their exact bin
    vectors. ``fit`` checks that no two distinct bins seen there share a hash
    (so columns never merge bins); at ``transform`` an unseen bin would be
    taken for a seen one only on a 128-bit hash collision (probability about
    ``n_columns * 2**-126`` per lookup).

    Parameters
    ----------
    n_components : int, default=100
        Number of grids ``P``: nonzeros per training row.
    sigma : float, default=1.0
        Kernel width, > 0 (scikit-learn's ``laplacian_kernel`` has ``gamma = 1/sigma``).
    random_state : int, RandomState instance or None, default=None
        Seed of the grids.

    Attributes
    ----------
    bin_widths_ : ndarray of shape (n_components, n_features_in_)
        ``delta`` per grid and feature.
    bin_shifts_ : ndarray of shape (n_components, n_features_in_)
        ``u`` per grid and feature.
    grid_ptr_ : ndarray of shape (n_components + 1,)
        Columns ``grid_ptr_[p]:grid_ptr_[p + 1]`` are the bins of grid ``p``.
    bin_hashes_ : ndarray of shape (n_output_features_, 2), dtype uint64
        Hash pair of each column's bin, sorted within each grid.
    hash_salts_ : ndarray of shape (n_components, n_features_in_), dtype uint64
    hash_multipliers_ : ndarray of shape (2, n_features_in_), dtype uint64
        Parameters of the bin hash.
    n_output_features_ : int
        Number of columns: distinct (grid, bin) pairs seen in ``fit``.
    n_features_in_ : int
        Number of input features seen in ``fit``.
    """

    def __init__(self, n_components=100, sigma=1.0, random_state=None):
        self.n_components = n_components
        self.sigma = sigma
        self.random_state = random_state

    def fit(self, X, y=None):
        """Draw the grids and record the bins the rows of ``X`` fall in."""
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)``, binning ``X`` once."""
        return self._fit(X)

    def _fit(self, X):
        n_components = _check_n_components(self.n_components)
        sigma = check_positive("sigma", self.sigma)
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32])
        out_dtype = X.dtype
        X = self._as_dense_float64(X)
        n_samples, n_features = X.shape
        rng = check_random_state(self.random_state)
        widths = rng.gamma(shape=2.0, scale=sigma, size=(n_components, n_features))
        shifts = rng.uniform(0.0, 1.0, size=(n_components, n_features)) * widths
        salts = rng.randint(0, 2**64, size=(n_components, n_features), dtype=np.uint64)
        multipliers = rng.randint(0, 2**64, size=(2, n_features), dtype=np.uint64)
        multipliers |= np.uint64(1)
        if not np.all(widths > 0):
            raise ValueError(f"sigma={self.sigma!r} is too small: bin widths underflow to 0")

        columns = np.empty((n_samples, n_components), dtype=np.int64)
        table = ([], [], [])
        bins_per_grid = np.empty(n_components, dtype=np.int64)
        n_columns = 0
        for start, stop in self._grid_blocks(n_components, n_samples):
            hash_a, hash_b = _hash_grids(
                X, widths[start:stop], shifts[start:stop], salts[start:stop], multipliers
            )
            n_grids = stop - start
            grid = np.repeat(np.arange(start, stop, dtype=np.int64), n_samples)
            hash_a, hash_b = hash_a.ravel(), hash_b.ravel()
            order = np.lexsort((hash_b, hash_a, grid))
            grid_s, a_s, b_s = grid[order], hash_a[order], hash_b[order]
            first = np.ones(order.shape[0], dtype=bool)
            first[1:] = (grid_s[1:] != grid_s[:-1]) | (a_s[1:] != a_s[:-1]) | (b_s[1:] != b_s[:-1])
            group = np.cumsum(first) - 1
            inverse = np.empty_like(group)
            inverse[order] = group
            # Exactness: every (grid, row) pair must share the bin of its group's first pair.
            representative = order[first][inverse]
            moved = np.flatnonzero(representative != np.arange(representative.shape[0]))
            if not _same_bins(
                X,
                moved % n_samples,
                representative[moved] % n_samples,
                start + moved // n_samples,
                widths,
                shifts,
            ):
                raise RuntimeError(
                    "hash collision between two distinct bins (probability ~2**-120); "
                    "refit with another random_state"
                )
            columns[:, start:stop] = (n_columns + inverse).reshape(n_grids, n_samples).T
            for part, keys in zip(table, (grid_s[first], a_s[first], b_s[first]), strict=True):
                part.append(keys)
            bins_per_grid[start:stop] = np.bincount(grid_s[first] - start, minlength=n_grids)
            n_columns += int(first.sum())

        self.bin_widths_ = widths
        self.bin_shifts_ = shifts
        self.hash_salts_ = salts
        self.hash_multipliers_ = multipliers
        self.grid_ptr_ = np.concatenate([[0], np.cumsum(bins_per_grid)])
        self.bin_hashes_ = np.column_stack([np.concatenate(table[1]), np.concatenate(table[2])])
        self.n_output_features_ = n_columns
        return self._to_csr(columns, out_dtype)

    def transform(self, X):
        """Map ``X`` (dense or sparse) to a CSR matrix with at most ``P`` nonzeros per row.

        Bins not seen in ``fit`` give no entry.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32], reset=False
        )
        out_dtype = X.dtype
        X = self._as_dense_float64(X)
        n_samples = X.shape[0]
        n_components = self.bin_widths_.shape[0]
        column_grid = np.repeat(np.arange(n_components, dtype=np.int64), np.diff(self.grid_ptr_))
        columns = np.empty((n_samples, n_components), dtype=np.int64)
        for start, stop in self._grid_blocks(n_components, n_samples):
            hash_a, hash_b = _hash_grids(
                X,
                self.bin_widths_[start:stop],
                self.bin_shifts_[start:stop],
                self.hash_salts_[start:stop],
                self.hash_multipliers_,
            )
            lo, hi = self.grid_ptr_[start], self.grid_ptr_[stop]
            table = (column_grid[lo:hi], self.bin_hashes_[lo:hi, 0], self.bin_hashes_[lo:hi, 1])
            grid = np.repeat(np.arange(start, stop, dtype=np.int64), n_samples)
            found = _lookup(table, (grid, hash_a.ravel(), hash_b.ravel()))
            found = np.where(found >= 0, found + lo, -1)
            columns[:, start:stop] = found.reshape(stop - start, n_samples).T
        return self._to_csr(columns, out_dtype)

    @staticmethod
    def _as_dense_float64(X) -> np.ndarray:
        if sp.issparse(X):
            X = X.toarray()
        return np.ascontiguousarray(X, dtype=np.float64)

    @staticmethod
    def _grid_blocks(n_components: int, n_samples: int):
        step = max(1, _BLOCK_PAIRS // n_samples)
        for start in range(0, n_components, step):
            yield start, min(start + step, n_components)

    def _to_csr(self, columns: np.ndarray, dtype) -> sp.csr_matrix:
        # ``columns`` is (n_samples, P) with -1 for "no entry"; columns grow with the
        # grid, so each row's indices come out sorted.
        present = columns >= 0
        indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
        indices = columns[present]
        value = 1.0 / np.sqrt(columns.shape[1])
        data = np.full(indices.shape[0], value, dtype=dtype)
        Z = sp.csr_matrix(
            (data, indices, indptr), shape=(columns.shape[0], self.n_output_features_)
        )
        Z.has_sorted_indices = True
        return Z

    @property
    def _n_features_out(self):
        return self.n_output_features_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # Bins are computed in float64; the 1/sqrt(P) values take the input's float dtype.
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
