"""cdlearn.distributed: CoCoA+ and distributed Newton, in-process and on a real LocalCluster.

References: the single-machine optimum of :func:`cdlearn.solve` (tol 1e-12), the
single-machine certificate of :func:`cdlearn.objectives.primal_and_gap` at the
same point, and single-machine dual CD's iterates (K = 1).
"""

from __future__ import annotations

import os
import signal
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import xlogy

import cdlearn
import cdlearn.distributed as cdd
from cdlearn.api import make_problem
from cdlearn.objectives import certificate_from_dual_point, primal_and_gap
from cdlearn.solvers.base import initial_primal
from cdlearn.solvers.dual_cd import DualCDState

LAM = 1e-2
TOL = 1e-8


def _problem(n=200, d=300, seed=1):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.05, random_state=seed, format="csr")
    y = np.sign(X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return X, y


@pytest.fixture(scope="module")
def data():
    return _problem()


_OPTIMA = {}


def _optimum(X, y, loss, penalty):
    key = (loss, penalty, X.shape, X.nnz, float(X.sum()))
    if key not in _OPTIMA:
        _OPTIMA[key] = cdlearn.solve(X, y, loss=loss, penalty=penalty, lam=LAM, tol=1e-12,
                                     solver="dual-cd", max_epochs=20000).primal
    return _OPTIMA[key]


def _p0(X, y, loss):
    return initial_primal(make_problem(X, y, loss=loss, penalty="l2", lam=LAM))


def _check_optimal(res, X, y, loss, penalty):
    p = make_problem(X, y, loss=loss, penalty=penalty, lam=LAM)
    p0 = _p0(X, y, loss)
    assert res.converged, res.message
    assert res.gap <= TOL * p0
    # the returned point's own single-machine certificate (independent of the shards)
    z = X @ res.w
    u = X.T @ res.alpha / X.shape[0]
    primal, gap = primal_and_gap(p.loss_code, z, res.alpha, p.y, p.sample_weight, res.w, u,
                                 p.l1, p.l2)
    assert gap <= 1.01 * TOL * p0
    assert abs(res.primal - primal) <= 1e-12 * abs(primal)
    assert abs(res.primal - _optimum(X, y, loss, penalty)) <= TOL * p0


# --------------------------------------------------------------------------- in-process
@pytest.mark.parametrize("K", [2, 4, 8])
@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "squared"])
def test_cocoa_reaches_single_machine_optimum(data, loss, penalty, K):
    X, y = data
    res = cdd.solve(X, y, loss=loss, penalty=penalty, lam=LAM, n_shards=K, method="cocoa+",
                    tol=TOL, max_rounds=3000)
    assert res.solver == "cocoa+" and res.info["n_shards"] == K
    _check_optimal(res, X, y, loss, penalty)


def test_cocoa_hinge(data):
    X, y = data
    res = cdd.solve(X, y, loss="hinge", penalty="l2", lam=LAM, n_shards=2, tol=TOL,
                    max_rounds=3000)
    assert res.info["reason"].startswith("a non-smooth loss")
    _check_optimal(res, X, y, "hinge", "l2")


@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "squared"])
def test_newton_reaches_single_machine_optimum(data, loss, K):
    X, y = data
    res = cdd.solve(X, y, loss=loss, penalty="l2", lam=LAM, n_shards=K, method="newton",
                    tol=TOL, max_rounds=50)
    assert res.solver == "newton"
    p0 = _p0(X, y, loss)
    assert res.converged and res.gap <= TOL * p0
    assert abs(res.primal - _optimum(X, y, loss, "l2")) <= TOL * p0
    # Newton's dual point α = -sφ'(Xw): the single-machine gap at w agrees
    ref = cdlearn.objectives.certificate_from_margins(
        cdlearn.data.as_design(X), make_problem(X, y, loss=loss, penalty="l2",
                                                lam=LAM).loss_code,
        X @ res.w, y, np.ones(X.shape[0]), res.w, 0.0, LAM)
    assert abs(ref[2] - res.gap) <= 1e-12 * ref[0] + 1e-9 * res.gap


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
def test_certificate_equals_single_machine_evaluation(data, loss, penalty, K=3):
    X, y = data
    p = make_problem(X, y, loss=loss, penalty=penalty, lam=LAM)
    for rounds in (3, 40):  # a large gap and a small one
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = cdd.solve(X, y, loss=loss, penalty=penalty, lam=LAM, n_shards=K,
                            method="cocoa+", tol=1e-14, max_rounds=rounds)
        u = X.T @ res.alpha / X.shape[0]
        primal, gap = primal_and_gap(p.loss_code, X @ res.w, res.alpha, p.y, p.sample_weight,
                                     res.w, u, p.l1, p.l2)
        assert abs(res.primal - primal) <= 1e-12 * abs(primal)
        assert abs(res.gap - gap) <= 1e-12 * gap
        assert abs(res.dual - (primal - gap)) <= 1e-12 * abs(primal)


