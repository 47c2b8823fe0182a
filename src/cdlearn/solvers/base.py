"""What every solver shares: the problem record, the trace, the result, the driver loop.

A method is a *state* object with three methods -- ``run_epoch()`` (one call
of its numba kernel, returns ``(entries_touched, updates_made)``),
``certificate()`` (returns ``(primal, dual, gap)`` for the current iterate)
and ``iterate()`` -- plus the attributes ``w``, ``alpha``, ``intercept``.
:func:`run` drives any such state: epochs, trace, stopping on the gap,
callbacks, progress bar, warnings, Ctrl-C, divergence checks.
"""

from __future__ import annotations

import contextlib
import csv
import math
import threading
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..compile_stats import CompileRecorder
from ..data import Design, _fingerprint
from ..objectives import dual_point_from_margins, primal_value
from .parallel import limit_blas_threads, restore_blas_threads
from .stopping import CoefficientTarget, Polish, gap_rounding, polishable

TRACE_COLUMNS = ("epoch", "passes", "seconds", "primal", "dual", "gap", "nnz_w", "active")


@dataclass
class Problem:
    """A validated problem instance, as solvers receive it."""

    design: Design
    y: np.ndarray
    sample_weight: np.ndarray
    loss: str
    loss_code: int
    penalty: str
    lam: float
    l1: float  # λ1 of λg = λ1‖w‖₁ + λ2/2‖w‖²
    l2: float  # λ2
    fit_intercept: bool = False
    #: :class:`cdlearn.penalties_group.Groups` for penalty="group_l2" (None otherwise)
    groups: object = None
    #: the constraint w ≥ 0 on top of the penalty (scikit-learn's ``positive``)
    positive: bool = False

    @property
    def n_samples(self) -> int:
        return self.design.n_samples

    @property
    def n_features(self) -> int:
        return self.design.n_features


class PrimalIterate:
    """``snapshot``/``restore``/``iterate``/``nnz_w`` of a primal method.

    For states keeping ``w``, a one-element ``_intercept`` array and margins
    ``z = Xw + b``; a method with more margin-derived state (residuals, σ
    caches, supports) extends :meth:`_restore_margins`.
    """

    @property
    def intercept(self) -> float:
        return float(self._intercept[0])

    def snapshot(self):
        return self.w.copy(), self._intercept[0]

    def restore(self, snap):
        w, b = snap
        if b == self._intercept[0] and np.array_equal(w, self.w):
            return  # the current point: its margins need no product with X
        self.w[:] = w
        self._intercept[0] = b
        self._restore_margins()

    def _restore_margins(self):
        self.z = self.problem.design.matvec(self.w) + self._intercept[0]

    def iterate(self):
        return self.w.copy(), None, self._intercept[0]

    def nnz_w(self) -> int:
        return int(np.count_nonzero(self.w))


def unit_weights(problem: Problem) -> bool:
    """Whether every sample weight is 1 (kept on the problem; ``make_problem`` records it
    when no weights were given, without a pass over them)."""
    unit = problem.__dict__.get("_unit_weights")
    if unit is None:
        unit = problem.__dict__["_unit_weights"] = bool(np.all(problem.sample_weight == 1.0))
    return unit


def target_mark(problem: Problem, repeat: bool = False) -> int:
    """The fingerprint of ``y`` (:func:`~cdlearn.data._fingerprint`), once per problem: the
    key of what is kept on the design for the last ``y`` seen (``repeat``: a later call)."""
    mark = problem.__dict__.get("_y_mark")
    if mark is None:
        mark = problem.__dict__["_y_mark"] = _fingerprint(problem.y, repeat)
    return mark


def initial_primal(problem: Problem) -> float:
    """P(0) with a zero intercept: the scale of the relative stopping rule.

    Kept on the design for the last ``y`` seen with unit weights (the same value: it
    depends on the loss, y and the weights only): a call on a design and a ``y`` seen
    before (a path, warm starts, repeated fits) skips the loss pass, 0.02-0.03 ms at
    n = 300. The first call stores it unmarked, so a single fit never fingerprints y.
    """
    cached = unit_weights(problem)
    if cached:
        derived = problem.design.__dict__.setdefault("_derived", {})
        key = ("P(0)", problem.loss_code)
        entry = derived.get(key)
        mark = None if entry is None else target_mark(problem, repeat=True)
        if entry is not None and entry[0] == mark:
            return entry[1]
    z0 = np.zeros(problem.n_samples)
    value = primal_value(problem.loss_code, z0, problem.y, problem.sample_weight,
                         np.zeros(1), 0.0, 0.0)
    if cached:
        derived[key] = (mark, value)
    return value


