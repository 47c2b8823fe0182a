"""The per-call path of ``cdlearn.solve`` (issue 25): ``solver="auto"``'s choice kept on
the design for a repeated call must be the one a fresh design gives, whatever changed
between calls (λ, the loss, the intercept, a Gram cached by another solve, weights);
the scalar checks' fast paths must raise as before."""

import numbers
import warnings

import numpy as np
import pytest

import cdlearn
from cdlearn.api import auto_solver, make_problem
from cdlearn.data import Design, check_finite, check_int, check_seed, design_cache


@pytest.fixture(autouse=True)
def fresh_cache():
    design_cache.clear()
    yield
    design_cache.clear()


def _fresh_choice(X, y, **problem):
    """auto's (solver, reason) on a new Design of X: nothing kept from earlier calls."""
    return auto_solver(make_problem(Design(X), y, **problem))


def _solve(A, y, **problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cdlearn.solve(A, y, max_epochs=2, n_threads=1, **problem)


@pytest.mark.parametrize("passed", ["array", "design"])
def test_auto_choice_kept_on_the_design_follows_lam_loss_and_intercept(passed):
    rng = np.random.default_rng(0)
    wide, tall = rng.standard_normal((100, 300)), rng.standard_normal((300, 60))
    for X, problems in (
            # small λ: newton-cg (dual condition κ large); large λ: dual CD (face-off)
            (wide, [dict(loss="logistic", penalty="l2", lam=1e-3),
                    dict(loss="logistic", penalty="l2", lam=1.0),
                    dict(loss="squared_hinge", penalty="l2", lam=1e-3)]),
            # the intercept: one more feature in the Gram (the reason counts them)
            (tall, [dict(loss="logistic", penalty="l2", lam=1e-3),
                    dict(loss="logistic", penalty="l2", lam=1e-3, fit_intercept=True),
                    dict(loss="squared", penalty="l2", lam=1e-3)])):
        s = np.sign(rng.standard_normal(X.shape[0]))
        y = X[:, 0] + 0.1 * rng.standard_normal(X.shape[0])
        targets = [y if p["loss"] == "squared" else s for p in problems]
        A = Design(X) if passed == "design" else X
        fresh = [_fresh_choice(X, t, **p) for t, p in zip(targets, problems, strict=True)]
        assert len(set(fresh)) == len(fresh)  # each key's part matters here
        for _ in range(2):  # the second round reads every choice from the design
            for t, p, want in zip(targets, problems, fresh, strict=True):
                result = _solve(A, t, **p)
                assert (result.solver, result.info["reason"]) == want
        design = A if passed == "design" else cdlearn.as_design(X)
        assert len(design._derived["auto_choices"]) == len(problems)
    assert fresh[0][0] == "newton-cg" and fresh[2][0] == "gram-cd"


def test_auto_choice_follows_a_gram_cached_by_another_solve():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 100))
    y = X[:, 0] + rng.standard_normal(400)
    design = Design(X)
    lasso = dict(loss="squared", penalty="l1", lam=0.1)
    assert _solve(design, y, **lasso).solver == "primal-cd"  # the Gram not formed yet
    assert _solve(design, y, **lasso).solver == "primal-cd"  # kept
    _solve(design, y, solver="gram-cd", **lasso)  # caches XᵀX on the design
    # priced free now: gram-cd, as a fresh cost model on this design says
    assert auto_solver(make_problem(design, y, **lasso))[0] == "gram-cd"
    assert _solve(design, y, **lasso).solver == "gram-cd"


def test_auto_choice_is_not_kept_with_weights_or_options():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((100, 300))
    s = np.sign(rng.standard_normal(100))
    design = Design(X)
    problem = dict(loss="logistic", penalty="l2", lam=1e-3)
    _solve(design, s, sample_weight=np.linspace(0.5, 2.0, 100), **problem)
    _solve(design, s, sampling="uniform", **problem)  # CD options: primal or dual CD only
    assert "auto_choices" not in design._derived
    assert _solve(design, s, sampling="uniform", **problem).solver in ("primal-cd", "dual-cd")
    assert _solve(design, s, **problem).solver == "newton-cg"


