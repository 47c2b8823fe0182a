"""Solver registry: what each method supports and how to build its state.

``SOLVERS`` maps each method's name to its :class:`SolverSpec`. A solver's module
(its driver and its numba kernels) is imported the first time its spec is looked
up, so ``import cdlearn`` and a solve load only the method they run: listing the
names (``list(SOLVERS)``, ``name in SOLVERS``) imports nothing.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

from .base import Problem, SolveResult, Trace, run


@dataclass(frozen=True)
class SolverSpec:
    name: str
    losses: tuple[str, ...]
    penalties: tuple[str, ...]
    build: Callable
    note: str = ""
    #: method-specific keyword options that ``cdlearn.solve`` forwards to ``build``
    options: tuple[str, ...] = ()
    #: whether the method honours ``positive=True`` (the constraint w ≥ 0)
    positive: bool = False

    def supports(self, problem: Problem) -> bool:
        try:
            self.check(problem)
        except ValueError:
            return False
        return True

    def check(self, problem: Problem) -> None:
        """Raise a ValueError saying why this method cannot solve ``problem``."""
        if problem.loss not in self.losses:
            raise ValueError(
                f"solver={self.name!r} does not support loss={problem.loss!r} "
                f"(supported: {', '.join(self.losses)}){self.note}"
            )
        l1_only_enet = (problem.penalty == "elastic_net" and self.name == "dual-cd"
                        and problem.l2 <= 0)
        if problem.penalty not in self.penalties or l1_only_enet:
            raise ValueError(
                f"solver={self.name!r} does not support penalty={problem.penalty!r}"
                + (" with l1_ratio=1" if l1_only_enet else "")
                + f" (supported: {', '.join(self.penalties)}){self.note}"
            )
        if problem.positive and not self.positive:
            raise ValueError(
                f"solver={self.name!r} does not support positive=True (the constraint "
                f"w >= 0); use solver='ws-cd' or 'primal-cd'"
            )


def _primal_cd(m):
    return SolverSpec(
        "primal-cd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.PrimalCDState, note="; the hinge loss needs solver='dual-cd'",
        options=("shrink_q", "shrink_start", "smoothness", "partition"), positive=True,
    )


def _dual_cd(m):
    return SolverSpec(
        "dual-cd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.DualCDState,
        note="; l1 and penalty-free problems need solver='primal-cd'",
        options=("smoothness", "shrinking", "partition"),
    )


def _block_cd(m):
    return SolverSpec(
        "block-cd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.BlockCDState, note="; block-cd solves penalty='group_l2' (RCDC over groups)",
        options=("block_probs", "block_norm"),
    )


def _fista(m):
    return SolverSpec(
        "fista", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.FullGradientState,
        note="; fista is the full-gradient baseline (ISTA with accelerated=False)",
        options=("accelerated",),
    )


def _scd(m):
    return SolverSpec(
        "scd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.build_scd, note="; scd/ascd take the squared and logistic losses",
        options=m.SCD_OPTIONS,
    )


def _ascd(m):
    return SolverSpec(
        "ascd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.build_ascd, note="; scd/ascd take the squared and logistic losses",
        options=m.ASCD_OPTIONS,
    )


def _spdc(m):
    return SolverSpec(
        "spdc", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.SPDCState,
        note="; spdc (Zhang & Xiao 2014) needs a smooth loss and a strongly convex penalty",
        options=m.OPTIONS,
    )


def _dgpd(m):
    return SolverSpec(
        "dgpd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.DGPDState,
        note="; dgpd (Lei et al. 2017) needs a smooth loss and μ = l2 > 0 (l2 or elastic_net)",
        options=m.OPTIONS,
    )


def _newton_cd(m):
    return SolverSpec(
        "newton-cd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.NewtonCDState,
        note="; newton-cd (proximal Newton, GLMNET/newGLMNET) needs a smooth loss",
        options=m.OPTIONS,
    )


def _lbfgs(m):
    return SolverSpec(
        "lbfgs", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.LBFGSState,
        note="; lbfgs (limited-memory BFGS) needs a smooth loss and penalty='l2'",
        options=m.OPTIONS,
    )


def _newton_cg(m):
    return SolverSpec(
        "newton-cg", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.NewtonCGState,
        note="; newton-cg (truncated Newton, liblinear -s 0/-s 2) needs a smooth loss "
             "and penalty='l2'",
        options=m.OPTIONS,
    )


def _ws_cd(m):
    return SolverSpec(
        "ws-cd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.WorkingSetState,
        note="; ws-cd (working sets + Anderson, celer/skglm style) needs a smooth loss "
             "and an l1, elastic_net or l2 penalty",
        options=m.OPTIONS, positive=True,
    )


def _gram_cd(m):
    return SolverSpec(
        "gram-cd", m.SUPPORTED_LOSSES, m.SUPPORTED_PENALTIES,
        m.GramCDState,
        note="; gram-cd (CD on the Gram matrix XᵀSX/n) is for the squared loss",
        options=m.OPTIONS, positive=True,
    )


#: method name -> (module of cdlearn.solvers, spec built from that module)
_REGISTRY: dict[str, tuple[str, Callable]] = {
    "primal-cd": ("primal_cd", _primal_cd),
    "dual-cd": ("dual_cd", _dual_cd),
    "block-cd": ("block_cd", _block_cd),
    "fista": ("full_gradient", _fista),
    "scd": ("greedy_cd", _scd),
    "ascd": ("greedy_cd", _ascd),
    "spdc": ("spdc", _spdc),
    "dgpd": ("dgpd", _dgpd),
    "newton-cd": ("newton_cd", _newton_cd),
    "ws-cd": ("working_set", _ws_cd),
    "newton-cg": ("newton_cg", _newton_cg),
    "lbfgs": ("lbfgs", _lbfgs),
    "gram-cd": ("gram_cd", _gram_cd),
}


class SolverRegistry(MutableMapping):
    """``name -> SolverSpec``; a spec (and its solver module) is built when first looked up.

    Iteration, ``len`` and ``in`` use the names only and import nothing.
    """

    def __init__(self, registry):
        self._lazy = dict(registry)
        self._specs: dict[str, SolverSpec] = {}
        self._names = list(registry)
        self._lock = threading.RLock()  # one-vs-rest solves look specs up from threads

    def __getitem__(self, name) -> SolverSpec:
        spec = self._specs.get(name)
        if spec is None:
            with self._lock:
                spec = self._specs.get(name)
                if spec is None:
                    if name not in self._lazy:
                        raise KeyError(name)
                    module, make = self._lazy[name]
                    spec = make(importlib.import_module(f"{__name__}.{module}"))
                    self._specs[name] = spec
        return spec

    def __setitem__(self, name, spec) -> None:
        if name not in self._names:
            self._names.append(name)
        self._lazy.pop(name, None)
        self._specs[name] = spec

    def __delitem__(self, name) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._lazy.pop(name, None)
        self._specs.pop(name, None)

    def __contains__(self, name) -> bool:
        return name in self._names

    def __iter__(self):
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"SolverRegistry({self._names!r})"


SOLVERS: SolverRegistry = SolverRegistry(_REGISTRY)

#: former module-level aliases of the solver modules, resolved on first use
_MODULE_ALIASES = {"dgpd_solver": "dgpd", "newton_solver": "newton_cd", "spdc_solver": "spdc",
                   "ws_solver": "working_set"}
_SUBMODULES = ("block_cd", "dual_cd", "full_gradient", "greedy_cd", "primal_cd", "dgpd",
               "newton_cd", "spdc", "working_set", "intercept", "newton_cg", "gram_cd", "lbfgs")


def __getattr__(name):
    module = _MODULE_ALIASES.get(name, name if name in _SUBMODULES else None)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{module}")


__all__ = ["SOLVERS", "SolverSpec", "SolverRegistry", "Problem", "SolveResult", "Trace", "run"]