class Trace:
    """Per-check record of a run; ``trace["gap"]`` gives a column as an array."""

    columns = TRACE_COLUMNS

    def __init__(self):
        self._rows: list[tuple] = []

    def append(self, *row):
        self._rows.append(tuple(row))

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, name: str) -> np.ndarray:
        k = self.columns.index(name)
        return np.array([r[k] for r in self._rows], dtype=np.float64)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {c: self[c] for c in self.columns}

    def to_csv(self, path) -> None:
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(self.columns)
            writer.writerows(self._rows)

    def __repr__(self) -> str:
        return f"Trace({len(self)} rows: {', '.join(self.columns)})"


@dataclass
class SolveResult:
    """What :func:`cdlearn.solve` returns."""

    w: np.ndarray
    alpha: np.ndarray | None
    intercept: float
    primal: float
    dual: float | None
    gap: float
    solver: str
    trace: Trace
    converged: bool
    n_epochs: int
    passes: float
    seconds: float
    message: str = ""
    info: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        status = "converged" if self.converged else "not converged"
        return (
            f"SolveResult(solver={self.solver!r}, {status} after {self.n_epochs} epochs "
            f"({self.passes:.1f} passes, {self.seconds:.3g} s), primal={self.primal:.10g}, "
            f"gap={self.gap:.3g}, nnz_w={int(np.count_nonzero(self.w))})"
        )


@dataclass
class CallbackState:
    """Passed to ``callback(state)`` after every checked epoch; return True to stop."""

    epoch: int
    passes: float
    seconds: float
    primal: float
    dual: float | None
    gap: float
    w: np.ndarray
    alpha: np.ndarray | None
    intercept: float


def _progress_bar(verbose: bool, max_epochs: int, desc: str):
    if not verbose:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=max_epochs, desc=desc, unit="epoch", leave=True)


_blas_lock = threading.Lock()
_blas_depth = 0
_blas_limit = None


class _SingleThreadedBlas:
    """:func:`single_threaded_blas`'s context: a class, not a generator (contextlib's
    wrapper and generator frames were ~1.5 µs of every solve)."""

    __slots__ = ()

    def __enter__(self):
        global _blas_depth, _blas_limit
        with _blas_lock:
            if _blas_depth == 0:
                # read at every outermost solve, not remembered: a user may change a
                # library's count between two solves (threadpoolctl), and a BLAS on
                # several threads sums in another order (other bits)
                _blas_limit = limit_blas_threads(1)
            _blas_depth += 1

    def __exit__(self, *exc):
        global _blas_depth, _blas_limit
        with _blas_lock:
            _blas_depth -= 1
            if _blas_depth == 0 and _blas_limit is not None:
                restore_blas_threads(_blas_limit)
                _blas_limit = None
        return False


_single_threaded_blas = _SingleThreadedBlas()


def single_threaded_blas() -> _SingleThreadedBlas:
    """Run the block with one BLAS thread (threadpoolctl), re-entrant across threads.

    Why: the vector products of certificates and line searches (``w @ w`` on
    news20's 62k features) go through OpenBLAS, which splits them over
    threads; on a busy machine its threads wait for cores, and one such dot
    took 7.8 ms instead of 14 µs (measured here, 2 cores under load): more
    than a dual CD epoch. Only the outermost of concurrent solves (one-vs-rest
    runs them on threads) sets and restores the limit, and only for the BLAS
    libraries running more than one thread. Finding the libraries costs ~10 ms
    once per process; the limit itself a few µs per solve (threadpoolctl's
    ``limit()`` context took ~50 µs, a sixth of a small solve's set-up).
    """
    return _single_threaded_blas


_stop = threading.local()


