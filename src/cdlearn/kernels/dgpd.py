"""Doubly greedy primal-dual coordinate kernels (DGPD; Lei et al., ICML 2017).

The paper's saddle form (3), written in cdlearn's sign convention (the
paper's dual variable is ``y = -α``):

``L(w, α) = λ1‖w‖₁ + λ2/2‖w‖² - (1/n) αᵀXw - (1/n) Σ_i s_i φ*(-α_i/s_i)``

with the paper's ``g(x) = μ/2‖x‖² + λ‖x‖₁`` mapped as ``μ = λ2`` (``l2``) and
``λ = λ1`` (``l1``). Kernels keep ``margins = Xw`` (the paper's ``w = Ax``) and
``xta = Xᵀα`` (the paper's ``z = Aᵀy`` up to its sign).

Primal side, eq. (4)-(5): for fixed α, L is separable in w and coordinate
``k`` is minimised by ``w̄_k = soft(u_k, λ1)/λ2``, ``u = Xᵀα/n``; moving it
there lowers L by exactly

``D_k = λ2/2 (w_k - w̄_k)² + λ1 (|w_k| - σ_k w_k)``,
``σ_k = sign(w̄_k)`` (or ``u_k/λ1`` when ``w̄_k = 0``),

a cancellation-free form of (5)'s difference (:func:`coordinate_decrease`).
Algorithm 1 moves the coordinate with the largest ``D_k``.

Dual side, eq. (7)-(8)/(13): the proximal step on sample i maximises
``-(1/n)α z_i - (1/n)s φ*(-α/s) - 1/(2η)(α - α_i)²``, i.e. the SDCA step
:func:`cdlearn.losses.dual_coordinate_maximizer` with curvature ``c = n s/η``
(the 1/n on φ* as in (13) and the proof of Lemma A.2; (8) omits it). The
Gauss–Southwell score of sample i is ``|a_i - a*_i|`` with ``a = α_i/s_i`` and
``a*_i = -φ'(z_i)`` the exact maximiser of L in that coordinate. For the smooth
hinge this is n times the magnitude of the projected gradient ∇_α L, i.e. rule
(7) with the dual box respected; the raw gradient of (7) is infinite at the
boundary of dom φ* (logistic at α = 0, where the algorithm starts), which is
why the step-magnitude form is used for every loss.

Work counting: counters return matrix entries read (columns, rows, the
submatrix) and the vector entries the greedy searches scan (``d + n`` per
search of Algorithm 1), both as "entries"; the solver reports passes =
entries / nnz(X), so the O(n + d) searches are paid for, not hidden.
"""

import math

import numpy as np
from numba import njit

from cdlearn.losses import conjugate_at_neg, dual_coordinate_maximizer, loss_derivative
from cdlearn.penalties import soft_threshold
from cdlearn.sampling import shuffle

from .views import slice_axpy, slice_dot, u64

JACOBI, GAUSS_SEIDEL = 0, 1
MAX_ROUNDS_FACTOR = 64


@njit(cache=True)
def coordinate_decrease(w_k, u_k, l1, l2):
    """``(w̄_k, D_k)``: minimiser of L in coordinate k and the decrease of L (eq. (4)-(5))."""
    tb = soft_threshold(u_k, l1) / l2
    diff = w_k - tb
    dec = 0.5 * l2 * diff * diff
    if l1 > 0.0 and w_k != 0.0:
        if tb > 0.0:
            sg = 1.0
        elif tb < 0.0:
            sg = -1.0
        else:
            sg = u_k / l1
        dec += l1 * (abs(w_k) - sg * w_k)
    return tb, dec


@njit(cache=True)
def dual_score(code, a, z, y):
    """``|a - a*|`` with ``a* = -φ'(z)``: the Gauss–Southwell score of a sample (rule (7))."""
    return abs(a + loss_derivative(code, z, y))


@njit(cache=True)
def theorem_eta(n, l2, gamma, r2, s):
    """Theorem 4.2's step (16): ``η = 2n²μ / (s (5R² + nγμ))`` with ``s ≥ 1``."""
    if s < 1:
        s = 1
    return 2.0 * n * n * l2 / (s * (5.0 * r2 + n * gamma * l2))


