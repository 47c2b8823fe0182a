"""The driver: shards, the choice of method, the rounds, the certificate."""

from __future__ import annotations

import math
import os
import time
import warnings
from collections import namedtuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..api import make_problem
from ..data import (
    as_design,
    check_choice,
    check_int,
    check_positive,
    check_sample_weight,
    check_seed,
)
from ..kernels.dual_cd import row_hashes
from ..kernels.newton_cd import gram_inner_cd, outer_violations
from ..losses import LOSS_CODES, loss_derivatives, weighted_loss_and_fenchel_young_sums
from ..penalties import (
    penalty_conjugate,
    penalty_fenchel_young,
    penalty_strengths,
    penalty_value,
    soft_threshold_array,
)
from ..sampling import make_rng_state
from ..solvers.base import (
    TRACE_COLUMNS,
    CallbackState,
    SolveResult,
    Trace,
    convergence_warning,
    initial_primal,
)
from ..solvers.dual_cd import RESYNC_EVERY
from ..solvers.intercept import optimal_intercept
from ._backend import DaskActors, InProcess, ShardLost, payload_bytes
from ._shard import ColumnShard, Shard

METHODS = ("auto", "cocoa+", "newton", "proxcocoa+")
#: "auto" runs ProxCoCoA+ (columns split) for an l1 part when d ≥ this many times n
PROX_MIN_RATIO = 10
SMOOTH_LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge")
#: above this many features a Newton round's d×d Gram per shard (8d² bytes: 32 MB at
#: 2,000) costs more to send than CoCoA+'s rounds; below it CoCoA+ stalls for K ≥ 2
#: (DISTRIBUTED.md: a9a, d = 123, gap stuck at 4e-5..4e-4)
NEWTON_MAX_FEATURES = 2000
#: Armijo line search of distributed Newton: sufficient decrease and the steps tried
ARMIJO = 1e-4
LINE_STEPS = tuple(0.5 ** k for k in range(31))
#: epochs of CD on proximal Newton's model (elastic net), at most
INNER_MAX_EPOCHS = 1000

#: CoCoA+ (K ≥ 2): the driver's dual line search tries every step t along the
#: round's summed update with every weight m of the previous move (news20
#: logistic, λ = 1/n, K = 2/4/8: gap 1.1e-6/1.7e-6/3.1e-6 after 300 rounds with
#: CoCoA+'s step alone; to 1e-6 in 63 (K = 4) and 85 (K = 8) rounds with this
#: grid, 61 and 84 with 48 points up to t = 8, m = 1.1: each point costs the
#: shards one pass of n_k conjugates)
COCOA_STEPS = (1.0, 1.5, 2.0, 3.0)
COCOA_MOMENTA = (0.0, 0.5, 0.8, 0.9)

ShardSpec = namedtuple("ShardSpec", "cls args kwargs")


class DistributedTrace(Trace):
    """The trace of :class:`cdlearn.solvers.base.Trace` plus, per check: the
    communication ``round``, the cumulative ``bytes_up`` (shards → driver) and
    ``bytes_down`` (driver → shards), and ``comm_seconds`` (cumulative wall time of
    the rounds beyond the slowest shard's compute)."""

    columns = TRACE_COLUMNS + ("round", "bytes_up", "bytes_down", "comm_seconds")


