"""Ground truth for how python: specs name functions: calls each kind of function of the
package umpkg (tools/workloads/python/umpkg) a known number of times, through the names a
user imports, and prints the counts as the last line of stdout (JSON). CPython 3.6+."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import umpkg  # noqa: E402  (after the path: the package lies beside this script)


def main():
    calls = {"Model.fit": 5, "solve": 2, "Child.fit": 2, "Base.fit": 1, "wrapped_fit": 3,
             "other_wrapped": 2, "Model.static_fit": 2, "Model.class_fit": 2, "outer.inner": 3,
             "alias_fit": 2, "lambda_fit": 2, "cached_fit": 2, "cached_fit_misses": 1}
    model = umpkg.Model()
    for _ in range(calls["Model.fit"]):
        model.fit(1000)
    for _ in range(calls["solve"]):
        umpkg.solve(10)
    for _ in range(calls["Child.fit"]):
        umpkg.Child().fit(1000)
    for _ in range(calls["Base.fit"]):
        umpkg.Base().fit(1000)
    for _ in range(calls["wrapped_fit"]):
        umpkg.wrapped_fit(1000)
    for _ in range(calls["other_wrapped"]):
        umpkg.other_wrapped(1000)
    for _ in range(calls["Model.static_fit"]):
        umpkg.Model.static_fit(1000)
    for _ in range(calls["Model.class_fit"]):
        umpkg.Model.class_fit(1000)
    umpkg.outer(calls["outer.inner"])
    for _ in range(calls["alias_fit"]):
        umpkg.alias_fit(1000)
    for _ in range(calls["lambda_fit"]):
        umpkg.lambda_fit(1000)
    for _ in range(calls["cached_fit"]):
        umpkg.cached_fit(1000)  # one argument: every call after the first is a cache hit
    print(json.dumps({"calls": calls}))


if __name__ == "__main__":
    main()
