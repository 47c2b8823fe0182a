"""Tests of the LIBSVM loader (cdlearn.datasets.libsvm). Never touches the network."""

import bz2
import gzip
import hashlib
import io
import lzma
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from cdlearn.datasets import libsvm
from cdlearn.datasets.libsvm import (
    DATASETS,
    DatasetInfo,
    clear_cache,
    data_home,
    load_binary,
    load_libsvm,
)

# name -> (shape, nnz, label counts); numbers from ../shared/data/README.md
REAL = {
    "leu": ((38, 7129), 270_902, {-1: 11, 1: 27}),
    "leu.t": ((34, 7129), 242_386, {-1: 14, 1: 20}),
    "a9a": ((32_561, 123), 451_592, {-1: 24_720, 1: 7_841}),
    "a9a.t": ((16_281, 123), 225_731, {-1: 12_435, 1: 3_846}),
    "w8a": ((49_749, 300), 579_586, {-1: 48_270, 1: 1_479}),
    "mushrooms": ((8_124, 112), 170_604, {1: 3_916, 2: 4_208}),
    "reuters-money-fx": ((7_770, 8_315), 339_837, {-1: 7_232, 1: 538}),
    "reuters-money-fx.t": ((3_299, 8_315), 136_821, {-1: 3_120, 1: 179}),
    "ijcnn1": ((49_990, 22), 649_870, {-1: 45_137, 1: 4_853}),
    "ijcnn1.t": ((91_701, 22), 1_192_113, {-1: 82_989, 1: 8_712}),
    "arcene": ((100, 10_000), 540_941, {-1: 56, 1: 44}),
    "arcene.valid": ((100, 10_000), 546_598, {-1: 56, 1: 44}),
}
NEWS20_COUNTS = {
    1: 797, 2: 780, 3: 797, 4: 796, 5: 796, 6: 797, 7: 799, 8: 798, 9: 799, 10: 792,
    11: 798, 12: 797, 13: 798, 14: 798, 15: 799, 16: 799, 17: 800, 18: 799, 19: 799, 20: 797,
}


def counts(y):
    u, c = np.unique(y, return_counts=True)
    return {int(k) if float(k).is_integer() else float(k): int(v) for k, v in zip(u, c, strict=True)}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def svmlight_bytes(X, y) -> bytes:
    buf = io.BytesIO()
    dump_svmlight_file(X, y, buf, zero_based=False)
    return buf.getvalue()


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    # multiples of 1/8: exact in the text format, so the round trip is bit-identical
    X = np.round(8 * rng.standard_normal((30, 7))) / 8 * (rng.random((30, 7)) < 0.4)
    X[:, -1] = 1.0  # last column non-empty: the inferred width is 7
    y = rng.choice([-1.0, 1.0], size=30)
    return sp.csr_matrix(X), y


class FakeURLOpen:
    """Stands in for urllib's urlopen: serves bytes from a dict, counts calls."""

    def __init__(self, payloads):
        self.payloads = payloads
        self.calls = []

    def __call__(self, url, timeout=None):
        self.calls.append(url)
        return io.BytesIO(self.payloads[url])


@pytest.fixture
def fake_urlopen(monkeypatch):
    def install(payloads):
        fake = FakeURLOpen(payloads)
        monkeypatch.setattr(libsvm, "_urlopen", fake)
        return fake

    return install


# ---------------------------------------------------------------- cache directory


