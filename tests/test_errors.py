"""Bad input gets a clear error naming the argument (DESIGN.md, error policy)."""

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn

X = np.random.default_rng(0).standard_normal((20, 5))
Y_REG = X @ np.arange(5.0)
Y_BIN = np.sign(Y_REG + 0.1)


def _solve(**kw):
    args = dict(loss="squared", penalty="l2", lam=0.1)
    args.update(kw)
    Xa = args.pop("X", X)
    ya = args.pop("y", Y_REG)
    return cdlearn.solve(Xa, ya, **args)


@pytest.mark.parametrize(
    "kw, err, match",
    [
        (dict(X=np.where(X > 1, np.nan, X)), ValueError, "X contains NaN"),
        (dict(X=sp.csr_matrix(np.where(X > 1, np.inf, X))), ValueError, "X contains NaN"),
        (dict(y=np.where(Y_REG > 1, np.nan, Y_REG)), ValueError, "y contains NaN"),
        (dict(y=Y_REG[:-1]), ValueError, "y has 19 entries but X has 20"),
        (dict(X=np.zeros((0, 5)), y=np.zeros(0)), ValueError, "X is empty"),
        (dict(lam=0.0), ValueError, "lam must be > 0"),
        (dict(lam=-1.0), ValueError, "lam must be > 0"),
        (dict(lam=np.inf), ValueError, "lam must be finite"),
        (dict(lam="big"), TypeError, "lam must be a real number"),
        (dict(lam=None), ValueError, "lam is required"),
        (dict(loss="logistic"), ValueError, r"y must contain only -1 and \+1"),
        (dict(loss="cross-entropy"), ValueError, "loss='cross-entropy' is not supported"),
        (dict(penalty="l3"), ValueError, "penalty='l3' is not supported"),
        (dict(solver="sgd"), ValueError, "solver='sgd' is not supported"),
        (dict(sampling="greedy"), ValueError, "sampling='greedy' is not supported"),
        (dict(tol=0.0), ValueError, "tol must be > 0"),
        (dict(max_epochs=-1), ValueError, "max_epochs must be >= 0"),
        (dict(max_epochs=2.5), TypeError, "max_epochs must be an integer"),
        (dict(batch_size=50), ValueError, "batch_size=50 exceeds"),
        (dict(batch_size=2, sampling="importance"), ValueError, "τ-nice"),
        (dict(penalty="elastic_net", l1_ratio=1.5), ValueError, r"l1_ratio must be in \[0, 1\]"),
        (dict(loss="hinge", y=Y_BIN, solver="primal-cd"), ValueError, "does not support loss='hinge'"),
        (dict(penalty="l1", solver="dual-cd"), ValueError, "does not support penalty='l1'"),
        (dict(penalty="elastic_net", l1_ratio=1.0, solver="dual-cd"), ValueError, "l1_ratio=1"),
        (dict(sample_weight=-np.ones(20)), ValueError, "sample_weight must be non-negative"),
        (dict(w0=np.ones(3), solver="primal-cd"), ValueError, r"w0 must have shape \(5,\)"),
        (dict(seed=1.5), TypeError, "seed must be a non-negative integer"),
        (dict(callback=3), TypeError, "callback must be callable"),
        (dict(sampling="power", solver="dual-cd"), ValueError, "sampling='power'"),
    ],
)
def test_bad_input_is_named(kw, err, match):
    with pytest.raises(err, match=match):
        _solve(**kw)


def test_all_zero_rows_and_columns_are_legal():
    Xz = X.copy()
    Xz[:, 1] = 0.0
    Xz[3, :] = 0.0
    for solver in ("primal-cd", "dual-cd"):
        res = _solve(X=sp.csr_matrix(Xz), solver=solver, tol=1e-12, max_epochs=10000)
        assert res.converged and res.w[1] == 0.0 and np.all(np.isfinite(res.w))
    res = cdlearn.solve(np.zeros((4, 3)), np.ones(4), loss="squared", penalty="l2", lam=1.0)
    assert res.converged and not np.any(res.w)


def test_unknown_solver_option_is_named():
    with pytest.raises(TypeError, match="selection that solver='dual-cd' does not take"):
        _solve(solver="dual-cd", selection="gs")
