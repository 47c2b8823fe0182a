"""Per-sample loop of truncated Newton's line search (:mod:`cdlearn.solvers.newton_cg`).

The mat-vecs are scipy's; the weights α, D come from
:func:`cdlearn.kernels.newton_cd.newton_weights`. The loop calls the scalar
loss functions of :mod:`cdlearn.losses`, so every loss formula stays written once.
"""

from numba import njit

from ..losses import loss_derivative


@njit(cache=True)
def directional_slope(code, z, dz, y, sw, t):
    """``Σ_i s_i φ'(z_i + t dz_i) dz_i``: the loss part of the line search's h'(t)."""
    total = 0.0
    for i in range(z.shape[0]):
        if sw[i] != 0.0 and dz[i] != 0.0:
            total += sw[i] * loss_derivative(code, z[i] + t * dz[i], y[i]) * dz[i]
    return total



@njit(cache=True)
def axpy(a, x, y):
    """``y += a * x`` in place: CG's updates without a d-length temporary each."""
    for i in range(y.shape[0]):
        y[i] += a * x[i]
