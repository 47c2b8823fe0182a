"""Synthetic matrices of the face-off paper (Csiba & Richtárik, §6-§7).

All generators return matrices in cdlearn's orientation ``(n_samples, n_features)``
(the paper's ``X`` is ``d x n``, the transpose), with ``n`` samples (examples) and
``d`` features. ``C_P``/``C_D`` are the quantities of eq. (16), see
:mod:`cdlearn.faceoff`.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np
import scipy.sparse as sp

from ..faceoff import max_dual_complexity_matrix

__all__ = ["make_theorem3_matrix", "make_binary_worst_case", "make_dense_iid"]


def _positive_int(name, value) -> int:
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def _finite_real(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def make_theorem3_matrix(a, b, c, n_samples, n_features) -> sp.csr_matrix:
    """The matrix ``X(a, b, c)`` from the proof of Theorem 3 (used in §7.1, Fig. 2a-b).

    Paper (``d x n``): ``X_ij = a`` if ``i ≠ 1, j = 1``; ``b`` if ``i = 1, j ≠ 1``;
    ``c`` if ``i = j = 1``; 0 otherwise. In our orientation sample 0 is
    ``(c, a, ..., a)`` and feature 0 is ``(c, b, ..., b)``; all else is zero. Then

    ``C_P = (d-1)a² + n(n-1)b² + n c²`` and ``C_D = d(d-1)a² + (n-1)b² + d c²``.

    It attains the bounds of Theorem 3 in the limit (for ``n, d >= 2``): ``C_P/C_D → 1/d`` as
    ``b, c → 0`` (then ``C_P → ||X||_F²`` and ``C_D → d||X||_F²``: primal RCD up to
    ``d`` times faster, the case of §7.1), and ``C_P/C_D → n`` as ``a, c → 0``
    (``C_P → n||X||_F²``, ``C_D → ||X||_F²``). No zero rows/columns when
    ``a, b, c ≠ 0`` (``c = 0`` is fine when ``n, d >= 2``).

    Parameters
    ----------
    a, b, c : float
        The three values.
    n_samples, n_features : int
        ``n`` and ``d``.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n_samples, n_features)
    """
    a, b, c = _finite_real("a", a), _finite_real("b", b), _finite_real("c", c)
    n = _positive_int("n_samples", n_samples)
    d = _positive_int("n_features", n_features)
    rows = np.concatenate([[0], np.zeros(d - 1, np.int64), np.arange(1, n)])
    cols = np.concatenate([[0], np.arange(1, d), np.zeros(n - 1, np.int64)])
    vals = np.concatenate([[c], np.full(d - 1, a), np.full(n - 1, b)])
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d), dtype=np.float64)
    X.eliminate_zeros()
    return X


def make_binary_worst_case(d, n, alpha, value=1.0, seed=None) -> sp.csr_matrix:
    """§7.2's worst case for dual RCD: entries in ``{value, -value, 0}``, ``||X||_0 = α``.

    "For each triplet [d, n, α] we produced the worst-case matrix for dual RCD
    according to the developed theory": the matrix of Theorem 4's lower bound,
    i.e. maximal ``C_D = value²·U(α, d, n)`` (Lemma 9 (21)) with, at the same time,
    minimal ``C_P = value²·L(α, d)`` (20), so ``C_P/C_D = 1/R(α, n, d)``. Its
    pattern is :func:`cdlearn.faceoff.max_dual_complexity_matrix` (⌊(α-n)/(d-1)⌋
    full samples, one with ``b`` nonzeros, the rest with one, features filled
    evenly); signs are drawn uniformly at random (they do not change ``C_P, C_D``).

    Parameters
    ----------
    d, n, alpha : int
        Features, samples and nonzeros, ``max(d, n) <= alpha <= d n``.
    value : float
        The magnitude ``a ≠ 0`` of the entries.
    seed : int, numpy Generator or None
        For the signs.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, d)
    """
    value = _finite_real("value", value)
    if value == 0:
        raise ValueError("value must be nonzero")
    X = max_dual_complexity_matrix(d, n, alpha)
    rng = np.random.default_rng(seed)
    X.data = value * rng.choice(np.array([-1.0, 1.0]), size=X.nnz)
    return X


def make_dense_iid(n_samples, n_features, mean=0.0, std=1.0, seed=None) -> np.ndarray:
    """Dense matrix with i.i.d. ``N(mean, std²)`` entries (§6.1).

    All entries are nonzero almost surely, so ``C_P = n||X||_F²`` and
    ``C_D = d||X||_F²`` exactly, with ``E[C_P] = d n² (σ² + μ²)`` and
    ``E[C_D] = d² n (σ² + μ²)``: primal wins iff ``n < d``. (§6.1 prints
    ``E[C_P] = dnσ² + dn²μ²``, which is ``E Σ_i (Σ_j X_ij)²``, not eq. (16); the
    conclusion ``E C_P <= E C_D ⇔ n <= d`` is the same.)

    Returns
    -------
    ndarray, shape (n_samples, n_features), float64
    """
    n = _positive_int("n_samples", n_samples)
    d = _positive_int("n_features", n_features)
    mean = _finite_real("mean", mean)
    std = _finite_real("std", std)
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std}")
    rng = np.random.default_rng(seed)
    return rng.normal(mean, std, size=(n, d))
