"""scikit-learn estimators: API compliance, α/C → λ mappings, objectives vs scikit-learn.

Objectives are compared, not coefficients: each reference is converged tightly and
each mapping is checked by evaluating scikit-learn's own objective at both solutions.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
import sklearn.svm as sksvm
from sklearn.datasets import load_digits, load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from cdlearn.estimators import (
    ElasticNet,
    ElasticNetCV,
    GroupLasso,
    Lasso,
    LassoCV,
    LinearSVC,
    LogisticRegression,
    LogisticRegressionCV,
    MultiTaskElasticNet,
    MultiTaskLasso,
    Ridge,
)

REL = 1e-6  # required relative agreement of objectives


# --------------------------------------------------------------------------- API compliance
# No expected failures: scikit-learn's sample-weight checks compare weighted and repeated
# fits at rtol=1e-7, which the default stopping rule (the gap bounds the coefficients'
# error, cdlearn.solvers.stopping) meets on their small problems.
@parametrize_with_checks(
    [
        Lasso(),
        ElasticNet(),
        Ridge(),
        LogisticRegression(),
        LogisticRegression(l1_ratio=1.0),
        LinearSVC(),
        # smaller max_iter / grids keep the suite fast (as scikit-learn's own tests do)
        LinearSVC(loss="hinge", max_iter=200),
        LassoCV(cv=3, alphas=5, eps=1e-2, max_iter=200),
        ElasticNetCV(l1_ratio=[0.5, 1.0], cv=3, alphas=5, eps=1e-2),
        Lasso(positive=True),
        ElasticNet(positive=True),
        GroupLasso(groups=1),
        LogisticRegressionCV(Cs=[0.1, 1.0], cv=3, max_iter=200, l1_ratios=(0.0,),
                             scoring=None, use_legacy_attributes=False),
        MultiTaskLasso(),
        MultiTaskElasticNet(),
    ],
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


# --------------------------------------------------------------------------- objectives
def enet_objective(X, y, w, b, alpha, rho=1.0, sw=None):
    """scikit-learn's Lasso/ElasticNet objective (weights rescaled to sum to n)."""
    n = y.shape[0]
    sw = np.ones(n) if sw is None else sw * (n / sw.sum())
    r = y - X @ w - b
    return (sw @ r**2) / (2 * n) + alpha * rho * np.abs(w).sum() + 0.5 * alpha * (1 - rho) * w @ w


def ridge_objective(X, y, w, b, alpha, sw=None):
    r = y - X @ w - b
    sw = np.ones_like(y) if sw is None else sw
    return sw @ r**2 + alpha * w @ w


def logistic_objective(X, y, w, b, C, penalty="l2", sw=None):
    """C Σ s_i log(1 + exp(-y_i z_i)) + r(w), y in {-1, +1}."""
    sw = np.ones_like(y) if sw is None else sw
    loss = sw @ np.logaddexp(0.0, -y * (X @ w + b))
    reg = 0.5 * w @ w if penalty == "l2" else np.abs(w).sum()
    return C * loss + reg


def svm_objective(X, y, w, b, C, loss="squared_hinge", sw=None):
    sw = np.ones_like(y) if sw is None else sw
    h = np.maximum(0.0, 1.0 - y * (X @ w + b))
    return C * (sw @ (h**2 if loss == "squared_hinge" else h)) + 0.5 * w @ w


def assert_objective_close(ours, ref, rel=REL):
    """|ours - ref| <= rel |ref| (a tightly converged reference may be slightly worse)."""
    assert abs(ours - ref) <= rel * abs(ref), (ours, ref, (ours - ref) / ref)


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def test_lasso_objective_leu(load):
    X, y = load("leu", binary=True)
    X = _dense(X)
    alpha = 0.1 * np.abs(X.T @ (y - y.mean())).max() / len(y)
    ref = sk.Lasso(alpha=alpha, tol=1e-14, max_iter=200_000).fit(X, y)
    ours = Lasso(alpha=alpha, tol=1e-9, max_iter=100_000, random_state=0).fit(X, y)
    assert ours.dual_gap_ <= 1e-9 * 0.5 * np.mean(y**2)
    assert_objective_close(enet_objective(X, y, ours.coef_, ours.intercept_, alpha),
                           enet_objective(X, y, ref.coef_, ref.intercept_, alpha))


