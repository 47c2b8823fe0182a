"""The ``cdlearn`` command: subcommands in-process through ``main([...])``, errors, registry."""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification, make_regression

from cdlearn import experiments
from cdlearn.cli import main
from cdlearn.datasets.libsvm import load_libsvm
from cdlearn.faceoff import analyze

FACEOFF_IDS = ("faceoff-fig1", "faceoff-fig2", "faceoff-fig3", "faceoff-table1")


# --------------------------------------------------------------------------- data
@pytest.fixture(scope="module")
def clf_file(tmp_path_factory) -> Path:
    """200 x 12 binary problem with labels {0, 1} (mapped to -1/+1 by the CLI)."""
    X, y = make_classification(n_samples=200, n_features=12, n_informative=6,
                               random_state=0)
    path = tmp_path_factory.mktemp("data") / "clf.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path


@pytest.fixture(scope="module")
def reg_file(tmp_path_factory) -> Path:
    X, y = make_regression(n_samples=150, n_features=10, n_informative=4, noise=0.5,
                           random_state=1)
    path = tmp_path_factory.mktemp("data") / "reg.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- fit / predict
def test_fit_json_predict_roundtrip(capsys, clf_file, tmp_path):
    model_path = tmp_path / "model.json"
    tol = 1e-8
    code, out, err = _run(capsys, "fit", clf_file, "--loss", "logistic", "--penalty", "l2",
                          "--lam", "0.01", "--tol", tol, "-o", model_path)
    assert code == 0, err
    assert "gap" in out and "model written to" in out
    trace_lines = [ln for ln in out.splitlines() if re.match(r"\s+\d+\s+\d", ln)]
    assert trace_lines, "the trace is printed as the solver runs"

    model = json.loads(model_path.read_text())
    p0 = math.log(2.0)  # logistic loss at w = 0
    assert model["gap"] <= tol * p0
    assert model["converged"] is True
    assert model["solver"] == "newton-cd"  # auto, 12 features: the Gram-form Newton route
    assert model["settings"]["tol"] == tol and model["lam"] == 0.01
    assert model["n_features"] == 12 and len(model["coef"]) == 12
    assert model["label_mapping"] == {"negative": 0.0, "positive": 1.0}
    assert model["p0"] == pytest.approx(p0) and model["primal"] < p0

    code, out, err = _run(capsys, "predict", model_path, clf_file)
    assert code == 0, err
    m = re.search(r"accuracy: ([0-9.]+) \((\d+)/(\d+) correct\)", out)
    assert m, out
    X, y = load_libsvm(clf_file)
    z = X @ np.asarray(model["coef"]) + model["intercept"]
    pred = np.where(z > 0, 1.0, 0.0)
    correct = int(np.sum(pred == y))
    assert int(m.group(2)) == correct and int(m.group(3)) == y.size
    assert float(m.group(1)) == pytest.approx(correct / y.size, abs=1e-6)
    assert correct / y.size > 0.75


def test_fit_with_C_intercept_and_predict_writes_labels(capsys, clf_file, tmp_path):
    model_path = tmp_path / "m.json"
    code, _, err = _run(capsys, "fit", clf_file, "--C", "2", "--intercept", "--solver",
                        "dual-cd", "--sampling", "uniform", "-q", "-o", model_path)
    assert code == 0, err
    model = json.loads(model_path.read_text())
    assert model["lam"] == pytest.approx(1.0 / (2.0 * 200))
    assert model["solver"] == "dual-cd" and model["settings"]["fit_intercept"] is True
    preds = tmp_path / "pred.txt"
    code, out, err = _run(capsys, "predict", model_path, clf_file, "-o", preds)
    assert code == 0, err
    labels = np.loadtxt(preds)
    assert labels.shape == (200,) and set(np.unique(labels)) <= {0.0, 1.0}


