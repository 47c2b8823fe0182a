"""Per-call overhead of ``cdlearn.solve`` and of the estimators' ``fit``.

Overhead = wall time of the call minus the time in the driver loop of every
solve it makes (``result.seconds``: the epochs and certificates), i.e.
validation, the design's statistics and layouts, the ``auto`` choice, building
the method's state and the result. Medians of ``--repeat`` calls on the same X
after a warm-up (so the second and later calls find X in
:data:`cdlearn.data.design_cache`; the ``first call`` rows clear the cache before
every call). scikit-learn's ``fit`` of the same estimator on the same data, in
the same run, is the yardstick. ``make bench`` runs
``python -m benchmarks.overhead --out benchmarks/results/overhead.md``, which replaces
only that file's generated section (between :data:`SECTION_START` and
:data:`SECTION_END`, put under its title when absent): the hand-written history of
earlier rounds below it stays.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import cdlearn
from cdlearn import api
from cdlearn.data import design_cache

#: (label, n, d, layout): dense C-ordered as numpy makes it, benchopt's square simulated
#: Lasso (columns correlated ρ = 0.6, F-ordered), and a small sparse CSR
PROBLEMS = [("300×60 dense", 300, 60, "dense"), ("500×600 dense F ρ=0.6", 500, 600, "rho"),
            ("10,000×100 dense", 10_000, 100, "dense"), ("2,000×500 CSR 2%", 2_000, 500, "csr")]


class KernelClock:
    """Sums ``result.seconds`` of every :func:`cdlearn.api.run` (the driver loop) while on."""

    def __init__(self):
        self.seconds = 0.0
        self._run = api.run

    def __enter__(self):
        def run(*args, **kw):
            result = self._run(*args, **kw)
            self.seconds += result.seconds
            return result

        api.run = run
        return self

    def __exit__(self, *exc):
        api.run = self._run
        return False


def make_data(n, d, layout, seed=0):
    rng = np.random.default_rng(seed)
    if layout == "csr":
        X = sp.random(n, d, density=0.02, format="csr", random_state=seed,
                      data_rvs=rng.standard_normal)
    elif layout == "rho":  # corr(x_j, x_k) = 0.6^|j-k|, an AR(1) over the columns
        X = np.empty((n, d), order="F")
        X[:, 0] = rng.standard_normal(n)
        for j in range(1, d):
            X[:, j] = 0.6 * X[:, j - 1] + 0.8 * rng.standard_normal(n)
    else:
        X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[:10] = rng.standard_normal(10)
    y = np.asarray(X @ w).ravel() + 0.5 * rng.standard_normal(n)
    labels = (y > np.median(y)).astype(np.int64)
    return X, y, labels


def calls(X, y, labels):
    """``(name, cdlearn call, scikit-learn call or None)`` on one problem."""
    import sklearn.linear_model as sklm
    import sklearn.svm as sksvm

    n = X.shape[0]
    alpha = 0.1 * float(np.max(np.abs(X.T @ (y - y.mean())))) / n
    lam = 0.1 * float(np.max(np.abs(X.T @ y))) / n
    signs = np.where(labels > 0, 1.0, -1.0)
    design = cdlearn.as_design(X)  # validated once, as benchopt's solver files pass X
    return [
        ("solve Lasso (auto)", lambda: cdlearn.solve(X, y, loss="squared", penalty="l1",
                                                     lam=lam, tol=1e-6), None),
        ("solve Lasso (auto), Design", lambda: cdlearn.solve(design, y, loss="squared",
                                                             penalty="l1", lam=lam, tol=1e-6),
         None),
        ("solve logistic L2 (auto)", lambda: cdlearn.solve(X, signs, loss="logistic",
                                                           penalty="l2", lam=1.0 / n,
                                                           tol=1e-6), None),
        ("solve logistic L2 (auto), Design", lambda: cdlearn.solve(
            design, signs, loss="logistic", penalty="l2", lam=1.0 / n, tol=1e-6), None),
        ("Lasso.fit", lambda: cdlearn.Lasso(alpha=alpha).fit(X, y),
         lambda: sklm.Lasso(alpha=alpha).fit(X, y)),
        ("ElasticNet.fit", lambda: cdlearn.ElasticNet(alpha=alpha).fit(X, y),
         lambda: sklm.ElasticNet(alpha=alpha).fit(X, y)),
        ("Ridge.fit", lambda: cdlearn.Ridge(alpha=1.0).fit(X, y),
         lambda: sklm.Ridge(alpha=1.0).fit(X, y)),
        ("LogisticRegression.fit", lambda: cdlearn.LogisticRegression().fit(X, labels),
         lambda: sklm.LogisticRegression().fit(X, labels)),
        ("LinearSVC.fit", lambda: cdlearn.LinearSVC().fit(X, labels),
         lambda: sksvm.LinearSVC().fit(X, labels)),
    ]


def measure(call, repeat, cold=False):
    """Medians (ms) of the call's wall time, its kernel time and their difference (the
    overhead), and the overhead's minimum (the least disturbed call on a busy machine)."""
    call()  # warm-up: numba's cache, the design cache
    total, kernel = [], []
    for _ in range(repeat):
        if cold:
            design_cache.clear()
        with KernelClock() as clock:
            t = time.perf_counter()
            call()
            total.append(time.perf_counter() - t)
        kernel.append(clock.seconds)
    total, kernel = np.array(total), np.array(kernel)
    over = total - kernel
    return (1e3 * np.median(total), 1e3 * np.median(kernel), 1e3 * np.median(over),
            1e3 * np.min(over))


