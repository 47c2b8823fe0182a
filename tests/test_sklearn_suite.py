"""scikit-learn's own tests with cdlearn's estimators: the quick subset, and the harness.

``make test-sklearn`` runs all of them (``python -m tests_sklearn``); here a
few dozen of the most telling applicable ones (``tests_sklearn.tables.QUICK``)
run in a fresh interpreter and every one must pass using a cdlearn estimator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cdlearn

pytest.importorskip("sklearn")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests_sklearn import plugin, run, tables  # noqa: E402


def test_quick_subset_passes(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(cdlearn.__file__).parents[1]), str(ROOT)]))
    proc = subprocess.run([sys.executable, "-m", "tests_sklearn", "--quick", "--out",
                           str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["failures"] == [] and report["collection_errors"] == {}, proc.stdout[-3000:]
    outcomes = report["outcomes"]
    assert {key.split("[")[0] for key in outcomes} == set(tables.QUICK)
    assert {k: e["outcome"] for k, e in outcomes.items() if e["outcome"] != "passed"} == {}
    assert [k for k, e in outcomes.items() if not e["used"]] == []
    assert proc.returncode == 0


class _Excinfo:
    """What ``classify`` reads from pytest's ExceptionInfo."""

    def __init__(self, exc):
        self.value, self.type = exc, type(exc)
        self.traceback = []


@pytest.mark.parametrize("exc, params", [
    (TypeError("Lasso.__init__() got an unexpected keyword argument 'selection'"),
     ["selection"]),
    (TypeError("Lasso.fit() got an unexpected keyword argument 'check_input'"),
     ["check_input"]),
    (TypeError("solve() got option(s) positive, precompute that solver='ws-cd' does not "
               "take (its own options: none)"), ["positive", "precompute"]),
    (ValueError("Invalid parameter 'dual' for estimator LinearSVC(). Valid parameters are: "
                "['C']."), ["dual"]),
    (plugin.NotOffered("LogisticRegressionCV", ["use_legacy_attributes", "l1_ratios"]),
     ["use_legacy_attributes", "l1_ratios"]),
])
def test_not_offered_parameters_are_named(exc, params):
    assert plugin.classify(_Excinfo(exc)) == {
        "outcome": "not offered", "params": params,
        "detail": f"TypeError: {exc}" if isinstance(exc, plugin.NotOffered)
        else f"{type(exc).__name__}: {exc}"}


def test_other_errors_are_failures():
    # a keyword error of a test's own helper is not cdlearn's missing parameter
    out = plugin.classify(_Excinfo(TypeError("helper() got an unexpected keyword argument 'x'")))
    assert out["outcome"] == "failed"
    try:
        try:
            raise AttributeError("'Lasso' object has no attribute 'intercept_'")
        except AttributeError:
            raise AssertionError("DID NOT WARN") from None
    except AssertionError as exc:
        exc.__cause__ = None
        out = plugin.classify(_Excinfo(exc))
    assert out["detail"] == ("AssertionError: DID NOT WARN (after AttributeError: 'Lasso' "
                             "object has no attribute 'intercept_')")


def test_summary_counts_per_estimator_and_parameters():
    outcomes = {
        "a.py::t1": {"used": ["Lasso"], "outcome": "passed", "detail": ""},
        "a.py::t2": {"used": ["Lasso", "ElasticNet"], "outcome": "not offered",
                     "params": ["positive"], "detail": ""},
        "a.py::t3": {"used": ["Ridge"], "outcome": "failed", "detail": "E: x", "where": "f:1"},
        "a.py::t4": {"used": [], "outcome": "passed", "detail": ""},
        "a.py::t5": {"used": [], "outcome": "not applicable", "detail": "private"},
        # ran, but the table (tables.NOT_APPLICABLE) now says not applicable
        "test_logistic.py::test_get_default_scorer": {"used": ["LogisticRegressionCV"],
                                                      "outcome": "failed", "detail": "E"},
    }
    s = run.summarize(outcomes)
    assert s["estimators"] == {"ElasticNet": {"not offered": 1},
                               "Lasso": {"passed": 1, "not offered": 1},
                               "Ridge": {"failed": 1}}
    assert s["not_offered"] == {"ElasticNet": {"positive": 1}, "Lasso": {"positive": 1}}
    assert s["failures"] == [{"test": "a.py::t3", "used": ["Ridge"], "error": "E: x",
                              "where": "f:1"}]
    assert s["totals"] == {"passed": 1, "not offered": 1, "failed": 1, "not applicable": 2}
    assert s["without_cdlearn"] == {"passed": 1}
    assert s["not_applicable"] == {"private": 1, tables.NOT_APPLICABLE[0][1]: 1}


def test_not_applicable_patterns_match_and_have_reasons():
    for pattern, reason in tables.NOT_APPLICABLE:
        assert "::" in pattern and reason and len(reason) < 200
        assert tables.not_applicable(pattern.replace("*", "x")) == reason