@contextlib.contextmanager
def stop_on(event: threading.Event):
    """Solves run by this thread inside the block stop as on Ctrl-C once ``event`` is set.

    Why: a fan-out of solves (one-vs-rest on threads, a path) must stop every
    solve at the first Ctrl-C, and only the main thread receives it. Inside
    the block a solve checks ``event`` after every epoch; a Ctrl-C it catches
    sets ``event`` (the caller stops the others) and its warning is left to
    the caller, which issues one for the whole fan-out.
    """
    previous = getattr(_stop, "event", None)
    _stop.event = event
    try:
        yield event
    finally:
        _stop.event = previous


def check_serial_exact_options(solver: str, sampling, batch_size, step) -> None:
    """Reject the CD options a method whose serial, cyclic, exact coordinate steps
    cannot honour (ws-cd, gram-cd), naming the option."""
    if sampling not in ("uniform", "cyclic"):
        raise ValueError(f"solver={solver!r} visits its coordinates cyclically; "
                         f"sampling={sampling!r} is not available (use the default)")
    if batch_size != 1:
        raise ValueError(f"solver={solver!r} takes serial steps; batch_size must be 1")
    if step != "newton":
        raise ValueError(f"solver={solver!r} takes exact (Newton) coordinate steps; "
                         f"primal_step={step!r} is not available")


#: plain cyclic CD on the squared loss (solvers.primal_cd) spaces its gap checks by this
#: many checks' entries (_run's check_spacing; priced by solvers.gram_cd.squared_l1_costs)
PLAIN_CHECK_SPACING = 3


def run(state, *, solver: str, tol: float, max_epochs: int, callback=None, verbose=False,
        check_every: int | None = None, reference: float | None = None,
        coef_tol: float | None = None) -> SolveResult:
    """Drive ``state`` to the stopping rule, BLAS on one thread (:func:`single_threaded_blas`).

    Numba compilations inside the run (an empty cache) are timed apart:
    ``info["compile_seconds"]``; ``seconds`` and the trace exclude them.
    """
    with single_threaded_blas(), CompileRecorder() as compiling:
        return _run(state, solver=solver, tol=tol, max_epochs=max_epochs, callback=callback,
                    verbose=verbose, check_every=check_every, reference=reference,
                    coef_tol=coef_tol, compiling=compiling)


