"""Multi-task regression: MultiTaskElasticNet and MultiTaskLasso.

``(1/2n) ‖Y − XW − b‖²_F + α ρ Σ_j ‖W_j‖₂ + α(1 − ρ)/2 ‖W‖²_F`` (scikit-learn's
objective; rows ``W_j`` hold one feature's weights for every task), by block
CD over those rows (:func:`cdlearn.multioutput.solve_multitask`, RCDC's block
setting). Mapping: squared loss ``½‖z − y‖²``, ``λ = α``, ``l1_ratio = ρ``;
sample weights are rescaled to sum to ``n_samples``, as scikit-learn does.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import validate_data

from ..data import as_design, check_choice, check_positive, check_sample_weight
from ..distributed import refuse_distributed
from ..multioutput import solve_multitask
from ._base import (
    ACCEPT_SPARSE,
    DTYPES,
    ENET_NOT_CONVERGED,
    CDEstimatorBase,
    check_bool,
    check_ratio,
    gap_tol,
    rewarn,
    seed_from,
)

#: scikit-learn's selection -> the block order of cdlearn.solvers.multi_cd
_SELECTION = {"cyclic": "cyclic", "random": "uniform", "shuffle": "shuffle"}


class MultiTaskElasticNet(RegressorMixin, CDEstimatorBase):
    """Multi-task elastic net: ``(1/2n)‖Y − XW − b‖²_F + αρ‖W‖₂₁ + α(1−ρ)/2‖W‖²_F``.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (0: least squares).
    l1_ratio : float in [0, 1], default=0.5
        ρ, the share of the row-group (``‖W‖₂₁``) penalty.
    fit_intercept : bool, default=True
        One unpenalised intercept per task. Dense data are then fit on
        centred columns (same objective; see :mod:`cdlearn.solvers.multi_cd`).
    copy_X : bool, default=True
        Accepted for scikit-learn compatibility: ``X`` is never modified.
    max_iter : int, default=1000
        Maximum number of epochs (one epoch = every feature's block once).
    tol : float, default=1e-4
        Relative accuracy of ``coef_``, as Lasso's: stop when the duality gap is
        ≤ ``tol/100 · P(0)`` (P(0) = ``‖Y‖²_F/(2n)``) and small enough that
        ``‖W − W*‖_F ≤ tol · max|W|`` by ``μ/2 ‖W − W*‖²_F ≤ gap``, μ the strong
        convexity on the non-zero rows (:mod:`cdlearn.solvers.stopping`; without
        an l1 part the ridge solution replaces the iterate when lower).
        ``tol=0`` asks for the smallest gap, ``1e-15 · P(0)``.
    warm_start : bool, default=False
        Start from the previous ``coef_``/``intercept_``.
    random_state : int, RandomState or None, default=None
        Seed of the block order when ``selection`` is random.
    selection : {"cyclic", "random", "shuffle"}, default="cyclic"
        Block order: in turn, uniformly at random (RCDC's UCDC), or a fresh
        permutation every epoch.
    verbose : int, default=0
        Progress bar.

    Attributes
    ----------
    coef_ : (n_tasks, n_features)
    intercept_ : (n_tasks,)
    n_iter_ : int, epochs run
    dual_gap_ : float, final duality gap of cdlearn's objective (scikit-learn's)
    solver_ : "multi-cd"
    trace_ : :class:`cdlearn.Trace`
    n_features_in_ : int
    """

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, fit_intercept=True, copy_X=True,
                 max_iter=1000, tol=1e-4, warm_start=False, random_state=None,
                 selection="cyclic", verbose=0):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.random_state = random_state
        self.selection = selection
        self.verbose = verbose

    def _rho(self):
        return check_ratio("l1_ratio", self.l1_ratio)

    def fit(self, X, y, sample_weight=None):
        """Fit on ``y`` of shape (n_samples, n_tasks)."""
        refuse_distributed(type(self).__name__)
        check_bool("fit_intercept", self.fit_intercept)
        check_bool("warm_start", self.warm_start)
        alpha = check_positive("alpha", self.alpha, allow_zero=True)
        rho = self._rho()
        check_choice("selection", self.selection, tuple(_SELECTION))
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES,
                             y_numeric=True, multi_output=True)
        if np.ndim(y) == 1:
            raise ValueError(f"For mono-task outputs, use {type(self).__name__[9:]}: y must "
                             f"have shape (n_samples, n_tasks), got {np.shape(y)}")
        design = as_design(X)
        n, d = design.shape
        sw = check_sample_weight(sample_weight, n)
        sw = sw * (n / sw.sum())
        Y = np.asarray(y, dtype=np.float64)
        W0 = b0 = None
        coef = getattr(self, "coef_", None)
        if self.warm_start and coef is not None and np.shape(coef) == (Y.shape[1], d):
            W0, b0 = np.asarray(coef, dtype=np.float64).T, self.intercept_
        tol = check_positive("tol", self.tol, allow_zero=True)
        [res] = rewarn(lambda: [solve_multitask(
            design, Y, lam=alpha, l1_ratio=rho, fit_intercept=self.fit_intercept,
            sample_weight=sw, sampling=_SELECTION[self.selection], tol=gap_tol(tol),
            coef_tol=tol if tol > 0 else None, max_epochs=self.max_iter,
            seed=seed_from(self.random_state), W0=W0, b0=b0, verbose=bool(self.verbose))],
            lambda r, _: f"{ENET_NOT_CONVERGED} Duality gap: {r.gap:.3e}", "multi-cd")
        self.coef_ = np.ascontiguousarray(res.w.T)
        self.intercept_ = res.intercept if self.fit_intercept else np.zeros(Y.shape[1])
        self.n_iter_ = int(res.n_epochs)
        self.dual_gap_ = float(res.gap)
        self.trace_ = res.trace
        self.solver_ = res.solver
        return self

    def predict(self, X):
        """``X @ coef_.T + intercept_``, shape (n_samples, n_tasks)."""
        return self._linear_scores(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        return tags


class MultiTaskLasso(MultiTaskElasticNet):
    """Multi-task Lasso: ``(1/2n)‖Y − XW − b‖²_F + α‖W‖₂₁`` (``l1_ratio = 1``).

    Parameters and attributes as :class:`MultiTaskElasticNet`, without ``l1_ratio``.
    """

    def __init__(self, alpha=1.0, *, fit_intercept=True, copy_X=True, max_iter=1000, tol=1e-4,
                 warm_start=False, random_state=None, selection="cyclic", verbose=0):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.random_state = random_state
        self.selection = selection
        self.verbose = verbose

    def _rho(self):
        return 1.0
