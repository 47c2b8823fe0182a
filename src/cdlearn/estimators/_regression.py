"""Linear regression estimators: Lasso, ElasticNet, Ridge.

All minimise ``1/n Σ s_i ½(x_iᵀw + b - y_i)² + λ g(w)`` with
:func:`cdlearn.solve`; each docstring gives its α → λ mapping, chosen so that
the objective is scikit-learn's up to a positive constant factor.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import RegressorMixin
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import validate_data

from ..data import as_design, check_positive, check_sample_weight
from ._base import (
    ACCEPT_SPARSE,
    DTYPES,
    ENET_NOT_CONVERGED,
    PRECOMPUTE_DOC,
    SELECTION_DOC,
    TOL_DOC,
    CDEstimatorBase,
    check_bool,
    check_copy_X,
    check_ratio,
    check_solver,
    gram_precompute,
    precompute_solver,
    run_problems,
    selection_sampling,
    sparse_rows,
)


def enet_dual_gap(X, y, sw, w, b, lam, l1_ratio, *, fit_intercept, positive=False) -> float:
    """scikit-learn's ``dual_gap_`` of ElasticNet/Lasso at ``(w, b)``, in the ``1/n`` scaling.

    The dual point is the weighted residual ``R = √s (y - Xw - b)``, scaled
    into the dual feasible set (scikit-learn's "formulation A"; the Lasso's
    in the order of operations of scikit-learn's ``test_lasso_dual_gap``, a
    gap of 1e-13 being a difference of numbers of order 1); without an l1 part formulation B, and without a penalty the
    squared norm of the gradient ``X̃ᵀR`` (no dual). ``X̃``, ``ỹ`` are centred with the weighted
    means when there is an intercept: with ``b`` at its minimiser ``Σ s r = 0``,
    so ``X̃ᵀR = Xᵀ(√s R)``.
    """
    n = X.shape[0]
    lam = 0.0 if lam is None else lam
    l1, l2 = lam * l1_ratio * n, lam * (1.0 - l1_ratio) * n
    def dot(A, v):  # in X's dtype, as scikit-learn's: a float32 X is never copied to float64
        return np.asarray(safe_sparse_dot(A, v.astype(X.dtype, copy=False),
                                          dense_output=True), dtype=np.float64).ravel()

    r = y - dot(X, w) - b
    root = np.sqrt(sw)
    R = root * r
    XtR = dot(X.T, root * R)
    if fit_intercept:  # X̃, ỹ centred by their weighted means
        XtR -= dot(X.T, sw) / sw.sum() * (root @ R)
        y = y - (sw @ y) / sw.sum()
    y = root * y
    if l1_ratio == 1.0 and lam > 0:  # Lasso: θ = R / max(1, ‖X̃ᵀR‖∞ / nλ)
        primal = 0.5 * np.mean(R ** 2) + lam * np.sum(np.abs(w))
        scale = np.max((XtR if positive else np.abs(XtR)) / (n * lam), initial=0.0)
        theta = R / scale if scale > 1 else R
        return float(primal - 0.5 * (np.mean(y ** 2) - np.mean((y - theta) ** 2)))
    Ry = R @ y
    R2, w2 = R @ R, w @ w
    if l1 == 0.0:
        norm = XtR @ XtR
        if l2 == 0.0:
            return float(norm / n)
        return float((R2 + 0.5 * l2 * w2 - Ry + norm / (2 * l2)) / n)
    XtA = XtR - l2 * w
    dual_norm = XtA.max(initial=0.0) if positive else np.abs(XtA).max(initial=0.0)
    scale = l1 / dual_norm if dual_norm > l1 else 1.0
    primal = 0.5 * (R2 + l2 * w2) + l1 * np.abs(w).sum()
    dual = -0.5 * scale ** 2 * (R2 + l2 * w2) + scale * Ry
    return float((primal - dual) / n)


def _trusted_input(X, y):
    """``(X, y)`` for ``fit(check_input=False)``: scikit-learn's "the caller guarantees
    valid input" (validation skipped: no scan for NaN/inf, no copy; y cast to X's
    dtype). What costs O(1) is still checked: X must be a 2-d float64/float32 array
    (any memory layout: cdlearn's CD needs none, where scikit-learn's requires
    Fortran order) or a CSC/CSR matrix of those dtypes."""
    if sp.issparse(X):
        ok = X.format in ACCEPT_SPARSE and X.dtype in DTYPES
    else:
        ok = isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype in DTYPES
    if not ok:
        raise ValueError("check_input=False: X must be a 2-d float64 or float32 array or a "
                         "CSC/CSR matrix of those dtypes; got "
                         f"{type(X).__name__} of dtype {getattr(X, 'dtype', None)}")
    return X, np.asarray(y, dtype=X.dtype)


class _CDRegressor(RegressorMixin, CDEstimatorBase):
    """Least-squares regressor on :func:`cdlearn.solve`; subclasses give the penalty."""

    #: scikit-learn's Lasso/ElasticNet rescale sample weights to sum to n_samples
    _normalize_weights = False
    #: dual_gap_ is scikit-learn's (:func:`enet_dual_gap`), not the solver's certificate
    _sklearn_gap = False

    def _objective(self, n_samples):
        """(penalty, λ, l1_ratio) of cdlearn's objective."""
        raise NotImplementedError

    def _objectives(self, n_samples, n_targets):
        """One :meth:`_objective` per target (Ridge takes one alpha per target)."""
        return [self._objective(n_samples)] * n_targets

    def _method(self, X, sample_weight):
        """(solver, options of ``solve``) from the estimator's parameters."""
        check_copy_X(self.copy_X)
        return check_solver(self.solver, {}), self._solve_options()

    def fit(self, X, y, sample_weight=None):
        """Fit the model; ``sample_weight`` are per-sample weights ``s_i``."""
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight, check_input=True):
        check_bool("fit_intercept", self.fit_intercept)
        check_bool("warm_start", self.warm_start)
        if check_bool("check_input", check_input):
            X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES,
                                 y_numeric=True, multi_output=True)
        else:
            X, y = _trusted_input(X, y)
            self.n_features_in_ = X.shape[1]
        design = as_design(X)
        n = design.n_samples
        sw = check_sample_weight(sample_weight, n)
        if self._normalize_weights:
            sw = sw * (n / sw.sum())
        Y = np.asarray(y, dtype=np.float64).reshape(n, -1)
        targets = [np.ascontiguousarray(Y[:, k]) for k in range(Y.shape[1])]
        objectives = self._objectives(n, len(targets))
        solver, options = self._method(X, sw)
        warm = self._warm_list(len(targets), design.n_features)
        results, methods = [None] * len(targets), []
        for objective in dict.fromkeys(objectives):  # the targets sharing one objective
            penalty, lam, l1_ratio = objective
            ks = [k for k, o in enumerate(objectives) if o == objective]
            some, method = run_problems(
                design, [targets[k] for k in ks], [sw] * len(ks), loss="squared",
                penalty=penalty, lam=lam, l1_ratio=l1_ratio, fit_intercept=self.fit_intercept,
                solver=self._solver_for(penalty, solver), options=options,
                warm=None if warm is None else [warm[k] for k in ks],
                not_converged=self._not_converged,
            )
            for k, r in zip(ks, some, strict=True):
                results[k] = r
            methods.append(method)
        self._store_results(results, methods[0])
        self._set_coef(results, self._coef_dtype(X), np.ndim(y))
        if self._sklearn_gap:
            gaps = [enet_dual_gap(X, targets[k], sw, r.w, r.intercept, *objectives[k][1:],
                                  fit_intercept=self.fit_intercept, positive=bool(self.positive))
                    for k, r in enumerate(results)]
            self.dual_gap_ = gaps[0] if len(gaps) == 1 else np.array(gaps)
        return self

    def _solver_for(self, penalty, solver):
        """The method for one objective (Ridge: alpha=0 needs another one)."""
        return solver

    def _not_converged(self, result, method):
        """scikit-learn's ConvergenceWarning text (its tests match it)."""
        return f"{ENET_NOT_CONVERGED} Duality gap: {result.gap:.3e}"

    def _set_coef(self, results, dtype, y_ndim):
        """scikit-learn's attribute shapes: one target (y of shape (n,) or (n, 1)) gives
        ``coef_`` (d,), scalar ``n_iter_``/``dual_gap_``, and ``intercept_`` a numpy
        scalar for a 1-d y, shape (1,) for a column; no intercept is ``0.0``."""
        coef = np.vstack([r.w for r in results]).astype(dtype, copy=False)
        b = np.array([r.intercept for r in results], dtype=dtype)
        if len(results) == 1:
            self.coef_ = coef[0]
            self.n_iter_ = int(results[0].n_epochs)
            self.dual_gap_ = results[0].gap
            self.trace_ = results[0].trace
            b = b[0] if y_ndim == 1 else b
        else:
            self.coef_ = coef
            self.n_iter_ = np.array([r.n_epochs for r in results])
            self.dual_gap_ = np.array([r.gap for r in results])
            self.trace_ = [r.trace for r in results]
        self.intercept_ = b if self.fit_intercept else 0.0

    def predict(self, X):
        """``X @ coef_.T + intercept_``."""
        return self._linear_scores(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


_COMMON_PARAMS = """
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (solved exactly, never a penalised column).
""" + TOL_DOC + """    max_iter : int, default=1000
        Maximum number of epochs (``max_epochs`` of :func:`cdlearn.solve`).
    warm_start : bool, default=False
        Start from the previous ``coef_``/``intercept_`` (and dual variables).
    random_state : int, RandomState or None, default=None
        Seed of the coordinate sampling.
    copy_X : bool, default=True
        Accepted for scikit-learn compatibility: cdlearn never modifies X.
    solver : str, default="auto"
        ``"auto"`` (:func:`cdlearn.api.auto_solver`), or a method name such as
        ``"primal-cd"``, ``"dual-cd"``, ``"newton-cd"``, ``"ws-cd"``.
    sampling : str or None, default=None
        None: the method's default (:func:`cdlearn.api.default_sampling`);
        ``"uniform"``, ``"importance"`` (face-off eq. (14)), ``"power"``,
        ``"cyclic"`` or ``"shuffle"``.
    batch_size : int, default=1
        τ of τ-nice minibatches (with ``sampling="uniform"``).
    verbose : int, default=0
        Progress bar and solver choice.

    Attributes
    ----------
    coef_ : (n_features,) or (n_targets, n_features)
    intercept_ : float or (n_targets,)
    n_iter_ : int or (n_targets,) epochs run
    dual_gap_ : float or (n_targets,) final duality gap (Lasso, ElasticNet: scikit-learn's,
        at the residual as dual point; Ridge: the solver's certificate)
    solver_ : str, the method run
    trace_ : :class:`cdlearn.Trace` (a list for several targets)
    n_features_in_ : int
"""


class _SparseRegressor(_CDRegressor):
    """Lasso and ElasticNet: scikit-learn's ``precompute`` and ``selection``."""

    _sklearn_gap = True

    def fit(self, X, y, sample_weight=None, check_input=True):
        """Fit the model; ``sample_weight`` are per-sample weights ``s_i``.

        ``check_input=False`` skips the validation of X and y (scikit-learn's
        meaning: the caller guarantees a finite float array or CSC/CSR matrix and
        a numeric y; see :func:`_trusted_input`). X is never modified, whatever
        ``copy_X``.
        """
        return self._fit(X, y, sample_weight, check_input)

    def _method(self, X, sample_weight):
        solver, options = super()._method(X, sample_weight)
        precompute = gram_precompute(self.precompute, X, sample_weight, self.fit_intercept)
        positive = check_bool("positive", self.positive)
        penalty, _, ratio = self._objective(X.shape[0])
        l1_part = penalty == "l1" or (penalty == "elastic_net" and ratio > 0)
        # newton-cd takes no constraint: with positive=True gram-cd runs either way
        gram_solver, extra = precompute_solver(precompute, solver, l1_part or positive)
        options["sampling"] = selection_sampling(self.selection, self.sampling)
        if positive:
            options["positive"] = True
        solver = gram_solver
        options.update(extra)
        return solver, options

    @property
    def sparse_coef_(self):
        """``coef_`` as a CSR matrix of shape (1 or n_targets, n_features), as scikit-learn's."""
        return sparse_rows(np.atleast_2d(self.coef_))


class Lasso(_SparseRegressor):
    __doc__ = """Lasso: ``(1/2n) Σ s_i (y_i - x_iᵀw - b)² + α‖w‖₁`` by coordinate descent.

    Mapping: squared loss ``½(z - y)²``, ``penalty="l1"``, ``λ = α``; sample
    weights are rescaled to sum to ``n_samples``, as scikit-learn does, so the
    objective equals ``sklearn.linear_model.Lasso``'s.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (0: no penalty).
    positive : bool, default=False
        Constrain the coefficients to ``w ≥ 0`` (solvers "ws-cd", the default
        under "auto", and "primal-cd"; the duality gap is that of the
        constrained problem).
    """ + PRECOMPUTE_DOC + SELECTION_DOC + _COMMON_PARAMS

    _normalize_weights = True

    def __init__(self, alpha=1.0, *, fit_intercept=True, precompute=False, copy_X=True,
                 max_iter=1000, tol=1e-4, warm_start=False, random_state=None,
                 selection="cyclic", solver="auto", sampling=None, batch_size=1, verbose=0,
                 positive=False):
        self.alpha = alpha
        self.positive = positive
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.selection = selection
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.verbose = verbose

    def _objective(self, n_samples):
        alpha = check_positive("alpha", self.alpha, allow_zero=True)
        return ("l1", alpha, 1.0) if alpha > 0 else ("none", None, 1.0)


class ElasticNet(_SparseRegressor):
    __doc__ = """Elastic net: ``(1/2n) Σ s_i (y_i - x_iᵀw - b)² + αρ‖w‖₁ + α(1-ρ)/2 ‖w‖²``.

    Mapping: squared loss ``½(z - y)²``, ``penalty="elastic_net"``,
    ``λ = α``, ``l1_ratio = ρ``; sample weights are rescaled to sum to
    ``n_samples``, as scikit-learn does (same objective as
    ``sklearn.linear_model.ElasticNet``).

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (0: no penalty).
    l1_ratio : float in [0, 1], default=0.5
        ρ, the l1 share of the penalty.
    positive : bool, default=False
        Constrain the coefficients to ``w ≥ 0`` (as :class:`Lasso`).
    """ + PRECOMPUTE_DOC + SELECTION_DOC + _COMMON_PARAMS

    _normalize_weights = True

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, fit_intercept=True, precompute=False,
                 max_iter=1000, copy_X=True, tol=1e-4, warm_start=False, random_state=None,
                 selection="cyclic", solver="auto", sampling=None, batch_size=1, verbose=0,
                 positive=False):
        self.alpha = alpha
        self.positive = positive
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.selection = selection
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.verbose = verbose

    def _objective(self, n_samples):
        alpha = check_positive("alpha", self.alpha, allow_zero=True)
        rho = check_ratio("l1_ratio", self.l1_ratio)
        if alpha == 0:
            return "none", None, rho
        if rho == 1:
            return "l1", alpha, rho
        if rho == 0:
            return "l2", alpha, rho
        return "elastic_net", alpha, rho


