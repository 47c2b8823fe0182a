"""Reproductions of Richtárik & Takáč, *Iteration complexity of randomized block-coordinate
descent methods for minimizing a composite function* (RCDC).

IDs in this module (the huge-scale Tables 5-8 live in their own module):

* ``rcdc-fig1``: power-law probabilities (55), ``a ∈ {0, 0.5, 1}``, λ ∈ {0, 1};
* ``rcdc-fig2``: four distributions of the L_i, RCDC (``a ∈ {0, 0.2, 1}``) vs FG / FISTA;
* ``rcdc-fig3``: ‖x_k‖₀, correct nonzeros ``cn_k`` and incorrect zeros ``iz_k``;
* ``rcdc-fig4``: q-shrinking (below);
* ``rcdc-fig5``: ``x0 = 0`` vs ``x0 = x_LS``; ``rcdc-fig6``: random ``x0`` on ``[0, x_LS]``;
* ``rcdc-table11`` / ``rcdc-fig7``: L1-regularized L2-SVM and logistic regression (§6.2),
  accuracy against γ and against passes, on reuters-money-fx and a9a (rcv1 substitutes).

Every Lasso run uses the primal CD kernel with the fixed ``1/L_i`` step (= Algorithm 4's
exact soft-thresholding step, residual kept up to date) and measures ``F(x_k) − F*`` on
Nesterov-generator instances without cancellation (see :func:`lasso_residual`).

``rcdc-fig4``: q-shrinking (§6.1, "Speedup by shrinking", Figure 4). Lasso
``F(x) = ½‖Ax − b‖² + λ‖x‖₁`` from Nesterov's generator with m = 500,
n = 1,000, ‖x*‖₀ = 50, λ = 1, started at x0 = 0; uniform sampling for the first
k0 = 5n iterations, then q-shrinking with q ∈ {0, 0.5, 0.9}. The paper reports
that 0.9-shrinking saves "nearly 70%" of the time of 0-shrinking to reach
F(x_k) − F* ≤ 1e-14; the issue asks to check "q = 0.9 reaches 1e-14 in at least
40% less time than q = 0".

Measurement. The kernel of ``solver="primal-cd", sampling="shrinking"`` is run
in chunks of n/2 coordinate steps; only kernel time is counted (the
per-call overhead is a few µs, small against a chunk), as CPU time of the calling thread
(``time.thread_time``), which other processes on a shared machine do not inflate. After each
chunk F(x_k) − F* is evaluated without cancellation from the known optimum
(``½‖A(x − x*)‖² + Σ_i (λ|x_i| − (Aᵀv*)_i x_i)``, every term ≥ 0), which is
what makes a 1e-14 absolute residual on F ≈ 10² measurable at all.
"""

from __future__ import annotations

import csv
import functools
import math
import time
from pathlib import Path

import numpy as np

from . import register
from .verdict import write_verdict

RCDC_PAPER = ("Richtárik & Takáč, Iteration complexity of randomized block-coordinate "
              "descent methods for minimizing a composite function (Math. Prog. 2014)")
QS = (0.0, 0.5, 0.9)
TARGET = 1e-14
#: |x*_i| uniform in (0, X_SCALE] for the §6.1 instances of Figures 3-5: the size of x*
#: (ρ in Nesterov's generator, CORE DP 2007/76 §6) which the paper does not give. It sets
#: how far ‖x_k‖₀ overshoots from x0 = 0 (rcdc-fig3 runs the candidates); 1 leaves no
#: overshoot, 50 gives the paper's Figure 3.
X_SCALE = 50.0
X_SCALE_CANDIDATES = (1.0, 10.0, 50.0, 200.0)
#: rcdc-fig3's rows m: the paper's 500 (< n = 1,000) and two shapes with m ≥ n
FIG3_ROWS = (500, 1000, 2000)
#: rcdc-fig4's sizes of x* (the paper's ρ is not given)
FIG4_X_SCALES = (1.0, 10.0, 20.0, 50.0)


def lasso_residual(A, x, x_star, c, lam) -> float:
    """F(x) − F* for the generator's instance, with ``c = Aᵀv*`` (cancellation-free)."""
    Ad = A @ (x - x_star)
    return 0.5 * float(Ad @ Ad) + float(np.sum(lam * np.abs(x) - c * x))


