"""Huge-scale Lasso tables of Richtárik & Takáč, *Iteration complexity of randomized
block-coordinate descent methods for minimizing a composite function* (RCDC), §6.1.

``rcdc-table5``  seconds per n iterations of UCDC against ‖A‖₀ and ‖x*‖₀ (m = 10⁷, n = 10⁶);
``rcdc-table6``  UCDC on m = 2·10⁷, n = 10⁶, ‖A‖₀ = 5·10⁷, ‖x*‖₀ = 160,000: a row per
                 decade of the relative residual (F(x_k) − F*)/(F(x_0) − F*), to 1e-18;
``rcdc-table7``  the billion-variable instance does not fit: a family of instances with
                 Table 7's shape ratios (m = 10n, ‖A‖₀ = 20n) up to the largest that fits
                 ~6 GB, time per pass against ‖A‖₀, extrapolated to ‖A‖₀ = 2·10¹⁰;
``rcdc-table8``  the fat instance m = 10⁴, n = 10⁵, ‖A‖₀ = 10⁷, ‖x*‖₀ = 1,600 under a
                 time budget, UCDC and q-shrinking side by side.

The method is the paper's Algorithm 4 (UCDC: uniform probabilities, exact
coordinate minimisation, residual ``g = Ax − b`` kept up to date), run by the
q-shrinking kernel of primal CD (:mod:`cdlearn.kernels.primal_shrinking`; q = 0 is
UCDC, and the kernel keeps ‖x_k‖₀ for free). The driver hands the kernel the
residual form of Algorithm 4 directly: margins ``z = g = Ax − b`` (x0 = 0 gives
g0 = −b), targets ``y ≡ 0`` and weights ``s ≡ 1`` as zero-stride read-only views, so
a coordinate step reads one length-m vector at random rows instead of three
(z, y, s) -- the random row accesses are what a step costs at this size.

Instances come from Nesterov's generator
(:func:`cdlearn.datasets.nesterov.make_lasso_known_optimum`, λ = 1, L_i uniform in
(0, 1], the same number of nonzeros in every column). The residual is evaluated
without cancellation from the known optimum: with ``c = Aᵀv*``,

    F(x) − F* = ½‖A(x − x*)‖² + Σ_i (λ|x_i| − c_i x_i),   A(x − x*) = g + v*,

every term ≥ 0; the driver uses the O(m) form ``½‖g + v*‖²`` at each check and a fresh product
``A(x − x*)`` for the reported rows. The linear part is summed as
``Σ_i λ|x_i| − λ|x*_i| − c_i(x_i − x*_i)`` with the support terms written as
``(λ s_i − c_i)(x_i − x*_i)`` (see :func:`linear_part`): the shorter form
``λ|x_i| − c_i x_i`` carries a rounding floor near 1e-16 relative, above the
paper's 1e-18 target. Only kernel calls are timed: residual evaluations, instance
generation and numba compilation are excluded from the "seconds" columns.
"""

from __future__ import annotations

import csv
import gc
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import register
from .verdict import write_verdict

RCDC_PAPER = ("Richtárik & Takáč, Iteration complexity of randomized block-coordinate "
              "descent methods for minimizing a composite function (Math. Prog. 2014)")
LAM = 1.0
BYTES_PER_NNZ = 12  # float64 value + int32 row index
MEMORY_BUDGET = 6e9
log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- paper's numbers
#: Table 5: seconds per n iterations, {‖x*‖₀: {‖A‖₀: s}} (m = 10⁷, n = 10⁶).
PAPER_TABLE5 = {1600: {1e7: 0.89, 1e8: 5.89, 1e9: 46.23},
                16000: {1e7: 0.85, 1e8: 5.83, 1e9: 46.07},
                160000: {1e7: 0.86, 1e8: 4.28, 1e9: 46.93}}
#: Table 6: (k/n, decade j of 10^-j, ‖x_k‖₀, seconds), to 10^-18 (the paper goes on to 10^-29).
PAPER_TABLE6 = [
    (0.0, 0, 0, 0.0), (2.1180, 1, 880056, 5.6), (4.6350, 2, 990166, 12.3),
    (5.6250, 3, 996121, 15.1), (7.9310, 4, 998981, 20.7), (10.3920, 5, 997394, 27.4),
    (12.1100, 6, 993569, 32.3), (14.4640, 7, 977260, 38.3), (18.0720, 8, 847156, 48.1),
    (19.5190, 9, 701449, 51.7), (21.4650, 10, 413163, 56.4), (23.9150, 11, 210624, 63.1),
    (25.1750, 12, 179355, 66.6), (27.3820, 13, 163048, 72.4), (29.9610, 14, 160311, 79.3),
    (30.9440, 15, 160139, 82.0), (32.7480, 16, 160021, 86.6), (34.1740, 17, 160003, 90.1),
    (35.2550, 18, 160000, 93.0),
]
#: Table 7: (k/n, decade, ‖x_k‖₀, hours), m = 10¹⁰, n = 10⁹, ‖A‖₀ = 2·10¹⁰.
PAPER_TABLE7 = [(0, 0, 0, 0.0), (1, 1, 14923993, 1.43), (3, 2, 22688665, 4.25),
                (16, 3, 24090068, 22.65)]
#: Table 8: (k/n, F(x_k) − F* below 10^e, ‖x_k‖₀, seconds), absolute residuals.
PAPER_TABLE8 = [(1, 7, 63106, 0.21), (5010, 6, 33182, 1092.59), (18286, 5, 17073, 3811.67),
                (21092, 4, 15077, 4341.52), (21416, 3, 11469, 4402.77),
                (21454, 2, 5316, 4410.09), (21459, 1, 1856, 4411.04),
                (21462, 0, 1609, 4411.63), (21465, -1, 1600, 4412.21),
                (21468, -2, 1600, 4412.79), (21471, -3, 1600, 4413.38)]


# --------------------------------------------------------------------------- instance
@dataclass
class LassoInstance:
    """A generated Lasso instance with known optimum; ``b`` is not stored (g0 = −b is
    rebuilt from ``v*`` and the support columns when a run starts)."""

    A: object  # scipy.sparse.csc_matrix, shape (m, n)
    x_star: np.ndarray
    v_star: np.ndarray
    c: np.ndarray  # Aᵀv*: λ·sign(x*_i) on the support, |c_i| < λ off it
    lips: np.ndarray  # L_i = ‖a_i‖²
    support: np.ndarray
    lam: float
    f0: float  # F(0) − F* = ½‖A x*‖²
    gen_seconds: float = 0.0

    @property
    def shape(self):
        return self.A.shape

    def initial_residual_vector(self) -> np.ndarray:
        """g0 = A·0 − b = −(A x* + v*), built without storing b."""
        g = -self.v_star
        cols = self.support
        if cols.size:
            g -= self.A[:, cols] @ self.x_star[cols]
        return g


def make_instance(m, n, nnz, support_size, *, lam=LAM, seed=0,
                  distribution="uniform", x_scale=1.0) -> LassoInstance:
    """Nesterov's instance with ``nnz // n`` nonzeros per column (RCDC §6.1).

    ``distribution`` is the generator's ``column_distribution``: ``"uniform"`` (L_i
    uniform in (0, 1]) or ``"natural"`` (Nesterov's original rescaling, heavy-tailed L_i);
    ``|x*_i|`` is uniform in ``(0, x_scale]`` on the support.
    """
    from ..datasets.nesterov import make_lasso_known_optimum

    if nnz % n:
        raise ValueError(f"nnz={nnz} must be a multiple of n={n} (fixed nonzeros per column)")
    t0 = time.perf_counter()
    A, b, x_star, _, info = make_lasso_known_optimum(
        m, n, nnz_per_column=nnz // n, support_size=support_size, lam=lam, seed=seed,
        column_distribution=distribution, x_scale=x_scale, return_info=True)
    del b  # rebuilt on demand: the large vectors are what limits the size
    gc.collect()
    v = info["v_star"]
    c = A.T @ v
    ax = A[:, info["support"]] @ x_star[info["support"]]
    f0 = 0.5 * float(ax @ ax)
    del ax
    return LassoInstance(A, x_star, v, c, info["lipschitz"], info["support"], float(lam), f0,
                         time.perf_counter() - t0)


