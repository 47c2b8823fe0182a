"""scikit-learn parity of the classifiers (issue 18): multinomial accuracy at the defaults,
LogisticRegressionCV's multinomial folds, and the errors scikit-learn specifies."""

import numpy as np
import pytest
import sklearn.linear_model as sk
from sklearn.datasets import load_digits, load_iris
from sklearn.preprocessing import StandardScaler

from cdlearn.estimators import LogisticRegression, LogisticRegressionCV


def _digits():
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X[:600]), y[:600]


def test_multinomial_defaults_within_tol_of_the_optimum():
    # the gap test alone left digits' coefficients 9.5e-4 relative from the optimum; the
    # coefficient target (λ2) and Newton steps bound it by tol = 1e-4
    X, y = _digits()
    ref = sk.LogisticRegression(tol=1e-12, max_iter=100_000).fit(X, y)
    for solver in ("auto", "lbfgs", "newton-cg"):
        ours = LogisticRegression(solver=solver).fit(X, y)
        err = np.abs(ours.coef_ - ref.coef_).max() / np.abs(ref.coef_).max()
        assert err <= 1e-4, solver
    assert ours.solver_ == "multinomial-newton"


def test_unpenalised_multinomial_is_centred_and_optimal():
    rng = np.random.RandomState(0)
    X = rng.randn(200, 3)
    y = np.argmax(X @ rng.randn(3, 3) + 2.0 * rng.randn(200, 3), axis=1)
    ours = LogisticRegression(C=np.inf, tol=1e-9).fit(X, y)
    np.testing.assert_allclose(ours.coef_.sum(axis=0), 0.0, atol=1e-10)  # scikit-learn's
    ref = sk.LogisticRegression(C=np.inf, tol=1e-12, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6)


def test_newton_names_two_single_steps_equal_two_steps():
    X, y = load_iris(return_X_y=True)
    two = LogisticRegression(solver="newton-cg", max_iter=2, fit_intercept=False)
    with pytest.warns(Warning):
        two.fit(X, y)
    one = LogisticRegression(solver="newton-cg", max_iter=1, warm_start=True,
                             fit_intercept=False)
    with pytest.warns(Warning):
        one.fit(X, y)
        one.fit(X, y)
    np.testing.assert_allclose(one.coef_, two.coef_, rtol=1e-9)


def test_cv_multinomial_folds_and_refit():
    # the folds were one-vs-rest while LogisticRegression fits the multinomial model
    X, y = load_iris(return_X_y=True)
    cv = LogisticRegressionCV(Cs=[1.0], l1_ratios=(0,), scoring="neg_log_loss",
                              use_legacy_attributes=False, tol=1e-8).fit(X, y)
    ref = sk.LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(cv.coef_, ref.coef_, rtol=1e-5)
    assert cv.coefs_paths_.shape == (5, 1, 1, 3, 5)
    proba = cv.predict_proba(X)
    np.testing.assert_allclose(proba, ref.predict_proba(X), atol=1e-6)


def test_cv_fold_missing_a_class():
    from sklearn.model_selection import KFold
    X, y = np.arange(6.0)[:, None], np.array(["a", "a", "b", "b", "c", "c"])
    cv = LogisticRegressionCV(cv=KFold(3), Cs=[1.0], l1_ratios=(0,),
                              scoring="neg_brier_score", use_legacy_attributes=False).fit(X, y)
    # fold 0 trains on b and c: class a gets intercept -inf (probability 0) and weight 0
    assert cv.coefs_paths_[0, 0, 0, 0, -1] == -np.inf
    assert cv.coefs_paths_[0, 0, 0, 0, 0] == 0.0


def test_cv_score_uses_scoring():
    X, y = load_iris(return_X_y=True)
    cv = LogisticRegressionCV(Cs=[1.0], l1_ratios=(0,), scoring="neg_log_loss",
                              use_legacy_attributes=False).fit(X, y)
    from sklearn.metrics import log_loss
    assert cv.score(X, y) == pytest.approx(-log_loss(y, cv.predict_proba(X)), rel=1e-12)


def test_errors_scikit_learn_specifies():
    X, y = load_iris(return_X_y=True)
    msg = "The 'liblinear' solver does not support multiclass classification"
    for Est in (LogisticRegression, LogisticRegressionCV):
        with pytest.raises(ValueError, match=msg):
            Est(solver="liblinear").fit(X, y)
    clf = LogisticRegression(warm_start=True).fit(X, y == 1)
    clf.coef_[:] = np.nan
    with pytest.raises(ValueError, match="Floating-point under-/overflow"):
        clf.fit(X, y == 1)
