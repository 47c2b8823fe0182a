"""Shared pytest fixtures."""

import os
from pathlib import Path

import pytest

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
