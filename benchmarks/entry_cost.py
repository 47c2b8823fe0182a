"""Cost model of primal vs dual CD: the constants that turn eq. (15) into seconds for ``auto``.

The face-off total complexities ``T_P``, ``T_D`` (eq. 15) count matrix entries
visited. An entry does not cost the same in both methods (a primal step on a
non-quadratic loss evaluates ``φ'`` and ``φ''`` at every entry of its column, a
dual step does one scalar solve per row; the paper, §4.2, quotes about 50 for
the logistic loss), and every coordinate step has a fixed cost besides (draw,
scalar step, cache misses), which dominates on short rows or columns. This
script measures ``primal-cd`` and ``dual-cd`` with their default steps (primal:
proximal Newton; dual: exact maximisation), per loss, on real datasets of
different shapes and fits ``seconds = c·entries + o·steps`` per method and loss:
the constants kept in :data:`cdlearn.faceoff.STEP_COSTS`.

Usage::

    python -m benchmarks.entry_cost              # writes benchmarks/results/entry_cost.md
    python -m benchmarks.entry_cost --repeats 5

Method: every run does ``EPOCHS`` epochs from w = 0 (α = 0) at λ = 1/n, uniform
sampling, one gap check at the end (``check_every`` larger than the run), so
the time is kernel time plus one certificate; seconds / entries touched is the
cost per entry. Median over ``--repeats`` runs after a warm-up call (numba
compile time excluded). CPU time (``time.process_time``), not wall time: the
machines are shared and only the ratio matters.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")

DATASETS = ("reuters-money-fx", "a9a", "w8a", "news20", "leu")
LOSSES = ("logistic", "squared_hinge", "smooth_hinge", "squared")
METHODS = ("primal", "dual")
EPOCHS = 4
RESULTS = Path(__file__).resolve().parent / "results" / "entry_cost.md"


def _run_cost(X, y, loss, solver, repeats):
    """``(seconds, entries, steps)`` of one timed run (median seconds over ``repeats``)."""
    import cdlearn

    nnz = X.nnz if hasattr(X, "nnz") else np.count_nonzero(X)
    lam = 1.0 / X.shape[0]
    kw = dict(loss=loss, penalty="l2", lam=lam, solver=solver, tol=1e-300,
              max_epochs=EPOCHS, check_every=EPOCHS + 1, seed=0)
    coords = X.shape[1] if solver == "primal-cd" else X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        design = cdlearn.as_design(X)
        cdlearn.solve(design, y, **{**kw, "max_epochs": 1})  # compile / warm caches
        secs = []
        for _ in range(repeats):
            t0 = time.process_time()
            res = cdlearn.solve(design, y, **kw)
            secs.append(time.process_time() - t0)
    return float(np.median(secs)), res.passes * nnz, float(res.n_epochs * coords)


def measure(datasets=DATASETS, losses=LOSSES, repeats=3):
    """``{(method, loss): [(dataset, seconds, entries, steps)]}``."""
    from cdlearn.datasets.libsvm import load_binary

    table = {}
    for name in datasets:
        try:
            X, y = load_binary(name, download=False)
        except (FileNotFoundError, OSError) as exc:
            print(f"skip {name}: {exc}")
            continue
        X = X.tocsr()
        for loss in losses:
            for method in METHODS:
                sec, entries, steps = _run_cost(X, y, loss, f"{method}-cd", repeats)
                table.setdefault((method, loss), []).append((name, sec, entries, steps))
                print(f"{name:18s} {loss:14s} {method:6s} {1e9 * sec / entries:7.2f} ns/entry "
                      f"{1e9 * sec / steps:8.1f} ns/step", flush=True)
    return table


def fit_costs(table):
    """Per (method, loss): non-negative ``(ns per entry, ns per step)`` fitting
    ``seconds = c·entries + o·steps`` over the datasets, in relative error."""
    from scipy.optimize import nnls

    costs = {}
    for key, rows in table.items():
        sec = np.array([r[1] for r in rows])
        A = np.array([[r[2], r[3]] for r in rows]) / sec[:, None]  # relative residuals
        (c, o), _ = nnls(A, np.ones(len(rows)))
        costs[key] = (1e9 * c, 1e9 * o)
    return costs


def write_markdown(table, costs, path=RESULTS) -> str:
    lines = [
        "# Cost model of primal vs dual CD (the constants of `solver=\"auto\"`)",
        "",
        f"Machine: {platform.processor() or platform.machine()}, nproc = {os.cpu_count()}, "
        f"Python {platform.python_version()}, date {datetime.datetime.now():%Y-%m-%dT%H:%M}, "
        f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} (shared machine).",
        "",
        "Command: `python -m benchmarks.entry_cost`. Default steps (primal: proximal "
        f"Newton; dual: exact), uniform sampling, λ = 1/n, {EPOCHS} epochs from 0, "
        "median CPU seconds of the repeats. Model: seconds = c·(entries visited) + "
        "o·(coordinate steps), fitted per method and loss by non-negative least squares "
        "in relative error over the datasets.",
        "",
        "| loss | dataset | primal ns/entry | dual ns/entry | primal model error | "
        "dual model error |",
        "|---|---|---|---|---|---|",
    ]
    for loss in LOSSES:
        p_rows, d_rows = table.get(("primal", loss), []), table.get(("dual", loss), [])
        for pr, dr in zip(p_rows, d_rows, strict=True):
            errs = []
            for method, r in (("primal", pr), ("dual", dr)):
                c, o = costs[(method, loss)]
                errs.append((1e-9 * (c * r[2] + o * r[3]) - r[1]) / r[1])
            lines.append(f"| {loss} | {pr[0]} | {1e9 * pr[1] / pr[2]:.2f} | "
                         f"{1e9 * dr[1] / dr[2]:.2f} | {errs[0]:+.0%} | {errs[1]:+.0%} |")
    lines += ["", "Fitted constants (`cdlearn.faceoff.STEP_COSTS`, ns per entry, ns per step):",
              ""]
    for (method, loss), (c, o) in sorted(costs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lines.append(f"- `(\"{method}\", \"{loss}\")`: ({c:.3g}, {o:.3g})")
    text = "\n".join(lines) + "\n"
    Path(path).write_text(text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    args = ap.parse_args(argv)
    table = measure(args.datasets, repeats=args.repeats)
    print(write_markdown(table, fit_costs(table)))


if __name__ == "__main__":
    main()
