"""One-vs-rest multiclass, and the public ``cdlearn.solve`` that routes to it.

:func:`solve` is ``cdlearn.solve``: :func:`cdlearn.api.solve` for one problem;
with a classification loss and a label vector of ``K > 2`` distinct labels,
:func:`solve_ovr`. The dispatch goes one way (this layer calls ``api``,
never the reverse). In :func:`solve_ovr` the design is
validated once (one :class:`~cdlearn.data.Design`, its row/column views built
once before fanning out), the method is chosen once, and the K problems
"class k (+1) vs the rest (-1)" run on a pool of threads. The numba kernels of
the methods (primal CD, dual CD, SPDC, ...) are compiled with ``nogil=True``,
so the threads run their epochs on different cores at the same time, and no
copy of the data is made (a process pool would pickle X to every worker).

:func:`run_many` is the fan-out itself; the scikit-learn classifiers use it too.
"""

from __future__ import annotations

import inspect
import os
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from . import api
from .api import auto_solver, cd_options_requested, make_problem
from .data import BINARY_LOSSES, as_design, check_sample_weight
from .solvers.base import SolveResult, stop_on
from .solvers.parallel import check_threads

__all__ = ["solve", "MulticlassResult", "solve_ovr", "run_many", "is_multiclass",
           "n_workers"]


def solve(X, y, **options):
    if is_multiclass(options.get("loss"), y):
        return solve_ovr(X, y, **options)
    return api.solve(X, y, **options)


solve.__signature__ = inspect.signature(api.solve).replace(
    return_annotation="SolveResult | MulticlassResult")
solve.__doc__ = api.solve.__doc__ + """
    Notes
    -----
    Multiclass: for a classification loss and a ``y`` with ``K > 2`` distinct
    labels (numbers or strings), one-vs-rest (:func:`solve_ovr`): K binary
    problems "class k (+1) vs rest (-1)" on one shared, once-validated design,
    run concurrently on ``n_jobs`` threads (the kernels release the GIL).
    Returns a :class:`MulticlassResult`: ``classes`` (K,), ``results`` (K
    SolveResults), ``coef`` (K, d), ``intercept``/``gap``/``primal``/
    ``n_epochs`` (K,), ``converged`` (all classes), ``predict(X)``. Warm starts
    are then per class: ``w0`` (K, d), ``alpha0`` (K, n).
    """


@dataclass
class MulticlassResult:
    """What :func:`cdlearn.solve` returns for ``K > 2`` classes (one-vs-rest).

    Attributes
    ----------
    classes : (K,) the sorted distinct labels; problem k is "classes[k] vs rest"
    results : list of K :class:`~cdlearn.SolveResult`, one per class
    solver : the method run for every class
    seconds : wall-clock time of the whole fit (the classes run concurrently)
    n_jobs : number of threads used

    The per-class fields are stacked by properties: ``coef`` (K, d),
    ``intercept`` (K,), ``alpha`` (K, n) or None, ``primal``/``gap``/
    ``n_epochs``/``passes`` (K,); ``converged`` is True when every class
    converged. ``decision_function(X)`` gives the (n, K) scores and
    ``predict(X)`` the label of the highest score.
    """

    classes: np.ndarray
    results: list[SolveResult]
    solver: str
    seconds: float
    n_jobs: int = 1
    info: dict = field(default_factory=dict)

    @property
    def coef(self) -> np.ndarray:
        return np.vstack([r.w for r in self.results])

    @property
    def w(self) -> np.ndarray:
        """Alias of :attr:`coef` ((K, d)), the multiclass counterpart of ``SolveResult.w``."""
        return self.coef

    @property
    def intercept(self) -> np.ndarray:
        return np.array([r.intercept for r in self.results])

    @property
    def alpha(self) -> np.ndarray | None:
        if any(r.alpha is None for r in self.results):
            return None
        return np.vstack([r.alpha for r in self.results])

    @property
    def primal(self) -> np.ndarray:
        return np.array([r.primal for r in self.results])

    @property
    def gap(self) -> np.ndarray:
        return np.array([r.gap for r in self.results])

    @property
    def n_epochs(self) -> np.ndarray:
        return np.array([r.n_epochs for r in self.results])

    @property
    def passes(self) -> np.ndarray:
        return np.array([r.passes for r in self.results])

    @property
    def converged(self) -> bool:
        return all(r.converged for r in self.results)

    def decision_function(self, X) -> np.ndarray:
        """Scores ``X @ coef.T + intercept``, shape (n_samples, K)."""
        design = as_design(X)
        if design.n_features != self.coef.shape[1]:
            raise ValueError(f"X has {design.n_features} features, the model "
                             f"{self.coef.shape[1]}")
        return np.column_stack([design.matvec(r.w) + r.intercept for r in self.results])

    def predict(self, X) -> np.ndarray:
        """The class with the highest one-vs-rest score."""
        return self.classes[np.argmax(self.decision_function(X), axis=1)]

    def __repr__(self) -> str:
        status = "converged" if self.converged else "not all converged"
        return (f"MulticlassResult({self.classes.size} classes one-vs-rest, solver="
                f"{self.solver!r}, {status}, {self.seconds:.3g} s on {self.n_jobs} "
                f"thread(s), max gap={self.gap.max():.3g})")


