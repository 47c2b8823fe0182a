"""Run scikit-learn's own tests with cdlearn's estimators and write the report.

``python -m tests_sklearn`` (``make test-sklearn``) runs every installed test
module of ``sklearn/linear_model/tests`` and ``sklearn/svm/tests`` that names a
substituted estimator (:data:`tests_sklearn.plugin.SUBSTITUTES`) and writes
``report.md`` and ``report.json`` (default ``tests_sklearn/results``): per
estimator the tests passed, failed, skipped because a parameter is not offered
(with the parameters' names) and skipped by scikit-learn itself, then every
failure with its error, and the tests not applicable with their reasons.
``--quick`` runs :data:`tests_sklearn.tables.QUICK` only (``tests/test_sklearn_suite.py``). The exit
status is 1 when an applicable test that uses a cdlearn estimator failed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITES = ("linear_model", "svm")
#: seconds one scikit-learn test may run before it counts as failed (pytest-timeout)
TEST_TIMEOUT = 300

def test_files(names=None) -> list[Path]:
    """Installed scikit-learn test files that mention a substituted name."""
    import sklearn

    from .tables import SUBSTITUTES

    word = re.compile(r"\b(" + "|".join(SUBSTITUTES) + r")\b")
    root = Path(sklearn.__file__).parent
    files = []
    for suite in SUITES:
        for path in sorted((root / suite / "tests").glob("test_*.py")):
            if (names is None or path.name in names) and word.search(path.read_text()):
                files.append(path)
    return files


def run_pytest(targets: list[str], outcomes: Path, extra=()) -> int:
    import pytest

    args = [*targets, "-p", "tests_sklearn.plugin", "-c", str(HERE / "pytest.ini"),
            "--rootdir", str(HERE), "-p", "no:cacheprovider", "-q", "--no-header",
            "-o", "console_output_style=classic", "--continue-on-collection-errors",
            "-W", "ignore::pytest.PytestRemovedIn10Warning", "--sklearn-outcomes", str(outcomes),
            # a test that runs for minutes is a defect to see in the report, not a stuck run
            f"--timeout={TEST_TIMEOUT}", *extra]
    return pytest.main(args)


def summarize(outcomes: dict) -> dict:
    """Counts per estimator, not-offered parameters, failures and not-applicable groups."""
    from .tables import not_applicable

    per = defaultdict(Counter)
    params = defaultdict(Counter)
    failures = []
    na_reasons = Counter()
    uninvolved = Counter()
    collection_errors = {}
    totals = Counter()
    for nodeid, entry in sorted(outcomes.items()):
        reason = not_applicable(nodeid)  # the table decides, also for an older run
        if reason is not None:
            entry = dict(entry, outcome="not applicable", detail=reason)
        outcome = entry["outcome"]
        if outcome == "collection error":
            collection_errors[nodeid] = entry["detail"]
            continue
        if outcome == "not applicable":
            na_reasons[entry["detail"]] += 1
            totals[outcome] += 1
            continue
        if not entry["used"]:
            uninvolved[outcome] += 1
            continue
        totals[outcome] += 1
        for name in entry["used"]:
            per[name][outcome] += 1
            for p in entry.get("params", ()):
                params[name][p] += 1
        if outcome == "failed":
            failures.append({"test": nodeid, "used": entry["used"],
                             "error": entry["detail"], "where": entry.get("where", "")})
    return {
        "totals": dict(totals),
        "estimators": {k: dict(v) for k, v in sorted(per.items())},
        "not_offered": {k: dict(v.most_common()) for k, v in sorted(params.items())},
        "failures": failures,
        "not_applicable": dict(na_reasons.most_common()),
        "without_cdlearn": dict(uninvolved),
        "collection_errors": collection_errors,
    }


COLUMNS = ("passed", "failed", "not offered", "skipped", "xfail", "xpassed")


def markdown(summary: dict, command: str) -> str:
    from .tables import NOT_APPLICABLE

    lines = ["# scikit-learn's own tests with cdlearn's estimators", "",
             f"`{command}`", "",
             "| estimator | " + " | ".join(COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for name, counts in summary["estimators"].items():
        lines.append(f"| {name} | " + " | ".join(str(counts.get(c, 0)) for c in COLUMNS) + " |")
    t = summary["totals"]
    lines += ["", "A test counts for every substituted estimator it constructs (or function it "
              "calls). Totals over distinct tests: " + ", ".join(
                  f"{t.get(c, 0)} {c}" for c in (*COLUMNS, "not applicable")) + "; "
              + ", ".join(f"{v} {k}" for k, v in summary["without_cdlearn"].items())
              + " that use no cdlearn estimator (not counted).", "",
              "## Parameters not offered", "", "| estimator | parameter (tests) |", "|---|---|"]
    for name, ps in summary["not_offered"].items():
        lines.append(f"| {name} | " + ", ".join(f"`{p}` ({k})" for p, k in ps.items()) + " |")
    if summary["collection_errors"]:
        lines += ["", "## Test modules that did not import", ""]
        lines += [f"- `{k}`: {v}" for k, v in summary["collection_errors"].items()]
    lines += ["", f"## Failures ({len(summary['failures'])})", ""]
    for f in summary["failures"]:
        lines.append(f"- `{f['test']}` ({', '.join(f['used'])}): {f['error']}")
    lines += ["", "## Not applicable (not run)", "", "| tests | reason |", "|---|---|"]
    for pattern, reason in NOT_APPLICABLE:
        lines.append(f"| `{pattern}` | {reason} |")
    lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests_sklearn", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="run the quick subset only")
    parser.add_argument("--files", nargs="*", help="only these test files (e.g. test_ridge.py)")
    parser.add_argument("--out", default=str(HERE / "results"),
                        help="directory of report.md / report.json ('' for none)")
    parser.add_argument("--from-report", metavar="JSON",
                        help="no run: summarize the outcomes stored in a report.json again "
                             "(with the current not-applicable table)")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args(argv)
    if args.from_report:
        return write_report(json.loads(Path(args.from_report).read_text())["outcomes"],
                            args.out, "python -m tests_sklearn")
    files = test_files(args.files)
    if args.quick:
        from .tables import QUICK

        by_name = {p.name: p for p in test_files()}
        targets = [str(by_name[q.split("::")[0]]) + "::" + q.split("::", 1)[1] for q in QUICK]
    else:
        targets = [str(p) for p in files]
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "outcomes.json"
        run_pytest(targets, raw, args.pytest_args)
        outcomes = json.loads(raw.read_text())
    return write_report(outcomes, args.out,
                        "python -m tests_sklearn" + (" --quick" if args.quick else ""))


def write_report(outcomes: dict, out: str, command: str) -> int:
    """Write report.md / report.json to ``out`` ('' for none); 1 if an applicable test failed."""
    summary = summarize(outcomes)
    summary["outcomes"] = outcomes
    text = markdown(summary, command)
    if out:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(text)
        (out / "report.json").write_text(json.dumps(summary, sort_keys=True, separators=(",", ":")))
    print(text)
    return 1 if summary["failures"] or summary["collection_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
