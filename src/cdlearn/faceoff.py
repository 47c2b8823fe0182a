"""Primal or dual RCD? The face-off quantities of Csiba & Richtárik.

Reference: D. Csiba and P. Richtárik, *Coordinate Descent Face-Off: Primal or
Dual?* (ALT 2018), ``shared/papers/faceoff-primal-or-dual.md``. Equation,
theorem and lemma numbers below are the paper's.

Orientation
-----------
The paper's ``X`` is ``d x n`` (features x examples, its *columns* are examples).
cdlearn's ``X`` is ``(n_samples, n_features)``, the transpose. So the paper's
"row i" is our feature (column) ``X[:, i]`` and its "column j" is our sample (row)
``X[j]``. With ``n = n_samples`` and ``d = n_features``:

* primal RCD (NSync, Alg. 1) samples features; serial ESO ``u_i = ||X[:, i]||²``,
* dual RCD (Quartz, Alg. 2) samples examples; serial ESO ``v_j = ||X[j]||²`` (eq. 7),
* ``C_P = Σ_features ||X[:, i]||_0 ||X[:, i]||²``,
  ``C_D = Σ_samples ||X[j]||_0 ||X[j]||²`` (eq. 16).

The binary-matrix functions (:func:`L`, :func:`U`, :func:`R` and the extremal
matrices of Lemma 9) take ``(d, n)`` in the paper's order and return matrices in
our orientation, ``n x d``.

Zero rows and columns are legal everywhere: they contribute nothing to ``C_P``,
``C_D``, ``||X||_0`` nor to the cost of an iteration; under importance sampling a
zero coordinate keeps the weight ``λn`` that eq. (14) gives it.
"""

from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from .data import as_design, check_choice, check_positive
from .losses import SMOOTH_LOSSES, smoothness

if TYPE_CHECKING:  # fractions is imported by R() only
    from fractions import Fraction

__all__ = [
    "STEP_COSTS",
    "FaceoffAnalysis",
    "analyze",
    "complexity_constants",
    "uniform_probabilities",
    "importance_probabilities",
    "iteration_complexity",
    "iteration_cost",
    "predicted_seconds",
    "total_complexity",
    "rounded_down",
    "L",
    "U",
    "R",
    "min_dual_complexity_matrix",
    "max_dual_complexity_matrix",
    "min_primal_complexity_matrix",
    "max_primal_complexity_matrix",
]


# =========================================================================== general X
def complexity_constants(X) -> tuple[float, float]:
    """``(C_P, C_D)`` of eq. (16) for ``X`` of shape ``(n_samples, n_features)``.

    ``C_P = Σ_i ||X[:, i]||_0 ||X[:, i]||²`` over features and
    ``C_D = Σ_j ||X[j]||_0 ||X[j]||²`` over samples.
    """
    design = as_design(X)
    c_p = float(np.dot(design.col_nnz, design.col_sq_norms))
    c_d = float(np.dot(design.row_nnz, design.row_sq_norms))
    return c_p, c_d


def _check_smoothness_terms(beta, lam, n):
    beta = check_positive("beta", beta, allow_zero=True)
    lam = check_positive("lam", lam)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer (the number of samples), got {n!r}")
    return beta, lam, int(n)


def uniform_probabilities(n_coordinates: int) -> np.ndarray:
    """Serial uniform sampling ``p_i = 1/m`` (§5.1)."""
    m = operator.index(n_coordinates)
    if m < 1:
        raise ValueError(f"n_coordinates must be >= 1, got {m}")
    return np.full(m, 1.0 / m)


def importance_probabilities(sq_norms, beta, lam, n) -> np.ndarray:
    """Importance sampling of eq. (14): ``p_i ∝ β u_i + λn``, normalised to sum 1.

    Parameters
    ----------
    sq_norms : array of float
        Serial ESO parameters (eq. 7): squared feature norms ``u`` for primal RCD,
        squared sample norms ``v`` for dual RCD. A zero norm still gets weight ``λn``.
    beta : float
        Smoothness of the loss (eq. 2).
    lam : float
        Regularisation λ > 0.
    n : int
        Number of samples (the ``n`` of ``λn``), for both methods.
    """
    beta, lam, n = _check_smoothness_terms(beta, lam, n)
    weights = beta * np.asarray(sq_norms, dtype=np.float64) + lam * n
    return weights / weights.sum()


