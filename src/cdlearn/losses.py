"""Loss functions φ(z, y) of the margin ``z = x·w (+ b)``: pure math, numba-ready.

Every loss is identified by a small integer code, and each quantity is one
``@njit`` function that branches on the code. Kernels call these scalar
functions, so one compiled kernel serves all losses (few cached signatures,
no closures). Array helpers at the bottom (also njit) serve the objective and
duality-gap computations, so each formula is written exactly once.

Conventions (DESIGN.md): ``P(w) = 1/n Σ_i s_i φ(x_iᵀw, y_i) + λ g(w)`` and
dual variables with ``w = ∇g*(Xᵀα / (λn))`` at optimum, ``α_i = -s_i φ'(z_i)``.
The face-off paper (Csiba & Richtárik, eq. (3) and the text after it) writes
``α* = φ'``; with its own ``w* = Xα*/(λn)`` the consistent sign is ``α* = -φ'``,
which is what we use.

Losses (``y`` in {-1, +1} for the classification ones):

==============  ==============================================  ========
name            φ(z, y)                                         β
==============  ==============================================  ========
squared         ½ (z - y)²                                      1
logistic        log(1 + exp(-y z))                              1/4
squared_hinge   max(0, 1 - y z)²  (liblinear's L2-loss SVM)     2
smooth_hinge    0 if yz ≥ 1; ½ - yz if yz ≤ 0; ½(1 - yz)² else  1
hinge           max(0, 1 - y z)  (dual methods only)            ∞
==============  ==============================================  ========

The smooth hinge is Shalev-Shwartz & Zhang's with γ = 1, the loss used by the
DGPD paper (§3). Its printed "otherwise" branch ``(½ - b z)²`` is a typo: it is
not continuous at ``bz = 0``; the γ = 1 smoothing ``½(1 - bz)²`` is meant.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .data import SMALL_ARRAY

SQUARED, LOGISTIC, SQUARED_HINGE, SMOOTH_HINGE, HINGE = 0, 1, 2, 3, 4

LOSS_CODES = {
    "squared": SQUARED,
    "logistic": LOGISTIC,
    "squared_hinge": SQUARED_HINGE,
    "smooth_hinge": SMOOTH_HINGE,
    "hinge": HINGE,
}

#: smoothness β of each loss: |φ''| ≤ β (hinge is not smooth).
LOSS_SMOOTHNESS = {
    "squared": 1.0,
    "logistic": 0.25,
    "squared_hinge": 2.0,
    "smooth_hinge": 1.0,
    "hinge": math.inf,
}

SMOOTH_LOSSES = frozenset(k for k, b in LOSS_SMOOTHNESS.items() if math.isfinite(b))


def smoothness(loss: str) -> float:
    """β such that φ is β-smooth (face-off paper eq. (2)); ``inf`` for the hinge."""
    return LOSS_SMOOTHNESS[loss]


def step_smoothness(loss: str, override=None) -> float:
    """The β a method's fixed steps and importance probabilities use.

    ``override=None`` gives the loss's own β (1 for the non-smooth hinge, a
    heuristic). Any larger value is also a valid smoothness bound (eq. (2)
    holds for every β' ≥ β), with shorter steps: the face-off paper's Table 1
    ratios correspond to β = 1 for the logistic loss, whose tight β is 1/4.
    A value below the loss's β would make the steps unsafe and is refused.
    """
    beta = LOSS_SMOOTHNESS[loss]
    if override is None:
        return 1.0 if not math.isfinite(beta) else beta
    if isinstance(override, bool) or not isinstance(override, (int, float)):
        raise TypeError(f"smoothness must be a number, got {type(override).__name__}")
    value = float(override)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"smoothness must be a finite number > 0, got {override!r}")
    if math.isfinite(beta) and value < beta:
        raise ValueError(f"smoothness={override!r} is below the {loss} loss's smoothness "
                         f"β = {beta:g}: the steps would not be safe")
    return value


# --------------------------------------------------------------------------- scalars
@njit(cache=True)
def _log1pexp(t):
    # log(1 + e^t) without overflow for large t nor loss of precision for small.
    if t > 0.0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@njit(cache=True)
def _sigmoid(t):
    if t >= 0.0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


@njit(cache=True)
def _xlogx(t):
    return t * math.log(t) if t > 0.0 else 0.0


@njit(cache=True)
def loss_value(code, z, y):
    """φ(z, y)."""
    if code == SQUARED:
        r = z - y
        return 0.5 * r * r
    m = y * z
    if code == LOGISTIC:
        return _log1pexp(-m)
    if code == SQUARED_HINGE:
        r = 1.0 - m
        return r * r if r > 0.0 else 0.0
    if code == SMOOTH_HINGE:
        if m >= 1.0:
            return 0.0
        if m <= 0.0:
            return 0.5 - m
        r = 1.0 - m
        return 0.5 * r * r
    # HINGE
    r = 1.0 - m
    return r if r > 0.0 else 0.0


@njit(cache=True)
def loss_derivative(code, z, y):
    """φ'(z, y) with respect to z (for the hinge: the subgradient -y·[yz < 1])."""
    if code == SQUARED:
        return z - y
    m = y * z
    if code == LOGISTIC:
        return -y * _sigmoid(-m)
    if code == SQUARED_HINGE:
        r = 1.0 - m
        return -2.0 * y * r if r > 0.0 else 0.0
    if code == SMOOTH_HINGE:
        if m >= 1.0:
            return 0.0
        if m <= 0.0:
            return -y
        return -y * (1.0 - m)
    return -y if m < 1.0 else 0.0


@njit(cache=True)
def loss_second_derivative(code, z, y):
    """φ''(z, y) (a generalized one at kinks); used by Newton-type steps."""
    if code == SQUARED:
        return 1.0
    m = y * z
    if code == LOGISTIC:
        s = _sigmoid(m)
        return s * (1.0 - s)
    if code == SQUARED_HINGE:
        return 2.0 if m < 1.0 else 0.0
    if code == SMOOTH_HINGE:
        return 1.0 if (0.0 < m < 1.0) else 0.0
    return 0.0


@njit(cache=True)
def loss_change(code, z, dz, y):
    """φ(z + dz, y) - φ(z, y) without cancellation when ``dz`` is small.

    Line searches compare such differences with ~1e-16-sized model decreases
    near the optimum; subtracting two loss values there is pure rounding noise.
    """
    if code == SQUARED:
        return dz * (z - y + 0.5 * dz)
    if code == LOGISTIC:
        # log(1+e^{-m-δ}) - log(1+e^{-m}) = log1p(σ(-m)·expm1(-δ)), δ = y·dz
        m = y * z
        d = y * dz
        if d > -30.0:
            return math.log1p(_sigmoid(-m) * math.expm1(-d))
        return loss_value(code, z + dz, y) - loss_value(code, z, y)
    if code == SQUARED_HINGE:
        r0 = 1.0 - y * z
        r1 = r0 - y * dz
        if r0 > 0.0 and r1 > 0.0:
            return (r1 - r0) * (r1 + r0)
    elif code == SMOOTH_HINGE:
        m0 = y * z
        m1 = m0 + y * dz
        if 0.0 < m0 < 1.0 and 0.0 < m1 < 1.0:
            return -y * dz * (1.0 - m0 - 0.5 * y * dz)
    return loss_value(code, z + dz, y) - loss_value(code, z, y)


@njit(cache=True)
def conjugate_at_neg(code, a, y):
    """φ*(-a, y): the conjugate at minus the (unit-weight) dual variable ``a``.

    Finite only on the loss's dual domain; ``inf`` outside it (a small slack of
    1e-12 absorbs rounding at the boundary).
    """
    if code == SQUARED:
        return 0.5 * a * a - a * y
    t = a * y  # t ∈ [0, 1] (logistic, hinges) or t ≥ 0 (squared hinge)
    if t < -1e-12:
        return math.inf
    if t < 0.0:
        t = 0.0
    if code == SQUARED_HINGE:
        return -t + 0.25 * t * t
    if t > 1.0 + 1e-12:
        return math.inf
    if t > 1.0:
        t = 1.0
    if code == LOGISTIC:
        return _xlogx(t) + _xlogx(1.0 - t)
    if code == SMOOTH_HINGE:
        return -t + 0.5 * t * t
    return -t  # HINGE


@njit(cache=True)
def dual_coordinate_maximizer(code, a, z, y, c):
    """The exact dual coordinate step of Quartz / SDCA (face-off Algorithm 2).

    Same as :func:`dual_coordinate_step` with ``inner_eps = 0`` (the logistic
    root solved to rounding).
    """
    return dual_coordinate_step(code, a, z, y, c, 0.0)


@njit(cache=True)
def dual_coordinate_step(code, a, z, y, c, inner_eps):
    """The dual coordinate step of Quartz / SDCA (face-off Algorithm 2).

    Returns ``a'`` maximising ``-φ*(-a') - (a' - a) z - c/2 (a' - a)²`` for a
    unit-weight loss (``c = s_i v_i / (λ n)``; a sample weight ``s_i`` rescales
    ``a = α_i / s_i``). Closed forms for all losses but the logistic, whose
    optimality condition is solved by a safeguarded Newton method in the logit
    ``u = log(t / (1 - t))``, ``t = a' y``: ``u + yz + c (σ(u) - t0) = 0`` has a
    derivative in ``[1, 1 + c/4]`` and its root lies in a known bracket.
    ``inner_eps > 0`` stops that Newton method once the optimality residual is
    at most ``inner_eps`` (margin units), and returns ``a`` itself when it
    already is (liblinear's inner tolerance, Yu, Huang & Lin 2011, Alg. 3; see
    :func:`_logistic_dual_root`). The closed forms ignore it.
    """
    if c < 1e-300:
        c = 1e-300
    if code == SQUARED:
        return (y - z + c * a) / (1.0 + c)
    if code == SQUARED_HINGE:
        t = y * (y - z + c * a) / (c + 0.5)
        return y * (t if t > 0.0 else 0.0)
    if code == SMOOTH_HINGE:
        t = y * (y - z + c * a) / (1.0 + c)
    elif code == HINGE:
        t = y * a + (1.0 - y * z) / c
    else:
        return y * _logistic_dual_root(y * a, y * z, c, inner_eps)
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return y * t


@njit(cache=True)
def dual_slope(code, a, y):
    """ψ(a) = d/da [-φ*(-a)] and its derivative ψ'(a) ≤ 0 on the dual domain.

    ψ(a) is the margin at which ``a = -φ'(z)`` (for the hinge, any margin of the
    kink: its ψ is constant). Used by the pairwise dual step of an intercept.
    """
    if code == SQUARED:
        return y - a, -1.0
    t = a * y
    if code == HINGE:
        return y, 0.0
    if code == SQUARED_HINGE:
        return y - 0.5 * a, -0.5
    if code == SMOOTH_HINGE:
        return y - a, -1.0
    # LOGISTIC: -y·logit(t)
    if t <= 0.0:
        return y * math.inf, -math.inf
    if t >= 1.0:
        return -y * math.inf, -math.inf
    return -y * (math.log(t) - math.log1p(-t)), -1.0 / (t * (1.0 - t))


@njit(cache=True)
def dual_domain(code, y):
    """The interval of unit-weight dual variables ``a`` where φ*(-a) is finite."""
    if code == SQUARED:
        return -math.inf, math.inf
    if code == SQUARED_HINGE:
        return (0.0, math.inf) if y > 0 else (-math.inf, 0.0)
    return (0.0, 1.0) if y > 0 else (-1.0, 0.0)


@njit(cache=True)
def _logistic_dual_root(t0, m, c, eps):
    """Root t ∈ (0, 1) of ``log((1-t)/t) - m - c (t - t0) = 0`` via u = logit(t).

    Newton (with Halley's third-order correction) starts from the current
    point ``u = logit(t0)`` (near convergence the root moves little, so one or
    two steps suffice, as in liblinear's dual solver) and falls back to
    bisection of the bracket whenever a step leaves it. Cost per call near convergence: one ``log`` and no ``exp`` -- at the
    start ``σ(u) = t0`` is known, and once the Newton step ``δ`` is below
    1e-12 the root ``σ(u - δ)`` is returned as ``s - s(1-s)δ`` (error O(δ²)).

    ``eps`` > 0 also stops as soon as the residual ``g = u + m + c(σ(u) - t0)``
    (liblinear's ``gp``, in margin units) is ≤ eps in magnitude -- before any
    step when the current point already satisfies it, which then returns
    ``t0`` itself and costs one ``log`` (the caller skips the row update). The
    residual is the coordinate's dual gradient, so the approximate root is the
    exact maximiser of a problem perturbed by at most eps in the margin.
    ``eps = 0`` solves to rounding.
    """
    if t0 < 0.0:
        t0 = 0.0
    elif t0 > 1.0:
        t0 = 1.0
    lo = -m - c * (1.0 - t0)
    hi = -m + c * t0
    if 0.0 < t0 < 1.0:
        u = math.log(t0 / (1.0 - t0))
        s = t0
        if abs(u + m) <= eps:  # the residual at t0 (before the bracket may move u)
            return t0
    else:
        u = -m
        s = _sigmoid(u)
    if not (lo < u < hi):
        u = -m if lo < -m < hi else 0.5 * (lo + hi)
        s = _sigmoid(u)
    for _ in range(100):
        g = u + m + c * (s - t0)
        if abs(g) <= eps:
            break
        if g > 0.0:
            hi = u
        else:
            lo = u
        v = s * (1.0 - s)
        d1 = 1.0 + c * v
        step = g / d1
        if abs(step) <= 1e-12 * (1.0 + abs(u)):
            # converged; test before the bracket, which a tiny step may touch
            return s - v * step
        # Halley's correction (cubic convergence; f'' = c v (1 - 2s) is free)
        corr = 1.0 - 0.5 * step * c * v * (1.0 - 2.0 * s) / d1
        if corr > 0.5:
            step /= corr
        u_new = u - step
        if u_new <= lo or u_new >= hi:
            u_new = 0.5 * (lo + hi)
        u = u_new
        s = _sigmoid(u)
    return s


@njit(cache=True)
def fenchel_young_gap(code, z, a, y):
    """φ(z) + φ*(-a) + a·z ≥ 0, in forms free of cancellation.

    The duality gap is a sum of these terms (plus the penalty's), so
    computing each one accurately lets the gap certify solutions far below
    the rounding level of ``P - D`` (e.g. ridge solutions to 1e-10 relative).
    Returns ``inf`` when ``a`` is outside the loss's dual domain.
    """
    if code == SQUARED:
        r = z - y + a
        return 0.5 * r * r
    t = a * y
    m = y * z
    if t < -1e-12 or (code != SQUARED_HINGE and t > 1.0 + 1e-12):
        return math.inf
    t = min(max(t, 0.0), 1.0) if code != SQUARED_HINGE else max(t, 0.0)
    if code == SQUARED_HINGE:
        r = 1.0 - m
        if r > 0.0:
            q = r - 0.5 * t
            return q * q
        return t * (0.25 * t - r)
    if code == HINGE:
        return (1.0 - m) * (1.0 - t) if m < 1.0 else t * (m - 1.0)
    if code == SMOOTH_HINGE:
        if m >= 1.0:
            return t * (m - 1.0) + 0.5 * t * t
        if m <= 0.0:
            return (1.0 - t) * (0.5 * (1.0 - t) - m)
        q = 1.0 - m - t
        return 0.5 * q * q
    # LOGISTIC: KL(Bernoulli(t) || Bernoulli(p)) with p = σ(-m) = -φ'(z)·y
    p = _sigmoid(-m)
    d = t - p
    pq = p * (1.0 - p)
    if pq > 0.0 and abs(d) < 1e-4 * min(p, 1.0 - p):
        return d * d / (2.0 * pq) * (1.0 + d * (2.0 * p - 1.0) / (3.0 * pq))
    return (_xlogx(t) + t * _log1pexp(m) + _xlogx(1.0 - t) + (1.0 - t) * _log1pexp(-m))


# --------------------------------------------------------------------------- arrays
@njit(cache=True)
def weighted_loss_sum(code, z, y, sw):
    """Σ_i s_i φ(z_i, y_i)."""
    total = 0.0
    for i in range(z.shape[0]):
        if sw[i] != 0.0:
            total += sw[i] * loss_value(code, z[i], y[i])
    return total


@njit(cache=True)
def loss_derivatives(code, z, y, out):
    """out_i = φ'(z_i, y_i)."""
    for i in range(z.shape[0]):
        out[i] = loss_derivative(code, z[i], y[i])
    return out


@njit(cache=True)
def weighted_second_derivatives(code, z, y, sw, out):
    """out_i = s_i φ''(z_i, y_i): the curvature weights of the Hessian ``XᵀDX/n``."""
    for i in range(z.shape[0]):
        out[i] = sw[i] * loss_second_derivative(code, z[i], y[i])
    return out


@njit(cache=True)
def weighted_fenchel_young_sum(code, z, alpha, y, sw):
    """Σ_i s_i [φ(z_i) + φ*(-a_i) + a_i z_i] with a_i = α_i / s_i (``inf`` if infeasible)."""
    total = 0.0
    for i in range(z.shape[0]):
        s = sw[i]
        if s == 0.0:
            if alpha[i] != 0.0:
                return math.inf
            continue
        total += s * fenchel_young_gap(code, z[i], alpha[i] / s, y[i])
    return total


@njit(cache=True)
def weighted_loss_and_fenchel_young_sums(code, z, alpha, y, sw):
    """``(Σ s_i φ(z_i), Σ s_i [φ(z_i) + φ*(-a_i) + a_i z_i])`` in one pass.

    What a dual method's certificate needs (P and the gap). For the logistic
    loss the two share one ``exp`` and one ``log1p`` per sample (separately
    they cost four of each, ~60% of a reuters check); other losses call
    :func:`loss_value` and :func:`fenchel_young_gap`.
    """
    loss_total = 0.0
    fy_total = 0.0
    for i in range(z.shape[0]):
        s = sw[i]
        if s == 0.0:
            if alpha[i] != 0.0:
                fy_total = math.inf
            continue
        yi = y[i]
        a = alpha[i] / s
        if code != LOGISTIC:
            loss_total += s * loss_value(code, z[i], yi)
            fy_total += s * fenchel_young_gap(code, z[i], a, yi)
            continue
        m = yi * z[i]
        t = a * yi
        e = math.exp(-abs(m))
        l1p = math.log1p(e)
        up = max(m, 0.0) + l1p  # log(1 + e^m)
        down = up - m  # log(1 + e^-m) = φ
        loss_total += s * down
        if t < -1e-12 or t > 1.0 + 1e-12:
            fy_total = math.inf
            continue
        t = min(max(t, 0.0), 1.0)
        p = e / (1.0 + e) if m >= 0.0 else 1.0 / (1.0 + e)  # σ(-m)
        d = t - p
        pq = p * (1.0 - p)
        if pq > 0.0 and abs(d) < 1e-4 * min(p, 1.0 - p):
            fy = d * d / (2.0 * pq) * (1.0 + d * (2.0 * p - 1.0) / (3.0 * pq))
        else:
            fy = _xlogx(t) + t * up + _xlogx(1.0 - t) + (1.0 - t) * down
        fy_total += s * fy
    return loss_total, fy_total


@njit(cache=True)
def weighted_conjugate_sum(code, alpha, y, sw):
    """Σ_i s_i φ*(-α_i / s_i): the loss part of the dual, ``inf`` if infeasible."""
    total = 0.0
    for i in range(alpha.shape[0]):
        s = sw[i]
        if s == 0.0:
            if alpha[i] != 0.0:
                return math.inf
            continue
        total += s * conjugate_at_neg(code, alpha[i] / s, y[i])
    return total


# ------------------------------------------------------------------- numpy forms
# The same sums as numpy expressions, for the certificates of small problems
# (``cdlearn.data.SMALL_ARRAY``): there they cost less than compiling the loops
# above on a first fit. Each agrees with its loop to rounding (tests/test_small_arrays.py).
def _np_xlogx(t):
    return t * np.log(np.where(t > 0.0, t, 1.0))


def loss_values_np(code, z, y):
    """φ(z_i, y_i) as an array (:func:`loss_value`)."""
    if code == SQUARED:
        r = z - y
        return 0.5 * r * r
    m = y * z
    if code == LOGISTIC:
        return np.maximum(-m, 0.0) + np.log1p(np.exp(-np.abs(m)))
    r = 1.0 - m
    if code == SQUARED_HINGE:
        return np.where(r > 0.0, r * r, 0.0)
    if code == SMOOTH_HINGE:
        return np.where(m >= 1.0, 0.0, np.where(m <= 0.0, 0.5 - m, 0.5 * r * r))
    return np.maximum(r, 0.0)


def loss_derivatives_np(code, z, y):
    """φ'(z_i, y_i) as an array (:func:`loss_derivative`)."""
    if code == SQUARED:
        return z - y
    m = y * z
    if code == LOGISTIC:
        e = np.exp(-np.abs(m))
        return -y * np.where(m <= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))  # -y σ(-m)
    if code == SQUARED_HINGE:
        return np.where(m < 1.0, -2.0 * y * (1.0 - m), 0.0)
    if code == SMOOTH_HINGE:
        return np.where(m >= 1.0, 0.0, np.where(m <= 0.0, -y, -y * (1.0 - m)))
    return np.where(m < 1.0, -y, 0.0)


