"""The ``cdlearn`` command as a user runs it: exit codes, Ctrl-C, defaults that never fail,
the announced method, invalid data and model files. Subprocesses where a signal or a
traceback is the point; ``main([...])`` in-process elsewhere."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification

import cdlearn
from cdlearn.api import make_problem, solve
from cdlearn.cli import EXIT_INTERRUPTED, main, resolve_solver
from cdlearn.datasets.libsvm import load_libsvm

SRC = str(Path(cdlearn.__file__).resolve().parents[1])
STOP_BOUND = 60.0  # seconds from SIGINT to exit: generous, the machine is shared


def _default_sigint() -> None:
    """In the child: SIGINT back to its default. A shell without job control starts
    background jobs with SIGINT ignored, and Python then installs no handler: the
    Ctrl-C under test would be lost (the solve is right to honour an inherited
    SIG_IGN, as under nohup)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli_env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", **extra)
    env.pop("COLUMNS", None)
    return env


def run_cli(*argv, timeout=300, **env):
    return subprocess.run([sys.executable, "-m", "cdlearn.cli", *map(str, argv)],
                          capture_output=True, text=True, timeout=timeout,
                          env=cli_env(**env))


def assert_clean(stderr: str):
    assert "Traceback" not in stderr, stderr
    assert "internal error" not in stderr, stderr


# --------------------------------------------------------------------------- data
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 40)) * (rng.random((3000, 40)) < 0.5)
    # separable labels: logistic regression at λ = 1e-9 then converges slowly (‖w*‖ large),
    # so the fits below are still running when the signal comes, on a fast machine too
    y = np.where(X @ rng.standard_normal(40) > 0, 1, -1)
    dump_svmlight_file(X, y, str(d / "slow.svm"), zero_based=False)
    X, y = make_classification(n_samples=60, n_features=8, random_state=0)
    dump_svmlight_file(X, y, str(d / "few.svm"), zero_based=False)
    Xw = rng.standard_normal((40, 300)) * (rng.random((40, 300)) < 0.1)
    Xw[:, -1] = 1.0
    yw = np.where(Xw @ rng.standard_normal(300) > 0, 1, -1)
    dump_svmlight_file(Xw, yw, str(d / "wide.svm"), zero_based=False)
    # 6 x 10^6 entries parsed line by line: a read of seconds, for predict's interrupt
    line = b"1 " + b" ".join(b"%d:1" % j for j in range(1, 1001)) + b"\n"
    import gzip

    (d / "big.svm.gz").write_bytes(gzip.compress(line * 6000, compresslevel=1))
    return d


# --------------------------------------------------------------------------- Ctrl-C
def interrupt(argv, ready, *, cwd, env=None, settle=1.0):
    """Start ``cdlearn argv``, wait until ``ready(stdout_so_far)``, send SIGINT.

    Returns (exit code, stdout, stderr, seconds from the signal to the exit).
    """
    proc = subprocess.Popen([sys.executable, "-m", "cdlearn.cli", *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=cwd, env=cli_env(**(env or {})), preexec_fn=_default_sigint)
    out: list[str] = []
    err: list[str] = []
    readers = [threading.Thread(target=lambda s, b: b.extend(s), args=(proc.stdout, out)),
               threading.Thread(target=lambda s, b: b.extend(s), args=(proc.stderr, err))]
    for t in readers:
        t.start()
    deadline = time.monotonic() + 300
    try:
        while not ready("".join(out)):
            assert proc.poll() is None, f"finished before the interrupt: {''.join(err)}"
            assert time.monotonic() < deadline, "never became ready"
            time.sleep(0.05)
        time.sleep(settle)
        assert proc.poll() is None, "finished before the interrupt"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=300)
        seconds = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
        for t in readers:
            t.join()
    return code, "".join(out), "".join(err), seconds


LONG_FIT = ["--solver", "primal-cd", "--sampling", "uniform", "--lam", "1e-9", "--tol", "1e-15",
            "--max-epochs", "100000000"]