def test_fit_regression_lasso_and_rmse(capsys, reg_file, tmp_path):
    model_path = tmp_path / "lasso.json"
    code, out, err = _run(capsys, "fit", reg_file, "--loss", "squared", "--penalty", "l1",
                          "--lam", "1.0", "--solver", "primal-cd", "--tol", "1e-8",
                          "--max-epochs", "5000", "-o", model_path)
    assert code == 0, err
    model = json.loads(model_path.read_text())
    assert model["task"] == "regression" and model["label_mapping"] is None
    X, y = load_libsvm(reg_file)
    assert model["gap"] <= 1e-8 * 0.5 * np.mean(y**2)
    code, out, err = _run(capsys, "predict", model_path, reg_file)
    assert code == 0, err
    rmse = float(re.search(r"rmse: ([0-9.eE+-]+)", out).group(1))
    direct = np.sqrt(np.mean((X @ np.asarray(model["coef"]) + model["intercept"] - y) ** 2))
    assert rmse == pytest.approx(direct, rel=1e-5)


def test_fit_auto_prints_choice(capsys, clf_file, tmp_path):
    code, out, _ = _run(capsys, "fit", clf_file, "-o", tmp_path / "a.json")
    assert code == 0
    # 12 features: the Gram matrix is cheap, auto runs proximal Newton (newton-cd)
    assert re.search(r"solver: auto -> newton-cd \(12 features: the Hessian", out)
    code, out, _ = _run(capsys, "fit", clf_file, "--penalty", "l1", "-o", tmp_path / "b.json")
    assert code == 0
    # l1 logistic with 12 features: proximal Newton too (issue 25)
    assert re.search(r"solver: auto -> newton-cd \(l1 logistic, 12 features", out)


# --------------------------------------------------------------------------- compare
def test_compare_writes_plot_and_csv(capsys, clf_file, tmp_path):
    png, csv_path = tmp_path / "cmp.png", tmp_path / "cmp.csv"
    code, out, err = _run(capsys, "compare", clf_file, "--lam", "0.01", "--tol", "1e-7",
                          "--solvers", "primal-cd,dual-cd", "--samplings",
                          "uniform,importance", "--plot", png, "--csv", csv_path)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    labels = [f"{s} / {m}" for s in ("primal-cd", "dual-cd") for m in ("uniform", "importance")]
    # printed markdown table: one row per run, with its epoch count
    epochs = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0] in labels:
            epochs[cells[0]] = int(cells[3])
    assert set(epochs) == set(labels)
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["method", "epoch", "passes", "seconds", "primal", "dual", "gap",
                             "nnz_w", "active", "rel_subopt"]
    for label in labels:
        mine = [r for r in rows if r["method"] == label]
        assert len(mine) == epochs[label] + 1  # epoch 0 plus one row per check
        assert [int(r["epoch"]) for r in mine] == list(range(epochs[label] + 1))
        assert min(float(r["rel_subopt"]) for r in mine) >= -1e-12
    assert len(rows) == sum(epochs.values()) + len(labels)


def test_compare_skips_unsupported_and_fails_when_none_runs(capsys, reg_file):
    code, out, err = _run(capsys, "compare", reg_file, "--loss", "squared", "--penalty", "l1",
                          "--lam", "1", "--solvers", "primal-cd,dual-cd", "--samplings",
                          "cyclic", "--reference", "best")
    assert code == 0
    assert "skipping dual-cd / cyclic" in err and "primal-cd / cyclic" in out
    code, _, err = _run(capsys, "compare", reg_file, "--loss", "squared", "--penalty", "l1",
                        "--lam", "1", "--solvers", "dual-cd")
    assert code == 1 and "no solver could run" in err


# --------------------------------------------------------------------------- faceoff
def _table_row(out, name):
    line = next(ln for ln in out.splitlines() if ln.startswith(name))
    return [float(v) for v in line[len(name):].split()]


