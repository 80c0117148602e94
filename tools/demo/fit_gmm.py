# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Demo for python: units: scikit-learn GaussianMixture fits, as a calibration run would make them.

Each call of fit_gfmm() is one unit: `unitmeter run --unit python:fit_gfmm -- python3 fit_gmm.py`
measures every fit without a line of this file knowing about it. The fits differ in size; one
takes a short-lived 128 MiB scratch array (a spike a 50 ms poller misses); the last four run in a
pool of two worker processes, so each worker's fits are units of that worker.

Runs on Debian's /usr/bin/python3 with python3-sklearn. Prints one JSON line per fit.
"""

import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from sklearn.mixture import GaussianMixture


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    centres = np.array([[-4.0, 0.0], [0.5, 3.0], [6.0, -2.0]])
    labels = rng.integers(0, len(centres), size=n)
    return centres[labels] + rng.normal(scale=1.0, size=(n, 2))


def fit_gfmm(n, seed, spike=False, out_dir=None):
    """One fit: a 3-component Gaussian mixture on n synthetic points, saved when out_dir is set."""
    x = make_data(n, seed)
    if spike:
        scratch = np.ones((16 * 1024 * 1024,))  # 128 MiB for a few milliseconds
        time.sleep(0.003)
        del scratch
    model = GaussianMixture(n_components=3, random_state=seed, max_iter=200).fit(x)
    result = {"n": n, "seed": seed, "pid": os.getpid(), "converged": bool(model.converged_),
              "means": np.round(model.means_, 3).tolist()}
    if out_dir:
        with open(os.path.join(out_dir, "gmm-%d-%d.json" % (n, seed)), "w") as out:
            json.dump(result, out)
    return result


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else None
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    for i, n in enumerate((20000, 60000, 40000)):
        print(json.dumps(fit_gfmm(n, seed=i, out_dir=out_dir)))
    print(json.dumps(fit_gfmm(30000, seed=3, spike=True, out_dir=out_dir)))
    # Workers start by spawn: forking after BLAS threads exist can deadlock them. One BLAS
    # thread per worker, as the seed's single_threaded_blas() sets before a pool.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        jobs = [pool.submit(fit_gfmm, n, 10 + i, False, out_dir)
                for i, n in enumerate((30000, 50000, 30000, 50000))]
        for job in jobs:
            print(json.dumps(job.result()))


if __name__ == "__main__":
    main()
