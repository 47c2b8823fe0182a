"""cdlearn on benchopt's Lasso benchmark, sampled by iterations.

``run(n_iter)``: one ``cdlearn.solve`` from zero with ``max_epochs=n_iter`` and
no tolerance (benchmark_utils/cdlearn_lasso.py).
"""

from benchopt import safe_import_context

with safe_import_context() as import_ctx:
    import numpy as np
    from benchmark_utils.cdlearn_lasso import CdlearnSolver


class Solver(CdlearnSolver):
    name = "cdlearn"
    sampling_strategy = "iteration"

    def run(self, n_iter):
        if n_iter == 0:
            self.coef = np.zeros(self.X.shape[1] + self.fit_intercept)
            return
        self.solve(tol=1e-15, max_epochs=n_iter)

    def get_next(self, stop_val):
        # every epoch up to 10, then 10% steps: plain cyclic CD needs 40-70 epochs on
        # 500 × 600 ρ = 0.6 at 1e-10, past benchopt's 40 runs with steps of 1
        return max(stop_val + 1, int(stop_val * 1.1))
