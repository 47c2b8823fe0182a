"""Face-off quantities (Csiba & Richtárik): eqs. (14)-(16), Theorems 2-5, Lemmas 9-10.

The paper's X is d x n (features x examples); ours is (n_samples, n_features).
"""

import functools
import math
import os
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cdlearn.datasets.faceoff_matrices import (
    make_binary_worst_case,
    make_dense_iid,
    make_theorem3_matrix,
)
from cdlearn.faceoff import (
    L,
    R,
    U,
    analyze,
    complexity_constants,
    importance_probabilities,
    iteration_complexity,
    iteration_cost,
    max_dual_complexity_matrix,
    max_primal_complexity_matrix,
    min_dual_complexity_matrix,
    min_primal_complexity_matrix,
    rounded_down,
    total_complexity,
    uniform_probabilities,
)

SMALL_SHAPES = [(d, n) for d in range(1, 5) for n in range(1, 5)]  # d*n <= 16


@functools.cache
def all_binary_matrices(d, n):
    """Counts of every n x d (our orientation) 0/1 matrix with no zero row/column.

    Returns ``(alpha, C_P, C_D)`` integer arrays (for binary X, C = Σ ||·||_0²).
    """
    k = n * d
    codes = np.arange(2**k, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(k)) & 1).reshape(-1, n, d)
    sample_nnz = bits.sum(axis=2)  # paper's column counts ω_j
    feature_nnz = bits.sum(axis=1)  # paper's row counts
    keep = (sample_nnz > 0).all(axis=1) & (feature_nnz > 0).all(axis=1)
    sample_nnz, feature_nnz = sample_nnz[keep], feature_nnz[keep]
    return sample_nnz.sum(axis=1), (feature_nnz**2).sum(axis=1), (sample_nnz**2).sum(axis=1)


def binary_constants(X):
    """(alpha, C_P, C_D) as exact ints for a 0/±1 matrix, from its pattern only."""
    X = sp.csr_matrix(X)
    assert set(np.abs(X.data)) <= {1.0}
    feat, samp = X.getnnz(axis=0), X.getnnz(axis=1)
    return int(X.nnz), int((feat**2).sum()), int((samp**2).sum())


def random_binary_matrix(rng, n, d, density):
    """n x d 0/1 matrix with no zero rows/columns (one forced entry per empty line)."""
    A = (rng.random((n, d)) < density).astype(float)
    for i in np.flatnonzero(A.sum(axis=1) == 0):
        A[i, rng.integers(d)] = 1.0
    for j in np.flatnonzero(A.sum(axis=0) == 0):
        A[rng.integers(n), j] = 1.0
    return A


# =========================================================================== Lemma 9
def test_L_U_R_small_values():
    assert rounded_down(7, 3) == 6 and rounded_down(6, 3) == 6 and rounded_down(2, 3) == 0
    # L(α, n): α = 7 over n = 3 examples -> counts (3, 2, 2): 9 + 4 + 4
    assert L(7, 3) == 17 and isinstance(L(7, 3), int)
    # U(α, d, n): d = 3, n = 3, α = 7 -> (3, 3, 1): 9 + 9 + 1
    assert U(7, 3, 3) == 19 and isinstance(U(7, 3, 3), int)
    assert U(5, 1, 5) == 5  # d = 1: only the all-ones column
    assert R(7, 3, 3) == Fraction(19, 17)
    for bad in [(2, 3, 3), (10, 3, 3)]:  # alpha outside [max(d, n), dn]
        with pytest.raises(ValueError, match="alpha"):
            U(*bad)
    with pytest.raises(ValueError):
        L(2, 3)
    with pytest.raises(TypeError):
        L(7.5, 3)


@pytest.mark.parametrize("d, n", SMALL_SHAPES)
def test_lemma9_extremes_match_brute_force(d, n):
    """min/max of C_D and C_P over all binary X with ||X||_0 = α are L and U (19)-(22)."""
    alpha, c_p, c_d = all_binary_matrices(d, n)
    assert sorted(set(alpha.tolist())) == list(range(max(d, n), d * n + 1))
    for a in range(max(d, n), d * n + 1):
        m = alpha == a
        assert c_d[m].min() == L(a, n)  # (19)
        assert c_p[m].min() == L(a, d)  # (20)
        assert c_d[m].max() == U(a, d, n)  # (21)
        assert c_p[m].max() == U(a, n, d)  # (22)


