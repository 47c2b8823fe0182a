"""cdlearn for benchopt's benchmark_logreg_l2 (copy into its ``solvers/``).

The benchmark minimises ``Σ log(1 + e^{-y xᵀw}) + lmbd/2 ‖w‖²``, that is ``n``
times cdlearn's ``P(w)`` with ``λ = lmbd/n``. The budget is cdlearn's ``tol``
(a duality gap relative to ``P(0)``): its outer iterations are not a fair unit.
"""

import numpy as np
from benchopt import BaseSolver

import cdlearn


class Solver(BaseSolver):
    name = "cdlearn"
    sampling_strategy = "tolerance"
    requirements = ["pip:cdlearn"]
    parameters = {"solver": ["auto"]}

    def set_objective(self, X, y, lmbd):
        self.X, self.y = X, np.asarray(y, dtype=np.float64)
        self.lam = lmbd / X.shape[0]
        self.design = cdlearn.as_design(X)  # validated once, as the peers' layouts
        self.run(1e-2)  # numba's cached kernels loaded outside the timing

    def run(self, tol):
        res = cdlearn.solve(self.design, self.y, loss="logistic", penalty="l2", lam=self.lam,
                            solver=self.solver, tol=max(float(tol), 1e-15), max_epochs=100_000)
        self.w = res.w

    def get_result(self):
        return dict(beta=self.w)
