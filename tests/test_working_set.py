"""solver="ws-cd" (working sets + Anderson extrapolation) against independent references."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import cdlearn
from cdlearn.objectives import primal_value


def _leu(load):
    X, y = load("leu", binary=True)
    X = X.toarray()
    return X, y, float(np.max(np.abs(X.T @ y)) / X.shape[0])


def _liblinear_l1(X, y, lam, solver_type):
    """liblinear's L1-regularised fit (-s 6: logistic), no bias."""
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    C = float(1.0 / (lam * X.shape[0]))
    prob = liblinear.problem(y, sp.csr_matrix(X))
    model = liblinear.train(prob, liblinear.parameter(f"-s {solver_type} -c {C!r} -e 1e-12 -q"))
    w = np.asarray(model.get_decfun()[0])
    return -w if model.get_labels()[0] == -1 else w  # liblinear's label order


def _sparse_problem(seed, n=200, d=300, classify=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 3.0, size=d)
    X[rng.random((n, d)) < 0.8] = 0.0
    X[:, 7] = 0.0  # an empty column
    w_true = np.zeros(d)
    w_true[:10] = rng.standard_normal(10)
    y = X @ w_true + 0.1 * rng.standard_normal(n) + 1.5
    if classify:
        y = np.sign(y - np.median(y))
    return sp.csc_matrix(X), y


@pytest.mark.parametrize("divisor", [10, 100])
def test_lasso_on_leukemia_matches_scikit_learn(load, divisor):
    from sklearn.linear_model import Lasso

    X, y, lam_max = _leu(load)
    n = X.shape[0]
    lam = lam_max / divisor
    res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, solver="ws-cd",
                        tol=1e-12, max_epochs=1000)
    p0 = 0.5 * np.mean(y ** 2)
    assert res.converged and res.gap <= 1e-12 * p0
    ref = Lasso(alpha=lam, fit_intercept=False, tol=1e-12, max_iter=500000).fit(X, y)
    p_ref = primal_value(0, X @ ref.coef_, y, np.ones(n), ref.coef_, lam, 0.0)
    assert abs(res.primal - p_ref) <= 1e-8 * p_ref
    assert res.primal - res.gap <= p_ref  # the certificate bounds scikit-learn's P
    np.testing.assert_array_equal(res.w != 0, ref.coef_ != 0)
    assert res.info["anderson_accepted"] > 0  # the extrapolation did take effect
    assert res.info["ws_size"] < X.shape[1]  # never needed all 7129 columns


def test_elastic_net_on_leukemia_matches_scikit_learn(load):
    from sklearn.linear_model import ElasticNet

    X, y, lam_max = _leu(load)
    n = X.shape[0]
    lam, rho = lam_max / 20, 0.7  # sklearn: alpha = λ, l1_ratio = ρ (same objective)
    res = cdlearn.solve(X, y, loss="squared", penalty="elastic_net", lam=lam, l1_ratio=rho,
                        solver="ws-cd", tol=1e-12, max_epochs=1000)
    assert res.converged
    ref = ElasticNet(alpha=lam, l1_ratio=rho, fit_intercept=False, tol=1e-12,
                     max_iter=500000).fit(X, y)
    p_ref = primal_value(0, X @ ref.coef_, y, np.ones(n), ref.coef_, lam * rho,
                         lam * (1 - rho))
    assert abs(res.primal - p_ref) <= 1e-8 * p_ref
    np.testing.assert_array_equal(res.w != 0, ref.coef_ != 0)


def test_l1_logistic_on_leukemia_matches_liblinear(load):
    X, y, lam_max = _leu(load)
    n = X.shape[0]
    lam = lam_max / 20  # λmax of the squared loss; the logistic one is half of it
    res = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, solver="ws-cd",
                        tol=1e-11, max_epochs=1000)
    assert res.converged
    w_ref = _liblinear_l1(X, y, lam, 6)
    p_ref = primal_value(1, X @ w_ref, y, np.ones(n), w_ref, lam, 0.0)
    assert abs(res.primal - p_ref) <= 1e-7 * p_ref
    assert res.primal - res.gap <= p_ref * (1 + 1e-12)
    assert 0 < np.count_nonzero(res.w) < 100


