"""Memory: canonical input is not copied, and no solve holds more than 1.5× the input.

The peaks are counted with ``tracemalloc`` (numpy reports its buffers to it),
so they are deterministic allocation counts, not timings. Each solve runs
once before it is measured, so numba's compile or cache load is not counted.
"""

import gc
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import cdlearn
from cdlearn.api import make_problem
from cdlearn.data import Design
from cdlearn.solvers import SOLVERS

N, D = 600, 1500
GOAL = 1.5
#: iterates, traces, norms and samplers: at most this many float64 vectors of length n + d
VECTORS = 12
#: the problems the solvers are measured on, the first one each supports
PROBLEMS = [("logistic", "l2"), ("logistic", "l1"), ("squared", "l1"),
            ("squared", "group_l2")]


def _matrix(fmt, dtype=np.float64, n=N, d=D, density=0.1, seed=0):
    X = sp.random(n, d, density=density, format="csr" if fmt == "dense" else fmt,
                  dtype=dtype, random_state=seed)
    return X.toarray() if fmt == "dense" else X


def _input_bytes(X):
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def _peak(call):
    """Peak bytes allocated by ``call()`` (after a first, unmeasured call)."""
    call()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _labels(n=N, seed=1):
    return np.where(np.random.default_rng(seed).random(n) < 0.5, -1.0, 1.0)


# ------------------------------------------------------------------ no copy
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_design_uses_canonical_sparse_input_without_a_copy(fmt, dtype):
    X = _matrix(fmt, dtype, n=40, d=30, density=0.3)
    assert X.indices.dtype == np.int32 and X.has_canonical_format
    design = Design(X)
    view = design.csr if fmt == "csr" else design.csc
    for ours, theirs in ((view.data, X.data), (view.indices, X.indices),
                         (view.indptr, X.indptr)):
        assert np.shares_memory(ours, theirs)
    assert design.dtype == dtype
    # and the statistics are those of the matrix
    A = X.toarray().astype(np.float64)
    np.testing.assert_allclose(design.col_sq_norms, (A**2).sum(0), rtol=1e-6)
    np.testing.assert_array_equal(design.row_nnz, (A != 0).sum(1))


def _unsorted(X):
    M = X.copy()
    for i in range(M.shape[0]):  # reverse every row's entries
        s, e = M.indptr[i], M.indptr[i + 1]
        M.indices[s:e] = M.indices[s:e][::-1].copy()
        M.data[s:e] = M.data[s:e][::-1].copy()
    M.has_sorted_indices = False
    return M


@pytest.mark.parametrize("kind", ["unsorted", "duplicates", "explicit_zero", "int64_indices",
                                  "integer"])
def test_design_copies_non_canonical_input_and_leaves_it_alone(kind):
    X = _matrix("csr", n=40, d=30, density=0.3)
    A = X.toarray()
    if kind == "unsorted":
        M = _unsorted(X)
    elif kind == "duplicates":  # the first entry split in two halves
        v = np.concatenate([X.data[:1] * 0.5, X.data])
        v[1] *= 0.5
        M = sp.csr_matrix((v, np.concatenate([X.indices[:1], X.indices]),
                           np.concatenate([[0], X.indptr[1:] + 1])), shape=X.shape)
        assert M.nnz == X.nnz + 1
    elif kind == "explicit_zero":
        M = X.copy()
        M.data[3] = 0.0
        A[np.repeat(np.arange(40), np.diff(X.indptr))[3], X.indices[3]] = 0.0
    elif kind == "int64_indices":
        M = X.copy()  # scipy's constructor would make them int32 again
        M.indices, M.indptr = M.indices.astype(np.int64), M.indptr.astype(np.int64)
    else:
        M = sp.csr_matrix(np.round(A * 10).astype(np.int64))
        A = M.toarray().astype(np.float64)
    saved = (M.data.copy(), M.indices.copy(), M.indptr.copy())
    design = Design(M)
    v = design.csr
    assert not np.shares_memory(v.data, M.data)
    assert v.indices.dtype == np.int32
    np.testing.assert_array_equal(sp.csr_matrix((v.data, v.indices, v.indptr),
                                                shape=X.shape).toarray(), A)
    assert design.nnz == np.count_nonzero(A)
    for before, after in zip(saved, (M.data, M.indices, M.indptr), strict=True):
        np.testing.assert_array_equal(before, after)


def test_csr_input_builds_the_column_layout_once():
    X = _matrix("csr", n=40, d=30, density=0.3)
    design = Design(X)
    first = design.csc
    assert design.csc is first
    assert not np.shares_memory(first.data, X.data)
    assert np.shares_memory(design.scipy_layout("csc").data, first.data)
    assert np.shares_memory(design.scipy_layout("csr").data, X.data)