def solve(data, y=None, *, loss="squared", penalty="l2", lam=None, l1_ratio=0.5, client=None,
          n_shards=None, method="auto", tol=1e-6, max_rounds=500, local_epochs=1, seed=0,
          callback=None, verbose=False, n_features=None, timeout=None, fit_intercept=False,
          sample_weight=None) -> SolveResult:
    """Minimise ``P(w, b) = 1/n Σ s_i φ(x_iᵀw + b, y_i) + λ g(w)`` over data held by several shards.

    Parameters
    ----------
    data : ``X`` (with ``y``), ``(X, y)``, a list of ``(X_k, y_k)`` or ``(X_k, y_k, s_k)``
        shards, or a list of LIBSVM file paths (1-based indices) read on the workers,
        never by the driver.
        ``X`` in memory is split into ``n_shards`` by a hash of each row's content,
        so identical rows share a shard (duplicates on different shards slow CoCoA+).
    loss, penalty, lam, l1_ratio : as :func:`cdlearn.solve`; penalty "l2",
        "elastic_net" or "l1" (ProxCoCoA+ only).
    client : a ``dask.distributed.Client`` (shards become actors on its workers) or
        None: the same rounds in this process, shard after shard.
    n_shards : shards of an in-memory ``X``; default: the client's workers (1 without).
    method : "auto" (:func:`choose_method`), "cocoa+" (rows split; Ma, Smith, Jaggi et
        al. 2015, adding, γ = 1, σ′ = K; local solver: cdlearn's dual CD; then the
        driver's dual line search with momentum, :func:`_cocoa`; every loss, l2 or
        elastic net), "newton" (rows split; each shard sends ``X_kᵀD_kX_k`` and
        ``X_kᵀg_k``, the driver solves the d×d model: a linear system for l2, CD on it
        for elastic net, i.e. proximal Newton; smooth losses) or
        "proxcocoa+" (columns of an in-memory X split; Smith et al. 2015; local
        solver: cdlearn's primal CD; smooth losses, l1 or elastic net; the rounds
        to a given gap grow with K).
    tol : stop when the duality gap ≤ ``tol · P(0)``; the gap is summed from the
        shards' parts and equals a single-machine evaluation at the same point.
    max_rounds : CoCoA+ / ProxCoCoA+ rounds, Newton iterations.
    local_epochs : passes of the local solver per (Prox)CoCoA+ round.
    n_features : features of LIBSVM shards (default: the largest index in any shard).
    timeout : seconds to wait for a shard's answer (None: no limit).
    fit_intercept : an unpenalised intercept b, held by the driver (Newton and
        ProxCoCoA+; "auto" then picks one of them). Not CoCoA+: the intercept's dual
        constraint Σα = 0 couples the shards (kept per shard by pair steps, Σα_k = 0,
        it excludes the optimum: gap stuck at 4e-4 with K = 3). ProxCoCoA+ sets b
        to the exact minimiser from the margins it holds;
        Newton treats b as one more (unpenalised) variable of its model, and its
        gap is at the current b (as a single-machine primal method's, which sets
        b exactly: a joint certificate when Σα = 0, reached as Newton converges).
    sample_weight : weights ``s_i`` of an in-memory X (shards: pass ``(X_k, y_k, s_k)``).

    Returns the :class:`~cdlearn.solvers.base.SolveResult` of :func:`cdlearn.solve`
    (``solver`` is the method run, ``info["reason"]`` says why, and
    ``info["restarted_shards"]`` counts shards reloaded after a worker died); its
    trace adds ``round``, ``bytes_up``, ``bytes_down`` and ``comm_seconds``.
    """
    check_choice("loss", loss, LOSS_CODES)
    check_choice("penalty", penalty, ("l2", "l1", "elastic_net"))
    check_choice("method", method, METHODS)
    if lam is None:
        raise ValueError("lam is required")
    lam = check_positive("lam", lam)
    l1_ratio = check_positive("l1_ratio", l1_ratio, allow_zero=True)
    if l1_ratio > 1:
        raise ValueError(f"l1_ratio must be in [0, 1], got {l1_ratio}")
    l1, l2 = penalty_strengths(penalty, lam, l1_ratio)
    tol = check_positive("tol", tol)
    max_rounds = check_int("max_rounds", max_rounds, low=0)
    local_epochs = check_int("local_epochs", local_epochs)
    seed = check_seed("seed", seed)
    if callback is not None and not callable(callback):
        raise TypeError("callback must be callable")
    if n_features is not None:
        n_features = check_int("n_features", n_features)
    if n_shards is None:
        n_shards = len(client.scheduler_info()["workers"]) if client is not None else 1
    n_shards = check_int("n_shards", n_shards)
    if y is None and isinstance(data, tuple) and len(data) == 2:
        data, y = data
    fit_intercept = bool(fit_intercept)
    if y is None and sample_weight is not None:
        raise ValueError("sample_weight needs an in-memory X (and y); give shards as "
                         "(X_k, y_k, s_k) triples instead")
    sw = None
    if y is not None:
        sw = check_sample_weight(sample_weight, as_design(data).n_samples)

    shape = None if y is None else as_design(data).shape
    if shape is None and method == "auto":  # row shards: decided once they report their width
        chosen, reason = "auto", ""
    else:
        chosen, reason = choose_method(method, loss, l1, l2, shape, fit_intercept)
    if chosen == "proxcocoa+":
        specs, order = _column_specs(data, n_shards, loss, l1, l2, seed,
                                     float(sw.max())), None
    else:
        common = dict(loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                      fit_intercept=fit_intercept)
        specs, order = _shard_specs(data, y, sw, n_shards, n_features, common)
    backend = InProcess(specs) if client is None else DaskActors(client, specs, timeout)
    try:
        if chosen == "proxcocoa+":
            result = _prox_cocoa(backend, data, y, sw, fit_intercept, loss=loss, l1=l1, l2=l2,
                                 tol=tol, max_rounds=max_rounds, local_epochs=local_epochs,
                                 callback=callback, n_shards=len(specs))
        else:
            infos, _ = backend.call("info", [()] * len(specs))
            d = _check_features(specs, infos)
            backend.call("pad_features", [None if i[1] == d else (d,) for i in infos])
            n = sum(i[0] for i in infos)
            if chosen == "auto":  # shards: the choice needed their number of features
                chosen, reason = choose_method(method, loss, l1, l2, (n, d), fit_intercept)
                if chosen == "proxcocoa+":
                    raise ValueError(f"method='auto' chose ProxCoCoA+ ({reason}), which splits "
                                     f"the columns: pass X and y in memory, not row shards")
            run = _cocoa if chosen == "cocoa+" else _newton
            result = run(backend, n=n, d=d, l1=l1, l2=l2, p0=sum(i[2] for i in infos) / n,
                         tol=tol, max_rounds=max_rounds, local_epochs=local_epochs,
                         seed=seed, mean_weight=sum(i[3] for i in infos) / n,
                         callback=callback, n_shards=len(specs), fit_intercept=fit_intercept)
        if verbose:
            print(f"cdlearn.distributed: method={chosen} on {len(specs)} shards ({reason})")
    finally:
        backend.close()
    if result.alpha is not None and order is not None:
        alpha = np.empty_like(result.alpha)
        alpha[order] = result.alpha
        result.alpha = alpha
    result.info["reason"] = reason
    result.info["n_shards"] = len(specs)
    result.info["restarted_shards"] = backend.restarts
    result.info["replaced_shards"] = backend.replaced
    return result