@njit(cache=True)
def primal_greedy_step(cdata, cindices, cindptr, w, xta, margins, inv_n, l1, l2):
    """One primal step of Algorithm 1, eq. (4)-(6).

    Returns ``(j, decrease, count, entries)``: the moved coordinate (-1 when every
    coordinate is already optimal), its decrease of L, ``count = ‖w - w̄‖₀``
    before the step (the s of Theorem 4.2) and the column entries read.
    """
    d = w.shape[0]
    best = 0.0
    jb = -1
    tbest = 0.0
    count = 0
    for k in range(d):
        tb, dec = coordinate_decrease(w[k], xta[k] * inv_n, l1, l2)
        if tb != w[k]:
            count += 1
        if dec > best:
            best = dec
            jb = k
            tbest = tb
    entries = 0
    if jb >= 0:
        delta = tbest - w[jb]
        w[jb] = tbest
        slice_axpy(cdata, cindices, cindptr, jb, delta, margins)
        entries = cindptr[jb + 1] - cindptr[jb]
    return jb, best, count, entries


@njit(cache=True)
def dual_greedy_step(rdata, rindices, rindptr, y, sw, alpha, xta, margins, code, eta):
    """One dual step of Algorithm 1, eq. (7)-(9): returns ``(i, score, entries, moved)``."""
    n = y.shape[0]
    best = 0.0
    ib = -1
    for i in range(n):
        s = sw[i]
        if s == 0.0:
            continue
        sc = dual_score(code, alpha[i] / s, margins[i], y[i])
        if sc > best:
            best = sc
            ib = i
    if ib < 0:
        return -1, 0.0, 0, False
    s = sw[ib]
    a = alpha[ib] / s
    a_new = dual_coordinate_maximizer(code, a, margins[ib], y[ib], n * s / eta)
    step = s * (a_new - a)
    entries = 0
    if step != 0.0:
        alpha[ib] += step
        slice_axpy(rdata, rindices, rindptr, ib, step, xta)
        entries = rindptr[ib + 1] - rindptr[ib]
    return ib, best, entries, step != 0.0


@njit(cache=True, nogil=True)
def dgpd_epoch(cdata, cindices, cindptr, rdata, rindices, rindptr, y, sw, w, alpha, margins,
               xta, l1, l2, code, eta, gamma, r2, budget, stats):
    """Iterations of Algorithm 1 until ``budget`` entries are touched (at least one).

    ``eta > 0`` is a fixed dual step; ``eta <= 0`` takes Theorem 4.2's step (16)
    with the measured ``s = ‖w - w̄‖₀`` of the iteration. ``stats`` receives
    ``[last η, last s, matrix entries, search entries]`` (the last two added to).
    Returns ``(entries, updates, iterations)``; stops early at an exact fixed point.
    """
    n = y.shape[0]
    d = w.shape[0]
    inv_n = 1.0 / n
    entries = 0
    updates = 0
    iters = 0
    while True:
        j, _dec, count, e1 = primal_greedy_step(cdata, cindices, cindptr, w, xta, margins,
                                                inv_n, l1, l2)
        step_eta = eta if eta > 0.0 else theorem_eta(n, l2, gamma, r2, count)
        _i, _sc, e2, moved = dual_greedy_step(rdata, rindices, rindptr, y, sw, alpha, xta, margins,
                                      code, step_eta)
        iters += 1
        stats[0] = step_eta
        stats[1] = count
        stats[2] += e1 + e2
        stats[3] += n + d
        entries += e1 + e2 + n + d
        if j >= 0:
            updates += 1
        if moved:
            updates += 1
        if j < 0 and not moved:
            break
        if entries >= budget:
            break
    return entries, updates, iters


# --------------------------------------------------------------------- Algorithm 2
@njit(cache=True)
def _drop_zeros(values, members, pos, count):
    """Remove members whose value is exactly 0 (Algorithm 2, step 6); returns the new count."""
    k = 0
    for t in range(count):
        j = members[t]
        if values[j] != 0.0:
            members[k] = j
            pos[j] = k
            k += 1
        else:
            pos[j] = -1
    return k


@njit(cache=True)
def _add_top(scores, members, pos, count, k_add):
    """Add up to ``k_add`` outsiders with the largest positive scores; returns the new count.

    ``scores`` holds -1 for members and for outsiders that must not enter. When
    at most ``k_add`` outsiders qualify all of them enter in index order (one
    O(len) scan); otherwise only the qualifying ones are sorted.
    """
    m = 0
    best = 0.0
    jb = -1
    for j in range(scores.shape[0]):
        if scores[j] > 0.0:
            m += 1
            if scores[j] > best:
                best = scores[j]
                jb = j
    if m == 0:
        return count
    if k_add == 1:
        members[count] = jb
        pos[jb] = count
        return count + 1
    if m <= k_add:
        for j in range(scores.shape[0]):
            if scores[j] > 0.0:
                members[count] = j
                pos[j] = count
                count += 1
        return count
    cand = np.empty(m, dtype=np.int64)
    m = 0
    for j in range(scores.shape[0]):
        if scores[j] > 0.0:
            cand[m] = j
            m += 1
    order = np.argsort(-scores[cand])
    for t in range(k_add):
        j = cand[order[t]]
        members[count] = j
        pos[j] = count
        count += 1
    return count


