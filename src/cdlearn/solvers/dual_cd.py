"""Dual randomized coordinate ascent: Quartz (face-off Algorithm 2), SDCA when serial.

Every loss, including the hinge, with a strongly convex penalty (``l2``, or
``elastic_net`` with ``l1_ratio < 1`` through prox-SDCA's smoothed conjugate).
Samplings: ``uniform`` (with replacement), ``shuffle`` (a random permutation
every epoch), ``importance`` (face-off eq. (14):
``q_i ∝ β s_i v_i + λ2 n``; for the non-smooth hinge β = 1 is used, a
heuristic), ``cyclic``, and τ-nice minibatches with the ESO of
:func:`cdlearn.sampling.eso_tau_nice`, on threads when the solve has more than one
(:mod:`cdlearn.kernels.parallel_cd`; same iterates as serial). ``partition=K``
(l2, shuffled order): K blocks of samples, each a shuffled pass per epoch on its
own copy of ``w``, merged once per epoch (:mod:`cdlearn.kernels.partition_cd`;
CoCoA+ on threads; more epochs than serial, never chosen by default). The logistic step is the coordinate
maximiser (Newton) by default, solved to an inner tolerance that tightens with
the duality gap as liblinear's does (``INNER_EPS_*`` below), or face-off §7's
fixed step with ``dual_step="fixed"``. With exact steps (smooth losses, l2, no
intercept, serial sampling), groups of identical rows with different labels
also get one exact block step each after every epoch
(:func:`cdlearn.kernels.dual_cd.dual_cd_group_pass`): single steps crawl along
such groups (news20 logistic: ~1500 epochs to 1e-6 instead of ~27; news20
squared hinge stalled near a 1e-4 gap; a9a: 25 → 19 with shuffling). With
``shuffle`` or ``cyclic`` order the passes run over an active set, and for
the losses with dual bounds (hinge, squared and smooth hinge) samples at a
bound are shrunk as in liblinear (``SHRINK_EPS_*`` below; ``shrinking=False``
turns it off). ``cdlearn.solve`` runs ``shuffle`` by default
(:func:`cdlearn.api.default_sampling`).

The gap certificate pairs α with ``w(α)``. With an unpenalised intercept the
dual gains the constraint ``Σα = 0``; it is kept exactly by updating random
pairs of samples (:func:`cdlearn.kernels.dual_cd.dual_cd_pair_epoch`; the
``sampling`` and ``batch_size`` arguments then do not apply and must be left
at their defaults). ``b`` is recovered at each check as the exact minimiser of
``P(w, ·)``, which with ``Σα = 0`` makes the gap a certificate for the joint
problem. (Alternating exact ``b`` updates with single-coordinate dual steps
stalls for the non-smooth hinge loss, which is why the pairs are needed.)
"""

from __future__ import annotations

import numpy as np

from ..kernels.dual_cd import (
    EXACT_STEP,
    FIXED_STEP,
    dual_cd_active_epoch,
    dual_cd_epoch,
    dual_cd_group_pass,
    dual_cd_pair_epoch,
    duplicate_row_groups,
    has_dual_bounds,
    repeated_keys,
    row_hashes,
)
from ..losses import step_smoothness
from ..objectives import dual_point_from_margins, primal_and_gap
from ..penalties import soft_threshold_array
from ..sampling import (
    CYCLIC,
    IMPORTANCE,
    SHUFFLE,
    UNIFORM,
    alias_table,
    importance_probabilities,
    make_rng_state,
)
from .base import Problem, initial_primal
from .intercept import optimal_intercept
from .parallel import (
    Partition,
    check_partition,
    copy_threads,
    minibatch_threads,
    tau_nice_eso,
)

SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge", "hinge")
SUPPORTED_PENALTIES = ("l2", "elastic_net")
RESYNC_EVERY = 20  # recompute v = Xᵀα/(λ2 n) from scratch every this many checks

