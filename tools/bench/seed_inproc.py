# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The seed's measure() in-process, for the Python workloads: run SCRIPT with FUNC wrapped.

    python3 seed_inproc.py FUNC SCRIPT [ARGS...]

A user of the seed edited the fit code: the body of fit_gfmm went inside `with measure() as
unit:` and the caller kept unit.metrics. This runner makes that edit from outside, so the
workloads stay as they are: it imports SCRIPT as a module under its own name (so its
`if __name__ == "__main__"` block does not run), replaces FUNC in the module with a wrapper that
runs the original inside measure(), then calls the module's main() with sys.argv set as if
SCRIPT had been run. Calls made by name from inside the module (main, recursion) go through the
wrapper, as they would through the edited function.

Spawned workers (the GMM demo's pool) import the module afresh, and so would get the unwrapped
function; the seed's edited function was measured in every worker. The runner therefore passes
FUNC and SCRIPT in the environment, and when multiprocessing re-imports this file as the
worker's __mp_main__, it wraps the function there too before the pickled reference is resolved.

measure() below is the seed's (metrics.py): psutil's RSS of this process read by a thread every
50 ms and at the end, process CPU times read at start and end, wall from time.monotonic(), and
its UnitMetrics.to_dict() keys. Each unit is one line on stderr, "SEED " and the JSON, written
with one os.write so lines from several processes do not interleave. output_bytes stays null:
the seed's caller set it from the size of the artefact it had just saved, which a generic
wrapper cannot name.
"""
import functools
import importlib.util
import json
import os
import sys
import threading
import time

import psutil

SAMPLE_INTERVAL_S = 0.05  # the seed's _DEFAULT_SAMPLE_INTERVAL_S
ENV = "UNITMETER_BENCH_SEED_WRAP"  # "FUNC:SCRIPT", read by spawned workers


def measure_call(fn, args, kwargs):
    """The seed's measure() context manager around one call, returning the result and the
    seed's to_dict() record. Same order of readings as the seed: start RSS, sampler thread
    created, CPU times, wall clock, sampler started; at the end wall, CPU, stop, join, one
    final RSS reading."""
    proc = psutil.Process()
    start_rss = proc.memory_info().rss
    peak = {"rss": start_rss, "n": 0}
    stop = threading.Event()

    def sample():
        while not stop.wait(SAMPLE_INTERVAL_S):
            try:
                rss = proc.memory_info().rss
            except psutil.Error:
                break
            peak["n"] += 1
            if rss > peak["rss"]:
                peak["rss"] = rss

    sampler = threading.Thread(target=sample, name="rss-sampler", daemon=True)
    cpu_start = proc.cpu_times()
    wall_start = time.monotonic()
    sampler.start()
    try:
        return fn(*args, **kwargs)
    finally:
        wall_s = time.monotonic() - wall_start
        cpu_end = proc.cpu_times()
        stop.set()
        sampler.join(timeout=1.0)
        try:
            peak["rss"] = max(peak["rss"], proc.memory_info().rss)
        except psutil.Error:
            pass
        cpu_s = (cpu_end.user - cpu_start.user) + (cpu_end.system - cpu_start.system)
        wall_s, cpu_s = round(wall_s, 4), round(cpu_s, 4)
        record = {
            "wall_s": wall_s,
            "cpu_s": cpu_s,
            "cpu_utilisation": round(cpu_s / wall_s if wall_s > 0 else 0.0, 3),
            "peak_rss_bytes": int(peak["rss"]),
            "peak_rss_delta_bytes": max(0, int(peak["rss"]) - int(start_rss)),
            "start_rss_bytes": int(start_rss),
            "n_samples": int(peak["n"]),
            "output_bytes": None,
        }
        line = "SEED " + json.dumps(dict(record, pid=os.getpid(), fn=fn.__name__)) + "\n"
        os.write(2, line.encode())


def load_wrapped(func, script):
    """Import SCRIPT as a module named after its file and wrap FUNC in it."""
    name = os.path.splitext(os.path.basename(script))[0]
    if name in sys.modules:
        module = sys.modules[name]
    else:
        # as `python3 SCRIPT` would: the script's directory first on the path, so its own
        # imports resolve and spawned workers (which inherit sys.path) find the module
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        spec = importlib.util.spec_from_file_location(name, os.path.abspath(script))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    original = getattr(module, func)
    if getattr(original, "__wrapped__", None) is None:
        # functools.wraps keeps __module__ and __qualname__, so pickle still sends the
        # function to a worker by reference, and the worker resolves it to its own wrapper
        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            return measure_call(original, args, kwargs)

        setattr(module, func, wrapper)
    return module


if __name__ == "__mp_main__" and os.environ.get(ENV):
    load_wrapped(*os.environ[ENV].split(":", 1))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: seed_inproc.py FUNC SCRIPT [ARGS...]")
    func, script = sys.argv[1], sys.argv[2]
    os.environ[ENV] = "%s:%s" % (func, os.path.abspath(script))
    sys.argv = sys.argv[2:]
    module = load_wrapped(func, script)
    module.main()


if __name__ == "__main__":
    main()
