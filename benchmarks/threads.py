"""Multi-core CD (issue 24): τ-nice and partitioned CD at 1 and 2 threads.

For each case: time to a duality gap ≤ 1e-6·P(0) (``tol=1e-6``; not time per
epoch) of the τ-nice method and of partitioned CD (K = 2 blocks) on 1 and 2
threads (each makes the same iterates on 1 and 2 threads), and of the case's
serial default for reference; the per-epoch cost; the ESO-predicted epoch
growth of τ-nice sampling (:func:`cdlearn.solvers.parallel.eso_epoch_growth`),
the measured epochs of partitioned CD at more blocks; and a model of the
speed-up at 8-64 cores (see :func:`model_speedup`). ``uptime``'s load is
recorded with every measurement: on a loaded machine a 2-thread speed-up
cannot be measured.

``python -m benchmarks.threads [--quick] --out benchmarks/results/threads.md``
(``make bench-threads``; ``--quick``: the generated problem at 20,000 × 12,000,
the Nesterov Lasso at 10⁵ columns, a shorter path, partitioned epochs at K ≤ 4).
"""

from __future__ import annotations

import argparse
import os
import sys
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
from cdlearn.solvers import parallel
from cdlearn.solvers.parallel import eso_epoch_growth

from .cases import CASES, NESTEROV_FULL, NESTEROV_QUICK

TOL = 1e-6
#: the library's rule for threaded minibatches (main() lifts it for the τ-nice rows)
SHIPPED_MIN_WORK = parallel.PARALLEL_MIN_WORK
TAUS = (1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096)
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


def _row(name, group, res, seconds, ld, threads=None, **extra):
    return dict(method=name, group=group, threads=threads or res.info["n_threads"],
                seconds=seconds, epochs=res.n_epochs, gap=res.gap, primal=res.primal,
                load=ld, per_epoch=res.seconds / max(res.n_epochs, 1), **extra)


def solve_case(X, y, repeat, *, serial, parallel, taus, partition=None, growth_ks=(),
               methods=("tau", "partition")):
    """Rows for one problem: the serial reference; for every τ, τ-nice on 1 and 2
    threads; with ``partition`` (the solve keywords of the partitioned method),
    K = 2 blocks on 1 and 2 threads, and one run on 1 thread (the same iterates as
    on K threads) for every K of ``growth_ks`` to measure the epochs' growth."""
    rows = []
    s_time, s_res, s_load = timed(repeat, lambda: cdlearn.solve(X, y, **serial, n_threads=1))
    rows.append(_row(f"{s_res.solver} serial", "serial", s_res, s_time, s_load, threads=1))
    if "threads" in methods:  # the serial method's exact parallel parts (same iterates)
        t, res, ld = timed(repeat, lambda: cdlearn.solve(X, y, **serial, n_threads=2))
        rows.append(_row(f"{res.solver} 2 threads, exact parts", "threads", res, t, ld,
                             threads=2))
    for tau in taus if "tau" in methods else ():
        for threads in (1, 2):
            t, res, ld = timed(repeat, partial(cdlearn.solve, X, y, **parallel,
                                               batch_size=tau, sampling="uniform",
                                               n_threads=threads))
            rows.append(_row(f"{res.solver} τ-nice τ={tau}", f"tau{tau}", res, t, ld, tau=tau))
    if partition is not None and "partition" in methods:
        for threads in (1, 2):
            t, res, ld = timed(repeat, partial(cdlearn.solve, X, y, **partition, partition=2,
                                               n_threads=threads))
            rows.append(_row(f"{res.solver} partition K=2", "part", res, t, ld, k=2))
        for k in growth_ks:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                res = cdlearn.solve(X, y, **partition, partition=k, n_threads=1)
                t, ld = time.perf_counter() - t, load()
            rows.append(_row(f"{res.solver} partition K={k} (epochs only)", "growth", res,
                             t, ld, k=k))
    return rows


def path_case(X, y, repeat, lams, *, tau, methods=("tau", "partition")):
    rows = []
    common = dict(loss="squared", penalty="l1", lams=lams, tol=TOL, max_epochs=100_000)
    runs = [("ws-cd serial", "serial", dict(solver="ws-cd"), 1)]
    if "threads" in methods:
        runs.append(("ws-cd 2 threads, exact parts", "threads", dict(solver="ws-cd"), 2))
    if "tau" in methods:
        runs += [(f"primal-cd τ-nice τ={tau}", f"tau{tau}",
                  dict(solver="primal-cd", batch_size=tau, sampling="uniform"), t)
                 for t in (1, 2)]
    if "partition" in methods:
        runs += [("primal-cd partition K=2", "part", dict(solver="primal-cd", partition=2), t)
                 for t in (1, 2)]
    for name, group, kw, threads in runs:
        t, res, ld = timed(repeat, partial(path, X, y, **common, n_threads=threads, **kw))
        epochs = int(np.sum(res.n_epochs))
        rows.append(dict(method=name, group=group, threads=threads, seconds=t, epochs=epochs,
                         gap=float(np.max(res.gaps)), primal=float(res.primals[-1]), load=ld,
                         per_epoch=t / max(epochs, 1), k=2, tau=tau))
    return rows


