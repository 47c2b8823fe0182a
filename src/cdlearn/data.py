"""Validated design matrix: the only place where input is checked.

A :class:`Design` holds the data once, in the layouts the solvers ask for, and
the per-row / per-column quantities every CD method needs (squared norms and
nonzero counts). Kernels never see scipy objects: they get a *compressed
view* ``(data, indices, indptr)`` along the axis they walk -- columns for primal
CD, rows for dual CD. A dense matrix is given as the same triple with an empty
``indices`` array and a regular ``indptr``; kernels detect that and index
implicitly, so dense and sparse share one kernel (lightning's row/column view
idea) and one compiled signature per float type.
"""

from __future__ import annotations

import math
import numbers
import threading
import weakref
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

__all__ = [
    "Design",
    "CompressedView",
    "as_design",
    "DesignCache",
    "design_cache",
    "check_target",
    "check_sample_weight",
    "check_positive",
    "check_choice",
    "check_finite",
    "check_int",
    "check_seed",
    "BINARY_LOSSES",
]

BINARY_LOSSES = frozenset({"logistic", "squared_hinge", "smooth_hinge", "hinge"})

_INT32_MAX = np.iinfo(np.int32).max
#: Largest |x_ij| accepted. The solvers need squared norms, their products
#: with n, d and 1/λ, and norms of Gram products (FISTA's power iteration
#: squares ‖XᵀXv‖: NaN at |x| = 1e99); beyond this they leave the float64
#: range (at 1e150 a dual point overflowed to -1e266 and the reported gap no
#: longer meant anything), so such input is refused instead of silently
#: rescaled (the caller knows best how to scale it).
MAX_ABS_VALUE = 1e50

#: Arrays of at most this many entries take numpy forms of the numba loops (here and
#: in the certificates of :mod:`cdlearn.losses` / :mod:`cdlearn.penalties`). On an
#: empty numba cache each numba function costs 0.2-0.3 s to compile, more than the
#: numpy form loses on such arrays over a whole fit (issue 22: a first fit on a small
#: problem within 3 s); above it the loops, which make no temporaries, are faster.
#: 2^12: the first fits issue 22 is about (scikit-learn's toy sets, <= 1,797 rows and
#: 64 features) stay below it, while a warm solve on 10,000 rows gains 10-20% from the
#: loops (a logistic certificate in numpy takes 2-6× the loop's time: exp and log1p over
#: temporaries; benchopt's L1 logistic on 10,000 × 100 at reg 0.5: 11.8 -> 9.7 ms CPU).
SMALL_ARRAY = 1 << 12
#: The same for a pass made once per fit (the validation scan, a layout copy): up to
#: this many entries numpy's pass (a few ms) costs less than one compilation.
SMALL_INPUT = 1 << 17


@njit(cache=True)
def _compressed_statistics(data, indices, indptr, major_sq, minor_sq, major_nnz, minor_nnz):
    """Squared norms and nonzero counts of both axes, in one pass.

    (scipy's ``M.multiply(M)``, two sums and ``getnnz(axis=...)``: 145 ms on
    a 10⁷-nonzero matrix, this: 44 ms; for dense data numpy's ``A * A`` and
    ``A != 0`` are temporaries of 1.1× the matrix.) Dense data: empty ``indices``.
    """
    dense = indices.shape[0] == 0
    for s in range(indptr.shape[0] - 1):
        start, end = indptr[s], indptr[s + 1]
        acc = 0.0
        count = 0
        for k in range(start, end):
            v = np.float64(data[k])
            if v != 0.0:
                i = k - start if dense else indices[k]
                acc += v * v
                minor_sq[i] += v * v
                minor_nnz[i] += 1
                count += 1
        major_sq[s] = acc
        major_nnz[s] = count


@njit(cache=True)
def _transpose_compressed(data, indices, indptr, out_data, out_indices, out_indptr):
    """The other layout of a compressed matrix (CSC <-> CSR), sorted, by a counting sort.

    Allocates nothing but a position vector: scipy's ``tocsr``/``tocsc`` also
    copies the index arrays first (0.3× more of a CSC input at its peak).
    """
    for k in range(indices.shape[0]):
        out_indptr[indices[k] + 1] += 1
    for i in range(out_indptr.shape[0] - 1):
        out_indptr[i + 1] += out_indptr[i]
    pos = out_indptr[:-1].copy()
    for s in range(indptr.shape[0] - 1):
        for k in range(indptr[s], indptr[s + 1]):
            i = indices[k]
            p = pos[i]
            out_indices[p] = s
            out_data[p] = data[k]
            pos[i] = p + 1


@njit(cache=True, parallel=True, nogil=True)
def _transpose_compressed_blocks(data, indices, indptr, out_data, out_indices, out_indptr,
                                 bounds):
    """:func:`_transpose_compressed` on threads, the input's slices in blocks ``bounds``.

    Every block counts its entries per output slice, the counts give each block
    its own start in every output slice (blocks in order), and every block then
    places its entries from there: the output is the same sorted matrix on any
    number of blocks, for ``(blocks - 1) × minor`` more index memory.
    """
    n_blocks = bounds.shape[0] - 1
    n_out = out_indptr.shape[0] - 1
    pos = np.zeros((n_blocks, n_out), dtype=out_indptr.dtype)
    for b in prange(n_blocks):
        for k in range(indptr[bounds[b]], indptr[bounds[b + 1]]):
            pos[b, indices[k]] += 1
    total = 0
    for i in range(n_out):
        out_indptr[i] = total
        for b in range(n_blocks):
            count = pos[b, i]
            pos[b, i] = total
            total += count
    out_indptr[n_out] = total
    for b in prange(n_blocks):
        for s in range(bounds[b], bounds[b + 1]):
            for k in range(indptr[s], indptr[s + 1]):
                i = indices[k]
                p = pos[b, i]
                out_indices[p] = s
                out_data[p] = data[k]
                pos[b, i] = p + 1