def test_interrupted_fit_writes_the_best_iterate(files, tmp_path):
    model_path = tmp_path / "model.json"
    code, out, err, seconds = interrupt(
        ["fit", files / "slow.svm", *LONG_FIT, "-o", model_path],
        lambda out: "\n    100 " in out, cwd=tmp_path)
    assert code == EXIT_INTERRUPTED == 130
    assert seconds < STOP_BOUND
    assert_clean(err)
    assert f"interrupted: {model_path} holds the best iterate reached" in err
    model = json.loads(model_path.read_text())
    assert model["interrupted"] is True and model["converged"] is False
    assert model["message"].startswith("interrupted")
    assert model["n_epochs"] >= 100
    # the saved iterate is the one certified: its objective is recomputed here
    X, y = load_libsvm(files / "slow.svm")
    w = np.asarray(model["coef"])
    primal = np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5e-9 * w @ w
    assert primal == pytest.approx(model["primal"], rel=1e-9)
    assert model["primal"] < math.log(2.0)
    assert not list(tmp_path.glob(".model.json*")), "no temporary file left"
    # the model is usable
    res = run_cli("predict", model_path, files / "slow.svm")
    assert res.returncode == 0, res.stderr
    assert "accuracy:" in res.stdout


@pytest.mark.parametrize("case", ["compare", "faceoff", "demo", "predict", "reproduce"])
def test_interrupt_every_subcommand_exits_130(case, files, tmp_path):
    """SIGINT mid-run: exit 130 within the bound, one line, nothing written afterwards."""
    slow = files / "slow.svm"
    if case == "compare":
        argv = ["compare", slow, "--solvers", "primal-cd,dual-cd", "--samplings", "uniform",
                "--lam", "1e-9", "--tol", "1e-15", "--max-epochs", "100000000",
                "--csv", tmp_path / "t.csv", "--plot", tmp_path / "t.png"]
        ready = lambda out: "problem:" in out  # noqa: E731
    elif case == "faceoff":
        argv = ["faceoff", slow, "--measure", "--lam", "1e-9", "--tol", "1e-15",
                "--max-epochs", "100000000"]
        ready = lambda out: "winner" in out  # noqa: E731
    elif case == "demo":
        argv = ["demo", "--quick", "-o", tmp_path / "demo"]
        ready = lambda out: "[1/3]" in out  # noqa: E731
    elif case == "predict":
        if not Path("/proc/self/fd").is_dir():
            pytest.skip("needs /proc to see when the file is being read")
        model = {"format": "cdlearn-linear-model/1", "coef": [0.0] * 1000, "intercept": 0.0,
                 "n_features": 1000, "loss": "squared", "task": "regression",
                 "label_mapping": None}
        (tmp_path / "m.json").write_text(json.dumps(model))
        argv = ["predict", tmp_path / "m.json", files / "big.svm.gz", "-o", tmp_path / "p.txt"]
        ready = lambda out: _is_open(files / "big.svm.gz")  # noqa: E731
    else:
        argv = ["reproduce", "faceoff-fig2", "-o", tmp_path / "res"]
        ready = lambda out: (tmp_path / "res").exists()  # noqa: E731
    code, out, err, seconds = interrupt(argv, ready, cwd=tmp_path, settle=0.5)
    assert code == 130, err
    assert seconds < STOP_BOUND
    assert_clean(err)
    assert err.strip().splitlines()[-1] == "cdlearn: interrupted"
    for name in ("t.csv", "t.png", "p.txt", "demo/report.md"):
        assert not (tmp_path / name).exists()


def _is_open(path: Path) -> bool:
    """Whether a process of ours holds ``path`` open (seen through /proc)."""
    target = str(path)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return True
        except OSError:
            continue
    return False


# --------------------------------------------------------------------------- exit codes
def console_script_command() -> list[str]:
    """``python -c ...`` running the ``cdlearn`` console script's entry (pyproject.toml),
    as the script pip writes for it does."""
    import tomllib

    with open(Path(SRC).parent / "pyproject.toml", "rb") as fh:
        module, func = tomllib.load(fh)["project"]["scripts"]["cdlearn"].split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {func}; sys.exit({func}())"]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
