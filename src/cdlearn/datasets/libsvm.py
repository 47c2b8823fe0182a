"""LIBSVM / svmlight dataset loader with a local cache.

Named datasets (see ``DATASETS``) are looked up in the cache directory
(``data_home()``: ``cache_dir`` argument, else env ``CDLEARN_DATA``, else
``~/.cache/cdlearn``) and downloaded only when no candidate file is there.

A SHA-256 checksum is verified whenever one is known for the file name found
or downloaded (``DatasetInfo.sha256``). The checksums are those of the copies
in the project's shared data directory (every file there is registered and
has one). A download whose file has no known checksum is NOT verified and
warns so (``DatasetInfo.download_verified``): the download-only entries
(news20.binary, rcv1.binary, real-sim), and files whose bytes on the download
site differ from, or were never compared with, the stored copies (ijcnn1,
ijcnn1.t, abalone_scale, arcene, arcene.valid).

Parsed datasets are kept in an in-process LRU cache keyed by (resolved path,
size, mtime, n_features, dtype); every call returns fresh copies, so callers
may modify the arrays freely. ``clear_cache()`` empties it.
"""

from __future__ import annotations

import bz2
import contextlib
import functools
import gzip
import hashlib
import logging
import lzma
import math
import os
import re
import sys
import tempfile
import time
import urllib.request
import warnings
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DATASETS",
    "DatasetInfo",
    "clear_cache",
    "compact_features",
    "data_home",
    "load_binary",
    "load_libsvm",
    "select_features",
]

logger = logging.getLogger(__name__)

ENV_VAR = "CDLEARN_DATA"
_TASKS = ("binary", "multiclass", "regression")
_FORMATS = ("svmlight", "dense")
_PATH_SUFFIXES = (".bz2", ".gz", ".xz", ".svm", ".libsvm", ".svmlight", ".txt", ".dat")
_TIMEOUT = 60.0
_CHUNK = 1 << 20

# Module-level so tests can monkeypatch it (never download in tests).
_urlopen = urllib.request.urlopen


@dataclass(frozen=True, kw_only=True)
class DatasetInfo:
    """Registry entry of a named dataset.

    Attributes
    ----------
    name : str
        Registry key.
    files : tuple of str
        Candidate file names in the cache directory, tried in order.
    url : str or None
        Download URL; saved as ``download_as`` (default: the URL's basename).
    sha256 : mapping
        File name -> SHA-256 hex digest, for the files whose bytes are known.
    n_samples, n_features : int
        Shape of the dataset (``n_features`` is the default loaded width).
    task : {"binary", "multiclass", "regression"}
    description : str
        One line.
    fmt : {"svmlight", "dense"}
        ``"dense"``: whitespace-separated dense text (X) plus a labels file.
    labels_files, labels_url :
        Candidates and URL of the labels file (``fmt="dense"`` only).
    """

    name: str
    files: tuple[str, ...]
    url: str | None
    sha256: Mapping[str, str] = field(default_factory=dict, hash=False)
    n_samples: int
    n_features: int
    task: str
    description: str
    fmt: str = "svmlight"
    download_as: str | None = None
    labels_files: tuple[str, ...] = ()
    labels_url: str | None = None

    def __post_init__(self):
        if self.task not in _TASKS:
            raise ValueError(f"task must be one of {_TASKS}, got {self.task!r}")
        if self.fmt not in _FORMATS:
            raise ValueError(f"fmt must be one of {_FORMATS}, got {self.fmt!r}")
        if not self.files:
            raise ValueError(f"dataset {self.name!r}: files must not be empty")
        if self.fmt == "dense" and not self.labels_files:
            raise ValueError(f"dataset {self.name!r}: a dense dataset needs labels_files")
        object.__setattr__(self, "sha256", MappingProxyType(dict(self.sha256)))

    @property
    def download_name(self) -> str | None:
        """File name a download of ``url`` is saved under."""
        if self.download_as is not None:
            return self.download_as
        return None if self.url is None else self.url.rsplit("/", 1)[-1]

    @property
    def download_verified(self) -> bool:
        """Whether a download of this dataset is checked against a known SHA-256."""
        names = [self.download_name] + ([self.labels_download_name] if self.labels_url else [])
        return self.url is not None and all(n in self.sha256 for n in names)

    @property
    def labels_download_name(self) -> str | None:
        """File name a download of ``labels_url`` is saved under."""
        return None if self.labels_url is None else self.labels_url.rsplit("/", 1)[-1]