def test_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("CDLEARN_DATA", str(tmp_path / "env"))
    assert data_home(tmp_path / "arg") == tmp_path / "arg"
    assert data_home() == tmp_path / "env"
    monkeypatch.delenv("CDLEARN_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_home() == tmp_path / "home" / ".cache" / "cdlearn"


# ---------------------------------------------------------------- registry


def test_registry_entries():
    required = {
        "leu", "leu.t", "a9a", "a9a.t", "w8a", "news20", "mushrooms", "reuters-money-fx",
        "reuters-money-fx.t", "ijcnn1", "ijcnn1.t", "abalone_scale", "arcene", "arcene.valid",
        "news20.binary", "rcv1.binary", "real-sim",
    }
    assert required <= set(DATASETS)
    for name, info in DATASETS.items():
        assert info.name == name
        assert info.url.startswith("https://")
        assert info.download_name in info.files
        assert info.task in ("binary", "multiclass", "regression")
        for fname, digest in info.sha256.items():
            assert fname in info.files + info.labels_files
            assert re.fullmatch("[0-9a-f]{64}", digest)
    assert DATASETS["a9a.t"].n_features == 123
    assert DATASETS["reuters-money-fx.t"].n_features == 8315
    assert DATASETS["news20"].task == "multiclass"
    assert DATASETS["abalone_scale"].task == "regression"
    for name in ("news20.binary", "rcv1.binary", "real-sim"):
        assert "/libsvmtools/datasets/binary/" in DATASETS[name].url
        assert not DATASETS[name].sha256
    with pytest.raises(TypeError):
        DATASETS["a9a"].sha256["a9a"] = "0" * 64  # read-only mapping


def test_registry_checksums_match_shared_files(data_dir):
    """Every known checksum matches the stored file (or, for plain names, its xz content)."""
    checked = 0
    for info in DATASETS.values():
        for fname, digest in info.sha256.items():
            path = data_dir / fname
            if path.is_file():
                assert sha256(path.read_bytes()) == digest, fname
                checked += 1
            elif (data_dir / f"{fname}.xz").is_file():
                assert sha256(lzma.decompress((data_dir / f"{fname}.xz").read_bytes())) == digest
                checked += 1
    if (data_dir / "README.md").is_file():  # the full shared directory: all 20 checked
        assert checked == 20
    assert checked > 0


# ---------------------------------------------------------------- real data


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_dataset(load, name):
    shape, nnz, label_counts = REAL[name]
    X, y = load(name)
    assert isinstance(X, sp.csr_matrix)
    assert X.shape == shape
    assert X.nnz == nnz
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.has_canonical_format
    assert counts(y) == label_counts
    assert np.isfinite(X.data).all()


def test_news20(load):
    X, y = load("news20")
    assert X.shape == (15_935, 62_061)
    assert X.nnz == 1_272_569
    assert counts(y) == NEWS20_COUNTS
    assert all(780 <= c <= 800 for c in NEWS20_COUNTS.values())
    Xb, yb = load("news20", binary=True)  # from the in-process cache
    assert counts(yb) == {-1: 7_951, 1: 7_984}
    assert (Xb != X).nnz == 0


def test_abalone(load):
    X, y = load("abalone_scale")
    assert X.shape == (4_177, 8)
    assert X.nnz == 32_080
    assert len(np.unique(y)) == 28
    assert y.min() == 1 and y.max() == 29


def test_a9a_t_width(load):
    assert load("a9a.t")[0].shape == (16_281, 123)  # registry width
    assert load("a9a.t", n_features=122)[0].shape == (16_281, 122)
    assert load("a9a.t", n_features=200)[0].shape == (16_281, 200)
    X, _ = load("a9a.t")
    Xw, _ = load("a9a.t", n_features=200)
    assert (Xw[:, :123] != X).nnz == 0
    with pytest.raises(ValueError, match=r"a9a\.t\.xz"):
        load("a9a.t", n_features=100)


def test_arcene_width(load):
    X, _ = load("arcene", n_features=10_005)
    assert X.shape == (100, 10_005) and X.nnz == 540_941
    with pytest.raises(ValueError, match="smaller"):
        load("arcene", n_features=9_999)


def test_load_binary(load):
    X, y = load("mushrooms", binary=True)
    assert X.shape == (8_124, 112)
    assert counts(y) == {-1: 3_916, 1: 4_208}
    assert counts(load("a9a", binary=True)[1]) == {-1: 24_720, 1: 7_841}
    assert counts(load("arcene", binary=True)[1]) == {-1: 56, 1: 44}
    with pytest.raises(ValueError, match="regression"):
        load("abalone_scale", binary=True)


def test_load_binary_paths(tmp_path, toy):
    X, _ = toy
    for labels, neg in (((0.0, 1.0), 0.0), ((1.0, 2.0), 1.0), ((-1.0, 1.0), -1.0)):
        y = np.where(np.arange(30) % 3 == 0, labels[0], labels[1])
        path = tmp_path / f"b{neg}.svm"
        path.write_bytes(svmlight_bytes(X, y))
        _, yb = load_binary(path)
        np.testing.assert_array_equal(yb, np.where(y == neg, -1.0, 1.0))
    path = tmp_path / "multi.svm"
    path.write_bytes(svmlight_bytes(X, np.arange(30) % 3))
    with pytest.raises(ValueError, match="not binary"):
        load_binary(path)


def test_dtype_float32_and_copies(load):
    X32, y32 = load("mushrooms", dtype=np.float32)
    assert X32.dtype == np.float32 and y32.dtype == np.float64
    X, y = load("mushrooms")
    X.data[:] = -5.0
    y[:] = 0.0
    X2, y2 = load("mushrooms")  # the cached copy is untouched
    assert X2.data.min() >= 0 and counts(y2) == {1: 3_916, 2: 4_208}
    assert X2.data.flags.writeable and y2.flags.writeable


def test_env_var_cache(monkeypatch, data_dir):
    monkeypatch.setenv("CDLEARN_DATA", str(data_dir))
    X, y = load_libsvm("mushrooms", download=False)
    assert X.shape == (8_124, 112)


# ---------------------------------------------------------------- formats


@pytest.mark.parametrize(
    "suffix, compress",
    [
        ("", lambda b: b),
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
    ],
)
def test_compressions_roundtrip(tmp_path, toy, suffix, compress):
    X, y = toy
    path = tmp_path / f"toy.svm{suffix}"
    path.write_bytes(compress(svmlight_bytes(X, y)))
    X2, y2 = load_libsvm(path)
    assert X2.shape == (30, 7)
    np.testing.assert_array_equal(X2.toarray(), X.toarray())
    np.testing.assert_array_equal(y2, y)
    X3, _ = load_libsvm(str(path), n_features=10)  # str path, wider
    assert X3.shape == (30, 10)
    np.testing.assert_array_equal(X3.toarray()[:, :7], X.toarray())


def test_compression_detected_by_content(tmp_path, toy):
    X, y = toy
    path = tmp_path / "toy_without_suffix"
    path.write_bytes(lzma.compress(svmlight_bytes(X, y)))
    np.testing.assert_array_equal(load_libsvm(path)[0].toarray(), X.toarray())


@pytest.mark.parametrize(
    "fname, content",
    [
        ("garbage.svm", b"this is not svmlight\n"),
        ("badpair.svm", b"1 1:0.5 2:x\n"),
        ("truncated.xz", lzma.compress(b"1 1:0.5\n" * 1000)[:40]),
        ("corrupt.bz2", b"BZh9" + b"\x00" * 64),
        ("corrupt.gz", b"\x1f\x8b" + b"\x00" * 64),
    ],
)
def test_corrupt_file(tmp_path, fname, content):
    path = tmp_path / fname
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(fname)):
        load_libsvm(path)