def test_elastic_net_objective_abalone(load):
    X, y = load("abalone_scale")
    Xd = _dense(X)
    alpha, rho = 0.02, 0.5
    ref = sk.ElasticNet(alpha=alpha, l1_ratio=rho, tol=1e-14, max_iter=200_000).fit(Xd, y)
    ours = ElasticNet(alpha=alpha, l1_ratio=rho, tol=1e-10, max_iter=100_000,
                      random_state=0).fit(X, y)  # sparse input, unpenalised intercept
    assert_objective_close(enet_objective(Xd, y, ours.coef_, ours.intercept_, alpha, rho),
                           enet_objective(Xd, y, ref.coef_, ref.intercept_, alpha, rho))


def test_ridge_objective_abalone(load):
    X, y = load("abalone_scale")
    Xd = _dense(X)
    alpha = 100.0
    ref = sk.Ridge(alpha=alpha, solver="cholesky").fit(Xd, y)  # closed form
    ours = Ridge(alpha=alpha, tol=1e-12, max_iter=100_000, random_state=0).fit(X, y)
    assert_objective_close(ridge_objective(Xd, y, ours.coef_, ours.intercept_, alpha),
                           ridge_objective(Xd, y, ref.coef_, ref.intercept_, alpha))


def test_logistic_l2_objective_reuters(load):
    X, y = load("reuters-money-fx", binary=True)
    C = 1.0
    ref = sk.LogisticRegression(C=C, tol=1e-12, max_iter=20_000).fit(X, y)  # lbfgs
    ours = LogisticRegression(C=C, tol=1e-10, max_iter=10_000, random_state=0).fit(X, y)
    assert_objective_close(
        logistic_objective(X, y, ours.coef_[0], ours.intercept_[0], C),
        logistic_objective(X, y, ref.coef_[0], ref.intercept_[0], C))


def test_logistic_l1_objective_a9a(load):
    X, y = load("a9a", binary=True)
    idx = np.random.RandomState(0).choice(X.shape[0], 2000, replace=False)
    X, y = X[idx], y[idx]
    C = 0.1
    # liblinear penalises its bias: compare without intercept
    ref = sk.LogisticRegression(C=C, l1_ratio=1.0, solver="liblinear", fit_intercept=False,
                                tol=1e-12, max_iter=100_000).fit(X, y)
    ours = LogisticRegression(l1_ratio=1.0, C=C, fit_intercept=False, tol=1e-10,
                              max_iter=100_000, random_state=0).fit(X, y)
    assert_objective_close(logistic_objective(X, y, ours.coef_[0], 0.0, C, "l1"),
                           logistic_objective(X, y, ref.coef_[0], 0.0, C, "l1"))


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_linear_svc_objective_reuters(load, loss):
    X, y = load("reuters-money-fx", binary=True)
    C = 0.1
    # liblinear penalises its bias: compare without intercept. The squared hinge uses
    # liblinear's primal Newton solver (exact); the hinge has only its dual CD.
    if loss == "squared_hinge":
        ref = sksvm.LinearSVC(C=C, dual=False, fit_intercept=False, tol=1e-12).fit(X, y)
    else:
        ref = sksvm.LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=False, tol=1e-6,
                              max_iter=100_000).fit(X, y)
    ours = LinearSVC(C=C, loss=loss, fit_intercept=False, tol=1e-10, max_iter=10_000,
                     random_state=0).fit(X, y)
    assert ours.solver_ == "dual-cd" or loss == "squared_hinge"
    assert_objective_close(svm_objective(X, y, ours.coef_[0], 0.0, C, loss),
                           svm_objective(X, y, ref.coef_[0], 0.0, C, loss))


