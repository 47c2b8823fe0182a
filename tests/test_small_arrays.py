"""The numpy forms small problems take instead of the numba loops (issue 22,
``cdlearn.data.SMALL_ARRAY``) agree with the loops to rounding."""

import math

import numpy as np
import pytest

from cdlearn import data, losses, penalties
from cdlearn.losses import LOSS_CODES


def _rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


@pytest.mark.parametrize("loss", sorted(LOSS_CODES))
@pytest.mark.parametrize("where", ["random", "near optimum"])
def test_loss_sums_match_the_loops(loss, where):
    rng = np.random.default_rng(LOSS_CODES[loss])
    n = 400
    code = LOSS_CODES[loss]
    y = rng.standard_normal(n) if loss == "squared" else rng.choice([-1.0, 1.0], n)
    z = 2.0 * rng.standard_normal(n)
    sw = rng.uniform(0.5, 2.0, n)
    sw[:7] = 0.0
    deriv = np.empty(n)
    losses.loss_derivatives(code, z, y, deriv)
    np.testing.assert_allclose(losses.loss_derivatives_np(code, z, y), deriv, rtol=1e-15,
                               atol=0.0)
    # the dual point of the margins (FY terms ~0 up to rounding) or a perturbed one
    alpha = -sw * deriv
    if where == "random":
        alpha = alpha * rng.uniform(0.3, 1.0, n)
    loops = losses.weighted_loss_and_fenchel_young_sums(code, z, alpha, y, sw)
    forms = losses.weighted_loss_and_fenchel_young_sums_np(code, z, alpha, y, sw)
    assert _rel(forms[0], loops[0]) < 1e-14
    assert forms[1] >= 0.0
    assert _rel(forms[1], loops[1]) < (1e-14 if where == "random" else 1e-9)
    assert _rel(losses.weighted_loss_sum_np(code, z, y, sw),
                losses.weighted_loss_sum(code, z, y, sw)) < 1e-14
    # infeasible dual points and a nonzero α where s = 0 are inf in both
    if loss != "squared":
        bad = alpha.copy()
        bad[10] = -y[10] * sw[10]
        assert losses.weighted_loss_and_fenchel_young_sums_np(code, z, bad, y, sw)[1] == math.inf
        assert losses.weighted_loss_and_fenchel_young_sums(code, z, bad, y, sw)[1] == math.inf
    alpha[0] = 1e-3
    assert losses.weighted_loss_and_fenchel_young_sums_np(code, z, alpha, y, sw)[1] == math.inf


@pytest.mark.parametrize("l1,l2", [(0.3, 0.0), (0.0, 0.7), (0.3, 0.7)])
@pytest.mark.parametrize("positive", [False, True])
def test_penalty_sums_match_the_loops(l1, l2, positive):
    rng = np.random.default_rng(3)
    d = 300
    w = rng.standard_normal(d)
    w[::3] = 0.0
    if positive:
        w = np.abs(w)
    u = rng.standard_normal(d)
    if l2 == 0.0:  # a feasible u for the l1 conjugate
        u *= l1 / np.abs(u).max()
    args = (float(l1), float(l2))
    assert _rel(penalties._penalty_value_np(w, *args), penalties._penalty_value(w, *args)) < 1e-14
    fy = penalties._penalty_fenchel_young_np(w, u, *args, positive)
    assert _rel(fy, penalties._penalty_fenchel_young(w, u, *args, positive)) < 1e-14
    conj = penalties._penalty_conjugate_np(u, *args, positive)
    assert _rel(conj, penalties._penalty_conjugate(u, *args, positive)) < 1e-14
    assert penalties.dual_feasible_scale(u, *args, positive) == pytest.approx(
        1.0 if l2 > 0 else min(1.0, l1 / max(float((u if positive else np.abs(u)).max()), 1e-300)),
        rel=1e-15)
    if positive:
        w[1] = -1.0
        assert penalties._penalty_fenchel_young_np(w, u, *args, True) == math.inf
    if l2 == 0.0:
        u[2] = 2.0 * l1
        assert penalties._penalty_fenchel_young_np(w, u, *args, positive) == math.inf
        assert penalties._penalty_conjugate_np(u, *args, positive) == math.inf


