"""What every cdlearn estimator shares: parameters, the solve fan-out, warm starts.

An estimator fit is a list of problems ``1/n Σ s_i φ(x_iᵀw + b, y_i) + λ g(w)``
on one validated :class:`~cdlearn.data.Design` (one per target column or, for
classifiers, one binary problem per class). The method is resolved once
(``solver="auto"`` is the choice of :func:`cdlearn.api.auto_solver`),
the view it walks is built once, and the problems run sequentially or, with
``n_jobs``, on threads sharing the design (the numba kernels release the GIL;
:func:`cdlearn.multiclass.run_many`, the same fan-out as ``cdlearn.solve``'s
one-vs-rest).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ..data import check_positive
from ..multiclass import prebuild, run_many
from ..paths import resolve_solver, warm_start_kwargs

ACCEPT_SPARSE = ("csr", "csc")
DTYPES = (np.float64, np.float32)


def seed_from(random_state):
    """An int seed for :func:`cdlearn.solve` from a scikit-learn ``random_state``."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def run_problems(design, targets, sample_weights, *, loss, penalty, lam, l1_ratio,
                 fit_intercept, solver, options, warm=None, n_jobs=None):
    """Solve one problem per target on a shared design; returns ``(results, solver_name)``.

    ``warm`` is a list (one per target) of dicts ``{w, intercept, alpha}`` or None.
    The problems run on :func:`cdlearn.multiclass.run_many`'s thread pool (the
    mechanism of ``cdlearn.solve``'s one-vs-rest), ``n_jobs`` threads in
    scikit-learn's convention (None: 1, -1: all cores).
    """
    method = resolve_solver(design, targets[0], solver=solver, loss=loss, penalty=penalty,
                            lam=lam, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                            sample_weight=sample_weights[0], options=options)
    prebuild(design, method)
    kws = []
    for k, y in enumerate(targets):
        kw = dict(loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio, solver=method,
                  fit_intercept=fit_intercept, sample_weight=sample_weights[k], **options)
        if warm is not None and warm[k] is not None:
            kw.update(warm_start_kwargs(design, y, sample_weights[k], solver=method, loss=loss,
                                        **warm[k]))
        kws.append(kw)
    results = run_many(design, targets, kws, n_jobs=1 if n_jobs is None else n_jobs)
    return results, method


class CDEstimatorBase(BaseEstimator):
    """Parameters and helpers common to the cdlearn estimators (not public)."""

    def _solve_options(self) -> dict:
        return dict(sampling=self.sampling, batch_size=self.batch_size, tol=self.tol,
                    max_epochs=self.max_iter, seed=seed_from(self.random_state),
                    verbose=bool(self.verbose))

    def _warm_list(self, n_problems: int, n_features: int):
        """Previous solutions as warm starts (None when not warm starting)."""
        if not self.warm_start or not hasattr(self, "coef_"):
            return None
        coef = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))
        if coef.shape != (n_problems, n_features):
            return None
        b = np.broadcast_to(np.asarray(self.intercept_, dtype=np.float64), (n_problems,))
        alphas = getattr(self, "_dual_alphas", None) or [None] * n_problems
        return [dict(w=coef[k], intercept=float(b[k]), alpha=alphas[k])
                for k in range(n_problems)]

    #: float32 X gives float32 ``coef_``/``intercept_``, as scikit-learn's estimator
    #: does (its LinearSVC and LogisticRegressionCV return float64: False there)
    _float32_coef = True

    def _coef_dtype(self, X) -> np.dtype:
        if self._float32_coef and X.dtype == np.float32:
            return np.dtype(np.float32)
        return np.dtype(np.float64)

    def _store_results(self, results, method):
        self._dual_alphas = [None if r.alpha is None else r.alpha for r in results]
        self.solver_ = method

    def _linear_scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES, reset=False)
        coef = np.asarray(self.coef_)
        return safe_sparse_dot(X, coef.T, dense_output=True) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def check_ratio(name, value) -> float:
    value = check_positive(name, value, allow_zero=True)
    if value > 1:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


def check_bool(name, value):
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)