def _resolve_probabilities(sampling, sq_norms, beta, lam, n) -> np.ndarray:
    if isinstance(sampling, str):
        check_choice("sampling", sampling, {"uniform", "importance"})
        if sampling == "uniform":
            return uniform_probabilities(len(sq_norms))
        return importance_probabilities(sq_norms, beta, lam, n)
    p = np.asarray(sampling, dtype=np.float64)
    if p.shape != np.shape(sq_norms):
        raise ValueError(
            f"sampling probabilities have shape {p.shape}, expected {np.shape(sq_norms)}"
        )
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError("sampling probabilities must be finite and > 0 (a proper sampling)")
    if not math.isclose(float(p.sum()), 1.0, rel_tol=1e-9):
        raise ValueError(f"sampling probabilities must sum to 1, got {p.sum()}")
    return p


def iteration_complexity(sq_norms, beta, lam, n, sampling="importance") -> float:
    """Iteration bound of eqs. (8)-(9) without the log factor.

    ``K = max_i (β u_i + λn) / (p_i λn)`` for a serial sampling ``p`` (``"uniform"``,
    ``"importance"`` (eq. 14) or an array of positive probabilities).
    """
    beta, lam, n = _check_smoothness_terms(beta, lam, n)
    u = np.asarray(sq_norms, dtype=np.float64)
    p = _resolve_probabilities(sampling, u, beta, lam, n)
    return float(np.max((beta * u + lam * n) / (p * lam * n)))


def iteration_cost(nnz, probabilities) -> float:
    """Average cost of one serial iteration, eqs. (10)-(11): ``W = Σ_i p_i ||·_i||_0``."""
    return float(np.dot(np.asarray(probabilities, dtype=np.float64), np.asarray(nnz)))


def total_complexity(sq_norms, nnz, beta, lam, n, sampling="importance") -> float:
    """Total complexity ``T = K·W`` of eqs. (12)-(13) for a serial sampling.

    Parameters
    ----------
    sq_norms, nnz : arrays
        Squared norms and nonzero counts of the sampled coordinates: features for
        primal RCD (``T_P``), samples for dual RCD (``T_D``).
    beta, lam, n : float, float, int
        Smoothness, regularisation and number of samples.
    sampling : "importance", "uniform" or array
        The serial sampling; by Theorem 2 importance sampling (14) minimises ``T``,
        giving eq. (15), ``T = ||X||_0 + β/(λn) Σ_i ||·_i||_0 ||·_i||²``.
    """
    beta, lam, n = _check_smoothness_terms(beta, lam, n)
    u = np.asarray(sq_norms, dtype=np.float64)
    p = _resolve_probabilities(sampling, u, beta, lam, n)
    return iteration_complexity(u, beta, lam, n, p) * iteration_cost(nnz, p)


# =========================================================================== analysis
#: Cost model of one run of the default methods ``solver="auto"`` chooses
#: between (primal: proximal Newton steps; dual: exact steps): ``(ns per visited
#: entry, ns per coordinate step)`` per ``(method, loss)``. Eq. (15) counts
#: entries, and an entry does not cost the same in both methods (a primal
#: Newton step evaluates φ' and φ'' at every entry of its column, a dual step
#: one scalar solve per row; the paper, §4.2, quotes about 50 for its logistic
#: primal step); every step also has a fixed cost that dominates on short rows
#: or columns. Fitted by ``python -m benchmarks.entry_cost`` on reuters-money-fx,
#: a9a, w8a, news20 (binarized) and leu (benchmarks/results/entry_cost.md;
#: refitted 2026-11-23 after the dual kernels' deeper prefetch halved their
#: per-step cost).
STEP_COSTS = {
    ("primal", "logistic"): (21.0, 142.0),
    ("dual", "logistic"): (2.74, 188.0),
    ("primal", "squared_hinge"): (12.9, 97.0),
    ("dual", "squared_hinge"): (2.55, 72.2),
    ("primal", "smooth_hinge"): (10.7, 206.0),
    ("dual", "smooth_hinge"): (2.53, 75.0),
    ("primal", "squared"): (3.77, 185.0),
    ("dual", "squared"): (2.68, 80.8),
}