@pytest.mark.parametrize("name", ["iris", "digits"])
def test_multiclass_ovr_objectives(name):
    X, y = (load_iris if name == "iris" else load_digits)(return_X_y=True)
    C = 1.0
    if name == "digits":
        X, C = StandardScaler().fit_transform(X), 0.1
    ref = OneVsRestClassifier(sk.LogisticRegression(C=C, tol=1e-12, max_iter=10_000)).fit(X, y)
    # LogisticRegression is multinomial for >= 3 classes; one-vs-rest is this wrapper
    ours = OneVsRestClassifier(
        LogisticRegression(C=C, tol=1e-9, max_iter=20_000, random_state=0)).fit(X, y)
    for k, c in enumerate(ours.classes_):
        yk = np.where(y == c, 1.0, -1.0)
        e, o = ref.estimators_[k], ours.estimators_[k]
        assert_objective_close(logistic_objective(X, yk, o.coef_[0], o.intercept_[0], C),
                               logistic_objective(X, yk, e.coef_[0], e.intercept_[0], C))
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_ovr_n_jobs_matches_sequential():
    X, y = load_iris(return_X_y=True)
    kw = dict(C=1.0, tol=1e-6, max_iter=5000, random_state=0)
    seq = LinearSVC(**kw).fit(X, y)  # one-vs-rest (LogisticRegression is multinomial)
    par = LinearSVC(n_jobs=2, **kw).fit(X, y)
    # not bit-identical: worker processes run BLAS (X @ w in the gap checks) with
    # another thread count, which changes rounding
    np.testing.assert_allclose(par.coef_, seq.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(par.intercept_, seq.intercept_, rtol=1e-6, atol=1e-8)


def test_linear_svc_hinge_with_intercept_matches_libsvm():
    # libsvm's SVC(kernel="linear") has an unpenalised intercept, like ours
    X, y, _ = _weighted_problem(True, seed=1, n=40)
    C = 0.5
    ref = sksvm.SVC(kernel="linear", C=C, tol=1e-12).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = LinearSVC(C=C, loss="hinge", tol=1e-7, max_iter=100000, random_state=0).fit(X, y)
    # the hinge dual with Σα = 0 (random pairs) converges slowly at high precision: 1e-7
    assert ours.dual_gap_[0] <= 1e-7  # P(0) = 1 for the hinge with s = 1
    assert_objective_close(svm_objective(X, y, ours.coef_[0], ours.intercept_[0], C, "hinge"),
                           svm_objective(X, y, ref.coef_[0], ref.intercept_[0], C, "hinge"),
                           rel=1e-6)


# --------------------------------------------------------------------------- weights
def _weighted_problem(classification, seed=0, n=60, d=8):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    w = rng.randn(d)
    z = X @ w + 0.5
    y = np.where(z + rng.randn(n) > 0, 1.0, -1.0) if classification else z + rng.randn(n)
    sw = rng.uniform(0.2, 3.0, n)
    return X, y, sw


@pytest.mark.parametrize("kind", ["lasso", "enet", "ridge", "logistic_l2", "logistic_l1",
                                  "svc"])
def test_sample_weight_mapping_matches_sklearn(kind):
    """The weighted objectives are scikit-learn's (incl. Lasso's rescaling of weights)."""
    X, y, sw = _weighted_problem(kind in ("logistic_l2", "logistic_l1", "svc"))
    tight = dict(tol=1e-12, max_iter=100_000, random_state=0)
    if kind in ("lasso", "enet"):
        alpha, rho = 0.05, (1.0 if kind == "lasso" else 0.3)
        ref = sk.ElasticNet(alpha=alpha, l1_ratio=rho, tol=1e-14, max_iter=100_000)
        ours = ElasticNet(alpha=alpha, l1_ratio=rho, **tight)
        f = lambda m: enet_objective(X, y, m.coef_, m.intercept_, alpha, rho, sw)  # noqa: E731
    elif kind == "ridge":
        alpha = 3.0
        ref, ours = sk.Ridge(alpha=alpha, solver="cholesky"), Ridge(alpha=alpha, **tight)
        f = lambda m: ridge_objective(X, y, m.coef_, m.intercept_, alpha, sw)  # noqa: E731
    elif kind.startswith("logistic"):
        C, pen = 0.5, kind.split("_")[1]
        if pen == "l2":
            ref = sk.LogisticRegression(C=C, tol=1e-12, max_iter=10_000)
            fi = True
        else:
            ref = sk.LogisticRegression(C=C, l1_ratio=1.0, solver="liblinear",
                                        fit_intercept=False, tol=1e-12, max_iter=100_000)
            fi = False
        ours = LogisticRegression(l1_ratio=float(pen == "l1"), C=C, fit_intercept=fi, **tight)
        f = lambda m: logistic_objective(  # noqa: E731
            X, y, m.coef_[0], m.intercept_[0] if fi else 0.0, C, pen, sw)
    else:
        C = 0.5
        ref = sksvm.LinearSVC(C=C, dual=False, fit_intercept=False, tol=1e-12)
        ours = LinearSVC(C=C, fit_intercept=False, **tight)
        f = lambda m: svm_objective(X, y, m.coef_[0], 0.0, C, sw=sw)  # noqa: E731
    ref.fit(X, y, sample_weight=sw)
    ours.fit(X, y, sample_weight=sw)
    assert_objective_close(f(ours), f(ref))


@pytest.mark.parametrize("make", [
    lambda: Lasso(alpha=0.05), lambda: ElasticNet(alpha=0.05), lambda: Ridge(alpha=2.0),
    lambda: LogisticRegression(C=0.5), lambda: LinearSVC(C=0.5),
    lambda: LinearSVC(C=0.5, loss="hinge", fit_intercept=False),
])
def test_weight_two_equals_duplicating_rows(make):
    cls = isinstance(make(), (LogisticRegression, LinearSVC))
    X, y, _ = _weighted_problem(cls, seed=1, n=40)
    dup = np.arange(0, 40, 3)
    sw = np.ones(40)
    sw[dup] = 2.0
    Xd, yd = np.vstack([X, X[dup]]), np.concatenate([y, y[dup]])
    a = make().set_params(tol=1e-13, max_iter=100_000, random_state=0).fit(X, y, sample_weight=sw)
    b = make().set_params(tol=1e-13, max_iter=100_000, random_state=0).fit(Xd, yd)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("make", [
    lambda cv: LassoCV(alphas=5, eps=1e-2, cv=cv),
    lambda cv: LogisticRegressionCV(Cs=[0.1, 1.0, 10.0], cv=cv, scoring="neg_log_loss",
                                    l1_ratios=(0.0,), use_legacy_attributes=False),
])
def test_cv_weights_equal_repetitions(make):
    """Integer weights = repeated rows, folds included (scores are weighted too)."""
    from sklearn.model_selection import PredefinedSplit

    cls = "Logistic" in type(make(3)).__name__
    X, y, _ = _weighted_problem(cls, seed=5, n=45)
    sw = np.random.RandomState(0).randint(1, 4, 45).astype(float)
    fold = np.arange(45) % 3
    rep = np.repeat(np.arange(45), sw.astype(int))
    kw = dict(tol=1e-13, max_iter=100_000, random_state=0)
    a = make(PredefinedSplit(fold)).set_params(**kw).fit(X, y, sample_weight=sw)
    b = make(PredefinedSplit(fold[rep])).set_params(**kw).fit(X[rep], y[rep])
    path_a, path_b = (a.mse_path_, b.mse_path_) if not cls else (a.scores_, b.scores_)
    np.testing.assert_allclose(path_a, path_b, rtol=1e-6)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5, rtol=1e-5)


