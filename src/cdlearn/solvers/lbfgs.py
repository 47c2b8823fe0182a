"""Limited-memory BFGS for smooth losses and the l2 penalty.

Nocedal (1980), "Updating quasi-Newton matrices with limited storage", Math.
Comp. 35(151); Liu & Nocedal (1989), "On the limited memory BFGS method for
large scale optimization", Math. Prog. 45: the direction ``-H G`` from the last
``memory`` pairs ``s = Δ(w, b)``, ``y = ΔG`` by the two-loop recursion, with
``H₀ = sᵀy/yᵀy · I``. The method of scikit-learn's default ``lbfgs`` solver,
with two differences that cut its work per iteration to two data passes:

- the step is the exact minimiser along the direction, found on the margins
  (``z + t·Xd``: one mat-vec, then O(n) per trial; newton-cg's line search)
  instead of a Wolfe search that evaluates loss and gradient at every trial;
  ``h'(0)`` comes from α and the first trial is the minimiser of the
  second-order model from ``D = sφ''(z)/n``, both at hand (~3 trials an
  iteration instead of ~5 from t = 1);
- the gradient's ``Xᵀα`` is the certificate's (dual point ``α = -sφ'(z)``,
  exact gap as in newton-cg), so every iteration is certified at no extra pass
  and ``tol`` means what it means for every other solver.

Measured on benchopt's L2 simulations (``X ~ N(0, 1)``, ``y = sign(Xβ)``,
λ = lmbd/n), data passes to gap ``tol·P(0)`` at the first tolerance of the
``10^{-k/2}`` schedule reaching a relative 1e-6 / 1e-10 of the optimum
(benchmarks/results/benchopt_logreg.md): see :func:`cdlearn.api.lbfgs_reason`.

One "epoch" is one iteration: gradient (``nnz``, shared with the certificate),
``Xd`` (``nnz``), ``n`` per line-search evaluation.
"""

from __future__ import annotations

import numpy as np

from ..kernels.lbfgs import two_loop
from .base import Problem
from .newton_cg import SUPPORTED_LOSSES, SUPPORTED_PENALTIES, NewtonCGState

__all__ = ["SUPPORTED_LOSSES", "SUPPORTED_PENALTIES", "OPTIONS", "LBFGSState"]

OPTIONS = ("memory",)


class LBFGSState(NewtonCGState):
    """State of L-BFGS on one problem (see module docstring); newton-cg's gradient,
    line search and certificate, without its Hessian."""

    name = "lbfgs"
    # the compiled per-sample loops at every n: this state compiles its kernels anyway
    # (on n = 1,000 numpy's forms of the certificate and the line search cost ~25% of a
    # solve)
    small = 0

    def __init__(self, problem: Problem, *, memory=10, **options):
        if isinstance(memory, bool) or not isinstance(memory, (int, np.integer)) or memory < 1:
            raise ValueError(f"memory must be an integer >= 1, got {memory!r}")
        super().__init__(problem, preconditioner="none", **options)
        self.memory = int(memory)
        # the last `memory` pairs s = Δ(w, b), y = ΔG as a ring buffer of rows
        self._S = np.empty((self.memory, self.m))
        self._Y = np.empty((self.memory, self.m))
        self._rho = np.empty(self.memory)
        self._work = np.empty(self.memory)
        self._newest = -1
        self._count = 0
        self._x_prev = None  # (w, b) and G at the last iteration
        self._g_prev = None

    def _point(self):
        x = np.empty(self.m)
        x[:self.problem.n_features] = self.w
        if self.problem.fit_intercept:
            x[-1] = self._intercept[0]
        return x

    def run_epoch(self):
        n = self.problem.n_samples
        G, entries = self._gradient()
        # s spans the iteration and the certificate's exact intercept move alike
        x = self._point()
        if self._x_prev is not None:
            k = (self._newest + 1) % self.memory
            s, y = self._S[k], self._Y[k]
            np.subtract(x, self._x_prev, out=s)
            np.subtract(G, self._g_prev, out=y)
            sy = float(s @ y)
            if sy > 0.0:  # strictly convex: only rounding fails it, at the end
                self._rho[k] = 1.0 / sy
                self._newest = k
                self._count = min(self._count + 1, self.memory)
        self._x_prev, self._g_prev = x, G
        if not float(G @ G) > 0.0:
            return entries, 0
        delta = np.negative(G)
        if self._count:
            two_loop(self._S, self._Y, self._rho, self._newest, self._count, delta,
                     self._work)
        dz = self._margin_change(delta)
        # h'(0) from α = -sφ'(z) and the first trial at the minimiser of h's second-order
        # model from D = sφ''(z)/n, both at hand: no exp for them (the line search's
        # trials, ~5 an iteration from t = 1, were an O(n) exp sweep each)
        d = self.problem.n_features
        dw = delta[:d]
        slope = float(self.problem.l2 * (self.w @ dw) - (self._alpha @ dz) * self.inv_n)
        curvature = float(self.D @ (dz * dz) + self.problem.l2 * (dw @ dw))
        first = -slope / curvature if curvature > 0.0 and slope < 0.0 else 1.0
        t, evals = self._step(delta, dz, (slope, first))
        self.last = dict(step=t, line_evals=evals, pairs=self._count)
        return entries + self.problem.design.nnz + evals * n, 1

    def extra_info(self) -> dict:
        return {"memory": self.memory, "pairs": self._count}