@pytest.mark.parametrize("values", [
    np.random.default_rng(0).standard_normal(1000),
    np.array([0.0, -0.0, np.nan, 1.0, -np.inf]),
    np.random.default_rng(1).standard_normal(100).astype(np.float32),
    np.arange(50, dtype=np.int32),
])
def test_scan_matches_the_loop(values):
    bits = data._flat_bits(values)
    sign = data._SIGN[bits.dtype.itemsize]
    assert [int(v) for v in data._scan_numpy(bits, sign)] == \
        [int(v) for v in data._scan_loop(bits, sign, True)]


def test_gram_cd_anderson_weights_match_the_kernel():
    from cdlearn.kernels.working_set import _anderson_weights
    from cdlearn.solvers.gram_cd import anderson_weights

    rng = np.random.default_rng(5)
    hist = rng.standard_normal((6, 40))
    c, ok = _anderson_weights(hist, 5)
    assert ok
    np.testing.assert_allclose(anderson_weights(hist), c, rtol=1e-10)
    assert anderson_weights(hist).sum() == pytest.approx(1.0, rel=1e-14)
    hist[3] = hist[2]  # a zero difference: UUᵀ singular
    assert not _anderson_weights(hist, 5)[1]
    assert anderson_weights(hist) is None


def test_multinomial_sums_match_the_loops():
    from cdlearn import multi_objectives as mo

    rng = np.random.default_rng(7)
    n, K = 200, 5
    Z = 3.0 * rng.standard_normal((n, K))
    labels = rng.integers(0, K, n)
    sw = rng.uniform(0.5, 2.0, n)
    sw[:4] = 0.0
    P, P_loop = np.empty_like(Z), np.empty_like(Z)
    np.testing.assert_allclose(mo.softmax_rows(Z, P), mo._softmax_rows_loop(Z, P_loop),
                               rtol=1e-14)
    np.testing.assert_allclose(P, P_loop, rtol=1e-13, atol=1e-300)
    for c in (1.0, 0.7):
        forms, loops = mo.multinomial_sums(Z, labels, sw, c), mo._multinomial_sums_loop(
            Z, labels, sw, c)
        assert all(_rel(a, b) < 1e-13 for a, b in zip(forms, loops, strict=True)), (forms, loops)
    G, G_loop = Z.copy(), Z.copy()
    value = mo.multinomial_loss_gradient(G, labels, sw, 1.0 / n)
    assert _rel(value, mo._multinomial_loss_gradient_loop(G_loop, labels, sw, 1.0 / n)) < 1e-14
    np.testing.assert_allclose(G, G_loop, rtol=1e-13, atol=1e-17)


def test_scan_takes_the_loop_once_it_ran_for_the_width(monkeypatch):
    # small arrays take numpy's form until the loop ran for their width (no compilation
    # on a cold start), then the loop; both give the same scan
    bits = data._flat_bits(np.random.default_rng(2).standard_normal(500))
    sign = data._SIGN[8]
    expected = [int(v) for v in data._scan_numpy(bits, sign)]
    taken = []
    numpy_form = data._scan_numpy
    monkeypatch.setattr(data, "_scan_numpy", lambda *a: taken.append("numpy") or numpy_form(*a))
    monkeypatch.setattr(data, "_LOOP_WIDTHS", set())
    assert [int(v) for v in data._scan(bits, sign)] == expected
    assert taken == ["numpy"] and data._LOOP_WIDTHS == set()
    monkeypatch.setattr(data, "_LOOP_WIDTHS", {8})
    assert [int(v) for v in data._scan(bits, sign)] == expected
    assert taken == ["numpy"]
