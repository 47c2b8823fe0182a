"""Greedy coordinate selection: steepest CD (SCD) and approximate steepest CD (ASCD).

Stich, Raj & Jaggi, *Approximate Steepest Coordinate Descent* (ICML 2017). The
problem is ``F(w) = f(w) + Σ_j Ψ_j(w_j)`` with the data term
``f(w) = 1/n Σ_i s_i φ(x_iᵀw)`` and ``Ψ_j(t) = λ1|t| + λ2/2 t²``. ``g`` always
denotes the gradient of the data term f; the penalty enters the selection
scores and the prox step.

Selection scores of coordinate j for a gradient value g (``rule``):

* ``GS_S`` -- ``dist(-g, ∂Ψ_j(w_j))²``: the Gauss–Southwell rule (4) when
  λ1 = 0 (then it is ``(g + λ2 w_j)²``), the GS-s rule of §2.3 otherwise;
* ``GS_R`` -- ``|y*|²`` with ``y* = argmin_y V_j(y, g)`` (GS-r, App. D.2);
* ``GS_Q`` -- ``-min_y V_j(y, g)`` (GS-q (16)), with the model (15) written as a
  *decrease*: ``V_j(y, g) = g y + L_j/2 y² + Ψ_j(w_j + y) - Ψ_j(w_j)``. The paper
  prints (15) without ``-Ψ_j(w_j)``; without it the rule would prefer
  coordinates with small ``|w_j|`` rather than large decrease (Nutini et al.
  define it with the difference). Algorithm 2's ``Ψ_i([x]_i)`` term in the upper
  bound ``w`` is then the value 0 of the model at ``y = 0``.

ASCD knows g only up to an interval ``[g̃_j - r_j, g̃_j + r_j]``
(:func:`coordinate_bounds` turns it into safe lower/upper bounds on the score:
Algorithm 1's ℓ², u²; Algorithm 2's -w, -v). :func:`active_set` computes I_t
(the smallest set with ``u_j < av_I(ℓ)`` for every excluded j, by sorting; or
one of the heuristics u/ℓ/a-ASCD).

Gradient oracles (§4) for the passive coordinates j ≠ i after a step γ on i:
``g_j += γ·h_ij`` where ``h_ij = ⟨a_j, D a_i⟩/n`` for some ``D = diag(s φ''(ξ))``
(Lemma 4.1; ``D = diag(s)`` for the squared loss). Each oracle gives a centre
``m_ij`` and radius ``ρ_ij`` with ``|h_ij - m_ij| ≤ ρ_ij``; then
``g̃_j += γ m_ij`` and ``r_j += |γ| ρ_ij`` (Algorithm 1's last two lines):

* ``EXACT`` (g1): the (weighted) Gram matrix. For the squared loss ρ = 0; for
  the logistic loss ``h_ij ∈ β[N_ij, P_ij]`` with P, N the Gram matrices of the
  positive / negative entry products (the bounded-Hessian variant of §4).
* ``PROJECTION`` (g2): the exact centre perturbed uniformly within
  ``ε c_ij`` and clipped to ``[-c_ij, c_ij]``, radius ``+ ε c_ij``, where
  ``c_ij = β ‖a_i‖‖a_j‖`` (weighted norms / n). A *simulation* of a
  Johnson–Lindenstrauss sketch, as the paper's §7 does on synthetic data.
* ``ZERO`` (g3): ``m = 0, ρ = c_ij`` (Cauchy–Schwarz).
* ``UNIFORM`` (g4): ``m ~ U[-c_ij, c_ij]``, ``ρ = c_ij + |m|``. The paper
  states ``δ = c_ij`` for g4, which violates its own condition (20) when the
  draw and the true product have opposite signs; ``c_ij + |m| ≤ 2 c_ij`` keeps
  the bounds safe.

The active coordinate's new gradient is computed exactly while its margins are
updated (``r_i = 0``), the update rule M of (18). With ``exact_active`` (the
caching heuristic of §4) the members of I_t get exact updates too and only
the coordinates outside I_t go through the oracle.

Steps (the method M of Algorithm 1): the prox step with ``1/L_i``
(``STEP_LIPSCHITZ``; exact minimisation for the squared loss), exact line
search (``STEP_LINE_SEARCH``; repeated proximal Newton steps for the logistic
loss), or one fixed ``1/max_j L_j`` for every coordinate (``STEP_FIXED``, the
coordinate-wise L-smooth setting of §2 and the paper's "fixed step size rule"
of §7). ``SET_ALL`` turns the kernel into uniform CD with the same steps, the
baseline "UCD" of §7 ("all algorithm variants use the same step size rule").
"""