@pytest.mark.parametrize("d, n", SMALL_SHAPES)
def test_theorem4_bounds_hold_and_are_tight_brute_force(d, n):
    """1/R(α,n,d) <= C_P/C_D <= R(α,d,n) on every matrix, with equality attained."""
    alpha, c_p, c_d = all_binary_matrices(d, n)
    for a in range(max(d, n), d * n + 1):
        m = alpha == a
        upper, lower = R(a, d, n), 1 / R(a, n, d)
        # exact integer cross-multiplication: C_P * den <= num * C_D
        assert np.all(c_p[m] * upper.denominator <= upper.numerator * c_d[m])
        assert np.all(c_p[m] * lower.denominator >= lower.numerator * c_d[m])
        assert np.any(c_p[m] * upper.denominator == upper.numerator * c_d[m])
        assert np.any(c_p[m] * lower.denominator == lower.numerator * c_d[m])


def test_printed_definition_of_R_contradicts_theorem4():
    """§6.2 prints R(α,d,n) = U(α,d,n)/L(α,n); a dense d < n matrix breaks it.

    Dense 2 x 10 (paper orientation): C_P/C_D = n/d = 5, but U(20,2,10)/L(20,10) = 1.
    Our R (= U(α,n,d)/L(α,n)) gives exactly 5.
    """
    d, n = 2, 10
    a, c_p, c_d = binary_constants(np.ones((n, d)))
    assert Fraction(c_p, c_d) == 5
    assert Fraction(U(a, d, n), L(a, n)) == 1
    assert R(a, d, n) == 5


@pytest.mark.parametrize("d, n", [(d, n) for d in range(1, 8) for n in range(1, 8)])
def test_lemma9_constructions_attain_extremes(d, n):
    for a in range(max(d, n), d * n + 1):
        built = {
            "min_dual": min_dual_complexity_matrix(d, n, a),
            "max_dual": max_dual_complexity_matrix(d, n, a),
            "min_primal": min_primal_complexity_matrix(d, n, a),
            "max_primal": max_primal_complexity_matrix(d, n, a),
        }
        for X in built.values():
            assert sp.isspmatrix_csr(X) and X.shape == (n, d)
            assert set(X.data) == {1.0}
            assert X.getnnz(axis=0).min() >= 1 and X.getnnz(axis=1).min() >= 1
        constants = {k: binary_constants(X) for k, X in built.items()}
        assert all(c[0] == a for c in constants.values())
        # min constructions are balanced both ways: min C_D and min C_P at once
        assert constants["min_dual"][1:] == (L(a, d), L(a, n))
        assert constants["min_primal"][1:] == (L(a, d), L(a, n))
        # max_dual: max C_D with min C_P -> Theorem 4's lower bound 1/R(α,n,d)
        assert constants["max_dual"][1:] == (L(a, d), U(a, d, n))
        assert Fraction(*constants["max_dual"][1:]) == 1 / R(a, n, d)
        # max_primal: max C_P with min C_D -> Theorem 4's upper bound R(α,d,n)
        assert constants["max_primal"][1:] == (U(a, n, d), L(a, n))
        assert Fraction(*constants["max_primal"][1:]) == R(a, d, n)


# =========================================================================== Lemma 10, Theorem 5
def test_lemma10_R_at_most_one_on_grid():
    checked = 0
    for n in range(1, 9):
        for d in range(n, 45):
            for a in range(max(n * n + 3 * n, d), d * n + 1):
                assert R(a, d, n) <= 1  # the second part is the same with d, n renamed
                checked += 1
    assert checked > 5000
    # below α = n² + 3n the bound can exceed 1 (square binary 3 x 3, α = 5)
    assert R(5, 3, 3) == Fraction(11, 9)


