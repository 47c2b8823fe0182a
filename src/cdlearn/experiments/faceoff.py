"""Reproductions of Csiba & Richtárik, *Coordinate Descent Face-Off: Primal or Dual?*

Paper: ``shared/papers/faceoff-primal-or-dual.md`` (ALT 2018). Four experiments,
each writing CSV + PNG + ``note.md`` into its output folder:

* ``faceoff-fig1``  -- Figure 1, the bound ``R(α, d, n)`` of Theorem 4 for ``n = 10³``;
* ``faceoff-fig2``  -- Figure 2, primal vs dual RCD on Theorem 3's worst-case matrices
  and on the news / leukemia data (§7.1, §7.3);
* ``faceoff-fig3``  -- Figure 3, the binary worst cases for dual RCD, ``d = 100`` (§7.2);
* ``faceoff-table1`` -- Table 1, ``C_P``, ``C_D``, predicted and measured ``T_P/T_D``.

The methods are exactly §7's: L2-regularised logistic regression with
``λ = 1/n``, primal RCD = NSync (Alg. 1) with importance sampling (14) and fixed
``1/L_j`` steps (``primal_step="lipschitz"``), dual RCD = Quartz (Alg. 2) with
importance sampling and §7's fixed step ``θ = min_j q_j λn / (β v_j + λn)``
(``dual_step="fixed"``; applied to coordinate ``j`` as ``θ/q_j``, as in Quartz). §7 divides "all the entries of X by the average column
norm"; the paper's columns are examples, our rows, so every entry is divided by
the mean Euclidean norm of the samples (:func:`normalize`, the interpretation of
``cdlearn.faceoff.analyze(..., normalize=True)``). One pass = ``nnz(X)`` visited
entries, counted as the paper does (gap checks are not counted).

Orientation: the paper's ``X`` is ``d x n`` (features x examples); ours is
``(n_samples, n_features)``, the transpose. ``n`` is always the number of
examples and ``d`` the number of features.
"""

from __future__ import annotations

import csv
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import report
from ..api import auto_solver, faceoff_choice, make_problem, solve
from ..datasets.faceoff_matrices import make_binary_worst_case, make_theorem3_matrix
from ..faceoff import (
    L,
    R,
    U,
    analyze,
    complexity_constants,
    max_primal_complexity_matrix,
)
from ..losses import smoothness
from . import register
from .verdict import write_verdict

__all__ = [
    "normalize",
    "passes_to_reach",
    "run_fig1",
    "run_fig2",
    "run_fig3",
    "run_table1",
    "theorem3_values",
]

SEED = 0  #: seed of every generated matrix, label vector and subsample
#: the smoothness bound β the paper's §7 runs use: its Table 1 column T_P/T_D is
#: eq. (15) with β = 1 (the logistic loss's own β is 1/4; see faceoff-table1's note)
PAPER_BETA = 1.0
METHODS = {"primal-cd": "primal RCD (NSync, 1/L_j steps)",
           "dual-cd": "dual RCD (Quartz, fixed step)"}
LOSS = "logistic"


# =========================================================================== helpers
def normalize(X) -> tuple[sp.csr_matrix, float]:
    """§7's normalisation: ``X / s`` with ``s`` the mean Euclidean norm of the samples.

    Same ``s`` as :func:`cdlearn.faceoff.analyze` with ``normalize=True`` (the
    paper's "average column norm", its columns being our rows). Returns
    ``(X / s, s)`` as CSR; ``s = 1`` when ``X`` is zero.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    scale = analyze(X, loss=LOSS, normalize=True).scale
    return (X / scale).tocsr() if scale != 1.0 else X, float(scale)


def passes_to_reach(passes, values, threshold: float) -> float:
    """Passes at which ``values`` first drops to ``threshold`` (NaN if never).

    Log-linear interpolation between the last trace point above the threshold
    and the first one at or below it, so that the measurement is finer than one
    epoch (one epoch of dual RCD on leukemia is a whole pass).
    """
    passes = np.asarray(passes, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    hit = np.nonzero(values <= threshold)[0]
    if hit.size == 0:
        return math.nan
    k = int(hit[0])
    if k == 0:
        return float(passes[0])
    v0, v1 = values[k - 1], values[k]
    x0, x1 = passes[k - 1], passes[k]
    if not (v0 > 0 and v1 > 0 and threshold > 0 and v0 > v1):
        return float(x1)
    t = (math.log(v0) - math.log(threshold)) / (math.log(v0) - math.log(v1))
    return float(x0 + min(max(t, 0.0), 1.0) * (x1 - x0))


def _entries_per_epoch(X: sp.csr_matrix, method: str, lam: float, beta=None) -> float:
    """Expected entries visited by one epoch under importance sampling (eqs. 10-11, 14)."""
    n, d = X.shape
    beta = smoothness(LOSS) if beta is None else beta
    sq = X.multiply(X)
    if method == "primal-cd":
        norms = np.asarray(sq.sum(axis=0)).ravel()
        nnz = np.diff(X.tocsc().indptr)
        weights = (beta * norms / n + lam) * (nnz > 0)  # empty features are never drawn
        coords = d
    else:
        norms = np.asarray(sq.sum(axis=1)).ravel()
        nnz = np.diff(X.indptr)
        weights = beta * norms / n + lam
        coords = n
    total = weights.sum()
    if total <= 0:
        return 1.0
    return max(coords * float(np.dot(weights / total, nnz)), 1e-12)


@dataclass
class Run:
    """One solver run of an experiment."""

    method: str
    result: object  # SolveResult
    p0: float

    @property
    def trace(self):
        return self.result.trace


def _measure_library(X, y, *, lam, max_epochs=3000, repeats=3, methods=METHODS):
    """Seconds to a gap of 1e-6·P(0) of the library's methods (defaults).

    Primal: proximal Newton steps; dual: exact steps; uniform sampling; plus any
    other method ``solver="auto"`` may run (``methods``). One run with a gap
    check every epoch finds the epoch count; the timed runs (median of
    ``repeats``) check the gap only there.
    """
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in methods:
            kw = dict(loss=LOSS, penalty="l2", lam=lam, solver=method, tol=1e-6, seed=SEED)
            probe = solve(X, y, max_epochs=max_epochs, check_every=1, **kw)
            epochs = max(probe.n_epochs, 1)
            secs = [solve(X, y, max_epochs=epochs, check_every=epochs, **kw).seconds
                    for _ in range(repeats)]
            out[method] = (float(np.median(secs)), probe.converged)
    return out


def _solve(X, y, method, *, lam, tol, max_passes, seed=SEED, checks=None, check_every=None,
           max_epochs=None, beta=None):
    """Run the paper's method ``method`` for at most ``max_passes`` passes (or epochs).

    ``beta``: the smoothness bound of the fixed steps and the importance
    sampling (None: the logistic loss's own 1/4; the paper's Table 1 uses 1).
    """
    if max_epochs is None:
        per_epoch = _entries_per_epoch(X, method, lam, beta) / max(X.nnz, 1)
        max_epochs = max(1, math.ceil(max_passes / per_epoch))
    if check_every is None:
        check_every = 1 if checks is None else max(1, max_epochs // checks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # non-convergence is reported in the notes
        step = dict(primal_step="lipschitz") if method == "primal-cd" else dict(dual_step="fixed")
        res = solve(X, y, loss=LOSS, penalty="l2", lam=lam, solver=method,
                    sampling="importance", **step,
                    tol=tol, max_epochs=int(max_epochs), seed=seed,
                    check_every=int(check_every), smoothness=beta)
    return Run(method, res, float(res.trace["primal"][0]))


def _reference_primal(X, y, lam, tol=1e-13, max_epochs=3000) -> float:
    """``P*`` from tightly converged runs of the library's fastest steps (not the paper's)."""
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("dual-cd", "primal-cd"):
            res = solve(X, y, loss=LOSS, penalty="l2", lam=lam, solver=method, tol=tol,
                        max_epochs=max_epochs, seed=SEED)
            values.append(res.primal)
            if res.converged:
                break
    return float(min(values))


def _labels(n, seed=SEED) -> np.ndarray:
    return np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=n)


def _fmt(v, spec=".3g") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return format(v, spec)


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _write_csv(path: Path, head: Sequence[str], rows) -> Path:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(head)
        for r in rows:
            writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v
                             for v in r])
    return path


def _data_dirs() -> list[Path | None]:
    """Where to look for the real datasets, without downloading first.

    ``None`` stands for :func:`cdlearn.datasets.data_home` (``$CDLEARN_DATA`` or
    ``~/.cache/cdlearn``); the ``shared/data`` folder next to the repository is
    tried next (it is where this project keeps them).
    """
    dirs: list[Path | None] = [None]
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            dirs.append(candidate)
            break
    return dirs


def load_dataset(name: str):
    """``load_binary(name)`` from the local data folders, downloading only as a last resort."""
    from ..datasets.libsvm import load_binary

    for folder in _data_dirs():
        try:
            return load_binary(name, cache_dir=folder, download=False)
        except FileNotFoundError:
            continue
    return load_binary(name)  # the library's default: download into the cache


def _load_local(name: str):
    """``load_binary(name)`` from the local data folders only (never downloads)."""
    from ..datasets.libsvm import load_binary

    for folder in _data_dirs():
        try:
            return load_binary(name, cache_dir=folder, download=False)
        except FileNotFoundError:
            continue
    raise FileNotFoundError(f"{name} is not in the local data folders")


def tfidf_unit_rows(X) -> sp.csr_matrix:
    """Term counts -> tf-idf (idf = ln(n/df)) with every row scaled to unit length.

    The construction of LIBSVM's news20.binary (tf-idf, unit-length instances),
    applied to the multiclass news20's term counts when news20.binary itself is
    not available. Features that appear in every document get idf 0.
    """
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    df = np.bincount(X.indices, minlength=X.shape[1])
    idf = np.log(X.shape[0] / np.maximum(df, 1))
    X.data *= idf[X.indices]
    X.eliminate_zeros()
    return _unit_rows(X)


NEWS_TFIDF = ("multiclass news20 binarized (classes 1-10 vs 11-20), term counts turned into "
              "tf-idf (idf = ln(n/df)) with unit-length rows, as news20.binary was built "
              "(news20.binary itself is not available here)")


def load_news():
    """``(X, y, source)``: news20.binary if it is in the data folders, else its substitute
    (:func:`tfidf_unit_rows` of the multiclass news20, binarized)."""
    try:
        X, y = _load_local("news20.binary")
        return X, y, "news20.binary (LIBSVM), the paper's dataset"
    except (FileNotFoundError, KeyError, ValueError):
        X, y = load_dataset("news20")
        return tfidf_unit_rows(X), y, NEWS_TFIDF


NEWS_QUICK_ROWS = 3000  #: rows of the news data in the quick runs


def news_quick(X, y, n_rows=NEWS_QUICK_ROWS, seed=SEED):
    """A cheap stand-in of the news data with the full file's shape ratio d/n.

    ``n_rows`` random rows alone would keep most columns (rare words spread over
    the documents), raising d/n from 3.9 to about 15 on news20 and turning eq.
    (15)'s prediction from dual to primal (0.63 at 2,000 rows against 1.51 on the
    whole file); so ``round(n_rows·d/n)`` random columns are kept too, and the rows
    scaled to unit length again. Returns ``(X, y, description)``.
    """
    ratio = X.shape[1] / X.shape[0]
    X, y = _subsample_rows(X, y, n_rows, seed)
    X = _drop_empty_columns(X)
    k = min(X.shape[1], round(ratio * n_rows))
    cols = np.sort(np.random.default_rng(seed).choice(X.shape[1], size=k, replace=False))
    X = sp.csr_matrix(X[:, cols])
    keep = np.diff(X.indptr) > 0
    X, y = _unit_rows(X[keep]), y[keep]
    return X, y, (f"{n_rows:,} random rows and {k:,} random columns (seed {seed}; the whole "
                  f"file's d/n = {ratio:.2g}), rows scaled to unit length again, empty rows "
                  "dropped")


def _subsample_rows(X, y, n_rows, seed=SEED):
    if X.shape[0] <= n_rows:
        return X, y
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=n_rows, replace=False))
    return X[rows], y[rows]


def _unit_rows(X) -> sp.csr_matrix:
    """Every sample divided by its Euclidean norm (zero rows left alone)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ X)


def _drop_empty_columns(X):
    X = sp.csc_matrix(X)
    keep = np.diff(X.indptr) > 0
    return X[:, keep].tocsr()


