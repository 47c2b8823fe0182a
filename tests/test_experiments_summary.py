"""The agreement table of the reproductions: run timing, ``--summary``, ``--all``.

The command line runs as a subprocess on two cheap IDs; the table's formatting
is checked on hand-written verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdlearn.experiments import (
    EXPERIMENTS,
    Experiment,
    experiment_ids,
    read_timing,
    run_all,
    run_experiment,
    summary_table,
    write_summary,
)
from cdlearn.experiments.verdict import write_verdict
from cdlearn.report import anchor

SRC = Path(__file__).resolve().parents[1] / "src"


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return subprocess.run([sys.executable, "-m", "cdlearn.cli", "reproduce", *map(str, args)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _table_rows(text):
    """{ID: [cells]} of the markdown table in ``text``."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells
    return rows


def _check_summary(folder, stdout, ids):
    """The printed and written table: one row per ID, cells from its verdict and timing."""
    text = (folder / "summary.md").read_text(encoding="utf-8")
    assert stdout.strip() == text.strip()
    rows = _table_rows(text)
    assert set(rows) == set(ids)
    for exp_id, cells in rows.items():
        verdict = json.loads((folder / exp_id / "verdict.json").read_text(encoding="utf-8"))
        # ID, claim, ours, verdict, reason, quick time, full time, mode
        assert cells[1] == verdict["claim"] and cells[2] == verdict["ours"], exp_id
        assert cells[3] == "agrees" and verdict["verdict"] == "agrees", exp_id
        seconds = read_timing(folder / exp_id)["quick"]["seconds"]
        assert 0 < seconds < 600
        assert cells[5] == f"{seconds:.0f} s" and cells[6] == "not run" and cells[7] == "quick"
    n = len(ids)
    assert f"{n} of {len(experiment_ids())} IDs: {n} agrees." in text
    assert "No verdict yet: " in text and "`rcdc-fig1`" in text
    return rows


