"""Rounds, bytes and wall time of cdlearn.distributed vs the number of shards K, and dask-ml.

``python -m benchmarks.distributed`` (``make bench-distributed``) on a real
``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)``: K shards
placed round-robin on the 2 worker processes (K = 8 is 4 shards per worker).
Problems: logistic loss with l2 and with elastic net (l1_ratio 0.5), λ = 1/n,
and the Lasso (squared loss, λ = λ_max/10), on reuters, news20 (binarized) and
a9a, each with the method ``method="auto"`` picks (reported), to a relative
gap ``--tol``. Each case runs once after one warm-up solve (imports and numba
caches loaded in the workers). "seconds" is the driver's wall time of
``solve``; "comm s" its time beyond the slowest shard's compute per round,
summed. Then dask-ml / dask-glm on the same cluster, on the same objectives
(``C = 1/(nλ)``, no intercept), their answer certified by cdlearn's duality gap
at the returned coefficients: scipy.sparse chunks, then pydata ``sparse``
chunks (errors recorded), then dense numpy chunks where X fits in
:data:`DENSE_MAX_BYTES`. Writes a markdown table and a plot.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

DATASETS = ("reuters-money-fx", "news20", "a9a")
PROBLEMS = (  # name, loss, penalty
    ("logistic l2", "logistic", "l2"),
    ("logistic enet", "logistic", "elastic_net"),
    ("lasso", "squared", "l1"),
)
MAX_ROUNDS = 1000
#: dask-ml on dense chunks only up to this size of X (reuters: 0.52 GB; news20: 7.9 GB)
DENSE_MAX_BYTES = 1 << 30


def _lam(X, y, loss):
    n = X.shape[0]
    if loss == "squared":
        return float(np.max(np.abs(X.T @ y))) / n / 10
    return 1.0 / n


def _gap(X, y, w, loss, penalty, lam):
    """cdlearn's certificate (relative gap) at the coefficients ``w``, on one machine."""
    from cdlearn.api import make_problem
    from cdlearn.objectives import certificate_from_margins
    from cdlearn.solvers.base import initial_primal

    p = make_problem(X, y, loss=loss, penalty=penalty, lam=lam, l1_ratio=0.5)
    primal, _, gap = certificate_from_margins(p.design, p.loss_code, p.design.matvec(w), p.y,
                                              p.sample_weight, w, p.l1, p.l2)
    return primal, gap / initial_primal(p)


def run_cdlearn(client, data, shards, tol, max_rounds, problems, log):
    import cdlearn.distributed as cdd

    rows = []
    for name in data:
        X, y = data[name]
        n = X.shape[0]
        for label, loss, penalty in problems:
            lam = _lam(X, y, loss)
            for K in shards:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = cdd.solve(X, y, loss=loss, penalty=penalty, lam=lam, l1_ratio=0.5,
                                    client=client, n_shards=K, tol=tol, max_rounds=max_rounds)
                seconds = time.perf_counter() - t0
                t = res.trace
                rounds = int(t["round"][-1])
                rows.append(dict(data=name, shape=f"{n}x{X.shape[1]}", problem=label,
                                 method=res.solver, K=K, rounds=rounds,
                                 converged=res.converged, gap=res.gap / t["primal"][0],
                                 up=t["bytes_up"][-1] / 1e6, down=t["bytes_down"][-1] / 1e6,
                                 seconds=seconds, comm=float(t["comm_seconds"][-1]),
                                 load=os.getloadavg()[0]))
                _log(log, rows[-1])
    return rows


