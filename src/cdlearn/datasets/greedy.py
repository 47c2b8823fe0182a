"""Problem generators for greedy coordinate selection (Stich, Raj & Jaggi, ASCD).

* :func:`make_sparse_least_squares` -- the synthetic data of the paper's §7 /
  Appendix E, "the same procedure as Nutini et al. (2015)": sparse, with
  correlated columns and very uneven column norms (Lipschitz constants).
* :func:`make_cycling_quadratic` -- Theorem 2.2's quadratic
  ``q(x) = ½ xᵀQx``, ``Q = I - 0.99/n·J``, with the start x0 of its proof
  (App. A.2) on which steepest CD cycles through the coordinates and gains
  nothing over uniform CD.

Paper notation: ``A ∈ R^{m×n}`` with m samples and n coordinates and the
objective ``½‖Ax - b‖² + λ‖x‖₁`` (31) / ``+ λ/2‖x‖²`` (30). cdlearn minimises
``1/(2m)‖Xw - y‖² + λ'g(w)``, so ``X = A``, ``y = b`` and ``λ' = λ/m``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

__all__ = ["make_sparse_least_squares", "make_cycling_quadratic", "cycling_constant"]


def make_sparse_least_squares(n_samples=1000, n_features=1000, *, density=None,
                              n_informative=None, noise=1.0, seed=0):
    """Sparse least-squares data with uneven column norms (ASCD App. E / Nutini et al.).

    Appendix E: draw ``A_ij ~ N(0, 1)``, add 1 to every entry (correlated
    columns), multiply column j by ``10·N(0, 1)`` (uneven Lipschitz constants
    ``L_j ∝ ‖a_j‖²``), keep each entry with probability ``10 log(n)/n``
    (n = ``n_features``). The paper's sizes: m = 1000 and n = 1000 (ridge, Fig. 2a/b)
    or n = 5000 (lasso).

    Appendix E does not say how b is drawn. We take (our choice)
    ``b = A x♮ + noise·N(0, I)`` with a planted ``x♮`` having
    ``n_informative`` (default ``max(1, n // 10)``) nonzero N(0, 1) entries at
    random positions, so the lasso has a sparse signal to find.

    Returns ``(X, y, x_planted)`` with X a CSC matrix of shape (m, n).
    """
    rng = np.random.default_rng(seed)
    m, n = int(n_samples), int(n_features)
    if density is None:
        density = min(1.0, 10.0 * math.log(max(n, 2)) / n)
    A = rng.standard_normal((m, n)) + 1.0
    A *= 10.0 * rng.standard_normal(n)[None, :]
    A *= rng.random((m, n)) < density
    X = sp.csc_matrix(A)
    X.eliminate_zeros()
    k = max(1, n // 10) if n_informative is None else int(n_informative)
    x = np.zeros(n)
    x[rng.choice(n, size=min(k, n), replace=False)] = rng.standard_normal(min(k, n))
    y = X @ x + noise * rng.standard_normal(m)
    return X, y, x


def cycling_constant(n: int, alpha: float = 0.01) -> float:
    """``c_α ∈ (0, 1)`` of (43): ``c^{n-1} = (1-α)/n · Σ_{i<n} c^i``.

    With ``Q = (α-1)/n·J + I`` and ``[x0]_i = c^{i-1}``, the GS rule picks the
    coordinates in the order 1, 2, ..., n, 1, ... and every exact step
    multiplies the picked coordinate by ``c^n`` (App. A.2, (44)).
    """
    from scipy.optimize import brentq

    if n <= 2:
        raise ValueError(f"n must be > 2, got {n}")

    def h(c):
        s = float(np.sum(c ** np.arange(n)))
        return c ** (n - 1) - (1.0 - alpha) / n * s

    # h(1) = 1 - (1 - α) > 0, h(c) < 0 for small c
    return brentq(h, 1e-12, 1.0, xtol=1e-15, rtol=1e-15, maxiter=500)


def make_cycling_quadratic(n: int = 20, *, alpha: float = 0.01):
    """Theorem 2.2's quadratic as a least-squares problem, with its cycling start.

    ``q(x) = ½ xᵀQx`` with ``Q = I - (1-α)/n·J`` (α = 0.01: ``Q = I - 0.99/n·J``).
    Its symmetric square root is ``R = I - a/n·J`` with ``a = 1 - √α``, so
    ``q(x) = 1/(2n)‖√n R x‖²``. Shifting by the start ``[x0]_i = c_α^{i-1}``
    (:func:`cycling_constant`), ``X = √n R`` and ``y = -X x0`` make
    ``1/(2n)‖Xu - y‖² = q(u + x0)``: CD started at ``u = 0`` (what
    ``cdlearn.solve`` does) runs exactly as CD on q started at x0, and the
    minimiser is ``w = -x0``.

    Returns ``(X, y, x0)``; X is dense (n × n).
    """
    n = int(n)
    c = cycling_constant(n, alpha)
    a = 1.0 - math.sqrt(alpha)
    R = np.eye(n) - a / n * np.ones((n, n))
    X = math.sqrt(n) * R
    x0 = c ** np.arange(n, dtype=np.float64)
    return X, -X @ x0, x0
