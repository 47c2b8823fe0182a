"""Face-off reproductions (Figures 1-3, Table 1): run the small versions, check their numbers.

The small versions run in CI through ``cdlearn.experiments.run_experiment``; the
full ones are ``@pytest.mark.slow``. Assertions read the CSV files the
experiments write and state what we measure (see each ``note.md`` for where it
agrees or disagrees with the paper).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from cdlearn.datasets.faceoff_matrices import make_binary_worst_case
from cdlearn.experiments import experiment_status, run_experiment
from cdlearn.experiments import faceoff as fo
from cdlearn.faceoff import R, analyze, complexity_constants

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def num(value: str) -> float:
    return float(value) if value not in ("", None) else math.nan


def check_outputs(folder: Path, csv_names, png_names):
    for name in (*csv_names, *png_names, "note.md"):
        assert (folder / name).is_file(), f"{name} missing in {folder}"
    for name in png_names:
        data = (folder / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    note = (folder / "note.md").read_text(encoding="utf-8")
    assert note.startswith("# Face-off") and "paper" in note
    return note


def first_crossing(rows, method, threshold, column="rel_subopt"):
    rows = [r for r in rows if r["method"] == method]
    passes = [num(r["passes"]) for r in rows]
    values = [num(r[column]) for r in rows]
    return fo.passes_to_reach(passes, values, threshold)


@pytest.fixture(scope="module")
def with_data(data_dir):
    """Point the dataset loader at the shared data for the whole module."""
    mp = pytest.MonkeyPatch()
    mp.setenv("CDLEARN_DATA", str(data_dir))
    yield data_dir
    mp.undo()


# ----------------------------------------------------------------------------- helpers
def test_registered():
    for exp_id in ("faceoff-fig1", "faceoff-fig2", "faceoff-fig3", "faceoff-table1"):
        status, title, _ = experiment_status(exp_id)
        assert status == "available", title


def test_passes_to_reach_interpolates_in_log():
    passes = [0.0, 1.0, 2.0, 3.0]
    values = [1.0, 1e-2, 1e-4, 1e-6]
    assert fo.passes_to_reach(passes, values, 1e-2) == pytest.approx(1.0)
    assert fo.passes_to_reach(passes, values, 1e-3) == pytest.approx(1.5)
    assert fo.passes_to_reach(passes, values, 2.0) == 0.0
    assert math.isnan(fo.passes_to_reach(passes, values, 1e-9))


def test_normalize_is_analyze_normalisation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 8)) * np.arange(1, 9)
    Xn, scale = fo.normalize(X)
    assert scale == pytest.approx(np.mean(np.linalg.norm(X, axis=1)))
    assert np.mean(np.linalg.norm(Xn.toarray(), axis=1)) == pytest.approx(1.0)
    a, b = analyze(X, normalize=True), analyze(Xn)
    assert a.C_P == pytest.approx(b.C_P) and a.C_D == pytest.approx(b.C_D)


def test_theorem3_values_approach_the_1_over_d_bound():
    from cdlearn.datasets.faceoff_matrices import make_theorem3_matrix

    for n, d in ((300, 300), (10_000, 100)):
        X = make_theorem3_matrix(*fo.theorem3_values(n, d), n, d)
        c_p, c_d = complexity_constants(X)
        assert c_p / c_d == pytest.approx(1.01 / d, rel=0.02)


def test_R_vectorized_matches_exact_R():
    for d, n in ((7, 3), (3, 7), (40, 40), (1000, 1000), (100, 10_000)):
        alphas = np.unique(np.linspace(max(d, n), d * n, 300).astype(np.int64))
        exact = np.array([float(R(int(a), d, n)) for a in alphas])
        np.testing.assert_allclose(fo.R_vectorized(alphas, d, n), exact, rtol=1e-15)


def test_column_max_threshold_small_n():
    # from d* on, R <= 1 for every alpha; at d* - 1 some alpha has R > 1
    n = 10
    d_star = fo._threshold_d(n)
    assert n < d_star <= n * n
    for d in (d_star, d_star + 3, n * n):
        assert max(R(a, d, n) for a in range(d, n * d + 1)) <= 1
    assert max(R(a, d_star - 1, n) for a in range(d_star - 1, n * (d_star - 1) + 1)) > 1


# ----------------------------------------------------------------------------- Figure 1
@pytest.fixture(scope="module")
def fig1(tmp_path_factory):
    return run_experiment("faceoff-fig1", tmp_path_factory.mktemp("fo1"))


def test_fig1_outputs_and_claims(fig1):
    note = check_outputs(fig1, ["fig1.csv", "fig1_columns.csv"], ["fig1.png"])
    assert "typo" in note and "U(α, n, d) / L(α, n)" in note
    rows = read_csv(fig1 / "fig1.csv")
    n = 1000
    d = np.array([int(r["d"]) for r in rows])
    alpha = np.array([int(r["alpha"]) for r in rows])
    r_val = np.array([num(r["R"]) for r in rows])
    printed = np.array([num(r["R_printed"]) for r in rows])
    assert len(rows) > 500
    assert np.all((n <= d) & (d <= n * n) & (np.maximum(d, n) <= alpha) & (alpha <= n * d))
    # Lemma 10: d >= n and alpha >= n^2 + 3n  =>  R <= 1
    lemma10 = alpha >= n * n + 3 * n
    assert lemma10.sum() > 100 and np.all(r_val[lemma10] <= 1.0)
    # Theorem 3: C_P/C_D lies in [1/d, n], so does its tight bound R
    assert np.all(r_val >= 1.0 / d) and np.all(r_val <= n)
    # R is > 1 somewhere (sparse, small d) and < 1 elsewhere
    assert r_val.max() > 100 and r_val.min() < 0.01
    # the formula printed in §6.2 is max C_D / min C_D: never below 1
    assert np.all(printed >= 1.0)
    # exact values at a few grid points
    for k in range(0, len(rows), max(1, len(rows) // 25)):
        assert r_val[k] == pytest.approx(float(R(int(alpha[k]), int(d[k]), n)), rel=1e-12)


def test_fig1_large_d_all_below_one(fig1):
    cols = read_csv(fig1 / "fig1_columns.csv")
    d = np.array([int(c["d"]) for c in cols])
    rmax = np.array([num(c["max_R_scanned"]) for c in cols])
    # "for large enough d, all the values R(alpha, d, n) are below 1": from d* = 250,500 on
    assert np.all(rmax[d >= 250_500] <= 1.0)
    assert np.all(rmax[d < 250_500] > 1.0)
    assert np.all(np.diff(rmax) <= 0)  # the column maximum decreases with d
    assert "250,500" in (fig1 / "note.md").read_text(encoding="utf-8")


def test_corollary6_exhaustive_small():
    checked, violations, worst = fo._corollary6_checks(max_n=4, extra_d=3)
    assert checked > 100 and violations == 0 and worst <= 1


def test_theorem4_tightness():
    ok, total = fo._tightness_checks(count=15)
    assert ok == total


# ----------------------------------------------------------------------------- Figure 2
@pytest.fixture(scope="module")
def fig2(with_data, tmp_path_factory):
    return run_experiment("faceoff-fig2", tmp_path_factory.mktemp("fo2"))


def summary_by_panel(folder, name):
    out = {}
    for r in read_csv(folder / name):
        key = (r["panel"], r["method"]) if "panel" in r else (r["n"], r["density"], r["method"])
        out[key] = r
    return out


def test_fig2_outputs(fig2):
    note = check_outputs(fig2, ["fig2_a.csv", "fig2_b.csv", "fig2_summary.csv"], ["fig2.png"])
    assert "Reduced" in note and "news20" in note


def test_fig2a_primal_much_faster_on_theorem3_square(fig2):
    # paper §7.1: "for a square dataset, we can observe a large speed-up" (primal)
    rows = read_csv(fig2 / "fig2_a.csv")
    primal = first_crossing(rows, "primal-cd", 1e-6)
    dual = first_crossing(rows, "dual-cd", 1e-6)
    assert math.isfinite(primal)
    assert not math.isfinite(dual) or primal < dual / 10
    summary = summary_by_panel(fig2, "fig2_summary.csv")
    assert num(summary[("a", "primal-cd")]["pred_TP_TD"]) < 0.01


def test_fig2b_primal_faster_but_close_to_initial_guess(fig2):
    s = summary_by_panel(fig2, "fig2_summary.csv")
    p, d = s[("b", "primal-cd")], s[("b", "dual-cd")]
    # P* is very close to P(0) ("close to an initial guess")
    assert num(p["initial_rel_subopt"]) < 1e-3
    half_p, half_d = num(p["passes_to_half_initial"]), num(d["passes_to_half_initial"])
    assert math.isfinite(half_p) and (not math.isfinite(half_d) or half_p < half_d)


def test_fig2_news_and_leukemia(fig2):
    s = summary_by_panel(fig2, "fig2_summary.csv")
    if ("c", "primal-cd") not in s or ("d", "primal-cd") not in s:
        pytest.skip("news20 / leu not available")
    # (c) news as news20.binary was built (tf-idf, unit rows), with the whole file's d/n:
    # dual predicted (paper's β = 1) and measured faster, as in the paper
    pc, dc = s[("c", "primal-cd")], s[("c", "dual-cd")]
    assert num(pc["pred_TP_TD_beta1"]) > 1
    assert num(pc["passes_to_1e-06"]) > 1.1 * num(dc["passes_to_1e-06"])
    # (d) leukemia: predicted primal (0.79 with β = 1/4, 0.49 with β = 1 = paper's 0.5);
    # run with the paper's β = 1, primal is measured faster too
    pd_, dd = s[("d", "primal-cd")], s[("d", "dual-cd")]
    assert num(pd_["pred_TP_TD"]) == pytest.approx(0.79, abs=0.01)
    assert num(pd_["pred_TP_TD_beta1"]) == pytest.approx(0.49, abs=0.01)
    assert num(pd_["passes_to_1e-06"]) < num(dd["passes_to_1e-06"]) / 1.1
    verdict = json.loads((fig2 / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["verdict"] == "agrees"
    assert verdict["ours"] == "(a) primal; (b) primal; (c) dual; (d) primal"


def test_tfidf_unit_rows_by_hand():
    X = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [1.0, 1.0, 0.0]]))
    got = fo.tfidf_unit_rows(X).toarray()
    idf = np.log(3 / np.array([2, 3, 1]))  # column 1 is in every document: idf 0
    want = X.toarray() * idf
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-14)


def test_news_quick_keeps_the_shape_ratio():
    rng = np.random.default_rng(1)
    X = sp.random(400, 1600, density=0.01, random_state=rng, format="csr")
    y = np.where(rng.random(400) < 0.5, -1.0, 1.0)
    Xq, yq, how = fo.news_quick(X, y, n_rows=100)
    assert Xq.shape[1] == 400  # round(100 · 1600/400)
    assert Xq.shape[0] == yq.size <= 100 and "400 random columns" in how
    np.testing.assert_allclose(np.sqrt(Xq.multiply(Xq).sum(axis=1)).A1, 1.0, rtol=1e-12)


# ----------------------------------------------------------------------------- Figure 3
@pytest.fixture(scope="module")
def fig3(tmp_path_factory):
    return run_experiment("faceoff-fig3", tmp_path_factory.mktemp("fo3"))


def test_fig3_outputs_and_numbers(fig3):
    check_outputs(fig3, ["fig3_summary.csv", "fig3_100_0.1.csv"], ["fig3.png"])
    s = summary_by_panel(fig3, "fig3_summary.csv")
    panels = {(n, rho) for n, rho, _ in s}
    assert panels == {(str(n), str(rho)) for n in (100, 1000) for rho in (0.01, 0.1, 1.0)}
    for (n, rho, m), r in s.items():
        # C_P/C_D of the worst case for dual RCD is 1/R(alpha, n, d) (Theorem 4)
        d = 100
        c_ratio = num(r["C_P"]) / num(r["C_D"])
        assert c_ratio == pytest.approx(
            float(1 / R(int(r["alpha"]), int(n), d)), rel=1e-9)
        # Theorem 1 (β = 1): every seed reaches 1e-6 well within its method's bound
        per_seed = [float(v) for v in r["passes_to_1e-06_per_seed"].split()]
        assert len(per_seed) == len(fo.FIG3_SEEDS)
        assert max(per_seed) < 0.8 * num(r["bound_passes_to_1e-06"]), (n, rho, m)
        assert num(r["passes_to_1e-06"]) == pytest.approx(np.median(per_seed), rel=1e-3)
        assert r["verdict"] in ("agree", "unranked"), (n, rho, m)

    def pair(n, rho):
        return s[(n, rho, "primal-cd")], s[(n, rho, "dual-cd")]

    # square n = d: C_P = C_D, predicted tie and (nearly) the same passes
    for rho in ("0.01", "1.0"):
        p, q = pair("100", rho)
        assert num(p["pred_TP_TD"]) == pytest.approx(1.0)
        assert num(p["measured_ratio"]) == pytest.approx(1, abs=0.2)
        assert p["verdict"] == "agree"
    # n = d = 100, 10%: primal predicted (eq. (15) with β = 1: 0.143) and measured faster
    p, q = pair("100", "0.1")
    assert num(p["pred_TP_TD"]) == pytest.approx(0.143, abs=0.001)
    assert num(p["measured_ratio_hi"]) < 0.5 and p["verdict"] == "agree"
    # n = 1000, 1% and 100%: C_P/C_D = 10, eq. (15) with the paper's β = 1 gives 5.5
    # (dual) and every seed has dual faster. With β = 1/4 in the runs (this experiment
    # before issue 23) primal and dual were within noise there (median ratios 0.97, 0.80)
    for rho in ("0.01", "1.0"):
        p, q = pair("1000", rho)
        assert num(p["C_P_over_C_D_theory"]) == pytest.approx(10.0)
        assert num(p["pred_TP_TD"]) == pytest.approx(5.5, abs=0.05)
        assert num(p["measured_ratio_lo"]) > 1.5 and p["verdict"] == "agree"
    # n = 1000, 10%: eq. (15) predicts a tie (1.1) and primal wins on every seed (~2.3x);
    # the primal's bound is the looser one (it counts only λ as strong convexity)
    p, q = pair("1000", "0.1")
    assert fo._label(num(p["pred_TP_TD"])) == "tie"
    assert num(p["measured_ratio_hi"]) < 0.6 and p["verdict"] == "unranked"
    assert 1.5 < num(p["muP_over_lam"]) < 2.0
    slack_p = num(p["passes_to_1e-06"]) / num(p["bound_passes_to_1e-06"])
    slack_d = num(q["passes_to_1e-06"]) / num(q["bound_passes_to_1e-06"])
    assert slack_p < 0.7 * slack_d
    note = (fig3 / "note.md").read_text(encoding="utf-8")
    assert "violated: 0" in note and "upper bounds" in note
    assert "primal RCD can outperform dual RCD even if n ≫ d" in note
    # the paper's claims for Figure 3: bounds hold everywhere, primal faster at n >= 10d
    verdict = json.loads((fig3 / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["verdict"] == "agrees"
    assert verdict["ours"] == ("6 panels: bounds hold in 6; primal faster at n ≥ 10d in 1 of 3 "
                               "(n=1,000/10% 2.3x); eq. (15)'s winner measured in 5 of 6")


@pytest.mark.parametrize("pred, primal, dual, status", [
    (5.5, [30, 31, 32], [12, 13, 14], "agree"),          # dual predicted, dual won
    (5.5, [12, 12.5, 13], [12, 13, 14], "agree"),        # measured tie
    (1.05, [10, 11, 12], [30, 31, 32], "unranked"),      # predicted tie
    (5.5, [10, 11, 12], [30, 31, 32], "slack"),          # the other one won
    (5.5, [10, 11, 120], [30, 31, 32], "violated"),      # one seed over its bound
    (5.5, [10, 11, math.nan], [30, 31, 32], None),       # stopped short of 1e-6
])
def test_fig3_verdict_statuses(pred, primal, dual, status):
    bound = {"primal-cd": 100.0, "dual-cd": 100.0}
    run = {"primal-cd": [50.0] * 3, "dual-cd": [50.0] * 3}
    phrase, got = fo._fig3_verdict(pred, {"primal-cd": primal, "dual-cd": dual}, bound, run)
    assert got == status, phrase
    # a run that went past its bound without reaching 1e-6 violates it
    run = {"primal-cd": [50.0, 50.0, 150.0], "dual-cd": [50.0] * 3}
    if status is None:
        assert fo._fig3_verdict(pred, {"primal-cd": primal, "dual-cd": dual}, bound,
                                run)[1] == "violated"


@pytest.mark.parametrize("n, rho", fo._fig3_grid(full=True))
def test_fig3_matrices_attain_theorem4_lower_bound_exactly(n, rho):
    d = 100
    alpha = fo._fig3_alpha(d, n, rho)
    X = make_binary_worst_case(d, n, alpha, value=1.0, seed=0)
    assert X.nnz == alpha
    c_p, c_d = complexity_constants(X)
    assert c_p / c_d == pytest.approx(float(1 / R(alpha, n, d)), rel=1e-12, abs=0)


def test_fig3_matrix_constants_by_hand():
    # n = d = 100, 10%: a = (1000 - 100) // 99 = 9 full samples, one with
    # b = 1000 - 100 + 1 - 891 = 10 nonzeros, 90 with one; every feature has 10
    X = make_binary_worst_case(100, 100, 1000, seed=0)
    assert complexity_constants(X) == (100 * 10**2, 9 * 100**2 + 10**2 + 90)
    # n = 10,000, 10%: a = (100,000 - 10,000) // 99 = 909 full samples, b = 10; 1,000 per feature
    X = make_binary_worst_case(100, 10_000, 100_000, seed=0)
    a = (100_000 - 10_000) // 99
    b = 100_000 - 10_000 + 1 - 99 * a
    assert (a, b) == (909, 10)
    assert complexity_constants(X) == (100 * 1000**2, a * 100**2 + b**2 + 10_000 - a - 1)


def test_fig3_predicted_ratio_by_hand():
    """Eq. (15) for the n = d = 100, 10% panel, computed from the construction alone."""
    X = make_binary_worst_case(100, 100, 1000, seed=0)
    Xn, s = fo.normalize(X)
    # sample norms: 9 of 10 (full), one of sqrt(10), 90 of 1
    s_hand = (9 * 10 + math.sqrt(10) + 90) / 100
    assert s == pytest.approx(s_hand, rel=1e-15)
    pred = fo._predicted(Xn, lam=1 / 100)
    # λn = 1: T = nnz + β C / s²
    assert pred["ratio"] == pytest.approx(
        (1000 + 0.25 * 10_000 / s_hand**2) / (1000 + 0.25 * 90_190 / s_hand**2), rel=1e-12)
    assert pred["ratio_beta1"] == pytest.approx(
        (1000 + 10_000 / s_hand**2) / (1000 + 90_190 / s_hand**2), rel=1e-12)
    assert pred["ratio"] == pytest.approx(0.2260352, abs=1e-7)


def test_fig3_verdict_falsifiable():
    bounds = {"primal-cd": 49.1, "dual-cd": 18.3}
    run = {"primal-cd": [60.0], "dual-cd": [60.0]}

    def verdict(pred, primal, dual, ran=run):
        return fo._fig3_verdict(pred, {"primal-cd": [primal], "dual-cd": [dual]}, bounds, ran)

    # measured winner differs from eq. (15)'s, both within their bounds: slack, not
    # a violation of the theory
    phrase, status = verdict(2.8, 8.69, 9.56)
    assert status == "slack" and "0.18 primal, 0.52 dual" in phrase
    assert verdict(2.8, 30.0, 9.0)[1] == "agree"
    # a method beyond its bound falsifies Theorem 1 (or our code)
    phrase, status = verdict(2.8, 50.0, 9.0)
    assert status == "violated" and "primal-cd 50 > 49.1" in phrase
    phrase, status = verdict(2.8, 8.0, math.nan)
    assert status == "violated" and "dual-cd not at 1e-6 after 60 >= 18.3" in phrase
    # stopped before both 1e-6 and the bound: nothing to decide
    short = {"primal-cd": [60.0], "dual-cd": [10.0]}
    assert verdict(2.8, 8.0, math.nan, short)[1] is None


def test_curvature_at_optimum_closed_form(monkeypatch):
    # one nonzero per sample, 3 / 5 / 7 / 9 / 6 per feature: X^T diag(h) X is diagonal;
    # labels = signs, w = c: all margins c, h = σ(c)σ(-c) constant, and X X^T (rank 5 < 30)
    # leaves the dual's curvature at 1/h
    counts = np.array([3, 5, 7, 9, 6])
    n, d, c, lam = int(counts.sum()), counts.size, 0.7, 0.05
    cols = np.repeat(np.arange(d), counts)
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = sp.csr_matrix((0.5 * signs, (np.arange(n), cols)), shape=(n, d))
    y, w = signs, np.full(d, c / 0.5)
    h = 1 / (1 + math.exp(c)) / (1 + math.exp(-c))
    mu_p = lam + h * 0.25 * 3 / n
    for limit in (10**6, 10):  # exact eigenvalue, then the Courant-Fischer bound
        monkeypatch.setattr(fo, "EXACT_DUAL_CURVATURE_MAX_N", limit)
        got_p, got_d = fo._curvature_at_optimum(X, y, w, lam)
        assert got_p == pytest.approx(mu_p / lam, rel=1e-12)
        assert got_d == pytest.approx(0.25 / h, rel=1e-10)


# ----------------------------------------------------------------------------- Table 1
class _SlowClock:
    """``time`` whose ``perf_counter`` jumps 100 s per reading: a very slow machine."""

    def __init__(self):
        import time

        self._time, self.now = time, 0.0

    def perf_counter(self):
        self.now += 100.0
        return self.now

    def __getattr__(self, name):
        return getattr(self._time, name)


@pytest.fixture(scope="module")
def table1(with_data, tmp_path_factory):
    # the small run's numbers must not depend on the machine's speed: on a slow clock
    # its 30 s per-method cap used to stop after seed 0 (leukemia's median moves)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fo, "time", _SlowClock())
        return run_experiment("faceoff-table1", tmp_path_factory.mktemp("fot1"))


def table_rows(folder):
    return {r["dataset"].split(" (")[0]: r for r in read_csv(folder / "table1.csv")}


def test_table1_small(table1):
    note = check_outputs(table1, ["table1.csv", "table1_traces.csv"], ["table1.png"])
    rows = table_rows(table1)
    assert set(rows) == {"leukemia", "news", "reuters-money-fx", "mushrooms", "a9a"}
    # every seed, however slow the clock (table1 runs on _SlowClock)
    assert {name: int(r["seeds"]) for name, r in rows.items()} == {
        "leukemia": 7, "news": 7, "reuters-money-fx": 7, "mushrooms": 3, "a9a": 3}
    for name, r in rows.items():
        assert r["conv_P"] == "True" and r["conv_D"] == "True", name
        assert r["faceoff"] in ("primal-cd", "dual-cd")
        # the face-off choice is eq. (15) priced in seconds
        assert (r["faceoff"] == "primal-cd") == (num(r["pred_time"]) <= 1)
        assert r["lib_converged"] == "True", name
        assert num(r["lib_seconds_P"]) > 0 and num(r["lib_seconds_D"]) > 0
        # solver="auto": newton-cd when the Gram matrix is cheap (few features), else the
        # face-off choice (whether it was the fastest is timing: the note says, the
        # benchmarks measure; not asserted here)
        assert r["auto"] == ("newton-cd" if num(r["d"]) <= 300 else r["faceoff"]), name
        assert num(r["lib_seconds_auto"]) > 0
    leu = rows["leukemia"]
    # the paper's Table 1 numbers for leukemia: C_P ~ 1e7, C_D ~ 2e9, T_P/T_D = 0.5
    assert num(leu["C_P"]) == pytest.approx(1e7, rel=0.1)
    assert num(leu["C_D"]) == pytest.approx(2e9, rel=0.05)
    assert num(leu["pred_beta1"]) == pytest.approx(0.5, abs=0.02)
    assert num(leu["pred"]) < 1  # predicted: primal
    # tight β = 1/4: both methods need about the same passes (~9); not the paper's 0.5
    assert 0.8 < num(leu["measured"]) < 1.5
    assert 5 < num(leu["passes_P"]) < 15 and 5 < num(leu["passes_D"]) < 15
    # the paper's β = 1: the dual's fixed step shrinks, the primal's hardly moves
    # (λ dominates its curvature), and primal is measured faster, as in the paper
    assert num(leu["measured_beta1"]) < 1 / 1.1
    assert num(leu["passes_P_beta1"]) == pytest.approx(num(leu["passes_P"]), rel=0.15)
    assert leu["conv_beta1"] == "True"
    # eq. (15)'s winner in passes is the measured one (or a tie) on every reduced row
    assert all(r["pred_ok_passes"] == "True" for r in rows.values())
    # n >> d with dense-ish columns: dual predicted and measured much faster, auto agrees
    for name in ("mushrooms", "a9a"):
        r = rows[name]
        assert num(r["pred"]) > 10 and num(r["measured"]) > 5, name
        assert r["faceoff"] == "dual-cd" and r["faceoff_ok_passes"] == "True", name
    assert num(rows["reuters-money-fx"]["pred"]) > 1
    assert num(rows["reuters-money-fx"]["measured"]) > 1
    assert "β = 1" in note and "Leukemia" in note
    # news (tf-idf unit rows, quick size with the whole file's d/n): the paper's setting
    # (β = 1) predicts and measures dual faster, as the paper's 2.0
    news = rows["news"]
    assert num(news["pred_beta1"]) > 1 and num(news["measured_beta1"]) > 1.1
    verdict = json.loads((table1 / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["verdict"] == "agrees"
    assert verdict["ours"] == (f"leu: pred. {num(leu['pred_beta1']):.2g}, measured "
                               f"{num(leu['measured_beta1']):.2g}; news: pred. "
                               f"{num(news['pred_beta1']):.2g}, measured "
                               f"{num(news['measured_beta1']):.2g}")


# ----------------------------------------------------------------------------- full sizes
@pytest.mark.slow
def test_fig1_full(tmp_path):
    out = run_experiment("faceoff-fig1", tmp_path, full=True)
    rows = read_csv(out / "fig1.csv")
    assert len(rows) > 10_000
    alpha = np.array([int(r["alpha"]) for r in rows])
    r_val = np.array([num(r["R"]) for r in rows])
    assert np.all(r_val[alpha >= 1000**2 + 3000] <= 1)


@pytest.mark.slow
def test_fig2_full(with_data, tmp_path):
    out = run_experiment("faceoff-fig2", tmp_path, full=True)
    s = summary_by_panel(out, "fig2_summary.csv")
    assert s[("a", "primal-cd")]["n"] == "1000" and s[("b", "primal-cd")]["n"] == "100000"
    rows = read_csv(out / "fig2_a.csv")
    primal = first_crossing(rows, "primal-cd", 1e-6)
    dual = first_crossing(rows, "dual-cd", 1e-6)
    assert primal < dual / 10
    if ("c", "primal-cd") in s:
        # tf-idf, unit-length rows (as news20.binary): dual predicted and measured faster,
        # the paper's observation on news (whole file: predicted 1.51 with β = 1)
        p, q = s[("c", "primal-cd")], s[("c", "dual-cd")]
        assert num(p["pred_TP_TD_beta1"]) > 1.2
        assert num(p["passes_to_1e-06"]) > num(q["passes_to_1e-06"])


@pytest.mark.slow
def test_fig3_full(tmp_path):
    out = run_experiment("faceoff-fig3", tmp_path, full=True)
    s = summary_by_panel(out, "fig3_summary.csv")
    assert {n for n, _, _ in s} == {"100", "1000", "10000"}
    # every seed within its Theorem 1 bound; eq. (15)'s winner missed only at 10%
    for key, r in s.items():
        seeds = [float(v) for v in r["passes_to_1e-06_per_seed"].split()]
        assert max(seeds) <= num(r["bound_passes_to_1e-06"]), key
        assert r["verdict"] == ("unranked" if key[:2] == ("1000", "0.1") else
                                "slack" if key[:2] == ("10000", "0.1") else "agree"), key
    # n = 100 d, 10%: eq. (15) says dual (10.6), primal is ~6x faster on every seed, its
    # bound ~90x loose (the primal curvature at the optimum is ~36 λ)
    p = s[("10000", "0.1", "primal-cd")]
    assert num(p["pred_TP_TD"]) > 9 and num(p["measured_ratio_hi"]) < 0.25
    assert num(p["muP_over_lam"]) > 10
    verdict = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["verdict"] == "agrees" and "primal faster at n ≥ 10d in 2 of 6" in verdict["ours"]


@pytest.mark.slow
def test_table1_full(with_data, tmp_path):
    out = run_experiment("faceoff-table1", tmp_path, full=True)
    rows = table_rows(out)
    assert {"leukemia", "news", "reuters-money-fx", "a9a", "w8a", "mushrooms", "ijcnn1",
            "arcene"} <= set(rows)
    for name in ("a9a", "w8a", "mushrooms", "ijcnn1"):
        assert num(rows[name]["measured"]) > 5, name
    leu = rows["leukemia"]
    assert num(leu["pred_beta1"]) < 1 and num(leu["measured_beta1"]) < 1 / 1.1
    for name, r in rows.items():
        assert r["pred_ok_passes"] == "True", name
