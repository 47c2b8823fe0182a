"""A duality-gap target that bounds the coefficients' error (``coef_tol``).

The gap ``tol · P(0)`` bounds the objective's error, not the coefficients':
on wide problems at a small λ, a gap of 1e-6·P(0) left Lasso coefficients
4 % and elastic-net ones 2 % away from the optimum. If P is μ-strongly convex
in w, ``μ/2 ‖w − w*‖² ≤ P(w) − P* ≤ gap``, so

    gap ≤ μ/2 · (ε ‖w‖∞)²   ⇒   ‖w − w*‖∞ ≤ ‖w − w*‖₂ ≤ ε ‖w‖∞.

μ is the smallest eigenvalue of the Hessian of P in w on the coefficients
that may be non-zero, ``X_Sᵀ D X_S / n + λ2 I`` with ``D = s φ''(z)`` (its
columns centred with weights D when the intercept is fitted, i.e. the
intercept minimised out), and S the support of w for an l1 part, every
feature otherwise. When ``|S|`` exceeds the samples with curvature (X_S has
a null space) or forming the ``|S|²`` matrix would cost more than
:data:`EIGEN_BUDGET` allows, μ = λ2, the penalty's own modulus. The bound is
a guarantee when μ = λ2 (a global modulus) and for the squared loss without
an l1 part; with an l1 part it assumes the support of w contains that of w*,
and for other losses it uses the curvature at w (both hold near the optimum,
where the target is evaluated: only once the gap is below ``tol · P(0)``).
With an l1 part and λ2 = 0, a support larger than the rank gives μ = 0 (w*
generically has fewer non-zeros: keep going), and a support too large to
form gives no target (the gap test alone stops). The target never goes
below ``GAP_FLOOR · P(w)``, and a run whose gap stalls above it (no new low
in :data:`cdlearn.solvers.base.STALLED_CHECKS` checks: float64 rounding on
badly scaled data) stops, converged on the ``tol · P(0)`` test alone.
"""

from __future__ import annotations

import numpy as np

from ..losses import SQUARED, weighted_second_derivatives

#: the gap target never goes below this share of the primal value P(w), about float64's
#: resolution of P: a smaller gap cannot be computed (a run stalled above the floor stops
#: by STALLED_CHECKS). It was 1e-12, which capped the coefficients' accuracy at about
#: sqrt(2e-12 P/μ) whatever tol asked: scikit-learn's tests at tol=1e-10 (Ridge, elastic
#: net) compare at rtol 1e-7 and got 1e-6 (1e-16: 2e-9, 1.4× the epochs)
GAP_FLOOR = 1e-16
#: μ is computed from the dense ``n × |S|`` block when ``n |S|²`` (the flops of
#: forming its Gram) is at most ``max(EIGEN_BUDGET, 20 nnz(X))``
EIGEN_BUDGET = 2e7


class CoefficientTarget:
    """``gap_target(w, b)``: the gap below which ``‖w − w*‖∞ ≤ coef_tol · ‖w‖∞``.

    μ is cached per support (it is recomputed when the support changes).
    """

    def __init__(self, problem, coef_tol: float):
        self.problem = problem
        self.coef_tol = float(coef_tol)
        self._support = None
        self._mu = None
        # without a penalty the run's "gap" is the optimality violation, not a gap
        self._off = problem.l1 == 0.0 and problem.l2 == 0.0

    def gap_target(self, w: np.ndarray, intercept: float, primal: float) -> float | None:
        """The gap target at ``(w, b)`` (primal value ``primal``), or None without a bound."""
        scale = float(np.max(np.abs(w), initial=0.0))
        if scale == 0.0 or self._off:
            return None  # no relative error to bound: the gap test alone decides
        p = self.problem
        support = np.flatnonzero(w) if p.l1 > 0.0 else None
        if self._support is None or not _same(support, self._support[0]):
            self._support = (support,)
            self._mu = strong_convexity(p, w, intercept, support)
        if self._mu is None:
            return None
        return max(0.5 * self._mu * (self.coef_tol * scale) ** 2, GAP_FLOOR * abs(primal))


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b))


def strong_convexity(problem, w, intercept, support=None) -> float | None:
    """μ: the smallest eigenvalue of P's Hessian in ``w`` on ``support`` (all features if None).

    The intercept, if fitted, is minimised out (columns centred with weights
    D). Falls back to λ2 when the block has a null space or is too costly;
    with an l1 part and λ2 = 0 that is 0 for a support larger than the
    block's rank (keep going) and None (no bound) for a too costly one.
    """
    p = problem
    n = p.n_samples
    cols = np.arange(p.n_features) if support is None else support
    k = cols.shape[0]
    if k == 0:
        return p.l2
    if p.loss_code == SQUARED:
        D = p.sample_weight
    else:
        z = p.design.matvec(w) + (intercept if p.fit_intercept else 0.0)
        D = weighted_second_derivatives(p.loss_code, z, p.y, p.sample_weight, np.empty(n))
    rank = int(np.count_nonzero(D)) - int(p.fit_intercept)
    if k > rank:
        # X_S has a null space; with an l1 part and no λ2, w* generically has at most
        # `rank` non-zeros, so w's support is not yet the optimum's: μ = 0 keeps the
        # run going (down to the gap floor) rather than trusting the gap alone
        return p.l2
    if n * k * k > max(EIGEN_BUDGET, 20.0 * p.design.nnz):
        return p.l2 if p.l2 > 0.0 else None
    M = p.design.to_scipy()[:, cols]
    A = np.asarray(M.toarray() if hasattr(M, "toarray") else M, dtype=np.float64)
    if p.fit_intercept:
        A -= (D @ A) / D.sum()
    H = (A.T * D) @ A / n
    return max(float(np.linalg.eigvalsh(H)[0]), 0.0) + p.l2