def _run(state, *, solver: str, tol: float, max_epochs: int, callback=None, verbose=False,
         check_every: int | None = None, reference: float | None = None,
         coef_tol: float | None = None, compiling) -> SolveResult:
    """Drive ``state`` until ``gap <= tol * reference`` or ``max_epochs``.

    ``reference`` defaults to P(0) (``state.reference()``), the DESIGN.md
    stopping rule. With ``coef_tol``, the gap must also be below
    :class:`~cdlearn.solvers.stopping.CoefficientTarget`'s target, which bounds
    ``‖w − w*‖∞ ≤ coef_tol · ‖w‖∞`` (evaluated only once the first test holds).
    ``check_every=None`` spaces the gap checks so that their work (about
    ``nnz + n + d`` entries) stays below the epochs' entries (checks at most
    every 10 epochs): on cheap epochs a check every epoch would
    double the run time. The spacing is computed from counts, not clocks, so
    the same seed still gives the same iterates. A state with
    ``predict_checks = True`` may get a check earlier when the gap's linear
    rate predicts the threshold before the next one (:func:`_predicted_interval`;
    counts again, not clocks), and its first check after the initial one
    comes a full interval later (not at epoch 1, where the gap is rarely
    near the threshold). The best iterate seen (lowest primal) is what is returned
    when the run stops early: methods whose primal is not monotone (dual CD)
    would otherwise return a worse point than one they already had. With
    ``coef_tol``, the iterate of a primal method (or of dual CD and block CD,
    which have ``restore_primal``) is also replaced at checks by the
    minimiser of P on its support when that is lower
    (:class:`~cdlearn.solvers.stopping.Polish`; ``info["restricted_solves"]``
    counts them): the exact answer for the squared loss, Newton's for the
    logistic and squared hinge losses. Ctrl-C (or
    the event of :func:`stop_on`) stops the run the same way, with
    ``info["interrupted"] = True``.
    """
    stop = getattr(_stop, "event", None)
    nnz = max(state.problem.design.nnz, 1)
    if reference is None:
        reference = state.reference()
    threshold = tol * reference
    target = None if coef_tol is None else CoefficientTarget(state.problem, coef_tol)
    limit = threshold  # the gap that stops: min(threshold, the coefficient target)
    lowest, stalled, w_prev = math.inf, 0, None  # checks without progress (STALLED_CHECKS)
    trace = Trace()
    bar = _progress_bar(verbose, max_epochs, solver)
    t_start = time.perf_counter()
    passes = 0.0
    epoch = 0
    converged = False
    message = ""

    primal_state = isinstance(state, PrimalIterate)
    polish = (Polish(state.problem, dual=not primal_state)
              if target is not None and polishable(state.problem)
              and (primal_state or hasattr(state, "restore_primal")) else None)
    primal, dual, gap = state.certificate()
    _check_finite(primal, gap, epoch, solver)
    best = (primal, dual, gap, state.snapshot())
    trace.append(0, 0.0, 0.0, primal, _num(dual), gap, state.nnz_w(), state.active())
    if gap <= threshold:
        limit = _limit(state, target, threshold, primal)
        if gap <= limit:
            converged = True
            message = "converged at the initial point"
    next_check = 1
    # a state may space its checks wider than one check's entries (check_spacing): plain
    # cyclic CD, whose cheap epochs a check per interval of 2 would slow by a third
    check_work = ((nnz + state.problem.n_samples + state.problem.n_features)
                  * getattr(state, "check_spacing", 1))
    predict = check_every is None and getattr(state, "predict_checks", False)
    stretch = predict and getattr(state, "stretch_checks", False)
    last = None  # (epoch, gap) of the previous check after epoch 0
    interrupted = False
    # a state with run_epochs(k) runs the epochs up to the next check in one call
    batch = getattr(state, "epoch_batch", 0)
    try:
        while not converged and epoch < max_epochs:
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            if batch:
                k = min(batch, max(1, min(next_check, max_epochs) - epoch))
                total, entries = state.run_epochs(k)
                epoch += k
                passes += total / nnz
            else:
                entries, _updates = state.run_epoch()
                epoch += 1
                passes += entries / nnz
            if predict and epoch == 1:
                # the check at epoch 0 counts: the next one comes a full interval later
                next_check = _adaptive_interval(check_work, entries)
                if stretch:
                    next_check = _merged_with_last(next_check, next_check, max_epochs)
            if epoch < next_check and epoch < max_epochs:
                continue
            primal, dual, gap = state.certificate()
            interval = check_every or _adaptive_interval(check_work, entries)
            if predict:
                interval = _predicted_interval(interval, last, epoch, gap, limit, stretch)
                last = (epoch, gap)
            next_check = epoch + interval
            if stretch:
                next_check = _merged_with_last(next_check, interval, max_epochs)
            _check_finite(primal, gap, epoch, solver)
            if polish is not None and (gap > limit or polish.pending):
                primal, dual, gap = polish(state, (primal, dual, gap), passes * nnz,
                                            threshold)
            if primal < best[0] or gap < best[2]:
                best = None  # the old snapshot goes first: one copy of the state, not two
                best = (primal, dual, gap, state.snapshot())
            seconds = time.perf_counter() - t_start - compiling.seconds
            trace.append(epoch, passes, seconds, primal, _num(dual), gap, state.nnz_w(),
                         state.active())
            if bar is not None:
                bar.update(epoch - bar.n)
                bar.set_postfix(gap=f"{gap:.2e}", primal=f"{primal:.8g}", refresh=False)
            if gap <= threshold:
                limit = _limit(state, target, threshold, primal)
            if gap <= limit:
                converged = True
                message = f"duality gap {gap:.3g} <= {_rule(threshold, limit)} = {limit:.3g}"
                break
            if gap <= threshold and target is not None:
                w_now = state.iterate()[0]
                moved = w_prev is None or (np.max(np.abs(w_now - w_prev), initial=0.0)
                                           > max(1e-3 * coef_tol, MOVE_FLOOR)
                                           * np.max(np.abs(w_now), initial=0.0))
                # a new low within the gap's rounding is no progress: warm-started at
                # its optimum, a Lasso's gap wandered 1.5e-16..6e-16 (P ≈ 1, n = 100) and
                # each chance low restarted the count (37 checks against a cold fit's 26)
                lower = gap < lowest - gap_rounding(state.problem.n_samples, primal)
                lowest, stalled = (min(gap, lowest), 0) if lower or moved else (
                    lowest, stalled + 1)
                w_prev = w_now
                if stalled >= STALLED_CHECKS:
                    converged = True
                    message = (f"duality gap {gap:.3g} <= tol * P(0) = {threshold:.3g}; it "
                               f"stalled above the coef_tol target {limit:.3g}")
                    break
            if callback is not None and callback(CallbackState(
                epoch, passes, seconds, primal, dual, gap, state.w, state.alpha,
                _intercept_value(state.intercept),
            )):
                message = "stopped by callback"
                break
    except KeyboardInterrupt:
        interrupted = True
        message = "interrupted (Ctrl-C): returning the best iterate reached"
        if stop is None:
            warnings.warn(message, RuntimeWarning, stacklevel=4)
        else:
            stop.set()
    finally:
        if bar is not None:
            bar.close()
    if converged and polish is not None and not interrupted:
        certificate = polish.finish(state, (primal, dual, gap), passes * nnz, limit)
        if certificate[0] != primal:
            primal, dual, gap = certificate
            trace.append(epoch, passes, time.perf_counter() - t_start - compiling.seconds,
                         primal, _num(dual), gap, state.nnz_w(), state.active())
    finish = getattr(state, "finish", None)  # a state's own last step (multinomial Newton)
    if converged and finish is not None and not interrupted:
        certificate = finish((primal, dual, gap))
        if certificate[2] != gap:
            primal, dual, gap = certificate
            trace.append(epoch, passes, time.perf_counter() - t_start - compiling.seconds,
                         primal, _num(dual), gap, state.nnz_w(), state.active())
    seconds = time.perf_counter() - t_start - compiling.seconds

    unverifiable = converged and certificate_unresolved(state, primal, limit)
    if unverifiable:
        # a gap that rounding makes meaningless is not claimed (docs/guide/stopping.md)
        converged = False
        message = unverifiable
        warnings.warn(f"{solver}: {message}", convergence_warning(), stacklevel=4)
    if not converged:
        # hand back the best point seen, with its own certificate
        primal, dual, gap, snap = best
        state.restore(snap)
        if not message:
            message = (
                f"max_epochs={max_epochs} reached with gap {gap:.3g} > "
                f"{_rule(threshold, limit)} = {limit:.3g}"
            )
            warnings.warn(
                f"{solver}: {message}; increase max_epochs or tol", convergence_warning(),
                stacklevel=4,
            )
    w, alpha, intercept = state.iterate()
    result = SolveResult(
        w=w, alpha=alpha, intercept=_intercept_value(intercept), primal=float(primal),
        dual=None if dual is None else float(dual), gap=float(gap), solver=solver,
        trace=trace, converged=converged, n_epochs=epoch, passes=passes, seconds=seconds,
        message=message,
    )
    result.info["compile_seconds"] = compiling.seconds
    if interrupted:
        result.info["interrupted"] = True
    if polish is not None and polish.accepted:
        result.info["restricted_solves"] = polish.accepted
    if unverifiable:
        result.info["gap_unverifiable"] = True
    extra = getattr(state, "extra_info", None)
    if callable(extra):
        # method-specific diagnostics (e.g. DGPD's nnz_dual and Δ_p) go to result.info
        result.info.update(extra())
    return result