def test_cli_runs_an_id_then_summary(tmp_path):
    # ascd-fig1 is the cheapest run (a few seconds): the simulated competitive ratio
    proc = _cli("ascd-fig1", "-o", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "verdict.json" in proc.stdout and "timing.json" in proc.stdout
    # a second ID's verdict from a hand-written file: the table holds both, sorted
    _verdict(tmp_path, "ascd-fig4", "agrees", seconds={"quick": {"seconds": 5.0}})
    proc = _cli("--summary", "-o", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    rows = _table_rows(text)
    assert list(rows) == ["ascd-fig1", "ascd-fig4"]
    # the steady state of the simulation against (28): "ρ − (28)" per T∞, all within 0.05
    ours = rows["ascd-fig1"][2]
    diffs = [float(v) for v in ours.split(": ")[1].split(";")[0].split(", ")]
    assert len(diffs) == 3 and max(map(abs, diffs)) <= 0.05
    assert rows["ascd-fig1"][3] == "agrees" and rows["ascd-fig4"][5] == "5 s"
    assert proc.stdout.strip() == text.strip()


@pytest.mark.slow
def test_cli_runs_two_ids_then_summary(tmp_path):
    for exp_id in ("ascd-fig4", "faceoff-fig1"):
        proc = _cli(exp_id, "-o", tmp_path, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    proc = _cli("--summary", "-o", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = _check_summary(tmp_path, proc.stdout, ("ascd-fig4", "faceoff-fig1"))
    # the numbers behind the two verdicts: Theorem 2.2's bound (13) is 4, Lemma 10's
    # threshold for n = 1000 is d* = n²/4 + n/2
    max_ratio = float(rows["ascd-fig4"][2].split("max ")[1].split(";")[0])
    assert 1 < max_ratio <= 4
    assert "d* = 250,500" in rows["faceoff-fig1"][2]


def test_cli_usage_errors(tmp_path, capsys):
    from cdlearn.cli import main

    assert main(["reproduce", "--summary", "-o", str(tmp_path)]) == 1
    assert "no */verdict.json under" in capsys.readouterr().err
    assert main(["reproduce", "--summary", "--all"]) == 2
    assert "give one of ID, --list, --all or --summary" in capsys.readouterr().err


def _verdict(folder, exp_id, verdict, *, reason="why", seconds=None, full=False):
    out = folder / exp_id
    out.mkdir(parents=True, exist_ok=True)
    write_verdict(out, exp_id=exp_id, claim=f"claim of {exp_id} | with a pipe", ours="0.5",
                  verdict=verdict, reason=reason, full=full, evidence="note.md#findings")
    if seconds is not None:
        (out / "timing.json").write_text(json.dumps(seconds), encoding="utf-8")


def test_summary_table_format(tmp_path):
    _verdict(tmp_path, "faceoff-fig2", "agrees", seconds={"quick": {"seconds": 12.4}})
    _verdict(tmp_path, "dgpd-fig1", "partly", reason="DGPD not fastest on news20",
             seconds={"quick": {"seconds": 30.0}, "full": {"seconds": 4000.0}}, full=True)
    _verdict(tmp_path, "ascd-fig3", "no data")
    text = summary_table(tmp_path, link_prefix="runs/")
    rows = _table_rows(text)
    assert list(rows) == ["ascd-fig3", "dgpd-fig1", "faceoff-fig2"]  # sorted by ID
    assert rows["faceoff-fig2"][1] == "claim of faceoff-fig2 \\| with a pipe"
    assert rows["faceoff-fig2"][3:] == ["agrees", "why", "12 s", "not run", "quick"]
    # anything but "agrees": bold verdict, reason linked to its evidence
    assert rows["dgpd-fig1"][3:] == [
        "**partly**", "DGPD not fastest on news20 ([evidence](runs/dgpd-fig1/note.md#findings))",
        "30 s", "67 min", "full"]
    # a quick verdict without timing.json: the quick run happened but was not timed
    assert rows["ascd-fig3"][3] == "**no data**" and rows["ascd-fig3"][5:7] == ["not timed", "not run"]
    assert "3 of" in text and "1 agrees, 1 partly, 1 no data." in text
    path = write_summary(tmp_path)
    assert path == tmp_path / "summary.md"
    assert "](dgpd-fig1/note.md#findings)" in path.read_text(encoding="utf-8")


def test_summary_without_verdicts(tmp_path):
    with pytest.raises(ValueError, match="no \\*/verdict.json under"):
        summary_table(tmp_path)


@pytest.fixture
def toy_experiments(monkeypatch):
    """Registers ``toy-ok`` (writes an "agrees" verdict) and ``toy-broken`` (raises);
    returns the list of ``full`` flags toy-ok was run with."""
    calls = []

    def ok(out_dir, full):
        calls.append(full)
        write_verdict(out_dir, exp_id="toy-ok", claim="c", ours="o", verdict="agrees",
                      reason="r", full=full)
        return out_dir

    def broken(out_dir, full):
        raise RuntimeError("solver diverged")

    monkeypatch.setitem(EXPERIMENTS, "toy-ok", Experiment("toy-ok", "t", "p", ok))
    monkeypatch.setitem(EXPERIMENTS, "toy-broken", Experiment("toy-broken", "t", "p", broken))
    return calls


def test_run_records_time_and_drops_a_stale_verdict(tmp_path, toy_experiments):
    calls = toy_experiments
    run_experiment("toy-ok", tmp_path)
    run_experiment("toy-ok", tmp_path, full=True)
    assert calls == [False, True]
    timing = read_timing(tmp_path / "toy-ok")
    assert set(timing) == {"quick", "full"} and timing["full"]["seconds"] >= 0
    # a verdict left by an earlier run does not survive a run that fails
    _verdict(tmp_path, "toy-broken", "agrees")
    path, failed = run_all(tmp_path, ids=["toy-broken", "toy-ok"])
    assert failed == {"toy-broken": "RuntimeError: solver diverged"}
    assert not (tmp_path / "toy-broken" / "verdict.json").exists()
    assert set(_table_rows(path.read_text(encoding="utf-8"))) == {"toy-ok"}


def test_cli_all_runs_every_id_then_summary(tmp_path, monkeypatch, capsys, toy_experiments):
    import cdlearn.experiments as experiments
    from cdlearn.cli import main

    monkeypatch.setattr(experiments, "experiment_ids", lambda: ["toy-broken", "toy-ok"])
    assert main(["reproduce", "--all", "--full", "-o", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "toy-broken: failed: RuntimeError: solver diverged" in out
    assert "toy-ok: done" in out
    assert "1 experiment(s) failed: toy-broken" in err
    rows = _table_rows((tmp_path / "summary.md").read_text(encoding="utf-8"))
    assert list(rows) == ["toy-ok"] and rows["toy-ok"][5:] == ["not run", "0 s", "full"]


def test_anchor_matches_heading_slugs():
    assert anchor("Checks against the paper's claims") == "checks-against-the-papers-claims"
    assert anchor("Paper vs ours") == "paper-vs-ours"
    assert anchor("Passes to reach a relative suboptimality (primal / dual)") == (
        "passes-to-reach-a-relative-suboptimality-primal--dual")


def test_docs_summary_page_points_links_at_the_notes_pages(tmp_path):
    docs = Path(__file__).resolve().parents[1] / "docs"
    sys.path.insert(0, str(docs))
    try:
        from _ext.results import SUMMARY, summary_page
    finally:
        sys.path.remove(str(docs))
    folder = tmp_path / Path(SUMMARY).parent
    _verdict(folder, "faceoff-fig3", "partly", reason="bounds hold")
    (folder / "faceoff-fig3" / "note.md").write_text("# note\n\n## Findings\n\nx\n")
    _verdict(folder, "dgpd-fig1", "no")  # its note.md is missing: the link is left alone
    write_summary(folder)
    page = summary_page(tmp_path)
    assert page.startswith("# Reproductions: agreement with the papers\n")
    assert ("bounds hold ([evidence](benchmarks-results-reproductions-faceoff-fig3-note.md"
            "#findings))") in page
    assert "([evidence](dgpd-fig1/note.md#findings))" in page
