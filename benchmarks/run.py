"""Time cdlearn against its peers: time to a relative suboptimality.

Usage::

    python -m benchmarks.run                    # every case (long)
    python -m benchmarks.run --quick            # a few-minute subset
    python -m benchmarks.run --cases logreg-l2-a9a-1n lasso-leu-lmax10 --repeats 5
    python -m benchmarks.run --epoch-cost       # primal-CD epoch cost micro-benchmark
    python -m benchmarks.run --list             # the cases

Method (see also DESIGN.md, "Tests, benchmarks, reproductions"):

- Every solver minimises the same objective (``benchmarks/peers.py``, mappings
  unit-tested in ``tests/test_bench_mapping.py``), evaluated for every iterate
  with cdlearn's objective code.
- P* per case: the lowest value reached by very tight runs (cdlearn "auto" at
  tol=1e-13 and the strongest peer for that problem at its tightest tolerance),
  cached in ``results/pstar.json`` and lowered afterwards if any solver in the
  benchmark went lower. For the generated Lasso P* is the known optimum.
- Metric: seconds to reach ``(P − P*)/P* ≤ 1e-3`` and ``≤ 1e-6``.
  cdlearn: one run per repeat with a ``callback`` recording (seconds, primal)
  after every epoch check; the clock starts before ``cdlearn.solve`` is called,
  so solver set-up and the duality-gap computation (cdlearn's stopping test)
  are included. Peers (no callbacks): growing budgets (max_iter ×√2, or the
  tolerance ÷√10 for Newton / working-set solvers), each run timed from
  scratch; the time of a target is the time of the first budget that reaches
  it, re-timed so that every figure is a median of ``--repeats`` runs.
- Clock: CPU time of the benchmark process (``time.process_time``), not wall
  time: every solver runs single-threaded, and on a shared machine wall time
  also counts the time other processes hold the cores.
- Data conversion into each solver's preferred layout is done once and not
  timed (benchopt's convention): CSC for column methods, CSR for row methods,
  liblinear's own problem struct, and a :class:`cdlearn.Design` holding both
  views for cdlearn. Every solver runs on one thread (BLAS/OpenMP threads = 1,
  Snap ML ``n_jobs=1``). Numba compile time is kept out of the timings by a
  warm-up call per case; the cold-start cost of cdlearn is measured separately
  in a fresh subprocess and reported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from . import peers as P  # noqa: E402
from .cases import CASES, EPOCH_COST_CASES, FULL, QUICK, Case  # noqa: E402

TARGETS = (1e-3, 1e-6)

#: the clock of every timing: CPU seconds of this (single-threaded) process. The
#: machine is shared; wall-clock time also counts the time other processes hold
#: the cores (3x on a load of 6 on 2 cores), CPU time does not. Compile time and
#: the cold start are still measured on the wall clock.
clock = time.process_time
RESULTS = Path(__file__).resolve().parent / "results"
PSTAR_FILE = "pstar.json"


# =========================================================================== records


@dataclass
class SolverRecord:
    """Everything measured for one solver on one case."""

    solver: str
    kind: str  # "cdlearn" or "peer"
    version: str
    budget_kind: str
    # cdlearn: one curve per repeat, rows (seconds, epoch, passes, primal)
    runs: list = field(default_factory=list)
    # peers: the sweep, rows (budget, seconds, primal), and re-timings per budget
    sweep: list = field(default_factory=list)
    retimes: dict = field(default_factory=dict)
    note: str = ""
    resolved: str = ""  # cdlearn "auto": the method it ran

    # ------------------------------------------------------------------ metric
    def time_to(self, p_star: float, target: float):
        """(median seconds, number of timed runs, budget or epochs) or (nan, 0, None)."""
        thr = p_star + target * abs(p_star)
        if self.kind == "cdlearn":
            times, epochs = [], []
            for run in self.runs:
                hit = next((r for r in run if r[3] <= thr), None)
                if hit is not None:
                    times.append(hit[0])
                    epochs.append(hit[1])
            if not times or len(times) * 2 <= len(self.runs):
                return math.nan, len(times), None
            return float(np.median(times)), len(times), float(np.median(epochs))
        for budget, seconds, primal in self.sweep:
            if primal <= thr:
                times = [seconds, *self.retimes.get(_bkey(budget), [])]
                return float(np.median(times)), len(times), budget
        return math.nan, 0, None

    def best_primal(self) -> float:
        vals = [r[3] for run in self.runs for r in run] + [s[2] for s in self.sweep]
        return min(vals) if vals else math.inf

    def curve(self):
        """(seconds, primal) of the first run (cdlearn) or of the sweep (peers)."""
        if self.kind == "cdlearn":
            return [(r[0], r[3]) for r in (self.runs[0] if self.runs else [])]
        return [(s[1], s[2]) for s in self.sweep]


def _bkey(budget) -> str:
    return repr(float(budget))


@dataclass
class CaseResult:
    case: Case
    shape: tuple
    nnz: int
    lam: float
    p_star: float
    p_star_source: str
    records: list = field(default_factory=list)


# =========================================================================== timing


def _suppress():
    warnings.simplefilter("ignore")


def run_cdlearn(peer: P.Cdlearn, Xp, yp, stop_value, cap, seed, tol=1e-15):
    """One timed cdlearn run; rows (seconds since the call, epoch, passes, primal).

    ``tol`` is tiny so that the run stops through the callback, at ``stop_value``
    (the tightest target) or at the time ``cap``.
    """
    rows = []

    def callback(state):
        t = clock() - t0
        rows.append((t, state.epoch, state.passes, state.primal))
        return state.primal <= stop_value or t > cap

    gc.collect()
    t0 = clock()
    res = peer.train(Xp, yp, 10_000_000, tol=tol, callback=callback, seed=seed)
    total = clock() - t0
    if res.converged:  # stopped by its own gap test: the callback did not see the last check
        rows.append((total, res.n_epochs, res.passes, res.primal))
    return rows, res


def time_peer_once(peer: P.Peer, Xp, yp, budget):
    gc.collect()
    t0 = clock()
    model = peer.train(Xp, yp, budget)
    return clock() - t0, model


def warm_up(peer: P.Peer, X, y, m=400):
    """A tight fit on a row subsample: compiles every numba path (skglm) and imports.

    A loose budget is not enough: working-set solvers return w = 0 before they
    reach (and compile) their inner solver.
    """
    if np.all(np.isin(y, (-1.0, 1.0))):
        rows = np.r_[np.flatnonzero(y > 0)[: m // 2], np.flatnonzero(y < 0)[: m // 2]]
    else:
        rows = np.arange(min(m, y.shape[0]))
    rows.sort()
    Xs, ys = X[rows], y[rows]
    Xq, yq = peer.prepare(Xs, ys)
    budget = 1e-8 if peer.budget_kind == "tol" else 50
    peer.train(Xq, yq, budget)


def sweep_peer(peer: P.Peer, Xp, yp, objective_fn, stop_value, cap, total_cap):
    """Growing budgets until the tightest target, the time cap, or a stall."""
    rows = []
    spent = 0.0
    note = ""
    for budget in peer.budgets():
        seconds, model = time_peer_once(peer, Xp, yp, budget)
        spent += seconds
        primal = objective_fn(*peer.extract(model))
        rows.append((budget, seconds, primal))
        if primal <= stop_value:
            break
        if seconds > cap or spent > total_cap:
            note = f"stopped at the {cap:g} s cap"
            break
        # loose budgets often return the same point (w = 0): only a tight budget can stall
        tight = budget <= 1e-6 if peer.budget_kind == "tol" else budget >= 1000
        if tight and len(rows) >= 6:
            last = [r[2] for r in rows[-6:]]
            if max(last) - min(last) <= 1e-13 * abs(last[-1]):
                note = "stalled: tighter budgets do not change the result"
                break
    else:
        note = "budgets exhausted"
    return rows, note


# =========================================================================== P*


def load_pstar(out: Path) -> dict:
    path = out / PSTAR_FILE
    if path.is_file():
        return json.loads(path.read_text())
    return {}


def save_pstar(out: Path, table: dict):
    (out / PSTAR_FILE).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


def reference_peers(obj: P.Objective) -> list[P.Peer]:
    """The strongest peers for a tight reference run, per problem type."""
    if obj.loss == "logistic" and obj.penalty == "l2":
        make = [lambda: P.Liblinear(obj, 0)]
    elif obj.loss == "squared_hinge" and obj.penalty == "l2":
        make = [lambda: P.Liblinear(obj, 2)]
    elif obj.loss == "logistic" and obj.penalty == "l1":
        make = [lambda: P.CelerLogReg(obj), lambda: P.Liblinear(obj, 6)]
    elif obj.loss == "squared" and obj.penalty == "l1":
        make = [lambda: P.CelerLasso(obj), lambda: P.SkglmLasso(obj)]
    else:
        make = []
    out = []
    for m in make:
        peer = m()
        if peer.available():
            out.append(peer)
    return out


def compute_pstar(X, y, obj, cap, log) -> tuple[float, str]:
    """Lowest of: the strongest peers at their tightest tolerance, cdlearn "auto" at tol=1e-13.

    The cdlearn run stops once it matches the best reference (it has nothing
    more to prove) or at ``cap`` seconds.
    """
    candidates = []
    for peer in reference_peers(obj):
        Xq, yq = peer.prepare(X, y)
        try:
            w, b = peer.fit(Xq, yq, peer.tight_budget)
        except Exception as exc:  # a reference run failing is not fatal
            log(f"    P* reference {peer.name} failed: {exc}")
            continue
        candidates.append((obj.value(X, y, w, b), f"{peer.name} tight"))
    stop = -math.inf
    if candidates:
        p_ref = min(candidates)[0]
        stop = p_ref + 1e-14 * abs(p_ref)
    cd = P.Cdlearn(obj, "auto")
    Xp, yp = cd.prepare(X, y)
    rows, res = run_cdlearn(cd, Xp, yp, stop, cap, seed=0, tol=1e-13)
    candidates.append((min([r[3] for r in rows] + [res.primal]), "cdlearn-auto tol=1e-13"))
    p, src = min(candidates)
    log("    P* candidates: " + ", ".join(f"{s}: {v:.15g}" for v, s in candidates))
    return p, src


# =========================================================================== one case


def bench_case(case: Case, *, repeats, cap, pstar_table, solvers_filter, log,
               exact=False) -> CaseResult:
    t_case = time.perf_counter()
    X, y, obj, p_known = case.load()
    n, d = X.shape
    nnz = int(X.nnz) if hasattr(X, "nnz") else int(np.count_nonzero(X))
    log(f"\n=== {case.name}: {n} x {d}, nnz={nnz}, {obj.loss}/{obj.penalty}, λ={obj.lam:.4g}")

    if p_known is not None:
        p_star, src = p_known, "known optimum (Nesterov generator)"
    elif case.key in pstar_table:
        p_star, src = pstar_table[case.key]["p_star"], pstar_table[case.key]["source"]
    else:
        t = time.perf_counter()
        p_star, src = compute_pstar(X, y, obj, 3 * cap, log)
        log(f"    P* = {p_star:.15g} ({src}, {time.perf_counter() - t:.1f} s)")
        pstar_table[case.key] = dict(p_star=p_star, source=src, case=case.name,
                                     date=datetime.date.today().isoformat())
    stop_value = p_star + min(TARGETS) * abs(p_star)
    result = CaseResult(case, (n, d), nnz, obj.lam, p_star, src)

    def objective_fn(w, b):
        return obj.value(X, y, w, b)

    solvers = [*P.cdlearn_variants(obj), *P.all_peers(obj)]
    if solvers_filter and exact:
        solvers = [s for s in solvers if s.name in solvers_filter]
    elif solvers_filter:
        solvers = [s for s in solvers if any(f in s.name for f in solvers_filter)]
    for peer in solvers:
        t_solver = time.perf_counter()
        rec = SolverRecord(peer.name, "cdlearn" if isinstance(peer, P.Cdlearn) else "peer",
                           peer.version(), peer.budget_kind)
        try:
            Xp, yp = peer.prepare(X, y)
            if isinstance(peer, P.Cdlearn):
                peer.train(Xp, yp, 1)  # warm-up: load / compile the numba kernels
                stop = stop_value
                for r in range(repeats):
                    rows, res = run_cdlearn(peer, Xp, yp, stop, cap, seed=r)
                    rec.runs.append(rows)
                    rec.resolved = res.solver
                    if r == 0 and rows and rows[-1][3] > stop_value:
                        # capped: repeat only up to the loosest target it did reach
                        rec.note = f"stopped at the {cap:g} s cap"
                        reached = [p_star + t * abs(p_star) for t in TARGETS
                                   if rows[-1][3] <= p_star + t * abs(p_star)]
                        if not reached:
                            break
                        stop = min(reached)
            else:
                warm_up(peer, X, y)
                rec.sweep, rec.note = sweep_peer(peer, Xp, yp, objective_fn, stop_value, cap,
                                                 total_cap=4 * cap)
                # re-time the budgets that first reach each target
                for target in TARGETS:
                    _, _, budget = rec.time_to(p_star, target)
                    if budget is None or _bkey(budget) in rec.retimes:
                        continue
                    t_first = next(r[1] for r in rec.sweep if r[0] == budget)
                    # at most about 2 × cap of re-timing per target
                    extra = min(repeats - 1, int(2 * cap / max(t_first, 1e-9)))
                    times = []
                    for _ in range(extra):
                        seconds, _m = time_peer_once(peer, Xp, yp, budget)
                        times.append(seconds)
                    rec.retimes[_bkey(budget)] = times
            del Xp, yp
        except Exception as exc:  # report, do not abort the whole benchmark
            rec.note = f"error: {type(exc).__name__}: {exc}"
        result.records.append(rec)
        t3, _, _ = rec.time_to(p_star, TARGETS[0])
        t6, _, _ = rec.time_to(p_star, TARGETS[1])
        extra = f" [{rec.resolved}]" if rec.resolved and peer.name.endswith("auto") else ""
        log(f"    {peer.name:28s}{extra:14s} 1e-3: {_fmt(t3):>9s}  1e-6: {_fmt(t6):>9s}"
            f"   ({time.perf_counter() - t_solver:5.1f} s) {rec.note}")

    # P* = the best any solver reached
    best = min((r.best_primal() for r in result.records), default=math.inf)
    if best < result.p_star:
        drop = (result.p_star - best) / abs(result.p_star)
        if drop > 1e-10:
            log(f"    note: a solver went below the cached P* by {drop:.2e} (relative); P* lowered")
        result.p_star = best
        result.p_star_source = next(r.solver for r in result.records if r.best_primal() == best)
        if p_known is None:
            pstar_table[case.key] = dict(p_star=best, source=result.p_star_source,
                                         case=case.name, date=datetime.date.today().isoformat())
    log(f"    ({time.perf_counter() - t_case:.0f} s for the case)")
    return result


def _fmt(t) -> str:
    if t is None or not math.isfinite(t):
        return "—"
    if t < 0.01:
        return f"{t * 1e3:.2f} ms"
    if t < 1:
        return f"{t * 1e3:.0f} ms"
    return f"{t:.2f} s"


# =========================================================================== cold start


#: issue #8's target: a fresh process importing cdlearn and fitting this problem
#: (dense 1,000 × 100, L2 logistic, λ = 1e-3, solver="auto") in under 1 s once the
#: numba cache is warm. It is the first solve of the process, so its first call
#: carries numba's one-time setup (about 0.3 s: its registries, scipy.linalg) as well
#: as loading (or, with an empty cache, compiling) the kernels it runs.
ISSUE8_CASE = "dense 1000×100 logistic/l2/auto"
COLD_TARGET_SECONDS = 1.0

COLD_SCRIPT = r"""
import json, time
t0 = time.perf_counter()
import cdlearn
t_import = time.perf_counter() - t0
import numpy as np
rng = np.random.default_rng(0)
X = rng.standard_normal((1000, 100))
y = np.sign(rng.standard_normal(1000))
out = {"import": t_import}
times = []
for _ in range(2):
    t = time.perf_counter()
    res = cdlearn.solve(X, y, loss="logistic", penalty="l2", lam=1e-3)
    times.append(time.perf_counter() - t)