def eso_rows(X, loss, lam, primal):
    design = as_design(X)
    beta = smoothness(loss)
    return [eso_epoch_growth(design, tau, beta=beta, lam=lam,
                                                      primal=primal) for tau in TAUS]


def model_speedup(rows):
    """Speed-up over the serial reference at P cores, from the measured costs.

    Per method, the per-epoch cost at P threads is Amdahl-fitted to the 1- and
    2-thread measurements, ``c(P) = c1 (s + (1 - s)/P)`` with ``s = 2 c2/c1 - 1``
    (the serial share: τ-nice's draws and two fork-joins per minibatch, the
    partition's copies and merge, the serial share of a serial method whose exact
    parallel parts run on threads; clipped to [0, 1]; for the latter the whole
    solve's time, setup included), and the epochs at P cores are: threaded products, the
    serial method's (the same iterates); τ-nice, the measured epochs at its τ (P ≤ τ; τ fixed, so no further
    ESO growth); partition, K = P blocks: the epochs measured at K = 2, 4, ...
    (one run on one thread: the iterates do not depend on the thread count),
    extrapolated beyond the largest measured K by the power law through the last
    two points (never decreasing). Speed-up = serial reference time /
    (epochs(P) · c(P)); with ``s = 0`` (the second row per method) it is the
    bound of perfect per-epoch scaling, which a loaded machine cannot refute.
    """
    ref = next(r for r in rows if r["group"] == "serial")
    growth = sorted((r["k"], r["epochs"]) for r in rows if r["group"] in ("growth", "part")
                    and r["threads"] == 1)
    out = []
    for group in dict.fromkeys(r["group"] for r in rows):
        pair = _pair(rows, group)
        if pair is None:
            continue
        one, two = pair
        c1, c2 = one["per_epoch"], two["per_epoch"]
        if group == "threads":  # same iterates: Amdahl on the whole solve (setup included)
            c1, c2 = one["seconds"] / one["epochs"], two["seconds"] / two["epochs"]
        fitted = min(1.0, max(0.0, 2.0 * c2 / c1 - 1.0))
        bounds = ((fitted, ""),) if group == "threads" else ((fitted, ""),
                                                             (0.0, " (bound: s = 0)"))
        for s, label in bounds:
            model = {}
            for p in MODEL_CORES:
                if group == "part":
                    epochs = _epochs_at(growth, p)
                elif p > one.get("tau", p):
                    model[p] = None
                    continue
                else:
                    epochs = one["epochs"]
                model[p] = ref["seconds"] / (epochs * c1 * (s + (1.0 - s) / p))
            out.append((two["method"] if group == "threads" else one["method"] + label,
                        s, model))
    return out


def _pair(rows, group):
    """The 1- and 2-thread rows of ``group`` (the threaded serial method pairs with the
    serial reference, which it repeats on 2 threads), or None."""
    pair = [r for r in rows if r["group"] == group]
    if group == "threads":
        pair = [next(r for r in rows if r["group"] == "serial"), *pair]
    if len(pair) != 2 or group in ("serial", "growth"):
        return None
    return sorted(pair, key=lambda r: r["threads"])


def _epochs_at(growth, k):
    """Epochs of the partitioned method at K = k blocks from the measured ``(K, epochs)``."""
    ks = np.array([g[0] for g in growth], dtype=float)
    ep = np.array([g[1] for g in growth], dtype=float)
    if k <= ks[-1] or len(ks) < 2:
        return float(np.interp(k, ks, ep))
    slope = max(0.0, np.log(ep[-1] / ep[-2]) / np.log(ks[-1] / ks[-2]))
    return float(ep[-1] * (k / ks[-1]) ** slope)


def auto_rows(name, X, y, **problem):
    """``solver="auto"``'s choice on P threads (:func:`cdlearn.api.parallel_choice`,
    the model fitted on this benchmark) for P = 2, 8, 64: one table row each."""
    from cdlearn.api import auto_solver, make_problem

    prob = make_problem(X, y, **problem)
    out = []
    lifted, parallel.PARALLEL_MIN_WORK = parallel.PARALLEL_MIN_WORK, SHIPPED_MIN_WORK
    for p in (2, 8, 64):
        solver, reason = auto_solver(prob, n_threads=p)
        picked = reason.split(" → ")[1].split(";")[0] if " → " in reason else solver
        shown = reason.split("(", 1)[1].split(") → ")[0] if " → " in reason else reason
        out.append(f"| {name} | {p} | {picked} | {shown} |")
    parallel.PARALLEL_MIN_WORK = lifted
    return out


