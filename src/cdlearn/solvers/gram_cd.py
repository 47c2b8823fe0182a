"""Cyclic CD on the Gram matrix ``XᵀSX/n``, squared loss ("gram-cd").

For ``n ≫ d``, or many fits on one X (paths, cross-validation, warm starts),
an epoch in O(d²) on the Gram matrix beats one in O(nnz) on the data
(:mod:`cdlearn.kernels.gram_cd`; scikit-learn's ``precompute=True``). The
Gram matrix costs ``n d²/2`` flops once (BLAS ``XᵀX``; sparse X: scipy's
product), is cached on the :class:`~cdlearn.data.Design` for the weights and
intercept it was built for, and may be given (``gram=``, scikit-learn's
``precompute=array``): ``Σ_i s_i (x_i - x̄)(x_i - x̄)ᵀ`` with ``x̄`` the
weighted mean when an intercept is fitted (otherwise ``x̄ = 0``), i.e. without
the ``1/n``.

With an intercept the problem is solved in centred form, ``b = ȳ - x̄ᵀw``.
Certificate: exact, as primal CD's -- the margins ``z = Xw + b`` from one
product with X (the intercept at its exact minimiser), the dual point
``α = -s(z - y)`` and ``u = Xᵀα/n`` from one more product (``-(Gw - c)`` is
the same in exact arithmetic but cancels near the optimum), the gap as a sum of
Fenchel–Young terms; ``g`` is recomputed from G at every check.

For ridge (an l2 penalty alone, no constraint) an epoch is not CD but the
closed form: ``(G + λI) w = c`` by Cholesky, as scikit-learn's Ridge
(``solver="cholesky"``), then iterative refinement with the same factor; no
numba kernel runs, so a first fit compiles nothing (issue 22).

Every ``anderson_k`` epochs the last iterates are Anderson-extrapolated (as in
:mod:`cdlearn.solvers.working_set`; Bertrand & Massias 2021, AISTATS) and the
point is kept if it lowers the objective, evaluated in O(d²) on G: cyclic CD
alone crawls on correlated columns (300 × 60 Gaussian + 3, no intercept, Lasso:
gap 1.6 after 2,000 epochs).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.gram_cd import gram_cd_epoch
from ..objectives import certificate_from_dual_point
from ..penalties import penalty_value
from .base import (
    PLAIN_CHECK_SPACING,
    PrimalIterate,
    Problem,
    check_serial_exact_options,
    initial_primal,
    target_mark,
    unit_weights,
)
from .intercept import margin_certificate, margin_kkt_violation, refresh_margins

SUPPORTED_LOSSES = ("squared",)
SUPPORTED_PENALTIES = ("none", "l2", "l1", "elastic_net")
OPTIONS = ("gram", "anderson_k")
#: the largest d for which gram-cd forms its d×d matrix (512 MB)
GRAM_MAX = 8192
#: a centred diagonal entry at most this share of the uncentred one is a constant
#: column: centring left only rounding, its coefficient stays 0
CONSTANT_COLUMN = 1e-12


#: ``solver="auto"``'s cost model for the squared loss with an l1 part (seconds, one
#: thread on this 2-core machine, fitted to the ratios of gram-cd to ws-cd timed in one
#: session, benchmarks/results/gram_cost.md: about 1 at d = 100-200, 2-3 at d = 600, 0.5
#: at 300 × 60): one product of the BLAS Gram ``XᵀX`` (dense float64, ``n d²`` counted) ...
GRAM_PRODUCT_COST = 0.07e-9
#: ... one multiply-add of scipy's sparse ``XᵀX`` (``Σ_i nnz(x_i)²`` of them) ...
SPARSE_PRODUCT_COST = 4e-9
#: ... one entry read by a CD epoch (a data column's or a Gram row's) ...
ENTRY_COST = 1.5e-9
#: ... and the work of a solve in those units, medians over the Lasso cases measured (1e-6
#: and 1e-10, λ from 0.01 to 0.1 λmax): ws-cd reads the data about this many times
#: (gradients, inner epochs and checks) plus its outer iterations' fixed cost (Python,
#: ~0.1 ms each) ...
WS_CD_PASSES = 12.0
WS_CD_FIXED = 0.5e-3
#: ... gram-cd runs this many O(d²) epochs, its certificates read the data this many
#: times (BLAS products at PASS_COST an entry: measured 0.2-0.4 ns), plus its fixed cost
GRAM_EPOCHS = 25.0
GRAM_CHECK_PASSES = 4.0
GRAM_FIXED = 0.1e-3
PASS_COST = 0.5e-9
#: ... plain cyclic CD on the data (primal-cd, sampling "cyclic": residual updates, no
#: working set, a gap check every ~3 epochs) runs this many epochs times (d/n)² when
#: d > n (benchopt's Lasso: 2-4 epochs to 1e-6 at 10,000 × 100 ρ = 0, 10-30 at 500 × 600,
#: hundreds on 100 × 10,000), each entry at PLAIN_ENTRY_COST (measured 0.46 ns on dense
#: 500 × 600 and 10,000 × 100 epochs, one thread; the gemv of its checks ~0.2 ns), plus
#: PLAIN_CHECK_FIXED of Python per check. Not priced below GRAM_DENSE_DENSITY: on sparse
#: columns an entry costs a gather (ws-cd's ENTRY_COST) and working sets pay off
PLAIN_EPOCHS = 20.0
PLAIN_ENTRY_COST = 0.5e-9
PLAIN_CHECK_FIXED = 0.05e-3
#: X at least this dense is priced as a dense matrix whatever its storage (a sparse copy
#: of a dense X gets the same method, hence the same answer, as the array)
GRAM_DENSE_DENSITY = 0.1
#: auto never forms a Gram matrix above this d (32 MB)
GRAM_MAX_AUTO = 2048


def squared_l1_costs(problem: Problem, n_fits: int = 1) -> dict:
    """Predicted seconds of ws-cd, gram-cd and plain cyclic CD (primal-cd) on ``problem``.

    Priced from ``n, d, nnz`` only (not the storage format): CD's work is
    passes over the ``nnz`` entries, gram-cd's the Gram (BLAS ``n d²`` at
    density ≥ :data:`GRAM_DENSE_DENSITY`, else the sparse product's ``nnz²/n``
    multiply-adds), shared by ``n_fits`` fits on the same X (a path, warm
    starts; free when already cached on the Design), plus ``d²`` epochs and the
    certificates' passes. gram-cd is not a candidate (inf) above
    :data:`GRAM_MAX_AUTO` features, plain CD not below :data:`GRAM_DENSE_DENSITY`.
    """
    p = problem
    n, d, nnz = p.n_samples, p.n_features, max(p.design.nnz, 1)
    costs = {"ws-cd": WS_CD_FIXED + WS_CD_PASSES * nnz * ENTRY_COST, "gram-cd": np.inf,
             "primal-cd": np.inf}
    dense = nnz >= GRAM_DENSE_DENSITY * n * d
    if dense:
        epochs = PLAIN_EPOCHS * max(1.0, d / n) ** 2
        costs["primal-cd"] = (GRAM_FIXED + epochs * nnz * PLAIN_ENTRY_COST
                              + epochs / PLAIN_CHECK_SPACING * PLAIN_CHECK_FIXED)
    if d > GRAM_MAX_AUTO:
        return costs
    if _gram_key(p) in p.design.__dict__.get("_derived", {}):
        gram = 0.0
    elif dense:
        gram = GRAM_PRODUCT_COST * n * d * d
    else:
        gram = SPARSE_PRODUCT_COST * nnz * nnz / n
    costs["gram-cd"] = (GRAM_FIXED + gram / max(int(n_fits), 1) + GRAM_EPOCHS * d * d * ENTRY_COST
                        + GRAM_CHECK_PASSES * nnz * PASS_COST)
    return costs


def _gram_key(p: Problem):
    # kept on the problem: auto's cost model, c and G each ask for it in one solve
    key = p.__dict__.get("_gram_key")
    if key is None:
        key = ("gram", bool(p.fit_intercept),
               None if unit_weights(p) else hash(p.sample_weight.tobytes()))
        p.__dict__["_gram_key"] = key
    return key


def _transposed(p: Problem):
    """Xᵀ for the products of :func:`gram_system`: scipy's transpose for sparse X, else a
    C-ordered float64 ``(d, n)`` array over the column view (no copy of Fortran-ordered
    float64 input), so that the products round alike whatever the caller's layout."""
    if p.design.is_sparse:
        return p.design.to_scipy().T
    XT = p.design.csc.data.reshape(p.n_features, p.n_samples)
    return XT if XT.dtype == np.float64 else XT.astype(np.float64)