def _log(path, row):
    """One JSON line per case, so that runs of subsets (``--datasets``) add up to a report."""
    row = {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
    print(row, flush=True)
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")


def run_dask_ml(client, data, workers, budget, problems, log):
    """dask-ml's LogisticRegression / LinearRegression on chunks of rows (one per worker)."""
    import dask.array as da
    import sparse
    from dask_ml.linear_model import LinearRegression, LogisticRegression

    rows = []
    for name in data:
        X, y = data[name]
        n = X.shape[0]
        chunk = -(-n // workers)
        for label, loss, penalty in problems:
            lam = _lam(X, y, loss)
            if loss == "logistic":
                target = (y > 0).astype(np.float64)
                pen = {"l2": "l2", "elastic_net": "elastic_net"}[penalty]
                solvers = ("lbfgs", "admm") if penalty == "l2" else ("admm", "proximal_grad")
            else:
                target, pen, solvers = y, "l1", ("admm", "proximal_grad")
            for kind in ("scipy.sparse", "pydata sparse", "dense"):
                if kind == "scipy.sparse":
                    dX = da.from_array(X.tocsr(), chunks=(chunk, X.shape[1]), asarray=False)
                elif kind == "pydata sparse":
                    dX = da.from_array(sparse.COO.from_scipy_sparse(X),
                                       chunks=(chunk, X.shape[1]), asarray=False)
                elif 8 * n * X.shape[1] <= DENSE_MAX_BYTES:
                    dX = da.from_array(X.toarray(), chunks=(chunk, X.shape[1]))
                else:
                    continue
                dy = da.from_array(target, chunks=chunk)
                # the sparse chunks fail at once (the same error for every solver)
                for solver in solvers if kind == "dense" else solvers[:1]:
                    cls = LogisticRegression if loss == "logistic" else LinearRegression
                    # dask-glm minimises Σ φ_i + (1/C) g(w): C = 1/(nλ) is cdlearn's (1/n)Σφ + λg
                    est = cls(penalty=pen, C=1.0 / (n * lam), fit_intercept=False,
                              solver=solver, max_iter=budget, tol=1e-10,
                              solver_kwargs={"weight": 0.5} if pen == "elastic_net" else None)
                    t0 = time.perf_counter()
                    try:
                        est.fit(dX, dy)
                    except Exception as exc:  # noqa: BLE001 -- recorded in the table
                        err = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                        rows.append(dict(data=name, problem=label, chunks=kind, solver=solver,
                                         seconds=time.perf_counter() - t0, gap=None, error=err,
                                         tool="dask-ml"))
                        _log(log, rows[-1])
                        traceback.print_exc(limit=2)
                        continue
                    seconds = time.perf_counter() - t0
                    w = np.asarray(est.coef_, dtype=np.float64).ravel()
                    _, gap = _gap(X, y, w, loss, penalty, lam)
                    rows.append(dict(data=name, problem=label, chunks=kind, solver=solver,
                                     seconds=seconds, gap=gap, error="", tool="dask-ml"))
                    _log(log, rows[-1])
    return rows


def plot(rows, path, max_rounds):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for key in sorted({(r["data"], r["problem"], r["method"]) for r in rows}):
        rs = sorted((r for r in rows if (r["data"], r["problem"], r["method"]) == key),
                    key=lambda r: r["K"])
        Ks = [r["K"] for r in rs]
        lab = f"{key[0].split('-')[0]} {key[1]} ({key[2]})"
        style = "-o" if all(r["converged"] for r in rs) else "--x"
        axes[0].plot(Ks, [r["rounds"] for r in rs], style, label=lab)
        axes[1].plot(Ks, [(r["up"] + r["down"]) for r in rs], style, label=lab)
        axes[2].plot(Ks, [r["seconds"] for r in rs], style, label=lab)
    for ax, title in zip(axes, ("rounds to the gap", "MB sent (up + down)", "wall seconds"),
                         strict=True):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("shards K")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("cdlearn.distributed on a LocalCluster (2 worker processes); dashed: "
                 "stopped by max_rounds before the gap")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write(rows, ml_rows, args, versions):
    lines = [
        f"# cdlearn.distributed: rounds, bytes and time to a relative gap {args.tol:g} vs "
        "shards K",
        "",
        "`make bench-distributed` (benchmarks/distributed.py) on a `LocalCluster` of 2 worker "
        "processes (1 thread each; K shards round-robin on them, so K = 8 is 4 shards per "
        "worker) on a shared 2-core machine loaded by other jobs (load average in the "
        "last column: 2 cores!): the rounds and bytes do not depend on the load, the "
        "seconds do. Logistic loss with "
        "λ = 1/n (elastic net: l1_ratio 0.5); Lasso: squared loss, λ = λ_max/10; no "
        "intercept; `method=\"auto\"`. One run per case after a warm-up. Rounds = "
        "communication rounds (Newton: two per iteration); gap relative to P(0); MB up = "
        "shards → driver, MB down = driver → shards; comm s = wall time beyond the slowest "
        "shard's compute, summed over the rounds. Rows not converged stopped at "
        "`--max-rounds` (runs of subsets, `--datasets`/`--problems`, each with its own cap "
        "so that they fit in the time the loaded machine left). Plot: `distributed.png`.",
        "",
        "| data | n x d | problem | method | K | rounds | converged | gap/P(0) | MB up "
        "| MB down | seconds | comm s | s/round | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['data']} | {r['shape']} | {r['problem']} | {r['method']} | "
                     f"{r['K']} | {r['rounds']} | {r['converged']} | {r['gap']:.2e} | "
                     f"{r['up']:.2f} | {r['down']:.2f} | {r['seconds']:.2f} | "
                     f"{r['comm']:.2f} | {r['seconds'] / max(r['rounds'], 1):.3f} | "
                     f"{r.get('load', float('nan')):.0f} |")
    if ml_rows:
        lines += [
            "",
            f"## {versions} on the same cluster",
            "",
            "Same objectives (dask-glm minimises Σφ + g(w)/C: C = 1/(nλ)), no intercept, "
            f"row chunks one per worker, `max_iter={args.dask_ml_iter}`, `tol=1e-10`; "
            "gap = cdlearn's certificate at the returned coefficients (relative to P(0)). "
            "scipy.sparse chunks, then pydata `sparse` (COO) chunks, then dense numpy chunks "
            "where X fits in 1 GB (a9a; reuters and news20 do not).",
            "",
            "| data | problem | chunks | solver | seconds | gap/P(0) | error |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in ml_rows:
            gap = "—" if r["gap"] is None else f"{r['gap']:.2e}"
            lines.append(f"| {r['data']} | {r['problem']} | {r['chunks']} | {r['solver']} | "
                         f"{r['seconds']:.2f} | {gap} | {r['error']} |")
    # the plan for RCDC's 10⁹-variable problem, written from these numbers, lives in the guide
    guide = Path(__file__).resolve().parents[1] / "docs" / "guide" / "dask.md"
    if guide.exists():
        plan = guide.read_text().split("## A plan for", 1)
        if len(plan) == 2:
            lines += ["", "## A plan for" + plan[1].split("\n## ", 1)[0].rstrip()]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="benchmarks/results/distributed.md")
    parser.add_argument("--plot", default="benchmarks/results/distributed.png")
    parser.add_argument("--log", default="benchmarks/results/distributed.jsonl",
                        help="one JSON line per case is appended here; the report reads it")
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--shards", default="1,2,4,8")
    parser.add_argument("--max-rounds", type=int, default=MAX_ROUNDS)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--problems", default=",".join(p[0] for p in PROBLEMS))
    parser.add_argument("--no-cdlearn", action="store_true")
    parser.add_argument("--no-dask-ml", action="store_true")
    parser.add_argument("--dask-ml-iter", type=int, default=100)
    parser.add_argument("--report-only", action="store_true",
                        help="write the table and the plot from --log, run nothing")
    args = parser.parse_args(argv)
    if not args.report_only:
        _run(args)
    rows = [json.loads(line) for line in Path(args.log).read_text().splitlines() if line]
    cd_rows = [r for r in rows if "tool" not in r]
    ml_rows = [r for r in rows if r.get("tool") == "dask-ml"]
    versions = [r["version"] for r in rows if r.get("tool") == "dask-ml-version"]
    write(cd_rows, ml_rows, args, versions[-1] if versions else "")
    plot(cd_rows, args.plot, args.max_rounds)
    return np.array([r["rounds"] for r in cd_rows])


def _run(args):
    from distributed import Client, LocalCluster

    import cdlearn.distributed as cdd
    from cdlearn.datasets.libsvm import load_binary

    shards = [int(k) for k in args.shards.split(",")]
    problems = [p for p in PROBLEMS if p[0] in args.problems.split(",")]
    data = {name: load_binary(name, download=False) for name in args.datasets.split(",")}
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        X, y = next(iter(data.values()))
        for method in ("cocoa+", "newton", "proxcocoa+"):  # warm-up: imports, numba caches
            cdd.solve(X[:200, :50], y[:200], loss="squared", penalty="elastic_net", lam=1e-2,
                      client=client, n_shards=2, method=method, tol=1e-3)
        if not args.no_cdlearn:
            run_cdlearn(client, data, shards, args.tol, args.max_rounds, problems, args.log)
        if not args.no_dask_ml:
            import dask_glm
            import dask_ml

            _log(args.log, dict(tool="dask-ml-version", version=f"dask-ml {dask_ml.__version__}"
                                f" / dask-glm {dask_glm.__version__}"))
            run_dask_ml(client, data, 2, args.dask_ml_iter, problems, args.log)


if __name__ == "__main__":
    main()
