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

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = [
    "Design",
    "CompressedView",
    "as_design",
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
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_int(name: str, value, *, low: int = 1) -> int:
    """An integer ``>= low`` (bools and floats such as 2.5 or nan raise, naming ``name``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def check_seed(name: str, value) -> int | None:
    """None or a non-negative integer (numpy's ``SeedSequence`` rule), everywhere a seed is taken."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer or None, got "
                        f"{type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer or None, got {value}")
    return int(value)


@njit(cache=True)
def _magnitude_and_count(flat):
    """``(max |x|, number of nonzeros)`` of a 1-d array in one pass; NaN propagates."""
    top = 0.0
    count = 0
    for k in range(flat.shape[0]):
        v = abs(np.float64(flat[k]))
        if not v <= top:  # larger, or NaN (then it stays NaN: NaN <= x is False)
            if v != v or top == top:
                top = v
        count += v != 0.0
    return top, count


def _check_values(name: str, values: np.ndarray) -> int:
    """NaN, infinity or entries beyond MAX_ABS_VALUE in ``values`` raise a ValueError;
    returns the number of nonzeros.

    One pass (:func:`_magnitude_and_count`) with no temporary of the input's size,
    which a matrix of 10⁷ entries would pay as 80 MB for ``np.abs`` and 10 MB
    for an ``isfinite`` mask (``max``, ``min`` and ``count_nonzero`` took three
    passes: ~7 ms of a 10,000 × 100 solve's set-up). Contiguous arrays in
    either order are read in place.
    """
    if values.size == 0:
        return 0
    flat = values.ravel(order="K") if (values.flags.c_contiguous or
                                       values.flags.f_contiguous) else values.ravel()
    top, count = _magnitude_and_count(flat)
    top = float(top)
    if not np.isfinite(top):
        raise ValueError(f"{name} contains NaN or infinity")
    if top > MAX_ABS_VALUE:
        raise ValueError(f"{name} has entries of magnitude {top:.3g} > {MAX_ABS_VALUE:g}, "
                         "beyond what the solvers' certificates can represent in float64; "
                         f"rescale {name} (e.g. divide it by its largest entry)")
    return int(count)


def _float_dtype(dtype) -> np.dtype:
    # float32 stays float32 end to end; everything else computes in float64.
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def _index_dtype(n_entries: int) -> np.dtype:
    return np.dtype(np.int32) if n_entries <= _INT32_MAX else np.dtype(np.int64)


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

    def __init__(self, X, *, name: str = "X"):
        self.name = name
        if isinstance(X, Design):
            self.__dict__.update(X.__dict__)
            return
        if sp.issparse(X):
            self._init_sparse(X)
        else:
            self._init_dense(X)
        self._csc: CompressedView | None = None
        self._csr: CompressedView | None = None
        self._products: dict = {}  # scipy matrices over the built views (no copies)
        self._derived: dict = {}  # see derived()
        self._stats: dict = {}  # see _statistic()

    # ------------------------------------------------------------------ input
    def _init_sparse(self, X):
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
        _check_values(name, M.data)
        self.n_samples, self.n_features = n, d
        self.dtype = dtype
        self.is_sparse = True
        self._sparse = M
        self._dense = None
        self.nnz = int(M.nnz)

    def _init_dense(self, X):
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
        A = np.asarray(A, dtype=dtype)
        nnz = _check_values(name, A)
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
        if self._csc is None:
            self._csc = self._make_view(axis=1)
        return self._csc

    @property
    def csr(self) -> CompressedView:
        """Row view (what dual CD walks). Built once, then cached."""
        if self._csr is None:
            self._csr = self._make_view(axis=0)
        return self._csr

    def _make_view(self, axis: int) -> CompressedView:
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


def as_design(X, *, name: str = "X") -> Design:
    """Validate ``X`` once; a :class:`Design` passes through unchanged."""
    return X if isinstance(X, Design) else Design(X, name=name)


def check_target(y, n_samples: int, loss: str, *, name: str = "y") -> np.ndarray:
    """A finite float64 vector of length ``n_samples``; ±1 labels for binary losses."""
    if sp.issparse(y):
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
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity")
    if loss in BINARY_LOSSES:
        labels = np.unique(y)
        if not np.all(np.isin(labels, (-1.0, 1.0))):
            shown = ", ".join(f"{v:g}" for v in labels[:6])
            raise ValueError(
                f"{name} must contain only -1 and +1 for loss={loss!r}; found labels {{{shown}"
                f"{', ...' if labels.size > 6 else ''}}}"
            )
    return y


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    """Non-negative finite float64 weights (ones when ``None``), not all zero."""
    if sample_weight is None:
        return np.ones(n_samples)
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