def choose_method(method, loss, l1, l2, shape, fit_intercept=False) -> tuple[str, str]:
    """``(method, reason)`` for penalty strengths ``l1, l2`` and data of ``shape = (n, d)``.

    ``shape=None``: the rows come as shards, whose features are not known yet
    (only the row-split methods apply). "auto": ProxCoCoA+ for an l1 part with
    d ≥ :data:`PROX_MIN_RATIO` · n (and for any pure l1 penalty: the row-split
    methods need λ2 > 0); Newton for smooth losses (l2 or elastic net) and at most
    :data:`NEWTON_MAX_FEATURES` features, where CoCoA+ stalls for K ≥ 2; CoCoA+
    otherwise (it sends only a sparse Δv_k per shard). With an intercept, which
    CoCoA+ cannot fit, ProxCoCoA+ replaces CoCoA+.
    """
    smooth = loss in SMOOTH_LOSSES
    n, d = shape if shape is not None else (None, None)
    small = d is not None and d <= NEWTON_MAX_FEATURES
    if method == "proxcocoa+" or (method == "auto" and l1 > 0 and d is not None
                                  and (l2 == 0 or d >= PROX_MIN_RATIO * n)) or (
            method == "auto" and fit_intercept and smooth and d is not None and not small):
        if not smooth:
            raise ValueError(f"method='proxcocoa+' needs a smooth loss, got loss={loss!r}")
        if shape is None:
            raise ValueError("method='proxcocoa+' splits the columns: pass X and y in memory, "
                             "not row shards")
        return "proxcocoa+", ("requested" if method != "auto" else
                              f"an l1 penalty with {d} features >= {PROX_MIN_RATIO} x {n} "
                              f"samples (or no l2 part): columns split" if l1 > 0 and (
                                  l2 == 0 or d >= PROX_MIN_RATIO * n) else
                              f"an intercept with {d} features > {NEWTON_MAX_FEATURES}: "
                              f"columns split (CoCoA+ cannot fit an intercept)")
    if l2 == 0:
        raise ValueError(f"method={method!r} needs an l2 part (penalty 'l2' or 'elastic_net' "
                         f"with l1_ratio < 1); penalty='l1' is ProxCoCoA+'s (in-memory X)")
    if method == "newton" or (method == "auto" and smooth and small):
        if not smooth:
            raise ValueError(f"method='newton' needs a smooth loss, got loss={loss!r}")
        return "newton", ("requested" if method != "auto" else
                          f"{d} features <= {NEWTON_MAX_FEATURES}: a d×d Newton system per "
                          f"round is cheap, and CoCoA+ stalls on few features")
    if fit_intercept:
        raise ValueError(
            f"fit_intercept=True is not supported by CoCoA+ (method={method!r} chose it for "
            f"loss={loss!r}" + ("" if d is not None else " and row shards of unknown width")
            + "): its dual constraint Σα = 0 couples the shards; use method='newton' "
              "(few features) or 'proxcocoa+' (in-memory X, smooth loss), or fit without "
              "an intercept")
    if method == "cocoa+":
        return "cocoa+", "requested"
    why = ("a non-smooth loss" if not smooth else
           f"{d} features > {NEWTON_MAX_FEATURES} (a d×d Gram per round is too big)")
    return "cocoa+", f"{why}: CoCoA+ with local dual CD sends only sparse Δv_k"


