"""cdlearn on benchopt's Lasso benchmark (benchopt/benchmark_lasso).

The benchmark's objective ``½‖y - Xw - b‖² + λ‖w‖₁`` is cdlearn's squared loss
with ``lam = λ/n``. ``run(n_iter)`` is one ``cdlearn.solve`` from zero with
``max_epochs=n_iter`` and no tolerance (``solver="auto"``: its choice is
cdlearn's own, reported in ``result.info["reason"]``).
"""

from benchopt import BaseSolver, safe_import_context

with safe_import_context() as import_ctx:
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    import cdlearn


class Solver(BaseSolver):
    name = "cdlearn"
    sampling_strategy = "iteration"
    requirements = ["pip::cdlearn"]
    parameters = {"solver": ["auto"]}

    def set_objective(self, X, y, lmbd, fit_intercept):
        self.X, self.y, self.lmbd = X, y, lmbd
        self.fit_intercept = fit_intercept
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        self.run(2)  # load the cached numba kernels

    def run(self, n_iter):
        d = self.X.shape[1]
        if n_iter == 0:
            self.coef = np.zeros(d + self.fit_intercept)
            return
        res = cdlearn.solve(self.X, self.y, loss="squared", penalty="l1",
                            lam=self.lmbd / self.X.shape[0], solver=self.solver,
                            fit_intercept=self.fit_intercept, tol=1e-15, max_epochs=n_iter)
        self.coef = np.r_[res.w, res.intercept] if self.fit_intercept else res.w

    def get_next(self, stop_val):
        return stop_val + 1

    def get_result(self):
        return dict(beta=self.coef)
