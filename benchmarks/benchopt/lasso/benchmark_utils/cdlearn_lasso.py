"""What cdlearn's two benchopt Lasso solvers share (solvers/cdlearn.py, cdlearn_tol.py).

The benchmark's objective ``½‖y - Xw - b‖² + λ‖w‖₁`` is cdlearn's squared loss
with ``lam = λ/n``; every ``run`` is one ``cdlearn.solve`` from zero with
``solver="auto"`` (cdlearn's own choice, in ``result.info["reason"]``). X is
stored Fortran-ordered once in ``set_objective`` (untimed), as benchopt's own
``cd`` solver does, and validated there into cdlearn's ``Design``
(``cdlearn.as_design``): cdlearn's column view is then the array itself, and the
timed calls skip the per-call scan of X that guards an array against in-place
edits (a ``Design`` is the user's promise that X stays as it was validated).
"""

import warnings

import numpy as np
from benchopt import BaseSolver
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning

import cdlearn


class CdlearnSolver(BaseSolver):
    requirements = ["pip::cdlearn"]
    parameters = {"solver": ["auto"]}

    def set_objective(self, X, y, lmbd, fit_intercept):
        self.X = cdlearn.as_design(X if sparse.issparse(X) else np.asfortranarray(X))
        self.y, self.lmbd = y, lmbd
        self.fit_intercept = fit_intercept
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        # load the cached numba kernels, Anderson's too (plain CD extrapolates at epoch 5)
        self.solve(tol=1e-15, max_epochs=10)

    def solve(self, **stop):
        res = cdlearn.solve(self.X, self.y, loss="squared", penalty="l1",
                            lam=self.lmbd / self.X.shape[0], solver=self.solver,
                            fit_intercept=self.fit_intercept, **stop)
        self.coef = np.r_[res.w, res.intercept] if self.fit_intercept else res.w
        self.result = res

    def get_result(self):
        return dict(beta=self.coef)
