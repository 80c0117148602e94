# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""main_imports: a unit function defined in the main module between imports, as real scripts do.

On CPython 3.6-3.11 unitmeter's bootstrap line-traces the main module's top level until the def
has run. Imports in between must run untraced (tracing every call of a large package's import
was the bootstrap's whole cost) and the trace must come back for the lines after them. Truth:
how many times fit() ran, whether any import ran under a tracer, and whether the bootstrap put
the builtin import back once the def was wrapped.
"""
import builtins
import json
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
import import_probe  # noqa: E402  (records the tracer its import ran under)
tracers = [import_probe.TRACER]
del sys.modules["import_probe"]


def fit(n):
    return sum(range(n))


import import_probe  # noqa: E402,F811  (a second import, after the def)
tracers.append(import_probe.TRACER)
CALLS = 3
for _ in range(CALLS):
    fit(1000)
print(json.dumps({"calls": CALLS,
                  "imports_traced": [t is not None for t in tracers],
                  "builtin_import_restored": getattr(builtins.__import__, "__module__", None) == "builtins"}))
