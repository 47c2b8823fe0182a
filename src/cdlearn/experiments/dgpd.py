"""Reproductions of Lei, Yen, Wu, Dhillon & Ravikumar, *Doubly Greedy Primal-Dual Coordinate
Descent for Sparse Empirical Risk Minimization* (ICML 2017), §5.

``dgpd-fig1``: relative objective ``(P − P*)/P*`` against training time and
against iterations for DGPD (with active sets, Algorithm 2, at least 5 rounds
per search), PrimalRCD (``primal-cd``), DualRCD (``dual-cd``, SDCA) and SPDC, at
λ = 0.1, μ = 0.01 (Figure 1; ``grid=APPENDIX_GRID`` adds Appendix B's λ ∈ {0.1, 0.01}
× μ ∈ {1, 0.1, 0.01}, not run by ``--full``). ``dgpd-table2``: the data statistics of Table 2 with the
numbers of nonzero primal and dual variables of DGPD at λ = 0.1, μ = 0.01.

Objective mapping. The paper writes ``P(x) = 1/n Σ φ_i(a_iᵀx) + g(x)``,
``g = μ/2‖x‖² + λ‖x‖₁`` (eq. (1)), but its experiments cannot use that
scaling: with the 1/n average, λ = 0.1 and features of norm ≤ 1 (RF, RB, unit
text rows) the optimum is ``x = 0`` with every dual variable nonzero (checked
in the note: 0 nonzeros primal, n dual), while Table 2 reports ~1,700 nonzero
primal and far fewer nonzero dual variables than samples. The numbers fit the
*summed* loss of the authors' PD-Sparse code, ``Σ_i φ_i(a_iᵀx) + μ/2‖x‖² + λ‖x‖₁``,
which is ``n`` times cdlearn's ``P`` with ``λ1 = λ/n`` and ``λ2 = μ/n``, i.e.
``penalty="elastic_net", lam=(λ+μ)/n, l1_ratio=λ/(λ+μ)``. The relative
objective is the same under both scalings. The loss is the smooth hinge (the
paper's §3 choice).

Datasets (MNIST, Aloi, RCV1-regions and sector are not available here):
scikit-learn's ``digits`` (8×8 images, 10 classes) mapped with Random Fourier
features (RBF kernel, dense) and Random Binning features (Laplacian kernel,
sparse) from :mod:`cdlearn.features`, solved one-vs-rest over the 10 classes
as the paper's multiclass sets; and ``news20`` binarized (classes 1-10 vs
11-20, rows scaled to unit length) in place of RCV1-regions / sector.
Multiclass curves add the per-class objectives and times (each class run
for the same number of epochs; a class that reached its target keeps its
last value and stops adding time). Table 2 counts nonzeros on larger sets
(:func:`table2_datasets`, issue 23: the quick digits sets have 360 training
samples and 100-343 features, where a few hundred nonzeros are a large
fraction): ijcnn1 with RF and RB features and news20 one-vs-rest over its
20 classes.

Time is the time spent in the methods' epochs (kernel calls), not in the
objective evaluations made to draw the curves. One "iteration" is, as in the
paper, one pass over all variables for the baselines (an epoch: n dual or d
primal coordinate steps) and one search + its rounds over the active sets for DGPD
(at least 5 as in the paper, more when the search costs more; see
:mod:`cdlearn.solvers.dgpd`, which also says why DGPD first did not converge on
news20: one coordinate added per search, rounds in a fixed order, step (16)).
"""

from __future__ import annotations

import csv
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import report
from . import register
from .verdict import write_verdict

DGPD_PAPER = ("Lei, Yen, Wu, Dhillon & Ravikumar, Doubly Greedy Primal-Dual Coordinate "
              "Descent for Sparse Empirical Risk Minimization (ICML 2017)")
LAMS = (0.1, 0.01)
MUS = (1.0, 0.1, 0.01)
MAIN = (0.1, 0.01)
TARGET = 1e-4
TABLE_TOL = 1e-8  # DGPD's gap target for Table 2's counts (issue 20: converged runs)
LOSS = "smooth_hinge"
#: sizes and budgets of the quick (CI) and the full run
QUICK = dict(digits_rows=400, n_rf=100, n_rb=20, digit_classes=(0, 1, 2), news_rows=800,
             repeats=1, ref_tol=1e-9, stop_rel=1e-5, max_epochs=200, max_seconds=np.inf,
             table_epochs=2000, t2_rf_rows=4000, t2_rf=800, t2_rb_rows=8000, t2_rb=40,
             t2_news_rows=3000)
#: (the full run: Figure 1's (λ, μ) at all digits / news20 rows, 3 seeds; each binary
#: problem stops a decade below the 1e-4 target or after 8 s of epochs. A method the
#: budget cut keeps the time it ran as a lower bound on its time to 1e-4, which the
#: verdict uses; 120 s per problem on the appendix grid did not finish in 13 minutes)
FULL = dict(digits_rows=None, n_rf=2000, n_rb=300, digit_classes=tuple(range(10)),
            news_rows=None, repeats=3, ref_tol=1e-9, stop_rel=1e-5, max_epochs=100_000,
            max_seconds=8.0, table_epochs=5000, t2_rf_rows=20_000, t2_rf=4000,
            t2_rb_rows=None, t2_rb=200, t2_news_rows=None)
#: Appendix B's grid (Figures 2-6 and Figure 1's point): not part of ``--full``; run it
#: with ``run_fig1(out_dir, True, grid=APPENDIX_GRID)`` (one seed off Figure 1's point)
APPENDIX_GRID = tuple((lam, mu) for lam in LAMS for mu in MUS)
#: label -> (cdlearn solver, options)
METHODS = {
    "DGPD": ("dgpd", {"active_set": True}),
    "PrimalRCD": ("primal-cd", {"sampling": "uniform"}),
    "DualRCD": ("dual-cd", {"sampling": "uniform"}),
    "SPDC": ("spdc", {}),
}
#: Table 2 of the paper (λ = 0.1, μ = 0.01)
PAPER_TABLE2 = [
    ("Mnist-RF", "10,000", "10,000", "58,000", "2,000", 10, "1,730", "2,000"),
    ("Aloi-RF", "10,000", "10,000", "90,000", "8,000", 1000, "891", "1,428"),
    ("Mnist-RB", "1,572,556", "1,000", "58,000", "2,000", 10, "1,733", "1,208"),
    ("Aloi-RB", "636,910", "200", "90,000", "8,000", 1000, "1,032", "782"),
    ("RCV1-Regions", "47,236", "68.38", "199,328", "23,149", 225, "1,123", "1,447"),
    ("Sector", "55,197", "162.94", "7,793", "961", 105, "610", "655"),
]


