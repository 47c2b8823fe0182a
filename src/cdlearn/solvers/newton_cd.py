"""Proximal Newton with CD on the quadratic model (GLMNET / newGLMNET), smooth losses.

One "epoch" of this method is one outer Newton iteration at ``w``:

1. ``c = sφ'(z)/n``, ``D = sφ''(z)/n`` (generalized Hessian for the squared
   hinge), ``g = Xᵀc`` (and ``Σc`` for the intercept);
2. approximate minimisation of the model
   ``q(Δ) = gᵀΔ + ½ΔᵀXᵀDXΔ + λ1‖w+Δ‖₁ + λ2/2‖w+Δ‖²`` by CD in a random order
   per inner epoch (:mod:`cdlearn.kernels.newton_cd`), the l2 part exact;
3. a step along Δ on the margins ``z + t·XΔ`` (no product with X per trial):
   with an l1 term, Armijo backtracking with newGLMNET's condition
   ``F(w+tΔ) - F(w) <= σ t (∇fᵀΔ + λ1(‖w+Δ‖₁ - ‖w‖₁))``, σ = 0.01; without
   one (l2, none) a near-exact line search
   (:func:`cdlearn.kernels.newton_cd.newton_line_search`, safeguarded Newton
   on ``h(t) = F(w+tΔ)`` to ``|h'(t)| <= 0.1|h'(0)|``, a certified decrease,
   Armijo as fallback). Far from the optimum of a weakly regularised logistic
   loss the best step is far from 1 (w8a, λ = 1/n: 4.2, 0.89, 1.9, ...);
   taking it cut the outer iterations to gap 1e-8·P(0) from 9 to 6 (w8a) and
   7 to 5 (ijcnn1), each saving one ``XᵀDX``.

References: Friedman, Hastie & Tibshirani (2010), "Regularization paths for
GLMs via coordinate descent", JSS 33(1); Yuan, Ho & Lin (2012), "An improved
GLMNET for L1-regularized logistic regression", JMLR 13 (newGLMNET).

Hessian form (``hessian=``): ``"gram"`` forms ``H = XᵀDX`` densely (Σ_i nnz_i²/2
products per outer iteration; inner steps O(d), no data pass), ``"data"``
keeps ``XΔ`` (inner steps O(nnz of the column)). ``"auto"`` takes the Gram form
when ``m = d (+1) <= 2048`` and forming H costs at most ``GRAM_FACTOR = 25``
data passes, i.e. ``Σ_i nnz_i(nnz_i+1)/2 + m² <= 25·nnz``: a data-form inner
epoch costs about two passes (gather + scatter), and near the optimum the inner
solves take tens of epochs (a9a λ = 1/n: data form 68 outer iterations /
11 s, Gram form 7 / 0.2 s), so H pays for itself. a9a (7.4), w8a (11.8) and
ijcnn1 (~7) take the Gram form; reuters (42, d = 8315) and news20 the data form.
Dense X forms H by BLAS (:func:`dense_gram`, ``ZᵀZ`` with ``Z = sqrt(D)·X``),
priced at ``BLAS_GRAM_PRICE`` = 0.13 entry per product (measured): a dense
10,000 × 100 takes the Gram form (13 passes), 1,000 × 1,000 the data form.

Inner solver (``inner=``): ``"cd"`` is the CD above. With the Gram form and no
l1 term (penalties l2 / none) the model is a smooth quadratic, and ``"auto"``
then solves it exactly by a Cholesky factorisation of ``H + λ2 I`` when
``m <= 1024`` (``"cholesky"``; :func:`cdlearn.kernels.newton_cd.cholesky_factor`,
m³/3 flops): on a9a at λ = 1/(100n) (one-hot groups, condition ~1e9) cyclic CD
on the model stalls at 1,000 inner epochs per outer iteration and the outer
loop crawls (gap 1e-6 after 60 iterations), while exact steps converge
quadratically (9 iterations, ~0.1 s). With l1 / elastic net the inner solver is
always CD (newGLMNET), on the working set.

Inner stopping (adaptive, as newGLMNET's shrinking ``inner_eps``): the sum of
the model's coordinate violations must drop below ``η·S`` with ``S`` the
outer violation sum and ``η = min(0.1, S/S₀)·ρ`` -- loose far from the
optimum, superlinear near it; ``ρ`` is quartered whenever an inner solve stops
after one epoch (the model was already solved to η: ask more next time).
With l1 the inner CD visits a working set: nonzero coefficients and
coordinates with ``|g_j| > λ1 - M/n`` (``M`` the previous outer max
violation; newGLMNET's shrinking rule), which always holds every violator.
On dense X that set is capped at ``max(20, 2·nnz(w))`` coordinates, the largest
violators first (skglm's growth rule): at ``w = 0`` it held every violator, and
the first Hessian block was the largest single cost on tall problems
(10,000 × 100 at λmax/20: 81 columns for 21 nonzeros; capped, CPU time to a
relative 1e-6 23.5 -> 16.5 ms, to 1e-10 27.8 -> 18.3 ms, in one process).

Damping: under an l2 penalty the model is strongly convex and ``nu = 0``.
Without it (l1 alone, or ``none``) ``XᵀDX`` may be singular; every diagonal
entry gets ``nu = 1e-12·max_j H_jj`` (newGLMNET adds ν = 1e-12), which keeps
each coordinate step finite and barely perturbs the direction (the line
search is on the true objective, so convergence is unaffected).

The squared loss has a constant Hessian: the Gram form builds H once, and the
model is the objective (t = 1 passes the Armijo test at once).

Entries counted per outer iteration: X entries read (gradient, Gram products,
data-form columns, ``XΔ``), H entries read by the Gram-form inner steps or
m³/3 + m² for a Cholesky solve, and n per line-search trial (a pass over the
margins).

Certificate: as primal CD (:mod:`cdlearn.solvers.primal_cd`): intercept set to
its exact minimiser, ``α = -sφ'(z)`` rescaled for l1, gap as a sum of
Fenchel–Young terms; without a penalty, the max KKT violation. It is computed
in one pass over the margins plus one ``Xᵀc``
(:func:`cdlearn.kernels.newton_cd.margin_terms`), and that pass *is* the first
step of the next outer iteration (``c``, ``D``, ``g = Xᵀc = -Xᵀα/n``), so a
check every outer iteration costs about nothing beyond the primal value.
"""