@njit(cache=True)
def dgpd_active_iteration(cdata, cindices, cindptr, rdata, rindices, rindptr, y, sw, w, alpha,
                          margins, xta, l1, l2, code, eta, gamma, r2, rounds, balance, schedule,
                          k_add, doubling, act_x, pos_x, act_y, pos_y, counts, sub_ptr, sub_idx,
                          sub_val, sub_sq, perm, rng, scores_x, scores_y, stats):
    """One outer iteration of Algorithm 2 with the sparse implementation of §3.2.

    1. ``xta = Xᵀα`` from the active rows (14), greedy primal search (10) over the
       outsiders, (11) on the active set (``w_k = w̄_k``);
    2. ``margins = Xw`` from the active columns (14), greedy dual search (12) over
       the outsiders;
    3. build the submatrix ``[X]_A`` (rows ``A_y``, columns ``A_x``, CSR) and run
       rounds of the updates (13) and (11) through it, each round costing
       ``2 nnz([X]_A)`` matrix entries;
    4. drop zeros from both active sets.

    Growth: each search adds the ``k`` outsiders with the largest positive
    scores, ``k = k_add`` (``doubling`` false: (10), (12) with ``k_add = 1``) or
    ``k = max(k_add, |A|)`` (``doubling``: each active set may double per search,
    so a support of size m is reached in O(log m) searches, not m).
    Rounds: ``rounds`` of them, or with ``balance`` at least ``rounds`` and as
    many as make the rounds' entries reach the search's (the O(n + d) scans and
    the recomputations (14)), so searches cost at most half the work, times
    ``f`` (below) once the searches stop finding new coordinates; rounds stop
    early once one changes nothing.

    ``schedule`` orders the updates of a round. ``JACOBI`` is Algorithm 2 as
    printed: (13) on every active sample at the current w, then (11) on every
    active feature; a round is then a proximal gradient ascent step on the dual
    restricted to the active sets, monotone only for ``η ≤ n²μ/‖[X]_A‖₂²``, so
    the default η (Theorem 4.2's (16) with ``s = ‖w - w̄‖₀`` measured at the
    search) is capped at ``n²μ/σ²``, σ² the smaller of ``‖[X]_A‖_F²`` and
    ``‖[X]_A‖₁‖[X]_A‖∞`` (two upper bounds of ``‖[X]_A‖₂²``).
    ``GAUSS_SEIDEL`` applies (11) to the features of sample i right after (13)
    on i (same cost), so ``w_A = w̄_A(α)`` holds after every dual step: each
    step is a proximal coordinate step on the dual restricted to the active
    sets, whose coordinate i is ``‖[x_i]_A‖²/(n²μ)``-smooth; the default step is
    the inverse of that constant, ``η_i = n²μ/‖[x_i]_A‖²`` (the SDCA step on the
    submatrix; (16) with s = 1 is 2.5× to n-fold shorter, see the solver's
    docstring). A fixed ``eta > 0`` overrides both defaults; ``stats[0]``
    receives the smallest step of the iteration. ``counts = [|A_x|, |A_y|, f]``,
    ``f`` the factor on the balanced rounds (doubles while successive searches
    add at most 1% to each set, back to 1 otherwise).
    Returns ``(entries, updates)``; ``stats`` as in :func:`dgpd_epoch`.
    """
    n = y.shape[0]
    d = w.shape[0]
    inv_n = 1.0 / n
    nx = counts[0]
    ny = counts[1]
    matrix = 0
    vector = 0
    updates = 0

    # (14): xta = Σ_{i ∈ A_y} α_i x_i
    xta[:] = 0.0
    for t in range(ny):
        i = act_y[t]
        slice_axpy(rdata, rindices, rindptr, i, alpha[i], xta)
        matrix += rindptr[i + 1] - rindptr[i]
    # (10)-(11): scores |w̄_k| of outsiders, exact update of insiders, s = ‖w - w̄‖₀
    s_count = 0
    for k in range(d):
        tb = soft_threshold(xta[k] * inv_n, l1) / l2
        if tb != w[k]:
            s_count += 1
        if pos_x[k] >= 0:
            scores_x[k] = -1.0
            if tb != w[k]:
                w[k] = tb
                updates += 1
        else:
            scores_x[k] = abs(tb)
    vector += 2 * d
    old_nx = nx
    nx = _add_top(scores_x, act_x, pos_x, nx, max(k_add, nx) if doubling else k_add)
    for t in range(old_nx, nx):
        j = act_x[t]
        w[j] = soft_threshold(xta[j] * inv_n, l1) / l2
        updates += 1
    # (14): margins = Σ_{j ∈ A_x} w_j a_j
    margins[:] = 0.0
    for t in range(nx):
        j = act_x[t]
        slice_axpy(cdata, cindices, cindptr, j, w[j], margins)
        matrix += cindptr[j + 1] - cindptr[j]
    # (12): Gauss–Southwell over the outsiders
    for i in range(n):
        s = sw[i]
        if pos_y[i] >= 0 or s == 0.0:
            scores_y[i] = -1.0
        else:
            scores_y[i] = dual_score(code, alpha[i] / s, margins[i], y[i])
    vector += 2 * n
    old_ny = ny
    ny = _add_top(scores_y, act_y, pos_y, ny, max(k_add, ny) if doubling else k_add)
    # the sets have settled when a search adds at most 1% to each
    settled = 100 * (nx - old_nx) <= nx and 100 * (ny - old_ny) <= ny

    # §3.2: the submatrix [X]_A, rows A_y restricted to columns A_x (CSR), its
    # squared row norms, and two upper bounds of ‖[X]_A‖₂²: Frobenius² and
    # ‖·‖₁‖·‖∞ (max column abs sum times max row abs sum; column sums in scores_x)
    nnz_sub = 0
    frob = 0.0
    row_max = 0.0
    sq_max = 0.0
    sub_ptr[0] = 0
    dense = rindices.shape[0] == 0
    for t in range(nx):
        scores_x[act_x[t]] = 0.0
    for t in range(ny):
        i = act_y[t]
        start, end = u64(rindptr[i]), u64(rindptr[i + 1])
        row_abs = 0.0
        row_sq = 0.0
        for k in range(start, end):
            if dense:
                j = k - start
            else:
                j = u64(rindices[k])
            if pos_x[j] >= 0:
                v = rdata[k]
                sub_idx[nnz_sub] = j
                sub_val[nnz_sub] = v
                row_sq += v * v
                row_abs += abs(v)
                scores_x[j] += abs(v)
                nnz_sub += 1
        frob += row_sq
        sub_sq[t] = row_sq
        if row_sq > sq_max:
            sq_max = row_sq
        if row_abs > row_max:
            row_max = row_abs
        matrix += rindptr[i + 1] - rindptr[i]
        sub_ptr[t + 1] = nnz_sub
    col_max = 0.0
    for t in range(nx):
        if scores_x[act_x[t]] > col_max:
            col_max = scores_x[act_x[t]]
    sigma2 = min(frob, row_max * col_max)
    if eta > 0.0:
        step_eta = eta
    elif schedule == GAUSS_SEIDEL:
        step_eta = n * n * l2 / sq_max if sq_max > 0.0 else math.inf
    else:
        step_eta = theorem_eta(n, l2, gamma, r2, s_count)
        if sigma2 > 0.0:
            cap = n * n * l2 / sigma2
            if cap < step_eta:
                step_eta = cap

    # rounds of (13) and (11) on the active sets, through the submatrix
    n_rounds = rounds
    if balance and ny > 0:
        per_round = (2 * nnz_sub + ny + (2 * nx if schedule == JACOBI else 0))
        want = (matrix + vector + per_round - 1) // max(per_round, 1)
        if want > n_rounds:
            n_rounds = want
        # while the searches find (almost) nothing new, double the rounds between them
        counts[2] = min(2 * counts[2], MAX_ROUNDS_FACTOR) if settled else 1
        n_rounds *= counts[2]
    order = perm[:ny]
    for t in range(ny):
        order[t] = t
    for _ in range(n_rounds):
        changed = 0
        if schedule == GAUSS_SEIDEL:
            # (13) on one sample, then (11) on the features it touches: x_A = w̄_A(α)
            # holds after every dual step, so each step is a proximal step on D itself.
            # A fresh random order every round: in a fixed order dual CD on news20
            # (fig1 setup) is at a 6.7e-7 gap after 3000 epochs, shuffled it reaches
            # 4.8e-9 in 481
            shuffle(rng, order)
            for tt in range(ny):
                t = order[tt]
                i = act_y[t]
                s = sw[i]
                z = slice_dot(sub_val, sub_idx, sub_ptr, t, w)
                margins[i] = z
                a = alpha[i] / s
                if eta > 0.0:
                    c = n * s / eta
                else:
                    c = s * sub_sq[t] * inv_n / l2
                a_new = dual_coordinate_maximizer(code, a, z, y[i], c)
                if a_new != a:
                    step = s * (a_new - a)
                    alpha[i] += step
                    changed += 1
                    for k in range(u64(sub_ptr[t]), u64(sub_ptr[t + 1])):
                        j = u64(sub_idx[k])
                        xta[j] += step * sub_val[k]
                        w[j] = soft_threshold(xta[j] * inv_n, l1) / l2
            matrix += 2 * nnz_sub
            vector += ny
        else:
            # Jacobi: (13) on every active sample at the current w, then (11) on every feature
            for t in range(ny):
                i = act_y[t]
                s = sw[i]
                z = slice_dot(sub_val, sub_idx, sub_ptr, t, w)
                margins[i] = z
                a = alpha[i] / s
                a_new = dual_coordinate_maximizer(code, a, z, y[i], n * s / step_eta)
                if a_new != a:
                    alpha[i] = s * a_new
                    changed += 1
            for t in range(nx):
                xta[act_x[t]] = 0.0
            for t in range(ny):
                i = act_y[t]
                ai = alpha[i]
                for k in range(u64(sub_ptr[t]), u64(sub_ptr[t + 1])):
                    xta[u64(sub_idx[k])] += ai * sub_val[k]
            for t in range(nx):
                j = act_x[t]
                tb = soft_threshold(xta[j] * inv_n, l1) / l2
                if tb != w[j]:
                    w[j] = tb
                    changed += 1
            matrix += 2 * nnz_sub
            vector += 2 * nx + ny
        updates += changed
        if changed == 0:
            break  # the restricted problem is at an exact fixed point

    # step 6: kick out zeros
    counts[0] = _drop_zeros(w, act_x, pos_x, nx)
    counts[1] = _drop_zeros(alpha, act_y, pos_y, ny)
    stats[0] = step_eta
    stats[1] = s_count
    stats[2] += matrix
    stats[3] += vector
    return matrix + vector, updates


