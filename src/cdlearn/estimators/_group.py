"""GroupLasso: the group penalty that ``cdlearn.solve(penalty="group_l2")`` solves by block CD.

Parameter names follow skglm's ``GroupLasso`` (``groups``, ``alpha``,
``weights``), so that its objective is this one at the same settings.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..data import check_positive
from ..penalties_group import make_groups
from ._regression import _CDRegressor


def contiguous_groups(groups, n_features: int):
    """skglm's ``groups`` spellings as a list of index arrays (or as given, for labels).

    An int is the size of contiguous groups (it must divide ``n_features``); a
    list of ints the sizes of contiguous groups (summing to ``n_features``); a
    list of index lists is passed on to :func:`cdlearn.penalties_group.make_groups`.
    """
    if isinstance(groups, numbers.Integral) and not isinstance(groups, bool):
        size = int(groups)
        if size < 1 or n_features % size:
            raise ValueError(f"groups={size}: contiguous groups of that size must divide "
                             f"n_features={n_features}")
        return [np.arange(s, s + size) for s in range(0, n_features, size)]
    if isinstance(groups, list | tuple) and groups and all(
            isinstance(g, numbers.Integral) and not isinstance(g, bool) for g in groups):
        sizes = np.asarray(groups, dtype=np.int64)
        if np.any(sizes < 1) or sizes.sum() != n_features:
            raise ValueError(f"groups as a list of sizes must be >= 1 and sum to "
                             f"n_features={n_features}, got {list(map(int, sizes))}")
        ends = np.cumsum(sizes)
        return [np.arange(e - s, e) for s, e in zip(sizes, ends, strict=True)]
    return groups


class GroupLasso(_CDRegressor):
    """Group lasso: ``(1/2n) Σ s_i (y_i - x_iᵀw - b)² + α Σ_g ω_g ‖w_g‖₂`` by block CD.

    Mapping: squared loss ``½(z - y)²``, ``penalty="group_l2"``, ``λ = α``,
    group weights ``ω_g``; solved by ``solver="block-cd"`` (RCDC Algorithm 2
    over the groups: Richtárik & Takáč, *Iteration complexity of randomized
    block-coordinate descent*). Sample weights are rescaled to sum to
    ``n_samples`` (as :class:`Lasso`). Same objective as skglm's
    ``GroupLasso(groups, alpha, weights)``.

    Parameters
    ----------
    groups : int, list of ints or list of lists of ints, default=1
        An int: contiguous groups of that size; a list of ints: contiguous groups
        of those sizes; a list of index lists: the groups (disjoint, covering
        every feature). The default 1 (every feature its own group) is the Lasso
        with ``weights=None``; skglm has no default.
    alpha : float, default=1.0
        Regularisation strength (0: no penalty, least squares by block CD).
    weights : array-like of shape (n_groups,) or None, default=None
        ``ω_g > 0``; None: 1 for every group, as skglm (``cdlearn.solve``'s
        default for ``group_l2`` is ``√|g|``).
    fit_intercept, tol, max_iter, warm_start, random_state, verbose
        As in :class:`Lasso`.
    sampling : str or None, default=None
        Block sampling: None ("uniform"), "importance", "power" or "cyclic".

    Attributes
    ----------
    coef_ : (n_features,) or (n_targets, n_features)
    intercept_ : float or (n_targets,)
    n_iter_ : int or (n_targets,) epochs run (an epoch is n_groups block steps)
    dual_gap_ : float or (n_targets,) final duality gap
    solver_ : "block-cd"
    trace_ : :class:`cdlearn.Trace` (a list for several targets)
    n_features_in_ : int
    """

    _normalize_weights = True
    #: the only method for the group penalty, serial
    solver = "block-cd"
    batch_size = 1

    def __init__(self, groups=1, alpha=1.0, *, weights=None, fit_intercept=True, tol=1e-4,
                 max_iter=1000, warm_start=False, random_state=None, sampling=None,
                 verbose=0):
        self.groups = groups
        self.alpha = alpha
        self.weights = weights
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.sampling = sampling
        self.verbose = verbose

    def _objective(self, n_samples):
        alpha = check_positive("alpha", self.alpha, allow_zero=True)
        return ("group_l2", alpha, 1.0) if alpha > 0 else ("none", None, 1.0)

    def _method(self, X, sample_weight):
        return "block-cd", self._solve_options()

    def _solve_options(self) -> dict:
        d = self.n_features_in_
        groups = make_groups(contiguous_groups(self.groups, d), d)
        weights = np.ones(groups.n_groups) if self.weights is None else self.weights
        groups = make_groups(groups.labels, d, weights=weights)
        return dict(super()._solve_options(), groups=groups)
