"""Primal randomized coordinate descent kernel (NSync / proximal RCD).

Implements face-off Algorithm 1 with the proximal coordinate step of the RCDC
paper (Algorithm 2 / Lasso Algorithm 4) for ``λ1|w_j| + λ2/2 w_j²``, serial or
τ-nice (``tau > 1``: the τ coordinates of a batch are computed from the same
margins, then applied together, as parallel CD does; ``lips`` must then hold
the ESO parameters). The margins ``z = Xw + b`` are kept up to date, so a step
costs O(nnz of its column).

``newton=True`` (serial sampling only) replaces the global curvature bound
``L_j`` by the local one ``h_j = 1/n Σ s_i φ''(z_i) X_ij²`` and accepts the
proximal Newton step after an Armijo test on the exact change of the
objective (Tseng & Yun's coordinate gradient descent, the step of liblinear's
CDN / newGLMNET), halving it until it passes. For the squared loss both steps
coincide with exact coordinate minimisation and no test is needed.
"""


from numba import njit

from cdlearn.losses import SQUARED, loss_change, loss_derivative, loss_second_derivative
from cdlearn.penalties import coordinate_prox_step
from cdlearn.sampling import draw, draw_without_replacement

from .views import slice_axpy

ARMIJO = 0.01  # sufficient-decrease fraction of the model decrease
MAX_HALVINGS = 30


@njit(cache=True)
def intercept_step(z, y, sw, loss_code, inv_n, intercept, intercept_lips):
    """One 1/L step on the unpenalised intercept, a virtual all-ones column.

    ``L = β Σ s_i / n``; updates ``intercept[0]`` and the margins, returns the
    entries touched (n).
    """
    n = z.shape[0]
    g = 0.0
    for i in range(n):
        g += sw[i] * loss_derivative(loss_code, z[i], y[i])
    delta = -g * inv_n / intercept_lips
    if delta != 0.0:
        intercept[0] += delta
        for i in range(n):
            z[i] += delta
    return n


@njit(cache=True)
def _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n):
    """∇_j of the data term: 1/n Σ_i s_i φ'(z_i) X_ij."""
    start, end = indptr[j], indptr[j + 1]
    g = 0.0
    if indices.shape[0] == 0:
        for k in range(start, end):
            i = k - start
            g += sw[i] * loss_derivative(loss_code, z[i], y[i]) * data[k]
    else:
        for k in range(start, end):
            i = indices[k]
            g += sw[i] * loss_derivative(loss_code, z[i], y[i]) * data[k]
    return g * inv_n


@njit(cache=True)
def _column_gradient_curvature(data, indices, indptr, j, z, y, sw, loss_code, inv_n):
    """(∇_j, h_j) of the data term: 1/n Σ s_i φ'(z_i) X_ij and 1/n Σ s_i φ''(z_i) X_ij²."""
    start, end = indptr[j], indptr[j + 1]
    dense = indices.shape[0] == 0
    g = 0.0
    h = 0.0
    for k in range(start, end):
        i = k - start if dense else indices[k]
        x = data[k]
        s = sw[i]
        g += s * loss_derivative(loss_code, z[i], y[i]) * x
        h += s * loss_second_derivative(loss_code, z[i], y[i]) * x * x
    return g * inv_n, h * inv_n


@njit(cache=True)
def _apply_and_measure(data, indices, indptr, j, z, y, sw, loss_code, inv_n, step):
    """z += step·X_j, returning 1/n Σ s_i [φ(new z_i) - φ(old z_i)] from the same traversal."""
    start, end = indptr[j], indptr[j + 1]
    dense = indices.shape[0] == 0
    acc = 0.0
    for k in range(start, end):
        i = k - start if dense else indices[k]
        dz = step * data[k]
        acc += sw[i] * loss_change(loss_code, z[i], dz, y[i])
        z[i] += dz
    return acc * inv_n


