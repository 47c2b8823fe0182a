"""The alias table draws exactly the distribution it was built from."""

import numpy as np
import pytest

from cdlearn.sampling import alias_table


def _implied(prob, alias):
    """P(k) of one draw: slot k uniformly, kept with prob[k], else alias[k]."""
    n = prob.shape[0]
    out = prob / n
    np.add.at(out, alias, (1.0 - prob) / n)
    return out


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 40000])
@pytest.mark.parametrize("shape", ["flat", "skewed", "zeros"])
def test_alias_table_reproduces_the_distribution(n, shape):
    rng = np.random.default_rng(n)
    p = np.ones(n) if shape == "flat" else rng.random(n) ** 6
    if shape == "zeros" and n > 1:
        p[::2] = 0.0
    prob, alias = alias_table(p)
    np.testing.assert_allclose(_implied(prob, alias), p / p.sum(), rtol=0, atol=1e-9 / n)  # Vose accumulates rounding
    never = p == 0
    assert not np.any(prob[never] > 0) and not np.any(never[alias[prob < 1]])


def test_alias_table_rejects_a_useless_distribution():
    with pytest.raises(ValueError, match="probabilities"):
        alias_table(np.zeros(3))
    with pytest.raises(ValueError, match="probabilities"):
        alias_table(np.array([1.0, np.nan]))
