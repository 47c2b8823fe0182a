"""Load a LIBSVM dataset for an example, or say it is absent.

Not an example: sphinx-gallery runs only ``plot_*.py``.
"""

import os
from pathlib import Path


def available(*files):
    """True when every ``files`` is in ``$CDLEARN_DATA`` (no download at build time)."""
    root = Path(os.environ.get("CDLEARN_DATA", Path.home() / ".cache" / "cdlearn"))
    return all((root / f).is_file() for f in files)
