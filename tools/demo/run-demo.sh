#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The demo: trace the bundled Gaussian-mixture fits with one unit per call of fit_unit(),
# then show the per-unit table and the seed's summary, and say where everything was written.
set -eu
unitmeter=$1
demo=$2
out=${DEMO_OUT:-demo-output}
mkdir -p "$out"
# under sudo the outputs belong to the user who asked for them
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$out"

echo "== unitmeter run --unit fit_unit -- fit_demo   (8 fits: different sizes, one 96 MiB spike, one forked helper)"
"$unitmeter" run -q --unit fit_unit -o "$out/demo-run.json" -- "$demo" "$out/fits" >/dev/null
echo
echo "== unitmeter summary $out/demo-run.json"
"$unitmeter" summary "$out/demo-run.json"
echo
echo "== unitmeter project $out/demo-run.json --units 2000 --units-per-task 250   (the SLURM request of a full run)"
"$unitmeter" project "$out/demo-run.json" --units 2000 --units-per-task 250 | tee "$out/job-header.sh"
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$out/job-header.sh"
echo
echo "== unitmeter report $out/demo-run.json --units 2000 --units-per-task 250 -o $out/demo-report.html"
"$unitmeter" report "$out/demo-run.json" --units 2000 --units-per-task 250 -o "$out/demo-report.html"
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$out/demo-report.html"
echo
echo "manifest:     $out/demo-run.json   (hardware, units, summary, per-process table)"
echo "units stream: $out/demo-run.units.jsonl   (one line per fit, written as each fit ended)"
echo "job header:   $out/job-header.sh   (append the job's commands and sbatch it)"
echo "report:       $out/demo-report.html   (open it in a browser: the units' spread, processes and memory over time)"