def run_shrinking(A, b, x_star, v_star, lam, q, *, k0_epochs=5.0, seed=0, target=TARGET,
                  max_epochs=2000, chunks_per_epoch=2):
    """One q-shrinking run; returns rows (k/n, residual, nnz, seconds, iz) and the time to target.

    ``iz`` is the number of incorrect zeros ``#{i : x_k^(i) = 0, x*^(i) ≠ 0}`` (Figure 3).
    """
    from ..api import make_problem
    from ..kernels.primal_shrinking import primal_cd_shrinking_epoch
    from ..solvers.primal_cd import PrimalCDState

    m, n = A.shape
    # cdlearn's P = F/m with lam/m; the steps are identical (exact coordinate minimisation)
    problem = make_problem(A, b, loss="squared", penalty="l1", lam=lam / m)
    st = PrimalCDState(problem, sampling="shrinking", shrink_q=q, shrink_start=k0_epochs,
                       seed=seed, step="lipschitz")
    v, p = st.view, problem
    c = A.T @ v_star
    chunk = max(1, n // chunks_per_epoch)
    r0 = lasso_residual(A, st.w, x_star, c, lam)
    on = x_star != 0
    rows = [(0.0, r0, st.nnz_w(), 0.0, int(np.sum(on & (st.w == 0))))]
    seconds, steps, hit = 0.0, 0, None
    # compile outside the timing
    primal_cd_shrinking_epoch(v.data, v.indices, v.indptr, p.y, p.sample_weight, st.z.copy(),
                              st.w.copy(), st.lips, p.l1, p.l2, p.loss_code, 0, st.rng.copy(),
                              0, q, st.shrink_start, st.supp.copy(), st.pos.copy(),
                              st.n_supp.copy(), st._intercept.copy(), 0.0, False)
    while steps < max_epochs * n:
        t0 = time.thread_time()
        _, _, st.counter = primal_cd_shrinking_epoch(
            v.data, v.indices, v.indptr, p.y, p.sample_weight, st.z, st.w, st.lips, p.l1, p.l2,
            p.loss_code, chunk, st.rng, st.counter, st.shrink_q, st.shrink_start, st.supp,
            st.pos, st.n_supp, st._intercept, 0.0, False)
        seconds += time.thread_time() - t0
        steps += chunk
        res = lasso_residual(A, st.w, x_star, c, lam)
        rows.append((steps / n, res, int(st.n_supp[0]), seconds, int(np.sum(on & (st.w == 0)))))
        if res <= target:
            hit = (steps / n, seconds)
            break
    return rows, hit


def _instance(seed, full, x_scale=X_SCALE):
    """The Figure 4/5 instance (m = 500, n = 1,000, ‖x*‖₀ = 50, λ = 1): Nesterov's original
    column scaling and |x*_i| up to :data:`X_SCALE`, as for rcdc-fig3."""
    inst = make_instance(500, 1000, support=50, lam=1.0, seed=seed, distribution="natural",
                         x_scale=x_scale)
    return inst["A"], inst["b"], inst["x_star"], inst["v_star"], inst["F_star"]


@register("rcdc-fig4", title="RCDC Figure 4: q-shrinking, time to F(x_k) - F* <= 1e-14",
          paper=RCDC_PAPER,
          description="m=500, n=1000, |x*|_0=50, lambda=1, k0=5n, q in {0, 0.5, 0.9}.")
def run_fig4(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 4: q-shrinking with q ∈ {0, 0.5, 0.9} (see the module docstring)."""
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    # quick: the two first generator instances (seed 2 of this generator needs > 2,000 n)
    seeds = range(10) if full else range(2)
    repeats = 5 if full else 2
    n_min = 3 if full else 1  # quick: the verdict reads k/n, which needs no repeats
    summary = []  # (instance, q, k/n at target, median seconds, median iz at k0)
    curves = {}
    tails = {}  # (x_scale, instance) -> share of q = 0's run after its support is back
    for inst in seeds:
        A, b, x_star, v_star, F_star = _instance(inst, full)
        target = TARGET * max(1.0, F_star)
        if inst == 0:
            curve_target = target
        for q in QS:
            times, iters, iz0 = [], [], []
            for rep in range(repeats):  # sampling seeds
                best = np.inf
                for _ in range(n_min):  # same seed, same path: min time filters out noise
                    rows, hit = run_shrinking(A, b, x_star, v_star, 1.0, q, seed=rep,
                                              target=target)
                    best = min(best, np.inf if hit is None else hit[1])
                times.append(best)
                iters.append(np.inf if hit is None else hit[0])
                iz0.append(next((r[4] for r in rows if r[0] >= 5.0), rows[-1][4]))
                if rep == 0 and inst == 0:
                    curves[q] = rows
                if rep == 0 and q == 0.0:
                    tails[(X_SCALE, inst)] = _tail_share(rows, x_star)
            med_it = float(np.median(iters))
            summary.append((inst, q, None if not np.isfinite(med_it) else med_it,
                            float(np.median(times)), float(np.median(iz0))))

    # the size of x* the paper does not give: saving in iterations on the same instances
    # (sampling seed 0; the main table above has the medians at X_SCALE)
    x_sweep = []  # (x_scale, instance, k/n q=0, k/n q=0.9, saving)
    for xs in FIG4_X_SCALES:
        for inst in range(2):
            if xs == X_SCALE:
                its = {q: next(r[2] for r in summary if r[0] == inst and r[1] == q)
                       for q in (0.0, 0.9)}
            else:
                A, b, x_star, v_star, F_star = _instance(inst, full, xs)
                its = {}
                for q in (0.0, 0.9):
                    rows, hit = run_shrinking(A, b, x_star, v_star, 1.0, q, seed=0,
                                              target=TARGET * max(1.0, F_star))
                    its[q] = None if hit is None else hit[0]
                    if q == 0.0:
                        tails[(xs, inst)] = _tail_share(rows, x_star)
            sav = (1.0 - its[0.9] / its[0.0] if its[0.0] is not None and its[0.9] is not None
                   else float("nan"))
            x_sweep.append((xs, inst, its[0.0], its[0.9], sav, tails[(xs, inst)]))
    _write_csv(out_dir / "fig4_x_scale.csv",
               ["x_scale", "instance", "k_over_n_q0", "k_over_n_q09", "saving",
                "q0_share_after_support_back"], x_sweep)
    pairs = np.array([(t, sv) for *_, sv, t in x_sweep if np.isfinite(sv) and np.isfinite(t)])
    corr = float(np.corrcoef(pairs.T)[0, 1]) if len(pairs) > 2 else float("nan")
    with open(out_dir / "fig4_summary.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["instance", "q", "k_over_n_to_target", "median_seconds_to_target",
                     "median_iz_at_k0"])
        wr.writerows(summary)
    with open(out_dir / "fig4_curves.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["q", "k_over_n", "residual", "nnz", "seconds", "iz"])
        for q, rows in curves.items():
            wr.writerows((q, *r) for r in rows)

    fig = new_figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for q, rows in curves.items():
        arr = np.array(rows)
        keep = arr[:, 1] > 0
        ax1.semilogy(arr[keep, 0], arr[keep, 1], label=f"{q}-shrinking")
        ax2.plot(arr[:, 0], arr[:, 2], label=f"{q}-shrinking")
    ax1.set_xlabel("k/n")
    ax1.set_ylabel("F(x_k) − F*")
    ax1.set_title("residual (instance 0)")
    ax2.set_xlabel("k/n")
    ax2.set_ylabel("‖x_k‖₀")
    ax2.set_title("nonzeros of x_k")
    ax2.axvline(5.0, color="gray", lw=0.5, label="k0 = 5n (shrinking starts)")
    ax1.axhline(curve_target, color="gray", lw=0.5, ls="--",
                label="target 1e-14·max(1, F*)")
    ax1.legend()
    ax2.legend()
    fig.savefig(out_dir / "fig4.png", dpi=120)

    lines = ["| instance | q | k/n to target | median s to target | time vs q=0 | iz at k0 = 5n |",
             "|---|---|---|---|---|---|"]
    base = {s[0]: s[3] for s in summary if s[1] == 0.0}
    it0 = {s[0]: s[2] for s in summary if s[1] == 0.0}
    savings = {q: [] for q in QS}
    for inst, q, iters, sec, iz in summary:
        ratio = sec / base[inst] if np.isfinite(base[inst]) and np.isfinite(sec) else np.nan
        if np.isfinite(ratio):
            savings[q].append(1.0 - ratio)
        it = "not reached" if iters is None else f"{iters:.1f}"
        lines.append(f"| {inst} | {q} | {it} | {sec:.4g} | {ratio:.2f} | {iz:g} |")
    s09 = np.array(savings[0.9])
    it_sav = [1.0 - s[2] / it0[s[0]] for s in summary if s[1] == 0.9 and s[2] is not None
              and it0.get(s[0])]
    mean09 = float(s09.mean()) if s09.size else float("nan")
    # the verdict reads iterations: a step costs the same for every q (within ~5%), and the
    # kernel times of these millisecond runs are noisy on a shared machine
    it09 = float(np.mean(it_sav)) if it_sav else float("nan")
    verdict = "agrees" if it09 >= 0.6 else "partly" if it09 >= 0.3 else "no"
    by_xs = {}
    for xs, _, _, _, sv, _ in x_sweep:
        by_xs.setdefault(xs, []).append(sv)
    best_sweep = max(float(np.nanmean(v)) for v in by_xs.values())
    worst_sweep = min(float(np.nanmean(v)) for v in by_xs.values())
    body = (
        f"Run: {'full' if full else 'quick'} ({len(list(seeds))} instances; per instance the "
        f"median over {repeats} sampling seeds of k/n and of the kernel time (each the "
        f"minimum of {n_min} identical runs; kernel CPU time of the thread, `time.thread_time`, "
        "so other processes on this shared machine do not inflate it); residual checked "
        "every n/2 steps). Target F(x_k) − F* ≤ 1e-14·max(1, F*): with |x*_i| up to "
        f"{X_SCALE:g}, F* ≈ 10³ and an absolute 1e-14 is below the float64 rounding of "
        "F(x_k) − F* itself.\n\n"
        + "\n".join(lines)
        + f"\n\nSaving of 0.9-shrinking over 0-shrinking in time to the target: mean "
        f"{100 * mean09:.0f}% over the {s09.size} instances that reached it "
        f"(min {100 * s09.min():.0f}%, max {100 * s09.max():.0f}%); "
        f"in iterations k/n: mean {100 * np.mean(it_sav):.0f}%. "
        f"Paper: 'nearly 70%'. Verdict on the saving in iterations (≥ 60% agrees, ≥ 30% "
        f"partly): **{verdict}**. It reads iterations because a step costs the same for "
        "every q (within ~5% here: 20 nonzeros per column, O(1) support bookkeeping) while "
        "the kernel times of these millisecond runs are noisy on a shared machine.\n\n"
        "Why less than 70%: q-shrinking saves only once ‖x_k‖₀ is small (when ‖x_k‖₀ ≈ n it "
        "samples as UCDC does). On these instances ‖x_k‖₀ overshoots as in the paper's "
        "Figure 3 but comes back to ‖x*‖₀ much later (rcdc-fig3: ~150 n against the paper's "
        "30 n), so a larger share of the run has a large support. That return time depends "
        "on generator details the paper does not give (its 'variant' of Nesterov's "
        "generator: the size of x* and the spread of the inactive correlations |a_iᵀv*|).\n\n"
        "The saving depends on the size of x*, which the paper does not give (Nesterov's "
        "ρ; rcdc-fig3 shows it also sets the overshoot). Saving of 0.9-shrinking in "
        "iterations on the same two instances with |x*_i| up to each size (k/n to the "
        f"target for q = 0 / 0.9, sampling seed 0; at {X_SCALE:g} "
        "the medians above):\n\n"
        "| x* entries up to | instance | k/n, q = 0 | k/n, q = 0.9 | saving | share of q = 0's "
        "run after its support is back |\n"
        "|---|---|---|---|---|---|\n"
        + "\n".join(f"| {xs:g} | {i} | {_fmt_it(a)} | {_fmt_it(b_)} | {100 * sv:.0f}% | "
                    f"{100 * t:.0f}% |" for xs, i, a, b_, sv, t in x_sweep)
        + "\n\nIs the saving the part of the run with the support back? The last column is "
        "that part of the q = 0 run: from the last check with ‖x_k‖₀ > "
        f"{TAIL_FACTOR:g}‖x*‖₀ to the target. Correlation of saving and share over the "
        f"{len(pairs)} runs: {corr:.2f}"
        + (": no. With small x* the support is back for half the run and 0.9-shrinking still "
           "saves little; with large x* it is back only near the end and the saving is "
           "larger, so the saving is made while ‖x_k‖₀ comes down from its overshoot (the "
           "support's coordinates are drawn ~q·n/‖x_k‖₀ times as often, and the spurious "
           "ones are zeroed sooner), not in a tail with the support settled."
           if corr < 0.5 else ".")
        + f"\n\nNo size of x* tried gives the paper's 'nearly 70%' (largest mean saving: "
        f"{100 * best_sweep:.0f}%): shrinking saves only after ‖x_k‖₀ has come down, and on "
        "these m = 500 < n instances the support settles late, at ~80% of the run "
        "(rcdc-fig3). The tall shape that brings rcdc-fig3's return near the paper's does "
        "not help here: with m = 2,000 a trial (not part of this run) saved 11% and 28% on "
        "the two instances, since the whole run is then short against k0 = 5n.\n\n"
        "Where 0.9-shrinking saves little, iz at k0 (coordinates of supp(x*) still zero when "
        "shrinking starts) is usually > 0: those coordinates are then drawn with probability "
        "(1 − q)/n only. Times are kernel seconds; the k/n column is the noise-free "
        "counterpart (a step costs the same for every q, 20 nonzeros per column).\n\n"
        "Instance: Nesterov's generator in its original form (`make_lasso_known_optimum`, "
        "`column_distribution='natural'`: columns rescaled so a_iᵀv* = ±λ on the support), "
        f"20 nonzeros per column, |x*_i| uniform in (0, {X_SCALE:g}] (the paper gives neither "
        "A's density nor the size of x*; rcdc-fig3 shows the candidates), the same instance "
        "as rcdc-fig5 (as in the paper).\n"
    )
    write_markdown(out_dir / "note.md", "RCDC Figure 4: speedup by q-shrinking",
                   [("Result", body)])
    write_verdict(out_dir, exp_id="rcdc-fig4",
                  claim="0.9-shrinking saves nearly 70% of the time of 0-shrinking to "
                        "F - F* <= 1e-14",
                  ours=f"{100 * it09:.0f}% of the iterations saved ({100 * mean09:.0f}% of the "
                       f"kernel time), {s09.size} instances",
                  verdict=verdict,
                  reason=("saving within the paper's range" if verdict == "agrees" else
                          f"mean saving {100 * worst_sweep:.0f}–{100 * best_sweep:.0f}% over "
                          f"|x*_i| up to {FIG4_X_SCALES[0]:g}–{FIG4_X_SCALES[-1]:g} (the size "
                          "of x* is not given); the saving does not follow the share of q = 0's "
                          "run with the support back "
                          f"({100 * min(t for *_, t in x_sweep):.0f}–"
                          f"{100 * max(t for *_, t in x_sweep):.0f}%, corr. {corr:.2f})"
                          + (": it is made during the support's return" if corr < 0.5
                             else "")),
                  full=full, evidence="note.md#result")
    return out_dir


TAIL_FACTOR = 1.1  #: "support back": ‖x_k‖₀ ≤ TAIL_FACTOR·‖x*‖₀ at every later check


def _tail_share(rows, x_star) -> float:
    """Share of a run (rows of :func:`run_shrinking`, to its last row) after ‖x_k‖₀ is back."""
    limit = TAIL_FACTOR * np.count_nonzero(x_star)
    ks = np.array([r[0] for r in rows])
    big = np.flatnonzero(np.array([r[2] for r in rows]) > limit)
    back = ks[big[-1] + 1] if big.size and big[-1] + 1 < ks.size else (ks[-1] if big.size
                                                                        else 0.0)
    return float(1.0 - back / ks[-1]) if ks[-1] > 0 else float("nan")


# =============================================================================================
# Shared machinery for Figures 1-3, 5, 6 (Lasso, Algorithm 4) and Table 11 / Figure 7 (§6.2).
# =============================================================================================

def _write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(header)
        wr.writerows(rows)


def make_instance(m, n, *, support, lam, seed, nnz_per_column=20, distribution="uniform",
                  x_scale=1.0):
    """A generator instance as a dict (A, b, x_star, v_star, c = Aᵀv*, lam, info)."""
    from ..datasets.nesterov import make_lasso_known_optimum

    A, b, x_star, F_star, info = make_lasso_known_optimum(
        m, n, nnz_per_column=nnz_per_column, support_size=support, lam=lam, seed=seed,
        column_distribution=distribution, x_scale=x_scale, return_info=True)
    c = A.T @ info["v_star"]
    return dict(A=A, b=b, x_star=x_star, v_star=info["v_star"], c=c, lam=lam, F_star=F_star,
                info=info)


def instance_residual(inst, lam=None):
    """``x ↦ F(x) − F*`` for an instance: cancellation-free for λ > 0 (the generator's λ).

    ``lam=0`` gives least squares ``½‖Ax − b‖²``, whose optimal value is 0 when A has
    full row rank (m < n); the caller checks that b is in the range of A.
    """
    A, b = inst["A"], inst["b"]
    if lam == 0.0:
        def res(x):
            r = A @ x - b
            return 0.5 * float(r @ r)
        return res
    x_star, c, lam_ = inst["x_star"], inst["c"], inst["lam"]
    return lambda x: lasso_residual(A, x, x_star, c, lam_)


def cd_trace(A, b, lam, residual, *, x0=None, power=0.0, seed=0, epochs=100, per_epoch=2,
             target=0.0, extra=None):
    """UCDC / RCDC with power-law probabilities (55) on ``½‖Ax − b‖² + λ‖x‖₁`` (Algorithm 4).

    ``power = 0`` is UCDC (uniform draws), otherwise ``p_i ∝ L_i^power`` by an alias
    table. Runs the primal CD kernel (fixed ``1/L_i`` step = exact coordinate
    minimisation for the squared loss, residual ``g = Ax − b`` kept up to date) in
    chunks of ``n/per_epoch`` steps and records after each chunk
    ``(k/n, F(x_k) − F*, ‖x_k‖₀, kernel seconds, *extra(x_k))``. Stops at
    ``residual ≤ target`` or after ``epochs`` passes.
    """
    from ..api import make_problem
    from ..kernels.primal_cd import primal_cd_epoch
    from ..solvers.primal_cd import PrimalCDState

    m, n = A.shape
    if lam > 0:
        problem = make_problem(A, b, loss="squared", penalty="l1", lam=lam / m)
    else:
        problem = make_problem(A, b, loss="squared", penalty="none", lam=None)
    sampling = "uniform" if power == 0.0 else "power"
    st = PrimalCDState(problem, sampling=sampling, power=power, seed=seed, w0=x0,
                       step="lipschitz")
    v, p = st.view, problem
    chunk = max(1, n // per_epoch)
    extra = extra or (lambda x: ())
    rows = [(0.0, residual(st.w), st.nnz_w(), 0.0, *extra(st.w))]
    seconds = 0.0
    for k in range(1, epochs * per_epoch + 1):
        t0 = time.perf_counter()
        _, _, st.counter = primal_cd_epoch(
            v.data, v.indices, v.indptr, p.y, p.sample_weight, st.z, st.w, st.lips, p.l1, p.l2,
            p.loss_code, st.mode, st.prob, st.alias, chunk, st.rng, st.counter, 1, st.perm,
            st.deltas, st._intercept, 0.0, False, False)
        seconds += time.perf_counter() - t0
        r = residual(st.w)
        rows.append((k * chunk / n, r, st.nnz_w(), seconds, *extra(st.w)))
        if r <= target:
            break
    return rows


def fg_trace(A, b, lam, residual, *, accelerated=False, iterations=100, target=0.0):
    """FG (ISTA, ``L = 1.01 λ_max(AᵀA)``) or FISTA; rows ``(iterations, F − F*, ‖x‖₀, s)``."""
    from ..api import make_problem
    from ..solvers.full_gradient import FullGradientState

    m = A.shape[0]
    problem = make_problem(A, b, loss="squared", penalty="l1", lam=lam / m)
    st = FullGradientState(problem, accelerated=accelerated)
    rows = [(0.0, residual(st.w), st.nnz_w(), 0.0)]
    seconds = 0.0
    for k in range(1, iterations + 1):
        t0 = time.perf_counter()
        st.run_epoch()
        seconds += time.perf_counter() - t0
        r = residual(st.w)
        rows.append((float(k), r, st.nnz_w(), seconds))
        if r <= target:
            break
    return rows


def first_reach(rows, threshold, col=1):
    """First ``k/n`` (column 0) at which column ``col`` is ``≤ threshold``; None if never."""
    for r in rows:
        if r[col] <= threshold:
            return float(r[0])
    return None


def _fmt_it(v):
    return "not reached" if v is None else f"{v:.3g}"


def _quick_full(full):
    return "full" if full else "quick (reduced: fewer instances/seeds, shorter runs)"


# ------------------------------------------------------------------------------ Figure 1
FIG1_ALPHAS = (0.0, 0.5, 1.0)
FIG1_LEVELS = (1e-1, 1e-3, 1e-6, 1e-9, 1e-12)


@register("rcdc-fig1", title="RCDC Figure 1: power-law probabilities (55), a in {0, 0.5, 1}, "
          "lambda in {0, 1}", paper=RCDC_PAPER,
          description="m=1000, n=2000, |x*|_0=300; F(x_k) - F* against k for p_i ∝ L_i^a.")
def run_fig1(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 1: RCDC with ``p_i ∝ L_i^a`` (55), ``a ∈ {0, 0.5, 1}``, at λ = 0 and λ = 1.

    Instance: Nesterov's generator in its original form (``column_distribution="natural"``:
    columns only rescaled, which makes the L_i heavy-tailed), m = 1,000, n = 2,000,
    ‖x*‖₀ = 300, 10 nonzeros per column. λ = 1 is the generator's problem (F* known); for λ = 0 the
    same A and b are used and F* = 0 since A (m < n) has full row rank (checked: LSQR
    residual). Writes ``fig1_curves.csv`` (one row per n/2 steps), ``fig1_summary.csv``
    (k/n to reach each relative residual level, median over sampling seeds), ``fig1.png``
    and ``note.md``.
    """
    from scipy.sparse.linalg import lsqr

    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    inst = make_instance(1000, 2000, support=300, lam=1.0, seed=1, nnz_per_column=10,
                         distribution="natural")
    A, b = inst["A"], inst["b"]
    L = inst["info"]["lipschitz"]
    x_ls = lsqr(A, b, atol=1e-14, btol=1e-14, iter_lim=20000)[0]
    ls_res = float(np.linalg.norm(A @ x_ls - b) / np.linalg.norm(b))
    seeds = range(5) if full else range(1)
    epochs = 400 if full else 100
    curves, summary = [], []
    for lam in (0.0, 1.0):
        res = instance_residual(inst, lam)
        r0 = res(np.zeros(A.shape[1]))
        for a in FIG1_ALPHAS:
            reach = {lev: [] for lev in FIG1_LEVELS}
            finals = []
            for s in seeds:
                rows = cd_trace(A, b, lam, res, power=a, seed=s, epochs=epochs,
                                target=1e-13 * r0)
                if s == 0:
                    curves += [(lam, a, *r) for r in rows]
                for lev in FIG1_LEVELS:
                    reach[lev].append(first_reach(rows, lev * r0))
                finals.append(rows[-1][1] / r0)
            for lev in FIG1_LEVELS:
                vals = [np.inf if v is None else v for v in reach[lev]]
                med = float(np.median(vals))
                summary.append((lam, a, lev, med if np.isfinite(med) else None,
                                float(np.median(finals))))
    _write_csv(out_dir / "fig1_curves.csv",
               ["lam", "a", "k_over_n", "residual", "nnz", "seconds"], curves)
    _write_csv(out_dir / "fig1_summary.csv",
               ["lam", "a", "rel_level", "median_k_over_n_to_level", "median_final_rel_residual"],
               summary)

    fig = new_figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    for ax, lam in zip(axes, (0.0, 1.0), strict=True):
        for a in FIG1_ALPHAS:
            arr = np.array([r[2:4] for r in curves if r[0] == lam and r[1] == a])
            keep = arr[:, 1] > 0
            ax.semilogy(arr[keep, 0] * A.shape[1], arr[keep, 1], label=f"α = {a:g}")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        ax.set_xlabel("iterations k")
        ax.set_ylabel("F(x_k) − F*")
        ax.set_title(f"λ = {lam:g}")
        ax.legend()
    fig.savefig(out_dir / "fig1.png", dpi=120)

    lines = ["| λ | a | " + " | ".join(f"k/n to {lev:g}" for lev in FIG1_LEVELS)
             + " | final rel. residual |", "|---|---|" + "---|" * (len(FIG1_LEVELS) + 1)]
    table = {}
    for lam, a, lev, med, fin in summary:
        table.setdefault((lam, a), [None] * len(FIG1_LEVELS) + [fin])[
            FIG1_LEVELS.index(lev)] = med
    for (lam, a), vals in table.items():
        lines.append(f"| {lam:g} | {a} | " + " | ".join(_fmt_it(v) for v in vals[:-1])
                     + f" | {vals[-1]:.1e} |")

    def at(lam, a, lev):
        v = table[(lam, a)][FIG1_LEVELS.index(lev)]
        return np.inf if v is None else v

    early = {lam: at(lam, 1.0, 1e-1) <= at(lam, 0.0, 1e-1) for lam in (0.0, 1.0)}
    late = {lam: at(lam, 1.0, 1e-12) <= at(lam, 0.0, 1e-12) for lam in (0.0, 1.0)}
    body = (
        f"Run: {_quick_full(full)}; {len(list(seeds))} sampling seeds, at most {epochs} n "
        "iterations, medians over seeds. Relative residual = (F(x_k) − F*)/(F(0) − F*).\n\n"
        + "\n".join(lines) + "\n\n"
        "Paper (Figure 1): a = 1 is the best choice at both λ; at λ = 0 it stalls after "
        "about 20,000 iterations (10 n) because coordinates with small L_i are rarely drawn; "
        "the effect is weaker at λ = 1.\n\n"
        f"Measured: a = 1 reaches 1e-1 no later than a = 0: λ=0 **{early[0.0]}**, λ=1 "
        f"**{early[1.0]}**; a = 1 reaches 1e-12 no later than a = 0: λ=0 **{late[0.0]}**, "
        f"λ=1 **{late[1.0]}**. Where a = 1 loses at high accuracy this is the paper's "
        "stalling effect (small-L_i coordinates are drawn with probability ∝ L_i).\n\n"
        "Instance: Nesterov's generator in its original form (`make_lasso_known_optimum`, "
        "`column_distribution='natural'`: columns only rescaled, so the L_i are heavy-tailed, "
        f"here from {L.min():.1e} to {L.max():.1e}), seed 1, 10 nonzeros per column (the paper "
        "does not give A's density). With L_i uniform in (0, 1] instead, a = 1 is slower than "
        "a = 0 from the start (the spread of L_i is what a = 1 exploits). λ = 0 uses the "
        f"same A and b with F* = 0: LSQR gives ‖Ax_LS − b‖/‖b‖ = {ls_res:.1e}, so b is in the "
        "range of A.\n")
    write_markdown(out_dir / "note.md", "RCDC Figure 1: power-law probabilities (55)",
                   [("Result", body)])
    stall0 = table[(0.0, 1.0)][-1] > 1e3 * max(table[(0.0, 0.0)][-1], 1e-16)
    ok = early[0.0] and early[1.0] and stall0
    write_verdict(out_dir, exp_id="rcdc-fig1",
                  claim="alpha = 1 best at both lambda; at lambda = 0 it stalls (small-L_i "
                        "coordinates rarely drawn)",
                  ours=f"alpha = 1 first to 1e-1 at lambda = 0: {early[0.0]}, at 1: "
                       f"{early[1.0]}; final rel. residual alpha = 1 / 0 at lambda = 0: "
                       f"{table[(0.0, 1.0)][-1]:.0e} / {table[(0.0, 0.0)][-1]:.0e}",
                  verdict="agrees" if ok else "partly" if early[0.0] or early[1.0] else "no",
                  reason=("fast start and stall of alpha = 1 as in the paper" if ok else
                          "see the note: alpha = 1 not ahead early or does not stall"),
                  full=full, evidence="note.md#result")
    return out_dir


# ------------------------------------------------------------------------------ Figure 2
FIG2_ALPHAS = (0.0, 0.2, 1.0)
FIG2_LEVELS = (1e-2, 1e-4, 1e-6, 1e-8, 1e-10)


def fig2_distributions(n, seed=0):
    """The four L_i laws of Figure 2 (plots 1-1, 1-2, 2-1, 2-2), as target arrays or names."""
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    return {
        "1-1 uniform(0,1)": "uniform",
        "1-2 98% 1e-6 / 2% 1e3": np.where(u < 0.98, 1e-6, 1e3),
        "2-1 70% 1 / 30% 100": np.where(u < 0.7, 1.0, 100.0),
        "2-2 50% 1 / 50% 100": np.where(u < 0.5, 1.0, 100.0),
    }


@register("rcdc-fig2", title="RCDC Figure 2: four Lipschitz-constant distributions, RCDC vs FG",
          paper=RCDC_PAPER,
          description="A in R^{2000x1000}; a in {0, 0.2, 1} against ISTA (FG) and FISTA.")
def run_fig2(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 2: RCDC with ``a ∈ {0, 0.2, 1}`` against full gradient on four L_i laws.

    A ∈ R^{2000×1000} (20 nonzeros per column), ‖x*‖₀ = 100, λ = 1e-3 (the paper gives
    neither; a small λ lets support columns carry L_i = 1e-6, see the note). FG is ISTA
    with ``L = 1.01 λ_max(AᵀA)``; FISTA is added. One FG iteration is counted as n
    coordinate iterations, as in the paper. Writes ``fig2_curves.csv``,
    ``fig2_summary.csv``, ``fig2.png``, ``note.md``.
    """
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    m, n, lam = 2000, 1000, 1e-3
    epochs = 600 if full else 120
    seeds = range(3) if full else range(1)
    curves, summary, missed = [], [], {}
    for dname, dist in fig2_distributions(n).items():
        inst = make_instance(m, n, support=100, lam=lam, seed=2, distribution=dist)
        missed[dname] = inst["info"]["n_target_missed"]
        A, b = inst["A"], inst["b"]
        res = instance_residual(inst)
        r0 = res(np.zeros(n))
        runs = {}
        for a in FIG2_ALPHAS:
            runs[f"RCDC a={a}"] = [cd_trace(A, b, lam, res, power=a, seed=s, epochs=epochs,
                                            per_epoch=1, target=1e-13 * r0) for s in seeds]
        runs["FG (ISTA)"] = [fg_trace(A, b, lam, res, iterations=epochs, target=1e-13 * r0)]
        runs["FISTA"] = [fg_trace(A, b, lam, res, accelerated=True, iterations=epochs,
                                  target=1e-13 * r0)]
        for meth, rr in runs.items():
            curves += [(dname, meth, r[0], r[1] / r0, r[2]) for r in rr[0]]
            for lev in FIG2_LEVELS:
                vals = [first_reach(rows, lev * r0) for rows in rr]
                med = float(np.median([np.inf if v is None else v for v in vals]))
                summary.append((dname, meth, lev, med if np.isfinite(med) else None,
                                float(np.median([rows[-1][1] / r0 for rows in rr]))))
    _write_csv(out_dir / "fig2_curves.csv",
               ["distribution", "method", "k_over_n", "rel_residual", "nnz"], curves)
    _write_csv(out_dir / "fig2_summary.csv",
               ["distribution", "method", "rel_level", "median_k_over_n_to_level",
                "final_rel_residual"], summary)

    fig = new_figure(figsize=(11, 8))
    axes = fig.subplots(2, 2).ravel()
    dnames = list(fig2_distributions(n))
    methods = list(dict.fromkeys(c[1] for c in curves))
    for ax, dname in zip(axes, dnames, strict=True):
        for meth in methods:
            arr = np.array([c[2:4] for c in curves if c[0] == dname and c[1] == meth])
            keep = arr[:, 1] > 0
            ax.semilogy(arr[keep, 0] * n, arr[keep, 1], label=meth.replace("a=", "α = "))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        ax.set_xlabel("iterations k (FG: iterations × n)")
        ax.set_ylabel("(F(x_k) − F*)/(F(0) − F*)")
        ax.set_title(dname)
        ax.legend(fontsize="small")
    fig.savefig(out_dir / "fig2.png", dpi=120)

    tab = {}
    for dname, meth, lev, med, fin in summary:
        tab.setdefault((dname, meth), [None] * len(FIG2_LEVELS) + [fin])[
            FIG2_LEVELS.index(lev)] = med
    lines = ["| L_i law | method | " + " | ".join(f"k/n to {lev:g}" for lev in FIG2_LEVELS)
             + " | final rel. residual |", "|---|---|" + "---|" * (len(FIG2_LEVELS) + 1)]
    for (dname, meth), vals in tab.items():
        lines.append(f"| {dname} | {meth} | " + " | ".join(_fmt_it(v) for v in vals[:-1])
                     + f" | {vals[-1]:.1e} |")
    meas = []
    for dname in dnames:
        a0, a1, fg = (tab[(dname, k)] for k in ("RCDC a=0.0", "RCDC a=1.0", "FG (ISTA)"))
        ahead = all(a1[i] is not None and a1[i] <= fg[i]
                    for i in range(len(FIG2_LEVELS)) if fg[i] is not None)
        meas.append(
            f"- {dname}: a = 0 reaches 1e-10: **{a0[-2] is not None}**; a = 1 reaches every "
            f"level FG reaches no later than FG: **{ahead}**; final residuals a = 1 "
            f"{a1[-1]:.1e}, FG {fg[-1]:.1e}; a = 1 reaches 1e-2 at k/n = {_fmt_it(a1[0])}, "
            f"a = 0 at {_fmt_it(a0[0])}")
    body = (
        f"Run: {_quick_full(full)}; RCDC medians over {len(list(seeds))} sampling seed(s); "
        f"at most {epochs} n iterations (FG/FISTA: {epochs} iterations).\n\n"
        + "\n".join(lines) + "\n\nMeasured:\n\n" + "\n".join(meas) + "\n\n"
        "Paper (Figure 2): on 1-1 a = 0 and a = 0.2 behave alike while a = 1 and FG struggle "
        "below 1e-5 and 1e-2; on 1-2 (98% of L_i = 1e-6) FG and a = 1 get within 1e-4 and stall, "
        "a = 0 solves the problem in about 2·10^5 iterations; on 2-1/2-2 a = 0 and 0.2 are best "
        "in the long run; a = 1 is always better than FG.\n\n"
        "Reading the table: compare the k/n columns row by row; FG's iterations are already "
        "multiplied by n. Support columns whose target L_i is too small to carry "
        "a_iᵀv* = ±λ are raised by the generator: "
        + ", ".join(f"{k}: {v}" for k, v in missed.items())
        + " columns. The paper's λ and ‖x*‖₀ for this figure are not stated (we use λ = 1e-3, "
        "‖x*‖₀ = 100).\n")
    write_markdown(out_dir / "note.md", "RCDC Figure 2: Lipschitz-constant distributions, RCDC "
                   "vs full gradient", [("Result", body)])
    solved = [tab[(d, "RCDC a=0.0")][-2] is not None for d in dnames]
    ahead = [all(tab[(d, "RCDC a=1.0")][i] is not None
                 and tab[(d, "RCDC a=1.0")][i] <= tab[(d, "FG (ISTA)")][i]
                 for i in range(len(FIG2_LEVELS)) if tab[(d, "FG (ISTA)")][i] is not None)
             for d in dnames]
    n_ok = sum(a and b for a, b in zip(solved, ahead, strict=True))
    write_verdict(out_dir, exp_id="rcdc-fig2",
                  claim="alpha = 0 solves all four L_i laws; alpha = 1 always better than FG, "
                        "both stall",
                  ours=f"alpha = 0 reaches 1e-10 on {sum(solved)} of 4 laws; alpha = 1 ahead "
                       f"of FG at every level on {sum(ahead)} of 4",
                  verdict="agrees" if n_ok == 4 else "partly" if n_ok >= 2 else "no",
                  reason=("all four panels as the paper describes" if n_ok == 4 else
                          f"{4 - n_ok} of the 4 laws differ, see the note"),
                  full=full, evidence="note.md#result")
    return out_dir


# ------------------------------------------------------------------------------ Figure 3
@register("rcdc-fig3", title="RCDC Figure 3: nonzeros of x_k, correct nonzeros cn_k and "
          "incorrect zeros iz_k", paper=RCDC_PAPER,
          description="m=500, n=1000, |x*|_0=100, lambda=1, UCDC from x0=0.")
def run_fig3(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 3: ‖x_k‖₀, ``cn_k`` and ``iz_k`` along UCDC (§6.1, "Speedup by shrinking").

    m = 500, n = 1,000, ‖x*‖₀ = 100, λ = 1, x0 = 0, recorded every n/10 iterations until
    F(x_k) − F* ≤ 1e-14 (then a further 5 n). Writes ``fig3_curves.csv``,
    ``fig3_summary.csv`` (per sampling seed: k/n where cn_k first equals ‖x*‖₀, where
    ‖x_k‖₀ peaks, where the support first equals supp(x*) for good), ``fig3_x_scale.csv``
    and ``fig3_rows.csv`` (the same events against the size of x* and against m, all else
    fixed), ``fig3.png``, ``note.md``.
    """
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    n = 1000

    def extra_for(on):
        def extra(x):
            nz = x != 0
            return int(np.sum(nz & on)), int(np.sum(~nz & on)), bool(np.array_equal(nz, on))
        return extra

    def events(rows, s_star):
        """(k/n cn full, k/n peak, peak, k/n decrease, k/n support final, k/n end, residual)."""
        ks = np.array([r[0] for r in rows])
        nnz = np.array([r[2] for r in rows])
        cn = np.array([r[4] for r in rows])
        same = np.array([r[6] for r in rows])
        k_cn = float(ks[np.argmax(cn == s_star)]) if np.any(cn == s_star) else None
        ipk = int(np.argmax(nnz))
        # decrease: first record after the peak below 90% of it
        low = np.flatnonzero((np.arange(ks.size) > ipk) & (nnz < 0.9 * nnz[ipk]))
        k_down = float(ks[low[0]]) if low.size else None
        bad = np.flatnonzero(~same)  # last time the support differed from supp(x*)
        k_supp = float(ks[bad[-1] + 1]) if bad.size and bad[-1] + 1 < ks.size else (
            0.0 if not bad.size else None)
        return (k_cn, float(ks[ipk]), int(nnz[ipk]), k_down, k_supp, float(ks[-1]),
                float(rows[-1][1]))

    def trace(x_scale, seed, epochs, m=500):
        inst = make_instance(m, n, support=100, lam=1.0, seed=3, distribution="natural",
                             x_scale=x_scale)
        on = inst["x_star"] != 0
        target = TARGET * max(1.0, inst["F_star"])
        rows = cd_trace(inst["A"], inst["b"], 1.0, instance_residual(inst), seed=seed,
                        epochs=epochs, per_epoch=10, target=target, extra=extra_for(on))
        return rows, int(on.sum())

    seeds = range(5) if full else range(1)
    curves, summary = [], []
    for s in seeds:
        rows, s_star = trace(X_SCALE, s, 400)
        if s == 0:
            curves = rows
        summary.append((s, *events(rows, s_star)))
    # the candidates for the size of x* the paper does not give (sampling seed 0)
    sweep = []
    for xs in X_SCALE_CANDIDATES:
        rows, s_star = (curves, 100) if xs == X_SCALE else trace(xs, 0, 400 if full else 200)
        sweep.append((xs, *events(rows, s_star)))
    # the cause of the slow return: m = 500 < n makes f not strongly convex (the same
    # generator, x* and sampling seed with more rows, i.e. m/n the only change)
    m_sweep, m_curves = [], {}
    for m in FIG3_ROWS:
        rows, s_star = (curves, 100) if m == 500 else trace(X_SCALE, 0, 400 if full else 200, m)
        m_curves[m] = rows
        m_sweep.append((m, *events(rows, s_star)))
    _write_csv(out_dir / "fig3_curves.csv",
               ["k_over_n", "residual", "nnz", "seconds", "cn", "iz", "support_equal"], curves)
    header = ["k_over_n_cn_full", "k_over_n_nnz_peak", "nnz_peak", "k_over_n_decrease",
              "k_over_n_support_final", "k_over_n_end", "final_residual"]
    _write_csv(out_dir / "fig3_summary.csv", ["seed", *header], summary)
    _write_csv(out_dir / "fig3_x_scale.csv", ["x_scale", *header], sweep)
    _write_csv(out_dir / "fig3_rows.csv", ["m", *header], m_sweep)

    fig = new_figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    arr = np.array([r[:6] for r in curves], dtype=float)
    ax1.plot(arr[:, 0], arr[:, 2], "b-", label="‖x_k‖₀ (nonzeros)")
    ax1.plot(arr[:, 0], arr[:, 4], "g--", label="cn_k (correct nonzeros)")
    for m, ls in zip(FIG3_ROWS[1:], (":", "-."), strict=True):
        rows = np.array([r[:3] for r in m_curves[m]], dtype=float)
        ax1.plot(rows[:, 0], rows[:, 2], "k" + ls, lw=0.9,
                 label=f"‖x_k‖₀ with m = {m:,} (only change)")
    ax1.axhline(100, color="gray", lw=0.5)
    ax1.set_xlabel("k/n")
    ax1.set_ylabel("count")
    ax1.set_title(f"m = 500 (paper), n = {n:,}, ‖x*‖₀ = 100")
    ax1.legend(fontsize="small")
    ax2.plot(arr[:, 0], arr[:, 5], "r-", label="iz_k (incorrect zeros)")
    ax2.set_xlabel("k/n")
    ax2.set_ylabel("iz_k")
    ax2.set_title("incorrect zeros iz_k = ‖x*‖₀ − cn_k")
    ax2.legend()
    fig.savefig(out_dir / "fig3.png", dpi=120)

    def row(lead, e):
        k_cn, k_peak, peak, k_down, k_supp, k_end, _ = e
        return (f"| {lead} | {_fmt_it(k_cn)} | {k_peak:.1f} | {peak} | {_fmt_it(k_down)} | "
                f"{_fmt_it(k_supp)} | {k_end:.1f} |")

    head = ("| k/n: cn_k = ‖x*‖₀ | k/n: peak ‖x_k‖₀ | peak ‖x_k‖₀ | k/n: below 90% of the "
            "peak | k/n: support = supp(x*) from then on | k/n at the target or the cap |")
    lines = ["| seed " + head, "|---" * 7 + "|"] + [row(r[0], r[1:]) for r in summary]
    sweep_lines = ["| x* entries up to " + head, "|---" * 7 + "|"] + [
        row(f"{r[0]:g}", r[1:]) for r in sweep]
    m_lines = ["| rows m " + head, "|---" * 7 + "|"] + [
        row(f"{r[0]:,}" + (" (paper)" if r[0] == 500 else ""), r[1:]) for r in m_sweep]
    ratio = {r[0]: (r[5] / r[4] if r[5] is not None and r[4] else math.inf) for r in m_sweep}
    k_cn, k_peak, peak, k_down, k_supp, _, _ = summary[0][1:]
    overshoot = peak >= 0.85 * n and k_peak <= 10 and k_down is not None and 10 <= k_down <= 30
    settles = k_supp is not None and k_down is not None and k_supp <= 2.5 * k_down
    verdict = "agrees" if overshoot and settles else "partly" if overshoot else "no"
    body = (
        f"Run: {_quick_full(full)}; {len(list(seeds))} sampling seed(s), records every n/10 "
        "iterations, until F(x_k) − F* ≤ 1e-14·max(1, F*).\n\n" + "\n".join(lines) + "\n\n"
        "Paper (Figure 3, m = 500, n = 1,000, ‖x*‖₀ = 100): ‖x_k‖₀ grows to just below n in "
        "about 6 n iterations, decreases from about 15 n and reaches ‖x*‖₀ at about 30 n; "
        "cn_k reaches ‖x*‖₀ at about 3 n (iz_k ≈ 0 from k0 ≈ 3n). This is what motivates "
        "q-shrinking (rcdc-fig4).\n\n"
        f"Verdict: overshoot (peak ≥ 0.85 n by 10 n, decrease between 10 n and 30 n) "
        f"**{overshoot}**; back to supp(x*) within 2.5× the decrease time (paper: 30 n / 15 n) "
        f"**{settles}** → **{verdict}**.\n\n"
        "The parameter the paper does not give. The paper's generator is 'a variant of' "
        "Nesterov's (CORE DP 2007/76, §6), whose x* has entries of size up to ρ/√‖x*‖₀ with a "
        "free parameter ρ; the paper states neither ρ nor A's density. The size of x* decides "
        "the overshoot: from x0 = 0 the first gradient is −Aᵀb = −Aᵀv* − AᵀAx*, and "
        "|a_iᵀv*| < λ off the support, so coordinate i leaves zero only when AᵀAx* pushes "
        "it over λ. The same instance and sampling seed with |x*_i| uniform in (0, max]:\n\n"
        + "\n".join(sweep_lines) + "\n\n"
        "With max |x*_i| = 1 (the generator's default, the earlier version of this run) "
        "‖x_k‖₀ peaks at about a quarter of n and there is no overshoot to speak of; from "
        f"about 50 on it peaks just below n at about 6 n and falls from about 15 n, as in the "
        f"paper. We use {X_SCALE:g}. What we do not reproduce is the quick return: ‖x_k‖₀ "
        "reaches ‖x*‖₀ only after about 10× the decrease time (the paper: 2×), for every "
        "size tried; in our trials neither the density (5 to 100 nonzeros per column), the "
        "L_i law (uniform or Nesterov's scaling) nor a trial generator with the inactive "
        "correlations |a_iᵀv*| capped at 0.1λ brought it below 6×.\n\n"
        "The cause: the shape m = 500 < n. With fewer rows than columns f is not strongly "
        "convex (and barely so at m = n: a square random matrix is ill-conditioned), and while ‖x_k‖₀ > m the iterate fits b with many more columns than it "
        "needs; only the λ‖x‖₁ term pulls it towards the sparse x*, a slow drift (the "
        "paper's own fat instance, Table 8, needs thousands of passes). The same "
        "generator, x* and sampling seed with only m changed:\n\n"
        + "\n".join(m_lines) + "\n\n"
        f"Return / decrease time: {', '.join(f'm = {m:,}: {ratio[m]:.1f}×' for m in FIG3_ROWS)} "
        f"(paper 2×, verdict threshold 2.5×); support final at "
        f"{', '.join(f'{_fmt_it(r[5])} n (m = {r[0]:,})' for r in m_sweep)}. With m = "
        f"{FIG3_ROWS[-1]:,} rows the return comes near the paper's 30 n, as on its tall "
        "Table 6 instance (rcdc-table6 agrees). So either the paper's Figure 3 instance was "
        "better conditioned than its stated shape makes ours, through a detail of the "
        "'variant' generator it does not give, or its shape differs from the stated one; "
        "the verdict is taken at the stated m = 500 and stays **partly**. Differences from "
        "Nesterov's generator as published (CORE DP 2007/76, §6) that we know of: it takes "
        "as support the ‖x*‖₀ columns with the largest |b_iᵀv*| (ours: random nonempty "
        "columns), rescales every inactive column to |a_iᵀv*| = ξ_iλ (ours keeps those "
        "already below λ) and draws v* uniform in [0, 1]^m, normalised (ours N(0, I); its "
        "scale is absorbed by the size of x*: x* entries up to 50 here match Nesterov's "
        "ρ = 1); a trial implementation of these three rules (ρ from 1 to 10, 20 or 500 "
        "nonzeros per column) left the return at 8–15× the decrease time at m = 500 (not "
        "part of this run).\n\n"
        "Instance: Nesterov's generator in its original form (`column_distribution='natural'`, "
        "seed 3), 20 nonzeros per column, λ = 1.\n")
    write_markdown(out_dir / "note.md", "RCDC Figure 3: development of the nonzeros of x_k",
                   [("Result", body)])
    write_verdict(out_dir, exp_id="rcdc-fig3",
                  claim="‖x_k‖₀ grows to just below n by ~6n, falls from ~15n, reaches "
                        "‖x*‖₀ at ~30n",
                  ours=f"peak {peak} of {n} at {k_peak:.1f}n, falls at {_fmt_it(k_down)}n, "
                       f"support final at {_fmt_it(k_supp)}n",
                  verdict=verdict,
                  reason=("overshoot and return as in the paper" if verdict == "agrees" else
                          "overshoot reproduced; at the stated m = 500 < n (f not strongly "
                          f"convex) the return takes {ratio[500]:.0f}x the decrease time "
                          f"(paper 2x), {ratio[FIG3_ROWS[-1]]:.1f}x with m = "
                          f"{FIG3_ROWS[-1]:,}, the only change" if verdict == "partly" else
                          "no overshoot of ‖x_k‖₀ on this instance"),
                  full=full, evidence="note.md#result")
    return out_dir


# ------------------------------------------------------------------------------ Figure 5
@register("rcdc-fig5", title="RCDC Figure 5: x0 = 0 against x0 = x_LS", paper=RCDC_PAPER,
          description="The Figure 4 instance (lambda=1) and a tall one (m=2000, n=1000, "
          "lambda=0.01), UCDC.")
def run_fig5(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 5: UCDC from ``x0 = 0`` and from ``x0 = x_LS`` (scipy LSQR).

    Case "fig4": the rcdc-fig4 instance (m = 500, n = 1,000, ‖x*‖₀ = 50, λ = 1), as in the
    paper; with m < n, LSQR returns the minimum-norm least-squares solution, which is not
    the limit of x*(λ) as λ → 0. Case "tall": m = 2,000, n = 1,000, ‖x*‖₀ = 50, λ = 0.01,
    where x_LS is unique and x* → x_LS as λ → 0 (the paper's intuition for x_LS). Records
    every n/2 steps until F(x_k) − F* ≤ 1e-14. Writes ``fig5_curves.csv``,
    ``fig5_summary.csv``, ``fig5.png``, ``note.md``.
    """
    from scipy.sparse.linalg import lsqr

    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    A, b, x_star, v_star, F_star = _instance(0, full)
    cases = {"fig4 (m=500, n=1000, λ=1)": dict(A=A, b=b, x_star=x_star, c=A.T @ v_star,
                                                lam=1.0, F_star=F_star),
             "tall (m=2000, n=1000, λ=0.01)": make_instance(2000, 1000, support=50, lam=0.01,
                                                            seed=5)}
    seeds = range(10) if full else range(2)
    curves, summary = [], []
    for case, inst in cases.items():
        res = instance_residual(inst)
        x_ls = lsqr(inst["A"], inst["b"], atol=1e-14, btol=1e-14, iter_lim=20000)[0]
        target = TARGET * max(1.0, inst["F_star"])
        for name, x0 in (("x0 = 0", None), ("x0 = x_LS", x_ls)):
            for s in seeds:
                rows = cd_trace(inst["A"], inst["b"], inst["lam"], res, x0=x0, seed=s,
                                epochs=600, target=target)
                if s == 0:
                    curves += [(case, name, *r) for r in rows]
                summary.append((case, name, s, rows[0][1], first_reach(rows, 1e-5),
                                first_reach(rows, 1e-10), first_reach(rows, target)))
    _write_csv(out_dir / "fig5_curves.csv",
               ["case", "start", "k_over_n", "residual", "nnz", "seconds"], curves)
    _write_csv(out_dir / "fig5_summary.csv",
               ["case", "start", "seed", "initial_residual", "k_over_n_to_1e-5",
                "k_over_n_to_1e-10", "k_over_n_to_target"], summary)

    fig = new_figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    for ax, case in zip(axes, cases, strict=True):
        for name, style in (("x0 = 0", "b-"), ("x0 = x_LS", "r--")):
            arr = np.array([c[2:4] for c in curves if c[0] == case and c[1] == name])
            keep = arr[:, 1] > 0
            ax.semilogy(arr[keep, 0], arr[keep, 1], style, label=name)
        ax.axhline(1e-5, color="gray", lw=0.5)
        ax.set_xlabel("k/n")
        ax.set_ylabel("F(x_k) − F*")
        ax.set_title(case)
        ax.legend()
    fig.savefig(out_dir / "fig5.png", dpi=120)

    def med(case, name, col):
        vals = [np.inf if r[col] is None else r[col] for r in summary
                if r[0] == case and r[1] == name]
        return float(np.median(vals))

    lines = ["| case | start | F(x0) − F* | median k/n to 1e-5 | to 1e-10 | to the target |",
             "|---|---|---|---|---|---|"]
    speed, first = [], {}
    for case in cases:
        for name in ("x0 = 0", "x0 = x_LS"):
            r0 = next(r[3] for r in summary if r[0] == case and r[1] == name)
            lines.append(f"| {case} | {name} | {r0:.3g} | {med(case, name, 4):.3g} | "
                         f"{med(case, name, 5):.3g} | {med(case, name, 6):.3g} |")
        ratios = [med(case, "x0 = 0", c) / med(case, "x0 = x_LS", c) for c in (4, 5, 6)]
        first[case] = ratios[0]
        speed.append(f"{case}: to 1e-5 **{ratios[0]:.2f}×**, to 1e-10 {ratios[1]:.2f}×, "
                     f"to the target {ratios[2]:.2f}×")
    r_fig4, r_tall = first.values()
    verdict = "agrees" if 2.0 <= r_fig4 <= 8.0 else "partly" if r_fig4 > 1.0 else "no"
    body = (
        f"Run: {_quick_full(full)}; medians over {len(list(seeds))} sampling seeds.\n\n"
        + "\n".join(lines) + "\n\n"
        "Speed-up of x_LS over 0 (ratio of median k/n; > 1 means x_LS is faster): "
        + "; ".join(speed) + ".\n\n"
        "Paper (Figure 5, the Figure 4 instance, λ = 1): starting from x_LS gives a 4× "
        "speed-up for pushing F(x_k) − F* below 1e-5, and x_LS should be preferable 'when λ "
        "is small'.\n\n"
        f"Verdict: speed-up to 1e-5 on the Figure 4 instance {r_fig4:.2f}× (agrees when "
        f"within a factor 2 of the paper's 4×, i.e. in [2, 8]) → **{verdict}**.\n\n"
        "The cause of the earlier disagreement (0.77×) was the instance, not x_LS: with "
        "|x*_i| ≤ 1 (the generator's default) F(0) − F* is small and the minimum-norm x_LS "
        "of the underdetermined system (m < n) starts above F(0); with the size of x* that "
        "reproduces the paper's Figure 3 (rcdc-fig3, |x*_i| up to "
        f"{X_SCALE:g}), F(0) − F* is about 3·10⁶ and x_LS, which fits b exactly, starts orders of "
        "magnitude lower and stays ahead. The paper does not say how it computed x_LS for "
        "m < n; we take LSQR's minimum-norm solution. On the tall instance (m > n, small λ, "
        "x* close to the unique x_LS) the x_LS start is faster too, the paper's intuition.\n\n"
        "Instances: rcdc-fig4's (generator seed 0, Nesterov's scaling, 20 nonzeros per "
        f"column, |x*_i| up to {X_SCALE:g}) and a tall one (seed 5, L_i uniform in (0, 1], "
        "20 nonzeros per column); x_LS by `scipy.sparse.linalg.lsqr` (atol = btol = 1e-14); "
        "target F(x_k) − F* ≤ 1e-14·max(1, F*).\n")
    write_markdown(out_dir / "note.md", "RCDC Figure 5: choice of the initial point",
                   [("Result", body)])
    write_verdict(out_dir, exp_id="rcdc-fig5",
                  claim="x0 = x_LS gives a 4x speed-up to F - F* <= 1e-5 (Figure 4 instance)",
                  ours=f"{r_fig4:.2f}x on the Figure 4 instance, {r_tall:.2f}x on a tall one",
                  verdict=verdict,
                  reason=("speed-up within a factor 2 of the paper's" if verdict == "agrees"
                          else "x_LS faster but not by the paper's factor" if verdict ==
                          "partly" else "x_LS start not faster on the Figure 4 instance"),
                  full=full, evidence="note.md#result")
    return out_dir


# ------------------------------------------------------------------------------ Figure 6
FIG6_TARGET = 1e-10


@register("rcdc-fig6", title="RCDC Figure 6: random x0 on the segment [0, x_LS]",
          paper=RCDC_PAPER,
          description="m=2000, n=1000, |x*|_0=50, lambda in {0.01, 1}; 50 random starts.")
def run_fig6(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 6: UCDC from ``x0 = t·x_LS``, ``t ~ U(0, 1)``, against the two endpoints.

    m = 2,000, n = 1,000 (m > n, so x_LS is unique and is x* at λ = 0, as the paper
    assumes), ‖x*‖₀ = 50, one generator instance per λ ∈ {0.01, 1};
    50 random starts (quick: 4), all with the same sampling seed (common random numbers).
    Measures k/n until F(x_k) − F* ≤ 1e-10. Writes ``fig6_runs.csv``, ``fig6_curves.csv``,
    ``fig6.png``, ``note.md``.
    """
    from scipy.sparse.linalg import lsqr

    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    n_points = 50 if full else 4
    runs, curves, verdicts = [], [], {}
    for lam in (0.01, 1.0):
        inst = make_instance(2000, 1000, support=50, lam=lam, seed=6)
        A, b = inst["A"], inst["b"]
        res = instance_residual(inst)
        x_ls = lsqr(A, b, atol=1e-14, btol=1e-14, iter_lim=20000)[0]
        ts = np.concatenate([[0.0, 1.0], np.random.default_rng(6).random(n_points)])
        for i, t in enumerate(ts):
            rows = cd_trace(A, b, lam, res, x0=t * x_ls, seed=0, epochs=500, target=FIG6_TARGET)
            kind = "x0 = 0" if i == 0 else ("x0 = x_LS" if i == 1 else "segment")
            k = first_reach(rows, FIG6_TARGET)
            runs.append((lam, kind, float(t), rows[0][1], k))
            curves += [(lam, kind, float(t), r[0], r[1]) for r in rows]
        ends = [r[4] for r in runs if r[0] == lam and r[1] != "segment"]
        seg = [r[4] for r in runs if r[0] == lam and r[1] == "segment"]
        best_end = min(np.inf if v is None else v for v in ends)
        seg_vals = np.array([np.inf if v is None else v for v in seg])
        verdicts[lam] = (best_end, float(seg_vals.min()), float(np.median(seg_vals)),
                         int(np.sum(seg_vals < best_end)))
    _write_csv(out_dir / "fig6_runs.csv",
               ["lam", "start", "t", "initial_residual", "k_over_n_to_1e-10"], runs)
    _write_csv(out_dir / "fig6_curves.csv",
               ["lam", "start", "t", "k_over_n", "residual"], curves)

    fig = new_figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    for ax, lam in zip(axes, (0.01, 1.0), strict=True):
        for kind, t in {(r[1], r[2]) for r in runs if r[0] == lam}:
            arr = np.array([c[3:5] for c in curves if c[0] == lam and c[2] == t and c[1] == kind])
            style = {"x0 = 0": ("b-", 1.8), "x0 = x_LS": ("r--", 1.8)}.get(kind, ("g-", 0.4))
            ax.semilogy(arr[:, 0], np.maximum(arr[:, 1], 1e-18), style[0], lw=style[1],
                        label=kind if kind != "segment" or t == max(
                            r[2] for r in runs if r[0] == lam and r[1] == "segment") else None)
        ax.axhline(FIG6_TARGET, color="gray", lw=0.5)
        ax.set_xlabel("k/n")
        ax.set_ylabel("F(x_k) - F*")
        ax.set_title(f"λ = {lam:g}")
        ax.legend()
    fig.savefig(out_dir / "fig6.png", dpi=120)

    lines = ["| λ | better endpoint: k/n | best segment start: k/n | median segment start | "
             "segment starts beating the better endpoint |", "|---|---|---|---|---|"]
    for lam, (be, sb, sm, nb) in verdicts.items():
        lines.append(f"| {lam:g} | {be:.3g} | {sb:.3g} | {sm:.3g} | {nb} of {n_points} |")
    ends_tab = ["| λ | k/n from 0 | k/n from x_LS |", "|---|---|---|"]
    for lam in (0.01, 1.0):
        e = {r[1]: r[4] for r in runs if r[0] == lam and r[1] != "segment"}
        ends_tab.append(f"| {lam:g} | {_fmt_it(e['x0 = 0'])} | {_fmt_it(e['x0 = x_LS'])} |")
    body = (
        f"Run: {_quick_full(full)}; {n_points} random starts per λ, one sampling seed for all "
        f"(common random numbers), target F(x_k) − F* ≤ {FIG6_TARGET:g}, checked every n/2.\n\n"
        + "\n".join(ends_tab) + "\n\n" + "\n".join(lines) + "\n\n"
        "Paper (Figure 6, λ = 0.01 left, λ = 1 right): there seems to be no advantage in "
        "starting from a point of the segment between x_LS and 0 rather than from the better "
        "of the two endpoints. The last column counts how many segment starts were strictly "
        "faster than the better endpoint (at check resolution n/2).\n\n"
        "Instances: Nesterov's generator (seed 6), m = 2,000, n = 1,000, 20 nonzeros per "
        "column, one instance per λ (x* and F* depend on λ); x_LS by LSQR. The paper does not "
        "give this figure's size; we take m > n because only then is x* = x_LS at λ = 0, "
        "the relation the paper invokes (on m < n instances x_LS is the minimum-norm "
        "solution, dense and slow to sparsify, see rcdc-fig5).\n")
    write_markdown(out_dir / "note.md", "RCDC Figure 6: starting points on the segment "
                   "[0, x_LS]", [("Result", body)])
    beats = sum(v[3] for v in verdicts.values())
    # "no advantage": at most 10% of the segment starts beat the better endpoint
    ok = all(v[3] <= 0.1 * n_points for v in verdicts.values())
    write_verdict(out_dir, exp_id="rcdc-fig6",
                  claim="no advantage in starting on the segment [0, x_LS] over the better "
                        "endpoint",
                  ours=f"{beats} of {2 * n_points} segment starts beat the better endpoint "
                       "(lambda = 0.01 and 1)",
                  verdict="agrees" if ok else "partly",
                  reason=("no segment start clearly better" if ok else
                          "some segment starts beat both endpoints, see the note"),
                  full=full, evidence="note.md#result")
    return out_dir


# ------------------------------------------------------------------- Table 11 and Figure 7
SVM_DATASETS = (("reuters-money-fx", "reuters-money-fx.t"), ("a9a", "a9a.t"))
GAMMAS = {"squared_hinge": (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0),
          "logistic": (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)}
GAMMAS_QUICK = {"squared_hinge": (0.0625, 0.25, 1.0, 4.0, 16.0),
                "logistic": (0.5, 1.0, 4.0, 16.0, 64.0)}
LOSS_NAMES = {"squared_hinge": "L2-SVM", "logistic": "LG"}


@functools.lru_cache(maxsize=4)
def _svm_data(name, test_name, seed=0):
    """Train (90 %), CV (10 %) and test splits; the paper's 90/10 split of the train set.

    Cached: rcdc-table11 and rcdc-fig7 run in one process (tests, ``reproduce all``) load
    each dataset once.
    """
    from .faceoff import load_dataset

    X, y = load_dataset(name)
    Xt, yt = load_dataset(test_name)
    if Xt.shape[1] != X.shape[1]:
        Xt = Xt[:, :X.shape[1]] if Xt.shape[1] > X.shape[1] else _pad(Xt, X.shape[1])
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(round(0.9 * X.shape[0]))
    tr, cv = np.sort(perm[:cut]), np.sort(perm[cut:])
    return X[tr], y[tr], X[cv], y[cv], Xt, yt


def _pad(X, width):
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))


def _accuracy(X, y, w):
    return float(np.mean(np.where(X @ w >= 0, 1.0, -1.0) == y))


def ucdc_classifier(X, y, loss, gamma, *, epochs, seed=0, record=None, tol=1e-5):
    """UCDC on the paper's ``F(w) = γ Σ_j L(w; x_j, y_j) + ‖w‖₁`` (57), Table 10 steps.

    Equivalent to cdlearn's ``P = 1/n Σ φ + λ‖w‖₁`` with ``λ = 1/(γ n)`` (P = F/(γn)):
    primal CD with uniform sampling and the fixed ``1/L_i`` step, where
    ``L_i = β‖X_i‖²/n`` is Table 10's constant divided by γn (β = 2 for the L2-SVM, 1/4
    for the logistic loss); the margins are updated in O(o_i) per step (58). No bias, no
    scaling (as in the paper). Stops at relative duality gap ``tol`` (checked every 5
    epochs) or after ``epochs`` epochs. ``record(k, w)`` is called after every epoch.
    Returns ``(w, epochs_run, rel_gap)``.
    """
    from ..api import make_problem
    from ..solvers.primal_cd import PrimalCDState

    n = X.shape[0]
    problem = make_problem(X, y, loss=loss, penalty="l1", lam=1.0 / (gamma * n))
    st = PrimalCDState(problem, sampling="uniform", seed=seed, step="lipschitz")
    ref = st.reference()
    gap = np.inf
    if record is not None:
        record(0, st.w)
    for k in range(1, epochs + 1):
        st.run_epoch()
        if record is not None:
            record(k, st.w)
        if k % 5 == 0 or k == epochs:
            primal, _, g = st.certificate()
            gap = g / ref
            if gap <= tol:
                break
    return st.w.copy(), k, gap


@register("rcdc-table11", title="RCDC Table 11: L1-regularized L2-SVM and logistic regression, "
          "accuracy against gamma", paper=RCDC_PAPER,
          description="reuters-money-fx and a9a (rcv1 substitute); 90/10 train/CV split; TA on test.")
def run_table11(out_dir: Path, full: bool) -> Path:
    """RCDC Table 11: CV accuracy and test accuracy of UCDC for a grid of γ (§6.2).

    rcv1 is not available here: ``reuters-money-fx`` and ``a9a`` (their own train/test
    splits) replace it. The classifier is trained on 90 % of the training set (fixed
    random split, seed 0); the other 10 % is the cross-validation set (CV-A); TA is
    measured on the test set. Writes ``table11.csv``, ``table11.png``, ``note.md``.
    """
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    epochs = 300 if full else 30
    grid = GAMMAS if full else GAMMAS_QUICK
    datasets = SVM_DATASETS if full else SVM_DATASETS[:1]
    rows = []
    for name, tname in datasets:
        X, y, Xc, yc, Xt, yt = _svm_data(name, tname)
        for loss in ("squared_hinge", "logistic"):
            for gamma in grid[loss]:
                t0 = time.perf_counter()
                w, k, gap = ucdc_classifier(X, y, loss, gamma, epochs=epochs)
                sec = time.perf_counter() - t0
                rows.append((name, LOSS_NAMES[loss], gamma, _accuracy(Xc, yc, w),
                             _accuracy(Xt, yt, w), int(np.count_nonzero(w)), k, gap, sec,
                             float(np.mean(yt == -1.0))))
    _write_csv(out_dir / "table11.csv",
               ["dataset", "loss", "gamma", "cv_accuracy", "test_accuracy", "nnz_w", "epochs",
                "rel_gap", "seconds", "majority_test_accuracy"], rows)

    fig = new_figure(figsize=(5 * len(datasets), 4))
    axes = np.atleast_1d(fig.subplots(1, len(datasets)))
    for ax, (name, _) in zip(axes, datasets, strict=True):
        for loss in ("L2-SVM", "LG"):
            arr = np.array([(r[2], r[3], r[4]) for r in rows if r[0] == name and r[1] == loss])
            ax.semilogx(arr[:, 0], 100 * arr[:, 1], "o-", label=f"{loss} CV-A")
            ax.semilogx(arr[:, 0], 100 * arr[:, 2], "s--", label=f"{loss} TA")
        ax.set_xlabel("γ")
        ax.set_ylabel("accuracy (%)")
        ax.set_title(name)
        ax.legend(fontsize="small")
    fig.savefig(out_dir / "table11.png", dpi=120)

    lines = ["| dataset | loss | γ | CV-A | TA | ‖w‖₀ | epochs | rel. gap |",
             "|---|---|---|---|---|---|---|---|"]
    best = []
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:g} | {100 * r[3]:.1f}% | {100 * r[4]:.1f}% | "
                     f"{r[5]} | {r[6]} | {r[7]:.1e} |")
    for name, _ in datasets:
        for loss in ("L2-SVM", "LG"):
            sub = [r for r in rows if r[0] == name and r[1] == loss]
            b = max(sub, key=lambda r: (r[3], -abs(np.log(r[2]))))
            best.append(f"{name} {loss}: γ = {b[2]:g} (CV-A {100 * b[3]:.1f}%, TA "
                        f"{100 * b[4]:.1f}%; majority class {100 * b[9]:.1f}%)")
    body = (
        f"Run: {_quick_full(full)}; datasets: {', '.join(d for d, _ in datasets)}"
        f"{'' if full else ' (quick: a9a only in the full run), γ grid thinned'}; UCDC with "
        f"Table 10's 1/L_i steps, at most {epochs} epochs or relative duality gap 1e-5. The "
        "runs stop at the epoch cap, not at the gap: the rel. gap column is far from 0 on a9a "
        "(λ = 1/(γn) ≈ 3e-5 and exactly collinear one-hot features make it badly conditioned; "
        "cdlearn's Newton-step primal CD does not close that gap in 3,000 epochs either), while "
        "the accuracies no longer move (rcdc-fig7 shows TA against passes).\n\n"
        + "\n".join(lines) + "\n\n"
        "Best γ by cross-validation: " + "; ".join(best) + ".\n\n"
        "Paper (Table 11, rcv1.binary): best γ = 1 for both losses (CV-A 97.0% / 96.4%, TA "
        "95.8% / 95.2%). Its logistic rows for γ ≠ 1 (0% to 43%, below the majority class) "
        "cannot come from a converged L1-logistic fit — a loss that, properly minimised, never "
        "does worse than the constant classifier on its own training data by that much; we do "
        "not reproduce them and our logistic accuracy varies smoothly with γ.\n\n"
        "Substitutes: rcv1 is not available here, so reuters-money-fx (train 7,770 / test "
        "3,299, 8,315 features) and a9a (train 32,561 / test 16,281, 123 features) are used, "
        "each with the paper's protocol: 90% of the training set to train, 10% for "
        "cross-validation (seed 0), test accuracy on the test set. No bias, no scaling.\n")
    write_markdown(out_dir / "note.md", "RCDC Table 11: L1-regularized L2-SVM and logistic "
                   "regression", [("Result", body)])
    write_verdict(out_dir, exp_id="rcdc-table11",
                  claim="rcv1: best gamma = 1, CV-A 97.0% / 96.4%, TA 95.8% / 95.2% (L2-SVM / LG)",
                  ours="; ".join(best),
                  verdict="no data",
                  reason="rcv1.binary is not available here; substitutes (reuters-money-fx, "
                         "a9a) cannot confirm rcv1's numbers",
                  full=full, evidence="note.md#result")
    return out_dir


FIG7_GAMMA = 1.0


@register("rcdc-fig7", title="RCDC Figure 7: test accuracy against the number of passes",
          paper=RCDC_PAPER,
          description="UCDC, L1-regularized L2-SVM and logistic, gamma=1; reuters-money-fx, a9a.")
def run_fig7(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 7: test accuracy (TA) after each pass k/n of UCDC, γ = 1 (the paper's best).

    Same data and split as rcdc-table11. Writes ``fig7.csv``, ``fig7.png``, ``note.md``.
    """
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    epochs = 100 if full else 12
    datasets = SVM_DATASETS if full else SVM_DATASETS[:1]
    rows = []
    for name, tname in datasets:
        X, y, _, _, Xt, yt = _svm_data(name, tname)
        for loss in ("squared_hinge", "logistic"):
            t0 = time.perf_counter()
            acc = []
            ucdc_classifier(X, y, loss, FIG7_GAMMA, epochs=epochs, tol=0.0,
                            record=lambda k, w, acc=acc, Xt=Xt, yt=yt: acc.append(
                                (k, _accuracy(Xt, yt, w), int(np.count_nonzero(w)))))
            sec = time.perf_counter() - t0
            rows += [(name, LOSS_NAMES[loss], k, a, nz, sec) for k, a, nz in acc]
    _write_csv(out_dir / "fig7.csv",
               ["dataset", "loss", "k_over_n", "test_accuracy", "nnz_w", "total_seconds"], rows)

    fig = new_figure(figsize=(5 * len(datasets), 4))
    axes = np.atleast_1d(fig.subplots(1, len(datasets)))
    for ax, (name, _) in zip(axes, datasets, strict=True):
        for loss in ("L2-SVM", "LG"):
            arr = np.array([(r[2], r[3]) for r in rows if r[0] == name and r[1] == loss and r[2]])
            ax.semilogx(arr[:, 0], 100 * arr[:, 1], "o-", ms=3, label=loss)
        ax.set_xlabel("k/n (passes through the coordinates)")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"{name}, γ = {FIG7_GAMMA:g}")
        ax.legend()
    fig.savefig(out_dir / "fig7.png", dpi=120)

    lines = ["| dataset | loss | TA after 1 n | 5 n | 10 n | final | final k/n | seconds (all "
             "passes) |", "|---|---|---|---|---|---|---|---|"]
    for name, _ in datasets:
        for loss in ("L2-SVM", "LG"):
            sub = {r[2]: r for r in rows if r[0] == name and r[1] == loss}
            last = max(sub)
            lines.append(f"| {name} | {loss} | {100 * sub[1][3]:.1f}% | {100 * sub[5][3]:.1f}% | "
                         f"{100 * sub[10][3]:.1f}% | {100 * sub[last][3]:.1f}% | {last} | "
                         f"{sub[last][5]:.2f} |")
    body = (
        f"Run: {_quick_full(full)}; datasets: {', '.join(d for d, _ in datasets)}; "
        f"{epochs} passes, γ = {FIG7_GAMMA:g}, TA evaluated after "
        "every pass (evaluation time included in the seconds column).\n\n"
        + "\n".join(lines) + "\n\n"
        "Paper (Figure 7, rcv1.binary): UCDC finds a good solution after 10 n iterations "
        "(under half a second there). Substitutes: reuters-money-fx and a9a instead of rcv1 "
        "(not available here), same 90/10 split as rcdc-table11 (the 10% CV part is unused "
        "here).\n")
    write_markdown(out_dir / "note.md", "RCDC Figure 7: test accuracy against passes",
                   [("Result", body)])
    # "a good solution after 10 n iterations": TA at 10 n within half a point of the final TA
    # and above the majority class, for every dataset and loss
    gaps = []
    for name, tname in datasets:
        majority = float(np.mean(_svm_data(name, tname)[5] == -1.0))
        for loss in ("L2-SVM", "LG"):
            sub = {r[2]: r[3] for r in rows if r[0] == name and r[1] == loss}
            gaps.append((abs(sub[10] - sub[max(sub)]), sub[10] - majority))
    ok = all(g <= 0.005 and m > 0 for g, m in gaps)
    write_verdict(out_dir, exp_id="rcdc-fig7",
                  claim="UCDC finds a good solution after 10n iterations (rcv1)",
                  ours=f"TA at 10n within {100 * max(g for g, _ in gaps):.1f} points of the "
                       f"final TA ({', '.join(d for d, _ in datasets)})",
                  verdict="agrees" if ok else "partly",
                  reason=("the accuracy has settled by 10n on the substitute data (rcv1 not "
                          "available)" if ok else "accuracy still moving after 10n"),
                  full=full, evidence="note.md#result")
    return out_dir
