"""Cross-validated estimators: LassoCV, ElasticNetCV and LogisticRegressionCV.

Each fold solves a whole regularisation path with warm starts
(:func:`cdlearn.paths.path`); folds run in joblib worker processes with
``n_jobs`` (numba kernels hold the GIL, so threads would not overlap). The
best parameter is refitted on the full data.
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import RegressorMixin, clone
from sklearn.metrics import get_scorer, make_scorer
from sklearn.model_selection import check_cv
from sklearn.utils import check_scalar
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _raise_for_params,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.validation import validate_data

from ..data import as_design, check_positive, check_sample_weight
from ..multiclass import n_workers
from ..paths import L1_RATIO_ZERO, lambda_grid, lambda_max, path, reemit
from ..solvers.parallel import available_cores
from ._base import (
    ACCEPT_SPARSE,
    DTYPES,
    PRECOMPUTE_DOC,
    SELECTION_DOC,
    CDEstimatorBase,
    check_bool,
    check_copy_X,
    check_intercept_scaling,
    check_ratio,
    check_solver,
    precompute_solver,
    selection_sampling,
)
from ._classification import (
    LogisticRegression,
    _CDClassifier,
    _penalty,
    class_sample_weight,
    encode_labels,
    logistic_method,
)
from ._multinomial import check_multiclass_solver, fit_multinomial
from ._regression import ElasticNet, Lasso


def _captured_path(X, y, **kw):
    """:func:`path` with its warnings recorded (to re-emit them from the parent process).

    An interrupted path raises KeyboardInterrupt: a cross-validation missing
    part of a fold cannot select a parameter, so Ctrl-C stops the whole CV
    fit, as it does scikit-learn's.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = path(X, y, **kw)
    if res.interrupted:
        raise KeyboardInterrupt
    return res, [(w.category, str(w.message)) for w in caught]


