"""Multi-core CD (issue 24): speed-up of τ-nice dual / primal CD at 1 and 2 threads.

For each case: time to a duality gap ≤ 1e-6·P(0) (``tol=1e-6``; not time per
epoch) of the τ-nice method on 1 and 2 threads (the same iterates: the thread
count does not change them, :mod:`cdlearn.kernels.parallel_cd`), and of the
best serial method for reference (the default serial solver of the case);
the per-epoch cost at 1 and 2 threads; the ESO-predicted epoch growth for τ
up to 64 (:func:`cdlearn.solvers.parallel.eso_epoch_growth`); and a model of
the speed-up at 8-64 cores (see :func:`model_speedup`). ``uptime``'s load is
recorded with every measurement: on a loaded machine a 2-thread speed-up
cannot be measured and the table says so.

``python -m benchmarks.threads [--quick] --out benchmarks/results/threads.md``
(``make bench-threads``; ``--quick`` ≤ 10 minutes: one run per point, the
Nesterov Lasso at 10⁵ columns, a shorter path).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import cdlearn
from cdlearn.data import as_design
from cdlearn.losses import smoothness
from cdlearn.paths import lambda_max, path
from cdlearn.solvers.parallel import eso_epoch_growth

from .cases import CASES, NESTEROV_FULL, NESTEROV_QUICK

TOL = 1e-6
TAUS = (1, 2, 4, 8, 16, 32, 64)
MODEL_CORES = (8, 16, 32, 64)


def load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def generated_logistic(n=60_000, d=36_000, nnz_row=40, seed=0):
    """A sparse binary logistic problem: ``nnz_row`` uniform random features per row,
    unit-norm rows, labels of a planted ``w`` with 10% flipped."""
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, size=n * nnz_row)
    rows = np.repeat(np.arange(n), nnz_row)
    X = sp.csr_matrix((rng.random(n * nnz_row) + 0.1, (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    w = rng.standard_normal(d)
    y = np.sign(X @ w)
    y[y == 0] = 1.0
    flip = rng.random(n) < 0.1
    y[flip] = -y[flip]
    return X.tocsr(), y


def timed(repeat, fn):
    """Median seconds of ``repeat`` calls (after one warm-up), the last result, the load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
        times, res = [], None
        for _ in range(repeat):
            t = time.perf_counter()
            res = fn()
            times.append(time.perf_counter() - t)
    return float(np.median(times)), res, load()


def solve_case(X, y, repeat, *, serial, parallel, tau):
    """Rows for one problem: the serial reference, then τ-nice on 1 and 2 threads."""
    rows = []
    s_time, s_res, s_load = timed(repeat, lambda: cdlearn.solve(X, y, **serial, n_threads=1))
    rows.append(dict(method=f"{s_res.solver} serial (τ=1)", threads=1, seconds=s_time,
                     epochs=s_res.n_epochs, gap=s_res.gap, primal=s_res.primal, load=s_load))
    for threads in (1, 2):
        t, res, ld = timed(repeat, partial(cdlearn.solve, X, y, **parallel, batch_size=tau,
                                           sampling="uniform", n_threads=threads))
        per_epoch = res.seconds / max(res.n_epochs, 1)
        rows.append(dict(method=f"{res.solver} τ={tau}", threads=res.info["n_threads"],
                         seconds=t, epochs=res.n_epochs, gap=res.gap, primal=res.primal,
                         load=ld, per_epoch=per_epoch))
    return rows


def path_case(X, y, repeat, lams, *, tau):
    rows = []
    runs = [("ws-cd serial (τ=1)", dict(solver="ws-cd"), 1)] + [
        (f"primal-cd τ={tau}", dict(solver="primal-cd", batch_size=tau, sampling="uniform"), t)
        for t in (1, 2)]
    for name, kw, threads in runs:
        t, res, ld = timed(repeat, partial(path, X, y, loss="squared", penalty="l1", lams=lams,
                                           tol=TOL, max_epochs=100_000, n_threads=threads,
                                           **kw))
        rows.append(dict(method=name, threads=threads, seconds=t,
                         epochs=int(np.sum(res.n_epochs)), gap=float(np.max(res.gaps)),
                         primal=float(res.primals[-1]), load=ld))
    return rows


def eso_rows(X, loss, lam, primal):
    design = as_design(X)
    beta = smoothness(loss)
    return [eso_epoch_growth(design, tau, beta=beta, lam=lam,
                                                      primal=primal) for tau in TAUS]