def n_workers(n_jobs, n_tasks: int) -> int:
    """Threads for ``n_tasks`` problems: ``None`` or -1 = all cores, k > 0 = k (≤ tasks)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    if n_jobs is None:
        jobs = cores
    elif isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer):
        raise TypeError(f"n_jobs must be an integer or None, got {type(n_jobs).__name__}")
    elif n_jobs == 0:
        raise ValueError("n_jobs must be a non-zero integer or None, got 0")
    elif n_jobs < 0:
        jobs = max(1, cores + 1 + int(n_jobs))  # -1: all cores, -2: all but one
    else:
        jobs = int(n_jobs)
    return max(1, min(jobs, n_tasks))


def run_many(design, targets, kwargs_list, *, n_jobs=None) -> list[SolveResult]:
    """``api.solve(design, targets[k], **kwargs_list[k])`` for every k, on a thread pool.

    ``design`` must be a :class:`~cdlearn.data.Design` whose views the method
    walks are already built (:func:`prebuild`); results keep the input order.
    Warnings raised inside the workers propagate as usual.

    Ctrl-C stops every problem at its next epoch (running or not yet started)
    and returns them all: each keeps the best iterate it reached (a problem
    not started keeps its starting point), marked not converged with
    ``info["interrupted"]``, and one RuntimeWarning says so; problems that had
    converged before stay converged. A second Ctrl-C raises.
    """
    stop = threading.Event()

    def one(y, kw):
        with stop_on(stop):
            try:
                return api.solve(design, y, **kw)
            except KeyboardInterrupt:  # outside the epochs (set-up, first certificate)
                stop.set()
            return api.solve(design, y, **kw)  # stop is set: the starting point, at once

    jobs = n_workers(n_jobs, len(targets))
    pairs = list(zip(targets, kwargs_list, strict=True))
    if jobs == 1:
        results = [one(y, kw) for y, kw in pairs]
    else:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="cdlearn-ovr") as pool:
            futures = [pool.submit(one, y, kw) for y, kw in pairs]
            try:
                results = [f.result() for f in futures]
            except KeyboardInterrupt:  # only the main thread receives it
                stop.set()
                results = [f.result() for f in futures]
    if stop.is_set():
        stopped = sum(bool(r.info.get("interrupted")) for r in results)
        warnings.warn(f"interrupted (Ctrl-C): {stopped} of {len(results)} problems stopped "
                      "early and keep the best iterate they reached (not converged)",
                      RuntimeWarning, stacklevel=3)
    return results


#: the views of the Design each method walks (both for the ones not listed)
_VIEWS = {"primal-cd": ("csc",), "block-cd": ("csc",), "scd": ("csc",), "ascd": ("csc",),
          "dual-cd": ("csr",), "spdc": ("csr",), "ws-cd": ("csc",), "fista": ()}


def prebuild(design, solver: str) -> None:
    """Build (and cache on ``design``) the views ``solver`` walks, before threads share it."""
    views = _VIEWS.get(solver, ("csc", "csr"))
    if solver in ("newton-cg", "lbfgs") and not design.is_sparse:
        views = ()  # it multiplies the stored array: a second layout would be a copy
    for view in views:
        getattr(design, view)


def is_multiclass(loss, y) -> bool:
    """True when ``y`` holds more than two distinct class labels for a classification loss.

    Class labels are integers, strings or integer-valued floats (continuous
    floats are a regression target, as for scikit-learn's ``type_of_target``).
    Anything that is not a clean 1-d label vector returns False, so that
    :func:`cdlearn.solve` reports the problem with its usual error.
    """
    if loss not in BINARY_LOSSES:
        return False
    try:
        arr = np.asarray(y)
    except Exception:
        return False
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1 or arr.size == 0 or arr.dtype == object:
        return False
    if arr.dtype.kind == "c":
        return False
    # ndarray.all, not np.all: its dispatch was a third of this check on 300 labels
    if arr.dtype.kind in "fiu" and bool((np.abs(arr) == 1).all()):
        return False  # ±1 labels, what binary solves pass: one comparison pass, no sort
    if arr.dtype.kind == "f" and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
        return False  # continuous targets are not class labels (scikit-learn's rule)
    return np.unique(arr).size > 2


def _per_class(name, value, k, size):
    """A warm start for every class: None, or a (K, size) array (rows per class)."""
    if value is None:
        return [None] * k
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (k, size):
        raise ValueError(f"{name} must have shape ({k}, {size}) for {k} one-vs-rest "
                         f"classes, got {arr.shape}")
    return list(arr)


def solve_ovr(X, y, *, loss, solver="auto", n_jobs=None, sample_weight=None, w0=None,
              alpha0=None, intercept0=0.0, n_threads=None, **kw) -> MulticlassResult:
    """One-vs-rest: :func:`cdlearn.solve` for every class of ``y`` on one shared design.

    ``y``: labels of any sortable type (numbers or strings), K > 2 distinct
    values; problem k has targets ``+1`` where ``y == classes[k]`` and ``-1``
    elsewhere. ``solver="auto"`` is resolved once (the choice does not
    depend on the labels). ``n_jobs``: threads (None or -1: all cores), each class
    running on ``n_threads // n_jobs`` threads of its own (at least 1). Warm
    starts ``w0`` (K, d), ``alpha0`` (K, n) and ``intercept0`` (scalar or (K,))
    give one row per class. ``seed`` is the same for every class, so the result
    does not depend on ``n_jobs``. Every other keyword is :func:`cdlearn.solve`'s.
    """
    t0 = time.perf_counter()
    design = as_design(X)
    n, d = design.n_samples, design.n_features
    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape} but X has {n} samples")
    classes = np.unique(y)
    targets = [np.where(y == c, 1.0, -1.0) for c in classes]
    k = classes.size
    sw = check_sample_weight(sample_weight, n)
    reason = "requested"
    if solver == "auto":
        problem = make_problem(design, targets[0], loss=loss, penalty=kw.get("penalty", "l2"),
                               lam=kw.get("lam"), l1_ratio=kw.get("l1_ratio", 0.5),
                               fit_intercept=kw.get("fit_intercept", False), sample_weight=sw,
                               groups=kw.get("groups"), positive=kw.get("positive", False))
        solver, reason = auto_solver(problem,
                                     cd_options=cd_options_requested(dict(kw, alpha0=alpha0)),
                                     batch_size=kw.get("batch_size", 1))
    prebuild(design, solver)
    b0 = np.broadcast_to(np.asarray(intercept0, dtype=np.float64), (k,))
    w0s = _per_class("w0", w0, k, d)
    a0s = _per_class("alpha0", alpha0, k, n)
    jobs = n_workers(n_jobs, k)
    # the classes' own threads share the cores with the jobs: no oversubscription
    threads = max(1, check_threads(n_threads) // jobs)
    kws = [dict(kw, loss=loss, solver=solver, sample_weight=sw, w0=w0s[c], alpha0=a0s[c],
                intercept0=float(b0[c]), n_jobs=1, n_threads=threads) for c in range(k)]
    results = run_many(design, targets, kws, n_jobs=jobs)
    out = MulticlassResult(classes=classes, results=results, solver=solver,
                           seconds=time.perf_counter() - t0, n_jobs=jobs)
    out.info["reason"] = reason
    out.info["interrupted"] = any(r.info.get("interrupted", False) for r in results)
    return out
