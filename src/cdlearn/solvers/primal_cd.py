"""Primal randomized coordinate descent: NSync (face-off Algorithm 1) with prox steps.

Smooth losses with the ``none``, ``l2``, ``l1`` and ``elastic_net`` penalties.
Coordinate j uses the Lipschitz constant ``L_j = β Σ_i s_i X_ij² / n``
(``β u_j / n`` with the serial ESO ``u = Diag(XᵀX)``, face-off eq. (7)), or the
τ-nice ESO of :func:`cdlearn.sampling.eso_tau_nice` when ``batch_size > 1`` (PCDM;
on threads when the solve has more than one, :mod:`cdlearn.kernels.parallel_cd`,
with the same iterates as serial).
Samplings: ``uniform`` (with replacement, as in the papers), ``shuffle`` (a
fresh random permutation every epoch: without replacement), ``importance``
(eq. (14): ``p_j ∝ L_j + λ2``), ``power`` (``p_j ∝ L_j^a``, RCDC eq. (55)), ``cyclic``, ``shrinking`` (RCDC §6.1
q-shrinking: from epoch ``shrink_start`` on, with probability ``shrink_q`` the
coordinate is drawn uniformly from the support of ``w``, else uniformly from all;
see :mod:`cdlearn.kernels.primal_shrinking`).

RCDC Table 10 check (L1-regularized L2-SVM and logistic regression). The paper's
``f(w) = γ Σ_j L(w; x_j, y_j)`` has ``L_i = 2γ Σ_j (x_j^(i))²`` (L2-SVM) and
``(γ/4) Σ_j (x_j^(i))²`` (logistic). cdlearn's ``P = 1/n Σ φ + λ‖w‖₁`` is
the paper's ``F/(λn)`` with ``γ = 1/(λn)`` (liblinear's ``C = 1/(λn)``), and its
``L_j = β ‖X_j‖²/n`` with β = 2 (``squared_hinge``) and β = 1/4 (``logistic``)
are exactly Table 10's constants times ``λ`` (``y_j² = 1``), i.e. the same
coordinate steps ``1/L_j`` on the same problem.

Steps: ``step="newton"`` (default) takes proximal Newton coordinate steps on
the local curvature with an Armijo test (see :mod:`cdlearn.kernels.primal_cd`);
``step="lipschitz"`` is the paper's fixed ``1/L_j`` step (NSync), which the
face-off reproductions use. Minibatches (τ > 1) always use the ESO step.

``positive=True`` (the constraint w ≥ 0) clips every step at 0.

``partition=K`` (squared loss, no intercept): K blocks of features, each a cyclic
pass per epoch on its own copy of the residual, merged once per epoch
(:mod:`cdlearn.kernels.partition_cd`; never chosen by default).

The duality-gap certificate uses ``α = -s φ'(Xw + b)`` (rescaled into the dual
domain for l1). With an intercept, ``b`` is first set to its exact minimiser
for the current ``w`` (a 1-D Newton solve, O(n)), which makes ``Σα = 0`` and the
gap a valid bound for the joint problem.
"""

from __future__ import annotations

import numpy as np

from ..data import SMALL_INPUT
from ..kernels.parallel_cd import block_bounds, primal_cd_parallel_epoch
from ..kernels.primal_cd import (
    logistic_error_probabilities,
    primal_cd_epoch,
    primal_cd_logistic_epoch,
    primal_cd_squared_epoch,
)
from ..kernels.primal_shrinking import primal_cd_shrinking_epoch, rebuild_support
from ..kernels.squared_certificate import squared_certificate
from ..kernels.views import weighted_slice_powers
from ..kernels.working_set import _store, primal_cd_squared_epochs, squared_anderson_window
from ..losses import step_smoothness
from ..objectives import certificate_from_dual_point
from ..sampling import (
    CYCLIC,
    IMPORTANCE,
    SHUFFLE,
    UNIFORM,
    alias_table,
    importance_probabilities,
    make_rng_state,
    power_probabilities,
    tau_nice_weights,
)
from .base import PLAIN_CHECK_SPACING, PrimalIterate, Problem, initial_primal, unit_weights
from .gram_cd import linear_terms
from .intercept import margin_certificate, margin_kkt_violation, refresh_margins
from .parallel import Partition, check_partition, minibatch_threads

SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
SUPPORTED_PENALTIES = ("none", "l2", "l1", "elastic_net")
RESYNC_EVERY = 20  # recompute z = Xw + b from scratch every this many checks
#: Anderson window of plain cyclic CD on the squared loss (as ws-cd's and gram-cd's
#: default); 0 turns it off. On benchopt's 500 × 600 Lasso (ρ 0 / 0.6, reg 0.1 / 0.05)
#: epochs to a relative 1e-6 / 1e-10 of the optimum went 9/14/16/23 -> 9/12/15/20 and
#: 15/26/28/44 -> 12/18/20/30
ANDERSON_K = 5
#: run_epochs' longest call (epochs between two looks at Ctrl-C or a stop event)
MAX_EPOCH_BATCH = 10
#: an Anderson window without slots: run_epochs' kernel with one signature either way
_NO_WINDOW = (np.empty((1, 0)), np.empty((1, 0)), np.empty(1), np.empty(0),
              np.empty(0, dtype=np.int64))


def weighted_column_abs_cubes(problem: Problem) -> np.ndarray:
    """Σ_i s_i |X_ij|³ for every column j (the logistic kernel's line-search bound)."""
    v = problem.design.csc
    out = np.empty(problem.n_features)
    weighted_slice_powers(v.data, v.indices, v.indptr, problem.sample_weight, True, out)
    return out


def weighted_column_sq_norms(problem: Problem, row_weights=None) -> np.ndarray:
    """Σ_i s_i r_i X_ij² for every column j (``r = 1`` by default), from the column view."""
    design, sw = problem.design, problem.sample_weight
    if row_weights is None:
        if unit_weights(problem):
            return design.col_sq_norms
    else:
        sw = sw * row_weights
    v = design.csc
    out = np.empty(problem.n_features)
    weighted_slice_powers(v.data, v.indices, v.indptr, sw, False, out)
    return out


