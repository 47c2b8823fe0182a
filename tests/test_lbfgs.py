"""solver="lbfgs" (limited-memory BFGS, exact line search on the margins) against
independent references, its certificate, its errors and auto's rule for it."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

import cdlearn
from cdlearn.api import LBFGS_MIN_ENTRIES, auto_solver, make_problem
from cdlearn.objectives import primal_value
from references import ridge_closed_form, ridge_problem, sparse_classification_problem


def _dense(seed=0, n=300, d=20):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 2.0, size=d)
    y = np.where(X @ rng.standard_normal(d) + rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.uniform(0.5, 2.0, n)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_logistic_matches_sklearn(fit_intercept, weighted):
    X, y, sw = _dense(1)
    sw = sw if weighted else None
    n, lam = X.shape[0], 1e-2
    # gap 1e-16·P(0): ‖w - w*‖ ≤ √(2·gap/λ) ~ 1e-8
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="lbfgs",
                        tol=1e-16, fit_intercept=fit_intercept, sample_weight=sw)
    # scikit-learn's objective is n times cdlearn's: C = 1/(λn)
    ref = LogisticRegression(C=1.0 / (lam * n), solver="newton-cholesky", tol=1e-15,
                             max_iter=1000, fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
    w_ref, b_ref = ref.coef_.ravel(), float(ref.intercept_[0]) if fit_intercept else 0.0
    assert res.solver == "lbfgs" and res.converged
    np.testing.assert_allclose(res.w, w_ref, rtol=0, atol=1e-8 * np.abs(w_ref).max())
    assert abs(res.intercept - b_ref) <= 1e-8 * max(1.0, abs(b_ref))
    s = np.ones(n) if sw is None else sw
    p = make_problem(X, y, loss="logistic", penalty="l2", lam=lam)
    f_ref = primal_value(p.loss_code, X @ w_ref + b_ref, p.y, s, w_ref, 0.0, lam)
    assert res.primal == pytest.approx(f_ref, rel=1e-12)
    # the exact gap: P - D at the reported dual point, below tol·P(0)
    assert 0.0 <= res.gap == pytest.approx(res.primal - res.dual, abs=1e-15)
    assert res.gap <= 1e-16 * np.log(2.0) * float(s.mean())


@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_matches_closed_form(sparse):
    X, y = ridge_problem(np.random.default_rng(3), sparse=sparse)
    w_star, b_star = ridge_closed_form(X, y, 0.05, intercept=True)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.05, solver="lbfgs",
                        tol=1e-16, fit_intercept=True, max_epochs=500, n_threads=1)
    # columns scaled 0.1-3: L-BFGS ends at float64's floor of the gap (~5e-15·P(0)),
    # which leaves ~1e-8 of w
    assert res.converged and res.gap <= 1e-14 * res.trace["primal"][0]
    assert np.linalg.norm(res.w - w_star) <= 1e-7 * np.linalg.norm(w_star)
    assert abs(res.intercept - b_star) <= 1e-7 * max(1.0, abs(b_star))


def test_sparse_squared_hinge_matches_newton_cg():
    X, y, sw = sparse_classification_problem(seed=4, weights=True)
    # one thread: the parallel sparse products cost ~20 ms a call on a loaded 2-core runner
    kw = dict(loss="squared_hinge", penalty="l2", lam=1e-3, sample_weight=sw, tol=1e-13,
              fit_intercept=True, n_threads=1)
    res = cdlearn.solve(X, y, solver="lbfgs", max_epochs=2000, **kw)
    ref = cdlearn.solve(X, y, solver="newton-cg", **kw)
    assert res.converged and ref.converged
    assert res.primal == pytest.approx(ref.primal, rel=1e-11)
    np.testing.assert_allclose(res.w, ref.w, atol=1e-5 * np.abs(ref.w).max())


def test_warm_start_and_memory():
    X, y, _ = _dense(2)
    kw = dict(loss="logistic", penalty="l2", lam=1e-3, solver="lbfgs", tol=1e-12)
    res = cdlearn.solve(X, y, **kw)
    again = cdlearn.solve(X, y, w0=res.w, **kw)
    assert again.converged and again.n_epochs <= 1
    one = cdlearn.solve(X, y, memory=1, max_epochs=5000, **kw)  # memory 1: still exact
    assert one.converged and one.info["memory"] == 1
    assert one.primal == pytest.approx(res.primal, rel=1e-11)


def test_errors():
    X, y, _ = _dense(3, n=50, d=5)
    kw = dict(loss="logistic", penalty="l2", lam=0.1, solver="lbfgs")
    for bad in (0, 2.5, True, "10"):
        with pytest.raises(ValueError, match="memory must be an integer >= 1"):
            cdlearn.solve(X, y, memory=bad, **kw)
    with pytest.raises(ValueError, match="solver='lbfgs' does not support penalty='l1'"):
        cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=0.1, solver="lbfgs")
    with pytest.raises(ValueError, match="solver='lbfgs' does not support loss='hinge'"):
        cdlearn.solve(X, y, loss="hinge", penalty="l2", lam=0.1, solver="lbfgs")
    with pytest.raises(ValueError, match="solver='lbfgs' takes no batch_size"):
        cdlearn.solve(X, y, batch_size=2, **kw)
    with pytest.raises(ValueError, match="solver='lbfgs' does not support penalty='none'"):
        cdlearn.solve(X, y, loss="logistic", penalty="none", solver="lbfgs")
    with pytest.raises(TypeError):
        cdlearn.solve(X, y, max_cg=3, **kw)  # newton-cg's option, not this method's


def test_auto_rule():
    rng = np.random.default_rng(5)
    n, d = 600, 600  # 3.6·10⁵ entries ≥ LBFGS_MIN_ENTRIES; XᵀDX too dear for the Gram route
    assert n * d >= LBFGS_MIN_ENTRIES
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)

    def choice(A, loss="logistic", penalty="l2"):
        return auto_solver(make_problem(A, y[:A.shape[0]], loss=loss, penalty=penalty,
                                        lam=1e-3))

    name, reason = choice(X)
    assert name == "lbfgs" and "evenly scaled" in reason
    assert choice(X, penalty="l1")[0] == "newton-cd"
    assert choice(X, loss="squared_hinge")[0] != "lbfgs"
    assert choice(sp.csr_matrix(X))[0] != "lbfgs"
    raw = X.copy()
    raw[:, 0] *= 30.0  # one column 900× the others' squared scale
    assert choice(raw)[0] != "lbfgs"
    assert choice(X[:, :400])[0] == "newton-cg"  # 2.4·10⁵ entries: below the size
    # a cheap Gram (newton-cg's lagged-Gram route): lbfgs only when it costs ≥ 8 passes
    # and κ ≤ 100 (κ = mean‖x‖²/(4λn) ≈ 100/(4·4.8) ≈ 5 at λ = 1e-3, 5,200 at 1e-6)
    tall = np.vstack([X] * 8)[:, :100]

    def tall_choice(A, lam):
        return auto_solver(make_problem(A, np.tile(y, A.shape[0] // n), loss="logistic",
                                        penalty="l2", lam=lam))

    name, reason = tall_choice(tall, 1e-3)
    assert name == "lbfgs" and "13 data passes" in reason and "κ = 5." in reason
    name, reason = tall_choice(tall, 1e-6)
    assert name == "newton-cg" and "lagged XᵀDX" in reason
    name, reason = tall_choice(np.vstack([X] * 16)[:, :30], 1e-3)  # Gram: 3.9 passes
    assert name == "newton-cg" and "lagged XᵀDX" in reason
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-3, tol=1e-10)
    ref = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-3, tol=1e-10,
                        solver="newton-cg")
    assert res.solver == "lbfgs" and res.converged and ref.converged
    assert res.primal == pytest.approx(ref.primal, rel=1e-9)


@pytest.mark.parametrize("solver", ["auto", "newton-cg"])
def test_tall_logistic_matches_sklearn(solver):
    """Above SMALL_ARRAY samples the certificate is the fused margin pass (exp, log1p):
    auto (lbfgs here: a Gram of 13 passes, κ ≈ 0.6) and newton-cg, with an intercept and
    sample weights, against scikit-learn converged tightly."""
    rng = np.random.default_rng(7)
    n, d, lam = 5000, 100, 1e-2
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + rng.standard_normal(n) > 0.5, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, n)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver=solver,
                        tol=1e-14, fit_intercept=True, sample_weight=sw)
    ref = LogisticRegression(C=1.0 / (lam * n), solver="newton-cholesky", tol=1e-15,
                             max_iter=1000).fit(X, y, sample_weight=sw)
    w_ref, b_ref = ref.coef_.ravel(), float(ref.intercept_[0])
    assert res.solver == ("lbfgs" if solver == "auto" else solver) and res.converged
    # gap ≤ 1e-14·P(0) bounds ‖w - w*‖ by √(2·gap/λ) ≈ 1e-6
    np.testing.assert_allclose(res.w, w_ref, rtol=0, atol=1e-6 * np.abs(w_ref).max())
    assert abs(res.intercept - b_ref) <= 1e-6 * max(1.0, abs(b_ref))
    p = make_problem(X, y, loss="logistic", penalty="l2", lam=lam)
    f_ref = primal_value(p.loss_code, X @ w_ref + b_ref, p.y, sw, w_ref, 0.0, lam)
    assert res.primal == pytest.approx(f_ref, rel=1e-12)
    assert 0.0 <= res.gap == pytest.approx(res.primal - res.dual, abs=1e-14)
    assert res.gap <= 1e-14 * np.log(2.0) * float(sw.mean())


def test_one_vs_rest_builds_no_copy_for_dense_lbfgs():
    """lbfgs multiplies the stored dense array: prebuild makes no CSC/CSR copy of it."""
    from cdlearn.multiclass import prebuild

    X = np.random.default_rng(6).standard_normal((20, 5))
    design = cdlearn.as_design(X)
    prebuild(design, "lbfgs")
    assert design._csc is None and design._csr is None
    prebuild(design, "primal-cd")  # a CD method walks its column view
    assert design._csc is not None