# --------------------------------------------------------------------------- sparse, warm start
@pytest.mark.parametrize("make", [
    lambda: Lasso(alpha=0.02), lambda: Ridge(alpha=1.0), lambda: LogisticRegression(C=1.0),
    lambda: LinearSVC(C=1.0), lambda: LogisticRegression(l1_ratio=1.0, C=1.0),
])
def test_sparse_and_dense_give_same_model_with_intercept(make):
    rng = np.random.RandomState(3)
    X = rng.rand(80, 12) * (rng.rand(80, 12) < 0.4)
    w = rng.randn(12)
    clf = isinstance(make(), (LogisticRegression, LinearSVC))
    y = X @ w + 1.0 + 0.1 * rng.randn(80)
    if clf:
        y = np.where(y > np.median(y), 1, 0)
    kw = dict(tol=1e-12, max_iter=200_000, random_state=0)
    dense = make().set_params(**kw).fit(X, y)
    for fmt in ("csr", "csc"):
        spm = make().set_params(**kw).fit(sp.csr_matrix(X).asformat(fmt), y)
        # a gap of 1e-12 bounds ‖Δw‖ by sqrt(2 gap / λ) ~ 1e-5 here
        np.testing.assert_allclose(spm.coef_, dense.coef_, atol=1e-5, rtol=1e-5)
        np.testing.assert_allclose(spm.intercept_, dense.intercept_, atol=1e-5, rtol=1e-5)
        np.testing.assert_allclose(spm.predict(sp.csr_matrix(X)), dense.predict(X), atol=1e-5)


