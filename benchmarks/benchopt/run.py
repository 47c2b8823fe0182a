"""Run cdlearn against its peers on benchopt's public Lasso benchmark (offline).

``python -m benchmarks.benchopt.run --benchmark DIR`` copies cdlearn's solver
files (``benchmarks/benchopt/lasso``: ``cdlearn``, sampled by iterations,
``cdlearn-tol``, by tolerance, their ``benchmark_utils`` module and the
``leukemia-local`` dataset, which reads ``$CDLEARN_DATA/leu*.bz2`` instead of
downloading) into a copy of benchopt/benchmark_lasso (``DIR``: a checkout;
without it the repository is cloned), runs ``benchopt run`` on the simulated
configurations and leukemia (one thread, the peers installed in this
environment) and writes the table of ``benchmarks/results/benchopt_lasso.md``:
benchopt's own protocol, the time for the objective to come within a relative
1e-6 / 1e-10 of the best objective any solver reached, median over the
repetitions, cdlearn's ratio to the best peer, and how close the
tolerance-sampled runs came (their best relative objective).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PEERS = ("cd", "skglm", "celer", "sklearn")
SIMULATED = [(10_000, 100, 0), (10_000, 100, 0.6), (500, 600, 0), (500, 600, 0.6),
             (100, 10_000, 0), (100, 10_000, 0.6)]
#: the real dataset, read from the local LIBSVM files (lasso/datasets/leukemia_local.py)
LEUKEMIA = "leukemia"
OURS = ("cdlearn[solver=auto]", "cdlearn-tol[solver=auto]")
REGS = (0.1, 0.05)
TARGETS = (1e-6, 1e-10)
#: benchopt 1.10 reads ``_used_seed``, set by ``BaseDataset.__init__``, which the
#: benchmark's datasets (written for 1.7) do not call: set as a class attribute
COMPAT = ("\n\n# cdlearn's runner: benchopt 1.10 reads _used_seed (BaseDataset.__init__ is "
          "not called)\nDataset._used_seed = None\n")


def prepare(benchmark: str | None, work: Path) -> Path:
    dest = work / "benchmark_lasso"
    if benchmark is None:
        subprocess.run(["git", "clone", "--depth", "1",
                        "https://github.com/benchopt/benchmark_lasso", str(dest)], check=True)
    else:
        shutil.copytree(benchmark, dest)
    src = HERE / "lasso"
    for path in src.rglob("*.py"):
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    sim = dest / "datasets" / "simulated.py"
    if "_used_seed" not in sim.read_text():
        sim.write_text(sim.read_text() + COMPAT)
    return dest


def run_case(bench: Path, case, reg, reps, max_runs, timeout, solvers) -> Path:
    if case == LEUKEMIA:
        out, dataset = f"lasso_leukemia_{reg}", "leukemia-local"
    else:
        n, d, rho = case
        out = f"lasso_{n}_{d}_{rho}_{reg}"
        dataset = f"Simulated[n_samples={n},n_features={d},rho={rho}]"
    out = out.replace(".", "p")  # benchopt reads a dot as a suffix
    return benchopt_run(bench, dataset, f"Lasso Regression[fit_intercept=False,reg={reg}]",
                        out, reps, max_runs, timeout, solvers)


def benchopt_run(bench: Path, dataset: str, objective: str, out: str, reps: int,
                 max_runs: int, timeout: int, solvers) -> Path:
    """``benchopt run`` of one dataset × objective on one thread; its parquet file."""
    benchopt = Path(sys.executable).parent / "benchopt"  # the venv's, on PATH or not
    cmd = [str(benchopt) if benchopt.exists() else (shutil.which("benchopt") or "benchopt"),
           "run", str(bench), "-d", dataset, "-o", objective,
           "-r", str(reps), "-n", str(max_runs), "--timeout", str(timeout),
           "--no-plot", "--no-html", "--output", out]
    for s in solvers:
        cmd += ["-s", s]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return bench / "outputs" / f"{out}.parquet"


def times_to_targets(df) -> tuple[dict, dict]:
    """``{solver: [median time to each target]}`` (inf when never reached), and
    ``{solver: its best objective's median relative distance to the best of all}``."""
    best = float(df["objective_value"].min())
    res, reach = {}, {}
    for solver, g in df.groupby("solver_name"):
        row = []
        for target in TARGETS:
            per_rep = []
            for _, r in g.groupby("idx_rep"):
                ok = r[(r["objective_value"] - best) <= target * abs(best)]
                per_rep.append(float(ok["time"].min()) if len(ok) else np.inf)
            row.append(float(np.median(per_rep)))
        res[solver] = row
        reach[solver] = float(np.median([(r["objective_value"].min() - best) / abs(best)
                                         for _, r in g.groupby("idx_rep")]))
    return res, reach


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", help="a checkout of benchopt/benchmark_lasso")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-runs", type=int, default=40)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--cases", default="all",
                    help="'all' or a list of tall, square, wide, leukemia")
    ap.add_argument("--rho", type=float, default=None,
                    help="only the simulated cases of this ρ (a family split over holds)")
    ap.add_argument("--regs", default=",".join(map(str, REGS)),
                    help="regularisations (fractions of λmax), comma-separated")
    ap.add_argument("--peers", default=",".join(PEERS), help="benchopt solver names")
    ap.add_argument("--out", default=str(HERE.parent / "results" / "benchopt_lasso.md"))
    ap.add_argument("--keep", help="a directory to copy benchopt's parquet files into "
                    "(per-call stop values, times and objectives)")
    args = ap.parse_args(argv)
    import pandas as pd

    kinds = {"tall": (10_000, 100), "square": (500, 600), "wide": (100, 10_000)}
    wanted = args.cases.split(",")
    cases = [*SIMULATED, LEUKEMIA] if args.cases == "all" else [
        c for c in SIMULATED if (c[0], c[1]) in [kinds[k] for k in wanted if k in kinds]
    ] + ([LEUKEMIA] if LEUKEMIA in wanted else [])
    if args.rho is not None:
        cases = [c for c in cases if c == LEUKEMIA or c[2] == args.rho]
    regs = [float(r) for r in args.regs.split(",")]
    lines = ["# cdlearn on benchopt's Lasso benchmark (fit_intercept=False)", "",
             f"`python -m benchmarks.benchopt.run` (benchopt {_version()}, one thread, "
             f"{args.reps} repetitions, medians). Time (ms) for the objective to come within "
             "a relative 1e-6 / 1e-10 of the best objective any solver reached; ratio = "
             "cdlearn / best peer; tol-run: the tolerance-sampled cdlearn's closest relative "
             "objective to the best (it must reach 1e-10).", "",
             "| problem | reg | cdlearn 1e-6 | best peer 1e-6 | ratio | cdlearn 1e-10 | "
             "best peer 1e-10 | ratio | tol-run |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        bench = prepare(args.benchmark, Path(tmp))
        for case in cases:
            for reg in regs:
                path = run_case(bench, case, reg, args.reps, args.max_runs, args.timeout,
                                ("cdlearn", "cdlearn-tol", *args.peers.split(",")))
                if args.keep:
                    Path(args.keep).mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, Path(args.keep) / path.name)
                t, reach = times_to_targets(pd.read_parquet(path))
                ours = t.pop(OURS[0])
                t.pop(OURS[1], None)
                cells = []
                for k in range(len(TARGETS)):
                    name, peer = min(((s, v[k]) for s, v in t.items()), key=lambda x: x[1])
                    ratio = ours[k] / peer if np.isfinite(peer) else np.nan
                    cells += [f"{1e3 * ours[k]:.2f}", f"{1e3 * peer:.2f} ({name})",
                              f"{ratio:.2f}"]
                cells.append(f"{reach.get(OURS[1], np.nan):.1e}")
                name = case if case == LEUKEMIA else f"{case[0]}×{case[1]} ρ={case[2]}"
                lines.append(f"| {name} | {reg} | " + " | ".join(cells) + " |")
                print(lines[-1], flush=True)
                Path(args.out).write_text("\n".join(lines) + "\n")  # kept if cut short
    return 0


def _version() -> str:
    try:
        import benchopt

        return benchopt.__version__
    except ImportError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