@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
@pytest.mark.parametrize("loss", ["squared", "squared_hinge", "hinge"])
def test_one_shard_gives_single_machine_dual_cd_iterates(data, loss, penalty):
    X, y = data
    state = DualCDState(make_problem(X, y, loss=loss, penalty=penalty, lam=LAM),
                        sampling="shuffle", seed=3)
    single = []
    for _ in range(12):
        state.run_epoch()
        single.append(state.w.copy())
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cdd.solve(X, y, loss=loss, penalty=penalty, lam=LAM, n_shards=1, method="cocoa+",
                  tol=1e-15, max_rounds=12, seed=3,
                  callback=lambda s: seen.append(s.w.copy()) and False)
    # round r certifies the point after r rounds of one local epoch each
    assert len(seen) == 13
    for r in range(1, 13):
        scale = np.max(np.abs(single[r - 1]))
        assert np.max(np.abs(seen[r] - single[r - 1])) <= 1e-12 * scale


def test_trace_columns_and_bytes(data):
    X, y = data
    res = cdd.solve(X, y, loss="logistic", lam=LAM, n_shards=2, method="cocoa+", tol=1e-6)
    t = res.trace
    assert t.columns[-4:] == ("round", "bytes_up", "bytes_down", "comm_seconds")
    assert np.array_equal(t["round"], np.arange(len(t)))
    d = X.shape[1]
    # every round after the first sends v (8d bytes), five scalars and the line search's
    # step (t, m) to each of 2 shards
    assert np.array_equal(np.diff(t["bytes_down"]), np.full(len(t) - 1, 2 * (8 * d + 7 * 8)))
    assert np.all(np.diff(t["bytes_up"]) > 0)
    assert np.all(t["comm_seconds"] == 0.0)  # in-process: no communication
    assert res.info["restarted_shards"] == 0


def test_auto_rule(data):
    X, y = data
    small = cdd.choose_method("auto", "logistic", 0.0, 1.0, (10**6, 123))
    assert small[0] == "newton" and "123 features" in small[1]
    assert cdd.choose_method("auto", "logistic", 0.0, 1.0, (10**6, 5000))[0] == "cocoa+"
    # elastic net: proximal Newton on few features, CoCoA+ on many
    assert cdd.choose_method("auto", "logistic", 0.5, 0.5, (10**6, 10))[0] == "newton"
    assert cdd.choose_method("auto", "logistic", 0.5, 0.5, (10**6, 5000))[0] == "cocoa+"
    assert cdd.choose_method("auto", "logistic", 0.5, 0.5, (10, 100))[0] == "proxcocoa+"
    assert cdd.choose_method("auto", "squared", 1.0, 0.0, (10**6, 10))[0] == "proxcocoa+"
    assert cdd.choose_method("auto", "hinge", 0.0, 1.0, (10**6, 10))[0] == "cocoa+"
    res = cdd.solve(X, y, loss="logistic", lam=LAM, n_shards=2, tol=TOL)
    assert res.solver == "newton" and res.info["reason"].startswith("300 features")


def test_libsvm_shards_match_in_memory(tmp_path, data):
    from sklearn.datasets import dump_svmlight_file

    X, y = data
    X = X.tolil()
    X[:, -1] = 0.0  # only the last shard's file reaches the last feature
    X[-1, -1] = 1.0
    X = X.tocsr()
    paths = []
    for k, rows in enumerate(np.array_split(np.arange(X.shape[0]), 3)):
        path = tmp_path / f"part-{k}.svm"
        dump_svmlight_file(X[rows], y[rows], str(path), zero_based=False)
        paths.append(str(path))
    res = cdd.solve(paths, loss="logistic", lam=LAM, method="cocoa+", tol=TOL)
    assert res.w.shape == (X.shape[1],)
    _check_optimal(res, X, y, "logistic", "l2")  # alpha in file order = row order here


def test_auto_on_shards_decides_from_their_width(data):
    """Row shards reveal d only once loaded: "auto" then picks Newton for an intercept
    with 300 features (it raised CoCoA+'s intercept error before looking at d)."""
    X, y = data
    parts = [(X[:120], y[:120]), (X[120:], y[120:])]
    res = cdd.solve(parts, loss="logistic", lam=LAM, tol=TOL, fit_intercept=True)
    ref = cdlearn.solve(X, y, loss="logistic", lam=LAM, tol=1e-13, fit_intercept=True)
    assert res.solver == "newton" and res.info["reason"].startswith("300 features")
    assert abs(res.primal - ref.primal) <= TOL * _p0(X, y, "logistic")
    with pytest.raises(ValueError, match="chose ProxCoCoA.*pass X and y in memory"):
        cdd.solve([(X[:20], y[:20])], loss="squared", penalty="elastic_net", lam=LAM)


def test_shards_in_memory_as_pairs(data):
    X, y = data
    parts = [(X[:120], y[:120]), (X[120:], y[120:])]
    res = cdd.solve(parts, loss="squared", lam=LAM, method="cocoa+", tol=TOL)
    _check_optimal(res, X, y, "squared", "l2")


