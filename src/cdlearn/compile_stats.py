"""What numba compiles while a block runs: seconds and (function, signature) pairs.

Numba fires a ``numba:compile`` event around each compilation that missed its
on-disk cache (a cache hit fires none), nested when a kernel's callee compiles
during its typing; the seconds counted here are those of the outermost events, so
that a callee's compile is not counted twice. Used by ``cdlearn fit``/``demo`` to
report compile time apart from solve time, and by ``benchmarks/coldstart.py``.
"""

from __future__ import annotations

import threading
import time

from numba.core import event


class CompileRecorder(event.Listener):
    """Context manager recording the compilations that happen inside it.

    ``seconds``: wall time spent compiling (outermost events), ``cpu_seconds`` the
    process's CPU time in them (the robust number on a busy machine); ``compiled``: the
    ``(qualified name, argument types)`` of every compilation, in order; ``self_cpu``:
    the CPU seconds of each of them minus those of the callees compiled during it
    (numba types a callee, and so compiles it, inside its caller's event), so that
    ``sum(self_cpu) == cpu_seconds``. Only the compilations of the thread that created
    it count (one-vs-rest solves run on threads, each with its own recorder).
    """

    def __init__(self):
        self._thread = threading.get_ident()
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.compiled: list[tuple[str, str]] = []
        self.self_cpu: list[float] = []
        self._open: list[list] = []  # [index in compiled, CPU at start, callees' CPU]
        self._t0 = 0.0

    def on_start(self, ev):
        if threading.get_ident() != self._thread:
            return
        func = ev.data["dispatcher"].py_func
        self.compiled.append((f"{func.__module__}.{func.__qualname__}",
                              str(tuple(ev.data["args"]))))
        self.self_cpu.append(0.0)
        if not self._open:
            self._t0 = time.perf_counter()
        self._open.append([len(self.compiled) - 1, time.process_time(), 0.0])

    def on_end(self, ev):
        if threading.get_ident() != self._thread:
            return
        index, c0, callees = self._open.pop()
        cpu = time.process_time() - c0
        self.self_cpu[index] = cpu - callees
        if self._open:
            self._open[-1][2] += cpu
        else:
            self.seconds += time.perf_counter() - self._t0
            self.cpu_seconds += cpu

    def names(self) -> list[str]:
        """Compiled functions, short names (without the ``cdlearn.`` prefix)."""
        return [name.removeprefix("cdlearn.") for name, _ in self.compiled]

    def costliest(self, count: int = 10) -> list[tuple[str, float]]:
        """The ``count`` compilations of largest own CPU time, ``(short name, seconds)``."""
        order = sorted(range(len(self.compiled)), key=lambda i: -self.self_cpu[i])
        names = self.names()
        return [(names[i], self.self_cpu[i]) for i in order[:count]]

    def __enter__(self):
        with _active_lock:
            if not _active:
                _dispatch.install()
            _active.append(self)
        return self

    def __exit__(self, *exc):
        with _active_lock:
            _active.remove(self)
        return False


class _Dispatch(event.Listener):
    """The one listener registered with numba, for every open :class:`CompileRecorder`.

    Why: numba's ``event.register``/``unregister`` per recorder cost 10-30 µs of every
    ``cdlearn.solve`` (a tenth of a small solve's set-up, issue 25); a list append does
    the same. Registered on first use and kept.
    """

    installed = False

    def install(self):
        if not self.installed:
            event.register("numba:compile", self)
            self.installed = True

    def on_start(self, ev):
        for recorder in list(_active):
            recorder.on_start(ev)

    def on_end(self, ev):
        for recorder in list(_active):
            recorder.on_end(ev)


_active: list[CompileRecorder] = []  # open recorders, all threads (each filters its own)
_active_lock = threading.Lock()
_dispatch = _Dispatch()


def reachable(kernel) -> set[str]:
    """Qualified names of the numba functions ``kernel`` can call, itself included.

    A static walk of the globals each function's code names (and the functions of
    the modules it names): numba types, and so compiles, every callee a kernel
    can reach whatever branch runs, so this is what a first call compiles of the
    project's code (numba's own helpers aside) -- without compiling anything.
    """
    from types import CodeType, ModuleType

    from numba.core.dispatcher import Dispatcher

    seen: set[str] = set()
    todo = [kernel]
    while todo:
        f = todo.pop()
        py = f.py_func
        name = f"{py.__module__}.{py.__qualname__}"
        if name in seen:
            continue
        seen.add(name)
        codes, words = [py.__code__], set()
        while codes:  # nested code objects too (generator expressions, inner functions)
            code = codes.pop()
            words.update(code.co_names)
            codes += [c for c in code.co_consts if isinstance(c, CodeType)]
        for word in words:
            obj = py.__globals__.get(word)
            if isinstance(obj, ModuleType):  # ``module.function``
                todo += [v for w in words if isinstance(v := getattr(obj, w, None), Dispatcher)]
            elif isinstance(obj, Dispatcher):
                todo.append(obj)
    return seen
