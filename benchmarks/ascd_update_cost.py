"""Wall-clock cost of ASCD (lazy g3; eager g4) against uniform CD on reuters-money-fx.

Usage::

    .venv/bin/python -m benchmarks.ascd_update_cost [--repeats 5] [--out PATH]

Problem: the ``ascd-fig3`` setting on all of reuters-money-fx (7,770 × 8,315;
every nonzero set to 1, bag-of-words as the paper did with RCV1), lasso with
b = labels ±1 and λ' = 0.1·λ'_max, squared loss, exact coordinate steps 1/L_j.

Two measurements, each the median of ``--repeats`` runs (numba compiled by a
warm-up run first):

1. Time per coordinate update: one epoch (n = 8,315 updates) of the kernel,
   called through the solver state's ``run_epoch`` (no duality-gap checks),
   taken after two warm epochs, divided by n.
2. Time to (F − F*)/F* ≤ 1e-6: ``cdlearn.solve`` with ``check_every=1``; the
   trace records (seconds, primal) after every epoch; the clock includes
   set-up and the gap checks of both methods. F* is the lowest of a
   primal-CD run to a 1e-14 gap and all the runs.

UCD is ``solver="primal-cd", sampling="uniform"``; ASCD is ``solver="ascd"``
with the safe active set: oracle g3 (lazy radii, max-tree set, the default)
and oracle g4 (eager: O(n) draws and an O(n log n) sort per step; one run).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "ascd_update_cost.md"
LAM_FRAC = 0.1
TARGET = 1e-6

METHODS = {
    "UCD (primal-cd, uniform)": ("primal-cd", dict(sampling="uniform", primal_step="lipschitz")),
    # lazy radii, max-tree safe set (the default oracle g3)
    "ASCD g3 lazy (safe set)": ("ascd", dict(oracle="zero", init="gradient")),
    # g4 draws a centre per coordinate and step: O(d) per step and a sort (eager)
    "ASCD g4 eager (safe set)": ("ascd", dict(oracle="uniform", init="gradient")),
}
EAGER = "ASCD g4 eager (safe set)"


def load_reuters():
    from cdlearn.datasets.libsvm import load_binary

    data = os.environ.get("CDLEARN_DATA")
    if data is None:
        shared = HERE.parent.parent / "shared" / "data"
        data = str(shared) if shared.is_dir() else None
    X, y = load_binary("reuters-money-fx", cache_dir=data, download=False)
    X = sp.csc_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.data[:] = 1.0
    X = X[:, np.flatnonzero(np.diff(X.indptr) > 0)]
    return sp.csc_matrix(X), np.asarray(y, dtype=np.float64)


def build_state(X, y, lam, solver, opts):
    from cdlearn.api import make_problem
    from cdlearn.solvers import SOLVERS

    problem = make_problem(X, y, loss="squared", penalty="l1", lam=lam)
    kw = dict(opts)
    step = kw.pop("primal_step", "lipschitz")
    return SOLVERS[solver].build(problem, seed=0, step=step, **kw)


def time_per_update(X, y, lam, solver, opts, repeats):
    """Median ``(seconds per update, matrix entries read per update)`` of one warm epoch."""
    out = []
    for _ in range(repeats):
        st = build_state(X, y, lam, solver, opts)
        st.run_epoch()
        st.run_epoch()
        t0 = time.perf_counter()
        entries, _ = st.run_epoch()
        steps = max(getattr(st, "last_steps", X.shape[1]), 1)
        out.append(((time.perf_counter() - t0) / steps, entries / steps))
    out.sort()
    return out[len(out) // 2]


def time_to_target(X, y, lam, solver, opts, f_star_hint, max_epochs=400):
    import cdlearn

    def cb(state):
        return (state.primal - f_star_hint) / abs(f_star_hint) <= 1e-9

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, solver=solver,
                            tol=1e-12, max_epochs=max_epochs, check_every=1, callback=cb,
                            **opts)
    t = res.trace  # seconds since the solve started, primal after every epoch
    return list(zip(t["seconds"], t["primal"], t["epoch"], strict=True)), res


GAP_PROBLEMS = (
    # (data, columns, penalty, λ' (l1: fraction of λ'_max), tol)
    ("reuters-money-fx", None, "l1", 0.1, 1e-7),
    ("reuters-money-fx", None, "l2", 1e-3, 1e-7),
    ("news20", 10000, "l1", 0.1, 1e-7),
    ("news20", 10000, "l2", 1e-3, 1e-7),
)


def gap_table(repeats):
    """Wall time to a duality gap ≤ tol·P(0) through ``cdlearn.solve`` (its own check schedule)."""
    import cdlearn
    from cdlearn.experiments.ascd import _bag_of_words

    out = ["", "## Time to a duality gap, `cdlearn.solve(tol=...)` as a user calls it", "",
           "Default gap-check schedule (ASCD: epochs of at most one pass). ASCD is the "
           "default `solver=\"ascd\"` (lazy g3). Medians of "
           f"{repeats} runs; 'updates' are coordinate steps (UCD: d per epoch).", "",
           "| problem | tol | UCD time | ASCD time | ASCD/UCD | UCD passes | ASCD passes | "
           "final gap UCD / ASCD |", "|---|---|---|---|---|---|---|---|"]
    for name, ncols, pen, lam_arg, tol in GAP_PROBLEMS:
        X, y, src = _bag_of_words(name, ncols, seed=0)
        m = X.shape[0]
        lam = lam_arg * float(np.max(np.abs(X.T @ y))) / m if pen == "l1" else lam_arg
        res = {}
        for label, solver, opts in (("ucd", "primal-cd", dict(sampling="uniform")),
                                    ("ascd", "ascd", {})):
            runs = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                r = cdlearn.solve(X, y, loss="squared", penalty=pen, lam=lam, solver=solver,
                                  tol=tol, max_epochs=5000, **opts)
                runs.append((time.perf_counter() - t0, r))
            runs.sort(key=lambda tr: tr[0])
            res[label] = runs[len(runs) // 2]
        (tu, ru), (ta, ra) = res["ucd"], res["ascd"]
        out.append(f"| {name} {X.shape[0]}×{X.shape[1]} {pen} λ'={lam:.3g} | {tol:g} | "
                   f"{tu:.3f} s | {ta:.3f} s | {ta / tu:.2f}× | {ru.passes:.1f} | "
                   f"{ra.passes:.1f} | {ru.gap:.1e} / {ra.gap:.1e} |")
        print(out[-1], flush=True)
    return out + [""]


def main(argv=None):
    import cdlearn

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)

    X, y = load_reuters()
    m, n = X.shape
    lam = LAM_FRAC * float(np.max(np.abs(X.T @ y))) / m
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, solver="primal-cd",
                            tol=1e-14, max_epochs=5000)
    f_star = ref.primal
    # warm-up (numba compile) for every method
    for solver, opts in METHODS.values():
        build_state(X, y, lam, solver, opts).run_epoch()

    per_update = {k: time_per_update(X, y, lam, sv, o, 1 if k == EAGER else args.repeats)
                  for k, (sv, o) in METHODS.items()}
    runs = {k: [time_to_target(X, y, lam, sv, o, f_star)
                for _ in range(1 if k == EAGER else args.repeats)]
            for k, (sv, o) in METHODS.items()}
    f_star = min([f_star] + [r.primal for rs in runs.values() for _, r in rs])

    rows = []
    for k, rs in runs.items():
        secs, eps = [], []
        for rec, _ in rs:
            hit = [(s, e) for s, p, e in rec if (p - f_star) / abs(f_star) <= TARGET]
            secs.append(hit[0][0] if hit else float("inf"))
            eps.append(hit[0][1] if hit else float("inf"))
        rows.append((k, per_update[k][0], statistics.median(secs), statistics.median(eps),
                     per_update[k][1]))

    base = rows[0]
    lines = [
        "# ASCD vs uniform CD: wall-clock cost on reuters-money-fx",
        "",
        f"Machine: {platform.processor() or platform.machine()}, nproc = {os.cpu_count()}, "
        f"date {datetime.now(UTC).isoformat(timespec='seconds')}, load average "
        f"{', '.join(f'{v:.2f}' for v in os.getloadavg())} (shared machine, noisy). "
        f"Command: `.venv/bin/python -m benchmarks.ascd_update_cost --repeats {args.repeats}`.",
        "",
        f"Problem: reuters-money-fx, {m} × {n} (non-empty columns), nnz = {X.nnz}, every "
        f"nonzero set to 1 (as `ascd-fig3`); lasso, b = labels ±1, λ' = {LAM_FRAC:g}·λ'_max "
        f"= {lam:.4g}; exact coordinate steps 1/L_j. F* = {f_star:.12g}. Medians of "
        f"{args.repeats} runs.",
        "",
        "| method | time per coordinate update | vs UCD | entries per update | "
        "time per entry vs UCD | epochs to 1e-6 | time to 1e-6 | vs UCD |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k, pu, sec, ep, ent in rows:
        lines.append(f"| {k} | {pu * 1e6:.2f} µs | {pu / base[1]:.1f}× | {ent:.0f} | "
                     f"{(pu / ent) / (base[1] / base[4]):.1f}× | {ep:.0f} | "
                     f"{sec:.3f} s | {sec / base[2]:.2f}× |")
    lines += [
        "",
        "Reading: ASCD g3 keeps its radii lazily (one accumulator, a per-coordinate "
        "offset) and its safe active set with a max-tree evaluated at a horizon, so a step "
        "costs about one column read plus O(1) bookkeeping, and it needs far fewer updates "
        "than UCD. g4 cannot be kept lazily: its random centre moves every coordinate's "
        "estimate at every step (O(n)), and its safe interval always contains g3's, so the "
        "eager g4 row is kept only as the cost of Algorithm 1 done literally. Epochs: UCD "
        "d updates; ASCD at most d updates and at most one pass of entries. ASCD's picks "
        "favour long columns (frequent words), hence its larger time per update; per entry "
        "read it is within the factor in the table.",
        "",
        "Time per update: one epoch through the solver state's `run_epoch` after two warm "
        "epochs (ASCD: at most one pass of entries), divided by the steps it took. Time to 1e-6: `cdlearn.solve(check_every=1)`, whose "
        "trace records (seconds, primal) after every epoch; set-up (ASCD: the initial "
        "gradient) and gap checks included.",
        "",
    ]
    lines += gap_table(args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
