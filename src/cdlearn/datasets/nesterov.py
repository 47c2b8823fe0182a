"""Lasso instances with a known optimum (Nesterov's generator, RCDC paper §6.1).

The RCDC paper (Richtárik & Takáč, §6.1, "Instance generator") tests
Algorithm 4 on problems

    F(x) = ½‖Ax − b‖² + λ‖x‖₁,   A ∈ R^{m×n},

built by a variant of the generator of Nesterov (CORE DP 2007/76, §6): pick a
sparse A, a residual v*, a support S and signs; shape the columns so that

    a_iᵀv* = λ·sign(x*_i)  (i ∈ S),      |a_iᵀv*| < λ  (i ∉ S),

and set b = A x* + v*. Then Aᵀ(Ax* − b) = −Aᵀv* ∈ −λ∂‖x*‖₁, so x* is optimal,
the inequality off S is strict (x* is the unique optimum whenever A_S has full
column rank and, in particular, whenever m > n and A has full column rank), and
F* = ½‖v*‖² + λ‖x*‖₁ is known exactly.

In the library's convention A is ``X`` with shape ``(n_samples, n_features)``.

Memory: the matrix is written straight into its final CSC arrays (no COO or
temporary copy of the nonzeros), so the peak is about the size of A plus two
length-m float64 vectors (v* and b) plus a few length-n vectors.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = ["make_lasso_known_optimum"]

_INT32_MAX = int(np.iinfo(np.int32).max)
_DISTRIBUTIONS = ("uniform", "lognormal", "pareto", "natural")
# A column whose part orthogonal to v* is below this (relative) cannot be rotated:
# it is (numerically) parallel to v* on its rows, e.g. a column with one nonzero.
_PARALLEL_RTOL = 1e-12


# --------------------------------------------------------------------------- kernels


@njit(cache=True)
def _fill_pattern(indptr, indices, data, n_rows, seed):
    """Distinct sorted random rows and uniform(-1, 1) \\ {0} values for every column."""
    # numba keeps its own RNG; seeding it here from the caller's Generator makes the
    # pattern a function of ``seed`` alone.
    np.random.seed(seed)
    n_cols = indptr.shape[0] - 1
    for j in range(n_cols):
        start = indptr[j]
        end = indptr[j + 1]
        k = end - start
        if k == 0:
            continue
        if 4 * k > n_rows:
            # Dense column: rejection would stall, selection sampling (Knuth's
            # Algorithm S) is O(n_rows) <= O(4k) and emits rows already sorted.
            sel = 0
            for r in range(n_rows):
                if (n_rows - r) * np.random.random() < k - sel:
                    indices[start + sel] = r
                    sel += 1
                    if sel == k:
                        break
        else:
            for p in range(start, end):
                indices[p] = np.random.randint(0, n_rows)
            # With k <= n_rows/4 each redraw collides with probability < 1/4, so
            # this loop runs O(1) times on average (usually once: k²/2m is small).
            while True:
                seg = indices[start:end]
                seg.sort()
                dup = False
                prev = seg[0]
                for q in range(1, k):
                    if seg[q] == prev:
                        seg[q] = np.random.randint(0, n_rows)
                        dup = True
                    else:
                        prev = seg[q]
                if not dup:
                    break
        for p in range(start, end):
            val = 0.0
            while val == 0.0:
                val = 2.0 * np.random.random() - 1.0
            data[p] = val


@njit(cache=True)
def _column_stats(indptr, indices, data, v):
    """Per column: a_iᵀv, ‖v restricted to the column's rows‖², ‖a_i‖²."""
    n_cols = indptr.shape[0] - 1
    dot = np.zeros(n_cols)
    vv = np.zeros(n_cols)
    aa = np.zeros(n_cols)
    for j in range(n_cols):
        s_dot = 0.0
        s_vv = 0.0
        s_aa = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            a = np.float64(data[p])
            vr = v[indices[p]]
            s_dot += a * vr
            s_vv += vr * vr
            s_aa += a * a
        dot[j] = s_dot
        vv[j] = s_vv
        aa[j] = s_aa
    return dot, vv, aa


