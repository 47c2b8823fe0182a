"""Randomized block coordinate descent for the group lasso (RCDC / UCDC).

``P(w) = 1/n Σ_i s_i φ(x_iᵀw + b, y_i) + λ Σ_g w_g ‖w_g‖₂`` for smooth losses,
by RCDC (Richtárik & Takáč, Algorithm 1; Algorithm 2 = UCDC with uniform
block probabilities). Blocks are the groups (``penalty="group_l2"``,
``groups=...``; weights ``w_g`` default to ``√|g|``, see
:mod:`cdlearn.penalties_group`).

Block norms and constants. RCDC leaves the block norm ``‖t‖_(g) = ⟨B_g t, t⟩^½``
free (3). By default ``B_g = I`` and the block Lipschitz constant of (4) is

    L_g = β λ_max(X_gᵀ S X_g) / n        (S = diag of the sample weights),

so the bound (6) holds and the step (9) is block soft-thresholding
(:mod:`cdlearn.kernels.block_cd`). Other block norms (option ``block_norm``):
``"diagonal"`` (``B_g = diag(H_g)``, Jacobi scaling), ``"gram"`` (``B_g = H_g`` + a
1e-10·trace/|g| ridge, so that the step is an exact block minimisation for the squared
loss) or a list of one SPD ``|g|×|g|`` matrix per group, where
``H_g = β X_gᵀ S X_g / n``; then ``L_g = λ_max(B_g^{-½} H_g B_g^{-½})`` satisfies (4)/(6)
in that norm, and the step (9) is solved in the eigenbasis of ``L_g B_g`` by a
monotone Newton iteration (:func:`cdlearn.kernels.block_cd.block_metric_step`); these
need groups of at most ``EXACT_BLOCK`` features. ``penalty="none"`` with ``groups`` runs
RCDS (Algorithm 3: ``x_g ← x_g − B_g⁻¹∇_g f / L_g``) and reports the optimality
violation ``max_g ‖∇_g f‖`` as its gap. ``L_g`` is computed exactly (eigenvalue of
the |g|×|g| Gram matrix) for groups of at most ``EXACT_BLOCK`` features and by
power iteration (relative change < 1e-10, at most 500 iterations, then ×1.01
and capped by the always-valid upper bound ``trace``) for larger ones. A
singleton group is the coordinate case ``L_j = β Σ s_i X_ij² / n``.

Probabilities: ``sampling="uniform"`` (UCDC, default), ``"importance"``
(``p_g ∝ L_g``), ``"power"`` (``p_g ∝ L_g^a``, eq. (55) with ``a = power``),
``"cyclic"``, or any vector via the option ``block_probs`` (RCDC's arbitrary
``p_g > 0``). An epoch is ``n_groups`` block steps.

Certificate: ``α = −s φ'(z)`` rescaled by ``min(1, λ/Ω°(Xᵀα/n))`` with the
dual norm ``Ω°(u) = max_g ‖u_g‖/w_g`` (celer's rescaling for l1, in block
form), and the gap is the sum of the loss Fenchel–Young terms and
``Σ_g (λ w_g ‖w_g‖ − w_gᵀu_g)``. With an intercept it is set to its exact
minimiser before every check, as in primal CD.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.block_cd import block_cd_epoch, block_cd_metric_epoch
from ..losses import (
    LOSS_SMOOTHNESS,
    loss_derivatives,
    weighted_conjugate_sum,
    weighted_fenchel_young_sum,
    weighted_loss_sum,
)
from ..objectives import dual_point_from_margins
from ..penalties_group import (
    Groups,
    group_dual_norm,
    group_fenchel_young,
    group_kkt_violations,
    group_penalty_value,
)
from ..sampling import CYCLIC, IMPORTANCE, UNIFORM, alias_table, make_rng_state
from .base import PrimalIterate, Problem, initial_primal
from .intercept import refresh_margins
from .primal_cd import weighted_column_sq_norms

SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
SUPPORTED_PENALTIES = ("group_l2", "none")
EXACT_BLOCK = 256  # groups up to this size get λ_max from an eigensolver
RESYNC_EVERY = 20  # recompute z = Xw + b from scratch every this many checks


def block_lipschitz(problem: Problem, groups: Groups, *, exact_block: int = EXACT_BLOCK,
                    seed: int = 0) -> np.ndarray:
    """``L_g = β λ_max(X_gᵀ S X_g) / n`` for every group (see the module docstring)."""
    design, sw = problem.design, problem.sample_weight
    beta = LOSS_SMOOTHNESS[problem.loss]
    n = problem.n_samples
    M = design.scipy_layout("csc")  # the column view the solver walks: no copy
    unweighted = bool(np.all(sw == 1.0))
    col_sq = weighted_column_sq_norms(problem)
    rng = np.random.default_rng(seed)
    sizes = groups.sizes
    out = np.empty(groups.n_groups)
    for g in range(groups.n_groups):
        cols = groups.members(g)
        if sizes[g] == 1:
            out[g] = col_sq[cols[0]]
            continue
        trace = float(col_sq[cols].sum())
        if trace == 0.0:
            out[g] = 0.0
            continue
        Xg = M[:, cols]
        if sizes[g] <= exact_block:
            if design.is_sparse:
                W = Xg if unweighted else sp.diags(sw) @ Xg
                gram = (Xg.T @ W).toarray()
            else:
                Xg = np.asarray(Xg, dtype=np.float64)
                gram = Xg.T @ (Xg if unweighted else Xg * sw[:, None])
            out[g] = min(float(np.linalg.eigvalsh(gram)[-1]), trace)
        else:
            v = rng.standard_normal(sizes[g])
            v /= np.linalg.norm(v)
            est = 0.0
            for _ in range(500):
                u = np.asarray(Xg @ v, dtype=np.float64).ravel() * sw
                v = np.asarray(Xg.T @ u, dtype=np.float64).ravel()
                new = float(np.linalg.norm(v))
                if new == 0.0:
                    break
                v /= new
                if abs(new - est) <= 1e-10 * new:
                    est = new
                    break
                est = new
            out[g] = min(1.01 * est, trace)
    return beta * out / n


def _block_hessians(problem: Problem, groups: Groups):
    """``H_g = β X_gᵀ S X_g / n`` (dense |g|×|g|) for every group."""
    design, sw = problem.design, problem.sample_weight
    beta = LOSS_SMOOTHNESS[problem.loss]
    M = design.scipy_layout("csc")
    out = []
    for g in range(groups.n_groups):
        Xg = M[:, groups.members(g)]
        if design.is_sparse:
            gram = (Xg.T @ sp.diags(sw) @ Xg).toarray()
        else:
            gram = Xg.T @ (Xg * sw[:, None])
        out.append(beta * np.asarray(gram, dtype=np.float64) / problem.n_samples)
    return out


def block_metrics(problem: Problem, groups: Groups, block_norm):
    """Block norms ``B_g`` -> ``(lips, eig, qptr, qflat)`` for the metric kernel.

    ``L_g = λ_max(B_g^{-½} H_g B_g^{-½})``; ``eig[ptr[g]:ptr[g+1]]`` and the row-major
    eigenvectors in ``qflat[qptr[g]:qptr[g+1]]`` diagonalise ``L_g B_g``. All-zero blocks
    get ``L_g = 0`` and ``eig = 0`` (skipped by the kernel).
    """
    sizes = groups.sizes
    if int(sizes.max()) > EXACT_BLOCK:
        raise ValueError(f"block_norm={block_norm!r} needs groups of at most {EXACT_BLOCK} "
                         f"features (largest: {int(sizes.max())})")
    if isinstance(block_norm, str):
        if block_norm not in ("diagonal", "gram"):
            raise ValueError(f"block_norm must be 'identity', 'diagonal', 'gram' or a list of "
                             f"SPD matrices (one per group), got {block_norm!r}")
        given = None
    else:
        given = list(block_norm)
        if len(given) != groups.n_groups:
            raise ValueError(f"block_norm must hold one matrix per group ({groups.n_groups}), "
                             f"got {len(given)}")
    H = _block_hessians(problem, groups)
    lips = np.zeros(groups.n_groups)
    eig = np.zeros(groups.index.shape[0])
    qptr = np.zeros(groups.n_groups + 1, dtype=np.int64)
    np.cumsum(sizes.astype(np.int64) ** 2, out=qptr[1:])
    qflat = np.zeros(int(qptr[-1]))
    for g in range(groups.n_groups):
        Hg, m = H[g], int(sizes[g])
        if given is not None:
            B = np.asarray(given[g], dtype=np.float64)
            if B.shape != (m, m) or not np.all(np.isfinite(B)) or not np.allclose(B, B.T):
                raise ValueError(f"block_norm[{g}] must be a finite symmetric {m}x{m} matrix")
        elif block_norm == "diagonal":
            dg = np.diag(Hg).copy()
            dg[dg <= 0] = dg[dg > 0].mean() if np.any(dg > 0) else 1.0
            B = np.diag(dg)
        else:
            tr = float(np.trace(Hg))
            B = Hg + (1e-10 * tr / m if tr > 0 else 1.0) * np.eye(m)
        beig, bvec = np.linalg.eigh(B)
        if beig[0] <= 0:
            raise ValueError(f"block_norm[{g}] is not positive definite")
        if not np.any(Hg):
            qflat[qptr[g]:qptr[g + 1]] = np.eye(m).ravel()
            continue
        inv_sqrt = bvec / np.sqrt(beig)  # B^{-1/2} = V diag(b^{-1/2}) Vᵀ, up to rotation
        lips[g] = float(np.linalg.eigvalsh(inv_sqrt.T @ Hg @ inv_sqrt)[-1])
        eig[groups.ptr[g]:groups.ptr[g + 1]] = lips[g] * beig
        qflat[qptr[g]:qptr[g + 1]] = bvec.ravel()
    return lips, eig, qptr, qflat


class BlockCDState(PrimalIterate):
    """State of RCDC block CD on one group-lasso problem (see module docstring)."""

    def __init__(self, problem: Problem, *, sampling="uniform", power=1.0, batch_size=1, seed=0,
                 w0=None, intercept0=0.0, step=None, block_probs=None, block_norm=None):
        self.problem = p = problem
        if p.groups is None:
            raise ValueError("solver='block-cd' needs penalty='group_l2' with groups=...")
        if batch_size != 1:
            raise ValueError("solver='block-cd' is serial: batch_size must be 1")
        self.groups = G = p.groups
        self.view = p.design.csc
        beta = LOSS_SMOOTHNESS[p.loss]
        self.metric = block_norm is not None and not (
            isinstance(block_norm, str) and block_norm == "identity")
        if self.metric:
            self.lips, self.eig, self.qptr, self.qflat = block_metrics(p, G, block_norm)
        else:
            self.lips = block_lipschitz(p, G, seed=0)
        self.thresholds = p.lam * G.weights
        n_groups = G.n_groups

        if block_probs is not None:
            probs = np.asarray(block_probs, dtype=np.float64).ravel()
            if probs.shape != (n_groups,):
                raise ValueError(
                    f"block_probs must have one entry per group ({n_groups}), got {probs.shape}"
                )
            if not np.all(np.isfinite(probs)) or np.any(probs < 0) or probs.sum() <= 0:
                raise ValueError("block_probs must be finite, >= 0 and not all zero")
            self.mode = IMPORTANCE
            self.prob, self.alias = alias_table(probs)
        elif sampling in ("importance", "power"):
            a = 1.0 if sampling == "importance" else float(power)
            active = self.lips > 0
            if not np.any(active):
                probs = np.ones(n_groups)
            else:
                probs = np.where(active, np.power(np.where(active, self.lips, 1.0), a), 0.0)
            self.mode = IMPORTANCE
            self.prob, self.alias = alias_table(probs)
        elif sampling in ("uniform", "cyclic"):
            self.mode = UNIFORM if sampling == "uniform" else CYCLIC
            self.prob, self.alias = np.ones(1), np.zeros(1, dtype=np.int64)
        else:
            raise ValueError(
                f"sampling={sampling!r} is not available for solver='block-cd' "
                "(uniform, importance, power, cyclic, or block_probs=...)"
            )
        self.rng = make_rng_state(seed)
        self.counter = 0
        max_size = int(G.sizes.max())
        self.vbuf = np.zeros(max_size)
        self.obuf = np.zeros(max_size)
        self.gbuf = np.zeros(max_size)
        self.intercept_lips = beta * float(p.sample_weight.sum()) / p.n_samples \
            if p.fit_intercept else 0.0

        self.w = np.zeros(p.n_features) if w0 is None else np.array(w0, dtype=np.float64)
        for g in np.flatnonzero(self.lips == 0):
            self.w[G.members(g)] = 0.0
        self._intercept = np.array([float(intercept0) if p.fit_intercept else 0.0])
        self.alpha = None
        self.z = p.design.matvec(self.w) + self._intercept[0]
        self._checks = 0

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p, v, G = self.problem, self.view, self.groups
        if self.metric:
            entries, updates, self.counter = block_cd_metric_epoch(
                v.data, v.indices, v.indptr, p.y, p.sample_weight, self.z, self.w, G.ptr,
                G.index, self.eig, self.qptr, self.qflat, self.thresholds, p.loss_code,
                self.mode, self.prob, self.alias, G.n_groups, self.rng, self.counter,
                self.gbuf, self.vbuf, self.obuf, self._intercept, self.intercept_lips,
            )
            return entries, updates
        entries, updates, self.counter = block_cd_epoch(
            v.data, v.indices, v.indptr, p.y, p.sample_weight, self.z, self.w, G.ptr, G.index,
            self.lips, self.thresholds, p.loss_code, self.mode, self.prob, self.alias,
            G.n_groups, self.rng, self.counter, self.vbuf, self.obuf, self._intercept,
            self.intercept_lips,
        )
        return entries, updates

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        p = self.problem
        self._checks += 1
        refresh_margins(self, self._checks % RESYNC_EVERY == 0)
        n = p.n_samples
        primal = (weighted_loss_sum(p.loss_code, self.z, p.y, p.sample_weight) / n
                  + group_penalty_value(self.w, self.groups, p.lam))
        if p.lam == 0.0:  # RCDS on a smooth f: no dual, report the optimality violation
            return primal, None, self.kkt_violation()
        alpha = dual_point_from_margins(p.loss_code, self.z, p.y, p.sample_weight)
        u = p.design.rmatvec(alpha) / n
        dn = group_dual_norm(u, self.groups)
        if dn > p.lam:
            alpha *= p.lam / dn
            u *= p.lam / dn
        dual = -weighted_conjugate_sum(p.loss_code, alpha, p.y, p.sample_weight) / n
        if self._intercept[0] != 0.0:
            dual -= self._intercept[0] * float(alpha.sum()) / n
        gap = (weighted_fenchel_young_sum(p.loss_code, self.z, alpha, p.y, p.sample_weight) / n
               + group_fenchel_young(self.w, u, self.groups, p.lam))
        return primal, dual, gap

    def gradient(self) -> np.ndarray:
        """∇f(w) of the data term at the current iterate."""
        p = self.problem
        d = np.empty(p.n_samples)
        loss_derivatives(p.loss_code, self.z, p.y, d)
        return p.design.rmatvec(d * p.sample_weight) / p.n_samples

    def kkt_violation(self) -> float:
        """max_g of the block optimality violation (see :func:`group_kkt_violations`)."""
        viol = group_kkt_violations(self.w, self.gradient(), self.groups, self.problem.lam)
        return float(np.max(viol, initial=0.0))

    def active(self) -> int:
        """Number of groups with a nonzero block."""
        G = self.groups
        return int(np.count_nonzero(np.add.reduceat(self.w[G.index] != 0, G.ptr[:-1])))
