"""Plain cyclic CD on the squared loss with an l1 part (auto's "primal-cd" choice).

The optimum against scikit-learn's Lasso / ElasticNet converged tightly, for dense
C- and F-ordered and sparse X, with an intercept, sample weights and positive=True;
auto's choice and its check spacing; gram-cd's initial certificate (from c).
"""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk

import cdlearn
from cdlearn.api import make_problem, squared_l1_choice


def _data(n, d, seed, rho=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 1:] += rho * X[:, :-1]  # correlated neighbours: CD needs tens of epochs
    w = np.zeros(d)
    w[:6] = rng.standard_normal(6)
    y = X @ w + 0.3 * rng.standard_normal(n) + 1.5
    return X, y


def _objective(X, y, w, b, lam, l1_ratio, sw):
    r = y - X @ w - b
    return (0.5 * np.sum(sw * r * r) / len(y) + lam * l1_ratio * np.abs(w).sum()
            + 0.5 * lam * (1.0 - l1_ratio) * w @ w)


@pytest.mark.parametrize("layout", ["C", "F", "csc", "csr"])
@pytest.mark.parametrize("penalty,fit_intercept,weighted,positive", [
    ("l1", False, False, False),
    ("l1", True, True, False),
    ("elastic_net", True, False, False),
    ("elastic_net", False, True, True),
])
def test_plain_cd_reaches_sklearns_optimum(layout, penalty, fit_intercept, weighted,
                                           positive):
    n, d = 70, 50
    X, y = _data(n, d, seed=3)
    sw = np.random.default_rng(1).uniform(0.2, 3.0, n) if weighted else np.ones(n)
    l1_ratio = 1.0 if penalty == "l1" else 0.7
    lam = 0.05 * np.abs(X.T @ (y - y.mean())).max() / n
    Xin = {"C": np.ascontiguousarray(X), "F": np.asfortranarray(X),
           "csc": sp.csc_matrix(X), "csr": sp.csr_matrix(X)}[layout]
    res = cdlearn.solve(Xin, y, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                        solver="primal-cd", fit_intercept=fit_intercept,
                        sample_weight=sw if weighted else None, positive=positive,
                        tol=1e-13, max_epochs=100_000)
    assert res.converged
    # scikit-learn's objective is ours times Σs/n... with normalised weights: compare P
    Ref = sk.Lasso if penalty == "l1" else sk.ElasticNet
    kw = {} if penalty == "l1" else {"l1_ratio": l1_ratio}
    # scikit-learn rescales sample weights to sum to n: lam is per that scaling
    scale = sw.sum() / n
    ref = Ref(alpha=lam / scale, fit_intercept=fit_intercept, positive=positive,
              tol=1e-15, max_iter=1_000_000, **kw).fit(X, y, sample_weight=sw)
    p_ours = _objective(X, y, res.w, res.intercept, lam, l1_ratio, sw)
    p_ref = _objective(X, y, ref.coef_, ref.intercept_, lam, l1_ratio, sw)
    assert abs(p_ours - p_ref) <= 1e-11 * p_ref
    assert abs(res.primal - p_ours) <= 1e-12 * p_ref
    np.testing.assert_allclose(res.w, ref.coef_, atol=1e-6 * np.abs(ref.coef_).max())
    if positive:
        assert res.w.min() >= 0.0