# --------------------------------------------------------------------------- Algorithm 4
class Algorithm4:
    """UCDC (``q = 0``) or q-shrinking from iteration ``k0 = k0_epochs·n`` on an instance.

    ``run(steps)`` makes that many coordinate iterations and returns the kernel's
    seconds; ``residual()`` is F(x_k) − F* from the maintained residual (O(m)),
    ``exact_residual()`` from a fresh product A(x_k − x*) (O(‖A‖₀)).
    """

    def __init__(self, inst: LassoInstance, *, q=0.0, k0_epochs=0.0, seed=0):
        from ..losses import SQUARED
        from ..sampling import make_rng_state

        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must be in [0, 1], got {q}")
        if not (k0_epochs >= 0.0 and math.isfinite(k0_epochs)):
            raise ValueError(f"k0_epochs must be finite and >= 0, got {k0_epochs}")
        self.inst = inst
        m, n = inst.shape
        self.m, self.n = m, n
        self.q = float(q)
        self.k0 = int(round(k0_epochs * n))
        self.loss = SQUARED
        # Algorithm 4 form: the kernel's margins are the residual g = Ax − b and its
        # targets/weights are 0/1 everywhere: zero-stride views, no memory, no cache misses.
        self.y = np.broadcast_to(np.float64(0.0), (m,))
        self.s = np.broadcast_to(np.float64(1.0), (m,))
        self.g = inst.initial_residual_vector()
        self.x = np.zeros(n)
        # the kernel minimises (1/m)F: lips L_i/m and l1 λ/m give the same exact steps
        self.lips_m = inst.lips / m
        self.l1_m = inst.lam / m
        self.rng = make_rng_state(seed)
        self.k = 0
        self.supp = np.zeros(n, dtype=np.int64)
        self.pos = np.full(n, -1, dtype=np.int64)
        self.n_supp = np.zeros(1, dtype=np.int64)
        self._icpt = np.zeros(1)
        self.seconds = 0.0  # wall-clock time in the kernel
        self.cpu_seconds = 0.0  # CPU time of this thread in the kernel (robust to load)
        self._call(0)  # compile (or load from cache) outside the timing

    def _call(self, steps):
        from ..kernels.primal_shrinking import primal_cd_shrinking_epoch

        A = self.inst.A
        _, _, self.k = primal_cd_shrinking_epoch(
            A.data, A.indices, A.indptr, self.y, self.s, self.g, self.x, self.lips_m,
            self.l1_m, 0.0, self.loss, steps, self.rng, self.k, self.q, self.k0, self.supp,
            self.pos, self.n_supp, self._icpt, 0.0, False)

    def run(self, steps: int) -> float:
        c0, t0 = time.thread_time(), time.perf_counter()
        self._call(int(steps))
        dt = time.perf_counter() - t0
        self.cpu_seconds += time.thread_time() - c0
        self.seconds += dt
        return dt

    @property
    def nnz(self) -> int:
        return int(self.n_supp[0])

    def residual(self, block=1 << 20) -> float:
        """F(x_k) − F* = ½‖g + v*‖² + linear part, in blocks (no length-m temporary)."""
        g, v = self.g, self.inst.v_star
        quad = 0.0
        for a in range(0, self.m, block):
            t = g[a:a + block] + v[a:a + block]
            quad += float(np.dot(t, t))
        return 0.5 * quad + linear_part(self.x, self.inst)

    def exact_residual(self) -> float:
        """F(x_k) − F* with a fresh A(x_k − x*) instead of the maintained residual."""
        ad = self.inst.A @ (self.x - self.inst.x_star)
        return 0.5 * float(np.dot(ad, ad)) + linear_part(self.x, self.inst)


def linear_part(x, inst: LassoInstance) -> float:
    """λ‖x‖₁ − λ‖x*‖₁ − cᵀ(x − x*) with c = Aᵀv*, summed without first-order rounding.

    Where x_i has the sign s_i of x*_i the term is (λ s_i − c_i)(x_i − x*_i): ``c_i``
    equals λ s_i only up to a few ulps, and writing the term as λ|x_i| − c_i x_i (as
    :func:`cdlearn.experiments.rcdc.lasso_residual` does) leaves an error of order
    1e-16·λ‖x*‖₁, a floor of about 1e-16 on the relative residual. This form's error
    is 1e-16·‖x − x*‖₁, so residuals far below 1e-18 stay measurable. Off the
    support every term λ|x_i| − c_i x_i is ≥ 0 (|c_i| < λ).
    """
    xs, c, lam = inst.x_star, inst.c, inst.lam
    d = x - xs
    s = np.sign(xs)
    same = (s != 0.0) & (np.sign(x) == s)
    term = np.where(same, (lam * s - c) * d, lam * np.abs(x) - lam * np.abs(xs) - c * d)
    return float(term.sum())


@dataclass
class DecadeRun:
    """Rows at each decade of the relative residual plus the trace of every check."""

    rows: list = field(default_factory=list)  # (decade, k/n, rel. residual, nnz, s, cpu s)
    trace: list = field(default_factory=list)  # (k/n, rel. residual, nnz, s, cpu s)
    stopped: str = ""
    final_exact: float = math.nan
    final_support_ok: bool = False


def run_decades(alg: Algorithm4, *, target_decade=18, check_every=0.1, max_epochs=200.0,
                time_budget=math.inf, exact_rows=True) -> DecadeRun:
    """Run until (F(x_k) − F*)/(F(x_0) − F*) ≤ 10^-target_decade, the epoch limit or the
    time budget (CPU seconds of the kernel, robust to other jobs on the machine); a row
    the first time each decade is passed.

    The residual is checked every ``check_every·n`` iterations, so a row's k/n is the
    first check at or below its decade (at most ``check_every`` late).
    """
    inst, n = alg.inst, alg.n
    f0 = inst.f0
    out = DecadeRun()
    out.rows.append((0, 0.0, 1.0, alg.nnz, 0.0, 0.0))
    out.trace.append((0.0, 1.0, alg.nnz, 0.0, 0.0))
    chunk = max(1, int(round(check_every * n)))
    next_decade = 1
    while True:
        if alg.k >= max_epochs * n:
            out.stopped = f"epoch limit {max_epochs:g}n"
            break
        if alg.cpu_seconds >= time_budget:
            out.stopped = f"time budget {time_budget:g} CPU s"
            break
        alg.run(chunk)
        rel = alg.residual() / f0
        out.trace.append((alg.k / n, rel, alg.nnz, alg.seconds, alg.cpu_seconds))
        if not math.isfinite(rel):
            raise FloatingPointError("the residual became NaN/inf")
        if rel <= 10.0 ** (-next_decade):
            shown = alg.exact_residual() / f0 if exact_rows else rel
            while next_decade <= target_decade and rel <= 10.0 ** (-next_decade):
                out.rows.append((next_decade, alg.k / n, shown, alg.nnz, alg.seconds,
                                 alg.cpu_seconds))
                log.info("1e-%d at k/n=%.2f nnz=%d %.1f s (cpu %.1f s)", next_decade,
                         alg.k / n, alg.nnz, alg.seconds, alg.cpu_seconds)
                next_decade += 1
        if next_decade > target_decade:
            out.stopped = f"reached 1e-{target_decade}"
            break
    out.final_exact = alg.exact_residual() / f0
    out.final_support_ok = bool(np.array_equal(alg.x != 0, inst.x_star != 0))
    return out