def test_duplicate_rows_share_a_shard():
    X, y = _problem(60, 30)
    X = sp.vstack([X, X[:20]]).tocsr()
    y = np.concatenate([y, -y[:20]])
    res = cdd.solve(X, y, loss="logistic", lam=LAM, n_shards=3, method="cocoa+", tol=TOL)
    assert res.converged
    from cdlearn.distributed._solve import _hash_partition

    shard = _hash_partition(cdlearn.data.as_design(X), 3)
    assert np.array_equal(shard[:20], shard[60:])


def test_interrupt_returns_best_iterate(data):
    X, y = data

    def stop(state):
        if state.epoch == 3:
            raise KeyboardInterrupt

    with pytest.warns(RuntimeWarning, match="interrupted"):
        res = cdd.solve(X, y, loss="logistic", lam=LAM, n_shards=2, method="cocoa+",
                        tol=1e-12, callback=stop)
    assert res.info["interrupted"] and not res.converged
    assert res.gap == np.min(res.trace["gap"])


# --------------------------------------------------------------------------- bad input
def test_shards_with_different_features(data):
    X, y = data
    with pytest.raises(ValueError, match="shard 1 has 299 features"):
        cdd.solve([(X[:100], y[:100]), (X[100:, :299], y[100:])], loss="squared", lam=LAM)


def test_bad_libsvm_shards(tmp_path, data):
    from sklearn.datasets import dump_svmlight_file

    X, y = data
    good = tmp_path / "good.svm"
    dump_svmlight_file(X[:100], y[:100], str(good), zero_based=False)
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    garbage = tmp_path / "garbage.svm"
    garbage.write_text("1 3:x\n")
    missing = tmp_path / "missing.svm"
    for path, match in ((empty, "empty.svm"), (garbage, "garbage.svm"),
                        (missing, "missing.svm")):
        with pytest.raises(ValueError, match=f"shard .*{match}"):
            cdd.solve([str(good), str(path)], loss="squared", lam=LAM)
    with pytest.raises(ValueError, match="shard .*good.svm: .* contains 300 features"):
        cdd.solve([str(good)], loss="squared", lam=LAM, n_features=10)


def test_bad_labels_name_the_shard(data):
    X, y = data
    with pytest.raises(ValueError, match="shard 1: "):
        cdd.solve([(X[:100], y[:100]), (X[100:], 2 * y[100:])], loss="logistic", lam=LAM)


def test_bad_arguments(data):
    X, y = data
    with pytest.raises(ValueError, match="method"):
        cdd.solve(X, y, lam=LAM, method="hydra")
    with pytest.raises(ValueError, match="l1_ratio must be in"):
        cdd.solve(X, y, lam=LAM, penalty="elastic_net", l1_ratio=1.5)
    with pytest.raises(ValueError, match="lam"):
        cdd.solve(X, y)
    with pytest.raises(ValueError, match="method='newton' needs a smooth loss"):
        cdd.solve(X, y, loss="hinge", lam=LAM, method="newton")
    with pytest.raises(ValueError, match="n_shards=500 exceeds"):
        cdd.solve(X, y, lam=LAM, n_shards=500)
    with pytest.raises(TypeError, match="callback"):
        cdd.solve(X, y, lam=LAM, callback=3)


# --------------------------------------------------------------------------- LocalCluster
def _local_cluster():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
    return cluster, distributed.Client(cluster)


def test_local_cluster(data, tmp_path, monkeypatch):
    """The LocalCluster scenarios below in one test, so that one cluster of 2 worker
    processes runs even when pytest-xdist spreads this module over several processes."""
    cluster, client = _local_cluster()
    with cluster, client:
        _cluster_cocoa(client, data)
        _cluster_placement(client, data, monkeypatch)
        _cluster_newton_from_files(client, data, tmp_path)
        _cluster_bad_shard(client, tmp_path)
        _cluster_worker_killed_mid_solve(client, data)
        _cluster_cli_scheduler(cluster, client, data, tmp_path)
        _cluster_closed_mid_solve(cluster, client, data)  # last: it closes the cluster


def _cluster_cli_scheduler(cluster, client, data, tmp_path):
    """``cdlearn fit --scheduler ADDRESS --shards 8``: the model is the optimum."""
    import json

    from sklearn.datasets import dump_svmlight_file

    from cdlearn.cli import main

    X, y = data
    client.wait_for_workers(2, timeout=60)  # the worker killed above is back
    path, out = tmp_path / "train.svm", tmp_path / "model.json"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    # logistic l2: ~30 CoCoA+ rounds at K = 8 (the squared hinge with elastic net: ~360)
    code = main(["fit", str(path), "--loss", "logistic", "--penalty", "l2", "--lam", str(LAM),
                 "--tol", str(TOL), "--scheduler", cluster.scheduler_address, "--shards", "8",
                 "--method", "cocoa+", "-o", str(out), "-q"])
    model = json.loads(out.read_text())
    assert code == 0 and model["converged"] and model["solver"] == "cocoa+"
    assert model["distributed"]["n_shards"] == 8 and model["distributed"]["bytes_up"] > 0
    p0 = _p0(X, y, "logistic")
    assert abs(model["primal"] - _optimum(X, y, "logistic", "l2")) <= TOL * p0