#: the paper's sets each substitute stands in for (same feature kind)
COUNTERPARTS = {"ijcnn1-RF": ("Mnist-RF", "Aloi-RF"), "ijcnn1-RB": ("Mnist-RB", "Aloi-RB"),
                "news20-OvR": ("RCV1-Regions", "Sector")}
#: a substitute's nonzero fraction agrees when it lies within this factor of the range of
#: its counterparts' fractions (Table 2 read per binary problem; see :func:`paper_fractions`)
FRACTION_FACTOR = 3.0


def paper_fractions(name: str) -> tuple[float, float]:
    """Table 2's nonzeros of set ``name`` as fractions of one binary problem's variables.

    The paper does not say how it counts over the one-vs-rest classes. Summed over
    them its counts are impossible: Aloi-RF's 891 primal nonzeros over 1,000 classes
    leave most classes at w = 0, and a class at w = 0 has every one of its 90,000
    dual variables nonzero (margin 0 < 1), against 1,428 in the table. So the counts
    are one problem's (or a per-class mean): primal / #features, dual / #train.
    """
    row = next(r for r in PAPER_TABLE2 if r[0] == name)
    feats, train = (float(row[i].replace(",", "")) for i in (1, 3))
    return float(row[6].replace(",", "")) / feats, float(row[7].replace(",", "")) / train


def fraction_agrees(value: float, paper: list[float]) -> bool:
    """``value`` within :data:`FRACTION_FACTOR` of the range of the paper's ``paper``."""
    return min(paper) / FRACTION_FACTOR <= value <= max(paper) * FRACTION_FACTOR


def paper_penalty(lam: float, mu: float, n: int) -> dict:
    """cdlearn's penalty for the paper's ``Σ φ_i + μ/2‖x‖² + λ‖x‖₁`` (divided by n)."""
    return dict(penalty="elastic_net", lam=(lam + mu) / n, l1_ratio=lam / (lam + mu))


@dataclass
class Dataset:
    name: str
    X: object            # training design (ndarray or CSR)
    y: np.ndarray        # training labels: class ids (OvR) or ±1 (binary)
    X_test: object
    y_test: np.ndarray
    classes: list        # labels of the one-vs-rest problems; [None] for a binary set
    source: str

    def targets(self):
        """(class label, ±1 targets) of each binary problem."""
        if self.classes == [None]:
            return [(None, self.y)]
        return [(c, np.where(self.y == c, 1.0, -1.0)) for c in self.classes]


def _unit_rows(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ X)


def _subsample(X, y, rows, seed=0):
    """``rows`` random rows (sorted; all of them when ``rows`` is None or too large)."""
    if rows is None or rows >= X.shape[0]:
        return X, y
    keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], rows, replace=False))
    return X[keep], y[keep]


