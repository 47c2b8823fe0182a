"""rcdc-fig4: does one parameter the paper does not give move q-shrinking's saving to ~70%?

rcdc-fig4 (m = 500, n = 1,000, ‖x*‖₀ = 50, λ = 1, k0 = 5n, target 1e-14·max(1, F*))
saves 44% of the iterations with 0.9-shrinking against the paper's 'nearly 70%'. Its
instance fixes three things the paper leaves open: the law of the column norms
L_i = ‖a_i‖² (Nesterov's rescaling, ``natural``), the size of x* (|x*_i| up to 50) and
A's density (20 nonzeros per column). Here each is varied with the experiment's
protocol: 10 generator instances, per instance the median over 5 sampling seeds of the
iterations k/n (and of the kernel time) to the target for q = 0 and q = 0.9; saving =
1 − q0.9 / q0. ``peak`` is the largest ‖x_k‖₀ of q = 0 (seed 0): the paper's Figure 3
and its Figure 4 text ('as the number of nonzero elements of x_k decreases, the time
savings from q-shrinking grow') have ‖x_k‖₀ overshoot towards n from x0 = 0.

    PYTHONPATH=src python benchmarks/rcdc_fig4_law_sweep.py [--quick]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from cdlearn.experiments import rcdc


def saving(law, x_scale, nnz, instances, seeds):
    """Per instance (k/n q=0, k/n q=0.9, time saving, peak ‖x_k‖₀ of q = 0)."""
    out = []
    for inst in range(instances):
        d = rcdc.make_instance(500, 1000, support=50, lam=1.0, seed=inst, distribution=law,
                               x_scale=x_scale, nnz_per_column=nnz)
        its, secs, peak = {}, {}, 0
        for q in (0.0, 0.9):
            runs = []
            for seed in range(seeds):
                rows, hit = rcdc.run_shrinking(d["A"], d["b"], d["x_star"], d["v_star"], 1.0,
                                               q, seed=seed,
                                               target=rcdc.TARGET * max(1.0, d["F_star"]))
                runs.append(hit if hit else (np.inf, np.inf))
                if q == 0.0 and seed == 0:
                    peak = max(r[2] for r in rows)
            its[q] = float(np.median([r[0] for r in runs]))
            secs[q] = float(np.median([r[1] for r in runs]))
        out.append((its[0.0], its[0.9], 1 - secs[0.9] / secs[0.0], peak))
    return out


def main(quick=False):
    instances, seeds = (3, 2) if quick else (10, 5)
    cases = [("natural", 50.0, 20), ("natural", 10.0, 20), ("natural", 1.0, 20),
             ("uniform", 50.0, 20), ("uniform", 10.0, 20), ("uniform", 1.0, 20),
             ("natural", 50.0, 100), ("natural", 50.0, 500)]
    lines = ["| L_i law | x* entries up to | nonzeros per column | instances reaching 1e-14 | "
             "k/n to target, q = 0 (median) | saving in iterations: mean (median, range) | "
             "saving in kernel time: mean | peak ‖x_k‖₀ of q = 0 (median, of n = 1,000) |",
             "|---|---|---|---|---|---|---|---|"]
    t0 = time.perf_counter()
    for law, xs, nnz in cases:
        res = saving(law, xs, nnz, instances, seeds)
        ok = [r for r in res if np.isfinite(r[0]) and np.isfinite(r[1])]
        s = np.array([1 - b / a for a, b, _, _ in ok])
        t = np.array([r[2] for r in ok])
        lines.append(
            f"| {law} | {xs:g} | {nnz} | {len(ok)} of {len(res)} | "
            f"{np.median([r[0] for r in ok]):.0f} | {s.mean():.0%} ({np.median(s):.0%}, "
            f"{s.min():.0%}–{s.max():.0%}) | {t.mean():.0%} | "
            f"{np.median([r[3] for r in res]):.0f} |")
        print(lines[-1], flush=True)
    text = (
        "# rcdc-fig4: q-shrinking's saving against what the paper does not give\n\n"
        f"`benchmarks/rcdc_fig4_law_sweep.py{' --quick' if quick else ''}` "
        f"({time.perf_counter() - t0:.0f} s, nice 15, not a timing run: the verdict-relevant "
        "column is the iteration count). m = 500, n = 1,000, ‖x*‖₀ = 50, λ = 1, k0 = 5n, "
        f"target 1e-14·max(1, F*); {instances} generator instances x {seeds} sampling seeds "
        "(median per instance), as in rcdc-fig4. Paper: 'nearly 70%'. The first row is "
        "rcdc-fig4's instance.\n\n" + "\n".join(lines) + "\n\n"
        "Reading: A's density does not move the saving (43-45% at 20, 100 and 500 nonzeros "
        "per column). The column-norm law does: with L_i uniform in (0, 1] (the law of the "
        "paper's Figure 2, plot 1-1) instead of Nesterov's rescaling the saving rises from "
        "44% to 51% at the same x*, and to 62-65% (median 65-74%) with x* entries up to "
        "10 or 1, near the paper's 'nearly 70%'. But those instances barely overshoot: "
        "from x0 = 0, ‖x_k‖₀ peaks at 55-177 (‖x*‖₀ = 50), where the paper's Figure 3 "
        "(same m, n) rises to just below n, as rcdc-fig3 reproduces with Nesterov's "
        "rescaling and x* up to 50; there, smaller x* lowers both the overshoot and the "
        "saving (4% at x* up to 1). No one parameter gives the paper's overshoot and its "
        "saving together, so rcdc-fig4 keeps its instance (shared with rcdc-fig3 and "
        "rcdc-fig5) and its verdict.\n")
    return text


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    text = main(quick)
    if not quick:
        from pathlib import Path

        Path("benchmarks/results/rcdc_fig4_law_sweep.md").write_text(text, encoding="utf-8")
    print(text)
