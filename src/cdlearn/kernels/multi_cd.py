"""Block coordinate descent over the rows of a weight matrix ``W`` (n_features × K).

RCDC (Richtárik & Takáč, Algorithm 1; Algorithm 2 with uniform blocks) in its
block setting with blocks ``W_j = W[j, :]``: the K class weights (multinomial
logistic) or task weights (multi-task least squares) of feature ``j``. With the
block norm ``‖t‖²_(j) = ‖t‖²`` and a constant ``L_j`` satisfying the block
bound (RCDC (6)), the step minimises the upper bound (8)-(9) exactly::

    W_j ← prox_{Ψ_j / L_j}(W_j − g_j / L_j),     g_j = x_jᵀ G / n,

where ``G`` (n × K) holds ``s_i ∇φ(z_i)``; the prox is row soft-thresholding
for the multi-task ``λ1‖W_j‖₂ + λ2/2‖W_j‖²`` and elementwise soft-thresholding
for ``λ1‖W_j‖₁ + λ2/2‖W_j‖²``. Curvatures: least squares ``L_j = ‖x_j‖²_s/n``
(its block Hessian is ``L_j I``: the step is exact block minimisation);
softmax cross-entropy ``L_j = ½‖x_j‖²_s/n``, because the softmax Hessian
``diag(p) − ppᵀ ≼ ½ I`` (Böhning's bound), so that step always decreases the
objective. It is the fallback: the multinomial step first tries the block's
own diagonal curvature (a proximal Newton step, Armijo test on the exact
change; :func:`_block_step`): on iris (C = 1, raw columns, tol 1e-12) 3,204
epochs instead of 18,247 with the Böhning step alone.

The scores are kept up to date, so a block step costs O(nnz(x_j)·K): least
squares keeps the residual ``R = XW + b − Y``; multinomial keeps the scores
``Z = XW + b`` and the probabilities ``P = softmax(Z)`` of the touched rows
(K exps per touched sample). Dense and sparse columns come as one compressed
view (:class:`cdlearn.data.CompressedView`); one compiled signature per dtype.
"""

import math

import numpy as np
from numba import njit

from cdlearn.multi_objectives import MULTINOMIAL, softmax_row
from cdlearn.penalties import soft_threshold
from cdlearn.penalties_group import block_soft_threshold
from cdlearn.sampling import draw

u64 = np.uint64


ARMIJO = 0.01  # sufficient-decrease fraction of the model decrease
MAX_HALVINGS = 10


@njit(cache=True)
def _block_gradient(data, indices, indptr, j, loss, labels, sw, Z, P, g, h):
    """``g = Σ_i x_ij s_i ∇φ(z_i)`` over column ``j`` and, for multinomial, the
    diagonal curvature ``h_k = Σ_i x_ij² s_i p_ik(1 − p_ik)`` (no 1/n)."""
    K = g.shape[0]
    for k in range(K):
        g[k] = 0.0
        h[k] = 0.0
    start, end = u64(indptr[j]), u64(indptr[j + 1])
    sparse = indices.shape[0] > 0
    if loss != MULTINOMIAL:
        for t in range(start, end):
            i = u64(indices[t]) if sparse else t - start
            xs = data[t] * sw[i]
            for k in range(K):
                g[k] += xs * Z[i, k]
        return
    for t in range(start, end):
        i = u64(indices[t]) if sparse else t - start
        x = data[t]
        xs = x * sw[i]
        xxs = x * xs
        for k in range(K):
            pk = P[i, k]
            g[k] += xs * pk
            h[k] += xxs * pk * (1.0 - pk)
        g[labels[i]] -= xs


@njit(cache=True)
def _block_apply(data, indices, indptr, j, loss, labels, sw, Z, P, lse, delta, scale):
    """``Z[i] += scale·x_ij δ`` over column ``j``; for multinomial refresh ``P[i]`` and
    ``lse[i]`` and return ``Σ_i s_i [φ(new z_i) − φ(old z_i)]`` (no 1/n)."""
    K = delta.shape[0]
    start, end = u64(indptr[j]), u64(indptr[j + 1])
    sparse = indices.shape[0] > 0
    change = 0.0
    for t in range(start, end):
        i = u64(indices[t]) if sparse else t - start
        x = scale * data[t]
        for k in range(K):
            Z[i, k] += x * delta[k]
        if loss == MULTINOMIAL:
            new = softmax_row(Z, P, i)
            change += sw[i] * (new - lse[i] - x * delta[labels[i]])
            lse[i] = new
    return change


@njit(cache=True)
def _penalty_row(W, j, l1, l2, group):
    K = W.shape[1]
    a = 0.0
    q = 0.0
    for k in range(K):
        a += W[j, k] * W[j, k] if group else abs(W[j, k])
        q += W[j, k] * W[j, k]
    return l1 * (math.sqrt(a) if group else a) + 0.5 * l2 * q


