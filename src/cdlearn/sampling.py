"""Coordinate samplers: probabilities, alias tables, ESO parameters, a portable RNG.

Kernels draw coordinates in O(1) from a Walker alias table (``prob``,
``alias``); uniform draws skip the table. The random state is a single uint64
(xorshift64*), kept in a one-element array that the kernels advance in place,
so a solve with a given seed is bit-reproducible no matter how its epochs are
chunked, and independent of numba's global generator.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

UNIFORM, IMPORTANCE, CYCLIC, SHUFFLE = 0, 1, 2, 3
SAMPLING_CODES = {"uniform": UNIFORM, "importance": IMPORTANCE, "cyclic": CYCLIC,
                  "shuffle": SHUFFLE}


# --------------------------------------------------------------------------- RNG
def make_rng_state(seed) -> np.ndarray:
    """A non-zero uint64 xorshift state derived from ``seed`` (int or None)."""
    state = _seed_state(None) if seed is None else _seeded_state(int(seed))
    return np.array([state], dtype=np.uint64)


def _seed_state(seed) -> int:
    ss = np.random.SeedSequence(seed)
    return int(ss.generate_state(1, dtype=np.uint64)[0]) | 1


@functools.lru_cache(maxsize=256)
def _seeded_state(seed: int) -> int:
    # SeedSequence costs ~0.1-0.5 ms, a visible part of a small solve
    return _seed_state(seed)


@njit(cache=True)
def next_uint64(state):
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(2685821657736338717)


@njit(cache=True)
def next_double(state):
    """Uniform in [0, 1)."""
    return (next_uint64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def next_index(state, n):
    """Uniform in {0, ..., n-1}."""
    k = int(next_double(state) * n)
    return k if k < n else n - 1


# --------------------------------------------------------------------------- alias
def alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table for the distribution ``p`` (need not be normalised).

    Returns ``(prob, alias)``: draw ``k`` uniformly, keep it with probability
    ``prob[k]``, else take ``alias[k]``. Entries with ``p = 0`` are never drawn.
    """
    p = np.asarray(p, dtype=np.float64)
    n = p.shape[0]
    total = p.sum()
    if n == 0 or not np.isfinite(total) or total <= 0:
        raise ValueError("sampling probabilities must be finite, non-negative, not all zero")
    prob, alias = _vose(p * (n / total))
    zero = p <= 0
    if np.any(zero):
        # A zero-probability slot keeps prob 0 and points to some positive entry.
        pos = int(np.flatnonzero(~zero)[0])
        for i in np.flatnonzero(zero & (alias == np.arange(n))):
            prob[i] = 0.0
            alias[i] = pos
    return prob, alias


@njit(cache=True)
def _push(i, below_one, small, n_small, large, n_large):
    """Push ``i`` on the small or the large stack; the new stack sizes."""
    if below_one:
        small[n_small] = i
        return n_small + 1, n_large
    large[n_large] = i
    return n_small, n_large + 1


@njit(cache=True)
def _vose(scaled):
    """Vose's pairing of ``scaled`` (mean 1) into ``(prob, alias)``.

    Numba: the Python loop took 24 ms for 32k samples (a9a), more than a
    dual CD epoch. Stacks hold the indices in increasing order and pop from
    the end, as Python lists would, so the table does not depend on this
    being compiled. Entries left on a stack keep prob 1 (1 up to rounding).
    """
    n = scaled.shape[0]
    scaled = scaled.copy()
    prob = np.ones(n)
    alias = np.arange(n)
    small = np.empty(n, dtype=np.int64)
    large = np.empty(n, dtype=np.int64)
    n_small = n_large = 0
    for i in range(n):
        n_small, n_large = _push(i, scaled[i] < 1.0, small, n_small, large, n_large)
    while n_small > 0 and n_large > 0:
        n_small -= 1
        s = small[n_small]
        n_large -= 1
        g = large[n_large]
        prob[s] = scaled[s]
        alias[s] = g
        scaled[g] = scaled[g] + scaled[s] - 1.0
        n_small, n_large = _push(g, scaled[g] < 1.0, small, n_small, large, n_large)
    return prob, alias