#: a move of w below this share of ‖w‖∞ (about 50 ulps) is rounding, not progress: with
#: coef_tol = 1e-13, 1e-3 · coef_tol is below one ulp and every rounding flip of w counted
#: as a move, so a run at float64's floor of the gap never stalled (LassoCV(tol=1e-13) ran
#: to max_iter=100000)
MOVE_FLOOR = 1e-14
#: a run whose gap is below tol · P(0) but not at the coefficient target stops after
#: this many checks with neither a new low of the gap nor a move of w by more than
#: 1e-3 · coef_tol · ‖w‖∞: float64 rounding limits it (features at mean 100 and std 1,
#: l1 logistic: ws-cd's gap stays at 1.26e-10, target 3.2e-11, for 1000 outer
#: iterations, 37 s). Plateaus of the gap while w moves are progress: a wide Lasso's gap
#: stays at 1.7e-7 for 100 outer iterations while its support settles (error 2e-2 → 3e-3)
STALLED_CHECKS = 10


#: up to this max_i s_i‖x_i‖²/(λn) the rounding of a gap is far below any tolerance
#: (tests/test_fuzz.py verifies certificates independently up to it); beyond it a
#: converged claim is checked against the rounding bound of certificate_unresolved
KAPPA_CERTIFIABLE = 1e14