@njit(cache=True)
def _transposed(M, out):
    """``out = M.ravel(order="F")`` for a C-contiguous 2-d M, in cache-sized blocks.

    numpy's strided copy took 10-14 ms for a 10,000 × 100 float64 matrix (the
    column view primal CD walks, built on every solve of C-ordered input), this
    1.8 ms.
    """
    a, b = M.shape
    block = 64
    for i0 in range(0, a, block):
        i1 = min(i0 + block, a)
        for j in range(b):
            for i in range(i0, i1):
                out[j * a + i] = M[i, j]


def _raveled(A, order: str) -> np.ndarray:
    """``A.ravel(order)`` as a contiguous array, transposed by :func:`_transposed`."""
    if A.flags.c_contiguous and A.flags.f_contiguous or A.ndim != 2:
        return np.ascontiguousarray(A.ravel(order=order))
    if order == "F" and A.flags.c_contiguous:
        M = A
    elif order == "C" and A.flags.f_contiguous:
        M = A.T
    else:
        return np.ascontiguousarray(A.ravel(order=order))
    if A.size <= SMALL_INPUT:
        return np.ascontiguousarray(A.ravel(order=order))
    out = np.empty(A.size, dtype=A.dtype)
    _transposed(M, out)
    return out


@njit(cache=True)
def _view_product(data, indices, indptr, x, out, gather):
    """``out = A x`` (``gather``) or ``out += Aᵀ x`` for A the compressed triple.

    Reads float32 data as it is and accumulates in float64: numpy and scipy
    would first convert the whole matrix to float64 (a temporary of 2× a dense
    float32 input). Dense data: empty ``indices``, regular ``indptr``.
    """
    dense = indices.shape[0] == 0
    for s in range(indptr.shape[0] - 1):
        start, end = indptr[s], indptr[s + 1]
        if gather:
            acc = 0.0
            for k in range(start, end):
                acc += np.float64(data[k]) * x[k - start if dense else indices[k]]
            out[s] = acc
        else:
            xs = x[s]
            for k in range(start, end):
                out[k - start if dense else indices[k]] += np.float64(data[k]) * xs


@dataclass(frozen=True)
class CompressedView:
    """One axis of the design as a compressed triple.

    ``major`` is the axis walked (columns for CSC, rows for CSR); entry ``k`` of
    slice ``i`` lives at ``data[indptr[i]:indptr[i+1]]``. For dense data
    ``indices`` is empty and the minor index of entry ``k`` is ``k - indptr[i]``.
    """

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    n_major: int
    n_minor: int

    @property
    def is_dense(self) -> bool:
        return self.indices.shape[0] == 0 and self.data.shape[0] > 0


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError naming ``name``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(
            f"{name}={value!r} is not supported; choose one of {sorted(choices)}"
        )
    return value