@pytest.mark.parametrize("loss, tol", [("squared_hinge", 1e-12),
                                       ("smooth_hinge", 1e-10)])  # its gap floors at ~3e-11
def test_l1_hinge_variants_match_primal_cd(loss, tol):
    # (liblinear -s 5 stops at its iteration cap on leu, 5% above the optimum)
    X, y = _sparse_problem(17, n=150, d=80, classify=True)
    kw = dict(loss=loss, penalty="l1", lam=0.02, tol=tol, max_epochs=100000)
    ref = cdlearn.solve(X, y, solver="primal-cd", sampling="cyclic", **kw)
    res = cdlearn.solve(X, y, solver="ws-cd", **kw)
    assert ref.converged and res.converged
    assert res.primal == pytest.approx(ref.primal, rel=1e-10)
    assert 0 < np.count_nonzero(res.w) < X.shape[1]


@pytest.mark.parametrize("loss, penalty", [("squared", "l1"), ("logistic", "l1"),
                                           ("squared", "elastic_net"),
                                           ("logistic", "elastic_net")])
def test_intercept_and_sample_weight_match_primal_cd(loss, penalty):
    X, y = _sparse_problem(11, classify=loss == "logistic")
    sw = np.random.default_rng(12).uniform(0.0, 3.0, size=X.shape[0])
    # tol 1e-15: a gap of 1e-13·P(0) still leaves the logistic intercept free to
    # ~1e-6 relative (|Δb| ≲ √(2 gap / curvature)), more than the assertion allows
    kw = dict(loss=loss, penalty=penalty, lam=0.02, l1_ratio=0.8, fit_intercept=True,
              sample_weight=sw, tol=1e-15, max_epochs=100000)
    ref = cdlearn.solve(X, y, solver="primal-cd", sampling="cyclic", **kw)
    res = cdlearn.solve(X, y, solver="ws-cd", **kw)
    assert ref.converged and res.converged
    assert res.primal == pytest.approx(ref.primal, rel=1e-11)
    assert res.intercept == pytest.approx(ref.intercept, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(res.w, ref.w, atol=1e-6)
    assert abs(res.intercept) > 0.1 and 0 < np.count_nonzero(res.w) < X.shape[1]


def test_deterministic_and_warm_start():
    X, y = _sparse_problem(13)
    kw = dict(loss="squared", penalty="l1", lam=0.05, solver="ws-cd", tol=1e-10)
    a = cdlearn.solve(X, y, **kw)
    b = cdlearn.solve(X, y, seed=123, **kw)
    np.testing.assert_array_equal(a.w, b.w)  # no random draws: the seed is irrelevant
    assert a.converged and a.n_epochs > 1
    warm = cdlearn.solve(X, y, w0=a.w, **kw)
    assert warm.converged and warm.n_epochs <= 1
    assert warm.primal == pytest.approx(a.primal, rel=1e-10)


def test_without_anderson_the_same_optimum():
    X, y = _sparse_problem(14)
    kw = dict(loss="squared", penalty="l1", lam=0.02, solver="ws-cd", tol=1e-12)
    a = cdlearn.solve(X, y, **kw)
    b = cdlearn.solve(X, y, anderson_k=0, p0=1, inner_tol_ratio=0.1, **kw)
    assert b.info["anderson_tried"] == 0 and a.info["anderson_tried"] > 0
    assert a.converged and b.converged
    assert a.primal == pytest.approx(b.primal, rel=1e-11)


@pytest.mark.parametrize("options, error", [
    (dict(inner_tol_ratio=1.5), ValueError),
    (dict(inner_tol_ratio=0.0), ValueError),
    (dict(anderson_k=1), ValueError),
    (dict(anderson_k=-2), ValueError),
    (dict(anderson_k=2.5), TypeError),
    (dict(p0=0), ValueError),
    (dict(max_inner_epochs=0), ValueError),
    (dict(sampling="importance"), ValueError),
    (dict(batch_size=2), ValueError),
    (dict(primal_step="lipschitz"), ValueError),
    (dict(shrink_q=0.5), TypeError),  # a primal-cd option
])
def test_bad_options_raise_clear_errors(options, error):
    X, y = _sparse_problem(15, n=30, d=20)
    with pytest.raises(error) as info:
        cdlearn.solve(X, y, loss="squared", penalty="l1", lam=0.1, solver="ws-cd", **options)
    name = next(iter(options))
    assert name.split("_")[0] in str(info.value) or "ws-cd" in str(info.value)


def test_unsupported_objectives_are_refused():
    X, y = _sparse_problem(16, n=30, d=20, classify=True)
    with pytest.raises(ValueError, match="ws-cd"):
        cdlearn.solve(X, y, loss="hinge", penalty="l1", lam=0.1, solver="ws-cd")
    with pytest.raises(ValueError, match="ws-cd"):
        cdlearn.solve(X, y, loss="squared", penalty="none", solver="ws-cd")


def test_strong_violators_enter_the_working_set_at_once():
    """A Nesterov Lasso with a known optimum (support 400, n = 2000): the first
    working set holds every feature violating above the inner target (255 of them,
    under the cap n), not p0 = 10, and the solution is the known one."""
    from cdlearn.datasets.nesterov import make_lasso_known_optimum

    n = 2000
    A, b, x_star, F_star = make_lasso_known_optimum(n, 20000, nnz_per_column=10,
                                                    support_size=400, lam=1.0, seed=0)
    res = cdlearn.solve(A, b, loss="squared", penalty="l1", lam=1.0 / n, solver="ws-cd",
                        tol=1e-12)
    assert res.converged
    scores = np.abs(A.T @ b) / n - 1.0 / n  # the violations at w = 0
    n_strong = np.count_nonzero(scores > 0.3 * scores.max())
    assert n_strong == 255
    assert res.trace["active"][1] == n_strong
    # doubling from p0 = 10 needs 6 outer iterations before the working set can
    # even hold the support; here the first three reach it (7 in all; 8 with the
    # former cap n/10 and a working set that never shrank)
    assert res.info["outer_iterations"] <= 7
    assert res.primal == pytest.approx(F_star / n, rel=1e-12)
    np.testing.assert_array_equal(np.flatnonzero(res.w), np.flatnonzero(x_star))
    np.testing.assert_allclose(res.w, x_star, atol=1e-7)


def test_inner_solves_are_capped_so_checks_and_callbacks_keep_coming(load):
    """On an L2 problem the working set holds every feature and primal CD's inner
    solve can crawl (a9a's first 300 rows, λ = 1e-2/n: one inner solve took 1140
    epochs under the former cap of 10,000). An inner solve is one kernel call, so
    the default cap of 200 epochs bounds the time without a gap check, callback or
    Ctrl-C; the solve still reaches newton-cd's optimum."""
    from cdlearn.api import make_problem
    from cdlearn.solvers.working_set import WorkingSetState

    X, y = load("a9a", binary=True)
    X, y = X[:300], y[:300]
    lam = 1e-2 / 300
    state = WorkingSetState(make_problem(X, y, loss="logistic", penalty="l2", lam=lam))
    per_call = []
    for _ in range(60):
        before = state.stats["inner_epochs"]
        state.run_epoch()
        per_call.append(state.stats["inner_epochs"] - before)
    assert max(per_call) == 200  # the cap is what limits the longest inner solves

    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="ws-cd",
                        tol=1e-11)
    ref = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="newton-cd",
                        tol=1e-14)
    assert res.converged
    assert res.primal == pytest.approx(ref.primal, rel=1e-9)