# Inner tolerance of the logistic step (liblinear's ``innereps``, Yu, Huang & Lin
# 2011, Alg. 3): a step stops its Newton iterations once the coordinate's dual
# residual |g_i| (margin units) is ≤ eps, and is skipped (one ``log``, no row
# update) when it already is. eps starts at INNER_EPS_START and only decreases:
# ÷10 after an epoch in which at most a tenth of the steps moved (liblinear's
# rule), and at every gap check to at most INNER_EPS_GAP·√(gap/mean(s)), never
# below INNER_EPS_MIN.
# Why the result is exact: the stopping test is the exact duality gap, and the
# method cannot stall above it: at a point where every |g_i| ≤ eps, the gap is
# (1/n) Σ s_i KL(t_i ‖ σ(-m_i)) ≤ mean(s)·eps²/8 (KL is the Bregman divergence of
# log(1+e^θ), whose curvature is ≤ 1/4), i.e. ≤ 2e-19·P(0) for eps = 1e-9, below
# what the gap can certify (tests/test_dual_cd_inner.py checks the bound).
# Why the gap rule: liblinear's rule alone left eps at 1e-2 for 25 epochs on a9a
# and news20 (more than n/10 steps kept moving), where the skipped residuals
# (≤ eps²/8 of gap each) stalled the gap near 1e-5; with eps ≤ √gap they stay
# below gap/8 and the epochs match exact steps (a9a, reuters, w8a: same epoch
# counts to 1e-6 and 1e-10, 20-40% fewer row updates).
INNER_EPS_START = 1e-2
INNER_EPS_MIN = 1e-9
INNER_EPS_GAP = 1.0

# Shrinking (``shuffle``/``cyclic`` orders, losses with dual bounds; see
# :func:`cdlearn.kernels.dual_cd.dual_cd_active_epoch`): once the active
# samples' projected-gradient range is ≤ the tolerance, every sample is
# restored for the next pass; when a pass over the full set is within it, the
# tolerance is divided by 10 (liblinear would stop there; here only the
# duality gap stops). Unlike liblinear, the pass after a restore may shrink
# again with the last range: a full pass per tolerance level is enough, as the
# exact gap, not the range, certifies the result (reuters, squared hinge: 3
# full passes per level → 1). The start is liblinear's default ``-e 0.1``.
SHRINK_EPS_START = 0.1
SHRINK_EPS_MIN = 1e-12