def test_theorem5_and_corollary6_on_random_and_extremal_binary_matrices():
    rng = np.random.default_rng(0)
    for n in range(1, 5):
        d = n * n + 3 * n  # Corollary 6: every X in B^{d x n} has C_P <= C_D
        for density in (0.05, 0.3, 0.7, 1.0):
            X = random_binary_matrix(rng, n, d, density)
            _, c_p, c_d = binary_constants(X)
            assert c_p <= c_d
            # and symmetrically n >= d^2 + 3d  =>  C_D <= C_P
            _, c_p_t, c_d_t = binary_constants(X.T)
            assert c_d_t <= c_p_t
        for a in range(d, d * n + 1):  # even the worst case for primal (max C_P, min C_D)
            _, c_p, c_d = binary_constants(max_primal_complexity_matrix(d, n, a))
            assert c_p <= c_d
    # Theorem 5: d >= n and ||X||_0 >= n² + 3n (d below the corollary's threshold)
    for n, d in [(3, 5), (4, 6), (5, 9)]:
        for _ in range(20):
            X = random_binary_matrix(rng, n, d, rng.uniform(0.5, 1.0))
            a, c_p, c_d = binary_constants(X)
            if a >= n * n + 3 * n:
                assert c_p <= c_d
        for a in range(n * n + 3 * n, d * n + 1):
            _, c_p, c_d = binary_constants(max_primal_complexity_matrix(d, n, a))
            assert c_p <= c_d


# =========================================================================== Theorem 3
@st.composite
def sparse_no_zero_lines(draw):
    n = draw(st.integers(1, 9))
    d = draw(st.integers(1, 9))
    density = draw(st.floats(0.05, 1.0))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    pattern = random_binary_matrix(rng, n, d, density)
    values = rng.standard_normal((n, d)) * np.exp(rng.uniform(-3, 3, (n, d)))
    values[values == 0] = 1.0
    return sp.csr_matrix(pattern * values)


@settings(max_examples=60, deadline=None)
@given(sparse_no_zero_lines())
def test_theorem3_bounds(X):
    n, d = X.shape
    c_p, c_d = complexity_constants(X)
    frob = float(X.multiply(X).sum())
    tol = 1e-12 * n * d * frob
    assert frob - tol <= c_p <= n * frob + tol
    assert frob - tol <= c_d <= d * frob + tol
    assert 1 / d - 1e-12 <= c_p / c_d <= n + 1e-12


@pytest.mark.parametrize("n, d", [(5, 7), (30, 4), (2, 2), (1, 6), (6, 1)])
def test_theorem3_matrix_formulas_and_tightness(n, d):
    a, b, c = 1.7, -0.3, 0.9
    X = make_theorem3_matrix(a, b, c, n_samples=n, n_features=d)
    assert X.shape == (n, d) and X.nnz == n + d - 1
    assert X.getnnz(axis=0).min() >= 1 and X.getnnz(axis=1).min() >= 1
    assert X[0, 0] == c and (d < 2 or X[0, 1] == a) and (n < 2 or X[1, 0] == b)
    c_p, c_d = complexity_constants(X)
    assert c_p == pytest.approx((d - 1) * a**2 + n * (n - 1) * b**2 + n * c**2, rel=1e-14)
    assert c_d == pytest.approx(d * (d - 1) * a**2 + (n - 1) * b**2 + d * c**2, rel=1e-14)

    if min(n, d) < 2:
        return  # the limits below need both a and b entries to exist
    eps = 1e-7
    # b, c -> 0: C_P/C_D -> 1/d (C_P -> ||X||_F^2, C_D -> d ||X||_F^2): primal d times better
    X = make_theorem3_matrix(1.0, eps, eps, n, d)
    c_p, c_d = complexity_constants(X)
    frob = float(X.multiply(X).sum())
    assert c_p / c_d == pytest.approx(1 / d, rel=1e-9)
    assert c_d == pytest.approx(d * frob, rel=1e-9)
    # a, c -> 0: C_P/C_D -> n
    c_p, c_d = complexity_constants(make_theorem3_matrix(eps, 1.0, eps, n, d))
    assert c_p / c_d == pytest.approx(n, rel=1e-9)


def test_theorem3_matrix_with_c_zero_has_no_zero_lines():
    X = make_theorem3_matrix(2.0, 1.0, 0.0, 4, 3)
    assert X.nnz == 5 and X.getnnz(axis=0).min() == 1 and X.getnnz(axis=1).min() == 1