@pytest.mark.parametrize("normalize", [False, True])
def test_faceoff_prints_analyze_values(capsys, clf_file, normalize):
    argv = ["faceoff", clf_file, "--lam", "0.005"] + (["--normalize"] if normalize else [])
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    X, _ = load_libsvm(clf_file)
    a = analyze(X, loss="logistic", lam=0.005, normalize=normalize)
    c_p, c_d, _ = _table_row(out, "C (eq. 16)")
    assert c_p == pytest.approx(a.C_P, rel=1e-3) and c_d == pytest.approx(a.C_D, rel=1e-3)
    t_p, t_d, _ = _table_row(out, "T importance (15)")
    assert t_p == pytest.approx(a.T_P, rel=1e-3) and t_d == pytest.approx(a.T_D, rel=1e-3)
    assert f"winner: {a.winner}" in out
    assert f"time: {a.choice} " in out and f"{a.time_ratio:.4g}" in out
    assert "measured" not in out


def test_faceoff_measure(capsys, clf_file):
    code, out, err = _run(capsys, "faceoff", clf_file, "--measure", "--tol", "1e-6")
    assert code == 0, err
    X, _ = load_libsvm(clf_file)
    a = analyze(X, loss="logistic")
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines()
            if ln.startswith(("primal-cd", "dual-cd"))}
    assert set(rows) == {"primal-cd", "dual-cd"}
    assert float(rows["primal-cd"][1]) == pytest.approx(a.T_P, rel=1e-3)
    assert float(rows["dual-cd"][1]) == pytest.approx(a.T_D, rel=1e-3)
    assert all(r[-1] == "yes" for r in rows.values())
    assert "measured passes ratio" in out


# --------------------------------------------------------------------------- demo
def test_demo_quick_writes_report(capsys, tmp_path):
    out_dir = tmp_path / "demo"
    code, out, err = _run(capsys, "demo", "--quick", "-o", out_dir)
    assert code == 0, err
    assert re.search(r"solver='auto' chose (primal|dual)-cd", out)
    assert str(out_dir / "report.md") in out
    report = (out_dir / "report.md").read_text()
    for name in ("breast_cancer_logistic", "sparse_logistic", "sparse_lasso"):
        png = out_dir / f"{name}.png"
        assert png.read_bytes()[:4] == b"\x89PNG", name
        assert f"]({name}.png)" in report
        assert (out_dir / f"{name}.csv").stat().st_size > 0
    assert "face-off eq. (15)" in report and "| method |" in report


# --------------------------------------------------------------------------- errors
@pytest.fixture(scope="module")
def bad_files(tmp_path_factory, reg_file):
    d = tmp_path_factory.mktemp("bad")
    garbage = d / "garbage.svm"
    garbage.write_text("this is not\nan svmlight file :::\n")
    multiclass = d / "multi.svm"
    X = np.eye(6)
    dump_svmlight_file(X, np.arange(6) % 3, str(multiclass))
    not_model = d / "notmodel.json"
    not_model.write_text(json.dumps({"hello": 1}))
    broken_json = d / "broken.json"
    broken_json.write_text("{not json")
    incomplete = d / "incomplete.json"
    incomplete.write_text(json.dumps({"format": "cdlearn-linear-model/1", "loss": "squared"}))
    return {"incomplete": incomplete, "garbage": garbage, "multi": multiclass, "reg": reg_file, "not_model": not_model,
            "broken_json": broken_json, "dir": d}


