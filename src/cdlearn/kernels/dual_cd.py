"""Dual randomized coordinate ascent kernel (Quartz; SDCA is its serial case).

Implements face-off Algorithm 2 for ``λ g = λ1‖·‖₁ + λ2/2‖·‖²`` with λ2 > 0:
the dual keeps ``v = Xᵀα / (λ2 n)`` and the primal iterate
``w = ∇(λg)*(Xᵀα/n) = soft(v, λ1/λ2)`` (prox-SDCA's smoothed conjugate for the
elastic net; ``w = v`` for l2). A step on sample i maximises the ESO model of
the dual in α_i (closed form or Newton, :func:`dual_coordinate_maximizer`) or
takes the fixed step of face-off §7 for the logistic loss
(``Δ = η_i(-φ'(x_iᵀw) - α_i)``; the paper prints ``+φ'`` under its sign
convention ``α = φ'``, see :mod:`cdlearn.losses`, and its η omits the ``1/q_i``
of Quartz's update ``η_i = θ/q_i``, ``θ = min_j q_j λn/(βv_j + λn)``, without
which the step would be n times too short). Cost O(nnz of row i).
"""

from numba import njit

from cdlearn.losses import dual_coordinate_maximizer, loss_derivative
from cdlearn.penalties import soft_threshold
from cdlearn.sampling import draw, draw_without_replacement

from .views import slice_dot

EXACT_STEP, FIXED_STEP = 0, 1


@njit(cache=True)
def _dual_step(loss_code, step_mode, eta, a, z, y, c):
    if step_mode == FIXED_STEP:
        return a + eta * (-loss_derivative(loss_code, z, y) - a)
    return dual_coordinate_maximizer(loss_code, a, z, y, c)


@njit(cache=True)
def _apply_row(data, indices, indptr, i, scale, v, w, kappa):
    """v += scale·x_i and w = soft(v, κ) on the row's support."""
    start, end = indptr[i], indptr[i + 1]
    dense = indices.shape[0] == 0
    for k in range(start, end):
        j = k - start if dense else indices[k]
        v[j] += scale * data[k]
        w[j] = soft_threshold(v[j], kappa)


@njit(cache=True)
def dual_cd_epoch(
    data, indices, indptr, y, sw, alpha, v, w, eso, inv_l2n, kappa, loss_code,
    step_mode, eta, intercept, mode, prob, alias, n_updates, rng, counter, tau, perm, deltas,
):
    """Run ``n_updates`` dual coordinate steps on the row view.

    ``eso[i]`` is v_i of the ESO (‖x_i‖² for serial sampling), ``inv_l2n`` is
    ``1/(λ2 n)``, ``intercept`` a fixed offset added to every margin, ``eta``
    the per-sample fixed steps ``θ/q_i`` of Quartz (read only with FIXED_STEP).
    Returns ``(entries_touched, updates_made, counter)``.
    """
    n = y.shape[0]
    entries = 0
    updates = 0
    if tau <= 1:
        for _ in range(n_updates):
            i = draw(rng, mode, prob, alias, n, counter)
            counter += 1
            s = sw[i]
            if s == 0.0:
                continue
            entries += indptr[i + 1] - indptr[i]
            z = slice_dot(data, indices, indptr, i, w) + intercept
            a = alpha[i] / s
            eta_i = eta[i] if step_mode == FIXED_STEP else 0.0
            a_new = _dual_step(loss_code, step_mode, eta_i, a, z, y[i], s * eso[i] * inv_l2n)
            step = s * (a_new - a)
            if step != 0.0:
                alpha[i] += step
                _apply_row(data, indices, indptr, i, step * inv_l2n, v, w, kappa)
                updates += 1
    else:
        n_batches = max(1, n_updates // tau)
        for _ in range(n_batches):
            draw_without_replacement(rng, perm, tau)
            for t in range(tau):
                i = perm[t]
                s = sw[i]
                deltas[t] = 0.0
                if s == 0.0:
                    continue
                entries += indptr[i + 1] - indptr[i]
                z = slice_dot(data, indices, indptr, i, w) + intercept
                a = alpha[i] / s
                eta_i = eta[i] if step_mode == FIXED_STEP else 0.0
                a_new = _dual_step(loss_code, step_mode, eta_i, a, z, y[i], s * eso[i] * inv_l2n)
                deltas[t] = s * (a_new - a)
            for t in range(tau):
                if deltas[t] != 0.0:
                    i = perm[t]
                    alpha[i] += deltas[t]
                    _apply_row(data, indices, indptr, i, deltas[t] * inv_l2n, v, w, kappa)
                    updates += 1
    return entries, updates, counter
