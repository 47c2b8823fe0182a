"""Steepest coordinate descent (SCD) and approximate steepest CD (ASCD).

Stich, Raj & Jaggi (ICML 2017); the selection rules, safe bounds, active set
and gradient oracles are documented in :mod:`cdlearn.kernels.greedy_cd`. The
problem is cdlearn's primal ``1/n Σ s_i φ(x_iᵀw) + λ1‖w‖₁ + λ2/2‖w‖²`` (the
paper's ``f(Ax) + Σ Ψ_i(x_i)``) with the squared or the logistic loss.

Options (``cdlearn.solve(..., solver="scd"|"ascd", **options)``):

``selection``
    ``"gs"`` (Gauss–Southwell (4); smooth problems, i.e. λ1 = 0), ``"gs-s"``,
    ``"gs-r"``, ``"gs-q"`` (composite rules of §2.3 / (15)-(16), App. D).
    ASCD also takes the heuristics ``"u"``, ``"l"``, ``"a"`` (u-/ℓ-/a-ASCD of
    §3, with GS-s scores) and ``"uniform"`` (every coordinate active: uniform
    CD with the same step rule, §7's UCD baseline; O(nnz) per step). Default: ``"gs"`` when λ1 = 0, else ``"gs-s"`` (the
    rule of the paper's lasso experiments).
``oracle`` (ASCD)
    ``"exact"`` (g1, Gram matrix), ``"projection"`` (g2, simulated with ``eps``),
    ``"zero"`` (g3), ``"uniform"`` (g4). Default ``"zero"``. g1/g2 need the
    d × d Gram matrix (refused above ``GRAM_MAX_ENTRIES``). With the safe set
    (GS-* selection) and no ``exact_active``, g3 runs lazily
    (:func:`cdlearn.kernels.greedy_cd.lazy_ascd_epoch`): O(nnz of the column)
    per step plus O(log d) amortised set upkeep, instead of Algorithm 1's O(d)
    radius updates and O(d log d) sort. g4 stays eager (O(d log d) per step):
    its random centre moves every estimate at every step, and its safe
    interval (radius ``c + |m|``) always contains g3's, so it never selects
    better than g3.
``eps`` (ASCD)
    accuracy ε of the g2 oracle (default 0.1).
``step``
    ``"lipschitz"`` (prox step with ``L_j = β‖a_j‖²/n``, the default),
    ``"line_search"`` (exact minimisation along the coordinate; identical for
    the squared loss, repeated proximal Newton steps for the logistic loss) or
    ``"fixed"`` (prox step with one ``L = max_j L_j`` for every coordinate: the
    paper's "fixed step size rule" of §7).
``exact_active`` (ASCD)
    the caching heuristic of §4: exact gradient updates for the members of
    I_t (reading their columns, counted in passes), the oracle for the rest.
    Default False.
``init`` (ASCD)
    ``"gradient"`` (g̃_0 = ∇f(w_0), r_0 = 0: one pass) or ``"infinite"``
    (g̃_0 = 0, r_0 = ∞, §3 "Initialization").
``pick`` (ASCD)
    ``"uniform"`` (uniform in I_t, the pick Theorem 3.2's proof analyses:
    ``τ_ASCD = 1/|I| Σ_{i∈I} |∇_i f|²/(2L)``, and the one that makes the u/ℓ/a
    heuristics differ) or ``"argmax"`` (uniform in ``argmax_{i∈I_t} ℓ_i``, how
    Algorithm 1 is printed; it can fall below UCD, see the tests).
``gradient_update`` (SCD)
    ``"gram"`` (a Gram column per step: d entries), ``"rows"`` (walk the rows
    of the updated column's support: ``Σ_{k ∈ supp a_i} nnz(row k)`` entries;
    exact for any loss) or ``"auto"`` (Gram for the squared loss when it fits
    and is cheaper on average, rows otherwise).

An ASCD epoch (one ``run_epoch``, what the driver spaces its gap checks in)
is d steps or one pass of entries, whichever comes first: greedy picks
favour long columns, so d steps could read several passes between checks.

Cost accounting (the trace's ``passes``; one pass = nnz(X) entries). Every
step reads its column once (as primal CD counts). SCD pays its full-gradient
update: d Gram entries per step, or the rows it walks. Building a Gram matrix
(``Σ_k nnz(row k)²`` entries) and computing the initial gradient (nnz entries)
are charged to the first epoch. The Gram oracles g1/g2 read d Gram entries
per step. Not counted in passes: ASCD's O(d) bound updates and O(d log d)
active-set sort per step (eager path), and the g3/g4 oracles (they read the d
column norms); ``state.vector_work`` counts these scalar operations
(``d·(1 + log2 d)`` per safe step, ``2d`` per heuristic step; lazy g3: the
bound evaluations and tree operations it did).

SCD's ``active()`` is d (it scores every coordinate); ASCD's is the mean of
|I_t| over the last epoch, rounded (``state.active_mean``; ``state.active_last``
holds |I_t| at its last step, a noisy snapshot).
No intercept (centre the data), no warm start through ``solve``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..kernels import greedy_cd as K
from ..losses import LOSS_SMOOTHNESS, loss_derivatives
from .base import Problem
from .primal_cd import PrimalCDState

SUPPORTED_LOSSES = ("squared", "logistic")
SUPPORTED_PENALTIES = ("none", "l2", "l1", "elastic_net")
GRAM_MAX_ENTRIES = 25_000_000  # 200 MB of float64

SCORE_RULES = {"gs": K.GS_S, "gs-s": K.GS_S, "gs-r": K.GS_R, "gs-q": K.GS_Q}
HEURISTICS = {"u": K.SET_U, "l": K.SET_L, "a": K.SET_A}
ORACLES = {"exact": K.ORACLE_EXACT, "projection": K.ORACLE_PROJECTION,
           "zero": K.ORACLE_ZERO, "uniform": K.ORACLE_UNIFORM}
STEPS = {"lipschitz": K.STEP_LIPSCHITZ, "line_search": K.STEP_LINE_SEARCH,
         "fixed": K.STEP_FIXED}
PICKS = {"uniform": K.PICK_UNIFORM, "argmax": K.PICK_ARGMAX}

SCD_OPTIONS = ("selection", "step", "gradient_update")
ASCD_OPTIONS = ("selection", "oracle", "eps", "step", "init", "pick", "exact_active")


def _choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name}={value!r} is not supported; choose one of {sorted(choices)}")
    return value


def gram_matrices(problem: Problem, positive_negative: bool):
    """``G = XᵀSX/n`` (squared loss), or ``(P, N)`` with ``N ≤ ⟨a_i, D a_j⟩/n / β ≤ P``.

    P and N are the Gram matrices of the positive and negative parts of the
    entry products: ``P_ij = Σ s max(0, X_ki X_kj)/n``, ``N_ij = Σ s min(0, ·)/n``.
    """
    # the Design's column view, no copy (float32 is upcast: the d × d Gram is kept in float64)
    M = problem.design.scipy_layout("csc").astype(np.float64, copy=False)
    n = problem.n_samples
    sw = problem.sample_weight
    unweighted = bool(np.all(sw == 1.0))

    def gram(A, B):
        if sp.issparse(A):
            out = A.T @ (B if unweighted else sp.diags(sw) @ B)
            return np.asarray(out.todense() if sp.issparse(out) else out) / n
        return (A.T @ (B if unweighted else sw[:, None] * B)) / n

    if not positive_negative:
        return gram(M, M), None
    Mp = M.maximum(0) if sp.issparse(M) else np.maximum(M, 0.0)
    Mn = (-M).maximum(0) if sp.issparse(M) else np.maximum(-M, 0.0)
    P = gram(Mp, Mp) + gram(Mn, Mn)
    N = -(gram(Mp, Mn) + gram(Mn, Mp))
    return P, N


class GreedyCDState(PrimalCDState):
    """State of SCD (``method="scd"``) or ASCD (``method="ascd"``); see the module docstring."""

    def __init__(self, problem: Problem, *, method="ascd", selection=None, oracle="zero",
                 eps=0.1, step="lipschitz", init="gradient", pick="uniform", exact_active=False,
                 gradient_update="auto", seed=0, sampling="uniform", batch_size=1,
                 intercept0=0.0, alpha0=None, dual_step="exact", w0=None, power=1.0):
        name = method
        if problem.fit_intercept:
            raise ValueError(f"solver={name!r} does not fit an intercept; centre X and y")
        if sampling != "uniform":
            raise ValueError(f"solver={name!r} selects coordinates greedily; "
                             f"sampling={sampling!r} does not apply")
        if batch_size != 1:
            raise ValueError(f"solver={name!r} takes one coordinate per step (batch_size=1)")
        if alpha0 is not None:
            raise ValueError(f"solver={name!r} is a primal method; alpha0 does not apply")
        if selection is None:
            selection = "gs" if problem.l1 == 0.0 else "gs-s"
        rules = (dict(SCORE_RULES, uniform=K.GS_S, **HEURISTICS) if method == "ascd"
                 else SCORE_RULES)
        _choice("selection", selection, rules)
        if selection == "gs" and problem.l1 > 0.0:
            raise ValueError("selection='gs' is the Gauss-Southwell rule of smooth problems; "
                             "with an l1 penalty use 'gs-s', 'gs-r' or 'gs-q'")
        _choice("step", step, STEPS)
        _choice("oracle", oracle, ORACLES)
        _choice("init", init, ("gradient", "infinite"))
        _choice("pick", pick, PICKS)
        _choice("gradient_update", gradient_update, ("auto", "gram", "rows"))
        if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        if not isinstance(exact_active, (bool, np.bool_)):
            raise ValueError(f"exact_active must be True or False, got {exact_active!r}")
        if exact_active and selection == "uniform":
            raise ValueError("exact_active=True needs an active set; selection='uniform' "
                             "has none (every coordinate is active)")

        super().__init__(problem, sampling="uniform", seed=seed, w0=w0, step="lipschitz")
        p = problem
        d, n = p.n_features, p.n_samples
        self.method = method
        self.selection = selection
        self.rule = SCORE_RULES.get(selection, K.GS_S)
        self.step_code = STEPS[step]
        self.beta = LOSS_SMOOTHNESS[p.loss]
        self.cnorm = np.sqrt(self.lips / self.beta)  # weighted ‖a_j‖/√n
        self.eps = float(eps)
        self.oracle = ORACLES[oracle]
        self._rview = None
        squared = p.loss == "squared"
        gram_cost = int(np.sum(p.design.row_nnz.astype(np.float64) ** 2))
        self.setup_entries = 0
        self.gram_mid = np.zeros((1, 1))
        self.gram_rad = np.zeros((1, 1))

        if method == "scd":
            self.set_mode, self.pick = K.SET_U, K.PICK_UNIFORM
            if gradient_update == "auto":
                rows_cost = gram_cost / max(d, 1)  # mean Σ_{k∈supp a_j} nnz(row k)
                fits = d * d <= GRAM_MAX_ENTRIES
                gradient_update = "gram" if squared and fits and d < rows_cost else "rows"
            if gradient_update == "gram" and not squared:
                raise ValueError("gradient_update='gram' is exact for the squared loss only; "
                                 "use 'rows' for the logistic loss")
            self.update = K.UPDATE_GRAM if gradient_update == "gram" else K.UPDATE_ROWS
            self.gradient_update = gradient_update
            init = "gradient"
        else:
            self.set_mode = (K.SET_ALL if selection == "uniform"
                             else HEURISTICS.get(selection, K.SET_SAFE))
            self.pick = K.PICK_UNIFORM if selection == "uniform" else PICKS[pick]
            self.update = K.UPDATE_ORACLE
            self.gradient_update = "oracle"
            if selection == "uniform":
                init = "infinite"  # UCD keeps no gradient estimate: no initial pass
        needs_gram = self.update == K.UPDATE_GRAM or (
            self.update == K.UPDATE_ORACLE and self.set_mode != K.SET_ALL
            and self.oracle in (K.ORACLE_EXACT, K.ORACLE_PROJECTION))
        if needs_gram:
            if d * d > GRAM_MAX_ENTRIES:
                raise ValueError(
                    f"the {d} x {d} Gram matrix does not fit (limit {GRAM_MAX_ENTRIES} entries); "
                    "use oracle='zero' or 'uniform' (ASCD) or gradient_update='rows' (SCD)")
            mid, N = gram_matrices(p, positive_negative=not squared)
            if N is not None:
                P = mid
                mid = 0.5 * self.beta * (P + N)
                self.gram_rad = 0.5 * self.beta * (P - N)
            self.gram_mid = np.ascontiguousarray(mid)
            self.setup_entries += gram_cost * (1 if squared else 4)
        if self.update == K.UPDATE_ROWS:
            self._rview = p.design.csr
        rv = self._rview
        if rv is None:
            self._rdata, self._rindices, self._rindptr = (
                np.zeros(1), np.zeros(0, dtype=np.int64), np.zeros(2, dtype=np.int64))
        else:
            self._rdata, self._rindices, self._rindptr = rv.data, rv.indices, rv.indptr

        self.init = init
        if init == "gradient":
            self.g_est = self._exact_gradient()
            self.r = np.zeros(d)
            self.setup_entries += p.design.nnz
        else:
            self.g_est = np.zeros(d)
            self.r = np.full(d, np.inf)
        self.upper = np.empty(d)
        self.lower = np.empty(d)
        self.members = np.empty(d, dtype=np.int64)
        self.zold = np.empty(n)
        self.dphi = np.empty(n)
        self.settled = np.zeros(d, dtype=np.bool_)
        self.exact_active = bool(exact_active)
        self._buf = np.zeros(n)
        self._mark = np.zeros(d, dtype=np.bool_)
        self.vector_work = 0.0
        self.active_mean = float("nan")
        self.updates_per_epoch = d
        # ASCD's epoch also ends after one pass of entries: its greedy picks favour long
        # columns, and the driver's gap checks are spaced in epochs
        self.max_entries = p.design.nnz if method == "ascd" else np.iinfo(np.int64).max
        self.last_steps = 0
        self.lazy = (method == "ascd" and self.set_mode == K.SET_SAFE
                     and self.oracle == K.ORACLE_ZERO and not self.exact_active)
        self.horizon_steps = max(16.0, d / 8.0)
        size = 1 << max(1, int(d - 1).bit_length())
        self._tree = np.empty(2 * size if self.lazy else 2)
        self._off = np.zeros(d if self.lazy else 1)
        self._stamp = np.zeros(d if self.lazy else 1, dtype=np.int64)
        self._k_lazy = 0  # lazy ASCD's set size at the end of the last run_epoch
        K.coordinate_bounds(self.g_est, self.r, self.w, self.lips, p.l1, p.l2, self.rule,
                            self.upper, self.lower, self.settled)
        self._active = (d if method == "scd" else
                        int(K.active_set(self.upper, self.lower, self.set_mode, self.members)))
        self.active_last = self._active

    # ---------------------------------------------------------------- helpers
    def _exact_gradient(self) -> np.ndarray:
        p = self.problem
        loss_derivatives(p.loss_code, self.z, p.y, self._deriv)
        return p.design.rmatvec(self._deriv * p.sample_weight) / p.n_samples

    def bounds(self):
        """``(lower, upper)`` score bounds of every coordinate at the current state."""
        p = self.problem
        K.coordinate_bounds(self.g_est, self.r, self.w, self.lips, p.l1, p.l2, self.rule,
                            self.upper, self.lower, self.settled)
        return self.lower.copy(), self.upper.copy()

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        """``updates_per_epoch`` steps (default d; experiments lower it), ASCD: at most a pass.

        The pass bound (``max_entries``, nnz by default) puts ASCD's gap checks on a
        schedule of work: a step may read a long column. ``last_steps`` is the
        number of steps taken.
        """
        p, v = self.problem, self.view
        d = p.n_features
        if self.lazy:
            entries, updates, active_total, last, steps, work = K.lazy_ascd_epoch(
                v.data, v.indices, v.indptr, p.y, p.sample_weight, self.z, self.w, self.lips,
                p.l1, p.l2, p.loss_code, self.g_est, self.r, self.cnorm, self.beta, self.rule,
                self.pick, self.step_code, self.updates_per_epoch, self.max_entries,
                float(self.horizon_steps), self.rng, self.upper, self.lower, self.members,
                self._k_lazy, self.zold, self.dphi, self.settled, self._off, self._stamp, self._tree,
            )
            self.vector_work += work + 2 * d  # + the radii folded at the end
            self._k_lazy = int(last)
        else:
            entries, updates, active_total, last, steps = K.greedy_cd_epoch(
                v.data, v.indices, v.indptr, self._rdata, self._rindices, self._rindptr,
                p.y, p.sample_weight, self.z, self.w, self.lips, p.l1, p.l2, p.loss_code,
                self.g_est, self.r, self.gram_mid, self.gram_rad, self.cnorm, self.beta,
                self.eps, self.oracle, self.update, self.rule, self.set_mode, self.pick,
                self.step_code, self.updates_per_epoch, self.max_entries, self.rng,
                self.upper, self.lower, self.members, self.zold, self.dphi, self.settled,
                self.exact_active, self._buf, self._mark,
            )
            per_step = (d * (1.0 + math.log2(max(d, 2))) if self.set_mode == K.SET_SAFE
                        else 0.0 if self.set_mode == K.SET_ALL else 2.0 * d)
            self.vector_work += per_step * steps
        entries += self.setup_entries
        self.setup_entries = 0
        self.last_steps = int(steps)
        if self.method == "scd":
            self._active = d
        elif steps > 0:
            self.active_last = int(last)
            self.active_mean = active_total / steps
            self._active = max(1, int(round(self.active_mean)))
        return entries, updates

    def certificate(self):
        out = super().certificate()
        if self.method == "scd":
            # the exact gradient is maintained incrementally; wash out rounding drift
            self.g_est[:] = self._exact_gradient()
        return out

    def restore(self, snap):
        super().restore(snap)
        self.z = self.problem.design.matvec(self.w)
        self.g_est[:] = self._exact_gradient()
        self.r[:] = 0.0
        self.settled[:] = False
        self._k_lazy = 0

    def active(self) -> int:
        return self._active

    def active_members(self) -> np.ndarray:
        """Lazy ASCD: a safe active set at the current iterate (Lemma 3.1, Theorem 3.2)."""
        if not self.lazy:
            raise ValueError("active_members() is kept by lazy ASCD (oracle='zero', safe set)")
        return self.members[:self._k_lazy].copy()


def build_scd(problem: Problem, **options) -> GreedyCDState:
    return GreedyCDState(problem, method="scd", **options)


def build_ascd(problem: Problem, **options) -> GreedyCDState:
    return GreedyCDState(problem, method="ascd", **options)
