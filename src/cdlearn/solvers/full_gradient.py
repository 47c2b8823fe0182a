"""Full-gradient baselines: FISTA and ISTA (proximal gradient), the RCDC paper's "FG".

The RCDC paper (§6.1, "Coordinate Descent vs. a Full-Gradient method", Figure 2)
compares UCDC with Nesterov's full-gradient method using ``L_FG = λ_max(AᵀA)``.
Here, for ``P(w) = 1/n Σ s_i φ(x_iᵀw + b) + λ1‖w‖₁ + λ2/2‖w‖²`` (penalties
none / l2 / l1 / elastic_net, smooth losses):

    L = β λ_max(X̃ᵀ S X̃) / n,   X̃ = [X, 1] with an intercept, else X,

estimated by power iteration (relative change < 1e-10 or 1000 iterations) and
multiplied by 1.01, since power iteration approaches λ_max from below. One
iteration is

    v = w_k + θ_k (w_k − w_{k−1})                 (θ_k = 0 for ISTA)
    w_{k+1} = prox_{g/L}(v − ∇f(v)/L) = soft(L v − ∇f(v), λ1) / (L + λ2)

with Beck & Teboulle's ``t_{k+1} = (1 + √(1 + 4t_k²))/2``, ``θ_k = (t_k − 1)/t_{k+1}``.
The margins of ``v`` are extrapolated like ``v`` itself (``Xv = z_k + θ(z_k −
z_{k−1})``), so an iteration costs exactly one ``Xᵀr`` and one ``Xw``: an
epoch is one full gradient = 2 passes over the nonzeros, as counted in the
trace. ``solver="fista", accelerated=False`` is ISTA. The certificate is primal CD's (rescaled dual
point, Fenchel–Young gap; the optimality violation for ``penalty="none"``).
"""

from __future__ import annotations

import numpy as np

from ..losses import LOSS_SMOOTHNESS, loss_derivatives
from ..objectives import certificate_from_margins, primal_value
from ..penalties import coordinate_violations, soft_threshold_array
from .base import Problem, initial_primal
from .intercept import refresh_margins

SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
SUPPORTED_PENALTIES = ("none", "l2", "l1", "elastic_net")
SAFETY = 1.01


def full_lipschitz(problem: Problem, *, seed: int = 0, max_iter: int = 1000,
                   rtol: float = 1e-10) -> float:
    """``β λ_max(X̃ᵀ S X̃)/n`` by power iteration (no safety factor)."""
    p = problem
    design, sw = p.design, p.sample_weight
    rng = np.random.default_rng(seed)
    d = p.n_features
    v = rng.standard_normal(d)
    vb = 1.0 if p.fit_intercept else 0.0
    nrm = np.sqrt(v @ v + vb * vb)
    v /= nrm
    vb /= nrm
    est = 0.0
    for _ in range(max_iter):
        u = (design.matvec(v) + vb) * sw
        v = design.rmatvec(u)
        vb = float(u.sum()) if p.fit_intercept else 0.0
        new = float(np.sqrt(v @ v + vb * vb))
        if new == 0.0:
            return 0.0
        v /= new
        vb /= new
        if abs(new - est) <= rtol * new:
            est = new
            break
        est = new
    return LOSS_SMOOTHNESS[p.loss] * est / p.n_samples


class FullGradientState:
    """FISTA (``accelerated=True``) or ISTA on one problem (see module docstring)."""

    def __init__(self, problem: Problem, *, sampling="uniform", power=1.0, batch_size=1,
                 seed=0, w0=None, intercept0=0.0, step=None, accelerated=True):
        self.problem = p = problem
        if sampling != "uniform":
            raise ValueError(f"solver='fista' takes full gradients; sampling={sampling!r} "
                             "has no meaning for it")
        if batch_size != 1:
            raise ValueError("solver='fista' takes full gradients: batch_size must be 1")
        self.accelerated = bool(accelerated)
        self.L = SAFETY * full_lipschitz(p, seed=0)
        d, n = p.n_features, p.n_samples
        self.w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
        self._intercept = np.array([float(intercept0) if p.fit_intercept else 0.0])
        self.z = p.design.matvec(self.w) + self._intercept[0]
        self.w_prev = self.w.copy()
        self.z_prev = self.z.copy()
        self.b_prev = self._intercept[0]
        self.t = 1.0
        self.alpha = None
        self._deriv = np.empty(n)

    @property
    def intercept(self) -> float:
        return float(self._intercept[0])

    def _gradient(self, z):
        p = self.problem
        loss_derivatives(p.loss_code, z, p.y, self._deriv)
        r = self._deriv * p.sample_weight / p.n_samples
        return p.design.rmatvec(r), float(r.sum())

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p = self.problem
        nnz = p.design.nnz
        if self.L == 0.0:  # X == 0 (and no intercept): w = 0 is optimal
            return nnz, 0
        if self.accelerated:
            t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * self.t * self.t))
            theta = (self.t - 1.0) / t_next
            self.t = t_next
        else:
            theta = 0.0
        b = self._intercept[0]
        v = self.w + theta * (self.w - self.w_prev)
        zv = self.z + theta * (self.z - self.z_prev)
        bv = b + theta * (b - self.b_prev)
        grad, gb = self._gradient(zv)
        L = self.L
        if p.l1 > 0.0:
            w_new = soft_threshold_array(L * v - grad, p.l1) / (L + p.l2)
        else:
            w_new = (L * v - grad) / (L + p.l2)
        b_new = bv - gb / L if p.fit_intercept else 0.0
        self.w_prev, self.z_prev, self.b_prev = self.w, self.z, b
        self.w = w_new
        self._intercept[0] = b_new
        self.z = p.design.matvec(w_new) + b_new
        return 2 * nnz, 1

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        p = self.problem
        refresh_margins(self, resync=False)
        if p.l1 == 0.0 and p.l2 == 0.0:
            primal = primal_value(p.loss_code, self.z, p.y, p.sample_weight, self.w, 0.0, 0.0)
            return primal, None, self.kkt_violation()
        return certificate_from_margins(p.design, p.loss_code, self.z, p.y, p.sample_weight,
                                        self.w, p.l1, p.l2)

    def kkt_violation(self) -> float:
        p = self.problem
        grad, _ = self._gradient(self.z)
        return float(np.max(coordinate_violations(self.w, grad, p.l1, p.l2), initial=0.0))

    def snapshot(self):
        return self.w.copy(), self._intercept[0]

    def restore(self, snap):
        w, b = snap
        self.w = w.copy()
        self._intercept[0] = b
        self.z = self.problem.design.matvec(self.w) + b

    def iterate(self):
        return self.w.copy(), None, self._intercept[0]

    def nnz_w(self) -> int:
        return int(np.count_nonzero(self.w))

    def active(self) -> int:
        return self.problem.n_features
