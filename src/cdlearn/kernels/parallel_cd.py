"""Multi-core τ-nice coordinate descent: Quartz / PCDM minibatches on threads.

A minibatch of τ coordinates (a τ-nice sample, :func:`draw_without_replacement`)
is computed from the same shared vector and then applied together, with the
ESO step sizes (Richtárik & Takáč, *Parallel coordinate descent methods for
big data optimization*, τ-nice ESO; face-off Algorithms 1 and 2 with the
sampling ``Ŝ`` τ-nice). Both phases run in numba ``prange`` loops:

1. the τ steps, one per thread chunk: each reads the shared vector (``w`` for
   dual CD, the margins ``z`` for primal CD), which nobody writes in this
   phase, and writes only its own coordinate; it also records where its slice
   crosses the block bounds of phase 2;
2. the update of the shared vector, **partitioned by minor index**: block
   ``b`` owns the entries ``[bounds[b], bounds[b+1])`` of the vector and adds
   the part of every slice of the batch that falls in it, in batch order.

No two threads write the same entry and every entry receives its updates in
the order of the batch, so the result is bit-identical to the serial τ-nice
loops of :mod:`cdlearn.kernels.dual_cd` and :mod:`cdlearn.kernels.primal_cd`
for the same seed, whatever the number of threads or blocks. ``bounds`` splits
the minor indices into blocks of about equal nonzeros (:func:`block_bounds`).
"""

import numpy as np
from numba import njit, prange

from cdlearn.penalties import coordinate_prox_step
from cdlearn.sampling import draw_without_replacement

from .dual_cd import FIXED_STEP, _dual_step
from .primal_cd import _column_gradient, intercept_step
from .views import slice_dot

u64 = np.uint64


def block_bounds(minor_nnz, n_blocks: int) -> np.ndarray:
    """``n_blocks + 1`` bounds splitting the minor indices into runs of ~equal nonzeros."""
    minor_nnz = np.asarray(minor_nnz, dtype=np.float64)
    m = minor_nnz.shape[0]
    n_blocks = max(1, min(int(n_blocks), m))
    cum = np.cumsum(minor_nnz)
    total = cum[-1] if m else 0.0
    if total <= 0.0:
        cuts = np.linspace(0, m, n_blocks + 1).round()
    else:
        cuts = np.searchsorted(cum, total * np.arange(1, n_blocks) / n_blocks, side="left") + 1
        cuts = np.concatenate(([0], cuts, [m]))
    return np.maximum.accumulate(np.clip(cuts, 0, m)).astype(np.int64)


@njit(cache=True)
def _record_splits(indices, indptr, s, bounds, splits, t):
    """``splits[t, b]``: the first position of slice ``s`` with minor index ≥ ``bounds[b]``."""
    start, end = indptr[s], indptr[s + 1]
    n_blocks = bounds.shape[0] - 1
    splits[t, 0] = start
    splits[t, n_blocks] = end
    if indices.shape[0] == 0:  # dense: entry k sits at minor index k - start
        for b in range(1, n_blocks):
            splits[t, b] = start + bounds[b]
        return
    for b in range(1, n_blocks):
        splits[t, b] = start + np.searchsorted(indices[start:end], bounds[b])


@njit(cache=True)
def _scatter_block(data, indices, deltas, splits, b, tau, scale, v, w, kappa):
    """Block ``b`` of phase 2: ``v += scale·δ_t x_{s_t}`` on its minor range, in batch order.

    ``w = soft(v, κ)`` on the touched entries when ``κ > 0`` (dual elastic net;
    primal CD and the dual's l2 pass κ = 0 and keep one vector).
    """
    dense = indices.shape[0] == 0
    for t in range(tau):
        if deltas[t] == 0.0:
            continue
        step = deltas[t] * scale
        lo, hi = u64(splits[t, b]), u64(splits[t, b + 1])
        first = u64(splits[t, 0])
        for k in range(lo, hi):
            j = k - first if dense else u64(indices[k])
            x = v[j] + step * data[k]
            v[j] = x
            if kappa > 0.0:
                w[j] = max(x - kappa, 0.0) + min(x + kappa, 0.0)
    return 0


