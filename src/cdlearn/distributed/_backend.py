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
#: a shard not created this long after its placement gets another attempt on another worker
PLACE_SECONDS = 30.0
#: the placement's limit: then a RuntimeError names the shards and the workers' states
PLACE_TOTAL_SECONDS = 300.0


def _alive(fut):
    """A placement attempt that may still give an actor."""
    return fut is not None and fut.status not in ("cancelled", "lost")


def _states(info):
    return {address: w.get("status") for address, w in info.items()} or "none"


class ShardLost(RuntimeError):
    """A shard's worker died during a call; the shard was reloaded elsewhere with α_k = 0."""

    def __init__(self, message, shards):
        super().__init__(message)
        self.shards = shards


class InProcess:
    """The shards as objects in this process, run one after another."""

    restarts = replaced = 0

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
        # was created (FutureCancelledError "lost dependencies", at load 20). They are
        # scattered under fresh keys (hash=False): keyed by content, a shard scattered
        # again by the next solve shared its key with the one being released
        self._inputs = {}
        self.replaced = 0
        self._place(range(len(self.specs)), first=True)

    def _workers(self, exclude=(), deadline=None):
        """The scheduler's running workers (a fresh list, sorted) not in ``exclude``;
        waits for one until ``deadline``, then takes any running worker."""
        while True:
            try:
                info = self.client.scheduler_info()["workers"]
            except (OSError, RuntimeError):  # the scheduler is going away
                info = {}
            running = sorted(a for a, w in info.items() if w.get("status", "running") == "running")
            workers = [a for a in running if a not in exclude]
            late = deadline is None or time.perf_counter() > deadline
            if workers or (running and late):
                return workers or running
            if late:
                raise RuntimeError(f"the Dask client has no running worker to place the "
                                   f"shards on (workers: {_states(info)})")
            self._check_connected("placing the shards", None)
            time.sleep(0.2)

    def _place(self, shards, exclude=(), first=False):
        """Create the actors of ``shards`` on running workers, round-robin (shard k on
        worker k mod #workers when ``first``).

        A shard not created within :data:`PLACE_SECONDS` (its worker paused, its
        threads busy, or gone) gets one more attempt on another running worker every
        :data:`PLACE_SECONDS`; the first attempt to finish wins. After
        :data:`PLACE_TOTAL_SECONDS` a RuntimeError names the shards and the workers'
        states: waiting without a limit once hung a solve here with idle workers.
        """
        start = time.perf_counter()
        deadline = start + PLACE_TOTAL_SECONDS
        workers = self._workers(exclude, start + RESTART_SECONDS)
        attempts = {}  # shard -> [(address, future or None), ...]
        for i, k in enumerate(shards):
            attempts[k] = [self._attempt(k, workers[(k if first else i) % len(workers)])]
        delay, look = 1e-3, start + 1.0
        while attempts:
            self._check_connected("placing the shards", None)
            for k, tries in list(attempts.items()):
                won = next((t for t in tries if _alive(t[1]) and t[1].done()), None)
                if won is not None:
                    self.actors[k] = won[1].result()  # a bad file's error propagates
                    self.replaced += won[0] != tries[0][0]
                    for _, fut in tries:
                        if fut is not None and fut is not won[1]:
                            fut.cancel()
                    del attempts[k]
            now = time.perf_counter()
            if attempts and now > deadline:
                raise RuntimeError(self._unplaced(attempts, now - start))
            for k, tries in attempts.items() if now > look else ():
                live = [t for t in tries if _alive(t[1])]
                if not live or now - start >= PLACE_SECONDS * len(tries):
                    used = {a for a, _ in live}
                    free = [w for w in self._workers(exclude, deadline) if w not in used]
                    if free:
                        tries.append(self._attempt(k, free[(k + len(tries)) % len(free)]))
            look = now + 1.0 if now > look else look
            time.sleep(delay)
            delay = min(2.0 * delay, POLL_SECONDS)

    def _attempt(self, k, address):
        try:
            return address, self._create(k, address)
        except (KeyError, OSError):  # a worker that died a moment ago is still listed
            return address, None

    def _unplaced(self, attempts, seconds):
        try:
            info = self.client.scheduler_info()["workers"]
        except (OSError, RuntimeError):
            info = {}
        tried = {self.specs[k].kwargs["name"]: [a for a, _ in t] for k, t in attempts.items()}
        return (f"could not place shard(s) on the Dask workers within {seconds:.0f} s "
                f"(tried {tried}; workers: {_states(info)}): are they paused (memory), busy "
                f"with other tasks, or gone?")

    def _create(self, k, address):
        spec = self.specs[k]
        args = spec.args
        if not isinstance(args[0], str):  # data in memory: scatter it to that worker
            # to a paused worker, scatter waits for it to resume: at most PLACE_SECONDS
            data = self.client.scatter(args[0], workers=[address], direct=True, hash=False,
                                       timeout=PLACE_SECONDS)
            self._inputs.setdefault(k, []).append(data)
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
        # the scheduler needs a moment to notice the dead worker and drop it: _place
        # waits up to RESTART_SECONDS for a running worker other than the dead ones
        self._place(lost, exclude=self._addresses(lost))
        self.restarts += len(lost)

    def _addresses(self, shards):
        return {self.actors[k]._address for k in shards}

    def close(self):
        self.actors = []
        self._inputs = {}
