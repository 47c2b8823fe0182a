"""Per-sample loops of truncated Newton (:mod:`cdlearn.solvers.newton_cg`).

The mat-vecs are scipy's; what is left are O(n) passes over the margins that
call the scalar loss functions of :mod:`cdlearn.losses`, so every loss formula
stays written once.
"""

import math

from numba import njit

from ..losses import LOGISTIC, loss_derivative, loss_second_derivative


@njit(cache=True)
def dual_and_curvature(code, z, y, sw, inv_n, alpha, D):
    """``α_i = -s_i φ'(z_i)`` and ``D_i = s_i φ''(z_i)/n``; returns ``Σ D_i``.

    α is the certificate's dual point and, as ``-Xᵀα/n``, the loss gradient; D
    weighs the Hessian ``XᵀDX`` (φ'' generalized at the hinge's kink).
    """
    total = 0.0
    for i in range(z.shape[0]):
        s = sw[i]
        if s == 0.0:
            alpha[i] = 0.0
            D[i] = 0.0
            continue
        if code == LOGISTIC:
            # one exp: p = σ(-y z), φ' = -y p, φ'' = p(1 - p)
            m = y[i] * z[i]
            if m >= 0.0:
                e = math.exp(-m)
                p = e / (1.0 + e)
            else:
                p = 1.0 / (1.0 + math.exp(m))
            alpha[i] = y[i] * p * s
            D[i] = p * (1.0 - p) * s * inv_n
        else:
            alpha[i] = -loss_derivative(code, z[i], y[i]) * s
            D[i] = loss_second_derivative(code, z[i], y[i]) * s * inv_n
        total += D[i]
    return total


@njit(cache=True)
def directional_slope(code, z, dz, y, sw, t):
    """``Σ_i s_i φ'(z_i + t dz_i) dz_i``: the loss part of the line search's h'(t)."""
    total = 0.0
    for i in range(z.shape[0]):
        if sw[i] != 0.0 and dz[i] != 0.0:
            total += sw[i] * loss_derivative(code, z[i] + t * dz[i], y[i]) * dz[i]
    return total