out["ISSUE8_CASE"] = times
out["import + first fit"] = t_import + times[0]
out["auto ran"] = res.solver
import scipy.sparse as sp
rng = np.random.default_rng(0)
X = sp.random(500, 200, density=0.05, format="csr", random_state=0)
y = np.where(rng.standard_normal(500) > 0, 1.0, -1.0)
for loss, penalty, solver in [("logistic", "l2", "primal-cd"), ("logistic", "l2", "dual-cd"),
                              ("squared", "l1", "primal-cd")]:
    times = []
    for _ in range(2):
        t = time.perf_counter()
        cdlearn.solve(X, y, loss=loss, penalty=penalty, lam=0.01, solver=solver,
                      tol=1e-4, max_epochs=50)
        times.append(time.perf_counter() - t)
    out[f"{loss}/{penalty}/{solver} (sparse 500×200)"] = times
print(json.dumps(out))
""".replace("ISSUE8_CASE", ISSUE8_CASE)


#: the floor under issue #8's number, which no change to cdlearn can remove: a fresh
#: process importing numpy, scipy.sparse and numba and calling one trivial cached
#: ``@njit(cache=True)`` function (numba's one-time setup imports scipy.linalg and
#: installs its typing/lowering registries, ~0.3 s alone)
FLOOR_MODULE = """
from numba import njit