# --------------------------------------------------------------------------- shards
def _shard_specs(data, y, sw, n_shards, n_features, common):
    """``(specs, order)``: what builds each shard, and for an in-memory X the
    original row index of every row in shard order (None otherwise)."""
    if isinstance(data, list | tuple) and y is None:
        if not data:
            raise ValueError("data is an empty list of shards")
        specs = []
        for k, part in enumerate(data):
            if isinstance(part, str | os.PathLike):
                name = os.fspath(part)
                specs.append(ShardSpec(Shard, (name,), dict(name=name, n_features=n_features,
                                                     **common)))
            elif isinstance(part, tuple) and len(part) in (2, 3):
                specs.append(ShardSpec(Shard, (part,), dict(name=str(k), **common)))
            else:
                raise TypeError(f"shard {k} must be a LIBSVM path or an (X_k, y_k) pair "
                                f"(or (X_k, y_k, s_k)), got {type(part).__name__}")
        return specs, None
    if y is None:
        raise ValueError("y is required with an in-memory X")
    design = as_design(data)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != design.n_samples:
        raise ValueError(f"y must have shape ({design.n_samples},), got {y.shape}")
    if n_shards > design.n_samples:
        raise ValueError(f"n_shards={n_shards} exceeds the {design.n_samples} samples")
    shard_of = _hash_partition(design, n_shards)
    X = data.tocsr() if sp.issparse(data) else np.asarray(data)
    specs, rows = [], []
    for k in range(n_shards):
        idx = np.flatnonzero(shard_of == k)
        if idx.shape[0] == 0:
            raise ValueError(f"shard {k} of {n_shards} got no rows (too few distinct rows)")
        specs.append(ShardSpec(Shard, ((X[idx], y[idx], sw[idx]),),
                               dict(name=str(k), **common)))
        rows.append(idx)
    return specs, np.concatenate(rows)


def _column_specs(X, n_shards, loss, l1, l2, seed, max_weight):
    """Column blocks of an in-memory X (contiguous, balanced by nonzeros) for ProxCoCoA+."""
    design = as_design(X)
    if n_shards > design.n_features:
        raise ValueError(f"n_shards={n_shards} exceeds the {design.n_features} features")
    cuts = np.searchsorted(np.cumsum(design.col_nnz),
                           design.nnz * np.arange(1, n_shards) / n_shards)
    bounds = np.unique(np.concatenate(([0], cuts, [design.n_features])))
    if bounds.shape[0] != n_shards + 1:
        bounds = np.linspace(0, design.n_features, n_shards + 1).astype(np.int64)
    X = X.tocsc() if sp.issparse(X) else np.asarray(X)
    return [ShardSpec(ColumnShard, (X[:, bounds[k]:bounds[k + 1]],),
                      dict(name=str(k), n_shards=n_shards, loss=loss, l1=l1, l2=l2,
                           seed=_shard_seed(seed, k) or 0, max_weight=max_weight))
            for k in range(n_shards)]


