"""Partitioned CD on threads: one parallel region per epoch (CoCoA+ on shared memory).

The coordinates are split into ``K`` contiguous blocks of about equal nonzeros
(:func:`cdlearn.kernels.parallel_cd.block_bounds`). In an epoch every block runs
one serial pass of the ordinary CD kernel (:func:`cdlearn.kernels.dual_cd.
dual_cd_active_epoch`, :func:`cdlearn.kernels.primal_cd.primal_cd_squared_epoch`)
over its own coordinates against a private copy of the shared vector; the
copies' changes are then added (CoCoA+ "adding", γ = 1; Ma, Smith, Jaggi,
Jordan, Richtárik & Takáč, *Adding vs. averaging in distributed primal-dual
optimization*, 2015). Two parallel regions per epoch instead of two barriers
per minibatch.

Adding is safe when every block's subproblem over-estimates the coupling:
``‖Σ_k u_k‖² ≤ Σ_k Σ_j c_j u_kj²`` where ``u_k`` is block k's change of the
shared vector and ``c_j`` the number of blocks with a nonzero at entry j
(Cauchy–Schwarz per entry; ``c_j ≤ K``, so this is at least as tight as
CoCoA+'s ``σ′ = K`` and equal to 1 where the blocks do not overlap). The
subproblem with the weighted norm is the plain one on the design scaled by
``√c`` (``X diag(√c)`` for dual CD, ``diag(√c) X`` for primal CD) with the
shared vector divided by ``√c``: the serial kernels run unchanged on that
scaled copy, and a block's change is multiplied back by ``1/√c`` when merged.

Deterministic: the blocks and their random streams depend on ``K`` only and
the merge sums the blocks in order, so the iterates are the same bits on any
number of threads for a given seed and ``K``.
"""

import numpy as np
from numba import njit, prange

from cdlearn.sampling import CYCLIC

from .dual_cd import dual_cd_active_epoch
from .primal_cd import primal_cd_squared_epoch


@njit(cache=True)
def _scaled_copy(src, scale, dst):
    for j in range(src.shape[0]):
        dst[j] = src[j] / scale[j]


@njit(cache=True, parallel=True, nogil=True)
def _merge(shared, scale, local, blocks):
    """``shared += Σ_k (local_k - shared/√c) / √c``, entry ranges ``blocks`` on threads."""
    n_parts = local.shape[0]
    for b in prange(blocks.shape[0] - 1):
        for j in range(blocks[b], blocks[b + 1]):
            base = shared[j] / scale[j]
            acc = 0.0
            for k in range(n_parts):
                acc += local[k, j] - base
            shared[j] += acc / scale[j]
    return 0


@njit(cache=True, parallel=True, nogil=True)
def dual_cd_partition_epoch(
    sdata, indices, indptr, y, sw, alpha, w, eso, inv_l2n, loss_code, parts, order, rngs,
    inner_eps, scale, local, blocks,
):
    """One epoch of partitioned dual CD (l2 penalty, no intercept; ``w = v = Xᵀα/(λn)``).

    ``sdata`` is the row view's data scaled by ``√c`` of its feature, ``eso``
    the squared norms of those scaled rows, ``parts`` the ``K + 1`` row bounds,
    ``order[parts[k]:parts[k+1]]`` a permutation of ``0..n_k-1`` (reshuffled
    in place: block k's pass order), ``rngs`` ``(K, 1)`` random states,
    ``local`` a ``(K, d)`` work array and ``blocks`` the feature ranges of the
    merge. Returns ``(entries_touched, updates_made)``.
    """
    n_parts = parts.shape[0] - 1
    entries = np.zeros(n_parts, dtype=np.int64)
    updates = np.zeros(n_parts, dtype=np.int64)
    for k in prange(n_parts):
        lo, hi = parts[k], parts[k + 1]
        u = local[k]
        _scaled_copy(w, scale, u)
        e, m, _, _, _ = dual_cd_active_epoch(
            sdata, indices, indptr[lo:hi + 1], y[lo:hi], sw[lo:hi], alpha[lo:hi], u, u,
            eso[lo:hi], inv_l2n, 0.0, loss_code, 0.0, order[lo:hi], hi - lo, rngs[k], True,
            inner_eps, False, np.inf, -np.inf,
        )
        entries[k] = e
        updates[k] = m
    _merge(w, scale, local, blocks)
    return entries.sum(), updates.sum()


@njit(cache=True, parallel=True, nogil=True)
def primal_cd_squared_partition_epoch(
    sdata, indices, indptr, sw, unit, resid, w, lips, l1, l2, positive, parts, rngs, scale,
    local, blocks,
):
    """One epoch of partitioned primal CD for the squared loss (no intercept).

    Each block of columns ``parts[k]:parts[k+1]`` makes one cyclic pass of
    :func:`~cdlearn.kernels.primal_cd.primal_cd_squared_epoch` on a private
    residual; ``sdata`` is the column view's data scaled by ``√c`` of its row,
    ``lips`` the correspondingly weighted column constants; other arguments as
    :func:`dual_cd_partition_epoch`. Returns ``(entries_touched, updates_made)``.
    """
    n_parts = parts.shape[0] - 1
    entries = np.zeros(n_parts, dtype=np.int64)
    updates = np.zeros(n_parts, dtype=np.int64)
    prob = np.ones(1)
    alias = np.zeros(1, dtype=np.int64)
    for k in prange(n_parts):
        lo, hi = parts[k], parts[k + 1]
        u = local[k]
        _scaled_copy(resid, scale, u)
        e, m, _ = primal_cd_squared_epoch(
            sdata, indices, indptr[lo:hi + 1], sw, unit, u, w[lo:hi], lips[lo:hi], l1, l2,
            CYCLIC, prob, alias, hi - lo, rngs[k], 0, np.zeros(1), 0.0, positive,
        )
        entries[k] = e
        updates[k] = m
    _merge(resid, scale, local, blocks)
    return entries.sum(), updates.sum()