_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
# Reuters money-fx is not on the LIBSVM site; the stored bytes come from this commit.
_TICK = (
    "https://raw.githubusercontent.com/X-DataInitiative/tick-datasets/"
    "9d959b6e53e17145e93e9849ff1f9f6d2de8ae51"
)
_ARCENE = "https://archive.ics.uci.edu/ml/machine-learning-databases/arcene"


def _candidates(*names: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _entry(name, files, url, n_samples, n_features, task, description, **kw) -> DatasetInfo:
    return DatasetInfo(
        name=name,
        files=_candidates(*files),
        url=url,
        n_samples=n_samples,
        n_features=n_features,
        task=task,
        description=description,
        **kw,
    )


DATASETS: dict[str, DatasetInfo] = {
    info.name: info
    for info in [
        _entry(
            "leu", ["leu.bz2", "leu.xz", "leu"], f"{_LIBSVM}/binary/leu.bz2",
            38, 7129, "binary", "Leukemia gene expression (Golub), train split, dense.",
            sha256={"leu.bz2": "2f7dc1c8ea4343b17038e27ff777dad0a87d79a5fa29de54765055cc841cb75b"},
        ),
        _entry(
            "leu.t", ["leu.t.bz2", "leu.t.xz", "leu.t"], f"{_LIBSVM}/binary/leu.t.bz2",
            34, 7129, "binary", "Leukemia gene expression (Golub), test split, dense.",
            sha256={"leu.t.bz2": "582161e3d5112f6c1604d262413acca5e33cad1b3f522c681faeb369e8b4a271"},
        ),
        _entry(
            "a9a", ["a9a.xz", "a9a.bz2", "a9a"], f"{_LIBSVM}/binary/a9a",
            32561, 123, "binary", "Adult census income (a9a), train split.",
            sha256={
                "a9a.xz": "c7a2952bcd0877f2c8a6c44b52b1e8086ffff5c4cb1ff9e4d700c97313f2d6a4",
                "a9a": "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
            },
        ),
        _entry(
            "a9a.t", ["a9a.t.xz", "a9a.t.bz2", "a9a.t"], f"{_LIBSVM}/binary/a9a.t",
            16281, 123, "binary", "Adult census income (a9a), test split (width 123).",
            sha256={
                "a9a.t.xz": "062c4d552cafaf641effeb9742e80775d9c5593245da70817ed5c22f3dd9e0bc",
                "a9a.t": "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
            },
        ),
        _entry(
            "w8a", ["w8a.xz", "w8a.bz2", "w8a"], f"{_LIBSVM}/binary/w8a",
            49749, 300, "binary", "Web page classification (w8a), train split.",
            sha256={
                "w8a.xz": "290f6e8676b48fff31b557cbd09be4772120230198f0d0346f9fdf65e732cb30",
                "w8a": "6a9fa8fd5f524303240a5db07d4b3d4a51e8b7b4b20a914105d8e3e8c81640f2",
            },
        ),
        _entry(
            "news20", ["news20.bz2", "news20.xz", "news20"], f"{_LIBSVM}/multiclass/news20.bz2",
            15935, 62061, "multiclass", "20 Newsgroups, 20 classes (NOT news20.binary), train.",
            sha256={"news20.bz2": "8c79851f6f5fdc5540a0d04a5ab728353c42d26b84e73f93bda301c06c15ffe9"},
        ),
        _entry(
            "mushrooms", ["mushrooms.xz", "mushrooms.bz2", "mushrooms"],
            f"{_LIBSVM}/binary/mushrooms",
            8124, 112, "binary", "UCI mushrooms, edible vs poisonous (labels 1/2).",
            sha256={
                "mushrooms.xz": "d523feec16d78524612a174bc68020d336fd6d97b20404aff170a900df87f770",
                "mushrooms": "f39a4eb628dc61a7d43760815b061c9e497aa728ce1ad8bde57a09ef6043b538",
            },
        ),
        _entry(
            "reuters-money-fx",
            ["reuters-money-fx.trn.bz2", "reuters-money-fx.bz2", "reuters-money-fx"],
            f"{_TICK}/binary/reuters/reuters.trn.bz2",
            7770, 8315, "binary", "Reuters-21578 money-fx vs rest (LASVM set), train split.",
            download_as="reuters-money-fx.trn.bz2",
            sha256={
                "reuters-money-fx.trn.bz2":
                    "e77a3368662c02caebe0d9cbcc97d856019bcfb33a8e9b7c48e0b51ee4cdfb60",
            },
        ),
        _entry(
            "reuters-money-fx.t",
            ["reuters-money-fx.tst.bz2", "reuters-money-fx.t.bz2", "reuters-money-fx.t"],
            f"{_TICK}/binary/reuters/reuters.tst.bz2",
            3299, 8315, "binary", "Reuters-21578 money-fx vs rest (LASVM set), test split.",
            download_as="reuters-money-fx.tst.bz2",
            sha256={
                "reuters-money-fx.tst.bz2":
                    "3d699b9644a38160bf3228059d18fbfc07474057d8e82d512576a2b82d72e211",
            },
        ),
        _entry(
            "ijcnn1", ["ijcnn1.trn.bz2", "ijcnn1.bz2", "ijcnn1.xz", "ijcnn1"],
            f"{_LIBSVM}/binary/ijcnn1.bz2",
            49990, 22, "binary", "IJCNN 2001 challenge, train (tr + val).",
            sha256={"ijcnn1.trn.bz2": "b38a4198ce142d43e96fb86d17b87211feec1f909ac344fa057455c69de29de3"},
        ),
        _entry(
            "ijcnn1.t", ["ijcnn1.tst.bz2", "ijcnn1.t.bz2", "ijcnn1.t.xz", "ijcnn1.t"],
            f"{_LIBSVM}/binary/ijcnn1.t.bz2",
            91701, 22, "binary", "IJCNN 2001 challenge, test split.",
            sha256={"ijcnn1.tst.bz2": "acd1db430684fdd3f0c768ecc49aa8e749d0004fc117611220c2aa576a7b6a24"},
        ),
        _entry(
            "abalone_scale", ["abalone_scale.bz2", "abalone_scale.xz", "abalone_scale"],
            f"{_LIBSVM}/regression/abalone_scale",
            4177, 8, "regression", "UCI abalone age (rings), features scaled to [-1, 1].",
            sha256={
                "abalone_scale.bz2":
                    "9d24998fecb496cca34cb56386f99d36edc2aa113f800b1f7c02316e05da80f1",
            },
        ),
        _entry(
            "arcene", ["arcene_train.data.xz", "arcene_train.data.bz2", "arcene_train.data"],
            f"{_ARCENE}/ARCENE/arcene_train.data",
            100, 10000, "binary", "NIPS 2003 feature selection, mass spectrometry, train.",
            fmt="dense",
            labels_files=_candidates(
                "arcene_train.labels.xz", "arcene_train.labels.bz2", "arcene_train.labels"
            ),
            labels_url=f"{_ARCENE}/ARCENE/arcene_train.labels",
            sha256={
                "arcene_train.data.xz":
                    "d1b20cf30fc02c6ee984a441e726c0e99a52a7924ead2d82f23b22dc906c52df",
                "arcene_train.labels.xz":
                    "813297f84b9f1d862ec83eaa45db9b8066406a9ec39f65219a9d0d3e325b3fd5",
            },
        ),
        _entry(
            "arcene.valid",
            ["arcene_valid.data.xz", "arcene_valid.data.bz2", "arcene_valid.data"],
            f"{_ARCENE}/ARCENE/arcene_valid.data",
            100, 10000, "binary", "NIPS 2003 feature selection, mass spectrometry, validation.",
            fmt="dense",
            labels_files=_candidates(
                "arcene_valid.labels.xz", "arcene_valid.labels.bz2", "arcene_valid.labels"
            ),
            labels_url=f"{_ARCENE}/arcene_valid.labels",
            sha256={
                "arcene_valid.data.xz":
                    "f2d65e971331d173ecaca3b488250aca5944acfea0388ab5e2fa1503a259f991",
                "arcene_valid.labels.xz":
                    "7b0f6a65f9ac0ab9ea4a56a306e3dcc7023064bd7f23fa32d4b30127a72a6659",
            },
        ),
        # Download-only (not in the shared data directory; no checksum known: a
        # download warns that it is not verified).
        _entry(
            "news20.binary", ["news20.binary.bz2", "news20.binary.xz", "news20.binary"],
            f"{_LIBSVM}/binary/news20.binary.bz2",
            19996, 1355191, "binary", "20 Newsgroups, binary (Keerthi & DeCoste).",
        ),
        _entry(
            "rcv1.binary",
            ["rcv1_train.binary.bz2", "rcv1_train.binary.xz", "rcv1_train.binary"],
            f"{_LIBSVM}/binary/rcv1_train.binary.bz2",
            20242, 47236, "binary", "RCV1-v2, CCAT+ECAT vs GCAT+MCAT, train split.",
        ),
        _entry(
            "real-sim", ["real-sim.bz2", "real-sim.xz", "real-sim"],
            f"{_LIBSVM}/binary/real-sim.bz2",
            72309, 20958, "binary", "SRAA real vs simulated auto/aviation newsgroups.",
        ),
    ]
}


def data_home(cache_dir: str | os.PathLike | None = None) -> Path:
    """Return the dataset cache directory.

    ``cache_dir`` if given, else env ``CDLEARN_DATA``, else ``~/.cache/cdlearn``.
    The directory is not created.
    """
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/cdlearn").expanduser()


def clear_cache() -> None:
    """Empty the in-process cache of parsed datasets and file checksums."""
    _read_cached.cache_clear()
    _sha256_cached.cache_clear()


# --------------------------------------------------------------------------- files


def _sha256_file(path: Path) -> str:
    st = path.stat()
    return _sha256_cached(str(path.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _verify(path: Path, expected: str | None) -> None:
    if expected is None:
        return
    actual = _sha256_file(path)
    if actual != expected.lower():
        raise ValueError(
            f"checksum mismatch for {path}: expected sha256 {expected}, got {actual}. "
            "Delete the file to download it again, or pass verify=False."
        )


def _download(url: str, dest: Path, sha256: str | None = None) -> Path:
    """Download ``url`` to ``dest`` atomically, checking ``sha256`` when given.

    The bytes go to a temporary file next to ``dest``, renamed only once
    complete and verified; on any failure the temporary file and the
    directories this call created are removed.
    """
    created = []
    parent = dest.parent
    while not parent.exists():
        created.append(parent)
        parent = parent.parent
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _download_into(url, dest, sha256)
    except BaseException:
        for folder in created:  # deepest first; never one that held anything
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _download_into(url: str, dest: Path, sha256: str | None) -> Path:
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    logger.info("downloading %s to %s", url, dest)
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, _urlopen(url, timeout=_TIMEOUT) as response:
            while chunk := response.read(_CHUNK):
                out.write(chunk)
                h.update(chunk)
        actual = h.hexdigest()
        if sha256 is not None and actual != sha256.lower():
            raise ValueError(
                f"checksum mismatch for {dest.name} downloaded from {url}: "
                f"expected sha256 {sha256}, got {actual}. Nothing was saved."
            )
        os.replace(tmp, dest)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            exc.add_note(f"while downloading {url} to {dest}")
        raise
    return dest


def _find_or_fetch(
    info: DatasetInfo,
    files: tuple[str, ...],
    url: str | None,
    download_name: str | None,
    home: Path,
    download: bool,
    verify: bool,
) -> Path:
    """Return the first cached candidate of ``files``, downloading it if missing."""
    for fname in files:
        path = home / fname
        if path.is_file():
            if verify:
                _verify(path, info.sha256.get(fname))
            return path
    if download and url is not None:
        dest = home / download_name
        expected = info.sha256.get(download_name)
        if verify and expected is None:
            warnings.warn(
                f"dataset {info.name!r}: no checksum is known for {download_name} "
                f"({url}); the download is NOT verified",
                UserWarning, stacklevel=4,
            )
        return _download(url, dest, expected if verify else None)
    looked = ", ".join(str(home / f) for f in files)
    why = "download=False" if url is not None else "it has no download URL"
    raise FileNotFoundError(
        f"dataset {info.name!r} not found (looked for {looked}) and {why}. "
        f"Put the file there, point the cache elsewhere with cache_dir= or the "
        f"{ENV_VAR} environment variable (e.g. {ENV_VAR}=/path/to/data), "
        "or pass download=True."
    )


_MAGIC = (
    (b"\xfd7zXZ\x00", "xz", lzma.open),
    (b"BZh", "bz2", bz2.open),
    (b"\x1f\x8b", "gzip", gzip.open),
)


def _open(path: Path):
    """Open ``path`` for binary reading, decompressing xz/bz2/gzip by magic bytes."""
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, kind, opener in _MAGIC:
        if head.startswith(magic):
            return kind, opener(path, "rb")
    return "plain", open(path, "rb")


_STREAM_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)
_PARSE_ERRORS = (ValueError, OverflowError, *_STREAM_ERRORS)

#: Default ``max_bytes``: decompressed text larger than this is refused (a
#: compressed file can expand without bound; parsing needs memory of the order
#: of the text's size).
MAX_BYTES = 8 << 30
#: Feature ids are C ints in scikit-learn's parser (and int32 in the CSR).
MAX_INDEX = np.iinfo(np.int32).max
_SPACE = b" \t\n\r\f\v"
# a newline followed by blank lines (and the next line's indentation): one newline
_BLANK_RUN = re.compile(rb"\n[ \t\n\r\f\v]+")
_BOM = b"\xef\xbb\xbf"


def _parse_error(path: Path, kind: str, exc: BaseException) -> ValueError:
    return ValueError(f"could not read {path} (as {kind} text): {exc}")


def format_bytes(n: float) -> str:
    """A size as ``"1.23 GB"`` (powers of 1000)."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    raise AssertionError  # pragma: no cover


class _Lines:
    """The non-blank lines of a (decompressed) binary stream, read in large chunks.

    scikit-learn's parser iterates over lines; a stream of millions of blank
    lines cost one Python object each (200 MB of newlines: 224 s). Blank runs
    are dropped per chunk by one regex pass instead (50 MB: 0.4 s). ``max_bytes`` bounds the
    decompressed size; ``progress`` prints the bytes read to stderr every 2 s.
    """

    def __init__(self, f, path: Path, *, max_bytes: int, progress: bool):
        self.f, self.path, self.max_bytes, self.progress = f, path, max_bytes, progress
        self.n_bytes = 0

    def read(self, n=-1):  # scikit-learn checks for a ``read`` attribute
        # never called: the parser reads lines through __iter__, not read()
        raise NotImplementedError  # pragma: no cover

    def chunks(self):
        tail = b""
        t_last = time.monotonic()
        first = True
        while True:
            block = self.f.read(_CHUNK)
            if first:
                first = False
                block = block[len(_BOM):] if block.startswith(_BOM) else block
            self.n_bytes += len(block)
            if self.n_bytes > self.max_bytes:
                raise ValueError(
                    f"{self.path} holds more than max_bytes={self.max_bytes:,} bytes of "
                    f"text ({format_bytes(self.max_bytes)}) once decompressed; pass a larger "
                    "max_bytes (cdlearn: --max-bytes) if the file is meant to be that big"
                )
            if self.progress and time.monotonic() - t_last >= 2.0:
                t_last = time.monotonic()
                print(f"cdlearn: reading {self.path.name}: {format_bytes(self.n_bytes)}",
                      file=sys.stderr, flush=True)
            if not block:
                if tail:
                    yield tail
                return
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                tail += block
                continue
            yield tail + block[:cut]
            tail = block[cut:]

    def __iter__(self):
        for chunk in self.chunks():
            text = _BLANK_RUN.sub(b"\n", chunk.lstrip(_SPACE))
            if text:
                yield from text.split(b"\n")


def _bad_line(path: Path, *, max_bytes: int) -> str | None:
    """``"line N: what is wrong"`` for the first invalid line of an svmlight file.

    Only run once parsing has failed or produced a non-finite value, to say where.
    """
    kind, f = _open(path)
    with f:
        lineno = 0
        for chunk in _Lines(f, path, max_bytes=max_bytes, progress=False).chunks():
            for line in chunk.split(b"\n"):
                lineno += 1
                problem = _line_problem(line.split(b"#", 1)[0].split())
                if problem:
                    return f"line {lineno}: {problem}"
            lineno -= 1  # the chunk ended with a newline: its last piece is empty
    return None


def _number(token: bytes) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _line_problem(parts: list[bytes]) -> str | None:
    if not parts:
        return None
    label = _number(parts[0])
    if label is None:
        return f"the label {_show(parts[0])} is not a number"
    if not math.isfinite(label):
        return f"the label {_show(parts[0])} is not finite"
    features = parts[1:]
    if features and features[0].startswith(b"qid"):
        features = features[1:]
    prev = -1
    for token in features:
        idx_s, colon, value = token.partition(b":")
        if not colon:
            return f"{_show(token)} is not an index:value pair (missing ':')"
        try:
            idx = int(idx_s)
        except ValueError:
            return f"the feature index {_show(idx_s)} is not an integer"
        if idx < 0:
            return f"the feature index {idx} is negative"
        if idx > MAX_INDEX:
            return (f"the feature index {idx} exceeds the limit {MAX_INDEX:,} (2^31 - 1); "
                    "renumber the features")
        if idx <= prev:
            return (f"feature indices must be increasing and unique: {idx} after {prev}")
        prev = idx
        v = _number(value)
        if v is None:
            return f"the value {_show(value)} of feature {idx} is not a number"
        if not math.isfinite(v):
            return f"the value {_show(value)} of feature {idx} is not finite"
    return None


def _show(token: bytes) -> str:
    text = token[:40].decode("utf-8", "backslashreplace")
    return repr(text + ("..." if len(token) > 40 else ""))


def _canonical_csr(X, dtype) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=dtype)
    if X.nnz < np.iinfo(np.int32).max and max(X.shape) < np.iinfo(np.int32).max:
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32, copy=False)
    if not X.has_canonical_format:
        X.sum_duplicates()
    return X


def _read_svmlight(
    path: Path, n_features: int | None, dtype, max_bytes: int = MAX_BYTES, progress: bool = False
) -> tuple[sp.csr_matrix, np.ndarray]:
    from sklearn.datasets import load_svmlight_file  # ~1 s to import: only when reading

    kind, f = _open(path)
    try:
        with f:
            lines = _Lines(f, path, max_bytes=max_bytes, progress=progress)
            X, y = load_svmlight_file(lines, n_features=n_features, dtype=dtype)
        bad = not (np.isfinite(y).all() and np.isfinite(X.data).all())
    except _PARSE_ERRORS as exc:
        if "max_bytes" in str(exc):
            raise
        where = None
        if not isinstance(exc, _STREAM_ERRORS):
            with contextlib.suppress(*_PARSE_ERRORS):
                where = _bad_line(path, max_bytes=max_bytes)
        if where is None:
            raise _parse_error(path, kind, exc) from exc
        raise ValueError(f"{path}, {where}") from None
    if bad:
        raise ValueError(f"{path}, {_bad_line(path, max_bytes=max_bytes)}")
    if X.shape[0] == 0:
        raise ValueError(f"{path} holds no samples (an empty file or only blank lines)")
    return X, y


def _read_dense(
    path: Path, labels_path: Path, n_features: int | None, dtype
) -> tuple[sp.csr_matrix, np.ndarray]:
    kind, f = _open(path)
    try:
        with f:
            A = np.loadtxt(f, dtype=dtype, ndmin=2)
    except _PARSE_ERRORS as exc:
        raise _parse_error(path, kind, exc) from exc
    kind, f = _open(labels_path)
    try:
        with f:
            y = np.loadtxt(f, dtype=np.float64, ndmin=1)
    except _PARSE_ERRORS as exc:
        raise _parse_error(labels_path, kind, exc) from exc
    if y.ndim != 1 or y.shape[0] != A.shape[0]:
        raise ValueError(
            f"{labels_path} holds {y.size} labels but {path} has {A.shape[0]} rows"
        )
    X = sp.csr_matrix(A)
    if n_features is not None and n_features != X.shape[1]:
        if n_features < X.shape[1]:
            raise ValueError(
                f"n_features={n_features} is smaller than the {X.shape[1]} columns of {path}"
            )
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return X, y


@functools.lru_cache(maxsize=32)
def _read_cached(
    path: str,
    stamp: tuple[int, int],
    labels_path: str | None,
    labels_stamp: tuple[int, int] | None,
    n_features: int | None,
    dtype: str,
    max_bytes: int = MAX_BYTES,
    progress: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray]:
    if labels_path is None:
        X, y = _read_svmlight(Path(path), n_features, np.dtype(dtype), max_bytes, progress)
    else:
        X, y = _read_dense(Path(path), Path(labels_path), n_features, np.dtype(dtype))
    X = _canonical_csr(X, np.dtype(dtype))
    y = np.asarray(y, dtype=np.float64)
    for a in (X.data, X.indices, X.indptr, y):
        a.flags.writeable = False
    return X, y


def _stamp(path: Path) -> tuple[str, tuple[int, int]]:
    st = path.stat()
    return str(path.resolve()), (st.st_size, st.st_mtime_ns)


def _read(path: Path, labels_path: Path | None, n_features, dtype, max_bytes=MAX_BYTES,
          progress=False):
    key, stamp = _stamp(path)
    lkey, lstamp = _stamp(labels_path) if labels_path is not None else (None, None)
    if n_features is not None:
        n_features = int(n_features)
        if n_features <= 0:
            raise ValueError(f"n_features must be positive, got {n_features}")
    max_bytes = int(max_bytes)
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be positive, got {max_bytes}")
    X, y = _read_cached(key, stamp, lkey, lstamp, n_features, np.dtype(dtype).str, max_bytes,
                        bool(progress))
    return X.copy(), y.copy()


def _is_path_like(s: str) -> bool:
    return (
        os.sep in s
        or "/" in s
        or (os.altsep is not None and os.altsep in s)
        or s.lower().endswith(_PATH_SUFFIXES)
        or Path(s).expanduser().exists()
    )


def _unknown(name: str) -> ValueError:
    return ValueError(
        f"unknown dataset {name!r} (not a registered name nor an existing file). "
        f"Known names: {', '.join(sorted(DATASETS))}"
    )


# --------------------------------------------------------------------------- public


def load_libsvm(
    name_or_path: str | os.PathLike,
    *,
    cache_dir: str | os.PathLike | None = None,
    download: bool = True,
    n_features: int | None = None,
    dtype=np.float64,
    verify: bool = True,
    max_bytes: int = MAX_BYTES,
    progress: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Load a LIBSVM/svmlight dataset by registry name or file path.

    Parameters
    ----------
    name_or_path : str or path-like
        A key of ``DATASETS`` (a string equal to a registered name is always
        treated as a name; write ``./a9a`` for a file of that name), or a path
        to a plain, ``.gz``, ``.bz2`` or ``.xz`` svmlight file (compression is
        detected from the file's magic bytes).
    cache_dir : path-like, optional
        Cache directory for named datasets; default ``data_home()``.
    download : bool
        Download a named dataset missing from the cache (atomically).
    n_features : int, optional
        Width of X; default the registry's width for names, the largest
        feature index for paths.
    dtype : numpy dtype
        dtype of X (y is always float64).
    verify : bool
        Check the SHA-256 of cached and downloaded files when known; downloads
        of files whose checksum is not known warn that they are unverified.
    max_bytes : int
        Refuse files larger than this once decompressed (default ``MAX_BYTES``,
        8 GiB): a small compressed file can expand without bound.
    progress : bool
        Print the bytes read so far to stderr every 2 s (long reads).

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_samples, n_features)
        Canonical CSR (sorted indices, no duplicates, int32 indices when they fit).
    y : ndarray of float64, shape (n_samples,)
        Labels as stored in the file.

    Raises
    ------
    ValueError
        Unknown name, checksum mismatch, unreadable/corrupt file, an invalid
        line (the message gives its number: non-numeric or non-finite label or
        value, bad, unsorted or duplicate index, index above 2^31 - 1), no
        samples, or more than ``max_bytes`` of text.
    FileNotFoundError
        File missing (and, for names, ``download=False``).
    """
    if isinstance(name_or_path, str) and name_or_path in DATASETS:
        info = DATASETS[name_or_path]
        home = data_home(cache_dir)
        path = _find_or_fetch(
            info, info.files, info.url, info.download_name, home, download, verify
        )
        labels_path = None
        if info.fmt == "dense":
            labels_path = _find_or_fetch(
                info, info.labels_files, info.labels_url, info.labels_download_name,
                home, download, verify,
            )
        width = info.n_features if n_features is None else n_features
        X, y = _read(path, labels_path, width, dtype, max_bytes, progress)
        if X.shape[0] != info.n_samples:
            warnings.warn(
                f"{path} has {X.shape[0]} samples; the registry expects {info.n_samples} "
                f"for {info.name!r}",
                stacklevel=2,
            )
        return X, y
    if isinstance(name_or_path, os.PathLike) or (
        isinstance(name_or_path, str) and _is_path_like(name_or_path)
    ):
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {path}")
        return _read(path, None, n_features, dtype, max_bytes, progress)
    if isinstance(name_or_path, str):
        raise _unknown(name_or_path)
    raise TypeError(
        f"name_or_path must be a str or path-like, got {type(name_or_path).__name__}"
    )


def compact_features(X: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """Drop the columns no sample uses: ``(X[:, ids], ids)``, ``ids`` sorted.

    A file whose feature ids are sparse (e.g. one id of 3·10⁸) otherwise makes
    every d-length array of a solver that long. ``select_features(X2, ids)``
    maps other data (a test split) to the same columns.
    """
    X = sp.csr_matrix(X)
    ids = np.unique(X.indices).astype(np.int64)
    indices = np.searchsorted(ids, X.indices).astype(X.indices.dtype)
    return sp.csr_matrix((X.data.copy(), indices, X.indptr.copy()),
                         shape=(X.shape[0], ids.size)), ids


def select_features(X: sp.csr_matrix, ids) -> sp.csr_matrix:
    """Columns ``ids`` (sorted, unique) of ``X`` as a CSR of width ``len(ids)``.

    Entries in other columns are dropped (a feature the model never saw has
    weight 0); O(nnz), never a d-length array.
    """
    X = sp.csr_matrix(X)
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1 or (ids.size and (ids[0] < 0 or np.any(np.diff(ids) <= 0))):
        raise ValueError("ids must be sorted, unique, non-negative feature ids")
    pos = np.searchsorted(ids, X.indices)
    keep = pos < ids.size
    keep[keep] = ids[pos[keep]] == X.indices[keep]
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[keep]
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
    return sp.csr_matrix((X.data[keep], pos[keep], indptr), shape=(X.shape[0], ids.size))


_BINARY_PAIRS = ((-1.0, 1.0), (0.0, 1.0), (1.0, 2.0))


def _to_pm1(y: np.ndarray, what: str) -> np.ndarray:
    values = set(np.unique(y).tolist())
    for neg, pos in _BINARY_PAIRS:
        if values <= {neg, pos}:
            return np.where(y == pos, 1.0, -1.0)
    shown = sorted(values)[:10]
    raise ValueError(
        f"{what} is not binary: labels {shown}{' ...' if len(values) > 10 else ''} "
        "are not a subset of {-1, +1}, {0, 1} or {1, 2}"
    )


def load_binary(name_or_path: str | os.PathLike, **kwargs) -> tuple[sp.csr_matrix, np.ndarray]:
    """Load a binary classification dataset with labels in {-1, +1}.

    Labels {0, 1} and {1, 2} (e.g. mushrooms) map to -1/+1. ``news20`` is
    binarized as classes 1-10 -> -1, 11-20 -> +1 ("news20 binarized, a
    substitute for news20.binary"). Regression and other multiclass datasets
    raise ``ValueError``. ``kwargs`` go to ``load_libsvm``.
    """
    info = DATASETS.get(name_or_path) if isinstance(name_or_path, str) else None
    if info is not None and info.task == "regression":
        raise ValueError(f"dataset {info.name!r} is a regression dataset, not binary")
    if info is not None and info.task == "multiclass" and info.name != "news20":
        raise ValueError(f"dataset {info.name!r} is multiclass, not binary")
    X, y = load_libsvm(name_or_path, **kwargs)
    if info is not None and info.name == "news20":
        return X, np.where(y <= 10, -1.0, 1.0)
    return X, _to_pm1(y, repr(str(name_or_path)))
