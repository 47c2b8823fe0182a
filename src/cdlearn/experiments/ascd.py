"""Reproductions of Stich, Raj & Jaggi, *Approximate Steepest Coordinate Descent* (ICML 2017).

* ``ascd-fig1`` -- competitive ratio ρ_t (27) of ASCD's active set against the
  limit (28) of Theorem 6.1 and its lower bound ``1 − (n−s)/T∞``, simulated
  with n = 100, s = 10, c = 1, T∞ ∈ {50, 100, 400}, I_0 = [s] (§6).
* ``ascd-fig2`` -- synthetic ridge (30) and lasso (31) (Appendix E generator,
  :func:`cdlearn.datasets.greedy.make_sparse_least_squares`): UCD, SCD, ASCD,
  a-ASCD with active-set sizes; both initialisations; the g2 oracle at several ε.
* ``ascd-fig3`` -- the paper's RCV1 panels on the real bag-of-words data we
  have (reuters-money-fx, news20; values set to 1), oracle g4, fixed step and
  exact line search, column subsets.
* ``ascd-fig4`` -- steepest CD on the function of Theorem 2.2 (App. A.2,
  Figure 4), n = 20, x0 = 1: SCD is no faster than UCD there.

Conventions. The paper minimises ``½‖Ax − b‖² + λ g(x)``; cdlearn minimises
``1/(2m)‖Xw − y‖² + λ' g(w)`` with ``X = A``, ``λ' = λ/m``: the iterates are the
same. We report λ' as a fraction of ``λ'_max = ‖Xᵀy‖∞/m`` (lasso). "Epochs" on
the x-axes are coordinate updates divided by the number of coordinates (the
paper's axis); the CSVs also hold cdlearn's ``passes`` (matrix entries touched
/ nnz), which charge the simulated g2 oracle and SCD for the d Gram entries
they read per step.
"""

from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import report
from . import register
from .verdict import write_verdict

ASCD_PAPER = "Stich, Raj & Jaggi, Approximate Steepest Coordinate Descent (ICML 2017)"
TARGET = 1e-6
COLORS = {"UCD": "tab:gray", "SCD": "tab:red", "ASCD": "tab:blue", "a-ASCD": "tab:green"}


# --------------------------------------------------------------------------- helpers
def _write_csv(path: Path, head, rows) -> Path:
    with open(path, "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(head)
        for r in rows:
            wr.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v
                         for v in r])
    return path


def bound_28(n: int, s: int, c: float, t_inf: float) -> float:
    """ρ∞ of Theorem 6.1, (28) = (66): ``2cs / (cs + n − s − T∞ + √θ)``."""
    theta = (n * n + (c - 1) ** 2 * s * s + 2 * n * ((c - 1) * s - t_inf)
             + 2 * (1 + c) * s * t_inf + t_inf * t_inf)
    return 2 * c * s / (c * s + n - s - t_inf + math.sqrt(theta))


def simulate_competitive_ratio(n=100, s=10, t_inf=100.0, iters=2000, runs=200, seed=0):
    """Mean ρ_t over ``runs`` simulations of the active-set dynamics of Theorem 6.1.

    The model of the proof (App. C), with c = 1: the s "true" coordinates are
    always in I_t; I_t ∩ {s+1..n} starts empty (I_0 = [s]). Each iteration picks
    one member of I_t uniformly; a picked coordinate outside [s] leaves the
    active set (its exact step zeroes its gradient estimate); every coordinate
    outside [s] and outside I_t re-enters with probability 1/T∞ per iteration,
    so it stays out T∞ iterations on average (the T∞ of the theorem).
    """
    rng = np.random.default_rng(seed)
    out = np.zeros((runs, n - s), dtype=bool)  # membership of the coordinates > s
    rho = np.empty(iters)
    p_enter = 1.0 / t_inf
    for t in range(iters):
        a = out.sum(axis=1)
        rho[t] = float(np.mean(s / (s + a)))
        # pick: an outside member with probability a/(a+s) leaves the set
        leave = rng.random(runs) < a / (a + s)
        for r in np.flatnonzero(leave):
            members = np.flatnonzero(out[r])
            out[r, members[rng.integers(members.size)]] = False
        out |= (~out) & (rng.random(out.shape) < p_enter)
    return rho


def _time_to(trace_x, sub, target=TARGET):
    hit = np.flatnonzero(sub <= target)
    return float(trace_x[hit[0]]) if hit.size else None


STOP_AT = 1e-8  # runs stop once (F − F_ref)/F_ref ≤ STOP_AT: the curves go past 1e-6


def _run(X, y, penalty, lam, solver, opts, max_epochs, tol=1e-10, f_ref=None):
    import cdlearn

    def stop(state):
        return (state.primal - f_ref) / abs(f_ref) <= STOP_AT

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # runs capped by max_epochs are expected
        return cdlearn.solve(X, y, loss="squared", penalty=penalty, lam=lam, solver=solver,
                             tol=tol, max_epochs=max_epochs, check_every=1,
                             callback=None if f_ref is None else stop, **opts)


CHECKS_NOTE = ("F is evaluated every n/10 coordinate updates during the first 20 epochs, "
               "then every epoch; runs stop once (F − F*)/F* ≤ 1e-8. Column '|I_t|': the "
               "mean active-set size over the first / largest / last such interval.")


class Run:
    """A traced run: ``trace[col]`` arrays (epoch, passes, primal, active), final primal, seconds."""

    def __init__(self, rows, seconds):
        cols = ("epoch", "passes", "primal", "active")
        arr = np.array(rows, dtype=np.float64)
        self.trace = {c: arr[:, k] for k, c in enumerate(cols)}
        self.primal = float(arr[:, 2].min())
        self.seconds = seconds


