"""Regularisation paths: :func:`cdlearn.solve` along a decreasing λ grid with warm starts.

Each point starts from the previous solution (``w0`` for primal CD, ``alpha0``
for dual CD; when the method changes along the path, the dual start is built
from the primal margins, ``α_i = -s_i φ'(x_iᵀw + b)``), so a whole path costs
little more than its hardest point.

The grid: ``λ_max`` is the smallest λ for which ``w = 0`` is optimal,
``‖Xᵀ s∘φ'(b₀)‖∞ / (n ρ)`` with ``b₀`` the best intercept for ``w = 0`` (0
without an intercept) and ``ρ`` the l1 share of the penalty (1 for ``l1``).
Penalties without an l1 part have no such λ; glmnet's convention ``ρ = 10⁻³``
gives their starting point. The grid is geometric from ``λ_max`` down to
``eps·λ_max``.
"""

from __future__ import annotations

import inspect
import math
import numbers
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np

from .api import METHOD_OPTIONS, auto_solver, cd_options_requested, make_problem, solve
from .data import (
    as_design,
    check_choice,
    check_finite,
    check_int,
    check_positive,
    check_sample_weight,
    check_target,
)
from .losses import LOSS_CODES, weighted_conjugate_sum
from .multioutput import solve_multitask
from .objectives import dual_point_from_margins, primal_value
from .solvers.base import stop_on
from .solvers.intercept import optimal_intercept

__all__ = ["PathResult", "lambda_max", "lambda_grid", "path", "lasso_path", "enet_path"]

#: l1 share used for λ_max when the penalty has no l1 part (glmnet's convention).
L2_RHO = 1e-3
_PATH_PENALTIES = ("l1", "l2", "elastic_net")


def _l1_share(penalty: str, l1_ratio: float) -> float:
    if penalty == "l1":
        return 1.0
    if penalty == "elastic_net":
        return max(float(l1_ratio), L2_RHO)
    return L2_RHO


def lambda_max(X, y, *, loss="squared", penalty="l1", l1_ratio=0.5, fit_intercept=False,
               sample_weight=None, positive=False) -> float:
    """Smallest λ with ``w = 0`` optimal: ``‖Xᵀ s∘φ'(b₀)‖∞ / (n ρ)``.

    ``b₀`` is the optimal intercept for ``w = 0`` (0 without intercept), ρ the
    l1 share of the penalty (1 for ``l1``, ``l1_ratio`` for ``elastic_net``,
    10⁻³ for ``l2``, where the value is only a sensible start of a grid).
    With ``positive`` (w ≥ 0) only the largest ``-∇_j f(0)`` counts:
    ``max(0, max_j (-Xᵀ s∘φ'(b₀))_j) / (n ρ)``. Returns 0 when the gradient
    at 0 vanishes.
    """
    check_choice("loss", loss, LOSS_CODES)
    check_choice("penalty", penalty, _PATH_PENALTIES)
    design = as_design(X)
    n = design.n_samples
    y = check_target(y, n, loss)
    sw = check_sample_weight(sample_weight, n)
    code = LOSS_CODES[loss]
    z = np.zeros(n)
    if fit_intercept:
        z += optimal_intercept(code, z, y, sw, 0.0)
    alpha = dual_point_from_margins(code, z, y, sw)  # -s φ'(z)
    grad = design.rmatvec(alpha) / n  # -∇f(0)
    top = np.max(grad, initial=0.0) if positive else np.max(np.abs(grad), initial=0.0)
    return float(top) / _l1_share(penalty, l1_ratio)


def lambda_grid(lam_max: float, n_lams: int = 100, eps: float = 1e-3) -> np.ndarray:
    """Geometric grid from ``lam_max`` down to ``eps·lam_max`` (decreasing)."""
    n_lams = check_int("n_lams", n_lams)
    eps = check_positive("eps", eps)
    if not lam_max > np.finfo(float).resolution:
        # zero gradient at 0 (e.g. constant y): every λ gives w = 0
        return np.full(n_lams, np.finfo(float).resolution)
    if n_lams == 1:
        return np.array([lam_max])
    return np.geomspace(lam_max, lam_max * eps, num=n_lams)


# --------------------------------------------------------------------------- warm starts
def resolve_solver(design, y, *, solver, loss, penalty, lam, l1_ratio=0.5,
                   fit_intercept=False, sample_weight=None, options=None, n_fits=1) -> str:
    """The method ``solve(solver=solver, **options, ...)`` runs (see ``auto_solver``;
    ``n_fits``: the fits on ``design`` from this one on, which share its set-up)."""
    if solver != "auto":
        return solver
    options = options or {}
    problem = make_problem(design, y, loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                           fit_intercept=fit_intercept, sample_weight=sample_weight,
                           positive=options.get("positive", False))
    return auto_solver(problem, cd_options=cd_options_requested(options), n_fits=n_fits)[0]


