"""cdlearn's estimators inside ``cdlearn.distributed.fit_on`` and ``cdlearn fit`` on a cluster.

Reference: the same estimator fitted on one machine (its coefficients and
intercept at a tight tolerance); the CLI's model against cdlearn.solve.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
import cdlearn.distributed as cdd
from cdlearn.estimators import (
    ElasticNet,
    ElasticNetCV,
    GroupLasso,
    Lasso,
    LinearSVC,
    LogisticRegression,
    MultiTaskLasso,
    Ridge,
)

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = sp.random(150, 40, density=0.2, random_state=3, format="csr")
    t = X @ rng.standard_normal(40)
    return X, np.where(t > np.median(t), 1, 0), t + 0.1 * rng.standard_normal(150)


@pytest.mark.parametrize("make,target", [
    (lambda: LogisticRegression(C=10.0, tol=1e-8), "labels"),
    (lambda: LogisticRegression(C=10.0, l1_ratio=0.5, tol=1e-8), "labels"),
    (lambda: LinearSVC(C=1.0, tol=1e-8), "labels"),
    (lambda: Ridge(alpha=1.0, tol=1e-8), "values"),
    (lambda: Lasso(alpha=0.01, tol=1e-8), "values"),
    (lambda: ElasticNet(alpha=0.01, l1_ratio=0.5, tol=1e-8), "values"),
])
def test_estimators_fit_on_match_one_machine(data, make, target):
    X, labels, values = data
    y = labels if target == "labels" else values
    sw = np.random.default_rng(0).uniform(0.5, 1.5, X.shape[0])
    single = make().fit(X, y, sample_weight=sw)
    with cdd.fit_on(None, n_shards=3):
        dist = make().fit(X, y, sample_weight=sw)
    assert dist.solver_ in ("newton", "proxcocoa+")  # an intercept: Newton or ProxCoCoA+
    scale = np.max(np.abs(single.coef_))
    assert np.max(np.abs(dist.coef_ - single.coef_)) <= 1e-3 * scale
    assert np.allclose(dist.intercept_, single.intercept_, atol=1e-3 * scale)


def test_fit_on_one_vs_rest_without_intercept(data):
    """Three classes one-vs-rest, no intercept: CoCoA+ (K = 2) for every class."""
    X, _, values = data
    y = np.digitize(values, np.quantile(values, [1 / 3, 2 / 3]))
    make = lambda: LinearSVC(C=1.0, loss="hinge", fit_intercept=False, tol=1e-8)  # noqa: E731
    single = make().fit(X, y)
    with cdd.fit_on(None, n_shards=2, method="cocoa+", max_rounds=3000):
        dist = make().fit(X, y)
    assert dist.solver_ == "cocoa+" and dist.coef_.shape == (3, 40)
    assert np.max(np.abs(dist.coef_ - single.coef_)) <= 1e-2 * np.max(np.abs(single.coef_))


def test_fit_on_refuses_what_it_cannot_fit(data):
    X, labels, values = data
    with cdd.fit_on(None, n_shards=2):
        with pytest.raises(ValueError, match="LinearSVC inside cdlearn.distributed.fit_on: "
                                             "fit_intercept=True is not supported by CoCoA"):
            LinearSVC(loss="hinge").fit(X, labels)
        with pytest.raises(ValueError, match="ElasticNetCV cannot fit inside"):
            ElasticNetCV(cv=2).fit(X, values)
        with pytest.raises(ValueError, match="MultiTaskLasso cannot fit inside"):
            MultiTaskLasso().fit(X, np.c_[values, values])
        y3 = np.digitize(values, np.quantile(values, [1 / 3, 2 / 3]))
        with pytest.raises(ValueError, match=r"LogisticRegression with 3 classes \(multinomial"):
            LogisticRegression().fit(X, y3)
        with pytest.raises(ValueError, match="GroupLasso inside .*group penalties"):
            GroupLasso(groups=[[0, 1], [2, 3]] + [[j] for j in range(4, 40)]).fit(X, values)
        with pytest.raises(ValueError, match="positive=True"):
            Lasso(alpha=0.01, positive=True).fit(X, values)
        with pytest.raises(ValueError, match="warm_start=True"):
            est = Lasso(alpha=0.01, warm_start=True)
            est.fit(X, values)
            est.fit(X, values)
    with pytest.raises(ValueError, match="method='hydra' is not supported"):
        with cdd.fit_on(None, method="hydra"):
            pass
    assert cdd.current_engine() is None  # the block is closed again
    Lasso(alpha=0.01).fit(X, values)  # and estimators fit on one machine again


# --------------------------------------------------------------------------- CLI
def _cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "cdlearn.cli", *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


@pytest.mark.slow  # three Python processes start: ~50 s on the loaded machine (~1 s of solve)
def test_cli_fit_on_local_workers(tmp_path, data):
    """``cdlearn fit --local-workers 2`` (a subprocess) starts a LocalCluster of 2 worker
    processes; the model's objective is cdlearn.solve's optimum. (``--scheduler`` runs
    in tests/test_distributed.py::test_local_cluster, on that test's cluster.)"""
    pytest.importorskip("distributed")
    from sklearn.datasets import dump_svmlight_file

    X, labels, _ = data
    y = 2.0 * labels - 1.0
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    out = tmp_path / "model.json"
    run = _cli("fit", str(path), "--loss", "logistic", "--penalty", "l2", "--lam", "0.01",
               "--tol", "1e-9", "--local-workers", "2", "-o", str(out), "-q")
    assert run.returncode == 0, run.stderr
    model = json.loads(out.read_text())
    ref = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=0.01, tol=1e-12)
    assert model["solver"] == "newton" and model["converged"]
    assert model["distributed"]["n_shards"] == 2 and model["distributed"]["rounds"] > 0
    assert abs(model["primal"] - ref.primal) <= 1e-9 * model["p0"]
    assert np.allclose(model["coef"], ref.w, atol=1e-4 * np.max(np.abs(ref.w)))


def test_cli_cluster_arguments(tmp_path, capsys, data):
    from sklearn.datasets import dump_svmlight_file

    from cdlearn.cli import main

    assert main(["fit", "x.svm", "--local-workers", "0"]) == 2
    assert "--local-workers" in capsys.readouterr().err
    assert main(["fit", "x.svm", "--local-workers", "2", "--scheduler", "tcp://h:8786"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err
    X, labels, _ = data
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, 2.0 * labels - 1.0, str(path), zero_based=False)
    assert main(["fit", str(path), "--lam", "0.1", "--local-workers", "2", "--solver",
                 "primal-cd"]) == 2
    assert "on a cluster use --method" in capsys.readouterr().err
    # the method is chosen (and refused) before any cluster starts
    assert main(["fit", str(path), "--loss", "hinge", "--lam", "0.1", "--intercept",
                 "--local-workers", "2"]) == 1
    assert "fit_intercept=True is not supported by CoCoA+" in capsys.readouterr().err
