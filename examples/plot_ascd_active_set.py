"""
ASCD: greedy coordinate selection on a shrinking active set
===========================================================

Approximate steepest coordinate descent (Stich, Raj & Jaggi, ICML 2017)
keeps safe lower and upper bounds on every gradient coordinate and picks
only among the coordinates that could be the steepest: the *active set*.

We fit a sparse Lasso with ASCD and with uniform CD under the same step rule
(``selection="uniform"``) and plot the duality gap against the passes over
the data, and the active-set size recorded in the trace. At first the safe
bounds are loose and almost every coordinate is active; once the iterate is
near the solution the set collapses to about the support (10 of 600 here),
and ASCD's gap falls to rounding level by the next check (9 passes in all),
while uniform CD, which keeps spending steps on coordinates that stay at
zero, is at a gap of 5e-10 after 27 passes.
"""

import matplotlib.pyplot as plt
import numpy as np

import cdlearn

rng = np.random.default_rng(0)
n, d = 300, 600
X = rng.standard_normal((n, d))
w_true = np.zeros(d)
w_true[:15] = rng.standard_normal(15)
y = X @ w_true + 0.1 * rng.standard_normal(n)
lam_max = np.abs(X.T @ y).max() / n
lam = lam_max / 5

runs = {}
for label, selection in [("ASCD (gs-s)", "gs-s"), ("uniform CD", "uniform")]:
    res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, solver="ascd",
                        selection=selection, tol=1e-9, max_epochs=200, seed=0)
    runs[label] = res
    print(f"{label:12s} epochs={res.n_epochs} gap={res.gap:.1e} nnz(w)={np.count_nonzero(res.w)}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
for label, res in runs.items():
    passes = res.trace["passes"]
    ax1.semilogy(passes, res.trace["gap"], "o-", ms=3, label=label)
    ax2.plot(passes, res.trace["active"], "o-", ms=3, label=label)
ax1.set_xlabel("passes over the data")
ax1.set_ylabel("duality gap")
ax1.legend(fontsize=8)
ax2.set_xlabel("passes over the data")
ax2.set_ylabel("active set size")
fig.tight_layout()
plt.show()