def test_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.svm"):
        load_libsvm(tmp_path / "nope.svm")
    with pytest.raises(FileNotFoundError):
        load_libsvm(str(tmp_path / "nope"))


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown dataset 'no-such-set'") as err:
        load_libsvm("no-such-set")
    assert "a9a" in str(err.value) and "news20" in str(err.value)
    with pytest.raises(TypeError):
        load_libsvm(42)


def test_missing_without_download(tmp_path, monkeypatch, fake_urlopen):
    fake = fake_urlopen({})
    with pytest.raises(FileNotFoundError) as err:
        load_libsvm("a9a", cache_dir=tmp_path, download=False)
    msg = str(err.value)
    assert str(tmp_path / "a9a.xz") in msg and "CDLEARN_DATA" in msg
    monkeypatch.setenv("CDLEARN_DATA", str(tmp_path / "env"))
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "env"))):
        load_libsvm("arcene", download=False)
    assert fake.calls == []


# ---------------------------------------------------------------- checksums, download


def test_checksum_mismatch_in_cache(tmp_path, toy):
    X, y = toy
    (tmp_path / "mushrooms.xz").write_bytes(lzma.compress(svmlight_bytes(X, y)))
    with pytest.raises(ValueError, match="checksum mismatch") as err:
        load_libsvm("mushrooms", cache_dir=tmp_path, download=False)
    msg = str(err.value)
    assert "mushrooms.xz" in msg and DATASETS["mushrooms"].sha256["mushrooms.xz"] in msg
    with pytest.warns(UserWarning, match="registry expects 8124"):
        X2, _ = load_libsvm("mushrooms", cache_dir=tmp_path, download=False, verify=False)
    assert X2.shape == (30, 112)


