"""Inner solver of working-set CD: cyclic proximal CD on a few columns, Anderson-extrapolated.

The coordinate steps are those of :mod:`cdlearn.kernels.primal_cd` (exact
prox step for the squared loss, proximal Newton with Armijo test otherwise,
the logistic one on cached error probabilities). Every ``K`` epochs the last
``K + 1`` iterates of the working-set coefficients are combined by Anderson
extrapolation (Bertrand & Massias 2021, "Anderson acceleration of coordinate
descent", AISTATS; as in celer/skglm): ``c = (UUᵀ)⁻¹1 / 1ᵀ(UUᵀ)⁻¹1`` with
``U`` the successive differences. The margins are extrapolated with the same
weights (``z`` is affine in ``(w, b)`` and ``Σ c = 1``), so no pass over the
columns is needed, and the point is accepted only if it lowers the objective.
"""

import numpy as np
from numba import njit

from cdlearn.losses import LOGISTIC, SQUARED, loss_derivative, loss_value
from cdlearn.penalties import coordinate_prox_step, coordinate_violation

from .primal_cd import (
    _column_gradient,
    _logistic_gradient_curvature,
    _logistic_newton_step,
    _newton_step,
    _residual_gradient,
    intercept_step,
    logistic_error_probabilities,
)
from .views import slice_axpy

u64 = np.uint64


@njit(cache=True)
def support_margins(data, indices, indptr, w, b, z):
    """z = Xw + b from the nonzero coefficients only (O(nnz of the support)).

    Called before every certificate: it drops the rounding that incremental
    and extrapolated updates of ``z`` accumulate. Returns the entries touched.
    """
    z[:] = b
    entries = 0
    for j in range(w.shape[0]):
        if w[j] != 0.0:
            slice_axpy(data, indices, indptr, j, w[j], z)
            entries += indptr[j + 1] - indptr[j]
    return entries


@njit(cache=True, fastmath={"reassoc", "nsz", "contract"})
def _dense_residual_dot(data, start, n, r):
    """Σ_i r_i X_ij over a dense column (unit weights).

    Reassociation lets LLVM split the sum into SIMD lanes: a serial sum is bound
    by the add latency (leu at λmax/100: 26 → 22 ms per solve). Still deterministic.
    """
    g = 0.0
    for i in range(n):
        g += r[i] * data[start + i]
    return g


@njit(cache=True)
def _coordinate_step(data, indices, indptr, j, z, perr, w, y, sw, unit, inv_n, lj, cube,
                     l1, l2, loss_code, positive):
    """One coordinate step on j, applied in place; returns ``(delta, entries)``.

    For the squared loss ``z`` is the residual ``Xw + b - y`` (see :func:`ws_inner_solve`).
    """
    if loss_code == SQUARED:  # exact minimisation, no line search
        if unit and indices.shape[0] == 0:
            g = _dense_residual_dot(data, u64(indptr[j]), u64(z.shape[0]), z) * inv_n
        else:
            g = _residual_gradient(data, indices, indptr, j, z, sw, unit) * inv_n
        wj = w[j]
        delta = coordinate_prox_step(wj, g, lj, l1, l2, positive) - wj
        if delta != 0.0:
            w[j] = wj + delta
            slice_axpy(data, indices, indptr, j, delta, z)
        return delta, indptr[j + 1] - indptr[j]
    if loss_code == LOGISTIC:
        return _logistic_newton_step(data, indices, indptr, j, z, perr, w, y, sw, inv_n, lj,
                                     cube[j], l1, l2, positive)
    return _newton_step(data, indices, indptr, j, z, w, y, sw, loss_code, inv_n, lj, l1, l2,
                        positive)


@njit(cache=True)
def _intercept_update(z, perr, y, sw, loss_code, inv_n, intercept, intercept_lips):
    """One 1/L step on the intercept (exact for the squared loss); returns entries (n)."""
    n = z.shape[0]
    if loss_code != LOGISTIC:
        return intercept_step(z, y, sw, loss_code, inv_n, intercept, intercept_lips)
    g = 0.0
    for i in range(n):
        g -= sw[i] * y[i] * perr[i]
    delta = -g * inv_n / intercept_lips
    if delta != 0.0:
        intercept[0] += delta
        for i in range(n):
            z[i] += delta
        logistic_error_probabilities(z, y, perr)
    return n