@njit(cache=True)
def _shape_columns(indptr, indices, data, v, theta, gamma, target, vv):
    """a_i ← θ_i a_i + γ_i v|rows, then fix a_iᵀv to ``target`` exactly; return ‖a_i‖², a_iᵀv."""
    n_cols = indptr.shape[0] - 1
    lip = np.zeros(n_cols)
    dot = np.zeros(n_cols)
    for j in range(n_cols):
        start = indptr[j]
        end = indptr[j + 1]
        if start == end:
            continue
        th = theta[j]
        ga = gamma[j]
        s_dot = 0.0
        for p in range(start, end):
            vr = v[indices[p]]
            a = th * np.float64(data[p]) + ga * vr
            data[p] = a
            s_dot += np.float64(data[p]) * vr
        # θ·c and γ·‖v_R‖² may nearly cancel; one correction step along v_R brings
        # a_iᵀv* back to λ·t_i up to a few ulps, which is what the KKT tests see.
        if vv[j] > 0.0:
            corr = (target[j] - s_dot) / vv[j]
            for p in range(start, end):
                data[p] = np.float64(data[p]) + corr * v[indices[p]]
        s_dot = 0.0
        s_aa = 0.0
        for p in range(start, end):
            a = np.float64(data[p])
            s_dot += a * v[indices[p]]
            s_aa += a * a
        lip[j] = s_aa
        dot[j] = s_dot
    return lip, dot


@njit(cache=True)
def _add_columns(indptr, indices, data, cols, coef, out):
    """out += Σ_k coef[k]·a_{cols[k]} (A x* restricted to the support)."""
    for q in range(cols.shape[0]):
        j = cols[q]
        c = coef[q]
        for p in range(indptr[j], indptr[j + 1]):
            out[indices[p]] += c * np.float64(data[p])


# --------------------------------------------------------------------------- validation


