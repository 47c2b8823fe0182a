"""Slice operations on a compressed view ``(data, indices, indptr)``.

One code path for sparse and dense data: a dense view has an empty
``indices`` array and entry ``k`` of slice ``s`` sits at minor index
``k - indptr[s]`` (see :class:`cdlearn.data.CompressedView`). The branch on
``dense`` is loop-invariant, so it costs nothing measurable in the inner loop.
"""

from numba import njit


@njit(cache=True)
def slice_dot(data, indices, indptr, s, vec):
    """Σ_k data[k] · vec[minor(k)] over slice ``s``."""
    start, end = indptr[s], indptr[s + 1]
    acc = 0.0
    if indices.shape[0] == 0:
        for k in range(start, end):
            acc += data[k] * vec[k - start]
    else:
        for k in range(start, end):
            acc += data[k] * vec[indices[k]]
    return acc


@njit(cache=True)
def slice_axpy(data, indices, indptr, s, scale, vec):
    """vec[minor(k)] += scale · data[k] over slice ``s``."""
    start, end = indptr[s], indptr[s + 1]
    if indices.shape[0] == 0:
        for k in range(start, end):
            vec[k - start] += scale * data[k]
    else:
        for k in range(start, end):
            vec[indices[k]] += scale * data[k]
