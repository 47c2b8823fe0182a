"""The ``cdlearn`` command.

Subcommands (``cdlearn SUBCOMMAND --help`` for each):

* ``fit DATA``        fit one model, print the trace as it runs, save the model as JSON;
* ``predict MODEL DATA``  accuracy (classification) or RMSE (regression) of a saved model;
* ``compare DATA``    several solvers x samplings on one problem: table, CSV, PNG;
* ``faceoff DATA``    the face-off quantities C_P, C_D, T_P, T_D (and measured runs);
* ``reproduce ID``    re-run a table or figure of a paper (``--list`` shows them);
* ``demo``            offline tour on data shipped with scikit-learn; writes a report.

``DATA`` is a path to a LIBSVM/svmlight file (plain, .gz, .bz2, .xz) or a
registered dataset name (see ``cdlearn.datasets.libsvm.DATASETS``).

Exit codes (the same for every subcommand; docs/guide/cli.md):

* 0: done (also ``--help``, ``--version``, and output cut short by a closed pipe);
* 1: error: missing, unreadable or invalid data (with the line number), an
  unknown dataset name, an invalid model file, labels that do not fit the loss,
  a problem no solver serves, not enough memory;
* 2: usage: the command line cannot be parsed (unknown option or subcommand,
  bad number, missing argument);
* 130: interrupted (Ctrl-C / SIGINT). ``fit`` writes the best iterate reached
  to its model file, marked ``"interrupted": true``; the other subcommands stop
  at once and keep only what they had printed or written before.

Errors are one line on stderr, ``cdlearn: error: ...``, never a traceback
(``--debug`` shows it instead).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np

__all__ = ["main", "build_parser"]

MODEL_FORMAT = "cdlearn-linear-model/1"


# =========================================================================== errors
class UsageError(Exception):
    """A command-line usage error (exit code 2)."""


class Interrupted(BaseException):
    """SIGINT in a subcommand that stops at once.

    Not a KeyboardInterrupt: ``solve`` catches those to return its best
    iterate, and a command running several solves would go on to the next.
    """


EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Sigint:
    """SIGINT handler for one command: counts the interrupts, then raises.

    Once ``soft`` is set (``fit``, from its first solver callback on), the
    first interrupt only counts: the callback then stops the solve, which
    returns its best iterate, and ``fit`` saves it. An exception raised by the
    handler could land inside a numba dispatcher call, which turns it into a
    SystemError the solver does not catch. A second interrupt raises.
    """

    def __init__(self, keep: bool):
        self.keep, self.count, self.soft = keep, 0, False

    def __call__(self, signum, frame):
        self.count += 1
        if self.soft and self.count == 1:
            return
        raise KeyboardInterrupt if self.keep else Interrupted

    def stop_callback(self, inner=None):
        """A ``solve`` callback: runs ``inner``, stops the solve after an interrupt."""

        def callback(state) -> bool:
            self.soft = True
            stop = bool(inner(state)) if inner is not None else False
            return stop or self.count > 0

        return callback

    @contextlib.contextmanager
    def installed(self):
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.signal(signal.SIGINT, self)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line (raised, printed by :func:`main`)."""

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, FileNotFoundError) and exc.filename and str(exc.filename) not in text:
        text = f"{text}: {exc.filename}"
    return text


# =========================================================================== arg types
def _float(kind):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if kind == "positive" and value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        if kind == "unit" and not 0 <= value <= 1:
            raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
        return value

    parse.__name__ = f"{kind} number"
    return parse