def _split(n, n_test, seed=0):
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def digits_datasets(cfg) -> list[Dataset]:
    """digits with RF (dense) and RB (sparse) features, 10% test rows, OvR classes."""
    from sklearn.datasets import load_digits

    from ..features import RandomBinningFeatures, RandomFourierFeatures

    X, y = load_digits(return_X_y=True)
    X = X / 16.0  # pixels in [0, 1]
    X, y = _subsample(X, y, cfg["digits_rows"])
    train, test = _split(X.shape[0], X.shape[0] // 10)
    classes = list(cfg["digit_classes"])
    n_rf, n_rb = cfg["n_rf"], cfg["n_rb"]
    # kernel widths: median heuristic of the pixel distances (‖x-y‖² ≈ 30, ‖x-y‖₁ ≈ 40)
    rf = RandomFourierFeatures(n_components=n_rf, gamma=1.0 / 30.0, random_state=0).fit(X[train])
    rb = RandomBinningFeatures(n_components=n_rb, sigma=10.0, random_state=0).fit(X[train])
    out = []
    for name, tr, desc in (
        ("digits-RF", rf, f"digits, Random Fourier features (RBF, γ = 1/30), D = {n_rf}"),
        ("digits-RB", rb, f"digits, Random Binning features (Laplacian, σ = 10), "
                          f"{n_rb} grids"),
    ):
        Xtr = tr.transform(X[train])
        Xte = tr.transform(X[test])
        if sp.issparse(Xtr):
            Xtr, Xte = sp.csr_matrix(Xtr), sp.csr_matrix(Xte)
        out.append(Dataset(name, Xtr, y[train], Xte, y[test], classes, desc))
    return out


def news20_dataset(cfg) -> Dataset | None:
    """news20 binarized (1-10 vs 11-20), unit rows; 10% test rows. None if absent."""
    from .faceoff import load_dataset

    try:
        X, y = load_dataset("news20")
    except Exception:  # absent and no network: the figure goes without it
        return None
    X = _unit_rows(X)
    n = X.shape[0]
    rows = cfg["news_rows"]
    if rows is not None and rows < n:
        X, y = _subsample(X, y, rows)
        n = X.shape[0]
        X = X[:, np.flatnonzero(X.getnnz(axis=0))]
    train, test = _split(n, n // 10)
    return Dataset("news20-binary", sp.csr_matrix(X[train]), y[train], sp.csr_matrix(X[test]),
                   y[test], [None],
                   "news20 (LIBSVM multiclass) binarized: classes 1-10 vs 11-20, rows scaled "
                   "to unit length" + ("" if rows is None else f"; {rows:,} random documents"))


def libsvm_dataset(name: str) -> Dataset:
    """A binary LIBSVM set as loaded (rows not rescaled); 10% test rows."""
    from .faceoff import load_dataset

    X, y = load_dataset(name)
    X = sp.csr_matrix(X, dtype=np.float64)
    train, test = _split(X.shape[0], X.shape[0] // 10)
    return Dataset(name, X[train], y[train], X[test], y[test], [None], f"{name} (LIBSVM), binary")


#: ijcnn1's kernel widths by the median heuristic digits uses (500 random pairs):
#: median ‖x−y‖² ≈ 2.6 gives the RBF γ = 0.4, median ‖x−y‖₁ ≈ 4 the Laplacian σ = 1
IJCNN1_GAMMA, IJCNN1_SIGMA = 0.4, 1.0


def table2_datasets(cfg) -> list[Dataset]:
    """Table 2's substitutes: ijcnn1 with RF / RB features, news20 one-vs-rest (20 classes).

    The paper's RF / RB sets map tens of thousands of low-dimensional samples
    to 10,000 dense RF features or 10⁵-10⁶ sparse RB features, and its text
    sets are multiclass; the closest here are ijcnn1 (49,990 x 22) with the same
    two maps and news20 (15,935 x 62,061, 20 classes, tf-idf with unit rows
    as in :func:`cdlearn.experiments.faceoff.tfidf_unit_rows`). 10% test rows.
    """
    from ..datasets.libsvm import load_libsvm
    from ..features import RandomBinningFeatures, RandomFourierFeatures
    from .faceoff import _data_dirs, load_dataset, tfidf_unit_rows

    X, y = load_dataset("ijcnn1")
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    out = []
    for name, rows, make, desc in (
        ("ijcnn1-RF", cfg["t2_rf_rows"],
         RandomFourierFeatures(n_components=cfg["t2_rf"], gamma=IJCNN1_GAMMA, random_state=0),
         f"ijcnn1, Random Fourier features (RBF, γ = {IJCNN1_GAMMA}), D = {cfg['t2_rf']:,}"),
        ("ijcnn1-RB", cfg["t2_rb_rows"],
         RandomBinningFeatures(n_components=cfg["t2_rb"], sigma=IJCNN1_SIGMA, random_state=0),
         f"ijcnn1, Random Binning features (Laplacian, σ = {IJCNN1_SIGMA}), "
         f"{cfg['t2_rb']} grids"),
    ):
        Xs, ys = _subsample(X, y, rows)
        train, test = _split(Xs.shape[0], Xs.shape[0] // 10)
        make.fit(Xs[train])
        Xtr, Xte = make.transform(Xs[train]), make.transform(Xs[test])
        if sp.issparse(Xtr):
            Xtr, Xte = sp.csr_matrix(Xtr), sp.csr_matrix(Xte)
        out.append(Dataset(name, Xtr, ys[train], Xte, ys[test], [None],
                           desc + ("" if rows is None else f"; {rows:,} random rows")))
    news = None
    for folder in _data_dirs():
        try:
            news = load_libsvm("news20", cache_dir=folder, download=False)
            break
        except FileNotFoundError:
            continue
    if news is not None:
        Xn, yn = _subsample(tfidf_unit_rows(news[0]), news[1], cfg["t2_news_rows"])
        Xn = sp.csr_matrix(Xn[:, np.flatnonzero(Xn.getnnz(axis=0))])
        train, test = _split(Xn.shape[0], Xn.shape[0] // 10)
        out.append(Dataset("news20-OvR", Xn[train], yn[train], Xn[test], yn[test],
                           sorted(int(c) for c in np.unique(yn[train])),
                           "news20 (LIBSVM multiclass, 20 classes), tf-idf with unit rows"
                           + ("" if cfg["t2_news_rows"] is None
                              else f"; {cfg['t2_news_rows']:,} random documents")))
    return out


def all_datasets(cfg) -> list[Dataset]:
    sets = digits_datasets(cfg)
    news = news20_dataset(cfg)
    return sets + ([news] if news is not None else [])


# --------------------------------------------------------------------------- one run
def _build(design, y, method, pen, seed):
    from ..api import make_problem
    from ..solvers import SOLVERS

    solver, opts = METHODS[method]
    problem = make_problem(design, y, loss=LOSS, **pen)
    return problem, SOLVERS[solver].build(problem, seed=seed, **opts)


def run_method(design, y, method, pen, f_star, *, stop_rel, max_epochs, max_seconds, seed=0):
    """Epochs of ``method`` until ``(P − f*)/f* ≤ stop_rel``; rows per epoch.

    Rows: ``(iterations, passes, seconds, primal, nnz_primal, nnz_dual)``; seconds
    count only the epochs (kernel calls).
    """
    from ..objectives import primal_value

    problem, state = _build(design, y, method, pen, seed)
    nnz = max(design.nnz, 1)
    p0 = primal_value(problem.loss_code, np.zeros(design.n_samples), problem.y,
                      problem.sample_weight, np.zeros(1), 0.0, 0.0)
    rows = [(0, 0.0, 0.0, p0, 0, 0)]
    seconds = passes = 0.0
    for epoch in range(1, max_epochs + 1):
        t0 = time.perf_counter()
        entries, _ = state.run_epoch()
        seconds += time.perf_counter() - t0
        passes += entries / nnz
        w, alpha, _ = state.iterate()
        z = design.matvec(w)
        primal = primal_value(problem.loss_code, z, problem.y, problem.sample_weight, w,
                              problem.l1, problem.l2)
        iters = getattr(state, "iterations", epoch) if method == "DGPD" else epoch
        rows.append((iters, passes, seconds, primal, int(np.count_nonzero(w)),
                     int(np.count_nonzero(alpha)) if alpha is not None else -1))
        if not np.isfinite(primal):
            raise FloatingPointError(f"{method} diverged at epoch {epoch}")
        if (primal - f_star) / f_star <= stop_rel or seconds > max_seconds:
            break
    return rows


def reference_optimum(design, y, pen, tol) -> float:
    """P* from dual CD run to a duality gap ≤ tol·P(0) (an upper bound within that gap)."""
    from ..multiclass import solve

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve(design, y, loss=LOSS, solver="dual-cd", tol=tol, max_epochs=100_000, **pen)
    return res.primal


def aggregate(per_class_rows, f_stars):
    """OvR sum of per-class traces aligned by epoch (a finished class keeps its last row).

    Returns arrays: iterations (mean over classes), passes (mean), seconds (sum),
    relative objective of the summed objective, nnz primal (sum), nnz dual (sum).
    """
    length = max(len(r) for r in per_class_rows)
    arr = []
    for rows in per_class_rows:
        a = np.array(rows, dtype=np.float64)
        if a.shape[0] < length:
            a = np.vstack([a, np.repeat(a[-1:], length - a.shape[0], axis=0)])
        arr.append(a)
    arr = np.stack(arr)  # (classes, epochs, 6)
    f = float(np.sum(f_stars))
    rel = (arr[:, :, 3].sum(axis=0) - f) / f
    return dict(iterations=arr[:, :, 0].mean(axis=0), passes=arr[:, :, 1].mean(axis=0),
                seconds=arr[:, :, 2].sum(axis=0), rel=rel, nnz_primal=arr[:, :, 4].sum(axis=0),
                nnz_dual=arr[:, :, 5].sum(axis=0))


def first_reach(curve, key, target=TARGET):
    hit = np.flatnonzero(curve["rel"] <= target)
    return float(curve[key][hit[0]]) if hit.size else float("nan")


def _warm_up():
    """Compile / load every method's kernel once, outside the timings."""
    from ..data import as_design

    rng = np.random.default_rng(0)
    for X in (rng.random((20, 5)), sp.csr_matrix(rng.random((20, 5)))):
        y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
        d = as_design(X)
        for m in METHODS:
            run_method(d, y, m, paper_penalty(0.1, 0.01, 20), 1e-12, stop_rel=0.0,
                       max_epochs=2, max_seconds=1.0)


def run_grid(datasets, grid, cfg, *, methods=tuple(METHODS), log=print):
    """Every (dataset, λ, μ, method, repeat): aggregated curves and per-class f*.

    Repeats (``cfg["repeats"]``, seeds 0, 1, ...) only at the main point (λ=0.1, μ=0.01).
    """
    from ..data import as_design

    ref_tol, stop_rel = cfg["ref_tol"], cfg["stop_rel"]
    max_epochs, max_seconds = cfg["max_epochs"], cfg["max_seconds"]  # per binary problem
    results = []
    for ds in datasets:
        design = as_design(ds.X)
        n = design.n_samples
        problems = ds.targets()
        for lam, mu in grid:
            pen = paper_penalty(lam, mu, n)
            f_stars = np.array([reference_optimum(design, yk, pen, ref_tol)
                                for _, yk in problems])
            repeats = cfg["repeats"] if (lam, mu) == MAIN else 1
            runs = {}
            for method in methods:
                for rep in range(repeats):
                    per_class = [run_method(design, yk, method, pen, f_stars[k],
                                            stop_rel=stop_rel, max_epochs=max_epochs,
                                            max_seconds=max_seconds, seed=rep)
                                 for k, (_, yk) in enumerate(problems)]
                    runs[(method, rep)] = per_class
            # the best value any run reached refines the reference (never above it)
            for k in range(len(problems)):
                seen = min(min(r[3] for r in runs[key][k]) for key in runs)
                f_stars[k] = min(f_stars[k], seen)
            for (method, rep), per_class in runs.items():
                curve = aggregate(per_class, f_stars)
                results.append(dict(dataset=ds.name, lam=lam, mu=mu, method=method, repeat=rep,
                                    curve=curve, f_star=float(f_stars.sum())))
            log(f"{ds.name} λ={lam} μ={mu}: done")
    return results


def summarize(results):
    """Median over repeats of time / iterations / passes to TARGET, per (dataset, λ, μ, method).

    NaN when the median run did not reach the target. ``seconds_lower`` bounds the
    median time from below: a run that stopped (budget or epochs) before the target
    counts with the time it ran, which its time to the target exceeds.
    """
    groups = {}
    for r in results:
        groups.setdefault((r["dataset"], r["lam"], r["mu"], r["method"]), []).append(r)
    rows = []
    for (ds, lam, mu, method), runs in groups.items():
        # a run that never reached the target counts as +inf in the median
        med = {}
        for key in ("seconds", "iterations", "passes"):
            vals = [first_reach(r["curve"], key) for r in runs]
            m = float(np.median([v if np.isfinite(v) else np.inf for v in vals]))
            med[key] = m if np.isfinite(m) else float("nan")
        lower = [first_reach(r["curve"], "seconds") for r in runs]
        lower = [v if np.isfinite(v) else float(r["curve"]["seconds"][-1])
                 for v, r in zip(lower, runs, strict=True)]
        final = min(float(r["curve"]["rel"][-1]) for r in runs)
        rows.append(dict(dataset=ds, lam=lam, mu=mu, method=method, repeats=len(runs),
                         final_rel=final, seconds_lower=float(np.median(lower)), **med))
    return rows


def best_baseline(rows) -> tuple[float, float]:
    """``(low, high)`` bounds on the fastest baseline's median time to the target.

    ``high``: the fastest baseline that reached it (inf if none did); ``low``: the
    smallest lower bound over all baselines (:func:`summarize`), equal to ``high``
    when no stopped baseline could have been faster than the one that reached it.
    """
    others = [r for r in rows if r["method"] != "DGPD"]
    high = min((r["seconds"] for r in others if np.isfinite(r["seconds"])), default=np.inf)
    low = min((r["seconds_lower"] for r in others), default=np.inf)
    return min(low, high), high


def ratio_text(dgpd_seconds: float, low: float, high: float) -> str:
    """Best baseline / DGPD time, as a value, a range or a lower bound."""
    if not np.isfinite(dgpd_seconds):
        return "n/a (DGPD did not reach 1e-4)"
    if low == high:
        return f"{high / dgpd_seconds:.2g}"
    if np.isfinite(high):
        return f"{low / dgpd_seconds:.2g}-{high / dgpd_seconds:.2g}"
    return f"> {low / dgpd_seconds:.2g}"


def _write_curves(path, results):
    with open(path, "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["dataset", "lam", "mu", "method", "repeat", "iterations", "passes",
                     "seconds", "rel_objective", "nnz_primal", "nnz_dual"])
        for r in results:
            c = r["curve"]
            for k in range(c["rel"].size):
                wr.writerow([r["dataset"], r["lam"], r["mu"], r["method"], r["repeat"],
                             f"{c['iterations'][k]:.6g}", f"{c['passes'][k]:.6g}",
                             f"{c['seconds'][k]:.6g}", f"{c['rel'][k]:.6e}",
                             int(c["nnz_primal"][k]), int(c["nnz_dual"][k])])


def _write_summary(path, rows):
    with open(path, "w", newline="") as fh:
        wr = csv.writer(fh)
        keys = ["dataset", "lam", "mu", "method", "repeats", "seconds", "iterations", "passes",
                "seconds_lower", "final_rel"]
        wr.writerow([k if k not in ("seconds", "iterations", "passes", "seconds_lower")
                     else f"median_{k}_to_{TARGET:g}" for k in keys])
        for r in rows:
            wr.writerow([r[k] for k in keys])


#: time panels on a log axis, as the paper's Mnist-RB, Aloi-RB and RCV panels (their
#: counterparts here); the RF panels keep the paper's linear time axis
LOG_TIME = ("digits-RB", "news20-binary")


def _plot(results, datasets, grid, path, *, stop_rel, x_keys=("seconds", "iterations")):
    n_rows = len(grid) * len(x_keys)
    fig, axes = report.panels(n_rows, len(datasets), extra_height=0.8)
    for gi, (lam, mu) in enumerate(grid):
        for xi, key in enumerate(x_keys):
            row = gi * len(x_keys) + xi
            for col, ds in enumerate(datasets):
                ax = axes[row, col]
                xlog = key == "seconds" and ds.name in LOG_TIME
                for method in METHODS:  # the paper's legend order
                    runs = [r for r in results if r["dataset"] == ds.name and r["lam"] == lam
                            and r["mu"] == mu and r["method"] == method and r["repeat"] == 0]
                    if not runs:
                        continue
                    c = runs[0]["curve"]
                    keep = c["rel"] > 1e-12
                    if xlog:
                        keep &= c[key] > 0
                    ax.plot(c[key][keep], c["rel"][keep], label=method)
                ax.axhline(TARGET, color="0.4", ls=":", lw=1.0, label=f"target {TARGET:.0e} (verdict)")
                kind = ("binary" if ds.classes == [None]
                        else f"sum over {len(ds.classes)} OvR classes")
                xlabel = ("iterations (epochs; DGPD: search + rounds)" if key == "iterations"
                          else "time in the methods' epochs (s)"
                          + (", log scale" if xlog else ""))
                report.label_axes(ax, title=f"{ds.name} ({kind}), λ={lam}, μ={mu}",
                                  xlabel=xlabel, ylabel="relative objective (P − P*)/P*",
                                  ylog=True, xlog=xlog)
    fig.suptitle("Relative objective vs time (s) and iterations; seed 0 of each method; "
                 f"each stops at {stop_rel:g} or its budget (see README)")
    report.legend_below(fig, axes[0, 0])
    report.save_figure(fig, path)


def _describe(d) -> str:
    kind = (f"one-vs-rest over classes {', '.join(map(str, d.classes))}"
            if d.classes != [None] else "binary")
    return (f"- **{d.name}**: {d.source}; {d.X.shape[0]:,} training rows, {d.X.shape[1]:,} "
            f"features, {kind}.")


def _fmt(v, spec=".3g"):
    return "not reached" if not np.isfinite(v) else format(v, spec)


@register("dgpd-fig1",
          title="DGPD Figure 1: relative objective vs time and iterations",
          paper=DGPD_PAPER,
          description="DGPD, PrimalRCD, DualRCD, SPDC; λ = 0.1, μ = 0.01 (Appendix B's grid: "
                      "grid=APPENDIX_GRID); digits-RF/RB (OvR) and news20 binarized.")
@report.styled
def run_fig1(out_dir: Path, full: bool, *, grid=(MAIN,)) -> Path:
    """DGPD Figure 1 (see the module docstring); ``grid=APPENDIX_GRID`` adds Appendix B's."""
    from ..report import write_markdown

    out_dir = Path(out_dir)
    grid = list(grid)
    if MAIN not in grid:
        raise ValueError(f"grid must contain Figure 1's (λ, μ) = {MAIN}, got {grid}")
    cfg = FULL if full else QUICK
    datasets = all_datasets(cfg)
    _warm_up()
    results = run_grid(datasets, grid, cfg, log=lambda *_: None)
    rows = summarize(results)
    _write_curves(out_dir / "fig1_curves.csv", results)
    _write_summary(out_dir / "fig1_summary.csv", rows)
    _plot(results, datasets, [MAIN], out_dir / "fig1.png", stop_rel=cfg["stop_rel"])
    if len(grid) > 1:
        _plot(results, datasets, grid, out_dir / "fig1_appendix.png", stop_rel=cfg["stop_rel"],
              x_keys=("seconds",))

    lines = ["| dataset | λ | μ | method | time to 1e-4 (s, median) | iterations | passes | "
             "best rel. objective |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        reach = (_fmt(r["seconds"]) if np.isfinite(r["seconds"])
                 else f"not reached (> {r['seconds_lower']:.3g})")
        lines.append(f"| {r['dataset']} | {r['lam']} | {r['mu']} | {r['method']} | "
                     f"{reach} | {_fmt(r['iterations'])} | {_fmt(r['passes'])} | "
                     f"{r['final_rel']:.2e} |")
    speed = []
    for ds in datasets:
        for lam, mu in grid:
            sel = [r for r in rows if r["dataset"] == ds.name and r["lam"] == lam
                   and r["mu"] == mu]
            dg = [r["seconds"] for r in sel if r["method"] == "DGPD"]
            if dg:
                speed.append((ds.name, lam, mu, dg[0], *best_baseline(sel)))

    def secs(v):
        return f"{v:.3g} s" if np.isfinite(v) else "not reached"

    def best_secs(low, high):
        return (secs(high) if low == high else f"{low:.3g}-{high:.3g} s" if np.isfinite(high)
                else f"not reached (> {low:.3g} s)")

    sp_lines = [f"- {n}, λ={lam}, μ={mu}: DGPD {secs(d)}, best baseline {best_secs(lo, hi)} "
                f"(best baseline / DGPD = {ratio_text(d, lo, hi)})"
                for n, lam, mu, d, lo, hi in speed]
    sparsity = []
    for ds in datasets:
        runs = [r for r in results if r["dataset"] == ds.name and r["lam"] == MAIN[0]
                and r["mu"] == MAIN[1] and r["method"] == "DualRCD" and r["repeat"] == 0]
        if runs:
            c = runs[0]["curve"]
            k = len(ds.targets())
            sparsity.append(
                f"- {ds.name}: {100 * c['nnz_dual'][-1] / (k * ds.X.shape[0]):.0f}% of the dual "
                f"and {100 * c['nnz_primal'][-1] / (k * ds.X.shape[1]):.1f}% of the primal "
                "variables are nonzero at DualRCD's last iterate")
    body = (
        f"Run: {'full' if full else 'quick'} (grid: "
        f"{', '.join(f'(λ={a}, μ={b})' for a, b in grid)}"
        + ("" if len(grid) > 1 else
           "; Figure 1's point only: Appendix B's other five (λ, μ) are not part of this run "
           "(`run_fig1(out_dir, full, grid=APPENDIX_GRID)` runs them; the six-point grid with "
           "120 s per problem did not finish in 13 minutes)")
        + f"; median over {cfg['repeats']} seed(s) at λ=0.1, μ=0.01"
        + (", one elsewhere" if len(grid) > 1 else "") + "). Every "
        f"method has the same budget: each binary problem stops at relative objective "
        f"{cfg['stop_rel']:g}, after {cfg['max_epochs']:,} epochs or "
        + (f"{cfg['max_seconds']:g} s of epoch time (a 10-class set: up to "
           f"{10 * cfg['max_seconds']:g} s per method and seed)"
           if np.isfinite(cfg["max_seconds"]) else "no time limit")
        + ". A method stopped before 1e-4 shows 'not reached (> t)', t the epoch time it ran "
        "(median over seeds), which its time to 1e-4 exceeds; the best baseline's time is a "
        "range when a stopped baseline's t lies below it, and the verdict counts DGPD "
        "faster only when it beats every baseline's time or t by more than 10%.\n\n"
        + "\n".join(lines)
        + "\n\nDGPD against the fastest baseline (time to relative objective 1e-4):\n\n"
        + "\n".join(sp_lines)
        + "\n\nPaper (Figure 1, λ = 0.1, μ = 0.01): DGPD is faster than all baselines on "
        "every data set, by orders of magnitude on the RB features and RCV1, 'up to 30 "
        "times' overall; per iteration DGPD is comparable to DualRCD.\n\n"
        "Reading the results. DGPD with active sets lets each active set double per search "
        "(Algorithm 2 as printed adds one coordinate per search: with supports in the "
        "thousands it did not converge on news20) and runs dual CD steps in a random order "
        "on the submatrix of the active rows and columns between searches; a search costs "
        "about the nonzeros of the active rows and columns plus n + d. It pays off when "
        "both solutions are sparse relative to n and d (the paper's premise: e.g. 1,447 "
        "nonzero dual variables of 199,328 on RCV1). Here:\n\n"
        + "\n".join(sparsity)
        + "\n\nWhere most features and a large share of the samples stay active (a9a: 104 "
        "of 123 features, half of the samples; see "
        "benchmarks/results/dgpd_fig1_time_to_target.md) a search costs about as much as "
        "the rounds it serves and DGPD is no faster than dual CD. SPDC converges in few epochs "
        "but its lazy sparse update costs far more per nonzero than a dual CD step (each "
        "touched coordinate is first brought up to date through the elastic-net prox "
        "recursion), as the DGPD paper notes for SPDC's sparse implementation.\n"
    )
    data = "\n".join(_describe(d) for d in datasets)
    data += ("\n\nSubstitutes: MNIST and Aloi are not available here, digits (1,797 images) "
             "replaces them with the same RF / RB feature maps; RCV1-regions and sector are "
             "replaced by news20 binarized. All sets are far smaller than the paper's.")
    mapping = (
        "The paper's experiments use the summed loss `Σ φ_i + μ/2‖x‖² + λ‖x‖₁` (with the "
        "1/n-averaged eq. (1) and λ = 0.1 the optimum is x = 0 on these features, "
        "contradicting Table 2's nonzero counts); cdlearn solves it as "
        "`penalty='elastic_net', lam=(λ+μ)/n, l1_ratio=λ/(λ+μ)` with the smooth hinge loss. "
        "P* is dual CD's solution at a duality gap ≤ "
        f"{cfg['ref_tol']:g}·P(0) (or the lowest objective any run reached). "
        "Time counts only the methods' epochs. Iterations: one epoch for the baselines, one "
        "search + its rounds (at least 5, as in the paper) over the active sets for DGPD; "
        "multiclass "
        "curves sum the per-class objectives and times."
    )
    write_markdown(out_dir / "README.md", "DGPD Figure 1: relative objective vs time and "
                   "iterations", [("Result", body), ("Data", data), ("Setup", mapping)])
    main = [(n, dg, lo, hi) for n, lam, mu, dg, lo, hi in speed if (lam, mu) == MAIN]
    # DGPD "faster" = it reached 1e-4 and no baseline did so, or could have done so
    # (a run stopped by the budget), within 10% of its time
    wins = [n for n, dg, lo, _ in main if np.isfinite(dg) and not lo * TIE < dg]
    verdict = "agrees" if main and len(wins) == len(main) else "partly" if wins else "no"
    write_verdict(
        out_dir, exp_id="dgpd-fig1", full=full,
        claim="λ = 0.1, μ = 0.01: DGPD reaches a given relative objective faster than "
              "PrimalRCD, DualRCD and SPDC on every data set (up to 30x)",
        ours="best baseline / DGPD time to 1e-4: " + ", ".join(
            f"{n} {ratio_text(dg, lo, hi)}" for n, dg, lo, hi in main),
        verdict=verdict,
        reason=("DGPD fastest on every substitute data set" if verdict == "agrees" else
                "DGPD not the fastest on " + ", ".join(n for n, *_ in main if n not in wins)
                + " (digits / news20 substitutes, far smaller and less sparse than the "
                "paper's sets)"),
        evidence="README.md#result")
    return out_dir


TIE = 1.1  #: times within 10% count as a tie


#: a variable counts as nonzero when ``|v| > NZ_REL · max|v|`` over its binary problem
#: (DGPD's prox and the smooth hinge's flat part give exact zeros; the threshold only
#: keeps round-off from counting)
NZ_REL = 1e-9


def _nonzeros(values) -> int:
    a = np.abs(np.atleast_2d(values))
    return int(np.sum(a > NZ_REL * a.max(axis=1, keepdims=True)))


def _counts(res):
    coef = np.atleast_2d(res.coef if hasattr(res, "classes") else res.w)
    return _nonzeros(coef), _nonzeros(res.alpha), coef.shape[0]


def table2_rows(datasets, *, tol=TABLE_TOL, max_epochs=5000, n_jobs=None):
    """Statistics and nonzeros at λ = 0.1, μ = 0.01 (sums over the OvR problems).

    DGPD (active sets) stops at a gap ≤ ``tol``·P(0) or ``max_epochs``; dual CD
    at a gap ≤ 1e-9·P(0) gives the optimum's counts and the test accuracy, and
    the same objective with the 1/n-averaged loss is solved for comparison.
    """
    from ..data import as_design
    from ..multiclass import solve

    rows = []
    for ds in datasets:
        design = as_design(ds.X)
        n = design.n_samples
        pen = paper_penalty(*MAIN, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dg = solve(design, ds.y, loss=LOSS, solver="dgpd", active_set=True, tol=tol,
                       max_epochs=max_epochs, n_jobs=n_jobs, **pen)
            opt = solve(design, ds.y, loss=LOSS, solver="dual-cd", tol=1e-9,
                        max_epochs=100_000, n_jobs=n_jobs, **pen)
            mean = solve(design, ds.y, loss=LOSS, solver="dual-cd", tol=1e-9,
                         max_epochs=100_000, n_jobs=n_jobs, **dict(pen, lam=sum(MAIN)))
        nzp, nzd, problems = _counts(dg)
        nzp_opt, nzd_opt, _ = _counts(opt)
        nzp_mean, nzd_mean, _ = _counts(mean)
        if hasattr(opt, "classes"):
            pred = opt.predict(ds.X_test)
        else:
            pred = np.where(as_design(ds.X_test).matvec(opt.w) > 0, 1.0, -1.0)
        rows.append(dict(
            dataset=ds.name, features=design.n_features, nnz_per_sample=design.nnz / n,
            train=n, test=ds.X_test.shape[0], classes=len(np.unique(ds.y)),
            nz_primal=nzp, nz_dual=nzd, problems=problems,
            converged=bool(np.all(dg.converged)), gap=float(np.max(dg.gap)),
            nz_primal_opt=nzp_opt, nz_dual_opt=nzd_opt,
            test_accuracy=float(np.mean(pred == ds.y_test)),
            nz_primal_mean_scaling=nzp_mean, nz_dual_mean_scaling=nzd_mean,
        ))
    return rows


@register("dgpd-table2",
          title="DGPD Table 2: data statistics and #nonzero primal / dual variables of DGPD",
          paper=DGPD_PAPER,
          description="λ = 0.1, μ = 0.01; ijcnn1-RF/RB and news20 one-vs-rest (20 classes).")
@report.styled
def run_table2(out_dir: Path, full: bool) -> Path:
    """DGPD Table 2 (see the module docstring)."""
    from ..report import write_markdown

    out_dir = Path(out_dir)
    cfg = FULL if full else QUICK
    datasets = table2_datasets(cfg)
    rows = table2_rows(datasets, max_epochs=cfg["table_epochs"])
    keys = ["dataset", "features", "nnz_per_sample", "train", "test", "classes", "nz_primal",
            "nz_dual", "problems", "converged", "gap", "nz_primal_opt", "nz_dual_opt",
            "test_accuracy", "nz_primal_mean_scaling", "nz_dual_mean_scaling"]
    with open(out_dir / "table2.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(keys)
        for r in rows:
            wr.writerow([r[k] for k in keys])
    ours = ["| Data set | #features | #nonzero/sample | #train | #test | #classes | "
            "#nz-primal | #nz-dual | DGPD gap/P(0) reached | #nz-primal / #nz-dual at the "
            "optimum | test accuracy |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ours.append(f"| {r['dataset']} | {r['features']:,} | {r['nnz_per_sample']:.2f} | "
                    f"{r['train']:,} | {r['test']:,} | {r['classes']} | {r['nz_primal']:,} | "
                    f"{r['nz_dual']:,} | {r['gap'] / 0.5:.1e}"
                    f"{'' if r['converged'] else ' (max_epochs)'} | {r['nz_primal_opt']:,} / "
                    f"{r['nz_dual_opt']:,} | {r['test_accuracy']:.3f} |")
    paper = ["| Data set | #features | #nonzero/sample | #train | #test | #classes | "
             "#nz-primal | #nz-dual |", "|---|---|---|---|---|---|---|---|"]
    paper += ["| " + " | ".join(str(v) for v in row) + " |" for row in PAPER_TABLE2]
    frac = {r["dataset"]: (r["nz_primal"] / (r["problems"] * r["features"]),
                           r["nz_dual"] / (r["problems"] * r["train"]), r["converged"])
            for r in rows}
    fractions = ["| Data set | primal nonzero | dual nonzero | the paper's counterparts "
                 "(primal / dual) | within 3x: primal / dual |", "|---|---|---|---|---|"]
    checks = {}
    for name, (p, d, conv) in frac.items():
        sets = COUNTERPARTS.get(name, ())
        ref = [paper_fractions(c) for c in sets]
        checks[name] = ok = (conv and bool(ref) and fraction_agrees(p, [r[0] for r in ref]),
                             conv and bool(ref) and fraction_agrees(d, [r[1] for r in ref]))
        fractions.append(
            f"| {name} | {p:.2%} | {d:.2%} | "
            + "; ".join(f"{c} {rp:.2%} / {rd:.2%}" for c, (rp, rd) in zip(sets, ref,
                                                                           strict=True))
            + f" | {'yes' if ok[0] else 'no'} / {'yes' if ok[1] else 'no'} |")
    agreeing = [k for k, ok in checks.items() if all(ok)]
    verdict = ("agrees" if len(agreeing) == len(checks) else
               "partly" if any(any(ok) for ok in checks.values()) else "no")
    summed = ["| Data set (paper) | per problem: primal / dual | summed over the classes: "
              "primal / dual |", "|---|---|---|"]
    summed += [f"| {name} | {paper_fractions(name)[0]:.3%} / {paper_fractions(name)[1]:.3%} | "
               f"{_paper_fraction(nzp, feats, k):.4%} / {_paper_fraction(nzd, train, k):.4%} |"
               for name, feats, _, train, _, k, nzp, nzd in PAPER_TABLE2]
    scaling = "\n".join(
        f"- {r['dataset']}: summed loss (used) {r['nz_primal']:,} primal / {r['nz_dual']:,} "
        f"dual nonzeros; 1/n-averaged loss {r['nz_primal_mean_scaling']:,} / "
        f"{r['nz_dual_mean_scaling']:,} (of {r['problems'] * r['train']:,} dual variables)"
        for r in rows)
    body = (
        f"Run: {'full' if full else 'quick'}. DGPD with active sets at λ = 0.1, μ = 0.01, "
        f"smooth hinge, until a duality gap ≤ {TABLE_TOL:g}·P(0) per binary problem or "
        f"{cfg['table_epochs']} epochs (the largest gap is shown); nonzeros are summed over "
        "the one-vs-rest problems (news20: 20; the ijcnn1 sets are binary); a variable "
        f"counts as nonzero when |v| > {NZ_REL:g}·max|v| of its problem. The optimum's "
        "counts and the test accuracy come from dual CD at a gap ≤ 1e-9·P(0).\n\n"
        + "\n".join(ours)
        + "\n\nPaper (Table 2):\n\n" + "\n".join(paper)
        + "\n\nNonzero fractions per binary problem (ours: nonzeros / (problems x features) "
        "primal, / (problems x training samples) dual, i.e. the mean over the one-vs-rest "
        "problems; the paper's: its count / #features and / #train):\n\n"
        + "\n".join(fractions)
        + "\n\nHow Table 2 counts over the classes is not stated. Read as sums over the "
        "one-vs-rest problems its counts are impossible (Aloi-RF: 891 primal nonzeros over "
        "1,000 classes leave most classes at w = 0, and such a class has all its 90,000 dual "
        "variables nonzero, margin 0 < 1, against 1,428 in the table), so the verdict reads "
        "them per problem. Both readings:\n\n" + "\n".join(summed)
        + f"\n\nVerdict rule: a set agrees when DGPD converged and its primal and its dual "
        f"fraction each lie within {FRACTION_FACTOR:g}x of the range of its counterparts' "
        "(RF: Mnist-RF, Aloi-RF; RB: Mnist-RB, Aloi-RB; text: RCV1-Regions, Sector); "
        "**agrees** if every set does, **partly** if some fraction does, **no** otherwise: "
        f"**{verdict}**.\n\n" + SWEEP_NOTE
        + "\n\nWhich objective scaling the paper used, checked on the data:\n\n"
        + scaling
        + "\n\nEvery sample has (about) unit norm, as in the paper's constructions: RF "
        "rows sqrt(2/D)·cos(·) have norm ≈ 1, RB rows one 1/sqrt(P) per grid, news20 rows are "
        "scaled to 1; the loss is summed, not averaged, over the samples."
        + "\n\nWith the averaged loss the L1 term (λ = 0.1) leaves almost no nonzero weight "
        "and every sample keeps a nonzero dual variable, unlike the paper's table, where "
        "#nz-dual is a small fraction of the samples: the summed loss is the paper's "
        "experimental objective.\n"
    )
    data = ("\n".join(_describe(d) for d in datasets)
            + "\n\nijcnn1 (49,990 x 22, the largest low-dimensional set here) with the "
            "paper's two maps stands in for MNIST / Aloi: RF gives dense features (the "
            "paper: 10,000 per sample; D = 4,000 on 18,000 rows keeps D/n = 0.22 near the "
            "paper's 0.11-0.17, D = 10,000 would need all of ijcnn1 as 3.6 GB of dense features), RB "
            "sparse ones (one per grid; the full run uses 200 grids as the paper's Aloi-RB, "
            "Mnist-RB has 1,000); the kernel widths (not given in the paper) follow the "
            "median heuristic used for digits in "
            "`dgpd-fig1`. news20 one-vs-rest over its 20 classes (tf-idf, unit rows) stands in "
            "for the multiclass text sets RCV1-regions and sector. 10% of the rows are held "
            "out. `dgpd-fig1` keeps its smaller digits / news20-binary sets (its timings are "
            "measured there).")
    write_markdown(out_dir / "README.md", "DGPD Table 2: data statistics and DGPD's sparsity",
                   [("Result", body), ("Data", data)])
    off = [f"{k} {'primal' if i == 0 else 'dual'}" for k, ok in checks.items()
           for i in (0, 1) if not ok[i]]
    write_verdict(
        out_dir, exp_id="dgpd-table2", full=full,
        claim="at λ = 0.1, μ = 0.01 DGPD's solution is sparse in both the primal and the dual "
              "(per problem: Mnist-RF 1,730 of 10,000 primal, 2,000 of 58,000 dual nonzero; "
              "all sets 0.1-17% primal, 0.7-8.4% dual)",
        ours="nonzero fraction primal / dual: " + ", ".join(
            f"{k} {p:.1%} / {d:.1%}" + ("" if conv else " (not converged)")
            for k, (p, d, conv) in frac.items()),
        verdict=verdict,
        reason=(f"every fraction within {FRACTION_FACTOR:g}x of its counterparts' in Table 2"
                if verdict == "agrees" else
                f"outside {FRACTION_FACTOR:g}x of the paper's counterparts: " + ", ".join(off)
                + "; the dual nonzeros are samples inside the margin, which the unstated "
                "feature scale and kernel width move and λ does not bring to the paper's "
                "few percent (sweep: `benchmarks/results/dgpd_table2_sweep.md`)"),
        evidence="README.md#result")
    return out_dir


SWEEP_NOTE = (
    "What the fractions depend on that the paper does not give (measured at the optimum by "
    "`benchmarks/dgpd_table2_sweep.py` on the quick sets, "
    "`benchmarks/results/dgpd_table2_sweep.md`): "
    "the dual nonzeros are the samples with margin < 1, nearly all of them classified "
    "correctly but inside the margin, not errors. Over λ = 0.01..10 (μ = 0.01) the dual "
    "fraction is smallest at λ ≤ 0.1 and stays several times the paper's; larger feature "
    "rows (rows of norm s are λ/s and μ/s² on unit rows; the paper does not say how it "
    "scaled its RF / RB features, nor its kernel widths) leave fewer samples inside the "
    "margin. From a relative objective of 1e-2 on, DGPD's counts along its run are within "
    "2 points of the optimum's and denser, not sparser, so an earlier stop would not "
    "explain the gap. Rows of norm 1 "
    "(RF: sqrt(2/D)·cos) are kept.")


def _paper_fraction(count: str, total: str, classes: int) -> float:
    """A Table 2 count as a fraction of ``classes x total`` (the table prints strings)."""
    return float(count.replace(",", "")) / (classes * float(total.replace(",", "")))
