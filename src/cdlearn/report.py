"""Plots, tables and markdown notes shared by the command line, the demo and the experiments.

Figures are drawn on matplotlib's Agg canvas directly (``matplotlib.figure.Figure``
+ ``FigureCanvasAgg``): files only, no display needed, and no change to pyplot's
global backend or figure list (so importing this module in a notebook is harmless).

* :func:`plot_suboptimality` -- log-scale relative suboptimality (or duality gap)
  of several traces against passes or seconds, on one axis;
* :func:`plot_comparison` -- the usual two-panel figure (vs passes, vs seconds) saved to PNG;
* :func:`reference_value` -- ``P*`` estimated from traces (lowest primal seen);
* :func:`traces_to_csv` -- all traces in one long CSV with a ``method`` column;
* :func:`comparison_table` -- markdown table of several :class:`~cdlearn.SolveResult`;
* :func:`write_markdown` -- a small markdown file from a title and sections;
* :func:`styled`, :func:`panels`, :func:`label_axes`, :func:`save_figure` -- the one
  plotting style of the paper reproductions (``cdlearn reproduce``): same fonts,
  panel size, resolution, titles and labelled axes with units in every figure.
"""

from __future__ import annotations

import csv
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .solvers.base import TRACE_COLUMNS, SolveResult, Trace

__all__ = [
    "SUBOPT_LABEL",
    "GAP_LABEL",
    "X_LABELS",
    "anchor",
    "comparison_table",
    "label_axes",
    "legend_below",
    "new_figure",
    "panels",
    "save_figure",
    "styled",
    "plot_comparison",
    "plot_suboptimality",
    "reference_value",
    "relative_suboptimality",
    "traces_to_csv",
    "write_markdown",
]

SUBOPT_LABEL = "relative suboptimality (P − P*)/P*"
GAP_LABEL = "duality gap P(w) − D(α)"
X_LABELS = {"passes": "passes over the data (nnz(X) entries touched)", "seconds": "time (s)"}

#: smallest value shown on a log axis (points at or below it are dropped)
FLOOR = 1e-16


#: the reproductions' style: applied by :func:`styled` around a whole run, so that
#: every text, tick and line a run draws takes it (matplotlib reads rcParams when an
#: artist is created); the global rcParams are restored afterwards
STYLE = {
    "font.size": 9.0, "axes.titlesize": 10.0, "axes.labelsize": 9.0,
    "xtick.labelsize": 8.0, "ytick.labelsize": 8.0, "legend.fontsize": 8.0,
    "figure.titlesize": 11.0, "axes.grid": True, "grid.alpha": 0.3,
    "axes.grid.which": "major", "lines.linewidth": 1.5, "lines.markersize": 3.0,
    "legend.framealpha": 0.85, "axes.titlelocation": "center",
}
PANEL_SIZE = (4.4, 3.4)  #: inches per panel
DPI = 110


def styled(run):
    """Decorator: run ``run(*args)`` with :data:`STYLE` in effect (and only then)."""
    @functools.wraps(run)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return run(*args, **kwargs)

    return wrapper


def panels(nrows: int = 1, ncols: int = 1, *, panel=PANEL_SIZE, extra_height: float = 0.0,
           **kwargs):
    """``(fig, axes)``: a figure of ``nrows x ncols`` panels of :data:`PANEL_SIZE` each
    (``axes`` is always 2-D); ``extra_height`` inches for a legend row or suptitle."""
    fig = new_figure(figsize=(panel[0] * ncols, panel[1] * nrows + extra_height))
    axes = np.array(fig.subplots(nrows, ncols, squeeze=False, **kwargs))
    return fig, axes


def label_axes(ax, *, title: str | None = None, xlabel: str | None = None,
               ylabel: str | None = None, xlog: bool = False, ylog: bool = False,
               legend: bool | str = False):
    """Title, axis labels (with units) and log scales of one panel, in the one style.

    Log axes are plain ``log`` (never ``symlog``): points at or below 0 are not
    drawn, so the caller drops them (and says so in the caption if it matters).
    """
    if xlog:
        ax.set_xscale("log")
    if ylog:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if legend:
        ax.legend(loc="best" if legend is True else legend)
    return ax


def legend_below(fig, ax, ncol: int | None = None) -> None:
    """One legend for the whole figure, below the panels (it never hides a curve),
    in the order the curves of ``ax`` were drawn."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center",
                   ncol=ncol or min(len(labels), 5), frameon=False)


def save_figure(fig, path) -> Path:
    """Save ``fig`` as PNG at the reproductions' resolution; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path


