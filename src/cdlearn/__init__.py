"""cdlearn: coordinate descent solvers for regularized empirical risk minimization."""

from .api import solve
from .data import Design, as_design
from .paths import lasso_path, path
from .solvers.base import SolveResult, Trace

__version__ = "0.1.0"

_ESTIMATORS = ("Lasso", "ElasticNet", "Ridge", "LogisticRegression", "LinearSVC", "LassoCV",
               "LogisticRegressionCV")

__all__ = ["solve", "path", "lasso_path", "Design", "as_design", "SolveResult", "Trace", "__version__", *_ESTIMATORS]


def __getattr__(name):
    # Estimators import scikit-learn (~1 s); load them only when asked for.
    if name in _ESTIMATORS:
        from . import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'cdlearn' has no attribute {name!r}")
