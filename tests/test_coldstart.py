"""Compile latency (issue 22): what numba compiles, ``cdlearn warmup``, compile time
kept apart from solve time.

Compilation is counted with numba's ``numba:compile`` events
(:class:`cdlearn.compile_stats.CompileRecorder`), never timed: the subprocess tests
use an empty ``NUMBA_CACHE_DIR`` and assert on the number of compiled functions.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from numba import njit

import cdlearn
from cdlearn.compile_stats import CompileRecorder, reachable

SRC = Path(cdlearn.__file__).resolve().parents[1]

#: regression guards on the functions a path compiles with an empty cache (measured
#: on this branch: 16 and 67; benchmarks/results/coldstart.md lists them)
MULTINOMIAL_MAX_COMPILED = 16
LASSO_MAX_COMPILED = 70


def _python(args, cache_dir, timeout=900):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), NUMBA_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


#: a first fit in a fresh process; prints the functions it compiled
FIT = """
import json, warnings
import numpy as np
import cdlearn
from cdlearn.compile_stats import CompileRecorder, reachable
rng = np.random.default_rng(1)
X = rng.standard_normal((70, 6))  # not warm-up's problem: other sizes, same types
y = {target}
warnings.simplefilter("ignore")
with CompileRecorder() as rec:
    cdlearn.{estimator}.fit(X, y)
print(json.dumps(rec.names()))
"""


def _compiled_by(path: str, cache_dir) -> int:
    out = _python(["-m", "cdlearn.cli", "warmup", "--only", path], cache_dir)
    found = re.search(rf"{re.escape(path)}: (\d+) functions compiled", out)
    assert found, out
    return int(found.group(1))


def test_warmup_fills_an_empty_cache_and_a_later_fit_compiles_nothing(tmp_path):
    compiled = _compiled_by("LogisticRegression multinomial (dense)", tmp_path)
    assert 0 < compiled <= MULTINOMIAL_MAX_COMPILED
    assert any(tmp_path.rglob("*.nbi"))  # the cache index files landed in NUMBA_CACHE_DIR
    out = _python(["-c", FIT.format(target="np.arange(70) % 4",
                                    estimator="LogisticRegression()")], tmp_path)
    assert json.loads(out.strip().splitlines()[-1]) == []


@pytest.mark.slow
def test_lasso_first_fit_compile_count_and_warmup(tmp_path):
    compiled = _compiled_by("Lasso (dense)", tmp_path)
    assert 0 < compiled <= LASSO_MAX_COMPILED
    out = _python(["-c", FIT.format(target="X @ np.arange(6.0)",
                                    estimator="Lasso(alpha=0.01)")], tmp_path)
    assert json.loads(out.strip().splitlines()[-1]) == []


#: issue 22's estimators, each fitted first in a fresh process on a small problem
SMALL_FITS = """
import json, warnings
import numpy as np
import cdlearn
from cdlearn.compile_stats import CompileRecorder
rng = np.random.default_rng(0)
X = rng.standard_normal((300, 12))
y = X @ rng.standard_normal(12) + 0.5 * rng.standard_normal(300)
labels = (y > 0).astype(int)
warnings.simplefilter("ignore")
out = {}
for name, model, target in [("Ridge", cdlearn.Ridge(), y),
                            ("LogisticRegression", cdlearn.LogisticRegression(), labels),
                            ("LinearSVC", cdlearn.LinearSVC(), labels),
                            ("multinomial", cdlearn.LogisticRegression(), np.arange(300) % 3),
                            ("Lasso", cdlearn.Lasso(alpha=0.05), y),
                            ("ElasticNet", cdlearn.ElasticNet(alpha=0.05), y)]:
    with CompileRecorder() as rec:
        model.fit(X, target)
    out[name] = rec.names()