@pytest.mark.parametrize("loading", ["numpy", "numba"])
def test_interrupt_during_the_imports_exits_130(files, tmp_path, loading):
    """Ctrl-C in the first second, while ``import cdlearn`` loads numpy or numba.

    The signal is sent as soon as that library's first extension module is
    mapped into the process. With the entry point inside the package
    (``cdlearn.cli:main``) the import ran before any handler: Python's
    traceback and status 1.
    """
    marker = {"numpy": "/numpy/", "numba": "/numba/"}[loading]
    proc = subprocess.Popen([*console_script_command(), "fit", files / "few.svm", "-q",
                             "-o", tmp_path / "m.json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=cli_env(),
                            preexec_fn=_default_sigint)
    maps = Path(f"/proc/{proc.pid}/maps")
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                if marker in maps.read_text():
                    break
            except (FileNotFoundError, ProcessLookupError):  # it exited
                pass
            assert proc.poll() is None, "finished before the interrupt"
            assert time.monotonic() < deadline, f"{loading} never loaded"
            time.sleep(0.001)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert err.splitlines() == ["cdlearn: interrupted"], err
    assert out == "" and not (tmp_path / "m.json").exists()


# an import that turns the Ctrl-C it receives into an ImportError, as numpy's C-extension
# import does when the signal lands while it imports ``datetime`` (seen once in CI)
_SWALLOWING_IMPORT = """
import importlib.abc, importlib.util, os, signal, sys, time
import _cdlearn_cli

class Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt as exc:
            raise ImportError('PyCapsule_Import could not import module "datetime"') from exc

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "cdlearn":
            return importlib.util.spec_from_loader(name, Loader(), is_package=True)

sys.meta_path.insert(0, Finder())
sys.exit(_cdlearn_cli.main())
"""


def test_interrupt_turned_into_an_import_error_exits_130(tmp_path):
    """A Ctrl-C that an extension module's import reports as another error is still
    an interruption (status 130, one line), not numpy's "bad install" traceback."""
    proc = subprocess.run([sys.executable, "-c", _SWALLOWING_IMPORT], capture_output=True,
                          text=True, cwd=tmp_path, env=cli_env(), timeout=120,
                          preexec_fn=_default_sigint)
    assert proc.returncode == EXIT_INTERRUPTED, proc.stderr
    assert proc.stderr.splitlines() == ["cdlearn: interrupted"], proc.stderr
    # an ImportError without a Ctrl-C is not mistaken for one
    plain = _SWALLOWING_IMPORT.replace("os.kill(os.getpid(), signal.SIGINT)",
                                       "raise KeyboardInterrupt")
    plain = plain.replace("except KeyboardInterrupt as exc", "except BaseException as exc")
    proc = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True,
                          cwd=tmp_path, env=cli_env(), timeout=120, preexec_fn=_default_sigint)
    assert proc.returncode == 1 and "ImportError" in proc.stderr, proc.stderr


@pytest.mark.parametrize("argv, code", [
    (["--version"], 0),
    (["fit", "--help"], 0),
    ([], 2),
    (["no-such-subcommand"], 2),
    (["fit"], 2),
    (["fit", "x.svm", "--tol", "abc"], 2),
    (["predict", "only-model.json"], 2),
    (["compare", "x.svm", "--solvers", "nope"], 2),
    (["faceoff", "x.svm", "--lam", "-1"], 2),
    (["reproduce"], 2),
    (["demo", "--seed", "-3"], 2),
    (["fit", "no-such-file.svm"], 1),
    (["fit", "no-such-dataset-name"], 1),
    (["predict", "no-model.json", "x.svm"], 1),
    (["compare", "no-such-file.svm"], 1),
    (["faceoff", "no-such-file.svm"], 1),
    (["reproduce", "no-such-experiment"], 1),
])
def test_exit_code_table(capsys, tmp_path, monkeypatch, argv, code):
    monkeypatch.chdir(tmp_path)
    got = main(argv)
    _, err = capsys.readouterr()
    assert got == code, err
    if code:
        assert err.startswith(("cdlearn: error:", "usage:")), err


# --------------------------------------------------------------------------- defaults
LOSSES = ("squared", "logistic", "squared_hinge", "smooth_hinge", "hinge")


@pytest.mark.parametrize("data", ["few", "wide"])
def test_defaults_never_fail_and_announce_what_runs(capsys, files, tmp_path, data):
    """Every loss x penalty x intercept the CLI offers, default options otherwise.

    ``few`` (8 features) takes auto's newton-cd / gram-cd routes, ``wide`` (300
    features, 40 samples) newton-cg, ws-cd, primal-cd and the face-off choice.
    The hinge loss has one method, dual CD, which needs an l2 part: with l1 or
    no penalty the command says so (exit 1); everything else must succeed.
    """
    routes = set()
    for loss, penalty, intercept in itertools.product(
            LOSSES, ("none", "l2", "l1", "elastic_net"), (False, True)):
        out_path = tmp_path / "m.json"
        argv = ["fit", files / f"{data}.svm", "--loss", loss, "--penalty", penalty,
                "-o", out_path, "--max-epochs", "300"] + (["--intercept"] if intercept else [])
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        if loss == "hinge" and penalty in ("none", "l1"):
            assert code == 1
            assert f"no method serves --loss hinge with --penalty {penalty}" in err
            continue
        assert code == 0, (loss, penalty, intercept, err)
        announced = [ln for ln in out.splitlines() if ln.startswith("solver: auto -> ")]
        assert len(announced) == 1, out
        model = json.loads(out_path.read_text())
        assert announced[0].split()[3] == model["solver"], (announced, model["solver"])
        assert model["solver_reason"] in announced[0]
        routes.add(model["solver"])
    expected = {"few": {"newton-cd", "gram-cd", "dual-cd"},
                "wide": {"newton-cg", "ws-cd", "primal-cd", "dual-cd"}}[data]
    assert expected <= routes, routes