@njit(cache=True)
def plus_one(x):
    return x + 1.0
"""
FLOOR_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy, scipy.sparse, numba
sys.path.insert(0, sys.argv[1])
import cdlearn_floor_probe
cdlearn_floor_probe.plus_one(1.0)
print(json.dumps({"numba floor": time.perf_counter() - t0}))
"""


def measure_floor(runs: int = 5) -> float | None:
    """Median seconds of :data:`FLOOR_SCRIPT` over fresh processes (its cache warmed first)."""
    times = []
    with tempfile.TemporaryDirectory(prefix="cdlearn-floor-") as tmp:
        Path(tmp, "cdlearn_floor_probe.py").write_text(FLOOR_MODULE)
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp, "numba-cache")))
        for i in range(runs + 1):
            proc = subprocess.run([sys.executable, "-c", FLOOR_SCRIPT, tmp], env=env,
                                  capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                return None
            if i:  # the first run fills the cache
                times.append(json.loads(proc.stdout.strip().splitlines()[-1])["numba floor"])
    return float(np.median(times))


def _median_runs(runs: list[dict]) -> dict:
    """Per-key median over fresh-process runs (lists element-wise); strings from the first."""
    out = {}
    for key, val in runs[0].items():
        if isinstance(val, list):
            out[key] = [float(np.median([r[key][i] for r in runs])) for i in range(len(val))]
        elif isinstance(val, (int, float)):
            out[key] = float(np.median([r[key] for r in runs]))
        else:
            out[key] = val
    if len(runs) > 1:
        out["runs"] = len(runs)
        out["import + first fit, each run"] = [r["import + first fit"] for r in runs]
    return out


def measure_cold_start(log, warm_runs: int = 5) -> dict:
    """Fresh subprocesses: numba cache on disk (usual case; median of ``warm_runs``
    processes) and an empty cache (first install: the first call compiles)."""
    out = {}
    for label, env_extra, n_runs in (("warm numba cache", {}, warm_runs),
                                     ("empty numba cache", "tmp", 1)):
        runs = []
        for _ in range(n_runs):
            env = dict(os.environ)
            tmp = None
            if env_extra == "tmp":
                tmp = tempfile.TemporaryDirectory(prefix="cdlearn-numba-")
                env["NUMBA_CACHE_DIR"] = tmp.name
            try:
                t = time.perf_counter()
                proc = subprocess.run([sys.executable, "-c", COLD_SCRIPT], env=env,
                                      capture_output=True, text=True, timeout=900)
                wall = time.perf_counter() - t
                if proc.returncode != 0:
                    runs = [{"error": proc.stderr.strip().splitlines()[-1:]}]
                    break
                data = json.loads(proc.stdout.strip().splitlines()[-1])
                data["process wall"] = wall
                runs.append(data)
            finally:
                if tmp is not None:
                    tmp.cleanup()
        out[label] = runs[0] if "error" in runs[0] else _median_runs(runs)
        if label == "warm numba cache" and "error" not in runs[0]:
            out[label]["numba floor"] = measure_floor(warm_runs)
        log(f"    cold start ({label}): {json.dumps(out[label])}")
    return out


def cold_start_markdown(cold: dict) -> list[str]:
    """The cold-start section of the report."""
    L = ["## Cold start (fresh process, not included above)\n"]
    warm = cold.get("warm numba cache", {})
    if ISSUE8_CASE in warm:
        total = warm["import + first fit"]
        verdict = "met" if total < COLD_TARGET_SECONDS else "NOT met"
        runs = warm.get("runs", 1)
        text = (f"Issue #8 target — a fresh process imports cdlearn and fits a dense "
                f"1,000 × 100 L2 logistic regression (λ = 1e-3, `solver=\"auto\"`, which "
                f"ran {warm.get('auto ran', '?')}) in under {COLD_TARGET_SECONDS:g} s "
                f"with a warm numba cache: **{_fmt(total)}** (median of {runs} fresh "
                f"processes; medians: import {_fmt(warm['import'])}, first fit "
                f"{_fmt(warm[ISSUE8_CASE][0])}): {verdict}.")
        empty = cold.get("empty numba cache", {})
        if ISSUE8_CASE in empty:
            text += (f" With an empty numba cache (first install) the same first fit "
                     f"compiles its kernels: {_fmt(empty[ISSUE8_CASE][0])} "
                     f"(import + first fit {_fmt(empty['import + first fit'])}).")
        if warm.get("numba floor"):
            text += (f" Floor under this number (numpy + scipy.sparse + numba imported and "
                     f"one trivial cached `@njit` function called in a fresh process, median "
                     f"of {runs}): {_fmt(warm['numba floor'])}; cdlearn's own share is the "
                     f"rest, {_fmt(total - warm['numba floor'])} (its modules, its kernels' "
                     f"cache loads, the solve itself).")
        L.append(text + "\n")
    L.append("`import cdlearn`, then two identical solves per problem in the same process, "
             "the issue #8 problem first; the first call includes loading (or, with an "
             "empty cache, compiling) the numba kernels it runs, and the first solve of "
             "the process also numba's one-time setup.\n")
    L.append("| numba cache | import cdlearn | problem | first call | second call |")
    L.append("|---|---|---|---|---|")
    for label, data in cold.items():
        if "error" in data:
            L.append(f"| {label} | error: {data['error']} | | | |")
            continue
        for key, val in data.items():
            if isinstance(val, list) and key != "import + first fit, each run":
                L.append(f"| {label} | {_fmt(data['import'])} | {key} | {_fmt(val[0])} | "
                         f"{_fmt(val[1])} |")
    L.append("")
    return L


# =========================================================================== reports


def machine_info() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        # GNU nproc honours OMP_NUM_THREADS, which this module pins to 1
        env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS",
                                                                "OMP_THREAD_LIMIT")}
        nproc = subprocess.run(["nproc"], capture_output=True, text=True,
                               env=env).stdout.strip()
    except OSError:
        nproc = str(os.cpu_count())
    try:
        load = os.getloadavg()
    except OSError:
        load = (math.nan,) * 3
    return dict(date=datetime.datetime.now().isoformat(timespec="seconds"), cpu=cpu,
                nproc=nproc, python=platform.python_version(),
                loadavg_at_start=", ".join(f"{x:.2f}" for x in load))


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("cdlearn", "numpy", "scipy", "numba", "scikit-learn", "skglm", "celer",
                 "liblinear-official", "snapml"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def summary_rows(results: list[CaseResult]):
    rows = []
    for cr in results:
        recs = {r.solver: r for r in cr.records}
        auto = recs.get("cdlearn-auto")
        row = dict(case=cr.case.name)
        for k, target in enumerate(TARGETS):
            peers = [(r.time_to(cr.p_star, target)[0], r.solver) for r in cr.records
                     if r.kind == "peer"]
            peers = [(t, s) for t, s in peers if math.isfinite(t)]
            cds = [(r.time_to(cr.p_star, target)[0], r.solver) for r in cr.records
                   if r.kind == "cdlearn"]
            cds = [(t, s) for t, s in cds if math.isfinite(t)]
            t_auto = auto.time_to(cr.p_star, target)[0] if auto else math.nan
            bp = min(peers) if peers else (math.nan, "—")
            bc = min(cds) if cds else (math.nan, "—")
            row[f"auto{k}"] = t_auto
            row[f"peer{k}"] = bp
            row[f"cd{k}"] = bc
            row[f"ratio{k}"] = t_auto / bp[0] if bp[0] and math.isfinite(bp[0]) else math.nan
        row["resolved"] = auto.resolved if auto else ""
        rows.append(row)
    return rows


def write_csv(results, path: Path):
    import csv

    with open(path, "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["case", "n_samples", "n_features", "nnz", "lam", "p_star", "p_star_source",
                     "solver", "kind", "version", "resolved_solver", "budget_kind",
                     "seconds_to_1e-3", "runs_1e-3", "budget_or_epochs_1e-3",
                     "seconds_to_1e-6", "runs_1e-6", "budget_or_epochs_1e-6",
                     "best_rel_subopt", "note"])
        for cr in results:
            for r in cr.records:
                out = []
                for target in TARGETS:
                    t, k, b = r.time_to(cr.p_star, target)
                    out += [f"{t:.6g}", k, "" if b is None else f"{b:g}"]
                best = (r.best_primal() - cr.p_star) / abs(cr.p_star)
                wr.writerow([cr.case.name, *cr.shape, cr.nnz, f"{cr.lam:.8g}",
                             f"{cr.p_star:.16g}", cr.p_star_source, r.solver, r.kind, r.version,
                             r.resolved, r.budget_kind, *out, f"{best:.3g}", r.note])


