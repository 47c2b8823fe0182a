"""Losses and penalties against independent numerical references."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from cdlearn.losses import (
    LOSS_CODES,
    LOSS_SMOOTHNESS,
    conjugate_at_neg,
    dual_coordinate_maximizer,
    loss_derivative,
    loss_second_derivative,
    loss_value,
)
from cdlearn.penalties import (
    coordinate_prox_step,
    penalty_conjugate,
    penalty_fenchel_young,
    penalty_value,
)

MARGINS = np.linspace(-4.0, 4.0, 41) + 0.013
SMOOTH = ["squared", "logistic", "squared_hinge", "smooth_hinge"]


@pytest.mark.parametrize("loss", SMOOTH)
@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_derivative_matches_finite_differences_and_smoothness(loss, y):
    c = LOSS_CODES[loss]
    h = 1e-6
    for z in MARGINS:
        fd = (loss_value(c, z + h, y) - loss_value(c, z - h, y)) / (2 * h)
        assert loss_derivative(c, z, y) == pytest.approx(fd, abs=1e-6)
        assert 0.0 <= loss_second_derivative(c, z, y) <= LOSS_SMOOTHNESS[loss] + 1e-12
    # β-smoothness (face-off eq. (2)) on a grid of pairs
    for s in MARGINS:
        for t in (-1.3, 0.4, 2.2):
            upper = loss_value(c, s, y) + loss_derivative(c, s, y) * t + 0.5 * LOSS_SMOOTHNESS[loss] * t * t
            lower = loss_value(c, s, y) + loss_derivative(c, s, y) * t
            assert lower - 1e-12 <= loss_value(c, s + t, y) <= upper + 1e-12


@pytest.mark.parametrize("loss", list(LOSS_CODES))
@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_conjugate_is_the_legendre_transform(loss, y):
    """φ*(-a) = sup_z (-a z - φ(z)), computed by a 1-d maximisation."""
    c = LOSS_CODES[loss]
    grid = [0.0, 0.1, 0.5, 0.9, 1.0] if loss != "squared" else [-2.0, -0.3, 0.0, 0.7, 3.0]
    if loss == "squared_hinge":
        grid = [0.0, 0.3, 1.0, 2.5]
    for t in grid:
        a = t * y if loss != "squared" else t
        res = minimize_scalar(lambda z: a * z + loss_value(c, z, y), bounds=(-60, 60),
                              method="bounded", options={"xatol": 1e-10})
        assert conjugate_at_neg(c, a, y) == pytest.approx(-res.fun, abs=2e-6)
    if loss != "squared":
        assert conjugate_at_neg(c, -0.5 * y, y) == math.inf


@pytest.mark.parametrize("loss", list(LOSS_CODES))
@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_dual_coordinate_maximizer_matches_brute_force(loss, y):
    code = LOSS_CODES[loss]
    rng = np.random.default_rng(1)
    for _ in range(25):
        z = rng.normal(scale=3)
        c = 10 ** rng.uniform(-3, 3)
        a = (rng.uniform(0, 1) * y) if loss != "squared" else rng.normal()
        if loss == "squared_hinge":
            a = rng.uniform(0, 3) * y

        def neg_obj(a_new):
            val = conjugate_at_neg(code, a_new, y)
            return val + (a_new - a) * z + 0.5 * c * (a_new - a) ** 2

        if loss == "squared":
            bounds = (-50.0, 50.0)
        elif loss == "squared_hinge":
            bounds = (0.0, 50.0) if y > 0 else (-50.0, 0.0)
        else:
            bounds = (0.0, 1.0) if y > 0 else (-1.0, 0.0)
        res = minimize_scalar(neg_obj, bounds=bounds, method="bounded",
                              options={"xatol": 1e-12})
        got = dual_coordinate_maximizer(code, a, z, y, c)
        assert neg_obj(got) <= res.fun + 1e-9
        assert neg_obj(got) == pytest.approx(res.fun, abs=1e-7)


@pytest.mark.parametrize("l1, l2", [(0.3, 0.7), (0.0, 0.7), (0.3, 0.0), (2.0, 1e-3)])
def test_penalty_fenchel_young_matches_its_definition(l1, l2):
    # g(w) + g*(u) - wᵀu coordinate by coordinate, at arbitrary (not dual-optimal)
    # pairs: |u_j| below λ1 with w_j ≠ 0 of either sign, above λ1, u_j = 0, w_j = 0
    rng = np.random.default_rng(3)
    w = np.concatenate([rng.standard_normal(40), [0.0, 0.0, 1.5, -1.5]])
    u = np.concatenate([rng.uniform(-2.5, 2.5, 40), [0.1, 0.0, 0.0, 0.2]])
    if l2 == 0.0:
        u = np.clip(u, -l1, l1)  # the l1 conjugate is finite only there
    fy = penalty_fenchel_young(w, u, l1, l2)
    direct = sum(penalty_value(w[j:j + 1], l1, l2) + penalty_conjugate(u[j:j + 1], l1, l2)
                 - w[j] * u[j] for j in range(w.shape[0]))
    assert fy == pytest.approx(direct, rel=1e-12)
    assert all(penalty_fenchel_young(w[j:j + 1], u[j:j + 1], l1, l2) >= 0.0
               for j in range(w.shape[0]))


def test_penalty_prox_and_conjugate():
    rng = np.random.default_rng(2)
    for _ in range(50):
        w0, g, L = rng.normal(), rng.normal(), rng.uniform(0.1, 3)
        l1, l2 = rng.uniform(0, 1), rng.uniform(0, 1)
        f = lambda t: g * (t - w0) + 0.5 * L * (t - w0) ** 2 + l1 * abs(t) + 0.5 * l2 * t * t
        res = minimize_scalar(f, bounds=(-20, 20), method="bounded", options={"xatol": 1e-12})
        assert f(coordinate_prox_step(w0, g, L, l1, l2)) <= res.fun + 1e-10
    # Fenchel-Young: g(w) + g*(u) >= <w, u>, with equality at u ∈ ∂g(w)
    w = rng.normal(size=20)
    l1, l2 = 0.3, 0.7
    u = l1 * np.sign(w) + l2 * w
    assert penalty_value(w, l1, l2) + penalty_conjugate(u, l1, l2) == pytest.approx(w @ u)
    assert penalty_conjugate(np.array([0.2, -0.29]), 0.3, 0.0) == 0.0
    assert penalty_conjugate(np.array([0.31]), 0.3, 0.0) == math.inf


@pytest.mark.parametrize("loss", list(LOSS_CODES))
@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_fenchel_young_gap_matches_its_definition(loss, y):
    from cdlearn.losses import fenchel_young_gap

    c = LOSS_CODES[loss]
    rng = np.random.default_rng(3)
    for _ in range(200):
        z = rng.normal(scale=3)
        a = rng.normal() if loss == "squared" else y * rng.uniform(0, 1 if loss != "squared_hinge" else 3)
        direct = loss_value(c, z, y) + conjugate_at_neg(c, a, y) + a * z
        got = fenchel_young_gap(c, z, a, y)
        assert got >= 0.0
        assert got == pytest.approx(direct, abs=1e-12)
    # at a = -φ'(z) the gap vanishes (Fenchel-Young equality)
    for z in MARGINS:
        if loss != "hinge":
            assert fenchel_young_gap(c, z, -loss_derivative(c, z, y), y) <= 1e-15
