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


def main() -> int:
    try:
        from cdlearn.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while leaving
        print("cdlearn: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
