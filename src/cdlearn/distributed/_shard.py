"""The worker side: one shard of rows, held in worker memory across rounds.

A :class:`Shard` is a plain object: in-process it lives in a list, on Dask it
is an actor (``client.submit(Shard, ..., actor=True)``) created on the worker
that loads or receives its rows, so the rows never pass through the driver
when they come from files.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..api import make_problem
from ..data import as_design
from ..losses import (
    LOSS_CODES,
    loss_derivatives,
    smoothness,
    weighted_conjugate_sum,
    weighted_loss_and_fenchel_young_sums,
    weighted_loss_sum,
    weighted_second_derivatives,
)
from ..penalties import penalty_fenchel_young, soft_threshold_array
from ..solvers.base import Problem
from ..solvers.dual_cd import DualCDState
from ..solvers.primal_cd import PrimalCDState


def load_libsvm(path, n_features=None):
    """Rows of a LIBSVM file (1-based indices) as ``(CSR matrix, labels)``; errors name the file."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, zero_based=False,
                                  dtype=np.float64)
    except (OSError, ValueError) as exc:
        raise ValueError(f"shard {path!s}: cannot read it as a LIBSVM file ({exc})") from exc
    if X.shape[0] == 0:
        raise ValueError(f"shard {path!s} is empty (no rows)")
    return X, y


