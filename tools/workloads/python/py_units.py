# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Ground truth for python: units. Each mode calls fit functions with known costs and prints
its own measurements as the last line of stdout (JSON): sizes allocated, calls made, worker
pids and time.thread_time() deltas. Runs on CPython 3.6+; numpy only with --numpy.

  alloc  --sizes 32,64,16 [--numpy]   each fit holds an array of that many MiB for 5 ms
  counts                              plain calls, a recursive call and one that raises
  pool   --start fork|spawn|forkserver|executor|joblib [--units 4]   two workers, CPU-bound
         fits of 0.3 s each
  method                              Model.fit, and py_units_mod:solve through the import hook
  calls  --n 1000000                  a million calls of other functions around one fit of 0.2 s
"""
import json
import os
import sys
import time


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


if "--numpy" in sys.argv:
    import numpy  # before the first fit, so no unit pays for the import


def fit_gfmm(mib=0, cpu_s=0.0, use_numpy=False, depth=0, boom=False):
    """The unit: hold mib MiB for 5 ms, burn cpu_s of CPU, optionally recurse or raise."""
    if depth > 0:
        return fit_gfmm(mib, cpu_s, use_numpy, depth - 1, boom)
    start = time.thread_time()
    if mib:
        if use_numpy:
            block = numpy.ones(mib * 1024 * 1024 // 8)
        else:
            block = bytearray(mib * 1024 * 1024)
            for i in range(0, len(block), 4096):
                block[i] = 1
        time.sleep(0.005)
        del block
    x = 0
    while time.thread_time() - start < cpu_s:
        for i in range(2000):
            x += i * i
    if boom:
        raise ValueError("a fit that fails")
    return {"pid": os.getpid(), "cpu_s": time.thread_time() - start}


def pool_fit(seconds):
    """The fit as its caller sees it: under unitmeter, fit_gfmm is the bootstrap's wrapper, whose
    markers bound the unit, so the unit lies between the fit's own clock and this one."""
    start = time.thread_time()
    result = fit_gfmm(cpu_s=seconds)
    result["outer_cpu_s"] = time.thread_time() - start
    return result


class Model(object):
    def fit(self, mib):
        return fit_gfmm(mib)


def small(i):
    return i + 1


def main():
    mode = arg("--mode", "alloc")
    out = {"mode": mode}
    if mode == "alloc":
        sizes = [int(s) for s in arg("--sizes", "32,64,16").split(",")]
        for mib in sizes:
            fit_gfmm(mib, use_numpy="--numpy" in sys.argv)
        out["sizes_mib"] = sizes
    elif mode == "counts":
        calls = 0
        for _ in range(5):
            fit_gfmm()
            calls += 1
        fit_gfmm(depth=10)
        calls += 1
        try:
            fit_gfmm(boom=True)
        except ValueError:
            calls += 1
        out["calls"] = calls
    elif mode == "pool":
        start = arg("--start", "fork")
        work = [0.3] * int(arg("--units", "4"))
        if start == "executor":
            from concurrent.futures import ProcessPoolExecutor
            with ProcessPoolExecutor(max_workers=2) as pool:
                results = list(pool.map(pool_fit, work))
        elif start == "joblib":
            from joblib import Parallel, delayed
            results = Parallel(n_jobs=2, backend="loky")(delayed(pool_fit)(w) for w in work)
        else:
            import multiprocessing
            with multiprocessing.get_context(start).Pool(2) as pool:
                results = pool.map(pool_fit, work, chunksize=1)
        out["fits"] = results
    elif mode == "method":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import py_units_mod
        Model().fit(8)
        py_units_mod.solve(24)
        py_units_mod.solve(8)
        out["method_calls"] = 1
        out["module_calls"] = 2
    elif mode == "calls":
        n = int(arg("--n", "1000000"))
        start = time.thread_time()
        for i in range(n):
            small(i)
        fit = pool_fit(0.2)
        for i in range(n):
            small(i)
        out["calls"] = 1
        out["fit"] = fit
        out["other_calls_cpu_s"] = time.thread_time() - start - fit["outer_cpu_s"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
