"""Coordinate descent on the Gram matrix for the squared loss ("gram-cd").

With ``G = XᵀS X/n`` (X centred when an intercept is fitted) and the gradient
``g = Gw - c`` (``c = XᵀS y/n``) kept up to date, a coordinate step reads
``g_j`` and ``G_jj`` and, when ``w_j`` moves by ``δ``, adds ``δ G[j]`` to ``g``:
O(d) per step and O(d²) per epoch, whatever n (scikit-learn's
``enet_coordinate_descent_gram``; Friedman, Hastie & Tibshirani 2010, JSS 33(1),
"covariance updates").
"""

from numba import njit

from cdlearn.penalties import coordinate_prox_step


@njit(cache=True, nogil=True)
def gram_cd_epoch(G, g, w, diag, l1, l2, positive):
    """One cyclic epoch over the coordinates with ``diag[j] > 0``; ``G`` C-ordered.

    Returns ``(entries, updates)``: ``d`` for the pass over ``g`` plus ``d`` per
    coordinate that moved (the row of G added to g).
    """
    d = w.shape[0]
    entries = d
    updates = 0
    for j in range(d):
        lj = diag[j]
        if lj <= 0.0:
            continue
        wj = w[j]
        delta = coordinate_prox_step(wj, g[j], lj, l1, l2, positive) - wj
        if delta != 0.0:
            w[j] = wj + delta
            for k in range(d):
                g[k] += delta * G[j, k]
            entries += d
            updates += 1
    return entries, updates
