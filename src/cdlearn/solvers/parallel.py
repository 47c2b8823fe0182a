"""Threads of one solve: how many, and the τ-nice ESO that parallel CD runs with.

:func:`cdlearn.solve` runs a method inside :func:`use_threads`; the methods
that have a parallel path read :func:`current_threads` when their state is
built: τ-nice dual and primal CD (:mod:`cdlearn.kernels.parallel_cd`, for
``batch_size > 1``), the mat-vecs of truncated Newton (``newton-cg``), and the
exact parts of two serial methods on large sparse X (:func:`copy_threads`):
ws-cd's transposition of row-major input, scoring products and scoring pass,
serial dual CD's certificate ``Xw`` -- the same iterates on any count. Other
serial methods ignore the count. The count is kept per
Python thread (as numba's own), so one-vs-rest classes on threads each run
with their share (:func:`cdlearn.multiclass.solve_ovr`).
"""

from __future__ import annotations

import os
import threading

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


def usable_threads(n: int) -> int:
    """``n`` capped at numba's pool (``NUMBA_NUM_THREADS``): what a parallel kernel gets."""
    import numba

    return max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))


def current_threads(*, always_parallel: bool = False) -> int:
    """Threads the solve running on this Python thread may use (1 outside :func:`use_threads`).

    The first call inside :func:`use_threads` by a method that runs parallel kernels
    sets numba's count for this thread (capped at ``NUMBA_NUM_THREADS``; 1 where the
    threading layer is numba's ``workqueue``, which cannot run parallel regions from
    several Python threads at once) and returns what numba granted; serial methods
    never call it, so they never start numba's thread pool. ``always_parallel``: the
    caller runs parallel kernels even on one thread (partitioned CD), so numba's count
    is set to 1 too, not left at its default.
    """
    n = getattr(_local, "n", None)
    inside = n is not None
    n = n or 1
    if ((n > 1 or (always_parallel and inside))
            and getattr(_local, "restore", None) is None):
        import numba

        if numba.config.NUMBA_NUM_THREADS == 1:
            # a one-thread pool: numba's count is 1 and cannot change, nothing to ask
            # (get_num_threads and the layer's name: ~4 µs of a newton-cg solve)
            _local.restore, _local.n = 0, 1
            return 1
        have = numba.get_num_threads()  # starts the threading layer
        if (numba.threading_layer() == "workqueue"
                and threading.current_thread() is not threading.main_thread()):
            n = 1
        n = max(1, min(n, numba.config.NUMBA_NUM_THREADS))
        # set (and restore on exit) only a count that differs: one-thread pools and
        # repeated solves at the same count skip two numba calls (~6 µs a solve)
        _local.restore = 0 if n == have else have
        if n != have:
            numba.set_num_threads(n)
        _local.n = n
    return n


_blas_libraries = None


def blas_libraries():
    """threadpoolctl's controllers of the BLAS libraries loaded, found once per process.

    Finding them scans the process's shared objects (~8 ms, measured: a third of a
    small LogisticRegression fit when done per solve); setting a limit on a found
    library costs microseconds."""
    global _blas_libraries
    if _blas_libraries is None:
        from threadpoolctl import ThreadpoolController

        _blas_libraries = [lib for lib in ThreadpoolController().lib_controllers
                           if lib.user_api == "blas"]
    return _blas_libraries


_blas_getters = None


def blas_thread_getters():
    """``[(controller, get)]`` for :func:`blas_libraries`: ``get()`` reads the library's
    thread count as ``controller.get_num_threads()`` does. For OpenBLAS it is the C
    function threadpoolctl calls, found once (its Python wrapper cost ~3-5 µs of a
    cache-cold solve, read twice a solve); other libraries keep the controller's method."""
    global _blas_getters
    libs = blas_libraries()
    if _blas_getters is None or _blas_getters[0] is not libs:
        getters = []
        for lib in libs:
            get = lib.get_num_threads
            try:
                if lib.internal_api == "openblas":
                    raw = lib._get_symbol("omp_get_max_threads" if lib.threading_layer
                                          == "openmp" else "openblas_get_num_threads")
                    if raw is not None and raw() == get():
                        get = raw
            except Exception:  # noqa: BLE001 - another threadpoolctl: its own method
                pass
            getters.append((lib, get))
        _blas_getters = (libs, getters)
    return _blas_getters[1]


def limit_blas_threads(n: int) -> list:
    """Set every BLAS library running other than ``n`` threads to ``n``; the
    ``[(controller, previous count)]`` for :func:`restore_blas_threads` (empty when
    BLAS cannot be read: a missing or odd BLAS only costs speed)."""
    try:
        limits = [(lib, k) for lib, get in blas_thread_getters()
                  if (k := get()) is not None and k != n]
        for lib, _ in limits:
            lib.set_num_threads(n)
    except Exception:  # noqa: BLE001 - see the docstring
        return []
    return limits


