"""Group lasso penalty ``λ Σ_g w_g ‖x_g‖₂`` (layer 2: pure math, numba-ready).

The groups partition the features. They are stored as a permutation
``index`` of the features, ordered group by group, and pointers ``ptr``
(group ``g`` is ``index[ptr[g]:ptr[g+1]]``), with positive weights ``w_g``
(default ``√|g|``, the usual choice of Yuan & Lin, which makes the penalty of
a group comparable to an l1 penalty on a vector of that size).

What the block solver and the duality gap need:

* block soft-thresholding, the prox of ``t‖·‖₂`` (RCDC Algorithm 1 with block
  norms ``B_g = L_g I``: ``x_g ← bst(x_g − ∇_g f/L_g, λ w_g/L_g)``);
* the dual norm ``Ω°(u) = max_g ‖u_g‖₂ / w_g`` -- the conjugate of ``λΩ`` is
  the indicator of ``Ω°(u) ≤ λ``, so α is rescaled into that set (as celer
  does for l1);
* the Fenchel–Young gap ``λΩ(x) + (λΩ)*(u) − xᵀu = Σ_g (λ w_g‖x_g‖ − x_gᵀu_g)``
  for feasible ``u``: a sum of non-negative terms (Cauchy–Schwarz), without
  the cancellation of ``P − D``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = [
    "Groups",
    "make_groups",
    "group_penalty_value",
    "group_dual_norm",
    "group_fenchel_young",
    "group_norms",
    "block_soft_threshold",
    "group_kkt_violations",
]


@dataclass(frozen=True)
class Groups:
    """A validated partition of the features into weighted groups.

    ``index[ptr[g]:ptr[g+1]]`` are the features of group ``g`` (sorted), ``weights[g] > 0``
    its weight, ``labels[j]`` the group of feature ``j``.
    """

    ptr: np.ndarray      # int64, (n_groups + 1,)
    index: np.ndarray    # int64, (n_features,)
    weights: np.ndarray  # float64, (n_groups,)
    labels: np.ndarray   # int64, (n_features,)

    @property
    def n_groups(self) -> int:
        return self.ptr.shape[0] - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.ptr)

    def members(self, g: int) -> np.ndarray:
        return self.index[self.ptr[g]:self.ptr[g + 1]]


def make_groups(groups, n_features: int, *, weights=None, name: str = "groups") -> Groups:
    """Validate ``groups`` into a :class:`Groups` partition of ``range(n_features)``.

    ``groups`` is either

    * a list of integer index arrays (one per group), disjoint, in range, and
      together covering every feature, or
    * a vector of ``n_features`` group labels (any hashable integers/strings);
      group ``g`` is the set of features with the ``g``-th smallest label.

    ``weights`` (optional, one per group, > 0) default to ``√|g|``. A
    :class:`Groups` passes through (after a size check). Errors are
    ``ValueError``/``TypeError`` naming ``groups``.
    """
    if isinstance(groups, Groups):
        if groups.labels.shape[0] != n_features:
            raise ValueError(
                f"{name} covers {groups.labels.shape[0]} features but X has {n_features}"
            )
        return groups
    if groups is None:
        raise ValueError(f"{name} is required for penalty='group_l2'")
    if isinstance(groups, (str, bytes)):
        raise TypeError(f"{name} must be a list of index arrays or a label vector")
    is_list = isinstance(groups, (list, tuple)) and len(groups) > 0 and all(
        not isinstance(g, (numbers.Number, str, bytes)) for g in groups
    )
    if is_list:
        labels = np.full(n_features, -1, dtype=np.int64)
        for k, g in enumerate(groups):
            arr = np.asarray(g)
            if arr.ndim != 1 or arr.size == 0:
                raise ValueError(f"{name}[{k}] must be a non-empty 1-d array of feature indices")
            if arr.dtype.kind not in "iu":
                if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
                    arr = arr.astype(np.int64)
                else:
                    raise TypeError(f"{name}[{k}] must hold integer feature indices")
            arr = arr.astype(np.int64)
            if arr.min() < 0 or arr.max() >= n_features:
                raise ValueError(
                    f"{name}[{k}] has feature indices out of range [0, {n_features})"
                )
            if np.unique(arr).size != arr.size:
                raise ValueError(f"{name}[{k}] repeats a feature index")
            clash = arr[labels[arr] >= 0]
            if clash.size:
                raise ValueError(
                    f"{name} overlap: feature {int(clash[0])} is in group "
                    f"{int(labels[clash[0]])} and group {k}; groups must be disjoint"
                )
            labels[arr] = k
        missing = np.flatnonzero(labels < 0)
        if missing.size:
            raise ValueError(
                f"{name} do not cover every feature: {missing.size} feature(s) in no group "
                f"(first: {int(missing[0])}); put each feature in exactly one group"
            )
    else:
        try:
            raw = np.asarray(groups)
        except Exception as exc:
            raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
        if raw.ndim != 1:
            raise ValueError(
                f"{name} must be a list of index arrays or a label vector of length "
                f"{n_features}, got an array of shape {raw.shape}"
            )
        if raw.shape[0] != n_features:
            raise ValueError(
                f"{name} as a label vector must have {n_features} entries (one per feature), "
                f"got {raw.shape[0]}"
            )
        if raw.dtype.kind == "f" and not np.all(np.isfinite(raw)):
            raise ValueError(f"{name} labels contain NaN or infinity")
        _, labels = np.unique(raw, return_inverse=True)
        labels = labels.astype(np.int64).ravel()
    n_groups = int(labels.max()) + 1
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=n_groups)
    ptr = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    if weights is None:
        w = np.sqrt(counts.astype(np.float64))
    else:
        w = np.asarray(weights, dtype=np.float64).ravel()
        if w.shape != (n_groups,):
            raise ValueError(f"group weights must have {n_groups} entries, got {w.shape[0]}")
        if not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError("group weights must be finite and > 0")
    return Groups(ptr, order.astype(np.int64), w, labels)


@njit(cache=True)
def group_norms(x, ptr, index):
    """‖x_g‖₂ for every group."""
    G = ptr.shape[0] - 1
    out = np.zeros(G)
    for g in range(G):
        acc = 0.0
        for k in range(ptr[g], ptr[g + 1]):
            v = x[index[k]]
            acc += v * v
        out[g] = math.sqrt(acc)
    return out


@njit(cache=True)
def block_soft_threshold(v, t, out):
    """out = v · max(0, 1 − t/‖v‖₂): the prox of ``t‖·‖₂``; returns ‖out‖₂."""
    nrm = 0.0
    for k in range(v.shape[0]):
        nrm += v[k] * v[k]
    nrm = math.sqrt(nrm)
    if nrm <= t:
        for k in range(v.shape[0]):
            out[k] = 0.0
        return 0.0
    scale = 1.0 - t / nrm
    for k in range(v.shape[0]):
        out[k] = scale * v[k]
    return nrm - t


def group_penalty_value(x: np.ndarray, groups: Groups, lam: float) -> float:
    """λ Σ_g w_g ‖x_g‖₂."""
    return lam * float(groups.weights @ group_norms(x, groups.ptr, groups.index))


def group_dual_norm(u: np.ndarray, groups: Groups) -> float:
    """Ω°(u) = max_g ‖u_g‖₂ / w_g, the dual norm of Ω(x) = Σ_g w_g ‖x_g‖₂."""
    return float(np.max(group_norms(u, groups.ptr, groups.index) / groups.weights, initial=0.0))


def group_fenchel_young(x: np.ndarray, u: np.ndarray, groups: Groups, lam: float) -> float:
    """λΩ(x) + (λΩ)*(u) − xᵀu, summed group by group (inf if Ω°(u) > λ)."""
    unorm = group_norms(u, groups.ptr, groups.index)
    if np.any(unorm > lam * groups.weights * (1 + 1e-12) + 1e-300):
        return math.inf
    xnorm = group_norms(x, groups.ptr, groups.index)
    total = 0.0
    for g in np.flatnonzero(xnorm > 0):
        m = groups.members(g)
        total += max(lam * groups.weights[g] * xnorm[g] - float(x[m] @ u[m]), 0.0)
    return total


def group_kkt_violations(x: np.ndarray, grad: np.ndarray, groups: Groups, lam: float):
    """Per group, the distance of ``−∇_g f`` to ``λ w_g ∂‖x_g‖``: 0 iff block g is optimal.

    ``‖∇_g f‖ − λ w_g`` (clipped at 0) where ``x_g = 0``, else
    ``‖∇_g f + λ w_g x_g/‖x_g‖‖``.
    """
    out = np.empty(groups.n_groups)
    xnorm = group_norms(x, groups.ptr, groups.index)
    for g in range(groups.n_groups):
        m = groups.members(g)
        t = lam * groups.weights[g]
        if xnorm[g] == 0.0:
            out[g] = max(float(np.linalg.norm(grad[m])) - t, 0.0)
        else:
            out[g] = float(np.linalg.norm(grad[m] + t * x[m] / xnorm[g]))
    return out
