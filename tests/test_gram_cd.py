"""gram-cd (CD on the Gram matrix, squared loss): agreement with ws-cd and scikit-learn,
precompute (True, a given Gram, "auto") and the tolerance-driven reach."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk

import cdlearn
from cdlearn import ElasticNet, Lasso


def _data(n=200, d=30, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + shift
    y = X[:, :5] @ rng.standard_normal(5) + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("penalty,l1_ratio", [("l1", 1.0), ("elastic_net", 0.6), ("l2", 0.0)])
def test_gram_cd_agrees_with_ws_cd_and_sklearn(fit_intercept, penalty, l1_ratio):
    X, y = _data(shift=1.0)
    sw = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    sw *= X.shape[0] / sw.sum()
    lam = 0.05
    kw = dict(loss="squared", penalty=penalty, lam=lam, l1_ratio=l1_ratio, tol=1e-12,
              max_epochs=100_000, fit_intercept=fit_intercept, sample_weight=sw)
    g = cdlearn.solve(X, y, solver="gram-cd", **kw)
    w = cdlearn.solve(X, y, solver="ws-cd", **kw)
    assert g.solver == "gram-cd" and g.converged
    assert 0.0 <= g.gap <= 1e-12 * g.trace["primal"][0]
    np.testing.assert_allclose(g.primal, w.primal, rtol=1e-11)
    if penalty != "l2":
        ref = sk.ElasticNet(alpha=lam, l1_ratio=l1_ratio, fit_intercept=fit_intercept,
                            tol=1e-14, max_iter=1_000_000).fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(g.w, ref.coef_, atol=1e-8)
        if fit_intercept:
            np.testing.assert_allclose(g.intercept, ref.intercept_, atol=1e-8)


def test_gram_cd_sparse_positive_and_constant_column():
    import scipy.sparse as sp

    X, y = _data(n=150, d=12, seed=3)
    X[:, 4] = 2.5  # constant: centred away with the intercept
    kw = dict(loss="squared", penalty="l1", lam=0.02, tol=1e-12, max_epochs=100_000,
              fit_intercept=True, positive=True)
    g = cdlearn.solve(sp.csc_matrix(X), y, solver="gram-cd", **kw)
    w = cdlearn.solve(X, y, solver="ws-cd", **kw)
    assert g.converged and g.w[4] == 0.0 and g.w.min() >= 0.0
    np.testing.assert_allclose(g.primal, w.primal, rtol=1e-11)
    np.testing.assert_allclose(g.w, w.w, atol=1e-8)


def test_gram_option_checked():
    X, y = _data(n=40, d=5)
    with pytest.raises(ValueError, match="gram must have shape"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, solver="gram-cd", gram=np.eye(4))
    with pytest.raises(ValueError, match="gram contains NaN"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, solver="gram-cd",
                      gram=np.full((5, 5), np.nan))
    with pytest.raises(ValueError, match="sampling='importance' is not available"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, solver="gram-cd", sampling="importance")
    with pytest.raises(ValueError, match="anderson_k"):
        cdlearn.solve(X, y, penalty="l1", lam=0.1, solver="gram-cd", anderson_k=1)
    with pytest.raises(ValueError, match="does not support loss='logistic'"):
        cdlearn.solve(X, np.sign(y) + (y == 0), loss="logistic", penalty="l1", lam=0.1,
                      solver="gram-cd")


def test_precompute_true_array_and_auto():
    X, y = _data(n=120, d=8, seed=5)
    sw = np.random.default_rng(2).lognormal(size=120)
    wn = sw * 120 / sw.sum()
    Xc = X - np.average(X, axis=0, weights=wn)
    Xr = Xc * np.sqrt(wn)[:, None]
    ref = sk.ElasticNet(alpha=0.01, l1_ratio=0.5, tol=1e-14, max_iter=1_000_000).fit(
        X, y, sample_weight=sw)
    tight = dict(alpha=0.01, l1_ratio=0.5, tol=1e-10, max_iter=100_000)
    fits = {"array": ElasticNet(precompute=Xr.T @ Xr, **tight).fit(Xc, y, sample_weight=sw),
            "True": ElasticNet(precompute=True, **tight).fit(X, y, sample_weight=sw),
            "auto": ElasticNet(precompute="auto", **tight).fit(X, y, sample_weight=sw)}
    assert fits["auto"].solver_ == "gram-cd"  # auto's cost model: 120 × 8
    for name, m in fits.items():
        np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-7, atol=1e-10, err_msg=name)
    assert fits["array"].solver_ == fits["True"].solver_ == "gram-cd"
    with pytest.raises(ValueError, match="precompute=True runs solver='gram-cd'"):
        Lasso(precompute=True, solver="ws-cd").fit(X, y)


@pytest.mark.parametrize("solver", ["auto", "gram-cd"])
def test_tolerance_driven_reaches_1e10_on_the_tall_problem(solver):
    # benchopt's tolerance sampling: solve again from zero with tol 1, 0.1, ..., each
    # run more accurate than the previous one, down to a relative 1e-10 of P*
    rng = np.random.default_rng(27)
    X = rng.standard_normal((5000, 50))
    y = X @ (rng.standard_normal(50) * (rng.random(50) < 0.2)) + rng.standard_normal(5000)
    lam = 0.1 * np.abs(X.T @ y).max() / X.shape[0]
    best = cdlearn.solve(X, y, penalty="l1", lam=lam, tol=1e-14, max_epochs=10_000).primal
    prev = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(0, 13):
            r = cdlearn.solve(X, y, penalty="l1", lam=lam, tol=10.0 ** -k, solver=solver)
            assert r.primal <= prev + 1e-15 * abs(prev)
            prev = r.primal
    assert r.solver == "gram-cd"  # auto's cost model too (5,000 × 50)
    assert (prev - best) / best <= 1e-10


def test_precompute_without_l1_part_solves_the_linear_system():
    # alpha=0 with precompute=True ran gram-cd, whose CD stalls near interpolation
    # (scikit-learn's test_enet_ols_consistency[*-True]); newton-cd factorises the Gram
    X, y = _data(n=120, d=20, seed=9)
    sw = np.random.default_rng(3).uniform(0.01, 10.0, 120)
    ols = sk.LinearRegression().fit(X, y, sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = ElasticNet(alpha=0.0, precompute=True, tol=1e-15).fit(X, y, sample_weight=sw)
        pos = Lasso(alpha=0.0, precompute=True, positive=True).fit(X, y)
    assert m.solver_ == "newton-cd" and pos.solver_ == "gram-cd"
    np.testing.assert_allclose(m.coef_, ols.coef_, atol=1e-11)
    assert pos.coef_.min() >= 0.0


def _auto(X, y, lam, **kw):
    return cdlearn.solve(X, y, penalty="l1", lam=lam, tol=1e-13, max_epochs=100_000, **kw)


@pytest.mark.parametrize("n,d,density,expected", [
    (300, 60, 1.0, "gram-cd"),    # small d: d² epochs beat passes over the data
    (300, 60, 0.99, "gram-cd"),   # its sparse copy: priced by nnz, not by storage
    (400, 500, 1.0, "primal-cd"),  # the Gram (n d²) costs more; plain CD beats ws-cd's passes
    (400, 2000, 1.0, "ws-cd"),    # d = 5n: plain CD needs (d/n)² × its epochs
    (2000, 400, 0.01, "ws-cd"),   # sparse: the sparse Gram and d² epochs cost more
    (60, 2500, 1.0, "ws-cd"),     # d above GRAM_MAX_AUTO: no Gram
])
def test_auto_picks_by_the_cost_model_and_matches_sklearn(n, d, density, expected):
    import scipy.sparse as sp

    rng = np.random.default_rng(d)
    X = rng.standard_normal((n, d))
    if density < 1.0:
        X = sp.random(n, d, density=density, random_state=3, format="csr",
                      data_rvs=rng.standard_normal)
    y = np.asarray(X[:, :5] @ rng.standard_normal(5)).ravel() + 0.1 * rng.standard_normal(n)
    lam = 0.1 * np.abs(X.T @ y).max() / n
    res = _auto(X, y, lam)
    assert res.solver == expected and res.converged
    assert res.info["reason"].startswith("squared loss, l1 part") and "predicted" in \
        res.info["reason"]
    ref = sk.Lasso(alpha=lam, fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(res.w, ref.coef_, rtol=1e-7, atol=1e-9)


def test_dense_and_sparse_copies_take_one_method_and_one_path():
    # scikit-learn's test_sparse_dense_descent_paths (50 × 20, tol=1e-10, rtol 1e-7): when
    # auto priced dense X for gram-cd and its CSR copy for ws-cd, the two paths stopped
    # within the gap at different points, 1.2e-7 apart
    import scipy.sparse as sp

    from cdlearn.paths import lasso_path

    rng = np.random.RandomState(0)
    w = rng.randn(20)
    w[10:] = 0.0
    X = rng.randn(50, 20)
    y = X @ w
    dense = cdlearn.path(X, y, penalty="l1", n_lams=20, tol=1e-10)
    sparse = cdlearn.path(sp.csr_matrix(X), y, penalty="l1", n_lams=20, tol=1e-10)
    assert set(dense.solvers) == set(sparse.solvers) == {"gram-cd"}
    np.testing.assert_allclose(lasso_path(X, y, tol=1e-10)[1],
                               lasso_path(sp.csr_matrix(X), y, tol=1e-10)[1], rtol=1e-7)


def test_fits_sharing_x_share_the_gram():
    from cdlearn.api import make_problem
    from cdlearn.data import as_design
    from cdlearn.solvers.gram_cd import squared_l1_costs

    X, y = _data(n=3000, d=150, seed=4)
    design = as_design(X)
    lam = 0.1 * np.abs(X.T @ y).max() / 3000
    p = make_problem(design, y, loss="squared", penalty="l1", lam=lam)
    one, many = squared_l1_costs(p), squared_l1_costs(p, n_fits=50)
    assert many["ws-cd"] == one["ws-cd"] and many["gram-cd"] < one["gram-cd"]
    cdlearn.solve(design, y, penalty="l1", lam=lam, solver="gram-cd")
    cached = squared_l1_costs(p)  # the Gram now sits on the Design: it costs nothing
    assert cached["gram-cd"] < many["gram-cd"]
    path = cdlearn.path(X, y, penalty="l1", n_lams=10, eps=0.1, tol=1e-8)
    assert set(path.solvers) == {"gram-cd"}


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sparse_gram_by_dense_row_blocks_equals_the_dense_one(monkeypatch, fit_intercept):
    import scipy.sparse as sp

    import cdlearn.solvers.gram_cd as gram_cd
    from cdlearn.api import make_problem

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 40)) + 3.0
    X[rng.random(X.shape) < 0.5] = 0.0  # density 0.5: BLAS on dense row blocks
    sw = rng.uniform(0.5, 2.0, 300)
    y = rng.standard_normal(300)
    monkeypatch.setattr(gram_cd, "DENSE_BLOCK", 7 * 40)  # 7 rows per block: 43 blocks
    G = [gram_cd.gram_system(make_problem(A, y, loss="squared", penalty="l1", lam=0.1,
                                          fit_intercept=fit_intercept, sample_weight=sw))[0]
         for A in (X, sp.csc_matrix(X))]
    np.testing.assert_allclose(G[1], G[0], rtol=0, atol=1e-14 * np.abs(G[0]).max())


def test_ridge_closed_form_on_float32_rank_deficient_input():
    """Found by `make fuzz`: float32 rounding left G + λI indefinite for Cholesky
    (LinAlgError); the factor is float64 and falls back to eigh."""
    X = np.array([[125.73022461, -132.1048584, 640.42266846, 104.90011597],
                  [-535.66937256, 361.59506226, 1304.0, 947.08093262]], dtype=np.float32)
    y = np.array([1.0, -2.0])
    ours = cdlearn.Ridge(alpha=0.01).fit(sp.csr_matrix(X), y)
    ref = sk.Ridge(alpha=0.01).fit(X.astype(np.float64), y)
    assert ours.solver_ == "gram-cd"
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5)
    assert abs(ours.intercept_ - ref.intercept_) <= 1e-5 * abs(ref.intercept_)
