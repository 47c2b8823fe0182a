"""scikit-learn's parameters on cdlearn's estimators (issue 18): semantics, errors, warnings.

Behaviour is compared with scikit-learn 1.9's (same warnings and error messages,
same objectives at tightly converged solutions); what cdlearn does not offer is
listed in docs/guide/estimators.md and checked against the signatures here.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
import sklearn.svm as sksvm
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

import cdlearn
from cdlearn.estimators import (
    ElasticNet,
    Lasso,
    LassoCV,
    LinearSVC,
    LogisticRegression,
    LogisticRegressionCV,
    Ridge,
)

TIGHT = dict(tol=1e-12, max_iter=100_000, random_state=0)


def _problem(classification, seed=0, n=60, d=8):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    z = X @ rng.randn(d) + 0.5
    y = np.where(z + rng.randn(n) > 0, 1, 0) if classification else z + rng.randn(n)
    return X, y


def _logistic_objective(X, y, coef, b, C, rho):
    s = np.where(y == 1, 1.0, -1.0)
    w = np.ravel(coef)
    loss = np.logaddexp(0.0, -s * (X @ w + b)).sum()
    return C * loss + rho * np.abs(w).sum() + 0.5 * (1 - rho) * w @ w


def _caught(fit):
    """(category name, message) of the warnings ``fit()`` emits, convergence excluded."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fit()
    return sorted({(w.category.__name__, str(w.message)) for w in rec
                   if not issubclass(w.category, ConvergenceWarning)})


def _error(fit):
    with pytest.raises(ValueError) as info:
        fit()
    return str(info.value)


# --------------------------------------------------------------------------- l1_ratio
def test_l1_ratio_one_fits_l1():
    """scikit-learn ≥ 1.8's l1_ratio=1 is the l1 penalty (cdlearn fitted l2 before)."""
    X, y = _problem(True, n=80, d=10)
    C = 0.1
    ref = sk.LogisticRegression(C=C, l1_ratio=1.0, solver="liblinear", fit_intercept=False,
                                tol=1e-12, max_iter=100_000).fit(X, y)
    ours = LogisticRegression(C=C, l1_ratio=1.0, fit_intercept=False, **TIGHT).fit(X, y)
    f = lambda m: _logistic_objective(X, y, m.coef_, 0.0, C, 1.0)  # noqa: E731
    assert f(ours) == pytest.approx(f(ref), rel=1e-7)
    assert np.count_nonzero(ours.coef_) == np.count_nonzero(ref.coef_) < X.shape[1]


@pytest.mark.parametrize("rho", [0.0, 0.4])
def test_l1_ratio_and_infinite_C_match_sklearn(rho):
    X, y = _problem(True, n=80, d=6)
    C = 0.5
    ref = sk.LogisticRegression(C=C, l1_ratio=rho, solver="saga", tol=1e-12,
                                max_iter=200_000, random_state=0).fit(X, y)
    ours = LogisticRegression(C=C, l1_ratio=rho, **TIGHT).fit(X, y)
    f = lambda m: _logistic_objective(X, y, m.coef_, m.intercept_[0], C, rho)  # noqa: E731
    assert f(ours) == pytest.approx(f(ref), rel=1e-7)
    # C = inf: no penalty (sklearn: C=np.inf replaces penalty=None)
    ref = sk.LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(X, y)
    with warnings.catch_warnings():  # rho > 0 with C = inf: scikit-learn's UserWarning
        warnings.simplefilter("ignore", UserWarning)
        ours = LogisticRegression(C=np.inf, l1_ratio=rho, **TIGHT).fit(X, y)
    assert ours.dual_gap_[0] <= 1e-10
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5)


