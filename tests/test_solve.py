"""cdlearn.solve: primal and dual CD against independent references."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import cdlearn
from cdlearn.objectives import primal_value
from references import ridge_closed_form as _ridge_closed_form
from references import ridge_problem as _ridge_problem

SOLVERS = ["primal-cd", "dual-cd"]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("sampling", ["importance", "uniform", "cyclic"])
def test_ridge_matches_closed_form(solver, sparse, sampling):
    rng = np.random.default_rng(0)
    X, y = _ridge_problem(rng, sparse=sparse)
    lam = 0.05
    w_star, _ = _ridge_closed_form(X, y, lam)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=lam, solver=solver,
                        sampling=sampling, tol=1e-18, max_epochs=20000)
    assert res.converged and res.solver == solver
    assert np.linalg.norm(res.w - w_star) <= 1e-8 * np.linalg.norm(w_star)
    assert res.gap <= 1e-18 * primal_value(0, np.zeros_like(y), y, np.ones_like(y),
                                           np.zeros(1), 0, 0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_ridge_with_intercept_and_sample_weight(solver):
    rng = np.random.default_rng(1)
    X, y = _ridge_problem(rng, sparse=True)
    y = y + 5.0
    sw = rng.uniform(0.0, 2.0, size=y.shape[0])
    sw[:5] = 0.0
    w_star, b_star = _ridge_closed_form(X, y, 0.1, sw=sw, intercept=True)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.1, solver=solver,
                        fit_intercept=True, sample_weight=sw, tol=1e-16, max_epochs=20000)
    assert res.converged
    assert np.linalg.norm(res.w - w_star) <= 1e-7 * np.linalg.norm(w_star)
    assert res.intercept == pytest.approx(b_star, rel=1e-7)


@pytest.mark.parametrize("solver", SOLVERS)
def test_batch_sampling_with_eso_converges_to_the_same_point(solver):
    rng = np.random.default_rng(2)
    X, y = _ridge_problem(rng, n=80, d=30, sparse=True)
    w_star, _ = _ridge_closed_form(X, y, 0.05)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.05, solver=solver,
                        sampling="uniform", batch_size=8, tol=1e-16, max_epochs=50000)
    assert res.converged
    assert np.linalg.norm(res.w - w_star) <= 1e-7 * np.linalg.norm(w_star)


def _liblinear_objective_point(X, y, lam, solver_type, extra=""):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    n = X.shape[0]
    C = 1.0 / (lam * n)
    prob = liblinear.problem(y, sp.csr_matrix(X))
    model = liblinear.train(prob, liblinear.parameter(f"-s {solver_type} -c {C!r} -e 1e-10 -q {extra}"))
    w = np.asarray(model.get_decfun()[0])
    # liblinear flips the sign when the first label it saw is -1
    if model.get_labels()[0] == -1:
        w = -w
    return w


@pytest.mark.parametrize("name", ["reuters-money-fx", "a9a"])
@pytest.mark.parametrize("solver", SOLVERS)
def test_l2_logistic_matches_liblinear(load, name, solver):
    if name == "a9a" and solver == "primal-cd":
        pytest.skip("covered by the slow test below (primal CD needs ~2,600 epochs on a9a)")
    _check_logistic_against_liblinear(load, name, solver)


@pytest.mark.slow
def test_l2_logistic_matches_liblinear_primal_a9a(load):
    _check_logistic_against_liblinear(load, "a9a", "primal-cd")


def _check_logistic_against_liblinear(load, name, solver):
    X, y = load(name, binary=True)
    n = X.shape[0]
    lam = 1.0 / n
    # primal CD on a9a is ill-conditioned (one-hot groups, λ = 1/n): importance
    # sampling halves its epochs there (~2,600 instead of > 5,000 uniform)
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver=solver,
                        sampling="importance" if solver == "primal-cd" else "uniform",
                        tol=1e-8, max_epochs=4000, check_every=5 if solver == "primal-cd" else 1)
    p0 = np.log(2.0)
    assert res.converged and res.gap <= 1e-8 * p0
    w_ref = _liblinear_objective_point(X, y, lam, 0)
    design = cdlearn.as_design(X)
    p_ref = primal_value(1, design.matvec(w_ref), y, np.ones(n), w_ref, 0.0, lam)
    assert abs(res.primal - p_ref) <= 1e-7 * p_ref
    assert res.primal - res.gap <= p_ref * (1 + 1e-12)  # our certificate bounds liblinear's P


def test_lasso_on_leukemia_matches_scikit_learn(load):
    from sklearn.linear_model import Lasso

    X, y = load("leu", binary=True)
    X = X.toarray()
    n = X.shape[0]
    lam_max = np.max(np.abs(X.T @ y)) / n
    lam = lam_max / 10
    ref = Lasso(alpha=lam, fit_intercept=False, tol=1e-12, max_iter=200000).fit(X, y)
    p_ref = primal_value(0, X @ ref.coef_, y, np.ones(n), ref.coef_, lam, 0.0)
    for solver, runs in (("primal-cd", "primal-cd"), ("auto", "ws-cd")):
        res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, solver=solver,
                            tol=1e-12, max_epochs=50000)
        assert res.solver == runs and res.converged
        assert abs(res.primal - p_ref) <= 1e-8 * p_ref
        np.testing.assert_array_equal(res.w != 0, ref.coef_ != 0)


def test_elastic_net_primal_and_dual_agree():
    rng = np.random.default_rng(3)
    X, y = _ridge_problem(rng, n=150, d=60, sparse=True)
    kw = dict(loss="squared", penalty="elastic_net", lam=0.2, l1_ratio=0.6, tol=1e-14,
              max_epochs=50000)
    a = cdlearn.solve(X, y, solver="primal-cd", **kw)
    b = cdlearn.solve(X, y, solver="dual-cd", **kw)
    assert a.converged and b.converged
    assert a.primal == pytest.approx(b.primal, rel=1e-12)
    np.testing.assert_allclose(a.w, b.w, atol=1e-6)
    assert 0 < np.count_nonzero(a.w) < X.shape[1]


def _hinge_svm_by_box_qp(X, y, lam):
    """Independent reference: the hinge SVM's dual QP solved by L-BFGS-B.

    max_t 1/n Σ t_i - ‖Xᵀ(t∘y)‖²/(2λn²) over t ∈ [0, 1]^n, then w = Xᵀ(t∘y)/(λn).
    """
    from scipy.optimize import minimize

    A = X.toarray() if sp.issparse(X) else X
    n = A.shape[0]
    Ay = A * y[:, None]

    def f(t):
        v = Ay.T @ t
        return v @ v / (2 * lam * n * n) - t.sum() / n, Ay @ v / (lam * n * n) - 1.0 / n

    res = minimize(f, np.full(n, 0.5), jac=True, method="L-BFGS-B", bounds=[(0, 1)] * n,
                   options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 100000})
    return Ay.T @ res.x / (lam * n)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_svm_losses_match_independent_references(loss):
    rng = np.random.default_rng(4)
    X, _ = _ridge_problem(rng, n=200, d=30, sparse=True)
    y = np.sign(X @ rng.standard_normal(30) + 0.5 * rng.standard_normal(200))
    lam = 1e-2
    res = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=lam, solver="dual-cd", tol=1e-12,
                        max_epochs=100000)
    assert res.converged
    if loss == "hinge":
        w_ref = _hinge_svm_by_box_qp(X, y, lam)
    else:
        w_ref = _liblinear_objective_point(X, y, lam, 1)
    design = cdlearn.as_design(X)
    code = {"hinge": 4, "squared_hinge": 2}[loss]
    p_ref = primal_value(code, design.matvec(w_ref), y, np.ones(200), w_ref, 0.0, lam)
    assert res.primal - res.gap <= p_ref
    assert abs(res.primal - p_ref) <= 1e-6 * p_ref


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "smooth_hinge"])
def test_smooth_classification_losses_agree_between_methods(loss):
    rng = np.random.default_rng(5)
    X, _ = _ridge_problem(rng, n=150, d=40, sparse=True)
    y = np.sign(X @ rng.standard_normal(40) + 0.3 * rng.standard_normal(150))
    kw = dict(loss=loss, penalty="l2", lam=1e-2, tol=1e-13, max_epochs=100000)
    a = cdlearn.solve(X, y, solver="primal-cd", **kw)
    b = cdlearn.solve(X, y, solver="dual-cd", **kw)
    c = cdlearn.solve(X, y, solver="primal-cd", primal_step="lipschitz", **kw)
    assert a.primal == pytest.approx(b.primal, rel=1e-10)
    assert c.primal == pytest.approx(b.primal, rel=1e-10)


def test_fixed_dual_step_of_the_paper_converges():
    rng = np.random.default_rng(6)
    X, _ = _ridge_problem(rng, n=150, d=20)
    y = np.sign(X @ rng.standard_normal(20))
    kw = dict(loss="logistic", penalty="l2", lam=1e-2, tol=1e-10, solver="dual-cd",
              max_epochs=100000)
    exact = cdlearn.solve(X, y, **kw)
    for sampling in ("uniform", "importance"):
        fixed = cdlearn.solve(X, y, dual_step="fixed", sampling=sampling, **kw)
        assert fixed.converged
        assert fixed.primal == pytest.approx(exact.primal, rel=1e-9)
        assert fixed.n_epochs > exact.n_epochs  # the exact step is the better one


@pytest.mark.parametrize("solver", SOLVERS)
def test_smoothness_override_is_a_looser_valid_bound(solver):
    """``smoothness=`` (β' ≥ β): same optimum, shorter fixed steps; below β is refused."""
    rng = np.random.default_rng(8)
    X, _ = _ridge_problem(rng, n=120, d=30)
    y = np.sign(X @ rng.standard_normal(30))
    step = {"primal-cd": dict(primal_step="lipschitz"), "dual-cd": dict(dual_step="fixed")}
    kw = dict(loss="logistic", penalty="l2", lam=1e-2, tol=1e-10, solver=solver,
              max_epochs=100000, **step[solver])
    tight = cdlearn.solve(X, y, **kw)
    loose = cdlearn.solve(X, y, smoothness=1.0, **kw)
    assert tight.converged and loose.converged
    assert loose.primal == pytest.approx(tight.primal, rel=1e-8)
    assert loose.n_epochs > tight.n_epochs  # β = 1 is 4× the logistic loss's 1/4
    with pytest.raises(ValueError, match="smoothness=0.1 is below the logistic"):
        cdlearn.solve(X, y, smoothness=0.1, **kw)
    with pytest.raises(ValueError, match="smoothness must be a finite number"):
        cdlearn.solve(X, y, smoothness=float("nan"), **kw)
    with pytest.raises(TypeError, match="smoothness must be a number"):
        cdlearn.solve(X, y, smoothness="1", **kw)


def _uneven_leukemia(load, axis, n_cols=None):
    """Leukemia with strongly uneven column (axis=0) or row (axis=1) norms.

    ``n_cols``: keep that many random columns (seed 1) first.
    """
    X, y = load("leu", binary=True)
    X = X.toarray()
    if n_cols is not None:
        X = X[:, np.random.default_rng(1).choice(X.shape[1], n_cols, replace=False)]
    X = X / np.linalg.norm(X, axis=axis).mean()
    rng = np.random.default_rng(0)
    scale = np.exp(rng.normal(0.0, 1.5, size=X.shape[1 - axis]))
    return (X * scale if axis == 0 else X * scale[:, None]), y


@pytest.mark.parametrize("solver, n_cols", [
    # primal CD on all 7,129 columns needs ~6,300 uniform passes (~100 s in CI); on 700
    # random columns ~1,150 uniform vs ~80 importance passes (ratio 0.07, ~3 s)
    ("primal-cd", 700),
    pytest.param("primal-cd", None, marks=pytest.mark.slow),
    ("dual-cd", None),
])
def test_importance_sampling_needs_fewer_passes(load, solver, n_cols):
    """Face-off eq. (14) with the paper's steps (NSync's 1/L_j, Quartz's fixed step)."""
    X, y = _uneven_leukemia(load, axis=0 if solver == "primal-cd" else 1, n_cols=n_cols)
    n = X.shape[0]
    passes = {}
    for sampling in ("uniform", "importance"):
        runs = []
        for seed in range(3):
            step = (dict(primal_step="lipschitz") if solver == "primal-cd"
                    else dict(dual_step="fixed"))
            res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1.0 / n, solver=solver,
                                sampling=sampling, tol=1e-6, max_epochs=20000, seed=seed,
                                **step)
            assert res.converged
            runs.append(res.passes)
        passes[sampling] = np.median(runs)
    assert passes["importance"] < 0.8 * passes["uniform"], passes


