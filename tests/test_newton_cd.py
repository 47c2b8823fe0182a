"""solver="newton-cd" (proximal Newton + CD on the model) against independent references."""

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.objectives import primal_value
from cdlearn.solvers.newton_cd import NewtonCDState, choose_hessian
from references import ridge_closed_form as _ridge_closed_form
from references import ridge_problem as _ridge_problem

FORMS = ["gram", "data"]


def _liblinear_point(X, y, lam, solver_type):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    C = 1.0 / (lam * X.shape[0])
    prob = liblinear.problem(y, sp.csr_matrix(X))
    model = liblinear.train(prob, liblinear.parameter(f"-s {solver_type} -c {C!r} -e 1e-10 -q"))
    w = np.asarray(model.get_decfun()[0])
    return -w if model.get_labels()[0] == -1 else w  # liblinear's label-order sign flip


@pytest.mark.parametrize("hessian", FORMS)
@pytest.mark.parametrize("inner", ["auto", "cd"])
@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_matches_closed_form(hessian, inner, sparse):
    rng = np.random.default_rng(0)
    X, y = _ridge_problem(rng, sparse=sparse)
    w_star, _ = _ridge_closed_form(X, y, 0.05)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.05, solver="newton-cd",
                        hessian=hessian, inner=inner, tol=1e-18, max_epochs=200)
    assert res.converged and res.solver == "newton-cd" and res.info["hessian"] == hessian
    assert np.linalg.norm(res.w - w_star) <= 1e-8 * np.linalg.norm(w_star)
    if hessian == "gram" and inner == "auto":
        assert res.n_epochs <= 2  # the model is the objective: one exact Newton step


@pytest.mark.parametrize("hessian", FORMS)
def test_ridge_with_intercept_and_sample_weight(hessian):
    rng = np.random.default_rng(1)
    X, y = _ridge_problem(rng, sparse=True)
    y = y + 5.0
    sw = rng.uniform(0.0, 2.0, size=y.shape[0])
    sw[:5] = 0.0
    w_star, b_star = _ridge_closed_form(X, y, 0.1, sw=sw, intercept=True)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.1, solver="newton-cd",
                        hessian=hessian, fit_intercept=True, sample_weight=sw, tol=1e-16,
                        max_epochs=200)
    assert res.converged
    assert np.linalg.norm(res.w - w_star) <= 1e-8 * np.linalg.norm(w_star)
    assert res.intercept == pytest.approx(b_star, rel=1e-8)


def test_least_squares_without_penalty_matches_lstsq():
    rng = np.random.default_rng(2)
    X, y = _ridge_problem(rng, n=200, d=30)
    w_star = np.linalg.lstsq(X, y, rcond=None)[0]
    res = cdlearn.solve(X, y, loss="squared", penalty="none", lam=1.0, solver="newton-cd",
                        tol=1e-14, max_epochs=100)
    assert res.converged
    assert np.linalg.norm(res.w - w_star) <= 1e-8 * np.linalg.norm(w_star)


@pytest.mark.parametrize("name,hessian", [("reuters-money-fx", "data"), ("a9a", "gram")])
def test_l2_logistic_matches_liblinear(load, name, hessian):
    X, y = load(name, binary=True)
    n = X.shape[0]
    lam = 1.0 / n
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="newton-cd",
                        hessian=hessian, tol=1e-8, max_epochs=100)
    assert res.info["hessian"] == hessian
    assert res.converged and res.gap <= 1e-8 * np.log(2.0)
    assert res.n_epochs <= 20  # Newton: a handful of outer iterations, not hundreds of epochs
    w_ref = _liblinear_point(X, y, lam, 0)
    p_ref = primal_value(1, cdlearn.as_design(X).matvec(w_ref), y, np.ones(n), w_ref, 0.0, lam)
    assert abs(res.primal - p_ref) <= 1e-7 * p_ref
    assert res.primal - res.gap <= p_ref * (1 + 1e-12)  # the certificate bounds liblinear's P


def test_l2_logistic_small_lambda_a9a_converges(load):
    # randomized primal/dual CD need thousands of epochs here (benchmarks/results)
    X, y = load("a9a", binary=True)
    n = X.shape[0]
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1.0 / (100 * n),
                        solver="newton-cd", tol=1e-8, max_epochs=50)
    assert res.converged and res.gap <= 1e-8 * np.log(2.0)
    assert res.n_epochs <= 20
    assert res.info["hessian"] == "gram"


