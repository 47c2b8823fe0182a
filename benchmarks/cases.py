"""Benchmark cases: a dataset, a loss, a penalty and a rule for λ.

Real datasets come from the shared LIBSVM cache (``CDLEARN_DATA``, never
downloaded here); ``news20`` is the multiclass set binarized by
``load_binary`` (classes 1-10 vs 11-20). λ rules:

- ``lmax/K``: λmax / K with λmax the smallest λ giving w = 0 for an l1 penalty,
  ``‖Xᵀy‖∞ / n`` for the squared loss and ``‖Xᵀy‖∞ / (2n)`` for the logistic loss
  (``|φ'(0)| = ½``);
- ``1/n``, ``1/(100n)``: the usual L2 choices (liblinear's C = 1 and C = 100).

No intercept anywhere. The generated Lasso is Nesterov's instance with a known
optimum (:func:`cdlearn.datasets.nesterov.make_lasso_known_optimum`), mapped
from ``½‖Ax−b‖² + λ‖x‖₁`` to cdlearn's ``1/m Σ ½(z−y)² + (λ/m)‖x‖₁``; its
exact optimum ``F*/m`` is the P* of that case.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .peers import Objective

DATASET_SHORT = {"reuters": "reuters-money-fx"}


@dataclass(frozen=True)
class Case:
    name: str
    dataset: str  # registry name for load_binary, or "nesterov"
    loss: str
    penalty: str
    lam_rule: str  # "lmax/10", "1/n", "1/(100n)", "nesterov"
    gen: dict = field(default_factory=dict, hash=False, compare=False)

    def load(self):
        """``(X, y, objective, p_star_known)``; X is CSR (or dense for leu)."""
        if self.dataset == "nesterov":
            return _nesterov(**self.gen)
        X, y = _load_binary(DATASET_SHORT.get(self.dataset, self.dataset))
        n = X.shape[0]
        if self.lam_rule.startswith("lmax/"):
            k = float(self.lam_rule.split("/", 1)[1])
            lam = lam_max(X, y, self.loss) / k
        elif self.lam_rule == "1/n":
            lam = 1.0 / n
        elif self.lam_rule == "1/(100n)":
            lam = 1.0 / (100 * n)
        else:
            raise ValueError(f"unknown λ rule {self.lam_rule!r}")
        return X, y, Objective(self.loss, self.penalty, lam), None

    @property
    def key(self) -> str:
        """Identifies the optimisation problem (for the P* cache)."""
        extra = ",".join(f"{k}={v}" for k, v in sorted(self.gen.items()))
        return f"{self.dataset}|{self.loss}|{self.penalty}|{self.lam_rule}|{extra}"


def lam_max(X, y, loss) -> float:
    g = np.abs(np.asarray(X.T @ y).ravel()).max() / X.shape[0]
    return float(g) * (0.5 if loss == "logistic" else 1.0)


@functools.lru_cache(maxsize=4)
def _load_raw(name):
    from cdlearn.datasets.libsvm import load_binary

    X, y = load_binary(name, download=False)
    return X, y


def _load_binary(name):
    X, y = _load_raw(name)
    if name == "leu":
        X = X.toarray()  # leu is a dense dataset (38 x 7129, fully dense)
    return X.copy(), y.copy()


def _nesterov(n_samples, n_features, nnz_per_column, support_size, lam, seed=0):
    from cdlearn.datasets.nesterov import make_lasso_known_optimum

    A, b, _x, F_star = make_lasso_known_optimum(
        n_samples, n_features, nnz_per_column=nnz_per_column, support_size=support_size,
        lam=lam, seed=seed)
    m = A.shape[0]
    return A.tocsr(), b, Objective("squared", "l1", lam / m), F_star / m


def _real_cases() -> list[Case]:
    out = []
    for ds in ("leu", "reuters", "news20"):
        for k in (10, 100):
            out.append(Case(f"lasso-{ds}-lmax{k}", ds, "squared", "l1", f"lmax/{k}"))
    for ds in ("reuters", "a9a", "w8a", "ijcnn1", "news20"):
        out.append(Case(f"logreg-l2-{ds}-1n", ds, "logistic", "l2", "1/n"))
        out.append(Case(f"logreg-l2-{ds}-100n", ds, "logistic", "l2", "1/(100n)"))
    for ds in ("reuters", "news20", "leu"):
        out.append(Case(f"logreg-l1-{ds}-lmax10", ds, "logistic", "l1", "lmax/10"))
    for ds in ("reuters", "a9a", "news20"):
        out.append(Case(f"sqhinge-l2-{ds}-1n", ds, "squared_hinge", "l2", "1/n"))
    return out


NESTEROV_FULL = Case("lasso-nesterov-1e6", "nesterov", "squared", "l1", "nesterov",
                     gen=dict(n_samples=100_000, n_features=1_000_000, nnz_per_column=10,
                              support_size=10_000, lam=1.0))
NESTEROV_QUICK = Case("lasso-nesterov-1e5", "nesterov", "squared", "l1", "nesterov",
                      gen=dict(n_samples=10_000, n_features=100_000, nnz_per_column=10,
                               support_size=1_000, lam=1.0))

CASES: dict[str, Case] = {c.name: c for c in [*_real_cases(), NESTEROV_QUICK, NESTEROV_FULL]}

FULL = [c for c in CASES if c != NESTEROV_QUICK.name]
QUICK = ["logreg-l2-reuters-1n", "logreg-l2-a9a-1n", "lasso-leu-lmax10", NESTEROV_QUICK.name]
# for the --epoch-cost table (L2 logistic, λ = 1/n)
EPOCH_COST_CASES = ["logreg-l2-reuters-1n", "logreg-l2-a9a-1n", "logreg-l2-w8a-1n",
                    "logreg-l2-news20-1n"]
