"""Reproductions of Richtárik & Takáč, *Iteration complexity of randomized block-coordinate
descent methods for minimizing a composite function* (RCDC).

``rcdc-fig4``: q-shrinking (§6.1, "Speedup by shrinking", Figure 4). Lasso
``F(x) = ½‖Ax − b‖² + λ‖x‖₁`` from Nesterov's generator with m = 500,
n = 1,000, ‖x*‖₀ = 50, λ = 1, started at x0 = 0; uniform sampling for the first
k0 = 5n iterations, then q-shrinking with q ∈ {0, 0.5, 0.9}. The paper reports
that 0.9-shrinking saves "nearly 70%" of the time of 0-shrinking to reach
F(x_k) − F* ≤ 1e-14; the issue asks to check "q = 0.9 reaches 1e-14 in at least
40% less time than q = 0".

Measurement. The kernel of ``solver="primal-cd", sampling="shrinking"`` is run
in chunks of n/2 coordinate steps; only kernel time is counted (the
per-call overhead is a few µs, small against a chunk). After each
chunk F(x_k) − F* is evaluated without cancellation from the known optimum
(``½‖A(x − x*)‖² + Σ_i (λ|x_i| − (Aᵀv*)_i x_i)``, every term ≥ 0), which is
what makes a 1e-14 absolute residual on F ≈ 10² measurable at all.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from . import register

RCDC_PAPER = ("Richtárik & Takáč, Iteration complexity of randomized block-coordinate "
              "descent methods for minimizing a composite function (Math. Prog. 2014)")
QS = (0.0, 0.5, 0.9)
TARGET = 1e-14


def lasso_residual(A, x, x_star, c, lam) -> float:
    """F(x) − F* for the generator's instance, with ``c = Aᵀv*`` (cancellation-free)."""
    Ad = A @ (x - x_star)
    return 0.5 * float(Ad @ Ad) + float(np.sum(lam * np.abs(x) - c * x))


def run_shrinking(A, b, x_star, v_star, lam, q, *, k0_epochs=5.0, seed=0, target=TARGET,
                  max_epochs=2000, chunks_per_epoch=2):
    """One q-shrinking run; returns rows (k/n, residual, nnz, seconds) and the time to target."""
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
    rows = [(0.0, r0, 0, 0.0)]
    seconds, steps, hit = 0.0, 0, None
    # compile outside the timing
    primal_cd_shrinking_epoch(v.data, v.indices, v.indptr, p.y, p.sample_weight, st.z.copy(),
                              st.w.copy(), st.lips, p.l1, p.l2, p.loss_code, 0, st.rng.copy(),
                              0, q, st.shrink_start, st.supp.copy(), st.pos.copy(),
                              st.n_supp.copy(), st._intercept.copy(), 0.0, False)
    while steps < max_epochs * n:
        t0 = time.perf_counter()
        _, _, st.counter = primal_cd_shrinking_epoch(
            v.data, v.indices, v.indptr, p.y, p.sample_weight, st.z, st.w, st.lips, p.l1, p.l2,
            p.loss_code, chunk, st.rng, st.counter, st.shrink_q, st.shrink_start, st.supp,
            st.pos, st.n_supp, st._intercept, 0.0, False)
        seconds += time.perf_counter() - t0
        steps += chunk
        res = lasso_residual(A, st.w, x_star, c, lam)
        rows.append((steps / n, res, int(st.n_supp[0]), seconds))
        if res <= target:
            hit = (steps / n, seconds)
            break
    return rows, hit


def _instance(seed, full):
    from ..datasets.nesterov import make_lasso_known_optimum

    A, b, x_star, _, info = make_lasso_known_optimum(
        500, 1000, nnz_per_column=20, support_size=50, lam=1.0, seed=seed, return_info=True)
    return A, b, x_star, info["v_star"]


@register("rcdc-fig4", title="RCDC Figure 4: q-shrinking, time to F(x_k) - F* <= 1e-14",
          paper=RCDC_PAPER,
          description="m=500, n=1000, |x*|_0=50, lambda=1, k0=5n, q in {0, 0.5, 0.9}.")
