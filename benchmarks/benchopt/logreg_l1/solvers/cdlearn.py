"""cdlearn for benchopt's benchmark_logreg_l1 (copy into its ``solvers/``).

The benchmark minimises ``Σ log(1 + e^{-y xᵀw}) + lmbd ‖w‖₁``, that is ``n``
times cdlearn's ``P(w)`` with ``λ = lmbd/n``. Sampled by tolerance: ``tol`` is
cdlearn's own (duality gap ≤ tol·P(0)). benchopt starts at tol = 3e38 and
divides by 1.5 per call, stopping a solver after 3 calls in a row that do not
lower the objective; one outer iteration of cdlearn often divides the gap by
10-1000, so the same iterate came back for several tols and benchopt stopped
the curve early (as on the Lasso benchmark's ``cdlearn-tol``). ``get_next``
divides tol by 100 instead: each call asks for a point distinctly more accurate
than the last, down to 1e-15. Self-contained: each benchmark gets its own copy.
"""

import numpy as np
from benchopt import BaseSolver

import cdlearn


class Solver(BaseSolver):
    name = "cdlearn"
    sampling_strategy = "tolerance"
    requirements = ["pip::cdlearn"]
    parameters = {"solver": ["auto"]}

    def set_objective(self, X, y, lmbd):
        self.X, self.y = X, np.asarray(y, dtype=np.float64)
        self.lam = lmbd / X.shape[0]
        self.design = cdlearn.as_design(X)  # validated once, as the peers' layouts
        self.run(1e-2)  # numba's cached kernels loaded outside the timing

    def run(self, tol):
        tol = min(max(float(tol), 1e-15), 1.0)
        res = cdlearn.solve(self.design, self.y, loss="logistic", penalty="l1", lam=self.lam,
                            solver=self.solver, tol=tol, max_epochs=100_000)
        self.w = res.w

    def get_next(self, stop_val):
        return max(min(stop_val, 1.0) * 1e-2, 1e-15)

    def get_result(self):
        return dict(beta=self.w)