def predicted_seconds(method: str, loss: str, entries: float, steps: float) -> float:
    """Run time of ``steps`` coordinate steps visiting ``entries`` entries (:data:`STEP_COSTS`)."""
    per_entry, per_step = STEP_COSTS[(method, loss)]
    return 1e-9 * (per_entry * entries + per_step * steps)


@dataclass(frozen=True)
class FaceoffAnalysis:
    """Complexity of primal vs dual RCD on one data matrix (§4-§6).

    ``K_*`` are the iteration bounds (8)-(9) without the log factor, ``T_*`` the
    total complexities (12)-(13): ``*_uniform`` for uniform serial sampling (§5.1),
    ``*_importance`` for importance sampling (14), which is optimal (Theorem 2) and
    gives eq. (15). ``ratio = T_P_importance / T_D_importance``; ``winner`` is
    ``"primal"`` when ``ratio <= 1``. The prediction ignores the constant hidden in
    eqs. (10)-(11) (the paper, §4.2: a primal step on the logistic loss evaluates
    ``φ'`` per nonzero, up to ~50x a dual step's cost).
    """

    n: int
    d: int
    nnz: int
    density: float
    loss: str
    beta: float
    lam: float
    scale: float
    C_P: float
    C_D: float
    K_P_uniform: float
    K_D_uniform: float
    K_P_importance: float
    K_D_importance: float
    T_P_uniform: float
    T_D_uniform: float
    T_P_importance: float
    T_D_importance: float
    ratio: float
    winner: str
    #: predicted seconds of primal / dual CD with importance sampling: eq. (15)'s
    #: entries and eqs. (8)-(9)'s steps priced by :data:`STEP_COSTS`
    seconds_P: float = math.nan
    seconds_D: float = math.nan

    @property
    def time_ratio(self) -> float:
        """Predicted primal/dual run time, ``seconds_P / seconds_D``."""
        return _safe_ratio(self.seconds_P, self.seconds_D)

    @property
    def choice(self) -> str:
        """The method predicted faster in time: what ``solver="auto"`` runs."""
        return "primal" if self.time_ratio <= 1.0 else "dual"

    @property
    def T_P(self) -> float:
        """Primal total complexity with the optimal (importance) sampling, eq. (15)."""
        return self.T_P_importance

    @property
    def T_D(self) -> float:
        """Dual total complexity with the optimal (importance) sampling, eq. (15)."""
        return self.T_D_importance

    @property
    def normalized(self) -> bool:
        return self.scale != 1.0

    def table(self) -> str:
        """Aligned text table of the face-off quantities."""
        head = (
            f"Face-off (Csiba & Richtárik): n={self.n:,} samples, d={self.d:,} features, "
            f"nnz={self.nnz:,} (density {100 * self.density:.2f}%)\n"
            f"loss={self.loss} (beta={self.beta:g}), lam={self.lam:.6g}, "
            + (f"entries divided by {self.scale:.6g}" if self.normalized else "not normalized")
        )
        rows = [
            ("C (eq. 16)", self.C_P, self.C_D),
            ("K uniform (8-9)", self.K_P_uniform, self.K_D_uniform),
            ("K importance (8-9)", self.K_P_importance, self.K_D_importance),
            ("T uniform (§5.1)", self.T_P_uniform, self.T_D_uniform),
            ("T importance (15)", self.T_P_importance, self.T_D_importance),
        ]
        lines = [f"{'quantity':<20}{'primal':>14}{'dual':>14}{'primal/dual':>14}"]
        for name, p, q in rows:
            lines.append(f"{name:<20}{p:>14.4g}{q:>14.4g}{_safe_ratio(p, q):>14.4g}")
        rule = "-" * len(lines[0])
        tail = (f"winner: {self.winner} (T_P/T_D = {self.ratio:.4g}, importance sampling)\n"
                f"time: {self.choice} (predicted {self.seconds_P:.3g} s / "
                f"{self.seconds_D:.3g} s = {self.time_ratio:.4g}, pricing entries and steps "
                f"with STEP_COSTS; what solver='auto' runs)")
        return "\n".join([head, rule, lines[0], rule, *lines[1:], rule, tail])

    def __str__(self) -> str:
        return self.table()


