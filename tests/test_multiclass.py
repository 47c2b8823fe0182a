"""One-vs-rest multiclass through cdlearn.solve and the classifiers (shared threaded fan-out)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm
from sklearn.datasets import load_digits, load_iris
from sklearn.multiclass import OneVsRestClassifier

import cdlearn
from cdlearn import LinearSVC
from cdlearn.kernels import dual_cd, primal_cd, spdc
from cdlearn.multiclass import MulticlassResult, is_multiclass, n_workers


def _digits(n=400):
    X, y = load_digits(return_X_y=True)
    return X[:n] / 16.0, y[:n]


def test_kernels_release_the_gil():
    for kernel in (primal_cd.primal_cd_epoch, dual_cd.dual_cd_epoch,
                   dual_cd.dual_cd_pair_epoch, spdc.spdc_epoch):
        assert kernel.targetoptions.get("nogil") is True, kernel


@pytest.mark.parametrize("solver", ["dual-cd", "primal-cd", "spdc"])
def test_solve_ovr_equals_per_class_binary_solves(solver):
    X, y = _digits()
    kw = dict(loss="logistic", penalty="l2", lam=1e-2, solver=solver, tol=1e-8, seed=3)
    res = cdlearn.solve(X, y, n_jobs=2, **kw)
    assert isinstance(res, MulticlassResult)
    np.testing.assert_array_equal(res.classes, np.arange(10))
    assert res.coef.shape == (10, 64) and res.intercept.shape == (10,)
    assert res.converged and res.solver == solver and res.n_jobs == 2
    for k, c in enumerate(res.classes):
        single = cdlearn.solve(X, np.where(y == c, 1.0, -1.0), **kw)
        np.testing.assert_allclose(res.coef[k], single.w, rtol=0, atol=1e-12)
        assert res.primal[k] == pytest.approx(single.primal, rel=1e-12)
        assert res.results[k].gap <= 1e-8 * res.results[k].trace["primal"][0]


def test_threads_do_not_change_the_result():
    X, y = _digits()
    X = sp.csr_matrix(X)
    kw = dict(loss="smooth_hinge", penalty="elastic_net", lam=1e-2, l1_ratio=0.3,
              solver="dual-cd", tol=1e-7, seed=0)
    one = cdlearn.solve(X, y, n_jobs=1, **kw)
    two = cdlearn.solve(X, y, n_jobs=-1, **kw)
    np.testing.assert_array_equal(one.coef, two.coef)
    np.testing.assert_array_equal(one.alpha, two.alpha)


def test_auto_solver_string_labels_and_predict():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    res = cdlearn.solve(X, names, loss="logistic", lam=1e-3, fit_intercept=True, tol=1e-8)
    assert list(res.classes) == ["setosa", "versicolor", "virginica"]
    assert res.solver in ("primal-cd", "dual-cd", "newton-cd", "newton-cg") and "reason" in res.info
    assert (res.predict(X) == names).mean() > 0.9
    assert res.decision_function(X).shape == (150, 3)


def test_ovr_matches_sklearn_liblinear_objectives():
    """Squared-hinge OvR (no intercept) against liblinear's OvR, per class objective."""
    X, y = _digits(300)
    C = 0.5
    n = X.shape[0]
    ref = OneVsRestClassifier(svm.LinearSVC(C=C, fit_intercept=False, tol=1e-10,
                                            max_iter=100_000)).fit(X, y)
    ours = cdlearn.solve(X, y, loss="squared_hinge", penalty="l2", lam=1.0 / (C * n),
                         tol=1e-10, max_epochs=5000)
    est = LinearSVC(C=C, fit_intercept=False, tol=1e-10, max_iter=5000, n_jobs=2,
                    random_state=0).fit(X, y)

    def obj(w, yk):
        m = np.maximum(0.0, 1.0 - yk * (X @ w))
        return 0.5 * w @ w + C * np.sum(m * m)

    for k, c in enumerate(ours.classes):
        yk = np.where(y == c, 1.0, -1.0)
        f_ref = obj(ref.estimators_[k].coef_[0], yk)
        assert obj(ours.coef[k], yk) == pytest.approx(f_ref, rel=1e-7)
        assert obj(est.coef_[k], yk) == pytest.approx(f_ref, rel=1e-7)


def test_ovr_estimator_threads_equal_sequential():
    X, y = _digits(300)
    kw = dict(C=1.0, tol=1e-8, max_iter=5000, random_state=0)
    # one-vs-rest on threads: LinearSVC (LogisticRegression fits one multinomial model)
    seq = LinearSVC(**kw).fit(X, y)
    par = LinearSVC(n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(par.coef_, seq.coef_)
    np.testing.assert_array_equal(par.intercept_, seq.intercept_)


def test_per_class_warm_start():
    X, y = _digits()
    kw = dict(loss="logistic", penalty="l2", lam=1e-2, solver="dual-cd", tol=1e-8)
    first = cdlearn.solve(X, y, **kw)
    again = cdlearn.solve(X, y, alpha0=first.alpha, **kw)
    assert again.n_epochs.max() <= 1
    with pytest.raises(ValueError, match="alpha0 must have shape"):
        cdlearn.solve(X, y, alpha0=first.alpha[:, :5], **kw)


def test_detection_and_errors():
    assert is_multiclass("logistic", [0, 1, 2])
    assert not is_multiclass("logistic", [-1, 1, 1])
    # ±1 labels leave after one comparison pass; anything else is counted
    assert not is_multiclass("logistic", np.array([1.0, -1.0, -1.0]))
    assert is_multiclass("logistic", np.array([-1.0, 1.0, 3.0]))
    assert is_multiclass("logistic", np.array([-1, 1, 0], dtype=np.int8))
    assert not is_multiclass("logistic", [-1.0, 1.0, np.nan])
    assert not is_multiclass("squared", [0, 1, 2])
    assert not is_multiclass("logistic", [0.0, np.nan, 2.0])
    assert is_multiclass("logistic", [0.0, 1.0, 2.0])
    assert is_multiclass("logistic", ["a", "b", "c"])
    assert not is_multiclass("logistic", [0.5, 1.0, 2.0])  # continuous: not labels
    X, y = _digits(60)
    with pytest.raises(ValueError, match="NaN"):
        cdlearn.solve(X, np.where(y == 0, np.nan, y), loss="logistic", lam=0.1)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        cdlearn.solve(X, (y > 4).astype(float), loss="logistic", lam=0.1)  # {0, 1}: 2 labels
    with pytest.raises(ValueError, match="n_jobs"):
        cdlearn.solve(X, y, loss="logistic", lam=0.1, n_jobs=0)
    with pytest.raises(TypeError, match="n_jobs"):
        n_workers(1.5, 3)
    assert n_workers(None, 1) == 1 and n_workers(-1, 100) >= 1
    # regression with many distinct targets is not multiclass
    res = cdlearn.solve(X, y.astype(float), loss="squared", lam=0.1)
    assert res.w.shape == (64,)