def loss_second_derivatives_np(code, z, y):
    """φ''(z_i, y_i) as an array (:func:`loss_second_derivative`)."""
    if code == SQUARED:
        return np.ones_like(z)
    m = y * z
    if code == LOGISTIC:
        e = np.exp(-np.abs(m))
        s = np.where(m >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))  # σ(m)
        return s * (1.0 - s)
    if code == SQUARED_HINGE:
        return np.where(m < 1.0, 2.0, 0.0)
    if code == SMOOTH_HINGE:
        return np.where((m > 0.0) & (m < 1.0), 1.0, 0.0)
    return np.zeros_like(z)


def _fenchel_young_np(code, z, a, y):
    """:func:`fenchel_young_gap` as an array, the logistic one in the form of
    :func:`weighted_loss_and_fenchel_young_sums`; also returns the loss values."""
    if code == SQUARED:
        r = z - y
        q = r + a
        return 0.5 * r * r, 0.5 * q * q
    m = y * z
    t = a * y
    out = (t < -1e-12) | ((t > 1.0 + 1e-12) if code != SQUARED_HINGE else False)
    t = np.clip(t, 0.0, 1.0) if code != SQUARED_HINGE else np.maximum(t, 0.0)
    r = 1.0 - m
    if code == LOGISTIC:
        e = np.exp(-np.abs(m))
        up = np.maximum(m, 0.0) + np.log1p(e)  # log(1 + e^m)
        down = up - m  # φ
        p = np.where(m >= 0.0, e / (1.0 + e), 1.0 / (1.0 + e))  # σ(-m)
        d = t - p
        pq = p * (1.0 - p)
        near = (pq > 0.0) & (np.abs(d) < 1e-4 * np.minimum(p, 1.0 - p))
        pq_safe = np.where(near, pq, 1.0)
        fy = np.where(near, d * d / (2.0 * pq_safe) * (1.0 + d * (2.0 * p - 1.0) / (3.0 * pq_safe)),
                      _np_xlogx(t) + t * up + _np_xlogx(1.0 - t) + (1.0 - t) * down)
        loss = down
    elif code == SQUARED_HINGE:
        q = r - 0.5 * t
        fy = np.where(r > 0.0, q * q, t * (0.25 * t - r))
        loss = np.where(r > 0.0, r * r, 0.0)
    elif code == HINGE:
        fy = np.where(m < 1.0, r * (1.0 - t), t * (m - 1.0))
        loss = np.maximum(r, 0.0)
    else:  # SMOOTH_HINGE
        q = r - t
        fy = np.where(m >= 1.0, t * (m - 1.0) + 0.5 * t * t,
                      np.where(m <= 0.0, (1.0 - t) * (0.5 * (1.0 - t) - m), 0.5 * q * q))
        loss = np.where(m >= 1.0, 0.0, np.where(m <= 0.0, 0.5 - m, 0.5 * r * r))
    return loss, np.where(out, math.inf, fy)