@pytest.mark.parametrize("params", [
    dict(penalty="l1", l1_ratio=1.0), dict(penalty="l1"), dict(penalty="l2", l1_ratio=0.5),
    dict(penalty="elasticnet", l1_ratio=0.5), dict(penalty=None, C=2.0),
    dict(l1_ratio=None), dict(l1_ratio=0.5), dict(C=np.inf, l1_ratio=0.3),
])
def test_penalty_deprecation_path_warns_as_sklearn(params):
    """The deprecated ``penalty`` spelling: scikit-learn's warnings, categories and messages."""
    X, y = _problem(True, n=40, d=4)
    ours = _caught(lambda: LogisticRegression(**params, max_iter=50).fit(X, y))
    ref = _caught(lambda: sk.LogisticRegression(**params, solver="saga", max_iter=50,
                                                       random_state=0).fit(X, y))
    assert ours == ref and (ours or params in (dict(l1_ratio=0.5),))


def test_penalty_wins_over_l1_ratio():
    """penalty='l1' with the default l1_ratio=0 fits l1, as scikit-learn does (with a warning)."""
    X, y = _problem(True, n=80, d=10)
    with pytest.warns(FutureWarning, match="'penalty' was deprecated"), \
            pytest.warns(UserWarning, match="Inconsistent values: penalty=l1 with l1_ratio=0.0"):
        old = LogisticRegression(penalty="l1", C=0.1, fit_intercept=False, **TIGHT).fit(X, y)
    new = LogisticRegression(l1_ratio=1.0, C=0.1, fit_intercept=False, **TIGHT).fit(X, y)
    np.testing.assert_allclose(old.coef_, new.coef_, atol=1e-9)


def test_logistic_cv_l1_ratios_grid():
    """l1_ratios is cross-validated with Cs; each score is that of the fold's own fit."""
    from sklearn.metrics import log_loss
    from sklearn.model_selection import StratifiedKFold

    X, y = _problem(True, n=90, d=6, seed=3)
    folds = list(StratifiedKFold(3).split(X, y))
    Cs, rhos = [0.05, 1.0], [0.0, 0.5, 1.0]
    m = LogisticRegressionCV(Cs=Cs, l1_ratios=rhos, cv=folds, scoring="neg_log_loss",
                             use_legacy_attributes=False, fit_intercept=False, **TIGHT)
    m.fit(X, y)
    assert m.scores_.shape == (3, 3, 2) and m.coefs_paths_.shape == (3, 3, 2, 1, 6)
    for f, (train, test) in enumerate(folds):
        for j, rho in enumerate(rhos):
            for i, C in enumerate(Cs):
                # seeded: saga draws rows from numpy's global RNG and, for about 1.5% of
                # orders, stops at w = 0 after a few epochs here (its rule accepts
                # max_weight = max_change = 0), which failed CI once
                ref = sk.LogisticRegression(C=C, l1_ratio=rho, solver="saga", tol=1e-13,
                                            fit_intercept=False, max_iter=500_000,
                                            random_state=0)
                ref.fit(X[train], y[train])
                expected = -log_loss(y[test], ref.predict_proba(X[test]))
                assert m.scores_[f, j, i] == pytest.approx(expected, rel=1e-6)
    j, i = np.unravel_index(np.argmax(m.scores_.sum(axis=0)), (3, 2))
    assert (m.l1_ratio_, m.C_) == (rhos[j], Cs[i])


def test_logistic_cv_transitional_defaults_warn_as_sklearn():
    X, y = _problem(True, n=60, d=4)
    ours = _caught(lambda: LogisticRegressionCV(Cs=2, cv=3, max_iter=50).fit(X, y))
    ref = _caught(lambda: sk.LogisticRegressionCV(Cs=2, cv=3, max_iter=50).fit(X, y))
    assert [c for c, _ in ours] == [c for c, _ in ref] == ["FutureWarning"] * 3
    for (_, a), (_, b) in zip(ours, ref, strict=True):
        assert a.split(".")[0] == b.split(".")[0]
    m = LogisticRegressionCV(Cs=2, cv=3, max_iter=50, l1_ratios=(0,), scoring="accuracy",
                             use_legacy_attributes=True)
    assert _caught(lambda: m.fit(X, y)) == []
    with pytest.raises(ValueError, match="l1_ratios must be an array-like"):
        LogisticRegressionCV(l1_ratios=(0.5, 2.0), scoring=None,
                             use_legacy_attributes=False).fit(X, y)


