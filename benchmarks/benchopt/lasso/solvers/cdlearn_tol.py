"""cdlearn on benchopt's Lasso benchmark, sampled by tolerance ("cdlearn-tol").

benchopt's "tolerance" sampling calls ``run(tol)`` with tol from 1 downward
and stops a solver after 3 calls in a row that do not lower the objective.
Its default schedule divides tol by 1.5: cdlearn's gap checks (one
coordinate-descent epoch often divides the gap by 10-1000) then return the same
iterate for several tols in a row, and benchopt stopped it at tol ≈ 8e-3.
``tol`` is cdlearn's own (duality gap ≤ tol·P(0), the benchmark's objective up
to the factor n) and ``get_next`` divides it by 100, so each call asks for a
point distinctly more accurate than the last, down to 1e-15.
"""

from benchopt import safe_import_context

with safe_import_context() as import_ctx:
    from benchmark_utils.cdlearn_lasso import CdlearnSolver


class Solver(CdlearnSolver):
    name = "cdlearn-tol"
    sampling_strategy = "tolerance"

    def run(self, tol):
        self.solve(tol=min(float(tol), 1.0), max_epochs=100_000)

    def get_next(self, stop_val):
        return max(min(stop_val, 1.0) * 1e-2, 1e-15)
