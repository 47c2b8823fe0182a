"""Peer solvers, each mapped exactly onto cdlearn's objective.

cdlearn minimises ``P(w) = 1/n Σ φ(x_iᵀw, y_i) + λ g(w)`` with
``g = ½‖w‖²`` (l2), ``‖w‖₁`` (l1) or ``ρ‖w‖₁ + (1-ρ)/2‖w‖²`` (elastic_net) and
``φ`` = ½(z−y)² (squared), log(1+e^{−yz}) (logistic), max(0, 1−yz)² (squared_hinge).
The benchmark problems have no intercept (``fit_intercept=False`` everywhere,
liblinear ``-B -1``). The peers' parametrisations, and how they map:

================================  ==========================================  ==================
peer                              its objective                               mapping
================================  ==========================================  ==================
sklearn Lasso / ElasticNet        1/(2n)‖y−Xw‖² + α ρ‖w‖₁ + α(1−ρ)/2‖w‖²      α = λ
skglm Lasso, celer Lasso          1/(2n)‖y−Xw‖² + α‖w‖₁                       α = λ
skglm SparseLogisticRegression    1/n Σ log(1+e^{−yz}) + α‖w‖₁                α = λ
sklearn LogisticRegression        C Σ log(1+e^{−yz}) + ½‖w‖² (or ‖w‖₁)        C = 1/(λn)
sklearn LinearSVC (sq. hinge)     C Σ max(0,1−yz)² + ½‖w‖² (or ‖w‖₁)          C = 1/(λn)
celer LogisticRegression (l1)     C Σ log(1+e^{−yz}) + ‖w‖₁                   C = 1/(λn)
liblinear -s 0/1/2/5/6/7          C Σ ξ(w; x_i, y_i) + ½‖w‖² (or ‖w‖₁)        C = 1/(λn), -B -1
Snap ML LogisticRegression,       Σ φ(x_iᵀw, y_i) + r g(w)                    r = λn
SupportVectorMachine,             (found by checking the stationarity
LinearRegression                  conditions of tight fits; its docstrings
                                  only say "regularization strength")
================================  ==========================================  ==================

Each peer is a small adapter: ``prepare(X, y)`` converts the data once into the
layout the peer wants (not timed, as in benchopt), ``train(X, y, budget)`` is the
timed fit, ``extract(model) -> (w, b)`` reads the coefficients (not timed), and
``fit(X, y, budget) = extract(train(...))``. A *budget* is either an iteration
count (``budget_kind = "iter"``: max_iter with a negligible tolerance) or a
tolerance (``budget_kind = "tol"``, for working-set / Newton solvers whose
iteration counter is not a fair unit); ``budgets()`` yields them from loose to
tight and ``tight_budget`` is what the mapping tests and P* runs use.
``tests/test_bench_mapping.py`` proves every mapping numerically.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from cdlearn.losses import LOSS_CODES
from cdlearn.objectives import primal_value
from cdlearn.penalties import penalty_strengths

# --------------------------------------------------------------------------- objective


@dataclass(frozen=True)
class Objective:
    """One instance of cdlearn's objective (no intercept, unit sample weights)."""

    loss: str
    penalty: str
    lam: float
    l1_ratio: float = 0.5

    @property
    def strengths(self) -> tuple[float, float]:
        return penalty_strengths(self.penalty, self.lam, self.l1_ratio)

    def value(self, X, y, w, b=0.0) -> float:
        """P(w) with cdlearn's own objective code (``cdlearn.objectives.primal_value``)."""
        w = np.asarray(w, dtype=np.float64).ravel()
        z = np.asarray(X @ w, dtype=np.float64).ravel() + float(b)
        l1, l2 = self.strengths
        y = np.asarray(y, dtype=np.float64)
        return float(primal_value(LOSS_CODES[self.loss], z, y, np.ones_like(y), w, l1, l2))

    def solve_kwargs(self) -> dict:
        kw = dict(loss=self.loss, penalty=self.penalty, lam=self.lam)
        if self.penalty == "elastic_net":
            kw["l1_ratio"] = self.l1_ratio
        return kw