# --------------------------------------------------------------------------- dual, solver
def test_dual_formulations_and_sklearn_errors():
    X, y = _problem(True, n=60, d=8)
    wide = np.hstack([X, X[:, ::-1] * 0.5, X ** 2])[:20]  # n < d
    # dual="auto" is cdlearn's solver="auto" (not scikit-learn's n < d rule)
    yw = np.where(y[:20] == np.unique(y)[1], 1.0, -1.0)
    auto = cdlearn.solve(wide, yw, loss="squared_hinge", penalty="l2", lam=1.0 / 20,
                         fit_intercept=True).solver
    assert LinearSVC(**TIGHT).fit(wide, y[:20]).solver_ == auto
    assert LinearSVC(loss="hinge", **TIGHT).fit(X, y).solver_ == "dual-cd"  # hinge: dual only
    assert LinearSVC(penalty="l1", **TIGHT).fit(X, y).solver_ != "dual-cd"  # l1: primal only
    assert LinearSVC(dual=True, **TIGHT).fit(X, y).solver_ == "dual-cd"
    assert LogisticRegression(dual=True, **TIGHT).fit(X, y).solver_ == "dual-cd"
    assert LogisticRegression(dual=False, **TIGHT).fit(wide, y[:20]).solver_ != "dual-cd"
    for params in (dict(loss="hinge", dual=False), dict(penalty="l1", dual=True),
                   dict(penalty="l1", loss="hinge")):
        assert (_error(lambda p=params: LinearSVC(**p).fit(X, y))
                == _error(lambda p=params: sksvm.LinearSVC(**p).fit(X, y)))
    for params in (dict(dual=True, solver="lbfgs"), dict(l1_ratio=1.0, solver="lbfgs"),
                   dict(l1_ratio=1.0, dual=True, solver="liblinear"),
                   dict(C=np.inf, solver="liblinear"), dict(l1_ratio=0.5, solver="liblinear")):
        assert (_error(lambda p=params: LogisticRegression(**p).fit(X, y))
                == _error(lambda p=params: sk.LogisticRegression(**p).fit(X, y)))
    with pytest.raises(ValueError, match="dual=True runs dual CD"):
        LogisticRegression(dual=True, solver="newton-cd").fit(X, y)
    with pytest.raises(ValueError, match="dual must be"):
        LinearSVC(dual="yes").fit(X, y)
    with pytest.raises(ValueError, match="crammer_singer"):
        LinearSVC(multi_class="crammer_singer").fit(X, y)


@pytest.mark.parametrize("solver, method", [
    ("lbfgs", "newton-cg"), ("newton-cg", "newton-cg"), ("newton-cholesky", "newton-cd"),
    ("liblinear", "newton-cg"), ("sag", None), ("saga", None), ("dual-cd", "dual-cd"),
])
def test_logistic_solver_names(solver, method):
    X, y = _problem(True, n=80, d=6)
    ours = LogisticRegression(C=0.5, solver=solver, **TIGHT).fit(X, y)
    assert method is None or ours.solver_ == method
    ref = sk.LogisticRegression(C=0.5, tol=1e-12, max_iter=10_000).fit(X, y)
    f = lambda m: _logistic_objective(X, y, m.coef_, m.intercept_[0], 0.5, 0.0)  # noqa: E731
    assert f(ours) == pytest.approx(f(ref), rel=1e-9)