def _safe_ratio(a: float, b: float) -> float:
    if b == 0:
        return 1.0 if a == 0 else math.inf
    return a / b


def analyze(X, loss: str = "logistic", lam: float | None = None, normalize: bool = False):
    """Face-off analysis of ``X`` (``n_samples x n_features``): which RCD wins.

    Parameters
    ----------
    X : array-like or scipy.sparse, shape (n_samples, n_features)
        Validated by :func:`cdlearn.data.as_design`; zero rows/columns are legal.
    loss : str
        A smooth loss; gives β (eq. 2) through :func:`cdlearn.losses.smoothness`.
    lam : float, optional
        λ of ``P(w) = 1/n Σ φ + λ/2 ||w||²``; default ``1/n`` as in §7.
    normalize : bool
        §7's normalisation: "all the entries of X [divided] by the average column
        norm". The paper's columns are examples, so every entry is divided by
        ``s = mean_j ||X[j]||_2`` (mean over all samples, zero rows included, norms
        not squared). If ``s == 0`` nothing is scaled. ``X`` itself is not copied:
        all squared norms (hence ``C_P``, ``C_D``) are divided by ``s²``.

    Returns
    -------
    FaceoffAnalysis
    """
    design = as_design(X)
    check_choice("loss", loss, SMOOTH_LOSSES)
    beta = smoothness(loss)
    n, d, nnz = design.n_samples, design.n_features, design.nnz
    lam = 1.0 / n if lam is None else check_positive("lam", lam)

    u = design.col_sq_norms  # primal ESO (eq. 7), one per feature
    v = design.row_sq_norms  # dual ESO (eq. 7), one per sample
    scale = 1.0
    if normalize:
        mean_norm = float(np.mean(np.sqrt(v)))
        if mean_norm > 0:
            scale = mean_norm
            u = u / scale**2
            v = v / scale**2
    c_p = float(np.dot(design.col_nnz, u))
    c_d = float(np.dot(design.row_nnz, v))
    frob = float(v.sum())
    max_u = float(u.max())
    max_v = float(v.max())
    gamma = beta / (lam * n)

    t_p_imp = nnz + gamma * c_p  # eq. (15)
    t_d_imp = nnz + gamma * c_d
    ratio = _safe_ratio(t_p_imp, t_d_imp)
    return FaceoffAnalysis(
        n=n,
        d=d,
        nnz=nnz,
        density=design.density,
        loss=loss,
        beta=beta,
        lam=lam,
        scale=scale,
        C_P=c_p,
        C_D=c_d,
        K_P_uniform=d * (1.0 + gamma * max_u),  # (8) with p_i = 1/d
        K_D_uniform=n * (1.0 + gamma * max_v),  # (9) with q_j = 1/n
        K_P_importance=d + gamma * frob,  # (8) with (14): Σ_i (βu_i + λn)/(λn)
        K_D_importance=n + gamma * frob,
        T_P_uniform=nnz * (1.0 + gamma * max_u),  # §5.1
        T_D_uniform=nnz * (1.0 + gamma * max_v),
        T_P_importance=t_p_imp,
        T_D_importance=t_d_imp,
        ratio=ratio,
        winner="primal" if ratio <= 1.0 else "dual",
        seconds_P=predicted_seconds("primal", loss, t_p_imp, d + gamma * frob),
        seconds_D=predicted_seconds("dual", loss, t_d_imp, n + gamma * frob),
    )


# =========================================================================== binary X (§6.2)
def _nonneg_int(name, value) -> int:
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(value)


