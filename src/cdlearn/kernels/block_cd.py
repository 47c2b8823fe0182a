"""Randomized block coordinate descent kernel for the group lasso (RCDC Algorithm 1/2).

Block ``g`` (a group of features, columns ``index[ptr[g]:ptr[g+1]]`` of the CSC
view) is drawn with probability ``p_g`` (uniform: UCDC, Algorithm 2; alias
table: any other ``p``, e.g. the power law of eq. (55)), then updated by the
exact minimiser of the RCDC upper bound (8)-(9) with block norm
``‖t‖²_(g) = ⟨B_g t, t⟩``, ``B_g = I`` and block Lipschitz constant ``L_g``:

    x_g ← bst(x_g − ∇_g f(x)/L_g, λ w_g / L_g),   bst(v, t) = v·max(0, 1 − t/‖v‖)

(block soft-thresholding, the prox of ``λ w_g‖·‖₂``). The margins
``z = Xw + b`` are kept up to date, so a block step costs two traversals of
the block's columns (gradient, then update); counted once, as primal CD does.
"""

import math

from numba import njit

from cdlearn.penalties_group import block_soft_threshold
from cdlearn.sampling import draw

from .primal_cd import _column_gradient, intercept_step
from .views import slice_axpy


@njit(cache=True)
def block_cd_epoch(
    data, indices, indptr, y, sw, z, w, gptr, gidx, lips, thresholds, loss_code,
    mode, prob, alias, n_updates, rng, counter, vbuf, obuf, intercept, intercept_lips,
):
    """Run ``n_updates`` block steps (then one intercept step if ``intercept_lips > 0``).

    ``thresholds[g] = λ w_g``. Returns ``(entries_touched, updates_made, counter)``.
    """
    n = y.shape[0]
    G = gptr.shape[0] - 1
    inv_n = 1.0 / n
    entries = 0
    updates = 0
    for _ in range(n_updates):
        g = draw(rng, mode, prob, alias, G, counter)
        counter += 1
        lg = lips[g]
        if lg == 0.0:  # all-zero block: x_g = 0 is optimal, never divide by 0
            continue
        s = gptr[g]
        m = gptr[g + 1] - s
        for k in range(m):
            j = gidx[s + k]
            entries += indptr[j + 1] - indptr[j]
            grad = _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
            vbuf[k] = w[j] - grad / lg
        block_soft_threshold(vbuf[:m], thresholds[g] / lg, obuf[:m])
        moved = False
        for k in range(m):
            j = gidx[s + k]
            delta = obuf[k] - w[j]
            if delta != 0.0:
                w[j] = obuf[k]
                slice_axpy(data, indices, indptr, j, delta, z)
                moved = True
        updates += moved
    if intercept_lips > 0.0:
        entries += intercept_step(z, y, sw, loss_code, inv_n, intercept, intercept_lips)
    return entries, updates, counter


@njit(cache=True)
def block_metric_step(r, d, tau, out):
    """Minimise ``½ uᵀ diag(d) u − rᵀu + τ‖Q u‖`` in eigen-coordinates (``‖Qu‖ = ‖u‖``).

    This is RCDC's step (9) with a general block norm ``‖t‖²_(g) = ⟨B_g t, t⟩``, written
    for the new block ``u = x_g + t`` in the eigenbasis of ``M = L_g B_g = Q diag(d) Qᵀ``
    (``r = Qᵀ(M x_g − ∇_g f)``). ``u = 0`` iff ``‖r‖ ≤ τ``; otherwise
    ``u_k = r_k/(d_k + μ)`` with ``μ = τ/‖u‖``: with ``ν = 1/μ`` the function
    ``1/‖(r_k/(1 + d_k ν))_k‖ − 1/τ`` is increasing and concave (Moré & Sorensen's
    argument), so Newton started left of the root, at
    ``ν = (‖r‖ − τ)/(τ max d)``, converges monotonically (in one step when all ``d_k``
    are equal, i.e. ``B_g ∝ I``: block soft-thresholding). ``τ = 0`` (smooth case,
    RCDS Algorithm 3) gives ``u = M⁻¹ r``. Writes ``u`` into ``out``.
    """
    m = r.shape[0]
    nr = 0.0
    dmax = 0.0
    for k in range(m):
        nr += r[k] * r[k]
        dmax = max(dmax, d[k])
    nr = math.sqrt(nr)
    if tau == 0.0:
        for k in range(m):
            out[k] = r[k] / d[k]
        return
    if nr <= tau:
        for k in range(m):
            out[k] = 0.0
        return
    nu = (nr - tau) / (tau * dmax)
    for _ in range(100):
        s2 = 0.0
        s3 = 0.0
        for k in range(m):
            den = 1.0 + d[k] * nu
            p = r[k] / den
            s2 += p * p
            s3 += p * p * d[k] / den
        np_ = math.sqrt(s2)
        f = 1.0 / np_ - 1.0 / tau
        if f >= 0.0:
            break
        step = -f * np_ * np_ * np_ / s3
        nu += step
        if step <= 1e-15 * nu:
            break
    for k in range(m):
        out[k] = nu * r[k] / (1.0 + d[k] * nu)


@njit(cache=True)
def block_cd_metric_epoch(
    data, indices, indptr, y, sw, z, w, gptr, gidx, eig, qptr, qflat, thresholds, loss_code,
    mode, prob, alias, n_updates, rng, counter, gbuf, rbuf, ubuf, intercept, intercept_lips,
):
    """RCDC Algorithm 1 with block norms ``⟨B_g t, t⟩^½`` (``B_g`` diagonal or dense SPD).

    Block ``g`` holds ``M_g = L_g B_g = Q_g diag(eig_g) Q_gᵀ``: eigenvalues
    ``eig[gptr[g]:gptr[g+1]]``, eigenvectors ``qflat[qptr[g]:qptr[g+1]]`` (row-major
    ``|g|×|g|``). A block with ``eig = 0`` (all-zero columns) is skipped. One step costs the
    block's columns twice (gradient, update) plus ``O(|g|²)`` for the rotations. Returns
    ``(entries_touched, updates_made, counter)``.
    """
    n = y.shape[0]
    G = gptr.shape[0] - 1
    inv_n = 1.0 / n
    entries = 0
    updates = 0
    for _ in range(n_updates):
        g = draw(rng, mode, prob, alias, G, counter)
        counter += 1
        s = gptr[g]
        m = gptr[g + 1] - s
        if eig[s] == 0.0:
            continue
        q0 = qptr[g]
        for k in range(m):
            j = gidx[s + k]
            entries += indptr[j + 1] - indptr[j]
            gbuf[k] = _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
        # r = Qᵀ(M x − ∇) = diag(eig) Qᵀx − Qᵀ∇
        for a in range(m):
            qx = 0.0
            qg = 0.0
            for k in range(m):
                qka = qflat[q0 + k * m + a]
                qx += qka * w[gidx[s + k]]
                qg += qka * gbuf[k]
            rbuf[a] = eig[s + a] * qx - qg
        block_metric_step(rbuf[:m], eig[s:s + m], thresholds[g], ubuf[:m])
        moved = False
        for k in range(m):
            u = 0.0
            for a in range(m):
                u += qflat[q0 + k * m + a] * ubuf[a]
            j = gidx[s + k]
            delta = u - w[j]
            if delta != 0.0:
                w[j] = u
                slice_axpy(data, indices, indptr, j, delta, z)
                moved = True
        updates += moved
    if intercept_lips > 0.0:
        entries += intercept_step(z, y, sw, loss_code, inv_n, intercept, intercept_lips)
    return entries, updates, counter