# =========================================================================== §6.1 dense
def test_dense_deterministic_constants():
    rng = np.random.default_rng(1)
    X = rng.uniform(0.5, 2.0, size=(6, 11)) * rng.choice([-1, 1], size=(6, 11))
    frob = float((X**2).sum())
    c_p, c_d = complexity_constants(X)
    assert c_p == pytest.approx(6 * frob, rel=1e-13)
    assert c_d == pytest.approx(11 * frob, rel=1e-13)


def test_make_dense_iid():
    X = make_dense_iid(40, 60, mean=0.5, std=2.0, seed=3)
    assert X.shape == (40, 60) and np.all(X != 0)
    assert np.array_equal(X, make_dense_iid(40, 60, mean=0.5, std=2.0, seed=3))
    assert X.mean() == pytest.approx(0.5, abs=0.1) and X.std() == pytest.approx(2.0, rel=0.05)
    c_p, c_d = complexity_constants(X)
    n, d, second_moment = 40, 60, 2.0**2 + 0.5**2
    assert c_p == pytest.approx(d * n * n * second_moment, rel=0.05)
    assert c_d == pytest.approx(d * d * n * second_moment, rel=0.05)


@pytest.mark.parametrize("loss", ["logistic", "squared", "squared_hinge", "smooth_hinge"])
def test_dense_random_winner_follows_shape(loss):
    """Leukemia-like d >> n: primal; n >> d: dual (§6.1)."""
    wide = analyze(make_dense_iid(20, 2000, seed=0), loss=loss)
    tall = analyze(make_dense_iid(2000, 20, seed=0), loss=loss)
    assert wide.winner == "primal" and wide.ratio < 1
    assert tall.winner == "dual" and tall.ratio > 1
    for res in (wide, tall, analyze(make_dense_iid(20, 2000, seed=0), loss=loss, normalize=True)):
        assert res.C_P / res.C_D == pytest.approx(res.n / res.d, rel=1e-12)


# =========================================================================== §7.2 worst case
@pytest.mark.parametrize(
    "d, n, alpha", [(100, 50, 100), (100, 50, 1234), (100, 50, 5000), (100, 300, 3000), (7, 3, 15)]
)
def test_make_binary_worst_case(d, n, alpha):
    X = make_binary_worst_case(d, n, alpha, value=0.25, seed=0)
    assert X.shape == (n, d) and X.nnz == alpha
    assert set(np.unique(X.data)) <= {-0.25, 0.25}
    if alpha >= 20:
        assert set(np.unique(X.data)) == {-0.25, 0.25}
    assert X.getnnz(axis=0).min() >= 1 and X.getnnz(axis=1).min() >= 1
    c_p, c_d = complexity_constants(X)
    assert c_d == pytest.approx(0.25**2 * U(alpha, d, n), rel=1e-13)  # max C_D (21)
    assert c_p == pytest.approx(0.25**2 * L(alpha, d), rel=1e-13)  # min C_P (20)
    assert c_p / c_d == pytest.approx(float(1 / R(alpha, n, d)), rel=1e-13)
    Y = make_binary_worst_case(d, n, alpha, value=0.25, seed=0)
    assert (X != Y).nnz == 0


# =========================================================================== sampling, T, K
def test_importance_probabilities_eq14():
    u = np.array([0.0, 1.0, 3.0, 0.0])
    p = importance_probabilities(u, beta=0.25, lam=0.5, n=4)
    weights = 0.25 * u + 0.5 * 4  # zero-norm coordinates keep weight λn
    np.testing.assert_allclose(p, weights / weights.sum(), rtol=1e-15)
    assert p.sum() == pytest.approx(1.0) and p[0] > 0
    with pytest.raises(ValueError, match="lam"):
        importance_probabilities(u, beta=1.0, lam=0.0, n=4)


def random_matrix_with_empty_lines(seed):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(2, 30, size=2)
    X = sp.random(n, d, density=rng.uniform(0.05, 0.8), random_state=rng, format="csr")
    X.data = rng.standard_normal(X.nnz) * np.exp(rng.uniform(-2, 2, X.nnz))
    return X