def fold_threads(n_jobs, n_tasks: int) -> int:
    """Threads of each fold's solves: the cores over the folds joblib runs at once
    (``effective_n_jobs``: None is one worker, -1 every core), so that folds and their
    threads never oversubscribe the cores together."""
    return max(1, available_cores() // max(1, min(effective_n_jobs(n_jobs), n_tasks)))


def _enet_fold(X, y, sw, train, test, penalty, l1_ratio, lams, fit_intercept, options):
    X_tr, X_te = X[train], X[test]
    sw_tr = sw[train] * (len(train) / sw[train].sum())  # as Lasso/ElasticNet.fit do
    res, caught = _captured_path(X_tr, y[train], loss="squared", penalty=penalty, lams=lams,
                                 l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                                 sample_weight=sw_tr, **options)
    pred = safe_sparse_dot(X_te, res.coefs.T, dense_output=True) + res.intercepts
    mse = np.average((pred - y[test][:, None]) ** 2, axis=0, weights=sw[test])
    return mse, caught


def _enet_penalty(l1_ratio: float) -> str:
    return "l1" if l1_ratio == 1.0 else ("l2" if l1_ratio == 0.0 else "elastic_net")


class _LinearModelCV(RegressorMixin, CDEstimatorBase):
    """What LassoCV and ElasticNetCV share: grids per l1_ratio, folds × ratios on
    joblib workers, each fold one warm-started :func:`cdlearn.paths.path`, refit."""

    _distributed_fit = False  # paths and folds run on one machine

    def _l1_ratios(self) -> np.ndarray:
        """The l1_ratio grid (each subclass gives its own: LassoCV [1], ElasticNetCV its list)."""
        raise NotImplementedError

    def _n_alphas(self):
        """The int grid size, or None when ``alphas`` is an array."""
        if isinstance(self.alphas, numbers.Integral) and not isinstance(self.alphas, bool):
            return int(self.alphas)
        return None

    def _refit_estimator(self, alpha, l1_ratio):
        """The unfitted estimator of the best (α, l1_ratio) (Lasso or ElasticNet: subclasses)."""
        raise NotImplementedError

    def get_metadata_routing(self):
        """Routing of ``fit``'s ``**params`` to the CV splitter's ``split`` (scikit-learn's)."""
        return (MetadataRouter(owner=self).add_self_request(self)
                .add(splitter=check_cv(5 if self.cv is None else self.cv),
                     method_mapping=MethodMapping().add(caller="fit", callee="split")))

    def _grids(self, X, y, sw, ratios, positive):
        n_alphas = self._n_alphas()
        if n_alphas is None:
            given = self.alphas if isinstance(self.alphas, list | tuple) else np.ravel(self.alphas)
            for k, alpha in enumerate(given):  # scikit-learn's messages
                check_scalar(alpha.item() if isinstance(alpha, np.generic) else alpha,
                             f"alphas[{k}]", target_type=numbers.Real, min_val=0.0)
            alphas = np.sort(np.asarray(self.alphas, dtype=np.float64).ravel())[::-1]
            if alphas.size == 0 or np.any(alphas <= 0) or not np.all(np.isfinite(alphas)):
                raise ValueError("alphas must be a positive int or a non-empty array of "
                                 "finite values > 0")
            return np.tile(alphas, (len(ratios), 1))
        if n_alphas < 1:
            raise ValueError(f"alphas must be a positive int or an array, got {n_alphas}")
        eps = check_positive("eps", self.eps)
        design = as_design(X)
        n = design.n_samples
        grids = []
        for rho in ratios:
            if rho == 0.0:
                raise ValueError(L1_RATIO_ZERO)
            lmax = lambda_max(design, y, loss="squared", penalty=_enet_penalty(rho),
                              l1_ratio=rho, fit_intercept=self.fit_intercept,
                              sample_weight=sw * (n / sw.sum()), positive=positive)
            grids.append(lambda_grid(lmax, n_alphas, eps))
        return np.vstack(grids)

    def fit(self, X, y, sample_weight=None, **params):
        """Cross-validate the (l1_ratio, α) grid, then refit with the best pair.

        ``**params`` (e.g. ``groups``) go to the CV splitter's ``split``, through
        scikit-learn's metadata routing (``enable_metadata_routing=True``; without
        it they raise scikit-learn's ValueError), as for scikit-learn's.
        """
        _raise_for_params(params, self, "fit")
        check_bool("fit_intercept", self.fit_intercept)
        positive = check_bool("positive", self.positive)
        check_copy_X(self.copy_X)
        # a Gram array is that of the full data, not of the folds: formed per fold instead
        precompute = True if hasattr(self.precompute, "__array__") else self.precompute
        solver, extra = precompute_solver(precompute, check_solver(self.solver, {}))
        sampling = selection_sampling(self.selection, self.sampling)
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES,
                             y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        sw = check_sample_weight(sample_weight, X.shape[0])
        ratios = self._l1_ratios()
        grids = self._grids(X, y, sw, ratios, positive)
        n_workers(self.n_jobs, 1)  # validates n_jobs
        if _routing_enabled():
            split = process_routing(self, "fit", sample_weight=sample_weight,
                                    **params).splitter.split
        else:
            split = {}
        folds = list(check_cv(5 if self.cv is None else self.cv).split(X, y, **split))
        options = dict(self._solve_options(), sampling=sampling, **extra)
        if solver != "auto":
            options["solver"] = solver
        if positive:
            options["positive"] = True
        options["n_threads"] = fold_threads(self.n_jobs, len(ratios) * len(folds))
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_enet_fold)(X, y, sw, train, test, _enet_penalty(rho), rho, grid,
                                self.fit_intercept, options)
            for rho, grid in zip(ratios, grids, strict=True) for train, test in folds
        )
        for _, caught in out:
            reemit(caught)
        mse = np.array([m for m, _ in out]).reshape(len(ratios), len(folds), -1)
        mean = mse.mean(axis=1)  # (n_ratios, n_alphas)
        r, a = np.unravel_index(int(np.argmin(mean)), mean.shape)  # first minimum, as sklearn
        self.mse_path_ = np.squeeze(np.moveaxis(mse, 2, 1)).astype(X.dtype, copy=False)
        self.alphas_ = grids[0] if len(ratios) == 1 or self._n_alphas() is None else grids
        self.alpha_ = float(grids[r, a])
        self.l1_ratio_ = float(ratios[r])
        model = self._refit_estimator(self.alpha_, self.l1_ratio_).fit(X, y, sample_weight=sw)
        for name in ("coef_", "intercept_", "n_iter_", "dual_gap_", "solver_", "trace_"):
            setattr(self, name, getattr(model, name))
        self._dual_alphas = model._dual_alphas
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        return self._linear_scores(X)


_CV_PARAMS = """
    eps : float, default=1e-3
        ``α_min / α_max`` of an int grid.
    cv : int, splitter, iterable or None
        ``KFold(cv)`` for an int (None: 5 folds).
    n_jobs : int or None, default=None
        Processes for the (l1_ratio, fold) paths (None: 1, -1: all cores).
    positive : bool, default=False
        Constrain the coefficients to ``w ≥ 0`` (grid: ``α_max`` from the largest
        positive correlation, as scikit-learn's).
""" + PRECOMPUTE_DOC.replace("default=False", 'default="auto"') + SELECTION_DOC + """\
    fit_intercept, copy_X, tol, max_iter, random_state, solver, sampling, batch_size, verbose
        As in :class:`Lasso`.
"""


