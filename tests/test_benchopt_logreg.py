"""cdlearn's benchopt logistic solvers (benchmarks/benchopt/logreg_l1, logreg_l2) sampled by
tolerance: driven by benchopt's own stopping criterion, their runs reach a relative 1e-10
of the optimum (they stopped at tol ≈ 4e-2 when benchopt's tol went to cdlearn as is)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

benchopt = pytest.importorskip("benchopt")
from benchopt.stopping_criterion import INFINITY, SufficientProgressCriterion  # noqa: E402

import cdlearn  # noqa: E402

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "benchopt"


def _solver(penalty):
    path = BENCH / f"logreg_{penalty}" / "solvers" / "cdlearn.py"
    spec = importlib.util.spec_from_file_location(f"_cdlearn_logreg_{penalty}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # standalone: no benchmark_utils on the path
    return module.Solver.get_instance(solver="auto")


def _objective(X, y, w, penalty, lmbd):
    loss = np.logaddexp(0.0, -y * (X @ w)).sum()
    return loss + (0.5 * lmbd * w @ w if penalty == "l2" else lmbd * np.abs(w).sum())


@pytest.mark.parametrize("penalty,lmbd", [("l2", 0.01), ("l1", 0.1)])
def test_tolerance_sampled_logistic_runs_reach_1e10(penalty, lmbd):
    rng = np.random.default_rng(25)
    n, d = 1500, 40
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    if penalty == "l1":
        lmbd *= np.abs(X.T @ y).max() / 2  # the benchmark's reg · λmax
    best = cdlearn.solve(X, y, loss="logistic", penalty=penalty, lam=lmbd / n, tol=1e-15,
                         max_epochs=100_000).primal * n
    solver = _solver(penalty)
    solver.set_objective(X, y, lmbd)
    crit = SufficientProgressCriterion(strategy="tolerance", key_to_monitor="value")
    crit = crit.get_runner_instance(max_runs=100, solver=solver)
    values, tols, stop_val = [], [], INFINITY
    while True:
        solver.run(stop_val)
        values.append({"objective_value": _objective(X, y, solver.get_result()["beta"],
                                                     penalty, lmbd)})
        tols.append(stop_val)
        stop, status, stop_val = crit.should_stop(stop_val, values)
        if stop:
            break
    values = [v["objective_value"] for v in values]
    assert status == "done"
    assert tols[1:3] == [1e-2, 1e-4]  # cdlearn's schedule, not benchopt's 1/1.5
    assert (min(values) - best) / best <= 1e-10