@pytest.mark.parametrize("seed", range(15))
def test_closed_forms_match_general_formulas_and_importance_is_optimal(seed):
    """§5.1 and eq. (15) from (8)-(13); importance <= uniform (both); Theorem 2."""
    X = random_matrix_with_empty_lines(seed)
    rng = np.random.default_rng(seed)
    loss = ["logistic", "squared", "squared_hinge", "smooth_hinge"][seed % 4]
    lam = float(10 ** rng.uniform(-4, 0))
    res = analyze(X, loss=loss, lam=lam)
    n, d = X.shape
    u = np.asarray(X.multiply(X).sum(axis=0)).ravel()
    v = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    feat_nnz, samp_nnz = X.getnnz(axis=0), X.getnnz(axis=1)
    args_p, args_d = (u, feat_nnz, res.beta, lam, n), (v, samp_nnz, res.beta, lam, n)
    for sampling in ("uniform", "importance"):
        assert total_complexity(*args_p, sampling=sampling) == pytest.approx(
            getattr(res, f"T_P_{sampling}"), rel=1e-10
        )
        assert total_complexity(*args_d, sampling=sampling) == pytest.approx(
            getattr(res, f"T_D_{sampling}"), rel=1e-10
        )
        assert iteration_complexity(u, res.beta, lam, n, sampling) == pytest.approx(
            getattr(res, f"K_P_{sampling}"), rel=1e-10
        )
        assert iteration_complexity(v, res.beta, lam, n, sampling) == pytest.approx(
            getattr(res, f"K_D_{sampling}"), rel=1e-10
        )
    assert res.T_P_importance <= res.T_P_uniform * (1 + 1e-12)
    assert res.T_D_importance <= res.T_D_uniform * (1 + 1e-12)
    assert res.K_P_importance <= res.K_P_uniform * (1 + 1e-12)
    assert res.K_D_importance <= res.K_D_uniform * (1 + 1e-12)
    assert iteration_cost(feat_nnz, uniform_probabilities(d)) == pytest.approx(X.nnz / d)
    # Theorem 2: no serial sampling beats importance sampling in total complexity
    for _ in range(20):
        p = rng.dirichlet(np.ones(d)) + 1e-12
        p /= p.sum()
        assert total_complexity(*args_p, sampling=p) >= res.T_P_importance * (1 - 1e-10)
    assert res.ratio == pytest.approx(res.T_P / res.T_D)
    assert res.winner == ("primal" if res.ratio <= 1 else "dual")


def test_zero_rows_and_columns_are_legal():
    X = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0], [0.0, 0.0, -1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = analyze(X, normalize=True)
        zero = analyze(np.zeros((3, 2)), normalize=True)
    values = [
        getattr(res, f) for f in res.__dataclass_fields__ if isinstance(getattr(res, f), float)
    ]
    assert all(math.isfinite(x) for x in values)
    assert (res.C_P, res.C_D) == pytest.approx(
        ((1 + 2 * 5) / res.scale**2, (2 * 5 + 1) / res.scale**2)
    )
    assert zero.C_P == zero.C_D == zero.T_P == zero.T_D == 0 and zero.scale == 1.0
    assert zero.ratio == 1.0 and zero.winner == "primal"


def test_normalize_divides_by_average_example_norm():
    rng = np.random.default_rng(5)
    X = sp.random(30, 12, density=0.3, random_state=rng, format="csr")
    res = analyze(X, normalize=True)
    s = np.mean(np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()))
    assert res.scale == pytest.approx(s, rel=1e-14)
    ref = analyze(X / s)
    for field in res.__dataclass_fields__:
        if field == "winner":
            assert res.winner == ref.winner
        elif field not in ("scale", "loss"):
            assert getattr(res, field) == pytest.approx(getattr(ref, field), rel=1e-12)
    assert analyze(X).C_P == pytest.approx(res.C_P * s**2, rel=1e-12)


