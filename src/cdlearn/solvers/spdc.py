"""SPDC: the stochastic primal-dual coordinate method (Zhang & Xiao, 2014).

The DGPD paper's baseline (Lei et al. 2017, §2.2 and §5). Solves
``min_x 1/n Σ s_i φ(a_iᵀx) + λ1‖x‖₁ + λ2/2‖x‖²`` (``penalty="l2"`` or
``"elastic_net"``, λ2 > 0) for the smooth losses through its saddle-point form
(DGPD eq. (3)); kernel and update rules in :mod:`cdlearn.kernels.spdc`
(lazy updates: an epoch of n iterations costs O(nnz(X) + d)).

Step sizes (Zhang & Xiao, Theorem 1 with mini-batch size m = 1). With
``R = max_i ‖a_i‖``, ``γ = 1/(β max_i s_i)`` (φ_i is 1/γ-smooth, β the loss's
smoothness: 1 squared / smooth hinge, 1/4 logistic, 2 squared hinge) and
``λ = λ2`` the strong convexity of the penalty::

    τ = 1/(2R) · sqrt(γ / (n λ))        (primal step)
    σ = 1/(2R) · sqrt(n λ / γ)          (dual step)
    θ = 1 - 1 / (n + R sqrt(n / (λ γ)))  (extrapolation)

All three can be overridden (``tau``, ``sigma``, ``theta`` options of
:func:`cdlearn.solve`). Sampling is uniform, one row per iteration; no
intercept (SPDC's saddle point has none).

Certificate: the primal iterate ``x`` is paired with two dual points, SPDC's
own ``α`` and ``α(x) = -s∘φ'(Xx)``; the gap reported is the smaller of the
two Fenchel–Young sums (:func:`cdlearn.objectives.duality_gap`), each a valid
upper bound on ``P(x) - P*``.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels.spdc import spdc_epoch
from ..losses import LOSS_SMOOTHNESS
from ..objectives import dual_point_from_margins, dual_value, duality_gap, primal_value
from ..penalties import soft_threshold_array
from ..sampling import make_rng_state
from .base import Problem, initial_primal

SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
SUPPORTED_PENALTIES = ("l2", "elastic_net")
OPTIONS = ("tau", "sigma", "theta", "dense_updates")
RESYNC_EVERY = 20  # recompute v = Xᵀα/n from scratch every this many checks


def spdc_parameters(problem: Problem) -> tuple[float, float, float]:
    """(τ, σ, θ) of Zhang & Xiao's Theorem 1 (m = 1) for ``problem``."""
    n = problem.n_samples
    R = math.sqrt(float(np.max(problem.design.row_sq_norms)))
    if R == 0.0:
        return 1.0, 1.0, 0.0  # X = 0: x = 0 after one step whatever the steps
    gamma = 1.0 / (LOSS_SMOOTHNESS[problem.loss] * float(np.max(problem.sample_weight)))
    lam = problem.l2
    tau = math.sqrt(gamma / (n * lam)) / (2.0 * R)
    sigma = math.sqrt(n * lam / gamma) / (2.0 * R)
    theta = 1.0 - 1.0 / (n + R * math.sqrt(n / (lam * gamma)))
    return tau, sigma, theta


def _step_option(name, value, default, *, upper=math.inf):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not (0.0 < value <= upper) or not math.isfinite(value):
        raise ValueError(f"{name} must be in (0, {upper}], got {value}")
    return value