@pytest.mark.parametrize("solver, method", [
    ("svd", "newton-cd"), ("cholesky", "newton-cd"), ("lsqr", "newton-cg"),
    ("sparse_cg", "newton-cg"), ("sag", "dual-cd"), ("saga", "dual-cd"), ("auto", None),
])
def test_ridge_solver_names(solver, method):
    X, y = _problem(False, n=80, d=6)
    ours = Ridge(alpha=3.0, solver=solver, **TIGHT).fit(X, y)
    # solver_ is the scikit-learn name given (as scikit-learn's); the method runs under it
    assert ours.solver_ == (solver if method is not None else "gram-cd")  # closed form
    ref = sk.Ridge(alpha=3.0, solver="cholesky").fit(X, y)  # closed form

    def f(m):
        r = y - X @ m.coef_ - m.intercept_
        return r @ r + 3.0 * m.coef_ @ m.coef_

    assert f(ours) == pytest.approx(f(ref), rel=1e-11)


def test_solver_errors_name_the_parameter():
    X, y = _problem(False)
    assert (_error(lambda: Ridge(solver="lbfgs").fit(X, y))
            == _error(lambda: sk.Ridge(solver="lbfgs").fit(X, y)))
    for est in (Ridge(solver="qr"), Lasso(solver="lars"), LogisticRegression(solver="sgd")):
        with pytest.raises(ValueError, match=r"solver='\w+' is not supported; .*'ws-cd'"):
            est.fit(X, y if not isinstance(est, LogisticRegression) else y > 0)


# --------------------------------------------------------------------------- regression
def test_selection_precompute_copy_X():
    X, y = _problem(False, n=80, d=10)
    alpha = 0.05
    ref = sk.Lasso(alpha=alpha, tol=1e-14, max_iter=100_000).fit(X, y)
    X0 = X.copy()
    for params, method in ((dict(selection="random"), "primal-cd"),
                           (dict(precompute=True), "gram-cd"),
                           (dict(precompute="auto", copy_X=False), "gram-cd")):
        m = Lasso(alpha=alpha, **params, **TIGHT).fit(X, y)
        assert m.solver_ == method, params
        np.testing.assert_allclose(m.coef_, ref.coef_, atol=1e-8)
    np.testing.assert_array_equal(X, X0)
    # selection="random" is seeded by random_state
    a = ElasticNet(alpha=alpha, selection="random", random_state=1, tol=1e-4).fit(X, y)
    b = ElasticNet(alpha=alpha, selection="random", random_state=1, tol=1e-4).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="selection"):
        Lasso(selection="greedy").fit(X, y)
    with pytest.raises(ValueError, match="selection='random'"):
        Lasso(selection="random", sampling="importance").fit(X, y)
    with pytest.warns(UserWarning, match="Gram matrix was provided but X was centered"):
        assert Lasso(precompute=X.T @ X).fit(X, y).solver_ == "gram-cd"
    with pytest.raises(ValueError, match="Gram matrix passed in via 'precompute' parameter did "
                                         "not pass validation"):
        Lasso(precompute=X.T @ X + 1.0).fit(X - X.mean(axis=0), y)
    with pytest.raises(ValueError, match="precompute"):
        Lasso(precompute="yes").fit(X, y)
    with pytest.raises(ValueError, match="precompute=True"):
        Lasso(precompute=True, solver="primal-cd").fit(X, y)
    with pytest.raises(TypeError, match="copy_X"):
        Ridge(copy_X="no").fit(X, y)


def test_ridge_max_iter_none_and_intercept_scaling():
    X, y = _problem(False, n=80, d=6)
    a = Ridge(alpha=1.0, max_iter=None, random_state=0).fit(X, y)
    b = Ridge(alpha=1.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    Xc, yc = _problem(True, n=80, d=6)
    a = LogisticRegression(intercept_scaling=10.0, **TIGHT).fit(Xc, yc)
    b = LogisticRegression(**TIGHT).fit(Xc, yc)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="intercept_scaling"):
        LinearSVC(intercept_scaling=0.0).fit(Xc, yc)