@njit(cache=True, nogil=True)
def dgpd_active_epoch(cdata, cindices, cindptr, rdata, rindices, rindptr, y, sw, w, alpha,
                      margins, xta, l1, l2, code, eta, gamma, r2, rounds, balance, schedule,
                      k_add, doubling, act_x, pos_x, act_y, pos_y, counts, sub_ptr, sub_idx,
                      sub_val, sub_sq, perm, rng, scores_x, scores_y, stats, budget):
    """Outer iterations of Algorithm 2 until ``budget`` entries are touched (at least one).

    Returns ``(entries, updates, iterations)``; stops early when an iteration
    changes nothing (an exact fixed point).
    """
    entries = 0
    updates = 0
    iters = 0
    while True:
        e, u = dgpd_active_iteration(
            cdata, cindices, cindptr, rdata, rindices, rindptr, y, sw, w, alpha, margins,
            xta, l1, l2, code, eta, gamma, r2, rounds, balance, schedule, k_add, doubling,
            act_x, pos_x, act_y, pos_y, counts, sub_ptr, sub_idx, sub_val, sub_sq, perm, rng,
            scores_x, scores_y, stats)
        entries += e
        updates += u
        iters += 1
        if u == 0 or entries >= budget:
            break
    return entries, updates, iters


@njit(cache=True)
def lagrangian_terms(code, margins, alpha, y, sw):
    """``-(1/n)[αᵀ(Xw) + Σ s_i φ*(-α_i/s_i)]``: the data part of L(w, α) (``-inf`` if infeasible)."""
    n = margins.shape[0]
    total = 0.0
    for i in range(n):
        s = sw[i]
        if s == 0.0:
            continue
        total += alpha[i] * margins[i] + s * conjugate_at_neg(code, alpha[i] / s, y[i])
    if not math.isfinite(total):
        return -math.inf
    return -total / n


@njit(cache=True)
def primal_gap_sum(w, xta, inv_n, l1, l2):
    """``Σ_k D_k = L(w, α) - min_w' L(w', α)``: Δ_p of Definition 4.1 (``xta = Xᵀα``)."""
    total = 0.0
    for k in range(w.shape[0]):
        total += coordinate_decrease(w[k], xta[k] * inv_n, l1, l2)[1]
    return total