def test_download_real_entry(tmp_path, data_dir, fake_urlopen):
    """mushrooms from the LIBSVM site is the plain file: served locally, checksum verified."""
    info = DATASETS["mushrooms"]
    plain = lzma.decompress((data_dir / "mushrooms.xz").read_bytes())
    fake = fake_urlopen({info.url: plain})
    cache = tmp_path / "cache"  # created on download
    X, y = load_libsvm("mushrooms", cache_dir=cache)
    assert fake.calls == [info.url]
    assert X.shape == (8_124, 112) and X.nnz == 170_604
    assert sorted(p.name for p in cache.iterdir()) == ["mushrooms"]
    assert (cache / "mushrooms").read_bytes() == plain
    load_libsvm("mushrooms", cache_dir=cache)
    load_binary("mushrooms", cache_dir=cache)
    assert fake.calls == [info.url]  # present now: no second download


def test_download_dense_with_labels(tmp_path, monkeypatch, fake_urlopen):
    A = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]])
    data = b"0 1 2 \n3 0 0 \n"
    labels = b"1\n-1\n"
    info = DatasetInfo(
        name="toy-dense", files=("toy.data.xz", "toy.data"), url="https://example.invalid/toy.data",
        sha256={"toy.data": sha256(data)}, n_samples=2, n_features=3, task="binary",
        description="toy", fmt="dense", labels_files=("toy.labels",),
        labels_url="https://example.invalid/toy.labels",
    )
    monkeypatch.setitem(DATASETS, "toy-dense", info)
    fake = fake_urlopen({info.url: data, info.labels_url: labels})
    X, y = load_libsvm("toy-dense", cache_dir=tmp_path)
    np.testing.assert_array_equal(X.toarray(), A)
    np.testing.assert_array_equal(y, [1.0, -1.0])
    assert sorted(fake.calls) == sorted([info.url, info.labels_url])
    load_libsvm("toy-dense", cache_dir=tmp_path)
    assert len(fake.calls) == 2


def test_download_checksum_mismatch_leaves_nothing(tmp_path, monkeypatch, toy, fake_urlopen):
    X, y = toy
    payload = bz2.compress(svmlight_bytes(X, y))
    wrong = "0" * 64
    info = DatasetInfo(
        name="toy", files=("toy.bz2",), url="https://example.invalid/toy.bz2",
        sha256={"toy.bz2": wrong}, n_samples=30, n_features=7, task="binary", description="toy",
    )
    monkeypatch.setitem(DATASETS, "toy", info)
    fake = fake_urlopen({info.url: payload})
    with pytest.raises(ValueError, match="checksum mismatch") as err:
        load_libsvm("toy", cache_dir=tmp_path)
    assert wrong in str(err.value) and sha256(payload) in str(err.value)
    assert "toy.bz2" in str(err.value)
    assert list(tmp_path.iterdir()) == []
    assert fake.calls == [info.url]
    # verify=False accepts the download
    X2, y2 = load_libsvm("toy", cache_dir=tmp_path, verify=False)
    np.testing.assert_array_equal(X2.toarray(), X.toarray())
    assert [p.name for p in tmp_path.iterdir()] == ["toy.bz2"]


