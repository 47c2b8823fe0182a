"""Where the shards live: in this process (``client=None``) or as Dask actors.

Both backends offer ``call(method, args)`` -- ``method`` of every shard with
its own arguments, results in shard order -- and count the bytes that travel
and the seconds spent waiting for the shards beyond their own compute.
"""

from __future__ import annotations

import pickle
import time


def payload_bytes(obj) -> int:
    """Bytes of the arrays in ``obj`` (nested tuples/lists), 8 per Python scalar."""
    if hasattr(obj, "nbytes"):
        return int(obj.nbytes)
    if isinstance(obj, tuple | list):
        return sum(payload_bytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(payload_bytes(o) for o in obj.values())
    return 0 if obj is None else 8


#: the longest sleep between two looks at a pending shard (and at the client)
POLL_SECONDS = 0.02
#: how long a lost shard may take to find a live worker and reload there
RESTART_SECONDS = 60.0
#: how long the client may try to reconnect to its scheduler before the solve gives up
RECONNECT_SECONDS = 30.0


class ShardLost(RuntimeError):
    """A shard's worker died during a call; the shard was reloaded elsewhere with α_k = 0."""

    def __init__(self, message, shards):
        super().__init__(message)
        self.shards = shards


class InProcess:
    """The shards as objects in this process, run one after another."""

    restarts = 0

    def __init__(self, specs):
        self.shards = [spec.cls(*spec.args, **spec.kwargs) for spec in specs]

    def call(self, method, args):
        """``method(*args[k])`` of every shard k (skipped where ``args[k]`` is None)."""
        return [None if a is None else getattr(s, method)(*a)
                for s, a in zip(self.shards, args, strict=True)], 0.0

    def close(self):
        self.shards = []


class DaskActors:
    """One :class:`Shard` actor per shard, placed round-robin on the client's workers.

    A shard given in memory is scattered to its worker once; a file is read on
    the worker. When a worker dies during a call, its shards are rebuilt on a
    live worker (from the file, or from the driver's copy of the rows) and
    :class:`ShardLost` is raised so that the driver repeats the round.
    """

    def __init__(self, client, specs, timeout=None):
        self.client = client
        self.specs = list(specs)
        self.timeout = timeout
        self.restarts = 0
        self._connecting_since = None
        self.actors = [None] * len(self.specs)
        # the scattered rows of every shard, held until close(): released as soon as
        # _create returned, they were once forgotten before the actor that needs them
        # was created (FutureCancelledError "lost dependencies", at load 20)
        self._inputs = {}
        deadline = time.perf_counter() + RESTART_SECONDS
        while True:
            workers = self._workers()
            try:
                futures = [self._create(k, workers[k % len(workers)])
                           for k in range(len(self.specs))]
                for k, fut in enumerate(futures):
                    self.actors[k] = fut.result()
                break
            except KeyError as exc:
                # a worker that died a moment ago is still listed (KeyError: its address;
                # seen after a worker was killed and its nanny restarted it): list again
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"could not place the shards on the workers within "
                                       f"{RESTART_SECONDS:g} s ({exc!r})") from exc
                time.sleep(0.5)

    def _workers(self):
        workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            raise RuntimeError("the Dask client has no workers")
        return workers

    def _create(self, k, address):
        spec = self.specs[k]
        args = spec.args
        if not isinstance(args[0], str):  # data in memory: scatter it to that worker
            data = self.client.scatter(args[0], workers=[address], direct=True)
            self._inputs[k] = data
            args = (data, *args[1:])
        return self.client.submit(spec.cls, *args, **spec.kwargs, workers=[address],
                                  actor=True, pure=False, allow_other_workers=False)

    def call(self, method, args):
        """As :meth:`InProcess.call`; also returns the seconds beyond the slowest shard's compute."""
        started = time.perf_counter()
        futures = []
        for a, x in zip(self.actors, args, strict=True):
            try:
                futures.append(None if x is None else a.timed(method, *x))
            except RuntimeError as exc:  # "Worker holding Actor was lost"
                futures.append(exc)
        results, lost, compute = [], [], 0.0
        for k, fut in enumerate(futures):
            if fut is None:
                results.append(None)
                continue
            try:
                if isinstance(fut, Exception):
                    raise fut
                value, seconds = self._wait(fut, k, method, started)
            except (OSError, EOFError, RuntimeError, pickle.UnpicklingError) as exc:
                if isinstance(exc, RuntimeError) and "Actor" not in str(exc):
                    raise
                self._check_connected(method, exc)
                lost.append((k, exc))
                continue
            results.append(value)
            compute = max(compute, seconds)
        if lost:
            shards = [k for k, _ in lost]
            self._restart(shards)
            raise ShardLost(f"shard(s) {shards} lost their worker ({lost[0][1]}); reloaded "
                            f"with alpha_k = 0", shards)
        return results, max(time.perf_counter() - started - compute, 0.0)

    def _wait(self, fut, k, method, started):
        """``fut.result()`` once ``fut.done()``, checking the client while waiting: a call
        on a client closed meanwhile never returns, even with a timeout (it hung the tests)."""
        delay = 1e-4
        while not fut.done():
            self._check_connected(method, None)
            if self.timeout is not None and time.perf_counter() - started > self.timeout:
                raise TimeoutError(f"shard {self.specs[k].kwargs['name']} did not answer "
                                   f"{method!r} within timeout={self.timeout} s")
            time.sleep(delay)
            delay = min(2.0 * delay, POLL_SECONDS)
        return fut.result()

    def _check_connected(self, method, exc):
        """A lost shard is reloaded only while the client still reaches its scheduler."""
        status = getattr(self.client, "status", "running")
        if status == "connecting":  # reconnecting to its scheduler: wait, but not forever
            now = time.perf_counter()
            self._connecting_since = self._connecting_since or now
            if now - self._connecting_since <= RECONNECT_SECONDS:
                return
            status = f"still reconnecting after {RECONNECT_SECONDS:g} s"
        else:
            self._connecting_since = None
        if status != "running":
            raise RuntimeError(f"the Dask client is {status} (it lost its scheduler or was "
                               f"closed) during {method!r}: the solve cannot go on") from exc

    def _restart(self, lost):
        # the scheduler needs a moment to notice the dead worker and drop it
        deadline = time.perf_counter() + RESTART_SECONDS
        gone = self._addresses(lost)
        while True:
            try:
                workers = self._workers()
            except (OSError, RuntimeError):
                workers = []
            alive = [w for w in workers if w not in gone]
            if alive or time.perf_counter() > deadline:
                break
            time.sleep(0.2)
        if not (alive or workers):
            raise RuntimeError(f"no Dask worker to reload shard(s) {lost} on within "
                               f"{RESTART_SECONDS:g} s (the cluster is gone?)")
        workers = alive or workers
        futures = {k: self._create(k, workers[i % len(workers)]) for i, k in enumerate(lost)}
        try:
            for k, fut in futures.items():
                self.actors[k] = fut.result(timeout=RESTART_SECONDS)
        except TimeoutError as exc:
            raise RuntimeError(f"shard(s) {lost} could not be reloaded within "
                               f"{RESTART_SECONDS:g} s (the cluster is gone?)") from exc
        self.restarts += len(lost)

    def _addresses(self, shards):
        return {self.actors[k]._address for k in shards}

    def close(self):
        self.actors = []
        self._inputs = {}