def warm_start_kwargs(design, y, sample_weight, *, solver, loss, w=None, intercept=None,
                      alpha=None) -> dict:
    """``w0`` / ``alpha0`` / ``intercept0`` for ``solve`` from a previous solution.

    A previous dual iterate is reused when it is feasible for (y, s); otherwise
    dual CD starts from ``α = -s∘φ'(Xw + b)``. Mismatched shapes mean a cold start.
    """
    n, d = design.n_samples, design.n_features
    kw = {}
    if w is not None:
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape != (d,) or not np.all(np.isfinite(w)):
            return kw
    b = 0.0 if intercept is None or not np.isfinite(intercept) else float(intercept)
    kw["intercept0"] = b
    code = LOSS_CODES[loss]
    sw = check_sample_weight(sample_weight, n)
    y = np.asarray(y, dtype=np.float64)
    if solver in METHOD_OPTIONS["w0"][1]:
        if w is not None:
            kw["w0"] = w
        return kw
    if solver != "dual-cd":  # no primal start, and no dual start from margins: cold
        return kw
    if alpha is not None:
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.shape == (n,) and math.isfinite(weighted_conjugate_sum(code, alpha, y, sw)):
            kw["alpha0"] = alpha
            return kw
    if w is not None:
        z = design.matvec(w) + b
        kw["alpha0"] = dual_point_from_margins(code, z, y, sw)
    return kw


def reemit(caught, stacklevel=3):
    """Re-issue ``(category, message)`` warnings recorded in a worker process."""
    for category, message in caught:
        warnings.warn(message, category, stacklevel=stacklevel)


# --------------------------------------------------------------------------- path
@dataclass
class PathResult:
    """What :func:`path` returns (arrays along the grid, in the order solved)."""

    lams: np.ndarray        # (n_lams,) decreasing
    coefs: np.ndarray       # (n_lams, n_features)
    intercepts: np.ndarray  # (n_lams,)
    gaps: np.ndarray        # (n_lams,) duality gap at each point
    n_epochs: np.ndarray    # (n_lams,) epochs run at each point
    primals: np.ndarray     # (n_lams,) P(w) at each point
    converged: np.ndarray   # (n_lams,) bool: gap <= tol * P(0)
    solvers: list = field(default_factory=list)  # method run at each point
    primal0: float = math.nan  # P(0): the stopping rule is gap <= tol * primal0
    alphas: list = field(default_factory=list)   # dual iterates (None for primal CD)
    #: stopped by Ctrl-C: the arrays hold the points reached (the last one not converged)
    interrupted: bool = False


