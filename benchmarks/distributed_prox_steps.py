"""ProxCoCoA+ (Lasso): its own step vs a driver line search along the round's move (a prototype).

``python -m benchmarks.distributed_prox_steps a9a 2,4,8 1200``: in-process
:class:`cdlearn.distributed._shard.ColumnShard` blocks (σ′ = K), one local
epoch per round, driven by a numpy loop that takes ``w ← w + tΔw`` with ``t``
the exact primal minimiser over :data:`STEPS` (t = 1: ProxCoCoA+'s own step).
Prints the rounds until the primal is within 1e-6·P(0) and 1e-9·P(0) of the
optimum (``cdlearn.solve``, tol 1e-13); squared loss, λ = λ_max/10.
"""

from __future__ import annotations

import argparse

import numpy as np

STEPS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
LEVELS = (1e-6, 1e-9)


def rounds_to(X, y, lam, K, steps, max_rounds, optimum, p0):
    from cdlearn.distributed._solve import _column_specs
    from cdlearn.losses import LOSS_CODES, loss_derivatives, weighted_loss_sum

    code, n, ones = LOSS_CODES["squared"], X.shape[0], np.ones(X.shape[0])
    shards = [s.cls(*s.args, **s.kwargs)
              for s in _column_specs(X, K, "squared", lam, 0.0, 0, 1.0)]
    z, deriv, hit = np.zeros(n), np.empty(n), {}
    for r in range(max_rounds):
        loss_derivatives(code, z, y, deriv)
        before = [s.w.copy() for s in shards]
        dz = sum(s.prox_round(deriv, r, (), 1, False)[6] for s in shards)
        moves = [s.w - w for s, w in zip(shards, before, strict=True)]

        def primal(t, z=z, dz=dz, before=before, moves=moves):
            return (weighted_loss_sum(code, z + t * dz, y, ones) / n
                    + lam * sum(np.abs(w + t * m).sum() for w, m in zip(before, moves,
                                                                       strict=True)))

        t = min(steps, key=primal)
        value = primal(t)
        for s, w, m in zip(shards, before, moves, strict=True):
            s.w = w + t * m
        z = z + t * dz
        for level in LEVELS:
            if level not in hit and value - optimum <= level * p0:
                hit[level] = r + 1
        if len(hit) == len(LEVELS):
            break
    return [hit.get(level, f">{max_rounds}") for level in LEVELS]


def main(argv=None):
    import cdlearn
    from cdlearn.datasets.libsvm import load_binary

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("shards", help="e.g. 2,4,8")
    parser.add_argument("max_rounds", type=int)
    args = parser.parse_args(argv)
    X, y = load_binary(args.dataset, download=False)
    n = X.shape[0]
    lam = float(np.max(np.abs(X.T @ y))) / n / 10
    optimum = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, tol=1e-13).primal
    p0 = 0.5 * float(y @ y) / n
    print("| data | K | own step: rounds to 1e-6 / 1e-9 | line search: rounds to 1e-6 / 1e-9 |")
    print("|---|---|---|---|")
    for K in (int(k) for k in args.shards.split(",")):
        own = rounds_to(X, y, lam, K, (1.0,), args.max_rounds, optimum, p0)
        best = rounds_to(X, y, lam, K, STEPS, args.max_rounds, optimum, p0)
        print(f"| {args.dataset} | {K} | {own[0]} / {own[1]} | {best[0]} / {best[1]} |",
              flush=True)


if __name__ == "__main__":
    main()