# --------------------------------------------------------------------------- mappings


# liblinear's -s 5 (L1 squared hinge, primal CD) at eps = 1e-12 ends 7e-4 above
# the optimum for ~2% of libc rand() states (6 of 300 srand seeds; the same
# wrong point from sklearn's bundled copy); at 1e-10 and 1e-8 all 300 seeds
# reach it to 1e-15. Its "tight" fit therefore asks for 1e-10.
L1_SQUARED_HINGE_TIGHT_EPS = 1e-10


def C_from_lam(lam: float, n_samples: int) -> float:
    """liblinear / sklearn LogisticRegression, LinearSVC / celer LogisticRegression."""
    return 1.0 / (lam * n_samples)


def snap_regularizer(lam: float, n_samples: int) -> float:
    """Snap ML ``regularizer`` (Σ loss + r g(w))."""
    return lam * n_samples


# --------------------------------------------------------------------------- budgets

SQRT2 = math.sqrt(2.0)


def iter_budgets(start=1, stop=100_000, factor=SQRT2):
    """1, 2, 3, 4, 6, 8, 11, 16, ... (geometric, factor √2, distinct integers)."""
    b, x = start, float(start)
    while b <= stop:
        yield b
        x *= factor
        b = max(b + 1, int(round(x)))


def tol_budgets(start=10.0, stop=1e-13, per_decade=2):
    """10, 3.2, 1, 0.32, ... down to ``stop`` (a loose start costs little)."""
    k0 = round(-math.log10(start) * per_decade)
    k1 = round(-math.log10(stop) * per_decade)
    for k in range(k0, k1 + 1):
        yield 10.0 ** (-k / per_decade)


def _available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _csr(X):
    return X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)


def _csc(X):
    return X.tocsc() if sp.issparse(X) else np.asfortranarray(X, dtype=np.float64)


# --------------------------------------------------------------------------- base


class Peer:
    """Adapter base class; subclasses set the class attributes and ``train``."""

    name = "peer"
    module = ""  # import name; the peer is skipped when it is missing
    budget_kind = "iter"
    tight_budget: float = 10_000

    def __init__(self, objective: Objective):
        if not self.supports(objective):
            raise ValueError(f"{self.name} does not solve {objective}")
        self.obj = objective

    @classmethod
    def supports(cls, obj: Objective) -> bool:  # pragma: no cover - overridden
        return False

    @classmethod
    def available(cls) -> bool:
        return _available(cls.module)

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        dist = {"sklearn": "scikit-learn", "liblinear": "liblinear-official"}.get(
            self.module, self.module)
        try:
            return version(dist)
        except PackageNotFoundError:
            return "?"

    def budgets(self):
        return iter_budgets() if self.budget_kind == "iter" else tol_budgets()

    def prepare(self, X, y):
        return _csr(X), np.asarray(y, dtype=np.float64)

    def train(self, X, y, budget):  # pragma: no cover - overridden
        raise NotImplementedError

    def extract(self, model):
        w = np.asarray(model.coef_, dtype=np.float64).ravel()
        b = np.asarray(getattr(model, "intercept_", 0.0), dtype=np.float64).ravel()
        return w, float(b[0]) if b.size else 0.0

    def fit(self, X, y, budget):
        """``(w, b)`` after a fit with ``budget``; X, y as returned by ``prepare``."""
        return self.extract(self.train(X, y, budget))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


def _quiet(fn):
    """Silence convergence warnings (budgets stop the peers early on purpose)."""

    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)

    wrapper.__wrapped__ = fn
    return wrapper


# --------------------------------------------------------------------------- scikit-learn