@pytest.mark.parametrize("hessian", FORMS)
def test_l1_logistic_matches_liblinear(load, hessian):
    X, y = load("a9a", binary=True)
    n = X.shape[0]
    lam = 1e-3
    res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, solver="newton-cd",
                        hessian=hessian, tol=1e-9, max_epochs=200)
    assert res.converged
    w_ref = _liblinear_point(X, y, lam, 6)
    p_ref = primal_value(1, cdlearn.as_design(X).matvec(w_ref), y, np.ones(n), w_ref, lam, 0.0)
    assert abs(res.primal - p_ref) <= 1e-7 * p_ref
    assert res.primal - res.gap <= p_ref * (1 + 1e-12)
    assert 0 < np.count_nonzero(res.w) < X.shape[1]  # a sparse solution


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sparse_gram_block_matches_dense(fit_intercept):
    from cdlearn.kernels.newton_cd import sparse_gram_block

    rng = np.random.default_rng(4)
    X = sp.random(200, 30, density=0.2, random_state=4, format="csr")
    D = rng.uniform(0.0, 1.0, 200)
    D[:20] = 0.0  # skipped rows
    cols = np.array([2, 5, 11, 17, 29])
    pos = np.full(30, -1, dtype=np.int64)
    pos[cols] = np.arange(cols.size)
    k = cols.size + int(fit_intercept)
    H = np.empty((k, k))
    sparse_gram_block(X.data, X.indices, X.indptr, D, pos, fit_intercept, H,
                      np.empty(k, dtype=np.int64), np.empty(k))
    Z = X[:, cols].toarray()
    if fit_intercept:
        Z = np.hstack([Z, np.ones((200, 1))])
    np.testing.assert_allclose(H, Z.T @ (D[:, None] * Z), rtol=1e-13, atol=1e-14)


def test_sparse_l1_gram_form_builds_only_the_working_set_block(load):
    """a9a at benchopt's reg 0.5 (one nonzero at the optimum): the full XᵀDX cost 7.4
    passes every outer iteration (28.5 passes to gap 1e-10·P(0), 3 outer); the working
    set's block costs about one."""
    X, y = load("a9a", binary=True)
    n = X.shape[0]
    lam = 0.25 * float(np.abs(X.T @ y).max()) / n
    res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, solver="newton-cd",
                        tol=1e-10)
    assert res.converged and res.info["hessian"] == "gram" and res.info["block_steps"] >= 1
    assert res.gap <= 1e-10 * np.log(2.0)
    assert res.passes <= 12
    w_ref = _liblinear_point(X, y, lam, 6)
    p_ref = primal_value(1, cdlearn.as_design(X).matvec(w_ref), y, np.ones(n), w_ref, lam, 0.0)
    assert abs(res.primal - p_ref) <= 1e-8 * p_ref
    assert res.primal - res.gap <= p_ref * (1 + 1e-12)
    assert np.count_nonzero(res.w) == np.count_nonzero(np.abs(w_ref) > 1e-8)


@pytest.mark.parametrize("name,hessian", [("a9a", "gram"), ("reuters-money-fx", "data")])
def test_squared_hinge_matches_liblinear(load, name, hessian):
    X, y = load(name, binary=True)
    if name == "a9a":
        X, y = X[:8000], y[:8000]
    n = X.shape[0]
    lam = 1.0 / n
    res = cdlearn.solve(X, y, loss="squared_hinge", penalty="l2", lam=lam, solver="newton-cd",
                        hessian=hessian, tol=1e-10, max_epochs=100)
    assert res.converged
    w_ref = _liblinear_point(X, y, lam, 2)
    p_ref = primal_value(2, cdlearn.as_design(X).matvec(w_ref), y, np.ones(n), w_ref, 0.0, lam)
    assert abs(res.primal - p_ref) <= 1e-7 * p_ref
    assert res.primal - res.gap <= p_ref * (1 + 1e-12)


@pytest.mark.parametrize("loss,penalty", [("logistic", "l2"), ("logistic", "elastic_net"),
                                          ("smooth_hinge", "l2"), ("squared_hinge", "l1")])
@pytest.mark.parametrize("hessian", FORMS)
def test_intercept_and_sample_weight_match_primal_cd(loss, penalty, hessian):
    rng = np.random.default_rng(3)
    X, _ = _ridge_problem(rng, n=300, d=25, sparse=True)
    y = np.sign(X @ rng.standard_normal(25) + 0.8 + 0.5 * rng.standard_normal(300))
    sw = rng.uniform(0.0, 3.0, size=300)
    sw[:7] = 0.0
    kw = dict(loss=loss, penalty=penalty, lam=0.02, fit_intercept=True, sample_weight=sw)
    # primal CD needs ~20,000 epochs to 1e-15 on the squared hinge + l1 case: 1e-13 here
    ref = cdlearn.solve(X, y, solver="primal-cd", tol=1e-13, max_epochs=100000, **kw)
    res = cdlearn.solve(X, y, solver="newton-cd", hessian=hessian, tol=1e-15, max_epochs=300,
                        **kw)
    assert ref.converged and res.converged
    assert res.primal <= ref.primal * (1 + 1e-14)  # as good as the reference, or better
    assert abs(res.primal - ref.primal) <= 1e-12 * ref.primal
    assert np.linalg.norm(res.w - ref.w) <= 1e-5 * max(np.linalg.norm(ref.w), 1e-3)
    assert res.intercept == pytest.approx(ref.intercept, rel=1e-5, abs=1e-6)


