"""CoCoA+ rounds to a relative gap vs shards K: CoCoA+'s own step vs the driver's line search.

``python -m benchmarks.distributed_cocoa_steps [--datasets ...] [--max-rounds R]``:
logistic loss, l2, λ = 1/n, no intercept, ``method="cocoa+"``, one local epoch
per round, in-process shards (``client=None``: the rounds and the iterates are
those of a cluster run; the seconds are not communication). "own step" fixes
the driver's grid to (t, m) = (1, 0) -- CoCoA+ (adding, σ′ = K) as before the
line search; "line search" is the default. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import time
import warnings


def run(name, K, own_step, tol, max_rounds):
    import cdlearn.distributed as cdd
    import cdlearn.distributed._solve as solve_mod
    from cdlearn.datasets.libsvm import load_binary

    X, y = load_binary(name, download=False)
    saved = solve_mod.COCOA_STEPS, solve_mod.COCOA_MOMENTA
    if own_step:
        solve_mod.COCOA_STEPS, solve_mod.COCOA_MOMENTA = (1.0,), (0.0,)
    try:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = cdd.solve(X, y, loss="logistic", penalty="l2", lam=1.0 / X.shape[0],
                            n_shards=K, method="cocoa+", tol=tol, max_rounds=max_rounds)
        seconds = time.perf_counter() - t0
    finally:
        solve_mod.COCOA_STEPS, solve_mod.COCOA_MOMENTA = saved
    gaps = res.trace["gap"] / res.trace["primal"][0]
    return dict(rounds=res.info["rounds"], converged=res.converged, gap=float(gaps[-1]),
                seconds=seconds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="news20,reuters-money-fx,a9a")
    ap.add_argument("--shards", default="1,2,4,8")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-rounds", type=int, default=300)
    args = ap.parse_args()
    print("| data | K | own step: rounds | gap/P(0) | line search: rounds | gap/P(0) | "
          "seconds own / line search |")
    print("|---|---|---|---|---|---|---|")
    for name in args.datasets.split(","):
        for K in (int(k) for k in args.shards.split(",")):
            own = run(name, K, True, args.tol, args.max_rounds)
            new = own if K == 1 else run(name, K, False, args.tol, args.max_rounds)

            def cell(r):
                return f"{r['rounds']}{'' if r['converged'] else ' (cap)'}"

            print(f"| {name} | {K} | {cell(own)} | {own['gap']:.2e} | {cell(new)} | "
                  f"{new['gap']:.2e} | {own['seconds']:.1f} / {new['seconds']:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
