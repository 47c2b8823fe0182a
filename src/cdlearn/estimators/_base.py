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

from ..data import check_choice, check_int, check_positive, check_seed
from ..multiclass import prebuild, run_many
from ..paths import resolve_solver, warm_start_kwargs
from ..solvers import SOLVERS

ACCEPT_SPARSE = ("csr", "csc")
#: an estimator's ``tol`` ε stops a fit when the duality gap is ≤ GAP_TOL_RATIO·ε·P(0)
#: and bounds the coefficients' error to ε·‖coef_‖∞ (``coef_tol``, :mod:`cdlearn.solvers.stopping`)
GAP_TOL_RATIO = 1e-2
#: ... but never below this relative gap, about float64's rounding of P itself: a tighter
#: target is unreachable and would run to max_iter (tol=1e-15 asks for this gap)
MIN_GAP_TOL = 1e-15
DTYPES = (np.float64, np.float32)
#: the ``tol`` entry of the estimators' docstrings (the rule of :meth:`_solve_options`)
TOL_DOC = """    tol : float, default=1e-4
        Relative accuracy of ``coef_``: stop when the duality gap is ≤
        ``tol/100 · P(0)`` (cdlearn's objective) and also small enough that
        ``‖coef_ − w*‖∞ ≤ tol · ‖coef_‖∞`` for the exact minimiser ``w*``, by
        ``‖w − w*‖² ≤ 2 gap / μ`` with μ the objective's strong convexity on the
        support (:mod:`cdlearn.solvers.stopping`). A fit stopped by ``max_iter``
        first warns (``ConvergenceWarning``).
"""


def gap_tol(tol) -> float:
    """The relative duality gap an estimator's ``tol`` asks for (before its coefficient test).

    The multinomial model stops on this gap alone: its coefficient test
    (:mod:`cdlearn.solvers.stopping`) is written for one weight vector.
    """
    return max(GAP_TOL_RATIO * check_positive("tol", tol), MIN_GAP_TOL)