class LassoCV(_LinearModelCV):
    __doc__ = """Lasso with α chosen by cross-validation along a warm-started path.

    Objective of each fit: ``(1/2n) Σ s_i (y_i - x_iᵀw - b)² + α‖w‖₁``, i.e.
    cdlearn's squared loss with ``penalty="l1"`` and ``λ = α`` (sample weights
    rescaled to sum to n, as :class:`Lasso`). :class:`ElasticNetCV` with
    ``l1_ratio=1`` (one implementation).

    Parameters
    ----------
    alphas : int or array-like, default=100
        An int: a geometric grid of that many values from ``α_max`` (all-zero
        solution, computed on the full data) down to ``eps·α_max``, as
        scikit-learn's; an array: the grid itself.
    n_alphas : int, deprecated
        The grid size (scikit-learn 1.9's LassoCV no longer has it): use
        ``alphas=int``. Given, it wins over an int ``alphas``, with a
        FutureWarning.
""" + _CV_PARAMS + """
    Attributes
    ----------
    alpha_ : float, the chosen α
    alphas_ : (n_alphas,) the grid, decreasing
    mse_path_ : (n_alphas, n_folds) test mean squared errors
    coef_, intercept_, n_iter_, dual_gap_, solver_, trace_ : of the refit
    """

    def __init__(self, *, eps=1e-3, alphas=100, fit_intercept=True, precompute="auto",
                 max_iter=1000, tol=1e-4, copy_X=True, cv=None, verbose=0, n_jobs=None,
                 random_state=None, selection="cyclic", n_alphas="deprecated", solver="auto",
                 sampling=None, batch_size=1, positive=False):
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.tol = tol
        self.copy_X = copy_X
        self.cv = cv
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.selection = selection
        self.n_alphas = n_alphas
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.positive = positive

    def _l1_ratios(self):
        return np.ones(1)

    def _n_alphas(self):
        return self._grid_size()

    def _grid_size(self):
        """The int grid size, or None for an explicit grid (scikit-learn's deprecation path)."""
        alphas = self.alphas
        if isinstance(self.n_alphas, str) and self.n_alphas == "deprecated":
            n_alphas = None
        else:
            warnings.warn("'n_alphas' is deprecated (scikit-learn 1.9's LassoCV no longer "
                          "has it); pass an int to 'alphas' instead.", FutureWarning,
                          stacklevel=3)
            n_alphas = self.n_alphas
        if alphas is None:
            warnings.warn("'alphas=None' is deprecated; pass an int (the grid size) or an "
                          "array.", FutureWarning, stacklevel=3)
            alphas = 100
        if isinstance(alphas, numbers.Integral) and not isinstance(alphas, bool):
            name, n = ("alphas", alphas) if n_alphas is None else ("n_alphas", n_alphas)
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
                raise ValueError(f"{name} (the number of alphas) must be an int >= 1, "
                                 f"got {n!r}")
            return int(n)
        return None

    def _refit_estimator(self, alpha, l1_ratio):
        return Lasso(alpha=alpha, fit_intercept=self.fit_intercept,
                     precompute=self.precompute is True, tol=self.tol,
                     max_iter=self.max_iter, random_state=self.random_state,
                     selection=self.selection, solver=self.solver, sampling=self.sampling,
                     batch_size=self.batch_size, verbose=self.verbose, positive=self.positive)

    def fit(self, X, y, sample_weight=None, **params):
        """Cross-validate the α grid, then refit :class:`Lasso` with the best α
        (``**params``: as :meth:`ElasticNetCV.fit`)."""
        super().fit(X, y, sample_weight=sample_weight, **params)
        del self.l1_ratio_  # scikit-learn's LassoCV has none
        return self


