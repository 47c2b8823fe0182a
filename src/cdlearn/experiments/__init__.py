"""Registry of paper reproductions: ``cdlearn reproduce ID`` runs one of them.

Contract for an experiment module
---------------------------------
An experiment module (e.g. ``cdlearn/experiments/faceoff.py``) exposes one
function per table or figure::

    def run_<name>(out_dir: Path, full: bool) -> Path:
        '''Write CSV + PNG + a short markdown note into ``out_dir``; return ``out_dir``.'''

* ``out_dir`` already exists (it is ``<-o DIR>/<ID>/``); write only inside it.
* ``full=False`` must finish in a minute or two (reduced sizes, looser
  tolerances); ``full=True`` runs the paper's sizes. Say in the note which one ran.
* The markdown note (e.g. ``README.md``) compares the result with the paper's
  numbers and claims, and names any substitute dataset.
* Plots go through :mod:`cdlearn.report` (Agg backend, labelled log-scale axes).

The module registers its functions with :func:`register`::

    from . import register

    @register("faceoff-fig2", title="...", paper="Csiba & Richtárik (ALT 2018)")
    def run_fig2(out_dir, full): ...

Modules are imported lazily, by name, only when an experiment is listed or run:
``_LAZY`` maps each known ID to ``(module, function)``. A missing or broken
module therefore never breaks ``import cdlearn`` or the command line; its IDs are
listed with the status "not available". If a module defines ``run_<name>`` but
does not call :func:`register`, the function named in ``_LAZY`` is used.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "EXPERIMENTS",
    "Experiment",
    "ExperimentUnavailableError",
    "experiment_ids",
    "experiment_status",
    "get_experiment",
    "register",
    "run_all",
    "run_experiment",
    "write_summary",
]

FACEOFF_PAPER = "Csiba & Richtárik, Coordinate Descent Face-Off: Primal or Dual? (ALT 2018)"

DEFAULT_OUT_DIR = Path("cdlearn-results")


@dataclass(frozen=True)
class Experiment:
    """One reproducible table or figure.

    ``run(out_dir, full)`` writes its outputs into ``out_dir`` and returns it.
    """

    id: str
    title: str
    paper: str
    run: Callable[[Path, bool], Path]
    description: str = ""


@dataclass(frozen=True)
class _LazySpec:
    module: str
    function: str
    title: str
    paper: str
    description: str = ""


class ExperimentUnavailableError(RuntimeError):
    """A known experiment whose module is missing or fails to import."""


#: Registered experiments, filled by the experiment modules when they are imported.
EXPERIMENTS: dict[str, Experiment] = {}

#: Known IDs -> where their code lives (imported on demand).
_LAZY: dict[str, _LazySpec] = {
    "faceoff-fig1": _LazySpec(
        "cdlearn.experiments.faceoff", "run_fig1",
        "Face-off Figure 1: the bound R(α, d, n) on C_P/C_D for binary data, n = 10³",
        FACEOFF_PAPER, "Theorem 4 / Lemma 10: for d large enough, R(α, d, n) < 1.",
    ),
    "faceoff-fig2": _LazySpec(
        "cdlearn.experiments.faceoff", "run_fig2",
        "Face-off Figure 2: primal vs dual RCD on worst-case general matrices and real data",
        FACEOFF_PAPER, "Theorem 3 matrices and the news / leukemia datasets (§7.1, §7.3).",
    ),
    "faceoff-fig3": _LazySpec(
        "cdlearn.experiments.faceoff", "run_fig3",
        "Face-off Figure 3: worst-case binary matrices for dual RCD, d = 100",
        FACEOFF_PAPER, "Synthetic binary data with entries in {a, -a, 0} (§7.2).",
    ),
    "faceoff-table1": _LazySpec(
        "cdlearn.experiments.faceoff", "run_table1",
        "Face-off Table 1: dataset details and predicted T_P/T_D",
        FACEOFF_PAPER, "C_P, C_D and the predicted speed-up on the real datasets (§7.3).",
    ),
    "rcdc-fig4": _LazySpec(
        "cdlearn.experiments.rcdc", "run_fig4",
        "RCDC Figure 4: q-shrinking, time to F(x_k) - F* <= 1e-14",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "Lasso m=500, n=1000, |x*|_0=50, λ=1, k0=5n, q in {0, 0.5, 0.9} (§6.1).",
    ),
    "rcdc-fig1": _LazySpec(
        "cdlearn.experiments.rcdc", "run_fig1",
        "RCDC Figure 1: power-law probabilities p_i ∝ L_i^a, a in {0, 0.5, 1}, λ in {0, 1}",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "Lasso m=1000, n=2000, |x*|_0=300 (§6.1, eq. (55)).",
    ),
    "rcdc-fig2": _LazySpec(
        "cdlearn.experiments.rcdc", "run_fig2",
        "RCDC Figure 2: four Lipschitz-constant distributions, RCDC against full gradient",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "A in R^{2000x1000}; a in {0, 0.2, 1} vs ISTA (FG) and FISTA (§6.1).",
    ),
    "rcdc-fig3": _LazySpec(
        "cdlearn.experiments.rcdc", "run_fig3",
        "RCDC Figure 3: nonzeros of x_k, correct nonzeros cn_k, incorrect zeros iz_k",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "Lasso m=500, n=1000, |x*|_0=100, λ=1, UCDC from 0 (§6.1).",
    ),
    "rcdc-fig5": _LazySpec(
        "cdlearn.experiments.rcdc", "run_fig5",
        "RCDC Figure 5: x0 = 0 against x0 = x_LS (LSQR)",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "The Figure 4 instance (λ=1) and a tall one (λ=0.01), UCDC (§6.1).",
    ),
    "rcdc-fig6": _LazySpec(
        "cdlearn.experiments.rcdc", "run_fig6",
        "RCDC Figure 6: random x0 on the segment between 0 and x_LS",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "m=2000, n=1000, |x*|_0=50, λ in {0.01, 1} (§6.1).",
    ),
    "rcdc-table11": _LazySpec(
        "cdlearn.experiments.rcdc", "run_table11",
        "RCDC Table 11: L1-regularized L2-SVM and logistic, accuracy against γ",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "reuters-money-fx and a9a replace rcv1; 90/10 train/CV split (§6.2).",
    ),
    "rcdc-fig7": _LazySpec(
        "cdlearn.experiments.rcdc", "run_fig7",
        "RCDC Figure 7: test accuracy against passes of UCDC",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "L1-regularized L2-SVM and logistic, γ=1, reuters-money-fx and a9a (§6.2).",
    ),
    "rcdc-table5": _LazySpec(
        "cdlearn.experiments.rcdc_tables", "run_table5",
        "RCDC Table 5: seconds per n iterations of UCDC against ‖A‖₀ and ‖x*‖₀",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "m=1e7, n=1e6, ‖A‖₀ in {1e7, 1e8} (1e9 does not fit), ‖x*‖₀ in {1600, 16000, 160000}.",
    ),
    "rcdc-table6": _LazySpec(
        "cdlearn.experiments.rcdc_tables", "run_table6",
        "RCDC Table 6: UCDC on a Lasso with a million variables, to residual 1e-18",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "m=2e7, n=1e6, ‖A‖₀=5e7, ‖x*‖₀=160,000; paper: 93 s to 1e-18 (§6.1).",
    ),
    "rcdc-table7": _LazySpec(
        "cdlearn.experiments.rcdc_tables", "run_table7",
        "RCDC Table 7: billion-variable Lasso, scaled family and extrapolation",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "m=10n, ‖A‖₀=20n up to the largest n that fits ~6 GB; time per pass vs ‖A‖₀.",
    ),
    "rcdc-table8": _LazySpec(
        "cdlearn.experiments.rcdc_tables", "run_table8",
        "RCDC Table 8: fat Lasso (m < n) with a time budget, UCDC and q-shrinking",
        "Richtárik & Takáč, Iteration complexity of randomized block-coordinate descent "
        "methods for minimizing a composite function (Math. Prog. 2014)",
        "m=1e4, n=1e5, ‖A‖₀=1e7, ‖x*‖₀=1,600 (§6.1).",
    ),
    "dgpd-fig1": _LazySpec(
        "cdlearn.experiments.dgpd", "run_fig1",
        "DGPD Figure 1: relative objective vs time and iterations",
        "Lei, Yen, Wu, Dhillon & Ravikumar, Doubly Greedy Primal-Dual Coordinate Descent for "
        "Sparse Empirical Risk Minimization (ICML 2017)",
        "DGPD, PrimalRCD, DualRCD, SPDC; λ = 0.1, μ = 0.01 (Appendix B's grid: "
        "grid=APPENDIX_GRID); digits-RF/RB (OvR) and news20 binarized.",
    ),
    "dgpd-table2": _LazySpec(
        "cdlearn.experiments.dgpd", "run_table2",
        "DGPD Table 2: data statistics and #nonzero primal / dual variables of DGPD",
        "Lei, Yen, Wu, Dhillon & Ravikumar, Doubly Greedy Primal-Dual Coordinate Descent for "
        "Sparse Empirical Risk Minimization (ICML 2017)",
        "λ = 0.1, μ = 0.01; digits-RF/RB (OvR) and news20 binarized.",
    ),
    "ascd-fig1": _LazySpec(
        "cdlearn.experiments.ascd", "run_fig1",
        "ASCD Figure 1: competitive ratio ρ_t against the bound (28)",
        "Stich, Raj & Jaggi, Approximate Steepest Coordinate Descent (ICML 2017)",
        "Simulated active-set dynamics, n=100, s=10, c=1, T∞ in {50, 100, 400} (§6).",
    ),
    "ascd-fig2": _LazySpec(
        "cdlearn.experiments.ascd", "run_fig2",
        "ASCD Figure 2: UCD, SCD, ASCD, a-ASCD on synthetic ridge and lasso",
        "Stich, Raj & Jaggi, Approximate Steepest Coordinate Descent (ICML 2017)",
        "App. E generator, ridge n=1000 / lasso n=5000, d=1000; g2 oracle at several ε.",
    ),
    "ascd-fig3": _LazySpec(
        "cdlearn.experiments.ascd", "run_fig3",
        "ASCD Figure 3: bag-of-words lasso with the g4 oracle (RCV1 substituted)",
        "Stich, Raj & Jaggi, Approximate Steepest Coordinate Descent (ICML 2017)",
        "reuters-money-fx and news20 (values 1) for RCV1; fixed step and exact line search.",
    ),
    "ascd-fig4": _LazySpec(
        "cdlearn.experiments.ascd", "run_fig4",
        "ASCD Figure 4: SCD on the function of Theorem 2.2, n = 20",
        "Stich, Raj & Jaggi, Approximate Steepest Coordinate Descent (ICML 2017)",
        "Q = I − 0.99/n·J, x0 = 1: steepest CD gains only a constant factor over UCD.",
    ),
}

# module name -> None (imported fine) or the reason it could not be imported
_IMPORTED: dict[str, str | None] = {}


def register(exp_id: str | Experiment, *, title: str = "", paper: str = "",
             description: str = ""):
    """Add an experiment to :data:`EXPERIMENTS`.

    Either ``register(Experiment(...))``, or as a decorator of ``run(out_dir, full)``::

        @register("faceoff-fig1", title="...", paper="...")
        def run_fig1(out_dir, full): ...

    Missing ``title``/``paper``/``description`` are taken from the built-in table
    of known IDs. Registering an ID twice replaces the earlier entry (so a module
    can be reloaded).
    """
    if isinstance(exp_id, Experiment):
        EXPERIMENTS[exp_id.id] = exp_id
        return exp_id
    if not isinstance(exp_id, str) or not exp_id:
        raise TypeError(f"experiment id must be a non-empty str, got {exp_id!r}")
    known = _LAZY.get(exp_id)

    def decorator(func: Callable[[Path, bool], Path]):
        if not callable(func):
            raise TypeError(f"register({exp_id!r}) needs a callable run(out_dir, full)")
        doc = (func.__doc__ or "").strip().splitlines()
        EXPERIMENTS[exp_id] = Experiment(
            id=exp_id,
            title=title or (known.title if known else (doc[0] if doc else exp_id)),
            paper=paper or (known.paper if known else ""),
            run=func,
            description=description or (known.description if known else ""),
        )
        return func

    return decorator


def _import(module: str) -> str | None:
    """Import ``module`` once; return None on success, else why it failed."""
    if module not in _IMPORTED:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module.startswith(exc.name):
                _IMPORTED[module] = f"module {module} is not written yet"
            else:
                _IMPORTED[module] = f"module {module} failed to import: {exc}"
        except Exception as exc:  # a broken module must not break the CLI
            _IMPORTED[module] = f"module {module} failed to import: {type(exc).__name__}: {exc}"
        else:
            _IMPORTED[module] = None
    return _IMPORTED[module]


def _load_all() -> None:
    for module in dict.fromkeys(spec.module for spec in _LAZY.values()):
        _import(module)


def experiment_ids() -> list[str]:
    """All known IDs: the built-in table plus whatever modules registered, sorted."""
    _load_all()
    return sorted(set(_LAZY) | set(EXPERIMENTS))


def get_experiment(exp_id: str) -> Experiment:
    """The :class:`Experiment` for ``exp_id``, importing its module if needed.

    Raises ``ValueError`` for an unknown ID (listing the known ones) and
    :class:`ExperimentUnavailableError` when its module is missing or broken.
    """
    if exp_id in EXPERIMENTS:
        return EXPERIMENTS[exp_id]
    spec = _LAZY.get(exp_id)
    if spec is None:
        _load_all()
        if exp_id in EXPERIMENTS:
            return EXPERIMENTS[exp_id]
        raise ValueError(
            f"unknown experiment {exp_id!r}; known: {', '.join(experiment_ids())}"
        )
    problem = _import(spec.module)
    if problem is not None:
        raise ExperimentUnavailableError(f"experiment {exp_id!r} is not available: {problem}")
    if exp_id in EXPERIMENTS:
        return EXPERIMENTS[exp_id]
    func = getattr(importlib.import_module(spec.module), spec.function, None)
    if not callable(func):
        raise ExperimentUnavailableError(
            f"experiment {exp_id!r} is not available: {spec.module} defines no "
            f"{spec.function}(out_dir, full)"
        )
    exp = Experiment(exp_id, spec.title, spec.paper, func, spec.description)
    EXPERIMENTS[exp_id] = exp
    return exp


def experiment_status(exp_id: str) -> tuple[str, str, str]:
    """``(status, title, detail)`` with status ``"available"`` or ``"not available"``."""
    spec = _LAZY.get(exp_id)
    try:
        exp = get_experiment(exp_id)
    except ExperimentUnavailableError as exc:
        return "not available", spec.title if spec else exp_id, str(exc)
    return "available", exp.title, exp.paper


def run_experiment(exp_id: str, out_dir: str | Path | None = None, *, full: bool = False) -> Path:
    """Run experiment ``exp_id``; its outputs go to ``out_dir/exp_id/``, which is returned.

    ``out_dir`` defaults to ``./cdlearn-results``. ``full=True`` runs the paper's
    sizes instead of the quick version. The wall time of the run is recorded in
    ``out_dir/exp_id/timing.json`` (one entry per mode, so a quick and a full
    run in the same folder keep both) for :func:`write_summary`.
    """
    exp = get_experiment(exp_id)
    folder = Path(DEFAULT_OUT_DIR if out_dir is None else out_dir).expanduser() / exp.id
    folder.mkdir(parents=True, exist_ok=True)
    from .verdict import VERDICT_FILE

    # a verdict left by an earlier run must not outlive a run that fails
    (folder / VERDICT_FILE).unlink(missing_ok=True)
    t0 = time.perf_counter()
    exp.run(folder, bool(full))
    seconds = time.perf_counter() - t0
    timing = read_timing(folder)
    timing["full" if full else "quick"] = {
        "seconds": round(seconds, 2),
        "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    (folder / TIMING_FILE).write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")
    return folder


TIMING_FILE = "timing.json"
SUMMARY_FILE = "summary.md"


def read_timing(folder: str | Path) -> dict:
    """``{"quick": {"seconds": ..., "finished": ...}, "full": {...}}`` of a run folder
    (the modes that ran; empty when none was timed)."""
    path = Path(folder) / TIMING_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _cell(text: str) -> str:
    """One markdown table cell: no pipe or newline breaks the row."""
    return " ".join(str(text).replace("|", "\\|").split())


def _seconds(timing: dict, mode: str, verdict_mode: str) -> str:
    entry = timing.get(mode)
    if not entry:
        # the verdict proves the run happened; it predates timing.json
        return "not timed" if mode == verdict_mode else "not run"
    s = float(entry["seconds"])
    return f"{s:.0f} s" if s < 600 else f"{s / 60:.0f} min"


def summary_table(results_dir: str | Path, *, link_prefix: str = "") -> str:
    """The agreement table of every ``results_dir/<ID>/verdict.json`` (markdown).

    One row per ID: the paper's claim, ours, the verdict, a one-line reason
    (linked to its evidence in the run's note for anything but "agrees"), and
    the quick and full run times. Links are ``link_prefix + ID/evidence``.
    """
    from .verdict import VERDICTS, read_verdicts

    rows = read_verdicts(results_dir)
    if not rows:
        raise ValueError(f"no */verdict.json under {results_dir}: run the experiments first "
                         "('cdlearn reproduce ID -o DIR' or '--all')")
    counts = {v: sum(r.verdict == v for r in rows) for v in VERDICTS}
    head = ("ID", "paper's claim", "ours", "verdict", "reason", "quick run", "full run",
            "verdict from")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for r in rows:
        timing = read_timing(Path(results_dir) / r.id)
        reason = _cell(r.reason)
        if r.verdict != "agrees":
            reason += f" ([evidence]({link_prefix}{r.id}/{r.evidence}))"
        verdict = r.verdict if r.verdict == "agrees" else f"**{r.verdict}**"
        lines.append("| " + " | ".join((
            f"`{r.id}`", _cell(r.claim), _cell(r.ours), verdict, reason,
            _seconds(timing, "quick", r.mode), _seconds(timing, "full", r.mode), r.mode)) + " |")
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    # the built-in table and what is registered, without importing every module
    known = sorted(set(_LAZY) | set(EXPERIMENTS))
    missing = [i for i in known if i not in {r.id for r in rows}]
    text = "\n".join(lines) + f"\n\n{len(rows)} of {len(known)} IDs: {tally}."
    if missing:
        text += " No verdict yet: " + ", ".join(f"`{i}`" for i in missing) + "."
    return text + "\n"


def write_summary(results_dir: str | Path) -> Path:
    """Write ``results_dir/summary.md`` (:func:`summary_table` under a heading); return it."""
    results_dir = Path(results_dir)
    body = ("# Reproductions: agreement with the papers\n\n"
            "Generated by `cdlearn reproduce --summary` from the runs' own `verdict.json` "
            "files (each verdict is computed by its experiment from the numbers it measured; "
            "none is typed by hand). 'verdict from' says whether the verdict comes from the "
            "quick or the full run; run times are wall-clock seconds on the machine that ran "
            "them.\n\n" + summary_table(results_dir))
    path = results_dir / SUMMARY_FILE
    path.write_text(body, encoding="utf-8")
    return path


def run_all(out_dir: str | Path | None = None, *, full: bool = False,
            ids: list[str] | None = None, log: Callable[[str], None] | None = None
            ) -> tuple[Path, dict[str, str]]:
    """Run every experiment (or ``ids``), then :func:`write_summary`.

    An experiment that fails is reported and skipped, so that one broken run
    does not lose the others. Returns the summary's path and ``{ID: error}`` of
    the failures.
    """
    out = Path(DEFAULT_OUT_DIR if out_dir is None else out_dir).expanduser()
    failed: dict[str, str] = {}
    for exp_id in ids or experiment_ids():
        t0 = time.perf_counter()
        try:
            run_experiment(exp_id, out, full=full)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # one failing reproduction must not stop the others
            failed[exp_id] = f"{type(exc).__name__}: {exc}".splitlines()[0]
        if log is not None:
            status = "failed: " + failed[exp_id] if exp_id in failed else "done"
            log(f"{exp_id}: {status} ({time.perf_counter() - t0:.1f} s)")
    return write_summary(out), failed