def _hash_partition(design, n_shards):
    """Shard of every row: a hash of its content modulo K (identical rows together)."""
    if n_shards == 1:
        return np.zeros(design.n_samples, dtype=np.int64)
    view = design.csr
    bits = np.ascontiguousarray(view.data, dtype=np.float64).view(np.uint64)
    keys = row_hashes(bits, view.indices, view.indptr)
    return (keys % np.uint64(n_shards)).astype(np.int64)


def _check_features(specs, infos) -> int:
    """The common number of features; shards given in memory must agree exactly."""
    d = max(i[1] for i in infos)
    for spec, info in zip(specs, infos, strict=True):
        if info[1] != d:
            if isinstance(spec.args[0], str):
                continue  # a LIBSVM file omits trailing empty columns: padded
            raise ValueError(f"shard {spec.kwargs['name']} has {info[1]} features, the "
                             f"others up to {d}: all shards must have the same features")
    return d


# --------------------------------------------------------------------------- driver
class _Rounds:
    """Trace, best iterate, callback, Ctrl-C and stopping shared by the methods."""

    def __init__(self, *, method, tol, p0, callback, passes_per_round):
        self.method, self.callback = method, callback
        self.threshold = tol * p0
        self.trace = DistributedTrace()
        self.best = None
        self.bytes_up = self.bytes_down = 0
        self.comm = 0.0
        self.passes_per_round = passes_per_round
        self.t0 = time.perf_counter()

    def traffic(self, down, up, comm):
        self.bytes_down += down
        self.bytes_up += up
        self.comm += comm

    def check(self, round_, primal, gap, w, nnz, extra=None, nnz_w=None, intercept=0.0) -> bool:
        """Record a certified point; True when the run must stop (gap or callback).

        ``w`` is None when the shards hold it (ProxCoCoA+: ``nnz_w`` counts it).
        """
        if not (math.isfinite(primal) and not math.isnan(gap)):
            raise FloatingPointError(f"{self.method} diverged at round {round_}: primal "
                                     f"objective {primal}")
        seconds = time.perf_counter() - self.t0
        dual = primal - gap
        passes = round_ * self.passes_per_round
        if nnz_w is None:
            nnz_w = int(np.count_nonzero(w))
        self.trace.append(passes, passes, seconds, primal, dual, gap, nnz_w,
                          nnz, round_, self.bytes_up, self.bytes_down, self.comm)
        if self.best is None or gap < self.best[2]:
            self.best = (primal, dual, gap, None if w is None else w.copy(), round_, extra,
                         intercept)
        if gap <= self.threshold:
            self.converged = True
            return True
        if self.callback is not None and self.callback(CallbackState(
                round_, passes, seconds, primal, dual, gap, w, None, intercept)):
            self.message = "stopped by callback"
            return True
        return False

    converged = False
    message = ""

    def result(self, rounds, alpha_of, interrupted) -> SolveResult:
        primal, dual, gap, w, round_, extra, intercept = self.best
        if self.converged:
            self.message = f"duality gap {gap:.3g} <= tol * P(0) = {self.threshold:.3g}"
        elif interrupted:
            self.message = "interrupted (Ctrl-C): returning the best iterate reached"
            warnings.warn(self.message, RuntimeWarning, stacklevel=3)
        elif not self.message:
            self.message = (f"max_rounds reached with gap {gap:.3g} > tol * P(0) = "
                            f"{self.threshold:.3g}")
            warnings.warn(f"{self.method}: {self.message}; increase max_rounds or tol",
                          convergence_warning(), stacklevel=3)
        res = SolveResult(w=w, alpha=alpha_of(round_, extra), intercept=float(intercept),
                          primal=float(primal), dual=float(dual), gap=float(gap),
                          solver=self.method, trace=self.trace, converged=self.converged,
                          n_epochs=rounds, passes=rounds * self.passes_per_round,
                          seconds=time.perf_counter() - self.t0, message=self.message)
        res.info["rounds"] = rounds
        if interrupted:
            res.info["interrupted"] = True
        return res