def certificate_unresolved(state, primal: float, limit: float) -> str:
    """Why the gap of a run that stopped with ``gap <= limit`` certifies nothing, or ``""``.

    Only badly scaled problems (:data:`KAPPA_CERTIFIABLE`) are examined. The dual
    point's ``u = Xᵀα/n`` is known up to ``δu ≤ ε S``, ``S = Σ_i |α_i| ‖x_i‖ / n``
    (α from the margins), and the margins up to ``ε‖x_i‖‖w‖``; the true gap may
    then exceed the computed one by up to ``2εS‖w‖`` plus ``(εS)²/(2λ2)`` (the l2
    conjugate) or ``εS·|P|/λ`` (l1 or group: the rescaling into the dual domain).
    When that exceeds ``limit``, the gap is rounding, not a certificate: the run
    is not claimed converged (ConvergenceWarning, as scikit-learn reports a fit
    it could not verify; rescaling X is the remedy).
    """
    p = state.problem
    if not isinstance(p, Problem):
        return ""  # several outputs (multinomial, multi-task): not examined
    lam = p.l2 if p.l2 > 0.0 else max(p.l1, float(p.lam or 0.0))
    if not lam > 0.0:
        return ""
    d = p.design
    unit = unit_weights(p)
    # max ‖x_i‖² and ‖X‖_F² depend on X alone: kept on the design (with unit weights, whose
    # max is 1), not a pass over n or d norms per call
    derived = d.__dict__.get("_derived", {})
    peak = derived.get("max_row_sq_norm") if unit else None
    if peak is None:
        stats = d.__dict__.get("_stats", {})
        if "row_sq_norms" not in stats and "col_sq_norms" in stats:
            # ‖X‖_F² bounds every ‖x_i‖²: no pass over the rows when that already settles it
            frob = derived.get("sq_frobenius") if unit else None
            if frob is None:
                frob = float(stats["col_sq_norms"].sum())
                if unit:
                    d.derived("sq_frobenius", lambda: frob)
            total = (1.0 if unit else float(np.max(p.sample_weight))) * frob
            if not total / (lam * d.n_samples) > KAPPA_CERTIFIABLE:
                return ""
        peak = float(np.max(p.sample_weight * d.row_sq_norms))
        if unit:
            d.derived("max_row_sq_norm", lambda: peak)
    kappa = peak / (lam * d.n_samples)
    if not kappa > KAPPA_CERTIFIABLE:
        return ""
    norms = d.row_sq_norms
    w, _, b = state.iterate()
    if np.ndim(w) != 1 or np.ndim(b) != 0:
        return ""  # several outputs (block CD over W)
    z = d.matvec(w)
    z += float(b)
    alpha = dual_point_from_margins(p.loss_code, z, p.y, p.sample_weight)
    eps = np.finfo(np.float64).eps
    spread = eps * float(np.abs(alpha) @ np.sqrt(norms)) / d.n_samples
    bound = 2.0 * spread * float(np.linalg.norm(w))
    bound += spread * spread / (2.0 * p.l2) if p.l2 > 0.0 else spread * abs(primal) / lam
    if not bound > limit:
        return ""
    return (f"the duality gap is below its float64 rounding at this scale (max ‖x_i‖²/(λn) "
            f"= {kappa:.3g}; the gap is known to ±{bound:.3g}, more than the target "
            f"{limit:.3g}): not a certificate; rescale X (e.g. StandardScaler or MaxAbsScaler)")