def linear_terms(problem: Problem, XT=None):
    """``(c, x̄, ȳ)`` of :func:`gram_system`, kept on the design for the last ``y`` seen.

    ``c = Xᵀy/n`` is a pass over X, as much as the rest of a solve on a tall X
    whose Gram is cached (benchopt's repeated solves, a path's λs on one y), and
    without an intercept it is also ``Xᵀα/n`` of the gap at ``w = 0`` (plain CD's
    first check). It is reused while ``y`` has the same contents
    (:func:`~cdlearn.data._fingerprint`, O(n)); one entry per design and weighting,
    so a loop over many targets keeps one.
    """
    p = problem
    key = ("linear",) + _gram_key(p)
    cache = p.design.__dict__.setdefault("_derived", {})
    entry = cache.get(key)
    # the compiled scan on a design seen before (numpy's form of it was 0.02 ms at n = 300)
    mark = target_mark(p, repeat=entry is not None)
    if entry is not None and entry[0] == mark:
        return entry[1]
    XT = _transposed(p) if XT is None else XT
    sw, y, n = p.sample_weight, p.y, p.n_samples
    xbar = np.asarray(XT @ sw, dtype=np.float64).ravel() / float(sw.sum()) \
        if p.fit_intercept else np.zeros(p.n_features)
    ybar = float(sw @ y) / float(sw.sum()) if p.fit_intercept else 0.0
    yc = y - ybar
    c = np.asarray(XT @ (sw * yc), dtype=np.float64).ravel()
    if p.fit_intercept:
        c -= xbar * float(sw @ yc)  # zero in exact arithmetic; removes its rounding
    c /= n
    for a in (c, xbar):
        a.flags.writeable = False  # shared by later solves
    cache[key] = (mark, (c, xbar, ybar))
    return c, xbar, ybar