def _cluster_closed_mid_solve(cluster, client, data):
    """The scheduler and workers go away after round 2: a RuntimeError saying so, not a hang
    (measured: raised ~4 s later, the cluster's own shutdown time)."""
    X, y = data

    def close(state):
        if state.epoch == 2:
            cluster.close()

    with pytest.raises(RuntimeError, match="the Dask client is closed .* cannot go on"):
        cdd.solve(X, y, loss="logistic", lam=LAM, client=client, n_shards=2, method="cocoa+",
                  tol=1e-15, max_rounds=10**6, callback=close)


@pytest.mark.slow  # 21 solves on one LocalCluster: 5.5 min at load ~20 (31 min at load 30 before the CoCoA+ line search)
def test_done_when_on_local_cluster(wide):
    """Issue 21's done-when on a real LocalCluster(n_workers=2, processes=True): K = 2, 4, 8
    shards (K > workers: several shards per worker), CoCoA+ for logistic, squared hinge
    and squared loss with l2 and elastic net, and Lasso through ProxCoCoA+ (small
    problems: the rounds cost the cluster's latency, not compute)."""
    X, y = _problem(120, 80)
    Xw, _, yw = wide
    lam = 0.2 * np.abs(Xw.T @ yw).max() / Xw.shape[0]
    ref = cdlearn.solve(Xw, yw, loss="squared", penalty="l1", lam=lam, tol=1e-13)
    p0w = initial_primal(make_problem(Xw, yw, loss="squared", penalty="l1", lam=lam))
    cluster, client = _local_cluster()
    with cluster, client:
        for K in (2, 4, 8):
            for loss in ("logistic", "squared_hinge", "squared"):
                for penalty in ("l2", "elastic_net"):
                    res = cdd.solve(X, y, loss=loss, penalty=penalty, lam=LAM, client=client,
                                    n_shards=K, method="cocoa+", tol=TOL, max_rounds=3000)
                    assert res.info["n_shards"] == K
                    _check_optimal(res, X, y, loss, penalty)
            res = cdd.solve(Xw, yw, loss="squared", penalty="l1", lam=lam, client=client,
                            n_shards=K, tol=1e-7, max_rounds=3000)
            assert res.solver == "proxcocoa+" and res.converged and res.gap <= 1e-7 * p0w
            assert abs(res.primal - ref.primal) <= 1e-7 * p0w


def _cluster_cocoa(client, data):
    X, y = data
    res = cdd.solve(X, y, loss="logistic", penalty="elastic_net", lam=LAM, client=client,
                    n_shards=2, method="cocoa+", tol=TOL)
    _check_optimal(res, X, y, "logistic", "elastic_net")
    assert res.trace["comm_seconds"][-1] > 0.0 and res.trace["bytes_up"][-1] > 0


def _set_status(dask_worker, status):
    """On a worker (``client.run``): pause it, as its memory monitor would, or resume it."""
    from distributed.core import Status

    dask_worker.memory_manager.memory_pause_fraction = False  # else the monitor resumes it
    dask_worker.status = Status[status]


def _cluster_placement(client, data, monkeypatch):
    """A worker that does not create its shard (its one thread busy, or paused) must
    not hang the solve: the shard goes to the other worker (it once hung in
    ``DaskActors.__init__`` on a creation awaited without a limit, workers idle); with
    no worker able to, a RuntimeError saying why, within the placement's limit."""
    import distributed

    from cdlearn.distributed import _backend

    X, y = data
    client.wait_for_workers(2, timeout=60)
    a, b = sorted(client.scheduler_info()["workers"])
    started, release = distributed.Event("started"), distributed.Event("release")

    def block():  # holds the worker's only thread until released (at most 60 s)
        started.set()
        release.wait(60)

    def solve():
        return cdd.solve(X, y, loss="logistic", lam=LAM, client=client, n_shards=2,
                         method="cocoa+", tol=TOL)

    with monkeypatch.context() as m:
        m.setattr(_backend, "PLACE_SECONDS", 0.5)
        m.setattr(_backend, "PLACE_TOTAL_SECONDS", 2.0)
        m.setattr(_backend, "RESTART_SECONDS", 1.0)
        blocker = client.submit(block, workers=[b], pure=False)
        assert started.wait(30)
        res = solve()  # shard 1 goes to b first, whose thread is busy
        assert res.info["replaced_shards"] == 1
        _check_optimal(res, X, y, "logistic", "l2")
        blockers = [blocker, client.submit(block, workers=[a], pure=False)]
        with pytest.raises(RuntimeError, match=r"could not place shard\(s\) on the Dask workers within 2 s"):
            solve()  # both threads busy
        release.set()
        client.gather(blockers)
        client.run(_set_status, status="paused", workers=[b])
        _wait_for_status(client, b, "paused")
        # the scheduler lists b as paused: both shards on a (once a hang: a task pinned to a
        # paused worker waits for it to resume); a longer limit here, so that a creation on a
        # loaded machine is not counted as a replacement
        m.setattr(_backend, "PLACE_SECONDS", 10.0)
        m.setattr(_backend, "PLACE_TOTAL_SECONDS", 60.0)
        res = solve()
        assert res.info["replaced_shards"] == 0
        _check_optimal(res, X, y, "logistic", "l2")
        client.run(_set_status, status="paused", workers=[a])
        _wait_for_status(client, a, "paused")
        m.setattr(_backend, "PLACE_TOTAL_SECONDS", 2.0)
        with pytest.raises(RuntimeError, match="no running worker to place the shards on"):
            solve()
        client.run(_set_status, status="running")


