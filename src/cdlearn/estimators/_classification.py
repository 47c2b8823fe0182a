"""Linear classifiers: LogisticRegression and LinearSVC (binary, multiclass one-vs-rest).

Each minimises ``1/n Σ s_i φ(y_i(x_iᵀw + b)) + λ g(w)`` per binary problem
with :func:`cdlearn.solve`, ``y_i ∈ {-1, +1}``; with ``K > 2`` classes, one
problem "class k vs rest" per class (OvR), solved in parallel with ``n_jobs``
threads by the same fan-out as ``cdlearn.solve``'s multiclass one-vs-rest.
"""

from __future__ import annotations

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
    CDEstimatorBase,
    check_bool,
    check_ratio,
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
    cw = compute_class_weight(class_weight, classes=classes, y=y)
    return sw * cw[np.searchsorted(classes, y)]


class _CDClassifier(ClassifierMixin, CDEstimatorBase):
    """Linear classifier on :func:`cdlearn.solve`; subclasses give loss and penalty."""

    #: "multinomial": ≥ 3 classes fit one softmax model (LogisticRegression), else OvR
    _multiclass = "ovr"

    def _objective(self, n_samples):
        """(loss, penalty, λ, l1_ratio) of cdlearn's objective."""
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
        self._multinomial = classes.size > 2 and self._multiclass == "multinomial"
        if self._multinomial:
            return fit_multinomial(self, design, y, classes, sw)
        loss, penalty, lam, l1_ratio = self._objective(n)
        self.classes_ = classes
        results, method = run_problems(
            design, targets, [sw] * len(targets), loss=loss, penalty=penalty, lam=lam,
            l1_ratio=l1_ratio, fit_intercept=self.fit_intercept, solver=self.solver,
            options=self._solve_options(),
            warm=self._warm_list(len(targets), design.n_features), n_jobs=self.n_jobs,
        )
        self._store_results(results, method)
        self.coef_ = np.vstack([r.w for r in results])
        self.intercept_ = np.array([r.intercept if self.fit_intercept else 0.0
                                    for r in results])
        self.n_iter_ = np.array([r.n_epochs for r in results])
        self.dual_gap_ = np.array([r.gap for r in results])
        self.trace_ = results[0].trace if len(results) == 1 else [r.trace for r in results]
        return self

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
    class_weight : dict, "balanced" or None, default=None
        Multiplies the sample weights ``s_i`` by the weight of each sample's class.
    tol : float, default=1e-6
        Stop when the duality gap is ≤ ``tol · P(0)`` (cdlearn's objective).
    max_iter : int, default=1000
        Maximum number of epochs per binary problem.
    warm_start : bool, default=False
        Start from the previous ``coef_``/``intercept_`` (and dual variables).
    random_state : int, RandomState or None, default=None
        Seed of the coordinate sampling.
    n_jobs : int or None, default=None
        Threads for the one-vs-rest problems (None: 1, -1: all cores); they share
        the data (:func:`cdlearn.multiclass.run_many`, as ``cdlearn.solve`` does).
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
    classes_ : (n_classes,)
    coef_ : (1, n_features) binary, (n_classes, n_features) OvR
    intercept_ : (1,) or (n_classes,)
    n_iter_ : (1,) or (n_classes,) epochs per binary problem
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
    if penalty is None or C == np.inf:
        return "none", None, 0.5
    pen = _PENALTIES[penalty]
    rho = check_ratio("l1_ratio", l1_ratio) if pen == "elastic_net" else 0.5
    if pen == "elastic_net" and rho in (0.0, 1.0):
        pen = "l1" if rho == 1 else "l2"
    return pen, 1.0 / C, rho


class LogisticRegression(_CDClassifier):
    """Logistic regression: ``C Σ s_i log(1 + exp(-y_i(x_iᵀw + b))) + r(w)``.

    ``r`` is ``½‖w‖²`` (l2), ``‖w‖₁`` (l1) or ``ρ‖w‖₁ + (1-ρ)/2‖w‖²``
    (elasticnet), scikit-learn's objective. Mapping: dividing by ``C n``,
    ``loss="logistic"``, ``λ = 1/(C n)``, raw sample weights. With three or
    more classes the model is multinomial, as scikit-learn's: ``C Σ s_i
    CE(softmax(x_iᵀW + b), y_i) + r(W)`` with ``r`` on every entry of ``W``,
    fit by L-BFGS (l2, none) or block CD over the rows of ``W`` (l1, elastic net;
    ``solver`` "multinomial-lbfgs" / "multi-cd"; :mod:`cdlearn.estimators._multinomial`;
    ``coef_`` (K, d), ``n_iter_``/``dual_gap_`` of the one problem, the
    intercepts centred); ``sampling`` is then ``"cyclic"`` (None), ``"shuffle"``
    or ``"uniform"``. One-vs-rest: ``sklearn.multiclass.OneVsRestClassifier(
    LogisticRegression(...))`` (or ``cdlearn.solve`` with a multiclass ``y``).

    Parameters
    ----------
    penalty : {"l2", "l1", "elasticnet", None}, default="l2"
    C : float, default=1.0
        Inverse regularisation strength (``np.inf``: no penalty).
    l1_ratio : float in [0, 1], default=0.5
        ρ, used with ``penalty="elasticnet"`` only.
    """ + _COMMON_PARAMS

    def __init__(self, penalty="l2", *, C=1.0, l1_ratio=0.5, fit_intercept=True,
                 class_weight=None, tol=1e-6, max_iter=1000, warm_start=False,
                 random_state=None, n_jobs=None, solver="auto", sampling=None,
                 batch_size=1, verbose=0):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.verbose = verbose

    _multiclass = "multinomial"

    def _objective(self, n_samples):
        pen, inv_c, rho = _penalty(self.penalty, self.l1_ratio, self.C)
        return "logistic", pen, None if inv_c is None else inv_c / n_samples, rho

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


class LinearSVC(_CDClassifier):
    """Linear SVM: ``C Σ s_i ℓ(y_i(x_iᵀw + b)) + r(w)``, liblinear's objective.

    ``ℓ(m) = max(0, 1 - m)²`` (``loss="squared_hinge"``) or ``max(0, 1 - m)``
    (``loss="hinge"``, dual CD only); ``r`` is ``½‖w‖²`` (l2) or ``‖w‖₁``
    (l1, squared hinge only). Mapping: dividing by ``C n``, cdlearn's
    ``"squared_hinge"``/``"hinge"`` losses, ``λ = 1/(C n)``, raw sample
    weights. The intercept is unpenalised (liblinear penalises its bias).

    Parameters
    ----------
    penalty : {"l2", "l1"}, default="l2"
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    C : float, default=1.0
        Inverse regularisation strength.
    """ + _COMMON_PARAMS

    def __init__(self, penalty="l2", loss="squared_hinge", *, C=1.0, fit_intercept=True,
                 class_weight=None, tol=1e-6, max_iter=1000, warm_start=False,
                 random_state=None, n_jobs=None, solver="auto", sampling=None,
                 batch_size=1, verbose=0):
        self.penalty = penalty
        self.loss = loss
        self.C = C
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.solver = solver
        self.sampling = sampling
        self.batch_size = batch_size
        self.verbose = verbose

    def _objective(self, n_samples):
        check_choice("loss", self.loss, ("squared_hinge", "hinge"))
        check_choice("penalty", self.penalty, ("l1", "l2"))
        if self.loss == "hinge" and self.penalty == "l1":
            raise ValueError("penalty='l1' needs loss='squared_hinge' (the hinge loss is "
                             "solved by dual CD, which needs a strongly convex penalty)")
        C = check_positive("C", self.C)
        return self.loss, self.penalty, 1.0 / (C * n_samples), 0.5
