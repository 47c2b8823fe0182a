"""cdlearn's benchopt Lasso solver sampled by tolerance (benchmarks/benchopt/lasso):
driven by benchopt's own stopping criterion, its runs reach a relative 1e-10 of P*."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

benchopt = pytest.importorskip("benchopt")
from benchopt.stopping_criterion import INFINITY, SufficientProgressCriterion  # noqa: E402

import cdlearn  # noqa: E402

LASSO = Path(__file__).resolve().parents[1] / "benchmarks" / "benchopt" / "lasso"


def _solver_class(name):
    sys.path.insert(0, str(LASSO))  # the solver files import benchmark_utils, as in benchopt
    try:
        spec = importlib.util.spec_from_file_location(f"_cdlearn_{name}",
                                                      LASSO / "solvers" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(LASSO))
    return module.Solver


def _tolerance_curve(solver, X, y, lmbd):
    """benchopt's tolerance sampling: run(stop_val) from INFINITY until its criterion stops."""
    crit = SufficientProgressCriterion(strategy="tolerance", key_to_monitor="value")
    crit = crit.get_runner_instance(max_runs=100, solver=solver)
    objectives, stop_val, tols = [], INFINITY, []
    while True:
        solver.run(stop_val)
        r = y - X @ solver.get_result()["beta"]
        objectives.append({"objective_value": 0.5 * r @ r + lmbd * np.abs(solver.coef).sum()})
        tols.append(stop_val)
        stop, status, stop_val = crit.should_stop(stop_val, objectives)
        if stop:
            return [o["objective_value"] for o in objectives], tols, status


@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_tolerance_sampled_runs_reach_1e10(rho):
    rng = np.random.default_rng(27)
    n, d = 2000, 50
    X = rng.standard_normal((n, d))
    for j in range(1, d):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho * rho) * X[:, j]
    y = X @ (rng.standard_normal(d) * (rng.random(d) < 0.3)) + rng.standard_normal(n)
    lmbd = 0.1 * np.abs(X.T @ y).max()
    best = cdlearn.solve(X, y, penalty="l1", lam=lmbd / n, tol=1e-15,
                         max_epochs=100_000).primal * n
    solver = _solver_class("cdlearn_tol").get_instance(solver="auto")
    solver.set_objective(X, y, lmbd, False)
    values, tols, status = _tolerance_curve(solver, X, y, lmbd)
    assert status == "done"
    assert np.all(np.diff(values) <= 1e-12 * best)  # each tighter tol: no worse a point
    assert (min(values) - best) / best <= 1e-10
    assert tols[1:3] == [1e-2, 1e-4]  # cdlearn's schedule, not benchopt's 1/1.5