class Ridge(_CDRegressor):
    __doc__ = """Ridge: ``Σ s_i (y_i - x_iᵀw - b)² + α‖w‖²`` by coordinate descent.

    Mapping: dividing by ``2n``, squared loss ``½(z - y)²``,
    ``penalty="l2"`` (``λ/2‖w‖²``), ``λ = α / n``; raw sample weights, as
    scikit-learn's Ridge (same minimiser as ``sklearn.linear_model.Ridge``,
    objective scaled by ``1/(2n)``).

    Parameters
    ----------
    alpha : float or array of shape (n_targets,), default=1.0
        Regularisation strength (0: no penalty); an array gives one per target.
    max_iter : int or None, default=1000
        None: 1000 epochs (scikit-learn's None is "the solver's default").
    solver : str, default="auto"
        cdlearn's methods as below, or scikit-learn's names mapped: "svd" and
        "cholesky" (direct) → newton-cd in Gram form (for the squared loss its
        model is the problem: one Cholesky solve); "lsqr", "sparse_cg" →
        newton-cg (conjugate gradients on the normal equations); "sag",
        "saga" (stochastic, per sample) → dual CD (SDCA); "lbfgs" needs
        ``positive=True`` in scikit-learn and is rejected likewise. With
        ``alpha=0`` scikit-learn's names run newton-cd; ``solver_`` is then
        the name given, as scikit-learn's.
    positive : bool, default=False
        Constrain the coefficients to ``w ≥ 0``: projected primal CD (ws-cd,
        whose coordinate steps clip at 0; with ``alpha=0`` primal-cd, i.e.
        non-negative least squares), certified by the duality gap of the
        constrained problem (the optimality violation without a penalty). As
        in scikit-learn, only ``solver="auto"`` or ``"lbfgs"`` (mapped to that
        method) may be combined with it.
    """ + _COMMON_PARAMS

    _default_max_iter = 1000  # max_iter=None: scikit-learn's "the solver's default"

    def __init__(self, alpha=1.0, *, fit_intercept=True, copy_X=True, max_iter=1000, tol=1e-4,
                 solver="auto", random_state=None, warm_start=False, sampling=None,
                 batch_size=1, verbose=0, positive=False):
        self.alpha = alpha
        self.positive = positive
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.verbose = verbose

    def _objective(self, n_samples, alpha=None, name="alpha"):
        alpha = check_positive(name, self.alpha if alpha is None else alpha, allow_zero=True)
        return ("l2", alpha / n_samples, 0.0) if alpha > 0 else ("none", None, 0.0)

    def _objectives(self, n_samples, n_targets):
        if np.ndim(self.alpha) == 0:
            return super()._objectives(n_samples, n_targets)
        alphas = np.ravel(self.alpha)
        if alphas.size not in (1, n_targets):
            raise ValueError(f"Number of targets and number of penalties do not correspond: "
                             f"{alphas.size} != {n_targets}")
        alphas = np.broadcast_to(alphas, (n_targets,))
        return [self._objective(n_samples, a.item(), f"alpha[{k}]") for k, a in enumerate(alphas)]

    def _solver_for(self, penalty, solver):
        # scikit-learn's solvers all take alpha=0; newton-cg and dual CD need the l2 part
        if penalty == "none" and self.solver in RIDGE_SOLVERS:
            return "newton-cd"
        return solver

    def _store_results(self, results, method):
        super()._store_results(results, method)
        if self.solver in RIDGE_SOLVERS:  # scikit-learn's solver_: the name asked for
            self.solver_ = self.solver

    def _not_converged(self, result, method):
        name = self.solver if self.solver in RIDGE_SOLVERS else method
        return f"{name} did not converge after {result.n_epochs} iterations."

    def _method(self, X, sample_weight):
        check_copy_X(self.copy_X)
        positive = check_bool("positive", self.positive)
        # scikit-learn's own restrictions, in its words
        if self.solver == "lbfgs" and not positive:
            raise ValueError("'lbfgs' solver can be used only when positive=True. Please use "
                             "another solver.")
        if positive and self.solver not in ("auto", "lbfgs"):
            raise ValueError(f"solver='{self.solver}' does not support positive fitting. Please"
                             " set the solver to 'auto' or 'lbfgs', or set `positive=False`")
        if positive:  # auto: ws-cd (primal-cd without a penalty), whose steps honour w ≥ 0
            return "auto", {**self._solve_options(), "positive": True}
        solver = check_solver(self.solver, RIDGE_SOLVERS)
        options = self._solve_options()
        if self.solver in ("svd", "cholesky"):
            options["hessian"] = "gram"
        return solver, options


#: scikit-learn's Ridge solvers → cdlearn's methods (see Ridge's docstring)
RIDGE_SOLVERS = {"svd": "newton-cd", "cholesky": "newton-cd", "lsqr": "newton-cg",
                 "sparse_cg": "newton-cg", "sag": "dual-cd", "saga": "dual-cd"}