def _cocoa(backend, *, n, d, l1, l2, p0, tol, max_rounds, local_epochs, seed, mean_weight,
           callback, n_shards, fit_intercept=False):
    """CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtárik & Takáč 2015), adding, σ′ = K.

    Why the local solver may use the exact conjugate instead of CoCoA+'s quadratic
    bound: with σ′ = K, ``g*(v + Σ_k Δ_k) ≤ (1/K) Σ_k g*(v + KΔ_k)`` by convexity,
    so the shards' local duals (dual CD with ``1/(λ2 n)`` → ``K/(λ2 n)``) sum to a
    lower bound on D at the added point, the property CoCoA+'s analysis rests on.
    Round r certifies ``(w(v_r), α_r)`` exactly (each shard's loss and
    Fenchel–Young sums at the received v), then runs the local passes. With K ≥ 2
    the driver then moves α along the summed update Δα and the previous move P
    to the best point ``α + tΔα + mP`` of a grid (:func:`_dual_line_search`,
    one-shot: the shards return their conjugate sums at every grid point with
    Δv_k): CoCoA+'s own step (t, m) = (1, 0) was exact but slow on
    ill-conditioned data (news20 counts, ‖x_i‖ up to 621 with λn = 1: the
    rounds to a gap matched an independent CoCoA+ with exact local solves, and
    more local epochs did not help). ``info["steps"]`` lists the chosen (t, m).
    """
    K = n_shards
    kappa = l1 / l2
    steps = [(t, m) for t in COCOA_STEPS for m in COCOA_MOMENTA] if K > 1 else [(1.0, 0.0)]
    backend.call("cocoa_setup", [(n, K, _shard_seed(seed, k), mean_weight, steps)
                                 for k in range(K)])
    rounds = _Rounds(method="cocoa+", tol=tol, p0=p0, callback=callback,
                     passes_per_round=local_epochs)
    v, pv = np.zeros(d), np.zeros(d)  # pv: the previous round's move of v
    gap_prev, step, r, interrupted = None, None, 0, False
    steps_taken = []
    try:
        while True:
            keep = () if rounds.best is None else (rounds.best[4],)
            resync = r > 0 and r % RESYNC_EVERY == 0
            epochs = local_epochs if r < max_rounds else 0
            args = (v, r, gap_prev, keep, epochs, resync, step)
            try:
                parts, comm = backend.call("cocoa_round", [args] * K)
            except ShardLost as lost:
                # α_k = 0 on the reloaded shards: rebuild v = Xᵀα/(λ2 n) and repeat the round
                backend.call("cocoa_setup", [(n, K, _shard_seed(seed, k), mean_weight, steps)
                                             if k in lost.shards else None
                                             for k in range(K)])
                sums, _ = backend.call("dual_sum", [()] * K)
                v = np.sum(sums, axis=0)
                step = None
                pv = np.zeros(d)
                rounds.best = None
                continue
            rounds.traffic(K * payload_bytes(args), payload_bytes(parts), comm)
            w = v if kappa == 0.0 else soft_threshold_array(v, kappa)
            primal = sum(p[0] for p in parts) / n + penalty_value(w, l1, l2)
            gap = sum(p[1] for p in parts) / n + penalty_fenchel_young(w, l2 * v, l1, l2)
            if rounds.check(r, primal, gap, w, n) or r >= max_rounds:
                break
            if resync:
                v = np.sum([p[4] for p in parts], axis=0)
            dv = np.zeros(d)
            for _, _, (idx, vals), _, _ in parts:
                dv[idx] += vals
            step = _dual_line_search(v, dv, pv, np.sum([p[3] for p in parts], axis=0), steps,
                                     n, l1, l2)
            steps_taken.append(step)
            pv = step[0] * dv + step[1] * pv
            v += pv
            gap_prev = gap
            r += 1
    except KeyboardInterrupt:
        interrupted = True

    def alpha_of(round_, _):
        return np.concatenate(backend.call("snapshot_at", [(round_,)] * K)[0])

    res = rounds.result(r, alpha_of, interrupted)
    res.info["steps"] = np.array(steps_taken)
    return res


