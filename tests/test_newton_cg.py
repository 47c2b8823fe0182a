"""solver="newton-cg" (truncated Newton, liblinear -s 0 / -s 2) against independent references."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.objectives import primal_value
from cdlearn.solvers import SOLVERS
from cdlearn.solvers.newton_cg import NewtonCGState
from references import ridge_closed_form, ridge_problem

SMOOTH = ["logistic", "squared_hinge", "smooth_hinge"]


def _classification(seed=0, n=200, d=60, density=0.15, fmt="csr"):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format=fmt,
                  data_rvs=lambda k: rng.standard_normal(k) * 2.0)
    w = rng.standard_normal(d)
    y = np.where(X @ w + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _objective(X, y, loss, lam, w, b=0.0, sw=None):
    p = make_problem(X, y, loss=loss, penalty="l2", lam=lam)
    sw = np.ones(X.shape[0]) if sw is None else sw
    return primal_value(p.loss_code, np.asarray(X @ w).ravel() + b, p.y, sw, w, 0.0, lam)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ridge_matches_closed_form(sparse, fit_intercept):
    rng = np.random.default_rng(0)
    X, y = ridge_problem(rng, sparse=sparse)
    w_star, b_star = ridge_closed_form(X, y, 0.05, intercept=fit_intercept)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.05, solver="newton-cg",
                        tol=1e-18, max_epochs=50, fit_intercept=fit_intercept)
    assert res.solver == "newton-cg" and res.n_epochs < 15
    assert np.linalg.norm(res.w - w_star) <= 1e-8 * np.linalg.norm(w_star)
    assert abs(res.intercept - b_star) <= 1e-8 * max(1.0, abs(b_star))
    assert 0.0 <= res.gap <= 1e-14 * res.trace["primal"][0]


@pytest.mark.parametrize("fmt", ["csr", "csc", "dense"])
def test_logistic_matches_dual_cd(fmt):
    X, y = _classification(fmt="csr" if fmt == "dense" else fmt)
    if fmt == "dense":
        X = X.toarray()
    lam = 1e-3
    ref = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="dual-cd",
                        tol=1e-12, max_epochs=100000)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="newton-cg",
                        tol=1e-12)
    assert ref.converged and res.converged and res.n_epochs <= 15
    assert abs(res.primal - ref.primal) <= 1e-9 * ref.primal
    # the certificate is an exact gap: P - D at the reported dual, below tol·P(0)
    assert 0.0 <= res.gap <= 1e-12 * res.trace["primal"][0]
    assert abs((res.primal - res.dual) - res.gap) <= 1e-12
    assert res.primal - ref.dual >= -1e-13  # weak duality against the other method's dual
    assert np.abs(res.w - ref.w).max() <= 1e-4 * np.abs(ref.w).max()


def test_squared_hinge_matches_liblinear_svc():
    sk = pytest.importorskip("sklearn.svm")
    X, y = _classification(seed=1)
    n, lam = X.shape[0], 1e-2
    svc = sk.LinearSVC(loss="squared_hinge", C=1.0 / (lam * n), fit_intercept=False, dual=True,
                       tol=1e-10, max_iter=100000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(X, y)
    p_ref = _objective(X, y, "squared_hinge", lam, svc.coef_.ravel())
    res = cdlearn.solve(X, y, loss="squared_hinge", penalty="l2", lam=lam, solver="newton-cg",
                        tol=1e-12)
    assert res.converged
    assert abs(res.primal - p_ref) <= 1e-9 * p_ref
    assert res.dual <= p_ref + 1e-15  # weak duality: our certificate bounds liblinear's point


@pytest.mark.parametrize("loss", SMOOTH + ["squared"])
def test_sample_weights_equal_row_duplication(loss):
    X, y = _classification(seed=2, n=120, d=30, density=0.3)
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 4, size=X.shape[0]).astype(np.float64)
    rows = np.repeat(np.arange(X.shape[0]), counts.astype(int))
    lam = 1e-2
    kw = dict(loss=loss, penalty="l2", solver="newton-cg", tol=1e-13, fit_intercept=True)
    # duplication multiplies the sample count: the weighted run's λ per (weighted) sample
    res_w = cdlearn.solve(X, y, lam=lam * rows.size / X.shape[0], sample_weight=counts, **kw)
    res_d = cdlearn.solve(X[rows], y[rows], lam=lam, **kw)
    assert res_w.converged and res_d.converged
    np.testing.assert_allclose(res_w.w, res_d.w, rtol=0, atol=1e-7 * np.abs(res_d.w).max())
    assert abs(res_w.intercept - res_d.intercept) <= 1e-7 * max(1.0, abs(res_d.intercept))


@pytest.mark.parametrize("loss", SMOOTH)
def test_intercept_matches_dual_cd(loss):
    X, y = _classification(seed=4)
    y = np.where(np.arange(y.size) % 4 == 0, 1.0, y)  # unbalanced: a nonzero intercept
    lam = 1e-3
    ref = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=lam, solver="dual-cd",
                        fit_intercept=True, tol=1e-12, max_epochs=200000)
    res = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=lam, solver="newton-cg",
                        fit_intercept=True, tol=1e-12)
    assert res.converged and abs(res.intercept) > 1e-3
    assert abs(res.primal - ref.primal) <= 1e-9 * ref.primal
    assert abs(res.intercept - ref.intercept) <= 1e-4 * max(1.0, abs(ref.intercept))
    # a certified gap at the exact intercept: no dual point of dual-cd lies above our primal
    assert res.primal - ref.dual >= -1e-12 and res.gap <= 1e-12 * res.trace["primal"][0]


def test_registry_and_errors():
    spec = SOLVERS["newton-cg"]
    assert spec.build is NewtonCGState and "preconditioner" in spec.options
    X, y = _classification(n=50, d=10)
    with pytest.raises(ValueError, match="newton-cg.*penalty='l1'"):
        cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=1e-2, solver="newton-cg")
    with pytest.raises(ValueError, match="newton-cg.*loss='hinge'"):
        cdlearn.solve(X, y, loss="hinge", penalty="l2", lam=1e-2, solver="newton-cg")
    # a primal method: w0 warm-starts it (the solution is certified at once)
    first = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-2, solver="newton-cg",
                          tol=1e-10)
    warm = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-2, solver="newton-cg",
                         tol=1e-10, w0=first.w)
    assert warm.converged and warm.n_epochs <= 1 < first.n_epochs
    with pytest.raises(ValueError, match="cg_eta"):
        cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-2, solver="newton-cg",
                      cg_eta=2.0)
    with pytest.raises(ValueError, match="max_cg"):
        cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-2, solver="newton-cg",
                      max_cg=0)


@pytest.mark.parametrize("options", [dict(preconditioner=False), dict(cg_eta=0.01), dict(cg_eta=0.5),
                                     dict(max_cg=3)])
def test_options_reach_the_same_optimum(options):
    X, y = _classification(seed=5)
    base = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-3, solver="newton-cg",
                         tol=1e-12)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-3, solver="newton-cg",
                        tol=1e-12, max_epochs=500, **options)
    assert res.converged and abs(res.primal - base.primal) <= 1e-10 * base.primal


def test_trace_counts_passes_and_gap_decreases():
    X, y = _classification(seed=6)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-3, solver="newton-cg",
                        tol=1e-12)
    gaps, passes = res.trace["gap"], res.trace["passes"]
    assert np.all(np.diff(passes) >= 3.0)  # gradient, preconditioner, >= 1 CG product
    assert gaps[-1] < 1e-10 * gaps[0]
    assert res.info["cg_iters"] >= res.n_epochs


@pytest.mark.parametrize("name,loss", [("reuters-money-fx", "logistic"),
                                       ("a9a", "squared_hinge")])
def test_real_data_matches_dual_cd(load, name, loss):
    X, y = load(name, binary=True)
    n = X.shape[0]
    lam = 1.0 / n
    res = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=lam, solver="newton-cg", tol=1e-10)
    ref = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=lam, solver="dual-cd", tol=1e-10,
                        max_epochs=5000)
    assert res.converged and res.n_epochs <= 30
    p0 = res.trace["primal"][0]
    assert res.gap <= 1e-10 * p0
    assert abs(res.primal - ref.primal) <= 2e-10 * p0


def test_auto_runs_newton_cg_for_small_lambda_on_evenly_scaled_rows():
    """auto's rule (api.dual_condition): κ = β·mean(s‖x‖²)/(λn) ≥ 10 and no dominant row."""
    from cdlearn.api import NEWTON_CG_KAPPA, auto_solver, dual_condition

    rng = np.random.default_rng(12)
    n, d = 400, 3000  # many features: newton-cd's Gram form does not apply
    X = sp.random(n, d, density=0.01, random_state=12, format="csr")
    X.data = rng.standard_normal(X.nnz)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    X = sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X  # unit rows, as tf-idf text
    y = np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)
    small = make_problem(X, y, loss="logistic", penalty="l2", lam=1.0 / (100 * n))
    kappa, spread = dual_condition(small)
    assert kappa == pytest.approx(0.25 * 100, rel=1e-9) and spread == pytest.approx(1.0)
    assert kappa >= NEWTON_CG_KAPPA
    assert auto_solver(small)[0] == "newton-cg"
    large = make_problem(X, y, loss="logistic", penalty="l2", lam=1.0 / n)
    assert auto_solver(large)[0] in ("primal-cd", "dual-cd")
    Xu = X.tolil()
    Xu[0] = Xu[0] * 100.0  # one dominant row: CG's conditioning suffers
    uneven = make_problem(Xu.tocsr(), y, loss="logistic", penalty="l2", lam=1.0 / (100 * n))
    assert dual_condition(uneven)[1] > 10
    assert auto_solver(uneven)[0] in ("primal-cd", "dual-cd")
    # what auto returns is the same optimum as dual CD's
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1.0 / (100 * n), tol=1e-10)
    ref = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1.0 / (100 * n),
                        solver="dual-cd", tol=1e-10, max_epochs=20000)
    assert res.solver == "newton-cg" and res.converged and ref.converged
    assert res.primal == pytest.approx(ref.primal, rel=1e-8)
