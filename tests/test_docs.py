"""The documentation site (issue 22) and the README's quick start.

``test_docs_build_quick`` builds the site as ``make docs`` does, with warnings
as errors, in quick mode (``CDLEARN_DOCS_QUICK=1``: only the gallery examples
on generated or scikit-learn data run) from a copy of ``docs/`` into a
temporary directory, and checks the pages, the gallery's figures and the
pages generated from the result files. One test: it runs once under xdist.
"""

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: written by a build inside docs/ (make docs); never copied into the test's build
BUILD_OUTPUTS = ("_build", "generated", "auto_examples", "sg_execution_times.rst")


def _python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


def test_readme_is_a_landing_page():
    """At most 8 KB, the two set-up commands first, and a link to the docs build."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 8 * 1024
    first_block = re.search(r"```bash\n(.*?)```", text, flags=re.S).group(1)
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "demo"],
                                                                      ["make", "test"]]
    assert "make docs" in text and "docs/_build/html/" in text


def test_readme_quick_start_runs():
    """The README's python block runs and certifies its fit (gap <= tol * P(0))."""
    (code,) = _python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102
    res = scope["res"]
    assert res.converged and 0 <= res.gap <= 1e-8 * math.log(2)  # P(0) = log 2
    assert scope["clf"].score(scope["Xi"], scope["yi"]) > 0.95
    assert 0 < (scope["reg"].coef_ != 0).sum() <= 10


def test_docs_build_quick(tmp_path):
    pytest.importorskip("sphinx", reason="make test installs the docs extra")
    src = tmp_path / "src"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns(*BUILD_OUTPUTS))
    out = tmp_path / "html"
    env = {**os.environ, "CDLEARN_DOCS_QUICK": "1", "CDLEARN_DOCS_ROOT": str(ROOT),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           "MPLBACKEND": "Agg"}
    env.pop("CDLEARN_DOCS_ONLINE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(src), str(out)],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    for page in ["index", "getting_started", "api", "performance", "reliability", "design",
                 "limitations", "results", "guide/choosing_solver", "guide/stopping",
                 "guide/sampling", "guide/paths_cv", "guide/estimators", "guide/cli",
                 "guide/reproductions", "guide/data", "guide/dask", "auto_examples/index",
                 "generated/api/cdlearn.solve", "generated/api/cdlearn.Lasso"]:
        assert (out / f"{page}.html").is_file(), page
    images = {p.name for p in (out / "_images").iterdir()}
    for example in ["plot_certificate", "plot_group_lasso", "plot_ascd_active_set"]:
        assert f"sphx_glr_{example}_001.png" in images, example
    assert "choosing_solver-1.png" in images  # the C_P / C_D picture
    # the slow examples are shown, not run, in quick mode
    assert "sphx_glr_plot_primal_dual_news20_001.png" not in images

    # one generated page per result file, showing that file's table rows
    sys.path.insert(0, str(DOCS))
    try:
        from _ext.results import collect
    finally:
        sys.path.remove(str(DOCS))
    files = collect(ROOT)
    assert len(files) >= 2
    generated = sorted((out / "generated").glob("*.html"))
    assert len(generated) == len(files)
    # the plots beside a result file are shown on its page
    pngs = sorted((ROOT / "benchmarks/results").glob("*.png"))
    assert pngs and all(p.name in images or p.stem + "1.png" in images for p in pngs)
    report = (out / "generated" / "tests-sklearn-results-report.html").read_text()
    first_row = next(line for line in (ROOT / "tests_sklearn/results/report.md").read_text()
                     .splitlines() if line.startswith("| ") and "---" not in line)
    cell = first_row.strip("| ").split("|")[0].strip().strip("`")
    assert cell and cell in report
    # the README's sections moved to the site: the parameters not offered are listed there
    estimators = (out / "guide/estimators.html").read_text()
    assert "Parameters of scikit-learn" in estimators and "crammer_singer" in estimators
