"""CLI fuzz: malformed LIBSVM files through ``cdlearn fit`` and malformed model files
through ``cdlearn predict``, each case a process of its own.

Every case must end with exit code 0, 1 or 2, no traceback and only ``cdlearn: ...``
lines on stderr. A driver subprocess imports ``cdlearn.cli`` once and forks a child
per case that runs what ``python -m cdlearn.cli`` runs (``sys.exit(main())``, an
uncaught exception printed as a traceback, exit code 1): a fresh interpreter per case
spent ~3.5 s CPU importing numpy, scipy, numba and scikit-learn, most of the file's time. The cases are generated from a fixed seed: ``CDLEARN_FUZZ_CLI=N``
(default 30; ``make fuzz-cli`` runs 600) sets how many, ``CDLEARN_FUZZ_SEED`` the seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cdlearn

SRC = str(Path(cdlearn.__file__).resolve().parents[1])
N_CASES = int(os.environ.get("CDLEARN_FUZZ_CLI", "30"))
SEED = int(os.environ.get("CDLEARN_FUZZ_SEED", "20261125"))

VALID = [b"1 1:0.5 3:-1.25 4:2", b"-1 2:1 3:0.75", b"1 1:-0.5 2:0.25 4:1", b"-1 1:1 4:-2",
         b"1 2:-1 3:1.5", b"-1 1:0.125 2:0.5 3:-0.5 4:0.25"]


def _bad_line(rng) -> bytes:
    """One malformed (or unusual but valid) LIBSVM line."""
    kind = int(rng.integers(24))
    idx = int(rng.integers(1, 6))
    return [
        lambda: bytes(rng.integers(0, 256, size=int(rng.integers(1, 40)), dtype=np.uint8)),
        lambda: b"1 a:1 2:1",                                  # non-integer index
        lambda: b"1 -%d:1" % idx,                              # negative index
        lambda: b"-1 0:1 2:1",                                 # zero index (zero-based file)
        lambda: b"1 3:1 2:1",                                  # unsorted
        lambda: b"1 2:1 2:1",                                  # duplicate
        lambda: b"1 %d:1" % int(rng.choice([2**31 - 1, 2**31, 2**40, 10**30])),  # huge
        lambda: b"1 1e5:1",                                    # float index
        lambda: b"1 1:abc",                                    # non-numeric value
        lambda: b"1 1 2 3",                                    # missing colons
        lambda: b"1 1:1 trailing garbage",
        lambda: b"-1 1:1 2:2\r",                               # CRLF
        lambda: b"# a comment line",
        lambda: b"1 1:1 # inline comment 5:x",
        lambda: b"abc 1:1",                                    # non-numeric label
        lambda: b"%s 1:1" % rng.choice([b"nan", b"inf", b"-inf", b"NaN"]),
        lambda: b"1 %d:%s" % (idx, rng.choice([b"nan", b"inf", b"-Infinity", b"1e999"])),
        lambda: b"1 " + b" ".join(b"%d:1" % j for j in range(1, 3000)),  # long line
        lambda: b"1 1:1\x00 2:1",                             # NUL byte
        lambda: b"1 qid:3 1:1",
        lambda: b"1 1:2:3",
        lambda: "1 1:1 2:ü".encode(),
        lambda: b"   ",
        lambda: b"1 %d:1e308 %d:-1e308" % (idx, idx + 1),
    ][kind]()


def _libsvm_case(rng) -> bytes:
    lines = [VALID[int(i)] for i in rng.integers(0, len(VALID), size=int(rng.integers(0, 6)))]
    for _ in range(int(rng.integers(1, 4))):
        lines.insert(int(rng.integers(0, len(lines) + 1)), _bad_line(rng))
    text = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
    if rng.random() < 0.15:
        text = b"\xef\xbb\xbf" + text  # UTF-8 BOM
    if rng.random() < 0.15:
        text = text.replace(b"\n", b"\r\n")
    return text


GOOD_MODEL = {"format": "cdlearn-linear-model/1", "coef": [0.5, -1.0, 0.25, 2.0],
              "intercept": 0.1, "n_features": 4, "loss": "logistic", "task": "classification",
              "label_mapping": {"negative": -1.0, "positive": 1.0}}
ODD_VALUES = [None, "", "x", [], {}, [[1]], True, -1, 0, 2**70, 1e308, float("nan"),
              float("inf"), [float("nan")] * 4, [1, 2], ["a"] * 4, {"negative": "a"},
              [1, 2, 3, 4, 5]]


def _model_case(rng) -> bytes:
    kind = int(rng.integers(6))
    model = dict(GOOD_MODEL)
    if kind == 0:
        model.pop(list(model)[int(rng.integers(len(model)))])
    elif kind in (1, 2):
        key = list(model)[int(rng.integers(len(model)))]
        model[key] = ODD_VALUES[int(rng.integers(len(ODD_VALUES)))]
    elif kind == 3:
        depth = int(rng.choice([10, 1000, 100_000]))
        return b"[" * depth + b"]" * depth
    text = json.dumps(model).encode()
    if kind == 4:
        return text[: int(rng.integers(0, len(text)))]
    if kind == 5:
        pos = int(rng.integers(0, len(text)))
        return text[:pos] + bytes(rng.integers(0, 256, size=8, dtype=np.uint8)) + text[pos:]
    return text


def _cases():
    rng = np.random.default_rng(SEED)
    n_model = N_CASES // 3
    return ([("libsvm", i, _libsvm_case(rng)) for i in range(N_CASES - n_model)]
            + [("model", i, _model_case(rng)) for i in range(n_model)])


#: reads ``[argv, cwd]`` JSON lines; runs each in a fork with stderr to ``cwd/stderr.txt``
#: (stdout discarded, SIGALRM ends a hung case after 300 s); replies with the exit code
DRIVER = r"""
import json, os, signal, sys, traceback
import cdlearn.cli
import cdlearn.datasets.libsvm
import sklearn.datasets  # the LIBSVM reader imports it on first use
print("ready", flush=True)
for line in sys.stdin:
    argv, cwd = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(cwd)
            os.dup2(os.open(os.path.join(cwd, "stderr.txt"), os.O_WRONLY | os.O_CREAT), 2)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            signal.alarm(300)
            sys.argv = ["cdlearn", *argv]
            try:
                raise SystemExit(cdlearn.cli.main())
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
            except BaseException:
                traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