def restore_blas_threads(limits: list) -> None:
    """Undo :func:`limit_blas_threads`."""
    for lib, k in limits:
        lib.set_num_threads(k)


class use_threads:  # noqa: N801 - used as a function: ``with use_threads(n):``
    """Run the enclosed solve on ``n`` threads: numba's parallel kernels (set on first
    use, :func:`current_threads`) and, with ``blas=True``, BLAS (threadpoolctl; left
    alone when ``n`` is every core given, BLAS's own default). Restored on exit.
    (A class, not a generator: contextlib's wrapper cost ~1.5 µs of every solve.)"""

    __slots__ = ("_n", "_blas", "_prev", "_limits")

    def __init__(self, n: int, *, blas: bool = False):
        self._n, self._blas = n, blas

    def __enter__(self) -> int:
        self._prev = (getattr(_local, "n", None), getattr(_local, "restore", None))
        _local.n, _local.restore = max(1, int(self._n)), None
        self._limits = (limit_blas_threads(_local.n)
                        if self._blas and _local.n != available_cores() else [])
        return _local.n

    def __exit__(self, *exc):
        restore_blas_threads(self._limits)
        if _local.restore:  # 0: numba's count was already the wanted one
            import numba

            numba.set_num_threads(_local.restore)
        _local.n, _local.restore = self._prev
        return False


#: a τ-nice minibatch runs on threads only when it visits at least this many
#: entries on average (τ · nnz / slices): each minibatch costs two fork-joins of
#: the thread team, which smaller ones do not repay. Measured at 2 threads
#: (benchmarks/results/threads.md, a loaded machine): news20 dual τ=64, ~5,100
#: entries a batch, 0.05× of 1 thread; generated dual τ=256, ~10,000 entries,
#: 1.5×. Between the two; the 2-thread default must not be slower than 1 thread.
PARALLEL_MIN_WORK = 8192


def minibatch_threads(tau: int, nnz: int, n_slices: int) -> int:
    """Threads for τ-nice minibatches over ``n_slices`` slices holding ``nnz`` entries."""
    if tau <= 1 or tau * nnz < PARALLEL_MIN_WORK * max(n_slices, 1):
        return 1
    return current_threads()


#: a serial method's exact parts (a copy of X into its other layout, products with X)
#: run on the solve's threads only from this many stored entries: below it one
#: fork-join of the team (~10-50 µs) is a visible share of the pass.
PARALLEL_MIN_COPY = 1 << 16


