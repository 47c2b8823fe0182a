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

Two kernels, :func:`ws_inner_solve_squared` and :func:`ws_inner_solve` (the
other losses), sharing the extrapolation helpers: numba compiles every function
a kernel can reach, whatever the loss code at run time, so one kernel for all
losses made a Lasso's first fit compile the logistic and Newton steps too
(issue 22: 61 functions, ~20 s of compilation with an empty cache).
"""

import math

import numpy as np
from numba import njit

from cdlearn.losses import LOGISTIC, loss_derivative, loss_value
from cdlearn.penalties import coordinate_prox_step, coordinate_violation

from .primal_cd import (
    _column_gradient,
    _logistic_gradient_curvature,
    _logistic_newton_step,
    _newton_step,
    _residual_gradient,
    logistic_error_probabilities,
    primal_cd_squared_epoch,
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


# ------------------------------------------------------------------ squared loss
@njit(cache=True)
def _squared_step(data, indices, indptr, j, r, w, sw, unit, inv_n, lj, l1, l2, positive):
    """Exact minimisation along j (no line search), applied to ``w`` and the residual
    ``r``; returns ``(delta, entries)``."""
    g = _residual_gradient(data, indices, indptr, j, r, sw, unit) * inv_n
    wj = w[j]
    delta = coordinate_prox_step(wj, g, lj, l1, l2, positive) - wj
    if delta != 0.0:
        w[j] = wj + delta
        slice_axpy(data, indices, indptr, j, delta, r)
    return delta, indptr[j + 1] - indptr[j]


@njit(cache=True)
def _weighted_sum(sw, r):
    acc = 0.0
    for i in range(r.shape[0]):
        acc += sw[i] * r[i]
    return acc


@njit(cache=True)
def _squared_intercept_update(r, sw, inv_n, intercept, intercept_lips):
    """The exact intercept step (``L = Σ s_i / n``), applied to ``r``; returns n."""
    delta = -_weighted_sum(sw, r) * inv_n / intercept_lips
    if delta != 0.0:
        intercept[0] += delta
        for i in range(r.shape[0]):
            r[i] += delta
    return r.shape[0]


@njit(cache=True)
def _squared_violation(data, indices, indptr, ws, r, w, sw, unit, inv_n, l1, l2,
                       fit_intercept, positive):
    """:func:`ws_violation` of the squared loss, from the residual ``r``."""
    viol = 0.0
    entries = 0
    for t in range(ws.shape[0]):
        j = ws[t]
        entries += indptr[j + 1] - indptr[j]
        g = _residual_gradient(data, indices, indptr, j, r, sw, unit) * inv_n
        viol = max(viol, coordinate_violation(w[j], g, l1, l2, positive))
    if fit_intercept:
        viol = max(viol, abs(_weighted_sum(sw, r)) * inv_n)
    return viol, entries


@njit(cache=True)
def _ws_penalty(w, ws, l1, l2):
    pen = 0.0
    for t in range(ws.shape[0]):
        v = w[ws[t]]
        pen += l1 * abs(v) + 0.5 * l2 * v * v
    return pen


@njit(cache=True)
def _squared_objective(r, sw, w, ws, l1, l2, inv_n):
    acc = 0.0
    for i in range(r.shape[0]):
        acc += sw[i] * (0.5 * r[i] * r[i])
    return acc * inv_n + _ws_penalty(w, ws, l1, l2)


# ------------------------------------------------------------------ other losses
@njit(cache=True)
def _coordinate_step(data, indices, indptr, j, z, perr, w, y, sw, inv_n, lj, cube,
                     l1, l2, loss_code, positive):
    """One proximal Newton step on j, applied in place; returns ``(delta, entries)``."""
    if loss_code == LOGISTIC:
        return _logistic_newton_step(data, indices, indptr, j, z, perr, w, y, sw, inv_n, lj,
                                     cube[j], l1, l2, positive)
    return _newton_step(data, indices, indptr, j, z, w, y, sw, loss_code, inv_n, lj, l1, l2,
                        positive)


@njit(cache=True)
def _intercept_update(z, perr, y, sw, loss_code, inv_n, intercept, intercept_lips):
    """One 1/L step on the intercept; returns entries (n)."""
    n = z.shape[0]
    g = 0.0
    if loss_code == LOGISTIC:  # φ' = -y p from the cache
        for i in range(n):
            g -= sw[i] * y[i] * perr[i]
    else:
        for i in range(n):
            g += sw[i] * loss_derivative(loss_code, z[i], y[i])
    delta = -g * inv_n / intercept_lips
    if delta != 0.0:
        intercept[0] += delta
        for i in range(n):
            z[i] += delta
        if loss_code == LOGISTIC:
            logistic_error_probabilities(z, y, perr)
    return n


@njit(cache=True)
def ws_violation(data, indices, indptr, ws, z, perr, w, y, sw, inv_n, l1, l2,
                 loss_code, fit_intercept, positive):
    """max over the working set (and the intercept) of dist(-∇_j f, λ∂g_j(w_j)).

    Returns ``(violation, entries)``.
    """
    viol = 0.0
    entries = 0
    for t in range(ws.shape[0]):
        j = ws[t]
        entries += indptr[j + 1] - indptr[j]
        if loss_code == LOGISTIC:
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
    return acc * inv_n + _ws_penalty(w, ws, l1, l2)


# ------------------------------------------------------------------ extrapolation
@njit(cache=True)
def _anderson_weights(w_hist, k):
    """c ∝ (UUᵀ)⁻¹1 with U_r = w_hist[r+1] - w_hist[r], r < k; None-like (ok=False)
    when the Gram matrix is singular. Gaussian elimination with partial pivoting.

    Loops rather than array expressions (``c.sum()``, ``c / total``): each of those
    is one more numba function to compile on a first fit."""
    m = w_hist.shape[1]
    G = np.empty((k, k + 1))  # augmented [UUᵀ | 1], every entry written below
    for r in range(k):
        for s in range(r, k):
            acc = 0.0
            for t in range(m):
                acc += (w_hist[r + 1, t] - w_hist[r, t]) * (w_hist[s + 1, t] - w_hist[s, t])
            G[r, s] = acc
            G[s, r] = acc
        G[r, k] = 1.0
    c = np.empty(k)
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
    total = 0.0
    for r in range(k):
        total += c[r]
    if not (math.isfinite(total) and total != 0.0):
        return c, False
    for r in range(k):
        c[r] /= total
    return c, True


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
def _extrapolate(w_hist, z_hist, b_hist, k, w, ws, z_buf, positive):
    """Write the extrapolation of the k+1 stored iterates into ``w`` (working set) and
    ``z_buf``; returns ``(ok, b)``, ``ok`` False (nothing written) if the weights do
    not exist or, with ``positive``, the point leaves w ≥ 0. The caller keeps it if
    it lowers the objective, else undoes it with :func:`_undo`."""
    c, ok = _anderson_weights(w_hist, k)
    if not ok:
        return False, 0.0
    if positive:
        for t in range(ws.shape[0]):
            acc = 0.0
            for r in range(k):
                acc += c[r] * w_hist[r + 1, t]
            if acc < 0.0:
                return False, 0.0
    for i in range(z_buf.shape[0]):
        acc = 0.0
        for r in range(k):
            acc += c[r] * z_hist[r + 1, i]
        z_buf[i] = acc
    b = 0.0
    for r in range(k):
        b += c[r] * b_hist[r + 1]
    for t in range(ws.shape[0]):
        acc = 0.0
        for r in range(k):
            acc += c[r] * w_hist[r + 1, t]
        w[ws[t]] = acc
    return True, b


@njit(cache=True)
def _undo(w_hist, k, w, ws):
    for t in range(ws.shape[0]):
        w[ws[t]] = w_hist[k, t]


@njit(cache=True)
def squared_anderson_window(w_hist, r_hist, b_hist, filled, w, ws, r, intercept, sw, l1, l2,
                            positive, r_buf):
    """Store the iterate (``w`` on ``ws``, residual ``r``, ``intercept[0]``) in slot
    ``filled`` of the window; once it holds ``k + 1`` iterates, extrapolate, keep the
    point if it lowers the squared loss's objective (else undo) and restart the window
    from the current point. Returns ``(filled, tried, accepted)``."""
    k = w_hist.shape[0] - 1
    _store(w_hist, r_hist, b_hist, filled, w, ws, r, intercept[0])
    filled += 1
    if filled <= k:
        return filled, False, False
    inv_n = 1.0 / r.shape[0]
    old = _squared_objective(r, sw, w, ws, l1, l2, inv_n)
    ok, b = _extrapolate(w_hist, r_hist, b_hist, k, w, ws, r_buf, positive)
    accepted = False
    if ok:
        if _squared_objective(r_buf, sw, w, ws, l1, l2, inv_n) < old:
            _copy(r_buf, r)
            intercept[0] = b
            accepted = True
        else:
            _undo(w_hist, k, w, ws)
    # the window restarts from the current (possibly extrapolated) point
    _store(w_hist, r_hist, b_hist, np.int64(0), w, ws, r, intercept[0])
    return np.int64(1), True, accepted


@njit(cache=True, nogil=True)
def primal_cd_squared_epochs(data, indices, indptr, sw, unit, r, w, lips, l1, l2, mode, prob,
                             alias, n_updates, rng, counter, intercept, intercept_lips,
                             positive, n_epochs, w_hist, r_hist, b_hist, r_new, cols, filled):
    """``n_epochs`` epochs of :func:`~cdlearn.kernels.primal_cd.primal_cd_squared_epoch`,
    each followed by :func:`squared_anderson_window` when the window has slots
    (``w_hist.shape[0] > 1``): the iterates of as many Python calls of the two, in one
    dispatch (plain CD's epochs cost ~60 µs at 500 × 600; the Python around each, ~12).
    Returns ``(entries, last_entries, updates, counter, filled, tried, accepted)``."""
    anderson = w_hist.shape[0] > 1
    entries = 0
    last = 0
    updates = 0
    tried = 0
    accepted = 0
    for _ in range(n_epochs):
        if anderson and filled == 0:  # the window starts at the point before this epoch
            _store(w_hist, r_hist, b_hist, np.int64(0), w, cols, r, intercept[0])
            filled = 1
        last, done, counter = primal_cd_squared_epoch(
            data, indices, indptr, sw, unit, r, w, lips, l1, l2, mode, prob, alias,
            n_updates, rng, counter, intercept, intercept_lips, positive)
        entries += last
        updates += done
        if anderson:
            filled, step_tried, step_accepted = squared_anderson_window(
                w_hist, r_hist, b_hist, filled, w, cols, r, intercept, sw, l1, l2, positive,
                r_new)
            tried += step_tried
            accepted += step_accepted
    return entries, last, updates, counter, filled, tried, accepted


# ------------------------------------------------------------------ the kernels
@njit(cache=True, nogil=True)
def ws_inner_solve_squared(data, indices, indptr, ws, sw, unit, r, w, lips, l1, l2,
                           intercept, intercept_lips, fit_intercept, tol_in, max_epochs,
                           k, w_hist, z_hist, b_hist, z_buf, check_every, positive):
    """:func:`ws_inner_solve` for the squared loss, on the residual ``r = Xw + b - y``:
    a step gathers one vector instead of two (as primal CD's squared kernel)."""
    inv_n = 1.0 / r.shape[0]
    entries = 0
    updates = 0
    tried = 0
    accepted = 0
    filled = 0
    viol = np.inf
    epoch = 0
    if k > 0:
        # slot int64(0), not 0: a literal argument compiles a second _store
        _store(w_hist, z_hist, b_hist, np.int64(0), w, ws, r, intercept[0])
        filled = 1
    for epoch in range(1, max_epochs + 1):
        before = updates
        b_before = intercept[0]
        for t in range(ws.shape[0]):
            j = ws[t]
            lj = lips[j]
            if lj == 0.0:  # empty column
                continue
            delta, visited = _squared_step(data, indices, indptr, j, r, w, sw, unit, inv_n,
                                           lj, l1, l2, positive)
            entries += visited
            updates += delta != 0.0
        if intercept_lips > 0.0:
            entries += _squared_intercept_update(r, sw, inv_n, intercept, intercept_lips)
        if k > 0:
            filled, step_tried, step_accepted = squared_anderson_window(
                w_hist, z_hist, b_hist, filled, w, ws, r, intercept, sw, l1, l2, positive,
                z_buf)
            tried += step_tried
            accepted += step_accepted
        # an epoch that moved nothing is a fixed point in floating point (tol_in below
        # rounding): nothing to gain
        still = updates == before and intercept[0] == b_before
        if still or epoch == 1 or epoch % check_every == 0:
            viol, visited = _squared_violation(data, indices, indptr, ws, r, w, sw, unit,
                                               inv_n, l1, l2, fit_intercept, positive)
            entries += visited
            if still or viol <= tol_in:
                break
    return entries, updates, epoch, tried, accepted, viol


@njit(cache=True, nogil=True)
def ws_inner_solve(data, indices, indptr, ws, y, sw, z, perr, w, lips, cube, l1, l2,
                   loss_code, intercept, intercept_lips, fit_intercept, tol_in, max_epochs,
                   k, w_hist, z_hist, b_hist, z_buf, check_every, positive):
    """Cyclic CD over the columns ``ws`` until their violation is ≤ ``tol_in``
    (any loss but the squared one: :func:`ws_inner_solve_squared`).

    ``perr`` holds σ(-y z) for the logistic loss (else unused), ``cube`` its
    column bounds. ``k`` = Anderson window (0: none); ``w_hist`` (k+1, |ws|),
    ``z_hist`` (k+1, n), ``b_hist`` (k+1,) and ``z_buf`` (n,) are scratch. The
    violation is measured every ``check_every`` epochs (and after the first
    one); an epoch that moves nothing also ends the solve. ``positive``: the
    steps are clipped at 0 and extrapolated points outside w ≥ 0 rejected.
    Returns ``(entries, updates, epochs, anderson_tried, anderson_accepted,
    violation)``; entries count the columns' nonzeros per visit, line-search
    traversals, violation checks, and n per intercept step.
    """
    inv_n = 1.0 / y.shape[0]
    entries = 0
    updates = 0
    tried = 0
    accepted = 0
    filled = 0
    viol = np.inf
    epoch = 0
    if k > 0:
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
                                              inv_n, lj, cube, l1, l2, loss_code, positive)
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
                old = _ws_objective(z, y, sw, w, ws, l1, l2, loss_code, inv_n)
                ok, b = _extrapolate(w_hist, z_hist, b_hist, k, w, ws, z_buf, positive)
                if ok:
                    if _ws_objective(z_buf, y, sw, w, ws, l1, l2, loss_code, inv_n) < old:
                        _copy(z_buf, z)
                        intercept[0] = b
                        if loss_code == LOGISTIC:
                            logistic_error_probabilities(z, y, perr)
                        accepted += 1
                    else:
                        _undo(w_hist, k, w, ws)
                _store(w_hist, z_hist, b_hist, np.int64(0), w, ws, z, intercept[0])
                filled = 1
        still = updates == before and intercept[0] == b_before
        if still or epoch == 1 or epoch % check_every == 0:
            viol, visited = ws_violation(data, indices, indptr, ws, z, perr, w, y, sw, inv_n,
                                         l1, l2, loss_code, fit_intercept, positive)
            entries += visited
            if still or viol <= tol_in:
                break
    return entries, updates, epoch, tried, accepted, viol
