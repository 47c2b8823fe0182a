"""Rounds, bytes and wall time of cdlearn.distributed vs the number of shards K.

``python -m benchmarks.distributed`` (``make bench-distributed``): logistic
loss, λ = 1/n, on reuters (CoCoA+, l2 and elastic net) and a9a (distributed
Newton, which ``method="auto"`` picks for its 123 features, and CoCoA+ capped
at a few hundred rounds to show where it stalls), on a real
``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)``: K shards
placed round-robin on 2 worker processes (so K = 4 is 2 shards per worker).
Each case runs once after one warm-up solve (numba caches and imports loaded
in the workers); "seconds" is the driver's wall time of ``solve``, "comm s" its
time beyond the slowest shard's compute per round. Writes a markdown table.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

CASES = (
    # dataset, method, penalty, max_rounds
    ("reuters-money-fx", "cocoa+", "l2", 300),
    ("reuters-money-fx", "cocoa+", "elastic_net", 300),
    ("a9a", "newton", "l2", 50),
    ("a9a", "cocoa+", "l2", 200),
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="benchmarks/results/distributed.md")
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--shards", default="1,2,4")
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    import cdlearn.distributed as cdd
    from cdlearn.datasets.libsvm import load_binary

    shards = [int(k) for k in args.shards.split(",")]
    data = {name: load_binary(name, download=False) for name in {c[0] for c in CASES}}
    rows = []
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        X, y = data["reuters-money-fx"]
        for method in ("cocoa+", "newton"):  # warm-up: imports and numba caches in the workers
            cdd.solve(X[:200], y[:200], loss="logistic", lam=1e-2, client=client, n_shards=2,
                      method=method, tol=1e-3)
        for name, method, penalty, max_rounds in CASES:
            X, y = data[name]
            n = X.shape[0]
            for K in shards:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = cdd.solve(X, y, loss="logistic", penalty=penalty, lam=1.0 / n,
                                    l1_ratio=0.5, client=client, n_shards=K, method=method,
                                    tol=args.tol, max_rounds=max_rounds)
                seconds = time.perf_counter() - t0
                t = res.trace
                rows.append((name, f"{n}x{X.shape[1]}", method, penalty, K,
                             int(t["round"][-1]), res.converged, res.gap / t["primal"][0],
                             t["bytes_up"][-1] / 1e6, t["bytes_down"][-1] / 1e6, seconds,
                             t["comm_seconds"][-1]))
                print(*rows[-1], flush=True)
    lines = [
        "# cdlearn.distributed: rounds, bytes and time to a relative gap "
        f"{args.tol:g} vs shards K",
        "",
        "`make bench-distributed` (benchmarks/distributed.py): logistic loss, λ = 1/n "
        "(elastic net: l1_ratio 0.5), on a `LocalCluster` of 2 worker processes "
        "(1 thread each; K shards round-robin on them) on a shared 2-core machine; "
        "one run per case after a warm-up. Rounds = communication rounds (Newton: two per "
        "iteration); gap relative to P(0); MB up = shards → driver, MB down = driver → "
        "shards; comm s = wall time beyond the slowest shard's compute.",
        "",
        "| data | n x d | method | penalty | K | rounds | converged | gap/P(0) | MB up "
        "| MB down | seconds | comm s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | "
                     f"{r[7]:.2e} | {r[8]:.2f} | {r[9]:.2f} | {r[10]:.2f} | {r[11]:.2f} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return np.array([r[5] for r in rows])


if __name__ == "__main__":
    main()
