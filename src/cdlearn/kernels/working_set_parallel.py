"""The scoring pass of working-set CD on threads (``ws-cd`` with ``n_threads > 1``).

Per coordinate the same arithmetic as the serial pass of
:class:`cdlearn.solvers.working_set.WorkingSetState`, and only exact reductions
(maxima, counts), over blocks of coordinates: the same values, hence the same
working set, on any number of threads. (The selection of the highest ranks,
:func:`cdlearn.solvers.working_set.top_ranks`, stays numpy's: a block-parallel
selection by numba's ``np.partition`` took 2.5× numpy's serial time.)
"""

import math

import numpy as np
from numba import njit, prange

from cdlearn.penalties import coordinate_violation


@njit(cache=True, parallel=True, nogil=True)
def parallel_scores(w, grad, l1, l2, positive, empty, scores, rank, n_blocks):
    """``scores[j]``: coordinate j's optimality violation; ``rank[j]``: ``+inf`` on the
    support, ``-inf`` for an empty column, else ``|∇_j f| - λ1`` (``-∇_j f - λ1`` with
    ``positive``). Returns ``(max(0, max scores), support size)``."""
    d = w.shape[0]
    top = np.zeros(n_blocks)
    count = np.zeros(n_blocks, dtype=np.int64)
    for b in prange(n_blocks):
        m = 0.0
        c = 0
        for j in range(b * d // n_blocks, (b + 1) * d // n_blocks):
            wj, gj = w[j], grad[j]
            v = coordinate_violation(wj, gj, l1, l2, positive)
            scores[j] = v
            m = max(m, v)
            if wj != 0.0:
                c += 1
                rank[j] = math.inf
            elif empty[j]:
                rank[j] = -math.inf
            else:
                rank[j] = (-gj if positive else abs(gj)) - l1
        top[b] = m
        count[b] = c
    return top.max(), count.sum()


@njit(cache=True, parallel=True, nogil=True)
def parallel_count_above(x, t, n_blocks):
    """The number of entries of ``x`` greater than ``t``."""
    d = x.shape[0]
    count = np.zeros(n_blocks, dtype=np.int64)
    for b in prange(n_blocks):
        c = 0
        for j in range(b * d // n_blocks, (b + 1) * d // n_blocks):
            if x[j] > t:
                c += 1
        count[b] = c
    return count.sum()
