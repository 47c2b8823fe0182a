"""RCDC huge-scale Lasso tables (rcdc-table5 … rcdc-table8) at reduced size, and the
Algorithm 4 driver they share (residual form, cancellation-free residual)."""

import csv
import math

import numpy as np
import pytest

from cdlearn.experiments import get_experiment, run_experiment
from cdlearn.experiments.rcdc_tables import (
    Algorithm4,
    linear_part,
    make_instance,
    run_decades,
)


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def small():
    # tall (m > n) as Table 6, 20 nonzeros per column
    return make_instance(4000, 1000, 20_000, 50, seed=1)


def test_algorithm4_reaches_1e12_and_support(small):
    alg = Algorithm4(small, q=0.0, seed=0)
    run = run_decades(alg, target_decade=14, check_every=0.5, max_epochs=300)
    assert run.stopped == "reached 1e-14"
    assert alg.exact_residual() / small.f0 <= 1e-12
    assert run.final_exact <= 1e-12
    assert run.final_support_ok
    assert np.array_equal(alg.x != 0, small.x_star != 0)
    assert alg.nnz == small.support.size == 50
    # the maintained residual g equals A x − b, so both residual forms agree
    assert alg.residual() == pytest.approx(alg.exact_residual(), rel=1e-6, abs=1e-20 * small.f0)
    # rows are monotone: one per decade, k/n and seconds non-decreasing, residual below it
    decades = [r[0] for r in run.rows]
    assert decades == list(range(15))
    kn = [r[1] for r in run.rows]
    sec = [r[4] for r in run.rows]
    assert kn == sorted(kn) and sec == sorted(sec)
    for d, _, rel, _, _, _ in run.rows[1:]:
        assert rel <= 10.0 ** (-d)
    # the iterate is x* to high accuracy (strongly convex: m > n)
    assert np.max(np.abs(alg.x - small.x_star)) < 1e-5


def test_residual_formula_is_cancellation_free(small):
    """The support terms (λs − c)(x − x*) remove the ~1e-16·λ‖x*‖₁ floor of λ|x| − c x."""
    x = small.x_star.copy()
    assert linear_part(x, small) == 0.0
    h = 1e-12
    x[small.support[0]] += h
    c, lam = small.c, small.lam
    naive = float(np.sum(lam * np.abs(x) - c * x))
    exact = linear_part(x, small)
    j = small.support[0]
    assert exact == pytest.approx((lam * np.sign(small.x_star[j]) - c[j]) * h, abs=1e-27)
    assert abs(exact) < 1e-24
    assert abs(naive - exact) > 10 * abs(exact)  # the naive form only sees rounding here
    # F(x0) − F* equals ½‖A x*‖²
    ax = small.A @ small.x_star
    assert small.f0 == pytest.approx(0.5 * float(ax @ ax), rel=1e-12)


def test_shrinking_matches_ucdc_optimum(small):
    alg = Algorithm4(small, q=0.9, k0_epochs=2.0, seed=3)
    run = run_decades(alg, target_decade=13, check_every=0.5, max_epochs=300)
    assert run.stopped == "reached 1e-13"
    assert run.final_support_ok


def test_bad_arguments(small):
    with pytest.raises(ValueError, match="q"):
        Algorithm4(small, q=1.5)
    with pytest.raises(ValueError, match="k0_epochs"):
        Algorithm4(small, k0_epochs=-1.0)
    with pytest.raises(ValueError, match="nnz"):
        make_instance(100, 10, 55, 2)


def test_registered():
    for exp_id in ("rcdc-table5", "rcdc-table6", "rcdc-table7", "rcdc-table8"):
        assert get_experiment(exp_id).id == exp_id


def test_table5_quick(tmp_path):
    out = run_experiment("rcdc-table5", tmp_path, full=False)
    rows = read_csv(out / "table5.csv")
    assert len(rows) == 6  # 3 supports × 2 densities, no extrapolated rows at quick size
    for r in rows:
        assert r["status"] == "run"
        sec = float(r["seconds_per_n_iterations"])
        assert 0.0 < sec < 10.0
        assert float(r["relative_residual_after_10n"]) < 1e-2  # 10 passes made progress
    assert {int(r["nnz_A"]) for r in rows} == {100_000, 1_000_000}
    assert (out / "table5.png").stat().st_size > 0
    assert "huge, not run" in (out / "note.md").read_text()


def test_table6_quick(tmp_path):
    out = run_experiment("rcdc-table6", tmp_path, full=False)
    rows = read_csv(out / "table6.csv")
    for method in ("UCDC", "0.9-shrinking"):
        mine = [r for r in rows if r["method"] == method]
        assert [r["decade"] for r in mine] == [f"1e-{d}" for d in range(19)]
        kn = [float(r["k_over_n"]) for r in mine]
        sec = [float(r["seconds"]) for r in mine]
        assert kn == sorted(kn) and sec == sorted(sec)
        for d, r in enumerate(mine):
            assert float(r["relative_residual"]) <= 10.0 ** (-d) * (1 + 1e-12)
        assert int(mine[-1]["nnz_x"]) == 1600  # support identified
        assert kn[-1] < 100
    note = (out / "note.md").read_text()
    assert "reached 1e-18" in note and "equals supp(x*)" in note
    assert (out / "table6.png").stat().st_size > 0


def test_table7_quick(tmp_path):
    out = run_experiment("rcdc-table7", tmp_path, full=False)
    rows = read_csv(out / "table7.csv")
    assert [int(r["nnz_A"]) for r in rows] == [40_000, 400_000]
    for r in rows:
        assert int(r["decades_reached"]) == 3  # residual 1e-3, as Table 7
        assert float(r["cpu_seconds_per_pass"]) > 0
        assert float(r["seconds"]) > 0
        assert int(r["m"]) == 10 * int(r["n"])
    dec = read_csv(out / "table7_rows.csv")
    assert [r["decade"] for r in dec if r["n"] == "20000"] == ["1e-0", "1e-1", "1e-2", "1e-3"]
    note = (out / "note.md").read_text()
    assert "2·10¹⁰" in note and "per pass" in note


def test_table8_quick(tmp_path):
    out = run_experiment("rcdc-table8", tmp_path, full=False)
    rows = read_csv(out / "table8.csv")
    for method in ("UCDC", "0.9-shrinking"):
        mine = [r for r in rows if r["method"] == method]
        assert len(mine) >= 13  # at least 12 decades within the budget
        rel = [float(r["relative_residual"]) for r in mine]
        assert all(b <= a for a, b in zip(rel, rel[1:], strict=False))
        assert rel[-1] <= 1e-12
        absolute = [float(r["absolute_residual"]) for r in mine]
        assert absolute[0] > 1.0
        assert math.isclose(absolute[0] / rel[0], absolute[-1] / rel[-1], rel_tol=1e-3)
    note = (out / "note.md").read_text()
    assert "shrinking switched on" in note


@pytest.mark.slow
def test_table6_full(tmp_path):
    """The paper's instance (m = 2·10⁷, n = 10⁶, ‖A‖₀ = 5·10⁷): ~1.5 GB, several minutes."""
    out = run_experiment("rcdc-table6", tmp_path, full=True)
    rows = [r for r in read_csv(out / "table6.csv") if r["method"] == "UCDC"]
    assert rows[-1]["decade"] == "1e-18"
    assert int(rows[-1]["nnz_x"]) == 160_000