def _dual_line_search(v, dv, pv, conjugates, steps, n, l1, l2):
    """The ``(t, m)`` of ``steps`` that maximises the dual at ``α + tΔα + mP``.

    Δα is the round's summed CoCoA+ update, P the previous round's move (v moves
    by Δv and Pv). ``D = -(1/n) Σ_i s_i φ*(-α_i/s_i) - (λg)*(λ2 v)`` from the
    shards' conjugate sums (``conjugates``, one per step) and the driver's v.
    ``(1, 0)`` is CoCoA+'s own step, so the chosen one increases D at least as
    much: the per-round dual increase that CoCoA+'s analysis (Ma et al. 2015)
    bounds from below still holds, and so does its rate.
    """
    if l1 == 0.0:  # ‖v + tΔv + mPv‖² from six products, not one pass per step
        vv, dd, pp = v @ v, dv @ dv, pv @ pv
        vd, vp, dp = v @ dv, v @ pv, dv @ pv

        def conj(t, m):
            return 0.5 * l2 * (vv + t * t * dd + m * m * pp
                               + 2.0 * (t * vd + m * vp + t * m * dp))
    else:
        def conj(t, m):
            return penalty_conjugate(l2 * (v + t * dv + m * pv), l1, l2)
    best, best_value = (1.0, 0.0), -math.inf
    for (t, m), c in zip(steps, conjugates, strict=True):
        if math.isfinite(c):
            value = -c / n - conj(t, m)
            if value > best_value:
                best, best_value = (t, m), value
    return best


def _shard_seed(seed, k):
    return None if seed is None else seed + k


def _newton(backend, *, n, d, l1, l2, p0, tol, max_rounds, local_epochs, seed, mean_weight,
            callback, n_shards, fit_intercept=False):
    """Distributed (proximal) Newton with an Armijo line search, smooth losses.

    One iteration is two rounds: the shards' loss, gradient and Hessian parts at
    (w, b) (and the certificate at α = -sφ'(z), exact from the same parts), then
    the loss along the Newton direction at every step of :data:`LINE_STEPS`. The
    driver minimises the model ``gᵀΔ + ½ΔᵀHΔ + λg(w + Δ)`` (m = d + 1 variables
    with an intercept): exactly (Cholesky) for l2, by cdlearn's CD on the dense
    model (:func:`cdlearn.kernels.newton_cd.gram_inner_cd`, newGLMNET's inner
    solver) with an l1 part: proximal Newton (Lee, Sun & Saunders 2014). The
    step satisfies ``P(w + tΔ) ≤ P(w) + σ t δ``, ``δ = gᵀΔ + λg(w+Δ) - λg(w)``.
    """
    K = n_shards
    rounds = _Rounds(method="newton", tol=tol, p0=p0, callback=callback, passes_per_round=1)
    m = d + int(fit_intercept)
    w, b = np.zeros(d), 0.0
    rng = make_rng_state(0 if seed is None else seed)
    viol, s0 = np.empty(m), None
    it, comm_rounds, interrupted = 0, 0, False
    try:
        while True:
            parts, comm = backend.call("newton_parts", [(w, b)] * K)
            comm_rounds += 1
            rounds.traffic(K * payload_bytes((w, b)), payload_bytes(parts), comm)
            loss = sum(p[0] for p in parts) / n
            grad = np.sum([p[2] for p in parts], axis=0) / n
            pen = penalty_value(w, l1, l2)
            primal = loss + pen
            # the dual point α = -sφ'(z) has Xᵀα/n = -(the loss gradient)
            gap = sum(p[1] for p in parts) / n + penalty_fenchel_young(w, -grad[:d], l1, l2)
            if (rounds.check(comm_rounds, primal, gap, w, n, intercept=b)
                    or it >= max_rounds):
                break
            hess = np.sum([p[3] for p in parts], axis=0) / n
            if l1 == 0.0:
                hess[np.arange(d), np.arange(d)] += l2
                rhs = grad.copy()
                rhs[:d] += l2 * w
                step = -scipy.linalg.solve(hess, rhs, assume_a="pos")
            else:
                total, _ = outer_violations(w, grad, d, fit_intercept, l1, l2, viol)
                s0 = total if s0 is None else s0
                step, Hd = np.zeros(m), np.zeros(m)
                gram_inner_cd(hess, grad, w, step, Hd, np.arange(m, dtype=np.int64), m, d,
                              l1, l2, 0.0, min(0.1, total / s0) * 1e-2 * total,
                              INNER_MAX_EPOCHS, rng)
            decrease = float(grad @ step) + penalty_value(w + step[:d], l1, l2) - pen
            args = (w, b, step, LINE_STEPS)
            values, comm = backend.call("line_losses", [args] * K)
            comm_rounds += 1
            rounds.traffic(K * payload_bytes(args), payload_bytes(values), comm)
            sums = np.sum(values, axis=0) / n
            for t, f in zip(LINE_STEPS, sums, strict=True):
                if f + penalty_value(w + t * step[:d], l1, l2) <= primal + ARMIJO * t * decrease:
                    w = w + t * step[:d]
                    b = b + t * step[d] if fit_intercept else b
                    break
            else:
                rounds.message = "the line search found no decrease (rounding)"
                break
            it += 1
    except KeyboardInterrupt:
        interrupted = True
    res = rounds.result(comm_rounds, lambda r, e: None, interrupted)
    res.info["newton_iterations"] = it
    return res