def wall(call, repeat, clock=time.perf_counter):
    """Median ms of ``repeat`` calls after a warm-up one, on ``clock`` (wall by default)."""
    call()
    times = []
    for _ in range(repeat):
        t = clock()
        call()
        times.append(clock() - t)
    return 1e3 * float(np.median(times))


def passes(repeat: int = 20) -> list[str]:
    """One pass over the 10,000 × 100 X against the validation scan a call makes: the
    floor of the overhead of a call given the array (table rows, median ms), with X in
    the caches (repeated calls) and in memory only (the caches written over before each
    call, as a solve's own arrays do between two calls)."""
    from sklearn.utils import check_array

    from cdlearn import data

    X = make_data(10_000, 100, "dense")[0]
    try:  # a repeated X is scanned without the count (a hit has it)
        data._cache_scan(X, loop=True, counting=False)
        counting = dict(counting=False)
    except TypeError:  # before issue 25's overhead round: always counted
        counting = {}
    rows = [("`X.sum()` (one read of X)", lambda: X.sum()),
            ("`np.isfinite(X).all()`", lambda: np.isfinite(X).all()),
            ("scikit-learn `check_array(X)`", lambda: check_array(X)),
            ("cdlearn's scan of a call (finiteness, magnitude, fingerprint)",
             lambda: data._cache_scan(X, loop=True, **counting)),
            ("`as_design(X)` on a hit (the scan + the cached design)",
             lambda: cdlearn.as_design(X))]
    junk = np.zeros(8 << 20)  # 64 MB, twice the L3 cache: written over before each cold call

    def cold(call):
        def run():
            t = time.perf_counter()
            call()
            return time.perf_counter() - t
        times = []
        for _ in range(repeat):
            np.add(junk, 1.0, out=junk)
            times.append(run())
        return 1e3 * float(np.median(times))

    return [f"| {name} | {wall(call, repeat):.3f} | {cold(call):.3f} |" for name, call in rows]


#: the markers of the generated section of ``--out`` (the rest of the file is kept)
SECTION_START = "<!-- benchmarks.overhead: generated section, replaced by every run -->"
SECTION_END = "<!-- end of the generated section -->"
TITLE = "# Per-call overhead of cdlearn.solve and the estimators' fit"


def write_section(path: Path, lines: list[str]) -> None:
    """Put ``lines`` between the markers of ``path``: replace the section there, or add
    it under the file's title (a new file gets the title), keeping every other line."""
    block = "\n".join([SECTION_START, *lines, SECTION_END])
    text = path.read_text() if path.exists() else TITLE + "\n"
    if SECTION_START in text and SECTION_END in text.split(SECTION_START, 1)[1]:
        head, rest = text.split(SECTION_START, 1)
        text = head + block + rest.split(SECTION_END, 1)[1]
    elif text.startswith("# "):
        title, _, body = text.partition("\n")
        body = body.lstrip("\n")
        text = f"{title}\n\n{block}\n" + (f"\n{body}" if body else "")
    else:
        text = f"{block}\n\n{text}"
    path.write_text(text if text.endswith("\n") else text + "\n")


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30, help="calls per row on the small problems")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None,
                    help="only the calls whose name starts with this (e.g. 'solve')")
    ap.add_argument("--passes", action="store_true",
                    help="only the table of one pass over the 10,000 × 100 X")
    args = ap.parse_args(argv)
    if args.passes:
        lines = ["| 10,000 × 100 float64 (8 MB) | median ms, X in cache | X in memory |",
                 "|---|---:|---:|"] + passes()
        print("\n".join(lines), flush=True)
        return
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    lines = [
        "## Latest run", "",
        f"`python -m benchmarks.overhead` ({datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} "
        f"UTC, commit {_commit()}, {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{load} at the start; one BLAS/numba thread). Medians of {args.repeat} calls "
        "(a third of that on 10,000 rows) on the same X after a warm-up; kernel = the "
        "driver loops of the solves the call makes (`result.seconds`: epochs and "
        "certificates), overhead = call − kernel (median, and the minimum: the least "
        "disturbed call on this shared machine). *first call*: the design cache "
        "cleared before each call (a new X). *Design*: X passed as a `cdlearn.as_design(X)` "
        "made once (no validation pass per call). scikit-learn: its own `fit` of the same "
        "estimator with its defaults, same data, same run.", "",
        "| problem | call | call (ms) | kernel (ms) | overhead (ms) | min overhead (ms) "
        "| scikit-learn fit (ms) |",
        "|---|---|---:|---:|---:|---:|---:|"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, n, d, layout in PROBLEMS:
            X, y, labels = make_data(n, d, layout)
            repeat = args.repeat if n * d <= 10**6 // 2 else max(5, args.repeat // 3)
            for name, ours, theirs in calls(X, y, labels):
                if args.only and not name.startswith(args.only):
                    continue
                rows = [(name, False)] + ([(name + ", first call", True)]
                                          if name == "solve Lasso (auto)" else [])
                for shown, cold in rows:
                    total, kernel, over, least = measure(ours, repeat, cold=cold)
                    ref = "" if theirs is None or cold else f"{wall(theirs, repeat):.2f}"
                    lines.append(f"| {label} | {shown} | {total:.2f} | {kernel:.2f} | "
                                 f"{over:.3f} | {least:.3f} | {ref} |")
                    print(lines[-1], flush=True)
    if args.out:
        write_section(Path(args.out), lines)


if __name__ == "__main__":
    main()