def check_positive(name: str, value, *, allow_zero: bool = False) -> float:
    """A finite real number > 0 (or >= 0 with ``allow_zero``)."""
    value = check_finite(name, value)
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def check_finite(name: str, value) -> float:
    """A finite real number (NaN and infinities raise a ValueError naming ``name``)."""
    # floats (numpy's float64 among them) first: numbers.Real is an ABC, whose check
    # walks its registry (several per solve, slower still on a cold cache)
    if not isinstance(value, float) and (isinstance(value, bool)
                                         or not isinstance(value, numbers.Real)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_int(name: str, value, *, low: int = 1) -> int:
    """An integer ``>= low`` (bools and floats such as 2.5 or nan raise, naming ``name``)."""
    if type(value) is not int and (isinstance(value, bool)  # int first: no ABC check
                                   or not isinstance(value, numbers.Integral)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def check_seed(name: str, value) -> int | None:
    """None or a non-negative integer (numpy's ``SeedSequence`` rule), everywhere a seed is taken."""
    if value is None:
        return None
    if type(value) is not int and (isinstance(value, bool)
                                   or not isinstance(value, numbers.Integral)):
        raise TypeError(f"{name} must be a non-negative integer or None, got "
                        f"{type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer or None, got {value}")
    return int(value)


#: the sign bit of a float64 / float32 bit pattern, and the smallest pattern of |x| that
#: is not finite (infinity; NaNs are above it)
_SIGN = {8: np.uint64(1 << 63), 4: np.uint64(1 << 31)}
_INF_BITS = {8: 0x7FF0000000000000, 4: 0x7F800000}
_UINT = {8: np.uint64, 4: np.uint32}


#: widths (bytes) of the bit patterns :func:`_scan_loop` has run on in this process
_LOOP_WIDTHS: set = set()
#: width -> whether numba's on-disk cache holds :func:`_scan_loop` for it (read once)
_LOOP_ON_DISK: dict = {}


def _loop_is_free(width: int) -> bool:
    """Whether running :func:`_scan_loop` on patterns of ``width`` bytes compiles nothing:
    it ran in this process, or numba's cache on disk holds it for this machine (then it
    loads in milliseconds). A repeat of a small X takes the loop only then
    (:meth:`DesignCache.design`), so no fit compiles for a small X (issue 22)."""
    if width in _LOOP_WIDTHS:
        return True
    if width not in _LOOP_ON_DISK:
        try:  # numba's cache index: {(signature, target magic): data file}, {} when stale
            index = _scan_loop._cache._cache_file._load_index()
            magic = _scan_loop.targetctx.codegen().magic_tuple()
            _LOOP_ON_DISK[width] = any(
                key[1] == magic and key[0][0].dtype.bitwidth == 8 * width for key in index)
        except Exception:  # noqa: BLE001 - another numba layout: take numpy's form
            _LOOP_ON_DISK[width] = False
    return _LOOP_ON_DISK[width]


def _scan(bits, sign, loop: bool = False, counting: bool = True):
    """:func:`_scan_loop`, or :func:`_scan_numpy` on up to :data:`SMALL_INPUT` entries
    while the loop has not run for their width: once compiled (a large X, warm-up, or
    ``loop=True``: an X seen before, the loop in numba's cache, :meth:`DesignCache.design`)
    the loop also takes small arrays (y's fingerprint per call: 10,000 entries 0.16 ms in numpy, ~0.01 ms in
    the loop; a 300 × 60 X 0.24 ms, 0.012 ms), with the same result. ``counting=False``:
    the number of nonzeros may be None (the loop skips it: a hit on a cached design has
    it, 10,000 × 100: 0.46 -> 0.37 ms)."""
    if loop or bits.shape[0] > SMALL_INPUT or bits.dtype.itemsize in _LOOP_WIDTHS:
        top, count, fingerprint = _scan_loop(bits, sign, counting)
        _LOOP_WIDTHS.add(bits.dtype.itemsize)
        return top, count if counting else None, fingerprint
    return _scan_numpy(bits, sign)


def _scan_numpy(bits, sign):
    """:func:`_scan_loop` as numpy expressions (by blocks of 4,096: temporaries that
    fit in the cache, no page faults), which compile nothing."""
    keep = ~np.uint64(sign)
    top = np.uint64(0)
    count = 0
    sums = np.zeros(-(-bits.shape[0] // 4096), dtype=np.uint64)  # summed modulo 2⁶⁴
    for block, start in enumerate(range(0, bits.shape[0], 4096)):
        b = bits[start:start + 4096].astype(np.uint64)
        a = b & keep
        top = max(top, a.max(initial=np.uint64(0)))
        count += int(np.count_nonzero(a))
        k = np.arange(start, start + b.shape[0], dtype=np.uint64)
        z = b ^ (k * np.uint64(0x9E3779B97F4A7C15))
        z ^= z >> np.uint64(32)
        z *= np.uint64(0xD6E8FEB86659FD93)
        z ^= z >> np.uint64(32)
        sums[block] = z.sum(dtype=np.uint64)
    return top, count, sums.sum(dtype=np.uint64)


@njit(cache=True)
def _scan_loop(bits, sign, counting):
    """``(bits of max |x|, number of nonzeros, fingerprint)`` of an array's bit patterns.

    ``bits`` is a float array viewed as unsigned integers of its width, ``sign``
    its sign bit. For a non-negative float the bit pattern orders as the value
    does, so the integer maximum of ``|x|``'s patterns is the pattern of
    ``max |x|`` (NaN and infinity above every finite one), with no branch on NaN
    and no temporary of the input's size. The fingerprint (:class:`DesignCache`)
    sums a mix of every pattern with its position: a changed, moved or swapped
    entry changes it (two different arrays agree with probability about 2⁻⁶⁴).
    Integer index arrays get their fingerprint the same way. ``counting=False``
    returns 0 nonzeros (that loop is 20% faster).
    """
    if counting:
        return _scan_pass(bits, sign, True)
    return _scan_pass(bits, sign, False)


@njit(inline="always")
def _scan_pass(bits, sign, counting):
    # one vectorised loop per value of the literal ``counting`` (inlined twice)
    top = np.int64(0)
    count = 0
    fingerprint = np.uint64(0)
    keep = ~np.uint64(sign)
    step = np.uint64(0x9E3779B97F4A7C15)
    mix = np.uint64(0)  # k · step, accumulated (no multiply per entry: 27% off the pass)
    for k in range(bits.shape[0]):
        b = np.uint64(bits[k])
        # below 2⁶³ once the sign bit is cleared: a signed maximum, which AVX2 has
        # (its unsigned one is emulated), gives the same value, 10% faster
        a = np.int64(b & keep)
        top = max(top, a)
        if counting:
            count += np.int64(a != 0)
        z = b ^ mix
        mix += step
        z ^= z >> np.uint64(32)
        z *= np.uint64(0xD6E8FEB86659FD93)
        z ^= z >> np.uint64(32)
        fingerprint += z
    return np.uint64(top), count, fingerprint


def _flat_bits(values: np.ndarray) -> np.ndarray:
    """``values`` as a 1-d array of unsigned integers of its width (in place when contiguous)."""
    flat = values.ravel(order="K") if (values.flags.c_contiguous or
                                       values.flags.f_contiguous) else values.ravel()
    return flat.view(_UINT[flat.dtype.itemsize])


def _check_values(name: str, values: np.ndarray, scanned=None) -> tuple[int, int]:
    """NaN, infinity or entries beyond MAX_ABS_VALUE in ``values`` raise a ValueError;
    returns ``(number of nonzeros, fingerprint)`` (:func:`_scan`; ``scanned``: its
    result for ``values``, already computed).

    One pass with no temporary of the input's size, which a matrix of 10⁷ entries
    would pay as 80 MB for ``np.abs`` and 10 MB for an ``isfinite`` mask (``max``,
    ``min`` and ``count_nonzero`` took three passes: ~7 ms of a 10,000 × 100 solve's
    set-up). Contiguous arrays in either order are read in place.
    """
    if values.size == 0:
        return 0, 0
    width = values.dtype.itemsize
    top, count, fingerprint = scanned or _scan(_flat_bits(values), _SIGN[width])
    if count is None:  # the design cache's scan of an X it expected to hit (no count):
        # the loop again (np.count_nonzero takes longer on floats: 0.53 against 0.48 ms)
        count = _scan(_flat_bits(values), _SIGN[width], True)[1]
    top = int(top)
    if top >= _INF_BITS[width]:
        raise ValueError(f"{name} contains NaN or infinity")
    magnitude = float(np.array(top, dtype=_UINT[width]).view(values.dtype))
    if magnitude > MAX_ABS_VALUE:
        raise ValueError(f"{name} has entries of magnitude {magnitude:.3g} > "
                         f"{MAX_ABS_VALUE:g}, beyond what the solvers' certificates can "
                         f"represent in float64; rescale {name} (e.g. divide it by its "
                         "largest entry)")
    return int(count), int(fingerprint)


def _fingerprint(values: np.ndarray, repeat: bool = False) -> int:
    """The fingerprint of :func:`_scan` of any contiguous integer or float array
    (``repeat``: the caller has seen such an array before, so the compiled loop is taken
    when it compiles nothing, as for a repeated X in :meth:`DesignCache.design`)."""
    bits = _flat_bits(values)
    if not bits.size:
        return 0
    width = bits.dtype.itemsize
    return int(_scan(bits, _SIGN[width], repeat and _loop_is_free(width), False)[2])


def _float_dtype(dtype) -> np.dtype:
    # float32 stays float32 end to end; everything else computes in float64.
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def _index_dtype(n_entries: int) -> np.dtype:
    return np.dtype(np.int32) if n_entries <= _INT32_MAX else np.dtype(np.int64)


def _is_sparse(X) -> bool:
    """``sp.issparse(X)``, with an ndarray answered first (issparse is an ABC check)."""
    return type(X) is not np.ndarray and sp.issparse(X)


def _stored_triple(M):
    """``(data, indices, indptr, by_rows)`` of a stored matrix, as kernels read it.

    Sparse: its own arrays. Dense: a compressed view (empty ``indices``) along
    the contiguous axis, so the data are not copied.
    """
    if sp.issparse(M):
        return M.data, M.indices, M.indptr, M.format == "csr"
    by_rows = not (M.flags.f_contiguous and not M.flags.c_contiguous)
    data = M.ravel(order="C" if by_rows else "F")  # a view when contiguous
    idx = _index_dtype(M.size)
    step = M.shape[1] if by_rows else M.shape[0]
    return data, np.empty(0, idx), np.arange(0, M.size + 1, step, dtype=idx), by_rows


def _canonical_or_none(X, dtype):
    """``X`` wrapped without a copy when it is already what the kernels read, else None.

    That is CSR or CSC with values of ``dtype``, int32 indices, sorted
    indices without duplicates and no stored zeros: then the Design shares
    the caller's arrays (a copy would double the memory of a solve).
    """
    if X.format not in ("csr", "csc") or X.dtype != dtype:
        return None
    data, indices, indptr = X.data, X.indices, X.indptr
    if indices.dtype != np.int32 or indptr.dtype != np.int32:
        return None
    if not (data.flags.c_contiguous and indices.flags.c_contiguous
            and indptr.flags.c_contiguous):
        return None
    nnz = int(indptr[-1])
    if data.shape[0] != nnz or indices.shape[0] != nnz:
        return None
    cls = sp.csr_matrix if X.format == "csr" else sp.csc_matrix
    M = cls((data, indices, indptr), shape=X.shape, copy=False)
    if not np.may_share_memory(M.data, data):
        return None
    # a fresh object: its canonical flag is computed here, not taken from X
    if not M.has_canonical_format or np.count_nonzero(data) != nnz:
        return None
    return M


class Design:
    """A validated ``(n_samples, n_features)`` design matrix.

    Parameters
    ----------
    X : array-like, scipy.sparse matrix or array
        Dense ndarray or any scipy.sparse format (CSC, CSR, COO, ...). float32 is
        kept float32; other dtypes become float64. CSR or CSC input of float32 or
        float64 with int32, sorted, duplicate-free indices and no stored zeros
        is used as is (the Design shares its arrays: do not modify them during a
        solve); anything else is canonicalised on a copy. The caller's matrix is
        never modified.

    Attributes
    ----------
    n_samples, n_features, nnz : int
    dtype : numpy dtype of the stored values (float32 or float64)
    col_sq_norms, row_sq_norms : float64 arrays, ``||X[:, j]||^2`` and ``||x_i||^2``
        (each computed on first use)
    col_nnz, row_nnz : int64 arrays of nonzeros per column / row
    """

    def __init__(self, X, *, name: str = "X", _scanned=None):
        self.name = name
        if isinstance(X, Design):
            self.__dict__.update(X.__dict__)
            return
        if sp.issparse(X):
            self._init_sparse(X, _scanned)
        else:
            self._init_dense(X, _scanned)
        self._csc: CompressedView | None = None
        self._csr: CompressedView | None = None
        self._products: dict = {}  # scipy matrices over the built views (no copies)
        self._derived: dict = {}  # see derived()
        self._stats: dict = {}  # see _statistic()

    @classmethod
    def _from_state(cls, X, name: str, state: dict) -> Design:
        """The design of an input validated before, unchanged since (:class:`DesignCache`):
        its statistics and derived values are ``state``'s, its views of X are remade."""
        self = cls.__new__(cls)
        self.name = name
        self.n_samples, self.n_features = X.shape
        self.dtype = X.dtype
        self.is_sparse = _is_sparse(X)
        if self.is_sparse:
            kind = sp.csr_matrix if X.format == "csr" else sp.csc_matrix
            self._sparse = kind((X.data, X.indices, X.indptr), shape=X.shape, copy=False)
            self._dense = None
        else:
            self._sparse = None
            self._dense = X
        self.nnz = state["nnz"]
        self._csc = self._csr = None
        self._products = {}
        self._derived = state["derived"]
        self._stats = state["stats"]
        return self

    # ------------------------------------------------------------------ input
    def _init_sparse(self, X, scanned=None):
        name = self.name
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-dimensional, got shape {X.shape}")
        n, d = X.shape
        if n == 0 or d == 0:
            raise ValueError(f"{name} is empty: shape {X.shape}")
        if X.dtype.kind not in "fiub":
            raise TypeError(f"{name} has unsupported dtype {X.dtype}")
        dtype = _float_dtype(X.dtype)
        M = _canonical_or_none(X, dtype)
        if M is None:
            if X.format == "csr":
                M = sp.csr_matrix(X, dtype=dtype, copy=True)
            else:
                # CSC, COO, LIL, DOK, BSR ... : CSC is the primal layout, make it once.
                M = sp.csc_matrix(X, dtype=dtype, copy=True)
            M.sum_duplicates()  # also sorts indices
            M.eliminate_zeros()
            scanned = None  # the scan was of X's values, not of these
        _check_values(name, M.data, scanned)
        self.n_samples, self.n_features = n, d
        self.dtype = dtype
        self.is_sparse = True
        self._sparse = M
        self._dense = None
        self.nnz = int(M.nnz)

    def _init_dense(self, X, scanned=None):
        name = self.name
        if isinstance(X, (str, bytes)) or X is None:
            raise TypeError(f"{name} must be an array or a scipy.sparse matrix, got {type(X).__name__}")
        try:
            A = np.asarray(X)
        except Exception as exc:  # ragged lists and similar
            raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
        if A.dtype == object or A.dtype.kind not in "fiub":
            raise TypeError(f"{name} must be numeric, got dtype {A.dtype}")
        if A.ndim != 2:
            raise ValueError(
                f"{name} must be 2-dimensional (n_samples, n_features), got shape {A.shape}"
            )
        n, d = A.shape
        if n == 0 or d == 0:
            raise ValueError(f"{name} is empty: shape {A.shape}")
        dtype = _float_dtype(A.dtype)
        if A.dtype != dtype:
            A, scanned = np.asarray(A, dtype=dtype), None
        nnz = _check_values(name, A, scanned)[0]
        self.n_samples, self.n_features = n, d
        self.dtype = dtype
        self.is_sparse = False
        self._sparse = None
        self._dense = A
        self.nnz = nnz

    def _statistic(self, name: str) -> np.ndarray:
        """One of ``row_sq_norms``, ``row_nnz``, ``col_sq_norms``, ``col_nnz``.

        Each is computed on first use (one pass over X gives all four; the
        others are dropped) and kept. Why not all at once: a method reads one
        or two of them, and the d-length ones are a share of wide inputs held
        for the whole solve (dual CD, SPDC: the column pair was 0.14× the
        input on the 10⁶-column Nesterov Lasso, ws-cd: ``col_nnz`` 0.03× on news20).
        """
        stats = self.__dict__.setdefault("_stats", {})
        value = stats.get(name)
        if value is None and not self.is_sparse and self.dtype == np.float64:
            # dense float64: only the statistic asked for, vectorised (10,000 × 100:
            # the one-pass kernel's per-entry branch cost 2-7 ms, einsum ~0.5 ms)
            A = self._dense
            axis = 1 if name.startswith("row") else 0
            if name.endswith("sq_norms"):
                value = np.einsum("ij,ij->i" if axis else "ij,ij->j", A, A)
            else:
                value = np.count_nonzero(A, axis=axis).astype(np.int64)
            stats[name] = value
        if value is None:
            data, indices, indptr, by_rows = _stored_triple(self.to_scipy())
            n, d = self.shape
            n_major, n_minor = (n, d) if by_rows else (d, n)
            major_sq, minor_sq = np.zeros(n_major), np.zeros(n_minor)
            major_nnz = np.zeros(n_major, dtype=np.int64)
            minor_nnz = np.zeros(n_minor, dtype=np.int64)
            _compressed_statistics(data, indices, indptr, major_sq, minor_sq, major_nnz,
                                   minor_nnz)
            rows = name.startswith("row")
            sq, nnz = (major_sq, major_nnz) if by_rows == rows else (minor_sq, minor_nnz)
            value = stats[name] = sq if name.endswith("sq_norms") else nnz
        return value

    @property
    def row_sq_norms(self) -> np.ndarray:
        return self._statistic("row_sq_norms")

    @property
    def row_nnz(self) -> np.ndarray:
        return self._statistic("row_nnz")

    @property
    def col_sq_norms(self) -> np.ndarray:
        return self._statistic("col_sq_norms")

    @property
    def col_nnz(self) -> np.ndarray:
        return self._statistic("col_nnz")

    # ------------------------------------------------------------------ views
    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_samples, self.n_features)

    @property
    def density(self) -> float:
        return self.nnz / (self.n_samples * self.n_features)

    @property
    def csc(self) -> CompressedView:
        """Column view (what primal CD walks). Built once, then cached."""
        return self.view("csc")

    @property
    def csr(self) -> CompressedView:
        """Row view (what dual CD walks). Built once, then cached."""
        return self.view("csr")

    def view(self, layout: str, threads: int = 1) -> CompressedView:
        """The ``"csc"`` or ``"csr"`` view; one that is the input's other layout is
        transposed on ``threads`` threads if it is not built yet (same bits on any count)."""
        if layout == "csc":
            if self._csc is None:
                self._csc = self._view("csc", threads)
            return self._csc
        if self._csr is None:
            self._csr = self._view("csr", threads)
        return self._csr

    def _view(self, layout: str, threads: int = 1) -> CompressedView:
        """The ``layout`` view; one that is a copy (the input's other layout) is kept
        with :meth:`derived`, so that a cached design (:class:`DesignCache`) makes it
        once per X. A view of the input itself is not kept there: it would keep X alive."""
        key = "view:" + layout
        view = self._derived.get(key)
        if view is None:
            view = self._make_view(axis=1 if layout == "csc" else 0, threads=threads)
            source = self._sparse.data if self.is_sparse else self._dense
            copied = view.data.nbytes + view.indices.nbytes + view.indptr.nbytes
            # a large copy is not kept past this design: the cache would hold it for as
            # long as X lives, a second X-sized allocation the caller cannot see
            if not np.may_share_memory(view.data, source) and copied <= CACHED_COPY_MAX_BYTES:
                self._derived[key] = view
        return view

    def _make_view(self, axis: int, threads: int = 1) -> CompressedView:
        n, d = self.shape
        n_major, n_minor = (d, n) if axis == 1 else (n, d)
        if self.is_sparse:
            M = self._sparse
            idx = _index_dtype(max(M.nnz, n_minor))
            if (M.format == "csc") == (axis == 1):  # the stored layout (canonical)
                return CompressedView(M.data, M.indices.astype(idx, copy=False),
                                      M.indptr.astype(idx, copy=False), n_major, n_minor)
            data = np.empty(M.nnz, dtype=M.dtype)
            indices = np.empty(M.nnz, dtype=idx)
            indptr = np.zeros(n_major + 1, dtype=idx)
            if threads > 1:  # blocks of ~equal entries
                bounds = np.searchsorted(M.indptr, M.nnz * np.arange(threads + 1) / threads)
                bounds[-1] = M.indptr.shape[0] - 1
                _transpose_compressed_blocks(M.data, M.indices, M.indptr, data, indices,
                                             indptr, bounds.astype(np.int64))
            else:
                _transpose_compressed(M.data, M.indices, M.indptr, data, indices, indptr)
            return CompressedView(data, indices, indptr, n_major, n_minor)
        A = self._dense
        data = _raveled(A, "F" if axis == 1 else "C")
        idx = _index_dtype(A.size)
        indptr = np.arange(0, A.size + 1, n_minor, dtype=idx)
        return CompressedView(data, np.empty(0, idx), indptr, n_major, n_minor)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` as float64."""
        M = self._product_matrix(prefer_csc=self.n_features > 4 * self.n_samples)
        if self.dtype == np.float32:
            return self._float32_product(M, w, transpose=False)
        return np.asarray(M @ w, dtype=np.float64).ravel()

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``X.T @ r`` as float64."""
        M = self._product_matrix(prefer_csc=self.n_samples <= self.n_features)
        if self.dtype == np.float32:
            return self._float32_product(M, r, transpose=True)
        return np.asarray(M.T @ r, dtype=np.float64).ravel()

    def _float32_product(self, M, vec, *, transpose: bool) -> np.ndarray:
        """``M @ vec`` or ``M.T @ vec`` in float64 without a float64 copy of M."""
        data, indices, indptr, by_rows = _stored_triple(M)
        out = np.zeros(self.n_features if transpose else self.n_samples)
        vec = np.ascontiguousarray(vec, dtype=np.float64).ravel()
        _view_product(data, indices, indptr, vec, out, by_rows != transpose)
        return out

    def _product_matrix(self, prefer_csc: bool):
        """The sparse layout a product should use, among those already built.

        The random accesses of a sparse product should go to the smaller
        vector: ``Xᵀr`` over columns gathers ``r`` (n entries), over rows it
        scatters into d outputs; ``Xw`` over rows gathers ``w`` (d entries),
        over columns it scatters into n. Measured on the Nesterov Lasso (10⁵ ×
        10⁶, CSR input): ``Xᵀr`` 68 ms from CSR, 20 ms from CSC; ``Xw`` 45 ms
        from CSR, 21 ms from CSC (news20, 4× more features than samples: ``Xw``
        from CSR is still the faster, hence the factor 4 for ``Xw``). A view is
        never built for this: only one a solver already asked for is used.
        """
        if not self.is_sparse:
            return self._dense
        view = self._csc if prefer_csc else self._csr
        if view is None or view.indices.shape[0] == 0:
            return self._sparse
        return self.scipy_layout("csc" if prefer_csc else "csr")

    def scipy_layout(self, layout: str):
        """The matrix as a scipy ``"csc"`` or ``"csr"`` matrix over that view's arrays.

        The view is built once (:attr:`csc`, :attr:`csr`) and shared: no other
        copy. Dense data is returned as stored. Do not modify the result.
        """
        if not self.is_sparse:
            return self._dense
        M = self._products.get(layout)
        if M is None:
            view = self.csc if layout == "csc" else self.csr
            cls = sp.csc_matrix if layout == "csc" else sp.csr_matrix
            M = cls((view.data, view.indices, view.indptr), shape=self.shape, copy=False)
            self._products[layout] = M
        return M

    def derived(self, key: str, compute):
        """``compute()``, made once per design and cached under ``key``.

        For set-up that depends on X alone (dual CD's candidate groups of
        identical rows): a regularisation path, cross-validation or
        one-vs-rest solves the same design many times. ``compute`` must
        return a value the caller does not modify.
        """
        cache = self.__dict__.setdefault("_derived", {})
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = compute()
            return value

    def to_scipy(self):
        """The stored matrix (scipy.sparse or ndarray); do not modify it."""
        return self._sparse if self.is_sparse else self._dense

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return (
            f"Design({self.n_samples} x {self.n_features}, {kind}, nnz={self.nnz}, "
            f"dtype={self.dtype})"
        )


#: the largest copied layout (bytes) a design keeps with :meth:`Design.derived`, and so
#: :class:`DesignCache` across calls; larger copies are remade per call
CACHED_COPY_MAX_BYTES = 64 * 2**20


class DesignCache:
    """The validated designs of recent inputs, for :func:`as_design` to reuse.

    Why: a loop over targets, a sequence of warm-started fits, repeated
    estimator fits or paths on one X would otherwise re-validate X and
    recompute its statistics (norms, nonzero counts), its other layout (a copy
    of X for C-ordered dense or CSR input) and the set-up of
    :meth:`Design.derived` (Gram matrix, identical rows) on every call.

    The key: an entry belongs to one array object (a weak reference, so the
    cache never keeps X alive and the entry goes with X), its layout (shape,
    strides, dtype) and a 64-bit fingerprint of its contents
    (:func:`_scan`, position-dependent). The fingerprint is computed in the
    same pass as the validation every call needs anyway (NaN, infinity,
    magnitude), so a hit costs that one pass and no more. A different array, a
    view of X, a replaced array with other contents or X mutated in place (``X *= 2``,
    ``X[i, j] = v``, a shuffle of its rows) misses: nothing stale is served,
    whatever the caller does to X between calls. Identity alone would serve
    stale statistics after an in-place change; scoping the reuse to one
    path or cross-validation call would not serve a user's own loop. Two
    different contents share a fingerprint with probability about 2⁻⁶⁴.

    Cached: dense float32/float64 arrays in C or F order, and CSR/CSC matrices
    the design shares without a copy (canonical, int32 indices); other inputs
    are converted on every call. What an entry holds is what the design owns
    (statistics, derived values, a copied layout), never X's memory: a view
    of X is remade per call (O(1)). Memory: a copied layout (1× X, at most
    :data:`CACHED_COPY_MAX_BYTES`) lives while X does and its entry is among the ``max_entries`` most recent;
    :meth:`clear` drops everything, ``max_entries = 0`` disables the cache.
    ``hits`` and ``misses`` count lookups.
    """

    def __init__(self, max_entries: int = 4):
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._entries: dict = {}  # id(X) -> (weakref to X, layout, fingerprint, state)
        # re-entrant: an X freed by the garbage collector while this thread holds the
        # lock (an allocation inside it) runs forget() here, which takes it again
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def design(self, X, name: str = "X") -> Design:
        """The :class:`Design` of ``X``: from the cache when X is unchanged, else validated."""
        layout = _cache_layout(X) if self.max_entries > 0 else None
        if layout is None:
            return Design(X, name=name)
        with self._lock:
            seen = self._entries.get(id(X))
        # X seen before: a sequence of calls on one X, where loading the compiled scan
        # (once per process) pays back; a first call on a small X keeps numpy's form,
        # and so does a repeat while the loop would have to be compiled
        repeat = seen is not None and seen[0]() is X
        # a repeat is expected to hit, where the number of nonzeros is cached: not
        # counted (an X edited in place, a miss, counts again in Design)
        scanned, fingerprint = _cache_scan(X, loop=repeat and _loop_is_free(
            (X.data if _is_sparse(X) else X).dtype.itemsize), counting=not repeat)
        with self._lock:
            entry = self._entries.get(id(X))
            hit = (entry is not None and entry[0]() is X and entry[1] == layout
                   and entry[2] == fingerprint)
            if hit:
                self.hits += 1
                self._entries[id(X)] = self._entries.pop(id(X))  # most recent last
            else:
                self.misses += 1
        if hit:
            return Design._from_state(X, name, entry[3])
        design = Design(X, name=name, _scanned=scanned)
        if np.may_share_memory(design.to_scipy().data if design.is_sparse else design._dense,
                               X.data if design.is_sparse else X):
            self._store(X, layout, fingerprint, design)
        return design

    def _store(self, X, layout, fingerprint, design: Design) -> None:
        key = id(X)

        def forget(ref, key=key):
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None and entry[0] is ref:
                    del self._entries[key]

        state = dict(nnz=design.nnz, stats=design._stats, derived=design._derived)
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (weakref.ref(X, forget), layout, fingerprint, state)
            while len(self._entries) > self.max_entries:
                del self._entries[next(iter(self._entries))]


def _cache_layout(X):
    """What besides its contents must not change between two hits on ``X``, or None
    when :class:`DesignCache` does not cache such input. (Buffer addresses are not
    needed: a hit reads X's current arrays, and the fingerprint their contents.)"""
    if type(X) is np.ndarray:
        if (X.ndim != 2 or X.size == 0 or X.dtype not in (np.float32, np.float64)
                or not (X.flags.c_contiguous or X.flags.f_contiguous)):
            return None
        return (X.shape, X.strides, X.dtype)
    if (sp.issparse(X) and X.format in ("csr", "csc") and X.dtype in (np.float32, np.float64)
            and X.indices.dtype == np.int32 and X.indptr.dtype == np.int32 and X.nnz > 0
            and X.data.flags.c_contiguous and X.indices.flags.c_contiguous
            and X.indptr.flags.c_contiguous):
        return (X.format, X.shape, X.dtype, X.data.shape, X.indices.shape, X.indptr.shape)
    return None


def _cache_scan(X, loop: bool = False, counting: bool = True):
    """``(scan of the values, fingerprint of X)`` for an input :func:`_cache_layout` accepts
    (``loop``: by the compiled loop whatever the size; ``counting``: :func:`_scan`)."""
    sparse = _is_sparse(X)
    values = X.data if sparse else X
    scanned = _scan(_flat_bits(values), _SIGN[values.dtype.itemsize], loop, counting)
    if not sparse:
        return scanned, int(scanned[2])
    return scanned, (int(scanned[2]), _fingerprint(X.indices, loop),
                     _fingerprint(X.indptr, loop))


#: the cache :func:`as_design` uses
design_cache = DesignCache()


def as_design(X, *, name: str = "X") -> Design:
    """Validate ``X`` once; a :class:`Design` passes through unchanged.

    An unchanged X seen by a recent call gets its cached statistics and
    layouts (:data:`design_cache`, :class:`DesignCache`).
    """
    return X if isinstance(X, Design) else design_cache.design(X, name)


def check_target(y, n_samples: int, loss: str, *, name: str = "y") -> np.ndarray:
    """A finite float64 vector of length ``n_samples``; ±1 labels for binary losses."""
    if _is_sparse(y):
        raise TypeError(f"{name} must be a dense 1-d array, got a sparse matrix")
    try:
        y = np.asarray(y)
    except Exception as exc:
        raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {y.shape[0]} entries but X has {n_samples} samples"
        )
    if y.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be numeric, got dtype {y.dtype}")
    y = y.astype(np.float64)
    # ±1 labels are finite: one comparison pass says both (the finiteness pass only
    # when it fails, to name what is wrong: NaN first, then the labels, by np.unique)
    binary = loss in BINARY_LOSSES
    if binary and (np.abs(y) == 1.0).all():
        return y
    if not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity")
    if binary:
        labels = np.unique(y)
        shown = ", ".join(f"{v:g}" for v in labels[:6])
        raise ValueError(
            f"{name} must contain only -1 and +1 for loss={loss!r}; found labels {{{shown}"
            f"{', ...' if labels.size > 6 else ''}}}"
        )
    return y


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    """Non-negative finite float64 weights (ones when ``None``), not all zero."""
    if sample_weight is None:
        ones = np.empty(n_samples)  # np.ones without its two Python-level wrappers
        ones.fill(1.0)
        return ones
    s = np.asarray(sample_weight, dtype=np.float64)
    if s.ndim == 0:
        s = np.full(n_samples, float(s))
    if s.ndim != 1 or s.shape[0] != n_samples:
        raise ValueError(
            ("Sample weights must be 1D array or scalar: " if s.ndim != 1 else "")
            + f"sample_weight must have shape ({n_samples},), got {np.shape(sample_weight)}"
        )
    if not np.all(np.isfinite(s)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(s < 0):
        raise ValueError("sample_weight must be non-negative")
    if not np.any(s > 0):
        raise ValueError("sample_weight is zero everywhere")
    return s