def test_intercept_with_default_options_on_a9a(data_dir, tmp_path, capsys):
    """The report: `cdlearn fit a9a --intercept` refused its own default sampling."""
    code = main(["fit", "a9a", "--data-home", str(data_dir), "--intercept", "-q",
                 "-o", str(tmp_path / "m.json"), "--tol", "1e-4"])
    _, err = capsys.readouterr()
    assert code == 0, err
    model = json.loads((tmp_path / "m.json").read_text())
    assert model["converged"] and model["intercept"] != 0.0


@pytest.mark.parametrize("sampling", [None, "uniform", "importance"])
@pytest.mark.parametrize("data, loss, penalty", [
    ("few", "logistic", "l2"), ("wide", "logistic", "l2"), ("wide", "squared", "l2"),
    ("wide", "logistic", "elastic_net"), ("wide", "hinge", "l2"), ("few", "squared", "l1"),
    ("wide", "logistic", "none"),
])
def test_announced_method_is_the_one_solve_auto_runs(files, data, loss, penalty, sampling):
    """``resolve_solver`` (what fit prints, then runs) agrees with ``solve(solver="auto")``."""
    X, y = load_libsvm(files / f"{data}.svm")
    y = np.where(y > 0, 1.0, -1.0)
    lam = 1.0 / X.shape[0]
    problem = make_problem(X, y, loss=loss, penalty=penalty, lam=lam)
    chosen, _ = resolve_solver(problem, "auto", sampling)
    try:
        res = solve(X, y, loss=loss, penalty=penalty, lam=lam, solver="auto",
                    sampling=sampling, max_epochs=5)
    except ValueError as exc:  # a sampling the chosen method refuses: never silently another
        assert sampling is not None, exc
        return
    assert res.solver == chosen


# --------------------------------------------------------------------------- bad data
@pytest.mark.parametrize("content, message", [
    (b"nan 1:1\n1 2:1\n-1 1:2\n", ", line 1: the label 'nan' is not finite"),
    (b"1 1:1\n\n-1 2:1\ninf 1:3\n", ", line 4: the label 'inf' is not finite"),
    (b"1 1:1\n-1 2:nan\n", ", line 2: the value 'nan' of feature 2 is not finite"),
    (b"1 1:1\r\n-1 2:-inf\r\n", ", line 2: the value '-inf' of feature 2 is not finite"),
    (b"", " holds no samples (an empty file or only blank lines)"),
    (b"\n\n  \n", " holds no samples (an empty file or only blank lines)"),
    (b"1 1:1\n-1 3000000000:1\n", ", line 2: the feature index 3000000000 exceeds the limit "
                                   "2,147,483,647 (2^31 - 1); renumber the features"),
])
def test_bad_values_name_their_line(capsys, tmp_path, content, message):
    """NaN/inf labels and values, an empty file, an index >= 2^31: one line, its number."""
    path = tmp_path / "bad.svm"
    path.write_bytes(content)
    code = main(["fit", str(path), "-o", str(tmp_path / "m.json")])
    _, err = capsys.readouterr()
    assert code == 1
    assert err == f"cdlearn: error: {path}{message}\n"
    assert not (tmp_path / "m.json").exists()