"""


@pytest.fixture(scope="module")
def run_cli(tmp_path_factory):
    """``run_cli(argv, cwd) -> (exit code, stderr)``: one forked ``cdlearn`` process."""
    err = tmp_path_factory.mktemp("driver") / "stderr.txt"
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with open(err, "wb") as err_file:
        proc = subprocess.Popen([sys.executable, "-c", DRIVER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err_file, env=env, text=True)
    try:
        assert proc.stdout.readline() == "ready\n", err.read_text()
        assert err.read_text() == ""  # importing the CLI prints nothing

        def run(argv, cwd):
            proc.stdin.write(json.dumps([list(map(str, argv)), str(cwd)]) + "\n")
            proc.stdin.flush()
            code = int(proc.stdout.readline())
            return code, (Path(cwd) / "stderr.txt").read_bytes()

        yield run
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.mark.parametrize("kind, i, payload", _cases(), ids=lambda v: str(v)[:12])
def test_cli_fuzz(tmp_path, run_cli, kind, i, payload):
    data = tmp_path / "data.svm"
    if kind == "libsvm":
        data.write_bytes(payload)
        argv = ["fit", data, "-q", "--max-epochs", "20", "-o", tmp_path / "m.json"]
    else:
        data.write_bytes(b"\n".join(VALID) + b"\n")
        (tmp_path / "m.json").write_bytes(payload)
        argv = ["predict", tmp_path / "m.json", data]
    returncode, stderr = run_cli(argv, tmp_path)
    err = stderr.decode("utf-8", "replace")
    context = f"case {kind} {i}: payload {payload[:300]!r}\nstderr: {err}"
    assert returncode in (0, 1, 2), context
    assert "Traceback" not in err and "internal error" not in err, context
    assert all(line.startswith("cdlearn: ") for line in err.splitlines()), context
    if returncode == 0 and kind == "libsvm":
        model = json.loads((tmp_path / "m.json").read_text())
        assert np.all(np.isfinite(model["coef"])), context
    if returncode != 0:
        assert err.splitlines()[-1].startswith("cdlearn: error: "), context