def _limit(state, target, threshold: float, primal: float) -> float:
    """The gap that stops the run: ``threshold``, lowered to the coefficient target."""
    if target is None:
        return threshold
    w, _, b = state.iterate()
    t = target.gap_target(w, float(b) if np.ndim(b) == 0 else b, primal)
    return threshold if t is None else min(threshold, t)


def _rule(threshold: float, limit: float) -> str:
    return "tol * P(0)" if limit >= threshold else "the coef_tol target"


def _predicted_interval(interval: int, last, epoch: int, gap: float, threshold: float,
                        stretch: bool = False) -> int:
    """Check earlier than ``interval`` when the gap's linear rate predicts the stop sooner.

    ``last`` is the previous check's ``(epoch, gap)``. If the gap fell from it
    at a per-epoch rate r, ``k = log(threshold/gap)/log r`` more epochs reach
    the threshold; the next check comes after ``ceil(k)`` epochs when that is
    fewer than ``interval``. Checks only move earlier (the spacing stays as
    sparse as ``interval`` otherwise, and the stopping test is unchanged); a
    prediction that was too hopeful costs one check. Dual CD, logistic,
    λ = 1/n, tol 1e-6: a9a's gap is 4.5e-6·P(0) at epoch 20 and 1.6e-6·P(0) at
    22, so the check comes at 23 (9.3e-7, stop) instead of 24; news20 stops
    at 17 instead of 18 the same way.

    With ``stretch`` (a state whose check costs about an epoch: plain cyclic CD)
    a stop predicted at least ``2 interval`` epochs away gets its next check
    halfway there, at most :data:`STRETCHED_INTERVAL` epochs on: the run stops
    late only if the gap's rate more than doubles meanwhile.
    """
    if last is None or interval <= 1 or not (threshold > 0.0 and gap > threshold):
        return interval
    e0, g0 = last
    if not (np.isfinite(gap) and np.isfinite(g0) and 0.0 < gap < g0 and epoch > e0):
        return interval
    log_rate = (math.log(gap) - math.log(g0)) / (epoch - e0)
    if not log_rate < 0.0:
        return interval
    k = math.log(threshold / gap) / log_rate
    if stretch and k >= 2 * interval:
        return int(min(STRETCHED_INTERVAL, math.ceil(k / 2)))
    return int(min(interval, max(1.0, math.ceil(k)))) if k < interval else interval


def _merged_with_last(next_check: int, interval: int, max_epochs: int) -> int:
    """``max_epochs`` for a check due less than half an interval before it: the last
    epoch's check is always made, so the earlier one would mostly repeat it (plain CD
    capped at 9 epochs, as benchopt's runs: checks at 4 and 9, not 4, 8 and 9)."""
    return max_epochs if max_epochs - interval // 2 <= next_check < max_epochs else next_check


#: the longest interval :func:`_predicted_interval` stretches to (that of
#: :func:`_adaptive_interval` on the cheapest epochs)
STRETCHED_INTERVAL = 10


def _adaptive_interval(check_work: int, epoch_entries: int) -> int:
    """Epochs until the next gap check: checks ≲ the epochs' work, at most every 10."""
    if epoch_entries <= 0:
        return 10
    return int(min(10, max(1, np.ceil(check_work / epoch_entries))))


def convergence_warning() -> type[Warning]:
    """scikit-learn's ConvergenceWarning, imported only when needed.

    Importing scikit-learn costs about a second; the solvers must not pay it
    at ``import cdlearn``.
    """
    global _convergence_warning
    if _convergence_warning is None:  # kept: an import statement per capped solve
        from sklearn.exceptions import ConvergenceWarning

        _convergence_warning = ConvergenceWarning
    return _convergence_warning


_convergence_warning = None


def _intercept_value(b):
    """A float, or an array for states with one intercept per output (block CD over W)."""
    if isinstance(b, float):  # numpy's float64 too: no np.ndim dispatch
        return float(b)
    return float(b) if np.ndim(b) == 0 else np.array(b, dtype=np.float64)


def _num(x):
    return np.nan if x is None else x


def _check_finite(primal, gap, epoch, solver):
    if not (np.isfinite(primal) and not np.isnan(gap)):
        raise FloatingPointError(
            f"{solver} diverged at epoch {epoch}: primal objective is {primal}. "
            "This should not happen with safe step sizes; please report it with the data."
        )