def _check_int(name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _check_positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def _check_distribution(value, n_features):
    if isinstance(value, str):
        if value not in _DISTRIBUTIONS:
            raise ValueError(
                f"column_distribution must be one of {_DISTRIBUTIONS} or an array of "
                f"n_features positive squared column norms, got {value!r}"
            )
        return value
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"column_distribution must be a name or an array of floats, got {value!r}"
        ) from exc
    if arr.shape != (n_features,):
        raise ValueError(
            f"column_distribution array must have shape ({n_features},), got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0.0):
        raise ValueError("column_distribution array must be finite and > 0")
    return arr


# --------------------------------------------------------------------------- generator


def make_lasso_known_optimum(
    n_samples,
    n_features,
    *,
    nnz_per_column=None,
    density=None,
    support_size,
    lam=1.0,
    x_scale=1.0,
    column_distribution="uniform",
    seed=0,
    dtype=np.float64,
    return_info=False,
):
    """Sparse Lasso instance whose minimiser and optimal value are known exactly.

    Nesterov's generator as used in the RCDC paper, §6.1 ("Instance generator",
    Tables 5-8, Figures 1-6): for ``F(x) = ½‖Ax − b‖² + λ‖x‖₁`` it returns ``A``,
    ``b``, a minimiser ``x_star`` and ``F_star = F(x_star) = ½‖v*‖² + λ‖x*‖₁``.

    Parameters
    ----------
    n_samples, n_features : int
        Shape ``(m, n)`` of ``A`` (the paper's m × n matrix; the library's ``X``).
    nnz_per_column : int, optional
        Exactly this many nonzeros in every column, at distinct uniformly random
        rows, so ``nnz(A) = n_features * nnz_per_column``. Give this or ``density``.
    density : float in (0, 1], optional
        Each entry is nonzero independently with this probability (column counts
        are Binomial(n_samples, density); columns may be empty).
    support_size : int
        ``‖x*‖₀``. Drawn uniformly among the columns that can carry it (nonempty
        ones; for ``"natural"`` also ``a_iᵀv* ≠ 0``), hence ValueError if fewer exist.
    lam : float > 0
        λ. Dividing it by ``n_samples`` gives scikit-learn's ``alpha``.
    x_scale : float > 0
        ``|x*_i|`` is uniform in ``(0, x_scale]`` on the support.
    column_distribution : {"uniform", "lognormal", "pareto", "natural"} or array
        Distribution of the coordinate Lipschitz constants ``L_i = ‖a_i‖²``, for
        the paper's experiments on uneven ``L_i`` (§6.1, Figure 2):

        - ``"uniform"``: ``L_i`` uniform in ``(0, 1]`` (Figure 2, plot 1-1);
        - ``"lognormal"``: ``L_i = exp(2 Z)``, ``Z ~ N(0, 1)`` (median 1, spans
          about 10^±4 for n = 10^6);
        - ``"pareto"``: ``L_i = 1 + Lomax(1.5)``, a power tail of index 1.5
          (infinite variance);
        - an array of ``n_features`` positive targets, e.g. the paper's two-point
          laws (98 % of ``1e-6`` and 2 % of ``1e3``, plot 1-2);
        - ``"natural"``: Nesterov's original rule, pure rescaling of the random
          columns (support columns get ``a_i ← λ a_i/|a_iᵀv*|``, others are
          kept if ``|a_iᵀv*| < λ`` else shrunk to ``|a_iᵀv*| = λ u_i``). Its
          support norms are heavy-tailed (``L_i ∝ 1/(a_iᵀv*)²``).

        Off the support a target is met by plain rescaling whenever that keeps
        ``|a_iᵀv*| < λ``; otherwise the column is sheared towards ``v*`` within
        its own rows (same sparsity pattern) to ``|a_iᵀv*| = λ u_i``, u_i ~ U(0, 1).
        On the support the column is sheared to ``a_iᵀv* = λ s_i`` with a random
        sign s_i; that needs ``L_i ≥ λ²/‖v*_{R_i}‖²`` (R_i: the column's rows), so
        smaller targets are raised to ``2λ²/‖v*_{R_i}‖²`` (use a smaller ``lam``
        to avoid it). Columns with one nonzero cannot be sheared and may miss
        their target too; ``info["n_target_missed"]`` counts all of these.
    seed : int, numpy Generator or None
        Same seed ⇒ identical output.
    dtype : {numpy.float64, numpy.float32}
        dtype of ``A.data``. With float32 the KKT conditions hold only up to
        float32 rounding (about 1e-7·λ); ``b`` and ``x_star`` are always float64.
    return_info : bool
        Also return a dict with ``v_star`` (= b − A x*), ``support`` (sorted),
        ``lipschitz`` (‖a_i‖²), ``correlation`` (a_iᵀv*/λ: ±1 on the support,
        in (−1, 1) off it) and ``n_target_missed``.

    Returns
    -------
    A : scipy.sparse.csc_matrix, shape (n_samples, n_features)
        Sorted, duplicate-free indices; int32 index arrays when they fit.
    b : ndarray of float64, shape (n_samples,)
    x_star : ndarray of float64, shape (n_features,)
    F_star : float
    info : dict, only if ``return_info``

    Notes
    -----
    v* is N(0, I_m), the raw nonzeros uniform in [−1, 1] \\ {0}. The inactive
    constraints are strict, so the support of the minimiser is identifiable; the
    minimiser is unique when ``A`` has full column rank (typically m > n).
    """
    m = _check_int("n_samples", n_samples, 1)
    n = _check_int("n_features", n_features, 1)
    if (nnz_per_column is None) == (density is None):
        raise ValueError("give exactly one of nnz_per_column and density")
    if nnz_per_column is not None:
        k = _check_int("nnz_per_column", nnz_per_column, 1, m)
    else:
        if isinstance(density, bool) or not isinstance(density, numbers.Real):
            raise TypeError(f"density must be a real number, got {density!r}")
        density = float(density)
        if not (0.0 < density <= 1.0):
            raise ValueError(f"density must be in (0, 1], got {density}")
    s = _check_int("support_size", support_size, 0, n)
    lam = _check_positive("lam", lam)
    x_scale = _check_positive("x_scale", x_scale)
    dist = _check_distribution(column_distribution, n)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    rng = np.random.default_rng(seed)

    # ---- sparsity pattern and raw values, written in place into the CSC arrays
    kernel_seed = int(rng.integers(0, 2**32 - 1))
    if nnz_per_column is not None:
        nnz = n * k
    else:
        counts = rng.binomial(m, density, size=n)
        nnz = int(counts.sum())
    fits32 = nnz <= _INT32_MAX and m <= _INT32_MAX
    idx_dtype = np.int32 if fits32 else np.int64
    if nnz_per_column is not None:
        indptr = np.arange(0, (n + 1) * k, k, dtype=idx_dtype)
    else:
        indptr = np.zeros(n + 1, dtype=idx_dtype)
        np.cumsum(counts, out=indptr[1:])
        del counts
    indices = np.empty(nnz, dtype=idx_dtype)
    data = np.empty(nnz, dtype=dtype)
    _fill_pattern(indptr, indices, data, m, kernel_seed)

    # ---- residual v* and one pass for c_i = b_iᵀv*, ‖v*_{R_i}‖², ‖b_i‖²
    v = rng.standard_normal(m)
    c, vv, bb = _column_stats(indptr, indices, data, v)

    natural = isinstance(dist, str) and dist == "natural"
    eligible = (c != 0.0) if natural else (vv > 0.0)
    candidates = np.flatnonzero(eligible)
    if candidates.shape[0] < s:
        raise ValueError(
            f"support_size={s} exceeds the {candidates.shape[0]} columns that can be "
            "active (nonempty columns; lower support_size or raise the density)"
        )
    support = np.sort(rng.choice(candidates, size=s, replace=False)) if s else np.zeros(0, np.int64)
    del candidates, eligible
    on = np.zeros(n, dtype=bool)
    on[support] = True
    signs = 2.0 * rng.integers(0, 2, size=s) - 1.0
    magnitudes = x_scale * (1.0 - rng.random(s))  # (0, x_scale]
    u = rng.random(n)
    u[u == 0.0] = 0.5  # u must lie in (0, 1): a zero would empty the column
    if natural:
        targets = None
    elif isinstance(dist, np.ndarray):
        targets = dist.copy()
    elif dist == "uniform":
        targets = 1.0 - rng.random(n)
    elif dist == "lognormal":
        targets = np.exp(2.0 * rng.standard_normal(n))
    else:  # pareto
        targets = 1.0 + rng.pareto(1.5, size=n)

    # ---- per-column shape: a_i = θ_i b_i + γ_i v*|R_i with a_iᵀv* = λ t_i
    sign_c = np.sign(c)
    abs_c = np.abs(c)
    theta = np.ones(n)
    gamma = np.zeros(n)
    missed = np.zeros(n, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        if natural:
            signs = sign_c[support]
            theta[support] = lam / abs_c[support]
            shrink = ~on & (abs_c >= lam)
            theta[shrink] = lam * u[shrink] / abs_c[shrink]
            t = theta * c / lam
        else:
            t = np.zeros(n)
            # off support: plain rescaling to the target norm when it stays inside
            scale = np.where(bb > 0.0, np.sqrt(targets / bb), 1.0)
            pure = ~on & (scale * abs_c < lam)
            theta[pure] = scale[pure]
            t[pure] = scale[pure] * c[pure] / lam
            shear = ~on & ~pure
            t[shear] = sign_c[shear] * u[shear]  # c ≠ 0 here since scale·|c| ≥ λ > 0
            t[support] = signs
            floor = lam * lam / vv[support]
            raised = targets[support] < floor
            targets[support] = np.maximum(targets[support], 2.0 * floor)
            missed[support] = raised
            shear |= on
            # split b_i = (c_i/‖v_R‖²) v_R + b⊥; a_i = θ b⊥ + (λ t_i/‖v_R‖²) v_R
            idx = np.flatnonzero(shear)
            c_s, vv_s, bb_s, t_s = c[idx], vv[idx], bb[idx], t[idx]
            perp = bb_s - c_s * c_s / vv_s
            along = lam * t_s / vv_s
            rot = perp > _PARALLEL_RTOL * bb_s
            th = np.zeros(idx.shape[0])
            th[rot] = np.sqrt(
                np.maximum(targets[idx][rot] - along[rot] * along[rot] * vv_s[rot], 0.0) / perp[rot]
            )
            theta[idx] = th
            gamma[idx] = along - th * c_s / vv_s
            missed[idx[~rot]] = True
            del idx, c_s, vv_s, bb_s, t_s, perp, along, rot, th, scale, pure, shear
    del sign_c, abs_c, u, targets, bb
    target_dot = lam * t
    del t
    lip, dot = _shape_columns(indptr, indices, data, v, theta, gamma, target_dot, vv)
    del theta, gamma, target_dot, vv, c

    # ---- x*, b = A x* + v*, F*
    x_star = np.zeros(n)
    x_star[support] = signs * magnitudes
    half_vv = 0.5 * float(np.dot(v, v))
    F_star = half_vv + lam * float(np.abs(x_star).sum())
    b = v.copy() if return_info else v  # in place when v* is not returned
    _add_columns(indptr, indices, data, support, x_star[support], b)

    A = sp.csc_matrix((data, indices, indptr), shape=(m, n), copy=False)
    A.has_sorted_indices = True
    if not return_info:
        return A, b, x_star, F_star
    info = {
        "v_star": v,
        "support": support.astype(np.int64),
        "lipschitz": lip,
        "correlation": dot / lam,
        "n_target_missed": int(np.count_nonzero(missed)),
    }
    return A, b, x_star, F_star, info