@pytest.mark.parametrize("solver", SOLVERS)
def test_same_seed_same_bits_different_seeds_converge(solver):
    rng = np.random.default_rng(7)
    X, _ = _ridge_problem(rng, sparse=True)
    y = np.sign(X @ rng.standard_normal(X.shape[1]))
    kw = dict(loss="logistic", penalty="l2", lam=1e-2, solver=solver, tol=1e-10,
              max_epochs=10000)
    a = cdlearn.solve(X, y, seed=11, **kw)
    b = cdlearn.solve(X, y, seed=11, **kw)
    c = cdlearn.solve(X, y, seed=12, **kw)
    assert np.array_equal(a.w, b.w) and a.n_epochs == b.n_epochs
    assert not np.array_equal(a.w, c.w)
    assert c.converged and c.primal == pytest.approx(a.primal, rel=1e-9)


def test_trace_counts_passes_by_entries_touched():
    rng = np.random.default_rng(8)
    X, y = _ridge_problem(rng, sparse=True)
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=0.1, solver="primal-cd",
                        sampling="cyclic", tol=1e-10, check_every=1)
    t = res.trace
    assert list(t.columns) == ["epoch", "passes", "seconds", "primal", "dual", "gap", "nnz_w",
                               "active"]
    # cyclic: every epoch visits each nonempty column once = exactly one pass (squared loss)
    np.testing.assert_allclose(np.diff(t["passes"]), 1.0)
    assert np.all(np.diff(t["primal"]) <= 1e-12)  # primal CD is monotone
    assert np.all(t["gap"] >= 0) and t["gap"][-1] <= 1e-10 * t["primal"][0] * 10


