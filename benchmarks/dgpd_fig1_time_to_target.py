"""Time to relative objective 1e-4 of DGPD, PrimalRCD, DualRCD and SPDC (dgpd-fig1 setup).

The paper's Figure 1 point (λ = 0.1, μ = 0.01, summed smooth-hinge loss, i.e.
cdlearn's ``elastic_net`` with ``lam=(λ+μ)/n``) on the full-size sets of
``cdlearn reproduce dgpd-fig1 --full``: ``rb`` = digits with 300 Random Binning
grids, one-vs-rest over the 10 classes (times summed over classes); ``news`` =
news20 binarized with unit rows (14,342 training documents); ``reuters`` =
reuters-money-fx and ``a9a`` as loaded (rows not rescaled), binary, 10% of the
rows held out as in the experiment. Median of 3 runs
(seeds 0, 1, 2); a run not reaching 1e-4 within ``--limit`` seconds of epochs
per binary problem counts as +inf. Time counts the methods' epochs only.

    CDLEARN_DATA=../shared/data .venv/bin/python benchmarks/dgpd_fig1_time_to_target.py rb
    CDLEARN_DATA=../shared/data .venv/bin/python benchmarks/dgpd_fig1_time_to_target.py news
    CDLEARN_DATA=../shared/data .venv/bin/python benchmarks/dgpd_fig1_time_to_target.py a9a
"""

from __future__ import annotations

import argparse
import os
import time

from cdlearn.experiments import dgpd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem", choices=("rb", "news", "reuters", "a9a"))
    ap.add_argument("--limit", type=float, default=60.0,
                    help="seconds of epochs per binary problem and run")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    # the time limit binds, not the epochs (a DGPD "epoch" can be ~2 ms on news20)
    cfg = dict(dgpd.FULL, repeats=args.repeats, stop_rel=1e-5, max_epochs=10**6,
               max_seconds=args.limit)
    if args.problem == "rb":
        sets = [d for d in dgpd.digits_datasets(cfg) if d.name == "digits-RB"]
    elif args.problem == "news":
        sets = [dgpd.news20_dataset(cfg)]
    else:
        sets = [dgpd.libsvm_dataset("reuters-money-fx" if args.problem == "reuters" else "a9a")]
    dgpd._warm_up()
    t0 = time.time()
    results = dgpd.run_grid(sets, [dgpd.MAIN], cfg, log=print)
    ds = sets[0]
    print(f"\n{ds.name}: {ds.X.shape[0]} x {ds.X.shape[1]}, nnz {getattr(ds.X, 'nnz', 'dense')}, "
          f"load average {os.getloadavg()[0]:.1f}, {time.time() - t0:.0f} s")
    print("| method | median s to 1e-4 | runs (s) | iterations | passes | best rel. obj. |")
    print("|---|---|---|---|---|---|")
    for row in dgpd.summarize(results):
        runs = [dgpd.first_reach(r["curve"], "seconds") for r in results
                if r["method"] == row["method"]]
        print(f"| {row['method']} | {row['seconds']:.3g} | "
              f"{', '.join(f'{s:.3g}' for s in runs)} | {row['iterations']:.4g} | "
              f"{row['passes']:.4g} | {row['final_rel']:.2e} |")


if __name__ == "__main__":
    main()
