#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The portable tarball where it was not built: run inside a fresh Debian root (tools/vm/
# fresh-root.sh, FRESH_ROOT_COPY=the tarball) or an arm64 guest. Unpacked where it lands, its
# unitmeter reports the kernel's features, runs the demo (8 native fits: one a 96 MiB spike, one
# forked helper), a python: fit with the release's own /usr/bin/python3, and reads the results
# back with summary, project and report; each figure is checked against what the demo and the
# fit are known to do, and install.sh installs it under a prefix that then runs it too.
#
# usage: tarball-in-root.sh TARBALL|DIR   (as root; installs python3 where it is missing)
#        DIR: the tarball already unpacked there (a guest without gzip)
set -eu
work=$(mktemp -d /tmp/um-dist.XXXXXX)
fail() { echo "tarball-in-root: $*" >&2; exit 1; }
if [ -d "$1" ]; then
	top=$(cd "$1" && echo "$PWD"/unitmeter-*-linux)
else
	tar -xzf "$1" -C "$work"
	top=$(echo "$work"/unitmeter-*-linux)
fi
um=$top/bin/unitmeter
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
echo "== $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(getconf GNU_LIBC_VERSION | cut -d' ' -f2), kernel $(uname -r)"
"$um" --version
# what this kernel offers, in full: the tarball's binary must read it on every release
"$um" check >"$work/check.log" 2>&1 || { cat "$work/check.log"; fail "unitmeter check failed"; }
cat "$work/check.log"

cd "$work"
DEMO_OUT=$work/demo-output "$top/share/unitmeter/demo/run-demo.sh" "$um" \
	"$top/share/unitmeter/demo/fit_demo" >"$work/demo.log" 2>&1 || { cat "$work/demo.log"; fail "the demo failed"; }
summary=$("$um" summary --json demo-output/demo-run.json)
echo "demo: $summary"
echo "$summary" | grep -q '"n_units": 8' || fail "the demo's manifest has not its 8 units"
# the spike: one fit holds 96 MiB, so the largest unit peak is above it
peak=$(echo "$summary" | sed -n 's/.*"peak_rss_bytes_max": \([0-9]*\).*/\1/p')
[ "${peak:-0}" -gt $((96 << 20)) ] || fail "the demo's largest peak is ${peak:-none}, not above the 96 MiB spike"
grep -q '^#SBATCH --time=' demo-output/job-header.sh || fail "project wrote no --time"
grep -q '^#SBATCH --mem=' demo-output/job-header.sh || fail "project wrote no --mem"
[ -s demo-output/demo-report.html ] || fail "report wrote no page"

# a python: fit: the release's own interpreter, three fits of known sizes
command -v /usr/bin/python3 >/dev/null ||
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null; }
cat >"$work/fits.py" <<'PY'
def fit(mib):
    block = bytearray(mib << 20)  # touched: every page written
    return len(block)

for mib in (16, 48, 32):
    fit(mib)
PY
"$um" run -q --unit python:fit -o "$work/py.json" -- /usr/bin/python3 "$work/fits.py" \
	>"$work/py.log" 2>&1 || { cat "$work/py.log"; fail "the python: run failed"; }
py=$("$um" summary --json "$work/py.json")
echo "python $(/usr/bin/python3 -c 'import platform; print(platform.python_version())'): $py"
echo "$py" | grep -q '"n_units": 3' || fail "the python: run has not its 3 units"
ppeak=$(echo "$py" | sed -n 's/.*"peak_rss_bytes_max": \([0-9]*\).*/\1/p')
[ "${ppeak:-0}" -gt $((48 << 20)) ] || fail "the python: fits' largest peak is ${ppeak:-none}, not above 48 MiB"
"$um" project "$work/py.json" --units 100 >/dev/null || fail "project refused the python: run"

# install.sh under a prefix: that copy runs too, and finds its own marker library
"$top/install.sh" "$work/prefix" >/dev/null
"$work/prefix/bin/unitmeter" run -q --unit python:fit -o "$work/py2.json" -- /usr/bin/python3 \
	"$work/fits.py" >"$work/py2.log" 2>&1 || { cat "$work/py2.log"; fail "the installed copy failed"; }
"$work/prefix/bin/unitmeter" summary --json "$work/py2.json" | grep -q '"n_units": 3' ||
	fail "the installed copy did not measure the 3 python: fits"
rm -rf "$work"
echo "tarball-in-root: passed"