# --------------------------------------------------------------------------- helpers
def _write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(header)
        wr.writerows(rows)


def _fmt_e(v):
    return "—" if v is None or not math.isfinite(v) else f"{v:.1e}"


def _peak_rss_gb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # Linux: KiB


def _loglog_fit(x, y):
    """(exponent, prefactor) of y ≈ a·x^β by least squares in log space."""
    beta, loga = np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)
    return float(beta), float(np.exp(loga))


def _loglog_errors(x, y, x0):
    """Standard error of the fitted exponent β and the 95% factor of the prediction at x0.

    Ordinary least squares on (log x, log y) with N points: residual variance
    s² = Σr²/(N − 2); se(β) = s/√Sxx; the prediction at log x0 has standard error
    s·√(1 + 1/N + (log x0 − mean)²/Sxx), so y(x0) lies within ×/÷ exp(t·se) with 95%
    confidence (t: Student's quantile, N − 2 degrees of freedom). Needs N ≥ 3.
    """
    from scipy.stats import t as student

    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if lx.size < 3:
        raise ValueError(f"the fit's error needs at least 3 points, got {lx.size}")
    beta, c = np.polyfit(lx, ly, 1)
    resid = ly - (beta * lx + c)
    s2 = float(resid @ resid) / (lx.size - 2)
    sxx = float(np.sum((lx - lx.mean()) ** 2))
    se_pred = math.sqrt(s2 * (1.0 + 1.0 / lx.size + (math.log(x0) - lx.mean()) ** 2 / sxx))
    return math.sqrt(s2 / sxx), math.exp(float(student.ppf(0.975, lx.size - 2)) * se_pred)


# --------------------------------------------------------------------------- Table 5
@register("rcdc-table5", title="RCDC Table 5: seconds per n iterations vs ‖A‖₀ and ‖x*‖₀",
          paper=RCDC_PAPER,
          description="UCDC, m=1e7, n=1e6, ‖A‖₀ in {1e7, 1e8} (1e9 does not fit), "
                      "‖x*‖₀ in {1600, 16000, 160000}; 10n iterations / 10.")