class ElasticNetCV(_LinearModelCV):
    __doc__ = """Elastic net with (α, l1_ratio) chosen by cross-validation along warm-started paths.

    Objective of each fit: ``(1/2n) Σ s_i (y_i - x_iᵀw - b)² + αρ‖w‖₁ +
    α(1-ρ)/2 ‖w‖²`` (:class:`ElasticNet`: ``λ = α``, ``l1_ratio = ρ``, sample
    weights rescaled to sum to n); scikit-learn 1.9's ``ElasticNetCV`` semantics.

    Parameters
    ----------
    l1_ratio : float in [0, 1] or list of floats, default=0.5
        ρ; with a list every value is cross-validated (with its own grid when
        ``alphas`` is an int; ρ = 0 needs an explicit grid).
    alphas : int or array-like, default=100
        An int means a geometric grid of that many values from ``α_max`` (computed
        on the full data for each ρ) down to ``eps·α_max``; an array is used for
        every ρ.
    """ + _CV_PARAMS + """
    Attributes
    ----------
    alpha_ : float, the chosen α
    l1_ratio_ : float, the chosen ρ
    alphas_ : (n_alphas,) or, for an int grid and several ρ, (n_l1_ratio, n_alphas)
    mse_path_ : (n_l1_ratio, n_alphas, n_folds) test mean squared errors (squeezed)
    coef_, intercept_, n_iter_, dual_gap_, solver_, trace_ : of the refit
    """

    def __init__(self, *, l1_ratio=0.5, eps=1e-3, alphas=100, fit_intercept=True,
                 precompute="auto", max_iter=1000, tol=1e-4, cv=None, copy_X=True, verbose=0,
                 n_jobs=None, positive=False, random_state=None, selection="cyclic",
                 solver="auto", sampling=None, batch_size=1):
        self.l1_ratio = l1_ratio
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.tol = tol
        self.cv = cv
        self.copy_X = copy_X
        self.selection = selection
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.positive = positive
        self.random_state = random_state
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size

    def _l1_ratios(self):
        ratios = np.atleast_1d(np.asarray(self.l1_ratio, dtype=np.float64)).ravel()
        if ratios.size == 0:
            raise ValueError("l1_ratio must be a float or a non-empty list")
        return np.array([check_ratio("l1_ratio", float(r)) for r in ratios])

    def _refit_estimator(self, alpha, l1_ratio):
        return ElasticNet(alpha=alpha, l1_ratio=l1_ratio, fit_intercept=self.fit_intercept,
                          precompute=self.precompute is True, tol=self.tol,
                          max_iter=self.max_iter, random_state=self.random_state,
                          selection=self.selection, solver=self.solver,
                          sampling=self.sampling, batch_size=self.batch_size,
                          verbose=self.verbose, positive=self.positive)


def _fold_scorer(scoring, classes):
    """The scorer of a test fold, told every class of the full data.

    A test fold can lack a class; metrics that infer the classes from ``y_true``
    (log loss, Brier score) would then fail or misalign the probability columns.
    A scorer whose metric takes ``labels`` gets ``labels=classes`` (unless the
    user set it), as scikit-learn's LogisticRegressionCV does.
    """
    scorer = get_scorer("accuracy" if scoring is None else scoring)
    func = getattr(scorer, "_score_func", None)
    if func is None or "labels" not in inspect.signature(func).parameters:
        return scorer
    kwargs = {"labels": classes, **getattr(scorer, "_kwargs", {})}
    if len(classes) == 2 and "pos_label" in inspect.signature(func).parameters:
        kwargs.setdefault("pos_label", classes[-1])
    return make_scorer(func, greater_is_better=scorer._sign == 1,
                       response_method=scorer._response_method, **kwargs)


def _scorer_weighted(scoring) -> bool:
    """Whether the scorer gets ``sample_weight``: always without metadata routing; with
    it, when the scorer requests it (``set_score_request``), as scikit-learn routes it."""
    if not _routing_enabled():
        return True
    scorer = get_scorer("accuracy" if scoring is None else scoring)
    routing = getattr(scorer, "get_metadata_routing", None)
    request = routing().score.requests.get("sample_weight") if routing else None
    return request is True or isinstance(request, str)


