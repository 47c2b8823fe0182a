"""The estimators' stopping rule (issue 18): ``coef_`` within ``tol`` of the optimum.

References are scikit-learn (skglm for the l1 logistic, whose intercept is
unpenalised) converged to a very tight tolerance; the error is
``‖coef − coef*‖∞ / ‖coef*‖∞``.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from benchmarks.parity import SquaredHingeReference  # the repo root is on the path (conftest)
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import cdlearn
from cdlearn.api import make_problem
from cdlearn.estimators import ElasticNet, Lasso, LinearSVC, LogisticRegression, Ridge
from cdlearn.solvers.stopping import GAP_FLOOR, strong_convexity

TIGHT = dict(tol=1e-14, max_iter=1_000_000)


def _wide(seed, n, d, classification=False):
    # benchmarks/parity.py's wide problems: Gaussian X, 10-sparse truth
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[rng.choice(d, 10, replace=False)] = rng.standard_normal(10)
    y = X @ w + 0.1 * rng.standard_normal(n)
    if classification:
        y = np.where(y > np.median(y), 1.0, -1.0)
    return X, y


def _diabetes():
    return load_diabetes(return_X_y=True)


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), np.where(y == 1, 1.0, -1.0)


def _alpha_max(X, y, rho=1.0):
    return float(np.max(np.abs(X.T @ (y - y.mean())))) / (X.shape[0] * rho)


def _alpha_max_logistic(X, y):
    p = (y + 1.0) / 2.0
    return float(np.max(np.abs(X.T @ (p - p.mean())))) / X.shape[0]


def _rel_err(coef, ref):
    ref = np.ravel(ref)
    return float(np.max(np.abs(np.ravel(coef) - ref)) / np.max(np.abs(ref)))


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


# Seeds 3 and 6 (30 × 300): Lasso 2.5e-3 and 3.1e-3, ElasticNet 2.6e-3 and 8.0e-3
# away from the optimum under the former rule (gap ≤ 1e-6 · P(0) alone).
REGRESSION_PROBLEMS = {
    "wide-s3": lambda: _wide(3, 30, 300),
    "wide-s6": lambda: _wide(6, 30, 300),
    "diabetes": _diabetes,
}


@pytest.mark.parametrize("name", REGRESSION_PROBLEMS)
@pytest.mark.parametrize("est, ref, rho", [
    (Lasso, sk.Lasso, 1.0), (ElasticNet, sk.ElasticNet, 0.5)])
def test_l1_regression_default_within_tol(name, est, ref, rho):
    X, y = REGRESSION_PROBLEMS[name]()
    factor = 1e-2 if name == "diabetes" else 1e-3
    alpha = factor * _alpha_max(X, y, rho)
    kw = {} if est is Lasso else dict(l1_ratio=rho)
    w_ref = _quiet_fit(ref(alpha=alpha, **kw, **TIGHT), X, y).coef_
    ours = est(alpha=alpha, **kw).fit(X, y)
    assert _rel_err(ours.coef_, w_ref) <= 1e-4


@pytest.mark.parametrize("name", ["wide-s3", "diabetes"])
def test_ridge_default_within_tol(name):
    X, y = REGRESSION_PROBLEMS[name]()
    w_ref = sk.Ridge(alpha=1.0, solver="svd").fit(X, y).coef_
    assert _rel_err(Ridge(alpha=1.0).fit(X, y).coef_, w_ref) <= 1e-4


CLASSIFICATION_PROBLEMS = {
    "wide-s0": lambda: _wide(0, 30, 300, classification=True),
    "breast-cancer": _breast_cancer,
}


@pytest.mark.parametrize("name", CLASSIFICATION_PROBLEMS)
def test_logistic_l2_default_within_tol(name):
    X, y = CLASSIFICATION_PROBLEMS[name]()
    ref = sk.LogisticRegression(C=1.0, solver="newton-cg", tol=1e-12, max_iter=100_000)
    w_ref = _quiet_fit(ref, X, y).coef_
    assert _rel_err(LogisticRegression().fit(X, y).coef_, w_ref) <= 1e-4


def _l1_logistic_lam(X, y):
    p = (y + 1) / 2
    return 1e-2 * float(np.max(np.abs(X.T @ (p - p.mean())))) / X.shape[0]


@pytest.mark.slow  # skglm compiles its numba kernels at every run (~1 min)
@pytest.mark.parametrize("name", CLASSIFICATION_PROBLEMS)
def test_logistic_l1_default_within_tol(name):
    skglm = pytest.importorskip("skglm")
    X, y = CLASSIFICATION_PROBLEMS[name]()
    lam = _l1_logistic_lam(X, y)
    ref = skglm.SparseLogisticRegression(alpha=lam, fit_intercept=True, tol=1e-13,
                                         max_iter=10_000)
    w_ref = _quiet_fit(ref, X, y).coef_
    ours = LogisticRegression(penalty="l1", C=1.0 / (lam * X.shape[0])).fit(X, y)
    assert _rel_err(ours.coef_, w_ref) <= 1e-4


@pytest.mark.parametrize("name", CLASSIFICATION_PROBLEMS)
def test_logistic_l1_default_within_tol_of_a_tight_solve(name):
    # the fast version of the test above: the reference is primal CD at a 1e-14 gap
    X, y = CLASSIFICATION_PROBLEMS[name]()
    lam = _l1_logistic_lam(X, y)
    ref = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, fit_intercept=True,
                        solver="primal-cd", tol=1e-14, max_epochs=100_000)
    assert ref.converged
    ours = LogisticRegression(penalty="l1", C=1.0 / (lam * X.shape[0])).fit(X, y)
    assert _rel_err(ours.coef_, ref.w) <= 1e-4


@pytest.mark.parametrize("name", CLASSIFICATION_PROBLEMS)
def test_linear_svc_default_within_tol(name):
    X, y = CLASSIFICATION_PROBLEMS[name]()
    w_ref = SquaredHingeReference(dict(C=1.0)).fit(X, y).coef_  # scipy's Newton-CG
    assert _rel_err(LinearSVC().fit(X, y).coef_, w_ref) <= 1e-4


def test_linear_svc_leukemia_small_coefficients(load):
    # ‖w*‖∞ = 3.4e-3 at P(0) = 1: the target gap is ~1e-15, below a floor of
    # 1e-12 · P(0) (this rule's first version: 3.6e-4 away); the floor is now 1e-12 · P(w)
    X, y = load("leu", binary=True)
    X = np.asarray(X.toarray())
    w_ref = SquaredHingeReference(dict(C=1.0)).fit(X, y).coef_
    assert _rel_err(LinearSVC().fit(X, y).coef_, w_ref) <= 1e-4


@pytest.mark.parametrize("est", [Lasso(alpha=0.01, tol=1e-6), ElasticNet(alpha=0.01, tol=1e-6),
                                 LogisticRegression(C=10.0, tol=1e-6),
                                 LogisticRegression(penalty="l1", C=10.0, tol=1e-6)])
@pytest.mark.parametrize("seed", [3, 6])
def test_dense_and_sparse_agree_to_tol(est, seed):
    # both within tol · ‖coef‖∞ of the optimum, hence within 2 tol of each other; with
    # tol = 1e-6 as a gap alone (the former rule) Lasso differed by 6.4e-5 (seed 3) and
    # ElasticNet by 6.3e-5 (seed 6)
    classification = isinstance(est, LogisticRegression)
    X, y = _wide(seed, 30, 300, classification=classification)
    dense = est.fit(X, y).coef_.copy()
    sparse = est.fit(sp.csr_matrix(X), y).coef_
    assert _rel_err(sparse, dense) <= 2 * est.tol


# the routes max_iter can stop: ws-cd (l1 parts), dual-cd (asked for, the hinge loss).
# The routes of the smooth losses without an l1 part (newton-cd, newton-cg,
# primal-cd, and dual-cd for ridge) end in the restricted solve at the first check:
# test_ridge_is_solved_directly, tests/test_ridge_parity.py
@pytest.mark.parametrize("est, wide", [
    (Lasso(alpha=0.01), True), (ElasticNet(alpha=0.01), True),
    (LogisticRegression(C=100.0, solver="dual-cd"), True),
    (LinearSVC(C=100.0, loss="hinge"), True),
])
def test_max_iter_warns(est, wide):
    X, y = _wide(0, 30, 300, classification=not isinstance(est, Lasso | ElasticNet | Ridge))
    if not wide:
        X = X[:, :5]
    est.set_params(max_iter=1)
    with pytest.warns(ConvergenceWarning, match="max_epochs=1 reached"):
        est.fit(X, y)


def test_max_iter_warns_when_only_the_coefficient_target_is_missed():
    # l2 logistic by dual CD, seed 0 (30 × 300), λ = 1/(100 n): the gap reaches
    # 1e-6 · P(0) after 18 epochs, the coefficient target after 51: max_iter=30 warns
    X, y = _wide(0, 30, 300, classification=True)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1.0 / 3000.0,
                        fit_intercept=True, solver="dual-cd", tol=1e-6, max_epochs=30)
    assert res.converged
    with pytest.warns(ConvergenceWarning, match="coef_tol target"):
        LogisticRegression(C=100.0, solver="dual-cd", max_iter=30).fit(X, y)


def test_strong_convexity_is_the_support_hessian_eigenvalue():
    X, y = _wide(3, 30, 300)
    support = np.array([1, 5, 7, 40])
    w = np.zeros(300)
    w[support] = 1.0
    n = X.shape[0]
    p = make_problem(X, y, loss="squared", penalty="elastic_net", lam=0.2, l1_ratio=0.5)
    A = X[:, support]
    expected = np.linalg.eigvalsh(A.T @ A / n)[0] + 0.1
    assert strong_convexity(p, w, 0.0, support) == pytest.approx(expected, rel=1e-10)
    p = make_problem(X, y, loss="squared", penalty="l1", lam=0.2, fit_intercept=True)
    A = A - A.mean(axis=0)  # the intercept minimised out
    assert strong_convexity(p, w, 0.0, support) == pytest.approx(
        np.linalg.eigvalsh(A.T @ A / n)[0], rel=1e-10)
    # more non-zeros than rows: X_S has a null space, μ is λ2 (0 here)
    assert strong_convexity(p, w + 1.0, 0.0, np.arange(300)) == 0.0


def test_ridge_stop_bounds_the_error():
    # ridge: μ ≥ λ2 globally, so the stop is a guarantee; closed form reference
    X, y = _wide(1, 40, 200)
    lam = 1e-2
    n, d = X.shape
    w_star = np.linalg.solve(X.T @ X / n + lam * np.eye(d), X.T @ y / n)
    for coef_tol in (1e-2, 1e-4):
        res = cdlearn.solve(X, y, penalty="l2", lam=lam, solver="primal-cd", tol=1e-3,
                            coef_tol=coef_tol, max_epochs=100_000)
        assert res.converged
        # the target, not the floor, stopped the run
        assert 0.5 * lam * (coef_tol * np.max(np.abs(res.w))) ** 2 > GAP_FLOOR * res.primal
        assert np.sqrt(2 * res.gap / lam) <= coef_tol * np.max(np.abs(res.w)) * (1 + 1e-12)
        assert _rel_err(res.w, w_star) <= coef_tol


def test_coef_tol_is_checked():
    X, y = _wide(0, 10, 20)
    with pytest.raises(ValueError, match="coef_tol"):
        cdlearn.solve(X, y, penalty="l2", lam=1.0, coef_tol=0.0)
    with pytest.raises(ValueError, match="tol"):
        Lasso(tol=-1.0).fit(X, y)


def test_stalled_gap_stops_without_warning():
    # scikit-learn's check_fit_idempotent data: features at mean 100, std 1. ws-cd's gap
    # stays at 1.26e-10 (rounding), above the coefficient target 3.2e-11: without the
    # stall rule the fit ran 1000 outer iterations (37 s) and warned
    from sklearn.model_selection import ShuffleSplit

    rng = np.random.RandomState(0)
    X = rng.normal(loc=100, size=(100, 2))
    y = np.where(rng.randint(low=0, high=2, size=100) == 1, 1.0, -1.0)
    train, _ = next(ShuffleSplit(test_size=0.2, random_state=rng).split(X))
    X, y = X[train], y[train]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=1.0 / 80,
                            fit_intercept=True, tol=1e-6, coef_tol=1e-4, max_epochs=1000)
    # ends by the stall rule, or earlier since the restricted Newton solve of its
    # support: either way converged, without a warning, in few epochs
    assert res.converged and ("stalled" in res.message or "coef_tol target" in res.message)
    assert res.n_epochs < 100
    assert res.gap <= 1e-6 * np.log(2.0)


@pytest.mark.parametrize("reference", [
    # LARS's homotopy is exact up to rounding: 4.7e-11 from the CD reference, in 0.02 s
    "lars",
    # scikit-learn's CD at tol=1e-14 takes ~20 s here
    pytest.param("cd", marks=pytest.mark.slow),
])
def test_gap_plateau_while_support_settles_is_not_a_stall(reference):
    # seed 4 (50 × 1000): the gap stays at ~1.7e-7 for ~100 outer iterations while the
    # support settles (error 2e-2 → 3e-3); a stall rule on the gap alone stopped it there
    # 1.7e-2 away. w moves, so the run goes on to the coefficient target
    X, y = _wide(4, 50, 1000)
    alpha = 1e-3 * _alpha_max(X, y)
    ref = (sk.LassoLars(alpha=alpha, max_iter=100_000, eps=1e-16) if reference == "lars"
           else sk.Lasso(alpha=alpha, **TIGHT))
    w_ref = _quiet_fit(ref, X, y).coef_
    assert _rel_err(Lasso(alpha=alpha).fit(X, y).coef_, w_ref) <= 1e-4


def _primal(p, w, b):
    r = p.y - p.design.matvec(w) - b
    return (0.5 * float(p.sample_weight @ r ** 2) / p.n_samples + p.l1 * np.abs(w).sum()
            + 0.5 * p.l2 * float(w @ w))


@pytest.mark.parametrize("data", ["diabetes", "wide"])
def test_ridge_is_solved_directly(data):
    # the squared loss without an l1 part: one linear solve (n × n Gram on the wide data)
    # at the first check after epoch 1, certified by the gap: max_iter=1 is enough
    X, y = _diabetes() if data == "diabetes" else _wide(0, 30, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ours = Ridge(alpha=1.0, max_iter=1).fit(X, y)
    ref = sk.Ridge(alpha=1.0, solver="svd").fit(X, y)
    assert ours.n_iter_ == 1
    assert _rel_err(ours.coef_, ref.coef_) <= 1e-10
    assert abs(ours.intercept_ - ref.intercept_) <= 1e-9 * max(1.0, abs(ref.intercept_))


def test_degenerate_lasso_support_is_left_by_the_restricted_solve():
    # parity's wide 30 × 300 Lasso at 1e-3 α_max: coordinate descent sat 75 outer
    # iterations on 30 non-zeros (one more than the centred rank 29) at a gap of
    # 1.2e-6 · P(0) and needed 103 in all; the null-space step drops the extra one
    X, y = _wide(0, 30, 300)
    alpha = 1e-3 * _alpha_max(X, y)
    ours = Lasso(alpha=alpha).fit(X, y)
    ref = sk.Lasso(alpha=alpha, **TIGHT).fit(X, y)
    assert _rel_err(ours.coef_, ref.coef_) <= 1e-4
    assert ours.n_iter_ <= 20


def test_tiny_lambda_l1_logistic_is_finished_by_the_restricted_solve():
    # scikit-learn's test_elastic_net_vs_l1_l2 at C = 1e6: P settled by epoch 10 but the
    # gap stayed near 0.2 (the dual point scaled to ‖Xᵀθ‖∞ ≤ λ = 2.7e-9) and ws-cd ran
    # 75 epochs (15 s) before it closed; a primal that stops moving now triggers the
    # restricted solve as a small gap does
    from sklearn.datasets import make_classification

    X, y = make_classification(500, random_state=0)
    X, y = X[:375], np.where(y[:375] == 1, 1.0, -1.0)
    lam = 1.0 / (1e6 * 375)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, fit_intercept=True,
                            tol=1e-4, coef_tol=1e-2, max_epochs=100)
    with warnings.catch_warnings():  # its gap stays large too: only P is compared
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, fit_intercept=True,
                            solver="newton-cd", tol=1e-12, max_epochs=200)
    assert res.converged and res.n_epochs <= 10
    assert res.info["restricted_solves"] >= 1
    assert res.gap <= 1e-4 * np.log(2.0)
    assert abs(res.primal - ref.primal) <= 1e-6 * ref.primal


@pytest.mark.parametrize("penalty, fit_intercept", [("l1", True), ("l1", False),
                                                     ("elastic_net", True)])
def test_restricted_solution_lowers_the_objective(penalty, fit_intercept):
    # from a point on 40 features of a 30-sample problem (a null space of dimension
    # ≥ 10 for the Lasso): P never increases, and the l1 solution has at most
    # rank-many non-zeros and is the stationary point of P on its support
    from cdlearn.solvers.stopping import restricted_solution

    X, y = _wide(2, 30, 300)
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.5, 2.0, 30)
    p = make_problem(X, y, loss="squared", penalty=penalty, lam=0.05, fit_intercept=fit_intercept,
                     sample_weight=sw)
    w = np.zeros(300)
    w[rng.choice(300, 40, replace=False)] = rng.standard_normal(40)
    b = 0.3 if fit_intercept else 0.0
    w2, b2 = restricted_solution(p, w, b)
    assert _primal(p, w2, b2) <= _primal(p, w, b)
    S = np.flatnonzero(w2)
    assert set(S) <= set(np.flatnonzero(w))
    if penalty == "l1":
        assert S.shape[0] <= 30 - int(fit_intercept)
    r = sw * (y - X @ w2 - b2)
    grad = -X[:, S].T @ r / 30 + p.l1 * np.sign(w2[S]) + p.l2 * w2[S]
    assert np.max(np.abs(grad)) <= 1e-9 * max(1.0, np.max(np.abs(X.T @ (sw * y))) / 30)
    if fit_intercept:
        assert abs(r.sum()) <= 1e-9 * np.abs(sw * y).sum()