# ------------------------------------------------------------------ peaks
def _solver_cases():
    X = _matrix("csr", n=20, d=D)
    y = _labels(20)
    out = []
    for name in [*SOLVERS, "auto"]:
        for loss, penalty in PROBLEMS:
            groups = np.arange(D) // 10 if penalty == "group_l2" else None
            p = make_problem(X, y, loss=loss, penalty=penalty, lam=0.1, groups=groups)
            if name == "auto" or SOLVERS[name].supports(p):
                out.append((name, loss, penalty))
                if name != "auto":
                    break
    return out


def _solve_peak(X, name, loss, penalty):
    y = _labels(X.shape[0])
    kw = dict(groups=np.arange(X.shape[1]) // 10) if penalty == "group_l2" else {}
    lam = 1e-2 if penalty != "l2" else 1e-3

    def call():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 3 epochs do not converge
            cdlearn.solve(X, y, loss=loss, penalty=penalty, lam=lam, solver=name,
                          max_epochs=3, **kw)

    return _peak(call)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("case", _solver_cases(), ids=lambda c: "-".join(c))
def test_solve_peak_is_at_most_one_and_a_half_times_the_input(case, fmt):
    X = _matrix(fmt)
    peak = _solve_peak(X, *case)
    vectors = VECTORS * 8 * (N + D)
    # gram-cd (only on request: precompute=True) works on the dense d × d Gram by design;
    # forming it from sparse X passes through scipy's sparse product (12 bytes an entry)
    gram = 3 * 8 * D * D if case[0] == "gram-cd" else 0
    assert peak <= GOAL * _input_bytes(X) + vectors + gram, (
        f"{case}: peak {peak / _input_bytes(X):.2f}x the input")


@pytest.mark.parametrize("case", [("primal-cd", "logistic", "l2"), ("primal-cd", "squared", "l1"),
                                  ("newton-cd", "logistic", "l2")])
def test_primal_methods_on_column_input_allocate_only_vectors(case):
    """CSC input is the primal layout: no matrix-sized temporary at all.

    Primal CD on the logistic loss built |X|, X², |X|³ (6.5× the matrix) and
    the Design copied the input before the fix.
    """
    X = _matrix("csc")
    peak = _solve_peak(X, *case)
    assert peak <= 0.15 * _input_bytes(X) + VECTORS * 8 * (N + D)


@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_float32_products_do_not_convert_the_matrix(fmt):
    """scipy and numpy convert a float32 matrix to float64 for a float64 vector."""
    X = _matrix(fmt, np.float32)
    design = Design(X)
    w, r = np.ones(D), np.ones(N)
    assert _peak(lambda: design.matvec(w)) <= 4 * 8 * (N + D)
    assert _peak(lambda: design.rmatvec(r)) <= 4 * 8 * (N + D)
    A = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    np.testing.assert_allclose(design.matvec(w), A @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(design.rmatvec(r), A.T @ r, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ wide input
def _wide(fmt, n=400, d=20_000, per_column=10, seed=0):
    """``per_column`` entries in every column: a float64 d-vector is 1/(1.5 per_column)
    of the input's bytes (6.7 % here), as on the 10⁶-column Nesterov Lasso."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.choice(n, per_column, replace=False) for _ in range(d)])
    X = sp.csc_matrix((rng.standard_normal(d * per_column), rows,
                       np.arange(0, d * per_column + 1, per_column)), shape=(n, d))
    X.sort_indices()
    return X if fmt == "csc" else X.tocsr()


@pytest.mark.parametrize("case", [("spdc", "squared", "l2"), ("newton-cg", "logistic", "l2"),
                                  ("dual-cd", "squared", "l2")])
def test_row_methods_on_wide_column_input_stay_within_the_goal(case):
    """The row layout (1.0×) plus the vectors: SPDC held five d-vectors per snapshot
    (1.93× on the Nesterov Lasso), newton-cg a dozen through CG (1.81×), and the
    Design the column statistics, before they were cut."""
    X = _wide("csc")
    peak = _solve_peak(X, *case)
    assert peak <= GOAL * _input_bytes(X), f"{case}: {peak / _input_bytes(X):.2f}x the input"


def test_ws_cd_anderson_history_is_capped():
    """Every feature in the working set (``p0 = d``) of a CSR input: the column layout
    (1.0×) plus k + 1 = 6 iterates of d + n floats (0.26× here at k = 5, 1.56× in all on
    news20) before the history was capped at ANDERSON_MEMORY of the input."""
    from cdlearn.solvers.working_set import ANDERSON_MEMORY, _anderson_window

    X = _wide("csr", n=2000, per_column=20)
    y = _labels(X.shape[0])

    def call():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-4, solver="ws-cd",
                          p0=X.shape[1], max_epochs=3)

    peak = _peak(call)
    assert peak <= GOAL * _input_bytes(X), f"peak {peak / _input_bytes(X):.2f}x the input"
    k = _anderson_window(5, X.shape[1], X.shape[0], Design(X).csc)
    assert 2 <= k < 5
    assert (k + 1) * 8 * sum(X.shape) <= ANDERSON_MEMORY * _input_bytes(X)
