"""One problem, every coordinate descent method: :func:`solve`.

:func:`solve` is a short sequence: validate (every argument checked once, errors
name the argument; the validated :class:`~cdlearn.data.Design`), choose (the
method for ``solver="auto"``), run (the method's state driven by
:func:`cdlearn.solvers.base.run`) and certify (the duality gap and the reason
for the choice on the result). The public ``cdlearn.solve`` is
:func:`cdlearn.multiclass.solve`: it routes a multiclass target to one-vs-rest
and everything else here, so this layer imports nothing above it.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

from .data import (
    as_design,
    check_choice,
    check_finite,
    check_int,
    check_positive,
    check_sample_weight,
    check_seed,
    check_target,
)
from .faceoff import analyze, predicted_seconds
from .losses import LOSS_CODES, smoothness
from .penalties import PENALTIES, penalty_strengths
from .penalties_group import make_groups
from .solvers import SOLVERS, parallel
from .solvers.base import Problem, SolveResult, run, unit_weights
from .solvers.newton_cd import choose_hessian, gram_work
from .solvers.parallel import (
    check_threads,
    eso_epoch_growth,
    partition_epoch_growth,
    usable_threads,
    use_threads,
)

SAMPLINGS = ("uniform", "importance", "power", "cyclic", "shrinking", "shuffle")
#: solvers that take the primal options (w0, power, step)
_PRIMAL_OPTION_SOLVERS = ("primal-cd", "block-cd", "fista", "ws-cd", "newton-cd", "newton-cg",
                          "gram-cd", "lbfgs")
#: ``solve``'s method options, their defaults and the methods that use them; a
#: method given a non-default value of an option it does not use raises (it
#: would be ignored). Methods check the values they do not support themselves.
METHOD_OPTIONS = {
    "sampling": (None, ("primal-cd", "dual-cd", "block-cd", "ws-cd", "spdc", "gram-cd")),
    "power": (1.0, ("primal-cd", "block-cd")),
    "primal_step": ("newton", ("primal-cd", "ws-cd", "gram-cd")),
    "dual_step": ("exact", ("dual-cd",)),
    "w0": (None, _PRIMAL_OPTION_SOLVERS),
    "alpha0": (None, ("dual-cd", "spdc", "dgpd")),
}


def ignored_options(solver: str, **given) -> list[str]:
    """The options among ``given`` (``METHOD_OPTIONS`` names) set but not used by ``solver``."""
    return [name for name, value in given.items()
            if solver not in METHOD_OPTIONS[name][1] and not (
                value is METHOD_OPTIONS[name][0]
                or isinstance(value, str | float) and value == METHOD_OPTIONS[name][0])]


def check_options_used(solver: str, **given) -> None:
    """Raise a ValueError naming ``solver`` and the first option it would ignore."""
    for name in ignored_options(solver, **given):
        methods = ", ".join(map(repr, METHOD_OPTIONS[name][1]))
        raise ValueError(f"solver={solver!r} does not take {name} (an option of "
                         f"{methods}); leave it at its default")


def make_problem(X, y, *, loss, penalty, lam, l1_ratio=0.5, fit_intercept=False,
                 sample_weight=None, groups=None, positive=False) -> Problem:
    """Validate the data and the objective's parameters into a :class:`Problem`.

    ``groups`` (penalty="group_l2" only): a list of disjoint index arrays covering
    all features, a vector of per-feature group labels, or a
    :class:`cdlearn.penalties_group.Groups` (custom weights); weights default to √|g|.
    ``positive``: add the constraint w ≥ 0 (separable penalties only).
    """
    if not isinstance(positive, bool | np.bool_):
        raise TypeError(f"positive must be a bool, got {type(positive).__name__}")
    check_choice("loss", loss, LOSS_CODES)
    check_choice("penalty", penalty, PENALTIES)
    if penalty == "none":
        lam = 0.0 if lam is None else check_positive("lam", lam, allow_zero=True)
    else:
        if lam is None:
            raise ValueError(f"lam is required for penalty={penalty!r}")
        lam = check_positive("lam", lam)
    if penalty == "elastic_net":
        l1_ratio = check_positive("l1_ratio", l1_ratio, allow_zero=True)
        if l1_ratio > 1:
            raise ValueError(f"l1_ratio must be in [0, 1], got {l1_ratio}")
    design = as_design(X)
    y = check_target(y, design.n_samples, loss)
    sw = check_sample_weight(sample_weight, design.n_samples)
    l1, l2 = penalty_strengths(penalty, lam, l1_ratio)
    if penalty == "group_l2" or (penalty == "none" and groups is not None):
        # penalty="none" with groups: smooth block CD (RCDS, RCDC Algorithm 3)
        groups = make_groups(groups, design.n_features)
    elif groups is not None:
        raise ValueError(f"groups is only used with penalty='group_l2' (or 'none' for "
                         f"smooth block CD), got penalty={penalty!r}")
    if positive and groups is not None:
        raise ValueError("positive=True is not available with groups (block CD)")
    problem = Problem(design, y, sw, loss, LOSS_CODES[loss], penalty, lam, l1, l2,
                      bool(fit_intercept), groups, bool(positive))
    if sample_weight is None:  # base.unit_weights without its pass over the ones
        problem.__dict__["_unit_weights"] = True
    return problem


#: keywords of ``solve`` that every method takes (the rest are CD-specific)
_COMMON_KEYWORDS = frozenset((
    "loss", "penalty", "lam", "l1_ratio", "solver", "tol", "max_epochs", "seed", "callback",
    "verbose", "fit_intercept", "sample_weight", "w0", "intercept0", "check_every", "groups",
    "n_jobs", "n_threads", "power", "coef_tol", "positive"))


def cd_options_requested(options: dict) -> bool:
    """Whether ``solve`` keywords ask for something only primal/dual CD take.

    A ``sampling`` (any, even "uniform"), a non-default ``batch_size``,
    ``primal_step`` or ``dual_step``, a dual warm start ``alpha0``, or a
    method-specific option: ``solver="auto"``
    then chooses between primal and dual CD only (:func:`auto_solver`).
    """
    o = dict(options)
    if (o.pop("sampling", None) is not None or o.pop("batch_size", 1) != 1
            or o.pop("power", 1.0) != 1.0
            or o.pop("primal_step", "newton") != "newton"
            or o.pop("dual_step", "exact") != "exact" or o.pop("alpha0", None) is not None):
        return True
    return any(k not in _COMMON_KEYWORDS for k in o)


def faceoff_choice(problem: Problem, batch_size: int = 1, n_threads: int = 1
                   ) -> tuple[str, str]:
    """The face-off choice between primal and dual CD, with its reason.

    Compares the predicted run times of both methods: the total complexities
    under importance sampling (face-off eq. (15)), ``T_P = ‖X‖₀ + β/(λn) C_P``
    and ``T_D = ‖X‖₀ + β/(λn) C_D`` with ``C_P, C_D`` of eq. (16) and λ the
    strong convexity of the penalty, priced with the measured cost of one
    visited entry and of one coordinate step of each method
    (:data:`cdlearn.faceoff.STEP_COSTS`). Needs a smooth loss and ``l2 > 0``.

    τ-nice minibatches (``batch_size > 1``, run on ``n_threads`` threads) grow
    each method's epochs by its own ESO factor (:func:`eso_epoch_growth`: rows'
    nonzeros for primal, columns' for dual), which can reverse the serial choice;
    the prediction is then scaled by both factors and the reason says so.
    """
    analysis = analyze(problem.design, loss=problem.loss, lam=problem.l2)
    if batch_size > 1:
        beta = smoothness(problem.loss)
        grow_p, grow_d = (eso_epoch_growth(problem.design, batch_size, beta=beta,
                                           lam=problem.l2, primal=primal)
                          for primal in (True, False))
        ratio = analysis.time_ratio * grow_p / grow_d
        choice = "primal-cd" if ratio <= 1.0 else "dual-cd"
        return choice, (f"face-off eq. (15) with τ-nice minibatches (τ={batch_size} on "
                        f"{n_threads} thread(s)): serial time ratio {analysis.time_ratio:.3g} "
                        f"× ESO epoch growth primal {grow_p:.3g} / dual {grow_d:.3g} = "
                        f"{ratio:.3g}")
    return _serial_faceoff(analysis)


def _serial_faceoff(analysis) -> tuple[str, str]:
    choice = "primal-cd" if analysis.choice == "primal" else "dual-cd"
    return choice, (f"face-off eq. (15): T_P/T_D = {analysis.ratio:.3g} "
                    f"(C_P={analysis.C_P:.3g}, C_D={analysis.C_D:.3g}); priced per entry "
                    f"and per step: predicted time ratio {analysis.time_ratio:.3g}")


def auto_solver(problem: Problem, *, cd_options: bool = False, batch_size: int = 1,
                n_threads: int = 1, n_fits: int = 1) -> tuple[str, str]:
    """The method ``solver="auto"`` runs, with its reason.

    ``cd_options=True`` (the caller asked for a sampling, step rule, minibatch,
    dual warm start or method option that only primal and dual CD take) keeps
    the choice among those two: the face-off choice, or the one that supports
    the problem.

    - group penalties: block CD (RCDC);
    - the hinge loss: dual CD (the only method for it);
    - ``positive=True``: ws-cd (primal-cd with CD options or without a penalty),
      the methods whose steps honour w ≥ 0;
    - an l1 part (l1, elastic_net): for the squared loss the cheapest of ws-cd,
      CD on the Gram matrix (gram-cd) and plain cyclic CD on dense data (primal-cd)
      by the measured cost model
      :func:`squared_l1_choice` (``n_fits`` fits sharing X share the Gram);
      ``newton-cd`` (proximal Newton) for the logistic loss on dense rows or few
      features (:func:`l1_newton_reason`); else ``ws-cd``, primal CD on working
      sets with Anderson extrapolation (ahead of celer and skglm on the
      benchmark's wide Lasso cases, benchmarks/results);
    - the logistic loss with l2 on dense, evenly scaled X of at least
      ``LBFGS_MIN_ENTRIES`` entries whose ``XᵀDX`` is dear or whose λ is not small:
      ``lbfgs`` (:func:`lbfgs_reason`);
    - ridge (squared loss, l2) when ``XᵀX`` is small and cheap to form (the rule
      below): its closed form, a Cholesky solve (``gram-cd``'s ridge step);
    - smooth losses when the Hessian ``XᵀDX`` is small and cheap to form
      (:func:`cdlearn.solvers.newton_cd.choose_hessian` gives the Gram form:
      few features, e.g. a9a, w8a, ijcnn1): ``newton-cd``, a primal method
      whose outer iterations do not slow down with λ as first-order CD does
      (a9a at λ = 1/(100n): 0.1 s against dual CD's 17 s); on dense X with an
      l2 penalty ``newton-cg`` with its lagged-Hessian preconditioner instead
      (one BLAS Gram serves several outer iterations);
    - the squared hinge with n < d under l2: ``dual-cd`` (liblinear -s 1);
    - l2 with a small λ on evenly scaled rows (:func:`dual_condition`):
      ``newton-cg``, truncated Newton with CG (liblinear's advice for large C);
    - otherwise (many features, l2 or no penalty): the face-off choice
      between primal and dual CD, :func:`faceoff_choice`; on ``n_threads`` > 1
      threads the face-off choice or a parallel method (τ-nice or partitioned CD)
      that :func:`parallel_choice`'s cost model predicts faster.
    """
    if problem.penalty == "group_l2":
        return "block-cd", "group penalty: randomized block CD (RCDC) over the groups"
    if problem.groups is not None:
        return "block-cd", "groups without a penalty: smooth block CD (RCDS) over the groups"
    if problem.loss == "hinge":
        return "dual-cd", "the hinge loss is not smooth: only dual CD applies"
    if problem.positive:
        if not cd_options and SOLVERS["ws-cd"].supports(problem):
            return "ws-cd", "positive=True: working-set CD with steps clipped at 0 (ws-cd)"
        return "primal-cd", "positive=True: primal CD with steps clipped at 0"
    if cd_options:
        if problem.l2 <= 0.0 or problem.l1 > 0.0 and not SOLVERS["dual-cd"].supports(problem):
            return "primal-cd", "CD options given; dual CD does not apply to this penalty"
        return faceoff_choice(problem, batch_size, n_threads)
    if problem.l1 > 0.0:
        newton = l1_newton_reason(problem)
        if newton:
            return "newton-cd", newton
        if problem.loss == "squared":
            return squared_l1_choice(problem, n_fits)
        return "ws-cd", ("l1 penalty: primal CD on working sets with Anderson extrapolation "
                         "(ws-cd)")
    lbfgs = lbfgs_reason(problem)
    if lbfgs:
        return "lbfgs", lbfgs
    if choose_hessian(problem) == "gram":
        m = problem.n_features + int(problem.fit_intercept)
        if problem.loss == "squared" and problem.penalty == "l2" and problem.l2 > 0.0:
            return "gram-cd", (
                f"ridge, {problem.n_features} features: XᵀX costs "
                f"{gram_work(problem) / max(problem.design.nnz, 1):.3g} data passes; the closed "
                "form by Cholesky of XᵀX/n + λI (gram-cd), no CD epochs")
        # the squared loss: newton-cd solves its quadratic in one Gram-form step
        if (not problem.design.is_sparse and problem.penalty == "l2" and problem.l2 > 0.0
                and problem.loss != "squared"):
            return "newton-cg", (
                f"dense X, {m} features: XᵀDX by BLAS costs {gram_work(problem) / max(problem.design.nnz, 1):.3g} "
                "data passes; truncated Newton preconditioned by a lagged XᵀDX, refreshed "
                "when CG's products cost more (newton-cg, preconditioner='gram')")
        return "newton-cd", (f"{m} features: the Hessian XᵀDX is small and cheap to form, "
                             "proximal Newton with its model solved in Gram form (newton-cd)")
    if problem.l2 <= 0.0:
        return "primal-cd", "penalty is not strongly convex: only primal CD applies"
    if (problem.penalty == "l2" and problem.loss == "squared_hinge"
            and problem.n_samples < problem.n_features):
        return "dual-cd", (
            f"squared hinge, {problem.n_samples} samples < {problem.n_features} features: "
            "dual CD (liblinear -s 1; closed-form steps on n dual variables, where Newton's "
            "piecewise-quadratic model changes its active set a few rows per iteration)")
    if problem.penalty == "l2":
        kappa, spread = dual_condition(problem)
        if kappa >= NEWTON_CG_KAPPA and spread <= NEWTON_CG_SPREAD:
            return "newton-cg", (
                f"small λ on evenly scaled rows (dual condition β·mean(s‖x‖²)/(λn) = "
                f"{kappa:.3g} ≥ {NEWTON_CG_KAPPA:g}, max/mean row norm² {spread:.3g}): "
                "truncated Newton with CG (newton-cg)")
    return faceoff_choice(problem) if n_threads <= 1 else parallel_choice(problem, n_threads)[::2]


#: Cost model of ``solver="auto"`` on P > 1 threads (:func:`parallel_choice`), fitted
#: on the quiet locked runs of benchmarks/threads.py (2026-11-26 09:53 UTC, 2 vCPUs,
#: load 0.5; benchmarks/results/threads.md). Seconds per τ-nice minibatch on P > 1
#: threads for its two fork-joins of the thread team (2-thread cost per minibatch
#: minus half the 1-thread one: news20 dual τ=64 68 µs, generated 60k × 36k dual
#: τ=256 103 µs, primal τ=256 52 µs; the median).
FORK_JOIN_SECONDS = 68e-6
#: a τ-nice epoch on one thread over one epoch of the serial method: dual 1.20
#: (news20) and 2.12 (generated), their geometric mean; primal 0.92 (generated)
TAU_NICE_EPOCH_COST = {"primal": 0.92, "dual": 1.6}
#: τ-nice's measured epochs over the serial method's, divided by the ESO growth:
#: dual 1.38 (news20 τ=64: 74/17 over 3.15) and 2.64 (generated τ=256: 14/5 over
#: 1.06; serial dual CD's shuffled passes against uniform draws), geometric mean;
#: primal 0.90 (generated: 13/13 over 1.11), taken as 1 (both draw uniformly)
TAU_NICE_EPOCH_EXCESS = {"primal": 1.0, "dual": 1.9}
#: partitioned CD's measured epochs over its blocks' ESO growth at K = 2, 4, 8:
#: news20 2.3, 2.9, 1.9; generated 1.17, 1.75, 1.75 (the median)
PARTITION_EPOCH_EXCESS = 1.8
#: a partitioned epoch on one thread over a serial one (news20 0.90, generated 0.89)
PARTITION_EPOCH_COST = 0.9
#: Amdahl serial share of a partitioned epoch (copies, merge): fitted 0.28 on
#: news20 and 0.60 on generated, the mean
PARTITION_SERIAL_SHARE = 0.44


def parallel_choice(problem: Problem, n_threads: int) -> tuple[str, dict, str]:
    """``(solver, options, reason)``: the face-off choice, or a parallel method predicted
    to be faster on ``n_threads`` (P) threads; ``options`` are its ``solve`` keywords.

    Candidates, priced against the serial face-off choice's predicted seconds
    (:func:`faceoff_choice`; the same epochs' units, ``seconds_m`` per method m):
    τ-nice primal / dual CD, ``seconds_m · g_m(τ) · E_m · (c_m/P + (m/τ) F / e_m)``
    with ``g_m(τ)`` the ESO epoch growth (face-off eqs. (8)-(9), :func:`eso_epoch_growth`),
    ``e_m`` one pass's predicted seconds, m coordinates, ``F`` a minibatch's fork-joins,
    ``E_m``, ``c_m`` the measured epoch excess and per-epoch cost (constants above),
    for τ = P·4^k whose minibatches run on threads (:data:`~cdlearn.solvers.parallel.PARALLEL_MIN_WORK`); and
    partitioned CD with K = P blocks (dual: l2, no intercept; primal: squared loss),
    ``seconds_m · g_K · E_part · c_part · (s + (1 - s)/P)``, ``g_K`` its blocks'
    ESO growth (CoCoA+'s σ′ per index). Each candidate's lower bound at ``g = 1``
    is checked first; one that cannot win is not priced further.
    """
    # kept on the problem: auto_solver prices it, auto_options reads its options back
    # (the same entry, recognised by its reason)
    memo = problem.__dict__.setdefault("_parallel_choice", {})
    if n_threads not in memo:
        memo[n_threads] = _price_parallel(problem, n_threads)
    return memo[n_threads]


def _price_parallel(problem: Problem, n_threads: int) -> tuple[str, dict, str]:
    a = analyze(problem.design, loss=problem.loss, lam=problem.l2)
    serial, serial_reason = _serial_faceoff(a)
    beta, nnz, p_threads = smoothness(problem.loss), problem.design.nnz, int(n_threads)
    seconds = {"primal": a.seconds_P, "dual": a.seconds_D}
    coords = {"primal": problem.n_features, "dual": problem.n_samples}
    base = seconds[serial.split("-")[0]]
    dual_ok = not problem.fit_intercept and problem.l1 == 0.0
    part_ok = {"primal": problem.loss == "squared" and not problem.fit_intercept,
               "dual": dual_ok}
    best = (1.0, serial, {}, f"serial {serial}")
    shown = [f"serial {serial} 1"]
    for m in ("primal", "dual"):
        if m == "dual" and not dual_ok or not np.isfinite(seconds[m]):
            continue
        n_coords, scale = coords[m], seconds[m] / base
        epoch = predicted_seconds(m, problem.loss, nnz, n_coords)
        low = scale * TAU_NICE_EPOCH_EXCESS[m] * TAU_NICE_EPOCH_COST[m] / p_threads
        if low >= 1.0:  # even with no ESO growth nor fork-joins
            shown.append(f"τ-nice {m} ≥ {low:.3g}")
        else:
            tau = p_threads
            while tau <= n_coords // 2:
                if tau * nnz >= parallel.PARALLEL_MIN_WORK * n_coords:  # else serial minibatches
                    g = eso_epoch_growth(problem.design, tau, beta=beta, lam=problem.l2,
                                         primal=m == "primal")
                    t = scale * g * TAU_NICE_EPOCH_EXCESS[m] * (
                        TAU_NICE_EPOCH_COST[m] / p_threads
                        + n_coords / tau * FORK_JOIN_SECONDS / epoch)
                    shown.append(f"τ-nice {m} τ={tau} {t:.3g} (ESO growth {g:.3g})")
                    if t < best[0]:
                        best = (t, f"{m}-cd", dict(batch_size=tau, sampling="uniform"),
                                f"τ-nice {m} τ={tau}")
                tau *= 4
        if not part_ok[m]:
            continue
        amdahl = PARTITION_SERIAL_SHARE + (1.0 - PARTITION_SERIAL_SHARE) / p_threads
        bound = scale * PARTITION_EPOCH_EXCESS * PARTITION_EPOCH_COST * amdahl
        if bound >= 1.0 or p_threads > n_coords:
            shown.append(f"partition {m} K={p_threads} ≥ {bound:.3g}")
            continue
        g = partition_epoch_growth(problem.design, p_threads, beta=beta, lam=problem.l2,
                                   primal=m == "primal")
        shown.append(f"partition {m} K={p_threads} {bound * g:.3g} (ESO growth {g:.3g})")
        if bound * g < best[0]:
            best = (bound * g, f"{m}-cd", dict(partition=p_threads),
                    f"partition {m} K={p_threads}")
    _, solver, options, name = best
    return solver, options, (
        f"on {p_threads} threads: predicted time over serial {serial} "
        f"({', '.join(shown)}) → {name}; serial choice: {serial_reason}")


def squared_l1_choice(problem: Problem, n_fits: int = 1) -> tuple[str, str]:
    """The cheapest of ws-cd, gram-cd and plain cyclic CD (primal-cd, which then runs
    with sampling "cyclic", :func:`default_sampling`) for a squared loss with an l1 part
    (:func:`cdlearn.solvers.gram_cd.squared_l1_costs`), with the predicted times."""
    # imported here: gram_cd loads its kernels, which `import cdlearn` must not
    from .solvers.gram_cd import squared_l1_costs

    costs = squared_l1_costs(problem, n_fits)
    best = min(costs, key=costs.get)
    return best, _squared_l1_reason(best, tuple(costs.items()), problem.n_samples,
                                    problem.n_features, problem.design.nnz)


@functools.lru_cache(maxsize=64)
def _squared_l1_reason(best: str, costs: tuple, n: int, d: int, nnz: int) -> str:
    # formatted once per cost model's answer: the same X gives the same text (0.015 ms)
    shown = ", ".join(f"{k} {1e3 * v:.3g} ms" for k, v in costs if math.isfinite(v))
    what = {"ws-cd": "primal CD on working sets with Anderson extrapolation",
            "gram-cd": "CD on the Gram matrix XᵀX",
            "primal-cd": "plain cyclic CD on the data"}[best]
    return (f"squared loss, l1 part: {what} ({best}; predicted {shown}, "
            f"{n}×{d}, nnz {nnz})")


#: ``solver="auto"`` runs newton-cd for an l1 logistic problem on dense rows from this
#: many samples (leukemia, 38 × 7,129, stays with ws-cd, 0.5-0.75× skglm there)
L1_NEWTON_MIN_SAMPLES = 100
#: ... with rows at least this dense
L1_NEWTON_MIN_DENSITY = 0.5


def l1_newton_reason(problem: Problem) -> str:
    """Why ``auto`` runs proximal Newton (newton-cd) on an l1 logistic problem, or "".

    A ws-cd step on the logistic loss evaluates ``exp`` at every entry of its
    column, every epoch; proximal Newton evaluates it once per sample per outer
    iteration and runs its inner CD on a quadratic model (multiply-adds), as
    skglm's ProxNewton and glum do. That pays where X is dense with many rows,
    or where ``XᵀDX`` is cheap to form (few features). Measured at tol 1e-10,
    time ws-cd / newton-cd (benchmarks/results/benchopt_logreg.md): correlated
    10,000 × 100 at λmax/20: 2.9 s / 0.45 s; 1,000 × 1,000 at λmax/10: 5.9 s /
    0.24 s; a9a at λmax/20: 1.0 s / 0.29 s; leukemia (38 rows): 40 / 47 ms.
    """
    if problem.loss != "logistic":
        return ""
    if choose_hessian(problem) == "gram":
        return (f"l1 logistic, {problem.n_features} features: XᵀDX cheap to form; proximal "
                "Newton (exp once per sample per outer iteration, CD on the quadratic model) "
                "(newton-cd)")
    density = problem.design.density
    if problem.n_samples >= L1_NEWTON_MIN_SAMPLES and density >= L1_NEWTON_MIN_DENSITY:
        return (f"l1 logistic on dense rows ({problem.n_samples} samples ≥ "
                f"{L1_NEWTON_MIN_SAMPLES}, density {density:.2g} ≥ {L1_NEWTON_MIN_DENSITY:g}): "
                "proximal Newton (exp once per sample per outer iteration, CD on the "
                "quadratic model) (newton-cd)")
    return ""


#: ``solver="auto"`` runs lbfgs for an l2 logistic problem on dense X from this many
#: entries (benchopt's 10,000 × 100 and 1,000 × 1,000 have 10⁶; below, the Gram route's
#: few Newton iterations cost less than L-BFGS's more numerous ones: not measured between)
LBFGS_MIN_ENTRIES = 1 << 18
#: ... whose rows and columns are evenly scaled: max/mean of the squared norms at most this
LBFGS_SPREAD = 10.0
#: Where newton-cg's lagged Gram is cheap (few features), lbfgs only when the Gram costs
#: at least this many data passes ... (:func:`cdlearn.solvers.newton_cd.gram_work`)
LBFGS_GRAM_PASSES = 8.0
#: ... and the dual condition κ (:func:`dual_condition`) is at most this
LBFGS_KAPPA = 100.0


def lbfgs_reason(problem: Problem) -> str:
    """Why ``auto`` runs L-BFGS (lbfgs) on an l2 logistic problem, or "".

    On dense, evenly scaled X (standardised features, benchopt's ``X ~ N(0, 1)``)
    the Hessian is well conditioned in the data's own scale, and L-BFGS with an
    exact line search on the margins needs fewer data passes than truncated
    Newton: benchopt's L2 simulations, passes to a relative 1e-6 / 1e-10 of the
    optimum at the first tolerance of the ``10^{-k/2}`` schedule
    (benchmarks/results/benchopt_logreg.md): 1,000 × 1,000 lmbd 1: 54 / 84
    against newton-cg's 120 / 142, lmbd 0.01: 78 / 116 against 194 / 250;
    10,000 × 100 lmbd 1: 21 / 27 against 130, lmbd 0.01: 39 / 56 against 146 / 161.
    Uneven column scales (raw features) are what slows a first-order method and
    not Newton, hence the spread test; sparse X keeps newton-cd / newton-cg (a9a).
    Where ``XᵀDX`` is cheap (:func:`cdlearn.solvers.newton_cd.choose_hessian`'s
    Gram form, e.g. 10,000 × 100), newton-cg's lagged-Gram route needs few outer
    iterations whatever λ, while L-BFGS's iterations grow with the condition
    number: lbfgs only when the Gram costs ≥ ``LBFGS_GRAM_PASSES`` passes and
    ``κ`` ≤ ``LBFGS_KAPPA``. Measured CPU time lbfgs / newton-cg on ``X ~ N(0, 1)``
    with 10⁶ entries to tol 1e-5 / 1e-9 (2026-11-26, nice 15, 3-7 interleaved runs;
    newton-cg's lagged Gram without the rows of tiny curvature): d = 100 (Gram 13
    passes): κ = 25 0.97 / 1.13 (locked driver runs to 1e-6 / 1e-10: lbfgs 15-17 /
    20-27 ms, newton-cg 27-29 ms), 83 0.98 / 1.09, 250 1.19 / 1.30, 2,500 1.27 /
    1.57; d = 150: κ = 37 0.76 / 0.96, 112 0.90 / 0.85, 375 0.94 / 1.25, 3,750 1.58 /
    2.08. Before that Gram change (newton-cg ~1.4× slower), d = 75 (9.8 passes):
    κ = 62 0.82 / 0.96; d = 50 (6.5 passes): κ = 12 1.06 / 0.92; d = 25: κ = 6
    0.91 / 0.92.
    """
    if (problem.loss != "logistic" or problem.penalty != "l2" or not problem.l2 > 0.0
            or problem.design.is_sparse or problem.design.nnz < LBFGS_MIN_ENTRIES):
        return ""
    gram = ""
    if choose_hessian(problem) == "gram":
        passes = gram_work(problem) / problem.design.nnz
        kappa = dual_condition(problem)[0]
        if passes < LBFGS_GRAM_PASSES or kappa > LBFGS_KAPPA:
            return ""
        gram = (f"; XᵀDX costs {passes:.3g} data passes ≥ {LBFGS_GRAM_PASSES:g} and the dual "
                f"condition κ = {kappa:.3g} ≤ {LBFGS_KAPPA:g}: ahead of newton-cg's lagged Gram")
    spreads = []
    for mean, peak in (_norm_stats(problem, rows=True), _norm_stats(problem, rows=False)):
        if not mean > 0.0:
            return ""
        spreads.append(peak / mean)
    if max(spreads) > LBFGS_SPREAD:
        return ""
    return (f"l2 logistic on dense, evenly scaled X ({problem.n_samples}×{problem.n_features}; "
            f"max/mean squared norm of rows {spreads[0]:.3g}, of columns {spreads[1]:.3g} ≤ "
            f"{LBFGS_SPREAD:g}): L-BFGS with an exact line search on the margins, 2 data "
            f"passes an iteration, each certified by its gradient's dual point (lbfgs){gram}")


#: ``solver="auto"`` runs newton-cg (l2, many features) when dual CD's
#: per-epoch condition :func:`dual_condition` is at least this ...
NEWTON_CG_KAPPA = 10.0
#: ... and no row dominates (max over mean of ``s_i‖x_i‖²`` at most this).
NEWTON_CG_SPREAD = 10.0


def dual_condition(problem: Problem) -> tuple[float, float]:
    """``(κ, spread)``: ``κ = β·mean_i(s_i‖x_i‖²)/(λ2 n)`` and ``max/mean`` of ``s_i‖x_i‖²``.

    κ is the face-off eq. (15) dual term per pass (SDCA's epochs grow like
    ``1 + κ``), which is why liblinear advises its primal Newton solvers for
    large C. Truncated Newton's CG iterations grow only like ``√κ``, but rows of
    very uneven norms spoil its conditioning. Measured (benchmarks/results):
    reuters logistic at λ = 1/(100n) (κ = 25, spread 1): newton-cg 86 ms, dual
    CD 266 ms; news20 (spread 800) at the same λ: newton-cg 5.3 s, dual CD 1.6 s;
    at κ < 1 (reuters, λ = 1/n) dual CD is ahead (21 against 38 ms).
    """
    mean, peak = _norm_stats(problem, rows=True)
    if mean <= 0.0:
        return 0.0, 1.0
    kappa = smoothness(problem.loss) * mean / (problem.l2 * problem.n_samples)
    return kappa, peak / mean


def _norm_stats(problem: Problem, *, rows: bool) -> tuple[float, float]:
    """``(mean, max)`` of ``s_i‖x_i‖²`` (``rows``) or of ``‖x_j‖²``: X alone decides them
    with unit weights, so they are kept on the design (auto asked for them on every call:
    passes over n or d norms)."""
    def compute():
        norms = (problem.design.row_sq_norms * problem.sample_weight if rows
                 else problem.design.col_sq_norms)
        return float(norms.mean()), float(norms.max())

    if rows and not unit_weights(problem):
        return compute()
    return problem.design.derived("row_norm_stats" if rows else "col_norm_stats", compute)


def solve(X, y, *, loss="squared", penalty="l2", lam=None, l1_ratio=0.5, solver="auto",
          sampling=None, power=1.0, batch_size=1, tol=1e-6, max_epochs=1000, seed=0,
          callback=None, verbose=False, fit_intercept=False, sample_weight=None, w0=None,
          alpha0=None, intercept0=0.0, dual_step="exact", primal_step="newton",
          check_every=None, groups=None, n_jobs=None, coef_tol=None, positive=False,
          n_threads=None, **solver_options) -> SolveResult:
    """Minimise ``P(w) = 1/n Σ s_i φ(x_iᵀw + b, y_i) + λ g(w)`` by coordinate descent.

    Parameters
    ----------
    X : (n_samples, n_features) ndarray or scipy.sparse matrix
    y : (n_samples,) targets; ±1 labels for the classification losses
    loss : "squared", "logistic", "squared_hinge", "smooth_hinge" or "hinge"
    penalty : "l2" (λ/2‖w‖²), "l1" (λ‖w‖₁), "elastic_net"
        (λ(ρ‖w‖₁ + (1-ρ)/2‖w‖²), ρ = ``l1_ratio``), "group_l2"
        (λ Σ_g w_g‖w_g‖₂ over ``groups``, w_g = √|g|; solver "block-cd") or "none"
    lam : float > 0, the regularisation λ (the papers' notation)
    solver : "auto" (see :func:`auto_solver`: ws-cd for l1 parts, newton-cd for few
        features, else the face-off choice between primal and dual CD), "primal-cd",
        "dual-cd", "ws-cd", "newton-cd", "newton-cg" (truncated Newton with preconditioned
        CG, liblinear -s 0/-s 2; smooth losses, l2 only), "lbfgs" (limited-memory BFGS;
        smooth losses, l2 only), "block-cd", "scd", "ascd",
        "dgpd", "spdc", "fista".
        With a ``sampling``, a non-default ``batch_size``, step rule, an ``alpha0`` or a
        method option, "auto" chooses between primal and dual CD only.
    sampling : None (default: the method's own, :func:`default_sampling` --
        "shuffle" for serial dual CD, else "uniform"), "uniform", "importance"
        (face-off eq. (14)), "power" (``p ∝ L^power``, primal only), "cyclic"
        or "shuffle" (a fresh random permutation every epoch, i.e. without
        replacement; "uniform" draws with replacement as the papers do).
        Dual CD with "shuffle" or "cyclic" also shrinks samples whose dual
        variable sits at a bound (hinge losses; option ``shrinking=False``
        turns it off). Importance sampling is what the
        papers' fixed steps (``primal_step="lipschitz"``, ``dual_step="fixed"``) need
        and it speeds them up a lot on uneven norms; the default exact/Newton steps
        adapt to each coordinate's curvature themselves, and there uniform sampling
        is as fast or faster in passes (importance draws dense columns/rows often).
    batch_size : τ of τ-nice minibatches (uniform sampling, ESO step sizes)
    tol : stop when the duality gap ≤ ``tol · P(0)`` (without a penalty: the
        optimality violation ``max_j |∇_j P(w)|`` ≤ ``tol · P(0)``)
    coef_tol : None, or also stop only when the gap guarantees
        ``‖w − w*‖∞ ≤ coef_tol · ‖w‖∞`` through a strong convexity bound
        (:mod:`cdlearn.solvers.stopping`; the estimators' rule)
    max_epochs : an epoch is as many coordinate steps as the method has coordinates
    seed : int or None; the same seed gives bit-identical results
    callback : ``callback(state) -> bool`` after each check; True stops the run
    verbose : progress bar (tqdm) and a line saying which solver runs and why
    fit_intercept : unpenalised intercept ``b``
    sample_weight : non-negative weights ``s_i``
    w0, alpha0, intercept0 : warm starts (primal CD uses ``w0``, dual CD ``alpha0``);
        ``w0="least_squares"`` starts from x_LS = argmin ‖Xw − y‖ computed by scipy's
        LSQR (RCDC paper §6.1, "choice of the initial point")
    dual_step : "exact" (coordinate maximisation; Newton for the logistic) or
        "fixed" (face-off §7's step for the logistic loss); dual CD only
    primal_step : "newton" (local-curvature proximal Newton step with Armijo
        backtracking) or "lipschitz" (NSync's fixed 1/L_j step); primal CD only
    check_every : epochs between duality-gap checks (each costs a pass or two);
        None (default) spaces them adaptively so they cost ≲ 25% of the run time
    groups : for penalty="group_l2": list of disjoint index arrays covering every
        feature, or a label vector of length n_features (see :func:`make_problem`)
    n_jobs : threads for the one-vs-rest problems of a multiclass ``y`` (None or
        -1: all cores; :func:`cdlearn.solve`); ignored for a single problem
    n_threads : threads of this solve (None or -1: every core the process may run on,
        ``os.sched_getaffinity``): τ-nice dual and primal CD (``batch_size > 1``) run
        their minibatches on threads (:mod:`cdlearn.kernels.parallel_cd`; the iterates
        do not depend on the count), newton-cg its mat-vecs; other methods are serial.
        ``solver="auto"`` on P > 1 threads runs such a parallel method where its cost
        model predicts it faster than the serial choice (:func:`parallel_choice`).
        One-vs-rest gives each of its ``n_jobs`` concurrent classes ``n_threads // n_jobs``
        (at least 1), so the two never oversubscribe the cores.
    positive : bool; add the constraint ``w ≥ 0`` (scikit-learn's ``positive``):
        minimise ``P(w) + ι(w ≥ 0)``. Coordinate steps are clipped at 0 and the
        duality gap uses the one-sided conjugate (:mod:`cdlearn.penalties`).
        Solvers "ws-cd" and "primal-cd" (not with ``sampling="shrinking"``);
        "auto" picks one of them; other methods raise a ValueError
    **solver_options : options of a specific method (``SOLVERS[name].options``),
        e.g. the selection rule of greedy CD; unknown names raise a TypeError

    Returns
    -------
    SolveResult
        With ``w, alpha, intercept, primal, dual, gap, solver, trace,
        converged, n_epochs, passes, seconds``.

        One problem: the public :func:`cdlearn.solve` also takes a multiclass target.
    """
    # validate
    problem = make_problem(X, y, loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                           fit_intercept=fit_intercept, sample_weight=sample_weight,
                           groups=groups, positive=positive)
    method = check_method_options(solver=solver, sampling=sampling, power=power,
                                  batch_size=batch_size, seed=seed, dual_step=dual_step,
                                  primal_step=primal_step)
    stopping = check_stopping(tol=tol, max_epochs=max_epochs, check_every=check_every,
                              callback=callback, coef_tol=coef_tol)
    threads = check_threads(n_threads)
    # choose
    solver, reason, chosen = choose_solver(problem, solver, solver_options=solver_options,
                                           w0=w0, alpha0=alpha0, n_threads=threads, **method)
    if chosen:  # auto's parallel method (parallel_choice): its minibatch or blocks
        method.update((k, v) for k, v in chosen.items() if k in method)
        solver_options = {**solver_options, **{k: v for k, v in chosen.items()
                                               if k not in method}}
    # run (on `threads` threads where the method has a parallel path; BLAS for Newton's)
    with use_threads(threads, blas=solver in ("newton-cd", "newton-cg", "lbfgs")):
        state = build_state(problem, solver, w0=w0, alpha0=alpha0, intercept0=intercept0,
                            **method, **solver_options)
        if verbose:
            print(f"cdlearn: solver={solver} ({reason})")
        result = run(state, solver=solver, verbose=verbose, **stopping)
    # certify: the result carries its duality gap; say why this method ran
    result.info["reason"] = reason
    result.info["n_threads"] = getattr(state, "n_threads", 1)
    return result


def check_method_options(*, solver, sampling, power, batch_size, seed, dual_step,
                         primal_step) -> dict:
    """The method options of :func:`solve` but ``solver`` itself, checked (errors name them)."""
    if solver != "auto":  # the default needs no tuple of the registry's names
        check_choice("solver", solver, ("auto", *SOLVERS))
    if sampling is not None:
        check_choice("sampling", sampling, SAMPLINGS)
    check_choice("dual_step", dual_step, ("exact", "fixed"))
    check_choice("primal_step", primal_step, ("newton", "lipschitz"))
    batch_size = check_int("batch_size", batch_size)
    power = check_positive("power", power, allow_zero=True)
    seed = check_seed("seed", seed)
    return dict(sampling=sampling, power=power, batch_size=batch_size,
                seed=seed, dual_step=dual_step, primal_step=primal_step)


def check_stopping(*, tol, max_epochs, check_every, callback, coef_tol=None) -> dict:
    """The stopping options of :func:`solve`, checked, as keywords of :func:`run`."""
    tol = check_positive("tol", tol)
    if coef_tol is not None:
        coef_tol = check_positive("coef_tol", coef_tol)
    max_epochs = check_int("max_epochs", max_epochs, low=0)  # 0: the initial point
    if check_every is not None:
        check_every = check_int("check_every", check_every)
    if callback is not None and not callable(callback):
        raise TypeError("callback must be callable")
    return dict(tol=tol, max_epochs=max_epochs, check_every=check_every, callback=callback,
                coef_tol=coef_tol)


def choose_solver(problem: Problem, solver: str, *, solver_options: dict, sampling, power,
                  batch_size, primal_step, dual_step, w0, alpha0, n_threads=1,
                  **_) -> tuple[str, str, dict]:
    """``(method, reason, options)``: ``solver`` itself, or :func:`auto_solver`'s choice
    for "auto"; ``options``: the ``solve`` keywords of a parallel method it chose
    (:func:`parallel_choice`, on the threads numba may use), else empty.

    With CD options (:func:`cd_options_requested`) "auto" chooses between primal
    and dual CD only, and an option that only one of them takes decides.
    """
    if solver != "auto":
        return solver, "requested", {}
    n_threads = usable_threads(n_threads)
    key = (_auto_key(problem, n_threads) if not solver_options and sampling is None
           and batch_size == 1 and power == 1.0 and primal_step == "newton"
           and dual_step == "exact" and w0 is None and alpha0 is None else None)
    if key is not None:
        memo = problem.design.derived("auto_choices", dict)
        chosen = memo.get(key)
        if chosen is not None:
            return chosen[0], chosen[1], dict(chosen[2])
    given = dict(sampling=sampling, power=power, primal_step=primal_step, dual_step=dual_step,
                 w0=w0, alpha0=alpha0)
    solver, reason = auto_solver(problem, cd_options=cd_options_requested(dict(
        solver_options, sampling=sampling, batch_size=batch_size, primal_step=primal_step,
        dual_step=dual_step, alpha0=alpha0, power=power)), batch_size=batch_size,
        n_threads=n_threads)
    ignored = ignored_options(solver, **given)
    if ignored:
        other = "primal-cd" if solver == "dual-cd" else "dual-cd"
        if not ignored_options(other, **given) and SOLVERS[other].supports(problem):
            return other, f"{', '.join(ignored)} given", {}
    options = auto_options(problem, reason, n_threads)
    if key is not None:
        if len(memo) >= AUTO_CHOICES_KEPT:
            memo.clear()  # a path's λs do not pile up (clear: atomic under threads)
        memo[key] = (solver, reason, dict(options))
    return solver, reason, options


#: ``solver="auto"`` choices kept per design (:func:`_auto_key`)
AUTO_CHOICES_KEPT = 16


def _auto_key(problem: Problem, n_threads: int):
    """The key of :func:`auto_solver`'s choice kept on the design for a repeated call
    (the same X, parameters and thread count, default method options), or None where
    the choice depends on more than X and those (sample weights, groups, ``positive``).
    For the squared loss with an l1 part the key also says whether the Gram is cached
    on the design: :func:`squared_l1_choice` prices it free then (an earlier solve may
    have formed it since)."""
    p = problem
    if p.groups is not None or p.positive or not unit_weights(p):
        return None
    gram = None
    if p.l1 > 0.0 and p.loss == "squared":
        # only solvers.gram_cd forms a Gram: not imported yet, none is cached (an import
        # statement per call ran importlib's Python code, ~5 µs cache-cold)
        gram_cd = sys.modules.get("cdlearn.solvers.gram_cd")
        gram = gram_cd is not None and gram_cd._gram_key(p) in p.design.__dict__.get(
            "_derived", {})
    return (p.loss_code, p.penalty, p.lam, p.l1, p.l2, p.fit_intercept, n_threads, gram)


def auto_options(problem: Problem, reason: str, n_threads: int) -> dict:
    """The ``solve`` keywords of the parallel method that :func:`auto_solver` on
    ``n_threads`` threads chose with ``reason`` (:func:`parallel_choice`), else {}."""
    priced = problem.__dict__.get("_parallel_choice", {}).get(n_threads)
    return priced[1] if priced is not None and priced[2] == reason else {}


def build_state(problem: Problem, solver: str, *, sampling, power, batch_size, seed, dual_step,
                primal_step, w0, alpha0, intercept0, **solver_options):
    """The state of method ``solver`` on ``problem``, its options checked against it.

    ``sampling=None`` is the method's own (:func:`default_sampling`); primal
    methods take ``w0``, ``power`` and ``primal_step``, dual ones ``alpha0`` and
    ``dual_step``; an option the method would ignore raises
    (:func:`check_options_used`); ``solver_options`` must be the method's own options.
    """
    intercept0 = check_finite("intercept0", intercept0)
    check_options_used(solver, sampling=sampling, power=power, primal_step=primal_step,
                       dual_step=dual_step, w0=w0, alpha0=alpha0)
    spec = SOLVERS[solver]
    spec.check(problem)
    primal = solver in _PRIMAL_OPTION_SOLVERS
    n_coords = problem.n_features if primal else problem.n_samples
    if batch_size > n_coords:
        raise ValueError(f"batch_size={batch_size} exceeds the {n_coords} coordinates")
    if sampling is None:
        sampling = default_sampling(solver, problem, batch_size)
    if batch_size > 1 and sampling != "uniform":
        raise ValueError(
            f"batch_size > 1 uses τ-nice (uniform) minibatches; got sampling={sampling!r}"
        )
    if sampling == "power" and solver not in ("primal-cd", "block-cd"):
        raise ValueError("sampling='power' is available for solver='primal-cd' and "
                         "'block-cd' only")
    if sampling == "shrinking" and solver != "primal-cd":
        raise ValueError("sampling='shrinking' (q-shrinking) is available for "
                         "solver='primal-cd' only")
    if sampling == "shrinking" and problem.positive:
        raise ValueError("sampling='shrinking' does not support positive=True")
    if primal:
        start = dict(power=power, w0=_primal_start(w0, problem), step=primal_step)
    else:
        start = dict(alpha0=_check_start("alpha0", alpha0, problem.n_samples),
                     dual_step=dual_step)
    unknown = sorted(set(solver_options) - set(spec.options))
    if unknown:
        accepted = ", ".join(spec.options) or "none"
        raise TypeError(
            f"solve() got option(s) {', '.join(unknown)} that solver={solver!r} does not take "
            f"(its own options: {accepted})"
        )
    return spec.build(problem, sampling=sampling, batch_size=batch_size, seed=seed,
                      intercept0=intercept0, **start, **solver_options)


def default_sampling(solver: str, problem: Problem, batch_size: int = 1) -> str:
    """The sampling a method runs with when ``solve`` gets ``sampling=None``.

    Serial dual CD without an intercept: "shuffle" (a fresh permutation per
    epoch, as liblinear's dual solvers; with shrinking for the hinge losses).
    Measured against "uniform" (benchmarks/results): reuters 7 against 12-15
    epochs, news20 logistic 255 against 352 ms. Serial primal CD on a squared
    loss with an l1 part: "cyclic" (glmnet's and scikit-learn's order; the plain
    CD that :func:`squared_l1_choice` picks, whose kernel then skips the random
    draws). Everything else: "uniform", the papers' sampling (dual CD with an
    intercept updates uniform pairs).
    """
    if solver == "dual-cd" and batch_size == 1 and not problem.fit_intercept:
        return "shuffle"
    if (solver == "primal-cd" and batch_size == 1 and problem.loss == "squared"
            and problem.l1 > 0.0):
        return "cyclic"
    return "uniform"


def _check_start(name, value, size):
    if value is None:
        return None
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


def least_squares_start(problem: Problem, *, atol: float = 1e-12, btol: float = 1e-12,
                        iter_lim: int | None = None) -> np.ndarray:
    """``x_LS = argmin_w ‖S^½ (Xw − y)‖₂`` by ``scipy.sparse.linalg.lsqr``.

    The RCDC paper's second natural starting point (§6.1, "Choice of the initial
    point"): the minimiser of the smooth part of the Lasso, the minimum-norm one when X
    has fewer rows than columns. Sample weights ``S`` enter as row scalings; the
    intercept is not fitted here (it starts at ``intercept0``).
    """
    import scipy.sparse as sp
    from scipy.sparse.linalg import lsqr

    M = problem.design.to_scipy()
    sw = problem.sample_weight
    y = problem.y
    if not np.all(sw == 1.0):
        root = np.sqrt(sw)
        M = sp.diags(root) @ M if sp.issparse(M) else np.asarray(M) * root[:, None]
        y = y * root
    limit = iter_lim if iter_lim is not None else max(1000, 10 * min(M.shape))
    return np.asarray(lsqr(M, y, atol=atol, btol=btol, iter_lim=limit)[0], dtype=np.float64)


def _primal_start(w0, problem: Problem):
    if isinstance(w0, str):
        if w0 != "least_squares":
            raise ValueError(f"w0 must be an array of shape ({problem.n_features},), None or "
                             f"'least_squares', got {w0!r}")
        return least_squares_start(problem)
    return _check_start("w0", w0, problem.n_features)