import math

import numpy as np
from numba import njit

from cdlearn.losses import SQUARED, loss_derivative
from cdlearn.penalties import coordinate_prox_step, coordinate_violation
from cdlearn.sampling import next_double, next_index

from .primal_cd import _column_gradient, _newton_step, _residual_gradient
from .views import slice_axpy

# selection scores
GS_S, GS_R, GS_Q = 0, 1, 2
# active-set rules: safe (Algorithm 1 / 2), heuristics u-, ℓ-, a-ASCD; every coordinate (UCD)
SET_SAFE, SET_U, SET_L, SET_A, SET_ALL = 0, 1, 2, 3, 4
# gradient oracles for the passive coordinates
ORACLE_EXACT, ORACLE_PROJECTION, ORACLE_ZERO, ORACLE_UNIFORM = 0, 1, 2, 3
# how the passive gradient entries are kept: by an oracle (ASCD) or exactly (SCD)
UPDATE_ORACLE, UPDATE_GRAM, UPDATE_ROWS = 0, 1, 2
# coordinate step: 1/L_j, exact line search, or one fixed 1/max_j L_j for every coordinate
STEP_LIPSCHITZ, STEP_LINE_SEARCH, STEP_FIXED = 0, 1, 2
# pick inside the active set
PICK_UNIFORM, PICK_ARGMAX = 0, 1

MAX_LINE_SEARCH = 50


# --------------------------------------------------------------------------- scores
@njit(cache=True)
def _violation_minimizer(wj, l1, l2):
    """A gradient value g at which ``dist(-g, ∂Ψ_j(w_j))`` is 0."""
    if wj > 0.0:
        return -(l2 * wj + l1)
    if wj < 0.0:
        return -(l2 * wj - l1)
    return 0.0


@njit(cache=True)
def model_decrease(wj, g, lj, l1, l2):
    """``(min_y V_j(y, g), argmin)`` with ``V_j(y, g) = g y + L/2 y² + Ψ(w+y) - Ψ(w)``."""
    t = coordinate_prox_step(wj, g, lj, l1, l2)
    y = t - wj
    val = g * y + 0.5 * lj * y * y + l1 * (abs(t) - abs(wj)) + 0.5 * l2 * (t * t - wj * wj)
    return min(val, 0.0), y


@njit(cache=True)
def coordinate_score(wj, g, lj, l1, l2, rule):
    """The exact selection score of a coordinate whose data gradient is ``g``."""
    if lj == 0.0:
        return 0.0
    if rule == GS_S:
        v = coordinate_violation(wj, g, l1, l2)
        return v * v
    if rule == GS_R:
        y = coordinate_prox_step(wj, g, lj, l1, l2) - wj
        return y * y
    val, _ = model_decrease(wj, g, lj, l1, l2)
    return -val