def path(X, y, *, loss="squared", penalty="l1", lams=None, n_lams=100, eps=1e-3,
         l1_ratio=0.5, fit_intercept=False, sample_weight=None, **solve_kw) -> PathResult:
    """Solve ``min_w 1/n Σ s_i φ(x_iᵀw + b, y_i) + λ g(w)`` for a decreasing grid of λ.

    Parameters
    ----------
    X, y, loss, penalty, l1_ratio, fit_intercept, sample_weight
        As in :func:`cdlearn.solve`; penalty is ``"l1"``, ``"l2"`` or ``"elastic_net"``.
    lams : array-like, optional
        The grid (sorted decreasing here). Default: :func:`lambda_grid` of
        ``n_lams`` values from :func:`lambda_max` down to ``eps·λ_max``.
    **solve_kw
        Passed to :func:`cdlearn.solve` at every point (``solver``, ``tol``,
        ``max_epochs``, ``seed``, ...); ``w0``/``alpha0``/``intercept0`` start
        the first point.

    Returns
    -------
    PathResult
        With ``lams, coefs (n_lams, n_features), intercepts, gaps,
        n_epochs, primals, converged, solvers, primal0``.

        Ctrl-C stops the path at the point being solved: the result holds the
        points solved so far and that point's best iterate (not converged), with
        ``interrupted=True`` and a RuntimeWarning.
    """
    check_choice("penalty", penalty, _PATH_PENALTIES)
    design = as_design(X)
    n = design.n_samples
    y_checked = check_target(y, n, loss)
    sw = check_sample_weight(sample_weight, n)
    if lams is None:
        lam_max = lambda_max(design, y_checked, loss=loss, penalty=penalty, l1_ratio=l1_ratio,
                             fit_intercept=fit_intercept, sample_weight=sw,
                             positive=solve_kw.get("positive", False))
        lams = lambda_grid(lam_max, n_lams, eps)
    else:
        lams = np.sort(np.atleast_1d(np.asarray(lams, dtype=np.float64)).ravel())[::-1]
        if lams.size == 0:
            raise ValueError("lams is empty")
        if not np.all(np.isfinite(lams)) or np.any(lams <= 0):
            raise ValueError("lams must be finite and > 0")
    solver = solve_kw.pop("solver", "auto")
    w = solve_kw.pop("w0", None)
    alpha = solve_kw.pop("alpha0", None)
    b = solve_kw.pop("intercept0", None)
    if b is not None:
        b = check_finite("intercept0", b)
    code = LOSS_CODES[loss]
    k = lams.size
    coefs = np.zeros((k, design.n_features))
    intercepts = np.zeros(k)
    gaps = np.zeros(k)
    primals = np.zeros(k)
    n_epochs = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    solvers, alphas = [], []
    stop = threading.Event()
    reached = 0
    for i, lam in enumerate(lams):
        try:
            with stop_on(stop):
                method = resolve_solver(design, y_checked, solver=solver, loss=loss,
                                        penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                                        fit_intercept=fit_intercept, sample_weight=sw,
                                        options=solve_kw, n_fits=k - i)
                warm = warm_start_kwargs(design, y_checked, sw, solver=method, loss=loss, w=w,
                                         intercept=b, alpha=alpha)
                res = solve(design, y_checked, loss=loss, penalty=penalty, lam=float(lam),
                            l1_ratio=l1_ratio, solver=method, fit_intercept=fit_intercept,
                            sample_weight=sw, **warm, **solve_kw)
        except KeyboardInterrupt:  # outside the epochs: this point has nothing to keep
            stop.set()
            break
        w, alpha, b = res.w, res.alpha, res.intercept
        coefs[i], intercepts[i], gaps[i], primals[i] = w, b, res.gap, res.primal
        n_epochs[i], converged[i] = res.n_epochs, res.converged
        solvers.append(res.solver)
        alphas.append(None if alpha is None else alpha.copy())
        reached = i + 1
        if stop.is_set():
            break
    if stop.is_set():
        warnings.warn(f"interrupted (Ctrl-C): path stopped after {reached} of {k} points (a "
                      "point interrupted while solved keeps its best iterate, not converged)",
                      RuntimeWarning, stacklevel=2)
        lams, coefs, intercepts, gaps = lams[:reached], coefs[:reached], \
            intercepts[:reached], gaps[:reached]
        n_epochs, primals, converged = n_epochs[:reached], primals[:reached], \
            converged[:reached]
    primal0 = primal_value(code, np.zeros(n), y_checked, sw, np.zeros(1), 0.0, 0.0)
    return PathResult(lams=lams, coefs=coefs, intercepts=intercepts, gaps=gaps,
                      n_epochs=n_epochs, primals=primals, converged=converged,
                      solvers=solvers, primal0=float(primal0), alphas=alphas,
                      interrupted=stop.is_set())


#: scikit-learn's error for an automatic grid at l1_ratio=0 (no α_max: every α gives w ≠ 0)
L1_RATIO_ZERO = ("Automatic alpha grid generation is not supported for l1_ratio=0. Please "
                 "supply a grid by providing your estimator with the appropriate `alphas=` "
                 "argument.")


def _sklearn_path_kw(solve_kw: dict) -> dict:
    """scikit-learn's names for the solver's keywords: ``max_iter`` → ``max_epochs``,
    ``random_state`` (int or None) → ``seed``."""
    kw = dict(solve_kw)
    for sk_name, name in (("max_iter", "max_epochs"), ("random_state", "seed")):
        if sk_name in kw:
            if name in kw:
                raise TypeError(f"give {sk_name} or {name}, not both")
            kw[name] = kw.pop(sk_name)
    return kw


#: scikit-learn's enet_path parameters that only tune its own CD (Gram, copies, checks):
#: accepted, no effect (cdlearn never modifies X and always validates it)
_SKLEARN_NO_EFFECT = ("precompute", "Xy", "copy_X", "check_input")
#: keywords of :func:`cdlearn.solve` that the scikit-learn-style paths do not pass on
#: (they set them, or scikit-learn's enet_path has no such parameter: ``fit_intercept``)
_PATH_FIXED = {"X", "y", "loss", "penalty", "lam", "l1_ratio", "fit_intercept", "positive", "w0"}


