# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The Python tasks of the "projection holds" check (tools/bench/project_holds.py): scikit-learn
fits, each one call of fit() (the unit, spec python:fit), run with the distribution's python3.

  --mode serial --units N           one process: the data load, then N fits
  --mode pool --units N [--workers 2] [--mixed]
                                    the data load, then N fits in a ProcessPoolExecutor (fork);
                                    with --mixed every 4th fit is on 3x the rows
  --load-s S                        how long the data load takes (default 3 s of CPU)

scikit-learn is imported inside fit(), as scripts that import lazily do: each process's first
fit pays the import (~1 s here), which is the warm-up a projection must not take as a fit's cost.
The last stdout line is this run's truth: {"mode", "units" done, "wall_s", "fits_per_pid",
"fit_s": each fit's own wall by time.perf_counter, in the order of the fits}.
"""
import os

# Before numpy is imported: one BLAS/OpenMP thread per process, so a pool of W workers uses W
# cores, as a SLURM task of W CPUs would be set up.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import multiprocessing
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy

ROWS = 25000  # one fit: 25,000 rows x 8 features, 4 components, 15 EM steps: ~0.3 s here
FEATURES = 8
DATA_ROWS = 1 << 20  # the data set: 64 MiB of float64, shared by the workers after the fork

DATA = None


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def load(seconds):
    """Generate the data set, then keep working on it until `seconds` of CPU have gone: the
    reading and cleaning a real task does before its first fit."""
    global DATA
    start = time.process_time()
    rng = numpy.random.default_rng(0)
    DATA = rng.normal(size=(DATA_ROWS, FEATURES))
    DATA[:, 1] += 3.0 * (DATA[:, 0] > 0)  # a second cluster along one axis
    while time.process_time() - start < seconds:
        numpy.sort(DATA[:65536], axis=0)


def fit(index, rows):
    """The unit: one GaussianMixture fit on `rows` rows of the data set. tol=0 runs every EM
    step, so a fit's cost depends on its size only, not on when it happens to converge."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    began = time.perf_counter()
    start = (index * 7919) % (DATA_ROWS - rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        GaussianMixture(n_components=4, max_iter=15, tol=0, random_state=index).fit(
            DATA[start:start + rows])
    return os.getpid(), time.perf_counter() - began


def rows_of(index, mixed):
    return 3 * ROWS if mixed and index % 4 == 3 else ROWS


def main():
    started = time.monotonic()
    mode = arg("--mode", "serial")
    n = int(arg("--units", "10"))
    mixed = "--mixed" in sys.argv
    load(float(arg("--load-s", "3")))
    sizes = [rows_of(i, mixed) for i in range(n)]
    if mode == "serial":
        done = [fit(i, sizes[i]) for i in range(n)]
    elif mode == "pool":
        # fork, named: the workers inherit the loaded data set (3.14 makes forkserver the default)
        with ProcessPoolExecutor(max_workers=int(arg("--workers", "2")),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            done = list(pool.map(fit, range(n), sizes))
    else:
        sys.exit("fits.py: unknown --mode %s" % mode)
    per_pid = {}
    pids = [pid for pid, _ in done]
    for pid in pids:
        per_pid[str(pid)] = per_pid.get(str(pid), 0) + 1
    print(json.dumps({"mode": mode, "units": len(pids), "wall_s": time.monotonic() - started,
                      "fits_per_pid": per_pid, "fit_s": [round(s, 6) for _, s in done]}))


if __name__ == "__main__":
    main()