def _predicted(X_norm, lam) -> dict:
    """Predicted ``T_P/T_D`` (eq. 15) with the logistic β = 1/4 and with β = 1."""
    a = analyze(X_norm, loss=LOSS, lam=lam)
    gamma1 = 1.0 / (lam * a.n)  # β = 1
    beta1 = (a.nnz + gamma1 * a.C_P) / (a.nnz + gamma1 * a.C_D) if a.nnz else 1.0
    return {"analysis": a, "ratio": a.ratio, "ratio_beta1": beta1}


PASSES_LABEL = "passes over the data (visited nonzeros / nnz(X)), log scale"


# =========================================================================== Figure 1
def _R_float(alpha, d, n) -> float:
    r = R(alpha, d, n)
    return r.numerator / r.denominator


def _log_grid(lo, hi, num) -> np.ndarray:
    return np.unique(np.round(np.logspace(math.log10(lo), math.log10(hi), num)).astype(np.int64))


def R_vectorized(alphas, d: int, n: int) -> np.ndarray:
    """``R(α, d, n)`` for many ``α`` at once (int64 arithmetic, exact up to the final division).

    Same formula as :func:`cdlearn.faceoff.R`, ``U(α, n, d) / L(α, n)``; needs
    ``max(d, n) <= α <= nd`` and ``(nd)² < 2⁶³``.
    """
    a = np.asarray(alphas, dtype=np.int64)
    if n < 2:
        upper = a.copy()
    else:
        bar = (n - 1) * ((a - d) // (n - 1))
        upper = (n + 1) * bar + d - 1 + (a - d + 1 - bar) ** 2
    a_bar = n * (a // n)
    lower = (a_bar * a_bar + (a - a_bar) * (2 * a_bar + n)) // n
    return upper / lower


def column_max_R(d: int, n: int) -> tuple[float, int, int | None, int | None]:
    """Scan every integer ``α`` of one column of Figure 1 where ``R`` can exceed 1.

    Returns ``(max R, argmax α, smallest α with R > 1, largest α with R > 1)``
    (the last two ``None`` when ``R <= 1`` on the whole column). For ``d >= n``
    only ``α <= n² + 3n`` is scanned, since beyond it ``R <= 1`` by Lemma 10: the
    maximum returned is then exact whenever it exceeds 1, and otherwise only
    certifies that the whole column has ``R <= 1``.
    """
    lo = max(d, n)
    hi = n * d if d < n else min(n * d, n * n + 3 * n)
    alphas = np.arange(lo, hi + 1, dtype=np.int64)
    values = R_vectorized(alphas, d, n)
    k = int(np.argmax(values))
    above = alphas[values > 1.0]
    if above.size == 0:
        return float(values[k]), int(alphas[k]), None, None
    return float(values[k]), int(alphas[k]), int(above[0]), int(above[-1])


def _threshold_d(n: int) -> int:
    """Smallest ``d`` in ``[n, n²]`` with ``max_α R(α, d, n) <= 1`` (bisection)."""
    lo, hi = n, n * n
    if column_max_R(hi, n)[0] > 1:
        return -1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if column_max_R(mid, n)[0] <= 1:
            hi = mid
        else:
            lo = mid
    return hi


def _corollary6_checks(max_n=6, extra_d=6) -> tuple[int, int, float]:
    """Exhaustive Lemma 10 / Corollary 6 check for small ``n``: ``d >= n² + 3n`` ⇒ R <= 1.

    Returns ``(triplets checked, violations, max R seen)``.
    """
    checked = violations = 0
    worst = 0.0
    for n in range(2, max_n + 1):
        for d in range(n * n + 3 * n, n * n + 3 * n + extra_d):
            for alpha in range(max(d, n), d * n + 1):
                r = R(alpha, d, n)
                checked += 1
                worst = max(worst, float(r))
                violations += r > 1
    return checked, violations, worst


def _tightness_checks(seed=SEED, count=40) -> tuple[int, int]:
    """Theorem 4's upper bound is attained: ``C_P/C_D`` of Lemma 9's extremal matrix = R."""
    rng = np.random.default_rng(seed)
    ok = 0
    for _ in range(count):
        d, n = int(rng.integers(2, 30)), int(rng.integers(2, 30))
        alpha = int(rng.integers(max(d, n), d * n + 1))
        c_p, c_d = complexity_constants(max_primal_complexity_matrix(d, n, alpha))
        ok += Fraction(round(c_p), round(c_d)) == R(alpha, d, n)
    return ok, count


@register("faceoff-fig1")
@report.styled
def run_fig1(out_dir: Path, full: bool) -> Path:
    """Figure 1 of the face-off paper: ``R(α, d, n)`` for ``n = 10³``, ``n <= d <= n²``.

    ``R(α, d, n)`` is Theorem 4's tight upper bound on ``C_P/C_D`` over binary
    matrices with ``d`` features, ``n`` examples and ``α`` nonzeros,
    ``max(d, n) <= α <= nd``. Writes ``fig1.csv`` (one row per grid point:
    ``d, alpha, R, R_printed``), ``fig1.png`` (heat map of ``log10 R`` over
    ``(d, α)`` on log axes with the contour ``R = 1`` and Lemma 10's line
    ``α = n² + 3n``) and ``note.md``. ``full`` uses a 121 x 241 grid, else 31 x 61.
    The ``R`` used is :func:`cdlearn.faceoff.R`, ``U(α, n, d)/L(α, n)``, which
    corrects the typo in §6.2's printed definition (``U(α, d, n)/L(α, n)``); the
    printed one is also tabulated (``R_printed``) to show it is never below 1.
    """
    out_dir = Path(out_dir)
    n = 1000
    n_d, n_a = (121, 241) if full else (31, 61)
    ds = _log_grid(n, n * n, n_d)
    alphas = _log_grid(n, n * n * n, n_a)
    grid = np.full((alphas.size, ds.size), np.nan)
    rows = []
    for j, d in enumerate(ds):
        d = int(d)
        for i, alpha in enumerate(alphas):
            alpha = int(alpha)
            if not max(d, n) <= alpha <= n * d:
                continue
            r = _R_float(alpha, d, n)
            printed = U(alpha, d, n) / L(alpha, n)
            grid[i, j] = r
            rows.append((d, alpha, r, printed))
        # the two ends of the admissible range, exactly
        for alpha in (d, n * d):
            rows.append((d, alpha, _R_float(alpha, d, n), U(alpha, d, n) / L(alpha, n)))
    rows.sort()
    rows = list(dict.fromkeys(rows))
    _write_csv(out_dir / "fig1.csv", ("d", "alpha", "R", "R_printed"), rows)

    arr = np.array([r[:3] for r in rows], dtype=np.float64)
    d_col, a_col, r_col = arr[:, 0], arr[:, 1], arr[:, 2]
    printed_col = np.array([r[3] for r in rows])
    lemma10 = a_col >= n * n + 3 * n
    frac_below = float(np.mean(r_col <= 1.0))
    c6_checked, c6_bad, c6_worst = _corollary6_checks()
    tight_ok, tight_total = _tightness_checks()
    # every integer alpha of each grid column (where R can exceed 1), and the threshold on d
    columns = [(int(d), *column_max_R(int(d), n)) for d in ds]
    _write_csv(out_dir / "fig1_columns.csv",
               ("d", "max_R_scanned", "argmax_alpha", "min_alpha_R_gt_1", "max_alpha_R_gt_1"),
               [tuple("" if v is None else v for v in c) for c in columns])
    col_max = np.array([c[1] for c in columns])
    monotone = bool(np.all(np.diff(col_max) <= 0))
    d_star = _threshold_d(n)

    fig = report.new_figure(figsize=(7.2, 5.4))
    ax = fig.subplots()
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.log10(grid)
    lim = float(np.nanmax(np.abs(z)))
    mesh = ax.pcolormesh(ds, alphas, z, shading="nearest", cmap="RdBu_r", vmin=-lim, vmax=lim)
    cbar = fig.colorbar(mesh, ax=ax)
    cbar.set_label("log10 R(α, d, n)   (R < 1: primal RCD provably better)")
    ax.grid(False)  # a heat map: grid lines would read as cell borders
    ax.contour(ds, alphas, z, levels=[0.0], colors="k", linewidths=1.8)
    ax.axhline(n * n + 3 * n, color="tab:green", linestyle="--", linewidth=1.4)
    ax.plot(ds, ds, color="0.3", linewidth=0.8)
    ax.plot(ds, n * ds, color="0.3", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d (number of features)")
    ax.set_ylabel("α = ||X||₀ (nonzeros)")
    ax.set_title(f"Face-off Fig. 1: R(α, d, n), n = {n}  (black: R = 1)")
    from matplotlib.lines import Line2D

    ax.legend(handles=[Line2D([], [], color="k", linewidth=1.8, label="R = 1"),
                       Line2D([], [], color="tab:green", linestyle="--",
                              label="α = n² + 3n (Lemma 10)"),
                       Line2D([], [], color="0.3", linewidth=0.8, label="α = d and α = nd")],
              loc="upper left", fontsize="small", framealpha=0.85)
    report.save_figure(fig, out_dir / "fig1.png")

    cross_rows = []
    for d, rmax, amax, lo_gt, hi_gt in columns[:: max(1, len(columns) // 10)] + columns[-1:]:
        if lo_gt is None:
            cross_rows.append((f"{d:,}", "≤ 1 for every α", "–", "none"))
        else:
            cross_rows.append((f"{d:,}", f"{rmax:.4g}", f"{amax:,}", f"[{lo_gt:,}, {hi_gt:,}]"))
    cross_rows = list(dict.fromkeys(cross_rows))
    sections = [
        ("What ran", (
            f"{'Full' if full else 'Reduced (not full)'} grid: n = {n}, {ds.size} values of d "
            f"in [n, n²] = [{n:,}, {n * n:,}] and {alphas.size} values of α in [n, n³], "
            f"log-spaced, kept where max(d, n) ≤ α ≤ nd, plus both ends α = d and α = nd for "
            f"every d: {len(rows):,} points. Values are exact (integer arithmetic, "
            "`cdlearn.faceoff.R`). Files: `fig1.csv` (d, alpha, R, R_printed), `fig1.png`."
        )),
        ("Definition used (typo in the paper)", (
            "§6.2 prints `R(α, d, n) := U(α, d, n) / L(α, n)`, i.e. max C_D / min C_D, which "
            "is always ≥ 1 and contradicts both Theorem 4 and Lemma 10. The proof of Lemma 10 "
            "bounds `U(α, n, d)` by `L(α, n)`, so the intended definition is "
            "`R(α, d, n) = U(α, n, d) / L(α, n)` = max C_P / min C_D (Lemma 9), which is what "
            "`cdlearn.faceoff.R` implements and what is plotted. On this grid the printed "
            f"formula gives values in [{printed_col.min():.3g}, {printed_col.max():.3g}] — "
            "never below 1, so a figure drawn from it could not show the paper's claim."
        )),
        ("Checks against the paper's claims", "\n".join([
            f"- **Lemma 10** (d ≥ n, α ≥ n² + 3n ⇒ R ≤ 1): {int(lemma10.sum()):,} grid points "
            f"satisfy the hypothesis; max R among them = {r_col[lemma10].max():.4g} "
            f"({'holds' if np.all(r_col[lemma10] <= 1) else 'VIOLATED'}).",
            f"- **Theorem 3 bounds** 1/d ≤ R ≤ n: R ranges over [{r_col.min():.4g}, "
            f"{r_col.max():.4g}]; "
            f"{'all inside' if np.all((r_col <= n) & (r_col >= 1 / d_col)) else 'VIOLATED'}.",
            f"- **\"For large enough d, all the values R(α, d, n) are below 1\"**: confirmed. "
            f"Scanning every integer α (not only the grid), R ≤ 1 on the whole column "
            f"from d* = {d_star:,} on, while d* − 1 still has some α with R > 1 (d* = n²/4 + "
            f"n/2 for n = 1000; found by bisection on d, the column maximum being "
            f"{'monotone' if monotone else 'NOT monotone'} in d on the grid). The column "
            "maximum behaves like n²/(4d), attained near α ≈ 2d. "
            f"Fraction of plotted grid points with R ≤ 1: {frac_below:.1%}.",
            f"- **Corollary 6** (d ≥ n² + 3n ⇒ R ≤ 1 for every α), outside Figure 1's range: "
            f"checked exhaustively for n = 2..6 and six values of d from n² + 3n: "
            f"{c6_checked:,} triplets, {c6_bad} violations, max R = {c6_worst:.4g}.",
            f"- **Tightness** (Theorem 4): C_P/C_D of Lemma 9's extremal matrix "
            f"(`max_primal_complexity_matrix`) equals R exactly in {tight_ok}/{tight_total} "
            "random (d, n, α) with d, n < 30.",
        ])),
        ("Where R exceeds 1", (
            "Per d (every integer α scanned; `fig1_columns.csv` has all grid columns): the "
            "largest R, where it is attained, and the interval of α where R > 1. R is not "
            "monotone in α: at α = d every feature has one nonzero, so max C_P = d while "
            "min C_D ≈ d²/n and R ≈ n/d ≤ 1 (the thin blue band along α = d); a few more "
            "nonzeros stacked on one feature make C_P grow quadratically and R jumps above 1; "
            "for large α it decreases again.\n\n"
            + _md_table(("d", "max_α R", "argmax α", "α with R > 1"), cross_rows)
        )),
        ("Agreement with the paper", (
            "Qualitative agreement with Figure 1 (the paper gives no numbers for it): R is "
            "largest (about n/4 = 250 at d = n: primal RCD up to that many times slower than "
            "dual RCD in the worst case) for sparse matrices with small d, and falls below 1 as "
            "α grows; above α = n² + 3n it is below 1 for every d (Lemma 10), and from "
            f"d = {d_star:,} on it is below 1 for every α, which is the behaviour the paper "
            "describes. This agreement holds only with the corrected definition of R."
        )),
    ]
    report.write_markdown(out_dir / "note.md",
                          "Face-off Figure 1 — R(α, d, n) for n = 10³", sections)
    lemma10_ok = bool(np.all(r_col[lemma10] <= 1))
    bounds_ok = bool(np.all((r_col <= n) & (r_col >= 1 / d_col)))
    ok = lemma10_ok and bounds_ok and c6_bad == 0 and tight_ok == tight_total and d_star < n * n
    write_verdict(
        out_dir, exp_id="faceoff-fig1", full=full,
        claim="R(α, d, n) < 1 for every α once d is large enough (n = 10³); R ≤ 1 above "
              "α = n² + 3n (Lemma 10)",
        ours=f"R ≤ 1 on every column from d* = {d_star:,} < n²; max R above α = n² + 3n: "
             f"{r_col[lemma10].max():.3g}; bound tight in {tight_ok}/{tight_total}",
        verdict="agrees" if ok else "no",
        reason="with §6.2's typo corrected (R = U(α, n, d)/L(α, n)); the printed R is never < 1"
        if ok else "a claim of Lemma 10 / Theorem 3 / Corollary 6 fails on the grid",
        evidence="note.md#" + report.anchor("Checks against the paper's claims"))
    return out_dir


# =========================================================================== Figure 2
def theorem3_values(n, d, eps=0.1) -> tuple[float, float, float]:
    """``(a, b, c)`` for Theorem 3's matrix in §7.1: ``a = 1``, ``b = c = ε √((d-1)/(n(n-1)))``.

    Then ``n(n-1)b² = ε²(d-1)a²``, so ``C_P ≈ (1 + ε²)(d-1)a²`` and
    ``C_D ≈ d(d-1)a²``: ``C_P/C_D ≈ (1 + ε²)/d``, close to Theorem 3's bound
    ``1/d`` (primal RCD up to d times faster). The paper does not give its values.
    """
    b = eps * math.sqrt((d - 1) / (n * (n - 1)))
    return 1.0, b, b


@dataclass
class Panel:
    key: str
    title: str
    X: object
    y: np.ndarray
    budget: dict  # method -> max passes
    checks: int | None = None
    source: str = ""


def _fig2_panels(full: bool) -> list[Panel]:
    panels = []
    # (a) square Theorem-3 matrix (paper: 1,000 x 1,000)
    m = 1000 if full else 300
    a, b, c = theorem3_values(m, m)
    X = make_theorem3_matrix(a, b, c, m, m)
    panels.append(Panel("a", f"(a) Theorem 3 matrix, d = n = {m:,}", X, _labels(m),
                        {"primal-cd": 3000 if full else 1000,
                         "dual-cd": 200000 if full else 30000}, checks=400,
                        source=f"make_theorem3_matrix(a=1, b=c={b:.3g}, n={m}, d={m})"))
    # (b) n >> d (paper: 100 x 100,000, i.e. d = 100 features, n = 100,000 examples)
    n_b = 100000 if full else 10000
    a, b, c = theorem3_values(n_b, 100)
    X = make_theorem3_matrix(a, b, c, n_b, 100)
    panels.append(Panel("b", f"(b) Theorem 3 matrix, d = 100, n = {n_b:,}", X, _labels(n_b),
                        {"primal-cd": 30 if full else 10, "dual-cd": 10000 if full else 2000},
                        checks=300,
                        source=f"make_theorem3_matrix(a=1, b=c={b:.3g}, n={n_b}, d=100)"))
    # (c) news: news20.binary, or its substitute built the same way (tf-idf, unit rows)
    try:
        X, y, src = load_news()
        if not full:
            X, y, how = news_quick(X, y)
            src += "; quick run: " + how
        panels.append(Panel("c", f"(c) news, d = {X.shape[1]:,}, n = {X.shape[0]:,}",
                            X, y, {"primal-cd": 400 if full else 300,
                                   "dual-cd": 400 if full else 300}, source=src))
    except (FileNotFoundError, OSError, ValueError) as exc:
        panels.append(Panel("c", f"(c) news unavailable: {exc}", None, None, {}))
    # (d) leukemia
    try:
        X, y = load_dataset("leu")
        panels.append(Panel("d", "(d) leukemia (leu), d = 7,129, n = 38", X, y,
                            {"primal-cd": 200, "dual-cd": 200}, source="leu (LIBSVM), train"))
    except (FileNotFoundError, OSError, ValueError) as exc:
        panels.append(Panel("d", f"(d) leukemia unavailable: {exc}", None, None, {}))
    return panels


def _run_panel(panel: Panel, tol: float, beta=None):
    """Normalise, solve both ways, return (runs, P*, prediction, shape info)."""
    Xn, scale = normalize(panel.X)
    y = panel.y
    n = Xn.shape[0]
    lam = 1.0 / n
    pred = _predicted(Xn, lam)
    runs = {}
    for method in METHODS:
        runs[method] = _solve(Xn, y, method, lam=lam, tol=tol,
                              max_passes=panel.budget[method], checks=panel.checks,
                              beta=beta)
    p_ref = _reference_primal(Xn, y, lam)
    p_star = report.reference_value({m: r.trace for m, r in runs.items()}, p_ref)
    return runs, p_star, pred, Xn


def _figure_legend(fig, axes):
    """One legend for all panels, below them (it never hides a curve)."""
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            report.legend_below(fig, ax)
            return


def _draw_panel(ax, panel, runs, p_star, pred=None, beta=None):
    traces = {METHODS[m]: r.trace for m, r in runs.items()}
    title = panel.title
    if pred is not None:
        ratio = pred["ratio"] if beta is None else pred["ratio_beta1"]
        title += f"\npredicted T_P/T_D = {ratio:.3g} (eq. 15, β = {'1/4' if beta is None else 1})"
    report.plot_suboptimality(traces, p_star, x="passes", ax=ax, title=title, legend=False,
                              xlog=True)
    ax.set_xlabel(PASSES_LABEL)


def _faster(primal: float, dual: float) -> str | None:
    """Which method reached a level first (NaN = never): "primal", "dual" or None."""
    p = primal if math.isfinite(primal) else math.inf
    d = dual if math.isfinite(dual) else math.inf
    if p == d:
        return None if p == math.inf else "tie"
    return "primal" if p < d else "dual"


def _panel_stats(runs, p_star, thresholds) -> dict:
    stats = {"reach": {}, "half": {}, "best": {}, "worst": {}, "above": {}, "final": {}}
    for m, r in runs.items():
        sub = report.relative_suboptimality(r.trace, p_star)
        stats["initial"] = float(sub[0])
        stats["worst"][m] = float(np.max(sub))
        stats["final"][m] = float(sub[-1])
        stats["above"][m] = float(np.mean(sub[1:] > sub[0])) if sub.size > 1 else 0.0
        stats["reach"][m] = [passes_to_reach(r.trace["passes"], sub, th) for th in thresholds]
        stats["half"][m] = passes_to_reach(r.trace["passes"], sub, 0.5 * sub[0])
        stats["best"][m] = float(np.min(sub))
    return stats


@register("faceoff-fig2")
@report.styled
def run_fig2(out_dir: Path, full: bool) -> Path:
    """Figure 2 of the face-off paper: primal vs dual RCD, error against passes.

    Panels (§7.1, §7.3): (a) Theorem 3's worst-case matrix, square (paper:
    1,000 x 1,000); (b) the same with n ≫ d (paper: d = 100, n = 100,000); (c) the
    news data (news20.binary, or its substitute built the same way, :func:`load_news`);
    (d) leukemia. Error = relative suboptimality ``(P − P*)/P*`` with ``P*`` from
    a tightly converged solve. ``full`` uses the paper's sizes (about a minute);
    otherwise (a) is 300 x 300, (b) n = 10,000 and news is reduced by
    :func:`news_quick`, with smaller pass budgets (about 10 s). Writes ``fig2_<panel>.csv`` (traces),
    ``fig2_summary.csv``, ``fig2.png`` and ``note.md``.
    """
    out_dir = Path(out_dir)
    t_start = time.perf_counter()
    panels = _fig2_panels(full)
    thresholds = (1e-2, 1e-4, 1e-6, 1e-8)
    # the paper's layout: (a) (b) over (c) (d)
    fig, axes = report.panels(2, 2, extra_height=0.7)
    axes = axes.ravel()
    summary_rows, md_rows, by_key = [], [], {}
    for ax, panel in zip(axes, panels, strict=False):
        if panel.X is None:
            ax.set_axis_off()
            ax.text(0.5, 0.5, panel.title, ha="center", va="center", wrap=True)
            continue
        t0 = time.perf_counter()
        runs, p_star, pred, Xn = _run_panel(panel, tol=1e-10, beta=PAPER_BETA)
        secs = time.perf_counter() - t0
        report.traces_to_csv({m: r.trace for m, r in runs.items()},
                             out_dir / f"fig2_{panel.key}.csv", f_star=p_star)
        _draw_panel(ax, panel, runs, p_star, pred, beta=PAPER_BETA)
        st = _panel_stats(runs, p_star, thresholds)
        st["pred"] = pred
        st["source"] = panel.source
        by_key[panel.key] = st
        a = pred["analysis"]
        for m, r in runs.items():
            summary_rows.append((panel.key, m, Xn.shape[1], Xn.shape[0], Xn.nnz, a.C_P, a.C_D,
                                 pred["ratio"], pred["ratio_beta1"], p_star, st["initial"],
                                 float(r.result.passes), float(r.result.seconds),
                                 st["best"][m], st["half"][m], *st["reach"][m]))
        rp, rd = st["reach"]["primal-cd"], st["reach"]["dual-cd"]
        md_rows.append((panel.title, f"{Xn.shape[1]:,}", f"{Xn.shape[0]:,}", f"{Xn.nnz:,}",
                        _fmt(pred["ratio"]), _fmt(pred["ratio_beta1"]), _fmt(st["initial"]),
                        f"{_fmt(st['half']['primal-cd'])} / {_fmt(st['half']['dual-cd'])}",
                        *[f"{_fmt(rp[k], '.4g')} / {_fmt(rd[k], '.4g')}" for k in (1, 2, 3)],
                        _fmt(rp[2] / rd[2]),
                        f"{st['best']['primal-cd']:.1e} / {st['best']['dual-cd']:.1e}",
                        f"{secs:.1f}"))
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    _figure_legend(fig, axes)
    fig.suptitle("Face-off Fig. 2: primal vs dual RCD, logistic loss, λ = 1/n"
                 + ("" if full else "  [reduced sizes]"))
    report.save_figure(fig, out_dir / "fig2.png")
    _write_csv(out_dir / "fig2_summary.csv",
               ("panel", "method", "d", "n", "nnz", "C_P", "C_D", "pred_TP_TD",
                "pred_TP_TD_beta1", "P_star", "initial_rel_subopt", "passes_run",
                "seconds_run", "best_rel_subopt", "passes_to_half_initial",
                *[f"passes_to_{th:.0e}" for th in thresholds]), summary_rows)

    sections = [
        ("What ran", "\n".join([
            f"{'Full (paper sizes)' if full else 'Reduced (not full, CI-sized)'} run, "
            f"{time.perf_counter() - t_start:.0f} s in total. L2-regularised logistic "
            "regression, λ = 1/n, X divided by the mean sample norm (§7). Primal = NSync "
            "(importance sampling (14), 1/L_j steps), dual = Quartz (importance sampling, §7's "
            "fixed step θ = min_j q_jλn/(βv_j + λn), applied as θ/q_j as in Quartz [15]). "
            "Error = (P(w) − P*)/P*, P* from a tightly converged solve "
            "(duality gap ≤ 1e-13·P(0) with the library's exact/Newton steps). x-axis: "
            "passes = visited nonzeros / nnz(X), log scale. Both methods use the paper's "
            "β = 1 in their fixed steps and importance probabilities (see `faceoff-table1`). "
            "Fixed seeds (0) for labels, "
            "subsamples and sampling.",
            "",
            *[f"- {p.title}: {p.source}; pass budgets primal {p.budget.get('primal-cd')}, "
              f"dual {p.budget.get('dual-cd')}." for p in panels if p.X is not None],
            "- Synthetic labels are i.i.d. ±1 (seed 0); the paper states neither its labels "
            "nor its a, b, c (here `theorem3_values`: a = 1, b = c = 0.1·√((d−1)/(n(n−1))), "
            "so C_P/C_D ≈ 1.01/d, Theorem 3's extreme 1/d).",
        ])),
        ("Passes to reach a relative suboptimality (primal / dual)", (
            _md_table(("panel", "d", "n", "nnz", "pred. T_P/T_D (β=¼)", "pred. (β=1)",
                       "initial error", "½ initial", "1e-4", "1e-6", "1e-8",
                       "measured ratio at 1e-6", "best error reached", "seconds"), md_rows)
            + "\n\n'–' = not reached within the pass budget. Predicted T_P/T_D is eq. (15) "
            "with importance sampling and the logistic loss's β = 1/4; the paper's Table 1 "
            "numbers correspond to β = 1 (see `faceoff-table1`), shown too."
        )),
        ("Comparison with the paper", _fig2_discussion(by_key)),
    ]
    report.write_markdown(out_dir / "note.md",
                          "Face-off Figure 2 — primal vs dual RCD (worst cases, news, leukemia)",
                          sections)
    _fig2_write_verdict(out_dir, by_key, full)
    return out_dir


#: the faster method the paper reports in each panel of Figure 2 (§7.1, §7.3)
FIG2_PAPER = {"a": "primal", "b": "primal", "c": "dual", "d": "primal"}


def _fig2_write_verdict(out_dir, by_key, full):
    """Agrees when every panel's faster method is the paper's (to 1e-6; (b): to half the
    initial error, since the paper calls (b)'s optimum "very close to an initial guess")."""
    won = {}
    for key in FIG2_PAPER:
        if key not in by_key:
            continue
        st = by_key[key]
        if key == "b":
            won[key] = _faster(st["half"]["primal-cd"], st["half"]["dual-cd"])
        else:
            won[key] = _faster(st["reach"]["primal-cd"][2], st["reach"]["dual-cd"][2])
    hits = [k for k in won if won[k] == FIG2_PAPER[k]]
    missing = [k for k in FIG2_PAPER if k not in won]
    verdict = ("agrees" if len(hits) == len(FIG2_PAPER) else
               "partly" if len(hits) >= len(FIG2_PAPER) // 2 else "no")
    wrong = [f"({k}) {won[k]}" for k in won if k not in hits]
    write_verdict(
        out_dir, exp_id="faceoff-fig2", full=full,
        claim="faster method: (a) primal, (b) primal, (c) news dual, (d) leukemia primal",
        ours="; ".join(f"({k}) {won[k] or 'neither reached'}" for k in won)
        + (f"; missing: {', '.join(missing)}" if missing else ""),
        verdict=verdict,
        reason=("every panel's faster method is the paper's; news = tf-idf unit-row "
                "substitute for news20.binary" if verdict == "agrees" else
                "panels where the other method wins: " + ", ".join(wrong or missing)),
        evidence="note.md#" + report.anchor("Comparison with the paper"))


TIE = 1.1  #: ratios within a factor 1.1 of 1 count as a tie


def _label(ratio: float) -> str | None:
    """"primal" (ratio < 1/1.1), "dual" (ratio > 1.1), "tie", or None (not measured)."""
    if not math.isfinite(ratio) and not math.isinf(ratio):
        return None
    if ratio < 1 / TIE:
        return "primal"
    if ratio > TIE:
        return "dual"
    return "tie"


def _measured_ratio(primal: float, dual: float) -> float:
    """passes_P / passes_D with 'never reached' as infinity (NaN if neither reached)."""
    p = primal if math.isfinite(primal) else math.inf
    d = dual if math.isfinite(dual) else math.inf
    if p == d == math.inf:
        return math.nan
    return p / d


def _verdict(pred_ratio: float, primal: float, dual: float) -> tuple[str, bool | None]:
    """Compare the predicted and the measured winner (ties within 10%).

    Returns a phrase and whether they agree (None when nothing was measured).
    """
    predicted = _label(pred_ratio)
    measured = _label(_measured_ratio(primal, dual))
    if measured is None:
        return f"predicted {predicted}; neither reached the level", None
    if measured == predicted:
        return f"agree ({predicted})", True
    return f"disagree (predicted {predicted}, measured {measured})", False


def _bound_passes(analysis, runs, p_star: float, eps: float = 1e-6,
                  beta=None) -> tuple[float, float]:
    """Passes Theorem 1 allows each method to reach ``P − P* <= eps·P*``.

    ``(T/nnz)·ln(C/(eps·P*))`` with importance sampling (eq. 15 gives ``T = K·W``),
    ``C_P = P(w⁰) − P*`` and ``C_D = P(w⁰) − D(α⁰)`` (the initial duality gap), the
    constants of the proof of Theorem 1. ``beta``: the smoothness bound the runs
    used (None: the analysis's own, the logistic 1/4).
    """
    if analysis.nnz == 0 or p_star <= 0:
        return math.nan, math.nan
    c_p = float(runs["primal-cd"].trace["primal"][0]) - p_star
    c_d = float(runs["dual-cd"].trace["gap"][0])
    gamma = (analysis.beta if beta is None else beta) / (analysis.lam * analysis.n)
    out = []
    for t, c in ((analysis.nnz + gamma * analysis.C_P, c_p),
                 (analysis.nnz + gamma * analysis.C_D, c_d)):
        out.append(t / analysis.nnz * math.log(c / (eps * p_star)) if c > eps * p_star else 0.0)
    return out[0], out[1]


def _fig2_discussion(by_key) -> str:
    lines = []

    def at6(key):
        st = by_key[key]
        return st["reach"]["primal-cd"][2], st["reach"]["dual-cd"][2]

    if "a" in by_key:
        pa, da = at6("a")
        won = _faster(pa, da)
        lines.append(
            "- **(a) square worst case** — paper: \"for a square dataset, we can observe a "
            f"large speed-up\" of primal over dual. Here primal reaches 1e-6 after "
            f"{_fmt(pa, '.4g')} passes, dual after {_fmt(da, '.4g')} (– = not within its "
            f"budget); predicted T_P/T_D = {by_key['a']['pred']['ratio_beta1']:.3g}. "
            + ("**Agrees**: primal is orders of magnitude faster; the dual's error even "
               "oscillates, since its primal iterate w(α) = Xᵀα/(λn) is dominated by the "
               "single huge sample." if won == "primal" else
               "**Disagrees**: primal is not faster here.")
        )
    if "b" in by_key:
        st = by_key["b"]
        hp, hd = st["half"]["primal-cd"], st["half"]["dual-cd"]
        won = _faster(hp, hd)
        lines.append(
            "- **(b) n ≫ d** — paper: \"the theory holds and the primal method is still "
            "faster, but ... the optimal value is very close to an initial guess\" and the "
            "matrix needs very small and very large numbers. Same here: the initial error "
            f"(P(0) − P*)/P* is only {st['initial']:.2g}. Primal halves it after "
            f"{_fmt(hp, '.3g')} passes, dual after {_fmt(hd, '.3g')}. "
            + ("**Agrees** (primal faster). " if won == "primal" else
               "**Disagrees** (primal not faster). ")
            + f"Primal then sits on a plateau (best {st['best']['primal-cd']:.2g}, final "
            f"{st['final']['primal-cd']:.2g}): after normalisation the entries a/s ≈ n/√d "
            "dominate, and single-coordinate steps on features 1..d−1 (all equal to a in the "
            "one dense sample) leave differences between those weights that only the tiny "
            "λ = 1/n pulls back (condition number of order βn², shared by both methods' "
            f"bounds). The dual's error oscillates between {st['best']['dual-cd']:.2g} and "
            f"{st['worst']['dual-cd']:.2g} and is above its initial value at "
            f"{st['above']['dual-cd']:.0%} of the checks; its dips below primal's plateau "
            "are transient, so its first crossing of 1e-6 in the table is not a stable "
            "convergence."
        )
    p_c = by_key.get("c", {}).get("pred")
    if p_c is not None:
        pc, dc = at6("c")
        lines.append(
            "- **(c) news** — paper (news20.binary, d = 1,355,191, n = 19,996): dual faster, "
            "predicted T_P/T_D = 2.0 and measured to match. Here: "
            f"{by_key['c']['source']}. Predicted T_P/T_D = {p_c['ratio_beta1']:.3g} (β = 1; "
            f"{p_c['ratio']:.3g} with β = ¼), measured passes to 1e-6: primal {_fmt(pc, '.3g')}, "
            f"dual {_fmt(dc, '.3g')} (ratio {_fmt(pc / dc)}); "
            f"{_verdict(p_c['ratio_beta1'], pc, dc)[0]}: "
            + ("dual wins, as in the paper." if _faster(pc, dc) == "dual" else
               "the paper's observation (dual wins on news) **does not hold** here.")
            + " Raw term counts (the multiclass file as stored) gave the opposite (primal "
            "faster, ratio 0.17 in the earlier run of this experiment): long documents then "
            "have both many nonzeros and large norms, which inflates C_D; unit-length rows "
            "remove that, which is the mechanism the paper describes for news. The quick "
            "run keeps the whole file's d/n (`news_quick`): 2,000 random rows alone raise "
            "d/n from 3.9 to 15 and turn eq. (15) to primal (0.63; 1.51 on the whole file)."
        )
    p_d = by_key.get("d", {}).get("pred")
    if p_d is not None:
        pd_, dd = at6("d")
        won = _faster(pd_, dd)
        lines.append(
            "- **(d) leukemia** — paper: primal faster, T_P/T_D = 0.5 predicted and matched "
            f"empirically. Our prediction: {p_d['ratio_beta1']:.3g} with the paper's β = 1 "
            f"({p_d['ratio']:.3g} with β = ¼). Measured passes to 1e-6: "
            f"primal {_fmt(pd_, '.3g')}, dual {_fmt(dd, '.3g')} (ratio {_fmt(pd_ / dd)}): "
            + ("**agrees** in direction." if won == "primal" else
               "**disagrees** — primal is not faster. With λ = 1/n = 1/38 the problem is so "
               "well conditioned that both methods need ~10 passes; `faceoff-table1` "
               "repeats this over seven seeds.")
        )
    return "\n".join(lines)


# =========================================================================== Figure 3
def _fig3_grid(full: bool):
    ns = (100, 1000, 10000) if full else (100, 1000)
    densities = (0.01, 0.1, 1.0)
    return [(n, rho) for n in ns for rho in densities]


def _fig3_alpha(d: int, n: int, rho: float) -> int:
    """``α`` of one Figure 3 panel: ``density·d·n`` rounded, kept in ``[max(d, n), dn]``."""
    return int(min(d * n, max(n, d, round(rho * d * n))))


#: largest n for which the dual's curvature at the optimum is an exact n x n eigenvalue
EXACT_DUAL_CURVATURE_MAX_N = 2000


def _curvature_at_optimum(X, y, w, lam: float) -> tuple[float, float]:
    """Strong convexity at the optimum relative to what eqs. (8)-(9) assume (logistic loss).

    Theorem 1's bounds use only ``λ`` as the primal's strong convexity and only
    ``1/β`` (the conjugate loss's) as the dual's. At the optimum ``w`` the primal
    Hessian is ``Xᵀ diag(h) X / n + λI`` with ``h_j = φ''(y_j x_jᵀw)``, and the dual
    Hessian (times ``n``) is ``diag(1/h) + X Xᵀ/(λn)`` (``φ*'' = 1/φ''`` at the
    matching dual point). Returns ``(μ_P/λ, β·μ_D)``, both >= 1; 1 means the bound's
    constant is the true local one. For ``n > EXACT_DUAL_CURVATURE_MAX_N`` (and
    ``n > d``) the dual value is the Courant-Fischer upper bound ``β·h⁻¹_(d+1)``
    (the (d+1)-th smallest ``1/h``; ``X Xᵀ`` has rank <= d), exact when ``h`` is constant.
    """
    from scipy.special import expit

    X = sp.csr_matrix(X)
    n, d = X.shape
    margins = y * (X @ w)
    h = expit(margins) * expit(-margins)
    A = X.toarray()
    mu_p = float(np.linalg.eigvalsh(A.T @ (h[:, None] * A) / n)[0]) + lam
    if n <= EXACT_DUAL_CURVATURE_MAX_N or n <= d:
        mu_d = float(np.linalg.eigvalsh(np.diag(1.0 / h) + A @ A.T / (lam * n))[0])
    else:
        mu_d = float(np.partition(1.0 / h, d)[d])
    return mu_p / lam, smoothness(LOSS) * mu_d


def _safe_div(a: float, b: float) -> float:
    return a / b if b else math.nan


def _fig3_verdict(pred_ratio: float, reached: dict, bound: dict, run: dict):
    """Falsifiable verdict of one Figure 3 panel: Theorem 1's bounds, then the winners.

    ``reached``, ``run``: per method, the passes to ``(P − P*)/P* <= 1e-6`` (NaN:
    never) and the passes run, one entry per seed; ``bound``: the passes Theorem 1
    allows (:func:`_bound_passes`). The winner is read from the median passes.
    Eq. (15) ranks two *upper bounds* (Theorem 1 gives iteration counts that
    suffice, not ones that are needed). Returns ``(phrase, status)``:

    * ``"violated"`` -- some seed needed more passes than its method's bound (or
      ran past it without reaching 1e-6): the theory, or our implementation of
      the method or of the bound, is wrong.
    * ``"agree"`` -- bounds hold, and the measured winner (ties within 10%) is
      eq. (15)'s, or one of the two is a tie (the rule of ``faceoff-table1``).
    * ``"unranked"`` -- bounds hold, eq. (15) predicts a tie (its two bounds within
      10%) and one method wins: the bounds rank neither, so no outcome contradicts it.
    * ``"slack"`` -- bounds hold, but eq. (15) names one method and the other wins.
    * ``None`` -- undecided: a method stopped short of 1e-6 before its bound.
    """
    over, undecided = [], False
    for m in METHODS:
        for got, ran in zip(reached[m], run[m], strict=True):
            if math.isfinite(got):
                if got > bound[m]:
                    over.append(f"{m} {got:.3g} > {bound[m]:.3g}")
            elif ran >= bound[m]:
                over.append(f"{m} not at 1e-6 after {ran:.3g} >= {bound[m]:.3g}")
            else:
                undecided = True
    if over:
        return "**violated**: " + "; ".join(over) + " passes (Theorem 1)", "violated"
    if undecided:
        return "undecided (stopped before 1e-6 and before the bound)", None
    median = {m: float(np.median(reached[m])) for m in METHODS}
    predicted = _label(pred_ratio)
    measured = _label(_measured_ratio(median["primal-cd"], median["dual-cd"]))
    if predicted == measured or "tie" == measured:
        return f"agree (predicted {predicted}, measured {measured})", "agree"
    if predicted == "tie":
        return f"unranked (predicted tie, measured {measured})", "unranked"
    slack_p = _safe_div(median["primal-cd"], bound["primal-cd"])
    slack_d = _safe_div(median["dual-cd"], bound["dual-cd"])
    return (f"slack: bounds hold, (predicted {predicted}, measured {measured}); "
            f"measured/bound {slack_p:.2g} primal, {slack_d:.2g} dual"), "slack"


#: sampling seeds of every Figure 3 run (the winner is read from the median passes)
FIG3_SEEDS = (0, 1, 2)


@register("faceoff-fig3")
@report.styled
def run_fig3(out_dir: Path, full: bool) -> Path:
    """Figure 3 of the face-off paper: binary worst cases for dual RCD, ``d = 100`` (§7.2).

    For each ``n`` in {100, 1,000, 10,000} and nonzero density in {~1%, ~10%, 100%}
    (``α = max(n, d, ⌊density·d·n⌉)``), the matrix with entries in ``{a, −a, 0}``
    maximising ``C_D`` (Lemma 9 (21)) while minimising ``C_P`` -- the worst case for
    dual RCD, ``C_P/C_D = 1/R(α, n, d)`` (Theorem 4), checked exactly here -- is
    built by :func:`cdlearn.datasets.faceoff_matrices.make_binary_worst_case`
    (random signs, seed 0) with random ±1 labels (seed 0); error ``(P − P*)/P*``
    against passes, primal vs dual, each run with the sampling seeds
    :data:`FIG3_SEEDS` (the figure shows seed 0). ``full`` runs the 3 x 3 grid of
    the paper; otherwise ``n = 10,000`` is left out. Writes ``fig3_<n>_<density>.csv``,
    ``fig3_summary.csv``, ``fig3.png`` and ``note.md``.

    β: the runs (fixed steps, importance probabilities), eq. (15) and the bounds
    use the paper's β = 1 (:data:`PAPER_BETA`, as ``faceoff-fig2`` and
    ``faceoff-table1``: the paper's Table 1 is eq. (15) with β = 1). Issue 23:
    with the logistic loss's β = 1/4 instead, the n = 1,000 panels at 1% and 100%
    had primal and dual within noise of each other (median ratios 0.97 and 0.80,
    seed ranges 0.71-1.26 and 0.53-1.18) against a predicted 2.8 (dual); β = 1/4
    shortens the primal's 1/L_j steps four-fold (λ = 1/n is negligible in L_j)
    but the dual's fixed step only by (v_j + λn)/(v_j/4 + λn) ≈ 1.6, so the
    prediction made with β = 1 does not describe runs made with β = 1/4.
    The verdict (:func:`_fig3_verdict`) tests the paper's claims: every run within
    its Theorem 1 bound, eq. (15)'s winner where it names one.
    """
    out_dir = Path(out_dir)
    t_start = time.perf_counter()
    d = 100
    grid = _fig3_grid(full)
    ns = sorted({n for n, _ in grid})
    densities = sorted({rho for _, rho in grid})
    thresholds = (1e-2, 1e-4, 1e-6, 1e-8)
    fig, axes = report.panels(len(ns), len(densities), extra_height=1.0)
    summary_rows, md_rows, verdicts = [], [], []
    for n, rho in grid:
        ax = axes[ns.index(n)][densities.index(rho)]
        alpha = _fig3_alpha(d, n, rho)
        X = make_binary_worst_case(d, n, alpha, value=1.0, seed=SEED)
        bound = R(alpha, n, d)  # C_P/C_D = 1/R(α, n, d) for this matrix
        c_p, c_d = complexity_constants(X)  # binary: integers, exact in float64
        if Fraction(round(c_p), round(c_d)) != 1 / bound:
            raise AssertionError(f"n={n}, α={alpha}: C_P/C_D = {c_p}/{c_d} != 1/R = {1 / bound}")
        budget = 600  # passes; the dual needs ~210 at n = 1,000, 10%
        panel = Panel(f"{n}_{rho:g}", f"n = {n:,}, nnz = {alpha / (d * n):.0%} (α = {alpha:,})",
                      X, _labels(n), {"primal-cd": budget, "dual-cd": budget}, checks=300)
        t0 = time.perf_counter()
        runs, p_star, pred, Xn = _run_panel(panel, tol=1e-10, beta=PAPER_BETA)
        report.traces_to_csv({m: r.trace for m, r in runs.items()},
                             out_dir / f"fig3_{panel.key}.csv", f_star=p_star)
        _draw_panel(ax, panel, runs, p_star, pred, beta=PAPER_BETA)
        st = _panel_stats(runs, p_star, thresholds)
        a = pred["analysis"]
        bp, bd = _bound_passes(a, runs, p_star, beta=PAPER_BETA)
        bounds = {"primal-cd": bp, "dual-cd": bd}
        reached = {m: [st["reach"][m][2]] for m in METHODS}
        ran = {m: [float(r.result.passes)] for m, r in runs.items()}
        for seed in FIG3_SEEDS[1:]:
            for m in METHODS:
                res = _solve(Xn, panel.y, m, lam=1.0 / n, tol=1e-10, max_passes=budget,
                             checks=panel.checks, seed=seed, beta=PAPER_BETA).result
                sub = report.relative_suboptimality(res.trace, p_star)
                reached[m].append(passes_to_reach(res.trace["passes"], sub, 1e-6))
                ran[m].append(float(res.passes))
        secs = time.perf_counter() - t0
        med = {m: float(np.median(reached[m])) for m in METHODS}
        ratio = _measured_ratio(med["primal-cd"], med["dual-cd"])
        lo = _measured_ratio(min(reached["primal-cd"]), max(reached["dual-cd"]))
        hi = _measured_ratio(max(reached["primal-cd"]), min(reached["dual-cd"]))
        pred1 = pred["ratio_beta1"]
        phrase, status = _fig3_verdict(pred1, reached, bounds, ran)
        tp, td = runs["primal-cd"].trace, runs["dual-cd"].trace
        k = min(len(tp["primal"]), len(td["primal"]))  # one may run a check longer
        same = (np.allclose(tp["primal"][:k], td["primal"][:k], rtol=1e-9)
                and np.allclose(tp["passes"][:k], td["passes"][:k], rtol=1e-9))
        ax.set_title(ax.get_title() + f"\nmeasured {_fmt(ratio)} (median, {len(FIG3_SEEDS)} "
                     "seeds)" + ("; curves coincide" if same else ""))
        mu_p, mu_d = _curvature_at_optimum(Xn, panel.y, runs["primal-cd"].result.w, 1.0 / n)
        mu_d *= PAPER_BETA / smoothness(LOSS)  # relative to the 1/β = 1 the bound (9) uses
        local = pred1 * mu_d / mu_p  # eq. (15) with the local constants
        verdicts.append(dict(n=n, rho=rho, pred=pred1, pred_q=pred["ratio"], measured=ratio,
                             lo=lo, hi=hi, status=status,
                             slack_p=_safe_div(max(reached["primal-cd"]), bp),
                             slack_d=_safe_div(max(reached["dual-cd"]), bd),
                             mu_p=mu_p, mu_d=mu_d, local=local))
        for m, r in runs.items():
            summary_rows.append((n, rho, alpha, m, a.C_P, a.C_D, 1.0 / float(bound),
                                 pred1, pred["ratio"], p_star, st["initial"],
                                 ran[m][0], float(r.result.seconds), st["best"][m], bounds[m],
                                 status or "undecided", mu_p, mu_d, local,
                                 *st["reach"][m][:2], med[m], st["reach"][m][3],
                                 " ".join(f"{v:.4g}" for v in reached[m]), ratio, lo, hi))
        md_rows.append((f"{n:,}", f"{alpha / (d * n):.0%}", f"{alpha:,}",
                        _fmt(1.0 / float(bound), ".3g"), _fmt(pred1), _fmt(pred["ratio"]),
                        f"{_fmt(med['primal-cd'], '.3g')} / {_fmt(med['dual-cd'], '.3g')}",
                        f"{_fmt(bp, '.3g')} / {_fmt(bd, '.3g')}",
                        f"{_fmt(ratio)} ({_fmt(lo)}-{_fmt(hi)})",
                        f"{mu_p:.3g}", phrase, f"{secs:.1f}"))
    for row in axes:
        for ax in row:
            if not ax.has_data():
                ax.set_axis_off()
    _figure_legend(fig, axes.ravel())
    fig.suptitle("Face-off Fig. 3: worst case for dual RCD, binary X, d = 100 "
                 "(rows: n, columns: density; seed 0 of 3)" + ("" if full else "  [reduced]"))
    report.save_figure(fig, out_dir / "fig3.png")
    _write_csv(out_dir / "fig3_summary.csv",
               ("n", "density", "alpha", "method", "C_P", "C_D", "C_P_over_C_D_theory",
                "pred_TP_TD", "pred_TP_TD_beta_quarter", "P_star", "initial_rel_subopt",
                "passes_run", "seconds_run", "best_rel_subopt", "bound_passes_to_1e-06",
                "verdict", "muP_over_lam", "beta_muD", "pred_TP_TD_local",
                "passes_to_1e-02", "passes_to_1e-04", "passes_to_1e-06", "passes_to_1e-08",
                "passes_to_1e-06_per_seed", "measured_ratio", "measured_ratio_lo",
                "measured_ratio_hi"), summary_rows)
    report.write_markdown(
        out_dir / "note.md", "Face-off Figure 3 — worst-case binary matrices for dual RCD, d = 100",
        _fig3_sections(full, d, md_rows, verdicts, time.perf_counter() - t_start))
    status = [v["status"] for v in verdicts]
    count = {s: status.count(s) for s in ("agree", "unranked", "slack", "violated", None)}
    tall = [v for v in verdicts if v["n"] >= 10 * d]
    primal_wins = [v for v in tall if _label(v["measured"]) == "primal"]
    # the paper's claims for Figure 3 (quoted in the note): the matrices are Theorem 4's
    # worst cases (checked above), each method is within its Theorem 1 bound, and "primal
    # RCD can outperform dual RCD even if n ≫ d" (§8). Eq. (15)'s ranking is reported,
    # not tested: the paper reads it as a winner only for its real data (§7.3, Table 1)
    bounds_ok = not count["violated"] and not count[None]
    verdict = ("no" if count["violated"] else
               "agrees" if bounds_ok and primal_wins else "partly")
    panel = "n={n:,}/{rho:.0%}".format
    against = [v for v in verdicts if v["status"] in ("slack", "unranked")]
    write_verdict(
        out_dir, exp_id="faceoff-fig3", full=full,
        claim="on the worst-case binary matrices for dual RCD each method stays within "
              "Theorem 1's bound, and primal RCD can outperform dual RCD even if n ≫ d (§8)",
        ours=f"{len(status)} panels: bounds hold in {len(status) - count['violated']}"
             + (f" ({count[None]} undecided)" if count[None] else "")
             + f"; primal faster at n ≥ 10d in {len(primal_wins)} of {len(tall)} ("
             + ", ".join(f"{panel(**v)} {max(v['measured'], 1 / v['measured']):.2g}x"
                         for v in primal_wins)
             + f"); eq. (15)'s winner measured in {count['agree']} of {len(status)}",
        verdict=verdict,
        reason=("every run within its bound and primal faster at n ≥ 10d; eq. (15) (β = 1) "
                "ranks the other way or a tie at " + ", ".join(
                    f"{panel(**v)} (predicted {_fmt(v['pred'])}, measured "
                    f"{_fmt(v['measured'])})" for v in against)
                if verdict == "agrees" and against else
                "every run within its bound and primal faster at n ≥ 10d"
                if verdict == "agrees" else
                f"{count['violated']} panel(s) violate Theorem 1's bound" if count["violated"]
                else f"{count[None]} panel(s) undecided" if count[None] else
                "primal never faster at n ≥ 10d"),
        evidence="note.md#verdict")
    return out_dir


def _fig3_sections(full, d, md_rows, verdicts, seconds):
    count = {s: sum(1 for v in verdicts if v["status"] == s)
             for s in ("agree", "unranked", "slack", "violated", None)}
    tall = [v for v in verdicts if v["n"] > d]
    square = [v for v in verdicts if v["n"] == d and v["pred"] == 1.0]
    off = [v for v in verdicts if v["status"] in ("slack", "unranked")]
    panel = "n={n:,}/{rho:.0%}".format
    return [
        ("What ran", (
            ("Full (the paper's 3 x 3 grid)" if full
             else "Reduced (not full): n = 10,000 left out")
            + f", {seconds:.0f} s in total. d = {d} features; for each n and "
            "density the worst-case matrix for dual RCD of Theorem 4 / Lemma 9 "
            "(`make_binary_worst_case`: ⌊(α−n)/(d−1)⌋ full samples, one partial, the rest with "
            "a single nonzero, features filled evenly, random signs), random ±1 labels, both "
            "seed 0; its C_P/C_D equals 1/R(α, n, d) exactly (checked as fractions in every "
            "panel). Logistic loss, λ = 1/n, X divided by the mean sample norm (§7); serial "
            "importance sampling (14); NSync (1/L_j steps) vs Quartz (§7's fixed step "
            "θ = min_j q_jλn/(βv_j + λn), applied as θ/q_j); error (P − P*)/P* against passes "
            "(visited nonzeros / nnz(X), §7), log scale. β = 1 in both methods' steps and "
            "sampling, in eq. (15) and in the bounds: the paper's Table 1 is eq. (15) with "
            "β = 1 (see `faceoff-table1`), and a 1/4-smooth loss is also 1-smooth. Each "
            f"method runs with the sampling seeds {', '.join(map(str, FIG3_SEEDS))}; the "
            "table gives median passes and the range of the ratio over the seeds "
            "(min primal / max dual to max primal / min dual); the figure shows seed 0. "
            "With d = 100, 1% density is exactly α = max(n, d), the sparsest matrix without "
            "empty rows or columns (for n > d: one nonzero per sample)."
        )),
        ("Results (passes primal / dual)", (
            _md_table(("n", "density", "α", "C_P/C_D = 1/R(α,n,d)", "pred. T_P/T_D (β=1)",
                       "pred. (β=¼)", "median passes to 1e-6", "bound's passes to 1e-6",
                       "measured ratio (seed range)", "μ_P/λ", "verdict", "seconds"),
                      md_rows)
            + "\n\n\"bound's passes\" = (T/nnz)·ln(C/(1e-6·P*)), the number of passes "
            "Theorem 1 allows (eqs. 8-9 with importance sampling, so T = K·W of eq. 15, "
            "β = 1), with its constants C_P = P(0) − P* and C_D = P(0) − D(0), the initial "
            "gap. μ_P/λ: the primal's strong convexity at the optimum (λ_min of "
            "Xᵀdiag(φ'')X/n + λI) relative to the λ that the bound (8) uses. The \"pred. (β=¼)\" "
            "column is eq. (15) with the logistic loss's own β, for reference only (the runs "
            "use β = 1)."
        )),
        ("Verdict", "\n".join([
            "What the paper claims for Figure 3. §7.2 says only: \"For each triplet "
            "[d, n, α] we produced the worst-case matrix for dual RCD according to the "
            "developed theory. The results are in Figure 3.\" — no per-panel winner is "
            "stated. §8 draws its conclusion from these experiments: \"We have shown, both "
            "theoretically, and through experiments with synthetic and real datasets, that "
            "contrary to what seems to be a popular belief, primal RCD can outperform dual "
            "RCD even if n ≫ d.\" The paper reads eq. (15) as a prediction of the faster "
            "method only for its real data (§7.3: \"The empirical speedup in Figures 2c and "
            "2d matches the theoretical predictions from Table 1\", tested by "
            "`faceoff-table1`). Eq. (15) is a ratio of two upper bounds (Theorem 1: iteration "
            "counts that suffice), so the falsifiable part of the developed theory here is "
            "that each method stays within its own bound. The verdict therefore tests: the "
            "matrices attain Theorem 4's bound C_P/C_D = 1/R(α, n, d) (checked exactly), "
            "no seed of either method needs more passes than its bound (**violated** "
            "otherwise; **undecided** if a run stopped short of 1e-6 before its bound), and "
            "primal is faster in some panel with n ≥ 10d (§8). Eq. (15)'s ranking is "
            "reported per panel, not tested: **agree** = the median-passes winner (ties within "
            "10%) is eq. (15)'s or one side is a tie (the rule of `faceoff-table1`); "
            "**unranked** = eq. (15) predicts a tie and one method wins; **slack** = eq. (15) "
            "names a method and the other wins.",
            "",
            f"- agree: {count['agree']}, unranked: {count['unranked']}, slack: "
            f"{count['slack']}, violated: {count['violated']}, undecided: {count[None]} "
            f"(of {len(verdicts)} panels).",
            "- Largest measured passes (over seeds) / bound's passes, primal and dual: "
            + "; ".join(f"{panel(**v)} {v['slack_p']:.2g}/{v['slack_d']:.2g}"
                        for v in verdicts) + ".",
            *[f"- {panel(**v)}: eq. (15) gives {_fmt(v['pred'])}, measured "
              f"{_fmt(v['measured'])} (seeds {_fmt(v['lo'])}-{_fmt(v['hi'])}), a "
              f"{_label(v['measured'])} win by {max(v['measured'], 1 / v['measured']):.2g}x. "
              + ("The two bounds are within 10% but not equally loose" if
                 v["status"] == "unranked" else f"The {_label(v['measured'])}'s bound is the looser one")
              + f": the slowest seed used {v['slack_p']:.2g} of its bound (primal) and "
              f"{v['slack_d']:.2g} (dual); the "
              f"bound (8) counts only λ as the primal's strong convexity, while at the "
              f"optimum Xᵀdiag(φ'')X/n adds to it (μ_P/λ = {v['mu_p']:.3g})."
              for v in off],
            "- β = 1/4 (the logistic loss's own) in the runs instead, as this experiment "
            "first did: primal and dual were within noise at n = 1,000, 1% and 100% "
            "(median ratios 0.97 and 0.80 over 5 seeds, ranges 0.71-1.26 and 0.53-1.18) "
            "against eq. (15)'s 2.8: with λ = 1/n negligible in L_j the primal's steps "
            "grow 4x, the dual's fixed step only ~1.6x. Runs with β = 1/4 therefore do not "
            "test a prediction made with β = 1.",
        ])),
        ("Comparison with the paper", "\n".join([
            "Our copies of the paper carry Figure 3's caption and layout (rows n = 100, "
            "1,000, 10,000; columns nnz ~1%, ~10%, 100%) but not its images, and §7.2 states "
            "no per-panel result. Its theory for these matrices (Theorem 4, Lemma 10, "
            "Theorem 5): C_P/C_D = 1/R(α, n, d), which is ≥ 1 (dual predicted faster) once "
            f"n ≥ d and α ≥ d² + 3d = {d * d + 3 * d:,}.",
            "",
            "- n > d: measured winners "
            + ", ".join(f"{panel(**v)} {_label(v['measured'])} ({_fmt(v['measured'])}, "
                        f"predicted {_fmt(v['pred'])})" for v in tall)
            + ". A primal win at n = 10d is §8's \"primal RCD can outperform dual RCD even "
            "if n ≫ d\".",
            "- n = d = 100: the 1% matrix is a signed permutation and the 100% one is dense, "
            "C_P = C_D, a predicted tie; measured ratios "
            + ", ".join(f"{v['rho']:.0%}: {_fmt(v['measured'])}" for v in square) + ".",
        ])),
    ]


# =========================================================================== Table 1
#: Table 1 of the paper: d, n, density, nnz, C_P, C_D, T_P/T_D
PAPER_TABLE1 = {
    "news": ("news (news20.binary)", 1_355_191, 19_996, 0.0003, 9_097_916, 3e7, 9e6, 2.0),
    "leu": ("leukemia", 7_129, 38, 1.0, 270_902, 1e7, 2e9, 0.5),
}
TABLE1_FULL = ("leu", "news", "reuters-money-fx", "a9a", "w8a", "mushrooms", "ijcnn1", "arcene")
TABLE1_SMALL = ("leu", "news", "reuters-money-fx", "mushrooms", "a9a")
SMALL_ROWS = {"a9a": 5000}  #: row subsamples of the small version (news: news_quick)
#: seeds of the small version where n >> d: primal CD needs 200-900 passes there, dual
#: ~10-15, so the ratio (> 10) does not hinge on the median of seven; the primal runs
#: were most of the small version's time
SMALL_SEEDS = {"mushrooms": 3, "a9a": 3}


def _paper_ratio(key: str, beta: float) -> float:
    """Eq. (15) from the paper's own Table 1 entries (λn = 1): (nnz + βC_P)/(nnz + βC_D)."""
    *_, nnz, c_p, c_d, _ = PAPER_TABLE1[key]
    return (nnz + beta * c_p) / (nnz + beta * c_d)


def _warm_up():
    """Load the numba kernels once, so that the first timed run does not pay for it."""
    X = sp.random(20, 10, density=0.5, random_state=0, format="csr") + sp.eye(20, 10)
    y = _labels(20)
    for method in METHODS:
        _solve(X, y, method, lam=0.05, tol=1e-3, max_passes=2)


def _measure(X, y, method, *, lam, max_passes, seeds, time_budget, beta=None):
    """Passes to a duality gap of 1e-6·P(0) (median over seeds) and the seconds of seed 0.

    The seconds come from a second run of seed 0 that checks the gap only at the
    epoch where the first run stopped, so they count the method's own work
    (plus one gap evaluation), not the per-epoch gap checks of the measurement.
    """
    passes, converged, used = [], [], []
    first = None
    t0 = time.perf_counter()
    for k, seed in enumerate(seeds):
        if k > 0 and time.perf_counter() - t0 > time_budget:
            break
        run = _solve(X, y, method, lam=lam, tol=1e-6, max_passes=max_passes, seed=seed,
                     beta=beta)
        tr = run.trace
        reached = passes_to_reach(tr["passes"], tr["gap"], 1e-6 * run.p0)
        passes.append(reached if math.isfinite(reached) else float(run.result.passes))
        converged.append(math.isfinite(reached))
        used.append(seed)
        first = first or run
    epochs = first.result.n_epochs
    timed = _solve(X, y, method, lam=lam, tol=1e-6, max_passes=max_passes, seed=seeds[0],
                   max_epochs=max(epochs, 1), check_every=max(epochs, 1), beta=beta)
    return {"passes": float(np.median(passes)), "all": passes, "converged": all(converged),
            "seconds": float(timed.result.seconds), "seeds": used, "run": first}


def _table1_row(name, full, seeds):
    label = name
    notes = []
    if name == "news":
        X, y, src = load_news()
        label = "news (tf-idf, unit rows)" if src == NEWS_TFIDF else "news (news20.binary)"
        notes.append(src)
    else:
        X, y = load_dataset(name)
    if name == "leu":
        label = "leukemia (leu)"
    if not full and name == "news":
        X, y, how = news_quick(X, y)
        label += f" ({X.shape[0]:,} rows)"
        notes.append("quick run: " + how)
    elif not full and name in SMALL_ROWS:
        X, y = _subsample_rows(X, y, SMALL_ROWS[name])
        label += f" ({SMALL_ROWS[name]:,} rows)"
        notes.append(f"{SMALL_ROWS[name]:,} random rows (seed 0)")
    X = sp.csr_matrix(X, dtype=np.float64)
    n, d = X.shape
    c_p_raw, c_d_raw = complexity_constants(X)
    Xn, scale = normalize(X)
    lam = 1.0 / n
    pred = _predicted(Xn, lam)
    problem = make_problem(Xn, y, loss=LOSS, penalty="l2", lam=lam)
    faceoff = faceoff_choice(problem)[0]
    auto = auto_solver(problem)[0]
    budgets = {"primal-cd": 5000 if full else 2000, "dual-cd": 1000 if full else 500}
    if not full and name in SMALL_SEEDS:
        seeds = seeds[:SMALL_SEEDS[name]]
    # the wall-clock cap bounds the full run only: in the small one it would make the
    # seeds used (and so the medians the test asserts on) depend on the machine's load
    seed_cap = 30.0 if full else math.inf
    meas = {m: _measure(Xn, y, m, lam=lam, max_passes=budgets[m], seeds=seeds,
                        time_budget=seed_cap) for m in METHODS}
    # the paper's setting: its T_P/T_D column is eq. (15) with β = 1, so its fixed
    # steps and importance probabilities are taken with β = 1 too (a valid, looser bound)
    meas1 = {m: _measure(Xn, y, m, lam=lam, max_passes=4 * budgets[m], seeds=seeds,
                         time_budget=seed_cap, beta=1.0) for m in METHODS}
    p1, q1 = meas1["primal-cd"], meas1["dual-cd"]
    ratio1 = p1["passes"] / q1["passes"]
    lib = _measure_library(Xn, y, lam=lam, methods=tuple(dict.fromkeys((*METHODS, auto))))
    (lib_p, lib_conv_p), (lib_d, lib_conv_d) = lib["primal-cd"], lib["dual-cd"]
    lib_auto, lib_conv_auto = lib[auto]
    lib_best = min(v for v, _ in lib.values())
    lib_ratio = lib_p / lib_d if lib_d > 0 else math.nan
    p, q = meas["primal-cd"], meas["dual-cd"]
    ratio = p["passes"] / q["passes"]
    sec_ratio = p["seconds"] / q["seconds"] if q["seconds"] > 0 else math.nan
    lab_passes, lab_secs = _label(ratio), _label(sec_ratio)
    face_short = "primal" if faceoff == "primal-cd" else "dual"
    return {
        "dataset": label, "key": name, "notes": "; ".join(notes), "d": d, "n": n,
        "density": X.nnz / (n * d), "nnz": X.nnz, "scale": scale,
        "C_P": c_p_raw, "C_D": c_d_raw, "C_P_norm": pred["analysis"].C_P,
        "C_D_norm": pred["analysis"].C_D, "pred": pred["ratio"], "pred_beta1": pred["ratio_beta1"],
        "passes_P": p["passes"], "passes_D": q["passes"], "conv_P": p["converged"],
        "conv_D": q["converged"], "measured": ratio, "seconds_P": p["seconds"],
        "seconds_D": q["seconds"], "seconds_ratio": sec_ratio, "faceoff": faceoff,
        "faster_passes": lab_passes, "faster_seconds": lab_secs,
        "faceoff_ok_passes": lab_passes in (face_short, "tie"),
        "faceoff_ok_seconds": lab_secs in (face_short, "tie"),
        "pred_time": pred["analysis"].time_ratio, "lib_seconds_P": lib_p,
        "lib_seconds_D": lib_d, "lib_seconds_ratio": lib_ratio,
        "lib_converged": lib_conv_p and lib_conv_d and lib_conv_auto,
        "faceoff_ok_lib": _label(lib_ratio) in (face_short, "tie"),
        "auto": auto, "lib_seconds_auto": lib_auto, "lib_seconds_best": lib_best,
        "auto_ok_lib": lib_auto <= TIE * lib_best,
        "seeds": len(p["seeds"]), "all_P": p["all"], "all_D": q["all"],
        "passes_P_beta1": p1["passes"], "passes_D_beta1": q1["passes"],
        "conv_beta1": p1["converged"] and q1["converged"], "measured_beta1": ratio1,
        "all_P_beta1": p1["all"], "all_D_beta1": q1["all"],
        "pred_faster": _label(pred["ratio"]),
        "pred_ok_passes": _label(pred["ratio"]) in (lab_passes, "tie") or lab_passes == "tie",
        # the paper's setting (β = 1 in the prediction and in both methods' steps)
        "pred_ok_beta1": (_label(pred["ratio_beta1"]) in (_label(ratio1), "tie")
                          or _label(ratio1) == "tie"),
        "runs": {m: meas[m]["run"] for m in METHODS},
    }


TABLE1_COLUMNS = ("dataset", "d", "n", "density", "nnz", "C_P", "C_D", "C_P_norm", "C_D_norm",
                  "pred", "pred_beta1", "passes_P", "passes_D", "conv_P", "conv_D", "measured",
                  "seconds_P", "seconds_D", "seconds_ratio", "faceoff", "faster_passes",
                  "faster_seconds", "faceoff_ok_passes", "faceoff_ok_seconds", "pred_time",
                  "lib_seconds_P", "lib_seconds_D", "lib_seconds_ratio", "lib_converged",
                  "faceoff_ok_lib", "auto", "lib_seconds_auto", "lib_seconds_best",
                  "auto_ok_lib", "seeds", "passes_P_beta1", "passes_D_beta1", "measured_beta1",
                  "conv_beta1", "pred_faster", "pred_ok_passes", "notes")


def _passes_cell(value, converged):
    return f"{value:.3g}" if converged else f"> {value:.3g}"


@register("faceoff-table1")
@report.styled
def run_table1(out_dir: Path, full: bool) -> Path:
    """Table 1 of the face-off paper: dataset details, ``C_P``, ``C_D`` and ``T_P/T_D``.

    For every dataset: d, n, density, nnz, ``C_P`` and ``C_D`` of eq. (16) (on the raw
    data, as the paper's numbers are), the predicted ``T_P/T_D`` of eq. (15) on §7's
    normalised data (β = 1/4, the logistic loss's smoothness, and β = 1, which
    reproduces the paper's 0.5 and 2.0), the measured ``T_P/T_D`` = ratio of the
    passes NSync and Quartz need to reach a duality gap of ``1e-6·P(0)`` (median over
    seeds 0-6, or 0-2 on the small version's mushrooms and a9a, log-interpolated between
    gap checks), the ratio of their seconds, and
    ``cdlearn.api.auto_solver``'s choice with whether it matches the measured faster
    method (within 10% counts as a match). ``full``: leukemia, news (news20.binary, or
    its substitute built the same way: :func:`load_news`), reuters-money-fx, a9a, w8a,
    mushrooms, ijcnn1, arcene, up to 5,000 primal / 1,000 dual passes (about two
    minutes); otherwise leukemia, news reduced by :func:`news_quick`, reuters-money-fx,
    mushrooms and 5,000 rows of a9a. The verdict is the paper's: eq. (15) with β = 1 and both methods
    run with β = 1, on the paper's two rows (leukemia: primal, news: dual).
    Missing datasets are listed as such. Writes ``table1.csv``, ``table1.png``
    (predicted vs measured ratio), ``table1_traces.csv`` and ``note.md``.
    """
    out_dir = Path(out_dir)
    t_start = time.perf_counter()
    names = TABLE1_FULL if full else TABLE1_SMALL
    # seven seeds: on leukemia the two methods are within a pass of each other and
    # three seeds leave the median ratio at the mercy of one run (1.13 with seeds 0-2,
    # 1.00 with 0-6); in the full run a 30 s budget per method caps the seeds on the
    # large datasets
    seeds = tuple(range(7))
    _warm_up()
    rows, missing, traces = [], [], {}
    for name in names:
        try:
            row = _table1_row(name, full, seeds)
        except (FileNotFoundError, OSError) as exc:
            missing.append((name, str(exc).splitlines()[0]))
            continue
        rows.append(row)
        for m, run in row.pop("runs").items():
            traces[f"{name}:{m}"] = run.trace

    _write_csv(out_dir / "table1.csv", TABLE1_COLUMNS,
               [tuple(r[c] for c in TABLE1_COLUMNS) for r in rows])
    if traces:
        report.traces_to_csv(traces, out_dir / "table1_traces.csv")

    # predicted vs measured ratio, in the paper's setting (β = 1) and with β = 1/4
    fig, axes = report.panels(1, 1, panel=(5.6, 4.8))
    ax = axes[0, 0]
    if rows:
        series = {"β = 1 (paper)": ("pred_beta1", "measured_beta1", "o"),
                  "β = 1/4 (logistic)": ("pred", "measured", "x")}
        values = [r[k] for r in rows for keys in series.values() for k in keys[:2]]
        lo, hi = min(values) / 2, max(values) * 2
        ax.plot([lo, hi], [lo, hi], color="0.5", linewidth=1, label="measured = predicted")
        ax.axhline(1, color="0.8", linewidth=0.8)
        ax.axvline(1, color="0.8", linewidth=0.8)
        for label, (kp, km, marker) in series.items():
            ax.scatter([r[kp] for r in rows], [r[km] for r in rows], s=36, marker=marker,
                       zorder=3, label=label)
        for r in rows:
            ax.annotate(r["key"], (r["pred_beta1"], r["measured_beta1"]),
                        textcoords="offset points", xytext=(5, 4), fontsize="small")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    report.label_axes(
        ax, title="Face-off Table 1: predicted vs measured T_P/T_D"
        + ("" if full else " [reduced]"),
        xlabel="predicted T_P/T_D, eq. (15)   (< 1: primal predicted faster)",
        ylabel="measured passes primal / dual to gap 1e-6·P(0)", xlog=bool(rows),
        ylog=bool(rows), legend="upper left" if rows else False)
    report.save_figure(fig, out_dir / "table1.png")

    md = []
    for r in rows:
        md.append((r["dataset"], f"{r['d']:,}", f"{r['n']:,}", f"{r['density']:.2%}",
                   f"{r['nnz']:,}", f"{r['C_P']:.1e}", f"{r['C_D']:.1e}", f"{r['pred']:.3g}",
                   f"{r['pred_beta1']:.3g}",
                   f"{_passes_cell(r['passes_P'], r['conv_P'])} / "
                   f"{_passes_cell(r['passes_D'], r['conv_D'])}",
                   ("≥ " if not r["conv_P"] else "≤ " if not r["conv_D"] else "")
                   + f"{r['measured']:.3g}", f"{r['seconds_ratio']:.3g}",
                   f"{r['passes_P_beta1']:.3g} / {r['passes_D_beta1']:.3g}"
                   + ("" if r["conv_beta1"] else " (not conv.)"),
                   f"{r['measured_beta1']:.3g}",
                   "yes" if r["pred_ok_passes"] else "**no**",
                   r["faceoff"], "yes" if r["faceoff_ok_passes"] else "**no**",
                   "yes" if r["faceoff_ok_seconds"] else "**no**"))
    table = _md_table(("dataset", "d", "n", "density", "nnz", "C_P", "C_D",
                       "pred. T_P/T_D (β=¼)", "pred. (β=1)", "passes P / D",
                       "measured T_P/T_D", "seconds ratio", "passes P / D (β=1)",
                       "measured (β=1)", "eq. (15) winner ok (passes)", "face-off choice",
                       "face-off ok (passes)", "face-off ok (seconds)"), md)
    lib_md = [(r["dataset"], f"{r['pred']:.3g}", f"{r['pred_time']:.3g}", r["faceoff"],
               f"{1e3 * r['lib_seconds_P']:.3g} / {1e3 * r['lib_seconds_D']:.3g}",
               f"{r['lib_seconds_ratio']:.3g}" + ("" if r["lib_converged"] else " (not conv.)"),
               "yes" if r["faceoff_ok_lib"] else "**no**", r["auto"],
               f"{1e3 * r['lib_seconds_auto']:.3g}",
               "yes" if r["auto_ok_lib"] else "**no**") for r in rows]
    lib_table = _md_table(("dataset", "pred. T_P/T_D (eq. 15)",
                           "pred. time ratio (× entry cost)", "face-off choice",
                           "ms primal / dual", "measured seconds ratio", "face-off ok",
                           "solver='auto' runs", "its ms", "auto fastest (10%)"), lib_md)
    paper_rows = []
    for r in rows:
        ref = PAPER_TABLE1.get(r["key"])
        if ref is None:
            continue
        if ref is not None:
            label, d, n, dens, nnz, c_p, c_d, ratio = ref
            paper_rows.append((f"paper: {label}", f"{d:,}", f"{n:,}", f"{dens:.2%}",
                               f"{nnz:,}", f"{c_p:.0e}", f"{c_d:.0e}", f"{ratio:g}"))
        paper_rows.append((f"ours: {r['dataset']}", f"{r['d']:,}", f"{r['n']:,}",
                           f"{r['density']:.2%}", f"{r['nnz']:,}", f"{r['C_P']:.1e}",
                           f"{r['C_D']:.1e}",
                           f"{r['pred_beta1']:.3g} (β=1), {r['pred']:.3g} (β=¼); "
                           f"measured {r['measured']:.3g}"))
    n_ok = sum(r["faceoff_ok_passes"] for r in rows)
    n_ok_s = sum(r["faceoff_ok_seconds"] for r in rows)
    n_ok_flib = sum(r["faceoff_ok_lib"] for r in rows)
    n_ok_lib = sum(r["auto_ok_lib"] for r in rows)
    leu = next((r for r in rows if r["key"] == "leu"), None)
    news = next((r for r in rows if r["key"] == "news"), None)
    sections = [
        ("What ran", "\n".join([
            f"{'Full' if full else 'Reduced (not full)'} run, "
            f"{time.perf_counter() - t_start:.0f} s in total. Logistic loss, λ = 1/n, X divided "
            "by the mean sample norm (§7); NSync (importance sampling, 1/L_j steps) vs Quartz "
            "(importance sampling, fixed step θ/q_j with θ = min_j q_jλn/(βv_j + λn): §7 "
            "prints the step as θ, Quartz [15] divides it by q_j). Measured T_P/T_D = passes "
            "of primal / passes "
            "of dual to a duality gap ≤ 1e-6·P(0), log-interpolated between the per-epoch gap "
            "checks, median over seeds 0-6 (fewer when the runs take > 30 s"
            f"{'' if full else ', and seeds 0-2 on the reduced mushrooms and a9a'}; see "
            "`table1.csv`, column seeds). Seconds: one extra run of seed 0 that evaluates the "
            "gap only once, at the epoch where the measured run stopped. Pass budgets: "
            f"primal {5000 if full else 2000}, dual {1000 if full else 500}; '>' marks a run "
            "that did not reach the gap within its budget (its ratio is then a bound).",
            "",
            *[f"- {r['dataset']}: {r['notes']}" for r in rows if r["notes"]],
            *[f"- {name}: **not available** ({why})" for name, why in missing],
        ])),
        ("Table", table + "\n\nC_P, C_D: eq. (16) on the raw data (the paper's Table 1 "
         "convention, checked on leukemia below). Predicted T_P/T_D: eq. (15) on the "
         "normalised data with β = 1/4; the β = 1 column reproduces the paper's numbers, "
         "and the (β=1) measurements run both methods with β = 1 in their steps and "
         "sampling, as the paper's numbers imply. 'eq. (15) winner ok': the predicted "
         "faster method in passes is the measured one, or the two are within 10%. "
         "Face-off choice = `cdlearn.api.faceoff_choice` (eq. (15) with β = 1/4 priced in "
         "seconds, see the next section); 'ok' = it picked the measured faster method or "
         "the two are within 10%."),
        ("What solver='auto' chooses between", lib_table + "\n\n"
         "The face-off choice (`cdlearn.api.faceoff_choice`) is between the library's "
         "default methods, not the paper's: primal CD "
         "with proximal Newton steps and dual CD with exact steps, uniform sampling. It "
         "predicts their times from eq. (15)'s entries and eqs. (8)-(9)'s steps, priced "
         "with the cost per entry and per step measured on this implementation "
         "(`cdlearn.faceoff.STEP_COSTS`, from `python -m benchmarks.entry_cost`). "
         "`solver=\"auto\"` runs it unless the problem has few features (the Gram matrix "
         "XᵀDX cheap to form, `cdlearn.solvers.newton_cd.choose_hessian`), where it runs "
         "newton-cd (proximal Newton, model solved in Gram form). "
         "Measured: seconds to a duality gap ≤ 1e-6·P(0), median of 3 runs that check the gap "
         "once, at the epoch found by a probe run; 'ok' = the choice was the fastest of the "
         "measured methods or within 10% of it."),
        ("Paper vs ours", _md_table(("", "d", "n", "density", "nnz", "C_P", "C_D", "T_P/T_D"),
                                    paper_rows) if paper_rows else "No paper dataset ran."),
        ("Findings", "\n".join(filter(None, [
            "- **The paper's T_P/T_D column uses β = 1.** On leukemia our raw C_P = "
            f"{leu['C_P']:.3g} and C_D = {leu['C_D']:.3g} match the paper's 1e7 and 2e9, and "
            f"eq. (15) on the normalised data gives {leu['pred_beta1']:.3g} with β = 1 (paper: "
            f"0.5) but {leu['pred']:.3g} with the logistic loss's β = 1/4. The same holds for "
            "news20.binary, whose rows have unit norm (so normalising changes nothing): its "
            f"published nnz, C_P, C_D give {_paper_ratio('news', 1.0):.2g} with β = 1 "
            f"(paper: 2.0) and {_paper_ratio('news', 0.25):.2g} with β = 1/4."
            if leu else "",
            (f"- **Leukemia**: the paper predicts and observes primal faster (0.5, with "
             f"β = 1). With the paper's β = 1 in both methods' steps and sampling we measure "
             f"{leu['passes_P_beta1']:.3g} vs {leu['passes_D_beta1']:.3g} passes, ratio "
             f"{leu['measured_beta1']:.3g} against the predicted {leu['pred_beta1']:.3g}: "
             + ("primal faster, **agrees** with the paper. " if leu["measured_beta1"] < 1 / TIE
                else "**disagrees** with the paper. ")
             + f"With the logistic loss's tight β = 1/4 the prediction is {leu['pred']:.3g} and "
             f"we measure {leu['passes_P']:.3g} vs {leu['passes_D']:.3g} passes (ratio "
             f"{leu['measured']:.3g}; seeds: primal {', '.join(f'{v:.3g}' for v in leu['all_P'])}"
             f"; dual {', '.join(f'{v:.3g}' for v in leu['all_D'])}) and a seconds ratio of "
             f"{leu['seconds_ratio']:.3g}: "
             + ("primal faster." if leu["measured"] < 1 / TIE else
                "a tie or dual ahead. Why β matters here: on the normalised leukemia "
                "data λ = 1/38 dominates the primal coordinates' curvature (β‖X_:i‖²/n ≈ "
                "β/7129), so the primal steps hardly depend on β, while the dual's fixed "
                "step, λn/(βv_j + λn) of the move to φ'(x_jᵀw) under importance sampling "
                "(v_j ≈ 1 = λn here), shrinks from 0.8 to 0.5 when β goes from 1/4 to 1. "
                "The tighter β helps only the dual.")
             if leu else ""),
            (f"- **News**: the paper (news20.binary) predicts 2.0 and observes dual faster. "
             f"Ours ({news['notes']}): predicted {news['pred_beta1']:.3g} with β = 1 "
             f"({news['pred']:.3g} with β = ¼), measured with β = 1 "
             f"{news['passes_P_beta1']:.3g} vs {news['passes_D_beta1']:.3g} passes, ratio "
             f"{news['measured_beta1']:.3g}: "
             + ("dual faster, **agrees** with the paper." if news["measured_beta1"] > TIE
                else "**disagrees** with the paper (dual not faster).")
             + " The multiclass file's raw term counts gave the opposite (primal faster) in "
             "an earlier run: unit-length rows are what makes the examples' nonzeros "
             "'act nicely' (§7.3)." if news else ""),
            f"- Eq. (15)'s winner in passes (β = 1/4; what auto computes before pricing the "
            f"entries) is the measured faster method in passes, or the two tie within 10%, on "
            f"{sum(r['pred_ok_passes'] for r in rows)}/{len(rows)} datasets.",
            f"- The face-off choice (`cdlearn.api.faceoff_choice`: eq. (15) priced in seconds, "
            f"the issue's per-entry cost model) matched the measured faster of the paper's two "
            f"methods (or a tie) on {n_ok}/{len(rows)} datasets by passes and "
            f"{n_ok_s}/{len(rows)} by seconds. The seconds ratio can "
            "differ from the passes ratio: a primal step on the logistic loss evaluates φ' "
            "once per nonzero of its column, a dual step once per row (§4.2); the pricing "
            "then picks the method that is faster in time, not in passes.",
            f"- Between the library's default primal and dual CD, the face-off choice was the "
            f"faster (or a tie) in seconds on {n_ok_flib}/{len(rows)} datasets"
            + "".join(f"; not on {r['dataset']} (seconds ratio {r['lib_seconds_ratio']:.3g})"
                      for r in rows if not r["faceoff_ok_lib"]) + ".",
            f"- `solver=\"auto\"` adds one rule before the face-off: with few features (the "
            "Gram matrix XᵀDX cheap to form) it runs newton-cd, proximal Newton with its model "
            "solved in Gram form. It ran the fastest of the measured library methods (within "
            f"10%) on {n_ok_lib}/{len(rows)} datasets"
            + "".join(f"; not on {r['dataset']} ({r['auto']} {1e3 * r['lib_seconds_auto']:.3g} "
                      f"ms, best {1e3 * r['lib_seconds_best']:.3g} ms)"
                      for r in rows if not r["auto_ok_lib"]) + ".",
            *[f"- {r['dataset']}: the face-off chose {r['faceoff']} but the measured faster "
              f"method in passes is {r['faster_passes']} (passes ratio {r['measured']:.3g}, "
              f"seconds ratio {r['seconds_ratio']:.3g})."
              for r in rows if not r["faceoff_ok_passes"]],
            *[f"- {r['dataset']}: primal did not reach the gap within its budget "
              "(non-convergence, reported as a bound)." for r in rows if not r["conv_P"]],
            *[f"- {r['dataset']}: dual did not reach the gap within its budget "
              "(non-convergence, reported as a bound)." for r in rows if not r["conv_D"]],
        ]))),
    ]
    report.write_markdown(out_dir / "note.md", "Face-off Table 1 — C_P, C_D and T_P/T_D",
                          sections)
    _table1_write_verdict(out_dir, rows, full)
    return out_dir


def _table1_write_verdict(out_dir, rows, full):
    """The paper's two rows in its setting (β = 1): the predicted and the measured faster
    method must both be the paper's (leukemia primal, news dual; ties within 10%)."""
    paper = {"leu": "primal", "news": "dual"}
    got = {r["key"]: r for r in rows if r["key"] in paper}
    ok = [k for k, r in got.items()
          if _label(r["pred_beta1"]) == paper[k] and _label(r["measured_beta1"]) == paper[k]]
    verdict = ("agrees" if len(ok) == len(paper) else "partly" if ok else
               "no data" if not got else "no")
    ours = "; ".join(f"{k}: pred. {r['pred_beta1']:.2g}, measured {r['measured_beta1']:.2g}"
                     for k, r in got.items())
    write_verdict(
        out_dir, exp_id="faceoff-table1", full=full,
        claim="T_P/T_D (eq. 15, β = 1): leukemia 0.5 (primal faster), news 2.0 (dual faster), "
              "matched empirically",
        ours=ours or "neither dataset available",
        verdict=verdict,
        reason=("both rows' predicted and measured winners are the paper's (news: tf-idf "
                "unit-row substitute for news20.binary)" if verdict == "agrees" else
                "rows where the winner differs from the paper's: "
                + (", ".join(k for k in paper if k not in ok))),
        evidence="note.md#" + report.anchor("Findings"))