class SklearnLasso(Peer):
    """sklearn Lasso / ElasticNet (cyclic CD); α = λ; budget = epochs (max_iter)."""

    name = "sklearn-lasso-cd"
    module = "sklearn"
    budget_kind = "iter"
    tight_budget = 100_000

    @classmethod
    def supports(cls, obj):
        return obj.loss == "squared" and obj.penalty in ("l1", "elastic_net")

    def prepare(self, X, y):
        return _csc(X), np.asarray(y, dtype=np.float64)

    @_quiet
    def train(self, X, y, budget):
        from sklearn.linear_model import ElasticNet, Lasso

        common = dict(alpha=self.obj.lam, fit_intercept=False, max_iter=int(budget),
                      tol=1e-15, selection="cyclic")
        if self.obj.penalty == "l1":
            model = Lasso(**common)
        else:
            model = ElasticNet(l1_ratio=self.obj.l1_ratio, **common)
        return model.fit(X, y)


class SklearnLogReg(Peer):
    """sklearn LogisticRegression; C = 1/(λn).

    ``liblinear`` (primal TRON for l2, CD for l1; budget = tol), ``saga``
    (budget = epochs), ``lbfgs`` (l2 only; budget = iterations).
    """

    module = "sklearn"

    def __init__(self, objective, solver="liblinear"):
        self.solver = solver
        self.name = f"sklearn-logreg-{solver}"
        self.budget_kind = "tol" if solver == "liblinear" else "iter"
        self.tight_budget = 1e-12 if solver == "liblinear" else 100_000
        super().__init__(objective)

    def supports(self, obj):  # instance method: depends on the solver
        if obj.loss != "logistic":
            return False
        if self.solver == "lbfgs":
            return obj.penalty == "l2"
        return obj.penalty in ("l1", "l2")

    @_quiet
    def train(self, X, y, budget):
        from sklearn.linear_model import LogisticRegression

        n = X.shape[0]
        l1_ratio = 1.0 if self.obj.penalty == "l1" else 0.0
        if self.budget_kind == "tol":
            tol, max_iter = float(budget), 100_000
        else:
            tol, max_iter = 1e-15, int(budget)
        # seeded: saga draws rows, and liblinear's l1 solver (-s 6) its coordinate order,
        # from numpy's global RNG otherwise (lbfgs ignores it)
        return LogisticRegression(C=C_from_lam(self.obj.lam, n), l1_ratio=l1_ratio,
                                  fit_intercept=False, solver=self.solver, tol=tol,
                                  max_iter=max_iter, random_state=0).fit(X, y)


class SklearnLinearSVC(Peer):
    """sklearn LinearSVC, squared hinge; C = 1/(λn); budget = tol.

    ``dual=True`` is liblinear -s 1, ``dual=False`` -s 2 (l2) or -s 5 (l1).
    """

    module = "sklearn"
    budget_kind = "tol"
    tight_budget = 1e-12

    def __init__(self, objective, dual=False):
        self.dual = bool(dual)
        self.name = f"sklearn-linearsvc-{'dual' if dual else 'primal'}"
        if objective.penalty == "l1":
            self.tight_budget = L1_SQUARED_HINGE_TIGHT_EPS  # liblinear -s 5, see there
        super().__init__(objective)

    def supports(self, obj):
        if obj.loss != "squared_hinge":
            return False
        return obj.penalty == "l2" or (obj.penalty == "l1" and not self.dual)

    @_quiet
    def train(self, X, y, budget):
        from sklearn.svm import LinearSVC

        n = X.shape[0]
        return LinearSVC(penalty=self.obj.penalty, loss="squared_hinge", dual=self.dual,
                         C=C_from_lam(self.obj.lam, n), fit_intercept=False,
                         tol=float(budget), max_iter=100_000, random_state=0).fit(X, y)


# --------------------------------------------------------------------------- skglm


class SkglmLasso(Peer):
    """skglm Lasso (Anderson-accelerated working-set CD); α = λ; budget = tol."""

    name = "skglm-lasso"
    module = "skglm"
    budget_kind = "tol"
    tight_budget = 1e-12

    @classmethod
    def supports(cls, obj):
        return obj.loss == "squared" and obj.penalty == "l1"

    def prepare(self, X, y):
        return _csc(X), np.asarray(y, dtype=np.float64)

    @_quiet
    def train(self, X, y, budget):
        from skglm import Lasso

        return Lasso(alpha=self.obj.lam, fit_intercept=False, tol=float(budget),
                     max_iter=1000, max_epochs=100_000).fit(X, y)