def anchor(heading: str) -> str:
    """The ``#anchor`` of a ``## heading`` as GitHub and MyST slug it (lower case,
    punctuation dropped, spaces to hyphens), for links into a note."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def new_figure(figsize=(6, 4)) -> Figure:
    """A matplotlib Figure on an Agg canvas (constrained layout), outside pyplot."""
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def reference_value(traces: Iterable[Trace] | Mapping[str, Trace], *extra: float) -> float:
    """``P*`` estimate: the lowest primal value seen in ``traces`` (and ``extra`` values)."""
    if isinstance(traces, Mapping):
        traces = traces.values()
    values = [float(np.nanmin(t["primal"])) for t in traces if len(t)]
    values += [float(v) for v in extra if v is not None and np.isfinite(v)]
    if not values:
        raise ValueError("no trace has any row: cannot estimate P*")
    return min(values)


def relative_suboptimality(trace: Trace, f_star: float) -> np.ndarray:
    """``(P − P*)/|P*|`` per trace row (``P − P*`` when ``P* = 0``)."""
    primal = trace["primal"]
    denom = abs(f_star) if f_star != 0 else 1.0
    return (primal - f_star) / denom


def _curve(trace: Trace, f_star: float | None, x: str, xlog: bool = False):
    xs = trace[x]
    ys = trace["gap"] if f_star is None else relative_suboptimality(trace, f_star)
    keep = np.isfinite(ys) & (ys > FLOOR) & np.isfinite(xs)
    if xlog:
        keep &= xs > 0
    return xs[keep], ys[keep]


def plot_suboptimality(traces: Mapping[str, Trace], f_star: float | None = None, x: str = "passes",
                       ax=None, title: str | None = None, legend: bool | str = True,
                       xlog: bool = False):
    """Plot the convergence of several runs on one log-scale axis.

    Parameters
    ----------
    traces : {label: Trace}
        One curve per entry, in order.
    f_star : float or None
        ``P*``: plot the relative suboptimality ``(P − P*)/P*``. ``None`` plots
        the duality gap instead. Points at or below ``1e-16`` cannot be drawn on
        a log axis and are dropped (e.g. the run that defined ``P*``).
    x : "passes" or "seconds"
    ax : matplotlib Axes, optional (a new figure otherwise)
    title : str, optional
    legend : True (``loc="best"``), False, or a matplotlib ``loc`` string
    xlog : bool
        A log x-axis (the starting point at x = 0 is then not drawn).

    Returns
    -------
    The matplotlib Axes.
    """
    if x not in X_LABELS:
        raise ValueError(f"x must be 'passes' or 'seconds', got {x!r}")
    if ax is None:
        ax = new_figure(figsize=(6, 4)).subplots()
    markers = "os^vDP*Xh<>"
    drawn = False
    for k, (label, trace) in enumerate(traces.items()):
        xs, ys = _curve(trace, f_star, x, xlog)
        if xs.size == 0:
            continue
        ax.plot(xs, ys, label=label, marker=markers[k % len(markers)], linewidth=1.6,
                markersize=4, markevery=max(1, xs.size // 12))
        drawn = True
    ax.set_yscale("log")
    ax.set_xlabel(X_LABELS[x])
    ax.set_ylabel(GAP_LABEL if f_star is None else SUBOPT_LABEL)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    if xlog:
        ax.set_xscale("log")
    elif x == "passes":
        ax.set_xlim(left=0)
    if title:
        ax.set_title(title)
    if legend and drawn:
        ax.legend(loc="best" if legend is True else legend, fontsize="small", framealpha=0.85)
    return ax


def plot_comparison(traces: Mapping[str, Trace], f_star: float | None, path, *,
                    title: str | None = None, xs: Sequence[str] = ("passes", "seconds")) -> Path:
    """Save a figure with one :func:`plot_suboptimality` panel per entry of ``xs``.

    The legend sits below the panels so that it never covers a curve. Returns the path.
    """
    path = Path(path)
    fig = new_figure(figsize=(5.2 * len(xs), 4.3))
    axes = fig.subplots(1, len(xs), squeeze=False)
    for ax, x in zip(axes[0], xs, strict=True):
        plot_suboptimality(traces, f_star, x=x, ax=ax, legend=False)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 4),
                   fontsize="small", frameon=False)
    if title:
        fig.suptitle(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


def traces_to_csv(traces: Mapping[str, Trace], path, f_star: float | None = None) -> Path:
    """Write all traces to one CSV: ``method`` + the trace columns (+ ``rel_subopt``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(("method", *TRACE_COLUMNS, *(("rel_subopt",) if f_star is not None else ())))
        for label, trace in traces.items():
            cols = [trace[c] for c in TRACE_COLUMNS]
            sub = relative_suboptimality(trace, f_star) if f_star is not None else None
            for i in range(len(trace)):
                row = [label]
                for c, col in zip(TRACE_COLUMNS, cols, strict=True):
                    v = col[i]
                    row.append(int(v) if c in ("epoch", "nnz_w", "active") and np.isfinite(v)
                               else repr(float(v)))
                if sub is not None:
                    row.append(repr(float(sub[i])))
                writer.writerow(row)
    return path


def _fmt(v, spec=".4g") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return format(v, spec)


def comparison_table(results: Mapping[str, SolveResult], f_star: float | None = None) -> str:
    """Markdown table, one row per run: epochs, passes, seconds, primal, final gap.

    With ``f_star`` a column of final relative suboptimality is added.
    """
    head = ["method", "solver", "converged", "epochs", "passes", "seconds", "primal",
            "final gap"]
    if f_star is not None:
        head.append("(P − P*)/P*")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for label, r in results.items():
        row = [label, r.solver, "yes" if r.converged else "no", str(r.n_epochs),
               _fmt(r.passes, ".1f"), _fmt(r.seconds, ".3g"), _fmt(r.primal, ".10g"),
               _fmt(r.gap, ".3g")]
        if f_star is not None:
            denom = abs(f_star) if f_star != 0 else 1.0
            row.append(_fmt(max((r.primal - f_star) / denom, 0.0), ".2e"))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def write_markdown(path, title: str, sections: Mapping[str, str] | Sequence[tuple[str, str]]
                   ) -> Path:
    """Write ``# title`` then one ``## heading`` + body per section; return the path.

    ``sections`` is a mapping or a sequence of ``(heading, body)``; an empty
    heading writes the body without a heading.
    """
    path = Path(path)
    items = sections.items() if isinstance(sections, Mapping) else sections
    parts = [f"# {title}\n"]
    for heading, body in items:
        if heading:
            parts.append(f"## {heading}\n")
        parts.append(body.rstrip() + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