from __future__ import annotations

import numpy as np

from ..kernels.newton_cd import (
    armijo_line_search,
    cholesky_apply,
    cholesky_factor,
    column_gradient_curvature,
    data_inner_cd,
    gram_gradient,
    gram_inner_cd,
    margin_terms,
    newton_line_search,
    newton_weights,
    outer_violations,
    scaled_columns,
    sparse_gram_block,
    working_set,
)
from ..losses import SQUARED, smoothness, weighted_loss_and_fenchel_young_sums
from ..penalties import (
    dual_feasible_scale,
    penalty_conjugate,
    penalty_fenchel_young,
    penalty_value,
)
from ..sampling import make_rng_state
from .base import PrimalIterate, Problem, initial_primal
from .intercept import margin_certificate, margin_kkt_violation, refresh_margins

SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
SUPPORTED_PENALTIES = ("none", "l2", "l1", "elastic_net")
OPTIONS = ("hessian", "inner", "max_inner")
HESSIAN_FORMS = ("auto", "gram", "data")
INNER_METHODS = ("auto", "cd", "cholesky")
GRAM_MAX_AUTO = 2048  # largest m = d (+1) for which "auto" forms H (32 MB)
GRAM_MAX = 8192  # hard limit for hessian="gram" (512 MB)
GRAM_FACTOR = 25.0
#: one product of a dense Gram by BLAS (``Zᵀ Z``, n·m² of them) priced in entries of a
#: data pass: measured 0.13 on this machine (10,000 × 100: ``ZᵀZ`` 14 ms for 10⁸
#: products, ``Xᵀc`` 1.1 ms for 10⁶ entries; 1,000 × 1,000: 139 ms and 0.24-0.5 ms)
BLAS_GRAM_PRICE = 0.13
_GRAM_BLOCK = 1 << 18  # entries of sqrt(D)·X formed at once by dense_gram
CHOLESKY_MAX = 1024  # inner="auto" factorises H up to this m (m³/3 ≤ 0.36 GFlop)
ARMIJO = 0.01
MAX_TRIALS = 30
LINE_ETA = 0.1  # the smooth line search stops at |h'(t)| <= LINE_ETA·|h'(0)|
LINE_EVALS = 8
ETA_MAX = 0.1
DAMPING = 1e-12
#: dense X with an l1 term: the inner CD's working set holds at most
#: max(WS_START, WS_GROWTH·nnz(w)) coordinates (:meth:`NewtonCDState._cap_working_set`)
WS_START = 20
WS_GROWTH = 2
SQRT_D_MIN = 1e-150  # X_ws Δ is read from sqrt(D)·X_ws when every sqrt(D_i) is above this
RESYNC_EVERY = 10  # recompute z = Xw + b from scratch every this many checks


