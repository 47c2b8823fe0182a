"""cdlearn: coordinate descent solvers for regularized empirical risk minimization.

``import cdlearn`` loads what :func:`solve` needs and nothing else: the solver
modules (and their numba kernels) are imported when a method is first used
(:data:`cdlearn.solvers.SOLVERS`), the path helpers and the scikit-learn
estimators when first asked for (module ``__getattr__`` below). scikit-learn,
matplotlib, tqdm, the datasets, experiments and the command line are never
imported by ``import cdlearn`` (tests/test_import.py).
"""

from .data import Design, as_design
from .multiclass import solve
from .solvers.base import SolveResult, Trace

__version__ = "0.1.0"

_ESTIMATORS = ("Lasso", "ElasticNet", "Ridge", "LogisticRegression", "LinearSVC", "LassoCV",
               "ElasticNetCV", "LogisticRegressionCV", "GroupLasso", "MultiTaskLasso",
               "MultiTaskElasticNet")
_PATHS = ("path", "lasso_path", "enet_path")

__all__ = ["solve", "path", "lasso_path", "enet_path", "Design", "as_design", "SolveResult", "Trace", "__version__", *_ESTIMATORS]


def __getattr__(name):
    # Estimators import scikit-learn (~1 s); load them only when asked for.
    if name in _ESTIMATORS:
        from . import estimators

        return getattr(estimators, name)
    if name in _PATHS:
        from . import paths

        value = globals()[name] = getattr(paths, name)
        return value
    raise AttributeError(f"module 'cdlearn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
