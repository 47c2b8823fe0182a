"""Stochastic primal-dual coordinate kernel (SPDC, Zhang & Xiao 2014), lazy sparse updates.

SPDC solves the saddle-point form of ``min_x 1/n Σ s_i φ(a_iᵀx) + λ1‖x‖₁ + λ2/2‖x‖²``
(the DGPD paper's eq. (3) with ``g = μ/2‖x‖² + λ‖x‖₁``). In cdlearn's sign
convention (dual ``α = -y`` of the paper, ``α_i = -s_i φ'(z_i)`` at the optimum)
one iteration with the sampled row ``k`` is

1. dual step (SPDC Algorithm 1, m = 1):
   ``α_k ← argmax_a  -s_k φ*(-a/s_k) - a·⟨a_k, x̄⟩ - (a - α_k)²/(2σ)``
   (:func:`cdlearn.losses.dual_coordinate_maximizer` with curvature ``c = s_k/σ``);
2. primal step with the unbiased dual estimate ``v + Δα_k a_k`` of ``Xᵀα/n``:
   ``x ← prox_{τ g}(x + τ (v + Δα_k a_k))``, ``v = Xᵀα/n`` kept up to date
   (``v += Δα_k a_k / n``);
3. extrapolation ``x̄ = x_new + θ (x_new - x_old)``.

Lazy (sparse) implementation. Step 2 changes every coordinate, but for a
coordinate ``j`` outside the row's support its input ``v_j`` does not change,
so ``x_j`` follows the fixed scalar map ``f_j(t) = soft(t + τ v_j, τλ1)/(1 + τλ2)``
until ``j`` is touched again. This monotone, piecewise affine map is applied
``k`` times in O(1) (:func:`prox_power`: at most three affine pieces, each a
geometric sequence towards its fixed point), as Zhang & Xiao's efficient
implementation for sparse data does. A coordinate remembers the iteration it is
current at (``stamp``); only the ``nnz(a_k)`` coordinates the row needs are
brought up to date, so an iteration costs O(nnz(a_k)) and an epoch O(nnz(X)) + an
O(d) flush at its end (``x̄`` needs ``x`` at the two latest iterations).

``dense=True`` runs the plain variant that updates all d coordinates every
iteration (O(n·d) per epoch): the reference the lazy kernel is tested against.
"""

import math

from numba import njit

from cdlearn.losses import dual_coordinate_maximizer
from cdlearn.penalties import soft_threshold
from cdlearn.sampling import next_index

MAX_PIECES = 8  # affine pieces visited by prox_power (3 suffice in exact arithmetic)


@njit(cache=True)
def _step(t, vj, tau, tl1, c):
    """``soft(t + τ v_j, τλ1) · c`` with ``tl1 = τλ1``, ``c = 1/(1 + τλ2)`` precomputed."""
    u = t + tau * vj
    if u > tl1:
        return (u - tl1) * c
    if u < -tl1:
        return (u + tl1) * c
    return 0.0


@njit(cache=True)
def prox_step(t, vj, tau, l1, l2):
    """One SPDC primal step of a coordinate whose dual input is ``vj``."""
    return soft_threshold(t + tau * vj, tau * l1) / (1.0 + tau * l2)


@njit(cache=True)
def _cpow(powers, c, m):
    """c**m from the table ``powers[m] = c**m`` when it is long enough."""
    return powers[m] if m < powers.shape[0] else c ** m


@njit(cache=True)
def prox_power(t, vj, tau, l1, l2, k, powers):
    """``prox_step`` applied ``k`` times to ``t`` with a fixed ``vj``, in O(1).

    With ``c = 1/(1 + τλ2)`` the map is ``c(t + τ(v - λ1))`` where that is
    positive (fixed point ``(v - λ1)/λ2``), ``c(t + τ(v + λ1))`` where that is
    negative (fixed point ``(v + λ1)/λ2``) and 0 in between. It is increasing,
    so the iterates move monotonically to the fixed point ``soft(v, λ1)/λ2``;
    on each affine piece ``t_m = p + c^m (t - p)``. ``powers[m] = c^m`` is a
    table (an epoch's worth) so the common cases cost no ``pow``; the number
    of steps spent on a piece the iterates leave is found with a logarithm
    (rounding can only make it a step short, which the next piece then takes).
    """
    c = 1.0 / (1.0 + tau * l2)
    return _power(t, vj, tau, l1, tau * l1, 1.0 / l2, c, k, powers)