def gram_work(problem: Problem) -> float:
    """Price of forming ``XᵀDX`` in entries of a data pass.

    Sparse rows: the row kernel's products Σ_i nnz_i(nnz_i+1)/2 (one entry each).
    Dense X: BLAS's n·m² products (:func:`dense_gram`) at :data:`BLAS_GRAM_PRICE`.
    """
    if not problem.design.is_sparse:
        n, d = problem.design.shape
        return BLAS_GRAM_PRICE * n * float(d) * d
    def work():
        k = problem.design.row_nnz.astype(np.int64)
        return float(np.sum(k * (k + 1) // 2))

    # X alone decides it: kept on the design (auto and the state ask up to 3 times a solve)
    return problem.design.derived("gram_work", work)


def dense_gram_block(s: np.ndarray, rows: np.ndarray, columns: np.ndarray,
                     Z: np.ndarray) -> np.ndarray:
    """The block ``XᵀDX[rows, rows]`` (index ``d`` is the intercept's, last in
    ``rows``) as a compact |rows|×|rows| array, ``ZZᵀ`` by BLAS syrk with
    ``Z = X[:, rows]ᵀ·s``, ``s = sqrt(D)``: n·|rows|²/2 products. ``columns``: X's
    columns as the rows of a (d, n) array; ``Z``: a work buffer of at least |rows|
    rows, left holding ``Z`` for the caller.

    Forming the rows ``H[rows, :]`` by numpy's gather, product and gemm instead
    cost n·|rows|·d products plus two fresh arrays: on 10,000 × 100 at λmax/10
    (17 nonzeros, working sets of 17-66) that was half of the solve's time.
    """
    d, n = columns.shape
    k = rows.shape[0]
    feats = rows[rows < d]
    kf = feats.shape[0]
    Zf = Z[:kf]
    scaled_columns(columns, feats, s, Zf)
    H = np.empty((k, k))
    H[:kf, :kf] = Zf @ Zf.T
    if kf < k:
        H[:kf, kf] = H[kf, :kf] = Zf @ s
        H[kf, kf] = s @ s
    return H


def dense_gram(X: np.ndarray, D: np.ndarray, fit_intercept: bool, H: np.ndarray) -> int:
    """``H = XᵀDX`` for dense ``X`` (row/column ``d``: ``XᵀD1`` and ``ΣD`` with an
    intercept) as ``ZᵀZ``, ``Z = sqrt(D)·X`` a block of rows at a time (BLAS syrk
    through numpy; D ≥ 0 for every loss here). Returns the products, n·d(d+1)/2.

    The row kernel of the sparse form does the same products one at a time:
    10,000 × 100 took 26 ms where BLAS takes 14 ms, and the gap grows with d.
    """
    n, d = X.shape
    s = np.sqrt(D)
    rows = max(1, _GRAM_BLOCK // d)
    Hx = H[:d, :d]
    Hx[:, :] = 0.0
    for start in range(0, n, rows):
        Z = s[start:start + rows, None] * X[start:start + rows]
        Hx += Z.T @ Z
    if fit_intercept:
        H[d, :d] = H[:d, d] = X.T @ D
        H[d, d] = D.sum()
    return n * d * (d + 1) // 2


def terms_certificate(problem: Problem, terms, w, u, intercept_term) -> tuple:
    """``(P, D, gap)`` from :func:`~cdlearn.kernels.newton_cd.margin_terms`' sums
    ``terms = (loss, conj, fy)`` at ``α = -sφ'(z)`` (``u = Xᵀα/n`` feasible: no
    l1 rescaling); ``intercept_term`` is D's ``-b Σα/n``."""
    p = problem
    inv_n = 1.0 / p.n_samples
    loss, conj, fy = terms
    primal = loss * inv_n + penalty_value(w, p.l1, p.l2)
    dual = -conj * inv_n - penalty_conjugate(u, p.l1, p.l2) + intercept_term
    gap = fy * inv_n + penalty_fenchel_young(w, u, p.l1, p.l2)
    return primal, dual, gap


def choose_hessian(problem: Problem, hessian: str = "auto") -> str:
    """The Hessian form ``"gram"`` or ``"data"`` (module docstring's rule)."""
    if hessian not in HESSIAN_FORMS:
        raise ValueError(f"hessian must be one of {', '.join(map(repr, HESSIAN_FORMS))}, "
                         f"got {hessian!r}")
    m = problem.n_features + int(problem.fit_intercept)
    if hessian == "gram":
        if m > GRAM_MAX:
            raise ValueError(f"hessian='gram' needs a dense {m}×{m} matrix; it is limited to "
                             f"{GRAM_MAX} features (use hessian='data')")
        return "gram"
    if hessian == "data":
        return "data"
    nnz = max(problem.design.nnz, 1)
    if m <= GRAM_MAX_AUTO and gram_work(problem) + m * m <= GRAM_FACTOR * nnz:
        return "gram"
    return "data"


class NewtonCDState(PrimalIterate):
    """State of proximal Newton CD on one problem (see module docstring)."""

    def __init__(self, problem: Problem, *, hessian="auto", inner="auto", max_inner=None,
                 seed=0, w0=None,
                 intercept0=0.0, batch_size=1, sampling=None, power=None, step=None):
        # sampling/power/step are primal-CD options that cdlearn.solve passes to every
        # primal method; the inner CD here always takes a fresh random order per epoch
        if batch_size != 1:
            raise ValueError("solver='newton-cd' takes no batch_size (its inner CD is serial)")
        self.problem = p = problem
        d, n = p.n_features, p.n_samples
        self.form = choose_hessian(p, hessian)
        if inner not in INNER_METHODS:
            raise ValueError(f"inner must be one of {', '.join(map(repr, INNER_METHODS))}, "
                             f"got {inner!r}")
        if inner == "cholesky" and (self.form != "gram" or p.l1 > 0.0):
            raise ValueError("inner='cholesky' needs the Gram form and no l1 term "
                             "(hessian='gram', penalty 'l2' or 'none')")
        if inner == "auto":
            inner = ("cholesky" if self.form == "gram" and p.l1 == 0.0
                     and d + int(p.fit_intercept) <= CHOLESKY_MAX
                     else "cd")
        self.inner = inner
        if max_inner is None:
            # Gram inner epochs cost O(|ws|·d), far below a data pass: solve the model well
            max_inner = 1000 if self.form == "gram" else 100
        if isinstance(max_inner, bool) or not isinstance(max_inner, (int, np.integer)) \
                or max_inner < 1:
            raise ValueError(f"max_inner must be an integer >= 1, got {max_inner!r}")
        self.max_inner = int(max_inner)
        self.m = m = d + int(p.fit_intercept)
        self.inv_n = 1.0 / n
        self.w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
        self.w[p.design.col_nnz == 0] = 0.0  # optimal for empty columns under any penalty
        self._intercept = np.array([float(intercept0) if p.fit_intercept else 0.0])
        self.alpha = None
        if w0 is None:  # w = 0: no product with X
            self.z = np.full(n, self._intercept[0])
        else:
            self.z = p.design.matvec(self.w) + self._intercept[0]
        self.rng = make_rng_state(seed)
        # the largest coordinate curvature the loss allows (β max_j s‖x_j‖²/n, and the
        # intercept's β Σs/n): the damping when XᵀDX vanishes (see _damping)
        col_max = float(np.max(p.design.col_sq_norms, initial=0.0)) * float(p.sample_weight.max())
        if p.fit_intercept:
            col_max = max(col_max, float(p.sample_weight.sum()))
        self._curvature_bound = smoothness(p.loss) * col_max / n
        self.c = np.empty(n)
        self.D = np.empty(n)
        self.g = np.zeros(m)
        self.delta = np.zeros(m)
        self.viol = np.zeros(m)
        self.ws = np.zeros(m, dtype=np.int64)
        self.col_nnz = np.ascontiguousarray(p.design.col_nnz, dtype=np.int64)
        # dense X, l1, CD on the model: each outer iteration picks the cheaper of the
        # working set's Hessian block by BLAS and the data form (_dense_l1_direction)
        self.dense_l1 = (hessian == "auto" and not p.design.is_sparse and p.l1 > 0.0
                         and inner == "cd" and p.loss_code != SQUARED)
        # sparse rows in the Gram form with an l1 term: only the working set's block
        # H[ws, ws] (_sparse_l1_direction)
        self.block_l1 = (self.form == "gram" and p.design.is_sparse and p.l1 > 0.0
                         and inner == "cd" and p.loss_code != SQUARED)
        if self.block_l1:
            self._pos = np.full(d, -1, dtype=np.int64)
            self._loc = np.empty(m, dtype=np.int64)
            self._val = np.empty(m)
            self._no_h = np.empty((0, 0))  # gram_gradient's H when it forms none
            self.block_steps = 0
        elif self.form == "gram" and not self.dense_l1:
            # empty, not zeros: the first outer iteration forms all of H (dense_gram and
            # gram_gradient clear it), and calloc's zeroing of a 2 MB H (m = 501) cost
            # ~80 µs a solve, a sixth of the 2,000×500 CSR logistic's overhead
            self.H = np.empty((m, m))
            self.Hd = np.zeros(m)
        else:
            self.hdiag = np.zeros(m)
            self.r = np.zeros(n)
            self._all_columns = np.arange(d, dtype=np.int64)
        if self.dense_l1:
            self._Z = np.empty((0, n))  # dense_gram_block's work rows
            self._sqrt_d = np.empty(n)
            self._inner_prev = 3  # inner epochs of the last model solve: the block's price
            self.block_steps = 0
        self._hessian_ready = False  # squared loss: H (or its diagonal) is formed once
        self.s0 = None
        self.rho = 1.0
        self.prev_max = np.inf
        self._checks = 0
        self._fresh = False  # c, D, g (and ΣD) were computed at the current z
        self._dsum = 0.0
        self._deriv = np.empty(n)
        self.last = {}

    # ---------------------------------------------------------------- protocol
    def _damping(self, diag_max: float) -> float:
        """ν added to the diagonal of the model without an l2 term.

        ``1e-12·max_j H_jj`` (newGLMNET), unless XᵀDX (nearly) vanishes: the
        smooth hinge is linear for margins ``yz ≤ 0``, so at w = 0 every φ'' is 0
        and the model has no curvature at all; ν = 1e-300 then made the step
        1e300 times too long, no backtracking recovered, and the run stayed at
        w = 0 for ever. There the loss's curvature bound is used (a proximal
        gradient step, a descent step by the smoothness of the loss).
        """
        nu = DAMPING * diag_max
        if nu < DAMPING * DAMPING * self._curvature_bound:
            nu = self._curvature_bound
        return max(nu, 1e-300)

    def run_epoch(self):
        p = self.problem
        d, n = p.n_features, p.n_samples
        code = p.loss_code
        fit_b = bool(p.fit_intercept)
        fresh = self._fresh  # the certificate at this z left c, D and g behind
        self._fresh = False
        if fresh:
            dsum = self._dsum
            # the gradient Xᵀc this iteration uses came with the check: counted here, so
            # that the solve loop's check interval (check cost / epoch cost) stays 1 --
            # a check costs a newton-cd iteration only its pass over the margins
            entries = p.design.nnz
        else:
            dsum = newton_weights(code, self.z, p.y, p.sample_weight, self.inv_n, self.c,
                                  self.D)
            entries = n
        need_h = not (self._hessian_ready and code == SQUARED)
        if self.dense_l1:
            if not fresh:
                self.g[:d] = p.design.rmatvec(self.c)
                if fit_b:
                    self.g[d] = self.c.sum()
                entries += p.design.nnz
        elif self.form == "gram" and not p.design.is_sparse:
            if not fresh:
                self.g[:d] = p.design.rmatvec(self.c)
                if fit_b:
                    self.g[d] = self.c.sum()
                entries += p.design.nnz
            if need_h:
                entries += dense_gram(p.design.to_scipy(), self.D, fit_b, self.H)
            diag_max = float(np.max(np.diag(self.H), initial=0.0))
        elif self.block_l1:
            if not fresh:
                v = p.design.csr
                entries += gram_gradient(v.data, v.indices, v.indptr, d, self.c, self.D,
                                         fit_b, self._no_h, self.g, True, False)
        elif self.form == "gram":
            v = p.design.csr
            entries += gram_gradient(v.data, v.indices, v.indptr, d, self.c, self.D, fit_b,
                                     self.H, self.g, not fresh, need_h)
            diag_max = float(np.max(np.diag(self.H), initial=0.0))
        else:
            v = p.design.csc
            if not fresh:  # one column pass gives g and diag(XᵀDX) together
                entries += column_gradient_curvature(v.data, v.indices, v.indptr, self.c,
                                                     self.D, self.g, self.hdiag,
                                                     self._all_columns, True)
                if fit_b:
                    self.g[d] = self.c.sum()
                    entries += n
            if fit_b:
                self.hdiag[d] = dsum
            diag_max = float(np.max(self.hdiag, initial=0.0))
        self._hessian_ready = True

        total, vmax = outer_violations(self.w, self.g, d, fit_b, p.l1, p.l2, self.viol)
        if self.s0 is None:
            self.s0 = total
        threshold = self.prev_max / n if np.isfinite(self.prev_max) else -np.inf
        n_ws = working_set(self.w, self.g, self.viol, self.col_nnz, d, fit_b, p.l1,
                           threshold, self.ws)
        if self.dense_l1:
            n_ws = self._cap_working_set(n_ws)
        self.prev_max = vmax
        if total == 0.0 or n_ws == 0:
            return entries, 0
        if self.form == "data" and fresh and not self.dense_l1:
            # g came with the certificate: diag(XᵀDX) on the working set only, the
            # entries the inner CD reads (1,000 × 1,000 at λmax/2: 27-48 of 1,000)
            entries += self._working_set_curvature(n_ws, dsum)
            diag_max = float(np.max(self.hdiag[self.ws[:n_ws]], initial=0.0))
        eta = min(ETA_MAX, total / self.s0) * self.rho
        tol = eta * total
        self.delta[:] = 0.0
        if self.dense_l1:
            dz, epochs, updates, inner = self._dense_l1_direction(n_ws, dsum, tol)
        elif self.block_l1:
            dz, epochs, updates, inner = self._sparse_l1_direction(n_ws, tol)
        elif self.inner == "cholesky":
            nu = 0.0 if p.l2 > 0.0 else self._damping(diag_max)
            epochs, updates, inner = self._cholesky_direction(nu)
            dz = p.design.matvec(self.delta[:d])
            entries += p.design.nnz
            if fit_b:
                dz += self.delta[d]
        elif self.form == "gram":
            nu = 0.0 if p.l2 > 0.0 else self._damping(diag_max)
            self.Hd[:] = 0.0
            epochs, updates, inner = gram_inner_cd(
                self.H, self.g, self.w, self.delta, self.Hd, self.ws, n_ws, d, p.l1, p.l2,
                nu, tol, self.max_inner, self.rng)
            dz = p.design.matvec(self.delta[:d])  # XΔ once, for every line-search trial
            entries += p.design.nnz
            if fit_b:
                dz += self.delta[d]
        else:
            nu = 0.0 if p.l2 > 0.0 else self._damping(diag_max)
            self.r[:] = 0.0
            v = p.design.csc
            epochs, updates, inner = data_inner_cd(
                v.data, v.indices, v.indptr, self.D, self.g, self.hdiag, self.w, self.delta,
                self.r, self.ws, n_ws, d, p.l1, p.l2, nu, tol, self.max_inner, self.rng)
            dz = self.r
        entries += inner
        if epochs == 1 and self.inner == "cd":
            self.rho *= 0.25

        t, trials, certified = 1.0, 0, False
        if p.l1 == 0.0:
            t, trials, certified = newton_line_search(
                code, self.z, dz, p.y, p.sample_weight, self.inv_n, self.w, self.delta,
                self.g, d, p.l2, LINE_ETA, LINE_EVALS)
        if not certified:
            t0 = t if t > 0.0 else 1.0
            t, more = armijo_line_search(code, self.z, dz, p.y, p.sample_weight, self.inv_n,
                                         self.w, self.delta, self.g, d, fit_b, p.l1, p.l2,
                                         ARMIJO, MAX_TRIALS, t0)
            trials += more
        entries += trials * n
        if t > 0.0:
            self.w += t * self.delta[:d]
            if fit_b:
                self._intercept[0] += t * self.delta[d]
            self.z += t * dz
        elif updates > 0:
            self.rho *= 0.25  # no acceptable step: ask for a more accurate model solve
        self.last = dict(inner_epochs=epochs, n_ws=n_ws, step=t, trials=trials, eta=eta)
        return entries, updates

    def _cap_working_set(self, n_ws: int) -> int:
        """Keep ``w``'s nonzeros and the largest violators of newGLMNET's set, at most
        ``max(WS_START, WS_GROWTH·nnz(w))`` coordinates (skglm's ProxNewton and celer
        grow their working sets the same way); returns the new size.

        At ``w = 0`` newGLMNET's rule takes every violator: 66 of 100 columns on the
        correlated 10,000 × 100 at λmax/10 (17 nonzeros at the optimum), 81 at
        λmax/20, and that first Hessian block (n·k²/2 products) was the largest single
        cost of the solve. Coordinates left out keep ``Δ_j = 0`` (the direction is
        still a descent direction of the full objective) and enter at a later outer
        iteration if they still violate; the certificate covers every coordinate.
        """
        d = self.problem.n_features
        rows = self.ws[:n_ws]
        feats = rows[rows < d]
        nnz = int(np.count_nonzero(self.w))
        cap = max(WS_START, WS_GROWTH * nnz)
        if feats.size <= cap:
            return n_ws
        score = self.viol[feats]
        score[self.w[feats] != 0.0] = np.inf
        keep = np.sort(feats[np.argpartition(-score, cap - 1)[:cap]])
        fit_b = n_ws > feats.size
        self.ws[:cap] = keep
        if fit_b:
            self.ws[cap] = d
        return cap + int(fit_b)

    def _working_set_curvature(self, n_ws: int, dsum: float) -> int:
        """``diag(XᵀDX)`` on the working set (the entries the data-form inner CD reads)."""
        p = self.problem
        v = p.design.csc
        fit_b = bool(p.fit_intercept)
        if fit_b:
            self.hdiag[p.n_features] = dsum
        return column_gradient_curvature(v.data, v.indices, v.indptr, self.c, self.D, self.g,
                                         self.hdiag, self.ws[:n_ws - int(fit_b)], False)

    def _dense_l1_direction(self, n_ws: int, dsum: float, tol: float):
        """The model's minimiser on the working set for dense X with an l1 term:
        ``(XΔ, inner epochs, updates, entries)``.

        Two ways, the cheaper one per outer iteration (as skglm's ProxNewton, the
        Hessian is only ever needed on the working set): the block ``H[ws, ws]``
        by BLAS (n·k²/2 products at :data:`BLAS_GRAM_PRICE`, then inner epochs of
        k² multiply-adds and one ``X_ws Δ``) or the data form (each inner epoch 2·n·k
        entries). The block is taken when its price is below the data form's for
        twice the inner epochs the last model solve took (the adaptive inner
        tolerance tightens each iteration: 4, 5, 10, 28, 57, 103, 199 epochs on
        1,000 × 1,000 at λmax/20; 1e-10 there 159 -> 84 ms): early on the sets are
        large and the solves short (1,000 × 1,000 at λmax/20: 838 coordinates, 4
        epochs: data form), near the optimum they are small and long (356, 57-100
        epochs: block).
        """
        p = self.problem
        d, n = p.n_features, p.n_samples
        fit_b = bool(p.fit_intercept)
        rows = self.ws[:n_ws]
        columns = p.design.csc.data.reshape(d, n)  # column-major X, made once per design
        if BLAS_GRAM_PRICE * n_ws * n_ws / 2.0 + n_ws <= 4.0 * n_ws * self._inner_prev:
            if self._Z.shape[0] < n_ws:  # grown, not shrunk: the sets' sizes vary
                self._Z = np.empty((min(d, 2 * n_ws), n))
            sqrt_d = np.sqrt(self.D, out=self._sqrt_d)
            H = dense_gram_block(sqrt_d, rows, columns, self._Z)
            kf = n_ws - int(fit_b)
            epochs, updates, inner, delta = self._block_inner_cd(H, rows, kf, tol, 1000)
            # X_ws Δ once, for every trial: from Z = sqrt(D)·X_ws, contiguous and just
            # formed, unless some D_i is 0 (zero weight) or underflows; gathering the
            # columns instead copies |ws|×n entries first
            if np.min(sqrt_d) > SQRT_D_MIN:
                dz = self._Z[:kf].T @ delta[:kf]
                dz /= sqrt_d
            else:
                dz = columns[rows[:kf]].T @ delta[:kf]
            if fit_b:
                dz += delta[kf]
            inner += n * n_ws * (n_ws + 1) // 2 + n * n_ws
            self.block_steps += 1
        else:
            inner = self._working_set_curvature(n_ws, dsum)
            nu = 0.0 if p.l2 > 0.0 else self._damping(
                float(np.max(self.hdiag[rows], initial=0.0)))
            self.r[:] = 0.0
            epochs, updates, more = data_inner_cd(
                p.design.csc.data, p.design.csc.indices, p.design.csc.indptr, self.D, self.g,
                self.hdiag, self.w, self.delta, self.r, self.ws, n_ws, d, p.l1, p.l2, nu, tol,
                self.max_inner, self.rng)
            inner += more
            dz = self.r
        self._inner_prev = max(epochs, 1)
        return dz, epochs, updates, inner

    def _block_inner_cd(self, H, rows, kf, tol, max_epochs):
        """CD on the model over the working set ``rows`` (its first ``kf`` features,
        then the intercept if fitted) with its Hessian block ``H`` in local
        coordinates; Δ into ``self.delta``. ``(epochs, updates, entries, local Δ)``."""
        p = self.problem
        n_ws = rows.shape[0]
        nu = 0.0 if p.l2 > 0.0 else self._damping(float(np.max(np.diag(H), initial=0.0)))
        w_ws = np.zeros(n_ws)
        w_ws[:kf] = self.w[rows[:kf]]
        g_ws = self.g[rows]
        delta = np.zeros(n_ws)
        order = np.arange(n_ws, dtype=np.int64)
        # local coordinates: the intercept (if any) is index kf, passed as "d"
        epochs, updates, inner = gram_inner_cd(
            H, g_ws, w_ws, delta, np.zeros(n_ws), order, n_ws, kf, p.l1, p.l2, nu, tol,
            max_epochs, self.rng)
        self.delta[rows] = delta
        return epochs, updates, inner, delta

    def _sparse_l1_direction(self, n_ws: int, tol: float):
        """The model's minimiser on the working set for sparse rows in the Gram form
        with an l1 term: ``(XΔ, inner epochs, updates, entries)``.

        Only the block ``H[ws, ws]`` (:func:`~cdlearn.kernels.newton_cd.sparse_gram_block`),
        all the inner CD reads, as for dense X (:meth:`_dense_l1_direction`): the full
        ``XᵀDX`` cost a9a 7.4 passes every outer iteration, at reg 0.5 for a working set
        of a few coordinates (1 nonzero at the optimum).
        """
        p = self.problem
        d = p.n_features
        fit_b = bool(p.fit_intercept)
        rows = self.ws[:n_ws]
        kf = n_ws - int(fit_b)
        self._pos[rows[:kf]] = np.arange(kf)
        H = np.empty((n_ws, n_ws))
        v = p.design.csr
        entries = sparse_gram_block(v.data, v.indices, v.indptr, self.D, self._pos, fit_b, H,
                                    self._loc, self._val)
        self._pos[rows[:kf]] = -1
        epochs, updates, inner, _ = self._block_inner_cd(H, rows, kf, tol, self.max_inner)
        dz = p.design.matvec(self.delta[:d])  # XΔ once, for every line-search trial
        if fit_b:
            dz += self.delta[d]
        self.block_steps += 1
        return dz, epochs, updates, entries + inner + p.design.nnz

    def _cholesky_direction(self, nu):
        """Exact model minimiser ``Δ = -(H + λ2 I)⁻¹(g + λ2 w)`` (no l1 term).

        The model is then a smooth quadratic, and on ill-conditioned data (a9a's
        one-hot groups at λ = 1/(100n)) cyclic CD on it stalls for thousands of
        inner epochs where one dense factorisation (m³/3 flops, m <= 2048)
        solves it. Returns ``(1, m, entries)`` with entries = m³/3 + m².
        """
        p = self.problem
        d, m = p.n_features, self.m
        A = self.H.copy()
        reg = np.full(m, p.l2 + nu)
        if p.fit_intercept:
            reg[d] = nu
        A[np.diag_indices(m)] += reg
        rhs = -self.g.copy()
        rhs[:d] -= p.l2 * self.w
        if cholesky_factor(A):
            cholesky_apply(A, rhs)
        else:  # numerically singular despite ν: least squares
            A = self.H.copy()
            A[np.diag_indices(m)] += reg
            rhs = np.linalg.lstsq(A, rhs, rcond=None)[0]
        self.delta[:] = rhs
        return 1, m, m * m * m // 3 + m * m

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        """``(primal, dual, gap)`` as :func:`~cdlearn.solvers.intercept.margin_certificate`,
        from one fused pass over the margins (:func:`~cdlearn.kernels.newton_cd.margin_terms`)
        and one ``Xᵀc``; ``c``, ``D`` and ``g = Xᵀc`` are kept for the next outer
        iteration, whose first step they are (``α = -n c`` and ``Xᵀα/n = -g``).
        """
        self._checks += 1
        refresh_margins(self, self._checks % RESYNC_EVERY == 0)
        p = self.problem
        if p.l1 == 0.0 and p.l2 == 0.0:
            self._fresh = False
            return margin_certificate(self)
        d = p.n_features
        loss, conj, fy, self._dsum = margin_terms(p.loss_code, self.z, p.y, p.sample_weight,
                                                  self.inv_n, self.c, self.D)
        self.g[:d] = p.design.rmatvec(self.c)
        if p.fit_intercept:
            self.g[d] = self.c.sum()
        self._fresh = True
        u = -self.g[:d]
        w = self.w
        scale = dual_feasible_scale(u, p.l1, p.l2)
        if scale != 1.0:
            # l1: α = -n c rescaled, its sums differ (Xᵀα/n = -g needs no new product).
            # The loop at every size, not numpy's form below SMALL_ARRAY: this method
            # compiles its kernels anyway, and numpy's pass cost 2-6× the loop's
            # (benchopt's 1,000 × 1,000 and 10,000 × 100 L1 problems: 10-25% of a solve)
            u *= scale
            loss, fy = weighted_loss_and_fenchel_young_sums(
                p.loss_code, self.z, (-p.n_samples * scale) * self.c, p.y, p.sample_weight)
            primal = loss * self.inv_n + penalty_value(w, p.l1, p.l2)
            gap = fy * self.inv_n + penalty_fenchel_young(w, u, p.l1, p.l2)
            return primal, primal - gap, gap
        # D(α) with α = -n c: its intercept term -b Σα/n is +b Σc
        return terms_certificate(p, (loss, conj, fy), w, u,
                                 self._intercept[0] * float(self.c.sum()))

    def kkt_violation(self) -> float:
        """max_j dist(-∇_j f(w), λ∂g_j(w_j)): the optimality measure used without a penalty."""
        return margin_kkt_violation(self)

    def _restore_margins(self):
        super()._restore_margins()
        self._fresh = False

    def active(self) -> int:
        return int(self.last.get("n_ws", self.m))

    def extra_info(self) -> dict:
        if self.dense_l1 or self.block_l1:  # Hessian blocks on the working set
            return {"hessian": self.form, "block_steps": self.block_steps}
        return {"hessian": self.form}
