"""scikit-learn estimators on top of :func:`cdlearn.solve`.

Parameters speak scikit-learn's language (``alpha``, ``C``, ``l1_ratio``, ...);
each docstring gives the mapping to cdlearn's ``λ``.
"""

from ._classification import LinearSVC, LogisticRegression
from ._cv import ElasticNetCV, LassoCV, LogisticRegressionCV
from ._group import GroupLasso
from ._multitask import MultiTaskElasticNet, MultiTaskLasso
from ._regression import ElasticNet, Lasso, Ridge

__all__ = [
    "Lasso",
    "ElasticNet",
    "Ridge",
    "LogisticRegression",
    "LinearSVC",
    "LassoCV",
    "ElasticNetCV",
    "LogisticRegressionCV",
    "GroupLasso",
    "MultiTaskLasso",
    "MultiTaskElasticNet",
]
