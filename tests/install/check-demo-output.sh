#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What make demo's script (tools/demo/run-demo.sh) left in DIR, checked against the truth the
# fits wrote themselves (a file per fit): one complete fit_unit unit per fit in the manifest, and
# a SLURM request in the job header. Prints the number of fits.
#   tests/install/check-demo-output.sh DIR
set -euo pipefail
dir=$1
fail() { echo "check-demo-output: $*" >&2; exit 1; }
fits=$(ls "$dir/fits" | wc -l)
python3 - "$dir/demo-run.json" "$fits" <<'PY' || fail "the demo's manifest is wrong"
import json, sys
m = json.load(open(sys.argv[1]))
units, fits = m["units"], int(sys.argv[2])
assert fits > 0 and len(units) == fits, "%d units for %d fits" % (len(units), fits)
assert all(u["status"] == "complete" and u["spec"] == "fit_unit" for u in units), units
PY
grep -q '^#SBATCH --mem=' "$dir/job-header.sh" || fail "the demo printed no SLURM request"
echo "$fits"