def fmt_rows(title, rows, lines):
    lines += [f"### {title}", "",
              "| method | threads | time to gap 1e-6 (s) | epochs | s/epoch (ms) | gap | P | "
              "load (1/5/15 min) |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['threads']} | {r['seconds']:.3f} | {r['epochs']} | "
                     f"{1e3 * r['per_epoch']:.2f} | {r['gap']:.2e} | {r['primal']:.10g} | "
                     f"{r['load']} |")
    ref = next(r for r in rows if r["group"] == "serial")
    lines.append("")
    for group in dict.fromkeys(r["group"] for r in rows):
        pair = _pair(rows, group)
        if pair is None:
            continue
        one, two = pair
        name = two["method"] if group == "threads" else one["method"]
        lines.append(f"- {name}: **{one['seconds'] / two['seconds']:.2f}×** at 2 "
                     f"threads over 1 (same iterates); against the serial reference "
                     f"{ref['seconds'] / two['seconds']:.2f}× (1 thread: "
                     f"{ref['seconds'] / one['seconds']:.2f}×).")
    lines.append("")


def _threading_layer():
    import numba
    from numba import njit, prange

    @njit(parallel=True)
    def touch(a):
        for i in prange(a.shape[0]):
            a[i] += 1.0
        return a

    touch(np.zeros(2))  # the layer is chosen at the first parallel region
    return numba.threading_layer()


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
    ap.add_argument("--methods", default="threads,tau,partition",
                    help="comma-separated subset of threads (the serial method on 2 "
                         "threads: its exact parallel parts), tau (τ-nice), partition")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    repeat = args.repeat or 3
    # τ-nice minibatches on threads whatever their size (solve keeps the small ones
    # serial): this benchmark measures the threaded kernel
    parallel.PARALLEL_MIN_WORK = 0
    # partitioned CD's epochs at K blocks (one run each, on one thread), for the model
    growth_ks = (4,) if args.quick else (4, 8)
    cases = set(args.cases.split(","))
    methods = tuple(args.methods.split(","))
    t_start = time.perf_counter()
    import numba

    env = {k: os.environ.get(k, "unset") for k in (
        "NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS")}
    lines = ["# Multi-core coordinate descent on 1 and 2 threads", "",
             f"`python -m benchmarks.threads {' '.join(sys.argv[1:] if argv is None else argv)}`"
             f"; medians of "
             f"{repeat} run(s) after a warm-up; {os.cpu_count()} cores "
             f"(affinity {len(os.sched_getaffinity(0))}); numba {numba.__version__}, "
             f"threading layer `{_threading_layer()}`; "
             + ", ".join(f"{k}={v}" for k, v in env.items()) + f"; started "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load = `uptime` at each "
             "measurement (on a machine whose load exceeds its cores the 2-thread times "
             "are not meaningful: a parallel region waits for its slowest thread).", "",
             "Methods: **τ-nice** (`batch_size=τ`, `kernels/parallel_cd.py`): the same "
             "iterates on any thread count, two fork-joins per minibatch; **partition K** "
             "(`partition=K`, `kernels/partition_cd.py`): K blocks of coordinates, one serial "
             "pass each per epoch on a private copy of the shared vector, the changes added "
             "with the blocks' overlap as CoCoA+'s σ′: one parallel region per epoch, the "
             "same iterates on any thread count for a given K (so 1 and 2 threads make the "
             "same epochs), more epochs than serial. The serial reference is the case's "
             "serial default method (shuffled dual CD with group steps; ws-cd for the "
             "Lasso).", ""]
    model_lines = []
    auto_lines = []
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
            "fitted per case and method; columns: predicted speed-up over the serial "
            "reference (– : P > τ).", "",
            "| case | s | " + " | ".join(f"{p} cores" for p in MODEL_CORES) + " |",
            "|---|---:|" + "---:|" * len(MODEL_CORES), *model_lines, "",
            "## What `solver=\"auto\"` runs on P threads", "",
            "`cdlearn.api.parallel_choice`: each candidate's predicted time over the serial "
            "face-off choice (ESO growth, per-minibatch fork-joins and the epoch excess, "
            "per-epoch cost and partition Amdahl share fitted on this benchmark; `≥` a "
            "lower bound that cannot win); l1 problems keep ws-cd (its exact parts on "
            "threads).", "",
            "| case | P | auto runs | predicted time over serial (per candidate) |",
            "|---|---:|---|---|", *auto_lines, "",
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

    def record(title, rows):
        fmt_rows(title, rows, lines)
        for method, s, model in model_speedup(rows):
            model_lines.append(f"| {title}: {method} | {s:.2f} | " + " | ".join(
                "–" if model[p] is None else f"{model[p]:.2f}×" for p in MODEL_CORES) + " |")
        print(write().split("## ESO")[0].rsplit("### ", 1)[-1], flush=True)

    if "news20" in cases:  # news20 (binarized), logistic, λ = 1/n: dual CD
        X, y, obj, _ = CASES["logreg-l2-news20-1n"].load()
        lam = obj.lam
        add_eso("news20 logistic λ=1/n", "samples (dual)", eso_rows(X, "logistic", lam, False))
        add_eso("news20 logistic λ=1/n", "features (primal)",
                eso_rows(X, "logistic", lam, True))
        write()
        auto_lines.extend(auto_rows("news20 logistic λ=1/n", X, y, loss="logistic",
                                    penalty="l2", lam=lam))
        kw = dict(loss="logistic", lam=lam, solver="dual-cd", tol=TOL)
        rows = solve_case(X, y, repeat, serial=kw, parallel=kw, taus=(64,), partition=kw,
                          growth_ks=growth_ks, methods=methods)
        record(f"news20 binarized, logistic l2, λ=1/n, dual CD ({X.shape[0]}×{X.shape[1]})",
               rows)

    if "generated" in cases:  # generated 60,000 × 36,000 sparse logistic
        n, d = (20_000, 12_000) if args.quick else (60_000, 36_000)
        X, y = generated_logistic(n, d)
        lam = 1.0 / n
        auto_lines.extend(auto_rows(f"generated {n}×{d} λ=1/n", X, y, loss="logistic",
                                    penalty="l2", lam=lam))
        for solver, primal in (("dual-cd", False), ("primal-cd", True)):
            add_eso(f"generated {n}×{d} λ=1/n", "features (primal)" if primal else
                    "samples (dual)", eso_rows(X, "logistic", lam, primal))
            write()
            kw = dict(loss="logistic", lam=lam, solver=solver, tol=TOL)
            # partitioned CD: dual only (its primal version is for the squared loss)
            rows = solve_case(X, y, repeat, serial=kw, parallel=kw, taus=(256,),
                              partition=None if primal else kw, growth_ks=growth_ks,
                              methods=methods)
            record(f"generated {n}×{d} logistic l2 (40 nonzeros per row), λ=1/n, {solver}",
                   rows)

    if "path" in cases:  # Lasso path on news20
        X, y, _, _ = CASES["lasso-news20-lmax10"].load()
        add_eso("news20 Lasso (λ → 0)", "features (primal)", eso_rows(X, "squared", 1e-12, True))
        write()
        lmax = lambda_max(X, y, loss="squared", penalty="l1")
        grid = np.geomspace(1.0, 0.1, 4)[1:] if args.quick else np.geomspace(1.0, 0.05, 6)[1:]
        lams = lmax * grid
        rows = path_case(X, y, repeat, lams, tau=256, methods=methods)
        record(f"Lasso path on news20, {len(lams)} λ from λmax/{lmax / lams[0]:.3g} to "
               f"λmax/{lmax / lams[-1]:.3g}", rows)

    if "nesterov" in cases:  # Nesterov's Lasso with a known optimum
        case = NESTEROV_QUICK if args.quick else NESTEROV_FULL
        X, y, obj, p_star = case.load()
        add_eso(f"Nesterov {X.shape[0]}×{X.shape[1]} (λ → 0)", "features (primal)",
                eso_rows(X, "squared", 1e-12, True))
        write()
        primal = dict(loss="squared", penalty="l1", lam=obj.lam, solver="primal-cd", tol=TOL)
        # (b): a larger τ where the rows' nonzeros ω are few against the columns (10⁶
        # columns: growth 1.4 at τ=4096; at 10⁵ columns it is ~5, so QUICK stops at 1024)
        rows = solve_case(X, y, repeat,
                          serial=dict(loss="squared", penalty="l1", lam=obj.lam, solver="ws-cd",
                                      tol=TOL),
                          parallel=primal, taus=(1024,) if args.quick else (1024, 4096),
                          partition=primal, growth_ks=growth_ks, methods=methods)
        record(f"Nesterov Lasso {X.shape[0]}×{X.shape[1]} (P* = {p_star:.10g}), primal CD",
               rows)
    print(write())


if __name__ == "__main__":
    main()
