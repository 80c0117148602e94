#!/bin/sh
# After `make demo` on a fresh root: the demo ran with what the build needs, and nothing of the
# suite's was installed (a laptop that wants the demo gets no SLURM, munge or Chromium).
set -eu
found=
for p in slurm-wlm munge libslurm-dev chromium libcriterion-dev python3-sklearn; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		found="$found $p"
	fi
done
if [ -n "$found" ]; then
	echo "make demo installed what only the tests need:$found"
	exit 1
fi
echo "make demo installed the build's packages only (no SLURM, munge, Chromium or Criterion)"