def _grid_arguments(n_alphas, alphas):
    """scikit-learn 1.9's deprecations of ``n_alphas`` and ``alphas=None`` (same
    FutureWarnings); returns ``(n_alphas, alphas)`` with ``alphas`` None for a grid."""
    if isinstance(n_alphas, str) and n_alphas == "deprecated":
        n_alphas = 100
    else:
        warnings.warn("'n_alphas' was deprecated in 1.9 and will be removed in 1.11. 'alphas' "
                      "now accepts an integer value which removes the need to pass "
                      "'n_alphas'. The default value of 'alphas' will change from None to 100 "
                      "in 1.11. Pass an explicit value to 'alphas' and leave 'n_alphas' to its "
                      "default value to silence this warning.", FutureWarning, stacklevel=3)
    if isinstance(alphas, str) and alphas == "warn":
        alphas = None
    elif alphas is None:
        warnings.warn("'alphas=None' is deprecated and will be removed in 1.11, at which point "
                      "the default value will be set to 100. Set 'alphas=100' to silence this "
                      "warning.", FutureWarning, stacklevel=3)
    if isinstance(alphas, numbers.Integral) and not isinstance(alphas, bool):
        n_alphas, alphas = int(alphas), None
    return n_alphas, alphas


def enet_path(X, y, *, l1_ratio=0.5, eps=1e-3, n_alphas="deprecated", alphas="warn",
              coef_init=None, return_n_iter=False, positive=False, **solve_kw):
    """The elastic-net path in :func:`sklearn.linear_model.enet_path`'s convention.

    Objective ``(1/2n)‖y - Xw‖² + αρ‖w‖₁ + α(1-ρ)/2 ‖w‖²`` (ρ = ``l1_ratio``; no
    intercept: centre X and y first, as for scikit-learn), i.e. :func:`path`
    with ``loss="squared"``, ``λ = α`` and penalty ``"l1"`` (ρ = 1),
    ``"elastic_net"`` or ``"l2"`` (ρ = 0, which needs an explicit grid).

    Parameters
    ----------
    alphas : int or array-like, default 100 values
        The grid (sorted decreasing); an int gives a geometric grid from α_max
        down to ``eps·α_max``. ``n_alphas`` and ``alphas=None`` are deprecated,
        as in scikit-learn 1.9 (FutureWarning).
    coef_init : (n_features,) start of the first point (``w0``).
    positive : bool, constrain ``w ≥ 0`` (α_max then from the largest positive
        correlation, as scikit-learn's).
    **solve_kw
        :func:`cdlearn.solve`'s keywords (``tol``, ``max_epochs``, ``solver``,
        ``sample_weight`` ...); scikit-learn's ``max_iter`` and ``random_state``
        are accepted for ``max_epochs`` and ``seed``. ``tol`` is cdlearn's
        (gap ≤ tol·P(0)), not scikit-learn's. scikit-learn's ``precompute``,
        ``Xy``, ``copy_X`` and ``check_input`` are accepted with no effect;
        other keywords raise its ValueError ("Unexpected parameters in params").

    A 2-d ``y`` (n_samples, n_targets) gives scikit-learn's multi-task path: the
    group penalty ``αρ Σ_j ‖W_j‖₂ + α(1-ρ)/2 ‖W‖²_F`` over the rows of W, by
    block CD (:func:`cdlearn.multioutput.solve_multitask`); ``coef_init`` is then
    (n_targets, n_features), ``positive`` raises, and ``solve_kw`` is limited to
    ``tol``, ``max_epochs``/``max_iter``, ``seed``/``random_state``, ``sampling``
    ("cyclic", "shuffle", "uniform"), ``sample_weight``, ``callback``, ``verbose``.

    Returns
    -------
    alphas : (n_alphas,) decreasing
    coefs : (n_features, n_alphas), or (n_targets, n_features, n_alphas) for a 2-d y
    dual_gaps : (n_alphas,) duality gaps of the objective above
    n_iters : (n_alphas,) epochs per point, when ``return_n_iter``
    """
    rho = check_positive("l1_ratio", l1_ratio, allow_zero=True)
    if rho > 1:
        raise ValueError(f"l1_ratio must be in [0, 1], got {l1_ratio}")
    n_alphas, alphas = _grid_arguments(n_alphas, alphas)
    for name in _SKLEARN_NO_EFFECT:
        solve_kw.pop(name, None)
    unexpected = set(solve_kw) - (set(inspect.signature(solve).parameters) - _PATH_FIXED
                                  | {"max_iter", "random_state"})
    if unexpected:
        raise ValueError("Unexpected parameters in params", sorted(unexpected))
    if alphas is None and rho == 0:
        raise ValueError(L1_RATIO_ZERO)
    if np.ndim(y) == 2:
        return _multitask_path(X, y, rho, alphas, n_alphas, eps, coef_init, return_n_iter,
                               positive, _sklearn_path_kw(solve_kw))
    penalty = "l1" if rho == 1 else ("l2" if rho == 0 else "elastic_net")
    res = path(X, y, loss="squared", penalty=penalty, lams=alphas, n_lams=n_alphas, eps=eps,
               l1_ratio=rho, fit_intercept=False, w0=coef_init, positive=positive,
               **_sklearn_path_kw(solve_kw))
    out = (res.lams, res.coefs.T.copy(), res.gaps)
    return (*out, res.n_epochs) if return_n_iter else out