class Shard:
    """Rows ``X_k, y_k`` of one shard and the local state of the method run on them.

    ``source`` is a LIBSVM path (read here, on the worker), ``(X_k, y_k)`` or
    ``(X_k, y_k, s_k)`` with sample weights. ``name`` names the shard in every error.
    With ``fit_intercept`` the driver holds the intercept b and sends it.
    """

    def __init__(self, source, *, name, loss, penalty, lam, l1_ratio, n_features=None,
                 fit_intercept=False):
        self.name = name
        if isinstance(source, tuple):
            X, y, *weights = source
        else:
            (X, y), weights = load_libsvm(source, n_features), []
        self._objective = dict(loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                               fit_intercept=fit_intercept)
        self._build(X, y, weights[0] if weights else None)

    def _build(self, X, y, sample_weight=None):
        try:
            self.problem = make_problem(X, y, sample_weight=sample_weight, **self._objective)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"shard {self.name}: {exc}") from exc
        self.state = None
        self.snapshots = {}

    def pad_features(self, n_features):
        """Widen to ``n_features`` columns: a LIBSVM file omits trailing empty columns."""
        p = self.problem
        M = sp.csr_matrix(p.design.scipy_layout("csr"))
        self._build(sp.csr_matrix((M.data, M.indices, M.indptr),
                                  shape=(M.shape[0], n_features)), p.y, p.sample_weight)

    def timed(self, method, *args):
        """``(method(*args), its seconds)``: the driver tells compute from communication."""
        started = time.perf_counter()
        out = getattr(self, method)(*args)
        return out, time.perf_counter() - started

    # ------------------------------------------------------------------ facts
    def info(self):
        """``(n_rows, n_features, Σ s_i φ(0, y_i), Σ s_i)``: P(0) and the weights add over shards."""
        p = self.problem
        zero = np.zeros(p.n_samples)
        return (p.n_samples, p.n_features,
                float(weighted_loss_sum(p.loss_code, zero, p.y, p.sample_weight)),
                float(p.sample_weight.sum()))

    def _margins(self, w, b=0.0):
        p = self.problem
        z = p.design.matvec(w) if w.any() else np.zeros(p.n_samples)
        if b != 0.0:
            z += b
        return z

    # ------------------------------------------------------------------ CoCoA+
    def cocoa_setup(self, n_total, n_shards, seed, mean_weight, steps=((1.0, 0.0),)):
        """Local dual CD (shuffled passes) on the CoCoA+ subproblem, α_k = 0.

        σ′ = K (adding, γ = 1): the kernel's ``1/(λ2 n)`` becomes ``K/(λ2 n)``
        (``sigma = K n_k / n`` relative to the shard's own ``n_k``). ``steps``: the
        driver's line-search grid, sent once (:meth:`cocoa_round`).
        """
        p = self.problem
        self.state = DualCDState(p, sampling="shuffle", seed=seed,
                                 sigma=n_shards * p.n_samples / n_total)
        self.n_shards = n_shards
        self.mean_weight = mean_weight
        self.inv_l2n_global = 1.0 / (p.l2 * n_total)
        self.steps = steps
        self.snapshots = {}

    def cocoa_round(self, v, round_, gap, keep, local_epochs, resync, step):
        """Certificate parts at ``(w(v), α_k)``, then ``local_epochs`` passes of local dual CD.

        ``step = (t, m)`` (None after :meth:`cocoa_setup` or a lost shard) first
        moves α_k from the previous round's start by ``tΔα_k + m·P_k``: the
        round's update and the previous move, weighted as the driver's line
        search chose. Returns ``(loss_sum, fy_sum, update, conjugates, base)``:
        ``Σ s_i φ(x_iᵀw)`` and the Fenchel–Young sum of the shard at the
        received point, ``Δv_k = X_kᵀΔα_k/(λ2 n)`` as ``(indices, values)``,
        ``Σ s_i φ*(-(α_i + tΔα_i + mP_i)/s_i)`` for every ``(t, m)`` of the grid,
        and -- with ``resync`` -- the whole ``X_kᵀα_k/(λ2 n)`` at the round's
        start (dense, else None), from which the driver rebuilds v without
        accumulated rounding. ``gap`` (the global gap of the previous round)
        tightens the logistic step's inner tolerance as a single-machine solve
        does; ``keep`` lists the rounds whose α_k the driver may still ask for
        (:meth:`snapshot_at`).
        """
        st, p = self.state, self.problem
        if step is None:
            self.move = np.zeros_like(st.alpha)
        else:
            start = self.snapshots[round_ - 1]
            if step == (1.0, 0.0):  # CoCoA+'s own step: α_k is already there
                self.move = st.alpha - start
            else:
                t, m = step
                self.move = t * (st.alpha - start) + m * self.move
                st.alpha[:] = start + self.move
                st.n_active = st.n_full  # rows shrunk at a bound may have left it
        w = v if st.kappa == 0.0 else soft_threshold_array(v, st.kappa)
        z = self._margins(w)
        loss_sum, fy_sum = weighted_loss_and_fenchel_young_sums(
            p.loss_code, z, st.alpha, p.y, p.sample_weight)
        self.snapshots = {r: a for r, a in self.snapshots.items() if r in keep}
        start = self.snapshots[round_] = st.alpha.copy()
        base = p.design.rmatvec(start) * self.inv_l2n_global if resync else None
        if gap is not None:
            st.tighten_inner_eps(gap, self.mean_weight)
        # the local subproblem starts at the global v: w_local = ∇g*(v + σ′ΔV_k)
        st.v = v.copy()
        st.w = st.v if st.kappa == 0.0 else w.copy()
        for _ in range(local_epochs):
            st.run_epoch()
        dv = st.v - v
        idx = np.flatnonzero(dv)
        update = (idx.astype(np.int32 if p.n_features < 2**31 else np.int64),
                  dv[idx] / self.n_shards)
        delta = st.alpha - start
        conjugates = [float(weighted_conjugate_sum(p.loss_code, start + t * delta + m * self.move,
                                                   p.y, p.sample_weight)) for t, m in self.steps]
        return float(loss_sum), float(fy_sum), update, conjugates, base

    def dual_sum(self):
        """``X_kᵀα_k/(λ2 n)``: the shard's share of v."""
        return self.problem.design.rmatvec(self.state.alpha) * self.inv_l2n_global

    def margins(self):
        """``X_k w_k``: the shard's share of z."""
        return self.design.matvec(self.w)

    def snapshot_at(self, round_):
        return self.snapshots[round_]

    # ------------------------------------------------------------------ Newton
    def newton_parts(self, w, b=0.0):
        """``(Σ s φ, Fenchel–Young sum at α = -sφ'(z), X̃_kᵀ(sφ'(z)), X̃_kᵀ diag(sφ'') X̃_k)``
        at ``z = X_k w + b``; ``X̃_k`` is ``X_k`` with a column of ones for an intercept."""
        p = self.problem
        z = self._margins(w, b)
        deriv = np.empty(p.n_samples)
        loss_derivatives(p.loss_code, z, p.y, deriv)
        alpha = -p.sample_weight * deriv
        loss_sum, fy_sum = weighted_loss_and_fenchel_young_sums(
            p.loss_code, z, alpha, p.y, p.sample_weight)
        grad = -p.design.rmatvec(alpha)
        curv = np.empty(p.n_samples)
        weighted_second_derivatives(p.loss_code, z, p.y, p.sample_weight, curv)
        hess = _weighted_gram(p.design, curv)
        if p.fit_intercept:
            col = p.design.rmatvec(curv)
            hess = np.block([[hess, col[:, None]], [col[None, :], np.array([[curv.sum()]])]])
            grad = np.append(grad, -alpha.sum())
        return float(loss_sum), float(fy_sum), grad, hess

    def line_losses(self, w, b, direction, steps):
        """``Σ s_i φ(x_iᵀ(w + tΔ_w) + b + tΔ_b)`` for every t of ``steps`` (one pass each)."""
        p = self.problem
        z = self._margins(w, b)
        d = p.n_features
        dz = p.design.matvec(direction[:d])
        if direction.shape[0] > d:
            dz += direction[d]
        return [float(weighted_loss_sum(p.loss_code, z + t * dz, p.y, p.sample_weight))
                for t in steps]


