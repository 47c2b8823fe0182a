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

from .primal_cd import _column_gradient, _newton_step

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
def coordinate_bounds(g_est, r, w, lips, l1, l2, rule, upper, lower, settled):
    """Safe bounds ``lower_j ≤ score_j(g) ≤ upper_j`` for all ``g ∈ [g̃_j - r_j, g̃_j + r_j]``.

    ``settled[j]`` marks a coordinate known to be exactly optimal (its last exact
    minimisation has not been disturbed since): its score is 0. Without the mark,
    rounding leaves a score of ~1e-30 there, which rules that pick the largest
    *lower* bound (ℓ-ASCD, ``PICK_ARGMAX``) would pick forever.
    """
    for j in range(w.shape[0]):
        lj = lips[j]
        if lj == 0.0 or settled[j]:  # empty column: its gradient is 0 and w_j = 0
            upper[j] = 0.0
            lower[j] = 0.0
            continue
        rj = r[j]
        if not rj < math.inf:
            upper[j] = math.inf
            lower[j] = 0.0
            continue
        lo = g_est[j] - rj
        hi = g_est[j] + rj
        wj = w[j]
        if rule == GS_S:
            # dist(-g, ∂Ψ) is convex in g: max at an end, min at the clipped minimiser
            a = coordinate_violation(wj, lo, l1, l2)
            b = coordinate_violation(wj, hi, l1, l2)
            c = min(max(_violation_minimizer(wj, l1, l2), lo), hi)
            m = coordinate_violation(wj, c, l1, l2)
            top = max(a, b)
            upper[j] = top * top
            lower[j] = m * m
        elif rule == GS_R:
            # y*(g) is non-increasing in g: it ranges over [y*(hi), y*(lo)]
            ylo = coordinate_prox_step(wj, lo, lj, l1, l2) - wj
            yhi = coordinate_prox_step(wj, hi, lj, l1, l2) - wj
            top = max(abs(ylo), abs(yhi))
            upper[j] = top * top
            if yhi <= 0.0 <= ylo:
                lower[j] = 0.0
            else:
                m = min(abs(ylo), abs(yhi))
                lower[j] = m * m
        else:
            # Algorithm 2: v = min(V(l*, l), V(u*, u)) (concavity in g), w = min(ω_u, ω_ℓ, 0)
            dlo, ylo = model_decrease(wj, lo, lj, l1, l2)
            dhi, yhi = model_decrease(wj, hi, lj, l1, l2)
            upper[j] = -min(dlo, dhi)
            om_u = dhi + max(0.0, (lo - hi) * yhi)
            om_l = dlo + max(0.0, (hi - lo) * ylo)
            lower[j] = max(-om_u, -om_l, 0.0)


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


# --------------------------------------------------------------------------- epoch
@njit(cache=True)
def greedy_cd_epoch(
    data, indices, indptr, rdata, rindices, rindptr, y, sw, z, w, lips, l1, l2, loss_code,
    g_est, r, gram_mid, gram_rad, cnorm, beta, eps, oracle, update, rule, set_mode, pick,
    step, n_updates, rng, upper, lower, members, zold, dphi, settled, exact_active, buf, mark,
):
    """Run ``n_updates`` greedy coordinate steps.

    Returns ``(entries, updates, active_total, last_active)``: entries are the
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
    for _ in range(n_updates):
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
        nnz = end - start
        _save_margins(indices, indptr, i, z, zold)
        wi = w[i]
        if step == STEP_LINE_SEARCH and loss_code != SQUARED:
            for _ls in range(MAX_LINE_SEARCH):
                dl, visited = _newton_step(data, indices, indptr, i, z, w, y, sw, loss_code,
                                           inv_n, li, l1, l2)
                entries += visited
                if abs(dl) <= 1e-13 * max(1.0, abs(w[i])):
                    break
        else:
            gi = _column_gradient(data, indices, indptr, i, z, y, sw, loss_code, inv_n)
            entries += nnz
            dl = coordinate_prox_step(wi, gi, lmax if step == STEP_FIXED else li, l1, l2) - wi
            if dl != 0.0:
                w[i] = wi + dl
                _apply(data, indices, indptr, i, dl, z)
        delta = w[i] - wi
        gnew = _finish_step(data, indices, indptr, i, z, zold, y, sw, loss_code, inv_n, dphi)
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
    return entries, updates, active_total, k