print(json.dumps(out))
"""


def test_small_first_fits_compile_at_most_the_cd_epoch(tmp_path):
    # numpy forms of the certificates, scans and per-call helpers below
    # cdlearn.data.SMALL_ARRAY, ridge's closed form: Ridge and the multinomial compile
    # nothing, LogisticRegression and LinearSVC (newton-cg) the Cholesky of their
    # preconditioner, the Lasso gram-cd's epoch (were 15-25 functions each)
    out = json.loads(_python(["-c", SMALL_FITS], tmp_path).strip().splitlines()[-1])
    assert out == {"Ridge": [],
                   "LogisticRegression": ["kernels.newton_cd.cholesky_factor",
                                          "kernels.newton_cd.cholesky_apply"],
                   "LinearSVC": [], "multinomial": [],
                   "Lasso": ["kernels.gram_cd.gram_cd_epoch", "penalties.coordinate_prox_step",
                             "penalties.soft_threshold"],
                   "ElasticNet": []}


def test_warmup_only_matching_nothing_is_an_error():
    from cdlearn.warmup import warmup

    with pytest.raises(ValueError, match=r"only='no such path' matches no warm-up path"):
        warmup(echo=lambda *a: None, only="no such path")


def test_recorder_counts_outermost_compile_time_once():
    # fresh functions (no cache=True): each call below compiles
    @njit
    def inner(x):
        return x * 2.0

    @njit
    def outer(x):
        return inner(x) + 1.0

    t = time.perf_counter()
    with CompileRecorder() as rec:
        assert outer(1.0) == 3.0
    wall = time.perf_counter() - t
    names = [name.rsplit(".", 1)[-1] for name, _ in rec.compiled]
    assert names == ["outer", "inner"]  # inner compiles while outer is typed
    assert 0.0 < rec.seconds <= wall  # nested events not counted twice
    # own times: inner's compile is inside outer's event, and counted once in all
    assert all(t > 0.0 for t in rec.self_cpu)
    assert sum(rec.self_cpu) == pytest.approx(rec.cpu_seconds, rel=1e-9, abs=1e-12)
    assert [name.rsplit(".", 1)[-1] for name, _ in rec.costliest(5)] in (
        ["outer", "inner"], ["inner", "outer"])
    with CompileRecorder() as again:
        outer(2.0)
        outer(3.0)
    assert again.compiled == [] and again.seconds == 0.0


def test_recorder_ignores_other_threads():
    import threading

    @njit
    def f(x):
        return x + 1.0

    with CompileRecorder() as rec:
        th = threading.Thread(target=f, args=(1.0,))
        th.start()
        th.join()
    assert rec.compiled == [] and rec.seconds == 0.0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_solve_reports_compile_time_apart_from_solve_time():
    # a callback that compiles a fresh function stands for a kernel compiling mid-run
    @njit
    def fresh(x):
        return x - 1.0

    def callback(state):
        fresh(1.0)
        return True  # stop after the first check

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y = np.sign(rng.standard_normal(30))
    cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=0.1, solver="dual-cd",
                  max_epochs=2)  # load its kernels first
    t = time.perf_counter()
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=0.1, solver="dual-cd",
                        callback=callback)
    wall = time.perf_counter() - t
    assert res.info["compile_seconds"] > 0.0
    assert res.seconds + res.info["compile_seconds"] <= wall
    again = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=0.1, solver="dual-cd")
    assert again.info["compile_seconds"] == 0.0


#: what only a logistic (or other non-squared) solve may compile
NOT_SQUARED = ("logistic", "_newton_step", "loss_value", "loss_derivative", "loss_change",
               "_sigmoid", "_log1pexp")


def test_squared_ws_cd_kernel_reaches_no_logistic_code():
    # numba compiles whatever a kernel can call: one kernel for every loss made a Lasso
    # compile the logistic and Newton steps (61 functions, issue 22)
    from cdlearn.kernels.working_set import ws_inner_solve, ws_inner_solve_squared

    squared = reachable(ws_inner_solve_squared)
    assert "cdlearn.kernels.working_set._squared_step" in squared
    assert "cdlearn.kernels.primal_cd._residual_gradient" in squared
    assert [n for n in squared if any(word in n for word in NOT_SQUARED)] == []
    # the walk does see through calls and modules: the other kernel reaches them
    other = reachable(ws_inner_solve)
    assert {"cdlearn.kernels.primal_cd._logistic_newton_step", "cdlearn.losses._log1pexp",
            "cdlearn.kernels.primal_cd._error_probability"} <= other
    assert "cdlearn.kernels.working_set._squared_step" not in other


#: a squared ws-cd solve in a fresh process (with an intercept: its refresh too)
SQUARED_WS = """
import json
import numpy as np
import cdlearn
from cdlearn.compile_stats import CompileRecorder
rng = np.random.default_rng(0)
X = rng.standard_normal((40, 5))
y = X @ np.arange(5.0) + 1.0
with CompileRecorder() as rec:
    res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=0.01, solver="ws-cd",
                        fit_intercept=True, tol=1e-10)
print(json.dumps([rec.names(), res.converged, res.intercept]))
"""


@pytest.mark.slow
def test_squared_ws_cd_solve_compiles_no_logistic_function(tmp_path):
    out = _python(["-c", SQUARED_WS], tmp_path)
    names, converged, intercept = json.loads(out.strip().splitlines()[-1])
    assert "kernels.working_set.ws_inner_solve_squared" in names
    assert "kernels.working_set.ws_inner_solve" not in names
    # (the certificate's loss-generic sums still compile losses.loss_value & co.)
    assert [n for n in names if "logistic" in n or "newton" in n] == []
    # the residual gradient and the dense dot it calls (fastmath, its own function)
    assert sorted(n for n in names if n.startswith("kernels.primal_cd")) == [
        "kernels.primal_cd._dense_residual_dot", "kernels.primal_cd._residual_gradient"]
    assert converged and intercept == pytest.approx(1.0, abs=0.05)