def test_balanced_class_weight_counts_sample_weights():
    """class_weight='balanced' with sample weights: scikit-learn's weighted class counts."""
    X, y = _problem(True, n=80, d=6, seed=2)
    sw = np.random.RandomState(0).uniform(0.2, 3.0, 80)
    ref = sk.LogisticRegression(C=0.5, class_weight="balanced", tol=1e-12,
                                max_iter=10_000).fit(X, y, sample_weight=sw)
    ours = LogisticRegression(C=0.5, class_weight="balanced", **TIGHT).fit(X, y,
                                                                           sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-5)


def test_lasso_cv_alphas_int_n_alphas_deprecated_cv_none():
    X, y = _problem(False, n=100, d=8)
    ref = sk.LassoCV(alphas=7, tol=1e-10, max_iter=100_000).fit(X, y)
    ours = LassoCV(alphas=7, tol=1e-10, max_iter=100_000, random_state=0).fit(X, y)
    assert ours.mse_path_.shape == ref.mse_path_.shape == (7, 5)  # cv=None: 5 folds
    np.testing.assert_allclose(ours.alphas_, ref.alphas_, rtol=1e-12)
    with pytest.warns(FutureWarning, match="n_alphas"):
        old = LassoCV(n_alphas=7, tol=1e-10, max_iter=100_000, random_state=0).fit(X, y)
    np.testing.assert_array_equal(old.alphas_, ours.alphas_)
    with pytest.raises(ValueError, match="alphas"):
        LassoCV(alphas=0).fit(X, y)


# --------------------------------------------------------------------------- not offered
ESTIMATORS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "estimators.md"
PAIRS = {"Lasso": sk.Lasso, "ElasticNet": sk.ElasticNet, "Ridge": sk.Ridge,
         "LogisticRegression": sk.LogisticRegression, "LinearSVC": sksvm.LinearSVC,
         "LassoCV": sk.LassoCV, "ElasticNetCV": sk.ElasticNetCV,
         "LogisticRegressionCV": sk.LogisticRegressionCV}


def _documented_not_offered():
    """``{estimator: [params]}`` from the estimators page's "not offered" list."""
    text = ESTIMATORS_PAGE.read_text()
    section = text[text.index("<!-- not-offered -->"):text.index("<!-- /not-offered -->")]
    out = {}
    for name, params in re.findall(r"^- `(\w+)`: (.*)$", section, flags=re.M):
        out[name] = sorted(re.findall(r"`(\w+)`", params))
    return out


def test_docs_list_the_parameters_not_offered():
    """The estimators page's list equals scikit-learn's parameters missing from cdlearn's signatures."""
    import cdlearn.estimators as est

    computed = {name: sorted(set(ref().get_params()) - set(getattr(est, name)().get_params()))
                for name, ref in PAIRS.items()}
    assert _documented_not_offered() == computed


def test_class_weight_cv_and_svc_match_sklearn():
    """class_weight in LogisticRegressionCV (weights from the full data) and LinearSVC."""
    from sklearn.model_selection import StratifiedKFold

    X, y = _problem(True, n=90, d=5, seed=4)
    sw = np.random.RandomState(1).uniform(0.5, 2.0, 90)
    folds = list(StratifiedKFold(3).split(X, y))
    kw = dict(Cs=[0.1, 1.0], cv=folds, scoring="neg_log_loss", l1_ratios=(0.0,),
              use_legacy_attributes=False, class_weight="balanced")
    ours = LogisticRegressionCV(**kw, **TIGHT).fit(X, y, sample_weight=sw)
    ref = sk.LogisticRegressionCV(**kw, tol=1e-12, max_iter=10_000).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.scores_, ref.scores_, rtol=1e-6)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5)
    cw = {0: 1.0, 1: 3.0}
    ours = LinearSVC(class_weight=cw, fit_intercept=False, **TIGHT).fit(X, y, sample_weight=sw)
    ref = sksvm.LinearSVC(class_weight=cw, fit_intercept=False, dual=False, tol=1e-12)
    ref.fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6)