class SkglmSparseLogReg(Peer):
    """skglm SparseLogisticRegression (working-set prox-Newton); α = λ; budget = tol."""

    name = "skglm-sparse-logreg"
    module = "skglm"
    budget_kind = "tol"
    tight_budget = 1e-12

    @classmethod
    def supports(cls, obj):
        return obj.loss == "logistic" and obj.penalty == "l1"

    def prepare(self, X, y):
        return _csc(X), np.asarray(y, dtype=np.float64)

    @_quiet
    def train(self, X, y, budget):
        from skglm import SparseLogisticRegression

        return SparseLogisticRegression(alpha=self.obj.lam, l1_ratio=1.0, fit_intercept=False,
                                        tol=float(budget), max_iter=1000,
                                        max_epochs=10_000).fit(X, y)


# --------------------------------------------------------------------------- celer


class CelerLasso(Peer):
    """celer Lasso (working sets + dual extrapolation); α = λ; budget = tol."""

    name = "celer-lasso"
    module = "celer"
    budget_kind = "tol"
    tight_budget = 1e-12

    @classmethod
    def supports(cls, obj):
        return obj.loss == "squared" and obj.penalty == "l1"

    def prepare(self, X, y):
        return _csc(X), np.asarray(y, dtype=np.float64)

    @_quiet
    def train(self, X, y, budget):
        from celer import Lasso

        return Lasso(alpha=self.obj.lam, fit_intercept=False, tol=float(budget),
                     max_iter=1000, max_epochs=100_000).fit(X, y)


class CelerLogReg(Peer):
    """celer LogisticRegression (l1, celer-pn); C = 1/(λn); budget = tol."""

    name = "celer-logreg"
    module = "celer"
    budget_kind = "tol"
    tight_budget = 1e-12

    @classmethod
    def supports(cls, obj):
        return obj.loss == "logistic" and obj.penalty == "l1"

    def prepare(self, X, y):
        return _csc(X), np.asarray(y, dtype=np.float64)

    @_quiet
    def train(self, X, y, budget):
        from celer import LogisticRegression

        n = X.shape[0]
        return LogisticRegression(C=C_from_lam(self.obj.lam, n), penalty="l1",
                                  fit_intercept=False, tol=float(budget), max_iter=1000,
                                  max_epochs=100_000).fit(X, y)


# --------------------------------------------------------------------------- liblinear


LIBLINEAR_SOLVERS = {
    # -s: (loss, penalty, what it is)
    0: ("logistic", "l2", "primal trust-region Newton"),
    1: ("squared_hinge", "l2", "dual CD"),
    2: ("squared_hinge", "l2", "primal trust-region Newton"),
    5: ("squared_hinge", "l1", "primal CD (Newton steps)"),
    6: ("logistic", "l1", "primal newGLMNET"),
    7: ("logistic", "l2", "dual CD"),
}


