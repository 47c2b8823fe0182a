"""Threads of one solve: how many, and the τ-nice ESO that parallel CD runs with.

:func:`cdlearn.solve` runs a method inside :func:`use_threads`; the methods
that have a parallel path read :func:`current_threads` when their state is
built: τ-nice dual and primal CD (:mod:`cdlearn.kernels.parallel_cd`, for
``batch_size > 1``) and the mat-vecs of truncated Newton (``newton-cg``).
Serial methods and ``batch_size=1`` ignore the count. The count is kept per
Python thread (as numba's own), so one-vs-rest classes on threads each run
with their share (:func:`cdlearn.multiclass.solve_ovr`).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

import numpy as np

from ..kernels.views import weighted_slice_powers
from ..sampling import tau_nice_weights

_local = threading.local()


def available_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def check_threads(n_threads) -> int:
    """``n_threads`` of :func:`cdlearn.solve` as a count: None or -1 = every core given,
    -2 = all but one, k > 0 = k."""
    cores = available_cores()
    if n_threads is None:
        return cores
    if isinstance(n_threads, bool) or not isinstance(n_threads, int | np.integer):
        raise TypeError(f"n_threads must be an integer or None, got {type(n_threads).__name__}")
    if n_threads == 0:
        raise ValueError("n_threads must be a non-zero integer or None, got 0")
    if n_threads < 0:
        return max(1, cores + 1 + int(n_threads))
    return int(n_threads)


def current_threads() -> int:
    """Threads the solve running on this Python thread may use (1 outside :func:`use_threads`).

    The first call inside :func:`use_threads` by a method that runs parallel kernels
    sets numba's count for this thread (capped at ``NUMBA_NUM_THREADS``; 1 where the
    threading layer is numba's ``workqueue``, which cannot run parallel regions from
    several Python threads at once) and returns what numba granted; serial methods
    never call it, so they never start numba's thread pool.
    """
    n = getattr(_local, "n", 1)
    if n > 1 and getattr(_local, "restore", None) is None:
        import numba

        _local.restore = numba.get_num_threads()  # starts the threading layer
        if (numba.threading_layer() == "workqueue"
                and threading.current_thread() is not threading.main_thread()):
            n = 1
        numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
        _local.n = n = numba.get_num_threads()
    return n


@contextmanager
def use_threads(n: int, *, blas: bool = False):
    """Run the enclosed solve on ``n`` threads: numba's parallel kernels (set on first
    use, :func:`current_threads`) and, with ``blas=True``, BLAS (threadpoolctl; left
    alone when ``n`` is every core given, BLAS's own default). Restored on exit."""
    prev = (getattr(_local, "n", 1), getattr(_local, "restore", None))
    _local.n, _local.restore = max(1, int(n)), None
    limits = None
    try:
        if blas and _local.n != available_cores():
            from threadpoolctl import threadpool_limits

            limits = threadpool_limits(limits=_local.n, user_api="blas")
        yield _local.n
    finally:
        if limits is not None:
            limits.restore_original_limits()
        if _local.restore is not None:
            import numba

            numba.set_num_threads(_local.restore)
        _local.n, _local.restore = prev


#: a τ-nice minibatch runs on threads only when it visits at least this many
#: entries on average (τ · nnz / slices): each minibatch costs two fork-joins of
#: the thread team (microseconds), which smaller ones would not repay. An
#: estimate, not a measurement (this machine was too loaded to time it).
PARALLEL_MIN_WORK = 4096


def minibatch_threads(tau: int, nnz: int, n_slices: int) -> int:
    """Threads for τ-nice minibatches over ``n_slices`` slices holding ``nnz`` entries."""
    if tau <= 1 or tau * nnz < PARALLEL_MIN_WORK * max(n_slices, 1):
        return 1
    return current_threads()


def tau_nice_eso(view, minor_nnz, tau: int, weights=None) -> np.ndarray:
    """ESO parameters of τ-nice sampling over the slices of ``view``
    (:func:`cdlearn.sampling.eso_tau_nice`): ``v_s = Σ_k r_k ω'_k x_sk²`` with
    ``ω'_k = 1 + (ω_k - 1)(τ - 1)/max(1, m - 1)``, ``ω_k`` the nonzeros of minor
    index k (``minor_nnz``), m the number of slices and ``r`` optional weights
    per minor index (primal CD's sample weights)."""
    n_slices = view.indptr.shape[0] - 1
    w = tau_nice_weights(minor_nnz, tau, n_slices)
    if weights is not None:
        w = w * weights
    out = np.empty(n_slices)
    weighted_slice_powers(view.data, view.indices, view.indptr, w, False, out)
    return out


def eso_epoch_growth(design, tau: int, *, beta: float, lam: float, primal: bool) -> float:
    """Predicted growth of the epochs to a given accuracy from serial to τ-nice sampling.

    Uniform τ-nice RCD needs ``K = max_s (m/τ)(1 + β v_s(τ)/(λn))`` iterations
    (face-off eqs. (8)-(9) with ``p_s = τ/m`` and the τ-nice ESO v(τ)), i.e.
    ``max_s(1 + β v_s(τ)/(λn))`` epochs of m coordinate steps: the ratio of that
    to its τ = 1 value. ``primal``: coordinates are features (ω = row nonzeros),
    else samples (ω = column nonzeros).
    """
    if primal:
        view, minor = design.csc, design.row_nnz
    else:
        view, minor = design.csr, design.col_nnz
    gamma = beta / (lam * design.n_samples)
    serial = 1.0 + gamma * float(tau_nice_eso(view, minor, 1).max(initial=0.0))
    return (1.0 + gamma * float(tau_nice_eso(view, minor, tau).max(initial=0.0))) / serial