def run_table5(out_dir: Path, full: bool) -> Path:
    """RCDC Table 5: time of n UCDC iterations against ‖A‖₀ and ‖x*‖₀."""
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    scale = 1 if full else 100
    m, n = 10_000_000 // scale, 1_000_000 // scale
    nnzs = [10_000_000 // scale, 100_000_000 // scale]
    supports = [1600 // scale, 16000 // scale, 160000 // scale]
    passes = 10
    rows = []  # (support, nnz, seconds per n, rel. residual after 10n, paper)
    for s in supports:
        for nnz in nnzs:
            inst = make_instance(m, n, nnz, s, seed=0)
            alg = Algorithm4(inst, q=0.0, seed=0)
            # quick: milliseconds per block, so the fastest of 5 consecutive blocks of 10 n
            # iterations (a step costs the same in every block: it reads one column)
            wall, cpu = math.inf, math.inf
            for _ in range(1 if full else 5):
                w0, c0 = alg.seconds, alg.cpu_seconds
                alg.run(passes * n)
                wall = min(wall, alg.seconds - w0)
                cpu = min(cpu, alg.cpu_seconds - c0)
            rel = alg.residual() / inst.f0
            paper = PAPER_TABLE5[s * scale][nnz * scale]
            rows.append((s, nnz, wall / passes, rel, paper, "run", cpu / passes))
            del alg, inst
            gc.collect()
    # Per-column density at n/10 (same m): 10, 100 and 1000 nonzeros per column, the
    # paper's three columns of Table 5 (its 1e9 does not fit at n = 10⁶ here)
    dens = []  # (nonzeros per column, CPU s per n iterations)
    for per in TABLE5_PER_COLUMN:
        inst = make_instance(m, n // 10, per * (n // 10), supports[0], seed=0)
        alg = Algorithm4(inst, q=0.0, seed=0)
        cpu = math.inf
        for _ in range(3):
            c0 = alg.cpu_seconds
            alg.run(passes * (n // 10))
            cpu = min(cpu, alg.cpu_seconds - c0)
        dens.append((per, cpu / passes))
        del alg, inst
        gc.collect()
    _write_csv(out_dir / "table5_density.csv",
               ["nonzeros_per_column", "cpu_seconds_per_n_iterations"], dens)
    dens_ratio = [b[1] / a[1] for a, b in zip(dens, dens[1:], strict=False)]
    # affine model of a step, t = c0 + c1·‖a_i‖₀, from the two densities at n (medians)
    t10 = float(np.median([r[6] for r in rows if r[1] == nnzs[0]])) / n
    t100 = float(np.median([r[6] for r in rows if r[1] == nnzs[1]])) / n
    c1 = (t100 - t10) / ((nnzs[1] - nnzs[0]) / n)
    c0 = t10 - c1 * nnzs[0] / n
    p10 = np.median([PAPER_TABLE5[k][1e7] for k in PAPER_TABLE5]) / 1e6
    p100 = np.median([PAPER_TABLE5[k][1e8] for k in PAPER_TABLE5]) / 1e6
    pc1 = (p100 - p10) / 90
    pc0 = p10 - 10 * pc1
    huge = 1_000_000_000 // scale
    fit_b, fit_a = _loglog_fit([r[1] for r in rows], [r[6] for r in rows])
    for s in supports:
        paper = PAPER_TABLE5[s * scale][1e9]
        if full:
            rows.append((s, huge, math.nan, math.nan, paper,
                         "huge, not run (cpu seconds extrapolated)", fit_a * huge ** fit_b))
    _write_csv(out_dir / "table5.csv",
               ["support_size", "nnz_A", "seconds_per_n_iterations",
                "relative_residual_after_10n", "paper_seconds", "status",
                "cpu_seconds_per_n_iterations"], rows)

    fig = new_figure()
    ax = fig.subplots()
    for s in supports:
        pts = [(r[1], r[6]) for r in rows if r[0] == s and r[5] == "run"]
        ax.loglog(*zip(*pts, strict=True), "o-", label=f"‖x*‖₀ = {s:,} (ours, CPU s)")
    if full:
        for s in supports:
            pts = sorted(PAPER_TABLE5[s].items())
            ax.loglog(*zip(*pts, strict=True), "x:", color="gray")
        ax.plot([], [], "x:", color="gray", label="paper (C, 2011)")
    first = min((r for r in rows if r[5] == "run"), key=lambda r: (r[1], r[6]))
    ax.loglog([nnzs[0], nnzs[-1]], [first[6], first[6] * nnzs[-1] / nnzs[0]], "k--", lw=0.8,
              label="linear in ‖A‖₀ (paper: close to it)")
    ax.set_xlabel("‖A‖₀ (nonzeros of A)")
    ax.set_ylabel("CPU seconds per n iterations")
    ax.set_title(f"m = {m:,}, n = {n:,}" + ("" if full else f" (1/{scale} of the paper's)"))
    ax.legend(fontsize="small")
    fig.savefig(out_dir / "table5.png", dpi=120)

    # the paper's columns are always its own sizes (m = 10⁷, n = 10⁶, ‖A‖₀ = 1e7, 1e8, 1e9)
    size = "" if full else f" at 1/{scale} size"
    head = ("| ‖x*‖₀ (ours) | " + " | ".join(
        f"ours{size}: ‖A‖₀ = {v:.0e}, wall (CPU) s" for v in nnzs) + " | "
        + " | ".join(f"paper: ‖A‖₀ = {v:.0e}" for v in (1e7, 1e8, 1e9)) + " |")
    lines = [head, "|---" * (len(nnzs) + 4) + "|"]
    for s in supports:
        cells = []
        for nnz in nnzs:
            r = next(r for r in rows if r[0] == s and r[1] == nnz)
            cells.append(f"{r[2]:.4f} ({r[6]:.4f})")
        cells += [f"{PAPER_TABLE5[s * scale][v]:.2f}" for v in (1e7, 1e8, 1e9)]
        lines.append(f"| {s:,} | " + " | ".join(cells) + " |")
    ratios = [r[6] / next(q[6] for q in rows if q[0] == r[0] and q[1] == nnzs[0])
              for r in rows if r[1] == nnzs[1]]
    # ‖x*‖₀ has no effect: spread of CPU s over the supports at fixed ‖A‖₀ (paper: ≤ 1.38×)
    spread = max(max(r[6] for r in rows if r[1] == v and r[5] == "run")
                 / min(r[6] for r in rows if r[1] == v and r[5] == "run") for v in nnzs)
    # "roughly linear": 10× denser costs at least 4× (the paper's 4.3-6.9×, less 10%)
    linear = 4.0 <= min(ratios) and max(ratios) <= 12.0
    grows = min(ratios) >= 2.0
    verdict = ("agrees" if linear and spread <= 1.5 else "partly" if grows and spread <= 1.5
               else "no")
    write_verdict(out_dir, exp_id="rcdc-table5",
                  claim="time per n iterations grows ~linearly with ‖A‖₀ (10x denser: "
                        "4.3-6.9x) and does not depend on ‖x*‖₀",
                  ours=f"10x denser costs {min(ratios):.1f}-{max(ratios):.1f}x (CPU s); "
                       f"100 -> 1000 per column {dens_ratio[1]:.1f}x; "
                       f"spread over ‖x*‖₀ {spread:.2f}x",
                  verdict=verdict,
                  reason=("same scaling as the paper" if verdict == "agrees" else
                          f"a step costs {1e9 * c0:.0f} ns + {1e9 * c1:.0f} ns per nonzero "
                          f"here (paper: {1e9 * pc0:.0f} + {1e9 * pc1:.0f}), so at 10 per "
                          "column the fixed part dominates; linear beyond (100 -> 1000 per "
                          f"column: {dens_ratio[1]:.1f}x, paper's 1e8 -> 1e9: 7.9-10.8x)"),
                  full=full, evidence="note.md#result")
    body = (
        f"Run: {'full (paper size)' if full else f'quick (sizes / {scale})'}: m = {m:,}, "
        f"n = {n:,}, UCDC from x0 = 0, {passes}·n iterations timed and divided by {passes} "
        f"(as the paper{'' if full else '; quick: the fastest of 5 consecutive such blocks'}), "
        "one instance per cell (λ = 1, L_i uniform in (0, 1], same "
        "nonzeros in every column). Cells: kernel wall seconds (in parentheses the CPU "
        "seconds of the kernel's thread, which do not count time lost to other jobs on "
        "this shared machine); the paper's seconds at its own size.\n\n"
        + "\n".join(lines) + "\n\n"
        f"CPU seconds per n iterations grow like ‖A‖₀^{fit_b:.2f} over the measured range; "
        f"the 10× denser matrix costs {min(ratios):.1f}–{max(ratios):.1f}× more "
        "(the paper: 4.3–6.9× from 1e7 to 1e8), and ‖x*‖₀ has no systematic effect, "
        f"as the paper says (largest/smallest over ‖x*‖₀ at fixed ‖A‖₀: {spread:.2f}×; the "
        f"paper's: 1.38×). Verdict (10× denser costs 4–12× agrees, ≥ 2× partly; ‖x*‖₀ spread ≤ 1.5×): "
        f"**{verdict}**.\n\n"
        "Why the ratio is lower than the paper's: a step costs a fixed part (drawing i, "
        "reading its column's start, the soft-threshold; on a large instance mostly the "
        "latency of the dependent cache misses: column, then the rows of g it points to) "
        "plus a part per nonzero (the random reads and writes of g, which overlap). From "
        f"the medians at 10 and 100 per column: {1e9 * c0:.0f} ns + {1e9 * c1:.1f} ns per "
        f"nonzero here, against {1e9 * pc0:.0f} ns + {1e9 * pc1:.1f} ns per nonzero in the "
        "paper's Table 5 (its own 1e7 and 1e8 columns). Our per-nonzero cost is "
        f"{(pc1 / pc0) / (c1 / c0):.1f}× smaller relative to the fixed part, so 10 nonzeros per column "
        "do not yet dominate a step: the ratio 10 → 100 per column is a property of the "
        "memory system, not of the method. Where the nonzeros dominate, the time is "
        f"linear in ‖A‖₀: with n = {n // 10:,} (same m; A fits) and "
        + ", ".join(f"{p} per column {t:.3g} CPU s per n" for p, t in dens)
        + f", 10× denser costs {dens_ratio[0]:.1f}× (10 → 100) and "
        f"{dens_ratio[1]:.1f}× (100 → 1000; the paper's 1e8 → 1e9 step: 7.9–10.8×). The "
        "verdict keeps the paper's own pair (1e7 → 1e8 at its size).\n\n"
        "‖A‖₀ = 1e9 is **huge, not run**: A alone needs 1e9 × 12 bytes = 12 GB (float64 "
        "values + int32 row indices; 16 GB with the generator's work arrays), twice the "
        "~6 GB this shared machine allows one job. "
        + (f"The log-log fit extrapolates to {fit_a * huge ** fit_b:.0f} CPU s per n "
           "iterations there (paper: 46 s)." if full else "")
        + "\n\nThe machine is shared (2 cores, other jobs running): wall seconds are "
        "inflated by the load, CPU seconds much less so; the paper used a 2011 PC with "
        "480 GB RAM and C code.\n"
    )
    write_markdown(out_dir / "note.md", "RCDC Table 5: speed versus sparsity",
                   [("Result", body)])
    return out_dir


# --------------------------------------------------------------------------- Table 6
def _vs_paper(label, wall, cpu, paper=93.0):
    def word(t):
        return "faster" if t < paper else "slower"

    return (f"- {label} time to 1e-18: {wall:.1f} s wall = {wall / paper:.2f}× the paper's "
            f"{paper:g} s ({word(wall)}), {cpu:.1f} s CPU = {cpu / paper:.2f}× ({word(cpu)}).")


TABLE6_FULL = dict(m=20_000_000, n=1_000_000, nnz=50_000_000, support=160_000)
TABLE6_QUICK = dict(m=200_000, n=10_000, nnz=500_000, support=1_600)
TABLE6_CHECK = {True: 0.1, False: 0.25}  # residual checked every this many passes
#: Nesterov's original column scaling and |x*_i| up to 100: the size of x* is not given by the
#: paper; at quick size with |x*_i| ≤ 1 ‖x_k‖₀ never overshoots ‖x*‖₀, with 100 it peaks at
#: 0.93 n (with 1,000 at 0.98 n, but F(x0) − F* is then so large that a relative 1e-18 still
#: leaves a stray nonzero); s/m and the nonzeros per column are the same at both sizes.
TABLE6_GEN = dict(distribution="natural", x_scale=100.0)


def table6_runs(full: bool, *, target_decade=18, methods=(("UCDC", 0.0, 0.0),
                                                          ("0.9-shrinking", 0.9, 15.0))):
    """Generate the Table 6 instance and run each (label, q, k0/n) to the target decade."""
    cfg = TABLE6_FULL if full else TABLE6_QUICK
    inst = make_instance(cfg["m"], cfg["n"], cfg["nnz"], cfg["support"], seed=0, **TABLE6_GEN)
    runs = {}
    for label, q, k0 in methods:
        alg = Algorithm4(inst, q=q, k0_epochs=k0, seed=0)
        runs[label] = run_decades(alg, target_decade=target_decade,
                                  check_every=TABLE6_CHECK[full], max_epochs=200.0)
        runs[label].total_seconds = alg.seconds
        runs[label].cpu_seconds = alg.cpu_seconds
        runs[label].epochs = alg.k / alg.n
        del alg
        gc.collect()
    return inst, cfg, runs


@register("rcdc-table6", title="RCDC Table 6: UCDC on a Lasso with a million variables",
          paper=RCDC_PAPER,
          description="m=2e7, n=1e6, ‖A‖₀=5e7, ‖x*‖₀=160,000: a row per decade of the "
                      "relative residual down to 1e-18; paper: 93 s.")
def run_table6(out_dir: Path, full: bool) -> Path:
    """RCDC Table 6: relative residual decades, ‖x_k‖₀ and seconds (paper: 93 s to 1e-18)."""
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    t_wall = time.perf_counter()
    load_before = os.getloadavg()[0]
    inst, cfg, runs = table6_runs(full)
    wall = time.perf_counter() - t_wall
    load_after = os.getloadavg()[0]
    csv_rows = []
    for label, r in runs.items():
        csv_rows += [(label, f"1e-{d}", f"{kn:.4f}", f"{rel:.4e}", nnz, f"{sec:.3f}",
                      f"{cpu:.3f}") for d, kn, rel, nnz, sec, cpu in r.rows]
    _write_csv(out_dir / "table6.csv",
               ["method", "decade", "k_over_n", "relative_residual", "nnz_x", "seconds",
                "cpu_seconds"], csv_rows)
    _write_csv(out_dir / "table6_trace.csv",
               ["method", "k_over_n", "relative_residual", "nnz_x", "seconds", "cpu_seconds"],
               [(label, *t) for label, r in runs.items() for t in r.trace])

    fig = new_figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    pt = np.array(PAPER_TABLE6, dtype=float)
    n = inst.shape[1]
    ax1.semilogy(pt[1:, 0], 10.0 ** -pt[1:, 1], "kx:", label="UCDC (paper, n = 10⁶)")
    ax2.plot(pt[:, 0], pt[:, 2] / 1e6, "kx:", label="UCDC (paper, n = 10⁶)")
    for label, r in runs.items():
        tr = np.array(r.trace)
        keep = tr[:, 1] > 0
        ax1.semilogy(tr[keep, 0], tr[keep, 1], label=f"{label} (ours, n = {n:,})")
        ax2.plot(tr[:, 0], tr[:, 2] / n, label=f"{label} (ours, n = {n:,})")
    ax1.set_xlabel("k/n")
    ax1.set_ylabel("(F(x_k) − F*)/(F(x_0) − F*)")
    ax1.set_title("relative residual")
    ax2.set_xlabel("k/n")
    ax2.set_ylabel("‖x_k‖₀ / n")
    ax2.set_title("nonzeros of x_k")
    ax1.legend(fontsize="small")
    ax2.legend(fontsize="small", loc="center right")
    fig.savefig(out_dir / "table6.png", dpi=120)

    ucdc = runs["UCDC"]
    paper = {d: (kn, nnz, sec) for kn, d, nnz, sec in PAPER_TABLE6}
    shr = runs.get("0.9-shrinking")
    lines = ["| decade | k/n | ‖x_k‖₀ / n | s (cpu s) | paper k/n | paper ‖x_k‖₀ / n | paper s |"
             + (" shrinking k/n | shrinking ‖x_k‖₀ | shrinking s (cpu s) |" if shr else ""),
             "|---" * (7 + (3 if shr else 0)) + "|"]
    shr_rows = {d: (kn, nnz, sec, cpu) for d, kn, _, nnz, sec, cpu in shr.rows} if shr else {}
    n_cols = inst.shape[1]
    for d, kn, _, nnz, sec, cpu in ucdc.rows:
        pk, pn, ps = paper.get(d, (math.nan, 0, math.nan))
        line = (f"| 1e-{d} | {kn:.2f} | {nnz / n_cols:.4f} | {sec:.1f} ({cpu:.1f}) | "
                f"{pk:.2f} | {pn / 1e6:.4f} | " + (f"{ps:.1f} |" if full else "— |"))
        if shr:
            s = shr_rows.get(d)
            line += (f" {s[0]:.2f} | {s[1]:,} | {s[2]:.1f} ({s[3]:.1f}) |" if s
                     else " — | — | — |")
        lines.append(line)
    # scale-free comparison with the paper: overshoot of ‖x_k‖₀ and passes to 1e-18
    tr = np.array(ucdc.trace)
    peak = float(tr[:, 2].max()) / n_cols
    s_star = inst.support.size
    settled = tr[tr[:, 2] == s_star, 0]
    k_settle = float(settled[0]) if settled.size else math.nan
    k18 = ucdc.rows[-1][1] if ucdc.rows[-1][0] >= 18 else math.inf
    paper18 = PAPER_TABLE6[-1][0]
    overshoot = peak >= 0.85
    converges = k18 <= 1.5 * paper18 and k18 >= paper18 / 1.5 and ucdc.final_support_ok
    verdict = "agrees" if overshoot and converges else "partly" if overshoot or converges else "no"
    write_verdict(out_dir, exp_id="rcdc-table6",
                  claim="UCDC: ‖x_k‖₀ rises to 0.999n, back to ‖x*‖₀ by ~35n; 1e-18 at "
                        "35.3n (93 s)",
                  ours=f"peak {peak:.3f}n, ‖x_k‖₀ = ‖x*‖₀ at {k_settle:.1f}n, 1e-18 at "
                       f"{k18:.1f}n" + ("" if full else " (n = 10^4)"),
                  verdict=verdict,
                  reason=("overshoot and passes to 1e-18 within 1.5x of the paper's" if
                          verdict == "agrees" else "see the note: overshoot or passes differ"),
                  full=full, evidence="note.md#result")
    m, n = inst.shape

    def describe(label, r):
        return (f"- {label}: {r.stopped} after {r.epochs:.1f}·n iterations, "
                f"**{r.total_seconds:.1f} s** of kernel wall time ({r.cpu_seconds:.1f} s CPU, "
                f"{r.cpu_seconds / r.epochs:.2f} CPU s per pass); final relative residual "
                f"{r.final_exact:.2e} (fresh A(x − x*)); final support "
                f"{'equals' if r.final_support_ok else 'differs from'} supp(x*).")

    summary = [describe("UCDC (the paper's method)", ucdc)]
    if full:
        summary.append("- paper (UCDC, C, 2011 PC): 35.3·n iterations, **93.0 s** to 1e-18, "
                       "2.64 s per pass.")
    if shr:
        summary.append(describe("0.9-shrinking from k0 = 15n (§6.1; not used for the "
                                "paper's Table 6)", shr))
        summary.append(
            f"- UCDC's ‖x_k‖₀ first equals ‖x*‖₀ at {k_settle:.1f}·n on this instance. "
            "Support coordinates still at zero when shrinking starts are drawn with "
            "probability (1 − q)/n only, 10× less often than by UCDC, so k0 must be 'large "
            "enough' (§6.1).")
    if full:
        for label, r in runs.items():
            if r.rows[-1][0] >= 18:
                t18, c18 = r.rows[-1][4], r.rows[-1][5]
                summary.append(_vs_paper(label, t18, c18))
    body = (
        f"Run: {'full (paper size)' if full else 'quick (sizes / 100)'}: m = {m:,}, n = {n:,}, "
        f"‖A‖₀ = {inst.A.nnz:,}, ‖x*‖₀ = {inst.support.size:,}, λ = 1, x0 = 0; residual "
        f"checked every {TABLE6_CHECK[full]}·n iterations (a row's k/n is the first check "
        "at or below its decade); the relative residuals in the CSV come from a fresh "
        "A(x − x*). Seconds are kernel time only (residual checks excluded): wall clock, "
        "and in parentheses the CPU time of the kernel's thread, which does not count time "
        "lost to other jobs on this shared 2-core machine (load average "
        f"{load_before:.1f} before, {load_after:.1f} after). The whole experiment took "
        f"{wall:.0f} s of wall time including generation ({inst.gen_seconds:.1f} s) and "
        f"checks. Peak memory {_peak_rss_gb():.2f} GB.\n\n"
        + "\n".join(summary) + "\n\n" + "\n".join(lines) + "\n\n"
        f"Scale-free comparison with the paper: ‖x_k‖₀ peaks at {peak:.3f}·n (paper: 0.999·n), "
        f"first equals ‖x*‖₀ at {k_settle:.1f}·n (paper: 35.3·n) and UCDC reaches 1e-18 at "
        f"{k18:.1f}·n (paper: {paper18:.1f}·n). Verdict (peak ≥ 0.85 n, passes to 1e-18 "
        f"within 1.5× of the paper's, support found): **{verdict}**.\n\n"
        "The instance is ours: Nesterov's generator in its original form "
        "(`column_distribution='natural'`, 50 nonzeros in every column) with |x*_i| uniform in "
        f"(0, {TABLE6_GEN['x_scale']:g}]. The paper gives only m, n, ‖A‖₀ and ‖x*‖₀; the size "
        "of x* it does not give decides the overshoot of ‖x_k‖₀ (with |x*_i| ≤ 1, the earlier "
        "version of this run, ‖x_k‖₀ never exceeded ‖x*‖₀; see rcdc-fig3 for the sizes "
        "tried). At full size one "
        "UCDC pass is memory-latency bound (each iteration reads ~50 random rows of a "
        "160 MB residual vector): on this machine a bare loop that gathers and scatters "
        "the columns in random order (no sampling, no prox, no support bookkeeping) takes "
        "1.1-1.4 CPU s per pass, drawing 10⁶ coordinates 0.003 s, the kernel ~1.8-2.4 CPU s. "
        + (f"0.9-shrinking from k0 = 15n took {shr.epochs:.1f}·n iterations against UCDC's "
           f"{ucdc.epochs:.1f}·n: it saves passes only when the support is (nearly) found by "
           "k0, since then 90% of its steps go to the 16% of coordinates that can still "
           "move." if shr else "") + "\n"
    )
    write_markdown(out_dir / "note.md",
                   "RCDC Table 6: UCDC on a sparse regression instance with a million variables",
                   [("Result", body)])
    return out_dir


# --------------------------------------------------------------------------- Table 7
TABLE7_PAPER_NNZ = 2e10
#: rcdc-table5's per-column densities at n/10: the paper's 1e7, 1e8, 1e9 at n = 10⁶
TABLE5_PER_COLUMN = (10, 100, 1000)
TABLE7_FULL_NS = [500_000, 690_000, 952_000, 1_314_000, 1_813_000, 2_500_000]


@register("rcdc-table7", title="RCDC Table 7: billion-variable Lasso (scaled family, extrapolated)",
          paper=RCDC_PAPER,
          description="m=10n, ‖A‖₀=20n as Table 7; the largest n that fits ~6 GB; time per "
                      "pass vs ‖A‖₀ extrapolated to ‖A‖₀=2e10.")
def run_table7(out_dir: Path, full: bool) -> Path:
    """RCDC Table 7 scaled down: m = 10n, ‖A‖₀ = 20n, to residual 1e-3 (as the paper)."""
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    # full: six sizes a factor 1.38 apart whose residual vector (8m bytes: 40-200 MB) is
    # far beyond the 32 MB L3 cache, the regime of m = 10¹⁰ (every access a miss); smaller
    # sizes run from cache at a lower cost per nonzero and tilt the fitted exponent.
    # quick: five in-cache sizes (seconds; the fit is then extrapolated over 4.7 decades
    # from another regime, which its band shows)
    ns = (TABLE7_FULL_NS if full else [1_000, 2_000, 5_000, 10_000, 20_000])
    for n in ns:  # memory estimate: A + v*, g and one length-m temporary + generator's b
        est = 20 * n * BYTES_PER_NNZ + 3 * 10 * n * 8 + 12 * n * 8
        if est > MEMORY_BUDGET:
            raise MemoryError(f"n={n} needs ~{est / 1e9:.1f} GB > {MEMORY_BUDGET / 1e9:.0f} GB")
    rows, runs = [], {}
    for n in ns:
        m, nnz, s = 10 * n, 20 * n, max(1, (16 * n) // 100)
        inst = make_instance(m, n, nnz, s, seed=0)
        # full: the same run twice (same seed, same path, same work) and the smaller CPU
        # time, so a burst of load on this shared machine does not tilt the fit
        cpu = math.inf
        for _ in range(2 if full else 1):
            alg = Algorithm4(inst, q=0.0, seed=0)
            r = run_decades(alg, target_decade=3, check_every=0.25, max_epochs=40.0,
                            exact_rows=False)
            cpu = min(cpu, alg.cpu_seconds)
        per_pass = cpu / (alg.k / n)
        rows.append((n, m, nnz, s, alg.k / n, alg.seconds, cpu, per_pass,
                     per_pass / nnz * 1e9, r.rows[-1][0], inst.gen_seconds, _peak_rss_gb()))
        runs[n] = r
        del alg, inst
        gc.collect()
    _write_csv(out_dir / "table7.csv",
               ["n", "m", "nnz_A", "support_size", "k_over_n", "seconds", "cpu_seconds",
                "cpu_seconds_per_pass", "cpu_ns_per_nonzero", "decades_reached",
                "generation_seconds", "peak_rss_gb"], rows)
    _write_csv(out_dir / "table7_rows.csv",
               ["n", "decade", "k_over_n", "relative_residual", "nnz_x", "seconds"],
               [(n, f"1e-{d}", f"{kn:.3f}", f"{rel:.3e}", nnz, f"{sec:.3f}")
                for n, r in runs.items() for d, kn, rel, nnz, sec, _ in r.rows])
    beta, a = _loglog_fit([r[2] for r in rows], [r[7] for r in rows])
    se_beta, band = _loglog_errors([r[2] for r in rows], [r[7] for r in rows],
                                   TABLE7_PAPER_NNZ)
    per_pass_big = a * TABLE7_PAPER_NNZ ** beta
    per_pass_lin = rows[-1][7] * TABLE7_PAPER_NNZ / rows[-1][2]

    fig = new_figure()
    ax = fig.subplots()
    ax.loglog([r[2] for r in rows], [r[7] for r in rows], "o-", label="ours (measured, CPU s)")
    xs = np.array([rows[0][2], TABLE7_PAPER_NNZ])
    ax.loglog(xs, a * xs ** beta, ":", label=f"fit ∝ ‖A‖₀^({beta:.2f} ± {se_beta:.2f})")
    ax.errorbar([TABLE7_PAPER_NNZ], [per_pass_big],
                yerr=[[per_pass_big - per_pass_big / band], [per_pass_big * (band - 1)]],
                fmt="o", mfc="none", capsize=3, label="extrapolated, 95% band")
    paper_per_pass = PAPER_TABLE7[-1][3] * 3600 / PAPER_TABLE7[-1][0]
    ax.loglog([TABLE7_PAPER_NNZ], [paper_per_pass], "kx", ms=10, mew=2,
              label="paper Table 7 (22.65 h / 16 passes)")
    kn_big = runs[ns[-1]].rows[-1][1] if runs[ns[-1]].rows[-1][0] >= 3 else math.nan
    if math.isfinite(kn_big) and kn_big > 0:
        ax.axhline(86400.0 / kn_big, color="gray", ls="--", lw=0.8,
                   label=f"one day / our {kn_big:.0f} passes to 1e-3")

    ax.set_xlabel("‖A‖₀ (nonzeros of A)")
    ax.set_ylabel("CPU seconds per pass (n iterations)")
    ax.set_title("time per pass against ‖A‖₀ (m = 10n, ‖A‖₀ = 20n)")
    ax.legend(loc="lower right", fontsize="small")
    fig.savefig(out_dir / "table7.png", dpi=120)

    lines = ["| n | m | ‖A‖₀ | ‖x*‖₀ | k/n | s (CPU s) | CPU s/pass | CPU ns/nonzero | "
             "residual reached | peak GB |", "|---" * 10 + "|"]
    for r in rows:
        lines.append(f"| {r[0]:,} | {r[1]:,} | {r[2]:,} | {r[3]:,} | {r[4]:.2f} | {r[5]:.1f} "
                     f"({r[6]:.1f}) | {r[7]:.3f} | {r[8]:.1f} | 1e-{r[9]} | {r[11]:.1f} |")
    big = runs[ns[-1]]
    dec = ["| decade | k/n | ‖x_k‖₀ | s |", "|---|---|---|---|"]
    dec += [f"| 1e-{d} | {kn:.2f} | {nnz:,} | {sec:.1f} |" for d, kn, _, nnz, sec, _ in big.rows]
    kn3 = big.rows[-1][1] if big.rows[-1][0] >= 3 else math.nan
    body = (
        f"Run: {'full' if full else 'quick'}. Table 7's instance (m = 10¹⁰, n = 10⁹, "
        "‖A‖₀ = 2·10¹⁰) needs 240 GB for A alone; the paper used a 480 GB machine. We keep "
        "its ratios (m = 10n, 20 nonzeros per column; ‖x*‖₀ = 0.16n as in Table 6, since "
        "Table 7 does not state it) and grow n up to the largest instance that fits the "
        f"~6 GB this shared machine allows one job (n = {ns[-1]:,}: A takes "
        f"{20 * ns[-1] * BYTES_PER_NNZ / 1e9:.1f} GB, v* and the residual "
        f"{2 * 80 * ns[-1] / 1e9:.1f} GB). Each run is UCDC from x0 = 0 to relative "
        "residual 1e-3, as Table 7.\n\n" + "\n".join(lines) + "\n\n"
        f"Decades on the largest instance (n = {ns[-1]:,}):\n\n" + "\n".join(dec) + "\n\n"
        "Times are kernel time; the fit uses CPU seconds of the kernel's thread, since wall "
        "seconds on this shared 2-core machine include time lost to other jobs"
        + (" (full: the smaller of two identical runs per size)" if full else "") + ".\n\n"
        + ("Fitted sizes: the residual vector g (8m bytes) takes "
           f"{80 * ns[0] / 1e6:.0f}–{80 * ns[-1] / 1e6:.0f} MB, far beyond this machine's "
           "32 MB L3 cache, so every size is in the regime of m = 10¹⁰ (each nonzero a "
           "random access that misses the caches); sizes whose g fits in cache run at a "
           "lower cost per nonzero and would tilt the fitted exponent.\n\n" if full else
           "Quick sizes: g fits in the caches here, a cheaper regime than m = 10¹⁰, and the "
           "fit is extrapolated over more than four decades, so its band is wide; the "
           "full run fits sizes beyond the caches.\n\n")
        + f"Time per pass grows like ‖A‖₀^{beta:.2f} (log-log fit over the {len(rows)} sizes; "
        f"standard error of the exponent {se_beta:.2f}; the 95% prediction band at "
        f"‖A‖₀ = 2·10¹⁰ is ×/÷ {band:.1f}, i.e. {per_pass_big / band:.0f}–"
        f"{per_pass_big * band:.0f} s per pass, and it assumes the trend continues over "
        f"{math.log10(TABLE7_PAPER_NNZ / rows[-1][2]):.1f} more decades). The cost "
        f"per nonzero is {min(r[8] for r in rows):.0f}–{max(r[8] for r in rows):.0f} CPU "
        "ns over these sizes; every nonzero is a random access to a length-m vector, "
        "cheaper while that vector fits in the caches. Extrapolated to "
        f"‖A‖₀ = 2·10¹⁰: {per_pass_big:.0f} s per pass by the fit, {per_pass_lin:.0f} s by "
        "linear scaling from the largest run (a floor: at m = 10¹⁰ every access misses "
        "cache and TLB); the paper's Table 7 took 1.43 h for the first pass and "
        f"22.65 h for 16 passes, i.e. ~{paper_per_pass:.0f} s per pass. "
        + (f"Our largest run needed {kn3:.1f} passes to 1e-3 (paper: 16), so the "
           f"extrapolated time to 1e-3 is ~{kn3 * per_pass_big / 3600:.1f} h by the fit "
           "(paper: 22.65 h), on a machine that would need ≥ 330 GB of RAM.\n"
           if math.isfinite(kn3) else "1e-3 was not reached within the epoch limit.\n")
    )
    # the paper's claim: 1e-3 'after less than a day' (22.65 h); ours extrapolated with the
    # passes of our largest run and the upper end of the fit's 95% band
    hours = kn3 * per_pass_big / 3600 if math.isfinite(kn3) else math.inf
    verdict = ("agrees" if hours * band < 24.0 else "partly" if hours < 24.0 else "no")
    paper_passes = PAPER_TABLE7[-1][0]
    body += (f"\nVerdict (time to 1e-3 at ‖A‖₀ = 2·10¹⁰, extrapolated, below a day even at "
             f"the upper end of the 95% band): {hours:.1f} h, band up to {hours * band:.1f} h "
             f"→ **{verdict}**. With the paper's {paper_passes} passes instead of ours: "
             f"{paper_passes * per_pass_big / 3600:.1f} h, band up to "
             f"{paper_passes * per_pass_big * band / 3600:.1f} h.\n")
    write_markdown(out_dir / "note.md",
                   "RCDC Table 7: a billion variables (scaled family, extrapolated)",
                   [("Result", body)])
    write_verdict(out_dir, exp_id="rcdc-table7",
                  claim="1e9 variables, ‖A‖₀ = 2e10: residual / 1000 after 16 passes, "
                        "22.65 h (under a day)",
                  ours=f"extrapolated {hours:.1f} h to 1e-3 (95% band up to "
                       f"{hours * band:.1f} h; {kn3:.1f} passes, fit exponent {beta:.2f} ± "
                       f"{se_beta:.2f} over {len(rows)} sizes)",
                  verdict=verdict,
                  reason=("under a day, extrapolated from sizes that fit here (the instance "
                          "needs 240 GB)" if verdict == "agrees" else
                          "extrapolated under a day, but the fit's 95% band reaches past a "
                          "day (the instance needs 240 GB)" if verdict == "partly" else
                          "extrapolated time to 1e-3 over a day"),
                  full=full, evidence="note.md#result")
    return out_dir


# --------------------------------------------------------------------------- Table 8
TABLE8_FULL = dict(m=10_000, n=100_000, nnz=10_000_000, support=1_600, budget=300.0)
TABLE8_X_SCALE = 10.0
TABLE8_QUICK = dict(m=1_000, n=10_000, nnz=100_000, support=160, budget=10.0)


@register("rcdc-table8", title="RCDC Table 8: fat matrix (m < n) with a time budget",
          paper=RCDC_PAPER,
          description="m=1e4, n=1e5, ‖A‖₀=1e7, ‖x*‖₀=1,600; UCDC and 0.9-shrinking under a "
                      "time budget.")
def run_table8(out_dir: Path, full: bool) -> Path:
    """RCDC Table 8: UCDC and q-shrinking on a fat instance, within a time budget."""
    from ..report import new_figure, write_markdown

    out_dir = Path(out_dir)
    cfg = TABLE8_FULL if full else TABLE8_QUICK
    # |x*_i| up to 10 (not given by the paper) puts F(x0) − F* near the paper's 10⁷
    inst = make_instance(cfg["m"], cfg["n"], cfg["nnz"], cfg["support"], seed=0,
                         distribution="natural", x_scale=TABLE8_X_SCALE)
    m, n = inst.shape
    runs = {}
    for label, q, k0 in (("UCDC", 0.0, 0.0), ("0.9-shrinking", 0.9, 5.0)):
        alg = Algorithm4(inst, q=q, k0_epochs=k0, seed=0)
        r = run_decades(alg, target_decade=18, check_every=1.0, max_epochs=1e9,
                        time_budget=cfg["budget"] / 2)
        r.total_seconds, r.cpu_seconds, r.epochs = alg.seconds, alg.cpu_seconds, alg.k / n
        runs[label] = r
    _write_csv(out_dir / "table8.csv",
               ["method", "decade", "k_over_n", "relative_residual", "absolute_residual",
                "nnz_x", "seconds"],
               [(label, f"1e-{d}", f"{kn:.1f}", f"{rel:.4e}", f"{rel * inst.f0:.4e}", nnz,
                 f"{sec:.3f}") for label, r in runs.items() for d, kn, rel, nnz, sec, _ in r.rows])
    _write_csv(out_dir / "table8_trace.csv",
               ["method", "k_over_n", "relative_residual", "nnz_x", "seconds", "cpu_seconds"],
               [(label, *t) for label, r in runs.items() for t in r.trace])

    fig = new_figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    pt = np.array(PAPER_TABLE8, dtype=float)  # (k/n, 10^e bound, nnz, s), n = 10⁵
    ax1.loglog(pt[:, 0], 10.0 ** pt[:, 1], "kx:", label="UCDC (paper, upper bounds)")
    ax2.semilogx(pt[:, 0], pt[:, 2] / TABLE8_FULL["n"], "kx:", label="UCDC (paper)")
    for label, r in runs.items():
        tr = np.array(r.trace)
        keep = (tr[:, 1] > 0) & (tr[:, 0] > 0)
        ax1.loglog(tr[keep, 0], tr[keep, 1] * inst.f0, label=f"{label} (ours)")
        ax2.semilogx(tr[keep, 0], tr[keep, 2] / n, label=f"{label} (ours)")
    ax1.set_xlabel("k/n")
    ax1.set_ylabel("F(x_k) − F*")
    ax1.set_title(f"residual (ours: m = {m:,}, n = {n:,})")
    ax2.set_xlabel("k/n")
    ax2.set_ylabel("‖x_k‖₀ / n")
    ax2.set_title("nonzeros of x_k")
    ax1.legend(fontsize="small")
    ax2.legend(fontsize="small")
    fig.savefig(out_dir / "table8.png", dpi=120)

    parts = []
    for label, r in runs.items():
        lines = [f"**{label}** ({r.stopped}; {r.epochs:.0f}·n iterations in "
                 f"{r.total_seconds:.1f} s wall, {r.cpu_seconds:.1f} s CPU; final relative residual {r.final_exact:.2e}, "
                 f"support {'equals' if r.final_support_ok else 'differs from'} supp(x*)):\n",
                 "| relative decade | F(x_k) − F* | k/n | ‖x_k‖₀ | s |", "|---|---|---|---|---|"]
        lines += [f"| 1e-{d} | {rel * inst.f0:.2e} | {kn:.0f} | {nnz:,} | {sec:.2f} |"
                  for d, kn, rel, nnz, sec, _ in r.rows]
        parts.append("\n".join(lines))
    paper = ["| F(x_k) − F* < | k/n | ‖x_k‖₀ | s |", "|---|---|---|---|"]
    paper += [f"| 1e{e} | {kn:,} | {nnz:,} | {sec:.2f} |" for kn, e, nnz, sec in PAPER_TABLE8]
    body = (
        f"Run: {'full (paper size)' if full else 'quick (sizes / 10, ‖A‖₀ / 100)'}: m = {m:,}, "
        f"n = {n:,}, ‖A‖₀ = {inst.A.nnz:,}, ‖x*‖₀ = {inst.support.size:,}, λ = 1, x0 = 0, "
        f"F(x0) − F* = {inst.f0:.3g} (Nesterov's original column scaling, "
        "`column_distribution='natural'`, and |x*_i| uniform in "
        f"(0, {TABLE8_X_SCALE:g}]: heavy-tailed L_i and an initial residual near the "
        f"paper's > 10⁷). Time budget {cfg['budget']:g} s of kernel CPU time, split "
        "evenly between UCDC (the paper's method) and 0.9-shrinking from k0 = 5n "
        "(**shrinking switched on** for the second run, §6.1). Rows at each decade of the "
        "relative residual, checked once per pass.\n\n" + "\n\n".join(parts) + "\n\n"
        "Paper's Table 8 (UCDC, absolute residuals, its own instance):\n\n" + "\n".join(paper)
        + "\n\nThe paper's instance starts at F(x0) − F* > 10⁷ and needs 21,471 passes "
        "(4,413 s), almost all of them to get from 10⁷ to 10³; the final decades go in a "
        "few passes ('very fast local convergence'). Our generated instance is not the "
        "paper's (its density, x* and v* are not given), so the pass counts are not "
        "comparable; the shape (slow global phase while ‖x_k‖₀ "
        "shrinks towards ‖x*‖₀, then fast local convergence once the support is found) "
        "is what to compare. With m < n, f is not strongly convex and the theory only "
        "gives O(n/ε) (Theorem 4).\n"
    )
    # the paper's "very fast local convergence": F − F* from < 1e2 to < 1e-3 (absolute) in
    # 15 of 21,471 passes; ours: the share of UCDC's passes to 1e-3 spent on those decades
    tr = np.array(runs["UCDC"].trace)
    absolute = tr[:, 1] * inst.f0

    def first_below(level):
        hit = np.flatnonzero(absolute < level)
        return float(tr[hit[0], 0]) if hit.size else math.inf

    k2, k3 = first_below(1e2), first_below(1e-3)
    share = (k3 - k2) / k3 if math.isfinite(k3) else math.inf
    paper_share = (PAPER_TABLE8[-1][0] - PAPER_TABLE8[5][0]) / PAPER_TABLE8[-1][0]
    verdict = "agrees" if share <= 0.1 else "partly" if share <= 1 / 3 else "no"
    body += (f"\nLocal convergence: F(x_k) − F* went from below 1e2 (k/n = {k2:.0f}) to below "
             f"1e-3 (k/n = {k3:.0f}), {100 * share:.1f}% of UCDC's passes to 1e-3 (paper: "
             f"{100 * paper_share:.2f}%). Verdict (≤ 10% agrees, ≤ 33% partly): **{verdict}**.\n")
    write_markdown(out_dir / "note.md", "RCDC Table 8: UCDC on a fat matrix (m < n)",
                   [("Result", body)])
    write_verdict(out_dir, exp_id="rcdc-table8",
                  claim="m < n: many passes, but 1e2 -> 1e-3 (absolute) in 15 of 21,471 passes "
                        "(fast local convergence)",
                  ours=f"1e2 -> 1e-3 in {k3 - k2:.0f} of {k3:.0f} passes ({100 * share:.1f}%)",
                  verdict=verdict,
                  reason=("slow global phase, fast local convergence, as in the paper" if
                          verdict == "agrees" else "local phase is a larger share of the run "
                          "than in the paper (instance not given), see the note"),
                  full=full, evidence="note.md#result")
    return out_dir