def gram_system(problem: Problem, gram=None):
    """``(G, c, x̄, ȳ)`` for ``problem``: ``G = Σ s_i x̃_i x̃_iᵀ / n``, ``c = Σ s_i x̃_i ỹ_i / n``.

    ``x̃, ỹ`` are centred by their weighted means with an intercept. ``gram``: the
    un-normalised ``Σ s_i x̃_i x̃_iᵀ``, as scikit-learn's precompute (checked for shape
    and finiteness here, for its values by the estimators). ``c, x̄, ȳ`` and G are
    cached on the design (:func:`linear_terms`, :meth:`~cdlearn.data.Design.derived`).
    """
    p = problem
    n, d = p.n_samples, p.n_features
    if d > GRAM_MAX:
        raise ValueError(f"solver='gram-cd' needs a dense {d}×{d} Gram matrix; it is "
                         f"limited to {GRAM_MAX} features")
    sw = p.sample_weight
    unit = unit_weights(p)
    XT = _transposed(p)
    M = p.design.to_scipy() if p.design.is_sparse else None
    c, xbar, ybar = linear_terms(p, XT)
    if gram is not None:
        G = np.array(gram, dtype=np.float64, order="C")
        if G.shape != (d, d):
            raise ValueError(f"gram must have shape {(d, d)}, got {G.shape}")
        if not np.all(np.isfinite(G)):
            raise ValueError("gram contains NaN or infinity")
        G /= n
        return G, c, xbar, ybar
    key = _gram_key(p)

    def compute():
        if p.design.is_sparse and p.design.density < GRAM_DENSE_DENSITY:
            Ms = M if unit else sp.diags(sw) @ M
            G = np.asarray((XT @ Ms).toarray(), dtype=np.float64)
            if p.fit_intercept:
                G -= float(sw.sum()) * np.outer(xbar, xbar)
        elif p.design.is_sparse:  # dense enough for BLAS (as auto prices it): by row blocks
            G = np.zeros((d, d))
            rows = sp.csr_matrix(M)
            step = max(1, DENSE_BLOCK // d)
            for i in range(0, n, step):
                G += _centred_product(rows[i:i + step].toarray().T, xbar, sw[i:i + step],
                                      p.fit_intercept, unit)
        else:
            G = _centred_product(XT, xbar, sw, p.fit_intercept, unit)
        G = np.ascontiguousarray(G)
        G /= n
        return G

    return p.design.derived(key, compute), c, xbar, ybar


#: a sparse X dense enough for BLAS is densified by row blocks of about this many entries
DENSE_BLOCK = 1 << 22


def _centred_product(A, xbar, sw, centre, unit):
    """``Σ_i s_i (a_i - x̄)(a_i - x̄)ᵀ`` for the columns a_i of ``A`` (d × rows), by BLAS."""
    if centre:
        A = A - xbar[:, None]  # centred copy: no cancellation in G for large means
    if not unit:
        A = A * np.sqrt(sw)
    return A @ A.T  # BLAS syrk


def anderson_weights(hist):
    """c ∝ (UUᵀ)⁻¹1 normalised to sum 1, ``U_r = hist[r+1] - hist[r]``; None when UUᵀ
    is singular. numpy, not the kernel's loop (:func:`cdlearn.kernels.working_set.
    _anderson_weights`): called from here once per ``anderson_k`` epochs on a k×k
    system, where compiling a loop would cost a first fit more than it ever saves."""
    U = np.diff(hist, axis=0)
    try:
        c = np.linalg.solve(U @ U.T, np.ones(U.shape[0]))
    except np.linalg.LinAlgError:
        return None
    total = float(c.sum())
    if not (np.isfinite(total) and total != 0.0):
        return None
    return c / total


class GramCDState(PrimalIterate):
    """State of Gram CD (module docstring); ``gram``: a given Gram matrix or None."""

    predict_checks = True

    def __init__(self, problem: Problem, *, sampling="uniform", batch_size=1, seed=0,
                 w0=None, intercept0=0.0, step="newton", power=1.0, gram=None,
                 anderson_k=5):
        check_serial_exact_options("gram-cd", sampling, batch_size, step)
        self.problem = p = problem
        d, n = p.n_features, p.n_samples
        self.G, self.c, self.xbar, self.ybar = gram_system(p, gram)
        self.diag = np.diag(self.G).copy()
        if p.fit_intercept:  # a constant column centres to rounding: keep it at 0
            bound = float(p.sample_weight.max()) * p.design.col_sq_norms / n
            self.diag[self.diag <= CONSTANT_COLUMN * bound] = 0.0
        self.w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
        self.w[self.diag == 0.0] = 0.0  # optimal for constant columns under any penalty
        if p.positive:
            np.maximum(self.w, 0.0, out=self.w)
        self.g = self.G @ self.w - self.c
        if isinstance(anderson_k, bool) or not isinstance(anderson_k, int | np.integer) \
                or anderson_k == 1 or anderson_k < 0:
            raise ValueError(f"anderson_k must be 0 (no extrapolation) or an integer >= 2, "
                             f"got {anderson_k!r}")
        self.k = int(anderson_k)
        self.hist = np.empty((self.k + 1, d))
        self.filled = 0
        self.stats = dict(anderson_tried=0, anderson_accepted=0)
        self._intercept = np.array([float(intercept0) if p.fit_intercept else 0.0])
        self.alpha = None
        self.z = np.empty(n)
        self._deriv = np.empty(n)
        #: ridge: the Cholesky factor of G + λI over the non-constant columns (run_epoch)
        self.closed_form = p.l1 == 0.0 and p.l2 > 0.0 and not p.positive
        if self.closed_form:  # its first step is the answer: check right after it
            self.predict_checks = False
        self._factor = None
        self._restore_margins()

    def run_epoch(self):
        p = self.problem
        if self.closed_form:
            return self._ridge_step()
        if self.k and self.filled == 0:
            self.hist[0] = self.w
            self.filled = 1
        entries, updates = gram_cd_epoch(self.G, self.g, self.w, self.diag, p.l1, p.l2,
                                         p.positive)
        if self.k:
            self.hist[self.filled] = self.w
            self.filled += 1
            if self.filled == self.k + 1:
                entries += self._extrapolate()
                self.hist[0] = self.w
                self.filled = 1
        return entries, updates

    def _ridge_step(self):
        """``w += (G + λI)⁻¹ (c - (G + λI) w)``: the ridge solution from any start, and
        a step of iterative refinement once there (the residual is then rounding)."""
        import scipy.linalg  # here: not every process that imports cdlearn needs it

        p = self.problem
        keep = self.diag != 0.0
        d = int(keep.sum())
        work = d * d
        if self._factor is None:
            # float64 whatever X's type: float32 rounding of a rank-deficient G can leave
            # G + λI numerically indefinite (fuzzing: 2 × 4 float32 X, entries ~1e3, λ = 0.01)
            A = self.G[np.ix_(keep, keep)].astype(np.float64)
            A[np.diag_indices(d)] += p.l2
            try:
                factor = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
                self._factor = lambda b: scipy.linalg.cho_solve(factor, b, check_finite=False)
            except np.linalg.LinAlgError:
                # still indefinite by rounding: G + λI's eigenvalues are ≥ λ exactly
                vals, vecs = scipy.linalg.eigh(A, check_finite=False)
                vals = np.maximum(vals, p.l2)
                self._factor = lambda b: vecs @ ((vecs.T @ b) / vals)
            work += d ** 3 // 3
        r = -(self.g[keep] + p.l2 * self.w[keep])  # c - (G + λI) w
        self.w[keep] += self._factor(r)
        np.dot(self.G, self.w, out=self.g)
        self.g -= self.c
        return work, d

    def _objective(self, w, Gw) -> float:
        """P(w) up to the constant ``ỹᵀSỹ/(2n)``, from ``Gw``."""
        p = self.problem
        return 0.5 * float(w @ Gw) - float(self.c @ w) + penalty_value(w, p.l1, p.l2)

    def _extrapolate(self) -> int:
        """Anderson step from ``hist``, kept if it lowers P; returns the entries read."""
        self.stats["anderson_tried"] += 1
        weights = anderson_weights(self.hist)
        if weights is None:
            return 0
        cand = weights @ self.hist[1:]
        if self.problem.positive and np.any(cand < 0.0):
            return 0
        cand[self.diag == 0.0] = 0.0
        Gc = self.G @ cand
        if self._objective(cand, Gc) < self._objective(self.w, self.g + self.c):
            self.w[:] = cand
            np.subtract(Gc, self.c, out=self.g)
            self.stats["anderson_accepted"] += 1
        return self.w.shape[0] ** 2

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        p = self.problem
        self._restore_margins()  # exact z = Xw + b, intercept at its minimiser
        if p.l1 == 0.0 and p.l2 == 0.0:
            return margin_certificate(self)
        np.dot(self.G, self.w, out=self.g)
        self.g -= self.c
        alpha = p.y - self.z
        alpha *= p.sample_weight
        # u = Xᵀα/n from the residual, not -(Gw - c): near the optimum Gw - c cancels
        # (its rounding ~ ε‖G‖‖w‖ set the gap's floor), the residual product does not
        design = p.design
        if not p.fit_intercept and not np.any(self.w):
            # at w = 0, α = s·y and Xᵀα/n is c itself, the same product (one pass saved:
            # the initial check of every cold start)
            u = self.c.copy()
        else:
            if design.is_sparse or design.dtype != np.float64:
                u = design.rmatvec(alpha)
            else:
                u = design.csc.data.reshape(p.n_features, p.n_samples) @ alpha
            u /= p.n_samples
        return certificate_from_dual_point(p.loss_code, self.z, alpha, p.y, p.sample_weight,
                                           self.w, u, p.l1, p.l2, p.positive)

    def kkt_violation(self) -> float:
        return margin_kkt_violation(self)

    def _restore_margins(self):
        p = self.problem
        design = p.design
        if not np.any(self.w):
            self.z = np.zeros(p.n_samples)
        elif design.is_sparse or design.dtype != np.float64:
            self.z = design.matvec(self.w)
        else:  # from the column view, as G and c: the same rounding for C and F input
            self.z = design.csc.data.reshape(p.n_features, p.n_samples).T @ self.w
        if p.fit_intercept:
            self._intercept[0] = self.ybar - float(self.xbar @ self.w)
            self.z += self._intercept[0]
            refresh_margins(self, False)

    def restore(self, snap):
        super().restore(snap)
        np.dot(self.G, self.w, out=self.g)
        self.g -= self.c
        self.filled = 0

    def active(self) -> int:
        return self.problem.n_features

    def extra_info(self) -> dict:
        return dict(self.stats)