def test_download_interrupted_leaves_nothing(tmp_path, monkeypatch):
    class Broken(io.BytesIO):
        def read(self, n=-1):
            if self.tell() > 0:
                raise OSError("connection reset")
            return super().read(4)

    monkeypatch.setattr(libsvm, "_urlopen", lambda url, timeout=None: Broken(b"1 1:1\n" * 10))
    with pytest.raises(OSError, match="connection reset"):
        load_libsvm("w8a", cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_clear_cache(tmp_path, toy):
    X, y = toy
    path = tmp_path / "toy.svm"
    path.write_bytes(svmlight_bytes(X, y))
    load_libsvm(path)
    assert libsvm._read_cached.cache_info().currsize >= 1
    clear_cache()
    assert libsvm._read_cached.cache_info().currsize == 0
    assert Path(path).is_file()


# ---------------------------------------------------------------- robustness (issue 19)


def test_blank_lines_bom_crlf_comments_parse_as_the_clean_file(tmp_path, toy):
    X, y = toy
    clean = svmlight_bytes(X, y)
    lines = clean.splitlines()
    messy = b"\xef\xbb\xbf" + b"\n \t\n".join(
        [b"# header comment"] + [ln + b"  # note\r" for ln in lines]) + b"\n" * 5000 + b"  "
    (tmp_path / "clean.svm").write_bytes(clean)
    (tmp_path / "messy.xz").write_bytes(lzma.compress(messy))
    Xc, yc = load_libsvm(tmp_path / "clean.svm")
    Xm, ym = load_libsvm(tmp_path / "messy.xz")
    assert (Xc != Xm).nnz == 0 and Xm.shape == (30, 7)
    np.testing.assert_array_equal(yc, ym)


def test_many_blank_lines_are_skipped_in_chunks(tmp_path, monkeypatch):
    """20 MB of newlines reach scikit-learn's parser as a handful of lines, not 2·10⁷."""
    (tmp_path / "nl.gz").write_bytes(gzip.compress(b"1 1:1\n" + b"\n" * 20_000_000
                                                   + b"-1 2:1\n"))
    seen = []
    real = libsvm._Lines.__iter__

    def counting(self):
        for line in real(self):
            seen.append(line)
            yield line

    monkeypatch.setattr(libsvm._Lines, "__iter__", counting)
    X, y = load_libsvm(tmp_path / "nl.gz")
    assert X.shape == (2, 2) and list(y) == [1.0, -1.0]
    assert len(seen) < 100


def test_max_bytes_bounds_the_decompressed_size(tmp_path):
    path = tmp_path / "bomb.xz"
    path.write_bytes(lzma.compress(b"1 1:1\n" + b"\n" * 3_000_000))
    with pytest.raises(ValueError, match=r"more than max_bytes=1,000,000 bytes of text "
                                         r"\(1 MB\) once decompressed; pass a larger max_bytes"):
        load_libsvm(path, max_bytes=1_000_000)
    X, _ = load_libsvm(path, max_bytes=4_000_000)
    assert X.shape == (1, 1)
    with pytest.raises(ValueError, match="max_bytes must be positive"):
        load_libsvm(path, max_bytes=0)


def test_progress_on_long_reads(tmp_path, monkeypatch, capsys):
    clock = iter(range(0, 10_000, 3))  # every read looks 3 s later than the last
    monkeypatch.setattr(libsvm.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(libsvm, "_CHUNK", 1000)
    (tmp_path / "p.svm").write_bytes(b"1 1:1\n" * 1000)
    load_libsvm(tmp_path / "p.svm", progress=True)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "cdlearn: reading p.svm: 1 KB" and err[-1] == "cdlearn: reading p.svm: 6 KB"
    clear_cache()
    load_libsvm(tmp_path / "p.svm")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("content, where", [
    (b"1 1:1\n2 1:1 x\n", "line 2: 'x' is not an index:value pair (missing ':')"),
    (b"1 a:1\n", "line 1: the feature index 'a' is not an integer"),
    (b"1 -2:1\n", "line 1: the feature index -2 is negative"),
    (b"1 2:1 2:3\n", "line 1: feature indices must be increasing and unique: 2 after 2"),
    (b"\n\n1 1:1\n-1 4:x\n", "line 4: the value 'x' of feature 4 is not a number"),
    (b"1 1:1\r\nabc 1:1\r\n", "line 2: the label 'abc' is not a number"),
    (b"1 1:1\n-1 2147483648:1\n", "line 2: the feature index 2147483648 exceeds the limit "
                                  "2,147,483,647 (2^31 - 1)"),
    (b"1 1:1\n-1 1:1e999\n", "line 2: the value '1e999' of feature 1 is not finite"),
])
def test_invalid_lines_are_named(tmp_path, content, where):
    path = tmp_path / "bad.svm.bz2"
    path.write_bytes(bz2.compress(content))
    with pytest.raises(ValueError) as err:
        load_libsvm(path)
    assert str(err.value).startswith(f"{path}, {where}")


def test_compact_and_select_features():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([5, 300_000_000, 5, 9]),
                       np.array([0, 2, 4])), shape=(2, 300_000_001))
    Xc, ids = libsvm.compact_features(X)
    assert list(ids) == [5, 9, 300_000_000]
    np.testing.assert_array_equal(Xc.toarray(), [[1.0, 0.0, 2.0], [3.0, 4.0, 0.0]])
    T = sp.csr_matrix((np.array([7.0, 8.0, 9.0]), np.array([1, 9, 400_000_000]),
                       np.array([0, 1, 3])), shape=(2, 400_000_001))
    np.testing.assert_array_equal(libsvm.select_features(T, ids).toarray(),
                                  [[0.0, 0.0, 0.0], [0.0, 8.0, 0.0]])
    with pytest.raises(ValueError, match="sorted, unique"):
        libsvm.select_features(T, [9, 5])


