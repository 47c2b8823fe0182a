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
    ``(qualified name, argument types)`` of every compilation, in order. Only the
    compilations of the thread that created it count (one-vs-rest solves run on
    threads, each with its own recorder).
    """

    def __init__(self):
        self._thread = threading.get_ident()
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.compiled: list[tuple[str, str]] = []
        self._depth = 0
        self._t0 = self._c0 = 0.0

    def on_start(self, ev):
        if threading.get_ident() != self._thread:
            return
        func = ev.data["dispatcher"].py_func
        self.compiled.append((f"{func.__module__}.{func.__qualname__}",
                              str(tuple(ev.data["args"]))))
        if self._depth == 0:
            self._t0, self._c0 = time.perf_counter(), time.process_time()
        self._depth += 1

    def on_end(self, ev):
        if threading.get_ident() != self._thread:
            return
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0
            self.cpu_seconds += time.process_time() - self._c0

    def names(self) -> list[str]:
        """Compiled functions, short names (without the ``cdlearn.`` prefix)."""
        return [name.removeprefix("cdlearn.") for name, _ in self.compiled]

    def __enter__(self):
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc):
        event.unregister("numba:compile", self)
        return False
