"""pytest plugin: scikit-learn's own tests with cdlearn's estimators substituted.

Loaded by ``python -m tests_sklearn`` (``-p tests_sklearn.plugin``). Before the
test modules are imported, every non-test module of scikit-learn is imported
(so scikit-learn's own code keeps its own classes), then the public names of
:data:`SUBSTITUTES` in ``sklearn.linear_model`` / ``sklearn.svm`` are replaced by
cdlearn's: the test modules' ``from sklearn.linear_model import Lasso``, their
parametrize lists and their ``linear_model.Lasso`` all get cdlearn's class.

Each test is then classified (:func:`classify`): which substitutes it used
(recorded when the test constructs one, or calls a substituted function),
passed / failed / not offered (cdlearn has no such parameter: the name is
recorded) / skipped by scikit-learn; tests matching :data:`NOT_APPLICABLE` are
not run. The raw outcomes go to the JSON file of ``--sklearn-outcomes``.
"""

from __future__ import annotations

import functools
import importlib
import json
import pkgutil
import re
import signal
import sys
import warnings

import pytest

from .tables import SUBSTITUTES, not_applicable

#: seconds a single test may run before it counts as failed ("timeout")
TIMEOUT = 120

_NOT_OFFERED = (
    # Lasso(selection=...), Lasso.fit(..., check_input=False), lasso_path(..., positive=)
    re.compile(r"(?P<where>[\w.]+)\(\) got an unexpected keyword argument '(?P<names>\w+)'"),
    # cdlearn.solve's message for a keyword its method does not take (lasso_path's **kw)
    re.compile(r"(?P<where>solve)\(\) got option\(s\) (?P<names>[\w, ]+) that solver="),
    # BaseEstimator.set_params
    re.compile(r"Invalid parameter '(?P<names>\w+)' for estimator (?P<where>\w+)"),
    # a value cdlearn rejects by name (scikit-learn's solver names): "solver='sag'"
    re.compile(r"^(?P<where>)(?P<names>\w+='[^']*') is not supported"),
)

_USED: set[str] = set()
_COLLECT_ERRORS: dict[str, str] = {}
#: True while pytest imports the test modules (see :func:`_record_init`)
_COLLECTING = False


def substitutes() -> dict[str, tuple[str, object]]:
    """``{name: (sklearn module, cdlearn object)}`` for the names cdlearn exports."""
    import cdlearn

    out = {}
    for name, module in SUBSTITUTES.items():
        try:
            out[name] = (module, getattr(cdlearn, name))
        except AttributeError:
            continue
    return out


def test_key(item) -> str:
    """``<file name>::<test name>[<parameters>]``, the name the reports use."""
    return f"{item.path.name}::{item.name}"


class NotOffered(TypeError):
    """A parametrized instance was built without parameters cdlearn does not offer."""

    def __init__(self, name, params):
        super().__init__(f"{name} does not offer {', '.join(params)}")
        self.params = params


def _record_init(cls, name):
    """Record that a test constructs ``cls``.

    While the test modules are imported, an instance made for a parametrize
    list with a parameter cdlearn does not offer is made without it and
    marked (``_cdlearn_not_offered``): the tests that get it are skipped as
    "not offered" (:func:`pytest_runtest_setup`) instead of the whole module
    failing to import.
    """
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        # constructions inside cdlearn (a CV estimator's inner fits) are not the test's own
        if not sys._getframe(1).f_globals.get("__name__", "").startswith("cdlearn"):
            _USED.add(name)
        dropped = []
        while True:
            try:
                init(self, *args, **kwargs)
                break
            except TypeError as exc:
                m = _NOT_OFFERED[0].search(str(exc))
                if not (_COLLECTING and m and m.group("names") in kwargs):
                    raise
                dropped.append(m.group("names"))
                del kwargs[m.group("names")]
        if dropped:
            self._cdlearn_not_offered = (name, dropped)

    cls.__init__ = __init__


def _record_call(func, name):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _USED.add(name)
        return func(*args, **kwargs)

    return wrapper


def _import_sklearn():
    """Import scikit-learn's non-test modules, so that they bind its own classes."""
    import sklearn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in pkgutil.walk_packages(sklearn.__path__, "sklearn."):
            parts = info.name.split(".")
            # experimental: enabling imports with side effects; _build_utils: build scripts
            if {"tests", "experimental", "_build_utils"} & set(parts) or parts[-1] == "conftest":
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001 - optional dependencies of some modules
                continue


def pytest_addoption(parser):
    parser.addoption("--sklearn-outcomes", default=None,
                     help="write each test's classified outcome to this JSON file")