def test_auto_prices_plain_cd_and_says_so():
    # 300 × 200 dense: plain CD is predicted cheaper than ws-cd's passes and the Gram
    X, y = _data(300, 200, seed=5)
    lam = 0.1 * np.abs(X.T @ y).max() / 300
    p = make_problem(X, y, loss="squared", penalty="l1", lam=lam)
    choice, reason = squared_l1_choice(p)
    assert choice == "primal-cd"
    assert reason.startswith("squared loss, l1 part: plain cyclic CD on the data (primal-cd;")
    res = cdlearn.solve(X, y, penalty="l1", lam=lam, tol=1e-12, max_epochs=100_000)
    assert res.solver == "primal-cd" and res.info["reason"] == reason and res.converged
    # the sampling auto's primal-cd runs with is cyclic: the same iterates as asking for it
    cyc = cdlearn.solve(X, y, penalty="l1", lam=lam, tol=1e-12, max_epochs=100_000,
                        solver="primal-cd", sampling="cyclic")
    np.testing.assert_array_equal(res.w, cyc.w)
    assert res.n_epochs == cyc.n_epochs
    ref = sk.Lasso(alpha=lam, fit_intercept=False, tol=1e-15, max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(res.w, ref.coef_, atol=1e-8 * np.abs(ref.coef_).max())
    # its sparse copy (density ≥ 0.1 is priced as dense) takes the same method
    assert squared_l1_choice(make_problem(sp.csr_matrix(X), y, loss="squared",
                                          penalty="l1", lam=lam))[0] == "primal-cd"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_plain_cd_spaces_its_checks():
    # a check (Xᵀr, the margins, Python) costs about an epoch: every ~4 epochs, not 2
    X, y = _data(200, 100, seed=6)
    lam = 0.01 * np.abs(X.T @ y).max() / 200
    res = cdlearn.solve(X, y, penalty="l1", lam=lam, solver="primal-cd", tol=1e-15,
                        max_epochs=9)
    assert list(res.trace["epoch"]) == [0, 4, 8, 9]
    # other samplings keep the spacing of one check's entries (every 2 epochs, the first
    # check at epoch 1), as plain CD had before
    uni = cdlearn.solve(X, y, penalty="l1", lam=lam, solver="primal-cd", sampling="uniform",
                        tol=1e-15, max_epochs=9)
    assert list(uni.trace["epoch"]) == [0, 1, 3, 5, 7, 9]


@pytest.mark.parametrize("sparse", [False, True])
def test_gram_cd_initial_certificate(sparse):
    # at w = 0 gram-cd takes u = Xᵀ(s y)/n from c (no product): P(0) - D(α = s y)
    X, y = _data(120, 30, seed=7)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, 120)
    n = len(y)
    lam = 0.2 * np.abs(X.T @ (sw * y)).max() / n
    res = cdlearn.solve(sp.csr_matrix(X) if sparse else X, y, penalty="l1", lam=lam,
                        solver="gram-cd", sample_weight=sw, tol=1e-10, max_epochs=1000)
    p0 = 0.5 * np.sum(sw * y * y) / n
    u = X.T @ (sw * y) / n
    scale = min(1.0, lam / np.abs(u).max())
    alpha = scale * sw * y  # the dual point rescaled into the l1 dual's domain
    d0 = np.sum(alpha * y - alpha * alpha / (2 * sw)) / n
    assert res.trace["primal"][0] == pytest.approx(p0, rel=1e-14)
    assert res.trace["gap"][0] == pytest.approx(p0 - d0, rel=1e-12)


@pytest.mark.parametrize("solver", ["primal-cd", "gram-cd"])
def test_cold_start_reuses_xty_and_follows_y(solver, monkeypatch):
    # c = Xᵀ(s∘y)/n is kept on the design for the last y: plain CD's check at w = 0 and
    # gram-cd's linear term take no product with X on a repeated (X, y); a y or weights
    # changed in place must not be served the old c
    X, y = _data(150, 40, seed=8)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, 150)
    n = len(y)
    lam = 0.1 * np.abs(X.T @ (sw * y)).max() / n
    products = []
    real = cdlearn.data.Design.rmatvec
    monkeypatch.setattr(cdlearn.data.Design, "rmatvec",
                        lambda self, r: products.append(1) or real(self, r))

    def fit(yy, ww, **kw):
        products.clear()
        return cdlearn.solve(X, yy, penalty="l1", lam=lam, solver=solver, sample_weight=ww,
                             tol=1e-14, max_epochs=2000, **kw)

    first = fit(y, sw)
    again = fit(y, sw)
    # primal-cd: no Xᵀr at epoch 0, only at its later checks (one fewer than the checks)
    assert len(products) == (len(again.trace) - 1 if solver == "primal-cd" else 0)
    assert again.primal == first.primal and np.array_equal(again.w, first.w)
    for change in ("y", "weights"):
        yy, ww = y.copy(), sw.copy()
        fit(yy, ww)  # cached for these contents
        if change == "y":
            yy *= -0.5
            yy += 1.0
        else:
            ww[::3] *= 3.0
        res = fit(yy, ww)
        fresh = fit(yy.copy(), ww.copy())
        p0 = 0.5 * np.sum(ww * yy * yy) / n
        u = X.T @ (ww * yy) / n
        alpha = min(1.0, lam / np.abs(u).max()) * ww * yy
        d0 = np.sum(alpha * yy - alpha * alpha / (2 * ww)) / n
        assert res.trace["gap"][0] == pytest.approx(p0 - d0, rel=1e-12)
        assert res.primal == fresh.primal and np.array_equal(res.w, fresh.w)
        # the optimum of the changed problem, not of the cached one (scikit-learn rescales
        # the weights to sum to n: its alpha is lam n / Σs for the same minimiser)
        ref = sk.Lasso(alpha=lam * n / ww.sum(), fit_intercept=False, tol=1e-14,
                       max_iter=100_000).fit(X, yy, sample_weight=ww)
        assert _objective(X, yy, res.w, 0.0, lam, 1.0, ww) == pytest.approx(
            _objective(X, yy, ref.coef_, 0.0, lam, 1.0, ww), rel=1e-11)