# --------------------------------------------------------------------------- check_input, groups
def test_fit_check_input_false():
    """check_input=False skips validation (scikit-learn's meaning): the same fit as with
    checks on a Fortran- or C-ordered array or a CSC matrix, y cast to X's dtype; X that
    is not a float array or CSC/CSR matrix raises ValueError; X and sample_weight are
    not modified."""
    X, y = _problem(False, d=6)
    XF = np.asfortranarray(X)
    ref = sk.ElasticNet(alpha=0.1, **TIGHT).fit(X, y)
    for est in (ElasticNet(alpha=0.1, **TIGHT), Lasso(alpha=0.1, **TIGHT)):
        sk_est = sk.Lasso(alpha=0.1, **TIGHT).fit(X, y) if isinstance(est, Lasso) else ref
        checked = clone(est).fit(X, y)
        sw = np.full(len(y), 1.25)
        trusted = clone(est).fit(XF, y, sample_weight=sw, check_input=False)
        np.testing.assert_allclose(trusted.coef_, sk_est.coef_, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(trusted.coef_, checked.coef_, rtol=1e-12, atol=1e-15)
        assert trusted.n_features_in_ == X.shape[1]
        np.testing.assert_array_equal(sw, 1.25)
        sparse_fit = clone(est).fit(sp.csc_matrix(X), y, check_input=False)
        np.testing.assert_allclose(sparse_fit.coef_, sk_est.coef_, rtol=1e-8, atol=1e-12)
        c_order = clone(est).fit(np.ascontiguousarray(X), y, check_input=False)
        np.testing.assert_allclose(c_order.coef_, sk_est.coef_, rtol=1e-8, atol=1e-12)
        for bad in (X.tolist(), X.astype(np.int64), sp.coo_matrix(X)):
            with pytest.raises(ValueError, match="check_input=False: X must be a 2-d float64"):
                clone(est).fit(bad, y, check_input=False)
    f32 = ElasticNet(alpha=0.1).fit(XF.astype(np.float32), y, check_input=False)
    assert f32.coef_.dtype == np.float32
    with pytest.raises(TypeError, match="check_input must be a bool"):
        ElasticNet().fit(XF, y, check_input="no")


@pytest.mark.parametrize("cls", [sk.LassoCV, sk.ElasticNetCV])
def test_cv_groups_routed_to_the_splitter(cls):
    """``fit(X, y, groups=...)`` reaches the CV splitter through metadata routing, as in
    scikit-learn (same folds, so the same alpha_ and mse_path_); without routing enabled
    it raises scikit-learn's ValueError."""
    import sklearn
    from sklearn.model_selection import GroupKFold

    ours = {"LassoCV": LassoCV, "ElasticNetCV": cdlearn.estimators.ElasticNetCV}[cls.__name__]
    X, y = _problem(False, n=60, d=8)
    groups = np.arange(60) % 4
    with pytest.raises(ValueError, match="is only supported if enable_metadata_routing=True"):
        ours(alphas=5).fit(X, y, groups=groups)
    with sklearn.config_context(enable_metadata_routing=True):
        kw = dict(alphas=5, cv=GroupKFold(n_splits=4), tol=1e-12, max_iter=100_000)
        ref = cls(**kw).fit(X, y, groups=groups)
        mine = ours(**kw).fit(X, y, groups=groups)
    np.testing.assert_allclose(mine.alphas_, ref.alphas_, rtol=1e-12)
    np.testing.assert_allclose(mine.mse_path_, ref.mse_path_, rtol=1e-6)
    assert mine.alpha_ == pytest.approx(ref.alpha_, rel=1e-12)