@njit(cache=True)
def block_prox(W, j, g, curv, l1, l2, group, out):
    """``out = argmin_u gᵀ(u − W_j) + ½ Σ_k curv_k (u_k − W_jk)² + Ψ(u) − W_j``.

    RCDC step (9) (``curv_k = L_j`` for every k); the row-group prox needs a
    constant curvature. ``g`` is ``∇_j f`` (with the 1/n). ``W`` is not modified;
    returns True when the step is nonzero.
    """
    K = g.shape[0]
    if group:
        lj = curv[0]
        for k in range(K):
            out[k] = lj * W[j, k] - g[k]
        block_soft_threshold(out, l1, out)
        for k in range(K):
            out[k] /= lj + l2
    else:
        for k in range(K):
            out[k] = soft_threshold(curv[k] * W[j, k] - g[k], l1) / (curv[k] + l2)
    moved = False
    for k in range(K):
        out[k] -= W[j, k]
        moved |= out[k] != 0.0
    return moved


@njit(cache=True)
def _block_step(data, indices, indptr, j, loss, labels, sw, Z, P, lse, W, lj, l1, l2,
                group, inv_n, gbuf, hbuf, ubuf):
    """One step on block ``W[j]`` (column ``j`` of the view); returns ``(moved, entries)``.

    Least squares: the exact block minimiser. Multinomial: first the proximal
    Newton step on the diagonal curvature ``h_k`` (the block's own, often far
    below the global bound ``L_j`` near the optimum), accepted by an Armijo test
    on the exact change of the objective (RCDC's analysis holds when ``F`` itself
    is minimised, its remark after Algorithm 1), halving up to ``MAX_HALVINGS``
    times; otherwise the RCDC step with ``L_j``, which always decreases ``F``.
    """
    K = W.shape[1]
    nnz = indptr[j + 1] - indptr[j]
    entries = nnz
    _block_gradient(data, indices, indptr, j, loss, labels, sw, Z, P, gbuf, hbuf)
    for k in range(K):
        gbuf[k] *= inv_n
        hbuf[k] = max(hbuf[k] * inv_n, 1e-12 * lj)
    if loss == MULTINOMIAL and not group:
        if not block_prox(W, j, gbuf, hbuf, l1, l2, group, ubuf):
            return False, entries
        pen_old = _penalty_row(W, j, l1, l2, group)
        t = 1.0
        for _ in range(MAX_HALVINGS):
            lin = 0.0
            for k in range(K):
                lin += gbuf[k] * ubuf[k]
                W[j, k] += t * ubuf[k]
            pen_change = _penalty_row(W, j, l1, l2, group) - pen_old
            change = _block_apply(data, indices, indptr, j, loss, labels, sw, Z, P, lse,
                                  ubuf, t) * inv_n + pen_change
            entries += nnz
            if change <= ARMIJO * (t * lin + pen_change):
                return True, entries
            for k in range(K):
                W[j, k] -= t * ubuf[k]
            _block_apply(data, indices, indptr, j, loss, labels, sw, Z, P, lse, ubuf, -t)
            entries += nnz
            t *= 0.5
            # the next trial moves W toward the prox point on the segment (still a descent
            # direction of the composite model, Tseng & Yun)
    for k in range(K):
        hbuf[k] = lj
    if not block_prox(W, j, gbuf, hbuf, l1, l2, group, ubuf):
        return False, entries
    for k in range(K):
        W[j, k] += ubuf[k]
    _block_apply(data, indices, indptr, j, loss, labels, sw, Z, P, lse, ubuf, 1.0)
    entries += nnz
    return True, entries


@njit(cache=True, nogil=True)
def multi_cd_epoch(data, indices, indptr, loss, labels, sw, Z, P, lse, W, lips, l1, l2,
                   group, mode, prob, alias, n_updates, rng, counter, gbuf, hbuf, ubuf,
                   ones, ones_indptr, intercept, intercept_lips):
    """Run ``n_updates`` block steps, then one intercept step if ``intercept_lips > 0``.

    ``Z`` is the residual ``XW + b − Y`` (least squares) or the scores ``XW + b``
    (multinomial, with ``P = softmax(Z)``, ``lse`` the row log-sum-exps and class
    indices ``labels``); a block with ``lips[j] = 0`` (empty column) is skipped.
    The intercepts ``intercept`` (shape (1, K)) are one more block, the
    unpenalised all-ones column (``ones``, ``ones_indptr = [0, n]``: a dense view)
    with ``L = β Σ s_i / n``. Returns ``(entries_touched, updates_made, counter)``;
    entries count each nonzero once per traversal (gradient, and each trial update).
    """
    d = W.shape[0]
    inv_n = 1.0 / Z.shape[0]
    entries = 0
    updates = 0
    empty = indices[:0]
    for _ in range(n_updates):
        j = draw(rng, mode, prob, alias, d, counter)
        counter += 1
        lj = lips[j]
        if lj == 0.0:
            continue
        moved, visited = _block_step(data, indices, indptr, j, loss, labels, sw, Z, P, lse,
                                     W, lj, l1, l2, group, inv_n, gbuf, hbuf, ubuf)
        entries += visited
        updates += moved
    if intercept_lips > 0.0:
        _, visited = _block_step(ones, empty, ones_indptr, 0, loss, labels, sw, Z, P, lse,
                                 intercept, intercept_lips, 0.0, 0.0, False, inv_n, gbuf,
                                 hbuf, ubuf)
        entries += visited
    return entries, updates, counter