def test_warm_start_from_the_solution_stops_at_once():
    rng = np.random.default_rng(4)
    X, _ = _ridge_problem(rng, n=200, d=20, sparse=True)
    y = np.sign(X @ rng.standard_normal(20) + 0.3 * rng.standard_normal(200))
    kw = dict(loss="logistic", penalty="l2", lam=0.01, solver="newton-cd", tol=1e-10)
    first = cdlearn.solve(X, y, fit_intercept=True, **kw)
    again = cdlearn.solve(X, y, fit_intercept=True, w0=first.w, intercept0=first.intercept,
                          **kw)
    assert again.converged and again.n_epochs == 0


def test_auto_form_rule():
    rng = np.random.default_rng(5)
    few = make_problem(sp.random(2000, 20, density=0.3, random_state=0, format="csr"),
                       np.ones(2000), loss="squared", penalty="l2", lam=0.1)
    many = make_problem(sp.random(200, 5000, density=0.01, random_state=0, format="csr"),
                        rng.standard_normal(200), loss="squared", penalty="l2", lam=0.1)
    assert choose_hessian(few) == "gram"
    assert choose_hessian(many) == "data"
    assert NewtonCDState(few).inner == "cholesky"


def test_bad_options_are_rejected():
    rng = np.random.default_rng(6)
    X, y = _ridge_problem(rng, n=50, d=10)
    with pytest.raises(ValueError, match="hessian must be one of"):
        cdlearn.solve(X, y, loss="squared", lam=0.1, solver="newton-cd", hessian="dense")
    with pytest.raises(ValueError, match="inner must be one of"):
        cdlearn.solve(X, y, loss="squared", lam=0.1, solver="newton-cd", inner="cg")
    with pytest.raises(ValueError, match="inner='cholesky' needs"):
        cdlearn.solve(X, y, loss="squared", penalty="l1", lam=0.1, solver="newton-cd",
                      inner="cholesky")
    with pytest.raises(ValueError, match="max_inner"):
        cdlearn.solve(X, y, loss="squared", lam=0.1, solver="newton-cd", max_inner=0)
    with pytest.raises(ValueError, match="does not support loss='hinge'"):
        cdlearn.solve(X, np.sign(y), loss="hinge", lam=0.1, solver="newton-cd")
    wide = sp.random(20, 9000, density=0.001, random_state=0, format="csr")
    with pytest.raises(ValueError, match="limited to"):
        cdlearn.solve(wide, np.ones(20), loss="squared", lam=0.1, solver="newton-cd",
                      hessian="gram")


@pytest.mark.parametrize("loss,penalty", [("logistic", "l2"), ("logistic", "elastic_net"),
                                          ("squared_hinge", "l2"), ("smooth_hinge", "l2"),
                                          ("squared", "l2")])
@pytest.mark.parametrize("hessian", FORMS)
def test_fused_certificate_matches_the_generic_one(loss, penalty, hessian):
    # the one-pass certificate (margin_terms) against intercept.margin_certificate
    from cdlearn.solvers.intercept import margin_certificate

    rng = np.random.default_rng(7)
    X, _ = _ridge_problem(rng, n=300, d=25, sparse=True)
    y = np.sign(X @ rng.standard_normal(25) + 0.5 * rng.standard_normal(300))
    sw = rng.uniform(0.0, 2.0, size=300)
    sw[:5] = 0.0
    prob = make_problem(X, y, loss=loss, penalty=penalty, lam=0.01, fit_intercept=True,
                        sample_weight=sw)
    state = NewtonCDState(prob, hessian=hessian)
    for _ in range(3):
        fused = state.certificate()
        ref = margin_certificate(state)
        assert fused[0] == pytest.approx(ref[0], rel=1e-13)
        assert fused[1] == pytest.approx(ref[1], rel=1e-12, abs=1e-14)
        assert fused[2] == pytest.approx(ref[2], rel=1e-9, abs=1e-15 * ref[0])
        state.run_epoch()


def test_smooth_line_search_takes_long_steps_and_decreases():
    # far from the optimum the exact step along the Newton direction is not 1
    from cdlearn.kernels.newton_cd import newton_line_search
    from cdlearn.losses import LOGISTIC

    rng = np.random.default_rng(8)
    n, d = 400, 10
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n))
    sw, lam = np.ones(n), 1e-4
    w = np.zeros(d)
    z = X @ w
    p = 1.0 / (1.0 + np.exp(y * z))
    g = X.T @ (-y * p) / n
    H = (X.T * (p * (1 - p))) @ X / n + lam * np.eye(d)
    delta = np.linalg.solve(H, -(g + lam * w))
    t, evals, certified = newton_line_search(LOGISTIC, z, X @ delta, y, sw, 1.0 / n, w,
                                             delta, g, d, lam, 0.1, 8)

    def F(t):
        zt = z + t * (X @ delta)
        return np.mean(np.logaddexp(0.0, -y * zt)) + lam / 2 * np.sum((w + t * delta) ** 2)

    def slope(t, h=1e-6):
        return (F(t + h) - F(t - h)) / (2 * h)

    assert certified and 1 <= evals <= 8
    assert t != 1.0 and F(t) < F(1.0) < F(0.0)
    assert abs(slope(t)) <= 0.1 * abs(slope(0.0)) * 1.01  # its stopping rule, |h'(t)| <= η|h'(0)|
