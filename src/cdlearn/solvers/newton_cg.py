"""Truncated Newton with preconditioned CG for smooth losses and the l2 penalty.

The method of liblinear's primal solvers ``-s 0`` / ``-s 2``: Lin, Weng &
Keerthi (2008), "Trust region Newton method for large-scale logistic
regression", JMLR 9; with the line search instead of the trust region and the
diagonal preconditioner of liblinear >= 2.40 (Hsia, Zhu & Lin (2017), "A study
on trust region update rules in Newton methods for large-scale linear
classification", ACML; Hsia, Chiang & Lin (2018), "Preconditioned conjugate
gradient methods in truncated Newton frameworks for large-scale linear
classification", ACML).

One "epoch" is one outer Newton iteration at ``(w, b)`` with margins ``z``:

1. ``α = -sφ'(z)``, ``D = sφ''(z)/n`` (generalized Hessian 2·[yz < 1] for
   the squared hinge), gradient ``G = [-Xᵀα/n + λw ; -Σα/n]`` (the intercept,
   when fitted, is an unpenalised extra coordinate of the Newton system);
2. PCG on ``H d = -G`` with ``H v = [XᵀD(Xv_w + v_b) + λv_w ; ΣD(Xv_w + v_b)]``
   (two scipy mat-vecs per iteration: X and Xᵀ are held as CSR so both are
   gathers; fused numba row loops à la liblinear measured 1.2-2x slower) and
   liblinear's preconditioner ``M = λ + a·diag(XᵀDX)``, ``a = 0.01``; CG stops at
   ``‖r‖_{M⁻¹} <= η‖G‖_{M⁻¹}``, ``η = cg_eta = 0.1``. Measured (CG products
   to gap 1e-8·P(0)): the fixed η = 0.1 beat the forcing term
   ``min(0.1, sqrt(‖G‖/‖G₀‖))``, η = 0.01 and liblinear's model-decrease rule
   (which stalled on news20 logistic at λ = 1/(100n)), and a = 0.01 beat the
   pure diagonal (a = 1) on news20. ``Xd`` is accumulated from CG's own ``Xp``
   (no extra mat-vec);
3. exact line search on the margins: the root of the monotone slope
   ``h'(t) = Σ s φ'(z + t·Xd) Xd / n + λ(wᵀd + t‖d‖²)`` by safeguarded regula
   falsi (Illinois), to ``|h'(t)| <= 1e-3·|h'(0)|``. For the piecewise
   quadratic losses it is the exact 1-D minimiser after a few O(n) steps.

Preconditioner (``preconditioner=``): ``"diagonal"`` (``True``) is liblinear's
above; ``"gram"`` is a lagged Hessian ``XᵀD'X + λI`` (dense X only), formed by
BLAS (:func:`cdlearn.solvers.newton_cd.dense_gram`) and factorised by Cholesky
at the first outer iteration and again whenever the last PCG's products cost
more than forming it (2·nnz per product against
:func:`cdlearn.solvers.newton_cd.gram_work`); at a refresh the step is Newton's
without CG, in between PCG needs a few products (Doikov, Chayti & Jaggi (2023),
"Second-order optimization with lazy Hessians", ICML). ``"auto"`` (default)
takes it for dense X whose Gram costs at most 25 data passes (about 0.13·d
passes here: 10,000 × 100, not 1,000 × 1,000). Measured on benchopt's L2
simulation 10,000 × 100 (y = sign(Xβ)), CPU time to gap 1e-10·P(0): lmbd = 1,
4 outer iterations, 11 products, 2 Gram matrices, 38-73 ms (diagonal: 7 outer,
~100 ms; scikit-learn lbfgs to the same objective 47-78 ms); lmbd = 0.01:
52-119 ms (diagonal 160-800 ms under load; lbfgs 68-134 ms).

Entries counted per epoch: ``nnz`` for the gradient ``Xᵀα`` (computed by the
certificate and reused), ``nnz`` for ``diag(XᵀDX)``, ``2·nnz + 3n`` per CG
iteration, ``n`` per line-search evaluation.

Certificate: intercept moved to its exact minimiser, dual point ``α = -sφ'(z)``
(so ``w(α) = Xᵀα/(λn)``), exact gap as a sum of Fenchel–Young terms
(:func:`cdlearn.objectives.certificate_from_dual_point`); its ``Xᵀα`` is the next gradient.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..data import SMALL_ARRAY
from ..kernels.newton_cd import cholesky_apply, cholesky_factor, margin_terms, newton_weights
from ..kernels.newton_cg import axpy, directional_slope
from ..kernels.views import weighted_slice_powers
from ..losses import loss_derivatives_np, loss_second_derivatives_np
from ..objectives import certificate_from_dual_point
from .base import PrimalIterate, Problem, initial_primal
from .intercept import refresh_margins
from .newton_cd import GRAM_FACTOR, GRAM_MAX_AUTO, dense_gram, gram_work, terms_certificate
from .parallel import current_threads

SUPPORTED_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
SUPPORTED_PENALTIES = ("l2",)
OPTIONS = ("preconditioner", "max_cg", "cg_eta")
PRECONDITIONERS = ("auto", "diagonal", "gram", "none")
PCG_ALPHA = 0.01  # liblinear's α_pcg: M = (1 - α)·I + α·diag(H) in its scaling
LINE_TOL = 1e-3
LINE_EVALS = 30
RESYNC_EVERY = 10  # recompute z = Xw + b from scratch every this many checks
#: rows with D_i <= this·max(D) are left out of the lagged Gram: it is a preconditioner,
#: and on separable data at small λ most margins grow large (benchopt's 10,000 × 100 at
#: lmbd 0.01: 785 of 10,000 rows kept at the second Gram, same CG iterations)
GRAM_DROP = 1e-3
_DENSE_BLOCK = 1 << 16  # entries of X∘X formed at once for the dense preconditioner


# numpy stand-ins for the kernels on arrays of at most SMALL_ARRAY entries, where they
# cost less than compiling the kernels on a first fit (issue 22); same values up to
# rounding (tests/test_small_arrays.py). Not the Cholesky kernels: on the near-singular
# preconditioner of a wide problem at λ = 1e-18 LAPACK's triangular solves (rounded
# otherwise) left newton-cg 1.3e-7 relative from the least-norm solution, the kernels
# 3e-9 (scikit-learn's test_regularization_limits_ridge[asarray-wide-False-lsqr-*]).
def _newton_weights(code, z, y, sw, inv_n, c, D, small=SMALL_ARRAY) -> float:
    """:func:`cdlearn.kernels.newton_cd.newton_weights`."""
    if z.shape[0] > small:
        return newton_weights(code, z, y, sw, inv_n, c, D)
    s = sw * inv_n
    np.multiply(loss_derivatives_np(code, z, y), s, out=c)
    np.multiply(loss_second_derivatives_np(code, z, y), s, out=D)
    return float(D.sum())


def _directional_slope(code, z, dz, y, sw, t, small=SMALL_ARRAY) -> float:
    """:func:`cdlearn.kernels.newton_cg.directional_slope`."""
    if z.shape[0] > small:
        return directional_slope(code, z, dz, y, sw, t)
    return float(sw @ (loss_derivatives_np(code, z + t * dz, y) * dz))


def _axpy(a, x, y, small=SMALL_ARRAY):
    """:func:`cdlearn.kernels.newton_cg.axpy`."""
    if y.shape[0] > small:
        axpy(a, x, y)
    else:
        y += a * x


class NewtonCGState(PrimalIterate):
    """State of truncated Newton-CG on one problem (see module docstring)."""

    name = "newton-cg"  # in error messages (solvers.lbfgs reuses this state)
    small = SMALL_ARRAY  # the numpy forms of the per-sample loops up to this n (issue 22)

    def __init__(self, problem: Problem, *, preconditioner="auto", max_cg=1000, cg_eta=0.1,
                 seed=0, w0=None, intercept0=0.0, batch_size=1, alpha0=None, sampling=None,
                 dual_step=None, power=None, step=None):
        # sampling/seed/dual_step/power/step are CD options cdlearn.solve passes to every
        # method; Newton-CG is deterministic and uses none of them
        if batch_size != 1:
            raise ValueError(f"solver={self.name!r} takes no batch_size (it is not a CD method)")
        if alpha0 is not None:
            raise ValueError(f"solver={self.name!r} is a primal method: alpha0 does not apply "
                             "(warm-start it with w0)")
        if isinstance(max_cg, bool) or not isinstance(max_cg, (int, np.integer)) or max_cg < 1:
            raise ValueError(f"max_cg must be an integer >= 1, got {max_cg!r}")
        if isinstance(cg_eta, bool) or not isinstance(cg_eta, (int, float)) \
                or not 0.0 < cg_eta < 1.0:
            raise ValueError(f"cg_eta must be a number in (0, 1), got {cg_eta!r}")
        self.problem = p = problem
        if p.l1 != 0.0 or not p.l2 > 0.0:
            raise ValueError(f"solver={self.name!r} needs penalty='l2' with lam > 0")
        d, n = p.n_features, p.n_samples
        self.preconditioner = choose_preconditioner(p, preconditioner)
        self.max_cg = int(max_cg)
        self.cg_eta = float(cg_eta)
        self.m = d + int(p.fit_intercept)
        self.inv_n = 1.0 / n
        design = p.design
        if design.is_sparse:
            # X by rows for Xv, and Xᵀ by rows for Xᵀq (a gather: scipy's scatter
            # through X.T is slower, and so are fused numba loops): the column
            # view's arrays are Xᵀ in CSR. Both views are the Design's own, no copy.
            r, c = design.csr, design.csc
            self._X = sp.csr_matrix((r.data, r.indices, r.indptr), shape=(n, d), copy=False)
            self._Xt = sp.csr_matrix((c.data, c.indices, c.indptr), shape=(d, n), copy=False)
        else:
            self._X = design.to_scipy()
            self._Xt = self._X.T
        # float32 X: products through the Design's float32-reading kernel, since
        # numpy and scipy would convert X to float64 (a temporary of X's size or 2×)
        self._f32 = design.dtype == np.float32
        # sparse float64 X on threads: both products by one parallel kernel over the
        # row / column view (each entry summed in slice order, as scipy's CSR product);
        # dense X runs BLAS on the solve's threads (api.use_threads)
        self.n_threads = current_threads()
        self._par = design.is_sparse and not self._f32 and self.n_threads > 1
        if self._par:
            # imported here: kernels.parallel_cd loads the CD kernels too (one method's
            # modules per solve)
            from ..kernels.parallel_cd import parallel_slice_dots

            self._slice_dots = parallel_slice_dots
        self.w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
        self._intercept = np.array([float(intercept0) if p.fit_intercept else 0.0])
        self.alpha = None
        if w0 is None:  # w = 0: no product with X (a pass over X per call, as primal_cd)
            self.z = np.full(n, self._intercept[0])
        else:
            self.z = p.design.matvec(self.w) + self._intercept[0]
        self._alpha = np.empty(n)
        self.D = np.empty(n)
        self._dsum = 0.0
        self._terms = None
        self._u = None  # Xᵀα/n at the current z (minus the loss gradient), from _weights()
        self._fresh = False
        self._checks = 0
        self.total_cg = 0
        self.last = {}
        if self.preconditioner == "gram":
            self._H = np.zeros((self.m, self.m))
            self._gram_price = gram_work(p)  # in entries of a data pass, every row
            self._refresh = True  # form XᵀDX at the next outer iteration
            self._exact = True  # the last Gram kept every row with D_i > 0
            self._g0 = None
            self.n_gram = 0
            self.gram_rows = n  # rows in the last Gram

    # ---------------------------------------------------------------- pieces
    def _weights(self, terms=False):
        """α, D and ``u = Xᵀα/n`` at the current margins; returns the entries read.

        ``terms``: also the certificate's sums (``self._terms``, None in numpy's form
        below ``small`` samples) from the same exp (one log1p more a sample)."""
        p = self.problem
        # c = sφ'/n into _alpha, then α = -n c
        self._terms = None
        if terms and self.z.shape[0] > self.small:
            *self._terms, self._dsum = margin_terms(p.loss_code, self.z, p.y, p.sample_weight,
                                                    self.inv_n, self._alpha, self.D)
        else:
            self._dsum = _newton_weights(p.loss_code, self.z, p.y, p.sample_weight,
                                         self.inv_n, self._alpha, self.D, self.small)
        self._alpha *= -float(p.n_samples)
        self._u, entries = self._rmatvec(self._alpha, False)
        self._u *= self.inv_n
        self._fresh = True
        return entries + p.n_samples

    def _xt_dot(self, q):
        if self._par:
            c = self.problem.design.csc
            return self._slice_dots(c.data, c.indices, c.indptr, q,
                                       np.empty(self.problem.n_features))
        return self.problem.design.rmatvec(q) if self._f32 else self._Xt @ q

    def _x_dot(self, v):
        if self._par:
            r = self.problem.design.csr
            return self._slice_dots(r.data, r.indices, r.indptr, v,
                                       np.empty(self.problem.n_samples))
        return self.problem.design.matvec(v) if self._f32 else self._X @ v

    def _rmatvec(self, coef, squared):
        """``(Xᵀcoef or (X∘X)ᵀcoef, entries read)``."""
        p = self.problem
        if not squared:
            return self._xt_dot(coef), p.design.nnz
        if p.design.is_sparse:  # one pass over the column view, no X∘X matrix
            c = p.design.csc
            out = np.empty(p.n_features)
            weighted_slice_powers(c.data, c.indices, c.indptr, coef, False, out)
            return out, p.design.nnz
        out = np.zeros(p.n_features)
        rows = max(1, min(_DENSE_BLOCK // p.n_features, p.n_samples // 16))
        for start in range(0, p.n_samples, rows):  # X∘X a few rows at a time
            B = self._X[start:start + rows]
            out += (B * B).T @ coef[start:start + rows]
        return out, p.design.nnz

    def _hess_vec(self, v):
        """``(H v, X v_w + v_b, entries read)``."""
        p = self.problem
        d = p.n_features
        xv = self._x_dot(v[:d])
        if p.fit_intercept:
            xv += v[d]
        q = self.D * xv
        if p.fit_intercept:
            out = np.empty(self.m)
            out[:d] = self._xt_dot(q)
            out[d] = q.sum()
        else:
            out = self._xt_dot(q)
        _axpy(p.l2, v[:d], out[:d])
        return out, xv, 2 * p.design.nnz + p.n_samples

    def _cg(self, G, M, eta):
        """PCG on ``H x = -G`` to ``‖r‖_{M⁻¹} <= η‖G‖_{M⁻¹}`` (``G`` is overwritten).

        Returns ``(x, Xx_w + x_b, iterations, entries)``; ``Xx`` is accumulated
        from the products' own ``Xp`` (no mat-vec for the line search).
        """
        n = self.problem.n_samples
        x = np.zeros(self.m)
        xz = np.zeros(n)
        # d-vectors weigh on wide data (news20: each is 3% of X, the 10⁶-column
        # Nesterov Lasso 6.8%): G is consumed as r, the updates are in place, and
        # s = M⁻¹r lives in Hp's buffer once Hp is spent. Held: r, M, x, p, Hp.
        r = np.negative(G, out=G)
        if callable(M):
            solve = M
        else:
            def solve(v, out):
                return np.divide(v, M, out=out)
        direction = solve(r, np.empty(self.m))  # s₀ = M⁻¹r₀ is the first direction
        rs = float(r @ direction)
        stop = eta * eta * rs
        it = 0
        entries = 0
        while it < self.max_cg and rs > stop:
            hp, xp, e = self._hess_vec(direction)
            entries += e + 2 * n
            it += 1
            php = float(direction @ hp)
            if not php > 0.0:  # H is positive definite on w; this is rounding at the end
                break
            a = rs / php
            _axpy(a, direction, x)
            xp *= a
            xz += xp
            xp = None
            _axpy(-a, hp, r)
            s = solve(r, hp)
            rs_new = float(r @ s)
            direction *= rs_new / rs
            direction += s
            rs = rs_new
            hp = s = None
        return x, xz, it, entries

    def _gram_preconditioner(self, gnorm):
        """``(M⁻¹ as a function, η, entries)`` for ``preconditioner="gram"``.

        ``M = XᵀD'X + λI`` with ``D'`` the weights at the last refresh (a lagged
        Hessian: Doikov, Chayti & Jaggi (2023), "Second-order optimization with
        lazy Hessians", ICML), factorised once by Cholesky. At a refresh it is
        the Hessian itself and the step is Newton's; between refreshes PCG
        corrects the lagged model with exact Hessian products in a few
        iterations. η = min(cg_eta, ‖G‖/‖G₀‖): with so good a preconditioner the
        last CG iterations are cheap, and the forcing term gives the outer loop
        Newton's superlinear rate.
        """
        p = self.problem
        d = p.n_features
        entries = 0
        if self._g0 is None:
            self._g0 = gnorm
        if self._refresh:
            H = self._H
            keep = self._gram_rows()
            X = p.design.to_scipy()
            if keep.all():
                entries += dense_gram(X, self.D, p.fit_intercept, H)
            else:
                rows = np.flatnonzero(keep)
                entries += dense_gram(X[rows], self.D[rows], p.fit_intercept, H) + rows.size * d
            self._exact = not np.any(self.D[~keep] > 0.0)
            self.gram_rows = int(np.count_nonzero(keep))
            diag = H.diagonal().copy()
            reg = np.full(self.m, p.l2)
            if p.fit_intercept:  # the intercept is unpenalised: keep its pivot positive
                # (no curvature at all, D = 0: a pivot of 1e-312 overflowed the
                # preconditioned direction and once divided by an underflowed zero)
                floor = 1e-12 * float(diag.max())
                reg[d] = floor if floor > 0.0 else (p.l2 if p.l2 > 0.0 else 1.0)
            H[np.diag_indices(self.m)] += reg
            self.n_gram += 1
            if not cholesky_factor(H):  # rounding: factor the diagonal instead
                H[:, :] = 0.0
                H[np.diag_indices(self.m)] = np.sqrt(diag + reg)
            entries += self.m ** 3 // 3

        L = self._H

        def solve(v, out):
            out[:] = v
            cholesky_apply(L, out)
            return out

        return solve, min(self.cg_eta, gnorm / self._g0), entries

    def _gram_rows(self):
        """Rows of the next lagged Gram (a mask): ``D_i > GRAM_DROP·max(D)``."""
        return self.D > GRAM_DROP * float(np.max(self.D, initial=0.0))

    def _gradient(self):
        """``(G, entries)``: the gradient at the current iterate (``u`` from the last
        certificate when it is fresh: the certificate's ``Xᵀα`` is the gradient's)."""
        p = self.problem
        d, n = p.n_features, p.n_samples
        if not self._fresh:
            refresh_margins(self, False)
            entries = self._weights()
        else:
            entries = n + p.design.nnz  # the certificate made Xᵀα: counted here all the same
        self._fresh = False
        G = np.empty(self.m)
        np.multiply(self.w, p.l2, out=G[:d])
        G[:d] -= self._u
        self._u = None  # not held through CG: the next _weights() makes it again
        if p.fit_intercept:
            G[d] = -float(self._alpha.sum()) * self.inv_n
        return G, entries

    def _margin_change(self, delta):
        """``X delta_w + delta_b`` (one mat-vec)."""
        p = self.problem
        d = p.n_features
        dz = self._x_dot(delta[:d]) if self._par else p.design.matvec(delta[:d])
        if p.fit_intercept:
            dz += delta[d]
        return dz

    def _step(self, delta, dz, start=None):
        """Exact line search along ``delta`` (``dz = X delta_w + delta_b``) and the
        move; returns ``(t, evaluations)``. ``start``: see :meth:`_line_search`."""
        p = self.problem
        dw = delta[:p.n_features]
        t, evals = self._line_search(dz, float(self.w @ dw), float(dw @ dw), start)
        if t > 0.0:
            _axpy(t, dw, self.w, self.small)
            if p.fit_intercept:
                self._intercept[0] += t * delta[p.n_features]
            self.z += t * dz
        return t, evals

    def _slope(self, t, dz, wd, dd):
        p = self.problem
        return (_directional_slope(p.loss_code, self.z, dz, p.y, p.sample_weight, t,
                                   self.small) * self.inv_n
                + p.l2 * (wd + t * dd))

    def _line_search(self, dz, wd, dd, start=None):
        """Root of the non-decreasing h'(t) (exact minimisation along d); ``(t, evals)``.

        ``start = (h'(0), first trial)`` when the caller has them (else h'(0) is
        evaluated and the first trial is t = 1, Newton's step)."""
        if start is None:
            s0, t, evals = self._slope(0.0, dz, wd, dd), 1.0, 1
        else:
            (s0, t), evals = start, 0
        if not s0 < 0.0:
            return 0.0, evals  # not a descent direction: only rounding is left
        tol = LINE_TOL * -s0
        lo, slo = 0.0, s0
        s = self._slope(t, dz, wd, dd)
        evals += 1
        if abs(s) <= tol:
            return t, evals
        while s < 0.0:  # the minimiser lies beyond t: expand
            if evals >= LINE_EVALS:
                return t, evals
            lo, slo = t, s
            t *= 2.0
            s = self._slope(t, dz, wd, dd)
            evals += 1
        hi, shi = t, s
        side = 0
        while abs(s) > tol and evals < LINE_EVALS and hi - lo > 1e-15 * hi:
            t = (lo * shi - hi * slo) / (shi - slo)
            s = self._slope(t, dz, wd, dd)
            evals += 1
            if s < 0.0:
                lo, slo = t, s
                if side == -1:
                    shi *= 0.5  # Illinois: the same end kept twice
                side = -1
            else:
                hi, shi = t, s
                if side == 1:
                    slo *= 0.5
                side = 1
        if s > tol and lo > 0.0:
            t = lo  # unconverged: the last point with h' < 0 surely decreased h
        return t, evals

    # ---------------------------------------------------------------- protocol
    def run_epoch(self):
        p = self.problem
        d, n = p.n_features, p.n_samples
        G, entries = self._gradient()
        gnorm = float(np.linalg.norm(G))
        if gnorm == 0.0:
            return entries, 0
        eta = self.cg_eta
        if self.preconditioner == "gram":
            M, eta, e = self._gram_preconditioner(gnorm)
            entries += e
        elif self.preconditioner == "diagonal":
            M = np.empty(self.m)
            diag, e = self._rmatvec(self.D, True)
            np.multiply(diag, PCG_ALPHA, out=M[:d])
            M[:d] += p.l2
            del diag
            if p.fit_intercept:
                M[d] = p.l2 + PCG_ALPHA * self._dsum
            entries += e
        else:
            M = np.ones(self.m)
        if self.preconditioner == "gram" and self._refresh and self._exact:
            # M is this iteration's Hessian: the Newton step in one solve, no CG
            self._refresh = False
            delta = M(np.negative(G, out=G), np.empty(self.m))
            dz = self._margin_change(delta)
            iters, e = 0, p.design.nnz
        else:
            delta, dz, iters, e = self._cg(G, M, eta)
        del G, M
        entries += e
        self.total_cg += iters
        if self.preconditioner == "gram":
            # a fresh XᵀDX next time once the CG products cost more than forming it
            # priced on the rows it would keep now
            kept = np.count_nonzero(self._gram_rows()) / n
            self._refresh = iters * 2.0 * p.design.nnz >= kept * self._gram_price
        t, evals = self._step(delta, dz)
        entries += evals * n
        self.last = dict(cg_iters=iters, step=t, line_evals=evals, gnorm=gnorm)
        return entries, iters

    def reference(self) -> float:
        return initial_primal(self.problem)

    def certificate(self):
        """``(primal, dual, gap)`` at ``α = -sφ'(z)`` after the exact intercept; the
        ``Xᵀα`` it needs is kept as the next epoch's gradient."""
        self._checks += 1
        refresh_margins(self, self._checks % RESYNC_EVERY == 0)
        self._weights(terms=True)
        p = self.problem
        if self._terms is not None:
            # one fused pass (exp, log1p) instead of the weights' and the Fenchel-Young
            # sums' (exp, 2 log): ~9% of an lbfgs solve on 10,000 × 100
            return terms_certificate(p, self._terms, self.w, self._u,
                                     -self._intercept[0] * float(self._alpha.sum()) * self.inv_n)
        return certificate_from_dual_point(p.loss_code, self.z, self._alpha, p.y,
                                           p.sample_weight, self.w, self._u, 0.0, p.l2,
                                           compiled=self.small == 0)

    def _restore_margins(self):
        super()._restore_margins()
        self._fresh = False

    def active(self) -> int:
        return self.m

    def extra_info(self) -> dict:
        info = {"cg_iters": self.total_cg, "preconditioner": self.preconditioner}
        if self.preconditioner == "gram":
            info["hessians"] = self.n_gram
            info["gram_rows"] = self.gram_rows
        return info


def choose_preconditioner(problem: Problem, preconditioner="auto") -> str:
    """``"diagonal"`` (liblinear's), ``"gram"`` (a lagged ``XᵀDX``) or ``"none"``.

    ``True``/``False`` mean ``"diagonal"``/``"none"``. ``"auto"`` takes the Gram
    form for dense X whose ``XᵀDX`` costs at most ``GRAM_FACTOR`` data passes by
    BLAS (:func:`cdlearn.solvers.newton_cd.gram_work`; about 0.13·d passes here:
    10,000 × 100 yes, 1,000 × 1,000 no) and the diagonal otherwise.
    """
    if preconditioner is True:
        return "diagonal"
    if preconditioner is False:
        return "none"
    if preconditioner not in PRECONDITIONERS:
        raise ValueError(f"preconditioner must be True, False or one of "
                         f"{', '.join(map(repr, PRECONDITIONERS))}, got {preconditioner!r}")
    m = problem.n_features + int(problem.fit_intercept)
    if preconditioner == "gram":
        if problem.design.is_sparse or m > GRAM_MAX_AUTO:
            raise ValueError("preconditioner='gram' needs dense X with at most "
                             f"{GRAM_MAX_AUTO} features")
        return "gram"
    if preconditioner == "auto":
        if (not problem.design.is_sparse and m <= GRAM_MAX_AUTO
                and gram_work(problem) <= GRAM_FACTOR * max(problem.design.nnz, 1)):
            return "gram"
        return "diagonal"
    return preconditioner