def test_scalar_checks_fast_paths_keep_their_errors():
    assert check_finite("tol", 0.5) == 0.5
    assert type(check_finite("tol", np.float64(0.5))) is float
    assert check_finite("tol", 3) == 3.0 and check_finite("tol", np.int32(3)) == 3.0
    for bad, error in ((True, TypeError), ("1", TypeError), (float("nan"), ValueError),
                       (np.float32("inf"), ValueError), (-float("inf"), ValueError)):
        with pytest.raises(error, match="tol must be"):
            check_finite("tol", bad)
    assert check_int("max_epochs", 5) == 5 and check_int("max_epochs", np.int64(5)) == 5
    for bad in (True, 2.0, 2.5, np.float64(2.0)):
        with pytest.raises(TypeError, match="max_epochs must be an integer"):
            check_int("max_epochs", bad)
    with pytest.raises(ValueError, match="max_epochs must be >= 1, got 0"):
        check_int("max_epochs", 0)
    assert check_seed("seed", 7) == 7 and check_seed("seed", np.uint8(7)) == 7
    with pytest.raises(TypeError, match="seed must be a non-negative integer or None"):
        check_seed("seed", False)
    with pytest.raises(ValueError, match="got -1"):
        check_seed("seed", -1)

    class Real(numbers.Real):  # a registered real that is not a float: the ABC path
        __float__ = lambda self: 0.25  # noqa: E731
        for name in ("__abs__", "__add__", "__ceil__", "__eq__", "__floor__", "__floordiv__",
                     "__le__", "__lt__", "__mod__", "__mul__", "__neg__", "__pos__", "__pow__",
                     "__radd__", "__rfloordiv__", "__rmod__", "__rmul__", "__round__",
                     "__rpow__", "__rtruediv__", "__truediv__", "__trunc__"):
            locals()[name] = lambda self, *a: NotImplemented

    assert check_finite("lam", Real()) == 0.25


def test_binary_target_checks_keep_their_errors():
    X = np.random.default_rng(3).standard_normal((6, 2))
    for y, message in (([1, -1, np.nan, 1, 1, -1], "y contains NaN or infinity"),
                       ([1, -1, np.inf, 1, 1, -1], "y contains NaN or infinity"),
                       ([1, 0, 1, 1, 0, 1], r"only -1 and \+1 .*found labels \{0, 1\}")):
        with pytest.raises(ValueError, match=message):
            cdlearn.solve(X, np.array(y, dtype=float), loss="logistic", lam=0.1)
    result = cdlearn.solve(X, np.array([1, -1, 1, 1, -1, 1]), loss="logistic", lam=0.1)
    assert result.converged and result.gap <= 1e-6 * result.trace["primal"][0]


def test_overhead_benchmark_replaces_only_its_generated_section(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root
    from benchmarks.overhead import SECTION_END, SECTION_START, TITLE, write_section

    out = tmp_path / "overhead.md"
    write_section(out, ["| run 1 |"])  # a new file: title, then the section
    assert out.read_text() == f"{TITLE}\n\n{SECTION_START}\n| run 1 |\n{SECTION_END}\n"
    history = "## Issue 25, round 8\n\nhand-written table\n"
    out.write_text(f"{TITLE}\n\n{history}")  # a file without the markers (today's)
    write_section(out, ["| run 2 |"])
    assert out.read_text() == (f"{TITLE}\n\n{SECTION_START}\n| run 2 |\n{SECTION_END}\n\n"
                               f"{history}")
    write_section(out, ["| run 3 |", "| more |"])  # the next run replaces run 2 only
    assert out.read_text() == (f"{TITLE}\n\n{SECTION_START}\n| run 3 |\n| more |\n"
                               f"{SECTION_END}\n\n{history}")


def test_blas_counts_are_read_at_every_solve_not_remembered():
    """A count changed between two solves (threadpoolctl) is the one restored after the
    next solve, and that solve runs BLAS on one thread."""
    from threadpoolctl import threadpool_limits

    from cdlearn.solvers import parallel

    getters = parallel.blas_thread_getters()
    if not getters:
        pytest.skip("no BLAS library found by threadpoolctl")
    assert [get() for _, get in getters] == [lib.get_num_threads() for lib, _ in getters]
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 5))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    for limit in (2, 1, 3):
        with threadpool_limits(limit, user_api="blas"):
            wanted = [lib.get_num_threads() for lib, _ in getters]
            inside = []
            cdlearn.solve(X, y, lam=0.1, solver="primal-cd", max_epochs=3, tol=1e-12,
                          callback=lambda s: inside.append([g() for _, g in getters]))
            assert inside and all(counts == [1] * len(getters) for counts in inside)
            assert [lib.get_num_threads() for lib, _ in getters] == wanted