@njit(cache=True, parallel=True, nogil=True)
def dual_cd_parallel_epoch(
    data, indices, indptr, y, sw, alpha, v, w, eso, inv_l2n, kappa, loss_code,
    step_mode, eta, intercept, n_updates, rng, perm, deltas, bounds, splits, inner_eps,
):
    """τ-nice Quartz (face-off Algorithm 2) with the batch's steps and row updates on threads.

    The arguments are those of :func:`cdlearn.kernels.dual_cd.dual_cd_epoch`
    with τ = ``deltas.shape[0]`` and ESO parameters ``eso``; ``bounds`` splits
    the features into blocks (:func:`block_bounds`) and ``splits`` is a
    ``(τ, n_blocks + 1)`` int64 work array. Same draws, same iterates (bit for
    bit) as the serial τ-nice loop. Returns ``(entries_touched, updates_made)``.
    """
    tau = deltas.shape[0]
    n_blocks = bounds.shape[0] - 1
    entries = 0
    updates = 0
    for _ in range(max(1, n_updates // tau)):
        draw_without_replacement(rng, perm, tau)
        for t in prange(tau):
            i = perm[t]
            s = sw[i]
            deltas[t] = 0.0
            if s != 0.0:
                entries += indptr[i + 1] - indptr[i]
                z = slice_dot(data, indices, indptr, i, w) + intercept
                a = alpha[i] / s
                eta_i = eta[i] if step_mode == FIXED_STEP else 0.0
                a_new = _dual_step(loss_code, step_mode, eta_i, a, z, y[i],
                                   s * eso[i] * inv_l2n, inner_eps)
                delta = s * (a_new - a)
                if delta != 0.0:
                    deltas[t] = delta
                    alpha[i] += delta
                    _record_splits(indices, indptr, i, bounds, splits, t)
        for b in prange(n_blocks):
            _scatter_block(data, indices, deltas, splits, b, tau, inv_l2n, v, w, kappa)
        for t in range(tau):
            updates += deltas[t] != 0.0
    return entries, updates


@njit(cache=True, parallel=True, nogil=True)
def primal_cd_parallel_epoch(
    data, indices, indptr, y, sw, z, w, lips, l1, l2, loss_code, n_updates, rng, perm,
    deltas, bounds, splits, intercept, intercept_lips, positive,
):
    """τ-nice PCDM / NSync (face-off Algorithm 1) with the batch on threads.

    Proximal ``1/L_j`` steps with ``lips`` the τ-nice ESO constants, then one
    intercept step if ``intercept_lips > 0``, as the serial τ-nice loop of
    :func:`cdlearn.kernels.primal_cd.primal_cd_epoch` (same draws, same
    iterates bit for bit); ``bounds`` splits the samples into blocks.
    Returns ``(entries_touched, updates_made)``.
    """
    tau = deltas.shape[0]
    n_blocks = bounds.shape[0] - 1
    inv_n = 1.0 / y.shape[0]
    entries = 0
    updates = 0
    for _ in range(max(1, n_updates // tau)):
        draw_without_replacement(rng, perm, tau)
        for t in prange(tau):
            j = perm[t]
            lj = lips[j]
            deltas[t] = 0.0
            if lj != 0.0:
                entries += indptr[j + 1] - indptr[j]
                g = _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
                delta = coordinate_prox_step(w[j], g, lj, l1, l2, positive) - w[j]
                if delta != 0.0:
                    deltas[t] = delta
                    w[j] += delta
                    _record_splits(indices, indptr, j, bounds, splits, t)
        for b in prange(n_blocks):
            _scatter_block(data, indices, deltas, splits, b, tau, 1.0, z, z, 0.0)
        for t in range(tau):
            updates += deltas[t] != 0.0
    if intercept_lips > 0.0:
        entries += intercept_step(z, y, sw, loss_code, inv_n, intercept, intercept_lips)
    return entries, updates


#: blocks of :func:`parallel_slice_dots` (a constant: numba's thread count in a kernel
#: would keep it from being cached)
DOT_BLOCKS = 64


@njit(cache=True, parallel=True, nogil=True)
def parallel_slice_dots(data, indices, indptr, vec, out):
    """``out[s] = x_sᵀ vec`` for every slice on threads: ``X v`` from the row view,
    ``Xᵀq`` from the column view. Each slice is summed by one thread in slice order,
    as scipy's CSR product: the same bits on any thread count and as scipy's.

    In :data:`DOT_BLOCKS` blocks of ~equal nonzeros (split evenly among the threads),
    every index unsigned (views.py's speed note): a ``prange`` over the slices calling
    ``slice_dot`` took 34 ms on one thread for the Nesterov 10⁶ columns (scipy 24 ms),
    this 21 ms, and 11 ms on two.
    """
    n_slices = out.shape[0]
    n_blocks = min(DOT_BLOCKS, max(n_slices, 1))
    nnz = indptr[n_slices] - indptr[0]
    dense = indices.shape[0] == 0
    for b in prange(n_blocks):
        lo = u64(np.searchsorted(indptr[:n_slices], indptr[0] + nnz * b // n_blocks))
        hi = u64(np.searchsorted(indptr[:n_slices], indptr[0] + nnz * (b + 1) // n_blocks)
                 if b + 1 < n_blocks else n_slices)
        for s in range(lo, hi):
            start, end = u64(indptr[s]), u64(indptr[s + u64(1)])
            acc = 0.0
            if dense:
                for k in range(start, end):
                    acc += data[k] * vec[k - start]
            else:
                for k in range(start, end):
                    acc += data[k] * vec[u64(indices[k])]
            out[s] = acc
    return out