def derivatives(code, z, y):
    """φ'(z_i, y_i), a new array: numpy up to ``SMALL_ARRAY`` samples, else the loop."""
    if z.shape[0] <= SMALL_ARRAY:
        return loss_derivatives_np(code, z, y)
    return loss_derivatives(code, z, y, np.empty(z.shape[0]))


def weighted_curvatures(code, z, y, sw):
    """s_i φ''(z_i, y_i), a new array: numpy up to ``SMALL_ARRAY`` samples, else the loop."""
    if z.shape[0] <= SMALL_ARRAY:
        return sw * loss_second_derivatives_np(code, z, y)
    return weighted_second_derivatives(code, z, y, sw, np.empty(z.shape[0]))


def weighted_loss_sum_np(code, z, y, sw):
    """:func:`weighted_loss_sum` as numpy expressions."""
    keep = sw != 0.0
    if not keep.all():
        z, y, sw = z[keep], y[keep], sw[keep]
    return float(sw @ loss_values_np(code, z, y))


def weighted_loss_and_fenchel_young_sums_np(code, z, alpha, y, sw):
    """:func:`weighted_loss_and_fenchel_young_sums` as numpy expressions."""
    keep = sw != 0.0
    if not keep.all():
        if np.any(alpha[~keep] != 0.0):
            return weighted_loss_sum_np(code, z, y, sw), math.inf
        z, alpha, y, sw = z[keep], alpha[keep], y[keep], sw[keep]
    loss, fy = _fenchel_young_np(code, z, alpha / sw, y)
    return float(sw @ loss), float(sw @ fy)