def run_fig4(out_dir: Path, full: bool) -> Path:
    """RCDC Figure 4: q-shrinking with q ∈ {0, 0.5, 0.9} (see the module docstring)."""
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    seeds = range(10) if full else range(3)
    repeats = 5 if full else 3
    summary = []  # (instance, q, k/n at target, median seconds)
    curves = {}
    for inst in seeds:
        A, b, x_star, v_star = _instance(inst, full)
        for q in QS:
            times, iters = [], []
            for rep in range(repeats):  # sampling seeds
                best = np.inf
                for _ in range(3):  # same seed, same path: min time filters out noise
                    rows, hit = run_shrinking(A, b, x_star, v_star, 1.0, q, seed=rep)
                    best = min(best, np.inf if hit is None else hit[1])
                times.append(best)
                iters.append(np.inf if hit is None else hit[0])
                if rep == 0 and inst == 0:
                    curves[q] = rows
            med_it = float(np.median(iters))
            summary.append((inst, q, None if not np.isfinite(med_it) else med_it,
                            float(np.median(times))))

    with open(out_dir / "fig4_summary.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["instance", "q", "k_over_n_to_1e-14", "median_seconds_to_1e-14"])
        wr.writerows(summary)
    with open(out_dir / "fig4_curves.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["q", "k_over_n", "residual", "nnz", "seconds"])
        for q, rows in curves.items():
            wr.writerows((q, *r) for r in rows)

    fig = new_figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for q, rows in curves.items():
        arr = np.array(rows)
        ax1.semilogy(arr[:, 0], np.maximum(arr[:, 1], 1e-18), label=f"{q}-shrinking")
        ax2.plot(arr[:, 0], arr[:, 2], label=f"{q}-shrinking")
    ax1.axhline(TARGET, color="gray", lw=0.5)
    ax1.set_xlabel("k/n")
    ax1.set_ylabel("F(x_k) - F*")
    ax2.set_xlabel("k/n")
    ax2.set_ylabel("# nonzeros of x_k")
    ax1.legend()
    ax2.legend()
    fig.savefig(out_dir / "fig4.png", dpi=120)

    lines = ["| instance | q | k/n to 1e-14 | median s to 1e-14 | time vs q=0 |",
             "|---|---|---|---|---|"]
    base = {s[0]: s[3] for s in summary if s[1] == 0.0}
    it0 = {s[0]: s[2] for s in summary if s[1] == 0.0}
    savings = {q: [] for q in QS}
    for inst, q, iters, sec in summary:
        ratio = sec / base[inst]
        savings[q].append(1.0 - ratio)
        it = "not reached" if iters is None else f"{iters:.1f}"
        lines.append(f"| {inst} | {q} | {it} | {sec:.4g} | {ratio:.2f} |")
    s09 = np.array(savings[0.9])
    it_sav = [1.0 - s[2] / it0[s[0]] for s in summary if s[1] == 0.9 and s[2] is not None
              and it0.get(s[0])]
    verdict = ("holds" if np.all(s09 >= 0.4) else
               "holds on average only" if s09.mean() >= 0.4 else "does NOT hold")
    body = (
        f"Run: {'full' if full else 'quick'} ({len(list(seeds))} instances; per instance the "
        f"median over {repeats} sampling seeds of k/n and of the kernel time (each the "
        "minimum of 3 identical runs); residual checked every n/2 steps).\n\n"
        + "\n".join(lines)
        + f"\n\nSaving of 0.9-shrinking over 0-shrinking in time to 1e-14: mean "
        f"{100 * s09.mean():.0f}% (min {100 * s09.min():.0f}%, max {100 * s09.max():.0f}%); "
        f"in iterations k/n: mean {100 * np.mean(it_sav):.0f}%. "
        f"Paper: 'nearly 70%'. Issue claim 'q = 0.9 reaches 1e-14 in at least 40% less time "
        f"than q = 0': **{verdict}** on these instances.\n\n"
        "Instance: Nesterov's generator (`make_lasso_known_optimum`), 20 nonzeros per "
        "column (the paper does not state A's density for Figure 4), L_i uniform in (0, 1].\n"
    )
    write_markdown(out_dir / "README.md", "RCDC Figure 4: speedup by q-shrinking",
                   [("Result", body)])
    return out_dir
