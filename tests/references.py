"""Small problems with known answers, shared by the solver tests."""

import numpy as np
import scipy.sparse as sp


def ridge_problem(rng, n=120, d=40, sparse=False):
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 3.0, size=d)
    if sparse:
        X[rng.random((n, d)) < 0.7] = 0.0
        X[:, 3] = 0.0  # an empty column, legal
        X = sp.csc_matrix(X)
    y = (X @ rng.standard_normal(d)) + 0.3 * rng.standard_normal(n)
    return X, np.asarray(y).ravel()


def ridge_closed_form(X, y, lam, sw=None, intercept=False):
    A = X.toarray() if sp.issparse(X) else X
    n = A.shape[0]
    sw = np.ones(n) if sw is None else sw
    if intercept:
        A = np.hstack([A, np.ones((n, 1))])
    reg = lam * np.eye(A.shape[1])
    if intercept:
        reg[-1, -1] = 0.0
    H = A.T @ (A * sw[:, None]) / n + reg
    sol = np.linalg.solve(H, A.T @ (sw * y) / n)
    return (sol[:-1], sol[-1]) if intercept else (sol, 0.0)


def sparse_classification_problem(seed=0, n=600, d=80, density=0.1, noise=0.2, weights=False):
    """Sparse CSR X with Gaussian nonzeros, labels ±1 from a noisy linear model,
    optional sample weights in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    y = np.sign(X @ rng.standard_normal(d) + noise * rng.standard_normal(n))
    y[y == 0] = 1.0
    sw = rng.uniform(0.5, 2.0, n) if weights else None
    return X, y, sw