def test_max_epochs_warns_and_returns_best_iterate():
    rng = np.random.default_rng(9)
    X, y = _ridge_problem(rng)
    with pytest.warns(ConvergenceWarning, match="max_epochs=2"):
        res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=1e-3, solver="dual-cd",
                            tol=1e-15, max_epochs=2)
    assert not res.converged and res.n_epochs == 2
    assert res.primal == pytest.approx(np.min(res.trace["primal"]))


def test_callback_stops_and_keyboard_interrupt_returns_iterate():
    rng = np.random.default_rng(10)
    X, y = _ridge_problem(rng)
    seen = []
    res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=1e-3, tol=1e-15, check_every=1,
                        solver="primal-cd",
                        callback=lambda s: seen.append(s.gap) or s.epoch >= 3)
    assert res.n_epochs == 3 and len(seen) == 3 and res.message == "stopped by callback"

    def interrupt(state):
        if state.epoch == 2:
            raise KeyboardInterrupt
        return False

    with pytest.warns(RuntimeWarning, match="interrupted"):
        res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=1e-3, tol=1e-15,
                            callback=interrupt, solver="primal-cd", check_every=1)
    assert res.n_epochs == 2 and np.all(np.isfinite(res.w)) and not res.converged


def test_lasso_gap_and_zero_solution_above_lambda_max():
    rng = np.random.default_rng(11)
    X, y = _ridge_problem(rng, sparse=True)
    n = X.shape[0]
    lam_max = np.max(np.abs(X.T @ y)) / n
    res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam_max * 1.0001)
    assert res.converged and not np.any(res.w) and res.gap <= 1e-12
    res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam_max / 20, tol=1e-12,
                        max_epochs=10000)
    assert res.converged and res.dual <= res.primal <= res.dual + 1e-12 * res.trace["primal"][0]