def test_warm_start_reduces_epochs_primal():
    X, y, _ = _weighted_problem(False, seed=2, n=200, d=30)
    # tol above float64's floor: at tol <= 1e-8 both runs end by the stall rule at the
    # rounding floor of the gap (105 epochs each; warm 65 < cold 73 at 1e-7)
    kw = dict(tol=1e-7, max_iter=100_000, random_state=0, solver="primal-cd")
    warm = Lasso(alpha=0.05, warm_start=True, **kw).fit(X, y)
    warm.set_params(alpha=0.045).fit(X, y)
    cold = Lasso(alpha=0.045, **kw).fit(X, y)
    assert warm.n_iter_ < cold.n_iter_
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=1e-6)


def test_warm_start_reuses_dual_variables():
    X, y, _ = _weighted_problem(True, seed=2, n=300, d=20)
    kw = dict(tol=1e-10, max_iter=100_000, random_state=0, solver="dual-cd")
    warm = LogisticRegression(C=1.0, warm_start=True, **kw).fit(X, y)
    assert warm.solver_ == "dual-cd"
    warm.fit(X, y)  # same problem: starts from the optimum
    assert warm.n_iter_[0] == 0
    warm.set_params(C=1.2).fit(X, y)
    cold = LogisticRegression(C=1.2, **kw).fit(X, y)
    assert warm.n_iter_[0] < cold.n_iter_[0]
    f = lambda m: logistic_objective(X, y, m.coef_[0], m.intercept_[0], 1.2)  # noqa: E731
    assert_objective_close(f(warm), f(cold), rel=1e-8)


def test_warm_start_across_solvers():
    """A primal solution warm-starts dual CD through α = -s φ'(Xw + b)."""
    X, y, _ = _weighted_problem(True, seed=4, n=300, d=20)
    kw = dict(tol=1e-10, max_iter=100_000, random_state=0)
    m = LogisticRegression(C=1.0, warm_start=True, solver="primal-cd", **kw).fit(X, y)
    m.set_params(solver="dual-cd").fit(X, y)
    cold = LogisticRegression(C=1.0, solver="dual-cd", **kw).fit(X, y)
    assert m.n_iter_[0] < cold.n_iter_[0]


# --------------------------------------------------------------------------- API details
def test_fitted_attributes_binary_and_regression():
    X, y, _ = _weighted_problem(True, n=50)
    m = LogisticRegression().fit(X, y)
    assert m.coef_.shape == (1, X.shape[1]) and m.intercept_.shape == (1,)
    assert m.n_iter_.shape == (1,) and m.dual_gap_.shape == (1,)
    assert m.solver_ in ("primal-cd", "dual-cd", "newton-cd", "newton-cg", "ws-cd") and len(m.trace_) >= 1
    assert m.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(m.classes_, [-1.0, 1.0])
    np.testing.assert_allclose(m.predict_proba(X)[:, 1], 1 / (1 + np.exp(-m.decision_function(X))))
    r = Ridge().fit(X, y)
    assert r.coef_.shape == (X.shape[1],) and isinstance(r.intercept_, float)
    assert isinstance(r.n_iter_, int) and isinstance(r.dual_gap_, float)
    r2 = Ridge().fit(X, np.column_stack([y, 2 * y]))
    assert r2.coef_.shape == (2, X.shape[1]) and r2.predict(X).shape == (X.shape[0], 2)
    np.testing.assert_allclose(r2.coef_[1], 2 * r2.coef_[0], rtol=1e-3, atol=1e-6)


