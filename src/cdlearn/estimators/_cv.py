"""Cross-validated estimators: LassoCV and LogisticRegressionCV.

Each fold solves a whole regularisation path with warm starts
(:func:`cdlearn.paths.path`); folds run in joblib worker processes with
``n_jobs`` (numba kernels hold the GIL, so threads would not overlap). The
best parameter is refitted on the full data.
"""

from __future__ import annotations

import numbers

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import RegressorMixin
from sklearn.metrics import get_scorer
from sklearn.model_selection import check_cv
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import validate_data

from ..data import as_design, check_positive, check_sample_weight
from ..paths import lambda_grid, lambda_max, path, reemit
from ._base import ACCEPT_SPARSE, DTYPES, CDEstimatorBase, check_bool
from ._classification import (
    LogisticRegression,
    _CDClassifier,
    _penalty,
    class_sample_weight,
    encode_labels,
)
from ._regression import Lasso


def _captured_path(X, y, **kw):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = path(X, y, **kw)
    return res, [(w.category, str(w.message)) for w in caught]


def _lasso_fold(X, y, sw, train, test, lams, fit_intercept, options):
    X_tr, X_te = X[train], X[test]
    sw_tr = sw[train] * (len(train) / sw[train].sum())  # as Lasso.fit does
    res, caught = _captured_path(X_tr, y[train], loss="squared", penalty="l1", lams=lams,
                                 fit_intercept=fit_intercept, sample_weight=sw_tr, **options)
    pred = safe_sparse_dot(X_te, res.coefs.T, dense_output=True) + res.intercepts
    mse = np.average((pred - y[test][:, None]) ** 2, axis=0, weights=sw[test])
    return mse, caught


