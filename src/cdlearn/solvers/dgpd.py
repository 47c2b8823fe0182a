"""Doubly greedy primal-dual coordinate descent (DGPD; Lei, Yen, Wu, Dhillon & Ravikumar, ICML 2017).

Solves ``P(w) = 1/n Σ s_i φ(x_iᵀw, y_i) + λ1‖w‖₁ + λ2/2‖w‖²`` through the
saddle-point form (3). The paper's regulariser ``g(x) = μ/2‖x‖² + λ‖x‖₁`` is
cdlearn's ``(l1, l2)`` pair with **μ = l2 and λ = l1**: ``penalty="l2",
lam=μ`` (λ = 0) or ``penalty="elastic_net", lam=λ+μ, l1_ratio=λ/(λ+μ)``.
μ > 0 is required (g must be strongly convex). The paper's dual variable is
``y = -α`` in cdlearn's convention (``α_i = -s_i φ'(x_iᵀw)`` at the optimum).

Two methods (``cdlearn.solve(..., solver="dgpd", active_set=...)``):

``active_set=False`` -- Algorithm 1
    each iteration moves the primal coordinate that lowers ``L(w, α)`` most
    (eq. (4)-(5), O(d) search + one column) and then takes a proximal step with
    step size η on the dual coordinate chosen by Gauss–Southwell (eq. (7)-(8),
    O(n) search + one row), keeping ``Xw`` and ``Xᵀα`` up to date (6), (9).
``active_set=True`` -- Algorithm 2 with the sparse implementation of §3.2
    each outer iteration recomputes ``Xᵀα`` and ``Xw`` from the active rows and
    columns (14), adds outsiders to each active set by the greedy rules (10)
    and (12) (the largest scores first; by default up to the set's own size,
    see ``growth``), builds the submatrix ``[X]_A`` (rows ``A_y``, columns
    ``A_x``) and runs rounds of the updates (13), (11) over the active sets
    through it; coordinates that become exactly zero leave the active sets.
    Uses both the CSR and CSC views.

Options:

``active_set`` (bool, default False)
    Algorithm 2 instead of Algorithm 1.
``eta`` (float > 0 or None)
    the dual step η. ``None`` (default): Theorem 4.2's step (16)
    ``η = 2n²μ / (s (5R² + nγμ))``, ``R = max_i ‖x_i‖``, ``γ = 1/(β max_i s_i)``
    for the β-smooth loss, with ``s = ‖w - w̄‖₀`` measured at each iteration
    (Algorithm 1); for the Gauss–Seidel rounds of Algorithm 2 (they keep
    ``w_A = w̄_A(α)`` exactly, so each step is a proximal coordinate step on
    the dual restricted to the active sets) the inverse of that coordinate's
    smoothness constant, ``η_i = n²μ/‖[x_i]_A‖²`` (the SDCA step on the
    submatrix); for the Jacobi rounds (16) with the measured s capped at
    ``n²μ/σ²`` (σ² the smaller of ``‖[X]_A‖_F²`` and ``‖[X]_A‖₁‖[X]_A‖∞``,
    upper bounds of ``‖[X]_A‖₂²``: a Jacobi round is a proximal gradient ascent
    step on the restricted dual, monotone only below that step).
``rounds`` ("auto" default, or int ≥ 1)
    rounds of updates over the active sets per search. An integer fixes them
    (§5 uses 5). "auto": at least 5, and as many as make the rounds' work
    (``2 nnz([X]_A)`` each) reach the search's (the O(n + d) scans, the
    recomputations (14) and the submatrix build), so that the searches take at
    most about half of the work, doubled (up to 64×) while successive searches
    add at most 1% to each set; rounds stop early once one changes nothing.
``add_per_search`` (int ≥ 1, default 1 as in (10), (12))
    coordinates added to each active set per search, at least (see ``growth``).
``growth`` ("double" default, or "fixed")
    "fixed" adds ``add_per_search`` per search, as printed. "double" adds up to
    ``max(add_per_search, |A|)`` (only outsiders with a positive score), so an
    active set can double per search and a support of m coordinates is reached
    in O(log m) searches instead of m (the paper's "straightforward" batch
    extension, sized like a working-set method's).
``schedule`` ("gauss-seidel" default, or "jacobi")
    order of the updates inside a round. "jacobi" is Algorithm 2 as printed:
    (13) on all of ``A_y`` at the current w, then (11) on all of ``A_x``.
    "gauss-seidel" applies (11) to the features of sample i right after (13) on
    i, at the same cost (2 nnz([X]_A) per round), visiting ``A_y`` in a fresh
    random order each round (``seed``). On news20 the printed order with its
    safe step does not reach a relative objective of 1e-2 in 60 s.

Why DGPD did not converge on news20 (issue 20), measured on news20 binarized
(14,342 × 62,061 unit rows, the dgpd-fig1 point λ = 0.1, μ = 0.01 on the
summed loss, smooth hinge): the optimum has 3,269 nonzero primal and 3,521
nonzero dual variables -- a quarter of the samples, not the few thousand of
~200,000 of the paper's Table 2. Three things, each measured by changing it
alone:

1. the growth rule of Algorithm 2, one coordinate per search: at least 3,521
   searches, each O(n + d) plus the recomputations (14) (~30 ms here), while
   step 6 drops every coordinate that touches zero in the rounds, so the sets
   churn. 30 s: 940 searches, 520 nonzero dual variables, relative objective
   5.5. With doubling the supports are reached in ~12 searches.
2. the fixed (cyclic) order of the rounds: dual CD itself in cyclic order is at
   a gap of 6.7e-7 after 3,000 epochs on this problem; in a fresh random order
   per epoch it reaches 4.8e-9 in 481 (tol 1e-8). With batches of 1,000 and
   the cyclic rounds DGPD was at a gap of 1e-7·P(0) after 20 s; shuffled,
   1e-10·P(0) in ~8 s.
3. the step: (16) with s = 1 is ``2n²μ/(5R² + nγμ)``, 0.4× the SDCA step
   ``n²μ/R²`` here (57 against 143); with the random order the shorter step
   was at relative objective 1.3e-6 after 12 s where the SDCA step had
   converged (1e-10·P(0)) in ~7 s.

The scaling of λ and μ is not the cause (the summed loss is the paper's
experimental objective, see :mod:`cdlearn.experiments.dgpd`), but it is where
Theorem 4.2 stops saying anything useful: in the averaged form (1) the summed
μ becomes μ/n, so ``κ/n = R²/(γμ) = 100`` for unit rows and μ = 0.01, and
with ``s = ‖x - x̄‖₀`` in the thousands the theorem's contraction per
iteration, ``a ≤ 1/(s(1 + 5κ/n))``, is ~6e-7 (s = 3,269). The paper's assumptions (a
primal support s small and κ ≈ n) do not hold on these sets; DGPD with the
three changes above is dual CD on greedily grown working sets, and converges
like it. Measured at the dgpd-fig1 point, time to relative objective 1e-4 as
a fraction of DualRCD's: news20 0.37, reuters 0.67, digits-RB 0.044; a9a 1.19
(123 features, 104 nonzero, half of the samples with a nonzero dual: the
active sets cover most of the matrix and the searches are pure overhead;
``benchmarks/results/dgpd_fig1_time_to_target.md``).

Certificate: the trace's ``gap`` is ``P(w) - D(α)`` for the iterates ``(w, α)``
themselves, as a sum of Fenchel–Young terms (:func:`cdlearn.objectives.duality_gap`).
The paper's primal-dual sub-optimality Δ = Δ_p + Δ_d (Definition 4.1) is also
recorded: ``Δ_p = L(w, α) - D(α) = Σ_k D_k`` is computed exactly (a sum of the
coordinate decreases of (5)); ``Δ_d = D* - D(α)`` needs D*, so the solver
records its upper bound ``P(w) - D(α)`` and :meth:`DGPDState.suboptimality`
takes D* when it is known. ``result.info`` holds ``nnz_primal``, ``nnz_dual``,
``delta_p``, ``eta`` (last step) and per-check arrays ``trace_nnz_dual`` and
``trace_delta_p`` aligned with the trace rows.

Passes: an epoch runs iterations until about nnz(X) entries have been touched.
Entries are the matrix entries read (columns, rows, submatrix builds and
rounds) plus the vector entries the greedy searches scan (``n + d`` per
search), so the O(n + d) search cost of each iteration is counted, not hidden;
``state.matrix_entries`` and ``state.search_entries`` keep the two apart.
Measured (tests' 60 x 20 dense smooth-hinge problem, μ = 0.1, fixed η = 1,
which satisfies (16)): the gap shrinks by e every ~1150 iterations, while (15)
promises every ~120. The proof of Lemma A.3 bounds ``Δ_d`` with strong
concavity γ of D; the (1/n)-scaled dual (2) is only γ/n-strongly concave, so
the bound is off by up to a factor n; the method converges, more slowly than
Theorem 4.2 states.

Algorithm 1 is deterministic; Algorithm 2 uses ``seed`` only for the order
of the Gauss–Seidel rounds. No intercept, no sampling options (the selection
is greedy).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..kernels import dgpd as K
from ..losses import LOSS_SMOOTHNESS
from ..objectives import dual_value, duality_gap, primal_value
from ..penalties import penalty_value
from ..sampling import make_rng_state
from .base import Problem, initial_primal

SUPPORTED_LOSSES = ("smooth_hinge", "logistic", "squared", "squared_hinge")
SUPPORTED_PENALTIES = ("l2", "elastic_net")
OPTIONS = ("active_set", "eta", "rounds", "add_per_search", "growth", "schedule")
SCHEDULES = {"jacobi": K.JACOBI, "gauss-seidel": K.GAUSS_SEIDEL}
GROWTHS = ("double", "fixed")
MIN_ROUNDS = 5  # §5: "several (5) passes over the active sets" per search
RESYNC_EVERY = 20  # recompute Xw and Xᵀα from scratch every this many checks (Algorithm 1)


def _int_option(name, value, low=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


class DGPDState:
    """State of DGPD (Algorithm 1) or DGPD with active sets (Algorithm 2); see the module docstring."""

    def __init__(self, problem: Problem, *, active_set=False, eta=None, rounds="auto",
                 add_per_search=1, growth="double", schedule="gauss-seidel", seed=0, sampling="uniform", batch_size=1, intercept0=0.0,
                 alpha0=None, dual_step="exact"):
        p = problem
        if p.fit_intercept:
            raise ValueError("solver='dgpd' does not fit an intercept; centre the data or add "
                             "a constant feature")
        if p.l2 <= 0.0:
            raise ValueError("solver='dgpd' needs a strongly convex penalty (μ = l2 > 0): use "
                             "penalty='l2' or 'elastic_net' with l1_ratio < 1")
        if sampling != "uniform":
            raise ValueError(f"solver='dgpd' selects coordinates greedily; sampling={sampling!r} "
                             "does not apply")
        if int(batch_size) != 1:
            raise ValueError("solver='dgpd' does not take batch_size (use add_per_search with "
                             "active_set=True)")
        if dual_step != "exact":
            raise ValueError("solver='dgpd' takes the proximal dual step (8) with step size eta; "
                             f"dual_step={dual_step!r} does not apply")
        if not isinstance(active_set, (bool, np.bool_)):
            raise TypeError(f"active_set must be True or False, got {active_set!r}")
        if eta is not None:
            if isinstance(eta, bool) or not isinstance(eta, numbers.Real):
                raise TypeError(f"eta must be a positive number or None, got {eta!r}")
            if not (np.isfinite(eta) and eta > 0):
                raise ValueError(f"eta must be a finite number > 0, got {eta}")
        if not isinstance(schedule, str) or schedule not in SCHEDULES:
            raise ValueError(f"schedule={schedule!r} is not supported; choose one of "
                             f"{sorted(SCHEDULES)}")
        if not isinstance(growth, str) or growth not in GROWTHS:
            raise ValueError(f"growth={growth!r} is not supported; choose one of {list(GROWTHS)}")
        self.schedule = schedule
        self.growth = growth
        self.balance = isinstance(rounds, str)
        if self.balance and rounds != "auto":
            raise ValueError(f"rounds must be 'auto' or an integer >= 1, got {rounds!r}")
        self.rounds = MIN_ROUNDS if self.balance else _int_option("rounds", rounds)
        self.add_per_search = _int_option("add_per_search", add_per_search)
        self.problem = p
        self.active_set = bool(active_set)
        self.eta_fixed = float(eta) if eta is not None else 0.0
        n, d = p.n_samples, p.n_features
        self.csc = p.design.csc
        self.csr = p.design.csr
        beta = LOSS_SMOOTHNESS[p.loss]
        self.gamma = 1.0 / (beta * float(np.max(p.sample_weight)))
        self.r2 = float(np.max(p.design.row_sq_norms))
        self.alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=np.float64)
        self.alpha[p.sample_weight == 0] = 0.0
        self.w = np.zeros(d)
        self.intercept = 0.0
        self.stats = np.zeros(4)  # last η, last s, matrix entries, search entries
        self.iterations = 0
        self._checks = 0
        self._resync()
        if self.active_set:
            self.act_x = np.zeros(d, dtype=np.int64)
            self.pos_x = np.full(d, -1, dtype=np.int64)
            self.act_y = np.zeros(n, dtype=np.int64)
            self.pos_y = np.full(n, -1, dtype=np.int64)
            self.counts = np.zeros(3, dtype=np.int64)  # |A_x|, |A_y|, rounds factor
            self._rebuild_active_sets()
            nnz_cap = max(int(p.design.nnz), 1)
            self.sub_ptr = np.zeros(n + 1, dtype=np.int64)
            self.sub_idx = np.zeros(nnz_cap, dtype=np.int64)
            self.sub_val = np.zeros(nnz_cap)
            self.sub_sq = np.zeros(n)
            self.perm = np.zeros(n, dtype=np.int64)
            self.rng = make_rng_state(seed)
            self.scores_x = np.zeros(d)
            self.scores_y = np.zeros(n)
        self.trace_nnz_dual: list[int] = []
        self.trace_delta_p: list[float] = []
        self.last_delta_p = float("nan")

    # ---------------------------------------------------------------- helpers
    def _resync(self):
        p = self.problem
        self.margins = p.design.matvec(self.w)
        self.xta = p.design.rmatvec(self.alpha)

    def _rebuild_active_sets(self):
        for members, pos, vals, slot in ((self.act_x, self.pos_x, self.w, 0),
                                         (self.act_y, self.pos_y, self.alpha, 1)):
            pos[:] = -1
            support = np.flatnonzero(vals)
            members[:support.size] = support
            pos[support] = np.arange(support.size)
            self.counts[slot] = support.size
        self.counts[2] = 1

    @property
    def matrix_entries(self) -> float:
        return float(self.stats[2])

    @property
    def search_entries(self) -> float:
        return float(self.stats[3])

    @property
    def eta(self) -> float:
        """The dual step size used last (η of (8) / (13))."""
        return float(self.stats[0])

    def lagrangian(self, w=None, alpha=None) -> float:
        """``L(w, α)`` of eq. (3) in cdlearn's convention (see :mod:`cdlearn.kernels.dgpd`)."""
        p = self.problem
        w = self.w if w is None else np.asarray(w, dtype=np.float64)
        alpha = self.alpha if alpha is None else np.asarray(alpha, dtype=np.float64)
        margins = p.design.matvec(w)
        return penalty_value(w, p.l1, p.l2) + K.lagrangian_terms(
            p.loss_code, margins, alpha, p.y, p.sample_weight)

    def primal_gap_part(self) -> float:
        """``Δ_p = L(w, α) - D(α) = Σ_k D_k`` (Definition 4.1), cancellation-free."""
        p = self.problem
        return float(K.primal_gap_sum(self.w, self.xta, 1.0 / p.n_samples, p.l1, p.l2))

    def suboptimality(self, dual_star=None) -> tuple[float, float]:
        """``(Δ_p, Δ_d)`` of Definition 4.1; without ``dual_star`` Δ_d is bounded by P(w) - D(α)."""
        p = self.problem
        u = p.design.rmatvec(self.alpha) / p.n_samples
        dual = dual_value(p.loss_code, self.alpha, p.y, p.sample_weight, u, p.l1, p.l2)
        saved = self.xta
        self.xta = u * p.n_samples
        delta_p = self.primal_gap_part()
        self.xta = saved
        if dual_star is None:
            margins = p.design.matvec(self.w)
            delta_d = duality_gap(p.loss_code, margins, self.alpha, p.y, p.sample_weight,
                                  self.w, u, p.l1, p.l2)
        else:
            delta_d = float(dual_star) - dual
        return delta_p, delta_d

    def nnz_dual(self) -> int:
        return int(np.count_nonzero(self.alpha))

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p = self.problem
        c, r = self.csc, self.csr
        budget = max(int(p.design.nnz), 1)
        if self.active_set:
            entries, updates, iters = K.dgpd_active_epoch(
                c.data, c.indices, c.indptr, r.data, r.indices, r.indptr, p.y,
                p.sample_weight, self.w, self.alpha, self.margins, self.xta, p.l1, p.l2,
                p.loss_code, self.eta_fixed, self.gamma, self.r2, self.rounds, self.balance,
                SCHEDULES[self.schedule], self.add_per_search, self.growth == "double",
                self.act_x, self.pos_x, self.act_y, self.pos_y, self.counts, self.sub_ptr,
                self.sub_idx, self.sub_val, self.sub_sq, self.perm, self.rng, self.scores_x, self.scores_y,
                self.stats, budget)
        else:
            entries, updates, iters = K.dgpd_epoch(
                c.data, c.indices, c.indptr, r.data, r.indices, r.indptr, p.y,
                p.sample_weight, self.w, self.alpha, self.margins, self.xta, p.l1, p.l2,
                p.loss_code, self.eta_fixed, self.gamma, self.r2, budget, self.stats)
        self.iterations += int(iters)
        return int(entries), int(updates)

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        p = self.problem
        self._checks += 1
        if self.active_set or self._checks % RESYNC_EVERY == 0:
            # Algorithm 2 keeps Xw / Xᵀα exact only on the active sets
            self._resync()
        n = p.n_samples
        u = self.xta / n
        primal = primal_value(p.loss_code, self.margins, p.y, p.sample_weight, self.w,
                              p.l1, p.l2)
        dual = dual_value(p.loss_code, self.alpha, p.y, p.sample_weight, u, p.l1, p.l2)
        gap = duality_gap(p.loss_code, self.margins, self.alpha, p.y, p.sample_weight, self.w,
                          u, p.l1, p.l2)
        self.last_delta_p = self.primal_gap_part()
        self.trace_nnz_dual.append(self.nnz_dual())
        self.trace_delta_p.append(self.last_delta_p)
        return primal, dual, gap

    def snapshot(self):
        return self.w.copy(), self.alpha.copy()

    def restore(self, snap):
        w, alpha = snap
        self.w[:] = w
        self.alpha[:] = alpha
        self._resync()
        if self.active_set:
            self._rebuild_active_sets()

    def iterate(self):
        return self.w.copy(), self.alpha.copy(), 0.0

    def nnz_w(self) -> int:
        return int(np.count_nonzero(self.w))

    def active(self) -> int:
        """|A_x| with active sets; d for Algorithm 1 (its primal search scans every feature)."""
        if self.active_set:
            return int(self.counts[0])
        return self.problem.n_features

    def extra_info(self) -> dict:
        """What :func:`cdlearn.solvers.base.run` copies into ``result.info``."""
        return {
            "nnz_primal": self.nnz_w(),
            "nnz_dual": self.nnz_dual(),
            "delta_p": self.primal_gap_part(),
            "eta": self.eta,
            "iterations": self.iterations,
            "matrix_entries": self.matrix_entries,
            "search_entries": self.search_entries,
            "active_set": self.active_set,
            "trace_nnz_dual": np.array(self.trace_nnz_dual, dtype=np.int64),
            "trace_delta_p": np.array(self.trace_delta_p),
        }
