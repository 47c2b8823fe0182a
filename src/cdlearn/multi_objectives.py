"""Objectives and duality gaps for a weight *matrix* ``W`` (n_features × K).

Two problems share one form (layer 2: pure math on arrays)::

    P(W, b) = 1/n Σ_i s_i φ(z_i, y_i) + λ1 Ω(W) + λ2/2 ‖W‖²_F,   z_i = x_iᵀW + b ∈ R^K

* multi-task least squares: ``φ(z, y) = ½‖z − y‖²`` (``y`` a row of ``Y``) and
  the row-group norm ``Ω(W) = Σ_j ‖W_j‖₂`` (scikit-learn's MultiTaskElasticNet);
* multinomial logistic: ``φ(z, y) = log Σ_k e^{z_k} − z_y`` (softmax cross-entropy,
  ``y`` a class index) and the elementwise ``Ω(W) = Σ_jk |W_jk|`` (scikit-learn's
  LogisticRegression penalties).

Dual (the scalar convention of :mod:`cdlearn.objectives`, row by row):
``α_i = −s_i ∇φ(z_i)``, ``U = Xᵀα/n`` and
``D(α) = −1/n Σ_i s_i φ*(−α_i/s_i, y_i) − (λg)*(U) − 1/n bᵀΣ_i α_i``.
The conjugate of the squared loss is ``φ*(v, y) = ½‖v‖² + vᵀy``; that of the
softmax cross-entropy is the negative entropy ``Σ_k q_k log q_k`` of
``q = v + e_y`` on the probability simplex (+∞ off it). With ``v = c∇φ(z)``,
``c ∈ (0, 1]`` the rescaling into the penalty's dual ball (celer's, for
``λ2 = 0``), the loss Fenchel–Young terms are ``½(1 − c)²‖z − y‖²`` and the
Kullback–Leibler divergence ``KL(q ‖ softmax(z))`` with ``q = c p + (1 − c)e_y``:
both ≥ 0 and computed without the cancellation of ``P − D``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import penalties
from .data import SMALL_ARRAY

MULTI_SQUARED, MULTINOMIAL = 0, 1


# --------------------------------------------------------------------------- losses
@njit(cache=True)
def softmax_row(Z, P, i):
    """``P[i] = softmax(Z[i])``; returns ``log Σ_k e^{Z_ik}`` (max-shifted, no overflow)."""
    K = Z.shape[1]
    m = Z[i, 0]
    for k in range(1, K):
        m = max(m, Z[i, k])
    acc = 0.0
    for k in range(K):
        e = math.exp(Z[i, k] - m)
        P[i, k] = e
        acc += e
    inv = 1.0 / acc
    for k in range(K):
        P[i, k] *= inv
    return m + math.log(acc)


def softmax_rows(Z, P):
    """``P = softmax(Z)`` row by row; returns the vector of log-sum-exps (numpy up to
    ``SMALL_ARRAY`` rows, where it costs less than compiling the loop, issue 22)."""
    if Z.shape[0] > SMALL_ARRAY:
        return _softmax_rows_loop(Z, P)
    m = Z.max(axis=1)
    np.subtract(Z, m[:, None], out=P)
    np.exp(P, out=P)
    acc = P.sum(axis=1)
    P *= (1.0 / acc)[:, None]
    return m + np.log(acc)


@njit(cache=True)
def _softmax_rows_loop(Z, P):
    """``P = softmax(Z)`` row by row; returns the vector of log-sum-exps."""
    lse = np.empty(Z.shape[0])
    for i in range(Z.shape[0]):
        lse[i] = softmax_row(Z, P, i)
    return lse


@njit(cache=True)
def _xlogx(t):
    return t * math.log(t) if t > 0.0 else 0.0


def multinomial_sums(Z, labels, sw, c):
    """``(Σ s_i φ(z_i), Σ s_i KL(q_i ‖ p_i), Σ s_i Σ_k q_ik log q_ik)`` with
    ``p_i = softmax(z_i)`` and the dual point ``q_i = c p_i + (1 − c) e_{y_i}``
    (numpy up to ``SMALL_ARRAY`` rows, as :func:`softmax_rows`)."""
    if Z.shape[0] > SMALL_ARRAY:
        return _multinomial_sums_loop(Z, labels, sw, c)
    keep = sw != 0.0
    if not keep.all():
        Z, labels, sw = Z[keep], labels[keep], sw[keep]
    rows = np.arange(Z.shape[0])
    m = Z.max(axis=1)
    lse = m + np.log(np.exp(Z - m[:, None]).sum(axis=1))
    logp = Z - lse[:, None]
    Q = c * np.exp(logp)
    Q[rows, labels] += 1.0 - c
    pos = Q > 0.0
    safe = np.where(pos, Q, 1.0)
    kl = np.where(pos, Q * (np.log(safe) - logp), 0.0).sum(axis=1)
    ent = (Q * np.log(safe)).sum(axis=1)
    return (float(sw @ (lse - Z[rows, labels])), float(sw @ np.maximum(kl, 0.0)),
            float(sw @ ent))


@njit(cache=True)
def _multinomial_sums_loop(Z, labels, sw, c):
    n, K = Z.shape
    loss = 0.0
    fy = 0.0
    negent = 0.0
    for i in range(n):
        s = sw[i]
        if s == 0.0:
            continue
        m = Z[i, 0]
        for k in range(1, K):
            m = max(m, Z[i, k])
        acc = 0.0
        for k in range(K):
            acc += math.exp(Z[i, k] - m)
        lse = m + math.log(acc)
        yi = labels[i]
        loss += s * (lse - Z[i, yi])
        kl = 0.0
        ent = 0.0
        for k in range(K):
            logp = Z[i, k] - lse
            q = c * math.exp(logp) + (1.0 - c if k == yi else 0.0)
            if q > 0.0:
                kl += q * (math.log(q) - logp)
                ent += _xlogx(q)
        fy += s * max(kl, 0.0)
        negent += s * ent
    return loss, fy, negent


def multinomial_loss_gradient(Z, labels, sw, scale):
    """``scale · Σ_i s_i φ(z_i, y_i)``; overwrites ``Z`` with its gradient
    ``scale · s_i (softmax(z_i) − e_{y_i})`` (one pass: the L-BFGS objective; numpy
    up to ``SMALL_ARRAY`` rows, as :func:`softmax_rows`)."""
    if Z.shape[0] > SMALL_ARRAY:
        return _multinomial_loss_gradient_loop(Z, labels, sw, scale)
    rows = np.arange(Z.shape[0])
    zy = Z[rows, labels]
    lse = softmax_rows(Z, Z)
    s = scale * sw
    Z *= s[:, None]
    Z[rows, labels] -= s
    return float(s @ (lse - zy))


@njit(cache=True)
def _multinomial_loss_gradient_loop(Z, labels, sw, scale):
    loss = 0.0
    for i in range(Z.shape[0]):
        yi = labels[i]
        zy = Z[i, yi]
        lse = softmax_row(Z, Z, i)
        s = scale * sw[i]
        loss += s * (lse - zy)
        for k in range(Z.shape[1]):
            Z[i, k] *= s
        Z[i, yi] -= s
    return loss


def multinomial_dual_point(Z, labels, sw):
    """``(α, P)``: ``α_i = −s_i (softmax(z_i) − e_{y_i})`` and the probabilities."""
    P = np.empty_like(Z)
    softmax_rows(Z, P)
    A = P.copy()
    A[np.arange(Z.shape[0]), labels] -= 1.0
    A *= -sw[:, None]
    return A, P


# --------------------------------------------------------------------------- penalties
@njit(cache=True)
def _row_norms(W):
    out = np.empty(W.shape[0])
    for j in range(W.shape[0]):
        acc = 0.0
        for k in range(W.shape[1]):
            acc += W[j, k] * W[j, k]
        out[j] = math.sqrt(acc)
    return out


@njit(cache=True)
def _row_fenchel_young(W, U, l1, l2):
    """Σ_j of λ1‖W_j‖ + λ2/2‖W_j‖² + (conjugate)(U_j) − W_jᵀU_j, term by term ≥ 0.

    With ``V_j = bst(U_j, λ1)`` and ``T_j = U_j − V_j`` (``‖T_j‖ ≤ λ1``) a row gives
    ``‖λ2 W_j − V_j‖²/(2λ2) + λ1‖W_j‖ − W_jᵀT_j`` (the block form of
    :func:`cdlearn.penalties.penalty_fenchel_young`); for ``λ2 = 0`` (U feasible)
    ``λ1‖W_j‖ − W_jᵀU_j``.
    """
    d, K = W.shape
    total = 0.0
    for j in range(d):
        un = 0.0
        wn = 0.0
        for k in range(K):
            un += U[j, k] * U[j, k]
            wn += W[j, k] * W[j, k]
        un = math.sqrt(un)
        wn = math.sqrt(wn)
        if l2 == 0.0:
            if un > l1 * (1 + 1e-12) + 1e-300:
                return math.inf
            dot = 0.0
            for k in range(K):
                dot += W[j, k] * U[j, k]
            total += max(l1 * wn - dot, 0.0)
            continue
        shrink = 1.0 - l1 / un if un > l1 else 0.0  # V = shrink·U, T = (1 − shrink)·U
        sq = 0.0
        dot_t = 0.0
        for k in range(K):
            r = l2 * W[j, k] - shrink * U[j, k]
            sq += r * r
            dot_t += W[j, k] * (1.0 - shrink) * U[j, k]
        total += sq / (2.0 * l2) + max(l1 * wn - dot_t, 0.0)
    return total


def penalty_value(W, l1, l2, group):
    """``λ1 Ω(W) + λ2/2 ‖W‖²_F`` (Ω row-group if ``group``, else elementwise l1)."""
    if not group:
        return penalties.penalty_value(W.ravel(), l1, l2)
    return float(l1 * _row_norms(W).sum() + 0.5 * l2 * np.vdot(W, W))


def penalty_conjugate(U, l1, l2, group):
    """``(λg)*(U)``: Σ (‖U_j‖ − λ1)₊²/(2λ2) (rows or entries); an indicator for λ2 = 0."""
    if not group:
        return penalties.penalty_conjugate(U.ravel(), l1, l2)
    excess = _row_norms(U) - l1
    if l2 > 0:
        return float(np.sum(np.maximum(excess, 0.0) ** 2) / (2.0 * l2))
    return 0.0 if np.all(excess <= 1e-12 * max(l1, 1.0)) else math.inf


def penalty_fenchel_young(W, U, l1, l2, group):
    """``λg(W) + (λg)*(U) − ⟨W, U⟩ ≥ 0`` summed without cancellation."""
    if not group:
        return penalties.penalty_fenchel_young(W.ravel(), U.ravel(), l1, l2)
    return float(_row_fenchel_young(W, U, l1, l2))


def dual_feasible_scale(U, l1, l2, group):
    """``c ∈ (0, 1]`` with ``cU`` in the dual domain (bounded only when ``λ2 = 0``)."""
    if l2 > 0:
        return 1.0
    if not group:
        return penalties.dual_feasible_scale(U.ravel(), l1, l2)
    top = float(_row_norms(U).max(initial=0.0))
    return 1.0 if top <= l1 else l1 / top
