"""Solver registry: what each method supports and how to build its state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import block_cd, dual_cd, full_gradient, greedy_cd, primal_cd
from . import dgpd as dgpd_solver
from . import newton_cd as newton_solver
from . import spdc as spdc_solver
from . import working_set as ws_solver
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
        if problem.penalty not in self.penalties or (
            problem.penalty == "elastic_net" and self.name == "dual-cd" and problem.l2 <= 0
        ):
            raise ValueError(
                f"solver={self.name!r} does not support penalty={problem.penalty!r}"
                + (" with l1_ratio=1" if problem.penalty == "elastic_net" else "")
                + f" (supported: {', '.join(self.penalties)}){self.note}"
            )


SOLVERS: dict[str, SolverSpec] = {
    "primal-cd": SolverSpec(
        "primal-cd", primal_cd.SUPPORTED_LOSSES, primal_cd.SUPPORTED_PENALTIES,
        primal_cd.PrimalCDState, note="; the hinge loss needs solver='dual-cd'",
        options=("shrink_q", "shrink_start", "smoothness"),
    ),
    "dual-cd": SolverSpec(
        "dual-cd", dual_cd.SUPPORTED_LOSSES, dual_cd.SUPPORTED_PENALTIES,
        dual_cd.DualCDState,
        note="; l1 and penalty-free problems need solver='primal-cd'",
        options=("smoothness",),
    ),
    "block-cd": SolverSpec(
        "block-cd", block_cd.SUPPORTED_LOSSES, block_cd.SUPPORTED_PENALTIES,
        block_cd.BlockCDState, note="; block-cd solves penalty='group_l2' (RCDC over groups)",
        options=("block_probs", "block_norm"),
    ),
    "fista": SolverSpec(
        "fista", full_gradient.SUPPORTED_LOSSES, full_gradient.SUPPORTED_PENALTIES,
        full_gradient.FullGradientState,
        note="; fista is the full-gradient baseline (ISTA with accelerated=False)",
        options=("accelerated",),
    ),
    "scd": SolverSpec(
        "scd", greedy_cd.SUPPORTED_LOSSES, greedy_cd.SUPPORTED_PENALTIES,
        greedy_cd.build_scd, note="; scd/ascd take the squared and logistic losses",
        options=greedy_cd.SCD_OPTIONS,
    ),
    "ascd": SolverSpec(
        "ascd", greedy_cd.SUPPORTED_LOSSES, greedy_cd.SUPPORTED_PENALTIES,
        greedy_cd.build_ascd, note="; scd/ascd take the squared and logistic losses",
        options=greedy_cd.ASCD_OPTIONS,
    ),
    "spdc": SolverSpec(
        "spdc", spdc_solver.SUPPORTED_LOSSES, spdc_solver.SUPPORTED_PENALTIES,
        spdc_solver.SPDCState,
        note="; spdc (Zhang & Xiao 2014) needs a smooth loss and a strongly convex penalty",
        options=spdc_solver.OPTIONS,
    ),
    "dgpd": SolverSpec(
        "dgpd", dgpd_solver.SUPPORTED_LOSSES, dgpd_solver.SUPPORTED_PENALTIES,
        dgpd_solver.DGPDState,
        note="; dgpd (Lei et al. 2017) needs a smooth loss and μ = l2 > 0 (l2 or elastic_net)",
        options=dgpd_solver.OPTIONS,
    ),
    "newton-cd": SolverSpec(
        "newton-cd", newton_solver.SUPPORTED_LOSSES, newton_solver.SUPPORTED_PENALTIES,
        newton_solver.NewtonCDState,
        note="; newton-cd (proximal Newton, GLMNET/newGLMNET) needs a smooth loss",
        options=newton_solver.OPTIONS,
    ),
    "ws-cd": SolverSpec(
        "ws-cd", ws_solver.SUPPORTED_LOSSES, ws_solver.SUPPORTED_PENALTIES,
        ws_solver.WorkingSetState,
        note="; ws-cd (working sets + Anderson, celer/skglm style) needs a smooth loss "
             "and an l1, elastic_net or l2 penalty",
        options=ws_solver.OPTIONS,
    ),
}

__all__ = ["SOLVERS", "SolverSpec", "Problem", "SolveResult", "Trace", "run"]