def copy_threads(design) -> int:
    """Threads for a serial method's exact parts on sparse float64 X of at least
    :data:`PARALLEL_MIN_COPY` entries (the transposition into its view,
    :meth:`cdlearn.data.Design.view`, and its products with X), else 1."""
    if (not design.is_sparse or design.dtype != np.float64
            or design.nnz < PARALLEL_MIN_COPY):
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
    (face-off eqs. (8)-(9) with ``p_s = τ/m`` and the τ-nice ESO v(τ) of
    :func:`tau_nice_eso`), i.e. ``max_s(1 + β v_s(τ)/(λn))`` epochs of m coordinate
    steps: the ratio of that to its τ = 1 value. ``primal``: coordinates are features
    (ω = row nonzeros), else samples (ω = column nonzeros). From
    :func:`eso_growth_terms`: one pass per design, then any τ in O(m).
    """
    a, b = eso_growth_terms(design, primal=primal)
    m = a.shape[0]
    return _growth(design, a + b * ((tau - 1) / max(1, m - 1)), a, beta, lam)


def partition_epoch_growth(design, n_parts: int, *, beta: float, lam: float,
                           primal: bool) -> float:
    """:func:`eso_epoch_growth`'s counterpart for partitioned CD over ``n_parts`` blocks
    (:class:`Partition`: each minor index's data scaled by √c, c the blocks that touch
    it, CoCoA+'s σ′ per index): ``max_s(1 + γ Σ_k c_k x_sk²)`` over the serial
    ``max_s(1 + γ‖x_s‖²)``, γ = β/(λn)."""
    a, _ = eso_growth_terms(design, primal=primal)
    v = design.derived(f"overlap-powers:{primal}:{n_parts}",
                       lambda: _overlap_powers(design, n_parts, primal))
    return _growth(design, v, a, beta, lam)


def _growth(design, v, serial_v, beta, lam) -> float:
    gamma = beta / (lam * design.n_samples)
    return ((1.0 + gamma * float(v.max(initial=0.0)))
            / (1.0 + gamma * float(serial_v.max(initial=0.0))))


def _coordinate_view(design, primal: bool):
    """The view whose slices are the coordinates (columns for primal CD, rows for dual)
    and the nonzeros per minor index: what the method itself walks."""
    return (design.csc, design.row_nnz) if primal else (design.csr, design.col_nnz)


def eso_growth_terms(design, *, primal: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` per coordinate with the τ-nice ESO ``v_s(τ) = a_s + b_s (τ-1)/max(1, m-1)``
    (:func:`tau_nice_eso`'s weights are linear in τ): ``a`` the squared norms, ``b`` the
    squares weighted by ``ω - 1``. One pass, once per design, so
    :func:`eso_epoch_growth` prices any τ in O(m)."""
    def compute():
        view, minor = _coordinate_view(design, primal)
        b = np.empty(view.indptr.shape[0] - 1)
        weighted_slice_powers(view.data, view.indices, view.indptr,
                              np.asarray(minor, dtype=np.float64) - 1.0, False, b)
        return (design.col_sq_norms if primal else design.row_sq_norms), b

    return design.derived(f"eso-terms:{'primal' if primal else 'dual'}", compute)


def block_overlap(view, parts, n_minor: int) -> np.ndarray:
    """Per minor index, the blocks of slices ``parts`` (bounds) with a nonzero there
    (1 where none; every block on dense data)."""
    k = parts.shape[0] - 1
    if view.indices.shape[0] == 0:  # dense: every block may touch every minor index
        return np.full(n_minor, float(k))
    c = np.zeros(n_minor)
    for lo, hi in zip(parts[:-1], parts[1:], strict=True):
        seen = np.zeros(n_minor, dtype=bool)
        seen[view.indices[view.indptr[lo]:view.indptr[hi]]] = True
        c += seen
    c[c == 0.0] = 1.0
    return c


def _overlap_powers(design, n_parts: int, primal: bool) -> np.ndarray:
    """``Σ_k c_k x_sk²`` per coordinate s for :class:`Partition`'s ``n_parts`` blocks."""
    from ..kernels.parallel_cd import block_bounds

    view, _ = _coordinate_view(design, primal)
    slice_nnz = design.col_nnz if primal else design.row_nnz
    n_minor = design.n_samples if primal else design.n_features
    c = block_overlap(view, block_bounds(slice_nnz, n_parts), n_minor)
    out = np.empty(view.indptr.shape[0] - 1)
    weighted_slice_powers(view.data, view.indices, view.indptr, c, False, out)
    return out


class Partition:
    """``K`` contiguous blocks of the slices of ``view`` (rows for dual CD, columns for
    primal CD) for :mod:`cdlearn.kernels.partition_cd`: the block bounds, ``√c`` per
    minor index (``c`` = blocks with a nonzero there, 1 where none), the view's data
    scaled by it, a ``(K, n_minor)`` work array, the merge's ranges and ``K`` random
    states from ``seed``. Runs on :func:`current_threads` threads (``n_threads``)."""

    def __init__(self, view, slice_nnz, n_minor: int, n_parts: int, seed):
        from ..kernels.parallel_cd import block_bounds

        self.parts = block_bounds(slice_nnz, n_parts)
        k = self.parts.shape[0] - 1
        dense = view.indices.shape[0] == 0
        self.overlap = c = block_overlap(view, self.parts, n_minor)
        self.scale = np.sqrt(c)
        if dense:
            scaled = view.data.reshape(-1, n_minor) * self.scale
        else:
            scaled = view.data * self.scale[view.indices]
        self.data = np.ascontiguousarray(scaled.ravel(), dtype=view.data.dtype)
        self.n_threads = min(k, current_threads(always_parallel=True))
        self.local = np.empty((k, n_minor))
        self.blocks = np.linspace(0, n_minor, max(self.n_threads, 1) + 1).round().astype(np.int64)
        seeds = np.random.SeedSequence(None if seed is None else int(seed)).spawn(k)
        self.rngs = np.array([[int(s.generate_state(1, dtype=np.uint64)[0]) | 1]
                              for s in seeds], dtype=np.uint64)

    def minor_weighted_powers(self, view, weights=None) -> np.ndarray:
        """``Σ_k c_k r_k x_sk²`` per slice (weights ``r``, default 1): the scaled slices'
        squared norms, the blocks' ESO / Lipschitz constants."""
        w = self.overlap if weights is None else self.overlap * weights
        out = np.empty(view.indptr.shape[0] - 1)
        weighted_slice_powers(view.data, view.indices, view.indptr, w, False, out)
        return out


def check_partition(partition, n_coords: int) -> int:
    """``partition`` of dual / primal CD as a block count: None or 0 = off."""
    if partition is None:
        return 0
    if isinstance(partition, bool) or not isinstance(partition, int | np.integer):
        raise TypeError(f"partition must be an integer or None, got {type(partition).__name__}")
    if partition < 0:
        raise ValueError(f"partition must be >= 0 (blocks), got {partition}")
    if partition > n_coords:
        raise ValueError(f"partition={partition} exceeds the {n_coords} coordinates")
    return int(partition)
