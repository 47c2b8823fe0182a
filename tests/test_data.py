"""The data layer: every accepted input gives the same validated design."""

import numpy as np
import pytest
import scipy.sparse as sp

from cdlearn.data import Design, as_design, check_sample_weight, check_target


def _reference(rng, n=13, d=7):
    A = rng.standard_normal((n, d))
    A[rng.random((n, d)) < 0.6] = 0.0
    A[:, 2] = 0.0  # an all-zero column
    A[4, :] = 0.0  # an all-zero row
    return A


def _views_as_dense(design):
    out = {}
    for name, view, major_axis in (("csc", design.csc, 1), ("csr", design.csr, 0)):
        n, d = design.shape
        M = np.zeros((n, d))
        for s in range(view.n_major):
            for k in range(view.indptr[s], view.indptr[s + 1]):
                minor = k - view.indptr[s] if view.is_dense else view.indices[k]
                if major_axis == 1:
                    M[minor, s] += view.data[k]
                else:
                    M[s, minor] += view.data[k]
        out[name] = M
    return out


@pytest.mark.parametrize(
    "kind", ["dense", "dense_f", "csc", "csr", "coo", "lil", "csr_int64", "float32", "int"]
)
def test_every_input_kind_gives_the_same_design(kind):
    rng = np.random.default_rng(0)
    A = _reference(rng)
    X = {
        "dense": A,
        "dense_f": np.asfortranarray(A),
        "csc": sp.csc_matrix(A),
        "csr": sp.csr_matrix(A),
        "coo": sp.coo_matrix(A),
        "lil": sp.lil_matrix(A),
        "float32": A.astype(np.float32),
        "int": np.round(A * 3).astype(np.int64),
    }.get(kind)
    if kind == "csr_int64":
        M = sp.csr_matrix(A)
        X = sp.csr_matrix((M.data, M.indices.astype(np.int64), M.indptr.astype(np.int64)), M.shape)
    expected = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    D = Design(X)
    assert D.shape == A.shape
    assert D.dtype == (np.float32 if kind == "float32" else np.float64)
    assert D.nnz == np.count_nonzero(expected)
    np.testing.assert_allclose(D.col_sq_norms, (expected**2).sum(0), rtol=1e-6)
    np.testing.assert_allclose(D.row_sq_norms, (expected**2).sum(1), rtol=1e-6)
    np.testing.assert_array_equal(D.col_nnz, (expected != 0).sum(0))
    np.testing.assert_array_equal(D.row_nnz, (expected != 0).sum(1))
    assert D.col_nnz[2] == 0 and D.row_nnz[4] == 0
    for M in _views_as_dense(D).values():
        np.testing.assert_allclose(M, expected, rtol=1e-6)
    w = rng.standard_normal(A.shape[1])
    np.testing.assert_allclose(D.matvec(w), expected @ w, rtol=1e-5, atol=1e-6)


def test_noncanonical_sparse_input_is_canonicalised_without_touching_the_input():
    # duplicates and unsorted indices in CSR, an explicit zero
    data = np.array([1.0, 2.0, 3.0, 0.0, 5.0])
    indices = np.array([2, 0, 2, 1, 0], dtype=np.int64)
    indptr = np.array([0, 3, 5], dtype=np.int64)
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 3))
    before = (X.data.copy(), X.indices.copy())
    D = Design(X)
    dense = np.array([[2.0, 0.0, 4.0], [5.0, 0.0, 0.0]])
    assert D.nnz == 3
    np.testing.assert_allclose(_views_as_dense(D)["csc"], dense)
    np.testing.assert_allclose(_views_as_dense(D)["csr"], dense)
    np.testing.assert_array_equal(X.data, before[0])
    np.testing.assert_array_equal(X.indices, before[1])
    assert D.csc.indices.dtype == np.int32


def test_design_passes_through_and_dense_views_share_one_layout():
    D = as_design(np.ones((3, 2)))
    assert as_design(D) is D
    assert D.csc.is_dense and D.csr.is_dense
    assert D.csc.indices.size == 0 and list(D.csc.indptr) == [0, 3, 6]


@pytest.mark.parametrize(
    "X, err, match",
    [
        (np.array([[1.0, np.nan]]), ValueError, "NaN"),
        (sp.csr_matrix(np.array([[1.0, np.inf]])), ValueError, "NaN or infinity"),
        (np.zeros((0, 3)), ValueError, "empty"),
        (np.ones(3), ValueError, "2-dimensional"),
        (np.array([["a", "b"]]), TypeError, "numeric"),
        ("abc", TypeError, "array"),
    ],
)
def test_bad_design_raises_naming_x(X, err, match):
    with pytest.raises(err, match=match) as info:
        Design(X)
    assert "X" in str(info.value)


def test_check_target():
    assert check_target([1, -1, 1], 3, "logistic").dtype == np.float64
    with pytest.raises(ValueError, match=r"y must contain only -1 and \+1.*0, 1"):
        check_target([0, 1, 1], 3, "logistic")
    with pytest.raises(ValueError, match="3 entries but X has 4"):
        check_target([0.5, 1, 2], 4, "squared")
    with pytest.raises(ValueError, match="NaN"):
        check_target([0.5, np.nan], 2, "squared")
    with pytest.raises(ValueError, match="1-dimensional"):
        check_target(np.ones((2, 2)), 2, "squared")


def test_check_sample_weight():
    np.testing.assert_array_equal(check_sample_weight(None, 3), np.ones(3))
    with pytest.raises(ValueError, match="non-negative"):
        check_sample_weight([1.0, -1.0], 2)
    with pytest.raises(ValueError, match="zero everywhere"):
        check_sample_weight([0.0, 0.0], 2)
    with pytest.raises(ValueError, match="shape"):
        check_sample_weight([1.0], 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_views_are_the_raveled_matrix(dtype):
    # the column view of C-ordered input (and the row view of F-ordered input) is
    # built by a blocked transpose kernel: it must equal numpy's ravel exactly
    A = np.random.default_rng(0).standard_normal((131, 70)).astype(dtype)
    for M in (A, np.asfortranarray(A), A[::2, 1:]):
        d = Design(M)
        np.testing.assert_array_equal(d.csc.data, M.ravel(order="F"))
        np.testing.assert_array_equal(d.csr.data, M.ravel(order="C"))
        assert d.nnz == np.count_nonzero(M)
