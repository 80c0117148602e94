#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The packages of another architecture run where they belong: unpacked (as test-deb.sh does) into
# a folder a guest of that architecture sees (tools/vm/vm-boot.sh: one of Debian's kernels under
# qemu, its root the folder of Debian 12's packages guest-root.sh makes, which holds the
# libraries the packages depend on), where the packaged unitmeter checks the kernel, runs the
# demo (make demo's script, with that architecture's fit_demo) and traces python: units.
#   tests/install/test-deb-guest.sh DEB_DIR ARCH FIT_DEMO RELEASE     (as root: qemu's shares)
set -euo pipefail
debs=$(realpath "$1")
arch=$2
demo=$(realpath "$3")
release=$4
src=$(realpath "$(dirname "$0")/../..")
fail() { echo "deb-guest-test: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (the guest's shares keep the files' owners)"
out=$(mktemp -d /tmp/unitmeter-deb-guest.XXXXXX)
trap 'rm -rf "$out"' EXIT

shopt -s nullglob
packages=("$debs"/unitmeter_*_"$arch".deb "$debs"/unitmeter-spank_*_"$arch".deb)
((${#packages[@]} == 2)) || fail "expected unitmeter and unitmeter-spank for $arch in $debs, found: ${packages[*]}"
for p in "${packages[@]}"; do dpkg-deb -x "$p" "$out/root"; done
cp "$demo" "$out/fit_demo"
cp "$src/tools/demo/run-demo.sh" "$src/tests/install/check-python-units.sh" "$out/"

# the guest sees $out as /tmp/out, and runs the command there
echo "deb-guest-test: booting $release (emulated: minutes)"
rc=0
"$src/tools/vm/vm-boot.sh" -c v2 -t 900 "$release" "$out" -- \
    'um=/tmp/out/root/usr/bin/unitmeter; uname -m; $um check &&' \
    'DEMO_OUT=/tmp/out/demo sh /tmp/out/run-demo.sh $um /tmp/out/fit_demo >/tmp/out/demo.log 2>&1 &&' \
    'bash /tmp/out/check-python-units.sh $um' >"$out/console.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { tail -40 "$out/console.log"; [ ! -f "$out/demo.log" ] || tail -20 "$out/demo.log"
    fail "the packaged unitmeter failed in the $release guest (status $rc)"; }
# the serial console ends its lines with CR LF
tr -d '\r' <"$out/console.log" >"$out/console.txt"
machine=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_CPU 2>/dev/null)
grep -qx "$machine" "$out/console.txt" || { tail -40 "$out/console.txt"; fail "the guest was not an $machine machine"; }
fits=$("$src/tests/install/check-demo-output.sh" "$out/demo") || fail "the demo's output is wrong"
grep 'check-python-units:' "$out/console.txt"
echo "deb-guest-test: in the $release guest the packaged unitmeter passed check, ran the demo ($fits fits, $fits complete units, a SLURM request) and traced python: units"