def seed_from(random_state):
    """An int seed for :func:`cdlearn.solve` from a scikit-learn ``random_state``.

    The seed rule of :func:`cdlearn.data.check_seed`: a negative int raises.
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return check_seed("random_state", random_state)
    try:
        rng = check_random_state(random_state)
    except ValueError as exc:
        raise ValueError(f"random_state must be None, a non-negative integer or a "
                         f"numpy RandomState, got {random_state!r}") from exc
    return int(rng.randint(np.iinfo(np.int32).max))


def run_problems(design, targets, sample_weights, *, loss, penalty, lam, l1_ratio,
                 fit_intercept, solver, options, warm=None, n_jobs=None, dual=None):
    """Solve one problem per target on a shared design; returns ``(results, solver_name)``.

    ``warm`` is a list (one per target) of dicts ``{w, intercept, alpha}`` or None.
    ``dual`` (scikit-learn's formulation choice) restricts ``solver="auto"``:
    True runs dual CD, False a primal method (primal CD where the face-off
    would have chosen dual CD), None leaves the choice to ``auto``.
    The problems run on :func:`cdlearn.multiclass.run_many`'s thread pool (the
    mechanism of ``cdlearn.solve``'s one-vs-rest), ``n_jobs`` threads in
    scikit-learn's convention (None: 1, -1: all cores).
    """
    method = resolve_solver(design, targets[0], solver=solver, loss=loss, penalty=penalty,
                            lam=lam, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                            sample_weight=sample_weights[0], options=options)
    if dual is True and solver == "auto":
        method = "dual-cd"
    elif dual is False and method == "dual-cd":
        method = "primal-cd"
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

    #: the epochs of ``max_iter=None`` where an estimator allows it (Ridge); None refuses it
    _default_max_iter = None

    def _solve_options(self) -> dict:
        tol = check_positive("tol", self.tol)
        return dict(sampling=self.sampling, batch_size=self.batch_size,
                    tol=gap_tol(tol), coef_tol=tol,
                    max_epochs=check_int("max_iter", self._default_max_iter
                                         if self.max_iter is None else self.max_iter),
                    seed=seed_from(self.random_state), verbose=bool(self.verbose))

    def _warm_list(self, n_problems: int, n_features: int):
        """Previous solutions as warm starts (None when not warm starting)."""
        if not self.warm_start or not hasattr(self, "coef_"):
            return None
        coef = np.atleast_2d(np.asarray(self.coef_, dtype=np.float64))
        if coef.shape != (n_problems, n_features):
            return None
        # a coef_ set by the user has no intercept_: start the intercept cold, as
        # scikit-learn does (its intercept is never a warm-start variable)
        b = getattr(self, "intercept_", None)
        b = [None] * n_problems if b is None else np.broadcast_to(
            np.asarray(b, dtype=np.float64), (n_problems,))
        alphas = getattr(self, "_dual_alphas", None) or [None] * n_problems
        return [dict(w=coef[k], intercept=None if b[k] is None else float(b[k]),
                     alpha=alphas[k]) for k in range(n_problems)]

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


def check_solver(solver, aliases: dict) -> str:
    """cdlearn's method for ``solver``: one of scikit-learn's names (``aliases``) or cdlearn's."""
    if isinstance(solver, str) and solver in aliases:
        return aliases[solver]
    if isinstance(solver, str) and (solver == "auto" or solver in SOLVERS):
        return solver
    raise ValueError(f"solver={solver!r} is not supported; choose one of scikit-learn's "
                     f"{sorted(aliases)} or cdlearn's {['auto', *SOLVERS]}")


def check_copy_X(value):
    """``copy_X`` is accepted for scikit-learn compatibility: cdlearn never modifies X."""
    return check_bool("copy_X", value)


def check_intercept_scaling(value) -> float:
    """``intercept_scaling`` must be > 0; it has no effect (the intercept is unpenalised)."""
    return check_positive("intercept_scaling", value)


SELECTIONS = ("cyclic", "random")
SELECTION_DOC = """    selection : {"cyclic", "random"}, default="cyclic"
        scikit-learn's coordinate order. "cyclic": the method's own order
        (``solver="auto"`` runs ws-cd or newton-cd here, which sweep their
        coordinates cyclically; with an explicit method, ``sampling``
        decides); "random": cdlearn's ``sampling="uniform"``, coordinates drawn
        uniformly at random with ``random_state`` (under ``solver="auto"`` a
        sampling restricts the choice to primal/dual CD). Giving both "random"
        and another ``sampling`` raises ValueError.
"""


def selection_sampling(selection, sampling):
    """The ``sampling`` of :func:`cdlearn.solve` for scikit-learn's ``selection``.

    "cyclic" keeps ``sampling`` (None: the method's own order; ``solver="auto"``
    runs ws-cd or newton-cd here, which sweep their coordinates cyclically);
    "random" is cdlearn's ``sampling="uniform"`` (coordinates drawn uniformly,
    seeded by ``random_state``).
    """
    check_choice("selection", selection, SELECTIONS)
    if selection == "cyclic":
        return sampling
    if sampling not in (None, "uniform"):
        raise ValueError(f"selection='random' draws coordinates uniformly; it cannot be "
                         f"combined with sampling={sampling!r} (give one of the two)")
    return "uniform"


PRECOMPUTE_DOC = """    precompute : bool or "auto", default=False
        True forms the Gram matrix ``XᵀSX`` once: ``solver="auto"`` then runs
        ``"newton-cd"`` with its model solved in Gram form (for the squared
        loss the model is the problem itself, so this is CD on the precomputed
        Gram matrix, as scikit-learn's). False and "auto": the method
        ``solver="auto"`` chooses (ws-cd for an l1 part, which never forms the
        Gram matrix). A user-supplied Gram array is not offered (ValueError).
"""


def precompute_solver(precompute, solver):
    """``(solver, options)`` for scikit-learn's ``precompute`` (see :data:`PRECOMPUTE_DOC`)."""
    if isinstance(precompute, str):
        check_choice("precompute", precompute, ("auto",))
        return solver, {}
    if not isinstance(precompute, bool | np.bool_):
        raise ValueError("precompute must be True, False or 'auto'; a precomputed Gram "
                         "array is not offered (cdlearn forms XᵀSX itself with precompute=True)")
    if not precompute:
        return solver, {}
    if solver not in ("auto", "newton-cd"):
        raise ValueError(f"precompute=True runs solver='newton-cd' in Gram form; it cannot be "
                         f"combined with solver={solver!r}")
    return "newton-cd", {"hessian": "gram"}