def write_markdown(results, path: Path, info: dict, cold: dict, args):
    L = []
    mode = "quick" if args.quick else ("selected cases" if args.cases else "full")
    L.append("# cdlearn benchmarks: time to a relative suboptimality\n")
    L.append(f"Run: `python -m benchmarks.run {' '.join(sys.argv[1:])}` ({mode}), "
             f"{args.repeats} repeats, per-run cap {args.max_seconds:g} s.\n")
    L.append(f"Machine: {info['cpu']}, nproc = {info['nproc']}, Python {info['python']}, "
             f"date {info['date']}, load average at start {info['loadavg_at_start']} "
             "(the machine is shared: timings are noisy).\n")
    L.append("Versions: " + ", ".join(f"{k} {v}" for k, v in _versions().items()) + ".\n")
    L.append(
        "Metric: CPU seconds (`time.process_time`: the machine is shared, and wall time "
        "would also count other processes) until `(P(w) − P*)/P* ≤ 1e-3` and `≤ 1e-6`, "
        "median over the repeats, single thread, data already in each solver's preferred layout. P* is the lowest "
        "objective any solver reached (tight reference runs, cached in `pstar.json`). "
        "cdlearn is timed from the `solve` call to the epoch check (duality gap included) "
        "that first reaches the target; peers by growing budgets, each run from scratch. "
        "`—`: not reached within the cap. Ratio = cdlearn auto / best peer (< 1: cdlearn "
        "faster). Method details: `benchmarks/run.py` docstring.\n")

    L.append("## Summary\n")
    L.append("| case | auto runs | cdlearn auto 1e-3 | best peer 1e-3 | ratio 1e-3 | "
             "cdlearn auto 1e-6 | best peer 1e-6 | ratio 1e-6 | best cdlearn variant 1e-6 |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for row in summary_rows(results):
        L.append(
            f"| {row['case']} | {row['resolved']} | {_fmt(row['auto0'])} | "
            f"{_fmt(row['peer0'][0])} ({row['peer0'][1]}) | {_ratio(row['ratio0'])} | "
            f"{_fmt(row['auto1'])} | {_fmt(row['peer1'][0])} ({row['peer1'][1]}) | "
            f"{_ratio(row['ratio1'])} | {_fmt(row['cd1'][0])} ({row['cd1'][1]}) |")
    L.append("")

    L.append("## Per case\n")
    for cr in results:
        n, d = cr.shape
        L.append(f"### {cr.case.name}\n")
        L.append(f"{n} × {d}, nnz = {cr.nnz}, loss = {cr.case.loss}, penalty = "
                 f"{cr.case.penalty}, λ = {cr.lam:.6g} ({cr.case.lam_rule}), "
                 f"P* = {cr.p_star:.15g} ({cr.p_star_source}). Plot: `{cr.case.name}.png`.\n")
        L.append("| solver | version | seconds to 1e-3 | seconds to 1e-6 | "
                 "epochs / budget at 1e-6 | runs at 1e-6 | note |")
        L.append("|---|---|---|---|---|---|---|")
        for r in cr.records:
            t3, _, _ = r.time_to(cr.p_star, TARGETS[0])
            t6, k6, b6 = r.time_to(cr.p_star, TARGETS[1])
            name = r.solver + (f" → {r.resolved}" if r.solver == "cdlearn-auto" else "")
            budget = "" if b6 is None else (f"{b6:g} epochs" if r.kind == "cdlearn"
                                            else f"{r.budget_kind} {b6:g}")
            L.append(f"| {name} | {r.version} | {_fmt(t3)} | {_fmt(t6)} | {budget} | {k6} | "
                     f"{r.note} |")
        L.append("")

    if cold:
        L.extend(cold_start_markdown(cold))
    path.write_text("\n".join(L) + "\n")


def _ratio(x) -> str:
    return "—" if not math.isfinite(x) else f"{x:.2f}×"


def plot_case(cr: CaseResult, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5))
    floor = 1e-16
    # cdlearn: thick solid dark lines; peers: dashed, tab10 colours
    cd_colors = iter(["black", "dimgray", "darkgoldenrod", "darkviolet", "saddlebrown"] * 2)
    peer_colors = iter(list(plt.get_cmap("tab10").colors) + list(plt.get_cmap("Set2").colors))
    for r in cr.records:
        pts = r.curve()
        if not pts:
            continue
        t = np.array([p[0] for p in pts])
        s = np.maximum((np.array([p[1] for p in pts]) - cr.p_star) / abs(cr.p_star), floor)
        if r.kind == "cdlearn":
            style = dict(lw=2.2, color=next(cd_colors))
        else:
            style = dict(lw=1.2, ls="--", marker=".", color=next(peer_colors))
        label = r.solver + (f" ({r.resolved})" if r.solver == "cdlearn-auto" else "")
        ax.plot(t, s, label=label, **style)
    for target in TARGETS:
        ax.axhline(target, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time (seconds, single thread)")
    ax.set_ylabel("relative suboptimality (P(w) − P*) / P*")
    n, d = cr.shape
    ax.set_title(f"{cr.case.name}: {n}×{d}, nnz={cr.nnz}, λ={cr.lam:.3g}", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save_raw(results, out: Path):
    raw = out / "raw"
    raw.mkdir(exist_ok=True)
    for cr in results:
        data = dict(case=cr.case.name, p_star=cr.p_star, records=[
            dict(solver=r.solver, kind=r.kind, runs=r.runs, sweep=r.sweep, retimes=r.retimes,
                 note=r.note, resolved=r.resolved) for r in cr.records])
        (raw / f"{cr.case.name}.json").write_text(json.dumps(data))


# =========================================================================== epoch cost


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = clock()
        fn()
        times.append(clock() - t)
    return float(np.median(times))


def _liblinear_iterations(obj, X, y, s, eps):
    """Rerun liblinear at ``eps`` with its log captured; return the parsed iteration counts."""
    from liblinear.liblinear import PRINT_STRING_FUN
    from liblinear.liblinearutil import parameter, problem, train

    lines = []
    cb = PRINT_STRING_FUN(lambda msg: lines.append(msg.decode(errors="replace")))
    prob = problem(np.asarray(y, dtype=np.float64), X.tocsr())
    param = parameter(f"-s {s} -c {P.C_from_lam(obj.lam, X.shape[0])!r} -e {eps!r} -B -1")
    param.print_func = cb
    train(prob, param)
    text = "".join(lines)
    if s == 0:
        newton = text.count("iter ")
        cg = sum(int(tok) for tok in _after(text, "CG"))
        # a CG step is one Hessian-vector product (X v, then Xᵀ(D X v)): 2 passes;
        # a Newton step adds the function and gradient (about 2 passes)
        return f"{newton} Newton its, {cg} CG its (≈ {2 * cg + 2 * newton} passes)"
    its = _after(text, "#iter =")
    out = f"{its[-1] if its else '?'} outer its (≤ 1 pass each, shrinking)"
    if "Switching" in text:  # liblinear's dual solvers fall back to -s 0 at their limit
        out += "; hit its iteration limit and switched to -s 0"
    return out


def _after(text, key):
    out = []
    for part in text.split(key)[1:]:
        tok = part.strip().split()[0] if part.strip() else ""
        tok = tok.strip(",")
        if tok.isdigit():
            out.append(tok)
    return out


def epoch_cost(args, log):
    from cdlearn.api import make_problem
    from cdlearn.solvers.primal_cd import PrimalCDState

    from .cases import _load_binary

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    L = ["# Epoch cost of primal CD and L2-logistic time to 1e-6\n",
         f"Machine: {info['cpu']}, nproc = {info['nproc']}, date {info['date']}, load average "
         f"{info['loadavg_at_start']} (shared machine, noisy). Times are CPU time of the "
         "process (`time.process_time`), which other processes' load affects less than the "
         "wall clock.\n"]

    X, y = _load_binary("news20")
    Xc = X.tocsc()
    Xc.sort_indices()
    n, d = Xc.shape
    rng = np.random.default_rng(0)
    r = rng.standard_normal(n)
    w = rng.standard_normal(d)
    reps = max(args.repeats, 5)
    t_rmatvec = _median_time(lambda: Xc.T @ r, 4 * reps)
    t_matvec = _median_time(lambda: Xc @ w, 4 * reps)
    log(f"news20 CSC {n} x {d}, nnz={Xc.nnz}: X.T @ r {t_rmatvec * 1e3:.2f} ms, "
        f"X @ w {t_matvec * 1e3:.2f} ms")
    L.append(f"## One epoch of primal CD on news20 (CSC, {n} × {d}, nnz = {Xc.nnz})\n")
    L.append(f"Reference: one `X.T @ r` with scipy on the same CSC matrix = "
             f"{t_rmatvec * 1e3:.2f} ms (`X @ w`: {t_matvec * 1e3:.2f} ms). An epoch = "
             f"{d} coordinate steps; importance sampling visits heavy columns more often, so "
             "its epoch touches more than nnz entries: the last column divides by that. "
             "Target: epoch ≤ 3 × `X.T @ r`. A logistic step changes the margins of every "
             "sample it touches, so the next step needs σ(−y z) anew: one `exp` per entry, "
             "which alone costs about 4 × an `X.T @ r` entry here (5 ns per `exp` in a plain "
             "loop); 3× is out of reach for that loss without a cheaper `exp`. Entries / "
             "nnz > 1 for the logistic loss: exact line-search evaluations (early epochs), "
             "when the cheap upper bound does not accept the Newton step.\n")
    L.append("| loss | sampling | epoch | entries / nnz | epoch / (X.T @ r) | "
             "per nnz-pass / (X.T @ r) |")
    L.append("|---|---|---|---|---|---|")
    log(f"{'loss':10s} {'sampling':11s} {'epoch':>10s} {'entries/nnz':>12s} {'ratio':>7s} "
        f"{'per-pass':>9s}")
    for loss in ("logistic", "squared"):
        problem = make_problem(Xc, y, loss=loss, penalty="l2", lam=1.0 / n)
        _ = problem.design.csc
        for sampling in ("cyclic", "shuffle", "uniform", "importance"):
            state = PrimalCDState(problem, sampling=sampling, seed=0)
            state.run_epoch()  # warm-up (compile / cache load)
            entries = []

            def one(state=state, entries=entries):
                entries.append(state.run_epoch()[0])

            t_epoch = _median_time(one, reps)
            ent = float(np.median(entries)) / max(problem.design.nnz, 1)
            ratio = t_epoch / t_rmatvec
            L.append(f"| {loss} | {sampling} | {t_epoch * 1e3:.2f} ms | {ent:.2f} | "
                     f"{ratio:.2f}× | {ratio / ent:.2f}× |")
            log(f"{loss:10s} {sampling:11s} {t_epoch * 1e3:8.2f} ms {ent:12.2f} {ratio:6.2f}x "
                f"{ratio / ent:8.2f}x")
    L.append("")

    # ---- the same for dual CD (row steps on CSR) against one CSR X @ w
    from cdlearn.solvers.dual_cd import DualCDState

    Xr = X.tocsr()
    Xr.sort_indices()
    t_rowmv = _median_time(lambda: Xr @ w, 4 * reps)
    L.append(f"## For comparison: one epoch of dual CD on news20 (CSR, {n} row steps)\n")
    L.append(f"Reference: one `X @ w` with scipy on the CSR matrix = {t_rowmv * 1e3:.2f} ms. "
             "A dual step reads its row (margin) and writes it back (w update), like the "
             "primal step on a column. `fixed` = face-off §7's fixed step (no 1-D Newton "
             "solve), which isolates the cost of the exact logistic step.\n")
    L.append("| loss | step | sampling | epoch | entries / nnz | epoch / (X @ w) | "
             "per nnz-pass / (X @ w) |")
    L.append("|---|---|---|---|---|---|---|")
    for loss, step in (("logistic", "exact"), ("logistic", "fixed"), ("squared", "exact")):
        problem = make_problem(Xr, y, loss=loss, penalty="l2", lam=1.0 / n)
        _ = problem.design.csr
        for sampling in ("cyclic", "uniform", "importance"):
            state = DualCDState(problem, sampling=sampling, seed=0, dual_step=step)
            state.run_epoch()
            entries = []

            def one(state=state, entries=entries):
                entries.append(state.run_epoch()[0])

            t_epoch = _median_time(one, reps)
            ent = float(np.median(entries)) / max(problem.design.nnz, 1)
            ratio = t_epoch / t_rowmv
            L.append(f"| {loss} | {step} | {sampling} | {t_epoch * 1e3:.2f} ms | {ent:.2f} | "
                     f"{ratio:.2f}× | {ratio / ent:.2f}× |")
            log(f"dual {loss:9s} {step:6s} {sampling:11s} {t_epoch * 1e3:8.2f} ms {ent:8.2f} "
                f"{ratio:6.2f}x {ratio / ent:8.2f}x")
    L.append("")

    # ---- L2 logistic, λ = 1/n: time to 1e-6
    pstar_table = load_pstar(out)
    filt = ["cdlearn-primal-cd-importance", "cdlearn-dual-cd-importance", "liblinear-s0",
            "liblinear-s7", "cdlearn-primal-cd", "cdlearn-dual-cd", "cdlearn-newton-cd",
            "cdlearn-auto"]
    labels = {"cdlearn-primal-cd-importance": "cdlearn primal-cd (importance)",
              "cdlearn-dual-cd-importance": "cdlearn dual-cd (importance)",
              "liblinear-s0": "liblinear -s 0", "liblinear-s7": "liblinear -s 7",
              "cdlearn-primal-cd": "primal-cd (uniform)", "cdlearn-dual-cd": "dual-cd (default: shuffle)",
              "cdlearn-newton-cd": "newton-cd", "cdlearn-auto": "auto"}
    results = []
    for name in EPOCH_COST_CASES:
        cr = bench_case(CASES[name], repeats=args.repeats, cap=args.max_seconds,
                        pstar_table=pstar_table, solvers_filter=filt, log=log, exact=True)
        results.append(cr)
    save_pstar(out, pstar_table)
    L.append("## L2-regularised logistic regression, λ = 1/n: seconds to relative "
             "suboptimality 1e-6\n")
    L.append("Median of the repeats; cdlearn with importance sampling (the issue's setting), "
             "with the default sampling (uniform for primal, shuffle for dual CD), newton-cd (proximal Newton with CD on the "
             "quadratic model) and `solver=\"auto\"`; duality-gap "
             "checks included (spaced by work counts, solvers/base.py). Epochs: cdlearn epochs "
             "to the target (one epoch = n or d coordinate steps; for newton-cd one outer "
             "Newton iteration). liblinear iterations from its own "
             "log at the tolerance that reaches the target. The ratio takes the best of the "
             "cdlearn runs.\n")
    head = ["dataset", "n × d"]
    for name in filt:
        head += [labels[name], "epochs" if name.startswith("cdlearn") else
                 f"-s {name[-1]} work"]
    head.append("best cdlearn / best liblinear")
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "---|" * len(head))
    table_lines = []
    for cr in results:
        rec = {r.solver: r for r in cr.records}
        X, y, obj, _ = cr.case.load()
        cells = [cr.case.dataset, f"{cr.shape[0]} × {cr.shape[1]}"]
        best_cd, best_ll = math.inf, math.inf
        for name in filt:
            r = rec.get(name)
            if r is None:
                cells += ["n/a", ""]
                continue
            t, _, b = r.time_to(cr.p_star, TARGETS[1])
            cells.append(_fmt(t))
            if name.startswith("cdlearn"):
                best_cd = min(best_cd, t) if math.isfinite(t) else best_cd
                cells.append("" if b is None else f"{b:g}")
            else:
                best_ll = min(best_ll, t) if math.isfinite(t) else best_ll
                try:
                    cells.append("" if b is None else
                                 _liblinear_iterations(obj, X, y, int(name[-1]), b))
                except Exception as exc:  # the log parsing is informative only
                    cells.append(f"? ({exc})")
        ratio = best_cd / best_ll if math.isfinite(best_cd) and math.isfinite(best_ll) else math.nan
        cells.append(_ratio(ratio))
        table_lines.append("| " + " | ".join(cells) + " |")
    L += table_lines
    L.append("")
    text = "\n".join(L) + "\n"
    (out / "epoch_cost.md").write_text(text)
    print()
    print(text)


# =========================================================================== main


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a few-minute subset: " + ", ".join(QUICK))
    ap.add_argument("--cases", nargs="+", metavar="CASE", help="case names (see --list)")
    ap.add_argument("--solvers", nargs="+", metavar="SUBSTR",
                    help="only solvers whose name contains one of these")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per figure (median)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="cap for one run of one solver (default 60, --quick 10, "
                         "--epoch-cost 30)")
    ap.add_argument("--out", default=str(RESULTS), help="output directory")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--no-cold-start", action="store_true",
                    help="skip the fresh-process compile-time measurement")
    ap.add_argument("--cold-start-only", action="store_true",
                    help="only measure the cold start (fresh processes, warm and empty numba "
                         "cache; issue #8's import + first fit) and print its report section")
    ap.add_argument("--refresh-pstar", action="store_true", help="recompute the cached P*")
    ap.add_argument("--epoch-cost", action="store_true", help="run the epoch-cost micro-benchmark")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args(argv)
    if args.max_seconds is None:
        args.max_seconds = 10.0 if args.quick else (30.0 if args.epoch_cost else 60.0)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    _suppress()
    if args.list:
        for name, c in CASES.items():
            tag = " (quick)" if name in QUICK else ""
            print(f"{name:26s} {c.dataset:10s} {c.loss:14s} {c.penalty:4s} {c.lam_rule}{tag}")
        return 0

    def log(msg):
        print(msg, flush=True)

    if args.epoch_cost:
        epoch_cost(args, log)
        return 0
    if args.cold_start_only:
        print("\n".join(cold_start_markdown(measure_cold_start(log))))
        return 0

    names = args.cases or (QUICK if args.quick else FULL)
    unknown = [c for c in names if c not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    log(f"cdlearn benchmarks: {len(names)} case(s), {args.repeats} repeats, cap "
        f"{args.max_seconds:g} s; {info['cpu']}, nproc={info['nproc']}, "
        f"load {info['loadavg_at_start']}")
    cold = {} if args.no_cold_start else measure_cold_start(log)
    pstar_table = {} if args.refresh_pstar else load_pstar(out)
    results = []
    for name in names:
        cr = bench_case(CASES[name], repeats=args.repeats, cap=args.max_seconds,
                        pstar_table=pstar_table, solvers_filter=args.solvers, log=log)
        results.append(cr)
        save_pstar(out, pstar_table)
        # write after every case so an interrupted run keeps what it measured
        write_csv(results, out / "results.csv")
        write_markdown(results, out / "results.md", info, cold, args)
        save_raw(results, out)
        if not args.no_plots:
            plot_case(cr, out / f"{cr.case.name}.png")
    log(f"\nwrote {out / 'results.md'}, {out / 'results.csv'} and the plots")
    print()
    print((out / "results.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