def _correlated_wide(n=50, d=1000, rho=0.6, seed=0):
    """benchopt's wide simulated Lasso in small: columns an AR(1) sequence of
    correlation ρ, half as many true nonzeros as samples."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    X = np.empty((n, d))
    X[:, 0] = Z[:, 0]
    for j in range(1, d):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * Z[:, j]
    w = np.zeros(d)
    w[rng.choice(d, n // 2, replace=False)] = rng.standard_normal(n // 2)
    return np.asfortranarray(X), X @ w + 0.1 * rng.standard_normal(n)


def test_working_set_rule_counts_and_pruning():
    """Each outer iteration's working set is max(p0, 2|support|, min(#strong, n))
    features, counted here from the gradient at the iterate it starts from (#strong:
    violations above 0.3 × the largest): 50 = n at w = 0 (179 strong; the former cap
    n/10 gave 10), then it follows the support down (94 → 82: celer's prune) where
    the former rule never shrank."""
    from cdlearn.api import make_problem
    from cdlearn.solvers.working_set import WorkingSetState

    X, y = _correlated_wide()
    n, d = X.shape
    lam = 0.05 * np.abs(X.T @ y).max() / n
    state = WorkingSetState(make_problem(X, y, loss="squared", penalty="l1", lam=lam))
    state.certificate()  # run() checks first: it leaves the gradient for run_epoch
    sizes, expected = [], []
    for _ in range(10):
        w = state.w.copy()
        g = X.T @ (X @ w - y) / n
        viol = np.where(w != 0, np.abs(g + lam * np.sign(w)), np.maximum(np.abs(g) - lam, 0))
        n_strong = np.count_nonzero(viol > 0.3 * viol.max())
        expected.append(min(d, max(10, 2 * np.count_nonzero(w), min(n_strong, n))))
        state.run_epoch()
        state.certificate()
        sizes.append(state.ws_size)
    assert sizes == expected
    assert sizes[:3] == [50, 70, 94] and sizes[-1] == 82


@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_wide_correlated_lasso_matches_scikit_learn(rho):
    """p ≫ n with correlated columns (the benchopt cell of issue 25 in small): the
    certified gap and scikit-learn's optimum, converged tightly."""
    from sklearn.linear_model import Lasso

    X, y = _correlated_wide(rho=rho)
    n = X.shape[0]
    lam = 0.05 * np.abs(X.T @ y).max() / n
    tol = 1e-12
    res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, solver="ws-cd", tol=tol)
    assert res.converged and res.gap <= tol * 0.5 * np.mean(y ** 2)
    ref = Lasso(alpha=lam, fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(X, y)
    p_ref = primal_value(0, X @ ref.coef_, y, np.ones(n), ref.coef_, lam, 0.0)
    assert res.primal <= p_ref * (1 + 1e-10)
    assert res.primal - res.gap <= p_ref
    np.testing.assert_allclose(res.w, ref.coef_, atol=1e-6 * np.abs(ref.coef_).max())


def test_cold_start_check_reuses_the_cached_x_transpose_y(monkeypatch):
    """The check at w = 0 (squared loss, no intercept) takes ∇f = -Xᵀ(s∘y)/n from the
    design's cache (gram-cd's linear term): a second solve on the same (X, y) makes one
    product Xᵀr per check after the first, not one for the first too; the certificate
    is P(0) = ½ mean(s y²) with the dual point s∘y scaled into the l1 ball."""
    X, y = _correlated_wide(seed=1)
    n = X.shape[0]
    sw = np.linspace(0.5, 1.5, n)
    D = cdlearn.as_design(X)
    lam = 0.1 * np.abs(X.T @ (sw * y)).max() / n
    kw = dict(loss="squared", penalty="l1", lam=lam, solver="ws-cd", sample_weight=sw)
    with pytest.warns(ConvergenceWarning):
        cdlearn.solve(D, y, max_epochs=1, tol=1e-15, **kw)  # fills the cache
    calls = []
    rmatvec = type(D).rmatvec
    monkeypatch.setattr(type(D), "rmatvec", lambda self, r: calls.append(1) or rmatvec(self, r))
    with pytest.warns(ConvergenceWarning):
        res = cdlearn.solve(D, y, max_epochs=1, tol=1e-15, **kw)
        assert len(calls) == 1  # the check after the outer iteration only
        res0 = cdlearn.solve(D, y, max_epochs=0, tol=1e-15, **kw)
    p0 = 0.5 * np.mean(sw * y ** 2)
    alpha = sw * y * min(1.0, lam / (np.abs(X.T @ (sw * y)).max() / n))
    d0 = np.mean(alpha * y - 0.5 * alpha ** 2 / sw)
    assert res0.primal == pytest.approx(p0, rel=1e-14)
    assert res0.dual == pytest.approx(d0, rel=1e-12)
    assert res.primal < p0