def test_failed_download_removes_the_directories_it_created(tmp_path, monkeypatch):
    def unreachable(url, timeout=None):
        raise OSError("unreachable (test)")

    monkeypatch.setattr(libsvm, "_urlopen", unreachable)
    cache = tmp_path / "a" / "b" / "c"
    with pytest.raises(OSError, match="unreachable"):
        load_libsvm("w8a", cache_dir=cache)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "keep").mkdir()
    with pytest.raises(OSError, match="unreachable"):
        load_libsvm("w8a", cache_dir=tmp_path / "keep" / "new")
    assert [p.name for p in tmp_path.iterdir()] == ["keep"]
    assert list((tmp_path / "keep").iterdir()) == []


def test_unverified_downloads_warn(tmp_path, fake_urlopen, toy):
    X, y = toy
    info = DATASETS["real-sim"]
    assert not info.download_verified and not info.sha256
    fake_urlopen({info.url: bz2.compress(svmlight_bytes(X, y))})
    with pytest.warns(UserWarning, match=r"no checksum is known for real-sim.bz2 .* NOT verified"):
        with pytest.warns(UserWarning, match="registry expects 72309"):
            load_libsvm("real-sim", cache_dir=tmp_path)


def test_which_downloads_are_verified():
    verified = {name for name, info in DATASETS.items() if info.download_verified}
    assert verified == {"leu", "leu.t", "a9a", "a9a.t", "w8a", "news20", "mushrooms",
                        "reuters-money-fx", "reuters-money-fx.t"}


def test_every_shared_file_is_registered_with_its_checksum(data_dir):
    registered = {}
    for info in DATASETS.values():
        for fname in (*info.files, *info.labels_files):
            registered.setdefault(fname, info)
    for path in sorted(data_dir.iterdir()):
        if path.name == "README.md":
            continue
        assert path.name in registered, path.name
        assert registered[path.name].sha256[path.name] == sha256(path.read_bytes()), path.name
