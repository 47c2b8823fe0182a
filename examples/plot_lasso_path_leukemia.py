"""
Lasso path on leukemia
======================

:func:`cdlearn.lasso_path` solves the Lasso
``(1/2n) ||y - Xw||² + α ||w||₁`` for a decreasing grid of α, each fit
warm-started from the previous one, and returns scikit-learn's
``alphas, coefs, dual_gaps``. Leukemia (LIBSVM ``leu``: 38 samples, 7,129
genes) is the face-off paper's and celer's example of a wide problem. Without
the file in ``$CDLEARN_DATA`` the script uses a generated problem of the same
shape.
"""

import matplotlib.pyplot as plt
import numpy as np
from _data import available

import cdlearn

if available("leu.bz2"):
    from cdlearn.datasets import load_libsvm

    X, y = load_libsvm("leu")
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    name = "leukemia (38 x 7129)"
else:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((38, 7129))
    y = X[:, :5] @ rng.standard_normal(5) + 0.1 * rng.standard_normal(38)
    name = "generated (38 x 7129): leukemia file absent"

# no intercept in lasso_path: centre, as for scikit-learn
X = X - X.mean(axis=0)
y = y - y.mean()
alpha_max = np.abs(X.T @ y).max() / len(y)
alphas = alpha_max * np.geomspace(1, 1e-2, 40)
alphas, coefs, gaps = cdlearn.lasso_path(X, y, alphas=alphas, tol=1e-8)
n_active = (coefs != 0).sum(axis=0)
print(f"{name}: largest duality gap on the path {gaps.max():.1e}, "
      f"{n_active[-1]} genes at alpha_max/100")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
ax1.semilogx(alphas / alpha_max, coefs.T[:, np.any(coefs != 0, axis=1)], lw=0.8)
ax1.invert_xaxis()
ax1.set_xlabel("alpha / alpha_max")
ax1.set_ylabel("coefficient")
ax1.set_title(name, fontsize=9)
ax2.semilogx(alphas / alpha_max, n_active, "o-", ms=3)
ax2.invert_xaxis()
ax2.set_xlabel("alpha / alpha_max")
ax2.set_ylabel("non-zero coefficients")
fig.tight_layout()
plt.show()