@njit(cache=True)
def bound_one(gj, rj, wj, lj, l1, l2, rule):
    """``(upper, lower)`` on the score of one coordinate whose gradient lies in ``g̃_j ± r_j``."""
    if lj == 0.0:  # empty column: its gradient is 0 and w_j = 0
        return 0.0, 0.0
    if not rj < math.inf:
        return math.inf, 0.0
    lo = gj - rj
    hi = gj + rj
    if rule == GS_S:
        # dist(-g, ∂Ψ) is convex in g: max at an end, min at the clipped minimiser
        a = coordinate_violation(wj, lo, l1, l2)
        b = coordinate_violation(wj, hi, l1, l2)
        c = min(max(_violation_minimizer(wj, l1, l2), lo), hi)
        m = coordinate_violation(wj, c, l1, l2)
        top = max(a, b)
        return top * top, m * m
    if rule == GS_R:
        # y*(g) is non-increasing in g: it ranges over [y*(hi), y*(lo)]
        ylo = coordinate_prox_step(wj, lo, lj, l1, l2) - wj
        yhi = coordinate_prox_step(wj, hi, lj, l1, l2) - wj
        top = max(abs(ylo), abs(yhi))
        if yhi <= 0.0 <= ylo:
            return top * top, 0.0
        m = min(abs(ylo), abs(yhi))
        return top * top, m * m
    # Algorithm 2: v = min(V(l*, l), V(u*, u)) (concavity in g), w = min(ω_u, ω_ℓ, 0)
    dlo, ylo = model_decrease(wj, lo, lj, l1, l2)
    dhi, yhi = model_decrease(wj, hi, lj, l1, l2)
    om_u = dhi + max(0.0, (lo - hi) * yhi)
    om_l = dlo + max(0.0, (hi - lo) * ylo)
    return -min(dlo, dhi), max(-om_u, -om_l, 0.0)


@njit(cache=True)
def coordinate_bounds(g_est, r, w, lips, l1, l2, rule, upper, lower, settled):
    """Safe bounds ``lower_j ≤ score_j(g) ≤ upper_j`` for all ``g ∈ [g̃_j - r_j, g̃_j + r_j]``.

    ``settled[j]`` marks a coordinate known to be exactly optimal (its last exact
    minimisation has not been disturbed since): its score is 0. Without the mark,
    rounding leaves a score of ~1e-30 there, which rules that pick the largest
    *lower* bound (ℓ-ASCD, ``PICK_ARGMAX``) would pick forever.
    """
    for j in range(w.shape[0]):
        if settled[j]:
            upper[j] = 0.0
            lower[j] = 0.0
        else:
            upper[j], lower[j] = bound_one(g_est[j], r[j], w[j], lips[j], l1, l2, rule)


@njit(cache=True)
def active_set(upper, lower, mode, members):
    """Write the active set I_t into ``members[:k]`` and return ``k``.

    ``SET_SAFE``: the smallest I with ``upper_j < mean_{i∈I} lower_i`` for all
    ``j ∉ I`` (Algorithm 1 with u², ℓ²; Algorithm 2 with -v, -w), where we also
    drop coordinates with ``upper_j = 0`` (provably optimal; the strict ``<``
    would keep them all once every ℓ is 0, e.g. right after an exact step makes
    the only positive ℓ vanish, and the pick would degrade to uniform). A minimal such
    set is a prefix of the coordinates sorted by decreasing upper bound (if
    ``i ∈ I``, ``j ∉ I`` and ``upper_i ≤ upper_j``, dropping i keeps I valid), so
    one sort and a prefix sum find it: O(d log d).
    ``SET_U``/``SET_L``: ``argmax upper`` / ``argmax lower`` (u-, ℓ-ASCD);
    ``SET_A``: ``{j : upper_j ≥ max lower}`` (a-ASCD). These are O(d).
    ``SET_ALL``: every coordinate (uniform CD run by the same kernel and step rule).
    """
    d = upper.shape[0]
    if mode == SET_ALL:
        for j in range(d):
            members[j] = j
        return d
    if mode == SET_SAFE:
        order = np.argsort(-upper)
        acc = 0.0
        k = d
        for m in range(d - 1):
            acc += lower[order[m]]
            nxt = upper[order[m + 1]]
            if nxt * (m + 1) < acc or nxt == 0.0:
                k = m + 1
                break
        for m in range(k):
            members[m] = order[m]
        return k
    if mode == SET_U or mode == SET_L:
        vals = upper if mode == SET_U else lower
        best = -1.0
        k = 0
        for j in range(d):
            v = vals[j]
            if v > best:
                best = v
                k = 0
            if v == best:
                members[k] = j
                k += 1
        return k
    top = 0.0
    for j in range(d):
        top = max(top, lower[j])
    k = 0
    for j in range(d):
        if upper[j] >= top:
            members[k] = j
            k += 1
    return k