def model_speedup(rows, tau):
    """Speed-up over the serial reference at P cores, from the measured costs.

    Per-epoch cost of the τ-nice kernel at P threads, Amdahl-fitted to the
    1- and 2-thread measurements: ``c(P) = c1 (s + (1 - s)/P)`` with
    ``s = 2 c2/c1 - 1`` (the serial share: the draw and the two fork-joins per
    minibatch; clipped to [0, 1]); the epochs are the measured τ-nice ones at
    this τ (P ≤ τ; a larger τ would add the ESO growth to the epochs).
    Speed-up = serial reference time / (epochs(τ)·c(P)).
    """
    ref, one, two = rows
    c1, c2 = one["per_epoch"], two["per_epoch"]
    s = min(1.0, max(0.0, 2.0 * c2 / c1 - 1.0))
    out = {}
    for p in MODEL_CORES:
        if p > tau:
            out[p] = None
            continue
        out[p] = ref["seconds"] / (one["epochs"] * c1 * (s + (1.0 - s) / p))
    return s, out


def fmt_rows(title, rows, lines):
    lines += [f"### {title}", "",
              "| method | threads | time to gap 1e-6 (s) | epochs | gap | P | load (1/5/15 min) |",
              "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['threads']} | {r['seconds']:.3f} | {r['epochs']} | "
                     f"{r['gap']:.2e} | {r['primal']:.10g} | {r['load']} |")
    if len(rows) == 3 and "per_epoch" in rows[1]:
        one, two = rows[1], rows[2]
        lines += ["", f"Speed-up at 2 threads (τ-nice, same iterates): "
                  f"**{one['seconds'] / two['seconds']:.2f}×** in time to the gap; per epoch "
                  f"{1e3 * one['per_epoch']:.2f} → {1e3 * two['per_epoch']:.2f} ms. Against "
                  f"the serial reference: {rows[0]['seconds'] / two['seconds']:.2f}×."]
    elif len(rows) == 3:
        lines += ["", f"Speed-up at 2 threads (τ-nice path): "
                  f"**{rows[1]['seconds'] / rows[2]['seconds']:.2f}×**; against the serial "
                  f"reference: {rows[0]['seconds'] / rows[2]['seconds']:.2f}×."]
    lines.append("")


