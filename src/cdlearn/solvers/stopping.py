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
lower by more than :func:`gap_rounding`
in :data:`cdlearn.solvers.base.STALLED_CHECKS` checks: float64 rounding on
badly scaled data) stops, converged on the ``tol · P(0)`` test alone.

Reaching these targets by coordinate descent alone is slow where μ is small
(a support nearly as large as the samples); :class:`Polish` replaces the
iterate at checks by the minimiser of P on its support
(:func:`restricted_solution`: a direct solve for the squared loss, Newton
for the logistic and squared hinge losses), which the gap then certifies.
"""

from __future__ import annotations

import numpy as np

from ..losses import (
    LOGISTIC,
    SQUARED,
    SQUARED_HINGE,
    derivatives,
    weighted_curvatures,
)
from ..objectives import primal_value

#: the gap target never goes below this share of the primal value P(w), about float64's
#: resolution of P: a smaller gap cannot be computed (a run stalled above the floor stops
#: by STALLED_CHECKS). It was 1e-12, which capped the coefficients' accuracy at about
#: sqrt(2e-12 P/μ) whatever tol asked: scikit-learn's tests at tol=1e-10 (Ridge, elastic
#: net) compare at rtol 1e-7 and got 1e-6 (1e-16: 2e-9, 1.4× the epochs)
GAP_FLOOR = 1e-16


def gap_rounding(n_samples: int, primal: float) -> float:
    """About the rounding error of a gap over ``n_samples`` terms in float64: gaps that
    differ by less are not told apart (the stall rule of :func:`cdlearn.solvers.base.run`)."""
    return n_samples * GAP_FLOOR * abs(primal)
#: μ is computed from the dense ``n × |S|`` block when ``n |S|²`` (the flops of
#: forming its Gram) is at most ``max(EIGEN_BUDGET, 20 nnz(X))``
EIGEN_BUDGET = 2e7
#: see :func:`_affordable`
POLISH_ENTRIES = 100_000
#: with an l1 part, :class:`Polish` waits for a gap within this factor of ``tol · P(0)``:
#: before, the support is rarely the optimum's and the solve rarely pays
POLISH_GAP_FACTOR = 100.0
#: :meth:`Polish.finish` solves at convergence when that costs at most the fit's work or
#: this many flops (a solve this small costs about its Python overhead, ~0.1 ms)
FINISH_FLOPS = 1e5


class CoefficientTarget:
    """``gap_target(w, b)``: the gap below which ``‖w − w*‖∞ ≤ coef_tol · ‖w‖∞``.

    μ is cached per support (it is recomputed when the support changes); a
    multi-task least-squares problem's is every task's, the single-target one.
    For the multinomial weight matrix (a
    :class:`~cdlearn.solvers.multi_cd.MultiProblem` with a non-squared loss) μ
    is λ2, the penalty's global modulus: the multinomial loss is flat along
    ``W + c1ᵀ`` (one shift per feature), so λ2 is also its Hessian's smallest
    eigenvalue; without λ2 there is no bound.
    """

    def __init__(self, problem, coef_tol: float):
        self.problem = problem
        self.coef_tol = float(coef_tol)
        self._support = None
        self._mu = None
        # without a penalty the run's "gap" is the optimality violation, not a gap
        self._off = problem.l1 == 0.0 and problem.l2 == 0.0
        self._matrix = hasattr(problem, "n_outputs") and problem.loss != "squared"
        if self._matrix:
            self._mu = problem.l2 if problem.l2 > 0.0 else None

    def gap_target(self, w: np.ndarray, intercept, primal: float) -> float | None:
        """The gap target at ``(w, b)`` (primal value ``primal``), or None without a bound."""
        if self._off:
            return None
        p = self.problem
        scale = float(np.max(np.abs(w), initial=0.0))
        if scale == 0.0:
            # no relative error bounds w = 0 unless w* = 0 too, which is when the gap at 0
            # vanishes to rounding (λ ≥ λ_max for an l1 part, ∇f(0) = 0 otherwise). A gap
            # of 1e-6·P(0) alone accepted w = 0 for Ridge(alpha=1e6) (w* ~ 1e-5, n = 300)
            return gap_rounding(p.n_samples, primal)
        support = nonzero_rows(w) if p.l1 > 0.0 else None
        if not self._matrix and (self._support is None
                                 or not _same(support, self._support[0])):
            self._support = (support,)
            self._mu = strong_convexity(p, w, intercept, support)
        if self._mu is None:
            return None
        return max(0.5 * self._mu * (self.coef_tol * scale) ** 2, GAP_FLOOR * abs(primal))


def nonzero_rows(w: np.ndarray) -> np.ndarray:
    """The support: non-zero entries of a vector ``w``, non-zero rows of a matrix ``W``
    (a multi-task problem's features: a row's task weights are one group)."""
    return np.flatnonzero(w) if w.ndim == 1 else np.flatnonzero(np.any(w != 0.0, axis=1))


def _multitask(problem) -> bool:
    """A multi-task least-squares :class:`~cdlearn.solvers.multi_cd.MultiProblem`: its
    Hessian in ``W`` is ``X_SᵀSX_S/n + λ2 I`` for every task, the single-target one."""
    return getattr(problem, "n_outputs", None) is not None and problem.loss == "squared"


def _orthant(p) -> bool:
    """Whether P is restricted to an orthant of the support (an l1 part, or w ≥ 0)."""
    return p.l1 > 0.0 or bool(getattr(p, "positive", False))


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _affordable(problem, k: int, polish: bool = False) -> bool:
    """Whether the dense ``n × k`` block's Gram (``n k min(n, k)`` flops) fits the budget.

    ``polish``: also a block of at most ``max(2 nnz, POLISH_ENTRIES)`` entries (a
    solve must not add a dense copy of sparse X to the memory of a fit).
    """
    n = problem.n_samples
    if polish and n * k > max(2 * problem.design.nnz, POLISH_ENTRIES):
        return False
    return n * k * min(n, k) <= max(EIGEN_BUDGET, 20.0 * problem.design.nnz)


def _centred_block(problem, cols, D):
    """The dense ``X[:, cols]``, its columns centred with weights D when the intercept is fitted."""
    M = problem.design.to_scipy()[:, cols]
    A = np.asarray(M.toarray() if hasattr(M, "toarray") else M, dtype=np.float64)
    if problem.fit_intercept:
        A -= (D @ A) / D.sum()
    return A


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
    if _multitask(p) or p.loss_code == SQUARED:
        D = p.sample_weight
    else:
        z = p.design.matvec(w) + (intercept if p.fit_intercept else 0.0)
        D = weighted_curvatures(p.loss_code, z, p.y, p.sample_weight)
    rank = int(np.count_nonzero(D)) - int(p.fit_intercept)
    if k > rank:
        # X_S has a null space; with an l1 part and no λ2, w* generically has at most
        # `rank` non-zeros, so w's support is not yet the optimum's: μ = 0 keeps the
        # run going (down to the gap floor) rather than trusting the gap alone
        return p.l2
    if not _affordable(p, k):
        return p.l2 if p.l2 > 0.0 else None
    A = _centred_block(p, cols, D)
    H = (A.T * D) @ A / n
    return max(float(np.linalg.eigvalsh(H)[0]), 0.0) + p.l2


def polishable(problem) -> bool:
    """Whether :class:`Polish` runs: the squared loss with a separable penalty, or the
    logistic and squared hinge losses (quadratic models from their Taylor expansion)
    with an l1 part.

    Without an l1 part those two already run Newton methods (newton-cd,
    newton-cg), and Newton on every feature was slower than them in the
    parity benchmark (LinearSVC, 50 × 1000: 24 damped steps past the hinge's
    kink, 180 ms against newton-cg's 30 ms).

    A multi-task least-squares problem is polished too (a ridge solve per task,
    or Newton on the non-zero rows for the row-group penalty).
    """
    if _multitask(problem):
        return True
    if getattr(problem, "groups", None) is not None or getattr(problem, "n_outputs", None):
        return False
    if problem.loss_code == SQUARED:  # without an l1 part: the (minimum-norm) ridge solve
        # positive=True: the walk of _quadratic_solution on the non-negative orthant
        # (without a penalty, NNLS, the gap alone decides)
        return problem.l1 > 0.0 or not problem.positive or problem.l2 > 0.0
    return problem.loss_code in (LOGISTIC, SQUARED_HINGE) and problem.l1 > 0.0


#: Newton steps of :func:`restricted_solution` for the logistic and squared hinge losses
NEWTON_STEPS = 30


def restricted_solution(problem, w, intercept):
    """``(w', b')`` minimising P on the support of ``w`` (every feature without an l1 part).

    For the squared loss P is a quadratic on each orthant of the support, so
    its minimiser there is one linear solve (the exact answer a direct ridge
    solver gives; without an l1 part the minimum-norm one;
    :func:`_quadratic_solution`). Other losses take Newton steps on that
    support, each the quadratic model's solution (iteratively reweighted least
    squares) with a backtracking line search on P, until P stops decreasing.
    P(w') ≤ P(w) always; whether w' is the optimum is for the duality gap to
    say. None when the block costs more than :data:`EIGEN_BUDGET` allows.
    """
    p = problem
    w = np.array(w, dtype=np.float64)
    cols = nonzero_rows(w) if _orthant(p) else np.arange(p.n_features)
    if not _affordable(p, cols.shape[0], polish=True):
        return None
    if _multitask(p):
        if p.l1 > 0.0:
            return _group_newton(p, w, cols)
        solved = [_quadratic_solution(p, w[:, k], cols, p.sample_weight, p.Y[:, k])
                  for k in range(p.n_outputs)]
        return (np.column_stack([wk for wk, _ in solved]),
                np.array([bk for _, bk in solved]))
    if p.loss_code == SQUARED:
        return _quadratic_solution(p, w, cols, p.sample_weight, p.y)
    b = float(intercept) if p.fit_intercept else 0.0
    z = p.design.matvec(w) + b
    value = primal_value(p.loss_code, z, p.y, p.sample_weight, w, p.l1, p.l2,
                         p.positive)
    for _ in range(NEWTON_STEPS):
        D = weighted_curvatures(p.loss_code, z, p.y, p.sample_weight)
        slope = derivatives(p.loss_code, z, p.y)
        curved = D > 0.0
        if np.any(curved):
            # the model 1/(2n) Σ D_i (z_i' − target_i)² is P's second-order expansion in z
            target = z.copy()
            target[curved] -= slope[curved] * p.sample_weight[curved] / D[curved]
            wm, bm = _quadratic_solution(p, w, cols, D, target)
        else:  # every margin beyond the squared hinge's kink: the model is the penalty
            wm, bm = np.zeros_like(w), b
        if (np.max(np.abs(wm - w)) <= 1e-13 * np.max(np.abs(w), initial=0.0)
                and abs(bm - b) <= 1e-13 * max(abs(b), 1.0)):
            break  # a Newton step below rounding: P cannot decrease further
        step = 1.0
        for _ in range(20):
            w_try = w + step * (wm - w)
            b_try = b + step * (bm - b)
            z_try = p.design.matvec(w_try) + b_try
            v_try = primal_value(p.loss_code, z_try, p.y, p.sample_weight, w_try, p.l1, p.l2,
                                 p.positive)
            if v_try < value:
                break
            step *= 0.5
        else:
            break
        progress = value - v_try
        w, b, z, value = w_try, b_try, z_try, v_try
        if p.l1 > 0.0:
            cols = np.flatnonzero(w)
        if progress <= 1e-15 * abs(value):
            break
    return w, b


def _group_newton(p, W, cols):
    """``(W', b')``: Newton's method with a backtracking line search for the multi-task
    problem on the rows ``cols`` (all non-zero), where the row-group penalty
    ``λ1 Σ_j ‖W_j‖₂`` is smooth: its Hessian on row j is ``λ1 (I − u_j u_jᵀ)/‖W_j‖``
    (``u_j = W_j/‖W_j‖``), added to the loss's ``kron(X_SᵀSX_S/n, I) + λ2 I``. The
    intercepts are minimised out (columns and Y centred with weights s). None when the
    ``k K × k K`` system is beyond :data:`EIGEN_BUDGET`; P never increases.
    """
    n, K, k = p.n_samples, p.n_outputs, cols.shape[0]
    if k == 0 or (k * K) ** 3 > EIGEN_BUDGET:
        return None
    sw, l1, l2 = p.sample_weight, p.l1, p.l2
    root = np.sqrt(sw)
    y_mean = sw @ p.Y / sw.sum() if p.fit_intercept else np.zeros(K)
    Z = _centred_block(p, cols, sw) * root[:, None]
    U = root[:, None] * (p.Y - y_mean)
    A, C = Z.T @ Z / n, Z.T @ U / n

    def value(V):
        R = U - Z @ V
        return (0.5 * float(np.vdot(R, R)) / n + l1 * float(np.linalg.norm(V, axis=1).sum())
                + 0.5 * l2 * float(np.vdot(V, V)))

    V = np.array(W[cols], dtype=np.float64)
    f = value(V)
    loss_hessian = np.kron(A, np.eye(K)) + l2 * np.eye(k * K)  # entry (j, t) is j K + t
    for _ in range(NEWTON_STEPS):
        norms = np.linalg.norm(V, axis=1)
        if not np.all(norms > 0.0):
            break  # a row reached 0: the penalty is not smooth there (CD decides it)
        dirs = V / norms[:, None]
        G = A @ V - C + l1 * dirs + l2 * V
        H = loss_hessian.copy()
        for j in range(k):
            block = slice(j * K, (j + 1) * K)
            H[block, block] += l1 / norms[j] * (np.eye(K) - np.outer(dirs[j], dirs[j]))
        step_dir = -np.linalg.lstsq(H, G.ravel(), rcond=None)[0].reshape(k, K)
        decrement = -float(np.vdot(G, step_dir))
        if not decrement > 1e-15 * abs(f):
            break
        t = 1.0
        for _ in range(30):
            f_new = value(V + t * step_dir)
            if f_new < f:
                break
            t *= 0.5
        else:
            break
        V += t * step_dir
        f = f_new
    out = np.zeros_like(np.asarray(W, dtype=np.float64))
    out[cols] = V
    b = y_mean - (p.design.rmatvec(sw) / sw.sum()) @ out if p.fit_intercept else np.zeros(K)
    return out, b


def _quadratic_solution(p, w, cols, D, target):
    """``(w', b')``: the minimiser of ``1/(2n) Σ D_i (target_i − x_iᵀw − b)² + λ g(w)`` on
    ``cols``, in the orthant of ``w`` for an l1 part, reached by an active-set walk.

    With an l1 part the walk keeps the value decreasing: from w towards the
    orthant's minimiser until a coefficient reaches zero (it leaves the
    support), and on a support with a null space (a Lasso with more non-zeros
    than samples, which coordinate descent leaves only slowly) along the null
    direction that lowers the l1 term, until a coefficient reaches zero: each
    step drops one coefficient, as in the homotopy/LARS-lasso algorithm
    (Osborne, Presnell & Turlach 2000; Efron et al. 2004).
    """
    n, l1, l2 = p.n_samples, p.l1, p.l2
    w = w.copy()
    sD = np.sqrt(D)
    t_mean = float(D @ target) / D.sum() if p.fit_intercept else 0.0
    u = sD * (target - t_mean)
    Z = _centred_block(p, cols, D)
    Z *= sD[:, None]
    walk = _orthant(p)
    if not walk:  # one quadratic: no orthant, no walk
        w[cols] = _min_norm_ridge(Z, u, l2)
    for _ in range(cols.shape[0] + 1 if walk else 0):
        k = cols.shape[0]
        if k == 0:
            break
        wk = w[cols]
        s = np.sign(wk)
        V, lam = _range_basis(Z)
        c = Z.T @ u / n - l1 * s
        cr = V.T @ c
        if l2 > 0.0:
            t = V @ (cr / (lam + l2)) + (c - V @ cr) / l2
            null = None
        else:
            # the minimiser on range(H), w's null-space component kept: the value moves
            # only through the linear term -cᵀv along a null direction v
            t = V @ (cr / lam) + (wk - V @ (V.T @ wk))
            null = c - V @ cr
        wrong = s * t <= 0.0
        if np.any(wrong):  # the orthant's border comes first: stop there, drop one
            theta = wk[wrong] / (wk[wrong] - t[wrong])
            j = int(np.argmin(theta))
            w[cols] = wk + theta[j] * (t - wk)
            w[cols[np.flatnonzero(wrong)[j]]] = 0.0
        elif null is not None and np.linalg.norm(null) > 1e-9 * (np.linalg.norm(c) + l1):
            # the value decreases without bound along +null inside the orthant: go to
            # the orthant's border
            shrinking = s * null < 0.0
            if not np.any(shrinking):
                w[cols] = t
                break
            tau = -t[shrinking] / null[shrinking]
            j = int(np.argmin(tau))
            w[cols] = t + tau[j] * null
            w[cols[np.flatnonzero(shrinking)[j]]] = 0.0
        else:
            w[cols] = t
            break
        keep = w[cols] != 0.0
        cols, Z = cols[keep], Z[:, keep]
    b = 0.0
    if p.fit_intercept:
        b = t_mean - float(D @ p.design.matvec(w)) / D.sum()
    return w, b


def _min_norm_ridge(Z, u, l2):
    """``argmin ‖u − Zv‖²/(2n) + l2/2·‖v‖²`` of least norm: ``V (Vᵀc)/(λ + l2)``, ``c = Zᵀu/n``.

    On the range of ``ZᵀZ/n`` (:func:`_range_basis`, eigenvalues at rounding
    level count as zero): ``l2 = 0`` gives the minimum-norm least-squares
    solution (the pseudo-inverse's, scikit-learn's answer) and a tiny l2 its
    limit. c lies in that range, so the eigen route's ``(c − V Vᵀc)/l2`` term is
    rounding divided by l2 (Ridge(alpha=1e-16) on a wide X: off by 1e-2); an
    SVD of Z would be as exact but 40× slower than the Gram's eigh (38 × 7129).
    """
    n = Z.shape[0]
    V, lam = _range_basis(Z)
    return V @ ((V.T @ (Z.T @ u / n)) / (lam + l2))


def _range_basis(Z):
    """``(V, λ)``: an orthonormal basis of the range of ``H = ZᵀZ/n`` and H's eigenvalues on it.

    From the smaller Gram: ``ZᵀZ/n`` (k ≤ n) or ``ZZᵀ/n`` (k > n, then
    ``V = ZᵀU/√(nλ)``). Eigenvalues below ``k·ε·λ_max`` count as zero.
    """
    n, k = Z.shape
    if k <= n:
        lam, V = np.linalg.eigh(Z.T @ Z / n)
    else:
        lam, U = np.linalg.eigh(Z @ Z.T / n)
    keep = lam > max(n, k) * np.finfo(np.float64).eps * max(float(lam[-1]), 0.0)
    lam = lam[keep]
    if k <= n:
        return V[:, keep], lam
    return (Z.T @ U[:, keep]) / np.sqrt(n * lam), lam


class Polish:
    """Replaces a state's iterate by :func:`restricted_solution` when that lowers P (a
    state with ``restore_primal``, dual CD, restarts from the solved point's dual point).

    Called at the gap checks after epoch 0 of a run with a coefficient target
    (a fit runs at least one epoch, as scikit-learn's ``n_iter_ ≥ 1`` expects):
    the first time, then whenever the support has changed and the epochs since the last
    polish have touched at least as many entries as the solve costs flops (so
    polishing at most doubles the work); with an l1 part only once the gap is
    within :data:`POLISH_GAP_FACTOR` of ``tol · P(0)`` or P has moved by less than
    ``tol · P(0)`` since the previous check. Coordinate descent identifies the
    support fast and then converges linearly at a rate set by the support's
    conditioning (a wide Lasso: 75 outer iterations at a gap of 1e-6·P(0)
    while one coefficient too many crept to zero); the solve finishes it.
    """

    def __init__(self, problem, dual: bool = False):
        self.problem = problem
        #: the squared loss without an l1 part is solved once whatever the gap says when
        #: the gap is not enough: without a penalty it cannot tell the minimum-norm
        #: minimiser of a singular problem from the others (CD's iterate has components
        #: in the null space of X); a dual method's w = Xᵀα/(λn) stops at the gap floor,
        #: ~1e-7 relative on small coefficients (scikit-learn's sag tests at rtol 1e-7).
        #: Primal methods with λ2 > 0 polish only when the gap asks (leu: the solve
        #: would add 60 % to newton-cg's one-epoch fit)
        self.pending = (problem.loss_code == SQUARED and problem.l1 == 0.0
                        and (problem.l2 == 0.0 or dual))
        self._support = None
        self._work = 0.0  # entries at the last polish
        self.accepted = 0  # solves that replaced the iterate
        self._primal = None  # P at the previous check

    def __call__(self, state, certificate, work: float, threshold: float):
        """``certificate`` (primal, dual, gap) of the state's iterate after a possible polish."""
        p = self.problem
        # a primal that no longer moves is also a cue: at a tiny λ the gap stays large
        # (the dual point scaled to feasibility) long after the support is found
        stalled = self._primal is not None and self._primal - certificate[0] <= threshold
        self._primal = certificate[0]
        if _orthant(p) and certificate[2] > POLISH_GAP_FACTOR * threshold and not stalled:
            return certificate
        w, _, b = state.iterate()
        support = nonzero_rows(w) if _orthant(p) else None
        if self._support is not None and _same(support, self._support[0]):
            return certificate
        k = p.n_features if support is None else support.shape[0]
        if k == 0:
            return certificate
        cost = p.n_samples * k * min(p.n_samples, k)
        if self._support is not None and work - self._work < cost:
            return certificate
        self._support, self._work = (support,), work
        exact, self.pending = self.pending, False
        # the exact (minimum-norm) solution is kept unless rounding says it is worse
        slack = gap_rounding(p.n_samples, certificate[0]) if exact else 0.0
        return self._try(state, certificate, w, b,
                         lambda new: new[0] <= certificate[0] + slack or new[2] < certificate[2])

    def finish(self, state, certificate, work: float, limit: float):
        """At convergence: the restricted solve once more on a support not yet solved,
        when it costs at most the fit's work or :data:`FINISH_FLOPS`; kept if P is
        not higher (beyond :func:`gap_rounding`) and the gap still meets ``limit``.

        Why: a run stops anywhere within its target, and two routes to the same
        optimum (dense and sparse X, ws-cd and newton-cd, float32 and float64)
        then differ by up to the target; scikit-learn's tests compare them at
        rtol 1e-7 where its own routes share one iteration. Solved, both are the
        optimum to rounding (ElasticNetCV dense vs sparse: 6.4e-7 → rounding).
        """
        p = self.problem
        w, _, b = state.iterate()
        support = nonzero_rows(w) if _orthant(p) else None
        if self._support is not None and _same(support, self._support[0]):
            return certificate
        k = p.n_features if support is None else support.shape[0]
        if k == 0 or p.n_samples * k * min(p.n_samples, k) > max(work, FINISH_FLOPS):
            return certificate
        self._support = (support,)
        # near the optimum P is flat: its values differ by rounding, which decides nothing
        top = certificate[0] + gap_rounding(p.n_samples, certificate[0])
        return self._try(state, certificate, w, b,
                         lambda new: new[0] <= top and new[2] <= limit)

    def _try(self, state, certificate, w, b, accept):
        polished = restricted_solution(self.problem, w, b if np.ndim(b) else float(b))
        if polished is None:
            return certificate
        snap = state.snapshot()
        # a dual method starts again from the dual point of the solved w
        getattr(state, "restore_primal", state.restore)(polished)
        new = state.certificate()
        if accept(new):
            self.accepted += 1
            return new
        state.restore(snap)
        return certificate