@njit(cache=True)
def pick_coordinate(members, k, lower, pick, rng):
    """Uniform in I_t (``PICK_UNIFORM``) or uniform in ``argmax_{I_t} lower`` (``PICK_ARGMAX``)."""
    if pick == PICK_UNIFORM:
        return members[next_index(rng, k)]
    best = -1.0
    cnt = 0
    for m in range(k):
        v = lower[members[m]]
        if v > best:
            best = v
            cnt = 1
        elif v == best:
            cnt += 1
    target = next_index(rng, cnt)
    for m in range(k):
        if lower[members[m]] == best:
            if target == 0:
                return members[m]
            target -= 1
    return members[0]


# --------------------------------------------------------------------------- steps
@njit(cache=True)
def _save_margins(indices, indptr, i, z, zold):
    start, end = indptr[i], indptr[i + 1]
    dense = indices.shape[0] == 0
    for k in range(start, end):
        zold[k - start] = z[k - start if dense else indices[k]]


@njit(cache=True)
def _finish_step(data, indices, indptr, i, z, zold, y, sw, loss_code, inv_n, dphi):
    """New exact ∇_i f, and ``dphi = s (φ'(z_new) - φ'(z_old)) / n`` on the column's support."""
    start, end = indptr[i], indptr[i + 1]
    dense = indices.shape[0] == 0
    g = 0.0
    for k in range(start, end):
        row = k - start if dense else indices[k]
        new = loss_derivative(loss_code, z[row], y[row])
        old = loss_derivative(loss_code, zold[k - start], y[row])
        dphi[k - start] = sw[row] * (new - old) * inv_n
        g += sw[row] * new * data[k]
    return g * inv_n


@njit(cache=True)
def _apply(data, indices, indptr, i, delta, z):
    start, end = indptr[i], indptr[i + 1]
    dense = indices.shape[0] == 0
    for k in range(start, end):
        z[k - start if dense else indices[k]] += delta * data[k]


@njit(cache=True)
def _coordinate_step(data, indices, indptr, i, z, zold, w, y, sw, loss_code, inv_n, li, lstep,
                     l1, l2, step, dphi, need_dphi, unit):
    """The method M of Algorithm 1 on coordinate i: ``(γ, exact new ∇_i f, entries)``.

    ``lstep`` is the prox step's constant (``L_i``, or ``max_j L_j`` for the fixed
    step); ``unit``: every sample weight is 1 (skipped); with ``need_dphi``,
    ``dphi`` receives the loss-derivative change on the column's support.
    Without it the squared loss takes ``z`` to be the *residual* ``Xw - y`` (one
    gathered vector, as primal CD) and skips that traversal: its new gradient
    is ``∇_i f + γ L_i`` (β = 1).
    """
    wi = w[i]
    if loss_code == SQUARED and not need_dphi:  # z holds the residual Xw - y here
        gi = _residual_gradient(data, indices, indptr, i, z, sw, unit) * inv_n
        dl = coordinate_prox_step(wi, gi, lstep, l1, l2) - wi
        if dl != 0.0:
            w[i] = wi + dl
            slice_axpy(data, indices, indptr, i, dl, z)
        return dl, gi + dl * li, indptr[i + 1] - indptr[i]
    _save_margins(indices, indptr, i, z, zold)
    entries = 0
    if step == STEP_LINE_SEARCH and loss_code != SQUARED:
        for _ls in range(MAX_LINE_SEARCH):
            dl, visited = _newton_step(data, indices, indptr, i, z, w, y, sw, loss_code,
                                       inv_n, li, l1, l2)
            entries += visited
            if abs(dl) <= 1e-13 * max(1.0, abs(w[i])):
                break
    else:
        gi = _column_gradient(data, indices, indptr, i, z, y, sw, loss_code, inv_n)
        entries += indptr[i + 1] - indptr[i]
        dl = coordinate_prox_step(wi, gi, lstep, l1, l2) - wi
        if dl != 0.0:
            w[i] = wi + dl
            _apply(data, indices, indptr, i, dl, z)
    gnew = _finish_step(data, indices, indptr, i, z, zold, y, sw, loss_code, inv_n, dphi)
    return w[i] - wi, gnew, entries


