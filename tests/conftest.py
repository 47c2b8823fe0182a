"""Shared pytest fixtures."""

import ctypes
import ctypes.util
import os
import random
import zlib
from pathlib import Path

import numpy as np
import pytest

try:
    from hypothesis import settings
except ImportError:  # a dev extra: the tests that need it skip (test_fuzz) or fail alone
    settings = None
if settings is not None:
    # The default run (CI) replays the same examples on every run, so its outcome depends
    # on the code only; CDLEARN_HYPOTHESIS_EXPLORE=1 draws new ones (looking for bugs).
    settings.register_profile("replay", derandomize=True, database=None)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile("explore" if os.environ.get("CDLEARN_HYPOTHESIS_EXPLORE")
                          else "replay")

_LIBC = ctypes.util.find_library("c")
_LIBC = ctypes.CDLL(_LIBC) if _LIBC else None


@pytest.fixture(autouse=True)
def _global_rngs(request):
    """Seed the process-wide generators from the test's id before every test.

    ``random_state=None`` (scikit-learn's default, and cdlearn's estimators') draws from
    numpy's global RNG and liblinear-official from libc's ``rand()``; without this their
    state depends on which tests ran before in the same xdist worker, so a failure could
    not be replayed. CDLEARN_TEST_SEED shifts every seed (to sweep them).
    """
    seed = (zlib.crc32(request.node.nodeid.encode())
            + int(os.environ.get("CDLEARN_TEST_SEED", "0"))) % 2**32
    np.random.seed(seed)
    random.seed(seed)
    if _LIBC is not None:
        _LIBC.srand(seed)


# The real datasets live next to the repository: /work/main/../shared/data.
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """Directory of the real LIBSVM datasets (env ``CDLEARN_DATA`` or ../shared/data).

    Skips the test when the directory is absent or holds none of the registry files.
    """
    from cdlearn.datasets.libsvm import DATASETS

    env = os.environ.get("CDLEARN_DATA")
    path = Path(env).expanduser() if env else DEFAULT_DATA_DIR
    if not path.is_dir():
        pytest.skip(f"shared data not available ({path} does not exist)")
    if not any((path / f).is_file() for info in DATASETS.values() for f in info.files):
        pytest.skip(f"shared data not available ({path} holds no known dataset file)")
    return path


@pytest.fixture(scope="session")
def load(data_dir):
    """``load(name, binary=False, **kw)``: a named dataset from ``data_dir``, never downloaded.

    ``binary=True`` uses ``load_binary`` (labels in {-1, +1}). Skips the test when
    the dataset's file is not in ``data_dir``.
    """
    from cdlearn.datasets.libsvm import load_binary, load_libsvm

    def _load(name, binary=False, **kw):
        kw.setdefault("cache_dir", data_dir)
        kw.setdefault("download", False)
        try:
            return (load_binary if binary else load_libsvm)(name, **kw)
        except FileNotFoundError as exc:
            pytest.skip(f"{name} not in {data_dir}: {exc}")

    return _load
