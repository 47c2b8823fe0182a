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