# --------------------------------------------------------------------------- epoch
@njit(cache=True)
def greedy_cd_epoch(
    data, indices, indptr, rdata, rindices, rindptr, y, sw, z, w, lips, l1, l2, loss_code,
    g_est, r, gram_mid, gram_rad, cnorm, beta, eps, oracle, update, rule, set_mode, pick,
    step, n_updates, max_entries, rng, upper, lower, members, zold, dphi, settled, exact_active,
    buf, mark,
):
    """Run greedy coordinate steps: ``n_updates`` of them, or fewer once ``max_entries`` are read.

    Returns ``(entries, updates, active_total, last_active, steps)``: entries are the
    matrix entries touched -- the column of every step once (as primal CD
    counts), plus the Gram entries read (``d`` per step for the Gram oracles
    and SCD's Gram update), the rows walked by SCD's exact row update, or the
    columns of I_t read by the caching heuristic (``exact_active``);
    ``active_total`` sums |I_t| over the steps.

    ``exact_active`` (ASCD, §4 "caching"): after a step on i, the gradient
    entries of the other members of I_t are updated exactly,
    ``g̃_j += Σ_k a_kj s_k (φ'(z_k^new) - φ'(z_k^old))/n`` (``buf`` holds that
    difference scattered over the rows, ``mark`` flags the members), and only
    the coordinates outside I_t go through the oracle. The paper stores these
    products in an |I_t| × n cache; computing them on the fly gives the same
    iterates (and is exact for any loss).
    ``set_mode == SET_ALL`` is uniform CD: no bounds, no oracle, O(nnz) per step.
    """
    n = y.shape[0]
    d = w.shape[0]
    inv_n = 1.0 / n
    entries = 0
    updates = 0
    active_total = 0
    k = d
    has_rad = gram_rad.shape[0] > 1
    dense_rows = rindices.shape[0] == 0
    dense_cols = indices.shape[0] == 0
    lmax = 0.0
    for j in range(d):
        lmax = max(lmax, lips[j])
    uniform_cd = set_mode == SET_ALL
    steps = 0
    while steps < n_updates and entries < max_entries:
        steps += 1
        if uniform_cd:
            k = d
            i = next_index(rng, d)
        else:
            coordinate_bounds(g_est, r, w, lips, l1, l2, rule, upper, lower, settled)
            k = active_set(upper, lower, set_mode, members)
            i = pick_coordinate(members, k, lower, pick, rng)
        active_total += k
        li = lips[i]
        if li == 0.0:
            g_est[i] = 0.0
            r[i] = 0.0
            continue
        start, end = indptr[i], indptr[i + 1]
        delta, gnew, visited = _coordinate_step(
            data, indices, indptr, i, z, zold, w, y, sw, loss_code, inv_n, li,
            lmax if step == STEP_FIXED else li, l1, l2, step, dphi, True, False)
        entries += visited
        if delta == 0.0:  # the prox step did not move: coordinate i is optimal
            g_est[i] = gnew
            r[i] = 0.0
            settled[i] = True
            continue
        updates += 1
        if uniform_cd:
            g_est[i] = gnew
            continue
        for j in range(d):
            settled[j] = False
        if update == UPDATE_ORACLE and exact_active:
            for kk in range(start, end):
                buf[kk - start if dense_cols else indices[kk]] = dphi[kk - start]
            for mm in range(k):
                j = members[mm]
                mark[j] = True
                if j == i:
                    continue
                acc = 0.0
                for q in range(indptr[j], indptr[j + 1]):
                    acc += data[q] * buf[q - indptr[j] if dense_cols else indices[q]]
                g_est[j] += acc
                entries += indptr[j + 1] - indptr[j]
            for kk in range(start, end):
                buf[kk - start if dense_cols else indices[kk]] = 0.0
        if update == UPDATE_GRAM:
            for j in range(d):
                g_est[j] += delta * gram_mid[i, j]
            entries += d
        elif update == UPDATE_ROWS:
            for kk in range(start, end):
                dp = dphi[kk - start]
                if dp == 0.0:
                    continue
                row = kk - start if indices.shape[0] == 0 else indices[kk]
                rs, re = rindptr[row], rindptr[row + 1]
                entries += re - rs
                if dense_rows:
                    for q in range(rs, re):
                        g_est[q - rs] += dp * rdata[q]
                else:
                    for q in range(rs, re):
                        g_est[rindices[q]] += dp * rdata[q]
        else:
            ad = abs(delta)
            ci = beta * cnorm[i]
            if oracle == ORACLE_EXACT or oracle == ORACLE_PROJECTION:
                entries += d
            for j in range(d):
                if j == i or mark[j]:
                    continue
                c = ci * cnorm[j]
                if oracle == ORACLE_ZERO:
                    r[j] += ad * c
                elif oracle == ORACLE_UNIFORM:
                    mid = c * (2.0 * next_double(rng) - 1.0)
                    g_est[j] += delta * mid
                    r[j] += ad * (c + abs(mid))
                else:
                    mid = gram_mid[i, j]
                    rho = gram_rad[i, j] if has_rad else 0.0
                    if oracle == ORACLE_PROJECTION:
                        mid = min(max(mid + eps * c * (2.0 * next_double(rng) - 1.0), -c), c)
                        rho += eps * c
                    g_est[j] += delta * mid
                    if rho > 0.0:
                        r[j] += ad * rho
            if exact_active:
                for mm in range(k):
                    mark[members[mm]] = False
        g_est[i] = gnew
        r[i] = 0.0
        # exact coordinate minimisation (squared loss: the 1/L_i prox step is exact) => score 0
        settled[i] = loss_code == SQUARED and step != STEP_FIXED
    return entries, updates, active_total, k, steps