@njit(cache=True)
def shuffle(state, perm):
    """Fisher–Yates: a uniformly random permutation of ``perm`` in place."""
    for k in range(perm.shape[0] - 1, 0, -1):
        r = next_index(state, k + 1)
        tmp = perm[k]
        perm[k] = perm[r]
        perm[r] = tmp


@njit(cache=True)
def draw(state, mode, prob, alias, n, counter):
    """One coordinate: uniform, alias-table (importance/power), cyclic or shuffled.

    ``counter`` is the number of steps so far. ``CYCLIC`` takes ``counter mod n``;
    ``SHUFFLE`` (random reshuffling: sampling *without* replacement, every
    coordinate once per epoch in a fresh random order) reads ``alias`` as the
    permutation, an int array of length ``n``, and reshuffles it at the start
    of every epoch (``counter mod n == 0``). ``UNIFORM`` draws with replacement,
    as the papers' serial uniform sampling does.
    """
    if mode == CYCLIC:
        return counter % n
    if mode == SHUFFLE:
        k = counter % n
        if k == 0:
            shuffle(state, alias)
        return alias[k]
    k = next_index(state, n)
    if mode == UNIFORM:
        return k
    if next_double(state) < prob[k]:
        return k
    return alias[k]


@njit(cache=True)
def draw_without_replacement(state, perm, tau):
    """τ-nice sampling: a uniformly random τ-subset, left in ``perm[:tau]``.

    Partial Fisher–Yates on a persistent permutation array: O(τ) per draw.
    """
    n = perm.shape[0]
    for k in range(tau):
        r = k + next_index(state, n - k)
        tmp = perm[k]
        perm[k] = perm[r]
        perm[r] = tmp


# --------------------------------------------------------------------------- rules
def importance_probabilities(lips: np.ndarray, strong_convexity: float) -> np.ndarray:
    """Importance sampling (face-off eq. (14)): ``p_i ∝ L_i + μ``.

    With ``L_i = β u_i / n`` (primal) or ``β v_i / n`` (dual) and ``μ = λ``
    this is ``(β u_i + λn) / Σ_l (β u_l + λn)``. For penalties that are not
    strongly convex (``μ = 0``, e.g. Lasso) it becomes ``p_i ∝ L_i``, the RCDC
    paper's power law with ``a = 1``.
    """
    w = np.asarray(lips, dtype=np.float64) + strong_convexity
    return w / w.sum()


def power_probabilities(lips: np.ndarray, exponent: float) -> np.ndarray:
    """Power-law sampling ``p_i ∝ L_i^a`` (RCDC paper eq. (55)); ``L_i = 0`` gets 0."""
    lips = np.asarray(lips, dtype=np.float64)
    w = np.where(lips > 0, np.power(np.where(lips > 0, lips, 1.0), exponent), 0.0)
    return w / w.sum()


def eso_tau_nice(X_minor_nnz, design_sq_entries, tau: int, n_major: int) -> np.ndarray:
    """ESO parameters of τ-nice sampling (Richtárik & Takáč, parallel CD, Theorem 12).

    For primal CD over ``d = n_major`` coordinates,
    ``v_j = Σ_i (1 + (ω_i - 1)(τ - 1)/max(1, d - 1)) X_ij²`` where ``ω_i`` is the
    number of nonzeros of sample ``i`` (``X_minor_nnz``) and
    ``design_sq_entries`` is ``X**2`` as a sparse/dense matrix oriented
    (minor, major). For τ = 1 this is the serial ``u = Diag(XᵀX)`` of face-off eq. (7).
    """
    weights = tau_nice_weights(X_minor_nnz, tau, n_major)
    return np.asarray(design_sq_entries.T @ weights, dtype=np.float64).ravel()


def tau_nice_weights(X_minor_nnz, tau: int, n_major: int) -> np.ndarray:
    """The weights ``1 + (ω_i - 1)(τ - 1)/max(1, d - 1)`` of :func:`eso_tau_nice`.

    ``v_j = Σ_i weights_i X_ij²``; solvers sum it over their compressed view
    rather than form ``X**2``.
    """
    return 1.0 + (np.asarray(X_minor_nnz, dtype=np.float64) - 1.0) * (tau - 1) / max(
        1, n_major - 1
    )