class Liblinear(Peer):
    """liblinear-official ``train(prob, '-s S -c C -e eps -B -1 -q')``; C = 1/(λn).

    liblinear minimises ``C Σ ξ + ½‖w‖²`` (``‖w‖₁`` for -s 5, 6); with ``-B -1``
    there is no bias. Its w is the decision function of its *first* label, so
    the sign is flipped when that label is -1. Budget = ``-e`` tolerance.
    """

    module = "liblinear"
    budget_kind = "tol"
    tight_budget = 1e-12

    def __init__(self, objective, s=0):
        if s not in LIBLINEAR_SOLVERS:
            raise ValueError(f"liblinear -s {s} is not mapped")
        self.s = int(s)
        self.name = f"liblinear-s{s}"
        if self.s == 5:
            self.tight_budget = L1_SQUARED_HINGE_TIGHT_EPS
        super().__init__(objective)

    def supports(self, obj):
        loss, penalty, _ = LIBLINEAR_SOLVERS[self.s]
        return obj.loss == loss and obj.penalty == penalty

    def version(self):
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("liblinear-official")
        except PackageNotFoundError:
            return "?"

    def prepare(self, X, y):
        from liblinear.liblinearutil import problem

        X = X.tocsr() if sp.issparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
        y = np.asarray(y, dtype=np.float64)
        prob = problem(y, X)  # bias=-1: no bias feature
        prob._n = X.shape[1]  # keep the width for extract (liblinear counts max index)
        prob._X = X  # keep the CSR arrays alive: the problem points into them
        return prob, y

    def train(self, X, y, budget):
        from liblinear.liblinearutil import parameter, train

        C = C_from_lam(self.obj.lam, X.l)
        param = parameter(f"-s {self.s} -c {C!r} -e {float(budget)!r} -B -1 -q")
        model = train(X, param)
        model._width = X._n
        return model

    def extract(self, model):
        nr = model.get_nr_feature()
        w_full = np.zeros(model._width)
        w = np.ctypeslib.as_array(model.w, shape=(nr,)).astype(np.float64, copy=True)
        w_full[:nr] = w
        if model.get_labels()[0] == -1:
            w_full = -w_full
        return w_full, 0.0


# --------------------------------------------------------------------------- Snap ML


class _Snap(Peer):
    module = "snapml"
    budget_kind = "iter"
    tight_budget = 100_000

    def __init__(self, objective, dual=True):
        self.dual = bool(dual)
        super().__init__(objective)

    def prepare(self, X, y):
        # dual CD walks rows (CSR); the primal solver needs column-major data (CSC)
        X = _csr(X) if self.dual else _csc(X)
        return X, np.asarray(y, dtype=np.float64)

    def extract(self, model):
        w = np.asarray(model.coef_, dtype=np.float64).ravel()
        return w, 0.0


class SnapLogReg(_Snap):
    """snapml LogisticRegression; regularizer = λn; budget = max_iter (epochs)."""

    def __init__(self, objective, dual=True):
        self.name = f"snapml-logreg-{'dual' if dual else 'primal'}"
        super().__init__(objective, dual)

    def supports(self, obj):
        if obj.loss != "logistic":
            return False
        return obj.penalty == "l2" or (obj.penalty == "l1" and not self.dual)

    @_quiet
    def train(self, X, y, budget):
        from snapml import LogisticRegression

        return LogisticRegression(regularizer=snap_regularizer(self.obj.lam, X.shape[0]),
                                  penalty=self.obj.penalty, dual=self.dual,
                                  fit_intercept=False, max_iter=int(budget), tol=1e-15,
                                  n_jobs=1, random_state=0).fit(X, y)


class SnapSVM(_Snap):
    """snapml SupportVectorMachine(loss="squared_hinge") (dual CD); regularizer = λn."""

    name = "snapml-svm-dual"

    def __init__(self, objective):
        super().__init__(objective, dual=True)

    @classmethod
    def supports(cls, obj):
        return obj.loss == "squared_hinge" and obj.penalty == "l2"

    @_quiet
    def train(self, X, y, budget):
        from snapml import SupportVectorMachine

        return SupportVectorMachine(regularizer=snap_regularizer(self.obj.lam, X.shape[0]),
                                    loss="squared_hinge", fit_intercept=False,
                                    max_iter=int(budget), tol=1e-15, n_jobs=1,
                                    random_state=0).fit(X, y)


class SnapLinReg(_Snap):
    """snapml LinearRegression (l1: primal CD; l2: dual or primal); regularizer = λn."""

    def __init__(self, objective, dual=False):
        self.name = f"snapml-linreg-{'dual' if dual else 'primal'}"
        super().__init__(objective, dual)

    def supports(self, obj):
        if obj.loss != "squared":
            return False
        return obj.penalty == "l2" or (obj.penalty == "l1" and not self.dual)

    @_quiet
    def train(self, X, y, budget):
        from snapml import LinearRegression

        return LinearRegression(regularizer=snap_regularizer(self.obj.lam, X.shape[0]),
                                penalty=self.obj.penalty, dual=self.dual,
                                fit_intercept=False, max_iter=int(budget), tol=1e-15,
                                n_jobs=1, random_state=0).fit(X, y)