def plot(eso, path):
    """ESO-predicted iteration speed-up τ / growth(τ) per case (the ideal at τ cores)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    taus = np.array(TAUS)
    ax.plot(taus, taus, "k:", label="linear")
    for name, growth in eso:
        ax.plot(taus, taus / np.array(growth), "o-", ms=3, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("τ (coordinates per minibatch = cores)")
    ax.set_ylabel("τ / ESO epoch growth")
    ax.set_title("ESO-predicted iteration speed-up of τ-nice CD")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--cases", default="news20,generated,path,nesterov",
                    help="comma-separated subset of news20, generated, path, nesterov")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)
    cases = set(args.cases.split(","))
    t_start = time.perf_counter()
    lines = ["# Multi-core coordinate descent: τ-nice CD on 1 and 2 threads", "",
             f"`python -m benchmarks.threads{' --quick' if args.quick else ''}`; medians of "
             f"{repeat} run(s) after a warm-up; {os.cpu_count()} cores "
             f"(affinity {len(os.sched_getaffinity(0))}); load = `uptime` at the "
             "measurement. The τ-nice runs on 1 and 2 threads make the same iterates "
             "(same epochs, same bits); the serial reference is the case's fastest serial "
             "method.", ""]
    model_lines = []
    eso_lines = ["| case | coordinates | " + " | ".join(f"τ={t}" for t in TAUS) + " |",
                 "|---|---|" + "---:|" * len(TAUS)]
    eso = []

    def write():
        text = "\n".join([
            *lines, "## ESO-predicted epoch growth", "",
            "Epochs to a given accuracy of uniform τ-nice CD over those of serial uniform "
            "CD, `max_s(1 + β v_s(τ)/(λn)) / max_s(1 + β v_s(1)/(λn))` with the τ-nice ESO "
            "v(τ) (`cdlearn.solvers.parallel.eso_epoch_growth`). τ parallel steps cost one "
            "step's time, so the ideal iteration speed-up on τ cores is τ / growth "
            "(threads.png).", "", *eso_lines, "",
            "## Model of the speed-up at 8-64 cores", "",
            " ".join(model_speedup.__doc__.split("\n\n")[1].split()) + " Serial share s "
            "fitted per case; columns: predicted speed-up over the serial reference.", "",
            "| case | s | " + " | ".join(f"{p} cores" for p in MODEL_CORES) + " |",
            "|---|---:|" + "---:|" * len(MODEL_CORES), *model_lines, "",
            f"Benchmark time {time.perf_counter() - t_start:.0f} s.", ""])
        if args.out:
            Path(args.out).write_text(text)
            if eso:
                try:
                    plot(eso, Path(args.out).with_suffix(".png"))
                except ImportError:  # pragma: no cover - matplotlib is a bench extra
                    pass
        return text

    def add_eso(name, coords, growth):
        eso.append((name, growth))
        eso_lines.append(f"| {name} | {coords} | " + " | ".join(f"{v:.3g}" for v in growth)
                         + " |")

    def record(title, rows, tau):
        fmt_rows(title, rows, lines)
        if "per_epoch" in rows[1]:
            s, model = model_speedup(rows, tau)
            model_lines.append(f"| {title} | {s:.2f} | " + " | ".join(
                "–" if model[p] is None else f"{model[p]:.1f}×" for p in MODEL_CORES) + " |")
        print(write().split("## ESO")[0].rsplit("### ", 1)[-1], flush=True)

    if "news20" in cases:  # news20 (binarized), logistic, λ = 1/n: dual CD
        X, y, obj, _ = CASES["logreg-l2-news20-1n"].load()
        lam = obj.lam
        add_eso("news20 logistic λ=1/n", "samples (dual)", eso_rows(X, "logistic", lam, False))
        add_eso("news20 logistic λ=1/n", "features (primal)",
                eso_rows(X, "logistic", lam, True))
        write()
        tau = 64
        kw = dict(loss="logistic", lam=lam, solver="dual-cd", tol=TOL)
        rows = solve_case(X, y, repeat, serial=kw, parallel=kw, tau=tau)
        record(f"news20 binarized, logistic l2, λ=1/n, dual CD ({X.shape[0]}×{X.shape[1]})",
               rows, tau)

    if "generated" in cases:  # generated 60,000 × 36,000 sparse logistic
        n, d = (20_000, 12_000) if args.quick else (60_000, 36_000)
        X, y = generated_logistic(n, d)
        lam = 1.0 / n
        tau = 256
        for solver, primal in (("dual-cd", False), ("primal-cd", True)):
            add_eso(f"generated {n}×{d} λ=1/n", "features (primal)" if primal else
                    "samples (dual)", eso_rows(X, "logistic", lam, primal))
            write()
            kw = dict(loss="logistic", lam=lam, solver=solver, tol=TOL)
            rows = solve_case(X, y, repeat, serial=kw, parallel=kw, tau=tau)
            record(f"generated {n}×{d} logistic l2 (40 nonzeros per row), λ=1/n, {solver}",
                   rows, tau)

    if "path" in cases:  # Lasso path on news20
        X, y, _, _ = CASES["lasso-news20-lmax10"].load()
        add_eso("news20 Lasso (λ → 0)", "features (primal)", eso_rows(X, "squared", 1e-12, True))
        write()
        lmax = lambda_max(X, y, loss="squared", penalty="l1")
        grid = np.geomspace(1.0, 0.1, 4)[1:] if args.quick else np.geomspace(1.0, 0.05, 6)[1:]
        lams = lmax * grid
        tau = 256
        rows = path_case(X, y, repeat, lams, tau=tau)
        record(f"Lasso path on news20, {len(lams)} λ from λmax/{lmax / lams[0]:.3g} to "
               f"λmax/{lmax / lams[-1]:.3g}", rows, tau)

    if "nesterov" in cases:  # Nesterov's Lasso with a known optimum
        case = NESTEROV_QUICK if args.quick else NESTEROV_FULL
        X, y, obj, p_star = case.load()
        add_eso(f"Nesterov {X.shape[0]}×{X.shape[1]} (λ → 0)", "features (primal)",
                eso_rows(X, "squared", 1e-12, True))
        write()
        tau = 1024
        rows = solve_case(X, y, repeat,
                          serial=dict(loss="squared", penalty="l1", lam=obj.lam, solver="ws-cd",
                                      tol=TOL),
                          parallel=dict(loss="squared", penalty="l1", lam=obj.lam,
                                        solver="primal-cd", tol=TOL),
                          tau=tau)
        record(f"Nesterov Lasso {X.shape[0]}×{X.shape[1]} (P* = {p_star:.10g}), primal CD",
               rows, tau)
    print(write())


if __name__ == "__main__":
    main()
