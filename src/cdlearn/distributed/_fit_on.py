"""Fit cdlearn's estimators on a Dask cluster: the :func:`fit_on` context manager.

The convention is scikit-learn's and dask-ml's for a compute backend: the
estimator's code and parameters do not change, a ``with`` block says where its
``fit`` runs (as ``with joblib.parallel_backend("dask"):`` does for
``n_jobs``). Inside the block, an estimator whose problems
:func:`cdlearn.distributed.solve` serves fits through it, one problem (target,
or class of a one-vs-rest classifier) after another; any other raises a
ValueError naming what is not supported, rather than fitting on one machine.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..data import check_choice, check_int, check_positive
from ._solve import METHODS, solve

_ENGINE: ContextVar = ContextVar("cdlearn_distributed_fit_on", default=None)
#: options that change the problem, which cdlearn.distributed.solve does not take
UNSUPPORTED_OPTIONS = {"groups": "group penalties (GroupLasso)", "positive": "positive=True",
                       "gram": "precompute (a Gram matrix)", "hessian": "precompute=True"}


@dataclass(frozen=True)
class Engine:
    """Where and how :func:`fit_on` runs the estimators' problems."""

    client: object
    n_shards: int | None
    method: str
    local_epochs: int
    max_rounds: int | None
    timeout: float | None

    def run(self, design, targets, sample_weights, *, loss, penalty, lam, l1_ratio,
            fit_intercept, options, warm, estimator):
        """:func:`solve` for every target; errors name the estimator and what it lacks.

        The options that tune single-machine methods (``sampling``, ``coef_tol``,
        the estimator's ``solver``) do not apply: the engine's method replaces them.
        """
        where = f"{estimator} inside cdlearn.distributed.fit_on"
        if warm is not None and any(w is not None for w in warm):
            raise ValueError(f"{where}: warm_start=True is not supported (the distributed "
                             f"solve starts at w = 0)")
        for key, what in UNSUPPORTED_OPTIONS.items():
            if options.get(key) not in (None, False):
                raise ValueError(f"{where}: {what} is not supported by "
                                 f"cdlearn.distributed.solve")
        X = design.to_scipy()
        results = []
        for y, sw in zip(targets, sample_weights, strict=True):
            try:
                res = solve(X, y, loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                            client=self.client, n_shards=self.n_shards, method=self.method,
                            tol=options["tol"], local_epochs=self.local_epochs,
                            max_rounds=(options["max_epochs"] if self.max_rounds is None
                                        else self.max_rounds),
                            seed=options.get("seed", 0), verbose=options.get("verbose", False),
                            fit_intercept=fit_intercept, sample_weight=sw, timeout=self.timeout)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from exc
            results.append(res)
        return results


@contextmanager
def fit_on(client=None, *, n_shards=None, method="auto", local_epochs=1, max_rounds=None,
           timeout=None):
    """Run the ``fit`` of cdlearn's estimators on a Dask ``client`` inside this block.

    ``with cdlearn.distributed.fit_on(client): LogisticRegression().fit(X, y)``
    splits X into ``n_shards`` (default: the client's workers) and fits with
    :func:`cdlearn.distributed.solve` (``method``, ``local_epochs``, ``timeout``
    as there; ``max_rounds`` defaults to the estimator's ``max_iter``; its ``tol``
    gives the gap target as on one machine). ``client=None`` runs the same
    rounds in this process. Served: LogisticRegression (binary or one-vs-rest),
    LinearSVC, Lasso, ElasticNet, Ridge — the problems :func:`solve` takes, so
    e.g. an intercept needs a smooth loss (Newton or ProxCoCoA+) and Ridge needs
    alpha > 0. Any other estimator or option (CV estimators, multinomial or
    multi-task models, GroupLasso, ``positive``, ``warm_start``) raises a
    ValueError that names it. Blocks nest; the innermost wins. Yields the engine.
    """
    check_choice("method", method, METHODS)
    if n_shards is not None:
        n_shards = check_int("n_shards", n_shards)
    local_epochs = check_int("local_epochs", local_epochs)
    if max_rounds is not None:
        max_rounds = check_int("max_rounds", max_rounds, low=0)
    if timeout is not None:
        timeout = check_positive("timeout", timeout)
    engine = Engine(client, n_shards, method, local_epochs, max_rounds, timeout)
    token = _ENGINE.set(engine)
    try:
        yield engine
    finally:
        _ENGINE.reset(token)


def current_engine() -> Engine | None:
    """The engine of the innermost :func:`fit_on` block, or None outside one."""
    return _ENGINE.get()


def refuse_distributed(what: str) -> None:
    """Raise inside a :func:`fit_on` block for a fit that runs on one machine only."""
    if _ENGINE.get() is not None:
        raise ValueError(f"{what} cannot fit inside cdlearn.distributed.fit_on: "
                         f"cdlearn.distributed.solve does not serve it (fit it outside the "
                         f"block, on one machine)")