@njit(cache=True)
def _power(t, vj, tau, l1, tl1, il2, c, k, powers):
    """:func:`prox_power` with ``τλ1``, ``1/λ2`` and ``c`` precomputed (no division)."""
    pieces = 0
    while k > 0:
        pieces += 1
        if pieces > MAX_PIECES:  # never in practice: finish step by step
            for _ in range(k):
                t = _step(t, vj, tau, tl1, c)
            return t
        hi = tl1 - tau * vj  # t > hi: positive piece
        lo = -tl1 - tau * vj  # t < lo: negative piece
        if t > hi:
            p = (vj - l1) * il2
            if p >= hi:  # the fixed point is on this piece: it never leaves
                return p + _cpow(powers, c, k) * (t - p)
            positive = True
            bound = hi
        elif t < lo:
            p = (vj + l1) * il2
            if p <= lo:
                return p + _cpow(powers, c, k) * (t - p)
            positive = False
            bound = lo
        else:
            t = 0.0
            k -= 1
            if abs(vj) <= l1:
                return 0.0  # 0 is the fixed point
            continue
        gap0 = t - p
        if abs(vj) <= l1:
            # the usual case: the coordinate decays to 0, which it keeps once reached
            # (it leaves the piece into the zero piece); no logarithm needed
            prev = p + _cpow(powers, c, k - 1) * gap0
            if (prev > bound) if positive else (prev < bound):
                return p + _cpow(powers, c, k) * gap0  # all k inputs on the piece
            return 0.0
        end = p + _cpow(powers, c, k) * gap0
        if (end > bound) if positive else (end < bound):
            return end  # still on the piece after k steps
        # t_m = p + c^m gap0 moves towards p and leaves the piece once
        # c^m ≤ (bound - p)/gap0 ∈ (0, 1)
        ratio = (bound - p) / gap0 if gap0 != 0.0 else 0.0
        log_c = math.log(c)
        # τλ2 below rounding (|x| ~ 1e50) makes c == 1: no decay to count
        m = int(math.ceil(math.log(ratio) / log_c)) if ratio > 0.0 and log_c < 0.0 else k
        if m < 1:
            m = 1
        if m > k:
            m = k
        t = p + _cpow(powers, c, m) * gap0
        k -= m
    return t


@njit(cache=True)
def _catch_up(j, it, x, x_prev, stamp, v, tau, l1, tl1, il2, c, powers):
    """Bring coordinate ``j`` to iteration ``it`` (``x[j]`` at it, ``x_prev[j]`` at it-1)."""
    s = stamp[j]
    if s == it:
        return
    if s < it - 1:
        x_prev[j] = _power(x[j], v[j], tau, l1, tl1, il2, c, it - 1 - s, powers)
    else:
        x_prev[j] = x[j]
    x[j] = _step(x_prev[j], v[j], tau, tl1, c)
    stamp[j] = it


@njit(cache=True)
def spdc_flush(x, x_prev, stamp, v, tau, l1, l2, it, powers):
    """Bring every coordinate to iteration ``it`` (before a certificate)."""
    c = 1.0 / (1.0 + tau * l2)
    for j in range(x.shape[0]):
        _catch_up(j, it, x, x_prev, stamp, v, tau, l1, tau * l1, 1.0 / l2, c, powers)


@njit(cache=True, nogil=True)
def spdc_epoch(data, indices, indptr, y, sw, alpha, v, x, x_prev, stamp, loss_code,
               tau, sigma, theta, l1, l2, inv_n, n_updates, rng, it, dense, powers):
    """Run ``n_updates`` SPDC iterations on the row view; returns ``(entries, updates, it)``.

    ``x``/``x_prev`` hold coordinate j at iterations ``stamp[j]`` and
    ``stamp[j] - 1``; ``it`` is the global iteration counter (``x̄`` at
    iteration ``it`` is ``x + θ(x - x_prev)`` once current). ``v = Xᵀα/n``;
    ``powers[m] = (1 + τλ2)^-m`` for m up to about an epoch (:func:`prox_power`).
    On return every coordinate is current (``stamp == it``).
    """
    n = y.shape[0]
    d = x.shape[0]
    is_dense = indices.shape[0] == 0
    c = 1.0 / (1.0 + tau * l2)
    tl1 = tau * l1
    il2 = 1.0 / l2
    entries = 0
    updates = 0
    for _ in range(n_updates):
        k = next_index(rng, n)
        start, end = indptr[k], indptr[k + 1]
        s = sw[k]
        # ⟨a_k, x̄⟩ with the row's coordinates brought to iteration `it`
        zbar = 0.0
        for q in range(start, end):
            j = q - start if is_dense else indices[q]
            if not dense:
                _catch_up(j, it, x, x_prev, stamp, v, tau, l1, tl1, il2, c, powers)
            zbar += data[q] * (x[j] + theta * (x[j] - x_prev[j]))
        delta = 0.0
        if s != 0.0:
            a = alpha[k] / s
            a_new = dual_coordinate_maximizer(loss_code, a, zbar, y[k], s / sigma)
            delta = s * (a_new - a)
        entries += 2 * (end - start)
        if dense:
            # every coordinate: x ← prox(x + τ(v + Δ a_k)), then v += Δ a_k / n
            for j in range(d):
                x_prev[j] = x[j]
            if delta != 0.0:
                for q in range(start, end):
                    j = q - start if is_dense else indices[q]
                    v[j] += delta * data[q]  # temporarily v + Δ a_k
            for j in range(d):
                x[j] = _step(x_prev[j], v[j], tau, tl1, c)
                stamp[j] = it + 1
            if delta != 0.0:
                for q in range(start, end):
                    j = q - start if is_dense else indices[q]
                    v[j] -= delta * (1.0 - inv_n) * data[q]
        else:
            for q in range(start, end):
                j = q - start if is_dense else indices[q]
                x_prev[j] = x[j]
                x[j] = _step(x[j], v[j] + delta * data[q], tau, tl1, c)
                stamp[j] = it + 1
                if delta != 0.0:
                    v[j] += delta * inv_n * data[q]
        if delta != 0.0:
            alpha[k] += delta
            updates += 1
        it += 1
    if not dense:
        spdc_flush(x, x_prev, stamp, v, tau, l1, l2, it, powers)
    return entries, updates, it