def _drive(X, y, penalty, lam, solver, opts, max_epochs, f_ref, fine_epochs=20, per_epoch=10):
    """Run SCD / ASCD / UCD (``solver="ascd", selection="uniform"``) with a fine trace.

    The solver state (:class:`~cdlearn.solvers.greedy_cd.GreedyCDState`, what
    ``cdlearn.solve(solver="scd"|"ascd")`` runs) is stepped ``n / per_epoch``
    coordinate updates at a time during the first ``fine_epochs`` epochs, then
    an epoch at a time; after each chunk the primal value is computed. Stops at
    ``(F − f_ref)/f_ref ≤ STOP_AT`` or after ``max_epochs`` epochs. The trace's
    ``active`` is the mean |I_t| over the chunk (n for SCD and UCD).
    """
    import time

    from ..api import make_problem
    from ..solvers.greedy_cd import GreedyCDState

    problem = make_problem(X, y, loss="squared", penalty=penalty, lam=lam)
    state = GreedyCDState(problem, method=solver, seed=0, **opts)
    state.max_entries = np.iinfo(np.int64).max  # the chunks below are counted in updates
    d, nnz = X.shape[1], max(X.nnz, 1)
    primal = state.certificate()[0]
    rows = [(0.0, 0.0, primal, state.active())]
    updates, passes, t0 = 0, 0.0, time.perf_counter()
    while updates < max_epochs * d:
        chunk = max(1, d // per_epoch) if updates < fine_epochs * d else d
        state.updates_per_epoch = chunk
        entries, _ = state.run_epoch()
        updates += state.last_steps
        passes += entries / nnz
        primal = state.certificate()[0]
        rows.append((updates / d, passes, primal, state.active()))
        if (primal - f_ref) / abs(f_ref) <= STOP_AT:
            break
    return Run(rows, time.perf_counter() - t0)


def _support(X, y, lam) -> int:
    """Number of nonzeros of the lasso solution (primal CD to a 1e-14 gap)."""
    res = _run(X, y, "l1", lam, "primal-cd", {}, 20000, tol=1e-14)
    return int(np.count_nonzero(res.w))


def _reference(X, y, penalty, lam, max_epochs=20000):
    """P* from primal CD run to a 1e-14 gap (then the minimum over all runs is taken)."""
    res = _run(X, y, penalty, lam, "primal-cd", {}, max_epochs, tol=1e-14)
    return res.primal


def _panel(ax, ax_act, runs, f_star, title, d):
    """Suboptimality (top) and |I_t| (bottom) against epochs for ``runs`` {label: result}.

    The x-range ends at 4x the longest run of the greedy methods, so that their
    curves are not squashed against the axis by a UCD run 20x longer; every
    legend entry says when that method reached 1e-6 (so a UCD curve leaving the
    panel on the right is still read off).
    """
    extra = iter(("tab:orange", "tab:purple", "tab:brown", "tab:cyan", "tab:olive", "tab:pink"))
    greedy_end = [float(r.trace["epoch"][-1]) for lb, r in runs.items()
                  if not lb.startswith("UCD")]
    all_end = max(float(r.trace["epoch"][-1]) for r in runs.values())
    right = min(all_end, 4 * max(greedy_end)) if greedy_end else all_end
    for label, res in runs.items():
        ep = res.trace["epoch"]
        sub = (res.trace["primal"] - f_star) / abs(f_star)
        keep = sub > 1e-16
        color = COLORS[label] if label in COLORS else next(extra)
        style = "--" if "∞" in label else "-"
        hit = _time_to(ep, sub)
        when = "not at 1e-6" if hit is None else f"1e-6 at {hit:.{1 if hit < 10 else 0}f} ep."
        full_label = f"{label}: {when}"
        ax.plot(ep[keep], sub[keep], style, color=color, label=full_label, lw=1.5)
        ax_act.plot(ep[1:], res.trace["active"][1:], style, color=color, label=label, lw=1.2)
    ax.axhline(TARGET, color="k", lw=0.5, ls=":")
    report.label_axes(ax, title=title, xlabel="epochs (coordinate updates / n)",
                      ylabel="relative suboptimality (F − F*)/F*", ylog=True, legend="upper right")
    ax.set_xlim(0, right)
    ax_act.set_ylim(0.8, d * 1.3)
    ax_act.set_xlim(0, right)
    report.label_axes(ax_act, xlabel="epochs (coordinate updates / n)",
                      ylabel="active set |I_t| (mean between checks)", ylog=True)


def _summaries(panel, runs, f_star, d):
    rows = []
    for label, res in runs.items():
        sub = (res.trace["primal"] - f_star) / abs(f_star)
        ep, ps, act = res.trace["epoch"], res.trace["passes"], res.trace["active"]
        rows.append(dict(panel=panel, method=label, n=d,
                         epochs_to_1e6=_time_to(ep, sub), passes_to_1e6=_time_to(ps, sub),
                         final_subopt=float(max(sub[-1], 0.0)), epochs_run=float(ep[-1]),
                         active_first=int(act[1]) if len(act) > 1 else int(act[0]),
                         active_max=int(act[1:].max()) if len(act) > 1 else int(act[0]),
                         active_last=int(act[-1]), seconds=float(res.seconds)))
    return rows


SUMMARY_HEAD = ("panel", "method", "n", "epochs_to_1e6", "passes_to_1e6", "final_subopt",
                "epochs_run", "active_first", "active_max", "active_last", "seconds")


def _traces_csv(path, panels):
    rows = []
    for panel, (runs, f_star) in panels.items():
        for label, res in runs.items():
            t = res.trace
            sub = (t["primal"] - f_star) / abs(f_star)
            for k in range(len(t["epoch"])):
                rows.append((panel, label, float(t["epoch"][k]), float(t["passes"][k]),
                             float(t["primal"][k]), float(sub[k]), int(t["active"][k])))
    _write_csv(path, ("panel", "method", "epoch", "passes", "primal", "rel_subopt", "active"),
               rows)


def _fmt(v, spec=".1f"):
    return "not reached" if v is None else format(v, spec)


def _table(rows):
    lines = ["| panel | method | epochs to 1e-6 | passes to 1e-6 | final (F−F*)/F* | "
             "\\|I_t\\| first / max / last | s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['panel']} | {r['method']} | {_fmt(r['epochs_to_1e6'], '.1f')} | "
            f"{_fmt(r['passes_to_1e6'])} | {r['final_subopt']:.1e} | "
            f"{r['active_first']} / {r['active_max']} / {r['active_last']} | {r['seconds']:.1f} |")
    return "\n".join(lines)


def _by(rows, panel, method):
    for r in rows:
        if r["panel"] == panel and r["method"] == method:
            return r
    raise KeyError((panel, method))


def _ratio(a, b):
    if a is None or b is None:
        return None
    return a / b


# --------------------------------------------------------------------------- Figure 1
@register("ascd-fig1", title="ASCD Figure 1: competitive ratio ρ_t against the bound (28)",
          paper=ASCD_PAPER,
          description="Simulated active-set dynamics, n=100, s=10, c=1, T∞ in {50, 100, 400}.")
@report.styled
def run_fig1(out_dir: Path, full: bool) -> Path:
    """ASCD Figure 1 (see the module docstring)."""
    from ..report import write_markdown

    out_dir = Path(out_dir)
    n, s, c = 100, 10, 1.0
    iters = 2000 if full else 1000
    runs = 400 if full else 60
    t_values = (50, 100, 400)
    curves = {t: simulate_competitive_ratio(n, s, t, iters, runs, seed=k)
              for k, t in enumerate(t_values)}
    rows = [(t, it, float(curves[t][it])) for t in t_values for it in range(iters)]
    _write_csv(out_dir / "fig1_rho.csv", ("T_inf", "t", "mean_rho_t"), rows)

    fig, axes = report.panels(1, len(t_values))
    summary = []
    for ax, t in zip(axes[0], t_values, strict=True):
        rho = curves[t]
        b28 = bound_28(n, s, c, t)
        low = 1 - (n - s) / t
        # the paper's colours: ρ_t blue, (28) red, the lower bound black
        ax.plot(np.arange(iters), rho, color="tab:blue", lw=1, label="ρ_t (simulated mean)")
        ax.axhline(b28, color="tab:red", label=f"ρ∞ (28) = {b28:.3f}")
        if low > 0:  # for T∞ ≤ n − s the bound is negative: nothing to draw
            ax.axhline(low, color="k", ls="--", label=f"1 − (n−s)/T∞ = {low:.2f}")
        ax.set_ylim(0, 1.05)
        report.label_axes(ax, title=f"T∞ = {t}" + ("  (lower bound < 0)" if low <= 0 else ""),
                          xlabel="iteration t", ylabel="competitive ratio ρ_t",
                          legend="upper right")
        steady = float(rho[iters // 2:].mean())
        summary.append((t, steady, b28, low))
    report.save_figure(fig, out_dir / "fig1.png")
    _write_csv(out_dir / "fig1_summary.csv",
               ("T_inf", "steady_mean_rho", "bound_28", "lower_bound"), summary)

    lines = ["| T∞ | simulated ρ (mean over t ≥ iters/2) | (28) | 1 − (n−s)/T∞ |",
             "|---|---|---|---|"]
    lines += [f"| {t} | {m:.3f} | {b:.3f} | {lo:.2f} |" for t, m, b, lo in summary]
    ok = all(m >= lo - 1e-9 for _, m, _, lo in summary)
    close = max(abs(m - b) for _, m, b, _ in summary)
    body = (
        f"Run: {'full' if full else 'quick'} ({runs} simulations of {iters} iterations each; "
        f"n = {n}, s = {s}, c = {c:g}, I_0 = [s]).\n\n" + "\n".join(lines) + "\n\n"
        f"The simulated steady state lies within {close:.3f} of the limit (28) for every T∞ "
        f"and above the lower bound 1 − (n−s)/T∞ ({'holds' if ok else 'does NOT hold'}; "
        "the lower bound is trivial (negative) for T∞ = 50 ≤ n − s, as the paper notes). "
        "As in the paper's Figure 1, the equilibrium is reached after a few hundred "
        "iterations and ρ grows with T∞ (the longer a bad coordinate stays out of the "
        "active set, the purer the set).\n\n"
        "What is simulated: the equilibrium model of the proof of Theorem 6.1 (App. C). "
        "The s coordinates of [s] stay active (c = 1); a picked coordinate outside [s] "
        "leaves I_t; a coordinate outside I_t re-enters with probability 1/T∞ per "
        "iteration (stays out T∞ iterations on average). The paper does not say how its "
        "simulation was built; (28) is the mean-field balance (64) of this model, which is "
        "why the simulated mean (a ratio of random counts) matches it closely.\n"
    )
    write_markdown(out_dir / "note.md", "ASCD Figure 1: competitive ratio", [("Result", body)])
    agrees = ok and close <= FIG1_TOL
    write_verdict(
        out_dir, exp_id="ascd-fig1", full=full,
        claim="ρ_t reaches the limit ρ∞ of (28) quickly and stays above 1 − (n−s)/T∞ "
              "(n = 100, s = 10, T∞ ∈ {50, 100, 400})",
        ours="steady ρ − (28): " + ", ".join(f"{m - b:+.3f}" for _, m, b, _ in summary)
             + f"; lower bound {'holds' if ok else 'fails'}",
        verdict="agrees" if agrees else "partly" if ok else "no",
        reason=f"simulated steady state within {close:.3f} of (28) for every T∞"
        if agrees else f"steady state {close:.3f} from (28) (tolerance {FIG1_TOL})",
        evidence="note.md#result")
    return out_dir


#: largest |simulated steady ρ − (28)| that counts as agreement (the simulated mean of
#: a ratio of random counts fluctuates by about 0.01 over 60 runs)
FIG1_TOL = 0.05


# --------------------------------------------------------------------------- Figure 2
FIG2_EPS = 1e-3


def _fig2_methods(eps, step):
    g2 = dict(oracle="projection", eps=eps, step=step)
    return {
        "UCD": ("ascd", dict(selection="uniform", step=step)),
        "SCD": ("scd", dict(step=step)),
        "ASCD": ("ascd", dict(g2)),
        "a-ASCD": ("ascd", dict(g2, selection="a")),
    }


@register("ascd-fig2",
          title="ASCD Figure 2: UCD, SCD, ASCD, a-ASCD on synthetic ridge and lasso",
          paper=ASCD_PAPER,
          description="App. E generator, ridge n=1000 / lasso n=5000, d=1000; g2 oracle.")
@report.styled
def run_fig2(out_dir: Path, full: bool) -> Path:
    """ASCD Figure 2 (see the module docstring)."""
    from ..datasets.greedy import make_sparse_least_squares
    from ..report import write_markdown

    out_dir = Path(out_dir)
    m = 1000 if full else 200
    n_ridge = 1000 if full else 200
    n_lasso = 5000 if full else 1000
    lam_ridge = 0.1 if full else 0.3  # cdlearn λ' (paper λ = m λ')
    lasso_frac = 0.02
    cap_ridge = 1500 if full else 1500
    cap_lasso = 200 if full else 200
    eps_grid = (0.0, 1e-4, 1e-3, 1e-2, 1e-1) if full else (0.0, 1e-3, 1e-1)

    Xr, yr, _ = make_sparse_least_squares(m, n_ridge, seed=0)
    Xl, yl, _ = make_sparse_least_squares(m, n_lasso, seed=1)
    lam_lasso = lasso_frac * float(np.max(np.abs(Xl.T @ yl))) / m
    problems = {"ridge": (Xr, yr, "l2", lam_ridge, cap_ridge),
                "lasso": (Xl, yl, "l1", lam_lasso, cap_lasso)}
    f_ref = {k: _reference(X, y, pen, lam) for k, (X, y, pen, lam, _) in problems.items()}
    support = _support(Xl, yl, lam_lasso)

    panels = {}
    # (a) ridge, (b) lasso: the four methods, exact coordinate steps 1/L_j
    for key, name in (("a", "ridge"), ("b", "lasso")):
        X, y, pen, lam, cap = problems[name]
        panels[key] = (name, {label: _drive(X, y, pen, lam, sv, o, cap, f_ref[name])
                              for label, (sv, o) in _fig2_methods(FIG2_EPS, "lipschitz").items()})
    # (c) lasso: ASCD with the true gradient vs r0 = ∞
    X, y, pen, lam, cap = problems["lasso"]
    base = dict(oracle="projection", eps=FIG2_EPS)
    panels["c"] = ("lasso", {
        "UCD": panels["b"][1]["UCD"],
        "ASCD (init ∇f)": panels["b"][1]["ASCD"],
        "ASCD (init r=∞)": _drive(X, y, pen, lam, "ascd", dict(base, init="infinite"), cap,
                                f_ref["lasso"]),
        "a-ASCD (init r=∞)": _drive(X, y, pen, lam, "ascd",
                                  dict(base, selection="a", init="infinite"), cap,
                                  f_ref["lasso"]),
    })
    # (d) ridge: the g2 oracle at several accuracies ε
    X, y, pen, lam, cap = problems["ridge"]
    runs_d = {"UCD": panels["a"][1]["UCD"], "SCD": panels["a"][1]["SCD"]}
    for e in eps_grid:
        runs_d[f"ASCD ε={e:g}"] = (panels["a"][1]["ASCD"] if e == FIG2_EPS else
                                  _drive(X, y, pen, lam, "ascd",
                                       dict(oracle="projection", eps=e), cap,
                                       f_ref["ridge"]))
    panels["d"] = ("ridge", runs_d)
    # (e) lasso with the paper's fixed step 1/max_j L_j
    X, y, pen, lam, cap = problems["lasso"]
    panels["e"] = ("lasso", {label: _drive(X, y, pen, lam, sv, o, 3000 if full else 1500,
                                         f_ref["lasso"])
                             for label, (sv, o) in _fig2_methods(FIG2_EPS, "fixed").items()})

    # F* = the lowest value seen anywhere (the reference run is tight to 1e-14)
    for name in problems:
        lows = [r.primal for (pn, runs) in panels.values() if pn == name for r in runs.values()]
        f_ref[name] = min([f_ref[name], *lows])

    titles = {
        "a": f"(a) ridge, n={n_ridge}, d={m}\nλ'={lam_ridge:g}, g2 ε={FIG2_EPS:g}",
        "b": f"(b) lasso, n={n_lasso}, d={m}\nλ'={lasso_frac:g}·λ'max, g2 ε={FIG2_EPS:g}",
        "c": "(c) lasso: initialisation ∇f vs r0 = ∞",
        "d": "(d) ridge: g2 oracle accuracy ε",
        "e": "(e) lasso, fixed step 1/max L_j",
    }
    fig, axes = report.panels(2, 5)
    rows = []
    for col, key in enumerate("abcde"):
        name, runs = panels[key]
        d = problems[name][0].shape[1]
        _panel(axes[0][col], axes[1][col], runs, f_ref[name], titles[key], d)
        rows += _summaries(key, runs, f_ref[name], d)
    report.save_figure(fig, out_dir / "fig2.png")
    _write_csv(out_dir / "fig2_summary.csv", SUMMARY_HEAD, [[r[h] for h in SUMMARY_HEAD]
                                                            for r in rows])
    _traces_csv(out_dir / "fig2_traces.csv",
                {k: (runs, f_ref[name]) for k, (name, runs) in panels.items()})

    def sp(panel, a, b):
        r = _ratio(_by(rows, panel, a)["epochs_to_1e6"], _by(rows, panel, b)["epochs_to_1e6"])
        return "n/a (one did not reach 1e-6)" if r is None else f"{r:.2f}"

    body = (
        f"Run: {'full (paper sizes)' if full else 'quick (reduced sizes)'}: d = {m} samples; "
        f"ridge n = {n_ridge} coordinates, λ' = {lam_ridge:g} (paper λ = {m * lam_ridge:g}); "
        f"lasso n = {n_lasso}, λ' = {lasso_frac:g}·λ'_max = {lam_lasso:.4g}. The paper does not "
        "state its λ values. Data: Appendix E (entries N(0,1) + 1, column j scaled by "
        "10·N(0,1), density 10 log(n)/n); b = A x♮ + noise with a planted sparse x♮ (our "
        "choice, App. E does not say). " + CHECKS_NOTE + "\n\n"
        + _table(rows) + "\n\n"
        "**Claims.**\n\n"
        f"- ASCD needs fewer epochs than UCD to reach 1e-6: ridge ASCD/UCD = {sp('a', 'ASCD', 'UCD')}, "
        f"lasso {sp('b', 'ASCD', 'UCD')} (SCD/UCD: {sp('a', 'SCD', 'UCD')}, "
        f"{sp('b', 'SCD', 'UCD')}). With the fixed step (e): ASCD/UCD = {sp('e', 'ASCD', 'UCD')}.\n"
        f"- The active set shrinks: mean |I_t| at the end = {_by(rows, 'a', 'ASCD')['active_last']}"
        f" of {n_ridge} (ridge, dense solution), {_by(rows, 'b', 'ASCD')['active_last']} of "
        f"{n_lasso} (lasso, whose solution has {support} nonzeros); a-ASCD's set is smaller "
        f"({_by(rows, 'a', 'a-ASCD')['active_last']}, {_by(rows, 'b', 'a-ASCD')['active_last']})."
        " The paper reports ASCD's set 'typically being larger than the active set of "
        "a-ASCD' (Figs. 2a, 2b, 3a, 3b): the same ordering holds here.\n"
        f"- a-ASCD behaves like ASCD: a-ASCD/ASCD epochs = {sp('a', 'a-ASCD', 'ASCD')} (ridge), "
        f"{sp('b', 'a-ASCD', 'ASCD')} (lasso), with a smaller active set, as the paper reports.\n"
        "- Initialisation (c): starting from r = ∞ costs a few epochs while the set is "
        f"learned (ASCD r=∞ / ∇f = {sp('c', 'ASCD (init r=∞)', 'ASCD (init ∇f)')}); the paper "
        "finds the set 'after just one epoch'.\n"
        "- Oracle accuracy (d): ε = 0 is SCD with ties broken uniformly; the gain over UCD "
        "fades as ε grows, since the error bounds r accumulate ε‖a_i‖‖a_j‖|γ| at every "
        "step and the set stops shrinking.\n\n"
        "**Deviations.** (1) Panels a-d use the exact coordinate step 1/L_j (exact line "
        "search for these quadratics); the paper used 'a fixed step size rule' (we read: "
        "1/max_j L_j) for Fig. 2. With the fixed step and these column scales (L_max/L_min "
        "is in the thousands) ridge converges extremely slowly (in a trial at 300 × 300, "
        "λ' = 0.3, none of UCD, SCD, ASCD reached 1e-6 within 3,000 epochs), so the fixed "
        "step is shown on the lasso only (panel e). (2) 'Passes' charge g2 and "
        "SCD with the d Gram entries they read per step, which the paper's simulated "
        "oracle does not pay: measured in passes, g2-ASCD is slower than UCD; the cheap "
        "oracle g4 is the one that wins in passes (see ascd-fig3).\n"
    )
    write_markdown(out_dir / "note.md", "ASCD Figure 2: synthetic ridge and lasso",
                   [("Result", body)])
    _speedup_verdict(out_dir, "ascd-fig2", full, rows, ("a", "b"),
                     claim="ASCD (g2) needs fewer epochs than UCD on synthetic ridge (a) and "
                           "lasso (b), close to SCD; its active set shrinks",
                     where="on the App. E generator (the paper's λ is not given)")
    return out_dir


def _speedup_verdict(out_dir, exp_id, full, rows, panels, *, claim, where):
    """Agrees when ASCD reaches 1e-6 in fewer epochs than UCD in every panel (partly: some)."""
    ratios = {}
    for key in panels:
        asc = _by(rows, key, "ASCD")["epochs_to_1e6"]
        ucd = _by(rows, key, "UCD")["epochs_to_1e6"]
        # a method that never reached 1e-6 counts as infinitely slow
        asc = math.inf if asc is None else asc
        ucd = math.inf if ucd is None else ucd
        ratios[key] = math.nan if asc == ucd == math.inf else asc / ucd
    wins = [k for k, r in ratios.items() if r < 1]
    verdict = "agrees" if len(wins) == len(panels) else "partly" if wins else "no"
    write_verdict(
        out_dir, exp_id=exp_id, full=full, claim=claim,
        ours="epochs to 1e-6, ASCD/UCD: "
             + ", ".join(f"({k}) {r:.2f}" for k, r in ratios.items()),
        verdict=verdict,
        reason=f"ASCD faster than UCD in every panel {where}" if verdict == "agrees" else
        "ASCD not faster than UCD in panel(s) "
        + ", ".join(k for k in panels if k not in wins) + f" {where}",
        evidence="note.md#result")


# --------------------------------------------------------------------------- Figure 3
def _bag_of_words(name, n_cols, seed, n_rows=None):
    """``(X, y, source)``: binary bag-of-words (values 1), random column subset, CSC."""
    from .faceoff import load_dataset

    X, y = load_dataset(name)
    X = sp.csc_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.data[:] = 1.0
    rng = np.random.default_rng(seed)
    src = f"{name} (values set to 1)"
    if n_rows is not None and X.shape[0] > n_rows:
        rows = np.sort(rng.choice(X.shape[0], size=n_rows, replace=False))
        X, y = X[rows], y[rows]
        src += f", {n_rows} random rows"
    cols = np.flatnonzero(np.diff(X.indptr) > 0)
    if n_cols is not None and n_cols < cols.size:
        cols = np.sort(rng.choice(cols, size=n_cols, replace=False))
        src += f", {n_cols} random non-empty columns (seed {seed})"
    else:
        src += f", all {cols.size} non-empty columns"
    return sp.csc_matrix(X[:, cols]), np.asarray(y, dtype=np.float64), src


def _fig3_methods(step, init, oracle="uniform"):
    o = dict(oracle=oracle, step=step, init=init)
    return {
        "UCD": ("ascd", dict(selection="uniform", step=step)),
        "SCD": ("scd", dict(step=step)),
        "ASCD": ("ascd", dict(o)),
        "a-ASCD": ("ascd", dict(o, selection="a")),
    }


LASSO_FRAC_FIG3 = 0.1


@register("ascd-fig3",
          title="ASCD Figure 3: bag-of-words lasso with the g4 oracle (RCV1 substituted)",
          paper=ASCD_PAPER,
          description="reuters-money-fx and news20 (values 1) for RCV1; g4; fixed step and "
                      "exact line search; column subsets.")
@report.styled
def run_fig3(out_dir: Path, full: bool) -> Path:
    """ASCD Figure 3 (see the module docstring)."""
    from ..report import write_markdown

    out_dir = Path(out_dir)
    specs = {
        # panel: (dataset, columns, rows, step, init, epochs cap, title)
        "a": ("reuters-money-fx", None if full else 1500, None, "fixed", "infinite",
              "(a) reuters-money-fx, fixed step, g4, r0=∞"),
        "b": ("news20", 10000 if full else 1500, None if full else 4000, "fixed", "infinite",
              "(b) news20, fixed step, g4, r0=∞"),
        "c": ("news20", 10000 if full else 1500, None if full else 4000, "line_search",
              "gradient", "(c) news20, exact line search, g4, init ∇f"),
        "d": ("reuters-money-fx", 5000 if full else 800, None, "fixed", "gradient",
              "(d) reuters-money-fx, fixed step, oracles g1-g4"),
    }
    caps = {"fixed": 2000 if full else 600, "line_search": 500 if full else 300}
    data_cache = {}
    panels, f_star, sources, dims = {}, {}, {}, {}
    for key, (name, ncols, nrows, step, init, _) in specs.items():
        ck = (name, ncols, nrows)
        if ck not in data_cache:
            data_cache[ck] = _bag_of_words(name, ncols, seed=0, n_rows=nrows)
        X, y, src = data_cache[ck]
        sources[key] = src
        dims[key] = X.shape
        lam = LASSO_FRAC_FIG3 * float(np.max(np.abs(X.T @ y))) / X.shape[0]
        cap = caps[step]
        ref = _reference(X, y, "l1", lam)
        if key == "d":
            runs = {"UCD": _drive(X, y, "l1", lam, "ascd", dict(selection="uniform", step=step),
                                cap, ref)}
            for label, o in (("ASCD g1 (exact)", dict(oracle="exact")),
                             ("ASCD g2 ε=0.1", dict(oracle="projection", eps=0.1)),
                             ("ASCD g3 (zero)", dict(oracle="zero")),
                             ("ASCD g4 (uniform)", dict(oracle="uniform"))):
                runs[label] = _drive(X, y, "l1", lam, "ascd", dict(o, step=step, init=init), cap,
                                   ref)
        else:
            runs = {label: _drive(X, y, "l1", lam, sv, o, cap, ref)
                    for label, (sv, o) in _fig3_methods(step, init).items()}
        f_star[key] = min([ref, *(r.primal for r in runs.values())])
        panels[key] = runs

    fig, axes = report.panels(2, 4)
    rows = []
    for col, key in enumerate("abcd"):
        d = dims[key][1]
        _panel(axes[0][col], axes[1][col], panels[key], f_star[key], specs[key][5], d)
        rows += _summaries(key, panels[key], f_star[key], d)
    report.save_figure(fig, out_dir / "fig3.png")
    _write_csv(out_dir / "fig3_summary.csv", SUMMARY_HEAD,
               [[r[h] for h in SUMMARY_HEAD] for r in rows])
    _traces_csv(out_dir / "fig3_traces.csv", {k: (panels[k], f_star[k]) for k in panels})

    def rt(panel, a, b, col="epochs_to_1e6"):
        r = _ratio(_by(rows, panel, a)[col], _by(rows, panel, b)[col])
        return "n/a" if r is None else f"{r:.2f}"

    data_lines = "\n".join(f"- ({k}) {sources[k]}: {dims[k][0]} × {dims[k][1]}"
                           for k in "abcd")
    support = {k: _by(rows, k, "ASCD" if k != "d" else "ASCD g4 (uniform)")["active_last"]
               for k in "abcd"}
    body = (
        f"Run: {'full' if full else 'quick (reduced sizes)'}. **RCV1 is not available here**: "
        "it is substituted by reuters-money-fx (Reuters-21578, LASVM set) and news20 "
        "(LIBSVM multiclass file, binarized 1-10 vs 11-20), both as bag-of-words with every "
        "nonzero set to 1, as the paper did with RCV1. Problem: lasso (31) with b = labels "
        f"±1 and λ' = {LASSO_FRAC_FIG3:g}·λ'_max (the paper gives no λ). " + CHECKS_NOTE
        + "\n\n"
        f"{data_lines}\n\n" + _table(rows) + "\n\n"
        "**Claims.**\n\n"
        f"- With the crude oracle g4, ASCD is much faster than UCD: epochs to 1e-6 "
        f"ASCD/UCD = {rt('a', 'ASCD', 'UCD')} (a), {rt('b', 'ASCD', 'UCD')} (b), "
        f"{rt('c', 'ASCD', 'UCD')} (c); in passes (entries touched) "
        f"{rt('a', 'ASCD', 'UCD', 'passes_to_1e6')}, {rt('b', 'ASCD', 'UCD', 'passes_to_1e6')}, "
        f"{rt('c', 'ASCD', 'UCD', 'passes_to_1e6')} (greedy selection favours frequent words, "
        "whose columns are long).\n"
        f"- ASCD identifies a small active set: |I_t| at the end = {support['a']}, "
        f"{support['b']}, {support['c']} (of {dims['a'][1]}, {dims['b'][1]}, {dims['c'][1]}); "
        "the paper reports about 0.1% of the coordinates on RCV1.\n"
        f"- a-ASCD vs ASCD: epochs ratio a-ASCD/ASCD = {rt('a', 'a-ASCD', 'ASCD')}, "
        f"{rt('b', 'a-ASCD', 'ASCD')}, {rt('c', 'a-ASCD', 'ASCD')}. a-ASCD keeps every j "
        "with u_j ≥ max_i ℓ_i; with g4 the lower bounds ℓ of the passive coordinates soon "
        "drop to 0, and right after an exact step the updated coordinate's ℓ is 0 too, so "
        "max ℓ = 0 and the set becomes all coordinates (a-ASCD turns into UCD: see its "
        "'|I_t| last'). ASCD's safe set drops provably optimal coordinates (u = 0) and "
        "does not collapse that way. The paper found a-ASCD 'identical to ASCD in "
        "practice'; here that holds only where max ℓ stays positive.\n"
        "- Oracles (d). Paper (Fig. 3d): 'almost nothing can be gained from more precise "
        "(and more expensive) oracles'. Here, epochs to 1e-6 relative to g4: g1 (exact) "
        f"{rt('d', 'ASCD g1 (exact)', 'ASCD g4 (uniform)')}, g2 "
        f"{rt('d', 'ASCD g2 ε=0.1', 'ASCD g4 (uniform)')}, g3 "
        f"{rt('d', 'ASCD g3 (zero)', 'ASCD g4 (uniform)')}; in passes g1 "
        f"{rt('d', 'ASCD g1 (exact)', 'ASCD g4 (uniform)', 'passes_to_1e6')}, g2 "
        f"{rt('d', 'ASCD g2 ε=0.1', 'ASCD g4 (uniform)', 'passes_to_1e6')}. So the "
        "precise oracles do save coordinate updates on this problem (g1 turns ASCD into "
        "SCD), but they read d Gram entries per step, and counted in entries touched "
        "the crude g4 is as good or better: the paper's conclusion holds for the cost, "
        "not for the iteration count.\n\n"
        "Wall-clock time: the g4 runs here follow Algorithm 1 literally (n bounds updated "
        "and sorted at every step, O(n log n); a-ASCD O(n)), while a UCD step costs "
        "O(nnz of a column). cdlearn's default oracle g3 keeps the radii lazily and the "
        "safe set in a max-tree (O(nnz) + O(log n) amortised per step); its wall time "
        "against UCD is in benchmarks/results/ascd_update_cost.md.\n\n"
        "Deviations: news20 (and in quick mode reuters) uses a random column subset because "
        "a full epoch of ASCD costs O(n² log n); the paper used all of RCV1 for 3a/3b and "
        "10,000 / 5,000 random columns for 3c / 3d. 'Fixed step' is 1/max_j L_j; exact line "
        "search is the 1/L_j step (exact for the squared loss).\n"
    )
    write_markdown(out_dir / "note.md", "ASCD Figure 3: bag-of-words data, oracle g4",
                   [("Result", body)])
    _speedup_verdict(out_dir, "ascd-fig3", full, rows, ("a", "b", "c"),
                     claim="on RCV1 (lasso), ASCD with the crude oracle g4 needs far fewer "
                           "epochs than UCD, with a small active set",
                     where="(RCV1 not available: reuters-money-fx and news20 substitute)")
    return out_dir


# --------------------------------------------------------------------------- Figure 4
def cycling_path(n=20, iters=400, x0=None, alpha=0.01):
    """SCD with exact steps on ``q(x) = ½xᵀQx``, ``Q = I − (1−α)/n J`` (Theorem 2.2).

    Returns ``(f, g)``: ``f[t] = q(x_t)`` and the gradients ``g[t] = Q x_t`` for
    t = 0..iters. Ties in ``argmax |∇_i q|`` go to the lowest index.
    """
    Q = np.eye(n) - (1 - alpha) / n * np.ones((n, n))
    x = np.ones(n) if x0 is None else np.array(x0, dtype=np.float64)
    g = Q @ x
    fs, gs = [0.5 * x @ g], [g.copy()]
    for _ in range(iters):
        i = int(np.argmax(np.abs(g)))
        step = -g[i] / Q[i, i]
        x[i] += step
        g += step * Q[:, i]
        fs.append(0.5 * x @ g)
        gs.append(g.copy())
    return np.array(fs), np.array(gs)


def ucd_path(n=20, iters=400, seeds=20, alpha=0.01):
    """Median over ``seeds`` of q(x_t) for uniform CD with exact steps, x0 = 1."""
    Q = np.eye(n) - (1 - alpha) / n * np.ones((n, n))
    out = np.empty((seeds, iters + 1))
    for sd in range(seeds):
        rng = np.random.default_rng(sd)
        x = np.ones(n)
        g = Q @ x
        out[sd, 0] = 0.5 * x @ g
        picks = rng.integers(0, n, size=iters)
        for t, i in enumerate(picks):
            step = -g[i] / Q[i, i]
            x[i] += step
            g += step * Q[:, i]
            out[sd, t + 1] = 0.5 * x @ g
    return np.median(out, axis=0)


def _library_scd(n, epochs):
    """q(x_t) at t = n, 2n, ... from cdlearn's SCD (``GreedyCDState``) on the same function."""
    from ..api import make_problem
    from ..datasets.greedy import make_cycling_quadratic
    from ..solvers.greedy_cd import GreedyCDState

    X, _, _ = make_cycling_quadratic(n)
    ones = np.ones(n)
    y = -X @ ones  # 1/(2n)‖Xu − y‖² = q(u + 1): CD from u = 0 is CD on q from x0 = 1
    state = GreedyCDState(make_problem(X, y, loss="squared", penalty="none", lam=None),
                          method="scd", selection="gs")
    Q = X.T @ X / n
    vals = []
    for _ in range(epochs):
        state.run_epoch()
        x = state.w + ones
        vals.append(0.5 * x @ Q @ x)
    return np.array(vals)


@register("ascd-fig4", title="ASCD Figure 4: SCD on the function of Theorem 2.2, n = 20",
          paper=ASCD_PAPER, description="Q = I − 0.99/n·J, x0 = 1: SCD gains nothing over UCD.")
@report.styled
def run_fig4(out_dir: Path, full: bool) -> Path:
    """ASCD Figure 4 (see the module docstring)."""
    from ..datasets.greedy import cycling_constant
    from ..report import write_markdown

    out_dir = Path(out_dir)
    n = 20
    iters = 30000 if full else 15000  # UCD needs ≈ 12,000 iterations to reach 1e-6
    n_seeds = 50 if full else 8
    f_scd, g_scd = cycling_path(n, iters)
    f_ucd = ucd_path(n, iters, seeds=n_seeds)
    f_lib = _library_scd(n, iters // n)
    ratio = n * np.max(g_scd**2, axis=1) / np.sum(g_scd**2, axis=1)  # τ_SCD/τ_UCD, (6)
    f0 = f_scd[0]
    c = cycling_constant(n)
    rows = [(t, float(f_scd[t] / f0), float(f_ucd[t] / f0), float(ratio[t]))
            for t in range(iters + 1)]
    _write_csv(out_dir / "fig4.csv", ("t", "scd_q_over_q0", "ucd_median_q_over_q0",
                                      "tau_scd_over_tau_ucd"), rows)
    snaps = [0, n, 2 * n, 5 * n, 50 * n]
    _write_csv(out_dir / "fig4_gradients.csv", ("t", *[f"rank{k + 1}" for k in range(n)]),
               [(t, *np.sort(np.abs(g_scd[t]))[::-1] / np.abs(g_scd[t]).max()) for t in snaps])

    # the paper's two panels (values; sorted gradient), then the progress ratio (6)
    fig, axes = report.panels(1, 3)
    ax1, ax2, ax3 = axes[0]
    ts = np.arange(iters + 1)
    ax1.plot(ts, f_scd / f0, color="tab:red", label="SCD (x0 = 1)")
    ax1.plot(ts, f_ucd / f0, color="tab:gray", label=f"UCD (median of {n_seeds} runs)")
    every = max(1, f_lib.size // 30)
    ax1.plot(n * np.arange(1, f_lib.size + 1)[::every], (f_lib / f0)[::every], "o",
             color="tab:blue", label="cdlearn solver='scd' (epoch ends)")
    report.label_axes(ax1, title=f"SCD vs UCD, n = {n}, x0 = 1", xlabel="iteration t",
                      ylabel="q(x_t) / q(x_0)", ylog=True, legend="lower left")
    for t in snaps:
        ax2.plot(np.arange(1, n + 1), np.sort(np.abs(g_scd[t]))[::-1] / np.abs(g_scd[t]).max(),
                 marker=".", label=f"t = {t}")
    ax2.set_xticks(np.arange(1, n + 1, 2 if n <= 20 else max(1, n // 10)))
    report.label_axes(ax2, title="sorted gradient of SCD's iterate", xlabel="rank of |∇_i q(x_t)|",
                      ylabel="|∇_i q(x_t)| / ‖∇q(x_t)‖∞", legend="upper right")
    # the ratio settles within ≈ 2n iterations and stays flat: show the first 10n
    shown = min(iters, 10 * n)
    ax3.plot(ts[:shown + 1], ratio[:shown + 1], color="tab:red",
             label="n‖∇q‖∞²/‖∇q‖₂² = τ_SCD/τ_UCD")
    ax3.axhline(4, color="k", ls="--", label="4, bound (13)")
    ax3.axhline(n, color="tab:gray", ls=":", label=f"n = {n} (best possible)")
    ax3.axvline(2 * n, color="0.6", lw=0.8)
    report.label_axes(ax3, title=f"progress of SCD over UCD, first {shown} iterations",
                      xlabel="iteration t", ylabel="progress ratio (6)", ylog=True,
                      legend="center right")
    report.save_figure(fig, out_dir / "fig4.png")

    def hit(f):
        k = np.flatnonzero(f / f0 <= TARGET)
        return int(k[0]) if k.size else None

    t_scd, t_ucd = hit(f_scd), hit(f_ucd)
    late = ratio[2 * n:]
    lib_err = float(np.max(np.abs(f_lib - f_scd[n::n][: f_lib.size]) / f0))
    per_round = (f_scd[iters] / f_scd[iters - n]) ** 0.5  # ‖x‖ shrink per n iterations
    body = (
        f"Run: {'full' if full else 'quick'} ({iters} iterations; UCD: median of "
        f"{n_seeds} random runs). Q = I − 0.99/n·J, n = {n}, x0 = 1 (not the "
        "worst-case start of the proof).\n\n"
        f"| | SCD | UCD (median) |\n|---|---|---|\n"
        f"| iterations to q(x_t)/q(x_0) ≤ 1e-6 | {_fmt(t_scd, 'd')} | {_fmt(t_ucd, 'd')} |\n"
        f"| q(x_T)/q(x_0), T = {iters} | {f_scd[-1] / f0:.2e} | {f_ucd[-1] / f0:.2e} |\n\n"
        f"- τ_SCD/τ_UCD = n‖∇q‖∞²/‖∇q‖² for t ≥ 2n: max {late.max():.2f}, mean "
        f"{late.mean():.2f} (bound (13): ≤ 4; the best case would be n = {n}). The sorted, "
        "normalised gradient profile (middle panel) stops changing after ≈ 2n iterations "
        "(a near-linear ramp from 1 to 0): the steady state of the paper's Figure 4 "
        "('almost reached after 2n iterations').\n"
        f"- SCD/UCD iterations to 1e-6: "
        f"{'n/a' if t_scd is None or t_ucd is None else f'{t_scd / t_ucd:.2f}'} -- steepest "
        "selection buys at most a constant factor here, not the factor n it can reach on "
        "other functions (Theorem 2.2).\n"
        f"- Per round of n SCD steps ‖x‖ shrinks by {per_round:.4f}; the proof's cycling "
        f"start x0 = (c^(i-1)) gives exactly c^n = {c ** n:.4f} (c = {c:.6f}, (43)).\n"
        f"- cdlearn's `solver=\"scd\"` (gradient kept by Gram updates, uniform tie-breaking) "
        f"reproduces the path: max |Δq|/q(x_0) at the epoch ends = {lib_err:.1e}.\n"
    )
    write_markdown(out_dir / "note.md", "ASCD Figure 4: SCD on the Theorem 2.2 function",
                   [("Result", body)])
    # Theorem 2.2 / (13): SCD's progress over UCD's stays below 4 in the steady state,
    # and cdlearn's SCD follows the same path
    ok = bool(late.max() <= 4.0 + 1e-9) and lib_err < 1e-8
    write_verdict(
        out_dir, exp_id="ascd-fig4", full=full,
        claim="on the Theorem 2.2 function SCD gains only a constant factor over UCD "
              "(τ_SCD/τ_UCD ≤ 4); steady state after ≈ 2n iterations",
        ours=f"τ_SCD/τ_UCD for t ≥ 2n: max {late.max():.2f}; SCD/UCD iterations to 1e-6: "
             + ("n/a" if t_scd is None or t_ucd is None else f"{t_scd / t_ucd:.2f}"),
        verdict="agrees" if ok else "no",
        reason="progress ratio within the bound (13) after 2n iterations" if ok else
        "progress ratio above 4 or cdlearn's SCD off the path",
        evidence="note.md#result")
    return out_dir
