"""cdlearn: coordinate descent solvers for regularized empirical risk minimization."""

from .api import solve
from .data import Design, as_design
from .solvers.base import SolveResult, Trace

__version__ = "0.1.0"

__all__ = ["solve", "Design", "as_design", "SolveResult", "Trace", "__version__"]
