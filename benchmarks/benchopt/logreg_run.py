"""Run cdlearn's tolerance-sampled solvers through benchopt's logistic benchmarks (offline).

``python -m benchmarks.benchopt.logreg_run --l1 DIR1 --l2 DIR2`` copies cdlearn's
solver files (``benchmarks/benchopt/logreg_l1|l2/solvers/cdlearn.py``) and the
``libsvm-local`` dataset (``logreg_datasets/libsvm_local.py``: a9a, leukemia from
``$CDLEARN_DATA``) into copies of checkouts of benchopt/benchmark_logreg_l1 and
benchmark_logreg_l2, runs ``benchopt run`` (one thread) with cdlearn and a few
peers on the problems that run offline (issue 25's simulated sizes, a9a,
leukemia), and writes one row per problem: how close cdlearn's tolerance-sampled
curve came to the best objective of any solver (it must reach 1e-10), the tol at
which it stopped, and the times to 1e-6 / 1e-10 of cdlearn and the best peer in
the same run (median over the repetitions).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from .run import COMPAT, TARGETS, benchopt_run, times_to_targets

HERE = Path(__file__).resolve().parent
L2 = ("L2 Logistic Regression", "lmbd", (1.0, 0.01),
      ["Simulated[n_samples=10000,n_features=100]", "Simulated[n_samples=1000,n_features=1000]",
       "libsvm-local[dataset=a9a]"],
      ["sklearn[solver=lbfgs]", "sklearn[solver=newton-cholesky]"])
L1 = ("Sparse Logistic Regression", "reg", (0.5, 0.1, 0.05),
      ["Simulated[n_samples=10000,n_features=100]", "Simulated[n_samples=1000,n_features=1000]",
       "Simulated[n_samples=500,n_features=2000]", "libsvm-local[dataset=a9a]",
       "libsvm-local[dataset=leu]"],
      ["skglm", "snapml[gpu=False]"])
OURS = "cdlearn[solver=auto]"


def prepare(checkout: str, penalty: str, work: Path) -> Path:
    dest = work / f"benchmark_logreg_{penalty}"
    shutil.copytree(checkout, dest)
    shutil.copy(HERE / f"logreg_{penalty}" / "solvers" / "cdlearn.py", dest / "solvers")
    shutil.copy(HERE / "logreg_datasets" / "libsvm_local.py", dest / "datasets")
    sim = dest / "datasets" / "simulated.py"
    if "_used_seed" not in sim.read_text():
        sim.write_text(sim.read_text() + COMPAT)
    return dest


def run_case(bench: Path, objective: str, dataset: str, reps: int, max_runs: int,
             timeout: int, solvers) -> Path:
    out = "".join(ch if ch.isalnum() else "_" for ch in f"{dataset}_{objective}")
    return benchopt_run(bench, dataset, objective, out, reps, max_runs, timeout, solvers)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--l1", help="a checkout of benchopt/benchmark_logreg_l1")
    ap.add_argument("--l2", help="a checkout of benchopt/benchmark_logreg_l2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-runs", type=int, default=60)
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--only", default="", help="substring of the dataset names to run")
    ap.add_argument("--out", default=str(HERE.parent / "results" / "benchopt_logreg_tol.md"))
    args = ap.parse_args(argv)
    import pandas as pd

    lines = ["| benchmark | data | lmbd / reg | tol-run reach | last tol | "
             + " | ".join(f"cdlearn {t:g} | best peer {t:g} | ratio" for t in TARGETS) + " |",
             "|---|---|---|---:|---:|" + "---:|" * (3 * len(TARGETS))]
    with tempfile.TemporaryDirectory() as tmp:
        for penalty, checkout, (name, key, params, datasets, peers) in (
                ("l1", args.l1, L1), ("l2", args.l2, L2)):
            if checkout is None:
                continue
            bench = prepare(checkout, penalty, Path(tmp))
            for dataset in datasets:
                if args.only not in dataset:
                    continue
                for par in params:
                    objective = f"{name}[{key}={par}]"
                    path = run_case(bench, objective, dataset, args.reps, args.max_runs,
                                    args.timeout, (OURS, *peers))
                    df = pd.read_parquet(path)
                    t, reach = times_to_targets(df)
                    ours = t.pop(OURS)
                    last = float(df[df["solver_name"] == OURS]["stop_val"].min())
                    cells = [f"{reach[OURS]:.1e}", f"{last:.0e}"]
                    for k in range(len(TARGETS)):
                        peer, v = min(((s, v[k]) for s, v in t.items()), key=lambda x: x[1])
                        ratio = f"{ours[k] / v:.2f}×" if np.isfinite(v) else "–"
                        cells += [f"{1e3 * ours[k]:.1f}", f"{1e3 * v:.1f} ({peer})", ratio]
                    lines.append(f"| logreg_{penalty} | {dataset} | {par:g} | "
                                 + " | ".join(cells) + " |")
                    print(lines[-1], flush=True)
                    Path(args.out).write_text("\n".join(lines) + "\n")  # kept if cut short
    return 0


if __name__ == "__main__":
    sys.exit(main())
