"""Primal CD with q-shrinking sampling (RCDC paper §6.1, "Speedup by shrinking").

From iteration ``k0`` on, coordinate ``i`` is drawn with probability

    p̂_k^(i)(q) = (1 − q)/d + q/‖w_k‖₀ · [w_k^(i) ≠ 0],

i.e. with probability ``1 − q`` uniformly from all ``d`` coordinates and with
probability ``q`` uniformly from the support of the current iterate
(uniformly from all while the support is empty, and before ``k0``). The
support is kept incrementally in two arrays -- ``supp[:n_supp]`` lists it and
``pos[j]`` is the slot of ``j`` in ``supp`` or −1 -- with O(1) insertion and
swap-removal after each step, so a draw stays O(1).

The coordinate step is primal CD's (exact prox step for the squared loss,
i.e. Lasso Algorithm 4; proximal Newton with Armijo for the other losses when
``newton``; the fixed ``1/L_j`` prox step otherwise).

Steps whose draw does not depend on the support (q = 0, i.e. UCDC, and every
step before ``k0``) go through primal CD's two-ahead draw pipeline
(:func:`~cdlearn.kernels.views.step_ahead`): the same draws in the same order,
so the same iterates, with the random column's cache misses overlapped with the
current step, and at the end of a step the next column's first 16 rows of the
residual are prefetched (rcdc-table5, m = 10⁷, n = 10⁶, 10 nonzeros per column:
~1,000 → ~500 ns per step; benchmarks/rcdc_step_ab.py).
"""

from numba import njit

from cdlearn.losses import SQUARED
from cdlearn.penalties import coordinate_prox_step
from cdlearn.sampling import UNIFORM, next_double, next_index

from .primal_cd import _column_gradient, _newton_step, intercept_step
from .views import first_draws, prefetch, slice_axpy, step_ahead


@njit(cache=True)
def update_support(j, wj, supp, pos, n_supp):
    """Keep ``supp[:n_supp[0]]`` = {j : w_j ≠ 0} after w_j changed to ``wj``."""
    if wj != 0.0:
        if pos[j] < 0:
            pos[j] = n_supp[0]
            supp[n_supp[0]] = j
            n_supp[0] += 1
    elif pos[j] >= 0:
        last = supp[n_supp[0] - 1]
        slot = pos[j]
        supp[slot] = last
        pos[last] = slot
        pos[j] = -1
        n_supp[0] -= 1


@njit(cache=True)
def rebuild_support(w, supp, pos, n_supp):
    """Build the support arrays from scratch (after a warm start or a restore)."""
    k = 0
    for j in range(w.shape[0]):
        if w[j] != 0.0:
            supp[k] = j
            pos[j] = k
            k += 1
        else:
            pos[j] = -1
    n_supp[0] = k


@njit(cache=True, nogil=True)
def primal_cd_shrinking_epoch(
    data, indices, indptr, y, sw, z, w, lips, l1, l2, loss_code, n_updates, rng, counter,
    q, start, supp, pos, n_supp, intercept, intercept_lips, newton,
):
    """``n_updates`` q-shrinking coordinate steps (``counter`` = steps so far, ``start`` = k0).

    Returns ``(entries_touched, updates_made, counter)`` as :func:`primal_cd_epoch`.
    """
    n = y.shape[0]
    d = w.shape[0]
    inv_n = 1.0 / n
    entries = 0
    updates = 0
    use_newton = newton and loss_code != SQUARED
    # draws independent of the support: all of them for q = 0, else those before k0
    plain = n_updates if q == 0.0 else min(n_updates, max(0, start - counter))
    j_next, j_after = first_draws(rng, UNIFORM, lips, supp, d, counter, plain)
    for it in range(plain):
        j, j_next, j_after = step_ahead(rng, UNIFORM, lips, supp, d, counter, it, plain,
                                         j_next, j_after, data, indices, indptr, lips)
        if it + 2 < plain:
            prefetch(w, j_after)
            prefetch(pos, j_after)
        counter += 1
        visited, moved = _step(data, indices, indptr, y, sw, z, w, lips, l1, l2, loss_code,
                               inv_n, use_newton, j, supp, pos, n_supp)
        entries += visited
        updates += moved
        if it + 1 < plain and indices.shape[0] > 0:
            # the next column's row indices were prefetched at the start of this step and
            # have had the step's time to arrive: prefetch the rows of z they point to
            head = indptr[j_next]  # (`start` is k0, the shrinking threshold)
            for k in range(head, min(indptr[j_next + 1], head + 16)):
                prefetch(z, indices[k])
    for _ in range(n_updates - plain):
        if n_supp[0] > 0 and next_double(rng) < q:
            j = supp[next_index(rng, n_supp[0])]
        else:
            j = next_index(rng, d)
        counter += 1
        visited, moved = _step(data, indices, indptr, y, sw, z, w, lips, l1, l2, loss_code,
                               inv_n, use_newton, j, supp, pos, n_supp)
        entries += visited
        updates += moved
    if intercept_lips > 0.0:
        entries += intercept_step(z, y, sw, loss_code, inv_n, intercept, intercept_lips)
    return entries, updates, counter


@njit(cache=True)
def _step(data, indices, indptr, y, sw, z, w, lips, l1, l2, loss_code, inv_n, use_newton, j,
          supp, pos, n_supp):
    """One coordinate step on ``j`` with the support kept: ``(entries visited, 1 if moved)``."""
    lj = lips[j]
    if lj == 0.0:
        return 0, 0
    if use_newton:
        delta, visited = _newton_step(data, indices, indptr, j, z, w, y, sw, loss_code, inv_n,
                                      lj, l1, l2)
        if delta == 0.0:
            return visited, 0
        update_support(j, w[j], supp, pos, n_supp)
        return visited, 1
    visited = indptr[j + 1] - indptr[j]
    g = _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
    delta = coordinate_prox_step(w[j], g, lj, l1, l2) - w[j]
    if delta == 0.0:
        return visited, 0
    w[j] += delta
    slice_axpy(data, indices, indptr, j, delta, z)
    update_support(j, w[j], supp, pos, n_supp)
    return visited, 1