@njit(cache=True)
def _newton_step(data, indices, indptr, j, z, w, y, sw, loss_code, inv_n, lj, l1, l2):
    """Proximal Newton step on coordinate j with Armijo backtracking, applied in place.

    The trial step is applied to the margins while its loss change is summed
    (one traversal, as a plain update would need) and undone only when the
    Armijo test fails. Falls back to the safe 1/L_j step when the curvature
    vanishes or backtracking fails. Returns ``(delta, entries)``.
    """
    start, end = indptr[j], indptr[j + 1]
    nnz = end - start
    g, h = _column_gradient_curvature(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
    entries = nnz
    wj = w[j]
    if h >= 1e-12 * lj:
        delta = coordinate_prox_step(wj, g, h, l1, l2) - wj
        if delta == 0.0:
            return 0.0, entries
        pen_old = l1 * abs(wj) + 0.5 * l2 * wj * wj
        t = 1.0
        for _ in range(MAX_HALVINGS):
            wt = wj + t * delta
            pen_change = l1 * abs(wt) + 0.5 * l2 * wt * wt - pen_old
            model = t * g * delta + pen_change
            change = _apply_and_measure(data, indices, indptr, j, z, y, sw, loss_code, inv_n,
                                        t * delta) + pen_change
            if change <= ARMIJO * model:
                w[j] = wt
                return t * delta, entries
            slice_axpy(data, indices, indptr, j, -t * delta, z)
            entries += 2 * nnz
            t *= 0.5
    delta = coordinate_prox_step(wj, g, lj, l1, l2) - wj
    if delta != 0.0:
        w[j] += delta
        slice_axpy(data, indices, indptr, j, delta, z)
    return delta, entries


@njit(cache=True)
def primal_cd_epoch(
    data, indices, indptr, y, sw, z, w, lips, l1, l2, loss_code,
    mode, prob, alias, n_updates, rng, counter, tau, perm, deltas,
    intercept, intercept_lips, newton,
):
    """Run ``n_updates`` coordinate steps (then one intercept step if ``intercept_lips > 0``).

    Returns ``(entries_touched, updates_made, counter)``: entries are the
    nonzeros of every column visited once per coordinate step (the face-off
    paper's pass count; a rejected Newton trial adds the two traversals it
    wasted), updates the steps that moved their coordinate.
    """
    n = y.shape[0]
    d = w.shape[0]
    inv_n = 1.0 / n
    entries = 0
    updates = 0
    use_newton = newton and loss_code != SQUARED
    if tau <= 1:
        for _ in range(n_updates):
            j = draw(rng, mode, prob, alias, d, counter)
            counter += 1
            lj = lips[j]
            if lj == 0.0:  # empty column: nothing to learn, never divide by 0
                continue
            if use_newton:
                delta, visited = _newton_step(data, indices, indptr, j, z, w, y, sw,
                                              loss_code, inv_n, lj, l1, l2)
                entries += visited
                updates += delta != 0.0
                continue
            entries += indptr[j + 1] - indptr[j]
            g = _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
            delta = coordinate_prox_step(w[j], g, lj, l1, l2) - w[j]
            if delta != 0.0:
                w[j] += delta
                slice_axpy(data, indices, indptr, j, delta, z)
                updates += 1
    else:
        n_batches = max(1, n_updates // tau)
        for _ in range(n_batches):
            draw_without_replacement(rng, perm, tau)
            for t in range(tau):
                j = perm[t]
                lj = lips[j]
                deltas[t] = 0.0
                if lj == 0.0:
                    continue
                entries += indptr[j + 1] - indptr[j]
                g = _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
                deltas[t] = coordinate_prox_step(w[j], g, lj, l1, l2) - w[j]
            for t in range(tau):
                if deltas[t] != 0.0:
                    j = perm[t]
                    w[j] += deltas[t]
                    slice_axpy(data, indices, indptr, j, deltas[t], z)
                    updates += 1
    if intercept_lips > 0.0:
        entries += intercept_step(z, y, sw, loss_code, inv_n, intercept, intercept_lips)
    return entries, updates, counter