def test_analyze_fields_table_and_errors():
    X = make_dense_iid(10, 30, seed=0)
    res = analyze(X, loss="squared", lam=0.01)
    assert (res.n, res.d, res.nnz, res.density, res.beta, res.lam) == (10, 30, 300, 1.0, 1.0, 0.01)
    assert analyze(X).lam == pytest.approx(1 / 10)
    assert res.K_P_importance == pytest.approx(30 + float((X**2).sum()) / (0.01 * 10))
    text = str(res)
    assert text == res.table()
    for token in [
        "C (eq. 16)",
        "T importance (15)",
        "T uniform",
        "K uniform",
        "winner: primal",
        f"{res.C_P:.4g}",
        f"{res.T_D_uniform:.4g}",
        "n=10",
        "d=30",
    ]:
        assert token in text
    lines = text.splitlines()
    assert len({len(line) for line in lines[2:9]}) == 1  # aligned table body
    with pytest.raises(dataclasses_frozen_error()):
        res.C_P = 0.0
    with pytest.raises(ValueError, match="loss"):
        analyze(X, loss="hinge")
    with pytest.raises(ValueError, match="lam"):
        analyze(X, lam=-1.0)
    with pytest.raises(ValueError):
        analyze(np.array([[np.nan, 1.0]]))


def dataclasses_frozen_error():
    import dataclasses

    return dataclasses.FrozenInstanceError


# =========================================================================== Table 1: leukemia
LEU = Path(os.environ.get("CDLEARN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def test_leukemia_table1():
    path = LEU / "leu.bz2"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    from sklearn.datasets import load_svmlight_file

    X, _ = load_svmlight_file(str(path))
    raw = analyze(X)
    assert (raw.d, raw.n, raw.nnz, raw.density) == (7129, 38, 270902, 1.0)
    # Table 1 prints C_P = 1e7, C_D = 2e9: matched by the *un-normalised* data
    # (we get 1.04e7 and 1.96e9); normalize=True divides both by s² = 82.17².
    assert f"{raw.C_P:.0e}" == "1e+07" and f"{raw.C_D:.0e}" == "2e+09"
    assert raw.C_P / raw.C_D == pytest.approx(38 / 7129, rel=1e-10)  # dense: n/d
    norm = analyze(X, normalize=True)
    assert norm.scale == pytest.approx(82.168, rel=1e-4)
    assert norm.C_P == pytest.approx(raw.C_P / norm.scale**2, rel=1e-12)
    assert f"{norm.C_P:.1e}" == "1.5e+03" and f"{norm.C_D:.1e}" == "2.9e+05"
    # Table 1's T_P/T_D = 0.5 is matched by the normalised data with β/(λn) = 1
    # (β = 1, λ = 1/n); logistic β = 1/4 gives 0.79.
    assert analyze(X, loss="squared", normalize=True).ratio == pytest.approx(0.49, abs=0.01)
    assert norm.ratio == pytest.approx(0.79, abs=0.01)
    assert raw.winner == norm.winner == "primal"


def test_auto_prices_eq15_in_seconds():
    """auto compares eq. (15)'s entries and eqs. (8)-(9)'s steps priced by STEP_COSTS."""
    from cdlearn.api import auto_solver, make_problem
    from cdlearn.faceoff import STEP_COSTS, predicted_seconds

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 60))  # square dense: T_P ≈ T_D in entries
    y = np.where(rng.standard_normal(60) > 0, 1.0, -1.0)
    for loss in ("logistic", "squared"):
        a = analyze(X, loss=loss, lam=1e-2)
        c_p, o_p = STEP_COSTS[("primal", loss)]
        assert a.seconds_P == pytest.approx(
            1e-9 * (c_p * a.T_P_importance + o_p * a.K_P_importance), rel=1e-12)
        assert a.seconds_D == pytest.approx(
            predicted_seconds("dual", loss, a.T_D_importance, a.K_D_importance), rel=1e-12)
        assert a.time_ratio == pytest.approx(a.seconds_P / a.seconds_D, rel=1e-12)
        assert 0.7 < a.ratio < 1.4
        # cd_options: the face-off choice itself (without them, κ = 15-25 here
        # sends auto to newton-cg, api.dual_condition)
        choice, reason = auto_solver(make_problem(X, y, loss=loss, penalty="l2", lam=1e-2),
                                     cd_options=True)
        assert choice == ("primal-cd" if a.time_ratio <= 1 else "dual-cd")
        assert f"{a.time_ratio:.3g}" in reason
    # every (method, loss) pair auto can meet has a positive price
    for method in ("primal", "dual"):
        for loss in ("logistic", "squared_hinge", "smooth_hinge", "squared"):
            c, o = STEP_COSTS[(method, loss)]
            assert c > 0 and o >= 0