#: keywords of :func:`cdlearn.solve` that the multi-task path passes on to
#: :func:`cdlearn.multioutput.solve_multitask`
_MULTITASK_KW = ("sampling", "tol", "max_epochs", "seed", "callback", "verbose", "sample_weight")


def _multitask_path(X, Y, rho, alphas, n_alphas, eps, coef_init, return_n_iter, positive, kw):
    """:func:`enet_path` for a 2-d ``Y``: the multi-task elastic net
    ``(1/2n)‖Y − XW‖²_F + αρ Σ_j ‖W_j‖₂ + α(1−ρ)/2 ‖W‖²_F`` along the grid, warm
    started, by :func:`~cdlearn.multioutput.solve_multitask` (block CD over the rows
    of W). Its ``α_max = max_j ‖X_jᵀY‖₂ / (nρ)``, scikit-learn's; ``coefs`` is
    (n_targets, n_features, n_alphas)."""
    if positive:
        raise ValueError("positive=True is not allowed for multi-output (y.ndim != 1)")
    solver = kw.pop("solver", "auto")
    if solver not in ("auto", "multi-cd"):
        raise ValueError(f"solver={solver!r}: a 2-d y is solved by block CD ('multi-cd')")
    other = set(kw) - set(_MULTITASK_KW)
    if other:
        raise ValueError(f"{sorted(other)} are not available for a 2-d y (multi-task path)")
    kw.setdefault("sampling", "cyclic")
    design = as_design(X)
    n, d = design.shape
    Y = np.asarray(Y, dtype=np.float64)
    if Y.shape[0] != n:
        raise ValueError(f"y has {Y.shape[0]} samples but X has {n}")
    sw = check_sample_weight(kw.pop("sample_weight", None), n)
    k = Y.shape[1]
    if alphas is None:
        G = design.to_scipy().T @ (Y * sw[:, None])
        top = float(np.max(np.sqrt(np.sum(np.asarray(G) ** 2, axis=1)), initial=0.0))
        alphas = lambda_grid(top / (n * rho), n_alphas, eps)
    else:
        alphas = np.sort(np.atleast_1d(np.asarray(alphas, dtype=np.float64)).ravel())[::-1]
    W = None
    if coef_init is not None:
        W = np.asarray(coef_init, dtype=np.float64).reshape(k, d).T
    coefs = np.zeros((k, d, alphas.size))
    gaps = np.zeros(alphas.size)
    n_iters = np.zeros(alphas.size, dtype=np.int64)
    for i, alpha in enumerate(alphas):
        res = solve_multitask(design, Y, lam=float(alpha), l1_ratio=rho, fit_intercept=False,
                              sample_weight=sw, W0=W, **kw)
        W = res.w
        coefs[..., i], gaps[i], n_iters[i] = W.T, res.gap, res.n_epochs
    return (alphas, coefs, gaps, n_iters) if return_n_iter else (alphas, coefs, gaps)


def lasso_path(X, y, *, eps=1e-3, n_alphas="deprecated", alphas="warn", coef_init=None,
               return_n_iter=False, positive=False, **solve_kw):
    """The Lasso path in :func:`sklearn.linear_model.lasso_path`'s convention.

    Objective ``(1/2n)‖y - Xw‖² + α‖w‖₁`` (no intercept: centre X and y first, as
    for scikit-learn), i.e. :func:`enet_path` with ``l1_ratio=1`` (:func:`path`
    with ``loss="squared"``, ``penalty="l1"`` and ``λ = α``); the same
    parameters.

    Returns
    -------
    alphas : (n_alphas,) decreasing
    coefs : (n_features, n_alphas)
    dual_gaps : (n_alphas,) duality gaps of the 1/(2n)-scaled objective
    n_iters : (n_alphas,) epochs per point, when ``return_n_iter``
    """
    return enet_path(X, y, l1_ratio=1.0, eps=eps, n_alphas=n_alphas, alphas=alphas,
                     coef_init=coef_init, return_n_iter=return_n_iter, positive=positive,
                     **solve_kw)