def _multinomial_path(X, y, sw, classes, Cs, template):
    """The multinomial model along ``Cs`` (increasing C, warm started): (coefs, intercepts,
    n_iter, warnings), as :func:`_logistic_fold`'s one-vs-rest paths."""
    est = clone(template).set_params(warm_start=True)
    design = as_design(X)
    order = np.argsort(Cs)
    K, d = len(classes), X.shape[1]
    coefs, intercepts = np.zeros((len(Cs), K, d)), np.zeros((len(Cs), K))
    n_iter = np.zeros((len(Cs), 1), dtype=np.int64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in order:
            est.set_params(C=float(Cs[i]))
            fit_multinomial(est, design, y, classes, sw)
            coefs[i], intercepts[i], n_iter[i] = est.coef_, est.intercept_, est.n_iter_
    return coefs, intercepts, n_iter, [(w.category, str(w.message)) for w in caught]


def _logistic_fold(X, y, sw, train, test, classes, penalty, l1_ratio, Cs, fit_intercept,
                   options, scoring, score_weight, template=None):
    """One fold along ``Cs``: one-vs-rest paths, or with ``template`` (a LogisticRegression,
    for three or more classes) the multinomial model, as scikit-learn's."""
    X_tr, X_te = X[train], X[test]
    if template is not None:
        coefs, intercepts, n_iter, caught = _multinomial_path(X_tr, y[train], sw[train],
                                                              classes, Cs, template)
        return (_fold_scores(coefs, intercepts, X_te, y[test], classes, scoring, score_weight,
                             test, True), coefs, intercepts, n_iter, caught)
    _, targets = encode_labels(y[train], classes)
    n_tr = len(train)
    order = np.argsort(Cs)  # increasing C = decreasing λ
    pen, inv_c, rho = _penalty(penalty, l1_ratio, 1.0)
    design = as_design(X_tr)
    k, d = len(targets), X.shape[1]
    coefs = np.zeros((len(Cs), k, d))
    intercepts = np.zeros((len(Cs), k))
    n_iter = np.zeros((len(Cs), k), dtype=np.int64)
    caught = []
    for j, t in enumerate(targets):
        res, c = _captured_path(design, t, loss="logistic", penalty=pen,
                                lams=1.0 / (np.asarray(Cs)[order] * n_tr), l1_ratio=rho,
                                fit_intercept=fit_intercept, sample_weight=sw[train], **options)
        caught += c
        # res.lams is decreasing λ = increasing C: same order as ``order``
        coefs[order, j] = res.coefs
        intercepts[order, j] = res.intercepts
        n_iter[order, j] = res.n_epochs
    scores = _fold_scores(coefs, intercepts, X_te, y[test], classes, scoring, score_weight,
                          test, False)
    return scores, coefs, intercepts, n_iter, caught


def _fold_scores(coefs, intercepts, X_te, y_te, classes, scoring, score_weight, test,
                 multinomial):
    """The test fold's score of each point of the path."""
    est = LogisticRegression()
    est.classes_, est.n_features_in_ = classes, X_te.shape[1]
    est._multinomial = multinomial
    scorer = _fold_scorer(scoring, classes)
    scores = np.zeros(len(coefs))
    for i in range(len(coefs)):
        est.coef_, est.intercept_ = coefs[i], intercepts[i]
        scores[i] = scorer(est, X_te, y_te, sample_weight=(
            None if score_weight is None else score_weight[test]))
    return scores


def _cv_penalty(penalty, l1_ratios, given_none):
    """scikit-learn ≥ 1.8's LogisticRegressionCV ``(penalty, l1_ratios)`` → (name, grid).

    The grid is ``[None]`` when no ρ grid is given (then ρ plays no role);
    ``given_none``: the user passed ``l1_ratios=None`` (not the "warn" default).
    """
    if l1_ratios is not None and not isinstance(l1_ratios, str):
        l1_ratios = list(np.atleast_1d(np.asarray(l1_ratios, dtype=object)))
    if penalty == "deprecated":
        if given_none:
            warnings.warn("'l1_ratios=None' was deprecated in version 1.8 and will trigger an "
                          "error in 1.10. Use an array-like with valuesin [0, 1] instead.",
                          FutureWarning, stacklevel=3)
        grid = np.asarray(l1_ratios if l1_ratios is not None else [0.0], dtype=object)
        name = ("l2" if l1_ratios is None or np.all(grid == 0) else
                "l1" if np.all(grid == 1) else "elasticnet")
    else:
        if penalty not in ("l1", "l2", "elasticnet"):
            raise ValueError(f"penalty={penalty!r} is not supported by LogisticRegressionCV; "
                             "leave it to its default and use l1_ratios (0: l2, 1: l1)")
        name = penalty
        warnings.warn(
            "'penalty' was deprecated in version 1.8 and will be removed in 1.10. To avoid "
            "this warning, leave 'penalty' set to its default value and use 'l1_ratios' and "
            "'Cs' instead. Use l1_ratios=(0,) instead of penalty='l2', l1_ratios=(1,) "
            "instead of penalty='l1', l1_ratios set to floats between 0 and 1 instead of "
            "penalty='elasticnet', and Cs=(np.inf,) instead of penalty=None.",
            FutureWarning, stacklevel=3)
    if name == "elasticnet":
        if (l1_ratios is None or len(l1_ratios) == 0 or any(
                not isinstance(r, numbers.Real) or isinstance(r, bool) or not 0 <= r <= 1
                for r in l1_ratios)):
            raise ValueError("l1_ratios must be an array-like of numbers between 0 and 1; "
                             f"got (l1_ratios={l1_ratios!r})")
        return name, [float(r) for r in l1_ratios]
    if l1_ratios is not None and penalty != "deprecated":
        warnings.warn(f"l1_ratios parameter is only used when penalty is 'elasticnet'. Got "
                      f"(penalty={name})", UserWarning, stacklevel=3)
    return name, [None] if l1_ratios is None else l1_ratios


class LogisticRegressionCV(_CDClassifier):
    """Logistic regression with C (and ρ) chosen by cross-validation along warm-started paths.

    Each fit is :class:`LogisticRegression`'s objective
    ``C Σ s_i log(1 + exp(-y_i(x_iᵀw + b))) + r(w)``, i.e. cdlearn's logistic
    loss with ``λ = 1/(C n)`` (n the size of the training fold). Parameters
    follow scikit-learn ≥ 1.8 (``l1_ratios`` instead of ``penalty``, its
    FutureWarnings for the transitional defaults).

    Parameters
    ----------
    Cs : int or array-like, default=10
        An int means ``np.logspace(-4, 4, Cs)`` (scikit-learn's grid).
    l1_ratios : array-like of floats in [0, 1] or None, default="warn"
        The ρ grid, cross-validated with the C grid (0: l2, 1: l1). "warn"
        (scikit-learn's transitional default) is None with its FutureWarning;
        None means l2 (deprecated by scikit-learn).
    cv : int, splitter or iterable, default=None
        ``StratifiedKFold(cv)`` for an int; None: 5 folds.
    dual : bool or "auto", default="auto"
        As :class:`LogisticRegression`'s (True: dual CD, l2 only). The folds'
        paths honour True; with False they keep ``solver="auto"`` per point
        (the refit is primal).
    penalty : {"l2", "l1", "elasticnet"}, deprecated
        scikit-learn's former spelling; use ``l1_ratios``.
    scoring : str, callable or None, default="warn"
        Scorer of the test folds (None: accuracy), weighted by ``sample_weight``
        and told every class (a fold may lack one). "warn" is accuracy with
        scikit-learn's FutureWarning (its default becomes "neg_log_loss").
    refit : bool, default=True
        Refit with the best (C, ρ) on the full data; else average the folds'
        models, each at its own best (C, ρ), as scikit-learn does.
    use_legacy_attributes : bool, default="warn"
        scikit-learn's attribute layout: True (and "warn", with its
        FutureWarning): ``C_``, ``l1_ratio_`` arrays repeated per class,
        ``coefs_paths_``/``scores_`` dicts keyed by class; False: floats and
        arrays (see Attributes).
    n_jobs : int or None, default=None
        Processes for the folds (None: 1, -1: all cores).
    fit_intercept, intercept_scaling, class_weight, tol, max_iter, random_state, solver,
    sampling, batch_size, verbose
        As in :class:`LogisticRegression` (``class_weight="balanced"`` is computed
        on the full data).

    Attributes
    ----------
    Cs_ : (n_Cs,) the grid
    l1_ratios_ : (n_l1_ratios,) the ρ grid ([None] if none)
    C_, l1_ratio_ : the chosen values (legacy: arrays of shape (n_classes,), (1,) binary)
    scores_ : (n_folds, n_l1_ratios, n_Cs) test scores (legacy: dict per class of
        (n_folds, n_Cs[, n_l1_ratios]))
    coefs_paths_ : (n_folds, n_l1_ratios, n_Cs, n_problems, n_features [+ 1]) (legacy:
        dict per class of (n_folds, n_Cs[, n_l1_ratios], n_features [+ 1]))
    n_iter_ : (n_folds, n_l1_ratios, n_Cs) epochs, max over the OvR problems (legacy:
        (1, n_folds, n_Cs[, n_l1_ratios]))
    classes_, coef_, intercept_, dual_gap_, solver_, trace_ : of the final model
    """

    _distributed_fit = False  # paths and folds run on one machine

    def __init__(self, *, Cs=10, l1_ratios="warn", fit_intercept=True, cv=None, dual="auto",
                 penalty="deprecated", scoring="warn", solver="auto", tol=1e-4, max_iter=1000,
                 class_weight=None, n_jobs=None, verbose=0, refit=True, intercept_scaling=1.0,
                 random_state=None, use_legacy_attributes="warn", sampling=None,
                 batch_size=1):
        self.Cs = Cs
        self.l1_ratios = l1_ratios
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.dual = dual
        self.penalty = penalty
        self.scoring = scoring
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.refit = refit
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state
        self.use_legacy_attributes = use_legacy_attributes
        self.sampling = sampling
        self.batch_size = batch_size

    def _transitional(self):
        """(l1_ratios, scoring, legacy) after scikit-learn's transitional "warn" defaults."""
        l1_ratios, scoring, legacy = self.l1_ratios, self.scoring, self.use_legacy_attributes
        if isinstance(l1_ratios, str) and l1_ratios == "warn":
            l1_ratios = None
            warnings.warn("The default value for l1_ratios will change from None to (0.0,) in "
                          "version 1.10. From version 1.10 onwards, only array-like with "
                          "values in [0, 1] will be allowed, None will be forbidden. To avoid "
                          "this warning, explicitly set a value, e.g. l1_ratios=(0,).",
                          FutureWarning, stacklevel=3)
        if isinstance(scoring, str) and scoring == "warn":
            scoring = None
            warnings.warn("The default value of the parameter 'scoring' will change from "
                          "None, i.e. accuracy, to 'neg_log_loss' in version 1.11. To silence "
                          "this warning, explicitly set the scoring parameter: "
                          "scoring='neg_log_loss' for the new, scoring='accuracy' or "
                          "scoring=None for the old default.", FutureWarning, stacklevel=3)
        if isinstance(legacy, str) and legacy == "warn":
            legacy = True
            warnings.warn("The fitted attributes of LogisticRegressionCV will be simplified "
                          "in scikit-learn 1.10 to remove redundancy. Set "
                          "`use_legacy_attributes=False` to enable the new behavior now, or "
                          "set it to `True` to silence this warning during the transition "
                          "period while keeping the deprecated behavior for the time being. "
                          "The default value of use_legacy_attributes will change from True "
                          "to False in scikit-learn 1.10. See the docstring of "
                          f"{type(self).__name__} for more details.",
                          FutureWarning, stacklevel=3)
        else:
            legacy = check_bool("use_legacy_attributes", legacy)
        return l1_ratios, scoring, legacy

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the (C, ρ) grid, then refit (or average) at the best values."""
        check_bool("fit_intercept", self.fit_intercept)
        check_bool("refit", self.refit)
        check_intercept_scaling(self.intercept_scaling)
        l1_ratios, scoring, legacy = self._transitional()
        name, grid = _cv_penalty(self.penalty, l1_ratios, self.l1_ratios is None)
        methods = [logistic_method(self.solver, _rho_penalty(name, r), self.dual)
                   for r in grid]
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES)
        classes, _ = encode_labels(y)
        n = X.shape[0]
        user_sw = None if sample_weight is None else check_sample_weight(sample_weight, n)
        sw = class_sample_weight(self.class_weight, classes, y,
                                 check_sample_weight(user_sw, n))
        if isinstance(self.Cs, numbers.Integral):
            Cs = np.logspace(-4, 4, int(self.Cs))
        else:
            Cs = np.asarray(self.Cs, dtype=np.float64).ravel()
        if Cs.size == 0 or np.any(Cs <= 0) or not np.all(np.isfinite(Cs)):
            raise ValueError("Cs must be a positive int or a non-empty array of finite "
                             "values > 0")
        n_workers(self.n_jobs, 1)  # validates n_jobs
        folds = list(check_cv(5 if self.cv is None else self.cv, y, classifier=True)
                     .split(X, y))
        options = self._solve_options()
        options["n_threads"] = fold_threads(self.n_jobs, len(folds) * len(grid))
        fold_options = [dict(options, **_fold_solver(m)) for m in methods]
        # three or more classes: the multinomial model, as LogisticRegression's (and
        # scikit-learn's LogisticRegressionCV)
        self._multinomial = multinomial = classes.size > 2
        if multinomial:
            check_multiclass_solver(self.solver)
        templates = [self._refit_model(1.0, name, r) if multinomial else None for r in grid]
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_logistic_fold)(X, y, sw, train, test, classes, name,
                                    0.5 if r is None else r, Cs, self.fit_intercept,
                                    fold_options[j], scoring,
                                    user_sw if _scorer_weighted(scoring) else None,
                                    templates[j])
            for train, test in folds for j, r in enumerate(grid)
        )
        for *_, caught in out:
            reemit(caught)
        n_f, n_l, n_c = len(folds), len(grid), len(Cs)
        shape = (n_f, n_l)
        scores = np.stack([o[0] for o in out]).reshape(*shape, n_c)
        coefs = np.stack([o[1] for o in out]).reshape(*shape, *out[0][1].shape)
        intercepts = np.stack([o[2] for o in out]).reshape(*shape, *out[0][2].shape)
        n_iter = np.stack([o[3].max(axis=1) for o in out]).reshape(*shape, n_c)
        paths = (np.concatenate([coefs, intercepts[..., None]], axis=-1)
                 if self.fit_intercept else coefs)  # (folds, ρ, Cs, problems, dof)
        self.classes_ = classes
        self.Cs_ = Cs
        self.l1_ratios_ = np.asarray(grid)
        if self.refit:
            total = scores.sum(axis=0)  # (ρ, Cs)
            j, i = np.unravel_index(int(np.argmax(total.T)), (n_c, n_l))[::-1]
            C_best, rho_best = float(Cs[i]), grid[j]
            model = self._refit_model(C_best, name, rho_best)
            model.fit(X, y, sample_weight=sw)
            for attr in ("coef_", "intercept_", "dual_gap_", "solver_", "trace_"):
                setattr(self, attr, getattr(model, attr))
            self._dual_alphas = model._dual_alphas
            C_, rho_ = C_best, rho_best
            # float64 whatever X's dtype, as scikit-learn's LogisticRegressionCV
            self.coef_ = self.coef_.astype(np.float64)
            self.intercept_ = self.intercept_.astype(np.float64)
        else:
            # each fold at its own best (C, ρ), averaged, as scikit-learn does
            best = [np.unravel_index(int(np.argmax(scores[f].T)), (n_c, n_l))
                    for f in range(n_f)]
            self.coef_ = np.mean([coefs[f, j, i] for f, (i, j) in enumerate(best)], axis=0)
            self.intercept_ = np.mean([intercepts[f, j, i] for f, (i, j) in enumerate(best)],
                                      axis=0)
            self.dual_gap_ = np.full(self.coef_.shape[0], np.nan)
            self.solver_ = "cv-average"
            self.trace_ = None
            C_ = float(np.mean([Cs[i] for i, _ in best]))
            rho_ = (float(np.mean([grid[j] for _, j in best])) if name == "elasticnet"
                    else 0.0)
        self._set_cv_attributes(legacy, name, l1_ratios, C_, rho_, scores, paths, n_iter)
        return self

    def _refit_model(self, C, name, rho):
        """The LogisticRegression of a grid point (the refit; the multinomial folds')."""
        return LogisticRegression(
            C=C, l1_ratio=_rho_value(name, rho), dual=self.dual,
            fit_intercept=self.fit_intercept, tol=self.tol, max_iter=self.max_iter,
            random_state=self.random_state, n_jobs=self.n_jobs, solver=self.solver,
            sampling=self.sampling, batch_size=self.batch_size, verbose=self.verbose,
        )

    def _set_cv_attributes(self, legacy, name, l1_ratios, C_, rho_, scores, paths, n_iter):
        """scikit-learn's layouts of C_, l1_ratio_, scores_, coefs_paths_, n_iter_."""
        if not legacy:
            self.C_ = C_
            self.l1_ratio_ = (float(rho_) if l1_ratios is not None and rho_ is not None
                              else 1.0 if name == "l1" else 0.0)
            self.scores_, self.coefs_paths_, self.n_iter_ = scores, paths, n_iter
            return
        k = paths.shape[3]
        keys = self.classes_[1:] if k == 1 else self.classes_
        self.C_ = np.full(k, C_)
        self.l1_ratio_ = np.asarray([rho_] * k)
        # legacy order: (folds, Cs, ρ, ...), ρ dropped when no ρ grid was given
        sc = np.swapaxes(scores, 1, 2)
        pa = np.swapaxes(paths, 1, 2)
        it = np.swapaxes(n_iter, 1, 2)[None]
        if l1_ratios is None:
            sc, pa, it = sc[:, :, 0], pa[:, :, 0], it[:, :, :, 0]
        self.scores_ = {c: sc.copy() for c in keys}
        self.coefs_paths_ = {c: pa[..., m, :] for m, c in enumerate(keys)}
        self.n_iter_ = it

    def predict_proba(self, X):
        """As :meth:`LogisticRegression.predict_proba`."""
        return LogisticRegression.predict_proba(self, X)

    def score(self, X, y, sample_weight=None):
        """The ``scoring`` of the CV (None: accuracy) on ``(X, y)``, as scikit-learn's."""
        scoring = None if isinstance(self.scoring, str) and self.scoring == "warn" else \
            self.scoring
        scorer = get_scorer("accuracy" if scoring is None else scoring)
        if sample_weight is None:
            return scorer(self, X, y)
        if not _scorer_weighted(scorer):
            raise TypeError(f"{type(self).__name__}.score got unexpected argument(s) "
                            "{'sample_weight'}, which are not routed to any object.")
        return scorer(self, X, y, sample_weight=sample_weight)

    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


def _rho_penalty(name, rho):
    """The penalty name at one point ρ of the grid (elasticnet at ρ = 0 is l2, at 1 l1)."""
    if name != "elasticnet" or rho is None:
        return name
    return "l2" if rho == 0 else "l1" if rho == 1 else "elasticnet"


def _rho_value(name, rho):
    """LogisticRegression's l1_ratio for the penalty name (and ρ, for elasticnet)."""
    if name == "elasticnet":
        return float(rho)
    return 1.0 if name == "l1" else 0.0


def _fold_solver(method):
    """The folds' ``solver`` keyword: (method, formulation) from :func:`logistic_method`."""
    solver, dual = method
    if solver == "auto" and dual:
        solver = "dual-cd"
    return {} if solver == "auto" else {"solver": solver}