def _prox_cocoa(backend, X, y, sw, fit_intercept, *, loss, l1, l2, tol, max_rounds,
                local_epochs, callback, n_shards):
    """ProxCoCoA+ (Smith, Forte, Jordan & Jaggi 2015, primal form), adding, σ′ = K.

    Columns split; the driver holds the margins ``z = Xw``, the intercept and the
    labels, and sends ``sφ'(z + b)``; each shard returns ``X_kΔw_k``. Round r
    certifies ``(w_r, b_r, α = -sφ'(z_r + b_r))`` exactly: b_r is the exact
    minimiser for the margins (so Σα = 0, as a single-machine primal method's),
    the dual point is rescaled into the l1 dual domain (``min(1,
    λ1/‖Xᵀα/n‖∞)``, celer's) from the shards' ``max|u_k|``, and the penalty's
    Fenchel–Young term is summed from their parts.
    """
    K = n_shards
    problem = make_problem(X, y, loss=loss, penalty="l2", lam=1.0, sample_weight=sw,
                           fit_intercept=fit_intercept)  # y checked, P(0)
    code, yv, sw = problem.loss_code, problem.y, problem.sample_weight
    n = problem.n_samples
    rounds = _Rounds(method="proxcocoa+", tol=tol, p0=initial_primal(problem),
                     callback=callback, passes_per_round=local_epochs)
    z = np.zeros(n)
    deriv = np.empty(n)
    b, r, interrupted = 0.0, 0, False
    try:
        while True:
            keep = () if rounds.best is None else (rounds.best[4],)
            resync = r > 0 and r % RESYNC_EVERY == 0
            if fit_intercept:
                b = float(optimal_intercept(code, z, yv, sw, b))
            zb = z + b if fit_intercept else z
            loss_derivatives(code, zb, yv, deriv)
            deriv *= sw
            args = (deriv, r, keep, local_epochs if r < max_rounds else 0, resync)
            try:
                parts, comm = backend.call("prox_round", [args] * K)
            except ShardLost:
                # w_k = 0 on the reloaded shards: rebuild z = Xw and repeat the round
                z = np.sum(backend.call("margins", [()] * K)[0], axis=0)
                rounds.best = None
                continue
            rounds.traffic(K * payload_bytes(args), payload_bytes(parts), comm)
            top = max(p[0] for p in parts)
            w_l1, w_u, w_sq = (sum(p[j] for p in parts) for j in (1, 2, 3))
            scale = 1.0 if l2 > 0 or top <= l1 else l1 / top
            loss_sum, fy_sum = weighted_loss_and_fenchel_young_sums(code, zb, -scale * deriv,
                                                                    yv, sw)
            primal = loss_sum / n + l1 * w_l1 + 0.5 * l2 * w_sq
            pen_fy = sum(p[4] for p in parts) if l2 > 0 else l1 * w_l1 - scale * w_u
            gap = fy_sum / n + pen_fy
            if (rounds.check(r, primal, gap, None, n, nnz_w=sum(p[5] for p in parts),
                             intercept=b) or r >= max_rounds):
                break
            if resync:
                z = np.sum([p[6] for p in parts], axis=0)
            else:
                for p in parts:
                    z += p[6]
            r += 1
    except KeyboardInterrupt:
        interrupted = True
    res = rounds.result(r, lambda round_, _: None, interrupted)
    res.w = np.concatenate(backend.call("snapshot_at", [(rounds.best[4],)] * K)[0])
    return res