# --------------------------------------------------------------------------- lazy ASCD
@njit(cache=True)
def _tree_set(tree, j, v):
    """Set leaf j of the max-tree (leaves at ``tree[size:]``) and repair its path."""
    p = tree.shape[0] // 2 + j
    tree[p] = v
    p //= 2
    while p >= 1:
        tree[p] = max(tree[2 * p], tree[2 * p + 1])
        p //= 2


@njit(cache=True)
def _tree_build(tree, vals, members, k):
    """Max-tree over ``vals`` with the ``k`` members masked (-1)."""
    size = tree.shape[0] // 2
    d = vals.shape[0]
    for j in range(size):
        tree[size + j] = vals[j] if j < d else -1.0
    for m in range(k):
        tree[size + members[m]] = -1.0
    for p in range(size - 1, 0, -1):
        tree[p] = max(tree[2 * p], tree[2 * p + 1])


@njit(cache=True)
def _tree_argmax(tree):
    size = tree.shape[0] // 2
    p = 1
    while p < size:
        p = 2 * p if tree[2 * p] >= tree[2 * p + 1] else 2 * p + 1
    return p - size


@njit(cache=True)
def select_safe(tree, upper, lower, members, k_old):
    """The minimal safe set of :func:`active_set` (``SET_SAFE``) from a max-tree of ``upper``.

    The tree holds ``upper_j`` for the coordinates outside the set and -1 for
    the members; the ``k_old`` current members are put back, then coordinates are
    popped in decreasing ``upper`` until the next one satisfies
    ``upper_j · k < Σ_{members} lower`` (or ``upper_j = 0``): O((k_old + k) log d)
    instead of a sort of all d bounds. Returns ``(k, Σ_{members} lower)``.
    """
    for m in range(k_old):
        _tree_set(tree, members[m], upper[members[m]])
    k = 0
    total = 0.0
    while True:
        top = tree[1]
        if top < 0.0:  # every coordinate is a member
            break
        if k > 0 and (top == 0.0 or top * k < total):
            break
        j = _tree_argmax(tree)
        _tree_set(tree, j, -1.0)
        members[k] = j
        k += 1
        total += lower[j]
    return k, total


@njit(cache=True)
def _grow_safe(tree, lower, members, k, total):
    """Add the largest outside coordinates to the set until it is safe again."""
    top = tree[1]
    while top > 0.0 and not top * k < total:
        j = _tree_argmax(tree)
        _tree_set(tree, j, -1.0)
        members[k] = j
        k += 1
        total += lower[j]
        top = tree[1]
    return k, total


