"""Primal and dual objectives and the duality gap (layer 2: pure math on arrays).

``P(w, b) = 1/n Σ s_i φ(x_iᵀw + b, y_i) + λ1‖w‖₁ + λ2/2‖w‖²``
``D(α)   = -1/n Σ s_i φ*(-α_i/s_i, y_i) - (λg)*(Xᵀα/n) - b/n Σ α_i``

The last term is the dual of the problem in ``w`` at a fixed intercept ``b``
(conjugate of ``t ↦ φ(t + b)``); it vanishes when ``Σ α_i = 0``, the dual
constraint of an unpenalised intercept, so the gap is a certificate for the
joint problem whenever the intercept is optimal for the margins used to build α.
"""

from __future__ import annotations

import math

import numpy as np

from .data import SMALL_ARRAY
from .losses import (
    loss_derivatives,
    loss_derivatives_np,
    weighted_conjugate_sum,
    weighted_fenchel_young_sum,
    weighted_loss_and_fenchel_young_sums,
    weighted_loss_and_fenchel_young_sums_np,
    weighted_loss_sum,
    weighted_loss_sum_np,
)
from .penalties import (
    dual_feasible_scale,
    penalty_conjugate,
    penalty_fenchel_young,
    penalty_value,
)


def primal_value(loss_code, z, y, sw, w, l1, l2, positive=False) -> float:
    """P at margins ``z = Xw + b`` (``positive``: with the constraint w ≥ 0)."""
    loss_sum = weighted_loss_sum if z.shape[0] > SMALL_ARRAY else weighted_loss_sum_np
    return loss_sum(loss_code, z, y, sw) / z.shape[0] + penalty_value(w, l1, l2, positive)


def dual_value(loss_code, alpha, y, sw, u, l1, l2, intercept=0.0, positive=False) -> float:
    """D(α) given ``u = Xᵀα / n`` (``-inf`` outside the dual domain)."""
    n = alpha.shape[0]
    loss_part = weighted_conjugate_sum(loss_code, alpha, y, sw)
    if not math.isfinite(loss_part):
        return -math.inf
    val = -loss_part / n - penalty_conjugate(u, l1, l2, positive)
    if intercept != 0.0:
        val -= intercept * float(alpha.sum()) / n
    return val


def duality_gap(loss_code, z, alpha, y, sw, w, u, l1, l2, positive=False) -> float:
    """P(w, b) - D(α) as a sum of Fenchel–Young gaps (each ≥ 0, computed exactly).

    ``z = Xw + b`` and ``u = Xᵀα/n``; equal to ``primal_value - dual_value``
    (with the intercept term) up to rounding, but accurate when the gap is far
    below the rounding error of ``P`` itself.
    """
    loss_part = weighted_fenchel_young_sum(loss_code, z, alpha, y, sw) / z.shape[0]
    return loss_part + penalty_fenchel_young(w, u, l1, l2, positive)


def primal_and_gap(loss_code, z, alpha, y, sw, w, u, l1, l2,
                   positive=False, compiled=False) -> tuple[float, float]:
    """``(primal_value(...), duality_gap(...))`` with one pass over the samples
    (numpy's form below ``SMALL_ARRAY`` samples unless ``compiled``)."""
    n = z.shape[0]
    sums = (weighted_loss_and_fenchel_young_sums if compiled or n > SMALL_ARRAY
            else weighted_loss_and_fenchel_young_sums_np)
    loss_sum, fy_sum = sums(loss_code, z, alpha, y, sw)
    primal = loss_sum / n + penalty_value(w, l1, l2, positive)
    return primal, fy_sum / n + penalty_fenchel_young(w, u, l1, l2, positive)


def dual_point_from_margins(loss_code, z, y, sw) -> np.ndarray:
    """α_i = -s_i φ'(z_i): the dual point the primal iterate defines."""
    if z.shape[0] <= SMALL_ARRAY:
        return -sw * loss_derivatives_np(loss_code, z, y)
    out = np.empty_like(z)
    loss_derivatives(loss_code, z, y, out)
    out *= -sw
    return out


def certificate_from_dual_point(loss_code, z, alpha, y, sw, w, u, l1, l2, positive=False,
                                compiled=False):
    """``(P, D, gap)`` for margins ``z = Xw + b`` and ``α`` with ``u = Xᵀα/n``.

    α is rescaled into the dual domain for l1 first (``min(1, λ1/‖u‖∞)``, as
    celer does; one-sided, ``min(1, λ1/max_j u_j)``, with ``positive``; the domains of all cdlearn losses are star-shaped around 0, so
    the shrunk point stays feasible). P and the gap take one pass
    (:func:`primal_and_gap`) and ``D = P - gap``, which is :func:`dual_value`
    with its intercept term (see :func:`duality_gap`): one pass over the
    samples instead of three.
    """
    scale = dual_feasible_scale(u, l1, l2, positive)
    if scale != 1.0:
        alpha = alpha * scale
        u = u * scale
    primal, gap = primal_and_gap(loss_code, z, alpha, y, sw, w, u, l1, l2, positive, compiled)
    return primal, primal - gap, gap


def certificate_from_margins(design, loss_code, z, y, sw, w, l1, l2, positive=False):
    """``(P, D, gap)`` of a primal iterate from its margins, with the dual point
    ``α = -sφ'(z)`` (:func:`certificate_from_dual_point`)."""
    alpha = dual_point_from_margins(loss_code, z, y, sw)
    u = design.rmatvec(alpha)
    u /= z.shape[0]
    return certificate_from_dual_point(loss_code, z, alpha, y, sw, w, u, l1, l2, positive)