def test_sparse_feature_ids_fail_early_or_compact(capsys, tmp_path, monkeypatch):
    """Two lines, the second with feature id 3·10⁸: refused before any d-length array."""
    import cdlearn.cli as cli

    path = tmp_path / "huge.svm"
    path.write_bytes(b"1 1:1 2:0.5\n-1 300000000:1\n1 2:1\n")
    monkeypatch.setattr(cli, "_available_memory", lambda: 8 * 10**9)
    code = main(["fit", str(path), "-o", str(tmp_path / "m.json")])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.strip() == (
        f"cdlearn: error: {path} has 300,000,000 features: a fit needs about 38.4 GB for "
        "its per-feature arrays (128 bytes x 300,000,000) and 8 GB of memory is available; "
        "only 3 feature ids are used: --compact-features renumbers them (the model keeps "
        "the map)")
    model_path = tmp_path / "m.json"
    code = main(["fit", str(path), "--compact-features", "--lam", "0.1", "--tol", "1e-10",
                 "-o", str(model_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "--compact-features: 3 of 300,000,000 feature ids are used" in out
    model = json.loads(model_path.read_text())
    assert model["feature_ids"] == [0, 1, 299_999_999] and model["n_features"] == 3
    # the same problem on the 3 used columns, solved directly
    X = np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    y = np.array([1.0, -1.0, 1.0])
    ref = solve(X, y, loss="logistic", penalty="l2", lam=0.1, tol=1e-12)
    np.testing.assert_allclose(model["coef"], ref.w, atol=1e-6)
    # predict maps a file's feature ids through the model's map; unseen ids weigh 0
    test = tmp_path / "test.svm"
    test.write_bytes(b"1 2:1 7:5\n-1 300000000:1 400000000:9\n")
    code = main(["predict", str(model_path), str(test), "-o", str(tmp_path / "p.txt")])
    out, err = capsys.readouterr()
    assert code == 0, err
    z = np.array([ref.w[1], ref.w[2]])
    expected = np.where(z > 0, 1, -1)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p.txt"), expected)


# --------------------------------------------------------------------------- bad models
GOOD = {"format": "cdlearn-linear-model/1", "coef": [0.5, -1.0], "intercept": 0.0,
        "n_features": 2, "loss": "logistic", "task": "classification",
        "label_mapping": {"negative": -1.0, "positive": 1.0}}


def _model(**changes):
    m = dict(GOOD, **changes)
    return json.dumps({k: v for k, v in m.items() if v is not ...})


@pytest.mark.parametrize("text, message", [
    (_model(coef=...), "is not a complete cdlearn model: missing coef"),
    (_model(label_mapping=...), "missing label_mapping"),
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    (json.dumps({"format": "cdlearn-linear-model/1", "x": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}),
     "missing coef"),
    (_model(coef=[float("nan"), 1.0]), "contains NaN or infinity"),
    (_model(coef=[float("inf"), 1.0]), "contains NaN or infinity"),
    (_model(intercept=float("inf")), "contains NaN or infinity"),
    (_model(coef=[1.0]), "coef must be a list of n_features = 2 numbers"),
    (_model(coef="ab"), "coef must be a list"),
    (_model(coef=[1.0, "x"]), "coef and intercept must be numbers"),
    (_model(n_features=-1), "n_features must be a non-negative integer"),
    (_model(n_features=True), "n_features must be a non-negative integer"),
    (_model(loss="nope"), "unknown loss 'nope'"),
    (_model(task="both"), "task must be"),
    (_model(label_mapping={"negative": 0}), "label_mapping with finite numbers"),
    (_model(label_mapping=[1, 2]), "label_mapping with finite numbers"),
    (_model(feature_ids=[3, 1]), "feature_ids must be sorted"),
    (_model(feature_ids=[1]), "feature_ids must be a list of n_features = 2 integers"),
    ("\xff\xfe garbage", "invalid JSON"),
    ("7", "expected format"),
])
def test_bad_model_files_are_one_line_errors(capsys, tmp_path, text, message):
    """Missing keys, deep nesting, NaN/inf coefficients, wrong types: exit 1, one line."""
    model = tmp_path / "m.json"
    model.write_text(text, encoding="utf-8")
    data = tmp_path / "d.svm"
    data.write_bytes(b"1 1:1 2:1\n-1 2:1\n")
    code = main(["predict", str(model), str(data)])
    _, err = capsys.readouterr()
    assert code == 1, err
    assert_clean(err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cdlearn: error: "), err
    assert message in lines[0]
    # the good model next to them is accepted
    model.write_text(_model(), encoding="utf-8")
    assert main(["predict", str(model), str(data)]) == 0
    assert "accuracy: 0.500000 (1/2 correct)" in capsys.readouterr().out


def test_interrupt_inside_a_numba_call_exits_130(monkeypatch, capsys):
    """SIGINT landing in a numba dispatcher call surfaces as a SystemError (seen live)."""
    import cdlearn.cli as cli

    def demo(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("CPUDispatcher(<function f>) returned a result with an "
                              "exception set") from None

    monkeypatch.setattr(cli, "cmd_demo", demo)
    assert main(["demo"]) == 130
    assert capsys.readouterr().err == "cdlearn: interrupted\n"
    monkeypatch.setattr(cli, "cmd_demo", lambda args: 1 / 0)
    assert main(["demo"]) == 1
    assert capsys.readouterr().err.startswith(
        "cdlearn: error: division by zero")  # ArithmeticError: an ordinary error line