ERROR_CASES = {
    # name: (argv with {placeholders}, expected exit code, text in the message)
    "missing file": (["fit", "{dir}/nope.svm"], 1, "no such file"),
    "unknown dataset": (["fit", "no-such-dataset"], 1, "unknown dataset"),
    "unreadable format": (["fit", "{garbage}"], 1, "line 1: the label"),
    "labels vs loss": (["fit", "{reg}", "--loss", "logistic"], 1, "do not fit loss"),
    "multiclass labels": (["fit", "{multi}"], 1, "needs 2 classes"),
    "unknown solver": (["fit", "{reg}", "--solver", "magic"], 2, "invalid choice"),
    "unknown loss": (["fit", "{reg}", "--loss", "cubic"], 2, "invalid choice"),
    "bad number": (["fit", "{reg}", "--lam", "abc"], 2, "expected a number"),
    "negative lam": (["fit", "{reg}", "--lam", "-1"], 2, "must be > 0"),
    "nan tol": (["fit", "{reg}", "--tol", "nan"], 2, "finite"),
    "zero epochs": (["fit", "{reg}", "--max-epochs", "0"], 2, "must be >= 1"),
    "lam and C": (["fit", "{reg}", "--lam", "1", "--C", "1"], 2, "not allowed with"),
    "l1 with dual": (["fit", "{reg}", "--loss", "squared", "--penalty", "l1", "--solver",
                      "dual-cd"], 1, "does not support penalty"),
    "unknown option": (["fit", "{reg}", "--frobnicate"], 2, "unrecognized"),
    "unknown subcommand": (["frobnicate"], 2, "invalid choice"),
    "bad solver list": (["compare", "{reg}", "--solvers", "primal-cd,nope"], 2, "unknown solver"),
    "model not json": (["predict", "{broken_json}", "{reg}"], 1, "not a cdlearn model"),
    "not a model": (["predict", "{not_model}", "{reg}"], 1, "not a cdlearn model"),
    "missing model": (["predict", "{dir}/none.json", "{reg}"], 1, "No such file"),
    "incomplete model": (["predict", "{incomplete}", "{reg}"], 1, "missing coef"),
    "reproduce unknown": (["reproduce", "nope"], 1, "unknown experiment"),
    "reproduce no id": (["reproduce"], 2, "give an experiment ID"),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_are_one_line(capsys, bad_files, case):
    argv, expected, text = ERROR_CASES[case]
    argv = [a.format(**bad_files) for a in argv]
    code, out, err = _run(capsys, *argv)
    assert code == expected, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("cdlearn: error: ") and text in lines[0], lines[0]
    assert "Traceback" not in err + out


def test_debug_reraises(bad_files):
    with pytest.raises(FileNotFoundError):
        main(["fit", str(bad_files["dir"] / "nope.svm"), "--debug"])


def test_model_with_too_few_features_is_an_error(capsys, clf_file, tmp_path):
    model_path = tmp_path / "m.json"
    assert main(["fit", str(clf_file), "-q", "-o", str(model_path)]) == 0
    model = json.loads(model_path.read_text())
    model["coef"], model["n_features"] = model["coef"][:5], 5
    model_path.write_text(json.dumps(model))
    code, _, err = _run(capsys, "predict", model_path, clf_file)
    assert code == 1 and err.count("\n") == 1 and err.startswith("cdlearn: error:")


# --------------------------------------------------------------------------- help / entry point
@pytest.mark.parametrize("sub", [[], ["fit"], ["predict"], ["compare"], ["faceoff"],
                                 ["reproduce"], ["demo"]])
def test_help_everywhere(capsys, sub):
    code, out, _ = _run(capsys, *sub, "--help")
    assert code == 0 and out.startswith("usage: cdlearn")


def test_no_subcommand_prints_help(capsys):
    code, _, err = _run(capsys)
    assert code == 2 and "SUBCOMMAND" in err


def test_console_script_entry_point():
    exe = Path(sys.executable).parent / "cdlearn"
    if not exe.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for sub in ("fit", "predict", "compare", "faceoff", "reproduce", "demo"):
        assert sub in proc.stdout


# --------------------------------------------------------------------------- reproduce / registry
@pytest.fixture
def registry(monkeypatch):
    """Isolated experiment registry (the real one is restored after the test)."""
    monkeypatch.setattr(experiments, "EXPERIMENTS", {})
    monkeypatch.setattr(experiments, "_IMPORTED", {})
    monkeypatch.setattr(experiments, "_LAZY", dict(experiments._LAZY))
    return experiments


def test_reproduce_list_shows_faceoff_ids(capsys):
    code, out, err = _run(capsys, "reproduce", "--list")
    assert code == 0, err
    for exp_id in FACEOFF_IDS:
        line = next(ln for ln in out.splitlines() if ln.startswith(exp_id))
        assert "available" in line  # "available" or "not available"


def test_missing_module_is_not_available(capsys, registry):
    registry._LAZY["ghost-fig9"] = registry._LazySpec(
        "cdlearn.experiments._no_such_module", "run_fig9", "A ghost", "nobody")
    status, title, detail = registry.experiment_status("ghost-fig9")
    assert status == "not available" and title == "A ghost" and "not written yet" in detail
    code, out, _ = _run(capsys, "reproduce", "--list")
    assert code == 0 and re.search(r"ghost-fig9\s+not available", out)
    code, _, err = _run(capsys, "reproduce", "ghost-fig9")
    assert code == 1 and "not available" in err and err.count("\n") == 1


def _write_module(tmp_path, name, body):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))