def _wait_for_status(client, worker, status, timeout=30.0):
    """Until the scheduler lists ``worker`` with ``status`` (a worker's change reaches the
    scheduler asynchronously)."""
    deadline = time.monotonic() + timeout
    while client.scheduler_info()["workers"][worker].get("status") != status:
        assert time.monotonic() < deadline, f"{worker} not {status} after {timeout} s"
        time.sleep(0.05)


def _cluster_newton_from_files(client, data, tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = data
    paths = []
    for k, rows in enumerate(np.array_split(np.arange(X.shape[0]), 2)):
        path = tmp_path / f"part-{k}.svm"
        dump_svmlight_file(X[rows], y[rows], str(path), zero_based=False)
        paths.append(str(path))
    res = cdd.solve(paths, loss="squared_hinge", lam=LAM, client=client, method="newton",
                    tol=TOL, n_features=X.shape[1])
    p0 = _p0(X, y, "squared_hinge")
    assert res.converged and res.gap <= TOL * p0
    assert abs(res.primal - _optimum(X, y, "squared_hinge", "l2")) <= TOL * p0


def _cluster_bad_shard(client, tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("")
    with pytest.raises(ValueError, match="bad.svm is empty"):
        cdd.solve([str(bad)], loss="squared", lam=LAM, client=client)


def _cluster_worker_killed_mid_solve(client, data):
    """A worker killed after round 2: its shards restart elsewhere with α_k = 0."""
    X, y = data
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]

    def kill(state):
        if state.epoch == 2:
            os.kill(pids[victim], signal.SIGKILL)

    res = cdd.solve(X, y, loss="logistic", lam=LAM, client=client, n_shards=4,
                    method="cocoa+", tol=TOL, callback=kill)
    assert res.info["restarted_shards"] == 2  # round-robin: 2 of the 4 shards were there
    _check_optimal(res, X, y, "logistic", "l2")


@pytest.mark.slow  # its own LocalCluster and a worker restart: ~20 s on a loaded machine
def test_cluster_proxcocoa_worker_killed(wide):
    """ProxCoCoA+ on the cluster; a worker killed after round 2 (its blocks restart at 0)."""
    cluster, client = _local_cluster()
    with cluster, client:
        _cluster_proxcocoa_worker_killed(client, wide)


def _cluster_proxcocoa_worker_killed(client, wide):
    X, _, y = wide
    lam = 0.2 * np.abs(X.T @ y).max() / X.shape[0]
    client.wait_for_workers(2, timeout=60)
    pids = client.run(os.getpid)
    victim = sorted(pids)[-1]

    def kill(state):
        if state.epoch == 2:
            os.kill(pids[victim], signal.SIGKILL)

    res = cdd.solve(X, y, loss="squared", penalty="l1", lam=lam, client=client, n_shards=2,
                    tol=1e-7, callback=kill)
    ref = cdlearn.solve(X, y, loss="squared", penalty="l1", lam=lam, tol=1e-13)
    p0 = initial_primal(make_problem(X, y, loss="squared", penalty="l1", lam=lam))
    assert res.solver == "proxcocoa+" and res.info["restarted_shards"] == 1
    assert res.converged and abs(res.primal - ref.primal) <= 1e-7 * p0


# --------------------------------------------------------------------------- ProxCoCoA+
@pytest.fixture(scope="module")
def wide():
    rng = np.random.default_rng(0)
    X = sp.random(50, 500, density=0.1, random_state=2, format="csr")
    y = np.sign(X @ rng.standard_normal(500) + 0.1 * rng.standard_normal(50))
    y[y == 0] = 1.0
    return X, y, X @ rng.standard_normal(500)


@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("penalty", ["l1", "elastic_net"])
def test_proxcocoa_lasso_and_elastic_net(wide, penalty, K):
    X, _, y = wide
    lam = 0.2 * np.abs(X.T @ y).max() / X.shape[0]
    tol = 1e-7
    ref = cdlearn.solve(X, y, loss="squared", penalty=penalty, lam=lam, tol=1e-13)
    res = cdd.solve(X, y, loss="squared", penalty=penalty, lam=lam, n_shards=K, tol=tol,
                    max_rounds=2000)
    assert res.solver == "proxcocoa+" and res.info["reason"].startswith("an l1 penalty")
    p = make_problem(X, y, loss="squared", penalty=penalty, lam=lam)
    p0 = initial_primal(p)
    assert res.converged and res.gap <= tol * p0
    assert abs(res.primal - ref.primal) <= tol * p0
    # the same certificate on one machine, at the returned w with α = -φ'(Xw)
    z = X @ res.w
    alpha = -(z - y)
    primal, dual, gap = certificate_from_dual_point(p.loss_code, z, alpha, p.y,
                                                    p.sample_weight, res.w,
                                                    X.T @ alpha / X.shape[0], p.l1, p.l2)
    assert abs(primal - res.primal) <= 1e-12 * primal
    assert abs(gap - res.gap) <= 1e-9 * gap  # z summed from the shards' X_kΔw_k


def test_proxcocoa_logistic_l1(wide):
    X, y, _ = wide
    lam = 0.2 * np.abs(X.T @ y).max() / (2 * X.shape[0])
    ref = cdlearn.solve(X, y, loss="logistic", penalty="l1", lam=lam, tol=1e-13)
    res = cdd.solve(X, y, loss="logistic", penalty="l1", lam=lam, n_shards=2, tol=1e-5,
                    local_epochs=5, max_rounds=2000)
    p0 = initial_primal(make_problem(X, y, loss="logistic", penalty="l1", lam=lam))
    assert res.converged and res.gap <= 1e-5 * p0
    assert abs(res.primal - ref.primal) <= 1e-5 * p0
    assert res.trace["nnz_w"][-1] == np.count_nonzero(res.w)


def test_proxcocoa_bad_input(wide, tmp_path):
    X, y, _ = wide
    with pytest.raises(ValueError, match="needs a smooth loss"):
        cdd.solve(X, y, loss="hinge", penalty="l1", lam=0.1)
    with pytest.raises(ValueError, match="pass X and y in memory"):
        cdd.solve([(X, y)], loss="squared", penalty="l1", lam=0.1, method="proxcocoa+")
    with pytest.raises(ValueError, match="chose ProxCoCoA.*pass X and y in memory"):
        cdd.solve([(X, y)], loss="squared", penalty="l1", lam=0.1)
    with pytest.raises(ValueError, match="needs an l2 part"):
        cdd.solve([(X, y)], loss="squared", penalty="l1", lam=0.1, method="cocoa+")


def test_one_shard_logistic_iterates(data):
    """Logistic: the step's inner tolerance follows the previous round's gap (one round
    behind a single-machine check, which comes after the epoch): the same schedule here."""
    X, y = data
    p = make_problem(X, y, loss="logistic", penalty="l2", lam=LAM)
    state = DualCDState(p, sampling="shuffle", seed=0)
    single = []
    for r in range(10):
        if r >= 1:
            prev_w, prev_alpha = single[r - 1]  # the gap the driver sent with round r
            _, gap = primal_and_gap(p.loss_code, X @ prev_w, prev_alpha, p.y, p.sample_weight,
                                    prev_w, X.T @ prev_alpha / X.shape[0], 0.0, LAM)
            state.tighten_inner_eps(gap)
        if r == 0:
            single.append((state.w.copy(), state.alpha.copy()))
        state.run_epoch()
        single.append((state.w.copy(), state.alpha.copy()))
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cdd.solve(X, y, loss="logistic", lam=LAM, n_shards=1, method="cocoa+", tol=1e-15,
                  max_rounds=10, callback=lambda s: seen.append(s.w.copy()) and False)
    for r in range(1, 11):
        scale = np.max(np.abs(single[r][0]))
        assert np.max(np.abs(seen[r] - single[r][0])) <= 1e-12 * scale


# --------------------------------------------------------------------------- intercept, weights
def _weights(n, seed=5):
    return np.random.default_rng(seed).uniform(0.2, 2.0, n)


@pytest.mark.parametrize("method,loss,penalty", [
    ("newton", "logistic", "l2"), ("newton", "squared_hinge", "elastic_net"),
    ("proxcocoa+", "logistic", "l2"), ("proxcocoa+", "squared", "elastic_net"),
])
def test_intercept_and_sample_weight(data, method, loss, penalty):
    """The optimum of cdlearn.solve with the same intercept and weights, K = 3."""
    X, y = data
    sw = _weights(X.shape[0])
    kw = dict(loss=loss, penalty=penalty, lam=LAM, fit_intercept=True, sample_weight=sw)
    ref = cdlearn.solve(X, y, tol=1e-13, max_epochs=20000, **kw)
    res = cdd.solve(X, y, n_shards=3, method=method, tol=TOL, max_rounds=5000, **kw)
    p0 = initial_primal(make_problem(X, y, **kw))
    assert res.converged and res.solver == method
    assert abs(res.primal - ref.primal) <= TOL * p0
    # the point returned is certified: its single-machine objective is the one reported
    p = make_problem(X, y, **kw)
    z = X @ res.w + res.intercept
    from cdlearn.objectives import primal_value

    assert abs(primal_value(p.loss_code, z, p.y, sw, res.w, p.l1, p.l2) - res.primal) \
        <= 1e-12 * res.primal
    assert abs(res.intercept - ref.intercept) <= 1e-3 * max(1.0, abs(ref.intercept))


def test_cocoa_refuses_an_intercept(data):
    """CoCoA+ cannot fit b (Σα = 0 couples the shards): a clear error, and "auto"
    routes an intercept to Newton (few features) or ProxCoCoA+ (many)."""
    X, y = data
    with pytest.raises(ValueError, match="fit_intercept=True is not supported by CoCoA"):
        cdd.solve(X, y, loss="logistic", lam=LAM, method="cocoa+", fit_intercept=True)
    with pytest.raises(ValueError, match="fit_intercept=True is not supported by CoCoA.*hinge"):
        cdd.solve(X, y, loss="hinge", lam=LAM, fit_intercept=True)
    assert cdd.choose_method("auto", "logistic", 0.0, 1.0, (10**6, 100), True)[0] == "newton"
    many = cdd.choose_method("auto", "logistic", 0.0, 1.0, (10**6, 5000), True)
    assert many[0] == "proxcocoa+" and "CoCoA+ cannot fit an intercept" in many[1]


def test_proxcocoa_intercept_and_sample_weight(wide):
    X, _, y = wide
    sw = _weights(X.shape[0])
    lam = 0.2 * np.abs(X.T @ (y - y.mean())).max() / X.shape[0]
    kw = dict(loss="squared", penalty="l1", lam=lam, fit_intercept=True, sample_weight=sw)
    ref = cdlearn.solve(X, y, tol=1e-13, **kw)
    res = cdd.solve(X, y, n_shards=2, tol=1e-7, max_rounds=3000, **kw)
    p0 = initial_primal(make_problem(X, y, **kw))
    assert res.solver == "proxcocoa+" and res.converged
    assert abs(res.primal - ref.primal) <= 1e-7 * p0
    assert abs(res.intercept - ref.intercept) <= 1e-3 * max(1.0, abs(ref.intercept))


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "squared"])
def test_newton_elastic_net(data, loss):
    """Proximal Newton (CD on the driver's d×d model) for elastic net, K = 4."""
    X, y = data
    res = cdd.solve(X, y, loss=loss, penalty="elastic_net", lam=LAM, n_shards=4,
                    method="newton", tol=TOL, max_rounds=100)
    p0 = _p0(X, y, loss)
    assert res.solver == "newton" and res.converged and res.gap <= TOL * p0
    assert abs(res.primal - _optimum(X, y, loss, "elastic_net")) <= TOL * p0
    assert 0 < np.count_nonzero(res.w) < X.shape[1]  # the l1 part zeroes coefficients


