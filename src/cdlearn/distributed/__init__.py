"""Fit on several machines: CoCoA+ and distributed Newton on Dask (layer 7).

``cdlearn.distributed.solve`` splits the rows over shards held by the workers of
a ``dask.distributed.Client`` (or, with ``client=None``, by this process) and
returns the :class:`~cdlearn.solvers.base.SolveResult` of :func:`cdlearn.solve`,
with a duality gap summed from the shards' parts. See ``DISTRIBUTED.md``.
Dask is needed only with a client: ``pip install cdlearn[distributed]``.
The estimators fit on a client inside ``with cdlearn.distributed.fit_on(client):``.
"""

from ._fit_on import current_engine, fit_on, refuse_distributed
from ._solve import METHODS, NEWTON_MAX_FEATURES, DistributedTrace, choose_method, solve

__all__ = ["solve", "fit_on", "choose_method", "DistributedTrace", "METHODS",
           "NEWTON_MAX_FEATURES", "current_engine", "refuse_distributed"]