def _check_cardinality(alpha, d, n) -> tuple[int, int, int]:
    alpha, d, n = _nonneg_int("alpha", alpha), _nonneg_int("d", d), _nonneg_int("n", n)
    if d < 1 or n < 1:
        raise ValueError(f"d and n must be >= 1, got d={d}, n={n}")
    if not max(d, n) <= alpha <= d * n:
        raise ValueError(
            f"alpha must satisfy max(d, n) <= alpha <= d*n (Lemma 9), got alpha={alpha}, "
            f"d={d}, n={n}"
        )
    return alpha, d, n


def rounded_down(a, b) -> int:
    """``ā_b := b ⌊a/b⌋``: ``a`` rounded down to a multiple of ``b`` (§6.2)."""
    a, b = _nonneg_int("a", a), _nonneg_int("b", b)
    if b == 0:
        raise ValueError("b must be >= 1")
    return b * (a // b)


def L(alpha, n) -> int:
    """``L(α, n) = (ᾱ_n² + (α - ᾱ_n)(2ᾱ_n + n)) / n`` (§6.2), an exact integer.

    By Lemma 9 (19)-(20), ``L(α, n) = min C_D`` and ``L(α, d) = min C_P`` over
    ``d x n`` binary matrices with no zero rows/columns and ``||X||_0 = α``: the
    nonzeros are spread evenly, ``⌊α/n⌋`` or ``⌈α/n⌉`` per example. Requires
    ``α >= n >= 1``.
    """
    alpha, n = _nonneg_int("alpha", alpha), _nonneg_int("n", n)
    if not 1 <= n <= alpha:
        raise ValueError(f"L needs alpha >= n >= 1, got alpha={alpha}, n={n}")
    a_bar = rounded_down(alpha, n)
    numerator = a_bar**2 + (alpha - a_bar) * (2 * a_bar + n)
    assert numerator % n == 0  # a_bar = n q: numerator = n (n q² + r (2q + 1))
    return numerator // n


def U(alpha, d, n) -> int:
    """``U(α, d, n) = (d+1)·\\overline{(α-n)}_{d-1} + n - 1 + (α - n + 1 - \\overline{(α-n)}_{d-1})²``.

    By Lemma 9 (21)-(22), ``U(α, d, n) = max C_D`` and ``U(α, n, d) = max C_P`` over
    ``d x n`` binary matrices with no zero rows/columns and ``||X||_0 = α``:
    ``⌊(α-n)/(d-1)⌋`` examples are full (d nonzeros), one has ``b`` and the rest 1.
    Requires ``max(d, n) <= α <= dn``. For ``d = 1`` (printed formula divides by
    zero) the only such matrix has ``α = n`` and ``C_D = n``, which is returned.
    """
    alpha, d, n = _check_cardinality(alpha, d, n)
    if d == 1:
        return n
    a_bar = rounded_down(alpha - n, d - 1)
    return (d + 1) * a_bar + n - 1 + (alpha - n + 1 - a_bar) ** 2


def R(alpha, d, n) -> Fraction:
    """Tight upper bound on ``C_P/C_D`` for binary ``d x n`` matrices (Theorem 4).

    ``R(α, d, n) = U(α, n, d) / L(α, n) = max C_P / min C_D`` (Lemma 9), so that
    ``1/R(α, n, d) <= C_P(X)/C_D(X) <= R(α, d, n)`` and Lemma 10 (``d >= n``,
    ``α >= n² + 3n`` ⇒ ``R(α, d, n) <= 1``) hold.

    Note: §6.2 prints ``R(α, d, n) := U(α, d, n)/L(α, n)`` (= max C_D / min C_D,
    always >= 1), which contradicts Theorem 4 (dense ``d < n`` matrices have
    ``C_P/C_D = n/d > 1 = U(α,d,n)/L(α,n)``) and Lemma 10. The proof of Lemma 10
    bounds ``n·U(α, n, d) <= n·L(α, n)``, i.e. uses the definition implemented here.
    """
    from fractions import Fraction

    alpha, d, n = _check_cardinality(alpha, d, n)
    return Fraction(U(alpha, n, d), L(alpha, n))


def _binary_csr(n_rows, n_cols, rows, cols) -> sp.csr_matrix:
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    M = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_rows, n_cols), dtype=np.float64)
    M.sum_duplicates()
    assert M.nnz == rows.size and M.data.max(initial=1.0) == 1.0
    return M