def _int(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def _names(allowed, what):
    def parse(text: str) -> list[str]:
        items = [s.strip() for s in text.split(",") if s.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {what}")
        bad = [s for s in items if s not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {', '.join(map(repr, bad))} (choose from {', '.join(allowed)})"
            )
        return list(dict.fromkeys(items))

    parse.__name__ = f"list of {what}"
    return parse


def _choices():
    from .api import SAMPLINGS
    from .losses import LOSS_CODES
    from .penalties import PENALTIES
    from .solvers import SOLVERS

    return tuple(LOSS_CODES), tuple(PENALTIES), tuple(SOLVERS), tuple(SAMPLINGS)


# =========================================================================== parser
def _add_data_arguments(parser):
    from .datasets.libsvm import MAX_BYTES

    parser.add_argument("data", metavar="DATA",
                        help="LIBSVM/svmlight file (plain, .gz, .bz2, .xz) or a registered "
                             "dataset name (a9a, w8a, mushrooms, leu, news20, ...)")
    parser.add_argument("--data-home", metavar="DIR",
                        help="cache directory of named datasets (default: $CDLEARN_DATA or "
                             "~/.cache/cdlearn)")
    parser.add_argument("--max-bytes", type=_int(1), default=MAX_BYTES, metavar="N",
                        help=f"refuse data larger than N bytes once decompressed "
                             f"(default: {MAX_BYTES} = 8 GiB)")


def build_parser() -> argparse.ArgumentParser:
    losses, penalties, solvers, samplings = _choices()

    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback on errors (for developers)")

    data = _Parser(add_help=False)
    _add_data_arguments(data)
    data.add_argument("--compact-features", action="store_true",
                      help="drop the feature ids no sample uses and renumber the others "
                           "(fit saves the map in the model; predict applies it)")

    problem = _Parser(add_help=False)
    problem.add_argument("--loss", choices=losses, default="logistic",
                         help="loss φ (default: logistic; labels are mapped to ±1)")
    problem.add_argument("--penalty", choices=[p for p in penalties if p != "group_l2"],
                         default="l2",
                         help="penalty g (default: l2)")
    reg = problem.add_mutually_exclusive_group()
    reg.add_argument("--lam", type=_float("positive"),
                     help="regularisation λ of P(w) = 1/n Σ φ + λ g(w) (default: 1/n)")
    reg.add_argument("--C", dest="C", type=_float("positive"),
                     help="scikit-learn's C instead of λ: λ = 1/(C n)")
    problem.add_argument("--l1-ratio", type=_float("unit"), default=0.5,
                         help="ρ of the elastic net λ(ρ‖w‖₁ + (1-ρ)/2‖w‖²) (default: 0.5)")
    problem.add_argument("--intercept", action="store_true",
                         help="fit an unpenalised intercept")

    run = _Parser(add_help=False)
    run.add_argument("--tol", type=_float("positive"), default=1e-6,
                     help="stop when the duality gap <= tol * P(0) (default: 1e-6)")
    run.add_argument("--max-epochs", type=_int(1), default=1000,
                     help="maximum number of epochs (default: 1000)")
    run.add_argument("--seed", type=_int(0), default=0, help="random seed (default: 0)")

    parser = _Parser(
        prog="cdlearn",
        description="Coordinate descent solvers for regularized ERM: primal or dual CD, "
                    "importance sampling, and the face-off choice between them.",
        epilog="Run 'cdlearn demo' for an offline tour. 'cdlearn SUBCOMMAND --help' for details.",
        parents=[common],
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"cdlearn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")

    p = sub.add_parser("fit", parents=[common, data, problem, run],
                       help="fit one model and save it as JSON",
                       description="Fit a linear model by coordinate descent, print the "
                                   "trace as it runs and save the model as JSON.")
    p.add_argument("--solver", choices=("auto", *solvers), default="auto",
                   help="method (default: auto = ws-cd for l1, newton-cd for few features, else the "
                        "face-off choice between primal and dual CD)")
    p.add_argument("--sampling", choices=samplings, default=None,
                   help="coordinate sampling of primal or dual CD (default: the method's own; "
                        "giving one makes auto choose between primal and dual CD)")
    p.add_argument("--check-every", type=_int(1), default=1,
                   help="epochs between duality-gap checks (default: 1)")
    p.add_argument("-o", "--output", metavar="MODEL.json", default="model.json",
                   help="where to write the model (default: model.json)")
    p.add_argument("--progress", action="store_true",
                   help="show a progress bar instead of trace lines")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    cluster = p.add_argument_group(
        "on a Dask cluster (cdlearn.distributed.solve; needs cdlearn[distributed])")
    where = cluster.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="fit on the Dask scheduler at ADDRESS (e.g. tcp://host:8786)")
    where.add_argument("--local-workers", type=_int(1), metavar="N",
                       help="fit on a LocalCluster of N worker processes started for this fit")
    cluster.add_argument("--shards", type=_int(1), metavar="K",
                         help="shards of the data (default: one per worker)")
    cluster.add_argument("--method", choices=("auto", "cocoa+", "newton", "proxcocoa+"),
                         default="auto", help="distributed method (default: auto)")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("predict", parents=[common],
                       help="evaluate a saved model on data",
                       description="Print the accuracy (classification) or RMSE "
                                   "(regression) of a model written by 'cdlearn fit'.")
    p.add_argument("model", metavar="MODEL.json", help="model written by 'cdlearn fit'")
    _add_data_arguments(p)
    p.add_argument("-o", "--output", metavar="FILE",
                   help="also write one prediction per line to FILE")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("compare", parents=[common, data, problem, run],
                       help="compare solvers and samplings on one problem",
                       description="Run each solver x sampling on one problem, print a table "
                                   "and plot the relative suboptimality (P − P*)/P* vs passes "
                                   "and vs seconds.")
    p.add_argument("--solvers", type=_names(solvers, "solver"), default=["primal-cd", "dual-cd"],
                   help="comma-separated solvers (default: primal-cd,dual-cd)")
    p.add_argument("--samplings", type=_names(samplings, "sampling"),
                   default=["uniform", "importance"],
                   help="comma-separated samplings (default: uniform,importance)")
    p.add_argument("--reference", choices=("tight", "best"), default="tight",
                   help="P*: 'tight' continues the best run to a 1e-4 x smaller tolerance, "
                        "'best' takes the lowest primal value seen (default: tight)")
    p.add_argument("--plot", metavar="OUT.png", help="write the two-panel plot here")
    p.add_argument("--csv", metavar="OUT.csv", help="write all traces here (long format)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("faceoff", parents=[common, data],
                       help="primal or dual? the face-off complexity quantities",
                       description="Print C_P, C_D, K and T of Csiba & Richtárik's face-off "
                                   "for DATA, and the predicted winner. With --measure, also "
                                   "run primal-cd and dual-cd (importance sampling).")
    p.add_argument("--loss", choices=("logistic", "squared", "squared_hinge", "smooth_hinge"),
                   default="logistic", help="smooth loss (gives β; default: logistic)")
    p.add_argument("--lam", type=_float("positive"), help="λ of the L2 penalty (default: 1/n)")
    p.add_argument("--normalize", action="store_true",
                   help="divide X by its mean row norm first (the paper's §7)")
    p.add_argument("--measure", action="store_true",
                   help="also run both methods to --tol and print passes and seconds")
    p.add_argument("--tol", type=_float("positive"), default=1e-6,
                   help="gap tolerance of --measure (default: 1e-6)")
    p.add_argument("--max-epochs", type=_int(1), default=1000,
                   help="epoch limit of --measure (default: 1000)")
    p.add_argument("--seed", type=_int(0), default=0, help="random seed (default: 0)")
    p.set_defaults(func=cmd_faceoff)

    p = sub.add_parser("reproduce", parents=[common],
                       help="re-run a table or figure of a paper",
                       description="Re-run one experiment of the papers; writes CSV, PNG and "
                                   "a markdown note to DIR/ID/.")
    p.add_argument("id", metavar="ID", nargs="?", help="experiment ID (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("--full", action="store_true",
                   help="the paper's full sizes (slow) instead of the quick version")
    p.add_argument("--all", action="store_true",
                   help="run every experiment, then write the summary")
    p.add_argument("--summary", action="store_true",
                   help="write DIR/summary.md, the agreement table of the verdicts in DIR, "
                        "and print it")
    p.add_argument("-o", "--output", metavar="DIR", default=None,
                   help="output directory (default: ./cdlearn-results)")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("demo", parents=[common],
                       help="offline tour on scikit-learn data; writes a report",
                       description="Fit, compare primal vs dual CD x uniform vs importance "
                                   "sampling and run a Lasso on data shipped with "
                                   "scikit-learn (no network). Writes report.md, PNG plots "
                                   "and CSV traces.")
    p.add_argument("-o", "--output", metavar="DIR", default="cdlearn-demo",
                   help="report folder (default: ./cdlearn-demo)")
    p.add_argument("--quick", action="store_true", help="smaller problems (for tests)")
    p.add_argument("--seed", type=_int(0), default=0, help="random seed (default: 0)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("warmup", parents=[common],
                       help="compile the numba kernels of the common paths into the cache",
                       description="Fit tiny problems through every estimator's default "
                                   "method (dense and sparse) and primal/dual CD, so that "
                                   "later processes load the compiled kernels from numba's "
                                   "cache instead of compiling them (make install runs it).")
    p.add_argument("--only", metavar="TEXT",
                   help="only the paths whose label contains TEXT (e.g. 'Lasso (dense)')")
    p.set_defaults(func=cmd_warmup)
    return parser


# =========================================================================== main
def main(argv=None) -> int:
    """Entry point of the ``cdlearn`` command; returns the exit code."""
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    from .experiments import ExperimentUnavailableError

    debug = "--debug" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:
        _error_line("interrupted")
        return EXIT_INTERRUPTED
    except UsageError as exc:
        if debug:
            raise
        print(f"cdlearn: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    sigint = _Sigint(keep=args.command == "fit")
    args.sigint = sigint
    try:
        with sigint.installed(), _warnings_as_lines():
            return int(args.func(args) or 0)
    except UsageError as exc:
        if debug:
            raise
        print(f"cdlearn: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `cdlearn reproduce --list | head -1`
        _silence_stdout()
        return EXIT_OK
    except (KeyboardInterrupt, Interrupted):
        _error_line("interrupted")
        return EXIT_INTERRUPTED
    except (ValueError, TypeError, OSError, ArithmeticError, ExperimentUnavailableError) as exc:
        if debug:
            raise
        _error_line(f"error: {_one_line(exc)}")
        return EXIT_ERROR
    except MemoryError:
        if debug:
            raise
        _error_line("error: out of memory")
        return EXIT_ERROR
    except Exception as exc:  # a bug: still one line, and how to report it
        if _caused_by_interrupt(exc):  # the handler raised inside a numba call: SystemError
            _error_line("interrupted")
            return EXIT_INTERRUPTED
        if debug:
            raise
        _error_line(f"internal error: {type(exc).__name__}: {_one_line(exc)} (please report "
                    "it with the output of the same command with --debug)")
        return EXIT_ERROR


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (KeyboardInterrupt, Interrupted)):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _error_line(text: str) -> None:
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stdout.flush()
    print(f"cdlearn: {text}", file=sys.stderr, flush=True)


def _silence_stdout():
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


@contextlib.contextmanager
def _warnings_as_lines():
    """Show warnings as ``cdlearn: warning: ...`` lines (no file/line noise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("default")

        def show(message, category, filename, lineno, file=None, line=None):
            print(f"cdlearn: warning: {' '.join(str(message).split())}", file=sys.stderr)

        warnings.showwarning = show
        yield


def _say(*parts, **kw):
    print(*parts, **kw, flush=True)


# =========================================================================== data
def _load(data: str, loss: str, *, data_home=None, n_features=None, mapping=None,
          max_bytes=None, feature_ids=None):
    """Load DATA; for a classification loss map the labels to ±1.

    Returns ``(X, y, y_raw, mapping)``; ``mapping`` is None for regression, else
    ``{"negative": label, "positive": label}`` (original label values).
    ``feature_ids`` (a compacted model's map) selects and renumbers columns.
    """
    from .data import BINARY_LOSSES
    from .datasets.libsvm import DATASETS, load_binary, load_libsvm, select_features

    kw = {"progress": sys.stderr.isatty()}
    if data_home is not None:
        kw["cache_dir"] = data_home
    if n_features is not None and feature_ids is None:
        kw["n_features"] = int(n_features)
    if max_bytes is not None:
        kw["max_bytes"] = max_bytes
    info = DATASETS.get(data)
    if loss not in BINARY_LOSSES:
        X, y = load_libsvm(data, **kw)
        y_raw, mapping = y, None
    elif info is not None and info.task == "multiclass":
        X, y = load_binary(data, **kw)  # e.g. news20 binarized; raises for the others
        y_raw, mapping = y, {"negative": -1.0, "positive": 1.0,
                             "note": f"{data} binarized by cdlearn.datasets.load_binary"}
    else:
        X, y_raw = load_libsvm(data, **kw)
        y, mapping = _map_labels(y_raw, loss, mapping, data)
    if feature_ids is not None:
        X = select_features(X, feature_ids)
    return X, y, y_raw, mapping


#: Memory per feature of a fit, for the check before it starts: about 15
#: float64 arrays of length d (measured: `cdlearn fit` on 2 samples peaked
#: 1.06 GB higher at d = 10⁷ than at d = 10⁶, 118 bytes per feature).
BYTES_PER_FEATURE = 16 * 8


def _available_memory() -> int | None:
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    with contextlib.suppress(AttributeError, ValueError, OSError):
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return None


def _fit_data(args, loss):
    """Load DATA for fit/compare/faceoff: compact it if asked, check the memory of a fit.

    Returns ``(X, y, mapping, feature_ids)``; ``feature_ids`` is None unless
    ``--compact-features``.
    """
    from .datasets.libsvm import compact_features

    X, y, _, mapping = _load(args.data, loss, data_home=args.data_home,
                             max_bytes=args.max_bytes)
    ids = None
    if args.compact_features:
        d = X.shape[1]
        X, ids = compact_features(X)
        _say(f"--compact-features: {ids.size:,} of {d:,} feature ids are used")
    n, d = X.shape
    need = BYTES_PER_FEATURE * d
    available = _available_memory()
    too_big = available is not None and need > available
    used = d
    if too_big or d >= 1_000_000:  # O(nnz log nnz): only where it can matter
        used = int(np.unique(X.indices).size) if ids is None else ids.size
    if too_big:
        from .datasets.libsvm import format_bytes

        hint = (f"; only {used:,} feature ids are used: --compact-features renumbers them "
                "(the model keeps the map)" if used < d else "")
        raise InsufficientMemoryError(
            f"{args.data} has {d:,} features: a fit needs about {format_bytes(need)} for its "
            f"per-feature arrays ({BYTES_PER_FEATURE} bytes x {d:,}) and "
            f"{format_bytes(available)} of memory is available{hint}")
    if ids is None and d >= 1_000_000 and used < d // 10:
        warnings.warn(f"{args.data}: only {used:,} of {d:,} feature ids are used; "
                      "--compact-features would make the per-feature arrays that short",
                      UserWarning, stacklevel=2)
    return X, y, mapping, ids


class InsufficientMemoryError(ValueError):
    """Not enough memory for the requested fit (exit code 1, one line)."""


def _map_labels(y, loss, mapping, data):
    values = np.unique(y)
    shown = ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if values.size > 6 else "")
    if mapping is not None:
        neg, pos = float(mapping["negative"]), float(mapping["positive"])
        if not np.all(np.isin(values, (neg, pos))):
            raise ValueError(
                f"labels of {data} ({shown}) are not the model's classes {neg:g} / {pos:g}"
            )
    elif np.all(np.isin(values, (-1.0, 1.0))):
        neg, pos = -1.0, 1.0
    elif values.size == 2:
        neg, pos = float(values[0]), float(values[1])
    else:
        raise ValueError(
            f"labels of {data} do not fit loss={loss!r}: it needs 2 classes, found "
            f"{values.size} ({shown}); use --loss squared for a regression target"
        )
    return np.where(y == pos, 1.0, -1.0), {"negative": neg, "positive": pos}


def _lam(args, n: int) -> float:
    if getattr(args, "C", None) is not None:
        return 1.0 / (args.C * n)
    return args.lam if args.lam is not None else 1.0 / n


def _describe(X, data) -> str:
    nnz = X.nnz if hasattr(X, "nnz") else int(np.count_nonzero(X))
    n, d = X.shape
    return f"{data}: n={n:,} samples, d={d:,} features, nnz={nnz:,} ({100 * nnz / max(n * d, 1):.3g}%)"


# =========================================================================== fit
class _TracePrinter:
    """Callback printing one trace line per check (log-spaced epochs, or every 0.5 s)."""

    header = f"{'epoch':>7} {'passes':>9} {'seconds':>9} {'primal':>16} {'gap':>10} {'nnz_w':>8}"

    def __init__(self):
        self.last_epoch = 0
        self.last_time = -1.0

    def line(self, epoch, passes, seconds, primal, gap, nnz):
        _say(f"{epoch:>7d} {passes:>9.2f} {seconds:>9.3f} {primal:>16.10g} {gap:>10.3e} "
             f"{nnz:>8d}")
        self.last_epoch, self.last_time = epoch, seconds

    def __call__(self, state) -> bool:
        e = state.epoch
        step = 10 ** int(math.log10(e)) if e > 0 else 1
        if e <= 10 or e % step == 0 or state.seconds - self.last_time >= 0.5:
            self.line(e, state.passes, state.seconds, state.primal, state.gap,
                      int(np.count_nonzero(state.w)))
        return False

    def finish(self, trace):
        if len(trace) and int(trace["epoch"][-1]) != self.last_epoch:
            k = len(trace) - 1
            self.line(int(trace["epoch"][k]), trace["passes"][k], trace["seconds"][k],
                      trace["primal"][k], trace["gap"][k], int(trace["nnz_w"][k]))


def resolve_solver(problem, solver: str, sampling: str | None) -> tuple[str, str]:
    """The method ``solve(problem, solver=solver, sampling=sampling)`` runs, and why.

    ``fit`` announces this and then runs exactly it (passing the method, not
    "auto", to ``solve``): what is printed is what runs.
    """
    from .api import auto_solver, cd_options_requested

    if solver != "auto":
        return solver, "requested"
    return auto_solver(problem, cd_options=cd_options_requested({"sampling": sampling}))


def cmd_fit(args) -> int:
    from . import __version__
    from .api import make_problem
    from .compile_stats import CompileRecorder
    from .multiclass import solve
    from .solvers.base import initial_primal

    X, y, mapping, feature_ids = _fit_data(args, args.loss)
    n = X.shape[0]
    lam = _lam(args, n)
    problem = make_problem(X, y, loss=args.loss, penalty=args.penalty, lam=lam,
                           l1_ratio=args.l1_ratio, fit_intercept=args.intercept)
    p0 = initial_primal(problem)
    on_cluster = args.scheduler is not None or args.local_workers is not None
    if on_cluster:
        solver, reason = _distributed_method(args, X, lam)
    else:
        solver, reason = resolve_solver(problem, args.solver, args.sampling)
    if args.solver == "auto" and not on_cluster:
        from .solvers import SOLVERS

        try:
            SOLVERS[solver].check(problem)
        except ValueError:
            raise ValueError(
                f"no method serves --loss {args.loss} with --penalty {args.penalty}: auto "
                f"would run {solver} ({reason}), which does not support this penalty"
            ) from None
    if not args.quiet:
        _say(_describe(X, args.data))
        if mapping is not None:
            _say(f"labels: {mapping['negative']:g} -> -1, {mapping['positive']:g} -> +1")
        _say(f"problem: loss={args.loss}, penalty={args.penalty}, lam={lam:.6g}"
             + (f", l1_ratio={args.l1_ratio:g}" if args.penalty == "elastic_net" else "")
             + (", intercept" if args.intercept else ""))
        if on_cluster:
            where = args.scheduler or f"{args.local_workers} local worker processes"
            _say(f"distributed: {args.method} -> {solver} on {where} ({reason})")
        elif args.solver == "auto":
            _say(f"solver: auto -> {solver} ({reason})")
        else:
            _say(f"solver: {solver}")
        _say(f"target: duality gap <= tol * P(0) = {args.tol:g} * {p0:.6g} = {args.tol * p0:.3g}")
    printer = None if (args.quiet or args.progress) else _TracePrinter()
    if printer is not None:
        _say(printer.header)
    with CompileRecorder() as compiling:
        if on_cluster:
            res = _fit_distributed(args, X, y, lam, args.sigint.stop_callback(printer))
        else:
            res = solve(X, y, loss=args.loss, penalty=args.penalty, lam=lam,
                        l1_ratio=args.l1_ratio, solver=solver, sampling=args.sampling,
                        tol=args.tol, max_epochs=args.max_epochs, seed=args.seed,
                        fit_intercept=args.intercept,
                        callback=args.sigint.stop_callback(printer),
                        verbose=bool(args.progress and not args.quiet),
                        check_every=args.check_every)
    interrupted = args.sigint.count > 0
    if printer is not None:
        printer.finish(res.trace)
    model = {
        "format": MODEL_FORMAT,
        "cdlearn_version": __version__,
        "data": str(args.data),
        "task": "regression" if mapping is None else "classification",
        "n_samples": int(n),
        "n_features": int(X.shape[1]),
        "feature_ids": None if feature_ids is None else [int(i) for i in feature_ids],
        "coef": [float(v) for v in res.w],
        "intercept": float(res.intercept),
        "label_mapping": mapping,
        "loss": args.loss,
        "penalty": args.penalty,
        "lam": float(lam),
        "l1_ratio": float(args.l1_ratio),
        "settings": {
            "solver": args.solver, "sampling": args.sampling, "tol": args.tol,
            "max_epochs": args.max_epochs, "seed": args.seed, "fit_intercept": args.intercept,
            "check_every": args.check_every, "C": getattr(args, "C", None),
        },
        "solver": res.solver,
        "solver_reason": reason,
        "converged": bool(res.converged),
        "interrupted": interrupted,
        "message": ("interrupted (SIGINT): the best iterate reached" if interrupted
                    else res.message),
        "n_epochs": int(res.n_epochs),
        "passes": float(res.passes),
        "seconds": float(res.seconds),
        "compile_seconds": float(compiling.seconds),
        "primal": float(res.primal),
        "dual": None if res.dual is None else float(res.dual),
        "gap": float(res.gap),
        "p0": float(p0),
        "nnz_w": int(np.count_nonzero(res.w)),
    }
    if on_cluster:
        model["distributed"] = {
            "scheduler": args.scheduler, "local_workers": args.local_workers,
            "n_shards": res.info["n_shards"], "method": res.solver, "rounds": res.info["rounds"],
            "bytes_up": int(res.trace["bytes_up"][-1]),
            "bytes_down": int(res.trace["bytes_down"][-1]),
            "restarted_shards": res.info["restarted_shards"],
        }
    out = _write_atomic(args.output, json.dumps(model, indent=1) + "\n")
    status = "converged" if res.converged else "NOT converged"
    _say(f"{res.solver}: {status} after {res.n_epochs} epochs ({res.passes:.1f} passes, "
         f"{res.seconds:.3g} s{_compile_note(compiling)}): primal={res.primal:.10g}, "
         f"gap={res.gap:.3g}, nnz(w)={model['nnz_w']}/{X.shape[1]}")
    _say(f"model written to {out}")
    if interrupted:
        _error_line(f"interrupted: {out} holds the best iterate reached (epoch "
                    f"{res.n_epochs}, gap {res.gap:.3g}; not converged, \"interrupted\": true)")
        return EXIT_INTERRUPTED
    return EXIT_OK


def _distributed_method(args, X, lam):
    """``(method, reason)`` of ``cdlearn fit --scheduler/--local-workers``."""
    from .distributed import choose_method
    from .penalties import penalty_strengths

    if args.solver != "auto" or args.sampling is not None:
        raise UsageError("--solver and --sampling choose single-machine methods; on a cluster "
                         "use --method")
    l1, l2 = penalty_strengths(args.penalty, lam, args.l1_ratio)
    return choose_method(args.method, args.loss, l1, l2, X.shape, args.intercept)


def _fit_distributed(args, X, y, lam, callback):
    """The fit of ``cdlearn fit`` on a Dask scheduler or on N local worker processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise UsageError("--scheduler and --local-workers need Dask: "
                         "pip install 'cdlearn[distributed]'") from exc
    from .distributed import solve as distributed_solve

    with contextlib.ExitStack() as stack:
        if args.scheduler is not None:
            client = stack.enter_context(Client(args.scheduler, timeout="10s"))
        else:
            cluster = stack.enter_context(LocalCluster(
                n_workers=args.local_workers, processes=True, threads_per_worker=1,
                dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        try:
            return distributed_solve(
                X, y, loss=args.loss, penalty=args.penalty, lam=lam, l1_ratio=args.l1_ratio,
                client=client, n_shards=args.shards, method=args.method, tol=args.tol,
                max_rounds=args.max_epochs, seed=args.seed, fit_intercept=args.intercept,
                callback=callback, verbose=bool(args.progress and not args.quiet))
        except RuntimeError as exc:  # the cluster went away: one line, not a traceback
            raise ConnectionError(str(exc)) from exc


def _compile_note(compiling) -> str:
    """What numba compiled during a fit (an empty cache), apart from the solve time."""
    if not compiling.compiled:
        return ""
    return (f" + {compiling.seconds:.3g} s compiling {len(compiling.compiled)} numba "
            f"functions, cached for next time")


def _write_atomic(path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file: never half a file."""
    out = Path(path).expanduser()
    if out.parent != Path(""):
        out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return out


# =========================================================================== predict
#: A model file larger than this is refused before it is parsed.
MAX_MODEL_BYTES = 1 << 31


def _read_model(path) -> dict:
    """Read and validate a model written by ``cdlearn fit``; ValueError says what is wrong."""
    from .losses import LOSS_CODES

    path = Path(path).expanduser()
    if path.is_file() and path.stat().st_size > MAX_MODEL_BYTES:
        raise ValueError(f"{path} is not a cdlearn model (larger than {MAX_MODEL_BYTES:,} bytes)")
    try:
        model = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not a cdlearn model (not UTF-8 text: {exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a cdlearn model (invalid JSON: {exc})") from None
    except RecursionError:
        raise ValueError(f"{path} is not a cdlearn model (JSON nested too deeply)") from None
    if not isinstance(model, dict) or model.get("format") != MODEL_FORMAT:
        raise ValueError(f"{path} is not a cdlearn model (expected format {MODEL_FORMAT!r})")
    missing = [k for k in ("coef", "intercept", "n_features", "loss", "task", "label_mapping")
               if k not in model]
    if missing:
        raise ValueError(f"{path} is not a complete cdlearn model: missing {', '.join(missing)}")

    def bad(what):
        return ValueError(f"{path}: invalid model: {what}")

    n_features = model["n_features"]
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 0:
        raise bad(f"n_features must be a non-negative integer, got {n_features!r:.60}")
    coef = model["coef"]
    if not isinstance(coef, list) or len(coef) != n_features:
        raise bad(f"coef must be a list of n_features = {n_features} numbers")
    if not all(_is_number(v) for v in coef) or not _is_number(model["intercept"]):
        raise bad("coef and intercept must be numbers")
    if not (np.all(np.isfinite(np.asarray(coef, dtype=np.float64)))
            and math.isfinite(model["intercept"])):
        raise bad("coef or intercept contains NaN or infinity")
    if model["loss"] not in LOSS_CODES:
        raise bad(f"unknown loss {model['loss']!r:.60} (known: {', '.join(LOSS_CODES)})")
    if model["task"] not in ("classification", "regression"):
        raise bad(f"task must be 'classification' or 'regression', got {model['task']!r:.60}")
    if model["task"] == "classification":
        mapping = model["label_mapping"]
        if not (isinstance(mapping, dict) and all(
                _is_number(mapping.get(k)) and math.isfinite(mapping[k])
                for k in ("negative", "positive"))):
            raise bad("a classification model needs a label_mapping with finite numbers "
                      "'negative' and 'positive'")
    ids = model.get("feature_ids")
    if ids is not None:
        if not (isinstance(ids, list) and len(ids) == n_features
                and all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            raise bad(f"feature_ids must be a list of n_features = {n_features} integers")
        arr = np.asarray(ids, dtype=np.int64) if ids else np.zeros(0, np.int64)
        if arr.size and (arr[0] < 0 or np.any(np.diff(arr) <= 0)):
            raise bad("feature_ids must be sorted, unique and non-negative")
    return model


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def decision_function(model: dict, X) -> np.ndarray:
    """``X @ coef + intercept`` for a model dict written by ``cdlearn fit``."""
    coef = np.asarray(model["coef"], dtype=np.float64)
    if X.shape[1] != coef.size:
        raise ValueError(f"data has {X.shape[1]} features, the model {coef.size}")
    return np.asarray(X @ coef).ravel() + float(model["intercept"])


def cmd_predict(args) -> int:
    model = _read_model(args.model)
    n_features = int(model["n_features"])
    mapping = model.get("label_mapping")
    classify = model.get("task") == "classification"
    X, y, _, _ = _load(args.data, model["loss"], data_home=args.data_home,
                       n_features=n_features, mapping=mapping, max_bytes=args.max_bytes,
                       feature_ids=model.get("feature_ids"))
    z = decision_function(model, X)
    if classify:
        pred = np.where(z > 0, 1.0, -1.0)
        acc = float(np.mean(pred == y))
        _say(f"accuracy: {acc:.6f} ({int(np.sum(pred == y))}/{y.size} correct) on {args.data}")
        labels = np.where(pred > 0, mapping["positive"], mapping["negative"])
    else:
        rmse = float(np.sqrt(np.mean((z - y) ** 2)))
        _say(f"rmse: {rmse:.6g} on {y.size} samples of {args.data}")
        labels = z
    if args.output:
        np.savetxt(args.output, labels, fmt="%.10g")
        _say(f"predictions written to {args.output}")
    return 0


# =========================================================================== compare
def run_variants(X, y, *, loss, penalty, lam, variants, l1_ratio=0.5, tol=1e-6,
                 max_epochs=1000, seed=0, fit_intercept=False, echo=None):
    """Solve one problem with each ``(solver, sampling)``; ``{label: SolveResult}``.

    A variant the solver cannot serve (e.g. dual CD for an L1 penalty) is skipped
    with a warning; a ValueError is raised when none can run.
    """
    from .multiclass import solve

    results, reasons = {}, []
    for solver, sampling in variants:
        label = f"{solver} / {sampling}"
        try:
            res = solve(X, y, loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                        solver=solver, sampling=sampling, tol=tol, max_epochs=max_epochs,
                        seed=seed, fit_intercept=fit_intercept, check_every=1)
        except ValueError as exc:
            if "not support" not in str(exc) and "available" not in str(exc):
                raise
            reasons.append(f"{label}: {exc}")
            warnings.warn(f"skipping {label}: {exc}", UserWarning, stacklevel=2)
            continue
        results[label] = res
        if echo is not None:
            echo(f"  {label:<26} {res.n_epochs:>5} epochs {res.passes:>8.1f} passes "
                 f"{res.seconds:>8.3f} s  gap {res.gap:.2e}")
    if not results:
        raise ValueError("no solver could run: " + "; ".join(reasons))
    return results


def reference_primal(X, y, results, *, loss, penalty, lam, l1_ratio=0.5, tol=1e-6,
                     max_epochs=1000, seed=0, fit_intercept=False, mode="tight") -> float:
    """``P*`` for suboptimality plots.

    ``mode="best"``: the lowest primal value any run saw. ``mode="tight"``: also
    continue the run with the smallest final gap, warm-started from its iterate,
    to a tolerance 10⁴ times smaller (floored at 1e-13), and take the minimum.
    """
    from .multiclass import solve
    from .report import reference_value

    extra = []
    if mode == "tight":
        best = min(results.values(), key=lambda r: r.gap)
        start = {"w0": best.w} if best.solver == "primal-cd" else (
            {"alpha0": best.alpha} if best.alpha is not None else {})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = solve(X, y, loss=loss, penalty=penalty, lam=lam, l1_ratio=l1_ratio,
                        solver=best.solver, sampling="importance" if best.solver == "dual-cd"
                        else "cyclic", tol=max(tol * 1e-4, 1e-13), max_epochs=max_epochs,
                        seed=seed, fit_intercept=fit_intercept, intercept0=best.intercept,
                        **start)
        extra.append(ref.primal)
    return reference_value([r.trace for r in results.values()], *extra)


def cmd_compare(args) -> int:
    from .report import comparison_table, plot_comparison, traces_to_csv

    X, y, mapping, _ = _fit_data(args, args.loss)
    lam = _lam(args, X.shape[0])
    _say(_describe(X, args.data))
    _say(f"problem: loss={args.loss}, penalty={args.penalty}, lam={lam:.6g}, tol={args.tol:g}")
    variants = [(s, m) for s in args.solvers for m in args.samplings]
    kw = dict(loss=args.loss, penalty=args.penalty, lam=lam, l1_ratio=args.l1_ratio,
              tol=args.tol, max_epochs=args.max_epochs, seed=args.seed,
              fit_intercept=args.intercept)
    results = run_variants(X, y, variants=variants, echo=_say, **kw)
    f_star = reference_primal(X, y, results, mode=args.reference, **kw)
    _say(f"P* = {f_star:.12g} ({args.reference} reference)")
    _say(comparison_table(results, f_star))
    traces = {label: r.trace for label, r in results.items()}
    title = f"{Path(str(args.data)).name}: {args.loss} + {args.penalty}, λ = {lam:.3g}"
    if args.plot:
        _say(f"plot written to {plot_comparison(traces, f_star, args.plot, title=title)}")
    if args.csv:
        _say(f"traces written to {traces_to_csv(traces, args.csv, f_star)}")
    return 0


# =========================================================================== faceoff
def cmd_faceoff(args) -> int:
    from .faceoff import analyze

    X, y, _, _ = _fit_data(args, args.loss if args.measure else "squared")
    analysis = analyze(X, loss=args.loss, lam=args.lam, normalize=args.normalize)
    _say(f"data: {args.data}")
    _say(analysis.table())
    if not args.measure:
        return 0
    if analysis.normalized:
        X = X / analysis.scale
    nnz = max(analysis.nnz, 1)
    rows = {}
    for solver, predicted in (("primal-cd", analysis.T_P), ("dual-cd", analysis.T_D)):
        from .multiclass import solve

        res = solve(X, y, loss=args.loss, penalty="l2", lam=analysis.lam, solver=solver,
                    sampling="importance", tol=args.tol, max_epochs=args.max_epochs,
                    seed=args.seed)
        rows[solver] = (predicted, res)
    _say("")
    _say(f"measured: importance sampling, gap <= {args.tol:g} * P(0)")
    _say(f"{'method':<10}{'predicted T':>14}{'T/nnz':>10}{'epochs':>8}{'passes':>10}"
         f"{'seconds':>10}{'final gap':>11}  converged")
    for solver, (predicted, res) in rows.items():
        _say(f"{solver:<10}{predicted:>14.4g}{predicted / nnz:>10.4g}{res.n_epochs:>8d}"
             f"{res.passes:>10.1f}{res.seconds:>10.3f}{res.gap:>11.2e}  "
             f"{'yes' if res.converged else 'no'}")
    p, d = rows["primal-cd"][1], rows["dual-cd"][1]
    measured = p.passes / d.passes if d.passes > 0 else math.inf
    seconds = p.seconds / d.seconds if d.seconds > 0 else math.inf
    winner = "primal" if p.passes <= d.passes else "dual"
    _say(f"primal/dual: predicted T_P/T_D = {analysis.ratio:.4g}, measured passes ratio = "
         f"{measured:.4g}, seconds ratio = {seconds:.4g}")
    _say(f"predicted winner: {analysis.winner}; measured winner (passes): {winner}")
    return 0


# =========================================================================== reproduce
def cmd_reproduce(args) -> int:
    from .experiments import (
        DEFAULT_OUT_DIR,
        experiment_ids,
        experiment_status,
        run_all,
        run_experiment,
        write_summary,
    )

    if sum(map(bool, (args.list, args.all, args.summary, args.id))) > 1:
        raise UsageError("give one of ID, --list, --all or --summary")
    if args.summary:
        path = write_summary(DEFAULT_OUT_DIR if args.output is None else args.output)
        _say(path.read_text(encoding="utf-8").rstrip())
        return 0
    if args.all:
        path, failed = run_all(args.output, full=args.full, log=_say)
        _say(path.read_text(encoding="utf-8").rstrip())
        if failed:
            _error_line(f"error: {len(failed)} experiment(s) failed: {', '.join(failed)}")
            return EXIT_ERROR
        return 0
    if args.list:
        ids = experiment_ids()
        width = max(len(i) for i in ids)
        for exp_id in ids:
            status, title, detail = experiment_status(exp_id)
            _say(f"{exp_id:<{width}}  {status:<13}  {title}")
            if status != "available":
                _say(f"{'':<{width}}  {'':<13}  ({detail.split(': ', 1)[-1]})")
        return 0
    if not args.id:
        raise UsageError("give an experiment ID, --list, --all or --summary "
                         "(see 'cdlearn reproduce --help')")
    t0 = time.perf_counter()
    folder = run_experiment(args.id, args.output, full=args.full)
    _say(f"{args.id}: done in {time.perf_counter() - t0:.1f} s; results in {folder}")
    for f in sorted(folder.iterdir()):
        _say(f"  {f.name}")
    return 0


# =========================================================================== demo
def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), np.where(y == 1, 1.0, -1.0)


def _sparse_problem(n, d, density, seed, k=20):
    """Sparse random design with heavy-tailed feature frequencies and a planted model.

    Feature j appears with probability ∝ 1/(j+1)^0.8 (text-like: a few frequent
    features, many rare ones); values are N(0, 1). Returns ``X`` (CSR), ±1
    labels of a planted linear classifier, a regression target of a planted
    k-sparse model, and that model.
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    nnz = int(density * n * d)
    weights = 1.0 / np.arange(1, d + 1) ** 0.8
    cols = rng.choice(d, size=nnz, p=weights / weights.sum())
    rows = rng.integers(0, n, size=nnz)
    X = sp.csr_matrix((rng.standard_normal(nnz), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    X = X[:, rng.permutation(d)].tocsr()  # frequent features anywhere, not first
    X.sort_indices()
    w_true = np.zeros(d)
    # plant the model on the frequent features (a rare feature cannot be recovered)
    frequent = np.argsort(-np.diff(X.tocsc().indptr), kind="stable")[: max(5 * k, d // 20)]
    support = rng.choice(frequent, size=k, replace=False)
    w_true[support] = rng.choice([-1.0, 1.0], size=k) * rng.uniform(1, 3, size=k)
    margin = X @ w_true
    y_cls = np.where(margin + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    y_reg = margin + 0.1 * rng.standard_normal(n)
    return X, y_cls, y_reg, w_true


def cmd_warmup(args) -> int:
    from .warmup import warmup

    warmup(echo=_say, only=args.only)
    return 0


def cmd_demo(args) -> int:
    from .compile_stats import CompileRecorder

    with CompileRecorder() as compiling:
        run_demo(args.output, quick=args.quick, seed=args.seed, echo=_say)
    _say(f"numba compiled {len(compiling.compiled)} functions in {compiling.seconds:.1f} s "
         "(not counted in the solve times above; 'cdlearn warmup' fills the cache)")
    return 0


def run_demo(out_dir="cdlearn-demo", *, quick=False, seed=0, echo=print) -> Path:
    """The offline tour behind ``cdlearn demo``; returns the report folder."""
    from . import __version__
    from .compile_stats import CompileRecorder
    from .faceoff import analyze
    from .multiclass import solve
    from .report import (
        comparison_table,
        plot_comparison,
        traces_to_csv,
        write_markdown,
    )

    t_start = time.perf_counter()
    out = Path(out_dir).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    variants = [(s, m) for s in ("primal-cd", "dual-cd") for m in ("uniform", "importance")]
    tol = 1e-6 if quick else 1e-8
    sections = []

    def compare(name, X, y, title, *, loss, penalty, lam, variants):
        kw = dict(loss=loss, penalty=penalty, lam=lam, tol=tol, max_epochs=2000, seed=seed)
        results = run_variants(X, y, variants=variants, echo=echo, **kw)
        f_star = reference_primal(X, y, results, **kw)
        traces = {label: r.trace for label, r in results.items()}
        plot_comparison(traces, f_star, out / f"{name}.png", title=title)
        traces_to_csv(traces, out / f"{name}.csv", f_star)
        return results, f_star

    # ---------------------------------------------------------------- 1. breast cancer
    echo("[1/3] L2-regularised logistic regression on breast cancer (569 x 30, dense)")
    X, y = _breast_cancer()
    n = X.shape[0]
    lam = 1.0 / n
    with CompileRecorder() as compiling:
        res = solve(X, y, loss="logistic", penalty="l2", lam=lam, solver="auto", tol=tol,
                    seed=seed)
    acc = float(np.mean(np.where(X @ res.w > 0, 1.0, -1.0) == y))
    reason = res.info["reason"]
    echo(f"  solver='auto' chose {res.solver}: {reason}")
    compile_note = (f" (+ {compiling.seconds:.2f} s compiling {len(compiling.compiled)} "
                    "numba functions)" if compiling.compiled else "")
    echo(f"  {res.n_epochs} epochs, {res.seconds:.3f} s{compile_note}, gap {res.gap:.2e}, "
         f"training accuracy {acc:.4f}")
    analysis = analyze(X, loss="logistic", lam=lam)
    results, f_star = compare("breast_cancer_logistic", X, y,
                              "breast cancer (569 × 30, dense): logistic + L2, λ = 1/n",
                              loss="logistic", penalty="l2", lam=lam, variants=variants)
    fastest = min(results, key=lambda k: results[k].passes)
    sections.append((
        "1. Logistic regression on breast cancer (dense, n ≫ d)",
        f"Standardised features, labels benign = +1 / malignant = −1, "
        f"P(w) = 1/n Σ log(1 + exp(−y xᵀw)) + λ/2 ‖w‖², λ = 1/n = {lam:.4g}.\n\n"
        f"`cdlearn.solve(..., solver=\"auto\")` chose **{res.solver}**: {reason}. "
        f"It converged in {res.n_epochs} epochs ({res.seconds:.3f} s{compile_note}, "
        f"duality gap {res.gap:.2e}); training accuracy {acc:.4f}.\n\n"
        f"Face-off prediction (importance sampling): T_P/T_D = {analysis.ratio:.3g} → "
        f"**{analysis.winner}** wins. Measured, fewest passes: **{fastest}**.\n\n"
        f"P* = {f_star:.12g} (best run continued to a 10⁴× tighter tolerance).\n\n"
        + comparison_table(results, f_star)
        + "\n\n![breast cancer](breast_cancer_logistic.png)\n\n"
        "Traces: [breast_cancer_logistic.csv](breast_cancer_logistic.csv)",
    ))

    # ---------------------------------------------------------------- 2. sparse problem
    n, d, density = (400, 2000, 0.01) if quick else (2000, 10000, 0.003)
    echo(f"[2/3] L2-regularised logistic regression on a generated sparse problem "
         f"({n} x {d}, density {density:g})")
    X, y_cls, y_reg, w_true = _sparse_problem(n, d, density, seed)
    lam = 1.0 / n
    analysis = analyze(X, loss="logistic", lam=lam)
    res = solve(X, y_cls, loss="logistic", penalty="l2", lam=lam, solver="auto", tol=tol,
                seed=seed)
    echo(f"  solver='auto' chose {res.solver}: {res.info['reason']}")
    results, f_star = compare(
        "sparse_logistic", X, y_cls,
        f"generated sparse ({n} × {d}, nnz = {X.nnz:,}): logistic + L2, λ = 1/n",
        loss="logistic", penalty="l2", lam=lam, variants=variants)
    fastest = min(results, key=lambda k: results[k].passes)
    sections.append((
        "2. Logistic regression on a generated sparse problem",
        f"X is {n} × {d} CSR with {X.nnz:,} nonzeros (N(0, 1) values; feature j appears "
        f"with probability ∝ 1/j^0.8, like words in text); labels from a planted "
        f"20-sparse classifier (on frequent features) with noise; λ = 1/n = {lam:.4g}.\n\n"
        f"`solver=\"auto\"` chose **{res.solver}**: {res.info['reason']}.\n"
        f"Face-off prediction: **{analysis.winner}**; measured, fewest passes: "
        f"**{fastest}**."
        + ("" if fastest.startswith(analysis.winner) else
           " The face-off totals are worst-case bounds: they ignore the per-step cost "
           "of each method and how far the exact (Newton) dual step beats its bound.")
        + "\n\n"
        "```\n" + analysis.table() + "\n```\n\n"
        + comparison_table(results, f_star)
        + "\n\n![sparse logistic](sparse_logistic.png)\n\n"
        "Traces: [sparse_logistic.csv](sparse_logistic.csv)",
    ))

    # ---------------------------------------------------------------- 3. lasso
    echo("[3/3] Lasso (squared loss + L1) on the sparse design, primal CD")
    lam_max = float(np.max(np.abs(X.T @ y_reg))) / n
    lam = lam_max / 20
    results, f_star = compare(
        "sparse_lasso", X, y_reg,
        f"Lasso on the generated sparse design, λ = λ_max/20 = {lam:.3g}",
        loss="squared", penalty="l1", lam=lam,
        variants=[("primal-cd", m) for m in ("uniform", "importance", "cyclic")])
    best = min(results.values(), key=lambda r: r.primal)
    found = set(np.flatnonzero(best.w))
    true = set(np.flatnonzero(w_true))
    echo(f"  nnz(w) = {len(found)}; {len(found & true)}/{len(true)} of the planted "
         f"features selected")
    sections.append((
        "3. Lasso with primal CD",
        f"y = X w_true + noise with a 20-sparse w_true; P(w) = 1/(2n) ‖y − Xw‖² + λ‖w‖₁, "
        f"λ = λ_max/20 = {lam:.4g} (λ_max = ‖Xᵀy‖∞/n = {lam_max:.4g}). Dual CD does not "
        f"serve an L1 penalty; primal CD runs with three samplings.\n\n"
        f"Solution: {len(found)} nonzero coefficients, {len(found & true)} of the "
        f"{len(true)} planted features among them.\n\n"
        + comparison_table(results, f_star)
        + "\n\n![lasso](sparse_lasso.png)\n\n"
        "Traces: [sparse_lasso.csv](sparse_lasso.csv)",
    ))

    seconds = time.perf_counter() - t_start
    import numba
    import sklearn

    sections.insert(0, ("", (
        f"Generated by `cdlearn demo{' --quick' if quick else ''}` (cdlearn {__version__}, "
        f"numpy {np.__version__}, numba {numba.__version__}, scikit-learn "
        f"{sklearn.__version__}) in {seconds:.1f} s, seed {seed}. Every run stops when "
        f"the duality gap is ≤ {tol:g} · P(0). One pass = nnz(X) matrix entries touched; "
        "seconds exclude numba's compilation (an empty cache: `cdlearn warmup`). "
        "Plots show the relative suboptimality (P − P*)/P* (log scale) against passes "
        "and against wall-clock seconds; CSV files hold the full traces."
    )))
    report = write_markdown(out / "report.md", "cdlearn demo report", sections)
    echo(f"report written to {report} ({seconds:.1f} s); plots and CSV traces in {out}/")
    return out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
