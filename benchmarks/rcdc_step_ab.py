"""rcdc-table5: the UCDC step of several versions of the shrinking kernel in one run.

A random sparse A at the paper's size (m = 10⁷, n = 10⁶; 10 and 100 nonzeros per
column at uniformly random rows, values N(0, 1), L_i = ‖a_i‖²) -- a step's cost is
its memory traffic, which does not depend on Nesterov's structure -- and 10·n UCDC
steps (q = 0, λ = 1) per version, alternating versions, 3 rounds; CPU seconds of the
thread. Versions are ``primal_shrinking.py`` files given on the command line, loaded
as modules of ``cdlearn.kernels`` (give copies outside the package: numba caches each
file's functions beside it). Only the timing holds the shared timing lock.

    PYTHONPATH=src python benchmarks/rcdc_step_ab.py OLD.py NEW.py [...] [--scale 10]
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from rcdc_step_cost import timing_lock  # noqa: E402

from cdlearn.losses import SQUARED  # noqa: E402
from cdlearn.sampling import make_rng_state  # noqa: E402


def load(path, k):
    name = f"cdlearn.kernels._ab{k}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # numba's cache pickles the module by name
    spec.loader.exec_module(mod)
    return mod.primal_cd_shrinking_epoch


def instance(m, n, per, seed=0):
    rng = np.random.default_rng(seed)
    indices = np.sort(rng.integers(0, m, size=(n, per), dtype=np.int32), axis=1).ravel()
    data = rng.standard_normal(n * per)
    indptr = np.arange(0, n * per + 1, per, dtype=np.int32 if n * per < 2**31 else np.int64)
    lips = (data.reshape(n, per) ** 2).sum(axis=1) / m
    return data, indices, indptr, lips


def run(kernel, inst, m, n, steps, seed):
    data, indices, indptr, lips = inst
    y = np.broadcast_to(np.float64(0.0), (m,))
    s = np.broadcast_to(np.float64(1.0), (m,))
    g = -np.ones(m)
    x = np.zeros(n)
    supp, pos = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    n_supp, icpt = np.zeros(1, dtype=np.int64), np.zeros(1)
    rng = make_rng_state(seed)
    c0 = time.thread_time()
    kernel(data, indices, indptr, y, s, g, x, lips, 1.0 / m, 0.0, SQUARED, steps, rng, 0,
           0.0, 0, supp, pos, n_supp, icpt, 0.0, False)
    return time.thread_time() - c0, float(x.sum())


def main():
    args = [a for a in sys.argv[1:] if a.endswith(".py")]
    scale = int(sys.argv[sys.argv.index("--scale") + 1]) if "--scale" in sys.argv else 1
    os.setpriority(os.PRIO_PROCESS, 0, 15)
    kernels = [load(p, k) for k, p in enumerate(args)]
    m, n = 10_000_000 // scale, 1_000_000 // scale
    res = {}
    for per in (10, 100):
        inst = instance(m, n, per)
        for kern in kernels:  # compile outside the lock
            run(kern, inst, m, n, 10, 0)
        with timing_lock(True):
            print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
                  flush=True)
            for rnd in range(3):
                for k, kern in enumerate(kernels):
                    sec, xs = run(kern, inst, m, n, 10 * n, rnd)
                    res.setdefault((per, k), []).append(sec / (10 * n))
                    print(f"{per}/col {args[k]} round {rnd}: {1e9 * sec / (10 * n):.0f} ns "
                          f"(sum x {xs:.12g})", flush=True)
        del inst
    for k, p in enumerate(args):
        t10, t100 = (float(np.median(res[(per, k)])) for per in (10, 100))
        c1 = (t100 - t10) / 90
        print(f"{p}: 10/col {1e9 * t10:.0f} ns, 100/col {1e9 * t100:.0f} ns per step; "
              f"affine {1e9 * (t10 - 10 * c1):.0f} ns + {1e9 * c1:.1f} ns per nonzero; "
              f"10x denser {t100 / t10:.2f}x")


if __name__ == "__main__":
    main()