@njit(cache=True)
def _horizon_bound(j, horizon, acc, moves, g_est, r, w, lips, cnorm, off, stamp, l1, l2, rule):
    """Bounds of coordinate j valid until the accumulator reaches ``horizon``."""
    if stamp[j] == moves and horizon == acc:
        return 0.0, 0.0  # exactly optimal and nothing moves before the horizon
    return bound_one(g_est[j], r[j] + cnorm[j] * (horizon - off[j]), w[j], lips[j], l1, l2,
                     rule)


@njit(cache=True)
def lazy_ascd_epoch(
    data, indices, indptr, y, sw, z, w, lips, l1, l2, loss_code, g_est, r, cnorm, beta, rule,
    pick, step, n_updates, max_entries, horizon_steps, rng, upper, lower, members, k0, zold,
    dphi, settled, off, stamp, tree,
):
    """ASCD with the g3 oracle (Algorithm 1, safe active set) at O(nnz of a column) per step.

    g3 grows every passive radius by the same rule, ``r_j += |γ| β‖a_i‖‖a_j‖``,
    so the radii are kept lazily: ``r_j(t) = r[j] + ‖a_j‖ (acc_t - off[j])`` with
    one accumulator ``acc += |γ| β‖a_i‖`` and an offset set when j is updated;
    a step touches its column and O(1) bookkeeping, not the d radii.

    The active set is not re-sorted every step. The bounds of every coordinate
    are evaluated at a *horizon* ``H ≥ acc`` (radii at ``acc = H``): upper
    bounds only grow and lower bounds only shrink with acc, so they hold until
    acc passes H. A set I chosen safe for the horizon bounds, ``u_j^H · |I| <
    Σ_{i∈I} ℓ_i^H`` for every j ∉ I (or ``u_j^H = 0``), stays safe while acc ≤ H:
    the coordinates outside I are not touched (g3 moves no centre) and each
    member's bounds are re-evaluated after its own step. Lemma 3.1 and Theorem
    3.2 need nothing else of I. The outside maximum is the root of a max-tree
    (members masked), so the safety test is O(1) per step. When it fails
    after a member's step, the largest outside coordinates join I until it
    holds again (O(log d) each); I is recomputed from scratch
    (:func:`select_safe`, O(|I| log d)) after 2|I| steps to shrink it back to
    the minimal set (4|I|, then 8|I| while that does not shrink it; at most
    d steps), and the horizon is moved (O(d)) when acc passes it:
    ``H = acc + horizon_steps · (mean increment of acc since the last move)``.
    I is kept across a move, grown until safe for the new horizon: on a dense
    solution (ridge) it is every coordinate, and popping it again would cost
    O(d log d) per move.

    ``stamp[j] == moves`` marks a coordinate that is exactly optimal now (its
    exact step or a null step, with no move since); it is not re-drawn.
    ``members[:k0]`` is the set of the previous call (``k0 = 0``: none); it is put
    back into the tree before the call's first set is popped.
    Returns ``(entries, updates, active_total, k, steps, vector_work)`` with
    ``vector_work`` the scalar bound evaluations and tree operations;
    ``members[:k]`` is a safe set at the final iterate.
    """
    n = y.shape[0]
    d = w.shape[0]
    inv_n = 1.0 / n
    lmax = 0.0
    for j in range(d):
        lmax = max(lmax, lips[j])
    depth = 1
    while (1 << depth) < tree.shape[0]:
        depth += 1
    for j in range(d):
        off[j] = 0.0
        stamp[j] = 0 if settled[j] else -1
    exact_settles = loss_code == SQUARED and step != STEP_FIXED
    unit = True
    for q in range(n):
        unit = unit and sw[q] == 1.0
    if loss_code == SQUARED:
        for q in range(n):  # margins -> residual for the call (see _coordinate_step)
            z[q] -= y[q]
    acc = 0.0
    moves = 0
    horizon = -1.0
    acc_moved, steps_moved = 0.0, 0
    k, total, window, period = k0, 0.0, 0, 2
    entries, updates, active_total, steps, work = 0, 0, 0, 0, 0
    reselect = True  # the first set of a call is the minimal one at the exact bounds
    while steps < n_updates and entries < max_entries:
        # with every coordinate in the set nothing needs the horizon: the move waits
        # for the next recomputation of the set
        if acc > horizon and (k < d or reselect or window >= min(period * k, d)):
            cnt = steps - steps_moved
            # (not longer for a larger set: looser bounds would keep it large)
            horizon = acc + (horizon_steps * (acc - acc_moved) / cnt if cnt > 0 else 0.0)
            acc_moved, steps_moved = acc, steps
            for j in range(d):
                upper[j], lower[j] = _horizon_bound(j, horizon, acc, moves, g_est, r, w, lips,
                                                    cnorm, off, stamp, l1, l2, rule)
            _tree_build(tree, upper, members, k)
            total = 0.0
            for m in range(k):
                total += lower[members[m]]
            work += 2 * d
            # the set stays, grown until safe for the new horizon (popping a large set
            # again would cost O(|I| log d) per move)
            k_old = k
            k, total = _grow_safe(tree, lower, members, k, total)
            work += (k - k_old) * depth
            reselect = reselect or k_old == 0
        if reselect or window >= min(period * k, d):
            work += (2 * k) * depth
            k_old = k
            k, total = select_safe(tree, upper, lower, members, k)
            work += (2 * k) * depth
            # a recomputation that did not shrink the set is tried less often
            period = 2 if k < k_old or reselect else min(2 * period, 8)
            window = 0
            reselect = False
        steps += 1
        window += 1
        active_total += k
        i = members[0]
        if pick == PICK_UNIFORM:
            i = members[next_index(rng, k)]
            for _ in range(k):
                if stamp[i] != moves:
                    break
                i = members[next_index(rng, k)]
        else:
            best, cnt = -1.0, 0
            for m in range(k):
                j = members[m]
                v = 0.0 if stamp[j] == moves else _horizon_bound(
                    j, acc, acc, moves, g_est, r, w, lips, cnorm, off, stamp, l1, l2, rule)[1]
                if v > best:
                    best, cnt, i = v, 1, j
                elif v == best:
                    cnt += 1
                    if next_index(rng, cnt) == 0:
                        i = j
            work += k
        li = lips[i]
        if li == 0.0:
            g_est[i] = 0.0
            r[i] = 0.0
            off[i] = acc
            stamp[i] = moves
            continue
        delta, gnew, visited = _coordinate_step(
            data, indices, indptr, i, z, zold, w, y, sw, loss_code, inv_n, li,
            lmax if step == STEP_FIXED else li, l1, l2, step, dphi, False, unit)
        entries += visited
        g_est[i] = gnew
        r[i] = 0.0
        if delta == 0.0:  # the prox step did not move: coordinate i is optimal
            stamp[i] = moves
        else:
            updates += 1
            acc += abs(delta) * beta * cnorm[i]
            moves += 1
            # exact coordinate minimisation (squared loss: the 1/L_i prox step is exact)
            stamp[i] = moves if exact_settles else -1
        off[i] = acc
        if acc > horizon:
            continue  # the bounds are re-evaluated at a new horizon before they are used
        ui, lo = _horizon_bound(i, horizon, acc, moves, g_est, r, w, lips, cnorm, off, stamp,
                                l1, l2, rule)
        total += lo - lower[i]
        upper[i] = ui
        lower[i] = lo
        k_old = k
        k, total = _grow_safe(tree, lower, members, k, total)
        work += (k - k_old) * depth
    if k < d and acc > horizon:
        # hand back a set that is safe at the final iterate: bounds at acc itself
        for j in range(d):
            upper[j], lower[j] = _horizon_bound(j, acc, acc, moves, g_est, r, w, lips, cnorm,
                                                off, stamp, l1, l2, rule)
        _tree_build(tree, upper, members, k)
        total = 0.0
        for m in range(k):
            total += lower[members[m]]
        k, total = _grow_safe(tree, lower, members, k, total)
        work += 2 * d
    if loss_code == SQUARED:
        for q in range(n):
            z[q] += y[q]
    for j in range(d):
        r[j] += cnorm[j] * (acc - off[j])
        settled[j] = stamp[j] == moves
    return entries, updates, active_total, k, steps, work