def pytest_configure(config):
    _import_sklearn()
    config._cdlearn_outcomes = {}
    for name, (module, obj) in substitutes().items():
        if isinstance(obj, type):
            _record_init(obj, name)
        else:
            obj = _record_call(obj, name)
        setattr(importlib.import_module(module), name, obj)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    global _COLLECTING
    _COLLECTING = True
    try:
        yield
    finally:
        _COLLECTING = False


def pytest_collectreport(report):
    if report.failed:  # a test module that does not import: all its tests are lost
        _COLLECT_ERRORS[report.nodeid] = str(report.longrepr).strip().splitlines()[-1]


def pytest_runtest_setup(item):
    for value in getattr(getattr(item, "callspec", None), "params", {}).values():
        marked = getattr(value, "_cdlearn_not_offered", None)
        if marked is not None:
            _USED.add(marked[0])
            raise NotOffered(*marked)


def pytest_collection_modifyitems(config, items):
    for item in items:
        reason = not_applicable(test_key(item))
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {reason}"))
            item._cdlearn_not_applicable = reason


def _timeout(signum, frame):
    raise TimeoutError(f"test ran longer than {TIMEOUT} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _USED.clear()
    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    store = item.config._cdlearn_outcomes
    entry = store.setdefault(test_key(item), {"used": [], "outcome": "passed", "detail": ""})
    entry["used"] = sorted(set(entry["used"]) | _USED)
    if getattr(item, "_cdlearn_not_applicable", None):
        entry.update(outcome="not applicable", detail=item._cdlearn_not_applicable)
        return
    if entry["outcome"] != "passed":
        return  # the first problem (setup or call) is the one to report
    if report.skipped:
        kind = "xfail" if hasattr(report, "wasxfail") else "skipped"
        detail = report.wasxfail if kind == "xfail" else str(report.longrepr[-1])
        entry.update(outcome=kind, detail=detail)
    elif report.failed:
        entry.update(classify(call.excinfo))
    elif hasattr(report, "wasxfail"):
        entry.update(outcome="xpassed")


def classify(excinfo) -> dict:
    """``{"outcome": "not offered", "params": [...]}`` or ``{"outcome": "failed", ...}``."""
    if excinfo is None:
        return {"outcome": "failed", "detail": "failed without an exception"}
    offered = _not_offered(excinfo.value)
    cause = excinfo.value.__cause__ or excinfo.value.__context__
    if offered is None and cause is not None:
        # pytest.raises / pytest.warns failing because the fit stopped at such an error
        offered = _not_offered(cause)
    if offered is not None:
        return offered
    detail = _one_line(excinfo.value)
    if cause is not None:  # e.g. pytest.warns' "DID NOT WARN" after the fit raised
        detail += f" (after {_one_line(cause)})"
    return {"outcome": "failed", "detail": detail[:400], "where": _last_frame(excinfo)}


def _one_line(exc: BaseException) -> str:
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message.splitlines()[0] if message else ''}"


def _not_offered(exc: BaseException) -> dict | None:
    if isinstance(exc, NotOffered):
        return {"outcome": "not offered", "params": exc.params,
                "detail": f"TypeError: {exc}"}
    if not isinstance(exc, TypeError | ValueError):
        return None
    message = str(exc)
    for pattern in _NOT_OFFERED:
        m = pattern.search(message)
        if m and _is_cdlearn(m.group("where"), exc):
            return {"outcome": "not offered",
                    "params": [s.strip() for s in m.group("names").split(", ")],
                    "detail": f"{type(exc).__name__}: {message.splitlines()[0]}"[:400]}
    return None


def _is_cdlearn(where: str, exc: BaseException) -> bool:
    """Whether a keyword error is about a substitute (not a test helper or scikit-learn)."""
    owner = where.split(".")[0]
    if owner in _owners() or owner == "solve":
        return True
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith("cdlearn"):
            return True
        tb = tb.tb_next
    return False


@functools.cache
def _owners() -> frozenset[str]:
    """Names of the substitutes and of the cdlearn classes they inherit from."""
    names = set(SUBSTITUTES)
    for _, obj in substitutes().values():
        if isinstance(obj, type):
            names.update(c.__name__ for c in obj.__mro__ if c.__module__.startswith("cdlearn"))
    return frozenset(names)


def _last_frame(excinfo) -> str:
    if not excinfo.traceback:
        return ""
    entry = excinfo.traceback[-1]
    return f"{entry.path}:{entry.lineno + 1}"


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--sklearn-outcomes")
    if path:
        out = dict(session.config._cdlearn_outcomes)
        for nodeid, error in _COLLECT_ERRORS.items():
            out[f"{nodeid.rsplit('/', 1)[-1]}::(import)"] = {
                "used": [], "outcome": "collection error", "detail": error}
        with open(path, "w") as fh:
            json.dump(out, fh, indent=1, sort_keys=True)
