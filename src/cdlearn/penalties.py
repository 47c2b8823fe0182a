"""Separable penalties λ·g(w): value, coordinate prox, conjugate, optimality.

Every separable penalty cdlearn supports is, coordinate by coordinate,
``λ1 |w_j| + λ2/2 w_j²`` for a pair of strengths (λ1, λ2) derived from
``(penalty, lam, l1_ratio)``:

===============  ==============================  ================
penalty          λ g(w)                          (λ1, λ2)
===============  ==============================  ================
``none``         0                               (0, 0)
``l2``           λ/2 ‖w‖²                        (0, λ)
``l1``           λ ‖w‖₁                          (λ, 0)
``elastic_net``  λ(ρ‖w‖₁ + (1-ρ)/2 ‖w‖²)         (λρ, λ(1-ρ))
===============  ==============================  ================

so kernels take two floats, not a penalty object, and one prox serves all.
``positive=True`` adds the constraint ``w ≥ 0`` (the indicator ι(w ≥ 0), as
scikit-learn's ``positive``): the prox is clipped at 0, the conjugate becomes
one-sided, ``Σ_j (u_j - λ1)₊² / (2λ2)`` (for λ2 = 0 the indicator of
``max_j u_j ≤ λ1``), and so does the celer rescaling of the dual point.
Block penalties (group lasso, ``group_l2``) live in :mod:`cdlearn.penalties_group`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .data import SMALL_ARRAY

PENALTIES = ("none", "l2", "l1", "elastic_net", "group_l2")


def penalty_strengths(penalty: str, lam: float, l1_ratio: float = 0.5) -> tuple[float, float]:
    """(λ1, λ2) with ``λ g(w) = λ1‖w‖₁ + λ2/2 ‖w‖²``."""
    if penalty == "none":
        return 0.0, 0.0
    if penalty == "l2":
        return 0.0, lam
    if penalty == "l1":
        return lam, 0.0
    if penalty == "elastic_net":
        return lam * l1_ratio, lam * (1.0 - l1_ratio)
    if penalty == "group_l2":
        # block penalty λ Σ_g w_g‖w_g‖: not (λ1, λ2)-separable, carried by Problem.groups
        return 0.0, 0.0
    raise ValueError(f"penalty={penalty!r} is not separable into (λ1, λ2)")


@njit(cache=True)
def soft_threshold(x, t):
    """sign(x)·max(|x| - t, 0): the prox of t|·|."""
    if x > t:
        return x - t
    if x < -t:
        return x + t
    return 0.0


@njit(cache=True)
def coordinate_prox_step(w_j, grad_j, lips_j, l1, l2, positive=False):
    """argmin_t ``grad_j (t - w_j) + L/2 (t - w_j)² + l1|t| + l2/2 t²`` (over t ≥ 0 if
    ``positive``: the soft-threshold clipped at 0).

    The proximal coordinate step of NSync (face-off Algorithm 1 for l2) and of
    RCDC for composite objectives (RCDC paper, Algorithm 2 / 4 for l1).
    """
    t = soft_threshold(lips_j * w_j - grad_j, l1) / (lips_j + l2)
    if positive and t < 0.0:
        return 0.0
    return t


@njit(cache=True)
def coordinate_violation(w_j, grad_j, l1, l2, positive=False):
    """Distance of ``-grad_j`` to ``∂(l1|w_j| + l2/2 w_j² [+ ι(w_j ≥ 0)])``: 0 iff
    coordinate j is optimal (at ``w_j = 0`` with ``positive`` the subdifferential
    is ``(-∞, l1]``)."""
    g = grad_j + l2 * w_j
    if w_j > 0.0:
        return abs(g + l1)
    if w_j < 0.0:
        return abs(g - l1)
    if positive:
        return max(-g - l1, 0.0)
    return max(abs(g) - l1, 0.0)


@njit(cache=True)
def coordinate_violations(w, grad, l1, l2, positive=False):
    """Array of :func:`coordinate_violation` over all coordinates."""
    out = np.empty(w.shape[0])
    for j in range(w.shape[0]):
        out[j] = coordinate_violation(w[j], grad[j], l1, l2, positive)
    return out


def penalty_value(w: np.ndarray, l1: float, l2: float, positive: bool = False) -> float:
    """λ g(w) = λ1‖w‖₁ + λ2/2 ‖w‖² (+ ι(w ≥ 0): inf if ``positive`` and some w_j < 0)."""
    w = np.asarray(w, dtype=np.float64)
    if positive and w.size and w.min() < 0.0:
        return math.inf
    if w.size <= SMALL_ARRAY:
        return _penalty_value_np(w.ravel(), float(l1), float(l2))
    return float(_penalty_value(w, float(l1), float(l2)))


def penalty_conjugate(u: np.ndarray, l1: float, l2: float, positive: bool = False) -> float:
    """(λg)*(u) = Σ_j (|u_j| - λ1)₊² / (2λ2); for λ2 = 0 the indicator of ‖u‖∞ ≤ λ1.

    With ``positive``: ``Σ_j (u_j - λ1)₊² / (2λ2)``, for λ2 = 0 the indicator of
    ``max_j u_j ≤ λ1`` (``sup_{t ≥ 0} (u - λ1) t - λ2/2 t²`` coordinate-wise).
    """
    u = np.asarray(u, dtype=np.float64)
    if u.size <= SMALL_ARRAY:
        return _penalty_conjugate_np(u.ravel(), float(l1), float(l2), bool(positive))
    return float(_penalty_conjugate(u, float(l1), float(l2), bool(positive)))


def penalty_fenchel_young(w: np.ndarray, u: np.ndarray, l1: float, l2: float,
                          positive: bool = False) -> float:
    """λg(w) + (λg)*(u) - wᵀu ≥ 0, summed over coordinates without cancellation.

    With ``v = soft(u, λ1)``, ``t = u - v`` (``|t| ≤ λ1``) and λ2 > 0 each term
    is ``(λ2 w - v)²/(2λ2) + λ1|w| - w t``; for λ2 = 0 (u feasible) it is
    ``λ1|w| - w u``. (Until 2026-11-23 the second term was ``λ1(|w| - w·sign(u))``,
    which is ``λ1|w| - w t`` only where ``|u| > λ1``: elsewhere it dropped
    ``|w|(λ1 - |u|)`` and under-reported the elastic-net gap away from the optimum.)
    With ``positive`` (w ≥ 0, else inf) and ``v = (u - λ1)₊``, ``s = (λ1 - u)₊``:
    ``(λ2 w - v)²/(2λ2) + w s``; for λ2 = 0 (``u ≤ λ1``) ``w (λ1 - u)``.
    """
    w = np.asarray(w, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    if w.size <= SMALL_ARRAY:
        return _penalty_fenchel_young_np(w.ravel(), u.ravel(), float(l1), float(l2),
                                         bool(positive))
    return float(_penalty_fenchel_young(w, u, float(l1), float(l2), bool(positive)))


def dual_feasible_scale(u: np.ndarray, l1: float, l2: float, positive: bool = False) -> float:
    """Factor ``s ∈ (0, 1]`` making ``s·u`` feasible for (λg)* (celer's rescaling for l1).

    Only the l1 penalty (λ2 = 0) has a bounded dual domain ``‖u‖∞ ≤ λ1``; with
    ``positive`` it is one-sided, ``max_j u_j ≤ λ1``, and shrinking u towards 0
    keeps its negative entries feasible.
    """
    if l2 > 0:
        return 1.0
    u = np.asarray(u, dtype=np.float64)
    if positive:
        top = max(float(u.max(initial=0.0)), 0.0)
    else:
        top = float(np.abs(u).max(initial=0.0) if u.size <= SMALL_ARRAY else _max_abs(u))
    return 1.0 if top <= l1 else l1 / top


# One loop per quantity, no temporaries: on 10⁶ coordinates (the Nesterov
# Lasso) the numpy forms made ~12 arrays of 8 MB per certificate, ~15 ms of a
# 40 ms check. Sums run in index order (numpy's are pairwise): the values
# agree to rounding.
@njit(cache=True)
def _penalty_value(w, l1, l2):
    a = 0.0
    q = 0.0
    for j in range(w.shape[0]):
        a += abs(w[j])
        q += w[j] * w[j]
    val = 0.0
    if l1 > 0:
        val += l1 * a
    if l2 > 0:
        val += 0.5 * l2 * q
    return val


@njit(cache=True)
def _penalty_conjugate(u, l1, l2, positive):
    total = 0.0
    tol = 1e-12 * max(l1, 1.0)
    for j in range(u.shape[0]):
        e = (u[j] if positive else abs(u[j])) - l1
        if e > 0.0:
            if l2 > 0:
                total += e * e
            elif e > tol:
                return math.inf
    return total / (2.0 * l2) if l2 > 0 else 0.0


@njit(cache=True)
def _penalty_fenchel_young(w, u, l1, l2, positive):
    total = 0.0
    if positive:
        return _positive_fenchel_young(w, u, l1, l2)
    if l2 > 0:
        sq = 0.0
        lin = 0.0
        for j in range(w.shape[0]):
            uj = u[j]
            wj = w[j]
            sgn = 1.0 if uj > 0.0 else (-1.0 if uj < 0.0 else 0.0)
            if abs(uj) > l1:  # v = soft(u, λ1) = u - t
                t = sgn * l1
                v = uj - t
            else:
                t = uj
                v = 0.0
            r = l2 * wj - v
            sq += r * r
            if l1 > 0 and wj != 0.0:  # λ1|w| - w t = |w|(λ1 - sign(w) t) ≥ 0
                lin += abs(wj) * (l1 - t if wj > 0.0 else l1 + t)
        return sq / (2.0 * l2) + lin
    bound = l1 * (1 + 1e-12) + 1e-300
    for j in range(w.shape[0]):
        if abs(u[j]) > bound:
            return math.inf
        total += l1 * abs(w[j]) - w[j] * u[j]
    return total


@njit(cache=True)
def _positive_fenchel_young(w, u, l1, l2):
    sq = 0.0
    lin = 0.0
    bound = l1 * (1 + 1e-12) + 1e-300
    for j in range(w.shape[0]):
        wj = w[j]
        if wj < 0.0:
            return math.inf
        e = u[j] - l1
        if e > 0.0:  # v = e, s = 0
            if l2 > 0:
                r = l2 * wj - e
                sq += r * r
            elif u[j] > bound:
                return math.inf
        else:  # v = 0, s = -e
            if l2 > 0:
                r = l2 * wj
                sq += r * r
            lin += -e * wj
    return (sq / (2.0 * l2) if l2 > 0 else 0.0) + lin


@njit(cache=True)
def _max_abs(u):
    top = 0.0
    for j in range(u.shape[0]):
        a = abs(u[j])
        if a > top:
            top = a
    return top


# The same sums as numpy expressions for at most SMALL_ARRAY coordinates, where they
# cost less than compiling the loops on a first fit (cdlearn.data.SMALL_ARRAY); each
# agrees with its loop to rounding (tests/test_small_arrays.py).
def _penalty_value_np(w, l1, l2):
    val = 0.0
    if l1 > 0:
        val += l1 * float(np.abs(w).sum())
    if l2 > 0:
        val += 0.5 * l2 * float(w @ w)
    return val


def _penalty_conjugate_np(u, l1, l2, positive):
    e = (u if positive else np.abs(u)) - l1
    if l2 > 0:
        e = e[e > 0.0]
        return float(e @ e) / (2.0 * l2)
    return math.inf if np.any(e > 1e-12 * max(l1, 1.0)) else 0.0


def _penalty_fenchel_young_np(w, u, l1, l2, positive):
    bound = l1 * (1 + 1e-12) + 1e-300
    if positive:
        if np.any(w < 0.0):
            return math.inf
        e = u - l1
        up = e > 0.0
        if l2 > 0:
            r = l2 * w - np.where(up, e, 0.0)
            sq = float(r @ r) / (2.0 * l2)
        elif np.any(u > bound):
            return math.inf
        else:
            sq = 0.0
        return sq + float(np.where(up, 0.0, -e) @ w)
    if l2 > 0:
        big = np.abs(u) > l1
        t = np.where(big, np.sign(u) * l1, u)  # v = soft(u, λ1) = u - t
        r = l2 * w - np.where(big, u - t, 0.0)
        lin = 0.0
        if l1 > 0:  # λ1|w| - w t = |w|(λ1 - sign(w) t) ≥ 0
            lin = float(np.abs(w) @ np.where(w > 0.0, l1 - t, l1 + t))
        return float(r @ r) / (2.0 * l2) + lin
    if np.any(np.abs(u) > bound):
        return math.inf
    return float((l1 * np.abs(w) - w * u).sum())


def soft_threshold_array(x: np.ndarray, t: float) -> np.ndarray:
    """Elementwise sign(x)·max(|x| - t, 0) (a copy, also for t = 0)."""
    if t == 0.0:
        return np.array(x, dtype=np.float64)
    return np.sign(x) * np.maximum(np.abs(x) - t, 0.0)