class LassoCV(RegressorMixin, CDEstimatorBase):
    """Lasso with α chosen by cross-validation along a warm-started path.

    Objective of each fit: ``(1/2n) Σ s_i (y_i - x_iᵀw - b)² + α‖w‖₁``, i.e.
    cdlearn's squared loss with ``penalty="l1"`` and ``λ = α`` (sample weights
    rescaled to sum to n, as :class:`Lasso`).

    Parameters
    ----------
    alphas : array-like, int or None, default=None
        The grid; an int or None means a geometric grid of that many (else
        ``n_alphas``) values from ``α_max`` (all-zero solution, computed on the
        full data) down to ``eps·α_max``, as scikit-learn's.
    n_alphas : int, default=100
    eps : float, default=1e-3
    cv : int, splitter or iterable, default=5
        ``KFold(cv)`` for an int.
    n_jobs : int or None, default=None
        Processes for the folds (None: 1, -1: all cores).
    fit_intercept, tol, max_iter, random_state, solver, sampling, batch_size, verbose
        As in :class:`Lasso`.

    Attributes
    ----------
    alpha_ : float, the chosen α
    alphas_ : (n_alphas,) the grid, decreasing
    mse_path_ : (n_alphas, n_folds) test mean squared errors
    coef_, intercept_, n_iter_, dual_gap_, solver_, trace_ : of the refit
    """

    def __init__(self, *, alphas=None, n_alphas=100, eps=1e-3, cv=5, n_jobs=None,
                 fit_intercept=True, tol=1e-6, max_iter=1000, random_state=None,
                 solver="auto", sampling=None, batch_size=1, verbose=0):
        self.alphas = alphas
        self.n_alphas = n_alphas
        self.eps = eps
        self.cv = cv
        self.n_jobs = n_jobs
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the α grid, then refit :class:`Lasso` with the best α."""
        check_bool("fit_intercept", self.fit_intercept)
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES,
                             y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        n = X.shape[0]
        sw = check_sample_weight(sample_weight, n)
        if self.alphas is None or isinstance(self.alphas, numbers.Integral):
            n_alphas = self.n_alphas if self.alphas is None else self.alphas
            design = as_design(X)
            lmax = lambda_max(design, y, loss="squared", penalty="l1",
                              fit_intercept=self.fit_intercept, sample_weight=sw * (n / sw.sum()))
            alphas = lambda_grid(lmax, n_alphas, check_positive("eps", self.eps))
        else:
            alphas = np.sort(np.asarray(self.alphas, dtype=np.float64).ravel())[::-1]
            if alphas.size == 0 or np.any(alphas <= 0) or not np.all(np.isfinite(alphas)):
                raise ValueError("alphas must be a non-empty array of finite values > 0")
        folds = list(check_cv(self.cv).split(X, y))
        options = self._solve_options()
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_lasso_fold)(X, y, sw, train, test, alphas, self.fit_intercept, options)
            for train, test in folds
        )
        for _, caught in out:
            reemit(caught)
        self.mse_path_ = np.column_stack([mse for mse, _ in out])
        self.alphas_ = alphas
        self.alpha_ = float(alphas[int(np.argmin(self.mse_path_.mean(axis=1)))])
        model = Lasso(alpha=self.alpha_, fit_intercept=self.fit_intercept, tol=self.tol,
                      max_iter=self.max_iter, random_state=self.random_state,
                      solver=self.solver, sampling=self.sampling, batch_size=self.batch_size,
                      verbose=self.verbose).fit(X, y, sample_weight=sw)
        for name in ("coef_", "intercept_", "n_iter_", "dual_gap_", "solver_", "trace_"):
            setattr(self, name, getattr(model, name))
        self._dual_alphas = model._dual_alphas
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        return self._linear_scores(X)


def _logistic_fold(X, y, sw, train, test, classes, penalty, l1_ratio, Cs, fit_intercept,
                   options, scoring, score_weight):
    X_tr, X_te = X[train], X[test]
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
    est = LogisticRegression(penalty=penalty, l1_ratio=l1_ratio)
    est.classes_, est.n_features_in_ = classes, d
    scorer = get_scorer("accuracy" if scoring is None else scoring)
    scores = np.zeros(len(Cs))
    for i in range(len(Cs)):
        est.coef_, est.intercept_ = coefs[i], intercepts[i]
        scores[i] = scorer(est, X_te, y[test], sample_weight=(
            None if score_weight is None else score_weight[test]))
    return scores, coefs, intercepts, n_iter, caught


class LogisticRegressionCV(_CDClassifier):
    """Logistic regression with C chosen by cross-validation along warm-started paths.

    Each fit is :class:`LogisticRegression`'s objective
    ``C Σ s_i log(1 + exp(-y_i(x_iᵀw + b))) + r(w)``, i.e. cdlearn's logistic
    loss with ``λ = 1/(C n)`` (n the size of the training fold).

    Parameters
    ----------
    Cs : int or array-like, default=10
        An int means ``np.logspace(-4, 4, Cs)`` (scikit-learn's grid).
    cv : int, splitter or iterable, default=5
        ``StratifiedKFold(cv)`` for an int.
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
    l1_ratio : float, default=0.5
        Used with ``penalty="elasticnet"``.
    scoring : str, callable or None, default=None
        Scorer of the test folds (None: accuracy), weighted by ``sample_weight``.
    n_jobs : int or None, default=None
        Processes for the folds (None: 1, -1: all cores).
    refit : bool, default=True
        Refit with the best C on the full data; else average the folds' models at
        the best C.
    fit_intercept, class_weight, tol, max_iter, random_state, solver, sampling,
    batch_size, verbose
        As in :class:`LogisticRegression`.

    Attributes
    ----------
    C_ : float, the chosen C
    Cs_ : (n_Cs,) the grid
    scores_ : (n_folds, n_Cs) test scores
    coefs_paths_ : (n_folds, n_Cs, n_problems, n_features [+ 1 with an intercept])
    classes_, coef_, intercept_, n_iter_, dual_gap_, solver_, trace_ : of the final model
    """

    def __init__(self, *, Cs=10, cv=5, penalty="l2", l1_ratio=0.5, scoring=None,
                 fit_intercept=True, class_weight=None, tol=1e-6, max_iter=1000, n_jobs=None,
                 refit=True, random_state=None, solver="auto", sampling=None,
                 batch_size=1, verbose=0):
        self.Cs = Cs
        self.cv = cv
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.scoring = scoring
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.refit = refit
        self.random_state = random_state
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the C grid, then refit (or average) at the best C."""
        check_bool("fit_intercept", self.fit_intercept)
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES)
        classes, _ = encode_labels(y)
        if self.penalty is None:
            raise ValueError("LogisticRegressionCV needs a penalty ('l1', 'l2' or "
                             "'elasticnet')")
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
        _penalty(self.penalty, self.l1_ratio, 1.0)  # validates penalty and l1_ratio
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y))
        options = self._solve_options()
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_logistic_fold)(X, y, sw, train, test, classes, self.penalty,
                                    self.l1_ratio, Cs, self.fit_intercept, options,
                                    self.scoring, user_sw)
            for train, test in folds
        )
        for *_, caught in out:
            reemit(caught)
        self.classes_ = classes
        self.Cs_ = Cs
        self.scores_ = np.vstack([o[0] for o in out])
        coefs = np.stack([o[1] for o in out])            # (folds, Cs, k, d)
        intercepts = np.stack([o[2] for o in out])       # (folds, Cs, k)
        self.coefs_paths_ = (np.concatenate([coefs, intercepts[..., None]], axis=-1)
                             if self.fit_intercept else coefs)
        best = int(np.argmax(self.scores_.mean(axis=0)))
        self.C_ = float(Cs[best])
        if self.refit:
            model = LogisticRegression(
                penalty=self.penalty, C=self.C_, l1_ratio=self.l1_ratio,
                fit_intercept=self.fit_intercept, tol=self.tol, max_iter=self.max_iter,
                random_state=self.random_state, n_jobs=self.n_jobs, solver=self.solver,
                sampling=self.sampling, batch_size=self.batch_size, verbose=self.verbose,
            )
            model._multiclass = "ovr"  # the folds were scored one-vs-rest
            model.fit(X, y, sample_weight=sw)
            for name in ("coef_", "intercept_", "n_iter_", "dual_gap_", "solver_", "trace_"):
                setattr(self, name, getattr(model, name))
            self._dual_alphas = model._dual_alphas
        else:
            self.coef_ = coefs[:, best].mean(axis=0)
            self.intercept_ = intercepts[:, best].mean(axis=0)
            self.n_iter_ = np.stack([o[3] for o in out])[:, best].max(axis=0)
            self.dual_gap_ = np.full(self.coef_.shape[0], np.nan)
            self.solver_ = "cv-average"
            self.trace_ = None
        return self

    def predict_proba(self, X):
        """As :meth:`LogisticRegression.predict_proba`."""
        return LogisticRegression.predict_proba(self, X)

    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
