"""Per-call overhead of ``cdlearn.solve`` on small and tall dense Lasso problems.

Overhead = wall time of the call minus ``result.seconds`` (the driver loop: epochs
and certificates), i.e. validation, the design's statistics, the ``auto`` choice
and building the method's state. Medians of ``--repeat`` calls after a warm-up;
``python -m benchmarks.overhead --out benchmarks/results/overhead.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import cdlearn

CASES = [(300, 60), (10_000, 100)]


def measure(n, d, order, solver, repeat):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X = np.asfortranarray(X) if order == "F" else np.ascontiguousarray(X)
    y = X[:, :10] @ rng.standard_normal(10) + rng.standard_normal(n)
    lam = 0.1 * np.abs(X.T @ y).max() / n
    kw = dict(loss="squared", penalty="l1", lam=lam, solver=solver, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cdlearn.solve(X, y, **kw)
        total, inner = [], []
        for _ in range(repeat):
            t = time.perf_counter()
            res = cdlearn.solve(X, y, **kw)
            total.append(time.perf_counter() - t)
            inner.append(res.seconds)
    total, inner = np.array(total), np.array(inner)
    return res.solver, 1e3 * np.median(total), 1e3 * np.median(total - inner), res.n_epochs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    lines = ["# Per-call overhead of cdlearn.solve (dense Lasso, tol=1e-6)", "",
             "`python -m benchmarks.overhead`: medians of "
             f"{args.repeat} calls; overhead = call − driver loop (`result.seconds`).", "",
             "| problem | order | solver | call (ms) | overhead (ms) | epochs |",
             "|---|---|---|---:|---:|---:|"]
    for n, d in CASES:
        for order in ("F", "C"):
            for solver in ("auto", "ws-cd"):
                s, total, over, ep = measure(n, d, order, solver, args.repeat)
                lines.append(f"| {n}×{d} | {order} | {solver} → {s} | {total:.2f} | {over:.2f} "
                             f"| {ep} |")
                print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