def _weighted_gram(design, c):
    """``Xᵀ diag(c) X`` as a dense d×d array."""
    M = design.scipy_layout("csr")
    if sp.issparse(M):
        return np.asarray((M.T @ sp.diags(c) @ M).toarray(), dtype=np.float64)
    return (M.T * c) @ M


class ColumnShard:
    """Columns ``X[:, J_k]`` of one shard and their block ``w_k`` (ProxCoCoA+).

    The rows' labels stay with the driver, which holds the margins ``z = Xw``
    and the intercept (n ≪ d: the case ProxCoCoA+ serves) and sends ``sφ'(z + b)``
    every round.
    """

    def __init__(self, X, *, name, n_shards, loss, l1, l2, seed, max_weight=1.0):
        self.name = name
        self.design = as_design(X)
        d = self.design.n_features
        # σ′ = K (adding, γ = 1); φ is β-smooth, so f(z) = (1/n)Σ s_iφ(z_i) is
        # β·max(s)/n-smooth
        self.scale = n_shards * smoothness(loss) * max_weight
        self.l1, self.l2 = l1, l2
        self.w = np.zeros(d)
        self.seed = seed
        self.snapshots = {}

    def timed(self, method, *args):
        started = time.perf_counter()
        out = getattr(self, method)(*args)
        return out, time.perf_counter() - started

    def prox_round(self, deriv, round_, keep, local_epochs, resync):
        """Certificate parts at ``(w_k, α = -deriv)``, then the local subproblem.

        ``deriv = sφ'(z + b)``. The local subproblem of ProxCoCoA+ (Smith, Forte,
        Jordan & Jaggi 2015, primal form), ``min_Δ (1/n)derivᵀX_kΔ + σ′β/(2n)‖X_kΔ‖² +
        λg(w_k + Δ)`` (β: the smoothness of sφ), is, divided by σ′β, a squared-loss
        elastic net in ``u = w_k + Δ`` with targets ``X_k w_k - deriv/(σ′β)`` and
        penalties ``λ1/(σ′β)``, ``λ2/(σ′β)``:
        ``local_epochs`` passes of cdlearn's primal CD on it, warm-started at w_k.
        Returns ``(max|u_k|, ‖w_k‖₁, w_kᵀu_k, ‖w_k‖², FY_k, nnz(w_k), update)`` with
        ``u_k = -X_kᵀderiv/n`` and FY_k the elastic net's Fenchel–Young sum on the
        block; ``update`` is ``X_kΔ`` (or ``X_k w_k`` after the passes, with ``resync``).
        """
        n = self.design.n_samples
        w = self.w
        u = self.design.rmatvec(deriv) * (-1.0 / n)
        parts = (float(np.max(np.abs(u), initial=0.0)), float(np.abs(w).sum()),
                 float(w @ u), float(w @ w),
                 penalty_fenchel_young(w, u, self.l1, self.l2) if self.l2 > 0 else 0.0,
                 int(np.count_nonzero(w)))
        self.snapshots = {r: x for r, x in self.snapshots.items() if r in keep}
        self.snapshots[round_] = w.copy()
        z_k = self.design.matvec(w)
        if local_epochs:
            problem = Problem(self.design, z_k - deriv / self.scale, np.ones(n), "squared",
                              LOSS_CODES["squared"], "elastic_net", None,
                              self.l1 / self.scale, self.l2 / self.scale)
            state = PrimalCDState(problem, sampling="shuffle", seed=self.seed + round_,
                                  w0=w)
            for _ in range(local_epochs):
                state.run_epoch()
            self.w = state.iterate()[0]
        z_new = self.design.matvec(self.w)
        return (*parts, z_new if resync else z_new - z_k)

    def margins(self):
        """``X_k w_k``: the shard's share of z."""
        return self.design.matvec(self.w)

    def snapshot_at(self, round_):
        return self.snapshots[round_]
