"""DGPD (active sets) against dual CD at the dgpd-fig1 penalty: does it converge, and where.

For each data set and loss (smooth hinge, logistic; L1 + L2 at the paper's
λ = 0.1, μ = 0.01 on the summed loss), dual CD is run to a 1e-11·P(0) gap as the
reference, then DGPD with active sets to 1e-8·P(0). Prints both times, whether
DGPD converged, its gap relative to P(0), ``|P − P*|/P*`` and its nonzero counts
(issue 20's target: a 1e-8 gap on news20, reuters, a9a and digits-RB, reaching
dual CD's optimum). digits-RB is one-vs-rest over its 10 classes (summed).

    python -m benchmarks.dgpd_convergence news20,reuters-money-fx,a9a,digits-RB [losses]
"""

from __future__ import annotations

import sys
import time
import warnings

import scipy.sparse as sp

import cdlearn
from cdlearn.experiments import dgpd as E
from cdlearn.experiments.faceoff import load_dataset

GAP = 1e-8  # DGPD's gap target, relative to P(0)
REFERENCE_GAP = 1e-11  # dual CD's


def problems(name):
    """(X, y) pairs of one data set: one, or one per class for digits-RB."""
    if name == "news20":
        ds = E.news20_dataset(dict(E.FULL))
        return [(ds.X, ds.y)]
    if name == "digits-RB":
        ds = next(d for d in E.digits_datasets(dict(E.FULL)) if d.name == "digits-RB")
        return [(ds.X, t) for _, t in ds.targets()]
    X, y = load_dataset(name)
    return [(sp.csr_matrix(X), y)]


def main(argv):
    names = argv[0].split(",")
    losses = argv[1].split(",") if len(argv) > 1 else ["smooth_hinge", "logistic"]
    warnings.simplefilter("ignore")
    for name in names:
        probs = problems(name)
        for loss in losses:
            t_ref = t_dgpd = rel = gap = 0.0
            converged, iterations = True, 0
            for X, y in probs:
                pen = E.paper_penalty(0.1, 0.01, X.shape[0])
                # compile outside the timing
                cdlearn.solve(X[:30], y[:30], loss=loss, solver="dgpd", active_set=True,
                              max_epochs=2, **pen)
                t = time.perf_counter()
                ref = cdlearn.solve(X, y, loss=loss, solver="dual-cd", tol=REFERENCE_GAP,
                                    max_epochs=100_000, **pen)
                t_ref += time.perf_counter() - t
                t = time.perf_counter()
                res = cdlearn.solve(X, y, loss=loss, solver="dgpd", active_set=True, tol=GAP,
                                    max_epochs=100_000, **pen)
                t_dgpd += time.perf_counter() - t
                rel = max(rel, abs(res.primal - ref.primal) / ref.primal)
                gap = max(gap, res.gap / res.trace["primal"][0])
                converged &= res.converged
                iterations += res.info["iterations"]
            print(f"{name:18s} {loss:12s} dual-cd({REFERENCE_GAP:g}) {t_ref:8.2f} s  "
                  f"dgpd({GAP:g}) {t_dgpd:8.2f} s  converged {converged}  gap/P(0) {gap:.1e}  "
                  f"|P-P*|/P* {rel:.1e}  iterations {iterations}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
