"""The two-loop recursion of L-BFGS (:mod:`cdlearn.solvers.lbfgs`).

Nocedal & Wright (2006), "Numerical Optimization", Algorithm 7.4. Compiled
because on the benchmark's 1,000 × 1,000 problem the 4·memory numpy calls on
d-vectors cost about a third of a data pass per iteration (profiled: 0.18 ms
against 0.47 ms per product with X).
"""

from numba import njit


@njit(cache=True)
def two_loop(S, Y, rho, newest, count, q, a):
    """``q ← H q`` in place for the ``count`` pairs of the ring buffer ``S, Y, rho``
    (rows; ``newest`` the last one written), ``H₀ = sᵀy/yᵀy·I``; ``a`` is work space."""
    memory, m = S.shape
    for j in range(count):  # newest to oldest
        k = (newest - j) % memory
        s = 0.0
        for i in range(m):
            s += S[k, i] * q[i]
        a[k] = rho[k] * s
        for i in range(m):
            q[i] -= a[k] * Y[k, i]
    yy = 0.0
    for i in range(m):
        yy += Y[newest, i] * Y[newest, i]
    gamma = 1.0 / (rho[newest] * yy)
    for i in range(m):
        q[i] *= gamma
    for j in range(count - 1, -1, -1):  # oldest to newest
        k = (newest - j) % memory
        s = 0.0
        for i in range(m):
            s += Y[k, i] * q[i]
        b = a[k] - rho[k] * s
        for i in range(m):
            q[i] += b * S[k, i]
