#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The Python demo: scikit-learn GaussianMixture fits in fit_gfmm(), four in the main process and
# four in a two-worker pool, traced with one unit per call of fit_gfmm and no change to the script.
set -eu
unitmeter=$1
script=$(dirname "$0")/fit_gmm.py
out=${DEMO_OUT:-demo-output}
mkdir -p "$out"
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$out"

echo "== unitmeter run --unit python:fit_gfmm -- /usr/bin/python3 fit_gmm.py"
"$unitmeter" run -q --unit python:fit_gfmm -o "$out/demo-python.json" -- \
	/usr/bin/python3 "$script" "$out/gmm" >/dev/null
echo
echo "manifest:     $out/demo-python.json   (per_process shows which worker ran which fits)"
echo "units stream: $out/demo-python.units.jsonl"
