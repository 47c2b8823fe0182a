"""Linear classifiers: LogisticRegression and LinearSVC (binary, multiclass one-vs-rest).

Each minimises ``1/n Σ s_i φ(y_i(x_iᵀw + b)) + λ g(w)`` per binary problem
with :func:`cdlearn.solve`, ``y_i ∈ {-1, +1}``; with ``K > 2`` classes, one
problem "class k vs rest" per class (OvR), solved in parallel with ``n_jobs``
threads by the same fan-out as ``cdlearn.solve``'s multiclass one-vs-rest.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..data import as_design, check_choice, check_positive, check_sample_weight
from ._base import (
    ACCEPT_SPARSE,
    DTYPES,
    TOL_DOC,
    CDEstimatorBase,
    SparseCoefMixin,
    check_bool,
    check_intercept_scaling,
    check_ratio,
    check_solver,
    run_problems,
)
from ._multinomial import fit_multinomial


def encode_labels(y, classes=None):
    """``(classes, targets)``: ±1 targets, one for binary, one per class for OvR."""
    check_classification_targets(y)
    if classes is None:
        classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(
            "This solver needs samples of at least 2 classes in the data, but the data "
            f"contains only one class: {classes[0]!r}"
        )
    idx = np.searchsorted(classes, y)
    if classes.size == 2:
        return classes, [np.where(idx == 1, 1.0, -1.0)]
    return classes, [np.where(idx == k, 1.0, -1.0) for k in range(classes.size)]


def class_sample_weight(class_weight, classes, y, sw):
    """``sw`` multiplied by the weight of each sample's class."""
    if class_weight is None:
        return sw
    # "balanced" counts samples by their weights, as scikit-learn's LogisticRegression
    # and LinearSVC do
    cw = compute_class_weight(class_weight, classes=classes, y=y, sample_weight=sw)
    return sw * cw[np.searchsorted(classes, y)]


_SCALE_ADVICE = ("Increase the number of iterations (max_iter) or scale the data as shown in:\n"
                 "    https://scikit-learn.org/stable/modules/preprocessing.html")
#: scikit-learn's ConvergenceWarning texts by solver name (LinearSVC: liblinear's)
NOT_CONVERGED = {
    "newton-cg": "newton-cg failed to converge at duality gap = {gap:.3e}. Increase the number "
                 "of iterations.",
    "liblinear": "Liblinear failed to converge, increase the number of iterations.",
    "sag": "The max_iter was reached which means the coef_ did not converge",
    "saga": "The max_iter was reached which means the coef_ did not converge",
    "lbfgs": "lbfgs failed to converge after {n} iteration(s). " + _SCALE_ADVICE,
    "newton-cholesky": "Newton solver did not converge after {n} iterations.",
    "auto": "{method} failed to converge after {n} iteration(s). " + _SCALE_ADVICE,
}