def test_broken_module_does_not_break_the_cli(capsys, registry, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_module(tmp_path, "cdl_broken_exp", "raise RuntimeError('boom at import')\n")
    registry._LAZY["broken-x"] = registry._LazySpec("cdl_broken_exp", "run_x", "Broken", "p")
    status, _, detail = registry.experiment_status("broken-x")
    assert status == "not available" and "boom at import" in detail
    code, out, _ = _run(capsys, "reproduce", "--list")
    assert code == 0 and "broken-x" in out and "faceoff-fig1" in out


def test_register_decorator_and_run_experiment(registry, tmp_path):
    calls = []

    @registry.register("toy-fig1", title="Toy figure", paper="Nobody (2024)")
    def run_fig1(out_dir: Path, full: bool) -> Path:
        calls.append((out_dir, full))
        (out_dir / "note.md").write_text("ok")
        return out_dir

    exp = registry.EXPERIMENTS["toy-fig1"]
    assert exp.title == "Toy figure" and exp.paper == "Nobody (2024)" and exp.run is run_fig1
    folder = registry.run_experiment("toy-fig1", tmp_path / "res", full=True)
    assert folder == tmp_path / "res" / "toy-fig1" and (folder / "note.md").read_text() == "ok"
    assert calls == [(folder, True)]
    assert "toy-fig1" in registry.experiment_ids()
    with pytest.raises(ValueError, match="unknown experiment 'nope'.*toy-fig1"):
        registry.run_experiment("nope")


def test_lazy_module_with_convention_function(capsys, registry, tmp_path, monkeypatch):
    """A module that only defines run_<name> (no register call) is found through _LAZY."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_module(tmp_path, "cdl_toy_exp", """
        from pathlib import Path

        def run_fig2(out_dir: Path, full: bool) -> Path:
            (out_dir / "result.csv").write_text("full\\n" + str(full) + "\\n")
            return out_dir
    """)
    registry._LAZY["toy-fig2"] = registry._LazySpec("cdl_toy_exp", "run_fig2", "Toy 2", "p")
    assert registry.experiment_status("toy-fig2")[0] == "available"
    code, out, err = _run(capsys, "reproduce", "toy-fig2", "-o", tmp_path / "out")
    assert code == 0, err
    assert (tmp_path / "out" / "toy-fig2" / "result.csv").read_text() == "full\nFalse\n"
    assert "result.csv" in out


def test_register_experiment_object(registry, tmp_path):
    exp = registry.Experiment("obj-1", "Object", "paper", lambda out, full: out, "desc")
    assert registry.register(exp) is exp
    assert registry.get_experiment("obj-1") is exp
    with pytest.raises(TypeError):
        registry.register("")