class DualCDState:
    """State of dual CD on one problem (see module docstring)."""

    #: base.run checks the gap earlier when its linear rate predicts the stop
    #: (base._predicted_interval; dual CD's gap falls linearly), and spaces the
    #: first check from the one at α = 0 (base._run)
    predict_checks = True

    def __init__(self, problem: Problem, *, sampling="importance", batch_size=1, seed=0,
                 alpha0=None, intercept0=0.0, dual_step="exact", smoothness=None,
                 shrinking=True, sigma=1.0, partition=None):
        self.problem = p = problem
        n = p.n_samples
        self.view = p.design.csr
        if p.fit_intercept and (sampling != "uniform" or int(batch_size) != 1):
            raise ValueError(
                "dual-cd with fit_intercept=True updates uniform random pairs of samples; "
                f"use sampling='uniform' and batch_size=1 (got sampling={sampling!r}, "
                f"batch_size={batch_size})"
            )
        self.tau = int(batch_size)
        self.partition = None
        if check_partition(partition, n):
            if (self.tau != 1 or sampling != "shuffle" or dual_step != "exact"
                    or p.l1 != 0.0 or sigma != 1.0):
                raise ValueError(
                    "dual-cd with partition=K runs shuffled passes with exact steps over K "
                    "blocks of samples: it needs penalty='l2', sampling='shuffle', "
                    "batch_size=1 and dual_step='exact'")
            self.partition = Partition(self.view, p.design.row_nnz, p.n_features,
                                       int(partition), seed)
            self.order = np.concatenate([np.arange(hi - lo) for lo, hi in zip(
                self.partition.parts[:-1], self.partition.parts[1:], strict=True)])
            self.eso = self.partition.minor_weighted_powers(self.view)
        elif self.tau > 1:
            self.eso = tau_nice_eso(self.view, p.design.col_nnz, self.tau)
        else:
            self.eso = p.design.row_sq_norms.copy()
        # τ-nice minibatches on threads (kernels.parallel_cd): the same iterates
        # as the serial τ-nice loop, whatever the count; small minibatches stay serial
        self.n_threads = (self.partition.n_threads if self.partition else
                          minibatch_threads(self.tau, p.design.nnz, n))
        if self.n_threads > 1 and self.partition is None:
            # imported here: kernels.parallel_cd loads primal CD's kernels too, which a
            # serial dual solve must not (one method's modules per solve)
            from ..kernels.parallel_cd import block_bounds, dual_cd_parallel_epoch

            self._parallel_epoch = dual_cd_parallel_epoch
            self.bounds = block_bounds(p.design.col_nnz, self.n_threads)
            self.splits = np.zeros((self.tau, self.bounds.shape[0]), dtype=np.int64)
        # the certificate's Xw, its one exact parallel part, on threads: row dots summed
        # in scipy's order (the same bits on any count); the CD passes stay serial
        self._row_dots = None
        if copy_threads(p.design) > 1:
            from ..kernels.parallel_cd import parallel_slice_dots

            self._row_dots = parallel_slice_dots
        beta = step_smoothness(p.loss, smoothness)
        # sigma ≠ 1: CoCoA+'s local subproblem (cdlearn.distributed), whose dual
        # steps see the coupling σ′/(λ2 n) of the whole problem
        self.inv_l2n = sigma / (p.l2 * n)
        self.kappa = p.l1 / p.l2

        self.mode = {"uniform": UNIFORM, "cyclic": CYCLIC, "shuffle": SHUFFLE}.get(
            sampling, IMPORTANCE)
        lips = beta * p.sample_weight * self.eso / n  # L_i of the dual coordinate, /λ-free units
        if self.mode == IMPORTANCE:
            q = importance_probabilities(lips, p.l2)
            q[p.sample_weight == 0] = 0.0
            self.prob, self.alias = alias_table(q)
            q = q / q.sum()
        elif self.mode == SHUFFLE:  # the kernel's draw() keeps the permutation in `alias`
            self.prob, self.alias = np.ones(1), np.arange(n, dtype=np.int64)
            q = np.full(n, 1.0 / n)
        else:
            self.prob, self.alias = np.ones(1), np.zeros(1, dtype=np.int64)
            q = np.full(n, 1.0 / n)
        self.step_mode = FIXED_STEP if dual_step == "fixed" else EXACT_STEP
        if self.step_mode == FIXED_STEP:
            # Quartz: θ = min_j q_j λn / (β s_j v_j + λn), step on α_i is θ / q_i.
            theta = float(np.min(q * p.l2 / (lips + p.l2)))
            with np.errstate(divide="ignore"):
                self.eta = np.where(q > 0, theta / q, 0.0)
        else:
            self.eta = np.zeros(0)
        self.rng = make_rng_state(seed)
        self.counter = 0
        adaptive = p.loss == "logistic" and self.step_mode == EXACT_STEP
        self.inner_eps = INNER_EPS_START if adaptive else 0.0
        self._mean_weight = max(float(np.mean(p.sample_weight)), 1e-300)
        # identical rows get an exact block step after every epoch (see
        # dual_cd_group_pass): smooth losses, l2, exact steps, no intercept; also
        # after τ-nice epochs (news20 logistic, τ = 64: without it the minibatches
        # crawl along its 10 groups as serial steps did)
        self.groups = None
        if (p.loss != "hinge" and self.step_mode == EXACT_STEP and self.kappa == 0.0
                and not p.fit_intercept):
            self.groups = _duplicate_groups(p.design, p.sample_weight, p.y)
        self.perm = np.arange(n, dtype=np.int64)
        self.deltas = np.zeros(max(self.tau, 1))
        # serial shuffle/cyclic passes run over an active set (shrinking)
        self.active_set = (self.mode in (SHUFFLE, CYCLIC) and self.tau == 1
                           and self.partition is None
                           and not p.fit_intercept and self.step_mode == EXACT_STEP)
        self.shrink = self.active_set and bool(shrinking) and bool(has_dual_bounds(p.loss_code))
        self.active_rows = np.flatnonzero(p.sample_weight > 0).astype(np.int64)
        self.n_full = self.n_active = self.active_rows.shape[0]
        self.pg_max_old, self.pg_min_old = np.inf, -np.inf
        self.shrink_eps = SHRINK_EPS_START

        self.alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=np.float64)
        self.alpha[p.sample_weight == 0] = 0.0
        if p.fit_intercept and abs(self.alpha.sum()) > 1e-12 * (1.0 + np.abs(self.alpha).sum()):
            raise ValueError("alpha0 must sum to 0 when fit_intercept=True (the intercept's "
                             "dual constraint)")
        self._intercept = float(intercept0) if p.fit_intercept else 0.0
        # at α = 0 (no warm start, no intercept) v = Xᵀα = 0 needs no product, and
        # the first certificate is (P(0), D(0) = 0, gap = P(0)) with no pass
        self._at_zero = alpha0 is None and not p.fit_intercept
        if self._at_zero:
            self.v = np.zeros(p.n_features)
            self.w = self.v if self.kappa == 0.0 else np.zeros(p.n_features)
        else:
            self._resync()
        self._p0 = None
        self._checks = 0

    @property
    def intercept(self) -> float:
        return self._intercept

    def _resync(self):
        p = self.problem
        self.v = p.design.rmatvec(self.alpha) * self.inv_l2n
        # l2 (κ = 0): w = v is the same array, so a row update writes one vector,
        # not two equal ones (reuters epoch ~10% shorter; the same iterates)
        self.w = self.v if self.kappa == 0.0 else soft_threshold_array(self.v, self.kappa)

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p, view = self.problem, self.view
        self._at_zero = False
        if p.fit_intercept:
            return dual_cd_pair_epoch(
                view.data, view.indices, view.indptr, p.y, p.sample_weight, self.alpha,
                self.v, self.w, p.design.row_sq_norms, self.inv_l2n, self.kappa, p.loss_code,
                max(p.n_samples // 2, 1), self.rng,
            )
        if self.partition is not None:
            pt = self.partition
            entries, updates = _partition_kernel()(
                pt.data, view.indices, view.indptr, p.y, p.sample_weight, self.alpha, self.v,
                self.eso, self.inv_l2n, p.loss_code, pt.parts, self.order, pt.rngs,
                self.inner_eps, pt.scale, pt.local, pt.blocks,
            )
        elif self.active_set:
            entries, updates = self._active_epoch()
        elif self.n_threads > 1:
            entries, updates = self._parallel_epoch(
                view.data, view.indices, view.indptr, p.y, p.sample_weight, self.alpha, self.v,
                self.w, self.eso, self.inv_l2n, self.kappa, p.loss_code, self.step_mode,
                self.eta, self._intercept, p.n_samples, self.rng, self.perm, self.deltas,
                self.bounds, self.splits, self.inner_eps,
            )
        else:
            entries, updates, self.counter = dual_cd_epoch(
                view.data, view.indices, view.indptr, p.y, p.sample_weight, self.alpha, self.v,
                self.w, self.eso, self.inv_l2n, self.kappa, p.loss_code, self.step_mode,
                self.eta, self._intercept, self.mode, self.prob, self.alias, p.n_samples,
                self.rng, self.counter, self.tau, self.perm, self.deltas, self.inner_eps,
            )
        if self.inner_eps > 0.0 and 10 * updates <= p.n_samples:
            self.inner_eps = max(INNER_EPS_MIN, 0.1 * self.inner_eps)
        if self.groups is not None:
            # Not added to `entries` (≤ one row per group, 11% of nnz on a9a): the
            # gap-check spacing (base._adaptive_interval) compares epoch entries with
            # nnz + n + d, and the extra would tip it from every 2nd to every epoch.
            dual_cd_group_pass(
                view.data, view.indices, view.indptr, p.y, p.sample_weight, self.alpha,
                self.v, self.w, p.design.row_sq_norms, self.inv_l2n, self._intercept,
                p.loss_code, *self.groups,
            )
        return entries, updates

    def _active_epoch(self):
        """One pass over the active samples; shrinking bookkeeping (liblinear's)."""
        p, view = self.problem, self.view
        entries, updates, n_active, pg_max, pg_min = dual_cd_active_epoch(
            view.data, view.indices, view.indptr, p.y, p.sample_weight, self.alpha, self.v,
            self.w, self.eso, self.inv_l2n, self.kappa, p.loss_code, self._intercept,
            self.active_rows, self.n_active, self.rng, self.mode == SHUFFLE, self.inner_eps,
            self.shrink, self.pg_max_old, self.pg_min_old,
        )
        if not self.shrink:
            return entries, updates
        # a sample shrunk during a pass has a zero projected gradient, so a pass
        # that started from the full set measures the full set's range
        was_full = self.n_active == self.n_full
        self.n_active = n_active
        if pg_max - pg_min <= self.shrink_eps or n_active == 0:
            if was_full:
                self.shrink_eps = max(SHRINK_EPS_MIN, 0.1 * self.shrink_eps)
            else:
                self.n_active = self.n_full
        self.pg_max_old = pg_max if pg_max > 0.0 else np.inf
        self.pg_min_old = pg_min if pg_min < 0.0 else -np.inf
        return entries, updates

    def reference(self) -> float:
        if self._p0 is None:
            self._p0 = initial_primal(self.problem)
        return self._p0

    def certificate(self):
        p = self.problem
        self._checks += 1
        if self._at_zero:
            # w = 0, α = 0: D(0) = -(1/n) Σ s_i φ*(0) = 0 for every loss, so gap = P(0)
            # (and √(gap/mean(s)) = √log 2 leaves the logistic inner_eps as it is)
            primal = self.reference()
            return primal, 0.0, primal
        if self._checks % RESYNC_EVERY == 0:
            self._resync()
        # the first check is usually at α = 0, w = 0: no product needed
        if not self.w.any():
            z = np.zeros(p.n_samples)
        elif self._row_dots is not None:
            r = p.design.csr
            z = self._row_dots(r.data, r.indices, r.indptr, self.w, np.empty(p.n_samples))
        else:
            z = p.design.matvec(self.w)
        if p.fit_intercept:
            self._intercept = optimal_intercept(p.loss_code, z, p.y, p.sample_weight,
                                                self._intercept)
            z += self._intercept
        u = self.v * p.l2  # Xᵀα/n
        primal, gap = primal_and_gap(p.loss_code, z, self.alpha, p.y, p.sample_weight,
                                     self.w, u, p.l1, p.l2)
        # D(α) = P(w) - gap: the gap is the exact sum of the Fenchel–Young terms
        # (with Σα = 0 the intercept term of the dual vanishes), so this is D up
        # to rounding of P, without a third pass of n logarithms over α (it was
        # ~15% of a check on a9a).
        dual = primal - gap
        self.tighten_inner_eps(gap)
        return primal, dual, gap

    def tighten_inner_eps(self, gap, mean_weight=None):
        """The logistic step's inner tolerance after a check with duality gap ``gap``."""
        if self.inner_eps > 0.0 and np.isfinite(gap):
            mean = self._mean_weight if mean_weight is None else mean_weight
            target = INNER_EPS_GAP * np.sqrt(max(gap, 0.0) / mean)
            self.inner_eps = min(self.inner_eps, max(INNER_EPS_MIN, float(target)))

    def snapshot(self):
        v = self.v.copy()
        return (v if self.w is self.v else self.w.copy()), self.alpha.copy(), v, self._intercept

    def restore(self, snap):
        w, alpha, v, b = snap
        self.w[:] = w
        self.alpha[:] = alpha
        self.v[:] = v
        self._intercept = b

    def iterate(self):
        return self.w.copy(), self.alpha.copy(), self._intercept

    def restore_primal(self, polished):
        """Start from a primal point ``(w, b)`` (:class:`~cdlearn.solvers.stopping.Polish`'s
        solve): ``α = −s∘φ'(Xw + b)``, the optimal dual point when w is optimal, so the
        iterate ``w(α)`` is w* again; every row active again."""
        w, b = polished
        p = self.problem
        self._intercept = float(b) if p.fit_intercept else 0.0
        z = p.design.matvec(w) + self._intercept
        self.alpha[:] = dual_point_from_margins(p.loss_code, z, p.y, p.sample_weight)
        self._at_zero = False
        self.n_active = self.n_full
        self.pg_max_old, self.pg_min_old = np.inf, -np.inf
        self._resync()

    def nnz_w(self) -> int:
        return int(np.count_nonzero(self.w))

    def active(self) -> int:
        return int(self.n_active) if self.active_set else self.problem.n_samples


def _partition_kernel():
    # imported on use: a serial dual solve loads no parallel kernels
    from ..kernels.partition_cd import dual_cd_partition_epoch

    return dual_cd_partition_epoch


def _duplicate_groups(design, sample_weight, y):
    """Groups of identical rows (weight > 0, different labels) of the row view, or None.

    The classes of identical rows depend on X alone and are found once per
    design (:func:`_identical_row_classes`, cached by
    :meth:`cdlearn.data.Design.derived`: it cost 1.3 ms of a 25 ms reuters
    solve, 5 ms on a9a); a solve keeps the rows of positive weight and the
    classes left with two or more rows and different labels.
    """
    classes = design.derived("dual_cd.identical_row_classes",
                             lambda: _identical_row_classes(design.csr))
    if classes is None:
        return None
    ptr, rows = classes
    sizes = np.diff(ptr)
    cls = np.repeat(np.arange(sizes.shape[0]), sizes)
    keep = sample_weight[rows] > 0
    if not keep.all():
        rows, cls = rows[keep], cls[keep]
        sizes = np.bincount(cls, minlength=sizes.shape[0])
        ptr = np.concatenate(([0], np.cumsum(sizes)))
    yr = y[rows]
    first = np.minimum(ptr[:-1], rows.shape[0] - 1)
    differ = np.bincount(cls, weights=yr != yr[first[cls]], minlength=sizes.shape[0])
    good = (sizes >= 2) & (differ > 0)
    if not good.any():
        return None
    if good.all():
        return ptr.astype(np.int64), rows.astype(np.int64)
    sizes = sizes[good]
    return (np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
            np.ascontiguousarray(rows[good[cls]], dtype=np.int64))


def _identical_row_classes(view):
    """Classes (two rows or more) of identical rows as ``(ptr, rows)``, or None.

    Candidates share a hash of the row (:func:`row_hashes`, one pass over X,
    deterministic); :func:`duplicate_row_groups` then keeps the rows exactly
    equal to their run's first (all weights 1, distinct labels, so that every
    class of two or more rows is kept). Classes in increasing hash order, rows
    in increasing index within a class.
    """
    cand = _duplicate_candidates(view)
    if cand is None:
        return None
    order, starts = cand
    n = view.indptr.shape[0] - 1
    ptr, rows = duplicate_row_groups(view.data, view.indices, view.indptr, order, starts,
                                     np.ones(n), np.arange(n, dtype=np.float64))
    return (ptr, rows) if ptr.shape[0] > 1 else None


def _duplicate_candidates(view):
    """Rows whose hash another row shares, sorted by hash, or None if every hash is unique.

    Returns ``(order, starts)``: the candidate rows, stably sorted by hash
    (runs in increasing hash order, rows in increasing index within a run),
    and where each run starts (plus ``len(order)``). Only the rows with a
    repeated hash are sorted (:func:`repeated_keys`).
    """
    n = view.indptr.shape[0] - 1
    if n < 2:
        return None
    bits = np.ascontiguousarray(view.data, dtype=np.float64).view(np.uint64)
    keys = row_hashes(bits, view.indices, view.indptr)
    rows = np.flatnonzero(repeated_keys(keys))
    if rows.shape[0] == 0:
        return None
    order = rows[np.argsort(keys[rows], kind="stable")].astype(np.int64)
    ks = keys[order]
    new_key = np.empty(order.shape[0], dtype=bool)
    new_key[0] = True
    np.not_equal(ks[1:], ks[:-1], out=new_key[1:])
    starts = np.append(np.flatnonzero(new_key), order.shape[0]).astype(np.int64)
    return order, starts
