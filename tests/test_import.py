"""What ``import cdlearn`` and a first solve load (issue #8: fast cold start).

Each check runs in a fresh interpreter and asserts on ``sys.modules``, not on
timings: ``import cdlearn`` must not pull in scikit-learn, matplotlib, tqdm, the
estimators, datasets, experiments or the command line, nor the solver modules
(and their numba kernels) a solve does not run.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import cdlearn
from cdlearn.solvers import SOLVERS, SolverSpec

#: never imported by ``import cdlearn`` (heavy, or not needed by ``solve``)
HEAVY = ("sklearn", "matplotlib", "tqdm", "pandas", "joblib", "cdlearn.estimators",
         "cdlearn.datasets", "cdlearn.experiments", "cdlearn.cli", "cdlearn.report",
         "cdlearn.features", "cdlearn.paths")
#: solver modules (with their numba kernels) that a dual-cd solve does not run
OTHER_SOLVERS = ("cdlearn.solvers.block_cd", "cdlearn.solvers.full_gradient",
                 "cdlearn.solvers.greedy_cd", "cdlearn.solvers.primal_cd",
                 "cdlearn.solvers.spdc", "cdlearn.solvers.dgpd", "cdlearn.solvers.working_set",
                 "cdlearn.solvers.newton_cg", "cdlearn.kernels.newton_cg",
                 "cdlearn.kernels.block_cd", "cdlearn.kernels.primal_cd",
                 "cdlearn.kernels.greedy_cd", "cdlearn.kernels.spdc", "cdlearn.kernels.dgpd",
                 "cdlearn.kernels.working_set", "cdlearn.kernels.primal_shrinking")


def _modules_after(code: str) -> set[str]:
    """``sys.modules`` of a fresh interpreter after running ``code``."""
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=True)
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_import_cdlearn_loads_no_heavy_or_unused_module():
    mods = _modules_after("import cdlearn")
    assert "cdlearn.api" in mods
    assert not [m for m in HEAVY if m in mods]
    assert not [m for m in OTHER_SOLVERS if m in mods]


def test_dual_cd_solve_loads_only_its_solver():
    mods = _modules_after(
        "import numpy as np, cdlearn\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.standard_normal((60, 8)); y = np.sign(rng.standard_normal(60))\n"
        "res = cdlearn.solve(X, y, loss='logistic', penalty='l2', lam=1e-2,\n"
        "                    solver='dual-cd', tol=1e-4)\n"
        "assert res.converged"  # (a ConvergenceWarning would import scikit-learn's class)
    )
    assert "cdlearn.solvers.dual_cd" in mods and "cdlearn.kernels.dual_cd" in mods
    assert not [m for m in HEAVY if m in mods]
    assert not [m for m in OTHER_SOLVERS if m in mods]


def test_lazy_public_names_resolve():
    mods = _modules_after(
        "import cdlearn\n"
        "from cdlearn import path, lasso_path\n"
        "assert callable(path) and callable(lasso_path) and cdlearn.path is path\n"
        "assert 'lasso_path' in dir(cdlearn) and 'LogisticRegression' in dir(cdlearn)"
    )
    assert "cdlearn.paths" in mods
    assert "sklearn" not in mods
    with pytest.raises(AttributeError):
        cdlearn.no_such_name  # noqa: B018


def test_estimators_resolve_lazily():
    pytest.importorskip("sklearn")
    from cdlearn.estimators import LogisticRegression

    assert cdlearn.LogisticRegression is LogisticRegression


def test_solver_registry_is_a_lazy_mapping():
    names = ["primal-cd", "dual-cd", "block-cd", "fista", "scd", "ascd", "spdc", "dgpd",
             "newton-cd", "ws-cd", "newton-cg"]
    assert list(SOLVERS)[:len(names)] == names and len(SOLVERS) == len(list(SOLVERS))
    assert "dual-cd" in SOLVERS and "nope" not in SOLVERS
    with pytest.raises(KeyError):
        SOLVERS["nope"]
    for name in SOLVERS:
        spec = SOLVERS[name]
        assert isinstance(spec, SolverSpec) and spec.name == name and SOLVERS[name] is spec
        assert spec.losses and spec.penalties and callable(spec.build)
    # the registry's names, without importing a solver module
    mods = _modules_after("from cdlearn.solvers import SOLVERS\n"
                          "assert 'ws-cd' in SOLVERS and len(list(SOLVERS)) >= 10")
    assert not [m for m in OTHER_SOLVERS if m in mods]


def test_solver_module_attributes_still_resolve():
    import cdlearn.solvers as solvers

    assert solvers.dgpd_solver is solvers.dgpd
    assert solvers.ws_solver.__name__ == "cdlearn.solvers.working_set"
    assert solvers.greedy_cd.build_scd is SOLVERS["scd"].build
    with pytest.raises(AttributeError):
        solvers.no_such_solver  # noqa: B018