class PrimalCDState(PrimalIterate):
    """State of primal CD on one problem (see module docstring)."""

    def __init__(self, problem: Problem, *, sampling="importance", power=1.0, batch_size=1,
                 seed=0, w0=None, intercept0=0.0, step="newton", shrink_q=0.9,
                 shrink_start=5.0, smoothness=None, partition=None):
        self.problem = p = problem
        d, n = p.n_features, p.n_samples
        self.view = p.design.csc
        beta = step_smoothness(p.loss, smoothness)
        self.tau = int(batch_size)
        if self.tau > 1:
            eso = weighted_column_sq_norms(p, tau_nice_weights(p.design.row_nnz, self.tau, d))
        else:
            eso = weighted_column_sq_norms(p)
        self.partition = None
        if check_partition(partition, d):
            if (p.loss != "squared" or self.tau != 1 or p.fit_intercept
                    or sampling not in ("uniform", "cyclic")):
                raise ValueError(
                    "primal-cd with partition=K runs cyclic passes over K blocks of features: "
                    "it needs loss='squared', fit_intercept=False, batch_size=1 and "
                    "sampling='uniform' (the default) or 'cyclic'")
            self.partition = Partition(self.view, p.design.col_nnz, n, int(partition), seed)
            eso = self.partition.minor_weighted_powers(self.view, p.sample_weight)
        self.lips = beta * eso / n
        # (an empty column has lips 0 already: no count of its nonzeros needed)

        self.mode = {"uniform": UNIFORM, "cyclic": CYCLIC, "shuffle": SHUFFLE}.get(
            sampling, IMPORTANCE)
        if sampling in ("importance", "power"):
            active = self.lips > 0
            if not np.any(active):
                probs = np.ones(d)  # X == 0: every step is a no-op anyway
            elif sampling == "importance":
                probs = np.where(active, importance_probabilities(self.lips, p.l2), 0.0)
            else:
                probs = power_probabilities(self.lips, power)
            self.prob, self.alias = alias_table(probs)
        elif self.mode == SHUFFLE:  # the kernel's draw() keeps the permutation in `alias`
            self.prob, self.alias = np.ones(1), np.arange(d, dtype=np.int64)
        else:
            self.prob, self.alias = np.ones(1), np.zeros(1, dtype=np.int64)
        self.rng = make_rng_state(seed)
        self.counter = 0
        self.perm = np.arange(d, dtype=np.int64)
        self.deltas = np.zeros(max(self.tau, 1))
        # τ-nice minibatches on threads (kernels.parallel_cd): the same iterates
        # as the serial τ-nice loop, whatever the count; small minibatches stay serial
        self.n_threads = (self.partition.n_threads if self.partition else
                          minibatch_threads(self.tau, p.design.nnz, d))
        if self.n_threads > 1 and self.partition is None:
            self.bounds = block_bounds(p.design.row_nnz, self.n_threads)
            self.splits = np.zeros((self.tau, self.bounds.shape[0]), dtype=np.int64)
        self.newton = step == "newton" and self.tau <= 1
        self.intercept_lips = beta * float(p.sample_weight.sum()) / n if p.fit_intercept else 0.0

        self.w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
        self.w[self.lips == 0] = 0.0  # optimal for empty columns under any penalty
        if p.positive:  # a warm start projected onto w ≥ 0
            np.maximum(self.w, 0.0, out=self.w)
        self._intercept = np.array([float(intercept0) if p.fit_intercept else 0.0])
        self.alpha = None
        self.z = (np.full(n, self._intercept[0]) if w0 is None else
                  p.design.matvec(self.w) + self._intercept[0])
        self._checks = 0
        self._deriv = np.empty(n)
        # logistic + Newton + serial: the kernel with cached σ(-y z) (kernels.primal_cd)
        self.fast_logistic = (p.loss == "logistic" and self.newton
                              and sampling != "shrinking")
        # squared + serial: the kernel without per-entry branches on the loss
        self.fast_squared = (p.loss == "squared" and self.tau <= 1
                             and sampling != "shrinking")
        if self.fast_squared:
            self.unit_weights = unit_weights(p)
            if self.mode == CYCLIC:
                # plain cyclic CD: an epoch costs about what a check does (Xᵀr, the
                # margins, ~0.1 ms of Python), so checks come every ~3 epochs, pulled
                # earlier when the gap's rate predicts the stop (solvers.base._run)
                self.predict_checks = True
                self.check_spacing = PLAIN_CHECK_SPACING
            # its kernel keeps the residual z - y; z is rebuilt from it at the next check
            # (only after that kernel ran: subclasses and experiments drive z themselves)
            self.resid = self.z - p.y
        # the certificate in one compiled call (kernels.squared_certificate) where its
        # ~15 numpy calls cost a check more than an epoch's share; small inputs keep them
        # (no compilation on a first fit, cdlearn.data.SMALL_INPUT), and plain CD there
        # keeps its plain iterates (no Anderson step, whose kernels would compile too)
        compiled = self.fast_squared and p.design.nnz > SMALL_INPUT
        self._u = np.empty(d) if compiled and (p.l1 > 0.0 or p.l2 > 0.0) else None
        # its check (Xᵀr) costs about an epoch: far from the threshold, checks only halfway
        # to the predicted stop (solvers.base._predicted_interval)
        self.stretch_checks = compiled
        self._anderson = None
        if compiled and self.mode == CYCLIC and self.partition is None and ANDERSON_K:
            k = ANDERSON_K  # history of (w, r, b) and the extrapolated residual
            self._anderson = (np.empty((k + 1, d)), np.empty((k + 1, n)), np.empty(k + 1),
                              np.empty(n), np.arange(d, dtype=np.int64))
            self._filled = 0
            self.stats = dict(anderson_tried=0, anderson_accepted=0)
        # the epochs between two checks in one compiled call (run_epochs, solvers.base._run)
        self.epoch_batch = (MAX_EPOCH_BATCH if compiled and self.partition is None
                            and type(self).run_epoch is PrimalCDState.run_epoch else 0)
        self._z_from_resid = False
        if self.fast_logistic:
            self.cube = weighted_column_abs_cubes(p) / n
            self.perr = np.empty(n)
            logistic_error_probabilities(self.z, p.y, self.perr)
        self.shrinking = sampling == "shrinking"
        if self.shrinking:
            q = float(shrink_q)
            if not 0.0 <= q <= 1.0:
                raise ValueError(f"shrink_q must be in [0, 1], got {shrink_q}")
            k0 = float(shrink_start)
            if not (np.isfinite(k0) and k0 >= 0.0):
                raise ValueError(f"shrink_start must be >= 0 (epochs), got {shrink_start}")
            self.shrink_q = q
            self.shrink_start = int(round(k0 * d))  # k0 in coordinate steps
            self.supp = np.zeros(d, dtype=np.int64)
            self.pos = np.full(d, -1, dtype=np.int64)
            self.n_supp = np.zeros(1, dtype=np.int64)
            rebuild_support(self.w, self.supp, self.pos, self.n_supp)

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p, v = self.problem, self.view
        if self.shrinking:
            entries, updates, self.counter = primal_cd_shrinking_epoch(
                v.data, v.indices, v.indptr, p.y, p.sample_weight, self.z, self.w, self.lips,
                p.l1, p.l2, p.loss_code, p.n_features, self.rng, self.counter,
                self.shrink_q, self.shrink_start, self.supp, self.pos, self.n_supp,
                self._intercept, self.intercept_lips, self.newton,
            )
            return entries, updates
        if self.fast_logistic:
            entries, updates, self.counter = primal_cd_logistic_epoch(
                v.data, v.indices, v.indptr, p.y, p.sample_weight, self.z, self.perr, self.w,
                self.lips, self.cube, p.l1, p.l2, self.mode, self.prob, self.alias,
                p.n_features, self.rng, self.counter, self._intercept, self.intercept_lips,
                p.positive,
            )
            return entries, updates
        if self.partition is not None:
            from ..kernels.partition_cd import primal_cd_squared_partition_epoch

            pt = self.partition
            entries, updates = primal_cd_squared_partition_epoch(
                pt.data, v.indices, v.indptr, p.sample_weight, self.unit_weights, self.resid,
                self.w, self.lips, p.l1, p.l2, p.positive, pt.parts, pt.rngs, pt.scale,
                pt.local, pt.blocks,
            )
            self._z_from_resid = True
            return entries, updates
        if self.fast_squared:
            if self._anderson is not None and self._filled == 0:
                self._remember(0)  # the window starts at the point before this epoch
                self._filled = 1
            entries, updates, self.counter = primal_cd_squared_epoch(
                v.data, v.indices, v.indptr, p.sample_weight, self.unit_weights, self.resid,
                self.w, self.lips, p.l1, p.l2, self.mode, self.prob, self.alias,
                p.n_features, self.rng, self.counter, self._intercept, self.intercept_lips,
                p.positive,
            )
            self._z_from_resid = True
            if self._anderson is not None:
                self._anderson_step()
            return entries, updates
        if self.n_threads > 1:
            return primal_cd_parallel_epoch(
                v.data, v.indices, v.indptr, p.y, p.sample_weight, self.z, self.w, self.lips,
                p.l1, p.l2, p.loss_code, p.n_features, self.rng, self.perm, self.deltas,
                self.bounds, self.splits, self._intercept, self.intercept_lips, p.positive,
            )
        entries, updates, self.counter = primal_cd_epoch(
            v.data, v.indices, v.indptr, p.y, p.sample_weight, self.z, self.w, self.lips,
            p.l1, p.l2, p.loss_code, self.mode, self.prob, self.alias, p.n_features,
            self.rng, self.counter, self.tau, self.perm, self.deltas,
            self._intercept, self.intercept_lips, self.newton, p.positive,
        )
        return entries, updates

    def run_epochs(self, k: int):
        """``k`` epochs of :meth:`run_epoch` (the serial squared-loss kernel and Anderson's
        window) in one compiled call, the same iterates; returns the entries touched in
        all and in the last epoch."""
        p, v = self.problem, self.view
        window = _NO_WINDOW if self._anderson is None else self._anderson
        entries, last, _, self.counter, filled, tried, accepted = primal_cd_squared_epochs(
            v.data, v.indices, v.indptr, p.sample_weight, self.unit_weights, self.resid,
            self.w, self.lips, p.l1, p.l2, self.mode, self.prob, self.alias, p.n_features,
            self.rng, self.counter, self._intercept, self.intercept_lips, p.positive, k,
            *window, self._filled if self._anderson is not None else 0)
        self._z_from_resid = True
        if self._anderson is not None:
            self._filled = filled
            self.stats["anderson_tried"] += tried
            self.stats["anderson_accepted"] += accepted
        return entries, last

    def _remember(self, slot: int):
        w_hist, r_hist, b_hist, _, cols = self._anderson
        _store(w_hist, r_hist, b_hist, slot, self.w, cols, self.resid, self._intercept[0])

    def _anderson_step(self):
        """Anderson extrapolation of the last ANDERSON_K epochs of plain cyclic CD, kept
        only if it lowers P (Bertrand & Massias 2021, "Anderson acceleration of coordinate
        descent", AISTATS; as celer and skglm do, and ws-cd's inner solver here: the same
        kernel). The residual is extrapolated with the same weights (affine in (w, b))."""
        w_hist, r_hist, b_hist, r_new, cols = self._anderson
        p = self.problem
        self._filled, tried, accepted = squared_anderson_window(
            w_hist, r_hist, b_hist, self._filled, self.w, cols, self.resid, self._intercept,
            p.sample_weight, p.l1, p.l2, p.positive, r_new)
        self.stats["anderson_tried"] += tried
        self.stats["anderson_accepted"] += accepted

    def extra_info(self) -> dict:
        return dict(self.stats) if self._anderson is not None else {}

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        p = self.problem
        self._checks += 1
        compiled = self._u is not None
        if (self._checks == 1 and self.fast_squared and p.l1 > 0.0 and not p.fit_intercept
                and not self._z_from_resid and not np.any(self.w)):
            # the check at a cold start (w = 0, z = 0): α = s∘y, and Xᵀα/n is gram-cd's
            # c = Xᵀ(s∘y)/n, cached on the design for this y (one pass of X saved per
            # call of a sequence of solves on one (X, y): benchopt's, a path's)
            if compiled:
                self._u[:] = linear_terms(p)[0]
                return self._squared_certificate(True)
            alpha = p.sample_weight * p.y
            return certificate_from_dual_point(p.loss_code, self.z, alpha, p.y,
                                               p.sample_weight, self.w,
                                               linear_terms(p)[0], p.l1, p.l2, p.positive)
        if self._z_from_resid:
            np.add(self.resid, p.y, out=self.z)
            self._z_from_resid = False
        refresh_margins(self, self._checks % RESYNC_EVERY == 0)
        if self.fast_squared:  # the margins may have moved (intercept, resync)
            np.subtract(self.z, p.y, out=self.resid)
        if self.fast_logistic:  # the margins may have moved (intercept, resync)
            logistic_error_probabilities(self.z, p.y, self.perr)
        if compiled:
            return self._squared_certificate(False)
        return margin_certificate(self)

    def _squared_certificate(self, have_u: bool):
        p, v = self.problem, self.view
        return squared_certificate(v.data, v.indices, v.indptr, self.resid, p.sample_weight,
                                   self.unit_weights, self.w, self._u, have_u, p.l1, p.l2,
                                   p.positive)

    def kkt_violation(self) -> float:
        """max_j dist(-∇_j f(w), λ∂g_j(w_j)): the optimality measure used without a penalty."""
        return margin_kkt_violation(self)

    def _restore_margins(self):
        super()._restore_margins()
        p = self.problem
        if self.fast_squared:
            np.subtract(self.z, p.y, out=self.resid)
            self._filled = 0  # Anderson's window restarts at the restored point
        if getattr(self, "fast_logistic", False):
            logistic_error_probabilities(self.z, p.y, self.perr)
        if self.shrinking:
            rebuild_support(self.w, self.supp, self.pos, self.n_supp)

    def active(self) -> int:
        return self.problem.n_features

