"""Entry point of the ``cdlearn`` console script (``[project.scripts]`` in pyproject.toml).

A top-level module, outside the ``cdlearn`` package, so that a Ctrl-C in the
first second -- while ``import cdlearn`` loads numpy, scipy and numba -- ends
like one later on (:mod:`cdlearn.cli`): exit status 130 and the line
``cdlearn: interrupted``, not Python's traceback. A module inside the package
could not catch it: importing it runs the package's ``__init__`` first.
(``python -m cdlearn.cli`` is the same command but has that window.)
"""

import signal
import sys

EXIT_INTERRUPTED = 130  # cdlearn.cli.EXIT_INTERRUPTED, which may not be importable yet


class _Interrupts:
    """Python's own Ctrl-C handler that also remembers it ran: an extension module
    being imported may turn the KeyboardInterrupt into another error (numpy's import
    of ``datetime`` reports it as an ImportError about a broken installation)."""

    seen = False

    @classmethod
    def handler(cls, signum, frame):
        cls.seen = True
        raise KeyboardInterrupt


def _interrupted() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while leaving
    print("cdlearn: interrupted", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


def main() -> int:
    watch = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if watch:  # (an ignored SIGINT stays ignored)
        signal.signal(signal.SIGINT, _Interrupts.handler)
    try:
        try:
            from cdlearn.cli import main as cli_main
        finally:
            if watch:
                signal.signal(signal.SIGINT, signal.default_int_handler)
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:
        if _Interrupts.seen:
            return _interrupted()
        raise
    try:
        return cli_main()
    except KeyboardInterrupt:
        return _interrupted()


if __name__ == "__main__":
    sys.exit(main())