def min_dual_complexity_matrix(d, n, alpha) -> sp.csr_matrix:
    """Binary matrix attaining ``min C_D = L(α, n)`` (Lemma 9 (19)), shape ``(n, d)``.

    Example ``j`` (our row) gets ``⌈α/n⌉`` nonzeros for ``j < α mod n``, else
    ``⌊α/n⌋``, laid out consecutively and cyclically over the features. The
    cyclic layout also spreads each feature's nonzeros evenly, so the same matrix
    attains ``min C_P = L(α, d)`` (20) too. No zero rows/columns.
    """
    alpha, d, n = _check_cardinality(alpha, d, n)
    q, r = divmod(alpha, n)
    counts = np.full(n, q, dtype=np.int64)
    counts[:r] += 1
    rows = np.repeat(np.arange(n), counts)
    cols = np.arange(alpha) % d  # consecutive: an example's ≤ d entries are distinct
    return _binary_csr(n, d, rows, cols)


def max_dual_complexity_matrix(d, n, alpha) -> sp.csr_matrix:
    """Binary matrix attaining ``max C_D = U(α, d, n)`` (Lemma 9 (21)), shape ``(n, d)``.

    ``a = ⌊(α-n)/(d-1)⌋`` examples (our rows) are full, one has
    ``b = α - n + 1 - \\overline{(α-n)}_{d-1}`` nonzeros and the other ``n - a - 1``
    have one. The non-full examples fill the features cyclically, so every feature
    has ``⌊α/d⌋`` or ``⌈α/d⌉`` nonzeros and ``C_P = L(α, d)`` is minimal as well:
    ``C_P/C_D = 1/R(α, n, d)``, the lower bound of Theorem 4 (the worst case for
    dual RCD, §7.2). No zero rows/columns.
    """
    alpha, d, n = _check_cardinality(alpha, d, n)
    if d == 1:
        n_full, counts_tail = 0, np.ones(n, dtype=np.int64)
    else:
        n_full = (alpha - n) // (d - 1)
        if n_full >= n:  # alpha == d*n: dense
            n_full, counts_tail = n, np.zeros(0, dtype=np.int64)
        else:
            b = alpha - n + 1 - rounded_down(alpha - n, d - 1)
            counts_tail = np.ones(n - n_full, dtype=np.int64)
            counts_tail[0] = b
    rows_full = np.repeat(np.arange(n_full), d)
    cols_full = np.tile(np.arange(d), n_full)
    rows_tail = n_full + np.repeat(np.arange(counts_tail.size), counts_tail)
    cols_tail = np.arange(int(counts_tail.sum())) % d
    return _binary_csr(
        n, d, np.concatenate([rows_full, rows_tail]), np.concatenate([cols_full, cols_tail])
    )


def min_primal_complexity_matrix(d, n, alpha) -> sp.csr_matrix:
    """Binary matrix attaining ``min C_P = L(α, d)`` (Lemma 9 (20)), shape ``(n, d)``.

    By symmetry (``C_P(X) = C_D(Xᵀ)``): the transpose of
    ``min_dual_complexity_matrix(n, d, α)``. It also attains ``min C_D = L(α, n)``.
    """
    return min_dual_complexity_matrix(n, d, alpha).T.tocsr()


def max_primal_complexity_matrix(d, n, alpha) -> sp.csr_matrix:
    """Binary matrix attaining ``max C_P = U(α, n, d)`` (Lemma 9 (22)), shape ``(n, d)``.

    By symmetry: the transpose of ``max_dual_complexity_matrix(n, d, α)``. It also
    has ``min C_D = L(α, n)``, so ``C_P/C_D = R(α, d, n)``, the upper bound of
    Theorem 4 (the worst case for primal RCD).
    """
    return max_dual_complexity_matrix(n, d, alpha).T.tocsr()
