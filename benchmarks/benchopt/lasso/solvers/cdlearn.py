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
        # every epoch up to 10, then 30% steps: plain cyclic CD needs 40-70 epochs on
        # 500 × 600 ρ = 0.6 at 1e-10, past benchopt's 40 runs with steps of 1, and with
        # 10% steps its per-call decrease fell below benchopt's SufficientProgressCriterion
        # (1e-10 × the largest, 3 calls in a row), which stopped it short of 1e-10
        return stop_val + 1 if stop_val < 10 else int(stop_val * 1.3)
