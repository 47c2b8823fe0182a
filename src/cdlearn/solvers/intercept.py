"""Exact minimisation of the objective over an unpenalised intercept.

``b* = argmin_b Σ_i s_i φ(z_i + b, y_i)`` for fixed margins ``z = Xw``: the
derivative ``Σ s_i φ'(z_i + b)`` is non-decreasing in ``b``, so a bracketed
Newton method (bisection where the curvature vanishes, as for the hinge) finds
the root to machine precision in O(n) per iteration.
"""

import math

import numpy as np
from numba import njit

from ..data import SMALL_ARRAY
from ..losses import (
    SQUARED,
    loss_derivative,
    loss_derivatives,
    loss_derivatives_np,
    loss_second_derivative,
    loss_second_derivatives_np,
)
from ..objectives import certificate_from_margins, primal_value
from ..penalties import coordinate_violations


def _slope_and_curvature(code, z, y, sw, b):
    """``(Σ s_i φ'(z_i + b), Σ s_i φ''(z_i + b))``: numpy on small arrays, else the loop."""
    if z.shape[0] > SMALL_ARRAY:
        return _slope_and_curvature_loop(code, z, y, sw, b)
    t = z + b
    return (float(sw @ loss_derivatives_np(code, t, y)),
            float(sw @ loss_second_derivatives_np(code, t, y)))


@njit(cache=True)
def _slope_and_curvature_loop(code, z, y, sw, b):
    g = 0.0
    h = 0.0
    for i in range(z.shape[0]):
        s = sw[i]
        if s != 0.0:
            g += s * loss_derivative(code, z[i] + b, y[i])
            h += s * loss_second_derivative(code, z[i] + b, y[i])
    return g, h


def optimal_intercept(code, z, y, sw, b0):
    """argmin over b of Σ s_i φ(z_i + b, y_i), starting from ``b0``.

    Python around the O(n) sums of :func:`_slope_and_curvature` (a few dozen of
    them): the loop itself compiled once cost a first fit 0.7 s (issue 22).
    """
    if code == SQUARED:
        return float(sw @ (y - z)) / float(sw.sum())
    g, h = _slope_and_curvature(code, z, y, sw, b0)
    if g == 0.0:
        return b0
    # Bracket the root of the non-decreasing slope by doubling steps.
    step = 1.0
    lo = b0
    hi = b0
    if g > 0.0:
        for _ in range(200):
            lo = hi - step
            if _slope_and_curvature(code, z, y, sw, lo)[0] <= 0.0:
                break
            hi = lo
            step *= 2.0
    else:
        for _ in range(200):
            hi = lo + step
            if _slope_and_curvature(code, z, y, sw, hi)[0] >= 0.0:
                break
            lo = hi
            step *= 2.0
    b = b0 if lo < b0 < hi else 0.5 * (lo + hi)
    for _ in range(200):
        g, h = _slope_and_curvature(code, z, y, sw, b)
        if g == 0.0:
            return b
        if g > 0.0:
            hi = b
        else:
            lo = b
        if h > 0.0 and abs(g / h) <= 1e-15 * (1.0 + abs(b)):
            return b - g / h  # converged (tested before the bracket a tiny step may touch)
        b_new = b - g / h if h > 0.0 else 0.5 * (lo + hi)
        if not (lo < b_new < hi) or not math.isfinite(b_new):
            b_new = 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * (1.0 + abs(b)):
            return b_new
        b = b_new
    return b


def refresh_margins(state, resync: bool) -> None:
    """Before a gap check: optionally recompute ``z = Xw + b`` from scratch (to
    drop accumulated rounding), then move the intercept to its exact minimiser.

    ``state`` has ``problem``, ``w``, ``z`` and a one-element ``_intercept``
    array, as the primal-side solvers (primal CD, block CD, FISTA) do.
    """
    p = state.problem
    if resync:
        state.z = p.design.matvec(state.w) + state._intercept[0]
    if p.fit_intercept:
        b_old = state._intercept[0]
        if p.loss_code == SQUARED:
            # the closed form of optimal_intercept's squared branch, in numpy: a squared
            # fit then never compiles the kernel's Newton branch (issue 22)
            sw = p.sample_weight
            b_opt = float(sw @ (p.y - (state.z - b_old))) / float(sw.sum())
        else:
            b_opt = optimal_intercept(p.loss_code, state.z - b_old, p.y, p.sample_weight,
                                      b_old)
        state.z += b_opt - b_old
        state._intercept[0] = b_opt


def margin_certificate(state):
    """``(primal, dual, gap)`` of a primal iterate from its margins ``state.z``.

    The dual point is ``α = -sφ'(z)`` (rescaled into the dual domain for l1);
    without a penalty the gap slot holds the optimality violation of
    :func:`margin_kkt_violation` and the dual is None. ``state`` as in
    :func:`refresh_margins`, plus a work array ``_deriv`` of length n.
    """
    p = state.problem
    positive = p.positive
    if p.l1 == 0.0 and p.l2 == 0.0:
        primal = primal_value(p.loss_code, state.z, p.y, p.sample_weight, state.w, 0.0, 0.0,
                              positive)
        return primal, None, margin_kkt_violation(state)
    return certificate_from_margins(p.design, p.loss_code, state.z, p.y, p.sample_weight,
                                    state.w, p.l1, p.l2, positive)


def margin_kkt_violation(state) -> float:
    """max_j dist(-∇_j f(w), λ∂g_j(w_j)) from the margins: the optimality measure
    used without a penalty."""
    p = state.problem
    loss_derivatives(p.loss_code, state.z, p.y, state._deriv)
    grad = p.design.rmatvec(state._deriv * p.sample_weight) / p.n_samples
    return float(np.max(coordinate_violations(state.w, grad, p.l1, p.l2,
                                              p.positive), initial=0.0))