def test_no_penalty_least_squares_uses_optimality_violation():
    rng = np.random.default_rng(12)
    X, y = _ridge_problem(rng)
    res = cdlearn.solve(X, y, loss="squared", penalty="none", tol=1e-12, max_epochs=50000)
    w_ls = np.linalg.lstsq(X, y, rcond=None)[0]
    assert res.dual is None and res.converged
    np.testing.assert_allclose(res.w, w_ls, rtol=1e-8, atol=1e-9)


def test_verbose_prints_the_choice(capsys):
    rng = np.random.default_rng(13)
    X, y = _ridge_problem(rng, n=400, d=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=1e-2, verbose=True)
    out = capsys.readouterr().out
    # 10 features: the Gram matrix is cheap, auto solves the ridge in closed form and says why
    assert res.solver == "gram-cd" and f"solver=gram-cd ({res.info['reason']})" in out
    assert "10 features" in out and "Cholesky" in out
    assert res.n_epochs == 1 and res.gap <= 1e-12 * res.primal
    # a CD-only option (sampling) keeps auto to the face-off between primal and dual CD
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cdlearn.solve(X, y, loss="squared", penalty="l2", lam=1e-2, verbose=True,
                            sampling="importance")
    out = capsys.readouterr().out
    assert res.solver in ("primal-cd", "dual-cd") and f"solver={res.solver}" in out
    assert "T_P/T_D" in out


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge", "logistic", "smooth_hinge"])
def test_dual_cd_with_intercept_keeps_the_dual_constraint_and_converges(loss):
    """Random pairs keep Σα = 0 exactly; the hinge no longer stalls."""
    rng = np.random.default_rng(14)
    X, _ = _ridge_problem(rng, n=200, d=30, sparse=True)
    X = sp.csr_matrix(X)
    y = np.sign(X @ rng.standard_normal(30) + 0.7 + 0.5 * rng.standard_normal(200))
    res = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=1e-2, solver="dual-cd",
                        fit_intercept=True, tol=1e-9, max_epochs=100000)
    assert res.converged and abs(res.alpha.sum()) <= 1e-10
    if loss == "hinge":
        # independent check: the optimum over b of the primal at the returned w
        b_grid = res.intercept + np.linspace(-1e-3, 1e-3, 201)
        z = X @ res.w
        vals = [np.mean(np.maximum(0, 1 - y * (z + b))) for b in b_grid]
        assert np.mean(np.maximum(0, 1 - y * (z + res.intercept))) <= min(vals) + 1e-12
    else:
        ref = cdlearn.solve(X, y, loss=loss, penalty="l2", lam=1e-2, solver="primal-cd",
                            fit_intercept=True, tol=1e-12, max_epochs=100000)
        assert res.primal == pytest.approx(ref.primal, rel=1e-8)