@njit(cache=True)
def ws_violation(data, indices, indptr, ws, z, perr, w, y, sw, unit, inv_n, l1, l2,
                 loss_code, fit_intercept, positive):
    """max over the working set (and the intercept) of dist(-∇_j f, λ∂g_j(w_j)).

    Returns ``(violation, entries)``.
    """
    viol = 0.0
    entries = 0
    for t in range(ws.shape[0]):
        j = ws[t]
        entries += indptr[j + 1] - indptr[j]
        if loss_code == SQUARED:  # z is the residual
            g = _residual_gradient(data, indices, indptr, j, z, sw, unit) * inv_n
        elif loss_code == LOGISTIC:
            g = _logistic_gradient_curvature(data, indices, indptr, j, y, sw, perr)[0] * inv_n
        else:
            g = _column_gradient(data, indices, indptr, j, z, y, sw, loss_code, inv_n)
        viol = max(viol, coordinate_violation(w[j], g, l1, l2, positive))
    if fit_intercept:
        gb = 0.0
        for i in range(z.shape[0]):
            gb += sw[i] * loss_derivative(loss_code, z[i], y[i])
        viol = max(viol, abs(gb) * inv_n)
    return viol, entries


@njit(cache=True)
def _ws_objective(z, y, sw, w, ws, l1, l2, loss_code, inv_n):
    """Loss plus the penalty of the working-set coefficients (all others are 0)."""
    acc = 0.0
    for i in range(z.shape[0]):
        if sw[i] != 0.0:
            acc += sw[i] * loss_value(loss_code, z[i], y[i])
    pen = 0.0
    for t in range(ws.shape[0]):
        v = w[ws[t]]
        pen += l1 * abs(v) + 0.5 * l2 * v * v
    return acc * inv_n + pen


@njit(cache=True)
def _anderson_weights(w_hist, k):
    """c ∝ (UUᵀ)⁻¹1 with U_r = w_hist[r+1] - w_hist[r], r < k; None-like (ok=False)
    when the Gram matrix is singular. Gaussian elimination with partial pivoting."""
    m = w_hist.shape[1]
    G = np.zeros((k, k + 1))  # augmented [UUᵀ | 1]
    for r in range(k):
        for s in range(r, k):
            acc = 0.0
            for t in range(m):
                acc += (w_hist[r + 1, t] - w_hist[r, t]) * (w_hist[s + 1, t] - w_hist[s, t])
            G[r, s] = acc
            G[s, r] = acc
        G[r, k] = 1.0
    c = np.zeros(k)
    for col in range(k):
        piv = col
        for r in range(col + 1, k):
            if abs(G[r, col]) > abs(G[piv, col]):
                piv = r
        if not abs(G[piv, col]) > 0.0:
            return c, False
        if piv != col:
            for s in range(k + 1):
                G[col, s], G[piv, s] = G[piv, s], G[col, s]
        for r in range(col + 1, k):
            f = G[r, col] / G[col, col]
            for s in range(col, k + 1):
                G[r, s] -= f * G[col, s]
    for r in range(k - 1, -1, -1):
        acc = G[r, k]
        for s in range(r + 1, k):
            acc -= G[r, s] * c[s]
        c[r] = acc / G[r, r]
    total = c.sum()
    if not (np.isfinite(total) and total != 0.0):
        return c, False
    return c / total, True


@njit(cache=True)
def _copy(src, dst):
    # a loop, not ``dst[:] = src``: numba's shape check of a slice assignment builds
    # its error message with string formatting, ~30 more functions to compile
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True)
def _store(w_hist, z_hist, b_hist, slot, w, ws, z, b):
    for t in range(ws.shape[0]):
        w_hist[slot, t] = w[ws[t]]
    _copy(z, z_hist[slot])
    b_hist[slot] = b


