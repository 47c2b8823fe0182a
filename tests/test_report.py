"""Plot, table and markdown helpers of ``cdlearn.report``."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import cdlearn
from cdlearn.report import (
    GAP_LABEL,
    SUBOPT_LABEL,
    comparison_table,
    plot_comparison,
    plot_suboptimality,
    reference_value,
    relative_suboptimality,
    traces_to_csv,
    write_markdown,
)
from cdlearn.solvers.base import Trace


def _trace(primal, gap=None):
    t = Trace()
    for k, p in enumerate(primal):
        g = (p - 1.0) if gap is None else gap[k]
        t.append(k, 1.5 * k, 0.01 * k, p, p - g, g, 3, 5)
    return t


@pytest.fixture
def traces():
    return {
        "fast": _trace([2.0, 1.1, 1.01, 1.001, 1.0]),
        "slow": _trace([2.0, 1.5, 1.2, 1.1, 1.05, 1.02]),
    }


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 8))
    y = np.where(X @ rng.standard_normal(8) > 0, 1.0, -1.0)
    return {
        f"{s} / uniform": cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=0.05,
                                        solver=s, sampling="uniform", tol=1e-8)
        for s in ("primal-cd", "dual-cd")
    }


def test_agg_canvas_and_no_pyplot_state(traces):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    ax = plot_suboptimality(traces, 1.0)
    assert isinstance(ax.figure.canvas, FigureCanvasAgg)
    assert plt.get_fignums() == before


def test_reference_value_and_relative_suboptimality(traces):
    assert reference_value(traces) == 1.0
    assert reference_value(traces, 0.5, None) == 0.5
    np.testing.assert_allclose(relative_suboptimality(traces["slow"], 1.0),
                               [1.0, 0.5, 0.2, 0.1, 0.05, 0.02])
    with pytest.raises(ValueError):
        reference_value({"empty": Trace()})


def test_plot_suboptimality_axes(traces):
    ax = plot_suboptimality(traces, 1.0, x="passes", title="demo")
    assert ax.get_yscale() == "log"
    assert ax.get_ylabel() == SUBOPT_LABEL and "passes" in ax.get_xlabel()
    assert ax.get_title() == "demo"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["fast", "slow"]
    # the zero suboptimality at the end of "fast" cannot be drawn on a log axis
    fast = ax.get_lines()[0]
    assert len(fast.get_xdata()) == 4 and np.all(fast.get_ydata() > 0)
    ax2 = plot_suboptimality(traces, None, x="seconds", legend=False)
    assert ax2.get_ylabel() == GAP_LABEL and ax2.get_xlabel() == "time (s)"
    assert ax2.get_legend() is None
    with pytest.raises(ValueError, match="passes"):
        plot_suboptimality(traces, 1.0, x="epochs")


def test_plot_comparison_png(tmp_path, traces):
    path = plot_comparison(traces, 1.0, tmp_path / "sub" / "cmp.png", title="t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_traces_to_csv(tmp_path, traces):
    path = traces_to_csv(traces, tmp_path / "t.csv", f_star=1.0)
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(traces["fast"]) + len(traces["slow"])
    assert [r["method"] for r in rows[:5]] == ["fast"] * 5
    assert rows[5]["method"] == "slow" and float(rows[6]["rel_subopt"]) == pytest.approx(0.5)
    assert rows[0]["epoch"] == "0" and rows[0]["nnz_w"] == "3"
    path2 = traces_to_csv(traces, tmp_path / "t2.csv")
    assert "rel_subopt" not in path2.read_text().splitlines()[0]


def test_comparison_table(results):
    table = comparison_table(results, f_star=min(r.primal for r in results.values()))
    lines = table.splitlines()
    assert lines[0].startswith("| method | solver |") and "(P − P*)/P*" in lines[0]
    assert len(lines) == 2 + len(results)
    for line, (label, r) in zip(lines[2:], results.items(), strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == label and cells[1] == r.solver and cells[3] == str(r.n_epochs)
        assert float(cells[7]) == pytest.approx(r.gap, rel=1e-2)
    assert "(P − P*)/P*" not in comparison_table(results)


def test_plot_real_traces(tmp_path, results):
    traces = {k: r.trace for k, r in results.items()}
    f_star = reference_value(traces)
    plot_comparison(traces, f_star, tmp_path / "real.png")
    assert (tmp_path / "real.png").stat().st_size > 5000


def test_write_markdown(tmp_path):
    path = write_markdown(tmp_path / "a" / "r.md", "Title",
                          {"": "intro", "Section": "body\n\n"})
    assert path.read_text() == "# Title\n\nintro\n\n## Section\n\nbody\n"
    path = write_markdown(tmp_path / "r2.md", "T", [("A", "x"), ("B", "y")])
    assert "## A\n\nx\n\n## B\n\ny\n" in path.read_text()
