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
    "run_experiment",
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
    sizes instead of the quick version.
    """
    exp = get_experiment(exp_id)
    folder = Path(DEFAULT_OUT_DIR if out_dir is None else out_dir).expanduser() / exp.id
    folder.mkdir(parents=True, exist_ok=True)
    exp.run(folder, bool(full))
    return folder
