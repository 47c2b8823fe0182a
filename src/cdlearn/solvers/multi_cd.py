"""Block CD over the rows of a weight matrix: multi-task elastic net and multinomial logistic.

``P(W, b) = 1/n Σ_i s_i φ(x_iᵀW + b, y_i) + λ1 Ω(W) + λ2/2 ‖W‖²_F`` with
``W`` of shape (n_features, K) (see :mod:`cdlearn.multi_objectives`), solved by
RCDC in its block setting (Richtárik & Takáč, Algorithm 1/2; kernel
:mod:`cdlearn.kernels.multi_cd`), driven by :func:`cdlearn.solvers.base.run`
(trace, gap checks, callbacks, ConvergenceWarning, Ctrl-C). This is not in the
single-target solver registry (its target is a matrix or a class vector):
:mod:`cdlearn.multioutput` (layer 7) builds a :class:`MultiProblem` and calls
:func:`solve_multi`.

Block order: ``"cyclic"`` (default), ``"shuffle"`` (a fresh permutation every
epoch) or ``"uniform"`` (RCDC's uniform random blocks, UCDC). An epoch is
``n_features`` block steps plus one intercept step.

Certificate: the intercepts are first set to their exact minimiser for the
current ``W`` (closed form for least squares, a few Newton steps on the K
intercepts for multinomial), which makes ``Σ_i α_i = 0``; then
``α = −s∇φ(Z)`` is rescaled into the dual domain (``λ2 = 0``) and the gap is
the sum of the Fenchel–Young terms. ``D`` is computed from the conjugates,
independently of the gap (``P − D = gap`` up to rounding). Without a penalty
the gap slot holds ``max |∇_W f|`` and the dual is None, as for primal CD.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.sparse.linalg import LinearOperator, cg

from ..data import Design, check_choice
from ..kernels.multi_cd import multi_cd_epoch
from ..multi_objectives import (
    MULTI_SQUARED,
    MULTINOMIAL,
    dual_feasible_scale,
    multinomial_dual_point,
    multinomial_loss_gradient,
    multinomial_sums,
    penalty_conjugate,
    penalty_fenchel_young,
    penalty_value,
    softmax_rows,
)
from ..sampling import CYCLIC, SAMPLING_CODES, SHUFFLE, UNIFORM, make_rng_state
from .base import SolveResult, run
from .stopping import FINISH_FLOPS

BLOCK_ORDERS = ("cyclic", "shuffle", "uniform")
MULTI_SOLVERS = ("multi-cd", "multinomial-lbfgs", "multinomial-newton")
LBFGS_BATCH = 20  # L-BFGS iterations in the first epoch (between two certificates) ...
LBFGS_GROWTH, LBFGS_MAX_BATCH = 1.5, 500  # ... then 1.5× more per epoch, at most 500
RESYNC_EVERY = 20  # recompute the scores from scratch every this many checks
#: L-BFGS hands over to Newton steps once the gap is within this factor of tol · P(0)
NEWTON_GAP_FACTOR = 100.0
#: Newton steps at most in :meth:`MultiLBFGSState.finish`
FINISH_NEWTON_STEPS = 3
#: conjugate-gradient iterations per Newton step (truncated Newton)
NEWTON_CG_ITERATIONS = 200


@dataclass
class MultiProblem:
    """A validated matrix problem: ``loss`` is ``"squared"`` (``Y`` (n, K)) or
    ``"multinomial"`` (``labels`` (n,) in 0..K-1); ``group`` selects the row-group
    penalty (multi-task) instead of the elementwise one."""

    design: Design
    loss: str
    Y: np.ndarray | None
    labels: np.ndarray
    n_outputs: int
    sample_weight: np.ndarray
    l1: float
    l2: float
    group: bool
    fit_intercept: bool

    @property
    def n_samples(self) -> int:
        return self.design.n_samples

    @property
    def n_features(self) -> int:
        return self.design.n_features

    @property
    def loss_code(self) -> int:
        return MULTINOMIAL if self.loss == "multinomial" else MULTI_SQUARED


def _times(design: Design, W: np.ndarray) -> np.ndarray:
    """``X @ W`` as a float64 (n, K) array."""
    return np.ascontiguousarray(np.asarray(design.to_scipy() @ W, dtype=np.float64))


def _transpose_times(design: Design, A: np.ndarray) -> np.ndarray:
    """``Xᵀ @ A`` as a float64 (d, K) array."""
    return np.asarray(design.to_scipy().T @ A, dtype=np.float64)


def multinomial_intercept(Z0, labels, sw, b0, max_iter=50):
    """argmin_b Σ s_i φ(z0_i + b, y_i): damped Newton on the K intercepts.

    The Hessian ``Σ s_i (diag p_i − p_i p_iᵀ)`` is singular along the all-ones
    direction (shifting every intercept changes nothing); the least-norm
    Newton direction stays orthogonal to it, and the result is centred.
    """
    n, K = Z0.shape
    b = np.array(b0, dtype=np.float64)
    onehot_w = np.zeros(K)
    np.add.at(onehot_w, labels, sw)
    P = np.empty_like(Z0)

    def value(bb):
        Z = Z0 + bb
        lse = softmax_rows(Z, P)
        return float(sw @ (lse - Z[np.arange(n), labels]))

    f = value(b)
    scale = abs(f) + float(sw.sum())
    for _ in range(max_iter):
        g = sw @ P - onehot_w
        SP = P * sw[:, None]
        H = np.diag(SP.sum(axis=0)) - P.T @ SP
        step = np.linalg.lstsq(H, -g, rcond=None)[0]
        decrement = -float(g @ step)
        if not decrement > 1e-14 * scale:  # converged to rounding (also catches NaN)
            break
        t = 1.0
        for _ in range(30):
            f_new = value(b + t * step)
            if f_new <= f - 1e-4 * t * decrement:
                break
            t *= 0.5
        else:
            break
        b += t * step
        f = f_new
    return b - b.mean()


class MultiCDState:
    """State of block CD on one :class:`MultiProblem` (protocol of :func:`base.run`)."""

    def __init__(self, problem: MultiProblem, *, sampling="cyclic", seed=0, W0=None, b0=None):
        self.problem = p = problem
        n, d, K = p.n_samples, p.n_features, p.n_outputs
        if sampling not in BLOCK_ORDERS:
            raise ValueError(f"sampling={sampling!r} is not available for block CD over "
                             f"weight rows; choose one of {list(BLOCK_ORDERS)}")
        self.mode = SAMPLING_CODES[sampling]
        self.prob = np.ones(1)
        self.alias = (np.arange(d, dtype=np.int64) if self.mode == SHUFFLE
                      else np.zeros(1, dtype=np.int64))
        assert self.mode in (CYCLIC, SHUFFLE, UNIFORM)
        self.rng = make_rng_state(seed)
        self.counter = 0
        sw = p.sample_weight
        # Dense data with an intercept: fit on columns centred by their weighted mean
        # (z = (x − μ)ᵀW + b', b = b' − μᵀW: the same objective). A column then has no
        # component along the intercept's all-ones column, which CD would otherwise
        # zigzag against (iris, C = 1: 699 -> 16 epochs to a 1e-4 gap). The gap is
        # unchanged: Xᵀα = (X − 1μᵀ)ᵀα when Σα = 0, which the exact intercept ensures.
        self.shift = np.zeros(d)
        self.design = p.design
        if p.fit_intercept and not p.design.is_sparse:
            A = p.design.to_scipy()
            self.shift = (sw @ A) / sw.sum()
            self.design = Design(A - self.shift.astype(A.dtype))
        self.view = self.design.csc
        if np.all(sw == 1.0):
            col_sq = self.design.col_sq_norms
        else:
            M = self.design.to_scipy()
            sq = M.multiply(M) if self.design.is_sparse else np.asarray(M, dtype=np.float64) ** 2
            col_sq = np.asarray(sq.T @ sw, dtype=np.float64).ravel()
        beta = 0.5 if p.loss == "multinomial" else 1.0  # Böhning: diag(p) − ppᵀ ≼ ½I
        self.lips = beta * col_sq / n
        self.lips[self.design.col_nnz == 0] = 0.0
        self.intercept_lips = beta * float(sw.sum()) / n if p.fit_intercept else 0.0
        self.W = np.zeros((d, K)) if W0 is None else np.array(W0, dtype=np.float64)
        self.W[self.lips == 0] = 0.0
        self.b = np.zeros(K) if (b0 is None or not p.fit_intercept) else \
            np.array(np.broadcast_to(np.asarray(b0, dtype=np.float64), (K,)))
        self.b += self.shift @ self.W  # internal intercept b' of the centred columns
        self.gbuf = np.zeros(K)
        self.hbuf = np.zeros(K)
        self.ubuf = np.zeros(K)
        self.ones = np.ones(n, dtype=self.view.data.dtype)
        self.ones_indptr = np.array([0, n], dtype=self.view.indptr.dtype)
        self.labels = np.ascontiguousarray(p.labels, dtype=np.int64)
        self.alpha = None
        self._checks = 0
        self._resync()

    # ------------------------------------------------------------ scores
    def _resync(self):
        p = self.problem
        self.Z = _times(self.design, self.W) + self.b
        if p.loss == "multinomial":
            self.P = np.empty_like(self.Z)
            self.lse = softmax_rows(self.Z, self.P)
        else:
            self.Z -= p.Y  # the kernel keeps the residual
            self.P = np.zeros((1, 1))
            self.lse = np.zeros(1)

    def _exact_intercept(self):
        p = self.problem
        if not p.fit_intercept:
            return
        sw = p.sample_weight
        if p.loss == "multinomial":
            b = multinomial_intercept(self.Z - self.b, self.labels, sw, self.b)
            self.Z += b - self.b
            self.b = b
            self.lse = softmax_rows(self.Z, self.P)
        else:
            shift = -(sw @ self.Z) / sw.sum()
            self.Z += shift
            self.b = self.b + shift

    # ------------------------------------------------------------ protocol
    @property
    def w(self):
        return self.W

    @property
    def intercept(self):
        b = self.b - self.shift @ self.W
        # multinomial: only differences matter; report the centred intercepts
        return b - b.mean() if self.problem.loss == "multinomial" else b

    def run_epoch(self):
        p, v = self.problem, self.view
        b = self.b[None, :]  # a (1, K) view: the intercepts are one more block
        entries, updates, self.counter = multi_cd_epoch(
            v.data, v.indices, v.indptr, p.loss_code, self.labels, p.sample_weight, self.Z,
            self.P, self.lse, self.W, self.lips, p.l1, p.l2, p.group, self.mode, self.prob,
            self.alias, p.n_features, self.rng, self.counter, self.gbuf, self.hbuf,
            self.ubuf, self.ones, self.ones_indptr, b, self.intercept_lips,
        )
        return entries, updates

    def reference(self) -> float:
        """P(0) with zero intercepts: the scale of the relative stopping rule."""
        p = self.problem
        sw = p.sample_weight
        if p.loss == "multinomial":
            return float(sw.sum() * np.log(p.n_outputs) / p.n_samples)
        return float(0.5 * (sw @ np.einsum("ik,ik->i", p.Y, p.Y)) / p.n_samples)

    def certificate(self):
        """``(P, D, gap)`` of the current iterate (see the module docstring)."""
        p = self.problem
        self._checks += 1
        if self._checks % RESYNC_EVERY == 0:
            self._resync()
        self._exact_intercept()
        n, sw = p.n_samples, p.sample_weight
        if p.loss == "multinomial":
            A, _ = multinomial_dual_point(self.Z, self.labels, sw)
        else:
            A = -self.Z * sw[:, None]
        U = _transpose_times(self.design, A) / n
        if p.l1 == 0.0 and p.l2 == 0.0:
            loss = (multinomial_sums(self.Z, self.labels, sw, 1.0)[0] if p.loss == "multinomial"
                    else 0.5 * float(sw @ np.einsum("ik,ik->i", self.Z, self.Z)))
            return loss / n, None, float(np.max(np.abs(U), initial=0.0))
        c = dual_feasible_scale(U, p.l1, p.l2, p.group)
        U *= c
        pen = penalty_value(self.W, p.l1, p.l2, p.group)
        if p.loss == "multinomial":
            loss, fy, negent = multinomial_sums(self.Z, self.labels, sw, c)
            conj = negent
        else:
            R = self.Z
            sq = np.einsum("ik,ik->i", R, R)
            loss = 0.5 * float(sw @ sq)
            fy = 0.5 * (1.0 - c) ** 2 * float(sw @ sq)
            V = c * R
            conj = float(sw @ (0.5 * np.einsum("ik,ik->i", V, V)
                               + np.einsum("ik,ik->i", V, p.Y)))
        sum_alpha = c * A.sum(axis=0)
        primal = loss / n + pen
        dual = (-conj / n - penalty_conjugate(U, p.l1, p.l2, p.group)
                - float(self.b @ sum_alpha) / n)
        gap = fy / n + penalty_fenchel_young(self.W, U, p.l1, p.l2, p.group)
        return primal, dual, gap

    def snapshot(self):
        return self.W.copy(), self.intercept.copy()

    def restore(self, snap):
        W, b = snap
        self.W[:] = W
        self.b = np.asarray(b, dtype=np.float64) + self.shift @ self.W
        self._resync()

    #: a snapshot is ``(W, intercept)`` as ``iterate`` gives them, so
    #: :class:`~cdlearn.solvers.stopping.Polish` may hand over a solved iterate
    restore_primal = restore

    def iterate(self):
        return self.W.copy(), None, self.intercept

    def nnz_w(self) -> int:
        return int(np.count_nonzero(self.W))

    def active(self) -> int:
        """Number of nonzero rows (features in use)."""
        return int(np.count_nonzero(np.any(self.W != 0, axis=1)))


class MultiLBFGSState(MultiCDState):
    """L-BFGS (scipy's L-BFGS-B, unbounded) on a smooth multinomial problem (λ1 = 0).

    An epoch is a batch of ``LBFGS_BATCH`` L-BFGS iterations on the exact
    objective ``1/n Σ s_i φ(z_i, y_i) + λ2/2 ‖W‖²`` over ``(W, b)`` in the block-CD
    state's coordinates (dense columns centred), with the analytic gradient
    ``Xᵀ(s ⊙ (softmax(Z) − Y))/n + λ2 W``; between batches :func:`base.run`
    checks the block-CD certificate (:meth:`MultiCDState.certificate`), so the
    stopping rule, trace and warnings are those of block CD. Each batch restarts
    L-BFGS's curvature memory, so batches grow (20, 30, 45, ... iterations):
    news20 (C = 1, tol 1e-6) took 186 s with fixed batches of 20, 120 s with
    60 (same run), while small problems stop after the first batch. A batch that cannot decrease the objective
    (line search at rounding level) is replaced by one block-CD epoch.
    Why: a block-CD epoch recomputes K exponentials per touched nonzero; L-BFGS
    needs one softmax and two products with X per evaluation (digits, C = 1:
    see :mod:`cdlearn.estimators._multinomial` for the measured times).

    Once a certificate's gap is below ``newton_gap`` (:data:`NEWTON_GAP_FACTOR`
    times the run's ``tol · P(0)``), an epoch is one truncated Newton
    step instead (conjugate gradients on Hessian-vector products, forcing term
    ``min(½, √‖g‖∞)``, Armijo backtracking; Nocedal & Wright, Algorithm 7.1):
    L-BFGS converges linearly, and the coefficient target of
    :class:`~cdlearn.solvers.stopping.CoefficientTarget` asks for a gap about
    ``λ2 (tol ‖W‖∞)²``, which Newton reaches in a few steps from there.
    """

    predict_checks = False

    def __init__(self, problem: MultiProblem, *, W0=None, b0=None, batch=LBFGS_BATCH):
        if problem.loss != "multinomial" or problem.l1 != 0.0:
            raise ValueError("solver='multinomial-lbfgs' or 'multinomial-newton' needs the "
                             "multinomial loss with an l2 penalty or none; use "
                             "solver='multi-cd' for l1 / elastic net")
        super().__init__(problem, W0=W0, b0=b0)
        self.batch = batch
        self.lbfgs_iterations = 0
        self.cd_fallbacks = 0
        self.newton_steps = 0
        self.threshold = 0.0  # set by solve_multi: tol · P(0) ...
        self.newton_gap = 0.0  # ... and NEWTON_GAP_FACTOR times it
        self._gap = np.inf  # of the last certificate
        self._stuck = False  # a Newton step found no descent below tol · P(0)

    def certificate(self):
        cert = super().certificate()
        self._gap = cert[2]
        return cert

    def _split(self, x):
        d, K = self.problem.n_features, self.problem.n_outputs
        W = x[:d * K].reshape(d, K)
        return W, (x[d * K:] if self.problem.fit_intercept else self.b)

    def _value_and_gradient(self, x):
        p = self.problem
        n, sw = p.n_samples, p.sample_weight
        W, b = self._split(x)
        G = _times(self.design, W) + b
        value = multinomial_loss_gradient(G, self.labels, sw, 1.0 / n)  # G: ∂/∂Z
        value += 0.5 * p.l2 * float(np.vdot(W, W))
        grad_W = _transpose_times(self.design, G) + p.l2 * W
        self._evaluations += 1
        if self._evaluations == 1:
            self._start_value = value
        if not p.fit_intercept:
            return value, grad_W.ravel()
        return value, np.concatenate([grad_W.ravel(), G.sum(axis=0)])

    def run_epoch(self):
        p = self.problem
        x0 = np.concatenate([self.W.ravel(), self.b]) if p.fit_intercept else self.W.ravel()
        self._evaluations = 0
        if self._gap <= self.newton_gap:
            entries = 0 if self._stuck else self._newton_step(x0)
            if entries:
                return entries, 1
            if self._gap <= self.threshold:
                # no descent at rounding level below tol · P(0): the point stays, and
                # base.run's stall rule ends the run (L-BFGS would only move it by rounding)
                self._stuck = True
                return 0, 0
        # ftol = gtol = 0: only the iteration budget (or a stalled line search) ends a
        # batch; the duality gap decides convergence
        res = minimize(self._value_and_gradient, x0, jac=True, method="L-BFGS-B",
                       options={"maxiter": self.batch, "ftol": 0.0, "gtol": 0.0})
        entries = 2 * self._evaluations * p.design.nnz
        self.lbfgs_iterations += int(res.nit)
        self.batch = min(int(self.batch * LBFGS_GROWTH), LBFGS_MAX_BATCH)
        if res.nit == 0 or not res.fun < self._start_value:
            self.cd_fallbacks += 1
            cd_entries, updates = super().run_epoch()
            return entries + cd_entries, updates
        W, b = self._split(res.x)
        self.W[:] = W
        self.b = np.array(b, dtype=np.float64)
        self._resync()
        return entries, int(res.nit)

    def _newton_step(self, x0):
        """One truncated Newton step from ``x0``; the entries of X it read (0: no descent)."""
        p = self.problem
        n = p.n_samples
        value, grad = self._value_and_gradient(x0)
        gnorm = float(np.max(np.abs(grad), initial=0.0))
        P = np.empty_like(self.Z)
        softmax_rows(self.Z, P)
        S = P * (p.sample_weight / n)[:, None]
        products = 0

        def hessian_times(v):
            nonlocal products
            products += 1
            V, vb = self._split(v)
            dZ = _times(self.design, V)
            if p.fit_intercept:
                dZ += vb
            # s_i/n (diag p_i − p_i p_iᵀ) dz_i, the softmax's Jacobian
            T = S * (dZ - np.einsum("ik,ik->i", P, dZ)[:, None])
            out = _transpose_times(self.design, T) + p.l2 * V
            return (np.concatenate([out.ravel(), T.sum(axis=0)]) if p.fit_intercept
                    else out.ravel())

        H = LinearOperator((x0.size, x0.size), matvec=hessian_times, dtype=np.float64)
        # Jacobi preconditioner: the Hessian's diagonal Σ_i s_i/n p_ik (1 − p_ik) x_ij² + λ2
        M = self.design.to_scipy()
        sq = M.multiply(M) if self.design.is_sparse else np.square(M, dtype=np.float64)
        T = S * (1.0 - P)
        diag = np.asarray(sq.T @ T, dtype=np.float64).ravel() + p.l2
        if p.fit_intercept:
            diag = np.concatenate([diag, T.sum(axis=0)])
        diag[diag <= 0.0] = 1.0
        precondition = LinearOperator(H.shape, matvec=lambda v: v / diag, dtype=np.float64)
        step, _ = cg(H, -grad, rtol=min(0.5, np.sqrt(gnorm)), atol=0.0,
                     maxiter=NEWTON_CG_ITERATIONS, M=precondition)
        slope = float(grad @ step)
        t = 1.0
        for _ in range(30):
            if not slope < 0.0:
                break
            trial = x0 + t * step
            v_try, g_try = self._value_and_gradient(trial)
            # near the optimum the decrease (~ g²/h) is below the rounding of the value:
            # a step that keeps the value within rounding and shrinks the gradient counts
            if v_try <= value + 1e-4 * t * slope or (
                    v_try <= value + 1e-15 * abs(value)
                    and np.max(np.abs(g_try), initial=0.0) < 0.5 * gnorm):
                W, b = self._split(trial)
                self.W[:] = W
                self.b = np.array(b, dtype=np.float64)
                self._resync()
                self.newton_steps += 1
                return 2 * (self._evaluations + products) * p.design.nnz
            t *= 0.5
        return 0  # no descent at rounding level: an L-BFGS batch (or CD epoch) instead

    def finish(self, certificate):
        """At convergence of a small fit (``K · nnz ≤`` :data:`~cdlearn.solvers.stopping.FINISH_FLOPS`):
        Newton steps while each at least halves the gap; the certificate of the point kept.

        Why (as :meth:`cdlearn.solvers.stopping.Polish.finish`): a run stops anywhere
        within its target, so two routes to one optimum (weighted and repeated rows,
        dense and sparse X) differ by up to it; scikit-learn's sample-weight checks
        compare them at rtol 1e-7 (sparse iris-like data: 1.5e-7 at gaps of 1e-11).
        """
        p = self.problem
        if p.n_outputs * max(p.design.nnz, 1) > FINISH_FLOPS:
            return certificate
        for _ in range(FINISH_NEWTON_STEPS):
            snap = self.snapshot()
            x0 = np.concatenate([self.W.ravel(), self.b]) if p.fit_intercept else self.W.ravel()
            self._evaluations = 0
            if not self._newton_step(x0):
                break
            new = self.certificate()
            if not new[2] <= 0.5 * certificate[2]:
                self.restore(snap)
                self.certificate()
                break
            certificate = new
        return certificate

    def extra_info(self):
        return {"lbfgs_iterations": self.lbfgs_iterations, "cd_fallbacks": self.cd_fallbacks,
                "newton_steps": self.newton_steps}


def solve_multi(problem: MultiProblem, *, solver="multi-cd", sampling="cyclic", tol=1e-6,
                max_epochs=1000, seed=0, W0=None, b0=None, callback=None,
                verbose=False, coef_tol=None) -> SolveResult:
    """Run ``solver`` (block CD, or L-BFGS then Newton, or Newton, for smooth multinomial
    problems) on ``problem`` to ``gap ≤ tol · P(0)`` (and, with ``coef_tol``, the
    coefficient target of :func:`cdlearn.solvers.base.run`: for multi-task least squares
    μ of every task's Hessian ``X_SᵀSX_S/n + λ2 I`` on the non-zero rows S, without an
    l1 part the iterate replaced at checks by the ridge solution when lower; for the
    multinomial loss μ = λ2); ``result.w`` is (d, K), ``result.intercept`` (K,)."""
    check_choice("solver", solver, MULTI_SOLVERS)
    if solver in ("multinomial-lbfgs", "multinomial-newton"):
        state = MultiLBFGSState(problem, W0=W0, b0=b0)
        # "multinomial-newton": every epoch a Newton step (an epoch then depends on the
        # point alone: max_iter=1 twice, warm started, is max_iter=2)
        state.threshold = tol * state.reference()
        state.newton_gap = (np.inf if solver == "multinomial-newton"
                            else NEWTON_GAP_FACTOR * state.threshold)
    else:
        state = MultiCDState(problem, sampling=sampling, seed=seed, W0=W0, b0=b0)
    return run(state, solver=solver, tol=tol, max_epochs=max_epochs, callback=callback,
               verbose=verbose, coef_tol=coef_tol)