# --------------------------------------------------------------------------- cdlearn


class Cdlearn(Peer):
    """cdlearn itself, for the same interface (the benchmark runner uses callbacks).

    ``prepare`` builds the validated :class:`cdlearn.Design` with both its row and
    column views once (the analogue of handing every peer its preferred layout).
    Budget = ``max_epochs``; the mapping tests use ``tight_budget`` with tol=1e-12.
    """

    module = "cdlearn"
    budget_kind = "iter"
    tight_budget = 100_000

    def __init__(self, objective, solver="auto", sampling=None):
        # sampling=None: the library's default (what a user gets), no name suffix
        self.solver = solver
        self.sampling = sampling
        suffix = "" if sampling is None else f"-{sampling}"
        self.name = f"cdlearn-{solver}{suffix}"
        super().__init__(objective)

    def supports(self, obj):
        from cdlearn.api import make_problem
        from cdlearn.solvers import SOLVERS

        if self.solver == "auto":
            return True
        try:
            prob = make_problem(np.eye(2), np.array([1.0, -1.0]), **obj.solve_kwargs())
        except ValueError:
            return False
        return SOLVERS[self.solver].supports(prob)

    def version(self):
        import cdlearn

        return cdlearn.__version__

    def prepare(self, X, y):
        import cdlearn

        design = cdlearn.as_design(X)
        _ = design.csc, design.csr  # build both views now, not inside the timing
        return design, np.asarray(y, dtype=np.float64)

    @_quiet
    def train(self, X, y, budget, tol=1e-12, **kw):
        import cdlearn

        if self.sampling is not None:
            kw["sampling"] = self.sampling
        return cdlearn.solve(X, y, **self.obj.solve_kwargs(), solver=self.solver,
                             tol=tol, max_epochs=int(budget), **kw)

    def extract(self, res):
        return res.w, res.intercept


# --------------------------------------------------------------------------- registry


def all_peers(obj: Objective) -> list[Peer]:
    """Every available peer configuration that solves ``obj`` (cdlearn excluded)."""
    candidates = [
        lambda: SklearnLasso(obj),
        lambda: SklearnLogReg(obj, "liblinear"),
        lambda: SklearnLogReg(obj, "saga"),
        lambda: SklearnLogReg(obj, "lbfgs"),
        lambda: SklearnLinearSVC(obj, dual=True),
        lambda: SklearnLinearSVC(obj, dual=False),
        lambda: SkglmLasso(obj),
        lambda: SkglmSparseLogReg(obj),
        lambda: CelerLasso(obj),
        lambda: CelerLogReg(obj),
        *(lambda s=s: Liblinear(obj, s) for s in sorted(LIBLINEAR_SOLVERS)),
        lambda: SnapLogReg(obj, dual=True),
        lambda: SnapLogReg(obj, dual=False),
        lambda: SnapSVM(obj),
        lambda: SnapLinReg(obj, dual=False),
    ]
    out = []
    for make in candidates:
        try:
            peer = make()
        except ValueError:
            continue
        if peer.available():
            out.append(peer)
    return out


def cdlearn_variants(obj: Objective) -> list[Cdlearn]:
    """cdlearn "auto" first (default sampling), then the explicit methods that apply.

    Without a suffix a method runs with the library's default sampling
    (uniform, with replacement); ``-cyclic`` / ``-importance`` / ``-shuffle`` (a
    fresh random permutation every epoch) name the others.
    """
    out = [Cdlearn(obj, "auto")]
    for solver, sampling in (("primal-cd", None), ("primal-cd", "cyclic"),
                             ("primal-cd", "importance"), ("dual-cd", None),
                             ("dual-cd", "shuffle"), ("dual-cd", "importance"),
                             ("ws-cd", None), ("newton-cd", None), ("newton-cg", None)):
        try:
            out.append(Cdlearn(obj, solver, sampling))
        except ValueError:
            pass
    return out