class _CDClassifier(SparseCoefMixin, ClassifierMixin, CDEstimatorBase):
    """Linear classifier on :func:`cdlearn.solve`; subclasses give loss and penalty."""

    _min_max_iter = 0  # scikit-learn's: max_iter=0 returns the initial point (coef_ = 0)

    #: "multinomial": ≥ 3 classes fit one softmax model (LogisticRegression), else OvR
    _multiclass = "ovr"

    def _objective(self, n_samples):
        """(loss, penalty, λ, l1_ratio) of cdlearn's objective."""
        raise NotImplementedError

    def _method(self, penalty, n_samples, n_features):
        """(cdlearn solver, formulation): ``dual`` True/False/None for :func:`run_problems`."""
        raise NotImplementedError

    def fit(self, X, y, sample_weight=None):
        """Fit one binary problem (two classes) or one per class (OvR)."""
        check_bool("fit_intercept", self.fit_intercept)
        check_bool("warm_start", self.warm_start)
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=DTYPES)
        classes, targets = encode_labels(y)
        design = as_design(X)
        n = design.n_samples
        sw = check_sample_weight(sample_weight, n)
        sw = class_sample_weight(self.class_weight, classes, y, sw)
        check_intercept_scaling(self.intercept_scaling)
        self._multinomial = classes.size > 2 and self._multiclass == "multinomial"
        if self._multinomial:
            fit_multinomial(self, design, y, classes, sw)
            dtype = self._coef_dtype(X)
            self.coef_ = self.coef_.astype(dtype, copy=False)
            self.intercept_ = np.asarray(self.intercept_).astype(dtype, copy=False)
            return self
        loss, penalty, lam, l1_ratio = self._objective(n)
        solver, dual = self._method(penalty, design.n_samples, design.n_features)
        self.classes_ = classes
        options = self._solve_options()
        warm = self._warm_list(len(targets), design.n_features)
        results, method = run_problems(
            design, targets, [sw] * len(targets), loss=loss, penalty=penalty, lam=lam,
            l1_ratio=l1_ratio, fit_intercept=self.fit_intercept, solver=solver,
            options=options, warm=warm, n_jobs=self.n_jobs, dual=dual,
            not_converged=self._not_converged,
        )
        self._store_results(results, method)
        dtype = self._coef_dtype(X)
        self.coef_ = np.vstack([r.w for r in results]).astype(dtype, copy=False)
        self.intercept_ = np.array([r.intercept if self.fit_intercept else 0.0
                                    for r in results], dtype=dtype)
        if options["max_epochs"] == 0 and warm is None:
            # max_iter=0 returns scikit-learn's starting point, w = 0 and b = 0 (probabilities
            # 1/2); dual_gap_ is the certificate's, at w = 0 with b at its exact minimiser
            self.intercept_[:] = 0.0
        self.n_iter_ = np.array([r.n_epochs for r in results])
        self.dual_gap_ = np.array([r.gap for r in results])
        self.trace_ = results[0].trace if len(results) == 1 else [r.trace for r in results]
        return self

    def _not_converged(self, result, method):
        """scikit-learn's ConvergenceWarning text for the solver asked for (its tests match it)."""
        name = self.solver if self.solver in NOT_CONVERGED else "auto"
        return NOT_CONVERGED[name].format(method=method, n=result.n_epochs, gap=result.gap)

    def decision_function(self, X):
        """Signed scores ``X @ coef_.T + intercept_``: (n,) binary, (n, K) OvR."""
        scores = self._linear_scores(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class with the highest score (score > 0 for ``classes_[1]`` when binary)."""
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags


_COMMON_PARAMS = """
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (unlike liblinear, whose bias is penalised).
    intercept_scaling : float > 0, default=1
        Accepted for scikit-learn compatibility; no effect. liblinear appends a
        constant feature of this value whose weight, the intercept, is
        penalised, so its value changes liblinear's model; cdlearn's intercept
        is not penalised (solved exactly), which is liblinear's limit of a
        large ``intercept_scaling``.
    class_weight : dict, "balanced" or None, default=None
        Multiplies the sample weights ``s_i`` by the weight of each sample's
        class ("balanced": ``n / (K · weighted class count)``, counts weighted by
        ``sample_weight`` as scikit-learn's).
""" + TOL_DOC + """    max_iter : int, default=1000
        Maximum number of epochs per binary problem; 0 returns the starting point
        (``coef_ = 0``, ``intercept_ = 0``, as scikit-learn's).
    warm_start : bool, default=False
        Start from the previous ``coef_``/``intercept_`` (and dual variables).
    random_state : int, RandomState or None, default=None
        Seed of the coordinate sampling.
    n_jobs : int or None, default=None
        Threads for the one-vs-rest problems (None: 1, -1: all cores); they share
        the data (:func:`cdlearn.multiclass.run_many`, as ``cdlearn.solve`` does).
        Each problem runs its τ-nice minibatches (``batch_size > 1``) on
        ``n_jobs // concurrent problems`` threads (a binary problem: all of them).
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
    classes_ : (n_classes,)
    coef_ : (1, n_features) binary, (n_classes, n_features) OvR
    intercept_ : (1,) or (n_classes,)
    n_iter_ : (1,) or (n_classes,) epochs per binary problem (LinearSVC: an int, the most,
        as scikit-learn's)
    dual_gap_ : (1,) or (n_classes,) final duality gaps of cdlearn's objective
    solver_ : str, the method run
    trace_ : :class:`cdlearn.Trace` (a list, one per class, for OvR)
    n_features_in_ : int
"""

_PENALTIES = {"l1": "l1", "l2": "l2", "elasticnet": "elastic_net", None: "none"}


def _penalty(penalty, l1_ratio, C):
    """cdlearn's (penalty, λ·n, l1_ratio) for scikit-learn's (penalty, l1_ratio, C)."""
    if penalty not in _PENALTIES:
        raise ValueError(f"penalty={penalty!r} is not supported; choose 'l1', 'l2', "
                         "'elasticnet' or None")
    C = check_positive("C", C) if not (isinstance(C, float) and C == np.inf) else C
    # checked even where unused: a NaN is a mistake whatever the penalty
    rho = 0.5 if l1_ratio is None else check_ratio("l1_ratio", l1_ratio)
    if penalty is None or C == np.inf:
        return "none", None, 0.5
    pen = _PENALTIES[penalty]
    if pen != "elastic_net":
        rho = 0.5
    if pen == "elastic_net" and rho in (0.0, 1.0):
        pen = "l1" if rho == 1 else "l2"
    return pen, 1.0 / C, rho


def logistic_penalty(penalty, l1_ratio, C):
    """scikit-learn ≥ 1.8's ``(penalty, l1_ratio, C)`` → ``(penalty name, C)``.

    ``penalty="deprecated"`` (the default): ``l1_ratio`` 0 is l2, 1 is l1,
    in between elasticnet, and ``C=np.inf`` no penalty. An explicit
    ``penalty`` still works with scikit-learn's FutureWarning, and its
    warnings for an ``l1_ratio`` that it ignores or contradicts.
    """
    if penalty != "deprecated" and penalty not in _PENALTIES:
        raise ValueError(f"penalty={penalty!r} is not supported; leave it to its default and "
                         "use l1_ratio (0: l2, 1: l1, in between: elasticnet) and C "
                         "(np.inf: no penalty)")
    if l1_ratio is not None:
        check_ratio("l1_ratio", l1_ratio)
    if penalty == "deprecated":
        if l1_ratio is None:
            warnings.warn("'l1_ratio=None' was deprecated in version 1.8 and will trigger an "
                          "error in 1.10. Use 0<=l1_ratio<=1 instead.", FutureWarning,
                          stacklevel=4)
        name = ("l2" if l1_ratio is None or l1_ratio == 0 else
                "l1" if l1_ratio == 1 else "elasticnet")
        if C == np.inf:
            name = None
    else:
        name = penalty
        warnings.warn(
            "'penalty' was deprecated in version 1.8 and will be removed in 1.10. To avoid "
            "this warning, leave 'penalty' set to its default value and use 'l1_ratio' or "
            "'C' instead. Use l1_ratio=0 instead of penalty='l2', l1_ratio=1 instead of "
            "penalty='l1', l1_ratio set to a float between 0 and 1 instead of "
            "penalty='elasticnet', and C=np.inf instead of penalty=None.",
            FutureWarning, stacklevel=4)
    if name != "elasticnet" and l1_ratio is not None and 0 < l1_ratio < 1:
        warnings.warn(f"l1_ratio parameter is only used when penalty is 'elasticnet'. Got "
                      f"(penalty={name})", UserWarning, stacklevel=4)
    if (penalty == "l2" and l1_ratio != 0) or (penalty == "l1" and l1_ratio != 1):
        warnings.warn(f"Inconsistent values: penalty={penalty} with l1_ratio={l1_ratio}. "
                      "penalty is deprecated. Please use l1_ratio only.", UserWarning,
                      stacklevel=4)
    if name == "elasticnet" and l1_ratio is None:
        raise ValueError("l1_ratio must be specified when penalty is elasticnet.")
    if penalty is None:
        if C != 1.0:
            warnings.warn("Setting penalty=None will ignore the C and l1_ratio parameters",
                          UserWarning, stacklevel=4)
        C = np.inf
    return name, C


#: the formulations liblinear (scikit-learn's LinearSVC, and LogisticRegression's
#: dual) offers per (loss, penalty); scikit-learn rejects the other combinations
_FORMULATIONS = {
    ("logistic_regression", "l1"): (False,), ("logistic_regression", "l2"): (False, True),
    ("hinge", "l2"): (True,), ("squared_hinge", "l1"): (False,),
    ("squared_hinge", "l2"): (False, True),
}


def check_formulation(loss, penalty, dual):
    """scikit-learn's error for a (penalty, loss, dual) combination that liblinear lacks."""
    offered = _FORMULATIONS.get((loss, penalty))
    if offered is None:
        reason = f"The combination of penalty={penalty!r} and loss={loss!r} is not supported"
    elif dual not in offered:
        reason = (f"The combination of penalty={penalty!r} and loss={loss!r} are not "
                  f"supported when dual={dual}")
    else:
        return
    raise ValueError(f"Unsupported set of arguments: {reason}, Parameters: "
                     f"penalty={penalty!r}, loss={loss!r}, dual={dual!r}")


def check_dual(dual, method):
    """``dual`` ∈ {True, False, "auto"} against an explicit cdlearn method."""
    if not (dual == "auto" or isinstance(dual, bool | np.bool_)):
        raise ValueError(f"dual must be True, False or 'auto', got {dual!r}")
    if dual == "auto":
        return None
    dual = bool(dual)
    if dual and method not in ("auto", "dual-cd"):
        raise ValueError(f"dual=True runs dual CD; solver={method!r} is a primal method")
    if not dual and method == "dual-cd":
        raise ValueError("dual=False asks for a primal method; solver='dual-cd' is dual")
    return dual


#: scikit-learn's LogisticRegression solvers → cdlearn's methods ("liblinear" by dual
#: and penalty, see ``LogisticRegression._method``)
LOGISTIC_SOLVERS = {"lbfgs": "newton-cg", "newton-cg": "newton-cg",
                    "newton-cholesky": "newton-cd", "sag": "auto", "saga": "auto",
                    "liblinear": "liblinear"}


class LogisticRegression(_CDClassifier):
    __doc__ = """Logistic regression: ``C Σ s_i log(1 + exp(-y_i(x_iᵀw + b))) + r(w)``.

    ``r(w) = ρ‖w‖₁ + (1-ρ)/2‖w‖²`` with ``ρ = l1_ratio`` (0: l2, 1: l1),
    scikit-learn's objective and its ≥ 1.8 parameters. Mapping: dividing by
    ``C n``, ``loss="logistic"``, ``λ = 1/(C n)``, raw sample weights.
    With three or more classes the model is multinomial, as scikit-learn's:
    ``C Σ s_i CE(softmax(x_iᵀW + b), y_i) + r(W)`` with ``r`` on every entry of
    ``W``, fit by L-BFGS then Newton steps (l2, none; scikit-learn's names
    newton-cg / newton-cholesky: Newton steps only) or block CD over the rows
    of ``W`` (l1, elastic net; ``solver`` "multinomial-lbfgs" /
    "multinomial-newton" / "multi-cd";
    :mod:`cdlearn.estimators._multinomial`; ``coef_`` (K, d),
    ``n_iter_``/``dual_gap_`` of the one problem, the intercepts centred).
    One-vs-rest: ``sklearn.multiclass.OneVsRestClassifier(LogisticRegression(...))``
    (or ``cdlearn.solve`` with a multiclass ``y``).

    Parameters
    ----------
    penalty : {"l2", "l1", "elasticnet", None}, deprecated
        scikit-learn's former spelling (deprecated there in 1.8): use
        ``l1_ratio`` and ``C``. Given, it wins over ``l1_ratio`` (ρ only
        matters for "elasticnet") with scikit-learn's FutureWarning.
    C : float, default=1.0
        Inverse regularisation strength (``np.inf``: no penalty).
    l1_ratio : float in [0, 1], default=0.0
        ρ: 0 is the l2 penalty, 1 the l1 penalty, in between the elastic net.
    dual : bool or "auto", default="auto"
        True: dual CD (l2 only, as liblinear's dual); False: primal methods
        only (``solver="auto"`` runs primal CD where it would have chosen dual
        CD); "auto" (cdlearn's default; scikit-learn's is False): the choice of
        ``solver="auto"`` (face-off). scikit-learn's errors for the
        combinations liblinear lacks (dual with l1, elasticnet or no penalty).
    solver : str, default="auto"
        cdlearn's: ``"auto"`` (:func:`cdlearn.api.auto_solver`), ``"primal-cd"``,
        ``"dual-cd"``, ``"newton-cd"``, ``"ws-cd"``, ``"newton-cg"``, ...
        scikit-learn's, mapped (with its penalty/dual restrictions): "lbfgs" and
        "newton-cg" → newton-cg (truncated Newton); "newton-cholesky" →
        newton-cd (the Hessian formed); "liblinear" → dual CD with
        ``dual=True``, else newton-cd for l1 (liblinear's newGLMNET) and
        newton-cg for l2 (its trust-region Newton); "sag", "saga" → "auto".
        Without a penalty (``C=np.inf``) newton-cg's names run newton-cd.
    """ + _COMMON_PARAMS

    def __init__(self, penalty="deprecated", *, C=1.0, l1_ratio=0.0, dual="auto", tol=1e-4,
                 fit_intercept=True, intercept_scaling=1, class_weight=None,
                 random_state=None, solver="auto", max_iter=1000, verbose=0,
                 warm_start=False, n_jobs=None, sampling=None, batch_size=1):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.sampling = sampling
        self.batch_size = batch_size

    _multiclass = "multinomial"

    def _objective(self, n_samples):
        name, C = logistic_penalty(self.penalty, self.l1_ratio, self.C)
        self._penalty_name = name
        pen, inv_c, rho = _penalty(name, self.l1_ratio, C)
        return "logistic", pen, None if inv_c is None else inv_c / n_samples, rho

    def _method(self, penalty, n_samples, n_features):
        method, formulation = logistic_method(self.solver, self._penalty_name, self.dual)
        if method == "newton-cg" and penalty == "none":
            method = "newton-cd"  # newton-cg needs an l2 part; scikit-learn's lbfgs does not
        return method, formulation

    def _coef_dtype(self, X):
        # scikit-learn's liblinear returns float64 coef_ whatever X's dtype
        return np.dtype(np.float64) if self.solver == "liblinear" else super()._coef_dtype(X)

    def predict_proba(self, X):
        """Class probabilities: σ(score) when binary, softmax for the multinomial model,
        OvR sigmoids normalised to sum 1."""
        scores = self.decision_function(X)
        if getattr(self, "_multinomial", False):
            return softmax(scores, axis=1)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        p = expit(scores)
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


def logistic_method(solver, penalty, dual):
    """(cdlearn method, formulation) for LogisticRegression's solver, penalty name and dual."""
    method = check_solver(solver, LOGISTIC_SOLVERS)
    if solver in LOGISTIC_SOLVERS:  # scikit-learn's restrictions of its solvers
        if solver not in ("liblinear", "saga") and penalty not in ("l2", None):
            raise ValueError(f"Solver {solver} supports only 'l2' or None penalties, got "
                             f"{penalty} penalty.")
        if solver != "liblinear" and dual is True:
            raise ValueError(f"Solver {solver} supports only dual=False, got dual={dual}")
        if penalty == "elasticnet" and solver != "saga":
            raise ValueError(f"Only 'saga' solver supports elasticnet penalty, got "
                             f"solver={solver}.")
        if solver == "liblinear" and penalty is None:
            raise ValueError("C=np.inf as well as penalty=None is not supported for the "
                             "liblinear solver")
        if method == "liblinear":
            method = ("dual-cd" if dual is True else
                      "newton-cd" if penalty == "l1" else "newton-cg")
    formulation = check_dual(dual, method)
    if formulation:
        check_formulation("logistic_regression", penalty, True)
    return method, formulation


class LinearSVC(_CDClassifier):
    __doc__ = """Linear SVM: ``C Σ s_i ℓ(y_i(x_iᵀw + b)) + r(w)``, liblinear's objective.

    ``ℓ(m) = max(0, 1 - m)²`` (``loss="squared_hinge"``) or ``max(0, 1 - m)``
    (``loss="hinge"``, dual CD only); ``r`` is ``½‖w‖²`` (l2) or ``‖w‖₁``
    (l1, squared hinge only). Mapping: dividing by ``C n``, cdlearn's
    ``"squared_hinge"``/``"hinge"`` losses, ``λ = 1/(C n)``, raw sample
    weights. The intercept is unpenalised (liblinear penalises its bias).

    Parameters
    ----------
    penalty : {"l2", "l1"}, default="l2"
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    dual : bool or "auto", default="auto"
        scikit-learn's: True runs dual CD, False a primal method (under
        ``solver="auto"``: primal CD where the face-off would choose dual CD);
        "auto" (scikit-learn's rule is dual when ``n_samples < n_features``):
        cdlearn's ``solver="auto"`` choice among the formulations the
        (penalty, loss) pair has (hinge: dual; l1: primal). The pairs liblinear
        lacks raise its error.
    C : float, default=1.0
        Inverse regularisation strength.
    multi_class : {"ovr"}, default="ovr"
        One-vs-rest; "crammer_singer" (a joint multiclass SVM) is not offered.
    solver : str, default="auto"
        cdlearn's method (scikit-learn's LinearSVC has no solver):
        ``"auto"`` (:func:`cdlearn.api.auto_solver`), ``"primal-cd"``,
        ``"dual-cd"``, ``"newton-cd"``, ``"ws-cd"``, ... An explicit method wins
        over ``dual="auto"``.
    """ + _COMMON_PARAMS

    _float32_coef = False  # scikit-learn's (liblinear's) coef_ is float64
    _tol_may_be_zero = False  # scikit-learn's LinearSVC: tol > 0

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1,
                 class_weight=None, verbose=0, random_state=None, max_iter=1000,
                 warm_start=False, n_jobs=None, solver="auto", sampling=None, batch_size=1):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size

    def _objective(self, n_samples):
        check_choice("loss", self.loss, ("squared_hinge", "hinge"))
        check_choice("penalty", self.penalty, ("l1", "l2"))
        if self.multi_class == "crammer_singer":
            raise ValueError("multi_class='crammer_singer' is not supported by cdlearn's "
                             "LinearSVC; use multi_class='ovr' (one-vs-rest)")
        check_choice("multi_class", self.multi_class, ("ovr",))
        C = check_positive("C", self.C)
        return self.loss, self.penalty, 1.0 / (C * n_samples), 0.5

    def fit(self, X, y, sample_weight=None):
        """Fit one binary problem (two classes) or one per class (OvR)."""
        super().fit(X, y, sample_weight)
        self.n_iter_ = int(np.max(self.n_iter_))  # scikit-learn's: the most over the classes
        return self

    def _not_converged(self, result, method):
        return NOT_CONVERGED["liblinear"]

    def _method(self, penalty, n_samples, n_features):
        method = check_solver(self.solver, {})
        if self.dual != "auto":
            formulation = check_dual(self.dual, method)
            check_formulation(self.loss, self.penalty, formulation)
            return method, formulation
        # "auto": cdlearn's own choice (solver="auto"), among the formulations the
        # (loss, penalty) pair has; scikit-learn's shape rule (dual iff n < d) is about
        # liblinear's speed, and on small problems it would trade newton-cd's exact
        # answer for dual CD's
        offered = _FORMULATIONS.get((self.loss, self.penalty), ())
        if not offered:
            check_formulation(self.loss, self.penalty, True)
        return method, (offered[0] if len(offered) == 1 and method == "auto" else None)