def test_sample_weight_needs_in_memory_data(data):
    X, y = data
    with pytest.raises(ValueError, match="sample_weight needs an in-memory X"):
        cdd.solve([(X, y)], loss="squared", lam=LAM, sample_weight=np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        cdd.solve(X, y, loss="squared", lam=LAM, sample_weight=np.ones(3))


# --------------------------------------------------------------------------- CoCoA+ reference
def _conj(loss, a, y):
    """φ*(-α) for unit weights, with its first and second derivatives in α."""
    if loss == "squared":
        return 0.5 * a * a - a * y, a - y, np.ones_like(a)
    t = a * y  # logistic: t ∈ [0, 1]; derivatives only inside
    with np.errstate(divide="ignore", invalid="ignore"):
        return (xlogy(t, t) + xlogy(1 - t, 1 - t), y * (np.log(t) - np.log1p(-t)),
                1.0 / (t * (1 - t)))


def _local_argmax(loss, X, y, a, w, lam, n, sigma):
    """CoCoA+'s local subproblem solved exactly (damped Newton): argmax over Δ of
    ``-(1/n)Σφ*(-(α+Δ)) - (1/n)wᵀX_kᵀΔ - σ′/(2λn²)‖X_kᵀΔ‖²``."""
    G = (X @ X.T).toarray()
    z = X @ w
    c = sigma / (lam * n)

    def obj(D):
        t = (a + D) * y
        if loss == "logistic" and np.any((t <= 0) | (t >= 1)):
            return -np.inf
        return -_conj(loss, a + D, y)[0].sum() - z @ D - 0.5 * c * D @ G @ D

    D = np.zeros_like(a) if loss == "squared" or np.all((a * y > 0) & (a * y < 1)) \
        else 0.5 * y - a
    f = obj(D)
    for _ in range(100):
        _, g1, g2 = _conj(loss, a + D, y)
        step = np.linalg.solve(np.diag(g2) + c * G, -g1 - z - c * G @ D)
        t = 1.0
        while obj(D + t * step) < f and t > 1e-10:
            t *= 0.5
        D = D + t * step
        f = obj(D)
        if np.max(np.abs(t * step)) <= 1e-15 * (1.0 + np.max(np.abs(a + D))):
            break
    return D


def _reference_cocoa(shards, loss, lam, rounds, grid):
    """Relative gaps of rounds 0..rounds of CoCoA+ (Ma et al. 2015, Alg. 1: adding,
    γ = 1, σ′ = K) with exact local solves, in numpy; then the best dual point of
    ``α + tΔα + mP`` over ``grid`` (P: the previous move), D evaluated directly."""
    n = sum(X.shape[0] for X, _ in shards)
    K = len(shards)
    alphas = [np.zeros(X.shape[0]) for X, _ in shards]
    moves = [np.zeros(X.shape[0]) for X, _ in shards]

    def dual(al):
        v = sum(X.T @ a for (X, _), a in zip(shards, al, strict=True)) / (lam * n)
        return -sum(_conj(loss, a, y)[0].sum() for (_, y), a in zip(shards, al, strict=True)) / n \
            - 0.5 * lam * v @ v, v

    def loss_sum(z, y):
        return 0.5 * np.sum((z - y) ** 2) if loss == "squared" else np.logaddexp(0, -y * z).sum()

    p0 = sum(loss_sum(np.zeros_like(y), y) for _, y in shards) / n
    gaps = []
    for _ in range(rounds + 1):
        d_val, v = dual(alphas)
        primal = sum(loss_sum(X @ v, y) for X, y in shards) / n + 0.5 * lam * v @ v
        gaps.append((primal - d_val) / p0)
        deltas = [_local_argmax(loss, X, y, a, v, lam, n, K)
                  for (X, y), a in zip(shards, alphas, strict=True)]
        best = None
        for t, m in grid:
            trial = [a + t * D + m * P for a, D, P in zip(alphas, deltas, moves, strict=True)]
            if loss == "logistic" and any(np.any((a * y <= 0) | (a * y >= 1))
                                          for a, (_, y) in zip(trial, shards, strict=True)):
                continue
            value = dual(trial)[0]
            if best is None or value > best[0]:
                best = (value, trial)
        moves = [b - a for b, a in zip(best[1], alphas, strict=True)]
        alphas = best[1]
    return np.array(gaps)


@pytest.mark.parametrize("line_search", [False, True])
@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_cocoa_rounds_match_an_independent_reference(loss, line_search, monkeypatch):
    """Round by round, CoCoA+ with many local epochs (the local subproblem solved to
    rounding) gives the gaps of an independent numpy CoCoA+ with exact local solves:
    the σ′ = K scaling of the local step, the aggregation, the line search and the
    gap are those of the method (K = 3, where K = 1 is one exact solve)."""
    import cdlearn.distributed._solve as solve_mod

    if not line_search:
        monkeypatch.setattr(solve_mod, "COCOA_STEPS", (1.0,))
        monkeypatch.setattr(solve_mod, "COCOA_MOMENTA", (0.0,))
    grid = [(t, m) for t in solve_mod.COCOA_STEPS for m in solve_mod.COCOA_MOMENTA]
    X, y = _problem(60, 40, seed=4)
    lam = 1.0 / X.shape[0]
    shards = [(X[k::3], y[k::3]) for k in range(3)]
    ref = _reference_cocoa(shards, loss, lam, 8, grid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cdd.solve(shards, loss=loss, lam=lam, method="cocoa+", tol=1e-15,
                        max_rounds=8, local_epochs=200)
    gaps = res.trace["gap"] / res.trace["primal"][0]
    assert gaps.shape == ref.shape
    assert ref[-1] < 0.02 * ref[1]  # the rounds made progress, which both must track
    np.testing.assert_allclose(gaps, ref, rtol=1e-4, atol=1e-13)


def _heavy_rows(n=300, d=500, seed=0):
    """Counts with row norms spread over a few orders of magnitude (as news20's)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.05, random_state=seed, format="csr")
    X.data = np.ceil(5 * X.data)
    X = (sp.diags(np.exp(rng.standard_normal(n))) @ X).tocsr()
    y = np.where(X @ rng.standard_normal(d) + rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def test_cocoa_line_search_on_heavy_rows():
    """news20's "stall" in small: rows with large, spread norms and λ = 1/n. CoCoA+'s own
    step needed 72 rounds to a 1e-8 gap at K = 2 (95 at K = 4; one machine: 15 epochs);
    with the driver's dual line search and momentum, 25 (32)."""
    X, y = _heavy_rows()
    lam = 1.0 / X.shape[0]
    p0 = initial_primal(make_problem(X, y, loss="logistic", penalty="l2", lam=lam))
    opt = cdlearn.solve(X, y, loss="logistic", lam=lam, tol=1e-13, solver="dual-cd").primal
    for K in (2, 4):
        res = cdd.solve(X, y, loss="logistic", lam=lam, n_shards=K, method="cocoa+",
                        tol=1e-8, max_rounds=40)
        assert res.converged, (K, res.message)
        assert res.info["rounds"] <= 40 and res.gap <= 1e-8 * p0
        assert abs(res.primal - opt) <= 1e-8 * p0
        assert {tuple(s) for s in res.info["steps"]} != {(1.0, 0.0)}  # the search moved