@njit(cache=True)
def _try_anderson(w_hist, z_hist, b_hist, k, w, ws, z, perr, y, sw, intercept, l1, l2,
                  loss_code, inv_n, z_buf, positive):
    """Extrapolate from the k+1 stored iterates (the last one is the current point);
    keep the extrapolated point if it lowers the objective (and, with ``positive``,
    stays in w ≥ 0). Returns True if accepted."""
    c, ok = _anderson_weights(w_hist, k)
    if not ok:
        return False
    if positive:
        for t in range(ws.shape[0]):
            acc = 0.0
            for r in range(k):
                acc += c[r] * w_hist[r + 1, t]
            if acc < 0.0:
                return False
    n = z.shape[0]
    for i in range(n):
        acc = 0.0
        for r in range(k):
            acc += c[r] * z_hist[r + 1, i]
        z_buf[i] = acc
    b_new = 0.0
    for r in range(k):
        b_new += c[r] * b_hist[r + 1]
    old = _ws_objective(z, y, sw, w, ws, l1, l2, loss_code, inv_n)
    # write the candidate coefficients into w (undone below if rejected)
    for t in range(ws.shape[0]):
        acc = 0.0
        for r in range(k):
            acc += c[r] * w_hist[r + 1, t]
        w[ws[t]] = acc
    new = _ws_objective(z_buf, y, sw, w, ws, l1, l2, loss_code, inv_n)
    if new < old:
        _copy(z_buf, z)
        intercept[0] = b_new
        if loss_code == LOGISTIC:
            logistic_error_probabilities(z, y, perr)
        return True
    for t in range(ws.shape[0]):
        w[ws[t]] = w_hist[k, t]
    return False


@njit(cache=True, nogil=True)
def ws_inner_solve(data, indices, indptr, ws, y, sw, unit, z, perr, w, lips, cube, l1, l2,
                   loss_code, intercept, intercept_lips, fit_intercept, tol_in, max_epochs,
                   k, w_hist, z_hist, b_hist, z_buf, check_every, positive):
    """Cyclic CD over the columns ``ws`` until their violation is ≤ ``tol_in``.

    For the squared loss, ``z`` holds the residual ``Xw + b - y`` and ``y`` is
    zero: a step gathers one vector instead of two (as primal CD's squared
    kernel; the objective and the intercept step are unchanged in that form).

    ``k`` = Anderson window (0: none); ``w_hist`` (k+1, |ws|), ``z_hist``
    (k+1, n), ``b_hist`` (k+1,) and ``z_buf`` (n,) are scratch. The violation
    is measured every ``check_every`` epochs (and after the first one); an
    epoch that moves nothing also ends the solve. ``positive``: the steps are
    clipped at 0 and extrapolated points outside w ≥ 0 rejected.
    Returns ``(entries, updates, epochs, anderson_tried, anderson_accepted,
    violation)``; entries count the columns' nonzeros per visit, line-search
    traversals, violation checks, and n per intercept step.
    """
    n = y.shape[0]
    inv_n = 1.0 / n
    entries = 0
    updates = 0
    tried = 0
    accepted = 0
    filled = 0
    viol = np.inf
    epoch = 0
    if k > 0:
        # slot int64(0), not 0: a literal argument compiles a second _store
        _store(w_hist, z_hist, b_hist, np.int64(0), w, ws, z, intercept[0])
        filled = 1
    for epoch in range(1, max_epochs + 1):
        before = updates
        b_before = intercept[0]
        for t in range(ws.shape[0]):
            j = ws[t]
            lj = lips[j]
            if lj == 0.0:  # empty column
                continue
            delta, visited = _coordinate_step(data, indices, indptr, j, z, perr, w, y, sw,
                                              unit, inv_n, lj, cube, l1, l2, loss_code,
                                              positive)
            entries += visited
            updates += delta != 0.0
        if intercept_lips > 0.0:
            entries += _intercept_update(z, perr, y, sw, loss_code, inv_n, intercept,
                                         intercept_lips)
        if k > 0:
            _store(w_hist, z_hist, b_hist, filled, w, ws, z, intercept[0])
            filled += 1
            if filled == k + 1:
                tried += 1
                if _try_anderson(w_hist, z_hist, b_hist, k, w, ws, z, perr, y, sw,
                                 intercept, l1, l2, loss_code, inv_n, z_buf, positive):
                    accepted += 1
                # the window restarts from the current (possibly extrapolated) point
                _store(w_hist, z_hist, b_hist, np.int64(0), w, ws, z, intercept[0])
                filled = 1
        if updates == before and intercept[0] == b_before:
            # a fixed point in floating point (tol_in below rounding): nothing to gain
            viol, visited = ws_violation(data, indices, indptr, ws, z, perr, w, y, sw, unit,
                                         inv_n, l1, l2, loss_code, fit_intercept, positive)
            entries += visited
            break
        if epoch == 1 or epoch % check_every == 0:
            viol, visited = ws_violation(data, indices, indptr, ws, z, perr, w, y, sw, unit,
                                         inv_n, l1, l2, loss_code, fit_intercept, positive)
            entries += visited
            if viol <= tol_in:
                break
    return entries, updates, epoch, tried, accepted, viol