def test_string_labels_and_errors():
    X, y, _ = _weighted_problem(True, n=50)
    labels = np.where(y > 0, "spam", "ham")
    m = LinearSVC().fit(X, labels)
    assert set(m.predict(X)) <= {"spam", "ham"}
    with pytest.raises(ValueError, match="class"):
        LogisticRegression().fit(X, np.ones(50))
    with pytest.raises(ValueError, match="penalty"):
        LogisticRegression(penalty="l3").fit(X, y)
    with pytest.raises(ValueError, match="l1"):
        LinearSVC(penalty="l1", loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        Lasso(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        Lasso().fit(np.full((3, 2), np.nan), [1.0, 2.0, 3.0])


def test_no_penalty_maps_to_none():
    X, y, _ = _weighted_problem(False, n=100, d=5)
    ours = Ridge(alpha=0.0, tol=1e-12, max_iter=100_000, random_state=0).fit(X, y)
    ref = sk.LinearRegression().fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------------- issue 18
def test_warm_start_from_user_coef_without_intercept():
    """A coef_ set by hand (no intercept_) warm-starts the fit, as scikit-learn's Lasso."""
    X, y, _ = _weighted_problem(False, seed=2, n=100, d=10)
    alpha = 0.05
    ref = sk.Lasso(alpha=alpha, tol=1e-14, max_iter=100_000).fit(X, y)
    m = Lasso(alpha=alpha, warm_start=True, tol=1e-12, max_iter=100_000, random_state=0)
    m.coef_ = ref.coef_.copy()  # no intercept_: used to raise AttributeError
    m.fit(X, y)
    np.testing.assert_allclose(m.coef_, ref.coef_, atol=1e-7)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, atol=1e-7)
    cold = Lasso(alpha=alpha, tol=1e-12, max_iter=100_000, random_state=0).fit(X, y)
    assert m.n_iter_ < cold.n_iter_


@pytest.mark.parametrize("scoring", ["neg_log_loss", "neg_brier_score", "accuracy"])
def test_logistic_cv_fold_missing_a_class(scoring):
    """A test fold with one class is scored against all classes (crashed with log loss)."""
    from sklearn.metrics import get_scorer
    from sklearn.model_selection import KFold

    rng = np.random.RandomState(0)
    X = rng.randn(30, 4)
    y = np.r_[np.zeros(10, int), np.tile([0, 1], 10)]  # KFold(3): first test fold all 0
    folds = list(KFold(3).split(X))
    kw = dict(Cs=[0.1, 1.0], cv=folds, scoring=scoring, tol=1e-12, max_iter=10_000,
              random_state=0, l1_ratios=(0.0,), use_legacy_attributes=False)
    m = LogisticRegressionCV(**kw).fit(X, y)
    for i, (train, test) in enumerate(folds):
        for j, C in enumerate([0.1, 1.0]):
            ref = sk.LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X[train],
                                                                             y[train])
            expected = (get_scorer(scoring)(ref, X[test], y[test]) if scoring == "accuracy"
                        else -_prob_metric(scoring, y[test], ref.predict_proba(X[test])))
            np.testing.assert_allclose(m.scores_[i, 0, j], expected, rtol=1e-6)


def _prob_metric(scoring, y, proba):
    from sklearn.metrics import brier_score_loss, log_loss

    if scoring == "neg_log_loss":
        return log_loss(y, proba, labels=[0, 1])
    return brier_score_loss(y, proba[:, 1], pos_label=1, labels=[0, 1])


def test_dual_cd_default_meets_the_coefficient_rule():
    """LinearSVC(dual=True) at the default tol: ‖coef − w*‖∞ ≤ tol·‖w*‖∞ (liblinear's primal)."""
    X, y, sw = _weighted_problem(True, seed=3, n=40, d=6)
    ours = LinearSVC(fit_intercept=False, dual=True, random_state=0).fit(X, y, sample_weight=sw)
    assert ours.solver_ == "dual-cd"
    ref = sksvm.LinearSVC(dual=False, fit_intercept=False, tol=1e-12).fit(X, y, sample_weight=sw)
    err = np.max(np.abs(ours.coef_ - ref.coef_)) / np.max(np.abs(ref.coef_))
    assert err <= 1e-4, err
