"""Working-set primal CD with Anderson extrapolation ("ws-cd").

One *epoch* of this method is one outer iteration (Massias et al. 2018, "Celer:
a fast solver for the Lasso with dual extrapolation", ICML; Bertrand et al.
2022, "Beyond L1: faster and better sparse models with skglm", NeurIPS;
Johnson & Guestrin 2015, "Blitz", ICML):

1. the full gradient ``∇f(w) = Xᵀ(s∘φ'(z))/n`` (one pass; shared with the
   preceding gap check, which needs the same vector),
2. the working set is the support plus the zero coefficients of highest
   score ``|∇_j f| - λ1`` (the optimality violation when positive, as in
   skglm), ``max(p0, 2|support|)`` features in all -- or, if more, every
   feature violating by more than the inner target below, up to n -- rebuilt
   from the current support every time, so it shrinks when the support does
   (celer's ``prune``, skglm's rule),
3. cyclic CD on the working-set columns (:mod:`cdlearn.kernels.working_set`,
   gathered into one contiguous block,
   with the coordinate steps of primal CD and Anderson extrapolation every
   ``anderson_k`` epochs) until their violation is ≤ ``inner_tol_ratio`` times
   the full one.

``run_epoch`` counts the scoring pass as ``nnz + n + d`` entries (what
:func:`cdlearn.solvers.base.run` prices a gap check at, so checks come every
outer iteration and share the gradient), plus the working-set columns' entries
of every inner epoch, line search and violation check.

The duality-gap certificate is that of primal CD (``α = -s φ'(Xw + b)``,
rescaled into the dual domain for l1, the intercept at its exact minimiser).
``positive=True`` (w ≥ 0): steps clipped at 0, features ranked by ``-∇_j f - λ1``,
extrapolated points with a negative coefficient rejected.
Deterministic: no random draws. On threads (``n_threads`` > 1, large sparse X) the
transposition of row-major X, the scoring pass's products and the scores run in
parallel, exactly: the same iterates bit for bit on any thread count.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..kernels.primal_cd import logistic_error_probabilities
from ..kernels.views import gather_slices
from ..kernels.working_set import support_margins, ws_inner_solve, ws_inner_solve_squared
from ..kernels.working_set_parallel import parallel_count_above, parallel_scores
from ..losses import LOGISTIC, LOSS_SMOOTHNESS, SQUARED, loss_derivatives
from ..objectives import certificate_from_dual_point
from ..penalties import coordinate_violations
from .base import PrimalIterate, Problem, check_serial_exact_options, initial_primal
from .gram_cd import linear_terms
from .intercept import refresh_margins
from .parallel import copy_threads
from .primal_cd import weighted_column_abs_cubes, weighted_column_sq_norms

#: largest share of X's entries copied into a working-set block (see _working_columns)
WS_COPY_SHARE = 0.25
#: largest share of X's bytes held by the Anderson history, (k+1)·(|ws| + n) floats:
#: the window is shortened to fit (and extrapolation dropped below k = 2). news20,
#: L2 logistic, every feature in the working set: k = 5 held 0.25× the input and the
#: solve peaked at 1.56×; the cap makes it k = 3 (and that solve at λ = 1e-3 took
#: 150 inner epochs instead of 211). A history within ANDERSON_FLOOR bytes is never
#: cut: small inputs keep k
ANDERSON_MEMORY = 0.2
ANDERSON_FLOOR = 1 << 18
SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
SUPPORTED_PENALTIES = ("l1", "elastic_net", "l2")
OPTIONS = ("p0", "inner_tol_ratio", "anderson_k", "max_inner_epochs")


def _int_option(name, value, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _anderson_window(k: int, size: int, n: int, view) -> int:
    """``k`` shortened so that the history fits in :data:`ANDERSON_MEMORY` of X's bytes
    (or :data:`ANDERSON_FLOOR`)."""
    if k == 0:
        return 0
    budget = max(ANDERSON_FLOOR, ANDERSON_MEMORY * (view.data.nbytes + view.indices.nbytes
                                                    + view.indptr.nbytes))
    k = min(k, int(budget // (8 * (size + n))) - 1)
    return k if k >= 2 else 0


def top_ranks(rank: np.ndarray, size: int) -> np.ndarray:
    """The indices of the ``size`` highest ranks (0 < size ≤ len(rank)) in increasing
    order -- cyclic order by column index: sequential memory access -- ties at the
    threshold to the lowest indices (not argpartition's arbitrary pick among ties): the
    same set from the serial and the threaded scoring pass."""
    d = rank.shape[0]
    t = np.partition(rank, d - size)[d - size]
    keep = rank > t
    keep[np.flatnonzero(rank == t)[:size - np.count_nonzero(keep)]] = True
    return np.flatnonzero(keep)


class WorkingSetState(PrimalIterate):
    """State of working-set CD on one problem (see module docstring).

    ``p0``: initial working-set size; ``inner_tol_ratio`` ∈ (0, 1): inner
    stopping threshold relative to the outer violation; ``anderson_k``: number
    of differences per extrapolation (0 disables it; shortened where the history
    would exceed :data:`ANDERSON_MEMORY` of X's bytes); ``max_inner_epochs``: cap
    on the epochs of one inner solve. The cap also bounds the time between gap
    checks, callbacks and Ctrl-C: an inner solve runs in one kernel call. On an
    L2 problem the working set grows to every feature and an inner solve can run
    thousands of epochs (a9a logistic, λ = 1/n: 4.5 s without a callback at the
    former cap of 10,000; 1.0 s at 200, same total time). The L1 benchmark cases
    never reach 200 epochs in one inner solve (same iterates at either cap).
    """

    def __init__(self, problem: Problem, *, sampling="uniform", batch_size=1, seed=0,
                 w0=None, intercept0=0.0, step="newton", power=1.0, p0=10,
                 inner_tol_ratio=0.3, anderson_k=5, max_inner_epochs=200):
        check_serial_exact_options("ws-cd", sampling, batch_size, step)
        self.p0 = _int_option("p0", p0, 1)
        ratio = float(inner_tol_ratio)
        if not 0.0 < ratio < 1.0:
            raise ValueError(f"inner_tol_ratio must be in (0, 1), got {inner_tol_ratio}")
        self.ratio = ratio
        self.k = _int_option("anderson_k", anderson_k, 0)
        if self.k == 1:
            raise ValueError("anderson_k must be 0 (no extrapolation) or >= 2, got 1")
        self.max_inner = _int_option("max_inner_epochs", max_inner_epochs, 1)

        self.problem = p = problem
        n, d = p.n_samples, p.n_features
        # the exact parts on threads (the same bits on any count): row-major input is
        # transposed into the column view (Nesterov 10⁵ × 10⁶ CSR: 0.79 s of a 1.36 s
        # solve on one thread), the scoring pass's Xᵀ(s∘φ') is one column dot per
        # column, summed in scipy's order (there 9 × 22 ms by scipy), and the scores
        # are computed by blocks (benchmarks/results/threads.md)
        self.n_threads = copy_threads(p.design)
        self.view = p.design.view("csc", self.n_threads)
        self._slice_dots = None
        if self.n_threads > 1:
            from ..kernels.parallel_cd import parallel_slice_dots  # loads the pool's kernels

            self._slice_dots = parallel_slice_dots
        beta = LOSS_SMOOTHNESS[p.loss]
        self.lips = beta * weighted_column_sq_norms(p) / n  # 0 for an empty column
        self.empty = self.lips == 0
        self.unit = bool(np.all(p.sample_weight == 1.0))
        self.intercept_lips = beta * float(p.sample_weight.sum()) / n if p.fit_intercept else 0.0
        self.logistic = p.loss_code == LOGISTIC
        self.cube = weighted_column_abs_cubes(p) * (1.0 / n) if self.logistic else np.zeros(0)

        self.w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
        self.w[self.lips == 0] = 0.0  # optimal for empty columns under any penalty
        if p.positive:  # a warm start projected onto w ≥ 0
            np.maximum(self.w, 0.0, out=self.w)
        self._intercept = np.array([float(intercept0) if p.fit_intercept else 0.0])
        self.alpha = None
        self.z = np.empty(n)
        self.perr = np.empty(n if self.logistic else 0)
        self._sync_margins()
        self._deriv = np.empty(n)
        self._grad = None  # ∇f at the current iterate, left by certificate() for run_epoch()
        self.ws = np.zeros(0, dtype=np.int64)
        self.ws_size = 0
        self._block = None  # (ws, data, indices, indptr) of the last working set
        self.z_buf = np.empty(n)
        self.stats = dict(outer_iterations=0, inner_epochs=0, anderson_tried=0,
                          anderson_accepted=0)

    def _sync_margins(self) -> int:
        v = self.view
        entries = support_margins(v.data, v.indices, v.indptr, self.w, self._intercept[0],
                                  self.z)
        if self.logistic:
            logistic_error_probabilities(self.z, self.problem.y, self.perr)
        return entries

    def _gradient(self) -> np.ndarray:
        p = self.problem
        if self.logistic:  # φ' = -y σ(-yz) from the kernel's cache: no exp
            np.multiply(p.y, self.perr, out=self._deriv)
            self._deriv *= -1.0
        elif p.loss_code == SQUARED:  # φ' = z - y, without compiling the loss-generic kernel
            np.subtract(self.z, p.y, out=self._deriv)
        else:
            loss_derivatives(p.loss_code, self.z, p.y, self._deriv)
        self._deriv *= p.sample_weight
        if self._slice_dots is None:
            return p.design.rmatvec(self._deriv) / p.n_samples
        v = self.view
        grad = self._slice_dots(v.data, v.indices, v.indptr, self._deriv,
                                np.empty(p.n_features))
        grad /= p.n_samples
        return grad

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p = self.problem
        d = p.n_features
        grad = self._grad if self._grad is not None else self._gradient()
        self._grad = None
        # the scoring pass, in run()'s units for a check: n derivatives, Xᵀ, d scores
        entries = p.design.nnz + p.n_samples + d
        par = self._slice_dots is not None
        if par:  # the same values on threads (kernels.working_set_parallel)
            scores, rank = np.empty(d), np.empty(d)
            viol, n_supp = parallel_scores(self.w, grad, p.l1, p.l2, p.positive, self.empty,
                                           scores, rank, self.n_threads)
        else:
            scores = coordinate_violations(self.w, grad, p.l1, p.l2, p.positive)
            viol = scores.max(initial=0.0)
            rank, support = None, self.w != 0.0
            n_supp = np.count_nonzero(support)
        viol, n_supp = float(viol), int(n_supp)
        if p.fit_intercept:
            viol = max(viol, abs(float(self._deriv.sum())) / p.n_samples)
        if viol == 0.0:
            return entries, 0
        size = min(d, max(self.p0, 2 * n_supp, self._strong_cap(scores, viol, par)))
        if size < d and not par:
            # rank the zero coefficients by |∇_j f| - λ1: their violation when > 0, how
            # close they are to entering when < 0 (no ties among non-violators). Dividing
            # by ‖x_j‖ (celer's priority) was measured 0.8-0.9× the time on five of the
            # six Lasso benchmark cases but 2.3× on news20 at λmax/100.
            # (with positive=True only a negative gradient can move a zero coefficient)
            scores = -grad if p.positive else np.abs(grad)
            scores -= p.l1
            scores[support] = np.inf
            scores[self.empty] = -np.inf
            ws = top_ranks(scores, size)
        elif size < d:
            ws = top_ranks(rank, size)
        else:
            ws = np.arange(d, dtype=np.int64)
        grad = scores = rank = support = None  # d-vectors not needed by the inner solve
        self.ws, self.ws_size = ws, size
        data, indices, indptr, copied = self._working_columns(ws)
        entries += copied
        # the kernel walks ws[t] of the view and of w, lips, cube: on the full
        # view (not gathered) that is the global index into the full vectors
        gathered = data is not self.view.data
        local = np.arange(size, dtype=np.int64) if gathered else ws
        w_ws = self.w[ws] if gathered else self.w
        lips_ws = self.lips[ws] if gathered else self.lips
        cube_ws = self.cube[ws] if gathered and self.logistic else self.cube
        k = _anderson_window(self.k, size, p.n_samples, self.view)
        if k > 0:
            w_hist = np.empty((k + 1, size))
            z_hist = np.empty((k + 1, p.n_samples))
            b_hist = np.empty(k + 1)
        else:
            w_hist = z_hist = np.empty((1, 1))
            b_hist = np.empty(1)
        tol_in = self.ratio * viol
        check_every = self.k if self.k > 0 else 5
        if p.loss_code == SQUARED:  # the inner solve works on the residual (kernel docstring)
            self.z -= p.y
            inner, updates, epochs, tried, acc, _ = ws_inner_solve_squared(
                data, indices, indptr, local, p.sample_weight, self.unit, self.z, w_ws,
                lips_ws, p.l1, p.l2, self._intercept, self.intercept_lips, p.fit_intercept,
                tol_in, self.max_inner, k, w_hist, z_hist, b_hist, self.z_buf, check_every,
                p.positive,
            )
            self.z += p.y
        else:
            inner, updates, epochs, tried, acc, _ = ws_inner_solve(
                data, indices, indptr, local, p.y, p.sample_weight, self.z, self.perr, w_ws,
                lips_ws, cube_ws, p.l1, p.l2, p.loss_code, self._intercept,
                self.intercept_lips, p.fit_intercept, tol_in, self.max_inner, k, w_hist,
                z_hist, b_hist, self.z_buf, check_every, p.positive,
            )
        if gathered:
            self.w[ws] = w_ws
        st = self.stats
        st["outer_iterations"] += 1
        st["inner_epochs"] += epochs
        st["anderson_tried"] += tried
        st["anderson_accepted"] += acc
        return entries + inner, updates

    def _strong_cap(self, scores, viol, par) -> int:
        """How many of the zero coefficients violating by more than the inner target
        enter the working set at once, capped at n.

        Each of them will still violate by more than the target after the inner solve,
        which only moves the working set: admitting them at once saves doublings
        (Nesterov Lasso, 10⁶ features: 12 → 4 outer iterations). The cap is n: a Lasso
        solution has at most n nonzeros (generic X; Tibshirani 2013, "The lasso problem
        and uniqueness"). Wide benchopt Lasso, 100 × 10,000, ρ = 0.6, λmax/20: 2,032
        strong features at w = 0, and a first working set of 100 instead of the former
        cap n/10 = 10 reaches 1e-6 in 8 outer iterations instead of 12.
        """
        n = self.problem.n_samples
        target = self.ratio * viol
        n_strong = int(parallel_count_above(scores, target, self.n_threads) if par
                       else np.count_nonzero(scores > target))
        return min(n_strong, n)

    def _working_columns(self, ws):
        """The working-set columns as one contiguous view ``(data, indices, indptr, copied)``.

        The inner solve walks these columns several times; gathered from a large
        matrix they would each be a cache miss (Nesterov 10⁵ × 10⁶, 20k columns:
        an inner epoch 21 → 4.8 ms). Rebuilt only when the working set changes;
        ``copied`` counts the entries copied. A working set holding more than
        :data:`WS_COPY_SHARE` of the entries is walked in place (the full view
        is returned): its columns are then mostly contiguous anyway, and the
        copy would add that share of X to the memory of the solve.
        """
        v = self.view
        if ws.shape[0] == self.problem.n_features:
            return v.data, v.indices, v.indptr, 0
        if self._block is not None and np.array_equal(self._block[0], ws):
            return (*self._block[1:], 0)
        self._block = None  # never hold two blocks
        lengths = v.indptr[ws + 1] - v.indptr[ws]
        nnz = int(lengths.sum())
        if nnz > WS_COPY_SHARE * v.data.shape[0]:
            return v.data, v.indices, v.indptr, 0
        data = np.empty(nnz, dtype=v.data.dtype)
        indices = np.empty(nnz if v.indices.shape[0] else 0, dtype=v.indices.dtype)
        indptr = np.empty(ws.shape[0] + 1, dtype=v.indptr.dtype)
        gather_slices(v.data, v.indices, v.indptr, ws, data, indices, indptr)
        self._block = (ws, data, indices, indptr)
        return data, indices, indptr, nnz

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        p = self.problem
        self._sync_margins()  # exact z = Xw + b (w is zero off the working set)
        refresh_margins(self, False)  # the intercept at its exact minimiser
        if self.logistic and p.fit_intercept:
            logistic_error_probabilities(self.z, p.y, self.perr)
        if p.loss_code == SQUARED and not p.fit_intercept and not np.any(self.w):
            # a cold start (z = 0): φ' = -y and ∇f = -Xᵀ(s∘y)/n, gram-cd's c, cached on
            # the design for this y (one pass of X saved per call of a sequence of
            # solves on one (X, y): benchopt's, a path's, as primal CD's first check)
            np.multiply(p.sample_weight, p.y, out=self._deriv)
            self._deriv *= -1.0
            grad = -linear_terms(p)[0]
        else:
            grad = self._gradient()
        self._grad = grad
        # α = -s φ'(z), u = Xᵀα/n = -∇f
        return certificate_from_dual_point(p.loss_code, self.z, -self._deriv, p.y,
                                           p.sample_weight, self.w, -grad, p.l1, p.l2,
                                           p.positive)

    def _restore_margins(self):
        self._sync_margins()
        self._grad = None

    def active(self) -> int:
        return int(self.ws_size) if self.ws_size else self.problem.n_features

    def extra_info(self) -> dict:
        return dict(self.stats, ws_size=int(self.ws_size))
