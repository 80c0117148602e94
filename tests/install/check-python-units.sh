#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# An installed unitmeter traces python: units: a script whose fit(k) writes k*10000 bytes is run
# under `unitmeter run --unit python:fit`; the manifest must hold one complete unit per call,
# each with the bytes the file it wrote has, and the interpreter's own version.
#   tests/install/check-python-units.sh UNITMETER [PYTHON]
set -euo pipefail
unitmeter=$1
python=${2:-python3}
work=$(mktemp -d /tmp/unitmeter-python-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat >script.py <<'PY'
def fit(k):
    with open("fit-%d.out" % k, "wb") as f:
        f.write(b"x" * (k * 10000))
    return k

for k in range(1, 6):
    fit(k)
PY
if ! "$unitmeter" run -q --unit python:fit -o run.json -- "$python" script.py >run.log 2>&1; then
    cat run.log
    echo "check-python-units: $unitmeter run failed"
    exit 1
fi
# the truths: the files the calls wrote, and the interpreter's version as it says it
"$python" - "$("$python" -c 'import platform; print(platform.python_version())')" "$unitmeter" <<'PY'
import json, os, sys
m = json.load(open("run.json"))
units = sorted(m["units"], key=lambda u: u["index"])
want = [os.path.getsize("fit-%d.out" % k) for k in range(1, 6)]
got = [u["output_bytes"] for u in units]
problems = []
if len(units) != 5:
    problems.append("%d units, not 5" % len(units))
if any(u["status"] != "complete" or u["spec"] != "python:fit" for u in units):
    problems.append("a unit not complete or not python:fit")
if got != want:
    problems.append("output_bytes %s, the files have %s" % (got, want))
if m["hardware"]["python_version"] != sys.argv[1]:
    problems.append("python_version %r, the interpreter is %s" % (m["hardware"]["python_version"], sys.argv[1]))
if problems:
    sys.exit("check-python-units: " + "; ".join(problems))
print("check-python-units: %s traced 5 python:fit units, bytes as written, Python %s"
      % (sys.argv[2], sys.argv[1]))
PY