class SPDCState:
    """State of SPDC on one problem (see module docstring)."""

    def __init__(self, problem: Problem, *, sampling="uniform", batch_size=1, seed=0,
                 alpha0=None, intercept0=0.0, dual_step="exact", tau=None, sigma=None,
                 theta=None, dense_updates=False):
        self.problem = p = problem
        if p.fit_intercept:
            raise ValueError("solver='spdc' does not fit an intercept; use fit_intercept=False "
                             "(or add a constant column to X)")
        if sampling != "uniform":
            raise ValueError(f"solver='spdc' samples rows uniformly; got sampling={sampling!r}")
        if int(batch_size) != 1:
            raise ValueError(f"solver='spdc' updates one row per iteration; got "
                             f"batch_size={batch_size}")
        if p.l2 <= 0:
            raise ValueError("solver='spdc' needs a strongly convex penalty (l2 > 0)")
        if dual_step != "exact":
            raise ValueError("dual_step applies to solver='dual-cd' only")
        n, d = p.n_samples, p.n_features
        self.view = p.design.csr
        t0, s0, th0 = spdc_parameters(p)
        self.tau = _step_option("tau", tau, t0)
        self.sigma = _step_option("sigma", sigma, s0)
        self.theta = _step_option("theta", theta, th0, upper=1.0)
        if not isinstance(dense_updates, bool | np.bool_):
            raise TypeError("dense_updates must be a bool")
        self.dense = bool(dense_updates)
        self.rng = make_rng_state(seed)
        self.inv_n = 1.0 / n
        self.intercept = 0.0
        self.alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=np.float64)
        self.alpha[p.sample_weight == 0] = 0.0
        self._resync()
        # start at the primal point the dual start defines (x = 0 for α = 0)
        self.x = soft_threshold_array(self.v, p.l1) / p.l2
        self.x_prev = self.x.copy()
        self.stamp = np.zeros(d, dtype=np.int64)
        # c^m, c = 1/(1 + τλ2), for the lazy catch-up (gaps are at most an epoch)
        self.powers = (1.0 / (1.0 + self.tau * p.l2)) ** np.arange(n + 2, dtype=np.float64)
        self.it = 0
        self._checks = 0

    @property
    def w(self) -> np.ndarray:
        return self.x

    def _resync(self):
        self.v = self.problem.design.rmatvec(self.alpha)
        self.v *= self.inv_n

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p, view = self.problem, self.view
        entries, updates, self.it = spdc_epoch(
            view.data, view.indices, view.indptr, p.y, p.sample_weight, self.alpha, self.v,
            self.x, self.x_prev, self.stamp, p.loss_code, self.tau, self.sigma, self.theta,
            p.l1, p.l2, self.inv_n, p.n_samples, self.rng, self.it, self.dense, self.powers,
        )
        return entries, updates

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        p = self.problem
        self._checks += 1
        if self._checks % RESYNC_EVERY == 0:
            self._resync()  # v drifts by rounding; re-anchor it (x is current after an epoch)
        z = p.design.matvec(self.x)
        primal = primal_value(p.loss_code, z, p.y, p.sample_weight, self.x, p.l1, p.l2)
        best = None
        alpha_x = dual_point_from_margins(p.loss_code, z, p.y, p.sample_weight)
        u_x = p.design.rmatvec(alpha_x)
        u_x *= self.inv_n
        for alpha, u in ((self.alpha, self.v), (alpha_x, u_x)):
            gap = duality_gap(p.loss_code, z, alpha, p.y, p.sample_weight, self.x, u,
                              p.l1, p.l2)
            if best is None or gap < best[1]:
                best = (alpha, gap, u)
        alpha, gap, u = best
        dual = dual_value(p.loss_code, alpha, p.y, p.sample_weight, u, p.l1, p.l2)
        return primal, dual, gap

    def snapshot(self):
        # x and α only (between epochs every coordinate is current, stamp = it):
        # five d-vectors per snapshot took SPDC to 1.93× the input on the 10⁶-column
        # Nesterov Lasso. Restoring restarts the extrapolation (x_prev = x) and
        # recomputes v = Xᵀα/n, one product.
        return self.x.copy(), self.alpha.copy(), self.it

    def restore(self, snap):
        x, alpha, it = snap
        self.x[:] = x
        self.x_prev[:] = x
        self.stamp[:] = it
        self.alpha[:] = alpha
        self.it = it
        self._resync()

    def iterate(self):
        return self.x.copy(), self.alpha.copy(), 0.0

    def nnz_w(self) -> int:
        return int(np.count_nonzero(self.x))

    def active(self) -> int:
        return self.problem.n_samples
