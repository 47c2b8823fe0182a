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
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ..api import auto_options, auto_solver, cd_options_requested, make_problem
from ..data import check_choice, check_int, check_positive, check_seed
from ..distributed import current_engine, refuse_distributed
from ..multiclass import n_workers, prebuild, run_many
from ..paths import resolve_solver, warm_start_kwargs
from ..solvers import SOLVERS
from ..solvers.parallel import usable_threads

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
        first warns (``ConvergenceWarning``). ``tol=0`` (not for LinearSVC, as in
        scikit-learn) drops the coefficient test and asks for the smallest gap,
        ``1e-15 · P(0)``: in practice the fit runs to ``max_iter``.
"""


def gap_tol(tol) -> float:
    """The relative duality gap an estimator's ``tol`` asks for (before its coefficient test).

    ``tol=0`` (scikit-learn's "run to ``max_iter``") asks for :data:`MIN_GAP_TOL`.
    """
    return max(GAP_TOL_RATIO * check_positive("tol", tol, allow_zero=True), MIN_GAP_TOL)


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
                 fit_intercept, solver, options, warm=None, n_jobs=None, dual=None,
                 not_converged=None):
    """Solve one problem per target on a shared design; returns ``(results, solver_name)``.

    ``warm`` is a list (one per target) of dicts ``{w, intercept, alpha}`` or None.
    ``dual`` (scikit-learn's formulation choice) restricts ``solver="auto"``:
    True runs dual CD, False a primal method (primal CD where the face-off
    would have chosen dual CD), None leaves the choice to ``auto``.
    The problems run on :func:`cdlearn.multiclass.run_many`'s thread pool (the
    mechanism of ``cdlearn.solve``'s one-vs-rest), ``n_jobs`` threads in
    scikit-learn's convention (None: 1, -1: all cores), each problem running on
    ``n_jobs // concurrent problems`` threads of its own. ``not_converged``: see
    :func:`rewarn` (one warning per call). Inside ``cdlearn.distributed.fit_on``
    the problems run on its Dask client instead (the method is the engine's).
    """
    engine = current_engine()
    if engine is not None:
        results = engine.run(design, targets, sample_weights, loss=loss, penalty=penalty,
                             lam=lam, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                             options=options, warm=warm,
                             estimator=type(getattr(not_converged, "__self__", None)).__name__)
        return results, results[0].solver
    method = resolve_solver(design, targets[0], solver=solver, loss=loss, penalty=penalty,
                            lam=lam, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                            sample_weight=sample_weights[0], options=options)
    if dual is True and solver == "auto":
        method = "dual-cd"
    elif dual is False and method == "dual-cd":
        method = "primal-cd"
    n_jobs = 1 if n_jobs is None else n_jobs
    # the threads asked for are shared by the concurrent problems: each runs its
    # parallel path (τ-nice minibatches, newton-cg) on its share, never oversubscribing
    threads = max(1, n_workers(n_jobs, 1 << 30) // n_workers(n_jobs, len(targets)))
    if (solver == "auto" and dual is None and threads > 1
            and method in ("primal-cd", "dual-cd") and not cd_options_requested(options)):
        # auto on the problem's threads: a parallel method where the model predicts it
        # faster (cdlearn.api.parallel_choice), as cdlearn.solve(n_threads=...) does
        problem = make_problem(design, targets[0], loss=loss, penalty=penalty, lam=lam,
                               l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                               sample_weight=sample_weights[0])
        p_threads = usable_threads(threads)
        method, reason = auto_solver(problem, n_threads=p_threads)
        options = {**options, **auto_options(problem, reason, p_threads)}
    prebuild(design, method)
    kws = []
    for k, y in enumerate(targets):
        kw = dict(loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio, solver=method,
                  fit_intercept=fit_intercept, sample_weight=sample_weights[k], **options)
        if warm is not None and warm[k] is not None:
            kw.update(warm_start_kwargs(design, y, sample_weights[k], solver=method, loss=loss,
                                        **warm[k]))
        kws.append(kw)
    for kw in kws:
        kw["n_threads"] = threads
    if not_converged is None:
        return run_many(design, targets, kws, n_jobs=n_jobs), method
    results = rewarn(lambda: run_many(design, targets, kws, n_jobs=n_jobs), not_converged, method)
    return results, method


def rewarn(run, not_converged, method):
    """``run()`` (a list of results) with its solvers' ConvergenceWarnings replaced by one
    whose text is ``not_converged(result, method)`` (scikit-learn's, which its tests
    match), followed by the solver's own message; for a problem stopped by ``max_epochs``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        results = run()
    stopped = [r for r in results if not r.converged and r.message.startswith("max_epochs=")]
    if stopped:
        warnings.warn(f"{not_converged(stopped[0], method)} (cdlearn: {method}: "
                      f"{stopped[0].message})", ConvergenceWarning, stacklevel=4)
    return results


#: scikit-learn's ConvergenceWarning text for Lasso and ElasticNet (its coordinate descent)
ENET_NOT_CONVERGED = ("Objective did not converge. You might want to increase the number of "
                      "iterations, check the scale of the features or consider increasing "
                      "regularisation.")


def check_warm_coef(coef):
    """A warm start's ``coef_`` must be finite (scikit-learn's sag raises the same text)."""
    if not np.all(np.isfinite(coef)):
        raise ValueError("Floating-point under-/overflow: warm_start=True with a coef_ that "
                         "has NaN or infinite entries; fit with warm_start=False")


class CDEstimatorBase(BaseEstimator):
    """Parameters and helpers common to the cdlearn estimators (not public)."""

    #: the epochs of ``max_iter=None`` where an estimator allows it (Ridge); None refuses it
    _default_max_iter = None
    #: scikit-learn's bounds (``_parameter_constraints``): ``max_iter >= 1`` and
    #: ``tol >= 0`` but for the classifiers (``max_iter=0``: the initial point) and
    #: LinearSVC (``tol > 0``)
    _min_max_iter = 1
    _tol_may_be_zero = True
    #: False: the fit runs on one machine only (it raises inside cdlearn.distributed.fit_on)
    _distributed_fit = True

    def _solve_options(self) -> dict:
        if not self._distributed_fit:
            refuse_distributed(type(self).__name__)
        tol = check_positive("tol", self.tol, allow_zero=self._tol_may_be_zero)
        return dict(sampling=self.sampling, batch_size=self.batch_size,
                    # tol=0 runs to max_iter unless the gap reaches MIN_GAP_TOL
                    tol=gap_tol(tol), coef_tol=tol if tol > 0 else None,
                    max_epochs=check_int("max_iter", self._default_max_iter
                                         if self.max_iter is None else self.max_iter,
                                         low=self._min_max_iter),
                    seed=seed_from(self.random_state), verbose=bool(self.verbose))

    def _warm_list(self, n_problems: int, n_features: int):
        """Previous solutions as warm starts (None when not warm starting)."""
        if not self.warm_start or not hasattr(self, "coef_"):
            return None
        coef = np.atleast_2d(dense_coef(self.coef_).astype(np.float64))
        if coef.shape != (n_problems, n_features):
            return None
        check_warm_coef(coef)
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
        coef = self.coef_ if sp.issparse(self.coef_) else np.asarray(self.coef_)
        return np.asarray(safe_sparse_dot(X, coef.T, dense_output=True)) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def dense_coef(coef) -> np.ndarray:
    """``coef_`` as an array, also after :meth:`SparseCoefMixin.sparsify`."""
    return coef.toarray() if sp.issparse(coef) else np.asarray(coef)


def sparse_rows(coef):
    """``coef`` (2-D) in CSR, in scikit-learn's configured container (``sparse_interface``)."""
    if get_config().get("sparse_interface", "spmatrix") == "sparray":
        return sp.csr_array(coef)
    return sp.csr_matrix(coef)


class SparseCoefMixin:
    """scikit-learn's ``sparsify``/``densify`` of a linear classifier's ``coef_``."""

    def sparsify(self):
        """Store ``coef_`` as a CSR matrix (predictions are unchanged); returns self."""
        check_is_fitted(self, msg=f"Estimator, {type(self).__name__}, must be fitted "
                                  "before sparsifying.")
        self.coef_ = sparse_rows(self.coef_)
        return self

    def densify(self):
        """Store ``coef_`` as a numpy array again (after :meth:`sparsify`); returns self."""
        check_is_fitted(self, msg=f"Estimator, {type(self).__name__}, must be fitted "
                                  "before densifying.")
        if sp.issparse(self.coef_):
            self.coef_ = self.coef_.toarray()
        return self


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


PRECOMPUTE_DOC = """    precompute : bool, "auto" or array, default=False
        True runs ``solver="gram-cd"``: CD on the Gram matrix ``XᵀSX/n``
        formed once (BLAS), O(d²) per epoch instead of O(nnz), as scikit-learn's.
        A Gram array (scikit-learn's: ``Σ s_i x̃_i x̃_iᵀ`` of the centred,
        weighted X) is checked as scikit-learn checks it (:func:`gram_precompute`)
        and used as it is. Without an l1 part (``alpha=0``) True runs
        ``"newton-cd"`` on the Gram matrix (a factorisation: exact where CD
        stalls near interpolation). False and "auto": the method ``solver="auto"``
        chooses (ws-cd for an l1 part, which never forms the Gram matrix).
"""


def gram_precompute(precompute, X, sample_weight, fit_intercept):
    """scikit-learn's handling of a Gram array given as ``precompute``: the array once checked.

    Checked as scikit-learn checks it: one entry against the centred,
    ``√s``-scaled X (ValueError if it differs); with an intercept and X not
    centred it is recomputed (True) with scikit-learn's UserWarning; sparse X
    ignores it (False). Other values are returned as they are.
    """
    if not hasattr(precompute, "__array__"):
        return precompute
    if sp.issparse(X):
        return False
    gram = np.asarray(precompute)
    d = X.shape[1]
    if gram.shape != (d, d):
        raise ValueError(f"precompute: a Gram matrix must have shape {(d, d)}, got {gram.shape}")
    offset = sample_weight @ X / sample_weight.sum() if fit_intercept else np.zeros(d)
    if fit_intercept and not np.allclose(offset, 0.0):
        warnings.warn("Gram matrix was provided but X was centered to fit intercept: "
                      "recomputing Gram matrix.", UserWarning, stacklevel=4)
        return True
    f1 = d // 2
    f2 = min(f1 + 1, d - 1)
    root = np.sqrt(sample_weight).astype(X.dtype)
    expected = np.dot(root * (X[:, f1] - offset[f1]), root * (X[:, f2] - offset[f2]))
    rtol = max(1e-4 if t == np.float32 else 1e-7 for t in (gram.dtype, expected.dtype))
    if not np.isclose(expected, gram[f1, f2], rtol=rtol, atol=1e-5):
        raise ValueError("Gram matrix passed in via 'precompute' parameter did not pass "
                         "validation when a single element was checked - please check that "
                         f"it was computed properly. For element ({f1},{f2}) we computed "
                         f"{expected} but the user-supplied value was {gram[f1, f2]}.")
    return gram


def precompute_solver(precompute, solver, l1_part=True):
    """``(solver, options)`` for scikit-learn's ``precompute`` (see :data:`PRECOMPUTE_DOC`).

    Without an l1 part (``alpha=0``, ``l1_ratio=0``) the Gram problem is a linear system:
    newton-cd factorises it (exact), where CD on it stalls near interpolation
    (scikit-learn's ``test_enet_ols_consistency[*-True]``: squared error ≤ 1e-19).
    """
    if isinstance(precompute, str):
        check_choice("precompute", precompute, ("auto",))
        return solver, {}
    gram = None
    if hasattr(precompute, "__array__"):
        gram, precompute = precompute, True
    if not isinstance(precompute, bool | np.bool_):
        raise ValueError("precompute must be True, False, 'auto' or a Gram matrix (array)")
    if not precompute:
        return solver, {}
    if solver not in ("auto", "gram-cd", "newton-cd"):
        raise ValueError(f"precompute=True runs solver='gram-cd'; it cannot be "
                         f"combined with solver={solver!r}")
    if not l1_part and solver != "gram-cd":
        return "newton-cd", {"hessian": "gram"}
    return "gram-cd", {} if gram is None else {"gram": gram}
